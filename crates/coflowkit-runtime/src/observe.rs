//! The agent's flow table: one `sock_diag` dump per round in, what changed out.
//!
//! A round is [`FlowTable::begin`], one [`FlowTable::feed`] per reply datagram,
//! then [`FlowTable::end`]. Only IPv4 sockets whose local address is one of the
//! host's and whose TCP state is in the open set are kept. A connection becomes
//! a flow once it has `threshold` bytes acknowledged (smaller ones are remembered
//! with the time they were first seen); a flow is reported new once, then each
//! time its acknowledged bytes change, and gone when its socket leaves the dump
//! (closed, or out of the open states). A failed dump changes nothing: the
//! sockets of a round are applied only in `end`.
//!
//! A round can also look up only the tracked flows ([`FlowTable::begin_lookups`],
//! [`FlowTable::lookup_keys`], then [`FlowTable::feed_lookups`] with the
//! replies): their updates and ends, without the dump's walk over the kernel's
//! whole connection hash table and without the host's other connections. New
//! flows (new connections, and small ones crossing the threshold) are found by
//! dumps only.

use crate::sockdiag::{parse_each, parse_replies, Conn, DiagError, AF_INET};
use crate::wire;
use std::collections::{BTreeMap, HashMap};

/// Local address, local port, remote address, remote port.
pub type Key = ([u8; 4], u16, [u8; 4], u16);

#[derive(Debug, Clone, PartialEq)]
pub struct NewFlow {
    pub fid: u64,
    pub key: Key,
    pub first_seen: f64,
    pub sent: u64,
}

/// One round's changes; ids in first-seen order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Changes {
    pub new: Vec<NewFlow>,
    pub updated: Vec<(u64, u64)>,
    pub gone: Vec<(u64, u64)>,
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        self.new.is_empty() && self.updated.is_empty() && self.gone.is_empty()
    }

    /// The payload of the protocol's REPORT message at time `now`
    /// ([`crate::wire`] has the layout). Flow ids are u32 on the wire.
    pub fn encode(&self, now: f64) -> Vec<u8> {
        let mut out = Vec::with_capacity(
            20 + 28 * self.new.len() + 12 * (self.updated.len() + self.gone.len()),
        );
        wire::put_report_head(&mut out, now, self.new.len());
        for f in &self.new {
            wire::put_new(
                &mut out,
                &wire::NewFlow {
                    fid: f.fid as u32,
                    sport: f.key.1,
                    dst: f.key.2,
                    dport: f.key.3,
                    first_seen: f.first_seen,
                    sent: f.sent,
                },
            );
        }
        for list in [&self.updated, &self.gone] {
            wire::put_pairs(&mut out, list.iter().map(|&(f, b)| (f as u32, b)));
        }
        out
    }
}

struct Tracked {
    key: Key,
    sent: u64,
    first_seen: f64,
    round: u64,
}

pub struct FlowTable {
    addrs: Vec<[u8; 4]>,
    threshold: u64,
    states: u32,
    index: HashMap<Key, u64>,
    flows: BTreeMap<u64, Tracked>,
    small: HashMap<Key, f64>,
    small_next: HashMap<Key, f64>,
    next_fid: u64,
    round: u64,
    batch: Vec<(Key, u64)>,
    keep_small: bool,
}

impl FlowTable {
    /// `states` is the bit mask of open TCP states (bit s for state s).
    pub fn new(addrs: Vec<[u8; 4]>, threshold: u64, states: u32) -> Self {
        FlowTable {
            addrs,
            threshold,
            states,
            index: HashMap::new(),
            flows: BTreeMap::new(),
            small: HashMap::new(),
            small_next: HashMap::new(),
            next_fid: 1,
            round: 0,
            batch: Vec::new(),
            keep_small: false,
        }
    }

    pub fn len(&self) -> usize {
        self.flows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }

    /// Starts a round, dropping whatever an unfinished one had fed.
    pub fn begin(&mut self) {
        self.batch.clear();
        self.keep_small = false;
    }

    /// The TCP states (bit s for state s) a dump asks for.
    pub fn states(&self) -> u32 {
        self.states
    }

    fn keep(addrs: &[[u8; 4]], states: u32, batch: &mut Vec<(Key, u64)>, c: &Conn) {
        if c.family == AF_INET
            && states & (1u32 << (c.state & 31)) != 0
            && addrs.contains(&c.src4())
        {
            batch.push(((c.src4(), c.sport, c.dst4(), c.dport), c.bytes_acked));
        }
    }

    /// One reply datagram of the round's dump; true once `NLMSG_DONE` is seen.
    pub fn feed(&mut self, data: &[u8], seq: Option<u32>) -> Result<bool, DiagError> {
        let (addrs, states, batch) = (&self.addrs, self.states, &mut self.batch);
        parse_each(data, seq, |c| Self::keep(addrs, states, batch, c))
    }

    /// What a lookup round asks the kernel for: every tracked flow, in id
    /// order. Connections under the threshold are not looked up (a busy host
    /// has many idle ones): like new connections, they become flows at a dump.
    pub fn lookup_keys(&self) -> Vec<Key> {
        self.flows.values().map(|t| t.key).collect()
    }

    /// Starts a lookup round: the connections under the threshold, which it
    /// does not look up, stay as they are until the next dump.
    pub fn begin_lookups(&mut self) {
        self.batch.clear();
        self.keep_small = true;
    }

    /// Replies to the round's exact lookups (one datagram or more); returns
    /// how many requests they answered, found or not.
    pub fn feed_lookups(&mut self, data: &[u8], seq: Option<u32>) -> Result<usize, DiagError> {
        let (addrs, states, batch) = (&self.addrs, self.states, &mut self.batch);
        parse_replies(data, seq, |c| Self::keep(addrs, states, batch, c))
    }

    /// Applies the round's sockets at time `now` and returns what changed.
    pub fn end(&mut self, now: f64) -> Changes {
        self.round += 1;
        let round = self.round;
        let mut out = Changes::default();
        self.small_next.clear();
        for &(key, acked) in &self.batch {
            if let Some(&fid) = self.index.get(&key) {
                let t = self.flows.get_mut(&fid).expect("indexed flow");
                if t.round != round && acked != t.sent {
                    t.sent = acked;
                    out.updated.push((fid, acked));
                }
                t.round = round;
                continue;
            }
            let first = self.small.get(&key).copied().unwrap_or(now);
            if acked < self.threshold {
                self.small_next.insert(key, first);
                continue;
            }
            let fid = self.next_fid;
            // Ids are u32 on the wire: after 2³² − 1 flows they start again at 1.
            self.next_fid = if fid >= u64::from(u32::MAX) {
                1
            } else {
                fid + 1
            };
            self.index.insert(key, fid);
            self.flows.insert(
                fid,
                Tracked {
                    key,
                    sent: acked,
                    first_seen: first,
                    round,
                },
            );
            out.new.push(NewFlow {
                fid,
                key,
                first_seen: first,
                sent: acked,
            });
        }
        if self.keep_small {
            // A lookup round saw only tracked flows: the small ones are as before.
            self.small_next.clear();
        } else {
            std::mem::swap(&mut self.small, &mut self.small_next);
        }
        self.batch.clear();
        let index = &mut self.index;
        self.flows.retain(|&fid, t| {
            if t.round == round {
                return true;
            }
            index.remove(&t.key);
            out.gone.push((fid, t.sent));
            false
        });
        out
    }

    /// Every tracked flow, as new (a session's first report).
    pub fn everything(&self) -> Vec<NewFlow> {
        self.flows
            .iter()
            .map(|(&fid, t)| NewFlow {
                fid,
                key: t.key,
                first_seen: t.first_seen,
                sent: t.sent,
            })
            .collect()
    }

    /// The 4-tuple of flow `fid`, if it is tracked.
    pub fn key_of(&self, fid: u64) -> Option<Key> {
        self.flows.get(&fid).map(|t| t.key)
    }

    /// Flow id and 4-tuple of every tracked flow.
    pub fn matches(&self) -> Vec<(u64, Key)> {
        self.flows.iter().map(|(&fid, t)| (fid, t.key)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sockdiag::tests::{done, nlmsg, socket_msg};

    const OPEN: u32 = (1 << 1) | (1 << 4) | (1 << 8) | (1 << 9);
    const H: [u8; 4] = [10, 0, 0, 1];
    const P: [u8; 4] = [10, 0, 0, 2];

    fn dump(socks: &[(u16, u8, u64)]) -> Vec<u8> {
        let mut d = Vec::new();
        for &(sport, state, acked) in socks {
            d.extend(socket_msg(1, H, sport, P, 5001, state, acked, 0, 280));
        }
        d.extend(done(1));
        d
    }

    fn round(t: &mut FlowTable, socks: &[(u16, u8, u64)], now: f64) -> Changes {
        t.begin();
        assert!(t.feed(&dump(socks), Some(1)).unwrap());
        t.end(now)
    }

    #[test]
    fn threshold_first_seen_updates_and_ends() {
        let mut t = FlowTable::new(vec![H], 100_000, OPEN);
        // Two small connections: nothing to report, but their start is remembered.
        assert_eq!(
            round(&mut t, &[(1, 1, 50_000), (2, 1, 10)], 1.0),
            Changes::default()
        );
        // Flow 1 crosses the threshold: new, with the time it was first seen.
        let c = round(&mut t, &[(1, 1, 150_000), (2, 1, 20)], 1.02);
        assert_eq!(
            c.new,
            vec![NewFlow {
                fid: 1,
                key: (H, 1, P, 5001),
                first_seen: 1.0,
                sent: 150_000
            }]
        );
        assert!(c.updated.is_empty() && c.gone.is_empty());
        // Unchanged bytes: nothing; changed: one update.
        assert_eq!(
            round(&mut t, &[(1, 1, 150_000), (2, 1, 20)], 1.04),
            Changes::default()
        );
        let c = round(&mut t, &[(1, 1, 200_000), (2, 1, 200_000)], 1.06);
        assert_eq!(c.updated, vec![(1, 200_000)]);
        assert_eq!((c.new[0].fid, c.new[0].first_seen), (2, 1.0));
        // A listener (state 10) and a TIME_WAIT (6) socket are not open: flow 1 ends.
        let c = round(&mut t, &[(1, 6, 0), (2, 1, 250_000), (3, 10, 0)], 1.08);
        assert_eq!(c.gone, vec![(1, 200_000)]);
        assert_eq!(c.updated, vec![(2, 250_000)]);
        assert_eq!(t.matches(), vec![(2, (H, 2, P, 5001))]);
        assert_eq!((t.key_of(2), t.key_of(1)), (Some((H, 2, P, 5001)), None));
        assert_eq!(t.everything()[0].sent, 250_000);
    }

    #[test]
    fn lookups_ask_for_known_sockets_and_see_the_same_changes() {
        let mut t = FlowTable::new(vec![H], 100_000, OPEN);
        round(&mut t, &[(3, 1, 50_000)], 1.0); // small, first seen at 1.0
        round(&mut t, &[(3, 1, 50_000), (2, 1, 10)], 1.5); // small, first seen at 1.5
        round(&mut t, &[(3, 1, 50_000), (2, 1, 10), (9, 1, 500_000)], 2.0); // flow 1
        round(
            &mut t,
            &[(3, 1, 50_000), (2, 1, 10), (9, 1, 500_000), (8, 1, 400_000)],
            2.1,
        ); // flow 2
           // Only tracked flows are looked up, by id.
        assert_eq!(t.lookup_keys(), vec![(H, 9, P, 5001), (H, 8, P, 5001)]);
        // Replies: flow 1 (port 9) is gone (ENOENT), flow 2 grew.
        let mut d = nlmsg(2, 5, &(-2i32).to_ne_bytes());
        d.extend(socket_msg(5, H, 8, P, 5001, 1, 450_000, 0, 280));
        t.begin_lookups();
        assert_eq!(t.feed_lookups(&d, Some(5)), Ok(2));
        let c = t.end(2.5);
        assert_eq!(c.gone, vec![(1, 500_000)]);
        assert_eq!(c.updated, vec![(2, 450_000)]);
        assert!(c.new.is_empty() && !c.is_empty());
        // The small connections were not looked up and are still known: when
        // the next dump shows port 3 over the threshold, its first-seen time
        // is the first dump's.
        let c = round(&mut t, &[(3, 1, 120_000), (8, 1, 450_000)], 3.0);
        assert_eq!(
            c.new,
            vec![NewFlow {
                fid: 3,
                key: (H, 3, P, 5001),
                first_seen: 1.0,
                sent: 120_000
            }]
        );
        assert!(c.updated.is_empty() && c.gone.is_empty());
    }

    #[test]
    fn reports_encode_little_endian_as_the_protocol_says() {
        let c = Changes {
            new: vec![NewFlow {
                fid: 7,
                key: (H, 40000, P, 5001),
                first_seen: 1.5,
                sent: 123_456,
            }],
            updated: vec![(3, 1000), (4, 2000)],
            gone: vec![(5, 99)],
        };
        let b = c.encode(2.25);
        let mut want = Vec::new();
        want.extend_from_slice(&2.25f64.to_le_bytes());
        want.extend_from_slice(&1u32.to_le_bytes());
        want.extend_from_slice(&7u32.to_le_bytes());
        want.extend_from_slice(&40000u16.to_le_bytes());
        want.extend_from_slice(&P);
        want.extend_from_slice(&5001u16.to_le_bytes());
        want.extend_from_slice(&1.5f64.to_le_bytes());
        want.extend_from_slice(&123_456u64.to_le_bytes());
        want.extend_from_slice(&2u32.to_le_bytes());
        for (f, n) in [(3u32, 1000u64), (4, 2000)] {
            want.extend_from_slice(&f.to_le_bytes());
            want.extend_from_slice(&n.to_le_bytes());
        }
        want.extend_from_slice(&1u32.to_le_bytes());
        want.extend_from_slice(&5u32.to_le_bytes());
        want.extend_from_slice(&99u64.to_le_bytes());
        assert_eq!(b, want);
        assert_eq!(b.len(), 12 + 28 + 4 + 24 + 4 + 12);
        assert!(Changes::default().is_empty());
        assert_eq!(Changes::default().encode(0.0).len(), 20);
    }

    #[test]
    fn other_hosts_sockets_are_ignored_and_a_failed_dump_changes_nothing() {
        let mut t = FlowTable::new(vec![H], 100_000, OPEN);
        let mut d = socket_msg(1, P, 7, H, 5001, 1, 500_000, 0, 280); // peer's socket
        d.extend(done(1));
        t.begin();
        t.feed(&d, Some(1)).unwrap();
        assert_eq!(t.end(0.0), Changes::default());
        round(&mut t, &[(1, 1, 150_000)], 1.0);
        // A dump that fails half-way is abandoned; the next round sees flow 1 still.
        t.begin();
        assert!(t.feed(&dump(&[])[..10], Some(1)).is_err());
        let c = round(&mut t, &[(1, 1, 160_000)], 1.1);
        assert_eq!(
            c,
            Changes {
                updated: vec![(1, 160_000)],
                ..Changes::default()
            }
        );
    }
}
