//! `ncdrf`: Non-Clairvoyant DRF (Algorithm 1 of the NC-DRF paper): DRF on per-link
//! flow counts instead of bytes, then backfilling. See docs/policies/ncdrf.md.
//!
//! ```text
//! n_k(l)  = active flows of coflow k on link l;   ν_k(l) = n_k(l) / C_l
//! m_k     = max_l ν_k(l);                         ĉ_k(l) = ν_k(l) / m_k
//! P̂*      = 1 / max_l Σ_k ĉ_k(l)
//! r_f     = P̂* / m_k                              every flow of k (equal speed)
//! backfill (repeated `backfill_rounds` times, from the spare u_l left so far):
//!   r_f  += min_{l ∈ f} u_l / N_l                 N_l = Σ_k n_k(l)
//! ```
//!
//! With equal capacities `C`, `ĉ` and `P̂*` are the paper's and `r_f = P̂* C / n̄_k`.

use crate::support::loads::LinkCounts;
use crate::support::pathflows::PathFlows;
use crate::decision::Decision;
use crate::policy::NonClairvoyantPolicy;
use crate::view::NonClairvoyantView;
use coflowkit_alloc::avail;
use crate::policy::{AnyPolicy, Info};
use crate::spec::{non_clairvoyant, PolicySpec};
use crate::params::{ParamSpec, Params};
use coflowkit_model::ModelError;

/// Work per call: `O(coflow-link pairs + active paths · rounds)`, plus one pass
/// over the active flows to write `r_f = P̂*/m_k + Σ_rounds e(path_f)`: every
/// quantity of the rule depends on a coflow's counts or on a path, never on the
/// flow itself. Under a driver that takes delta decisions the pass is replaced
/// by a delta by flow: the flows of the coflows whose speed moved, the flows
/// on the paths whose extra moved, and the flows that started (the same rates,
/// bit for bit; on the FB trace about 2% of the active flows per call).
pub struct NcDrf {
    backfill_rounds: usize,
    counts: LinkCounts,
    /// Σ_k ĉ_k(l), then the spare capacity u_l.
    sum: Vec<f64>,
    /// N_l: active flows on link l.
    flows_on: Vec<f64>,
    /// Per group: P̂*/m_k once P̂* is known (m_k before).
    speed: Vec<f64>,
    /// Per active path: this round's extra, and the total extra per PathId.
    extra: Vec<f64>,
    path_extra: Vec<f64>,
    delta: Delta,
}

/// What the delta form keeps: per coflow and per path the last speed and
/// extra it answered with, and per path its active flows.
#[derive(Default)]
struct Delta {
    paths: PathFlows,
    call: u32,
    /// Per coflow: its speed at the last call that listed it, this call's,
    /// and the call that listed all its flows.
    last_speed: Vec<f64>,
    speed: Vec<f64>,
    listed: Vec<u32>,
    /// Per path: its extra at the last call, and the call that listed its
    /// flows.
    last_extra: Vec<f64>,
    path_listed: Vec<u32>,
    /// One backfilling round: per link its active paths, per path its slot
    /// in each of its links' lists (`NONE`: not tracked), the spare `u_l` and
    /// `N_l` each link had at the last call, and this call's paths whose
    /// extra is computed again (those on a link whose `u_l` or `N_l` moved,
    /// and those whose flows changed), stamped by `call`.
    link_paths: Vec<Vec<u32>>,
    slots: Vec<Vec<u32>>,
    last_u: Vec<f64>,
    last_n: Vec<f64>,
    dirty: Vec<u32>,
    dirty_at: Vec<u32>,
}

const NONE: u32 = u32::MAX;

impl Delta {
    /// Tracks the active paths of `v` in the per-link lists (told the paths
    /// whose flow count changed; all active paths at the first call).
    fn track_paths(&mut self, v: &NonClairvoyantView) {
        let (nl, np) = (v.fabric.num_links(), v.fabric.num_paths());
        if self.link_paths.len() < nl {
            self.link_paths.resize_with(nl, Vec::new);
            self.last_u.resize(nl, f64::NAN);
            self.last_n.resize(nl, f64::NAN);
        }
        if self.slots.len() < np {
            self.slots.resize_with(np, Vec::new);
            self.dirty_at.resize(np, 0);
        }
        let first = self.last_u.iter().all(|x| x.is_nan());
        let paths = if first { v.active_paths } else { v.changed_paths };
        for &p in paths {
            let pi = p as usize;
            let active = v.path_count[pi] > 0;
            let tracked = self.slots[pi].first().is_some_and(|&s| s != NONE);
            let links = v.fabric.path(p);
            if active && !tracked {
                self.slots[pi].clear();
                for &l in links {
                    let list = &mut self.link_paths[l as usize];
                    self.slots[pi].push(list.len() as u32);
                    list.push(p);
                }
            } else if !active && tracked {
                for (j, &l) in links.iter().enumerate() {
                    let at = self.slots[pi][j] as usize;
                    let list = &mut self.link_paths[l as usize];
                    list.swap_remove(at);
                    if let Some(&q) = list.get(at) {
                        let k = v.fabric.path(q).iter().position(|&x| x == l).unwrap();
                        self.slots[q as usize][k] = at as u32;
                    }
                }
                self.slots[pi].iter_mut().for_each(|s| *s = NONE);
            }
            if active {
                self.mark(p);
            }
        }
    }

    fn mark(&mut self, p: u32) {
        if self.dirty_at[p as usize] != self.call {
            self.dirty_at[p as usize] = self.call;
            self.dirty.push(p);
        }
    }
}

impl NcDrf {
    pub fn new(backfill_rounds: usize) -> Self {
        NcDrf {
            backfill_rounds,
            counts: LinkCounts::default(),
            sum: Vec::new(),
            flows_on: Vec::new(),
            speed: Vec::new(),
            extra: Vec::new(),
            path_extra: Vec::new(),
            delta: Delta::default(),
        }
    }
}

impl NonClairvoyantPolicy for NcDrf {
    fn decide(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        let fab = v.fabric;
        let caps = &fab.capacities;
        let nl = fab.num_links();
        self.sum.clear();
        self.sum.resize(nl, 0.0);
        self.flows_on.clear();
        self.flows_on.resize(nl, 0.0);
        self.speed.clear();
        // Stage 1: per-coflow flow counts → correlation vectors → Σ_k ĉ_k(l).
        for g in 0..v.groups.len() {
            let counts = self.counts.get(v, g);
            let m = counts
                .iter()
                .map(|&(l, n)| n as f64 / caps[l as usize])
                .fold(0.0, f64::max);
            for &(l, n) in counts {
                let li = l as usize;
                self.sum[li] += n as f64 / caps[li] / m;
                self.flows_on[li] += n as f64;
            }
            self.speed.push(m);
        }
        let busiest = self.sum.iter().copied().fold(0.0, f64::max);
        if busiest <= 0.0 {
            if out.delta_ok {
                self.stop_all(v, out);
            }
            return;
        }
        let p_star = 1.0 / busiest;
        // Every flow of k at P̂*/m_k; the spare u_l = C_l − Σ_k n_k(l) P̂*/m_k
        // replaces Σ_k ĉ_k(l) in `sum`.
        self.sum.copy_from_slice(caps);
        for g in 0..v.groups.len() {
            let r = p_star / self.speed[g];
            self.speed[g] = r;
            for &(l, n) in self.counts.get(v, g) {
                let u = &mut self.sum[l as usize];
                *u = (*u - n as f64 * r).max(0.0);
            }
        }
        // Backfilling: every flow gets min over its links of u_l / N_l, all from
        // the same u; flows on the same path get the same, so work per path.
        self.path_extra.resize(fab.num_paths(), 0.0);
        if out.delta_ok && self.backfill_rounds == 1 {
            self.backfill_dirty(v);
            self.answer_delta(v, out);
            return;
        }
        for &p in v.active_paths {
            self.path_extra[p as usize] = 0.0;
        }
        for _ in 0..self.backfill_rounds {
            self.extra.clear();
            let mut any = false;
            for &p in v.active_paths {
                let mut w = f64::INFINITY;
                for &l in fab.path(p) {
                    let li = l as usize;
                    w = w.min(avail(&self.sum, caps, li) / self.flows_on[li]);
                }
                let w = if w.is_finite() { w } else { 0.0 };
                any |= w > 0.0;
                self.extra.push(w);
            }
            if !any {
                break;
            }
            for (&p, &w) in v.active_paths.iter().zip(&self.extra) {
                if w > 0.0 {
                    self.path_extra[p as usize] += w;
                    let n = v.path_count[p as usize] as f64;
                    for &l in fab.path(p) {
                        let u = &mut self.sum[l as usize];
                        *u = (*u - n * w).max(0.0);
                    }
                }
            }
        }
        if out.delta_ok {
            self.answer_delta(v, out);
            return;
        }
        for (g, grp) in v.groups.iter().enumerate() {
            let r = self.speed[g];
            for i in grp.range() {
                out.rates[i] = r + self.path_extra[v.flow_path[v.active[i] as usize] as usize];
            }
        }
    }
}

impl NcDrf {
    /// One backfilling round, under delta decisions: the extra
    /// `min_{l ∈ p} u_l / N_l` computed again only for the paths on a link
    /// whose `u_l` or `N_l` moved (bit for bit) and the paths whose flows
    /// changed; every other path's is what the full round would give again.
    fn backfill_dirty(&mut self, v: &NonClairvoyantView) {
        let fab = v.fabric;
        let caps = &fab.capacities;
        let d = &mut self.delta;
        d.call = d.call.wrapping_add(1).max(1);
        d.dirty.clear();
        d.track_paths(v);
        for l in 0..fab.num_links() {
            let (u, n) = (self.sum[l], self.flows_on[l]);
            if u.to_bits() != d.last_u[l].to_bits() || n.to_bits() != d.last_n[l].to_bits() {
                d.last_u[l] = u;
                d.last_n[l] = n;
                for j in 0..d.link_paths[l].len() {
                    let p = d.link_paths[l][j];
                    d.mark(p);
                }
            }
        }
        for &p in &d.dirty {
            let mut w = f64::INFINITY;
            for &l in fab.path(p) {
                let li = l as usize;
                w = w.min(avail(&self.sum, caps, li) / self.flows_on[li]);
            }
            self.path_extra[p as usize] = if w.is_finite() && w > 0.0 { w } else { 0.0 };
        }
    }

    /// The delta form of "every flow at 0" (no link carries a flow): each
    /// active flow listed at 0, and everything listed again at the next call.
    fn stop_all(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        let d = &mut self.delta;
        d.paths.sync(v);
        d.last_speed.iter_mut().for_each(|x| *x = f64::NAN);
        d.last_extra.iter_mut().for_each(|x| *x = f64::NAN);
        // The per-link path lists are built again from the active paths.
        d.link_paths.iter_mut().for_each(Vec::clear);
        d.slots.iter_mut().for_each(Vec::clear);
        d.last_u.iter_mut().for_each(|x| *x = f64::NAN);
        d.last_n.iter_mut().for_each(|x| *x = f64::NAN);
        out.by_flow = true;
        out.flow_rates.clear();
        out.flow_rates.extend(v.active.iter().map(|&f| (f, 0.0)));
    }

    /// The delta form of the answer: every flow whose rate may have moved
    /// (its coflow's speed or its path's extra moved, bit for bit, or it
    /// started), each once, with the rate the full form writes.
    fn answer_delta(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        let d = &mut self.delta;
        d.paths.sync(v);
        // `backfill_dirty` started this call (one round); else start it here
        // and compare every active path's extra.
        let every = self.backfill_rounds != 1;
        if every {
            d.call = d.call.wrapping_add(1).max(1);
        }
        let (nc, np) = (v.coflow_started.len(), v.fabric.num_paths());
        if d.last_speed.len() < nc {
            d.last_speed.resize(nc, f64::NAN);
            d.speed.resize(nc, 0.0);
            d.listed.resize(nc, 0);
        }
        if d.last_extra.len() < np {
            d.last_extra.resize(np, f64::NAN);
            d.path_listed.resize(np, 0);
        }
        out.by_flow = true;
        out.flow_rates.clear();
        let extra = &self.path_extra;
        for (g, grp) in v.groups.iter().enumerate() {
            let (k, r) = (grp.coflow as usize, self.speed[g]);
            d.speed[k] = r;
            if d.last_speed[k].to_bits() != r.to_bits() {
                d.last_speed[k] = r;
                d.listed[k] = d.call;
                for &f in &v.active[grp.range()] {
                    let p = v.flow_path[f as usize] as usize;
                    out.flow_rates.push((f, r + extra[p]));
                }
            }
        }
        let paths = if every { v.active_paths } else { &d.dirty[..] };
        for &p in paths {
            let (pi, e) = (p as usize, extra[p as usize]);
            if d.last_extra[pi].to_bits() != e.to_bits() {
                d.last_extra[pi] = e;
                d.path_listed[pi] = d.call;
                for &f in d.paths.flows(p) {
                    let k = v.flow_coflow[f as usize] as usize;
                    if d.listed[k] != d.call {
                        out.flow_rates.push((f, d.speed[k] + e));
                    }
                }
            }
        }
        for &f in v.started {
            let (k, p) = (v.flow_coflow[f as usize] as usize, v.flow_path[f as usize] as usize);
            if d.paths.holds(f) && d.listed[k] != d.call && d.path_listed[p] != d.call {
                out.flow_rates.push((f, d.speed[k] + extra[p]));
            }
        }
    }
}

pub const PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "backfill_rounds",
    default: "1",
    help: "backfilling passes after the DRF stage (0: none; 1: the paper's; more approach the spare's fixed point)",
}];

fn build(p: &Params) -> Result<AnyPolicy, ModelError> {
    non_clairvoyant(NcDrf::new(p.usize_in("backfill_rounds", 0, 1000)?))
}

pub const SPEC: PolicySpec = PolicySpec {
    name: "ncdrf",
    info: Info::NonClairvoyant,
    knows: "",
    summary: "DRF on per-link flow counts, then backfilling (NC-DRF)",
    rule: "DRF on per-link flow counts (every flow of a coflow at the same rate), then backfilling",
    paper: "NC-DRF: Algorithm 1 of ../shared/papers/001_741244c1eb5babc6.txt",
    params: PARAMS,
    needs: &[],
    build,
    example_ccts: [0.10175, 0.03125, 0.0625],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{close, ncdrf_fig3, Case};

    fn rates(c: &Case, rounds: usize) -> Vec<f64> {
        let mut d = Decision::default();
        d.reset(c.active.len());
        NcDrf::new(rounds).decide(&c.non_clairvoyant(), &mut d);
        d.rates
    }

    #[test]
    fn the_two_coflows_of_fig_3_get_the_drf_allocation() {
        // NC-DRF paper, Fig. 3/4: four links of capacity 1 (link-1..4 = up0, up1,
        // down0, down1). A: up0→down1, up1→down1 (counts ⟨1,1,0,2⟩, n̄ = 2,
        // ĉ = ⟨½,½,0,1⟩). B: up1→down0, up1→down1 (⟨0,2,1,1⟩, ĉ = ⟨0,1,½,½⟩).
        // Σ ĉ = ⟨½, 3/2, ½, 3/2⟩ → P̂* = 2/3; every flow gets P̂*/2 = 1/3, as DRF
        // does here (the paper: "the same scheduling behavior as DRF"). up1 and
        // down1 are full (3 × 1/3), and every flow crosses one: nothing to backfill.
        let c = ncdrf_fig3();
        let third = 1.0 / 3.0;
        close(&rates(&c, 1), &[third; 4]);
        close(&rates(&c, 0), &[third; 4]);
    }

    #[test]
    fn backfilling_splits_spare_capacity_by_flow_counts() {
        // 4 ports, C = 1. A: 0→1, 0→2 (up0: 2 flows → n̄ = 2, ĉ(down1) = ĉ(down2) = ½).
        // B: 3→1 (n̄ = 1). Σ ĉ(down1) = ½ + 1 = 3/2 → P̂* = 2/3: A's flows 1/3, B's 2/3.
        // Spare u: up0 1/3, down1 0, down2 2/3, up3 1/3; N: up0 2, down1 2, down2 1.
        // Round 1: 0→1 min(1/6, 0) = 0; 0→2 min(1/6, 2/3) = 1/6; 3→1 0.
        // Round 2: up0 has 1/6 left → 0→2 gets min(1/12, 1/2) = 1/12 more.
        let c = Case::new(
            4,
            1.0,
            &[
                (0, 0, 1, 1.0, 0.0),
                (0, 0, 2, 1.0, 0.0),
                (1, 3, 1, 1.0, 0.0),
            ],
        );
        close(&rates(&c, 0), &[1.0 / 3.0, 1.0 / 3.0, 2.0 / 3.0]);
        close(&rates(&c, 1), &[1.0 / 3.0, 0.5, 2.0 / 3.0]);
        close(&rates(&c, 2), &[1.0 / 3.0, 7.0 / 12.0, 2.0 / 3.0]);
    }

    #[test]
    fn unequal_capacities_keep_every_link_within_capacity() {
        // 2 ports; capacities up0 = 4, up1 = 1, down0 = 1, down1 = 2. One coflow
        // 0→1, 1→1: ν(up0) = 1/4, ν(up1) = 1, ν(down1) = 2/2 = 1 → m = 1, P̂* = 1
        // (Σ ĉ peaks at 1 on up1 and down1): each flow gets 1. down1 carries 2 = C.
        let mut c = Case::new(2, 1.0, &[(0, 0, 1, 1.0, 0.0), (0, 1, 1, 1.0, 0.0)]);
        c.fabric.capacities = vec![4.0, 1.0, 1.0, 2.0];
        close(&rates(&c, 1), &[1.0, 1.0]);
    }
}
