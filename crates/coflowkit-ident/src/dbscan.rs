//! Exact DBSCAN (Ester et al., KDD'96) under a [`Metric`].
//!
//! Two paths, with identical results:
//!
//! * **Chains** (min-points 1, time the only numeric attribute): with min-points 1
//!   every point is a core point and the clusters are the connected components of
//!   the graph "distance ≤ ε". A pair whose categorical attributes agree on a set
//!   of attributes pays the penalty of the others, and is linked when
//!   `a_t·Δt² + penalty ≤ ε²`. For each such *level*, sorting the points that
//!   share its key by time and linking neighbours in that order gives the same
//!   components as linking every pair of the level (in one dimension, two points
//!   within r are joined by a chain of consecutive points with gaps ≤ r, all of
//!   which share the key). So the components cost a few sorts: `O(n log n)`.
//! * **Windows** (any min-points, any attributes): points sorted by time; the
//!   neighbours of a point are searched among the points within the time window
//!   `ε/√a_t` and checked with the full distance. Border points join the first
//!   cluster that reaches them, in point order (as in the original algorithm).
//!
//! Noise points are returned as clusters of their own: to a scheduler, an
//! unidentified flow is a coflow of one flow.

use crate::metric::{Metric, Records};
use crate::unionfind::UnionFind;
use crate::NONE;

/// Renumbers cluster ids in order of first appearance (0, 1, ...).
pub fn canonical(raw: &[u32]) -> Vec<u32> {
    let mut map = std::collections::HashMap::new();
    raw.iter()
        .map(|&x| {
            let n = map.len() as u32;
            *map.entry(x).or_insert(n)
        })
        .collect()
}

/// DBSCAN with radius `eps` (a pair is within reach when its distance is at most
/// `eps`) and `min_pts` (a point is a core point when at least `min_pts` points,
/// itself included, are within reach) over the flows `idx` of `r`. Returns one
/// cluster number per entry of `idx`, numbered in order of first appearance.
pub fn dbscan(r: &Records, m: &Metric, eps: f64, min_pts: usize, idx: &[u32]) -> Vec<u32> {
    let raw = if min_pts <= 1 && m.time_only() {
        chains(r, m, eps, idx)
    } else {
        windows(r, m, eps, min_pts.max(1), idx)
    };
    canonical(&raw)
}

pub(crate) fn chains(r: &Records, m: &Metric, eps: f64, idx: &[u32]) -> Vec<u32> {
    let n = idx.len();
    let mut uf = UnionFind::new(n);
    let e2 = eps * eps;
    let mut keyed: Vec<(u64, u64, f64, u32)> = Vec::with_capacity(n);
    for (pen, use_com, use_agg) in m.levels() {
        if pen > e2 {
            continue;
        }
        keyed.clear();
        for (p, &f) in idx.iter().enumerate() {
            let f = f as usize;
            keyed.push((
                if use_com { r.com[f] } else { 0 },
                if use_agg { r.agg[f] } else { 0 },
                r.time[f],
                p as u32,
            ));
        }
        keyed.sort_unstable_by(|a, b| {
            (a.0, a.1)
                .cmp(&(b.0, b.1))
                .then(a.2.total_cmp(&b.2))
                .then(a.3.cmp(&b.3))
        });
        for w in keyed.windows(2) {
            let (a, b) = (&w[0], &w[1]);
            if a.0 == b.0 && a.1 == b.1 {
                let dt = b.2 - a.2;
                if m.time * dt * dt + pen <= e2 {
                    uf.union(a.3, b.3);
                }
            }
        }
    }
    (0..n as u32).map(|p| uf.find(p)).collect()
}

fn windows(r: &Records, m: &Metric, eps: f64, min_pts: usize, idx: &[u32]) -> Vec<u32> {
    let n = idx.len();
    let e2 = eps * eps;
    let w = m.time_window(eps);
    // Positions sorted by time; rank[p] is p's place in that order.
    let mut ord: Vec<u32> = (0..n as u32).collect();
    ord.sort_by(|&a, &b| {
        r.time[idx[a as usize] as usize]
            .total_cmp(&r.time[idx[b as usize] as usize])
            .then(a.cmp(&b))
    });
    let mut rank = vec![0u32; n];
    for (k, &p) in ord.iter().enumerate() {
        rank[p as usize] = k as u32;
    }
    let time = |p: u32| r.time[idx[p as usize] as usize];
    let near = |p: u32, q: u32| m.d2(r, idx[p as usize] as usize, idx[q as usize] as usize) <= e2;
    // Visits the neighbours of p (itself excluded) in time order.
    let neighbours = |p: u32, out: &mut Vec<u32>| {
        out.clear();
        let k = rank[p as usize] as usize;
        let t = time(p);
        let mut a = k;
        while a > 0 && t - time(ord[a - 1]) <= w {
            a -= 1;
        }
        let mut b = k + 1;
        while b < n && time(ord[b]) - t <= w {
            b += 1;
        }
        for &q in &ord[a..b] {
            if q != p && near(p, q) {
                out.push(q);
            }
        }
    };
    let mut buf = Vec::new();
    let mut core = vec![false; n];
    for p in 0..n as u32 {
        neighbours(p, &mut buf);
        core[p as usize] = buf.len() + 1 >= min_pts;
    }
    let mut label = vec![NONE; n];
    let mut next = 0u32;
    let mut stack = Vec::new();
    for p in 0..n as u32 {
        if label[p as usize] != NONE || !core[p as usize] {
            continue;
        }
        label[p as usize] = next;
        stack.push(p);
        while let Some(q) = stack.pop() {
            neighbours(q, &mut buf);
            for &x in &buf {
                if label[x as usize] == NONE {
                    label[x as usize] = next;
                    if core[x as usize] {
                        stack.push(x);
                    }
                }
            }
        }
        next += 1;
    }
    for l in label.iter_mut() {
        if *l == NONE {
            *l = next;
            next += 1;
        }
    }
    label
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::agg_key;
    use coflowkit_model::Pcg32;

    fn recs(time: &[f64], com: &[u64], agg: &[u64]) -> Records {
        Records {
            time: time.to_vec(),
            extra: vec![],
            com: com.to_vec(),
            agg: agg.to_vec(),
        }
    }

    fn all(n: usize) -> Vec<u32> {
        (0..n as u32).collect()
    }

    #[test]
    fn hand_built_points_in_time() {
        // Gaps: 0.1, 0.1, 1.0, 0.05, 2.0. eps = 0.2 with a_t = 1.
        let t = [0.0, 0.1, 0.2, 1.2, 1.25, 3.25];
        let r = recs(&t, &[0; 6], &[0; 6]);
        let m = Metric::new(1.0, vec![], 0.0, 0.0).unwrap();
        let want = vec![0, 0, 0, 1, 1, 2];
        assert_eq!(dbscan(&r, &m, 0.2, 1, &all(6)), want);
        assert_eq!(canonical(&windows(&r, &m, 0.2, 1, &all(6))), want);
        // Exactly at eps is within reach.
        assert_eq!(dbscan(&r, &m, 0.1, 1, &all(3)), vec![0, 0, 0]);
        // min_pts 3: 0..2 are a cluster (1 is core: 0,1,2 within 0.2; 0 and 2 are
        // core too: they reach each other at 0.2); 3 and 4 have 2 points each: noise.
        assert_eq!(dbscan(&r, &m, 0.2, 3, &all(6)), vec![0, 0, 0, 1, 2, 3]);
    }

    #[test]
    fn categorical_levels() {
        // Same time, three flows: 0 and 1 share the aggregation, 2 another one in
        // the same community, 3 another community. prt = 0.25, com = 4.
        let r = recs(
            &[0.0, 0.0, 0.3, 0.0],
            &[1, 1, 1, 2],
            &[agg_key(1, 9), agg_key(1, 9), agg_key(2, 9), agg_key(3, 9)],
        );
        let m = Metric::new(1.0, vec![], 4.0, 0.25).unwrap();
        // eps 0.6: 0.25 + 0.09 = 0.34 ≤ 0.36 → 2 joins; 3 is 4.25 away.
        assert_eq!(dbscan(&r, &m, 0.6, 1, &all(4)), vec![0, 0, 0, 1]);
        // eps 0.55: 0.3025 < 0.34 → 2 alone.
        assert_eq!(dbscan(&r, &m, 0.55, 1, &all(4)), vec![0, 0, 1, 2]);
        // eps 2.1: everything (flow 3 is 4 + 0.25 = 4.25 ≤ 4.41 from flows 0 and 1).
        assert_eq!(dbscan(&r, &m, 2.1, 1, &all(4)), vec![0, 0, 0, 0]);
    }

    /// The chain path and the window path agree on random points.
    #[test]
    fn chains_equal_windows_on_random_points() {
        let mut g = Pcg32::new(7, 0);
        for case in 0..40 {
            let n = 1 + (g.next_u32() as u64 % 300) as usize;
            let time: Vec<f64> = (0..n).map(|_| g.next_f64() * 20.0).collect();
            let com: Vec<u64> = (0..n).map(|_| g.next_u32() as u64 % 3).collect();
            let agg: Vec<u64> = (0..n).map(|_| g.next_u32() as u64 % 5).collect();
            let r = recs(&time, &com, &agg);
            let m = Metric::new(
                1.0 + g.next_f64() * 3.0,
                vec![],
                g.next_f64(),
                g.next_f64() * 0.3,
            )
            .unwrap();
            let eps = 0.05 + g.next_f64();
            let sub: Vec<u32> = (0..n as u32).filter(|_| g.below(4) != 0).collect();
            let a = dbscan(&r, &m, eps, 1, &sub);
            let b = canonical(&windows(&r, &m, eps, 1, &sub));
            assert_eq!(a, b, "case {case}");
        }
    }
}
