//! A tiny hand-built view for policy unit tests, on the drivers' own
//! [`ViewData`]: flows given as (coflow, src, dst, size, sent) on a big switch,
//! coflows numbered 0.. in order, every flow active at time 0 at rate 0.

use crate::decision::Decision;
use crate::view::{ActiveCoflow, ClairvoyantView, Common, NonClairvoyantView, ViewData, NO_PORT};
use coflowkit_model::Fabric;
use std::ops::{Deref, DerefMut};

#[derive(Clone)]
pub struct Case {
    pub fabric: Fabric,
    pub data: ViewData,
}

impl Deref for Case {
    type Target = ViewData;
    fn deref(&self) -> &ViewData {
        &self.data
    }
}

impl DerefMut for Case {
    fn deref_mut(&mut self) -> &mut ViewData {
        &mut self.data
    }
}

impl Case {
    pub fn new(ports: u32, cap: f64, flows: &[(u32, u32, u32, f64, f64)]) -> Case {
        Case::on(Fabric::big_switch(ports, cap).unwrap(), flows)
    }

    /// The same on any fabric: flow `i` is routed with ECMP hash `i`.
    pub fn on(mut fabric: Fabric, flows: &[(u32, u32, u32, f64, f64)]) -> Case {
        let n_cf = flows.iter().map(|f| f.0).max().unwrap() as usize + 1;
        let n = flows.len();
        let mut d = ViewData {
            coflow_id: (1..=n_cf as u64).collect(),
            arrival: vec![0.0; n_cf],
            weight: vec![1.0; n_cf],
            width: vec![0; n_cf],
            first_flow: vec![0; n_cf],
            length: vec![0.0; n_cf],
            csize: vec![0.0; n_cf],
            flow_stage: vec![0; n],
            flow_priority: vec![0; n],
            coflow_base: vec![0.0; n_cf],
            coflow_rate: vec![0.0; n_cf],
            coflow_since: vec![0.0; n_cf],
            rate: vec![0.0; n],
            since: vec![0.0; n],
            ..ViewData::default()
        };
        for (i, &(k, s, dst, size, sent)) in flows.iter().enumerate() {
            let k = k as usize;
            if d.width[k] == 0 {
                d.first_flow[k] = i as u32;
            }
            d.flow_coflow.push(k as u32);
            d.flow_index.push(d.width[k]);
            d.width[k] += 1;
            d.flow_path.push(fabric.route(s, dst, i as u64).unwrap());
            d.flow_src.push(s);
            d.flow_dst.push(dst);
            d.flow_src_port.push(NO_PORT);
            d.flow_dst_port.push(NO_PORT);
            d.base.push(sent);
            d.size.push(size);
            d.coflow_base[k] += sent;
            d.length[k] = d.length[k].max(size);
            d.csize[k] += size;
            d.active.push(i as u32);
            match d.groups.last_mut() {
                Some(g) if g.coflow == k as u32 => g.end += 1,
                _ => d.groups.push(ActiveCoflow {
                    coflow: k as u32,
                    start: i as u32,
                    end: i as u32 + 1,
                }),
            }
        }
        d.coflow_started = d.width.clone();
        let mut c = Case { fabric, data: d };
        c.count_paths();
        c
    }

    /// Recomputes the per-path counts from `active` (after a test edits it).
    pub fn count_paths(&mut self) {
        let d = &mut self.data;
        d.path_count = vec![0; self.fabric.num_paths()];
        d.active_paths.clear();
        for &f in &d.active {
            let p = d.flow_path[f as usize];
            if d.path_count[p as usize] == 0 {
                d.active_paths.push(p);
            }
            d.path_count[p as usize] += 1;
        }
        d.changed_paths = d.active_paths.clone();
    }

    /// Makes exactly `active` (ascending flow indices) the active flows, as a
    /// driver would between two calls: groups and per-path counts are rebuilt
    /// and `changed_paths` lists the paths whose count changed.
    pub fn set_active(&mut self, active: &[u32]) {
        let old = std::mem::take(&mut self.data.path_count);
        let d = &mut self.data;
        d.active = active.to_vec();
        d.groups.clear();
        for (i, &f) in active.iter().enumerate() {
            let k = d.flow_coflow[f as usize];
            match d.groups.last_mut() {
                Some(g) if g.coflow == k => g.end += 1,
                _ => d.groups.push(ActiveCoflow {
                    coflow: k,
                    start: i as u32,
                    end: i as u32 + 1,
                }),
            }
        }
        self.count_paths();
        let d = &mut self.data;
        d.changed_paths = (0..d.path_count.len() as u32)
            .filter(|&p| d.path_count[p as usize] != old.get(p as usize).copied().unwrap_or(0))
            .collect();
    }

    /// The per-flow rates a decision gives (0 for inactive flows): `rates`, or
    /// for a path-mode decision its path rates applied to the active flows on
    /// top of `path_rates_before` (the rates in force before the call).
    pub fn flow_rates(&self, d: &Decision, path_rates_before: &mut Vec<f64>) -> Vec<f64> {
        if !d.path_rates.is_empty() || d.rates.iter().all(|&r| r == 0.0) {
            path_rates_before.resize(self.fabric.num_paths(), 0.0);
            for &(p, r) in &d.path_rates {
                path_rates_before[p as usize] = r;
            }
            let mut out = vec![0.0; self.data.flow_path.len()];
            for &f in &self.data.active {
                out[f as usize] = path_rates_before[self.data.flow_path[f as usize] as usize];
            }
            out
        } else {
            d.rates.clone()
        }
    }

    /// Flow `f` has sent `bytes` (its coflow's count is left alone: see
    /// [`Case::add_coflow_sent`]).
    pub fn set_sent(&mut self, f: usize, bytes: f64) {
        self.data.base[f] = bytes;
    }

    /// Flow `f` has `bytes` left.
    pub fn set_remaining(&mut self, f: usize, bytes: f64) {
        self.data.base[f] = self.data.size[f] - bytes;
    }

    /// Coflow `k` has sent `bytes` more.
    pub fn add_coflow_sent(&mut self, k: usize, bytes: f64) {
        self.data.coflow_base[k] += bytes;
    }

    pub fn common(&self) -> Common<'_> {
        self.data.common(&self.fabric, 0.0)
    }

    pub fn clairvoyant(&self) -> ClairvoyantView<'_> {
        self.data.clairvoyant(&self.fabric, 0.0)
    }

    pub fn non_clairvoyant(&self) -> NonClairvoyantView<'_> {
        self.data.non_clairvoyant(&self.fabric, 0.0)
    }
}

/// The two coflows of the NC-DRF paper's Fig. 3 on four links of capacity 1
/// (link-1..4 = up0, up1, down0, down1): A sends 100 on up0→down1 and
/// up1→down1, B on up1→down0 and up1→down1.
pub fn ncdrf_fig3() -> Case {
    Case::new(
        2,
        1.0,
        &[
            (0, 0, 1, 100.0, 0.0),
            (0, 1, 1, 100.0, 0.0),
            (1, 1, 0, 100.0, 0.0),
            (1, 1, 1, 100.0, 0.0),
        ],
    )
}

pub fn close(a: &[f64], b: &[f64]) {
    assert_eq!(a.len(), b.len(), "{a:?} vs {b:?}");
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= 1e-9 * y.abs().max(1.0), "{a:?} vs {b:?}");
    }
}
