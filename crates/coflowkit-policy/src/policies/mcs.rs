//! `mcs`: Multi-attribute Coflow Scheduling without prior knowledge (Wang et al.,
//! IEEE/ACM ToN 2018, Algorithm 2). See docs/policies/mcs.md.
//!
//! ```text
//! class(k)    = i  such that Δ_{i-1} ≤ w'_k < Δ_i        (Δ_0 = 0, Δ_n = ∞)
//! initial     q0(k) = p_class(k)                          (SNCF, Algorithm 1)
//! narrow      w'_k ≤ Δ_w: attribute = bytes sent by k       thresholds θ^n_q = θn_1 · En^(q-1)
//! wide        w'_k > Δ_w: attribute = largest bytes sent by one flow of k (length sent)
//!                                                          thresholds θ^w_q = θw_1 · Ew^(q-1)
//! queue(k)    = max(q0(k), min { q : attribute < θ_q })   (demoted from Q_q once it crosses θ_q)
//! order       (queue, arrival, id); strict priority across queues, FIFO within one
//! rates       max-min fair inside a coflow, on what earlier coflows left
//! wake-ups    exact crossings: CoflowSent (narrow), FlowSent of the flow that gets
//!             there first (wide)
//! ```
//!
//! `w'` is the width the scheduler believes: the true width (`width=exact`), a
//! fraction `width_unknown` of coflows (drawn once with `seed`) whose width is
//! unknown, which start in the highest-priority queue and are split narrow/wide by
//! the flows seen so far, or `width_scale · w` (the paper's Fig. 16).

use crate::policies::pias::first_crossing;
use crate::support::priority::{CoflowPriority, CountShare};
use crate::support::thresholds::Thresholds;
use crate::decision::{Decision, Wakeup};
use crate::policy::NonClairvoyantPolicy;
use crate::view::NonClairvoyantView;
use coflowkit_model::Pcg32;
use crate::policy::{AnyPolicy, Info};
use crate::spec::{non_clairvoyant, PolicySpec, MIB};
use crate::params::{ParamSpec, Params};
use coflowkit_model::ModelError;

/// The parameters of [`Mcs`] (docs/policies/mcs.md has the defaults and their source).
#[derive(Debug, Clone, PartialEq)]
pub struct McsConfig {
    /// Class boundaries `Δ_1 < … < Δ_{n-1}` (widths).
    pub deltas: Vec<f64>,
    /// Initial queue of each of the `n` classes, 0-based.
    pub priorities: Vec<usize>,
    pub queues: usize,
    /// `Δ_w`: a coflow of (believed) width ≤ this is narrow.
    pub narrow_width: f64,
    pub narrow_first_bytes: f64,
    pub narrow_multiplier: f64,
    pub wide_first_bytes: f64,
    pub wide_multiplier: f64,
    /// Fraction of coflows whose width is unknown.
    pub width_unknown: f64,
    /// The scheduler sees `width_scale · w`.
    pub width_scale: f64,
    pub seed: u64,
    /// Rates inside the order: max-min per coflow, or CoflowSim's per-coflow
    /// count share ([`CountShare`], `share=coflowsim`).
    pub coflowsim_share: bool,
}

pub struct Mcs {
    cfg: McsConfig,
    narrow: Thresholds,
    wide: Thresholds,
    prio: CoflowPriority,
    count: CountShare,
    /// Per coflow: width unknown to the scheduler (drawn at the first call).
    unknown: Vec<bool>,
    /// Per coflow: largest bytes sent by one of its flows, finished flows included.
    length_sent: Vec<f64>,
    /// Active flows at the previous call (to see which finished since, for a
    /// driver that does not list them).
    prev_active: Vec<u32>,
    /// Per coflow: whether the previous call gave one of its flows a positive
    /// rate, and its bytes sent then (bits). Its flows can have sent more since
    /// only if it had a rate, or, on a real network, if its bytes sent grew.
    moved: Vec<bool>,
    sent_then: Vec<u64>,
    keyed: Vec<(usize, u32, usize)>,
    order: Vec<usize>,
}

impl Mcs {
    pub fn new(cfg: McsConfig) -> Self {
        Mcs {
            narrow: Thresholds::new(cfg.queues, cfg.narrow_first_bytes, cfg.narrow_multiplier),
            wide: Thresholds::new(cfg.queues, cfg.wide_first_bytes, cfg.wide_multiplier),
            cfg,
            prio: CoflowPriority::default(),
            count: CountShare::default(),
            unknown: Vec::new(),
            length_sent: Vec::new(),
            prev_active: Vec::new(),
            moved: Vec::new(),
            sent_then: Vec::new(),
            keyed: Vec::new(),
            order: Vec::new(),
        }
    }

    /// The SNCF class (0-based) of a coflow of believed width `w`.
    pub fn class(&self, w: f64) -> usize {
        self.cfg.deltas.partition_point(|&d| d <= w)
    }

    fn draw_unknown(&mut self, n: usize) {
        self.unknown = vec![false; n];
        let m = (self.cfg.width_unknown * n as f64).round() as usize;
        if m == 0 {
            return;
        }
        let mut idx: Vec<usize> = (0..n).collect();
        Pcg32::new(self.cfg.seed, 0x006d_6373).shuffle(&mut idx);
        for &k in &idx[..m.min(n)] {
            self.unknown[k] = true;
        }
    }

    /// Brings `length_sent` up to date: flows that finished since the last call
    /// (their final bytes are in `sent`) and the active ones of the coflows that
    /// had a rate or sent bytes since (the others' bytes are as they were).
    /// `integrated`: the driver's bytes sent are its rates integrated (the
    /// engine, which takes delta decisions), not observations; such a driver
    /// lists the flows that finished (`v.finished`), others are found by
    /// comparing the active flows with the last call's.
    fn update_lengths(&mut self, v: &NonClairvoyantView, integrated: bool) {
        if integrated {
            for &f in v.finished {
                let k = v.flow_coflow[f as usize] as usize;
                self.length_sent[k] = self.length_sent[k].max(v.sent(f));
            }
        } else {
            self.finished_since(v);
        }
        for g in v.groups {
            let k = g.coflow as usize;
            let sent = v.coflow_sent(k as u32).to_bits();
            if self.moved[k] || sent != self.sent_then[k] {
                self.sent_then[k] = sent;
                for &f in &v.active[g.range()] {
                    // Under the engine (a delta driver) bytes move only at the
                    // rates it holds: a flow at rate 0 since the last call sent
                    // nothing since, and its bytes were counted when it last
                    // moved (its coflow was scanned at the call that stopped
                    // it). The runtime observes bytes and holds every rate at
                    // 0, so there every flow is read.
                    if !integrated || v.progress.rate[f as usize] != 0.0 {
                        self.length_sent[k] = self.length_sent[k].max(v.sent(f));
                    }
                }
            }
        }
    }

    /// `length_sent` of the flows active at the last call and not now (a
    /// driver that does not list the flows that finished); keeps this call's
    /// active flows for the next.
    fn finished_since(&mut self, v: &NonClairvoyantView) {
        let (mut i, mut j) = (0, 0);
        let (prev, cur) = (&self.prev_active, v.active);
        while i < prev.len() {
            if j < cur.len() && cur[j] < prev[i] {
                j += 1;
            } else if j < cur.len() && cur[j] == prev[i] {
                i += 1;
                j += 1;
            } else {
                let f = prev[i] as usize;
                let k = v.flow_coflow[f] as usize;
                self.length_sent[k] = self.length_sent[k].max(v.sent(f as u32));
                i += 1;
            }
        }
        self.prev_active.clear();
        self.prev_active.extend_from_slice(v.active);
    }
}

impl NonClairvoyantPolicy for Mcs {
    fn decide(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        let nc = v.coflow_width.len();
        if self.unknown.len() != nc {
            self.draw_unknown(nc);
            self.length_sent = vec![0.0; nc];
            self.moved = vec![false; nc];
            self.sent_then = vec![0; nc];
        }
        self.update_lengths(v, out.delta_ok);
        self.keyed.clear();
        let last = self.cfg.queues - 1;
        for (gi, g) in v.groups.iter().enumerate() {
            let k = g.coflow as usize;
            let (q0, w) = if self.unknown[k] {
                (0, v.coflow_started[k] as f64)
            } else {
                let w = self.cfg.width_scale * v.coflow_width[k] as f64;
                (self.cfg.priorities[self.class(w)], w)
            };
            let q = if w <= self.cfg.narrow_width {
                self.narrow.queue(v.coflow_sent(k as u32))
            } else {
                self.wide.queue(self.length_sent[k])
            };
            self.keyed.push((q0.max(q).min(last), g.coflow, gi));
        }
        self.keyed.sort_unstable();
        self.order.clear();
        self.order.extend(self.keyed.iter().map(|x| x.2));
        if self.cfg.coflowsim_share {
            self.count.begin(v);
            for &g in &self.order {
                self.count.serve(v, v.groups[g].range(), out);
            }
        } else {
            self.prio.run(v, &self.order, out);
        }
        for g in v.groups {
            self.moved[g.coflow as usize] = if self.cfg.coflowsim_share {
                out.rates[g.range()].iter().any(|&r| r > 0.0)
            } else {
                self.prio.moving(g.coflow)
            };
        }
        for &(q, k, gi) in &self.keyed {
            let ku = k as usize;
            let w = if self.unknown[ku] {
                v.coflow_started[ku] as f64
            } else {
                self.cfg.width_scale * v.coflow_width[ku] as f64
            };
            if w <= self.cfg.narrow_width {
                if let Some(bytes) = self.narrow.upper(q) {
                    out.wakeups.push(Wakeup::CoflowSent { coflow: k, bytes });
                }
            } else if let Some(t) = self.wide.upper(q).filter(|_| self.moved[ku]) {
                // (A coflow none of whose flows moves crosses nothing.)
                // The length sent crosses θ^w_q when the first flow gets there.
                // A delta decision holds only the rates that changed; the
                // priority solver has them all.
                let range = v.groups[gi].range();
                let rate = |i: usize| {
                    if self.cfg.coflowsim_share {
                        out.rates[i]
                    } else {
                        self.prio.rates_of(k)[i - range.start]
                    }
                };
                if let Some(wk) = first_crossing(v, range.clone(), rate, |_| Some(t)) {
                    out.wakeups.push(wk);
                }
            }
        }
    }
}

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec { name: "deltas", default: "10,100,1000,10000", help: "width class boundaries Δ_1..Δ_{n-1}, increasing (paper's simulation: Δ_i = 10^i)" },
    ParamSpec { name: "priorities", default: "1,2,3,4,5", help: "initial queue p_i of each of the n classes, 1-based (paper: p_i = i)" },
    ParamSpec { name: "classes", default: "", help: "file with `deltas = ...` and `priorities = ...` lines (written by `coflowkit mcs-train`)" },
    ParamSpec { name: "queues", default: "10", help: "number of queues K" },
    ParamSpec { name: "narrow_width", default: "50", help: "Δ_w: coflows of at most this width are narrow" },
    ParamSpec { name: "narrow_first_mb", default: "10", help: "θ^n_1 in MiB (narrow coflows, on bytes sent)" },
    ParamSpec { name: "narrow_multiplier", default: "10", help: "θ^n_{i+1} / θ^n_i" },
    ParamSpec { name: "wide_first_mb", default: "1", help: "θ^w_1 in MiB (wide coflows, on the largest bytes sent by one flow)" },
    ParamSpec { name: "wide_multiplier", default: "2", help: "θ^w_{i+1} / θ^w_i" },
    ParamSpec { name: "width_unknown", default: "0", help: "fraction of coflows whose width is unknown (they start in the first queue)" },
    ParamSpec { name: "width_scale", default: "1", help: "the scheduler sees width_scale × the true width" },
    ParamSpec { name: "seed", default: "1", help: "seed of the coflows drawn for width_unknown" },
    ParamSpec { name: "share", default: "maxmin", help: "rates in the order: maxmin (max-min inside each coflow) or coflowsim (CoflowSimulatorDark's one-pass per-coflow count share)" },
];

/// Reads an mcs classes file: `key = value` lines (`deltas`, `priorities`), `#`
/// comments and blank lines.
fn classes_file(path: &str) -> Result<(String, String), ModelError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ModelError::param("param", format!("mcs: classes={path}: {e}")))?;
    let (mut deltas, mut prio) = (None, None);
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |why: &str| ModelError::param("param", format!("mcs: {path}:{}: {why}", i + 1));
        let (k, v) = line
            .split_once('=')
            .ok_or_else(|| bad("expected `key = value`"))?;
        let slot = match k.trim() {
            "deltas" => &mut deltas,
            "priorities" => &mut prio,
            other => return Err(bad(&format!("unknown key '{other}' (deltas, priorities)"))),
        };
        if slot.replace(v.trim().to_string()).is_some() {
            return Err(bad(&format!("'{}' given twice", k.trim())));
        }
    }
    match (deltas, prio) {
        (Some(d), Some(p)) => Ok((d, p)),
        _ => Err(ModelError::param(
            "param",
            format!("mcs: {path}: needs both `deltas = ...` and `priorities = ...`"),
        )),
    }
}

fn build(p: &Params) -> Result<AnyPolicy, ModelError> {
    let queues = p.usize_in("queues", 1, 64)?;
    let (mut deltas_s, mut prio_s) = (
        p.text("deltas").to_string(),
        p.text("priorities").to_string(),
    );
    if !p.text("classes").is_empty() {
        if deltas_s != PARAMS[0].default || prio_s != PARAMS[1].default {
            return Err(ModelError::param(
                "param",
                "mcs: give either classes=FILE or deltas=/priorities=, not both",
            ));
        }
        (deltas_s, prio_s) = classes_file(p.text("classes"))?;
    }
    let mut m = std::collections::BTreeMap::new();
    m.insert("deltas".to_string(), deltas_s);
    m.insert("priorities".to_string(), prio_s);
    let lists = Params::new("mcs", &PARAMS[..2], m)?;
    let deltas = lists.f64_list("deltas", 0.0, 1e12)?;
    if deltas.windows(2).any(|w| w[0] >= w[1]) {
        return Err(ModelError::param(
            "param",
            format!("mcs: deltas={} must be increasing", lists.text("deltas")),
        ));
    }
    let prios = lists.f64_list("priorities", 1.0, queues as f64)?;
    if prios.len() != deltas.len() + 1 || prios.iter().any(|x| x.fract() != 0.0) {
        return Err(ModelError::param("param", format!(
            "mcs: priorities={} must be {} whole queue numbers in [1, {queues}] (one per class: one more than deltas)",
            lists.text("priorities"), deltas.len() + 1)));
    }
    non_clairvoyant(Mcs::new(McsConfig {
        deltas,
        priorities: prios.iter().map(|&x| x as usize - 1).collect(),
        queues,
        narrow_width: p.f64_in("narrow_width", 0.0, 1e12)?,
        narrow_first_bytes: p.f64_in("narrow_first_mb", 1e-6, 1e12)? * MIB,
        narrow_multiplier: p.f64_in("narrow_multiplier", 1.0 + 1e-9, 1e6)?,
        wide_first_bytes: p.f64_in("wide_first_mb", 1e-6, 1e12)? * MIB,
        wide_multiplier: p.f64_in("wide_multiplier", 1.0 + 1e-9, 1e6)?,
        width_unknown: p.f64_in("width_unknown", 0.0, 1.0)?,
        width_scale: p.f64_in("width_scale", 1e-9, 1e9)?,
        seed: p.usize_in("seed", 0, u32::MAX as usize)? as u64,
        coflowsim_share: p.choice("share", &["maxmin", "coflowsim"])? == "coflowsim",
    }))
}

pub const SPEC: PolicySpec = PolicySpec {
    name: "mcs",
    info: Info::NonClairvoyant,
    knows: "width",
    summary: "width classes for the initial queue, double thresholds (bytes narrow, length wide) (MCS)",
    rule: "width class picks the initial queue; narrow coflows demoted by bytes sent, wide ones by the largest bytes sent by a flow; FIFO within a queue",
    paper: "MCS: Algorithm 2 of ../shared/papers/002_59b639202db2f4f2.txt",
    params: PARAMS,
    needs: &[],
    build,
    example_ccts: [0.0625, 0.078125, 0.07775],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{close, Case};

    fn cfg() -> McsConfig {
        // Classes: w < 2 → class 0 (queue 0), 2 ≤ w < 4 → class 1 (queue 1),
        // w ≥ 4 → class 2 (queue 2). Narrow if w ≤ 2. θ^n = 10, 100; θ^w = 5, 10.
        McsConfig {
            deltas: vec![2.0, 4.0],
            priorities: vec![0, 1, 2],
            queues: 3,
            narrow_width: 2.0,
            narrow_first_bytes: 10.0,
            narrow_multiplier: 10.0,
            wide_first_bytes: 5.0,
            wide_multiplier: 2.0,
            width_unknown: 0.0,
            width_scale: 1.0,
            seed: 1,
            coflowsim_share: false,
        }
    }

    #[test]
    fn coflowsim_share_is_one_pass_per_coflow() {
        // One coflow (width 4: class 2, wide) with 0→1, 0→2, 0→3 and 4→1 on links of
        // 10. Max-min inside the coflow: 10/3 each from port 0, and 4→1 the 20/3
        // that 0→1 leaves on down1. CoflowSim's count share: 4→1 gets
        // min(10/1, 10/2) = 5 (two of the coflow's flows on down1).
        let c = Case::new(
            5,
            10.0,
            &[
                (0, 0, 1, 100.0, 0.0),
                (0, 0, 2, 100.0, 0.0),
                (0, 0, 3, 100.0, 0.0),
                (0, 4, 1, 100.0, 0.0),
            ],
        );
        let third = 10.0 / 3.0;
        for (share, last) in [(false, 20.0 / 3.0), (true, 5.0)] {
            let mut m = Mcs::new(McsConfig {
                coflowsim_share: share,
                ..cfg()
            });
            let mut d = Decision::default();
            d.reset(4);
            m.decide(&c.non_clairvoyant(), &mut d);
            close(&d.rates, &[third, third, third, last]);
        }
    }

    #[test]
    fn classes_follow_the_deltas() {
        let m = Mcs::new(cfg());
        assert_eq!(m.class(1.0), 0);
        assert_eq!(m.class(1.99), 0);
        assert_eq!(m.class(2.0), 1);
        assert_eq!(m.class(3.0), 1);
        assert_eq!(m.class(4.0), 2);
        assert_eq!(m.class(1e6), 2);
    }

    #[test]
    fn a_narrow_newcomer_overtakes_an_earlier_wide_one() {
        // C = 10. Coflow 0 (earlier): 3 flows 0→3, 1→3, 2→3, nothing sent: width 3 →
        // class 1 → queue 1. Coflow 1: 1 flow 0→3: width 1 → class 0 → queue 0.
        // Aalo would serve coflow 0 first (both in queue 0, FIFO); MCS serves
        // coflow 1 first: it takes down3 whole.
        let c = Case::new(
            4,
            10.0,
            &[
                (0, 0, 3, 100.0, 0.0),
                (0, 1, 3, 100.0, 0.0),
                (0, 2, 3, 100.0, 0.0),
                (1, 0, 3, 100.0, 0.0),
            ],
        );
        let mut d = Decision::default();
        d.reset(4);
        Mcs::new(cfg()).decide(&c.non_clairvoyant(), &mut d);
        close(&d.rates, &[0.0, 0.0, 0.0, 10.0]);
        // Coflow 1 (narrow, queue 0) is demoted when its bytes reach θ^n_1 = 10.
        // Coflow 0 (wide, queue 1): no flow moves, so no crossing is asked.
        assert_eq!(
            d.wakeups,
            vec![Wakeup::CoflowSent {
                coflow: 1,
                bytes: 10.0
            }]
        );
    }

    #[test]
    fn narrow_coflows_are_demoted_by_bytes_wide_ones_by_length() {
        // C = 10, 5 ports.
        // Coflow 0: 0→2, 1→2, each sent 6. Width 2: class 1 (q0 = 1), narrow; its
        //   bytes 12 ≥ θ^n_1 = 10 → queue max(1, 1) = 1.
        // Coflow 1: 0→3, 1→3, 2→3, each sent 3. Width 3: class 1 (q0 = 1), wide; its
        //   length 3 < θ^w_1 = 5 → queue max(1, 0) = 1, after coflow 0 (FIFO).
        // Coflow 2: 4→0, 4→1, 4→2, 4→4. Width 4: class 2 → queue 2.
        // Coflow 0: down2 shared → 5 each (up0, up1 keep 5). Coflow 1: down3 shared
        //   by three → 10/3 each (below the 5 left on up0, up1). Coflow 2: down2 is
        //   full → 4→2 gets 0; the other three share up4 → 10/3 each.
        let c = Case::new(
            5,
            10.0,
            &[
                (0, 0, 2, 100.0, 6.0),
                (0, 1, 2, 100.0, 6.0),
                (1, 0, 3, 100.0, 3.0),
                (1, 1, 3, 100.0, 3.0),
                (1, 2, 3, 100.0, 3.0),
                (2, 4, 0, 100.0, 0.0),
                (2, 4, 1, 100.0, 0.0),
                (2, 4, 2, 100.0, 0.0),
                (2, 4, 4, 100.0, 0.0),
            ],
        );
        let mut d = Decision::default();
        d.reset(9);
        let mut m = Mcs::new(cfg());
        m.decide(&c.non_clairvoyant(), &mut d);
        let t = 10.0 / 3.0;
        close(&d.rates, &[5.0, 5.0, t, t, t, t, t, 0.0, t]);
        // Wake-ups: coflow 0 at θ^n of queue 1 (100 B); coflow 1: the first of its
        // flows to reach θ^w of queue 1 (10 B) is flow 2 (tie, lowest index);
        // coflow 2 in the last queue asks nothing.
        assert_eq!(
            d.wakeups,
            vec![
                Wakeup::CoflowSent {
                    coflow: 0,
                    bytes: 100.0
                },
                Wakeup::FlowSent {
                    flow: 2,
                    bytes: 10.0
                },
            ]
        );
    }

    #[test]
    fn observed_bytes_demote_a_wide_coflow_on_a_driver_that_does_not_integrate() {
        // The runtime's view: bytes sent come from observations and every rate
        // is held at 0 (no delta decisions). C = 10, 5 ports.
        // Coflow 0 (earlier): 0→3, 1→3, 2→3, each sent 12. Width 3: class 1
        //   (q0 = 1), wide; its length 12 ≥ θ^w_2 = 10 → queue 2.
        // Coflow 1: 4→3, 4→1, nothing sent. Width 2: class 1, narrow → queue 1,
        //   so it goes first: up4 shared → 5 each; down3 keeps 5 for coflow 0's
        //   three flows → 5/3 each. (Were the observed bytes skipped, coflow 0
        //   would stay in queue 1 ahead of coflow 1: 10/3 each, and 4→3 0.)
        let c = Case::new(
            5,
            10.0,
            &[
                (0, 0, 3, 100.0, 12.0),
                (0, 1, 3, 100.0, 12.0),
                (0, 2, 3, 100.0, 12.0),
                (1, 4, 3, 100.0, 0.0),
                (1, 4, 1, 100.0, 0.0),
            ],
        );
        let mut d = Decision::default();
        d.reset(5);
        assert!(!d.delta_ok);
        Mcs::new(cfg()).decide(&c.non_clairvoyant(), &mut d);
        let t = 5.0 / 3.0;
        close(&d.rates, &[t, t, t, 5.0, 5.0]);
    }

    #[test]
    fn unknown_and_scaled_widths() {
        // Width scaled by 0.5: coflow of width 4 is seen as 2 → class 1 (queue 1),
        // narrow (2 ≤ Δ_w).
        let mut m = Mcs::new(McsConfig {
            width_scale: 0.5,
            ..cfg()
        });
        let c = Case::new(
            5,
            10.0,
            &[
                (0, 0, 4, 100.0, 0.0),
                (0, 1, 4, 100.0, 0.0),
                (0, 2, 4, 100.0, 0.0),
                (0, 3, 4, 100.0, 0.0),
            ],
        );
        let mut d = Decision::default();
        d.reset(4);
        m.decide(&c.non_clairvoyant(), &mut d);
        // Narrow in queue 1 → demotion at θ^n_2 = 100 B of coflow bytes.
        assert_eq!(
            d.wakeups,
            vec![Wakeup::CoflowSent {
                coflow: 0,
                bytes: 100.0
            }]
        );
        // All widths unknown: the same coflow starts in queue 0, and is wide by the
        // 4 flows seen so far → its length is compared with θ^w_1 = 5.
        let mut m = Mcs::new(McsConfig {
            width_unknown: 1.0,
            ..cfg()
        });
        let mut d = Decision::default();
        d.reset(4);
        m.decide(&c.non_clairvoyant(), &mut d);
        assert_eq!(
            d.wakeups,
            vec![Wakeup::FlowSent {
                flow: 0,
                bytes: 5.0
            }]
        );
    }

    #[test]
    fn the_unknown_fraction_is_exact_and_seeded() {
        let mut m = Mcs::new(McsConfig {
            width_unknown: 0.1,
            ..cfg()
        });
        m.draw_unknown(200);
        assert_eq!(m.unknown.iter().filter(|&&u| u).count(), 20);
        let first = m.unknown.clone();
        m.draw_unknown(200);
        assert_eq!(m.unknown, first);
        let mut other = Mcs::new(McsConfig {
            width_unknown: 0.1,
            seed: 2,
            ..cfg()
        });
        other.draw_unknown(200);
        assert_ne!(other.unknown, first);
    }
}
