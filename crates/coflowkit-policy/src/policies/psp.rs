//! `psp`: FairCloud's Proportional Sharing at the network level, per-link form
//! (PS-P), with coflows as the tenants, then the spare capacity. See
//! docs/policies/psp.md.
//!
//! ```text
//! K_l     = number of coflows with active flows on link l
//! n_k(l)  = active flows of coflow k on l
//! s_f     = min_{l ∈ f} C_l / (K_l · n_k(l))        stage 1 (per-link equal shares)
//! u_l     = C_l − Σ_{f ∋ l} s_f,   N_l = active flows on l
//! r_f     = s_f                                     spare=none
//!         = s_f + min_{l ∈ f} u_l / N_l             spare=onepass (NC-DRF's backfill)
//!         = s_f + MM(active flows; u)_f             spare=maxmin (full work conservation)
//! ```

use crate::support::loads::LinkCounts;
use crate::support::pathflows::PathFlows;
use crate::decision::Decision;
use crate::policy::NonClairvoyantPolicy;
use crate::view::NonClairvoyantView;
use coflowkit_alloc::{avail, MaxMin};
use crate::policy::{AnyPolicy, Info};
use crate::spec::{non_clairvoyant, PolicySpec};
use crate::params::{ParamSpec, Params};
use coflowkit_model::ModelError;

/// What happens to the capacity the per-link shares leave unused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spare {
    /// Left unused (the per-link shares alone, Fig. 4a of the NC-DRF paper).
    None,
    /// One pass of NC-DRF's backfill: each flow adds `min_l u_l / N_l`.
    OnePass,
    /// Max-min fair over all active flows (fully work-conserving).
    MaxMin,
}

/// Which coflows a link's capacity is divided among in stage 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tenants {
    /// Those with active flows on the link (PS-P's per-link fairness).
    Link,
    /// Every active coflow, on every link (an alternative reading, kept to test
    /// what the NC-DRF paper's PS-P numbers imply; see docs/policies/psp.md).
    All,
    /// A host's two access links (first link of the flows it sends, last link of
    /// those it receives) are divided among the coflows present at the host,
    /// sending or receiving; other links as `Link` (also an alternative reading).
    Host,
}

pub struct Psp {
    spare: Spare,
    tenants: Tenants,
    counts: LinkCounts,
    coflows_on: Vec<f64>,
    /// Per host: its uplink and downlink as seen on the active flows (`Host`).
    access: Vec<[u32; 2]>,
    stamp: Vec<u32>,
    /// n_k(l) of the group being served (zero elsewhere); N_l in the one pass.
    mine: Vec<f64>,
    /// Σ_k S_k(l), then the spare u_l.
    residual: Vec<f64>,
    mm: MaxMin,
    path_flows: Vec<u32>,
    per_path: Vec<f64>,
    rate_of: Vec<f64>,
    kept: Kept,
}

/// Stage 1 kept per coflow (under every driver): a coflow's shares `s_f`
/// depend only on `K_l` and `n_k(l)` on its links, so they are computed again
/// only when one of those moved. Under a driver that takes delta decisions the answer then lists
/// only the flows of coflows computed again, the flows on paths whose spare
/// share moved, and nothing else (each flow's rate is `s_f + e(path)`, the
/// full form's, bit for bit).
#[derive(Default)]
struct Kept {
    call: u32,
    /// Per flow (global index): `s_f`.
    share: Vec<f64>,
    /// Per coflow: `(coflow_started, active count)` and `K_l` on each of its
    /// links (aligned with its `LinkCounts` entry) when computed, `S_k(l)`
    /// (Σ of its flows' `s_f` on each link), and the call that computed it.
    key: Vec<(u32, u32)>,
    tenants: Vec<Vec<f64>>,
    sums: Vec<Vec<f64>>,
    listed: Vec<u32>,
    /// Delta form: per path its spare share at the last call, and its flows.
    last_extra: Vec<f64>,
    paths: PathFlows,
}

impl Psp {
    pub fn new(spare: Spare, tenants: Tenants) -> Self {
        Psp {
            spare,
            tenants,
            counts: LinkCounts::default(),
            coflows_on: Vec::new(),
            access: Vec::new(),
            stamp: Vec::new(),
            mine: Vec::new(),
            residual: Vec::new(),
            mm: MaxMin::new(),
            path_flows: Vec::new(),
            per_path: Vec::new(),
            rate_of: Vec::new(),
            kept: Kept::default(),
        }
    }

    /// Stage 1 for group `g` if its inputs moved (the same flows, named by
    /// `(coflow_started, active count)`, and the same `K_l` on its links give
    /// the same shares): each flow's `s_f` and the coflow's `S_k(l)`; true
    /// when computed.
    fn stage1(&mut self, v: &NonClairvoyantView, g: usize) -> bool {
        let fab = v.fabric;
        let caps = &fab.capacities;
        let k = v.groups[g].coflow as usize;
        let kp = &mut self.kept;
        let key = (v.coflow_started[k], v.groups[g].end - v.groups[g].start);
        let counts = self.counts.get(v, g);
        let same = kp.key[k] == key
            && kp.tenants[k].len() == counts.len()
            && counts
                .iter()
                .zip(&kp.tenants[k])
                .all(|(&(l, _), &t)| self.coflows_on[l as usize].to_bits() == t.to_bits());
        if same {
            return false;
        }
        kp.key[k] = key;
        kp.tenants[k].clear();
        kp.tenants[k].extend(counts.iter().map(|&(l, _)| self.coflows_on[l as usize]));
        for &(l, n) in counts {
            self.mine[l as usize] = n as f64;
        }
        // S_k(l) accumulated in `rate_of` (per link here), in flow order.
        for &(l, _) in counts {
            self.rate_of[l as usize] = 0.0;
        }
        for &f in &v.active[v.groups[g].range()] {
            let p = v.flow_path[f as usize];
            let mut sf = f64::INFINITY;
            for &l in fab.path(p) {
                let li = l as usize;
                sf = sf.min(caps[li] / (self.coflows_on[li] * self.mine[li]));
            }
            let sf = if sf.is_finite() { sf } else { 0.0 };
            kp.share[f as usize] = sf;
            for &l in fab.path(p) {
                self.rate_of[l as usize] += sf;
            }
        }
        kp.sums[k].clear();
        for &(l, _) in counts {
            kp.sums[k].push(self.rate_of[l as usize]);
            self.mine[l as usize] = 0.0;
        }
        true
    }
}

impl NonClairvoyantPolicy for Psp {
    fn decide(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        let fab = v.fabric;
        let caps = &fab.capacities;
        let nl = fab.num_links();
        self.coflows_on.clear();
        self.coflows_on.resize(nl, 0.0);
        self.mine.clear();
        self.mine.resize(nl, 0.0);
        // K_l: coflows present on each link (or every active coflow).
        match self.tenants {
            Tenants::Link => {
                for g in 0..v.groups.len() {
                    for &(l, _) in self.counts.get(v, g) {
                        self.coflows_on[l as usize] += 1.0;
                    }
                }
            }
            Tenants::All => self.coflows_on.fill(v.groups.len() as f64),
            Tenants::Host => self.count_per_host(v),
        }
        let delta = out.delta_ok && self.spare != Spare::MaxMin;
        let (nc, nf) = (v.coflow_started.len(), v.flow_path.len());
        let kp = &mut self.kept;
        kp.call = kp.call.wrapping_add(1).max(1);
        if kp.key.len() < nc {
            kp.key.resize(nc, (u32::MAX, u32::MAX));
            kp.tenants.resize(nc, Vec::new());
            kp.sums.resize(nc, Vec::new());
            kp.listed.resize(nc, 0);
        }
        if kp.share.len() < nf {
            kp.share.resize(nf, 0.0);
        }
        self.rate_of.resize(fab.num_paths().max(nl), 0.0);
        // Stage 1, per coflow; u_l = C_l − Σ_k S_k(l), summed in coflow order.
        self.residual.clear();
        self.residual.resize(nl, 0.0);
        for g in 0..v.groups.len() {
            let k = v.groups[g].coflow as usize;
            if self.stage1(v, g) {
                self.kept.listed[k] = self.kept.call;
            }
            for (&(l, _), &x) in self.counts.get(v, g).iter().zip(&self.kept.sums[k]) {
                self.residual[l as usize] += x;
            }
        }
        for (u, &c) in self.residual.iter_mut().zip(caps) {
            *u = (c - *u).max(0.0);
        }
        let share = &self.kept.share;
        match self.spare {
            Spare::None => {
                for &p in v.active_paths {
                    self.rate_of[p as usize] = 0.0;
                }
            }
            Spare::OnePass => self.one_pass(v),
            Spare::MaxMin => {
                for (r, &f) in out.rates.iter_mut().zip(v.active) {
                    *r = share[f as usize];
                }
                self.spare_max_min(v, out);
                return;
            }
        }
        if delta {
            self.answer_delta(v, out);
            return;
        }
        let share = &self.kept.share;
        for (r, &f) in out.rates.iter_mut().zip(v.active) {
            *r = share[f as usize] + self.rate_of[v.flow_path[f as usize] as usize];
        }
    }
}

impl Psp {
    /// `K_l` for `Tenants::Host`: per link as `Link`, then each host's access
    /// links take the number of coflows with an active flow from or to the host.
    fn count_per_host(&mut self, v: &NonClairvoyantView) {
        let fab = v.fabric;
        for g in 0..v.groups.len() {
            for &(l, _) in self.counts.get(v, g) {
                self.coflows_on[l as usize] += 1.0;
            }
        }
        let hosts = fab.ports() as usize;
        self.access.clear();
        self.access.resize(hosts, [u32::MAX; 2]);
        for &f in v.active {
            let path = fab.path(v.flow_path[f as usize]);
            if let (Some(&a), Some(&b)) = (path.first(), path.last()) {
                self.access[v.flow_src[f as usize] as usize][0] = a;
                self.access[v.flow_dst[f as usize] as usize][1] = b;
            }
        }
        for l in self.access.iter().flatten().filter(|&&l| l != u32::MAX) {
            self.coflows_on[*l as usize] = 0.0;
        }
        self.stamp.clear();
        self.stamp.resize(hosts, u32::MAX);
        for (g, group) in v.groups.iter().enumerate() {
            for &f in &v.active[group.range()] {
                for h in [v.flow_src[f as usize], v.flow_dst[f as usize]] {
                    let h = h as usize;
                    if self.stamp[h] != g as u32 {
                        self.stamp[h] = g as u32;
                        for l in self.access[h].into_iter().filter(|&l| l != u32::MAX) {
                            self.coflows_on[l as usize] += 1.0;
                        }
                    }
                }
            }
        }
    }

    /// NC-DRF's one-pass backfill on the spare `u` left by stage 1: every flow adds
    /// `min_{l ∈ f} u_l / N_l`, all computed from the same `u` (per path: flows on
    /// one path get the same), in `rate_of[p]`.
    fn one_pass(&mut self, v: &NonClairvoyantView) {
        let fab = v.fabric;
        let caps = &fab.capacities;
        // N_l, in `mine` (zero after stage 1)
        for &p in v.active_paths {
            let n = v.path_count[p as usize] as f64;
            for &l in fab.path(p) {
                self.mine[l as usize] += n;
            }
        }
        for &p in v.active_paths {
            let mut w = f64::INFINITY;
            for &l in fab.path(p) {
                let li = l as usize;
                w = w.min(avail(&self.residual, caps, li) / self.mine[li]);
            }
            self.rate_of[p as usize] = if w.is_finite() { w } else { 0.0 };
        }
        for &p in v.active_paths {
            for &l in fab.path(p) {
                self.mine[l as usize] = 0.0;
            }
        }
    }

    /// Stage 2 for `spare=maxmin`: the spare capacity, max-min fair over all
    /// active flows; flows on the same path get the same share, so solve per
    /// path.
    fn spare_max_min(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        let fab = v.fabric;
        self.path_flows.clear();
        self.path_flows
            .extend(v.active_paths.iter().map(|&p| v.path_count[p as usize]));
        self.per_path.clear();
        self.per_path.resize(v.active_paths.len(), 0.0);
        self.mm.solve_counted(
            fab,
            &mut self.residual,
            v.active_paths,
            &self.path_flows,
            &mut self.per_path,
        );
        self.rate_of.resize(fab.num_paths(), 0.0);
        for (&p, &x) in v.active_paths.iter().zip(&self.per_path) {
            self.rate_of[p as usize] = x;
        }
        for (r, &f) in out.rates.iter_mut().zip(v.active) {
            *r += self.rate_of[v.flow_path[f as usize] as usize];
        }
    }

    /// The delta form of the answer: the flows of the coflows whose stage 1
    /// was computed again, then the flows on the paths whose spare share moved
    /// (bit for bit), each once, at `s_f + e(path)`. A flow that started is in
    /// the first set (its coflow's counts moved).
    fn answer_delta(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        let kp = &mut self.kept;
        kp.paths.sync(v);
        let np = v.fabric.num_paths();
        if kp.last_extra.len() < np {
            kp.last_extra.resize(np, f64::NAN);
        }
        out.by_flow = true;
        out.flow_rates.clear();
        let extra = &self.rate_of;
        for grp in v.groups {
            if kp.listed[grp.coflow as usize] == kp.call {
                for &f in &v.active[grp.range()] {
                    let p = v.flow_path[f as usize] as usize;
                    out.flow_rates.push((f, kp.share[f as usize] + extra[p]));
                }
            }
        }
        for &p in v.active_paths {
            let (pi, e) = (p as usize, extra[p as usize]);
            if kp.last_extra[pi].to_bits() != e.to_bits() {
                kp.last_extra[pi] = e;
                for &f in kp.paths.flows(p) {
                    if kp.listed[v.flow_coflow[f as usize] as usize] != kp.call {
                        out.flow_rates.push((f, kp.share[f as usize] + e));
                    }
                }
            }
        }
    }
}

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "spare",
        default: "onepass",
        help: "the capacity the per-link shares leave: none (unused, Fig. 4a), onepass (NC-DRF's one-pass backfill, the papers' model) or maxmin (max-min over all flows, fully work-conserving)",
    },
    ParamSpec {
        name: "tenants",
        default: "link",
        help: "whom a link is divided among: link (the coflows with flows on it, PS-P), all (every active coflow) or host (a host's access links among the coflows at the host); all and host are alternative readings tested against the NC-DRF paper's numbers",
    },
    ParamSpec {
        name: "work_conserving",
        default: "",
        help: "older name: true = spare=maxmin, false = spare=none",
    },
];

fn build(p: &Params) -> Result<AnyPolicy, ModelError> {
    let mut spare = match p.choice("spare", &["none", "onepass", "maxmin"])? {
        "none" => Spare::None,
        "maxmin" => Spare::MaxMin,
        _ => Spare::OnePass,
    };
    match p.text("work_conserving") {
        "" => {}
        wc @ ("true" | "false") => {
            if p.text("spare") != PARAMS[0].default {
                return Err(ModelError::param(
                    "param",
                    format!(
                        "psp: give spare= or its older name work_conserving=, not both \
                         (got spare={} and work_conserving={wc})",
                        p.text("spare")
                    ),
                ));
            }
            spare = if wc == "true" { Spare::MaxMin } else { Spare::None };
        }
        other => {
            return Err(ModelError::param(
                "param",
                format!("psp: work_conserving={other} is not true or false"),
            ))
        }
    }
    let tenants = match p.choice("tenants", &["link", "all", "host"])? {
        "all" => Tenants::All,
        "host" => Tenants::Host,
        _ => Tenants::Link,
    };
    non_clairvoyant(Psp::new(spare, tenants))
}

pub const SPEC: PolicySpec = PolicySpec {
    name: "psp",
    info: Info::NonClairvoyant,
    knows: "",
    summary: "per-link equal shares per coflow, then a one-pass spare backfill (FairCloud PS-P)",
    rule: "per link, equal shares per coflow split over its flows; a flow takes its smaller share; spare backfilled in one pass (or none, or max-min)",
    paper: "FairCloud PS-P: Popa et al., SIGCOMM'12, as used by NC-DRF and Coflex",
    params: PARAMS,
    needs: &[],
    build,
    example_ccts: [0.10175, 0.03125, 0.0625],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{close, ncdrf_fig3, Case};

    fn rates(c: &Case, spare: Spare) -> Vec<f64> {
        let mut d = Decision::default();
        d.reset(c.active.len());
        Psp::new(spare, Tenants::Link).decide(&c.non_clairvoyant(), &mut d);
        d.rates
    }

    #[test]
    fn per_link_shares_of_fig_4a() {
        // NC-DRF paper, Fig. 4a: A and B each get 0.5 of up1 and of down1. A splits
        // its 0.5 of down1 over its two flows: 0.25 each (the 0.5 of up1 is half
        // wasted). B splits its 0.5 of up1 over its two flows: 0.25 each. Every
        // flow runs at 0.25; up1 and down1 carry 0.75.
        close(&rates(&ncdrf_fig3(), Spare::None), &[0.25; 4]);
    }

    #[test]
    fn spare_capacity_is_shared_max_min() {
        // Spare after stage 1: up0 0.75, up1 0.25, down0 0.75, down1 0.25. up1 carries
        // A's up1→down1 and both B flows; down1 carries both A flows and B's
        // up1→down1: each offers 0.25 / 3 = 1/12, the smallest share, and every flow
        // crosses one of them: all get 1/12 more → 1/3 each, both links full.
        close(&rates(&ncdrf_fig3(), Spare::MaxMin), &[1.0 / 3.0; 4]);
        // One pass gives the same here: every flow's smallest u_l / N_l is 0.25/3.
        close(&rates(&ncdrf_fig3(), Spare::OnePass), &[1.0 / 3.0; 4]);
    }

    /// 5 ports, C = 12. A: 0→1, 2→1; B: 2→3; C: 4→1.
    fn three_coflows_on_five_ports() -> Case {
        Case::new(
            5,
            12.0,
            &[
                (0, 0, 1, 1.0, 0.0),
                (0, 2, 1, 1.0, 0.0),
                (1, 2, 3, 1.0, 0.0),
                (2, 4, 1, 1.0, 0.0),
            ],
        )
    }

    #[test]
    fn one_pass_divides_a_links_spare_by_all_its_flows() {
        // 5 ports, C = 12. A: 0→1, 2→1; B: 2→3; C: 4→1. Stage 1: down1 has K = 2 (A,
        // C): 6 each, A's two flows 3 each, C's flow 6; up2 has A's 2→1 (3) and B's
        // 2→3 (min(12/2, 12) = 6). Spare: up2 3, down1 0, down3 6, up0 9, up4 6.
        // Only B's flow can use spare (every other flow crosses down1). One pass
        // divides up2's 3 by its two flows: B gets 6 + 1.5; max-min gives B all 3.
        let c = three_coflows_on_five_ports();
        close(&rates(&c, Spare::None), &[3.0, 3.0, 6.0, 6.0]);
        close(&rates(&c, Spare::OnePass), &[3.0, 3.0, 7.5, 6.0]);
        close(&rates(&c, Spare::MaxMin), &[3.0, 3.0, 9.0, 6.0]);
    }

    #[test]
    fn tenants_all_divides_every_link_among_every_active_coflow() {
        // The case above with K = 3 (A, B, C active) on every link: A's flows get
        // min(12/3 on up0 or up2, 12/(3·2) on down1, where A has two) = 2; B's 2→3
        // min(4, 4) = 4; C's 4→1 min(4, 12/(3·1)) = 4. Per link (K_down1 = 2, the
        // others 1): 3, 3, 6, 6.
        let c = three_coflows_on_five_ports();
        let mut d = Decision::default();
        d.reset(c.active.len());
        Psp::new(Spare::None, Tenants::All).decide(&c.non_clairvoyant(), &mut d);
        close(&d.rates, &[2.0, 2.0, 4.0, 4.0]);
        close(&rates(&c, Spare::None), &[3.0, 3.0, 6.0, 6.0]);
    }

    #[test]
    fn tenants_host_divides_a_hosts_links_among_the_coflows_at_the_host() {
        // The five-port case plus D: 1→0. Coflows at each host: h0 {A, D}, h1 {A, C,
        // D}, h2 {A, B}, h3 {B}, h4 {C}. A's 0→1: min(12/(2·1) on up0, 12/(3·2) on
        // down1, where A has two flows) = 2; A's 2→1: min(12/2, 2) = 2; B's 2→3:
        // min(12/2, 12/1) = 6; C's 4→1: min(12/1, 12/3) = 4; D's 1→0: min(12/3,
        // 12/2) = 4. Per link (up1 and down0 carry D alone) D would get 12.
        let c = Case::new(
            5,
            12.0,
            &[
                (0, 0, 1, 1.0, 0.0),
                (0, 2, 1, 1.0, 0.0),
                (1, 2, 3, 1.0, 0.0),
                (2, 4, 1, 1.0, 0.0),
                (3, 1, 0, 1.0, 0.0),
            ],
        );
        let mut d = Decision::default();
        d.reset(c.active.len());
        Psp::new(Spare::None, Tenants::Host).decide(&c.non_clairvoyant(), &mut d);
        close(&d.rates, &[2.0, 2.0, 6.0, 4.0, 4.0]);
        close(&rates(&c, Spare::None), &[3.0, 3.0, 6.0, 6.0, 12.0]);
    }

    #[test]
    fn work_conserving_is_the_older_name_of_spare() {
        let build = |kv: &[(&str, &str)]| {
            let p = kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            crate::build("psp", &p)
        };
        assert!(build(&[("work_conserving", "true")]).is_ok());
        assert!(build(&[("spare", "none")]).is_ok());
        let e = build(&[("spare", "none"), ("work_conserving", "true")]).err().unwrap();
        assert!(e.to_string().contains("not both"), "{e}");
        let e = build(&[("work_conserving", "maybe")]).err().unwrap();
        assert!(e.to_string().contains("work_conserving=maybe"), "{e}");
    }

    #[test]
    fn a_coflow_with_many_flows_gets_no_more_of_a_link() {
        // 3 ports, C = 12. Coflow 0: three flows 0→2 (same path); coflow 1: 1→2.
        // down2: K = 2 → 6 per coflow; coflow 0's three flows get 2 each, coflow 1's
        // flow 6. No spare on down2, so stage 2 adds nothing. (Per-flow fairness
        // would give 3 to each of the four flows.)
        let c = Case::new(
            3,
            12.0,
            &[
                (0, 0, 2, 1.0, 0.0),
                (0, 0, 2, 1.0, 0.0),
                (0, 0, 2, 1.0, 0.0),
                (1, 1, 2, 1.0, 0.0),
            ],
        );
        for spare in [Spare::None, Spare::OnePass, Spare::MaxMin] {
            close(&rates(&c, spare), &[2.0, 2.0, 2.0, 6.0]);
        }
    }
}
