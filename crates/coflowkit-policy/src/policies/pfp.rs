//! `pfp`: per-flow shortest-remaining-first (pFabric-like). Priority max-min with one
//! group per flow, ordered by remaining bytes rounded to whole bytes, then coflow
//! arrival, coflow id, flow index; with one flow per group this is greedy:
//! `r_f = min_{l ∈ f} c_l` in that order. See docs/policies/pfp.md.

use crate::decision::Decision;
use crate::policy::ClairvoyantPolicy;
use crate::view::ClairvoyantView;
use crate::support::flowsync::KeptGreedy;
use crate::support::forms::FormChoice;
use coflowkit_alloc::{consume, path_avail};
use crate::policy::Info;
use crate::spec::{clairvoyant, PolicySpec};

/// The order is kept across calls: a flow's key changes only while it has a
/// positive rate, so each call re-keys the active flows whose rounded remaining
/// bytes moved (few: this policy serves few flows at a time), sorts just those, and
/// merges them into the survivors of the previous order, `O(n + m log m)` instead
/// of `O(n log n)` for `n` active flows of which `m` changed.
///
/// A driver that takes delta decisions (the engine) gets the incremental form
/// ([`Inc`]): the greedy itself is kept across calls ([`IncGreedy`]), and a call
/// costs what changed (flows started, finished, or moved since the last call)
/// instead of `O(n)`.
#[derive(Default)]
pub struct Pfp {
    inc: Option<Inc>,
    choice: FormChoice,
    /// (key, flow) of the flows ordered by the previous call, ascending.
    order: Vec<(u64, u32)>,
    /// Per flow: the key it has in `order` (`u64::MAX`: not in it).
    key: Vec<u64>,
    /// Per flow: `epoch` if active in this call, with its position in `active`.
    seen: Vec<u32>,
    pos: Vec<u32>,
    epoch: u32,
    changed: Vec<(u64, u32)>,
    merged: Vec<(u64, u32)>,
    residual: Vec<f64>,
}

/// The incremental form: the order and the greedy's trajectories kept in an
/// [`IncGreedy`](coflowkit_alloc::IncGreedy), the active flows tracked by a
/// [`KeptGreedy`].
struct Inc {
    kept: KeptGreedy,
}

/// pfp's key: remaining bytes rounded to whole bytes.
fn key(v: &ClairvoyantView, f: u32) -> u64 {
    v.remaining(f).round().max(0.0) as u64
}

impl Inc {
    fn decide(&mut self, v: &ClairvoyantView, out: &mut Decision) {
        let k = &mut self.kept;
        k.sync(v);
        // Flows that had a rate are re-keyed by what they sent; new ones join.
        for &f in k.moving.iter().chain(&k.joined) {
            if k.sync.holds(f) {
                k.greedy.upsert(v.fabric, f, key(v, f), v.flow_path[f as usize]);
            }
        }
        k.answer(v, out);
    }
}

impl ClairvoyantPolicy for Pfp {
    fn decide(&mut self, v: &ClairvoyantView, out: &mut Decision) {
        // Both forms give the same rates bit for bit; `FormChoice` picks one from
        // counts.
        if self.choice.incremental(out.delta_ok) {
            let inc = self.inc.get_or_insert_with(|| Inc {
                kept: KeptGreedy::new(v),
            });
            let (before, building) = (inc.kept.greedy.work(), inc.kept.building);
            inc.decide(v, out);
            let work = inc.kept.greedy.work() - before;
            if !self.choice.record(work, v.active.len(), building) {
                self.inc = None;
            }
            return;
        }
        // A driver without delta decisions, or the from-scratch form's turn.
        self.inc = None;
        let n = v.flow_path.len();
        if self.key.len() < n {
            self.key.resize(n, u64::MAX);
            self.seen.resize(n, 0);
            self.pos.resize(n, 0);
        }
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.seen.iter_mut().for_each(|s| *s = 0);
            self.epoch = 1;
        }
        self.changed.clear();
        for (i, &f) in v.active.iter().enumerate() {
            let fu = f as usize;
            self.seen[fu] = self.epoch;
            self.pos[fu] = i as u32;
            let k = v.remaining(fu as u32).round().max(0.0) as u64;
            if self.key[fu] != k {
                self.key[fu] = k;
                self.changed.push((k, f));
            }
        }
        self.changed.sort_unstable();
        // Survivors: still active and not re-keyed (a re-keyed flow's old entry no
        // longer matches its key).
        let (seen, key, ep) = (&self.seen, &self.key, self.epoch);
        self.order
            .retain(|&(k, f)| seen[f as usize] == ep && key[f as usize] == k);
        self.merged.clear();
        self.merged.reserve(self.order.len() + self.changed.len());
        let (mut a, mut b) = (0, 0);
        while a < self.order.len() && b < self.changed.len() {
            if self.order[a] < self.changed[b] {
                self.merged.push(self.order[a]);
                a += 1;
            } else {
                self.merged.push(self.changed[b]);
                b += 1;
            }
        }
        self.merged.extend_from_slice(&self.order[a..]);
        self.merged.extend_from_slice(&self.changed[b..]);
        std::mem::swap(&mut self.order, &mut self.merged);
        self.residual.clear();
        self.residual.extend_from_slice(&v.fabric.capacities);
        for &(_, f) in &self.order {
            let p = v.flow_path[f as usize];
            let r = path_avail(v.fabric, &self.residual, p);
            if r > 0.0 {
                out.rates[self.pos[f as usize] as usize] = r;
                consume(v.fabric, &mut self.residual, p, r);
            }
        }
    }
}

pub const SPEC: PolicySpec = PolicySpec {
    name: "pfp",
    info: Info::Clairvoyant,
    knows: "",
    summary: "per-flow shortest-remaining-first (pFabric-like)",
    rule: "flows by fewest remaining bytes; each in turn takes the residual of its bottleneck link",
    paper: "pFabric: Alizadeh et al., SIGCOMM'13",
    params: &[],
    needs: &[],
    build: |_| clairvoyant(Pfp::default()),
    example_ccts: [0.109375, 0.015625, 0.03125],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{close, Case};

    #[test]
    fn smallest_remaining_flow_first_across_coflows() {
        // C = 10. Flows into down1: coflow 0 has 8 B left, coflow 1 has 3 B left.
        // The 3-byte flow goes first and takes down1; the 8-byte flow waits.
        // Coflow 0's second flow 0→2 (5 B) shares up0 with the waiting flow: gets 10.
        let c = Case::new(
            3,
            10.0,
            &[
                (0, 0, 1, 8.0, 0.0),
                (0, 0, 2, 5.0, 0.0),
                (1, 2, 1, 3.0, 0.0),
            ],
        );
        let mut d = Decision::default();
        d.reset(3);
        Pfp::default().decide(&c.clairvoyant(), &mut d);
        close(&d.rates, &[0.0, 10.0, 10.0]);
    }

    #[test]
    fn ties_on_rounded_bytes_fall_back_to_coflow_order() {
        // 5.2 B and 4.9 B both round to 5: coflow 0 goes first.
        let c = Case::new(2, 10.0, &[(0, 0, 1, 5.2, 0.0), (1, 1, 1, 4.9, 0.0)]);
        let mut d = Decision::default();
        d.reset(2);
        Pfp::default().decide(&c.clairvoyant(), &mut d);
        close(&d.rates, &[10.0, 0.0]);
    }

    #[test]
    fn the_kept_order_matches_a_fresh_sort_after_progress_and_finishes() {
        // C = 10, four flows into down1 and one 0→2. Call 1: remaining 8, 5, 3, 6, 4.
        // Then flows progress (re-keyed), one finishes, and the kept order must give
        // the same rates as a policy sorting from scratch.
        let mut c = Case::new(
            3,
            10.0,
            &[
                (0, 0, 1, 8.0, 0.0),
                (0, 0, 2, 5.0, 0.0),
                (1, 2, 1, 3.0, 0.0),
                (1, 1, 1, 6.0, 0.0),
                (2, 1, 0, 4.0, 0.0),
            ],
        );
        let mut kept = Pfp::default();
        let mut d = Decision::default();
        d.reset(5);
        kept.decide(&c.clairvoyant(), &mut d);
        // Flow 2 (3 B) first: down1 → 10, up2 full. Flow 4 (4 B, up1/down0) → 10.
        // Flow 1 (5 B, up0/down2) → 10. Flows 3 (down1, up1) and 0 (up0) get nothing.
        close(&d.rates, &[0.0, 10.0, 10.0, 0.0, 10.0]);
        // Flow 2 finishes; flow 4 drops to 0.5 B, flow 1 to 4.6 B (rounds to 5).
        c.active = vec![0, 1, 3, 4];
        c.groups = vec![
            crate::view::ActiveCoflow {
                coflow: 0,
                start: 0,
                end: 2,
            },
            crate::view::ActiveCoflow {
                coflow: 1,
                start: 2,
                end: 3,
            },
            crate::view::ActiveCoflow {
                coflow: 2,
                start: 3,
                end: 4,
            },
        ];
        c.set_remaining(4, 0.5);
        c.set_remaining(1, 4.6);
        let mut d = Decision::default();
        d.reset(4);
        kept.decide(&c.clairvoyant(), &mut d);
        let mut fresh = Decision::default();
        fresh.reset(4);
        Pfp::default().decide(&c.clairvoyant(), &mut fresh);
        close(&d.rates, &fresh.rates);
        // By hand: flow 4 (0.5 B, key 1: halves round away from zero) first:
        // up1/down0 → 10; flow 1 (key 5): up0/down2 → 10; flow 3 (6): up1 full → 0;
        // flow 0 (8): up0 full → 0.
        close(&d.rates, &[0.0, 10.0, 0.0, 10.0]);
    }
}
