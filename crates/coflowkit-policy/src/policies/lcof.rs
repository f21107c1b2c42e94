//! `lcof`: least-contention-first (Saath's LCoF order). A coflow's contention is
//! the number of other active coflows that share a port with it (a sender's first
//! link or a receiver's last link: on the big switch, an uplink or a downlink);
//! coflows are served by priority max-min in ascending contention, ties by arrival
//! and id. Recomputed whenever the active coflows or their ports change. Told
//! to the engine as one strict-priority class per coflow (`RankClasses`), as
//! rates to other drivers.
//! See docs/policies/lcof.md.

use crate::decision::Decision;
use crate::policy::{Info, NonClairvoyantPolicy};
use crate::spec::{non_clairvoyant, PolicySpec};
use crate::support::loads::LinkCounts;
use crate::support::rankclasses::RankClasses;
use crate::view::{ActiveCoflow, Common, NonClairvoyantView};

pub struct Lcof {
    rank: RankClasses,
    /// The active coflows, with their active flow counts, when `order` was made.
    seen: Vec<(u32, u32, u32)>,
    order: Vec<usize>,
    contention: Vec<u32>,
    /// Per link, the active coflows (group indices) with a port on it.
    users: Vec<Vec<u32>>,
    /// Per coflow: its ports (first and last links of its active flows'
    /// paths), with how many of its flows use each, kept as flows start and
    /// finish.
    ports: LinkCounts,
    stamp: Vec<u32>,
}

impl Default for Lcof {
    fn default() -> Self {
        Lcof {
            rank: RankClasses::default(),
            seen: Vec::new(),
            order: Vec::new(),
            contention: Vec::new(),
            users: Vec::new(),
            ports: LinkCounts::ends(),
            stamp: Vec::new(),
        }
    }
}

impl Lcof {
    /// Contention of every active coflow (indexed like `c.groups`).
    fn contend(&mut self, c: &Common) {
        let nl = c.fabric.num_links();
        self.users.resize(nl, Vec::new());
        for u in &mut self.users {
            u.clear();
        }
        for g in 0..c.groups.len() {
            for &(l, _) in self.ports.get(c, g) {
                self.users[l as usize].push(g as u32);
            }
        }
        self.contention.clear();
        self.stamp.clear();
        self.stamp.resize(c.groups.len(), u32::MAX);
        for g in 0..c.groups.len() {
            let mut n = 0;
            for &(l, _) in self.ports.get(c, g) {
                for &h in &self.users[l as usize] {
                    if h as usize != g && self.stamp[h as usize] != g as u32 {
                        self.stamp[h as usize] = g as u32;
                        n += 1;
                    }
                }
            }
            self.contention.push(n);
        }
    }
}

/// A coflow's active flows, named by (coflow, flows started, flows active).
fn key(v: &NonClairvoyantView, g: &ActiveCoflow) -> (u32, u32, u32) {
    (g.coflow, v.coflow_started[g.coflow as usize], g.end - g.start)
}

impl NonClairvoyantPolicy for Lcof {
    fn decide(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        let same = self.seen.len() == v.groups.len()
            && self.seen.iter().zip(v.groups).all(|(s, g)| *s == key(v, g));
        if !same {
            // Flows only finish or start between calls: the active set (and so
            // every port set) is the same exactly when each coflow keeps its
            // started and active counts.
            self.contend(v);
            self.seen.clear();
            self.seen.extend(v.groups.iter().map(|g| key(v, g)));
            self.order.clear();
            self.order.extend(0..v.groups.len());
            let k = &self.contention;
            self.order.sort_by_key(|&g| (k[g], v.groups[g].coflow));
        }
        self.rank.serve(v, &self.order, &[], out);
    }
}

pub const SPEC: PolicySpec = PolicySpec {
    name: "lcof",
    info: Info::NonClairvoyant,
    knows: "ports of the active coflows",
    summary: "least-contention-first: fewest other coflows on its ports first (Saath's LCoF)",
    rule: "as fifo, but coflows ordered by contention (other active coflows sharing a port), least first",
    paper: "Saath: Jajoo, Gandhi, Hu, Koh, CoNEXT'17",
    params: &[],
    needs: &[],
    build: |_| non_clairvoyant(Lcof::default()),
    example_ccts: [0.078125, 0.031625, 0.07775],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{close, Case};

    #[test]
    fn the_coflow_that_blocks_fewest_others_goes_first() {
        // 3 ports, C = 10. Coflow 0: 0→1 (up0, down1); coflow 1: 2→1 (up2,
        // down1); coflow 2: 0→2 (up0, down2). Coflow 0 shares down1 with 1 and up0
        // with 2: contention 2; coflows 1 and 2 have 1 each. Order 1, 2, 0: coflow 1
        // takes down1, coflow 2 up0; coflow 0 gets nothing.
        let c = Case::new(
            3,
            10.0,
            &[(0, 0, 1, 1.0, 0.0), (1, 2, 1, 1.0, 0.0), (2, 0, 2, 1.0, 0.0)],
        );
        let mut d = Decision::default();
        d.reset(3);
        let mut p = Lcof::default();
        p.decide(&c.non_clairvoyant(), &mut d);
        close(&d.rates, &[0.0, 10.0, 10.0]);
        assert_eq!(p.contention, vec![2, 1, 1]);
        // Coflow 1 done: coflows 0 and 2 share up0, 1 each; arrival (index) decides.
        let mut c = c;
        c.active = vec![0, 2];
        c.groups.remove(1);
        c.groups[1].start = 1;
        c.groups[1].end = 2;
        let mut d = Decision::default();
        d.reset(2);
        p.decide(&c.non_clairvoyant(), &mut d);
        close(&d.rates, &[10.0, 0.0]);
    }
}
