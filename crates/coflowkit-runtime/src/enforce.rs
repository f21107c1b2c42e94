//! What each agent must be told after a round: the master's per-flow half of
//! "changes out", kept off the Python thread.
//!
//! Per flow slot the master knows its owner (the sending host and the agent's
//! flow number), its two links (the sender's uplink and the receiver's
//! downlink) and what its agent was last told. A round turns the policy's
//! rates or classes into decisions, keeps only those that changed by more
//! than the hysteresis, and groups them by host, in one pass over the active
//! flows. The rules are those the Python master applied (docs/runtime.md):
//!
//! * **Room for trickles** (rate enforcement only): an agent sends a flow
//!   decided below `paused_floor` at that floor, bandwidth the policy did not
//!   give out. On each link whose flows would not fit, the other flows' rates
//!   are scaled by `(C - trickles) / their sum`; a flow takes the smaller
//!   factor of its two links.
//! * **Classes** (class enforcement): a flow with a class gets `min(class, 7)`;
//!   one without gets a rate.
//! * **Hysteresis**: a rate within `h · max(old, new)` of the one in force is
//!   not sent again; a class is sent when it differs.
//! * A flow whose agent is not connected is not told anything (and what it was
//!   told is forgotten: an agent fails open when its session ends).

use crate::wire::{Decision, CLASS, RATE};
use std::collections::HashMap;

#[derive(Debug, Clone, Copy)]
struct Owned {
    host: u32,
    fid: u32,
    src: u32,
    dst: u32,
    pushed: Option<(u8, f64)>,
}

/// The master's record of what agents were told.
#[derive(Debug, Default)]
pub struct Enforcer {
    capacity: f64,
    hysteresis: f64,
    classes: bool,
    paused_floor: f64,
    slots: HashMap<u64, Owned>,
    up: Vec<bool>,
    /// The last round: (slot, rate after the trickles' room, class).
    last: Vec<(u64, f64, i32)>,
}

impl Enforcer {
    /// `capacity` in bytes/s per link, `paused_floor` as a share of it.
    pub fn new(
        hosts: u32,
        capacity: f64,
        hysteresis: f64,
        classes: bool,
        paused_floor: f64,
    ) -> Self {
        Enforcer {
            capacity,
            hysteresis,
            classes,
            paused_floor,
            slots: HashMap::new(),
            up: vec![false; hosts as usize],
            last: Vec::new(),
        }
    }

    /// Slot `slot` is flow `fid` of host `host`'s agent, from `src` to `dst`.
    pub fn own(&mut self, slot: u64, host: u32, fid: u32, src: u32, dst: u32) {
        self.slots.insert(
            slot,
            Owned {
                host,
                fid,
                src,
                dst,
                pushed: None,
            },
        );
    }

    /// The flow in `slot` ended.
    pub fn release(&mut self, slot: u64) {
        self.slots.remove(&slot);
    }

    /// Forgets what the agents of these slots were told (their session ended
    /// or started again).
    pub fn unpush(&mut self, slots: &[u64]) {
        for s in slots {
            if let Some(o) = self.slots.get_mut(s) {
                o.pushed = None;
            }
        }
    }

    /// Host `host`'s agent is connected (`true`) or not.
    pub fn set_up(&mut self, host: u32, up: bool) {
        if let Some(u) = self.up.get_mut(host as usize) {
            *u = up;
        }
    }

    fn is_up(&self, host: u32) -> bool {
        self.up.get(host as usize).copied().unwrap_or(false)
    }

    /// Whether `slot`'s agent is connected and was told something.
    pub fn enforced(&self, slot: u64) -> bool {
        self.slots
            .get(&slot)
            .is_some_and(|o| self.is_up(o.host) && o.pushed.is_some())
    }

    /// The links of a slot: its sender's uplink and receiver's downlink; a
    /// slot the master does not own has links of its own (host -1).
    fn links(&self, slot: u64) -> (i64, i64) {
        match self.slots.get(&slot) {
            Some(o) => (2 * i64::from(o.src), 2 * i64::from(o.dst) + 1),
            None => (-2, -1),
        }
    }

    /// `rates` scaled so that each link also carries its paused flows'
    /// trickles (the module doc).
    pub fn room_for_trickles(&self, flows: &[u64], rates: &[f64]) -> Vec<f64> {
        let floor = self.paused_floor * self.capacity;
        let mut trickle: HashMap<i64, f64> = HashMap::new();
        let mut big: HashMap<i64, f64> = HashMap::new();
        let mut links = Vec::with_capacity(flows.len());
        for (&slot, &rate) in flows.iter().zip(rates) {
            let (up, down) = self.links(slot);
            links.push((up, down));
            let m = if rate < floor { &mut trickle } else { &mut big };
            let add = if rate < floor { floor } else { rate };
            *m.entry(up).or_insert(0.0) += add;
            *m.entry(down).or_insert(0.0) += add;
        }
        if trickle.is_empty() {
            return rates.to_vec();
        }
        let mut scale: HashMap<i64, f64> = HashMap::new();
        for (&link, &total) in &big {
            let t = trickle.get(&link).copied().unwrap_or(0.0);
            if total + t > self.capacity * (1.0 + 1e-9) {
                scale.insert(link, (self.capacity - t).max(0.0) / total);
            }
        }
        if scale.is_empty() {
            return rates.to_vec();
        }
        rates
            .iter()
            .zip(&links)
            .map(|(&rate, (up, down))| {
                if rate < floor {
                    rate
                } else {
                    let f = scale
                        .get(up)
                        .copied()
                        .unwrap_or(1.0)
                        .min(scale.get(down).copied().unwrap_or(1.0))
                        .min(1.0);
                    rate * f
                }
            })
            .collect()
    }

    /// One round: the policy's `rates` and `classes` for `flows` in, the
    /// decisions to send out, per host in the order hosts first appear (and,
    /// per host, in flow order). What is returned counts as told.
    pub fn round(
        &mut self,
        flows: &[u64],
        rates: &[f64],
        classes: &[i32],
        trickles: bool,
    ) -> Vec<(u32, Vec<Decision>)> {
        let rates = if trickles {
            self.room_for_trickles(flows, rates)
        } else {
            rates.to_vec()
        };
        let mut out: Vec<(u32, Vec<Decision>)> = Vec::new();
        let mut index: HashMap<u32, usize> = HashMap::new();
        self.last.clear();
        for ((&slot, &rate), &cls) in flows.iter().zip(&rates).zip(classes) {
            self.last.push((slot, rate, cls));
            let Some(o) = self.slots.get(&slot).copied() else {
                continue;
            };
            if !self.is_up(o.host) {
                continue; // its agent is not connected: nothing can be enforced
            }
            let want = if self.classes && cls >= 0 {
                (CLASS, f64::from(cls.min(7)))
            } else {
                (RATE, rate)
            };
            if let Some(have) = o.pushed {
                if have.0 == want.0 {
                    if want.0 == CLASS && have.1 == want.1 {
                        continue;
                    }
                    if want.0 == RATE
                        && (have.1 - want.1).abs() <= self.hysteresis * have.1.max(want.1)
                    {
                        continue;
                    }
                }
            }
            if let Some(x) = self.slots.get_mut(&slot) {
                x.pushed = Some(want);
            }
            let i = *index.entry(o.host).or_insert_with(|| {
                out.push((o.host, Vec::new()));
                out.len() - 1
            });
            out[i].1.push(Decision {
                fid: o.fid,
                kind: want.0,
                value: want.1,
            });
        }
        out
    }

    /// The last round's flows: (slot, rate in force, class).
    pub fn last(&self) -> &[(u64, f64, i32)] {
        &self.last
    }

    /// Slots owned (flows the master tracks).
    pub fn owned(&self) -> usize {
        self.slots.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const C: f64 = 100.0;

    fn enf(classes: bool) -> Enforcer {
        let mut e = Enforcer::new(4, C, 0.02, classes, 0.005);
        for h in 0..4 {
            e.set_up(h, true);
        }
        e
    }

    #[test]
    fn trickles_make_room_on_the_links_that_overflow() {
        // Host 0 sends flows 1 (rate 100, to host 1) and 2 (paused, to host 2):
        // the paused one trickles at 0.5 on host 0's uplink, so flow 1 is
        // scaled by (100 - 0.5) / 100 there; host 1's downlink is not full.
        let mut e = enf(false);
        e.own(1, 0, 11, 0, 1);
        e.own(2, 0, 12, 0, 2);
        let r = e.room_for_trickles(&[1, 2], &[100.0, 0.0]);
        assert_eq!(r, vec![99.5, 0.0]);
        // Nothing paused: nothing changes.
        assert_eq!(
            e.room_for_trickles(&[1, 2], &[50.0, 50.0]),
            vec![50.0, 50.0]
        );
    }

    #[test]
    fn only_changes_beyond_the_hysteresis_are_sent_and_grouped_by_host() {
        let mut e = enf(false);
        e.own(1, 0, 11, 0, 1);
        e.own(2, 2, 21, 2, 1);
        e.own(3, 0, 12, 0, 3);
        let out = e.round(&[1, 2, 3], &[40.0, 60.0, 60.0], &[-1, -1, -1], true);
        let hosts: Vec<u32> = out.iter().map(|(h, _)| *h).collect();
        assert_eq!(hosts, vec![0, 2]);
        assert_eq!(
            out[0].1.iter().map(|d| d.fid).collect::<Vec<_>>(),
            vec![11, 12]
        );
        // 40 -> 40.7 is within 2% of 40.7: not sent; 60 -> 50 is.
        let out = e.round(&[1, 2, 3], &[40.7, 50.0, 60.0], &[-1, -1, -1], true);
        assert_eq!(out.len(), 1);
        assert_eq!(
            (out[0].0, out[0].1[0].fid, out[0].1[0].value),
            (2, 21, 50.0)
        );
        // Host 2 disconnects: its flow is told nothing, and once back it is
        // told again even with the same rate.
        e.set_up(2, false);
        e.unpush(&[2]);
        assert!(e
            .round(&[1, 2, 3], &[40.7, 50.0, 60.0], &[-1, -1, -1], true)
            .is_empty());
        assert!(!e.enforced(2));
        e.set_up(2, true);
        let out = e.round(&[1, 2, 3], &[40.7, 50.0, 60.0], &[-1, -1, -1], true);
        assert_eq!((out.len(), out[0].1[0].fid), (1, 21));
        assert!(e.enforced(2) && e.enforced(1));
    }

    #[test]
    fn classes_are_capped_at_seven_and_sent_when_they_differ() {
        let mut e = enf(true);
        e.own(1, 0, 11, 0, 1);
        e.own(2, 1, 21, 1, 0);
        let out = e.round(&[1, 2], &[10.0, 20.0], &[9, -1], false);
        assert_eq!(out[0].1[0].kind, CLASS);
        assert_eq!(out[0].1[0].value, 7.0);
        assert_eq!(out[1].1[0].kind, RATE);
        assert!(e.round(&[1, 2], &[11.0, 20.0], &[8, -1], false).is_empty());
        let out = e.round(&[1, 2], &[11.0, 20.0], &[3, -1], false);
        assert_eq!((out[0].1[0].kind, out[0].1[0].value), (CLASS, 3.0));
        e.release(1);
        assert!(e.round(&[1, 2], &[11.0, 20.0], &[3, -1], false).is_empty());
        assert_eq!(e.owned(), 1);
    }
}
