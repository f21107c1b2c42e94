//! Instantaneous metrics of the NC-DRF and Coflex papers, recorded while a run goes.
//!
//! For every active coflow `k` (one with a started, unfinished flow), at a sample
//! time, from the true remaining bytes `S_k(l)` and the rates `R_k(l)` on each of
//! its links (whatever the policy knows):
//!
//! ```text
//! Γ_k = max_l S_k(l) / C_l            d_k(l) = S_k(l) / (C_l Γ_k)
//! a_k(l) = R_k(l) / C_l               P_k = min_{l: S_k(l) > 0} a_k(l) / d_k(l)
//!                                         = Γ_k · min_l R_k(l) / S_k(l)
//! isolation guarantee = min_k P_k     disparity = max_k P_k / min_k P_k (∞ if min is 0)
//! utilization = Σ_f r_f |path_f| / Σ_l C_l   (allocated over total capacity)
//! ```
//!
//! `P_k` is a fraction of a link (the DRF progress `P*` when every coflow is at its
//! DRF share). Samples are taken after every policy call (`interval_s = 0`) or on a
//! grid `t0 + iΔ` from the first event, where remaining bytes are interpolated at
//! the constant rates between events: sampling adds no events. A flow already
//! within the finish tolerance counts as done.

use coflowkit_model::{finish_threshold, Fabric};
use coflowkit_policy::view::ViewData;

/// What to record.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Recording {
    /// Seconds between samples; 0 samples after every event.
    pub interval_s: f64,
    /// Also keep one row per (sample, active coflow) with its progress.
    pub per_coflow: bool,
}

/// The recorded time series (column-wise).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    pub time_s: Vec<f64>,
    pub active_coflows: Vec<u32>,
    /// Isolation guarantee, `min_k P_k` (NaN when no coflow is active).
    pub min_progress: Vec<f64>,
    pub mean_progress: Vec<f64>,
    pub max_progress: Vec<f64>,
    pub disparity: Vec<f64>,
    pub utilization: Vec<f64>,
    /// Per-coflow rows (when asked): sample number, coflow index, `P_k`.
    pub row_sample: Vec<u32>,
    pub row_coflow: Vec<u32>,
    pub row_progress: Vec<f64>,
}

/// The state a sample reads, borrowed from the engine: its view data at `now`.
pub(crate) struct State<'a> {
    pub fabric: &'a Fabric,
    pub d: &'a ViewData,
    pub now: f64,
}

pub(crate) struct Recorder {
    pub rec: Recording,
    pub series: Series,
    bytes: Vec<f64>,
    speed: Vec<f64>,
    seen: Vec<bool>,
    touched: Vec<u32>,
    total_capacity: f64,
}

impl Recorder {
    pub fn new(rec: Recording, fabric: &Fabric) -> Self {
        let nl = fabric.num_links();
        Recorder {
            rec,
            series: Series::default(),
            bytes: vec![0.0; nl],
            speed: vec![0.0; nl],
            seen: vec![false; nl],
            touched: Vec::new(),
            total_capacity: fabric.capacities.iter().sum(),
        }
    }

    /// Records the state `ahead_s` seconds after the engine's current time `now_s`
    /// (rates constant in between).
    pub fn sample(&mut self, st: &State, now_s: f64, ahead_s: f64) {
        let caps = &st.fabric.capacities;
        let sample = self.series.time_s.len() as u32;
        let (mut lo, mut hi, mut sum, mut n) = (f64::INFINITY, 0.0f64, 0.0, 0u32);
        let mut allocated = 0.0;
        let d = st.d;
        for g in &d.groups {
            self.touched.clear();
            for &f in &d.active[g.range()] {
                let f = f as usize;
                let r = crate::rates::Rates::rate_of(d, f);
                let path = st.fabric.path(d.flow_path[f]);
                allocated += r * path.len() as f64;
                let rem = (d.size[f] - d.sent_at(f, st.now)).max(0.0) - r * ahead_s;
                if rem <= finish_threshold(d.size[f]) {
                    continue;
                }
                for &l in path {
                    let li = l as usize;
                    if !self.seen[li] {
                        self.seen[li] = true;
                        self.touched.push(l);
                    }
                    self.bytes[li] += rem;
                    self.speed[li] += r;
                }
            }
            if self.touched.is_empty() {
                continue;
            }
            let mut gamma: f64 = 0.0;
            let mut slowest = f64::INFINITY;
            for &l in &self.touched {
                let li = l as usize;
                gamma = gamma.max(self.bytes[li] / caps[li]);
                slowest = slowest.min(self.speed[li] / self.bytes[li]);
                self.bytes[li] = 0.0;
                self.speed[li] = 0.0;
                self.seen[li] = false;
            }
            let p = gamma * slowest;
            lo = lo.min(p);
            hi = hi.max(p);
            sum += p;
            n += 1;
            if self.rec.per_coflow {
                self.series.row_sample.push(sample);
                self.series.row_coflow.push(g.coflow);
                self.series.row_progress.push(p);
            }
        }
        let s = &mut self.series;
        s.time_s.push(now_s + ahead_s);
        s.active_coflows.push(n);
        s.utilization.push(allocated / self.total_capacity);
        if n == 0 {
            s.min_progress.push(f64::NAN);
            s.mean_progress.push(f64::NAN);
            s.max_progress.push(f64::NAN);
            s.disparity.push(f64::NAN);
        } else {
            s.min_progress.push(lo);
            s.mean_progress.push(sum / n as f64);
            s.max_progress.push(hi);
            s.disparity
                .push(if lo > 0.0 { hi / lo } else { f64::INFINITY });
        }
    }
}
