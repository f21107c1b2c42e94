//! Shared building blocks of the policies.

use crate::Common;
use coflowkit_alloc::{avail, MaxMin};
use coflowkit_model::PathId;

/// Priority max-min with one group per coflow: coflows in the given order, each gets
/// max-min fair rates among its active flows on what the earlier ones left.
#[derive(Default)]
pub(crate) struct CoflowPriority {
    mm: MaxMin,
    pub residual: Vec<f64>,
    cuts: Cuts,
    paths: Vec<PathId>,
    tmp: Vec<f64>,
}

impl CoflowPriority {
    /// `order` lists indices into `c.groups`, highest priority first. Writes
    /// `rates[i]` for every active flow of the listed coflows that can get a positive
    /// rate; `rates` must be zero on entry (as [`crate::Decision::reset`] leaves it),
    /// since coflows with no open path are skipped without being written.
    /// `self.residual` holds what is left afterwards.
    pub fn run(&mut self, c: &Common, order: &[usize], rates: &mut [f64]) {
        self.residual.clear();
        self.residual.extend_from_slice(&c.fabric.capacities);
        for &g in order {
            if self.cuts.blocked(c, g, &self.residual) {
                continue;
            }
            let range = c.groups[g].range();
            self.paths.clear();
            self.paths
                .extend(c.active[range.clone()].iter().map(|&f| c.flow_path[f as usize]));
            self.tmp.clear();
            self.tmp.resize(self.paths.len(), 0.0);
            self.mm
                .solve(c.fabric, &mut self.residual, &self.paths, &mut self.tmp);
            rates[range].copy_from_slice(&self.tmp);
        }
    }
}

/// Per-coflow cut of the paths of its active flows: the distinct first links and the
/// distinct last links. Every flow crosses one of each, so when all the first links,
/// or all the last links, of a coflow are saturated, none of its flows can get a
/// positive rate; [`Cuts::blocked`] tells so in `O(first + last links)` instead of
/// `O(flows)` (on the big switch: senders + receivers instead of their product).
/// A cut stays valid while the coflow's active flows only finish; it is rebuilt when
/// `coflow_started` shows new flows.
#[derive(Default)]
pub(crate) struct Cuts {
    /// Per coflow: `coflow_started` when its cut was built (`u32::MAX`: never).
    built: Vec<u32>,
    first: Vec<Vec<u32>>,
    last: Vec<Vec<u32>>,
    stamp: Vec<u32>,
    epoch: u32,
}

impl Cuts {
    fn rebuild(&mut self, c: &Common, g: usize) {
        let k = c.groups[g].coflow as usize;
        let nl = c.fabric.num_links();
        if self.stamp.len() < nl {
            self.stamp.resize(nl, 0);
        }
        let mut first = std::mem::take(&mut self.first[k]);
        let mut last = std::mem::take(&mut self.last[k]);
        first.clear();
        last.clear();
        for (list, pick_last) in [(&mut first, false), (&mut last, true)] {
            self.epoch = self.epoch.wrapping_add(1);
            if self.epoch == 0 {
                self.stamp.iter_mut().for_each(|s| *s = 0);
                self.epoch = 1;
            }
            for &f in &c.active[c.groups[g].range()] {
                let links = c.fabric.path(c.flow_path[f as usize]);
                let l = if pick_last { links.last() } else { links.first() };
                if let Some(&l) = l {
                    if self.stamp[l as usize] != self.epoch {
                        self.stamp[l as usize] = self.epoch;
                        list.push(l);
                    }
                }
            }
        }
        self.first[k] = first;
        self.last[k] = last;
        self.built[k] = c.coflow_started[k];
    }

    /// True when no active flow of group `g` can get a positive rate on `residual`.
    pub fn blocked(&mut self, c: &Common, g: usize, residual: &[f64]) -> bool {
        let k = c.groups[g].coflow as usize;
        if self.built.len() < c.coflow_started.len() {
            self.built.resize(c.coflow_started.len(), u32::MAX);
            self.first.resize(c.coflow_started.len(), Vec::new());
            self.last.resize(c.coflow_started.len(), Vec::new());
        }
        if self.built[k] != c.coflow_started[k] {
            self.rebuild(c, g);
        }
        let caps = &c.fabric.capacities;
        let closed = |l: &u32| avail(residual, caps, *l as usize) <= 0.0;
        self.first[k].iter().all(closed) || self.last[k].iter().all(closed)
    }
}

/// Sorts group indices by `(key, coflow index)`; the coflow index encodes
/// (arrival, id), the tie-break of every policy.
pub(crate) fn order_by_key(c: &Common, key: impl Fn(u32) -> f64, out: &mut Vec<usize>) {
    out.clear();
    out.extend(0..c.groups.len());
    out.sort_by(|&a, &b| {
        let (ca, cb) = (c.groups[a].coflow, c.groups[b].coflow);
        key(ca).total_cmp(&key(cb)).then(ca.cmp(&cb))
    });
}

/// Bytes tolerance when comparing bytes sent with a threshold: the engine's finish
/// tolerance, `max(1e-6, 1e-9 · threshold)`.
#[inline]
pub(crate) fn crossed(sent: f64, threshold: f64) -> bool {
    sent >= threshold - coflowkit_model::finish_threshold(threshold)
}

#[cfg(test)]
pub(crate) mod testkit {
    //! A tiny hand-built view for policy unit tests.
    use crate::{ActiveCoflow, ClairvoyantView, Common, NonClairvoyantView};
    use coflowkit_model::{Fabric, PathId};

    /// Flows given as (coflow, src, dst, size, sent); coflows numbered 0.. in order.
    pub struct Case {
        pub fabric: Fabric,
        pub active: Vec<u32>,
        pub groups: Vec<ActiveCoflow>,
        pub flow_coflow: Vec<u32>,
        pub flow_index: Vec<u32>,
        pub flow_path: Vec<PathId>,
        pub sent: Vec<f64>,
        pub size: Vec<f64>,
        pub remaining: Vec<f64>,
        pub coflow_id: Vec<u64>,
        pub arrival: Vec<f64>,
        pub weight: Vec<f64>,
        pub width: Vec<u32>,
        pub coflow_sent: Vec<f64>,
        pub first: Vec<u32>,
        pub length: Vec<f64>,
        pub csize: Vec<f64>,
    }

    impl Case {
        pub fn new(ports: u32, cap: f64, flows: &[(u32, u32, u32, f64, f64)]) -> Case {
            let mut fabric = Fabric::big_switch(ports, cap).unwrap();
            let n_cf = flows.iter().map(|f| f.0).max().unwrap() as usize + 1;
            let mut c = Case {
                fabric: fabric.clone(),
                active: vec![],
                groups: vec![],
                flow_coflow: vec![],
                flow_index: vec![],
                flow_path: vec![],
                sent: vec![],
                size: vec![],
                remaining: vec![],
                coflow_id: (1..=n_cf as u64).collect(),
                arrival: vec![0.0; n_cf],
                weight: vec![1.0; n_cf],
                width: vec![0; n_cf],
                coflow_sent: vec![0.0; n_cf],
                first: vec![0; n_cf],
                length: vec![0.0; n_cf],
                csize: vec![0.0; n_cf],
            };
            for (i, &(k, s, d, size, sent)) in flows.iter().enumerate() {
                let k = k as usize;
                if c.width[k] == 0 {
                    c.first[k] = i as u32;
                }
                c.flow_coflow.push(k as u32);
                c.flow_index.push(c.width[k]);
                c.width[k] += 1;
                c.flow_path.push(fabric.route(s, d, 0).unwrap());
                c.sent.push(sent);
                c.size.push(size);
                c.remaining.push(size - sent);
                c.coflow_sent[k] += sent;
                c.length[k] = c.length[k].max(size);
                c.csize[k] += size;
                c.active.push(i as u32);
                match c.groups.last_mut() {
                    Some(g) if g.coflow == k as u32 => g.end += 1,
                    _ => c.groups.push(ActiveCoflow {
                        coflow: k as u32,
                        start: i as u32,
                        end: i as u32 + 1,
                    }),
                }
            }
            c.fabric = fabric;
            c
        }

        pub fn common(&self) -> Common<'_> {
            Common {
                now_s: 0.0,
                fabric: &self.fabric,
                active: &self.active,
                groups: &self.groups,
                flow_coflow: &self.flow_coflow,
                flow_index: &self.flow_index,
                flow_path: &self.flow_path,
                sent: &self.sent,
                coflow_id: &self.coflow_id,
                coflow_arrival_s: &self.arrival,
                coflow_weight: &self.weight,
                coflow_width: &self.width,
                coflow_sent: &self.coflow_sent,
                coflow_started: &self.width,
            }
        }

        pub fn clairvoyant(&self) -> ClairvoyantView<'_> {
            ClairvoyantView {
                common: self.common(),
                size: &self.size,
                remaining: &self.remaining,
                coflow_first_flow: &self.first,
                coflow_length: &self.length,
                coflow_size: &self.csize,
            }
        }

        pub fn non_clairvoyant(&self) -> NonClairvoyantView<'_> {
            NonClairvoyantView {
                common: self.common(),
            }
        }
    }

    pub fn close(a: &[f64], b: &[f64]) {
        assert_eq!(a.len(), b.len(), "{a:?} vs {b:?}");
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() <= 1e-9 * y.abs().max(1.0), "{a:?} vs {b:?}");
        }
    }
}
