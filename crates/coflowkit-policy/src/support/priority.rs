//! Priority max-min over coflows: coflows in an order, each gets max-min fair rates
//! among its active flows on what the earlier ones left.

use crate::decision::Decision;
use crate::support::cuts::Cuts;
use crate::view::Common;
use coflowkit_alloc::MaxMin;
use coflowkit_model::PathId;

/// Priority max-min with one group per coflow: coflows in the given order, each gets
/// max-min fair rates among its active flows on what the earlier ones left.
#[derive(Default)]
pub struct CoflowPriority {
    mm: MaxMin,
    pub residual: Vec<f64>,
    cuts: Cuts,
    paths: Vec<PathId>,
    tmp: Vec<f64>,
}

impl CoflowPriority {
    /// `order` lists indices into `c.groups`, highest priority first. Writes
    /// `out.rates[i]` for every active flow of the listed coflows that can get a
    /// positive rate, as a sparse decision; `out` must be fresh from
    /// [`crate::decision::Decision::reset`], since coflows with no open path are skipped
    /// without being written. `self.residual` holds what is left afterwards.
    pub fn run(&mut self, c: &Common, order: &[usize], out: &mut Decision) {
        out.sparse = true;
        self.residual.clear();
        self.residual.extend_from_slice(&c.fabric.capacities);
        for &g in order {
            if self.cuts.blocked(c, g, &self.residual) {
                continue;
            }
            self.serve(c, c.groups[g].range(), out);
        }
    }

    /// Starts a round: the whole fabric is free again.
    pub fn begin(&mut self, c: &Common, out: &mut Decision) {
        out.sparse = true;
        self.residual.clear();
        self.residual.extend_from_slice(&c.fabric.capacities);
    }

    /// Gives the active flows at `positions` (indices into `c.active`) max-min fair
    /// rates on what is left in `self.residual`, writes them as sparse rates and
    /// takes them from the residual: one priority level of a priority max-min.
    pub fn serve(
        &mut self,
        c: &Common,
        positions: impl Iterator<Item = usize> + Clone,
        out: &mut Decision,
    ) {
        self.paths.clear();
        self.paths
            .extend(positions.clone().map(|i| c.flow_path[c.active[i] as usize]));
        self.tmp.clear();
        self.tmp.resize(self.paths.len(), 0.0);
        self.mm
            .solve(c.fabric, &mut self.residual, &self.paths, &mut self.tmp);
        for (i, &r) in positions.zip(&self.tmp) {
            out.rates[i] = r;
            out.touch(i);
        }
    }
}

/// Sorts group indices by `(key, coflow index)`; the coflow index encodes
/// (arrival, id), the tie-break of every policy.
pub fn order_by_key(c: &Common, key: impl Fn(u32) -> f64, out: &mut Vec<usize>) {
    out.clear();
    out.extend(0..c.groups.len());
    out.sort_by(|&a, &b| {
        let (ca, cb) = (c.groups[a].coflow, c.groups[b].coflow);
        key(ca).total_cmp(&key(cb)).then(ca.cmp(&cb))
    });
}

/// CoflowSim's per-coflow share (`CoflowSimulatorDark.updateRates`): coflows in
/// order, each on what earlier ones left; a coflow's flows whose links all have
/// more than CoflowSim's zero left are counted per link, and each gets
/// `min_{l ∈ f} left(l) / count(l)` in one pass (0 if that is not above zero).
/// Not max-min: a flow limited elsewhere still takes its count share of a link.
#[derive(Default)]
pub struct CountShare {
    pub residual: Vec<f64>,
    count: Vec<u32>,
    used: Vec<f64>,
    links: Vec<u32>,
    counted: Vec<usize>,
}

/// CoflowSim's zero (`Constants.ZERO`, 10⁻³ bit/s) in bytes/s.
pub const COFLOWSIM_ZERO: f64 = 1e-3 / 8.0;

impl CountShare {
    /// Starts a round: the whole fabric is free again.
    pub fn begin(&mut self, c: &Common) {
        let nl = c.fabric.num_links();
        self.residual.clear();
        self.residual.extend_from_slice(&c.fabric.capacities);
        self.count.resize(nl, 0);
        self.used.resize(nl, 0.0);
    }

    /// Serves one coflow: its active flows at `range` (positions in `c.active`).
    pub fn serve(&mut self, c: &Common, range: std::ops::Range<usize>, out: &mut Decision) {
        self.counted.clear();
        for i in range {
            let path = c.fabric.path(c.flow_path[c.active[i] as usize]);
            if path
                .iter()
                .any(|&l| self.residual[l as usize] <= COFLOWSIM_ZERO)
            {
                continue;
            }
            for &l in path {
                if self.count[l as usize] == 0 {
                    self.links.push(l);
                }
                self.count[l as usize] += 1;
            }
            self.counted.push(i);
        }
        for &i in &self.counted {
            let path = c.fabric.path(c.flow_path[c.active[i] as usize]);
            let mut m = f64::INFINITY;
            for &l in path {
                m = m.min(self.residual[l as usize] / self.count[l as usize] as f64);
            }
            if m <= COFLOWSIM_ZERO {
                m = 0.0;
            }
            out.rates[i] = m;
            for &l in path {
                self.used[l as usize] += m;
            }
        }
        for &l in &self.links {
            self.residual[l as usize] -= self.used[l as usize];
            self.used[l as usize] = 0.0;
            self.count[l as usize] = 0;
        }
        self.links.clear();
    }
}
