//! [`RateOrder`]: the paths of a kept max-min solution by rate, for
//! [`crate::TailMaxMin`], kept lazily so that a solve that moves `k` paths
//! costs `O(k)` (amortized), and one that moves most of them one merge.
//!
//! Entries live in a vector sorted by rate (ties in the order they joined, the
//! earlier merges' first) and in an unsorted list
//! of newcomers. A path that leaves is not looked for: its generation moves
//! on, which makes its entries stale. The two are merged (stale entries
//! dropped) when a query needs the order, or once newcomers and stale
//! entries pass an eighth of the paths, so each change is paid for a constant
//! number of times. A plain list of the paths beside it serves the walks
//! that need no order.

use coflowkit_model::PathId;

/// An entry: the rate's key, the path, the path's generation when it joined.
type Entry = (u64, PathId, u32);

/// The key of a rate (at least 0) in the order: its bits, which sort as the
/// rate does (`-0.0` counts as `0.0`).
fn rate_key(r: f64) -> u64 {
    debug_assert!(r >= 0.0, "rate {r}");
    (r + 0.0).to_bits()
}

/// Merge once newcomers and stale entries pass `1/MERGE_EVERY` of the paths.
const MERGE_EVERY: usize = 8;

/// The paths of a solution by rate (see the module docs).
#[derive(Default)]
pub(crate) struct RateOrder {
    sorted: Vec<Entry>,
    extra: Vec<Entry>,
    stale: usize,
    /// Per path its generation, and its position in `paths` (`u32::MAX`: out).
    gen: Vec<u32>,
    pos: Vec<u32>,
    paths: Vec<PathId>,
    buf: Vec<Entry>,
}

impl RateOrder {
    /// Sizes the per-path tables for `np` paths.
    pub(crate) fn grow(&mut self, np: usize) {
        if self.pos.len() < np {
            self.pos.resize(np, u32::MAX);
            self.gen.resize(np, 0);
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.paths.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// The paths, in no particular order.
    pub(crate) fn paths(&self) -> &[PathId] {
        &self.paths
    }

    /// Puts path `p` (not in) at rate `r`.
    pub(crate) fn insert(&mut self, p: PathId, r: f64) {
        let pi = p as usize;
        debug_assert_eq!(self.pos[pi], u32::MAX, "path {p} is in twice");
        self.pos[pi] = self.paths.len() as u32;
        self.paths.push(p);
        self.extra.push((rate_key(r), p, self.gen[pi]));
    }

    /// Takes path `p` out; false when it was not in.
    pub(crate) fn remove(&mut self, p: PathId) -> bool {
        let pi = p as usize;
        let at = self.pos[pi];
        if at == u32::MAX {
            return false;
        }
        self.paths.swap_remove(at as usize);
        if let Some(&q) = self.paths.get(at as usize) {
            self.pos[q as usize] = at;
        }
        self.pos[pi] = u32::MAX;
        self.gen[pi] = self.gen[pi].wrapping_add(1);
        self.stale += 1;
        true
    }

    /// Empties it.
    pub(crate) fn clear(&mut self) {
        for &p in &self.paths {
            self.pos[p as usize] = u32::MAX;
        }
        self.paths.clear();
        self.sorted.clear();
        self.extra.clear();
        self.stale = 0;
    }

    /// Merges when newcomers and stale entries have piled up (call after a
    /// batch of changes).
    pub(crate) fn settle(&mut self) {
        if MERGE_EVERY * (self.extra.len() + self.stale) > self.paths.len() {
            self.merge();
        }
    }

    /// The paths with a rate of at least `level`, by rate.
    pub(crate) fn at_least(&mut self, level: f64) -> impl Iterator<Item = PathId> + '_ {
        self.merge();
        let k = rate_key(level);
        let at = self.sorted.partition_point(|e| e.0 < k);
        self.sorted[at..].iter().map(|e| e.1)
    }

    fn live(&self, e: &Entry) -> bool {
        self.pos[e.1 as usize] != u32::MAX && self.gen[e.1 as usize] == e.2
    }

    /// One sorted vector of the live entries.
    fn merge(&mut self) {
        if self.extra.is_empty() && self.stale == 0 {
            return;
        }
        let mut extra = std::mem::take(&mut self.extra);
        extra.retain(|e| self.live(e));
        // By rate only, stably: each solve's freeze order is by rate, with
        // ties (the paths one link bounds) in no order of path, so it is one
        // run here, and ties keep the order they froze in.
        extra.sort_by_key(|e| e.0);
        let mut out = std::mem::take(&mut self.buf);
        out.clear();
        out.reserve(self.paths.len());
        let mut j = 0;
        for &e in &self.sorted {
            if !self.live(&e) {
                continue;
            }
            while j < extra.len() && extra[j].0 < e.0 {
                out.push(extra[j]);
                j += 1;
            }
            out.push(e);
        }
        out.extend_from_slice(&extra[j..]);
        debug_assert_eq!(out.len(), self.paths.len());
        self.buf = std::mem::replace(&mut self.sorted, out);
        extra.clear();
        self.extra = extra;
        self.stale = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coflowkit_model::Pcg32;

    /// Random inserts, removals, re-inserts at new rates and clears against a
    /// plain list: the same paths at every step, and from any level the
    /// paths at or above it, by rate.
    #[test]
    fn equals_a_sorted_list_over_random_changes() {
        let mut rng = Pcg32::new(5, 3);
        let mut o = RateOrder::default();
        o.grow(200);
        let mut want: Vec<(f64, PathId)> = Vec::new();
        for step in 0..3000 {
            match rng.below(10) {
                0..=4 => {
                    let p = rng.below(200);
                    if o.pos[p as usize] == u32::MAX {
                        let r = rng.below(20) as f64 / 4.0;
                        o.insert(p, r);
                        want.push((r, p));
                    }
                }
                5..=8 => {
                    let p = rng.below(200);
                    let was = want.iter().position(|e| e.1 == p);
                    assert_eq!(o.remove(p), was.is_some(), "step {step}");
                    if let Some(i) = was {
                        want.remove(i);
                    }
                }
                _ => {
                    if rng.below(50) == 0 {
                        o.clear();
                        want.clear();
                    }
                }
            }
            o.settle();
            assert_eq!(o.len(), want.len());
            if step % 7 == 0 {
                let level = rng.below(20) as f64 / 4.0;
                let got: Vec<PathId> = o.at_least(level).collect();
                let rate = |p: PathId| want.iter().find(|e| e.1 == p).unwrap().0;
                assert!(
                    got.windows(2).all(|w| rate(w[0]) <= rate(w[1])),
                    "step {step}"
                );
                let mut got = got;
                got.sort_by(|&a, &b| rate(a).total_cmp(&rate(b)).then(a.cmp(&b)));
                let mut w: Vec<(f64, PathId)> =
                    want.iter().copied().filter(|e| e.0 >= level).collect();
                w.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                let w: Vec<PathId> = w.into_iter().map(|e| e.1).collect();
                assert_eq!(got, w, "step {step}");
            }
        }
    }
}
