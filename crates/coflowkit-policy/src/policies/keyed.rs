//! `scf`, `ncf`, `tcf`: coflows in the order of a static key, each served by
//! priority max-min on what the coflows before it left (as `fifo`, whose key is the
//! arrival). Ties by arrival, then id. One policy, three registered names:
//!
//! * `scf`: smallest length first (the coflow's largest flow, bytes; clairvoyant);
//! * `ncf`: narrowest first (number of flows, known at registration; no sizes);
//! * `tcf`: smallest total first (the coflow's bytes; clairvoyant).
//!
//! See docs/policies/scf.md, ncf.md, tcf.md.

use crate::decision::Decision;
use crate::policy::{ClairvoyantPolicy, Info, NonClairvoyantPolicy};
use crate::spec::{clairvoyant, non_clairvoyant, PolicySpec};
use crate::support::priority::order_by_key;
use crate::support::rankclasses::RankClasses;
use crate::view::{ClairvoyantView, Common, NonClairvoyantView};

/// The static key a coflow is ordered by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// Largest flow, bytes (needs sizes).
    Length,
    /// Number of flows.
    Width,
    /// Total bytes (needs sizes).
    Total,
}

pub struct Keyed {
    key: Key,
    /// The order, told as classes or rates (`support::rankclasses`).
    rank: RankClasses,
    order: Vec<usize>,
}

impl Keyed {
    pub fn new(key: Key) -> Self {
        Keyed {
            key,
            rank: RankClasses::default(),
            order: Vec::new(),
        }
    }

    fn serve(&mut self, c: &Common, key: impl Fn(u32) -> f64, out: &mut Decision) {
        order_by_key(c, key, &mut self.order);
        self.rank.serve(c, &self.order, &[], out);
    }
}

impl ClairvoyantPolicy for Keyed {
    fn decide(&mut self, v: &ClairvoyantView, out: &mut Decision) {
        match self.key {
            Key::Length => self.serve(v, |k| v.coflow_length[k as usize], out),
            Key::Total => self.serve(v, |k| v.coflow_size[k as usize], out),
            Key::Width => self.serve(v, |k| v.coflow_width[k as usize] as f64, out),
        }
    }
}

impl NonClairvoyantPolicy for Keyed {
    fn decide(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        debug_assert_eq!(self.key, Key::Width, "only the width is known without sizes");
        self.serve(v, |k| v.coflow_width[k as usize] as f64, out);
    }
}

pub const SCF: PolicySpec = PolicySpec {
    name: "scf",
    info: Info::Clairvoyant,
    knows: "",
    summary: "smallest largest-flow (length) first",
    rule: "as fifo, but coflows ordered by length (largest flow), shortest first",
    paper: "heuristics of Varys: Chowdhury, Zhong, Stoica, SIGCOMM'14",
    params: &[],
    needs: &[],
    build: |_| clairvoyant(Keyed::new(Key::Length)),
    example_ccts: [0.109375, 0.015625, 0.03125],
};

pub const NCF: PolicySpec = PolicySpec {
    name: "ncf",
    info: Info::NonClairvoyant,
    knows: "width only",
    summary: "narrowest (fewest flows) first",
    rule: "as fifo, but coflows ordered by width (number of flows), narrowest first",
    paper: "heuristics of Varys, SIGCOMM'14",
    params: &[],
    needs: &[],
    build: |_| non_clairvoyant(Keyed::new(Key::Width)),
    example_ccts: [0.0625, 0.078125, 0.07775],
};

pub const TCF: PolicySpec = PolicySpec {
    name: "tcf",
    info: Info::Clairvoyant,
    knows: "",
    summary: "smallest total bytes first",
    rule: "as fifo, but coflows ordered by total bytes, smallest first",
    paper: "heuristics of Varys, SIGCOMM'14",
    params: &[],
    needs: &[],
    build: |_| clairvoyant(Keyed::new(Key::Total)),
    example_ccts: [0.109375, 0.015625, 0.03125],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{close, Case};

    /// Coflow 0: one 9-byte flow 0→1. Coflow 1: three 4-byte flows into down1
    /// (length 4 < 9, total 12 > 9, width 3 > 1), on links of 12 B/s.
    fn case() -> Case {
        Case::new(
            4,
            12.0,
            &[
                (0, 0, 1, 9.0, 0.0),
                (1, 1, 1, 4.0, 0.0),
                (1, 2, 1, 4.0, 0.0),
                (1, 3, 1, 4.0, 0.0),
            ],
        )
    }

    fn rates(key: Key) -> Vec<f64> {
        let c = case();
        let mut d = Decision::default();
        d.reset(4);
        let mut p = Keyed::new(key);
        if key == Key::Width {
            NonClairvoyantPolicy::decide(&mut p, &c.non_clairvoyant(), &mut d);
        } else {
            ClairvoyantPolicy::decide(&mut p, &c.clairvoyant(), &mut d);
        }
        d.rates
    }

    #[test]
    fn shorter_longest_flow_goes_first() {
        // scf: coflow 1 (length 4) first; its three flows share down1, 4 each.
        close(&rates(Key::Length), &[0.0, 4.0, 4.0, 4.0]);
    }

    #[test]
    fn smaller_total_goes_first() {
        // tcf: coflow 0 (9 < 12) first and takes down1 whole; coflow 1 gets nothing.
        close(&rates(Key::Total), &[12.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn narrower_goes_first() {
        // ncf: coflow 0 (one flow) first and takes down1 whole.
        close(&rates(Key::Width), &[12.0, 0.0, 0.0, 0.0]);
    }
}
