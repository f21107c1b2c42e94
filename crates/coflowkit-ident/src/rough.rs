//! Incremental Rough-DBSCAN (CODA Algorithm 1, after Viswanath & Babu's
//! Rough-DBSCAN).
//!
//! A *leader* stands for the flows within range τ of it (its *followers*; a leader
//! follows itself). A new flow follows the nearest leader of its categorical group
//! that is closer than τ, or becomes a leader. A flow that leaves is removed from
//! its leader's followers; a leader is deleted when it has no follower left (a
//! leader whose own flow left keeps standing for its remaining followers, at its
//! original position). Clustering runs DBSCAN with radius ε and min-points 1 over
//! the leaders and gives every follower its leader's cluster.
//!
//! Leaders only gather flows of the same categorical group (same community and
//! aggregation keys, for the attributes with a positive weight): when τ² is below
//! the smallest categorical weight, as by default, that is what "within τ" means
//! anyway.
//!
//! **Stable labels.** A scheduler keeps state per identified coflow, so labels must
//! survive from round to round. Every leader carries a label. After clustering,
//! the clusters are visited in order of their oldest leader; each takes the label
//! of its oldest leader whose label no earlier cluster took, or a fresh label. So a
//! growing coflow keeps its label, two clusters that merge keep the older one's, and
//! of two parts of a split cluster the one with the older leader keeps it.

use crate::dbscan::{chains, dbscan};
use crate::metric::{Metric, Records};
use crate::NONE;
use std::collections::{BTreeSet, HashMap, HashSet};

/// A total-order key for a finite time.
fn tkey(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | (1 << 63)
    }
}

#[derive(Debug, Clone)]
struct Leader {
    /// The flow whose attributes are the leader's position.
    rep: u32,
    followers: Vec<u32>,
    seq: u64,
    label: u32,
    group: (u64, u64),
    time: u64,
    /// Position in `Rough::alive`.
    pos: u32,
}

/// The leader-follower structure of incremental Rough-DBSCAN over the flows of a
/// [`Records`] table (flows are indices into it; the table may grow).
#[derive(Debug, Clone)]
pub struct Rough {
    metric: Metric,
    eps: f64,
    tau: f64,
    leader_of: Vec<u32>,
    slot: Vec<u32>,
    leaders: Vec<Leader>,
    free: Vec<u32>,
    alive: Vec<u32>,
    by_group: HashMap<(u64, u64), BTreeSet<(u64, u32)>>,
    by_time: BTreeSet<(u64, u32)>,
    seq: u64,
    next_label: u32,
    flows: usize,
    // Scratch.
    changed: Vec<u32>,
    claimed: HashSet<u32>,
}

impl Rough {
    /// An empty structure; fresh labels start at `first_fresh`.
    pub fn new(metric: Metric, eps: f64, tau: f64, first_fresh: u32) -> Result<Rough, String> {
        if !(eps.is_finite() && eps > 0.0) {
            return Err(format!("eps={eps} is not a number > 0"));
        }
        if !(tau.is_finite() && tau >= 0.0) {
            return Err(format!("tau={tau} is not a number >= 0"));
        }
        Ok(Rough {
            metric,
            eps,
            tau,
            leader_of: Vec::new(),
            slot: Vec::new(),
            leaders: Vec::new(),
            free: Vec::new(),
            alive: Vec::new(),
            by_group: HashMap::new(),
            by_time: BTreeSet::new(),
            seq: 0,
            next_label: first_fresh,
            flows: 0,
            changed: Vec::new(),
            claimed: HashSet::new(),
        })
    }

    pub fn metric(&self) -> &Metric {
        &self.metric
    }

    /// A label no cluster has had.
    pub fn fresh(&mut self) -> u32 {
        let l = self.next_label;
        self.next_label += 1;
        l
    }

    /// Number of flows in the structure.
    pub fn len(&self) -> usize {
        self.flows
    }

    pub fn is_empty(&self) -> bool {
        self.flows == 0
    }

    /// Number of leaders.
    pub fn leaders(&self) -> usize {
        self.alive.len()
    }

    pub fn contains(&self, f: u32) -> bool {
        self.leader_of.get(f as usize).is_some_and(|&l| l != NONE)
    }

    /// The label of flow `f` as of the last [`Rough::cluster`] (or the label its
    /// leader was created with), [`NONE`] when `f` is not in the structure.
    pub fn label(&self, f: u32) -> u32 {
        match self.leader_of.get(f as usize) {
            Some(&l) if l != NONE => self.leaders[l as usize].label,
            _ => NONE,
        }
    }

    /// Adds flow `f` (lines 2–10 of Algorithm 1). A new leader is created with
    /// label `hint` (or [`NONE`]). No-op when `f` is already in.
    pub fn insert(&mut self, r: &Records, f: u32, hint: u32) {
        let fu = f as usize;
        if self.leader_of.len() <= fu {
            self.leader_of.resize(fu + 1, NONE);
            self.slot.resize(fu + 1, 0);
        }
        if self.leader_of[fu] != NONE {
            return;
        }
        self.flows += 1;
        let group = self.metric.group(r, fu);
        let t = r.time[fu];
        let w = self.metric.time_window(self.tau);
        let t2 = self.tau * self.tau;
        let mut best = (f64::INFINITY, u64::MAX, NONE);
        if let Some(set) = self.by_group.get(&group) {
            let lo = if w.is_finite() { tkey(t - w) } else { 0 };
            let hi = if w.is_finite() { tkey(t + w) } else { u64::MAX };
            for &(_, l) in set.range((lo, 0)..=(hi, u32::MAX)) {
                let ld = &self.leaders[l as usize];
                let d2 = self.metric.d2(r, fu, ld.rep as usize);
                if d2 < t2 && (d2, ld.seq) < (best.0, best.1) {
                    best = (d2, ld.seq, l);
                }
            }
        }
        let l = if best.2 != NONE {
            best.2
        } else {
            let leader = Leader {
                rep: f,
                followers: Vec::new(),
                seq: self.seq,
                label: hint,
                group,
                time: tkey(t),
                pos: self.alive.len() as u32,
            };
            self.seq += 1;
            let id = match self.free.pop() {
                Some(id) => {
                    self.leaders[id as usize] = leader;
                    id
                }
                None => {
                    self.leaders.push(leader);
                    self.leaders.len() as u32 - 1
                }
            };
            self.alive.push(id);
            self.by_group
                .entry(group)
                .or_default()
                .insert((tkey(t), id));
            self.by_time.insert((tkey(t), id));
            id
        };
        let ld = &mut self.leaders[l as usize];
        self.slot[fu] = ld.followers.len() as u32;
        ld.followers.push(f);
        self.leader_of[fu] = l;
    }

    /// Removes flow `f` (lines 11–18); a leader left with no follower is deleted.
    /// No-op when `f` is not in.
    pub fn remove(&mut self, f: u32) {
        let fu = f as usize;
        let l = match self.leader_of.get(fu) {
            Some(&l) if l != NONE => l,
            _ => return,
        };
        self.flows -= 1;
        self.leader_of[fu] = NONE;
        let s = self.slot[fu] as usize;
        let ld = &mut self.leaders[l as usize];
        ld.followers.swap_remove(s);
        if let Some(&moved) = ld.followers.get(s) {
            self.slot[moved as usize] = s as u32;
        }
        if ld.followers.is_empty() {
            let (group, time, pos) = (ld.group, ld.time, ld.pos as usize);
            let set = self.by_group.get_mut(&group).expect("leader's group");
            set.remove(&(time, l));
            if set.is_empty() {
                self.by_group.remove(&group);
            }
            self.by_time.remove(&(time, l));
            self.alive.swap_remove(pos);
            if let Some(&moved) = self.alive.get(pos) {
                self.leaders[moved as usize].pos = pos as u32;
            }
            self.free.push(l);
        }
    }

    /// DBSCAN(leaders, ε, 1) and the stable labels (lines 19–21). Returns the flows
    /// whose label changed.
    pub fn cluster(&mut self, r: &Records) -> &[u32] {
        self.changed.clear();
        let k = self.alive.len();
        if k == 0 {
            return &self.changed;
        }
        let reps: Vec<u32> = self
            .alive
            .iter()
            .map(|&l| self.leaders[l as usize].rep)
            .collect();
        // Raw component ids (positions in `alive`): no need to renumber.
        let comp = if self.metric.time_only() {
            chains(r, &self.metric, self.eps, &reps)
        } else {
            dbscan(r, &self.metric, self.eps, 1, &reps)
        };
        let mut oldest = vec![u64::MAX; k];
        for (p, &c) in comp.iter().enumerate() {
            let s = self.leaders[self.alive[p] as usize].seq;
            oldest[c as usize] = oldest[c as usize].min(s);
        }
        let mut ord: Vec<(u64, u64, u32)> = (0..k)
            .map(|p| {
                let l = self.alive[p];
                (oldest[comp[p] as usize], self.leaders[l as usize].seq, l)
            })
            .collect();
        ord.sort_unstable();
        self.claimed.clear();
        let mut a = 0;
        while a < k {
            let mut b = a;
            while b < k && ord[b].0 == ord[a].0 {
                b += 1;
            }
            let mut label = NONE;
            for &(_, _, l) in &ord[a..b] {
                let x = self.leaders[l as usize].label;
                if x != NONE && !self.claimed.contains(&x) {
                    label = x;
                    break;
                }
            }
            if label == NONE {
                label = self.fresh();
            }
            self.claimed.insert(label);
            for &(_, _, l) in &ord[a..b] {
                let ld = &mut self.leaders[l as usize];
                if ld.label != label {
                    ld.label = label;
                    self.changed.extend_from_slice(&ld.followers);
                }
            }
            a = b;
        }
        &self.changed
    }

    /// Late binding (CODA §4.2): pushes to `out`, once each, the labels other than
    /// `own` of the clusters with a flow within distance `d` of flow `f` (`f` need
    /// not be in the structure). A leader's followers are within τ of it, so only
    /// leaders within `d + τ` are looked at, and their followers only when the
    /// leader itself is not within `d`.
    pub fn near(&self, r: &Records, f: u32, d: f64, own: u32, out: &mut Vec<u32>) {
        let fu = f as usize;
        let reach = d + self.tau;
        let w = self.metric.time_window(reach);
        let t = r.time[fu];
        let lo = if w.is_finite() { tkey(t - w) } else { 0 };
        let hi = if w.is_finite() { tkey(t + w) } else { u64::MAX };
        let d2 = d * d;
        let start = out.len();
        for &(_, l) in self.by_time.range((lo, 0)..=(hi, u32::MAX)) {
            let ld = &self.leaders[l as usize];
            if ld.label == own || ld.label == NONE || out[start..].contains(&ld.label) {
                continue;
            }
            let dl = self.metric.d2(r, fu, ld.rep as usize).sqrt();
            if dl > reach {
                continue;
            }
            let rep_in = self.leader_of.get(ld.rep as usize) == Some(&l);
            let hit = (rep_in && dl <= d)
                || ld
                    .followers
                    .iter()
                    .any(|&g| g != f && self.metric.d2(r, fu, g as usize) <= d2);
            if hit {
                out.push(ld.label);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dbscan::canonical;
    use crate::metric::agg_key;
    use coflowkit_model::Pcg32;

    fn recs(time: &[f64]) -> Records {
        Records {
            time: time.to_vec(),
            extra: vec![],
            com: vec![0; time.len()],
            agg: vec![0; time.len()],
        }
    }

    fn labels(r: &Rough, n: usize) -> Vec<u32> {
        (0..n as u32).map(|f| r.label(f)).collect()
    }

    #[test]
    fn leaders_followers_and_clusters_by_hand() {
        // a_t = 1, τ = 0.1, ε = 0.3.
        let r = recs(&[0.0, 0.05, 0.12, 0.4, 1.0]);
        let m = Metric::new(1.0, vec![], 0.0, 0.0).unwrap();
        let mut x = Rough::new(m, 0.3, 0.1, 100).unwrap();
        for f in 0..5 {
            x.insert(&r, f, NONE);
        }
        // Leaders: 0 (followers 0, 1), 2 (0.12 is 0.12 from 0), 3, 4.
        assert_eq!(x.leaders(), 4);
        x.cluster(&r);
        // Leader positions 0, 0.12, 0.4, 1.0: 0–0.12–0.4 chain (gaps 0.12, 0.28 ≤ 0.3).
        assert_eq!(labels(&x, 5), vec![100, 100, 100, 100, 101]);
        // Remove flow 2: leader 2 disappears, 0.4 is 0.4 from 0: split. The part
        // with the older leader (0) keeps label 100.
        x.remove(2);
        assert_eq!(x.leaders(), 3);
        let changed = x.cluster(&r).to_vec();
        assert_eq!(changed, vec![3]);
        assert_eq!(labels(&x, 5), vec![100, 100, NONE, 102, 101]);
        // Removing leader 0's own flow keeps the leader for flow 1.
        x.remove(0);
        assert_eq!(x.leaders(), 3);
        assert!(x.cluster(&r).is_empty());
        assert_eq!(x.label(1), 100);
        x.remove(1);
        assert_eq!(x.leaders(), 2);
        assert_eq!(x.len(), 2);
    }

    #[test]
    fn merged_clusters_keep_the_older_label_and_hints_seed_labels() {
        let r = recs(&[0.0, 1.0, 0.5]);
        let m = Metric::new(1.0, vec![], 0.0, 0.0).unwrap();
        let mut x = Rough::new(m, 0.6, 0.0, 10).unwrap();
        x.insert(&r, 0, 7);
        x.insert(&r, 1, 8);
        x.cluster(&r);
        assert_eq!(labels(&x, 2), vec![7, 8]);
        x.insert(&r, 2, 9);
        let mut ch = x.cluster(&r).to_vec();
        ch.sort();
        assert_eq!(ch, vec![1, 2]);
        assert_eq!(labels(&x, 3), vec![7, 7, 7]);
    }

    /// With τ = 0 every flow leads itself and Rough-DBSCAN is exact DBSCAN with
    /// min-points 1; the incremental structure after any sequence of inserts and
    /// removals clusters like a structure rebuilt from scratch.
    #[test]
    fn incremental_equals_from_scratch() {
        let mut g = Pcg32::new(3, 0);
        for case in 0..30 {
            let n = 200;
            let r = Records {
                time: (0..n).map(|_| g.next_f64() * 10.0).collect(),
                extra: vec![],
                com: (0..n).map(|_| g.below(2) as u64).collect(),
                agg: (0..n).map(|_| agg_key(g.below(4), 1)).collect(),
            };
            let m = Metric::new(2.0, vec![], 1.0, 0.2).unwrap();
            let tau = if case % 2 == 0 { 0.0 } else { 0.05 };
            let mut inc = Rough::new(m.clone(), 0.3, tau, 0).unwrap();
            let mut present = vec![false; n];
            for _round in 0..6 {
                for f in 0..n as u32 {
                    let u = g.next_f64();
                    if !present[f as usize] && u < 0.3 {
                        inc.insert(&r, f, NONE);
                        present[f as usize] = true;
                    } else if present[f as usize] && u < 0.1 {
                        inc.remove(f);
                        present[f as usize] = false;
                    }
                }
                inc.cluster(&r);
                let idx: Vec<u32> = (0..n as u32).filter(|&f| present[f as usize]).collect();
                let got = canonical(&idx.iter().map(|&f| inc.label(f)).collect::<Vec<_>>());
                if tau == 0.0 {
                    assert_eq!(got, dbscan(&r, &m, 0.3, 1, &idx), "case {case}");
                } else {
                    // Followers are within τ of their leader, so flows within
                    // ε − 2τ share a cluster and flows of one cluster are linked
                    // by steps of at most ε + 2τ: exact DBSCAN at ε − 2τ refines
                    // the rough clusters, which refine exact DBSCAN at ε + 2τ.
                    let fine = dbscan(&r, &m, 0.3 - 2.0 * tau, 1, &idx);
                    let coarse = dbscan(&r, &m, 0.3 + 2.0 * tau, 1, &idx);
                    assert!(refines(&fine, &got), "case {case}");
                    assert!(refines(&got, &coarse), "case {case}");
                }
            }
        }
    }

    /// Every cluster of `a` lies inside one cluster of `b`.
    fn refines(a: &[u32], b: &[u32]) -> bool {
        let mut to = std::collections::HashMap::new();
        a.iter()
            .zip(b)
            .all(|(x, y)| *to.entry(*x).or_insert(*y) == *y)
    }

    #[test]
    fn near_finds_other_clusters_within_d_only() {
        // Two clusters at 0..0.2 and 1.0..1.2 (a_t = 1, ε = 0.15, τ = 0.05).
        let r = recs(&[0.0, 0.1, 0.2, 1.0, 1.1, 1.2, 0.6]);
        let m = Metric::new(1.0, vec![], 0.0, 0.0).unwrap();
        let mut x = Rough::new(m, 0.15, 0.05, 0).unwrap();
        for f in 0..6 {
            x.insert(&r, f, NONE);
        }
        x.cluster(&r);
        let (a, b) = (x.label(0), x.label(3));
        assert_ne!(a, b);
        let mut out = Vec::new();
        // Flow 6 at 0.6 (not in the structure): 0.4 from both clusters.
        x.near(&r, 6, 0.39, NONE, &mut out);
        assert!(out.is_empty());
        x.near(&r, 6, 0.4, NONE, &mut out);
        out.sort();
        assert_eq!(out, vec![a.min(b), a.max(b)]);
        out.clear();
        // Flow 2 (cluster a) is 0.8 from cluster b.
        x.near(&r, 2, 0.79, a, &mut out);
        assert!(out.is_empty());
        x.near(&r, 2, 0.8, a, &mut out);
        assert_eq!(out, vec![b]);
    }
}
