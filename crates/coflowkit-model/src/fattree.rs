//! The k-ary FatTree (Al-Fares et al., SIGCOMM'08): geometry, link numbering,
//! placement of trace ports onto hosts and ECMP routing.
//!
//! ```text
//! k even; k pods; per pod k/2 edge and k/2 aggregation switches; (k/2)² cores
//! H = k³/4 hosts, host h in pod h / (k²/4), edge e(h) = h / (k/2) (global)
//! links (6H in all, each direction its own link):
//!   [0, H)      host h → its edge            "h{h}.up"
//!   [H, 2H)     edge → host h                "h{h}.down"
//!   [2H, 3H)    edge E → agg a of its pod     "e{E}.a{a}.up"     2H + E·k/2 + a
//!   [3H, 4H)    agg a → edge E                "e{E}.a{a}.down"   3H + E·k/2 + a
//!   [4H, 5H)    agg A → core j of group a    "a{A}.c{j}.up"     4H + A·k/2 + j
//!   [5H, 6H)    core → agg A                  "a{A}.c{j}.down"   5H + A·k/2 + j
//! (agg A = pod·k/2 + a; core group a holds the cores a·k/2 + j, j < k/2, each
//!  linked to the agg of index a in every pod)
//! routes s → d:
//!   same edge (or same host):  [h_s.up, h_d.down]
//!   same pod:    one of k/2:   [h_s.up, e_s.a.up, e_d.a.down, h_d.down]
//!   other pod:   one of (k/2)²: [h_s.up, e_s.a.up, A_s.c_j.up, A_d.c_j.down, e_d.a.down, h_d.down]
//! the choice is hash(seed, src host, dst host, flow id) mod the number of paths (ECMP).
//! ```

/// How the ports of a trace are put onto the FatTree's hosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Port p on host ⌊p·H/P⌋: ports spread evenly over every pod (several ports
    /// share a host when P > H).
    Spread,
    /// Port p (a rack of the trace) is edge switch p mod E (E = k²/2 edge
    /// switches, filled round-robin); each flow of the port runs on one of that
    /// edge switch's k/2 hosts, chosen by a seeded hash of the flow, as the machines
    /// of a rack. Larger fabrics thus give each rack more hosts and uplinks.
    Rack,
    /// A seeded random permutation of the hosts; port p on host perm[p mod H].
    Random,
}

impl Placement {
    pub fn name(self) -> &'static str {
        match self {
            Placement::Spread => "spread",
            Placement::Rack => "rack",
            Placement::Random => "random",
        }
    }

    pub fn parse(s: &str) -> Option<Placement> {
        match s {
            "spread" => Some(Placement::Spread),
            "rack" => Some(Placement::Rack),
            "random" => Some(Placement::Random),
            _ => None,
        }
    }
}

/// The FatTree's shape, placement and routing seed.
#[derive(Debug, Clone, PartialEq)]
pub struct FatTree {
    pub k: u32,
    /// Trace ports (the workload's endpoints).
    pub ports: u32,
    pub placement: Placement,
    pub seed: u64,
    /// Host of every port (`spread`, `random`), or its edge switch (`rack`).
    pub host_of: Vec<u32>,
}

/// SplitMix64's finaliser: a well-mixed 64-bit hash of `x`.
#[inline]
pub fn mix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

impl FatTree {
    /// Hosts, `k³/4`.
    pub fn hosts_in(k: u32) -> u64 {
        (k as u64).pow(3) / 4
    }

    pub fn new(k: u32, ports: u32, placement: Placement, seed: u64) -> FatTree {
        let h = Self::hosts_in(k) as u32;
        let half = k / 2;
        let edges = k * half;
        let host_of = match placement {
            Placement::Spread => (0..ports)
                .map(|p| ((p as u64 * h as u64) / ports as u64) as u32)
                .collect(),
            Placement::Rack => (0..ports).map(|p| p % edges).collect(),
            Placement::Random => {
                let mut rng = crate::Pcg32::new(seed, 0x5eed_fa77);
                let mut perm: Vec<u32> = (0..h).collect();
                // Fisher-Yates, only as far as the ports need.
                let need = (ports.min(h)) as usize;
                for i in 0..need {
                    let j = i + rng.below((h as usize - i) as u32) as usize;
                    perm.swap(i, j);
                }
                (0..ports).map(|p| perm[(p % h) as usize]).collect()
            }
        };
        FatTree {
            k,
            ports,
            placement,
            seed,
            host_of,
        }
    }

    pub fn num_hosts(&self) -> u32 {
        Self::hosts_in(self.k) as u32
    }

    pub fn num_links(&self) -> usize {
        6 * self.num_hosts() as usize
    }

    /// The hosts of a flow from port `src` to port `dst` (`flow_hash` picks the
    /// host of a rack under `rack` placement).
    pub fn hosts(&self, src: u32, dst: u32, flow_hash: u64) -> (u32, u32) {
        let (a, b) = (self.host_of[src as usize], self.host_of[dst as usize]);
        match self.placement {
            Placement::Rack => {
                let half = (self.k / 2) as u64;
                let x = mix64(self.seed.rotate_left(17) ^ mix64(flow_hash));
                let (i, j) = ((x % half) as u32, ((x / half) % half) as u32);
                (a * self.k / 2 + i, b * self.k / 2 + j)
            }
            _ => (a, b),
        }
    }

    /// Number of equal-cost paths between two hosts.
    pub fn num_paths(&self, s: u32, d: u32) -> u32 {
        let half = self.k / 2;
        let per_pod = half * half;
        if s / half == d / half {
            1
        } else if s / per_pod == d / per_pod {
            half
        } else {
            per_pod
        }
    }

    /// The ECMP choice of a flow: `hash(seed, src host, dst host, flow hash)`.
    pub fn choice(&self, s: u32, d: u32, flow_hash: u64) -> u32 {
        let n = self.num_paths(s, d);
        if n == 1 {
            return 0;
        }
        let x = mix64(self.seed ^ mix64(((s as u64) << 32 | d as u64) ^ mix64(flow_hash)));
        (x % n as u64) as u32
    }

    /// The links of path number `choice` from host `s` to host `d`.
    pub fn links(&self, s: u32, d: u32, choice: u32, out: &mut Vec<u32>) {
        let h = self.num_hosts();
        let half = self.k / 2;
        let per_pod = half * half;
        let (es, ed) = (s / half, d / half);
        out.clear();
        out.push(s);
        if es == ed {
            out.push(h + d);
            return;
        }
        let (ps, pd) = (s / per_pod, d / per_pod);
        let a = choice % half;
        out.push(2 * h + es * half + a);
        if ps != pd {
            let j = choice / half;
            let (as_, ad) = (ps * half + a, pd * half + a);
            out.push(4 * h + as_ * half + j);
            out.push(5 * h + ad * half + j);
        }
        out.push(3 * h + ed * half + a);
        out.push(h + d);
    }

    pub fn link_name(&self, l: u32) -> String {
        let h = self.num_hosts();
        let half = self.k / 2;
        let (block, i) = (l / h, l % h);
        let (x, y) = (i / half, i % half);
        match block {
            0 => format!("h{i}.up"),
            1 => format!("h{i}.down"),
            2 => format!("e{x}.a{y}.up"),
            3 => format!("e{x}.a{y}.down"),
            4 => format!("a{x}.c{y}.up"),
            _ => format!("a{x}.c{y}.down"),
        }
    }

    pub fn link_by_name(&self, name: &str) -> Option<u32> {
        let h = self.num_hosts();
        let half = self.k / 2;
        let num = |s: &str| -> Option<u32> {
            let v: u32 = s.parse().ok()?;
            (v.to_string() == s).then_some(v)
        };
        let (body, up) = if let Some(b) = name.strip_suffix(".up") {
            (b, true)
        } else {
            (name.strip_suffix(".down")?, false)
        };
        if let Some(i) = body.strip_prefix('h') {
            let i = num(i)?;
            return (i < h).then_some(if up { i } else { h + i });
        }
        let (first, second) = body.split_once('.')?;
        let (block, x, y, xmax) =
            if let (Some(e), Some(a)) = (first.strip_prefix('e'), second.strip_prefix('a')) {
                (if up { 2 } else { 3 }, num(e)?, num(a)?, self.k * half)
            } else if let (Some(a), Some(c)) = (first.strip_prefix('a'), second.strip_prefix('c')) {
                (if up { 4 } else { 5 }, num(a)?, num(c)?, self.k * half)
            } else {
                return None;
            };
        (x < xmax && y < half).then_some(block * h + x * half + y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k4_geometry_by_hand() {
        // k = 4: 16 hosts, 4 per pod, 2 per edge; links 6·16 = 96.
        let t = FatTree::new(4, 16, Placement::Spread, 1);
        assert_eq!(t.num_hosts(), 16);
        assert_eq!(t.num_links(), 96);
        assert_eq!(t.host_of, (0..16).collect::<Vec<_>>());
        let mut v = Vec::new();
        // Hosts 0 and 1 share edge 0.
        t.links(0, 1, 0, &mut v);
        assert_eq!(v, vec![0, 16 + 1]);
        assert_eq!(t.num_paths(0, 1), 1);
        // Host 0 (edge 0) to host 3 (edge 1), same pod 0, via agg 1:
        // h0.up=0, e0.a1.up=32+0·2+1=33, e1.a1.down=48+1·2+1=51, h3.down=19.
        t.links(0, 3, 1, &mut v);
        assert_eq!(v, vec![0, 33, 51, 19]);
        assert_eq!(t.num_paths(0, 3), 2);
        // Host 0 (pod 0, edge 0) to host 13 (pod 3, edge 6), choice 3 = agg 1,
        // core j = 1: e0.a1.up = 33; agg A_s = 0·2+1 = 1, a1.c1.up = 64+1·2+1 = 67;
        // A_d = 3·2+1 = 7, a7.c1.down = 80+7·2+1 = 95; e6.a1.down = 48+6·2+1 = 61;
        // h13.down = 29.
        t.links(0, 13, 3, &mut v);
        assert_eq!(v, vec![0, 33, 67, 95, 61, 29]);
        assert_eq!(t.num_paths(0, 13), 4);
        let names: Vec<String> = v.iter().map(|&l| t.link_name(l)).collect();
        assert_eq!(
            names,
            [
                "h0.up",
                "e0.a1.up",
                "a1.c1.up",
                "a7.c1.down",
                "e6.a1.down",
                "h13.down"
            ]
        );
    }

    #[test]
    fn names_round_trip_and_reject_garbage() {
        let t = FatTree::new(6, 10, Placement::Rack, 1);
        for l in 0..t.num_links() as u32 {
            assert_eq!(t.link_by_name(&t.link_name(l)), Some(l), "{l}");
        }
        for bad in [
            "h54.up",
            "h01.up",
            "e18.a0.up",
            "e0.a3.up",
            "x.up",
            "h1",
            "a0.c3.down",
        ] {
            assert_eq!(t.link_by_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn placements() {
        // k = 4: E = 8 edges of 2 hosts. Rack: port p is edge p mod 8; its flows run
        // on the edge's hosts 2·(p mod 8) and 2·(p mod 8) + 1, by flow hash.
        let t = FatTree::new(4, 10, Placement::Rack, 1);
        assert_eq!(t.host_of, vec![0, 1, 2, 3, 4, 5, 6, 7, 0, 1]);
        let mut seen = [[false; 2]; 2];
        for id in 0..64 {
            let (a, b) = t.hosts(9, 3, id);
            assert!((2..4).contains(&a) && (6..8).contains(&b), "{a} {b}");
            seen[(a - 2) as usize][(b - 6) as usize] = true;
        }
        assert!(seen.iter().flatten().all(|&x| x), "every host pair is used");
        // Spread with more ports than hosts: ⌊p·16/20⌋.
        let s = FatTree::new(4, 20, Placement::Spread, 1);
        assert_eq!(&s.host_of[..6], &[0, 0, 1, 2, 3, 4]);
        // Random: a seeded injection while ports ≤ hosts, different per seed.
        let r1 = FatTree::new(4, 16, Placement::Random, 1);
        let mut sorted = r1.host_of.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..16).collect::<Vec<_>>());
        assert_eq!(r1, FatTree::new(4, 16, Placement::Random, 1));
        assert_ne!(
            r1.host_of,
            FatTree::new(4, 16, Placement::Random, 2).host_of
        );
    }

    #[test]
    fn ecmp_spreads_flows_over_every_path() {
        let t = FatTree::new(8, 128, Placement::Spread, 7);
        let n = t.num_paths(0, 127);
        assert_eq!(n, 16);
        let mut seen = vec![0u32; n as usize];
        for id in 0..16_000u64 {
            seen[t.choice(0, 127, id) as usize] += 1;
        }
        // 1000 expected per path; a fair hash stays well within ±20%.
        assert!(seen.iter().all(|&c| (800..1200).contains(&c)), "{seen:?}");
        // Deterministic, and the seed matters.
        assert_eq!(t.choice(0, 127, 5), t.choice(0, 127, 5));
        let u = FatTree::new(8, 128, Placement::Spread, 8);
        assert!((0..64u64).any(|id| t.choice(0, 127, id) != u.choice(0, 127, id)));
    }
}
