//! A tiny hand-built view for policy unit tests.

use crate::view::{ActiveCoflow, ClairvoyantView, Common, NonClairvoyantView, NO_PORT};
use coflowkit_model::{Fabric, PathId};

/// Flows given as (coflow, src, dst, size, sent); coflows numbered 0.. in order.
#[derive(Clone)]
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
    pub reports: Vec<Vec<(u32, f64)>>,
    pub path_count: Vec<u32>,
    pub active_paths: Vec<PathId>,
    pub src: Vec<u32>,
    pub dst: Vec<u32>,
    /// Ports of each flow (NO_PORT unless a test sets them).
    pub src_port: Vec<u32>,
    pub dst_port: Vec<u32>,
    /// Stage and priority of each flow (0 unless a test sets them).
    pub stage: Vec<u32>,
    pub priority: Vec<u32>,
    pub stage_parents: Vec<(u32, u32, u32)>,
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
            reports: Vec::new(),
            path_count: Vec::new(),
            active_paths: Vec::new(),
            src: Vec::new(),
            dst: Vec::new(),
            src_port: Vec::new(),
            dst_port: Vec::new(),
            stage: vec![0; flows.len()],
            priority: vec![0; flows.len()],
            stage_parents: Vec::new(),
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
            c.src.push(s);
            c.dst.push(d);
            c.src_port.push(NO_PORT);
            c.dst_port.push(NO_PORT);
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
        c.count_paths();
        c
    }

    /// Recomputes the per-path counts from `active` (after a test edits it).
    pub fn count_paths(&mut self) {
        self.path_count = vec![0; self.fabric.num_paths()];
        self.active_paths.clear();
        for &f in &self.active {
            let p = self.flow_path[f as usize];
            if self.path_count[p as usize] == 0 {
                self.active_paths.push(p);
            }
            self.path_count[p as usize] += 1;
        }
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
            flow_src: &self.src,
            flow_dst: &self.dst,
            flow_src_port: &self.src_port,
            flow_dst_port: &self.dst_port,
            flow_stage: &self.stage,
            flow_priority: &self.priority,
            stage_parents: &self.stage_parents,
            sent: &self.sent,
            coflow_id: &self.coflow_id,
            coflow_arrival_s: &self.arrival,
            coflow_weight: &self.weight,
            coflow_width: &self.width,
            coflow_sent: &self.coflow_sent,
            coflow_started: &self.width,
            path_count: &self.path_count,
            active_paths: &self.active_paths,
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
            coflow_report: &self.reports,
        }
    }

    pub fn non_clairvoyant(&self) -> NonClairvoyantView<'_> {
        NonClairvoyantView {
            common: self.common(),
        }
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
