//! `sincronia`: Bottleneck-Select-Scale-Iterate ordering with greedy rates (Agarwal
//! et al., SIGCOMM'18), recomputed from remaining loads at every event. See
//! docs/policies/sincronia.md.
//!
//! ```text
//! L_k(b) = R_k(b) / C_b           load of coflow k on port (link) b, remaining bytes
//! repeat until every coflow is ordered (filling the order from the back):
//!   b  = argmax_b Σ_{k unordered} L_k(b)          ties: lower link (uplinks first)
//!   k* = argmin_{k: L_k(b) > 0} w_k / L_k(b)      ties: later (arrival, id) goes last
//!   β  = w_k* / L_k*(b);  w_k -= β · L_k(b) for the other k on b;  k* goes last
//! rates: in that order, flows by index, r_f = min_{l ∈ f} c_l (greedy)
//! ```

use crate::support::cuts::Cuts;
use crate::support::flowsync::KeptGreedy;
use crate::support::forms::FormChoice;
use crate::support::loads::LoadCache;
use crate::support::loadtree::LoadTree;
use crate::decision::Decision;
use crate::policy::ClairvoyantPolicy;
use crate::view::ClairvoyantView;
use coflowkit_alloc::{consume, path_avail};
use crate::policy::Info;
use crate::spec::{clairvoyant, PolicySpec};

#[derive(Default)]
pub struct Sincronia {
    /// The incremental form, under a driver with delta decisions (the engine).
    inc: Option<Inc>,
    choice: FormChoice,
    /// Per-coflow remaining bytes per link, drained by the rates given
    /// (`LoadCache`'s drained form).
    cache: LoadCache,
    /// Per active group: (link, load) pairs, concatenated; `spans[g]` delimits them.
    loads: Vec<(u32, f64)>,
    spans: Vec<(usize, usize)>,
    link_total: Vec<f64>,
    /// Link → (group, load), CSR.
    on_link_start: Vec<usize>,
    on_link: Vec<(u32, f64)>,
    weight: Vec<f64>,
    done: Vec<bool>,
    order: Vec<usize>,
    residual: Vec<f64>,
    cuts: Cuts,
}

/// The incremental form: loads kept flow by flow ([`LoadTree`]), and the greedy
/// kept across calls ([`IncGreedy`]) with each flow keyed by its coflow's place in
/// the BSSI order. A coflow's key is a label that stays while its place relative
/// to the coflows kept around it does (only coflows that moved are re-keyed).
/// Loads are tree sums, not left-to-right ones, so they may differ from the
/// from-scratch form's in the last bits.
struct Inc {
    tree: LoadTree,
    kept: KeptGreedy,
    /// Per coflow: its label (`NONE`: none).
    label: Vec<u64>,
    order: Vec<u32>,
    relabelled: Vec<u32>,
    /// Entries visited outside the greedy (tree leaves set, flows re-keyed).
    work: u64,
}

const NONE: u64 = u64::MAX;

impl Inc {
    fn new(v: &ClairvoyantView) -> Self {
        Inc {
            tree: LoadTree::default(),
            kept: KeptGreedy::new(v),
            label: Vec::new(),
            order: Vec::new(),
            relabelled: Vec::new(),
            work: 0,
        }
    }

    /// Brings the held flows, their loads and the greedy's items to the view.
    fn sync(&mut self, v: &ClairvoyantView) {
        if self.label.len() < v.coflow_started.len() {
            self.label.resize(v.coflow_started.len(), NONE);
        }
        self.kept.sync(v);
        for &f in &self.kept.gone {
            let k = v.flow_coflow[f as usize];
            if self.kept.sync.count(k) == 0 {
                self.tree.drop_coflow(k);
                self.label[k as usize] = NONE;
            } else {
                self.tree.set(v, f, 0.0);
            }
        }
        for &f in self.kept.moving.iter().chain(&self.kept.joined) {
            if self.kept.sync.holds(f) {
                self.tree.set(v, f, v.remaining(f));
                self.work += 1;
            }
        }
    }

    /// Labels for the coflows in `self.order` (first to last), increasing: the
    /// longest run of coflows whose old labels already increase keeps them, the
    /// others get labels between their neighbours'. Lists the coflows whose label
    /// changed in `self.relabelled`.
    fn relabel(&mut self) {
        self.relabelled.clear();
        let n = self.order.len();
        // Longest strictly increasing subsequence of the old labels (patience).
        let mut tails: Vec<usize> = Vec::new();
        let mut prev = vec![usize::MAX; n];
        for (i, &k) in self.order.iter().enumerate() {
            let x = self.label[k as usize];
            if x == NONE {
                continue;
            }
            let at = tails.partition_point(|&j| self.label[self.order[j] as usize] < x);
            if at > 0 {
                prev[i] = tails[at - 1];
            }
            if at == tails.len() {
                tails.push(i);
            } else {
                tails[at] = i;
            }
        }
        let mut keep = vec![false; n];
        let mut j = tails.last().copied();
        while let Some(i) = j {
            keep[i] = true;
            j = (prev[i] != usize::MAX).then_some(prev[i]);
        }
        let mut left = 0u64;
        let mut i = 0;
        while i < n {
            if keep[i] {
                left = self.label[self.order[i] as usize];
                i += 1;
                continue;
            }
            let mut j = i;
            while j < n && !keep[j] {
                j += 1;
            }
            let right = if j < n { self.label[self.order[j] as usize] } else { NONE };
            let step = (right - left) / (j - i + 1) as u64;
            if step == 0 {
                // No room left: label everything afresh.
                let step = NONE / (n as u64 + 1);
                self.relabelled.clear();
                for (t, &k) in self.order.iter().enumerate() {
                    self.label[k as usize] = step * (t as u64 + 1);
                    self.relabelled.push(k);
                }
                return;
            }
            for t in i..j {
                let k = self.order[t];
                self.label[k as usize] = left + step * (t - i + 1) as u64;
                self.relabelled.push(k);
            }
            left = self.label[self.order[j - 1] as usize];
            i = j;
        }
    }
}

impl Sincronia {
    /// The incremental form (see [`Inc`]).
    fn decide_inc(&mut self, v: &ClairvoyantView, out: &mut Decision) {
        let mut inc = self.inc.take().unwrap_or_else(|| Inc::new(v));
        let (before, building) = (inc.kept.greedy.work() + inc.work, inc.kept.building);
        inc.sync(v);
        // BSSI on the kept loads (zero loads left out: they change nothing).
        self.loads.clear();
        self.spans.clear();
        for g in v.groups {
            let start = self.loads.len();
            for (l, bytes) in inc.tree.loads(g.coflow) {
                if bytes > 0.0 {
                    self.loads.push((l, bytes / v.fabric.capacities[l as usize]));
                }
            }
            self.spans.push((start, self.loads.len()));
        }
        self.bssi(v);
        inc.order.clear();
        inc.order.extend(self.order.iter().map(|&g| v.groups[g].coflow));
        inc.relabel();
        for j in 0..inc.relabelled.len() {
            let k = inc.relabelled[j] as usize;
            let first = v.coflow_first_flow[k];
            for f in first..first + v.coflow_width[k] {
                if inc.kept.sync.holds(f) && inc.kept.greedy.contains(f) {
                    inc.kept.greedy.upsert(v.fabric, f, inc.label[k], v.flow_path[f as usize]);
                    inc.work += 1;
                }
            }
        }
        let kept = &mut inc.kept;
        for &f in &kept.joined {
            if kept.sync.holds(f) {
                let k = v.flow_coflow[f as usize] as usize;
                kept.greedy.upsert(v.fabric, f, inc.label[k], v.flow_path[f as usize]);
            }
        }
        kept.answer(v, out);
        let work = inc.kept.greedy.work() + inc.work - before;
        if self.choice.record(work, v.active.len(), building) {
            self.inc = Some(inc);
        }
    }

    fn loads(&mut self, v: &ClairvoyantView) {
        self.cache.begin(v);
        self.loads.clear();
        self.spans.clear();
        for g in 0..v.groups.len() {
            let start = self.loads.len();
            for &(l, bytes) in self.cache.get(v, g) {
                self.loads
                    .push((l, bytes / v.fabric.capacities[l as usize]));
            }
            self.spans.push((start, self.loads.len()));
        }
    }

    /// BSSI: fills `self.order` with group indices, first to last. Each round
    /// puts last, among the coflows on the most loaded link, the one with the
    /// least weight per load, and charges the others `β · load`.
    fn bssi(&mut self, v: &ClairvoyantView) {
        let nl = v.fabric.num_links();
        let n = v.groups.len();
        self.index_loads(nl);
        self.weight.clear();
        self.weight
            .extend(v.groups.iter().map(|g| v.coflow_weight[g.coflow as usize]));
        self.done.clear();
        self.done.resize(n, false);
        self.order.clear();
        while self.order.len() < n {
            // Most loaded link; ties: lower index.
            let mut b = 0;
            for l in 1..nl {
                if self.link_total[l] > self.link_total[b] {
                    b = l;
                }
            }
            match self.last_on(b) {
                Some((beta, gstar)) => self.put_last(b, beta, gstar),
                None => {
                    // Only rounding residue is left on this link.
                    self.link_total[b] = 0.0;
                    if self.link_total.iter().all(|&t| t <= 0.0) {
                        // Defensive: order whatever is left by coflow order, last to first.
                        for g in (0..n).rev() {
                            if !self.done[g] {
                                self.done[g] = true;
                                self.order.push(g);
                            }
                        }
                    }
                }
            }
        }
        self.order.reverse();
    }

    /// Per link: its total load (`link_total`) and the (group, load) entries on
    /// it (`on_link`, CSR by `on_link_start`).
    fn index_loads(&mut self, nl: usize) {
        self.link_total.clear();
        self.link_total.resize(nl, 0.0);
        self.on_link_start.clear();
        self.on_link_start.resize(nl + 1, 0);
        for &(l, ld) in &self.loads {
            self.link_total[l as usize] += ld;
            self.on_link_start[l as usize + 1] += 1;
        }
        for l in 0..nl {
            self.on_link_start[l + 1] += self.on_link_start[l];
        }
        self.on_link.clear();
        self.on_link.resize(self.loads.len(), (0, 0.0));
        let mut fill = self.on_link_start.clone();
        for (g, &(a, b)) in self.spans.iter().enumerate() {
            for &(l, ld) in &self.loads[a..b] {
                self.on_link[fill[l as usize]] = (g as u32, ld);
                fill[l as usize] += 1;
            }
        }
    }

    /// The coflow to put last among those not yet ordered on link `b`: the least
    /// weight per load (ties: the larger group index), as `(β, group)`.
    fn last_on(&self, b: usize) -> Option<(f64, u32)> {
        let cands = &self.on_link[self.on_link_start[b]..self.on_link_start[b + 1]];
        let mut best: Option<(f64, u32)> = None;
        for &(g, ld) in cands {
            if self.done[g as usize] || ld <= 0.0 {
                continue;
            }
            let ratio = self.weight[g as usize] / ld;
            // Ties: the later coflow (larger group index) goes last.
            best = match best {
                Some((r, _)) if ratio > r => best,
                _ => Some((ratio, g)),
            };
        }
        best
    }

    /// Orders `gstar` (next from the end): the other coflows on link `b` pay
    /// `β · load` of their weight, and `gstar`'s loads leave every link.
    fn put_last(&mut self, b: usize, beta: f64, gstar: u32) {
        let cands = &self.on_link[self.on_link_start[b]..self.on_link_start[b + 1]];
        for &(g, ld) in cands {
            if !self.done[g as usize] && g != gstar {
                self.weight[g as usize] -= beta * ld;
            }
        }
        self.done[gstar as usize] = true;
        let (a, e) = self.spans[gstar as usize];
        for &(l, ld) in &self.loads[a..e] {
            let t = &mut self.link_total[l as usize];
            *t -= ld;
            if *t < 0.0 {
                *t = 0.0;
            }
        }
        self.order.push(gstar as usize);
    }
}

impl ClairvoyantPolicy for Sincronia {
    fn decide(&mut self, v: &ClairvoyantView, out: &mut Decision) {
        // Both forms give the same rates (see `Inc`); `FormChoice` picks one from
        // counts.
        if self.choice.incremental(out.delta_ok) {
            self.decide_inc(v, out);
            return;
        }
        if self.inc.take().is_some() {
            // The incremental form gave rates the drained loads were not told of.
            self.cache.forget();
        }
        if out.delta_ok {
            // As varys: drained loads under the engine only.
            self.cache.drain_on();
        }
        self.loads(v);
        self.bssi(v);
        self.residual.clear();
        self.residual.extend_from_slice(&v.fabric.capacities);
        for &g in &self.order {
            if self.cuts.blocked(v, g, &self.residual) {
                continue;
            }
            let k = v.groups[g].coflow;
            for i in v.groups[g].range() {
                let p = v.flow_path[v.active[i] as usize];
                let r = path_avail(v.fabric, &self.residual, p);
                if r > 0.0 {
                    out.rates[i] = r;
                    consume(v.fabric, &mut self.residual, p, r);
                    self.cache.add(k, v.fabric.path(p), r);
                }
            }
        }
    }
}

pub const SPEC: PolicySpec = PolicySpec {
    name: "sincronia",
    info: Info::Clairvoyant,
    knows: "",
    summary: "BSSI order + greedy rates (Sincronia)",
    rule: "BSSI order from remaining port loads; greedy rates in that order",
    paper: "Sincronia: Agarwal et al., SIGCOMM'18",
    params: &[],
    needs: &[],
    build: |_| clairvoyant(Sincronia::default()),
    example_ccts: [0.109375, 0.015625, 0.03125],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{close, Case};

    #[test]
    fn bssi_puts_the_heaviest_coflow_on_the_bottleneck_last() {
        // C = 1. down1 carries coflow 0 (4 B) and coflow 1 (1 B): total 5, the most
        // loaded port. w/L: coflow 0 → 1/4, coflow 1 → 1/1; coflow 0 goes last.
        // Order: coflow 1, coflow 0. Greedy: coflow 1's flow 2→1 takes down1.
        let c = Case::new(3, 1.0, &[(0, 0, 1, 4.0, 0.0), (1, 2, 1, 1.0, 0.0)]);
        let mut d = Decision::default();
        d.reset(2);
        let mut s = Sincronia::default();
        s.decide(&c.clairvoyant(), &mut d);
        assert_eq!(s.order, vec![1, 0]);
        close(&d.rates, &[0.0, 1.0]);
    }

    #[test]
    fn weights_are_scaled_down_on_the_bottleneck() {
        // C = 1. up0: coflow 0 (3 B) + coflow 1 (3 B) = 6, the bottleneck (up0 < down*
        // on ties, and down1/down2 carry 3 each). Ratios tie at 1/3: the later coflow
        // (1) goes last; coflow 0's weight becomes 1 − (1/3)·3 = 0. Then only coflow 0
        // remains. Order: 0, 1.
        let c = Case::new(3, 1.0, &[(0, 0, 1, 3.0, 0.0), (1, 0, 2, 3.0, 0.0)]);
        let mut d = Decision::default();
        d.reset(2);
        let mut s = Sincronia::default();
        s.decide(&c.clairvoyant(), &mut d);
        assert_eq!(s.order, vec![0, 1]);
        close(&d.rates, &[1.0, 0.0]);
        assert!(s.weight[0].abs() < 1e-12);
    }

    #[test]
    fn labels_move_only_the_coflows_that_moved() {
        // Three coflows, first ordered 0, 1, 2: labels spread over the range.
        // Then 1, 0, 2: the longest run with increasing labels (0, 2 or 1, 2) keeps
        // its labels, and the one coflow out of place gets a label between its
        // neighbours'. Then 1, 0, 2, 3 with 3 new: only 3 is labelled.
        let c = Case::new(2, 1.0, &[(0, 0, 1, 1.0, 0.0)]);
        let mut inc = Inc::new(&c.clairvoyant());
        inc.label = vec![NONE; 4];
        inc.order = vec![0, 1, 2];
        inc.relabel();
        assert_eq!(inc.relabelled, vec![0, 1, 2]);
        let step = NONE / 4;
        assert_eq!(&inc.label[..3], &[step, 2 * step, 3 * step]);
        inc.order = vec![1, 0, 2];
        inc.relabel();
        assert_eq!(inc.relabelled.len(), 1);
        let l: Vec<u64> = inc.order.iter().map(|&k| inc.label[k as usize]).collect();
        assert!(l[0] < l[1] && l[1] < l[2], "{l:?}");
        inc.order = vec![1, 0, 2, 3];
        inc.relabel();
        assert_eq!(inc.relabelled, vec![3]);
        assert!(inc.label[3] > inc.label[2]);
    }
}
