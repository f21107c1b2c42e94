//! Max-min fairness over arbitrary constraint sets, by progressive filling with a
//! lazily updated heap.
//!
//! The system solved:
//!
//! ```text
//!   maximise the sorted vector of rates x_i (lexicographically), subject to
//!   Σ_{i ∋ c} x_i ≤ cap_c     for every constraint c
//! ```
//!
//! where item `i` crosses the constraints `cons[start[i]..start[i + 1]]`. Unlike
//! [`crate::MaxMin`], constraints need not be links: HUG's per-coflow caps are
//! constraints of their own. All unfrozen items rise together; the constraint with
//! the smallest share `s_c = cap'_c / W_c` (remaining capacity over unfrozen items)
//! saturates first and freezes its items at `s_c`. A freeze only raises the shares
//! of the other constraints it touches (`(cap − s)/(W − 1) ≥ cap/W` when
//! `s ≤ cap/W`), so a heap whose stale keys are re-pushed when popped stays exact.
//! Cost `O((n·h + m) log m)` for `n` items crossing `h` constraints each out of `m`.
//! Ties: the constraint with the smaller id saturates first.

use coflowkit_model::TotalF64;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// (share, constraint): ascending share, then constraint index.
type Key = (TotalF64, u32);

/// Scratch space reused across calls.
#[derive(Default)]
pub struct Filling {
    weight: Vec<u32>,
    adj_start: Vec<u32>,
    adj: Vec<u32>,
    fill: Vec<u32>,
    frozen: Vec<bool>,
    heap: BinaryHeap<Reverse<Key>>,
}

impl Filling {
    pub fn new() -> Self {
        Self::default()
    }

    /// Max-min rates for `n = start.len() - 1` items on the capacities `caps`
    /// (indexed by constraint id), which are reduced by what the items take
    /// (never below zero). A constraint with `caps[c] <= 0` is saturated from the
    /// start: its items get 0. Writes `rates[i]`.
    pub fn solve(&mut self, caps: &mut [f64], start: &[u32], cons: &[u32], rates: &mut [f64]) {
        let n = start.len().saturating_sub(1);
        debug_assert_eq!(rates.len(), n);
        rates.iter_mut().for_each(|r| *r = 0.0);
        self.index(caps, start, cons);
        self.heap.clear();
        for (c, (&cap, &w)) in caps.iter().zip(&self.weight).enumerate() {
            if w > 0 {
                self.heap
                    .push(Reverse((TotalF64(cap / w as f64), c as u32)));
            }
        }
        let mut level: f64 = 0.0;
        while let Some(Reverse((TotalF64(key), c))) = self.heap.pop() {
            let ci = c as usize;
            let w = self.weight[ci];
            if w == 0 {
                continue;
            }
            let share = caps[ci].max(0.0) / w as f64;
            if share > key {
                self.heap.push(Reverse((TotalF64(share), c)));
                continue;
            }
            level = level.max(share);
            for k in self.adj_start[ci]..self.adj_start[ci + 1] {
                let i = self.adj[k as usize] as usize;
                if self.frozen[i] {
                    continue;
                }
                self.frozen[i] = true;
                rates[i] = level;
                for &d in &cons[start[i] as usize..start[i + 1] as usize] {
                    let di = d as usize;
                    caps[di] = (caps[di] - level).max(0.0);
                    self.weight[di] -= 1;
                }
            }
        }
    }

    /// Freezes at 0 the items through a saturated constraint (or none), counts
    /// the others per constraint (`weight`) and indexes them by constraint
    /// (`adj`, CSR by `adj_start`).
    fn index(&mut self, caps: &[f64], start: &[u32], cons: &[u32]) {
        let n = start.len().saturating_sub(1);
        let m = caps.len();
        self.weight.clear();
        self.weight.resize(m, 0);
        self.frozen.clear();
        self.frozen.resize(n, false);
        for i in 0..n {
            let cs = &cons[start[i] as usize..start[i + 1] as usize];
            if cs.is_empty() || cs.iter().any(|&c| caps[c as usize] <= 0.0) {
                self.frozen[i] = true;
            } else {
                for &c in cs {
                    self.weight[c as usize] += 1;
                }
            }
        }
        self.adj_start.clear();
        self.adj_start.reserve(m + 1);
        let mut acc = 0u32;
        for c in 0..m {
            self.adj_start.push(acc);
            acc += self.weight[c];
        }
        self.adj_start.push(acc);
        self.adj.clear();
        self.adj.resize(acc as usize, 0);
        self.fill.clear();
        self.fill.extend_from_slice(&self.adj_start[..m]);
        for i in 0..n {
            if self.frozen[i] {
                continue;
            }
            for &c in &cons[start[i] as usize..start[i + 1] as usize] {
                let at = &mut self.fill[c as usize];
                self.adj[*at as usize] = i as u32;
                *at += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solve(caps: &[f64], items: &[&[u32]]) -> (Vec<f64>, Vec<f64>) {
        let mut start = vec![0u32];
        let mut cons = vec![];
        for it in items {
            cons.extend_from_slice(it);
            start.push(cons.len() as u32);
        }
        let mut caps = caps.to_vec();
        let mut r = vec![0.0; items.len()];
        Filling::new().solve(&mut caps, &start, &cons, &mut r);
        (r, caps)
    }

    fn close(a: &[f64], b: &[f64]) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() <= 1e-12 * y.abs().max(1.0), "{a:?} vs {b:?}");
        }
    }

    #[test]
    fn the_parking_lot() {
        // c0: x0 + x1 ≤ 10; c1: x0 + x2 + x3 ≤ 12; c2: x2 ≤ 10; c3: x3 ≤ 10.
        // c1's share 4 < c0's 5 → x0 = x2 = x3 = 4; c0 leaves 6 for x1.
        let (r, left) = solve(
            &[10.0, 12.0, 10.0, 10.0],
            &[&[0, 1], &[0], &[1, 2], &[1, 3]],
        );
        close(&r, &[4.0, 6.0, 4.0, 4.0]);
        close(&left, &[0.0, 0.0, 6.0, 6.0]);
    }

    #[test]
    fn a_cap_on_a_subset_of_items_binds_before_the_shared_link() {
        // A shared link c0 of 9 and a cap c1 of 1 on items 0 and 1 (a coflow's cap):
        // c1's share ½ < c0's 3 → x0 = x1 = ½; the third item takes the 8 left.
        let (r, _) = solve(&[9.0, 1.0], &[&[0, 1], &[0, 1], &[0]]);
        close(&r, &[0.5, 0.5, 8.0]);
    }

    #[test]
    fn saturated_constraints_and_empty_items_get_nothing() {
        // c1 is already full: item 0 gets 0 and does not count on c0.
        let (r, left) = solve(&[4.0, 0.0], &[&[0, 1], &[0], &[]]);
        close(&r, &[0.0, 4.0, 0.0]);
        close(&left, &[0.0, 0.0]);
    }

    #[test]
    fn stale_keys_are_refreshed_not_trusted() {
        // c0 (cap 3, items 0..3) has share 1; c1 (cap 1.5, items 0, 1) has share
        // 0.75 and saturates first: x0 = x1 = 0.75. c0 then has 1.5 for item 2
        // alone: share 1.5, not the stale 1.
        let (r, _) = solve(&[3.0, 1.5], &[&[0, 1], &[0, 1], &[0]]);
        close(&r, &[0.75, 0.75, 1.5]);
    }

    /// Random systems: feasible, and every item has a saturated constraint on
    /// which no item gets more (the max-min condition).
    #[test]
    fn random_systems_are_feasible_and_max_min_fair() {
        let mut g = coflowkit_model::Pcg32::new(7, 3);
        for case in 0..300 {
            let m = 1 + g.below(8) as usize;
            let caps: Vec<f64> = (0..m).map(|_| g.below(20) as f64 / 2.0).collect();
            let n = 1 + g.below(20) as usize;
            let items: Vec<Vec<u32>> = (0..n)
                .map(|_| {
                    let mut v: Vec<u32> = (0..1 + g.below(3)).map(|_| g.below(m as u32)).collect();
                    v.sort_unstable();
                    v.dedup();
                    v
                })
                .collect();
            let refs: Vec<&[u32]> = items.iter().map(|v| v.as_slice()).collect();
            let (r, _) = solve(&caps, &refs);
            let mut load = vec![0.0; m];
            for (i, it) in items.iter().enumerate() {
                for &c in it {
                    load[c as usize] += r[i];
                }
            }
            for c in 0..m {
                assert!(
                    load[c] <= caps[c] + 1e-9,
                    "case {case}: constraint {c} over"
                );
            }
            for (i, it) in items.iter().enumerate() {
                let ok = it.iter().any(|&c| {
                    let c = c as usize;
                    load[c] >= caps[c] - 1e-9
                        && items
                            .iter()
                            .enumerate()
                            .filter(|(_, jt)| jt.contains(&(c as u32)))
                            .all(|(j, _)| r[j] <= r[i] + 1e-9)
                });
                assert!(
                    ok,
                    "case {case}: item {i} has no bottleneck: {r:?} {caps:?} {items:?}"
                );
            }
        }
    }
}
