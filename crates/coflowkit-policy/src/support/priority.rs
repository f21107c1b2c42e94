//! Priority max-min over coflows: coflows in an order, each gets max-min fair rates
//! among its active flows on what the earlier ones left.

use crate::decision::Decision;
use crate::support::cuts::Cuts;
use crate::view::Common;
use coflowkit_alloc::MaxMin;
use coflowkit_model::PathId;

/// Priority max-min with one group per coflow: coflows in the given order, each gets
/// max-min fair rates among its active flows on what the earlier ones left.
///
/// [`CoflowPriority::run`] remembers, per coflow, what it last solved: the active
/// flows, the residual capacity it found on every link of their paths, what it left
/// there and the rates. A coflow's max-min depends on nothing else, so when its
/// flows and those residuals are bit for bit the same, the remembered answer *is*
/// the answer, and it is replayed in `O(flows + links)` without solving (on the FB
/// trace a third of the coflows a call visits, most of them blocked ones).
#[derive(Default)]
pub struct CoflowPriority {
    mm: MaxMin,
    pub residual: Vec<f64>,
    cuts: Cuts,
    paths: Vec<PathId>,
    tmp: Vec<f64>,
    /// Per coflow index: the last solve of [`CoflowPriority::run`].
    memo: Vec<Memo>,
    /// Link stamps, to list a coflow's distinct links.
    stamp: Vec<u32>,
    epoch: u32,
    /// How many coflows were replayed rather than solved (for tests and profiles).
    pub replays: u64,
}

/// One coflow's last solve in [`CoflowPriority::run`].
#[derive(Default, Clone)]
struct Memo {
    /// Its active flows (global indices, in `c.active` order) when solved, and
    /// their paths (a driver that reused a flow index for another flow would
    /// change them).
    flows: Vec<u32>,
    paths: Vec<PathId>,
    /// The distinct links of their paths; the residual on each before and after.
    links: Vec<u32>,
    input: Vec<f64>,
    output: Vec<f64>,
    /// The rate of each flow of `flows`.
    rates: Vec<f64>,
}

impl Memo {
    /// True when `flows` on the residual `residual` are what this memo solved.
    fn matches(&self, c: &Common, flows: &[u32], residual: &[f64]) -> bool {
        self.flows == flows
            && flows
                .iter()
                .zip(&self.paths)
                .all(|(&f, &p)| c.flow_path[f as usize] == p)
            && self
                .links
                .iter()
                .zip(&self.input)
                .all(|(&l, &x)| residual[l as usize].to_bits() == x.to_bits())
    }
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
        if self.memo.len() < c.coflow_started.len() {
            self.memo.resize(c.coflow_started.len(), Memo::default());
        }
        for &g in order {
            let range = c.groups[g].range();
            let k = c.groups[g].coflow as usize;
            if self.memo[k].matches(c, &c.active[range.clone()], &self.residual) {
                self.replays += 1;
                let m = &self.memo[k];
                for (&l, &x) in m.links.iter().zip(&m.output) {
                    self.residual[l as usize] = x;
                }
                for (i, &r) in range.zip(&m.rates) {
                    if r != 0.0 {
                        out.rates[i] = r;
                        out.touched.push(i as u32);
                    }
                }
                continue;
            }
            let mut m = std::mem::take(&mut self.memo[k]);
            self.remember_input(c, range.clone(), &mut m);
            if self.cuts.blocked(c, g, &self.residual) {
                m.rates.resize(range.len(), 0.0);
            } else {
                self.serve(c, range.clone(), out);
                m.rates.extend(range.map(|i| out.rates[i]));
            }
            m.output
                .extend(m.links.iter().map(|&l| self.residual[l as usize]));
            self.memo[k] = m;
        }
    }

    /// Fills `m` (cleared) with the flows at `range` and the residual on their links.
    fn remember_input(&mut self, c: &Common, range: std::ops::Range<usize>, m: &mut Memo) {
        if self.stamp.len() < c.fabric.num_links() {
            self.stamp.resize(c.fabric.num_links(), 0);
        }
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.epoch = 1;
        }
        m.flows.clear();
        m.flows.extend_from_slice(&c.active[range]);
        m.paths.clear();
        m.paths
            .extend(m.flows.iter().map(|&f| c.flow_path[f as usize]));
        m.links.clear();
        for &f in &m.flows {
            for &l in c.fabric.path(c.flow_path[f as usize]) {
                if self.stamp[l as usize] != self.epoch {
                    self.stamp[l as usize] = self.epoch;
                    m.links.push(l);
                }
            }
        }
        m.input.clear();
        m.input
            .extend(m.links.iter().map(|&l| self.residual[l as usize]));
        m.output.clear();
        m.rates.clear();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::Case;
    use coflowkit_model::Pcg32;

    /// One call of `p` on `c` with coflows in `order` (coflow indices): the rates.
    fn call(p: &mut CoflowPriority, c: &Case, order: &[u32]) -> Vec<f64> {
        let v = c.common();
        let groups: Vec<usize> = order
            .iter()
            .filter_map(|&k| v.groups.iter().position(|g| g.coflow == k))
            .collect();
        let mut d = Decision::default();
        d.reset(v.active.len());
        p.run(&v, &groups, &mut d);
        d.rates
    }

    #[test]
    fn a_reused_solver_answers_as_a_fresh_one() {
        // 6 coflows of up to 6 flows on 5 ports; at each of 40 calls a random
        // flow or two finish and the order is reshuffled or kept. The reused
        // solver replays what it remembers; a fresh one solves everything. The
        // rates must be identical, bit for bit (and some calls must replay).
        let mut rng = Pcg32::new(7, 3);
        let mut flows = Vec::new();
        for k in 0..6u32 {
            for _ in 0..1 + rng.below(6) {
                let (s, d) = (rng.below(5), rng.below(5));
                flows.push((k, s, d, 1.0, 0.0));
            }
        }
        let mut c = Case::new(5, 10.0, &flows);
        let mut active: Vec<u32> = (0..flows.len() as u32).collect();
        let mut order: Vec<u32> = (0..6).collect();
        let mut reused = CoflowPriority::default();
        for call_no in 0..40 {
            if call_no % 3 == 0 {
                rng.shuffle(&mut order);
            }
            let fresh = call(&mut CoflowPriority::default(), &c, &order);
            assert_eq!(call(&mut reused, &c, &order), fresh, "call {call_no}");
            if active.len() > 1 && call_no % 2 == 1 {
                active.remove(rng.below(active.len() as u32) as usize);
                c.set_active(&active);
            }
        }
        assert!(reused.replays > 40, "{} replays", reused.replays);
    }

    #[test]
    fn a_flow_index_on_another_path_is_solved_again() {
        // Coflow 1 (2→3) first takes up2 and down3 (10); coflow 0's flow 0→1 gets
        // 10. Then a driver reuses flow 0's index for a flow 2→1: coflow 0's old
        // links (up0, down1) hold the same residual, but the new flow crosses the
        // full up2 and gets 0.
        let mut c = Case::new(4, 10.0, &[(0, 0, 1, 1.0, 0.0), (1, 2, 3, 1.0, 0.0)]);
        let mut p = CoflowPriority::default();
        assert_eq!(call(&mut p, &c, &[1, 0]), vec![10.0, 10.0]);
        c.data.flow_path[0] = c.fabric.route(2, 1, 0).unwrap();
        assert_eq!(call(&mut p, &c, &[1, 0]), vec![0.0, 10.0]);
    }

    #[test]
    fn a_changed_residual_is_solved_again() {
        // Coflow 0: 0→1; coflow 1: 0→2 and 3→2 (C = 10). Order 0, 1: coflow 0
        // takes up0, so coflow 1's 0→2 gets 0 and 3→2 all of down2 (10). Order
        // 1, 0: coflow 1 first, 5 and 5; coflow 0 gets the 5 left on up0. The
        // second call's coflow 1 sees another residual on up0 and must not
        // replay its first answer.
        let c = Case::new(
            4,
            10.0,
            &[
                (0, 0, 1, 1.0, 0.0),
                (1, 0, 2, 1.0, 0.0),
                (1, 3, 2, 1.0, 0.0),
            ],
        );
        let mut p = CoflowPriority::default();
        assert_eq!(call(&mut p, &c, &[0, 1]), vec![10.0, 0.0, 10.0]);
        assert_eq!(call(&mut p, &c, &[1, 0]), vec![5.0, 5.0, 5.0]);
        assert_eq!(call(&mut p, &c, &[0, 1]), vec![10.0, 0.0, 10.0]);
    }
}
