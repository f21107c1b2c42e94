//! The catalogue of policies: one line per policy. Adding a policy is one file, its
//! tests, its docs/policies page and one line here.

use crate::aalo::Aalo;
use crate::baraat::Baraat;
use crate::coda::{Coda, CodaConfig};
use crate::coflex::Coflex;
use crate::drf::Drf;
use crate::fair::Fair;
use crate::fifo::Fifo;
use crate::hug::Hug;
use crate::identify::{Identify, IdentifyConfig, CODA_HADOOP, CODA_SPARK};
use crate::labels::{LabelSource, Labeller};
use crate::mcs::{Mcs, McsConfig};
use crate::naive_tradeoff::NaiveTradeoff;
use crate::ncdrf::NcDrf;
use crate::ncf::Ncf;
use crate::pfp::Pfp;
use crate::pias::Pias;
use crate::psp::Psp;
use crate::scf::Scf;
use crate::sincronia::Sincronia;
use crate::spq::Spq;
use crate::stream::{Stream, StreamConfig};
use crate::tcf::Tcf;
use crate::varys::Varys;
use crate::{AnyPolicy, Info, ParamSpec, Params, Thresholds};
use coflowkit_ident::Metric;
use coflowkit_model::ModelError;
use std::collections::BTreeMap;

type Builder = fn(&Params) -> Result<AnyPolicy, ModelError>;

/// One catalogue entry.
pub struct PolicySpec {
    pub name: &'static str,
    pub info: Info,
    pub summary: &'static str,
    pub params: &'static [ParamSpec],
    build: Builder,
}

fn c(p: impl crate::ClairvoyantPolicy + 'static) -> Result<AnyPolicy, ModelError> {
    Ok(AnyPolicy::Clairvoyant(Box::new(p)))
}

fn n(p: impl crate::NonClairvoyantPolicy + 'static) -> Result<AnyPolicy, ModelError> {
    Ok(AnyPolicy::NonClairvoyant(Box::new(p)))
}

const VARYS: &[ParamSpec] = &[ParamSpec {
    name: "ordering",
    default: "dynamic",
    help: "dynamic: Γ from remaining bytes at every event; static: from full sizes at arrival (CoflowSim)",
}];

const AALO: &[ParamSpec] = &[
    ParamSpec {
        name: "queues",
        default: "10",
        help: "number of queues K",
    },
    ParamSpec {
        name: "first_threshold_bytes",
        default: "10485760",
        help: "upper bound of queue 0 (10 MiB)",
    },
    ParamSpec {
        name: "multiplier",
        default: "10",
        help: "threshold growth factor E between queues",
    },
];

const NCDRF: &[ParamSpec] = &[ParamSpec {
    name: "backfill_rounds",
    default: "1",
    help: "backfilling passes after the DRF stage (0: none; 1: the paper's; more approach the spare's fixed point)",
}];

const PSP: &[ParamSpec] = &[ParamSpec {
    name: "work_conserving",
    default: "true",
    help: "true: spare capacity shared max-min after the per-link shares (FairCloud); false: per-link shares only",
}];

const ALPHA: &[ParamSpec] = &[ParamSpec {
    name: "alpha",
    default: "0.5",
    help: "fairness knob in [0, 1]: the fraction of its DRF share every coflow is guaranteed",
}];

fn coflex(p: &Params) -> Result<AnyPolicy, ModelError> {
    c(Coflex::new(p.f64_in("alpha", 0.0, 1.0)?))
}

fn naive_tradeoff(p: &Params) -> Result<AnyPolicy, ModelError> {
    let alpha = p.f64_in("alpha", 0.0, 1.0)?;
    if alpha == 0.0 {
        return Err(ModelError::param(
            "param",
            "naive-tradeoff: alpha=0 caps every coflow at 0: nothing would ever be sent; use alpha in (0, 1]",
        ));
    }
    c(NaiveTradeoff::new(alpha))
}

fn varys(p: &Params) -> Result<AnyPolicy, ModelError> {
    c(Varys::new(
        p.choice("ordering", &["dynamic", "static"])? == "static",
    ))
}

fn psp(p: &Params) -> Result<AnyPolicy, ModelError> {
    n(Psp::new(
        p.choice("work_conserving", &["true", "false"])? == "true",
    ))
}

fn ncdrf(p: &Params) -> Result<AnyPolicy, ModelError> {
    n(NcDrf::new(p.usize_in("backfill_rounds", 0, 1000)?))
}

fn aalo(p: &Params) -> Result<AnyPolicy, ModelError> {
    let k = p.usize_in("queues", 1, 64)?;
    let t0 = p.f64_in("first_threshold_bytes", 1.0, 1e18)?;
    let e = p.f64_in("multiplier", 1.0 + 1e-9, 1e6)?;
    n(Aalo::new(k, t0, e))
}

const MIB: f64 = 1048576.0;

const MCS: &[ParamSpec] = &[
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

fn mcs(p: &Params) -> Result<AnyPolicy, ModelError> {
    let queues = p.usize_in("queues", 1, 64)?;
    let (mut deltas_s, mut prio_s) = (
        p.text("deltas").to_string(),
        p.text("priorities").to_string(),
    );
    if !p.text("classes").is_empty() {
        if deltas_s != MCS[0].default || prio_s != MCS[1].default {
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
    let lists = Params::new("mcs", &MCS[..2], m)?;
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
    n(Mcs::new(McsConfig {
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
    }))
}

const FLOW_QUEUES: [ParamSpec; 3] = [
    ParamSpec {
        name: "flow_queues",
        default: "8",
        help: "per-flow queues (8: a commodity switch's priority queues)",
    },
    ParamSpec {
        name: "flow_first_threshold_bytes",
        default: "1048576",
        help: "upper bound of the first flow queue (1 MiB)",
    },
    ParamSpec {
        name: "flow_multiplier",
        default: "4",
        help: "growth factor between flow-queue thresholds",
    },
];

const PIAS: &[ParamSpec] = &FLOW_QUEUES;

fn flow_thresholds(p: &Params) -> Result<Thresholds, ModelError> {
    Ok(Thresholds::new(
        p.usize_in("flow_queues", 1, 64)?,
        p.f64_in("flow_first_threshold_bytes", 1.0, 1e18)?,
        p.f64_in("flow_multiplier", 1.0 + 1e-9, 1e6)?,
    ))
}

fn pias(p: &Params) -> Result<AnyPolicy, ModelError> {
    n(Pias::new(flow_thresholds(p)?))
}

const CODA: &[ParamSpec] = &[
    ParamSpec { name: "labels", default: "truth", help: "where coflows come from: identify (CODA's online identification), truth, pioneers, stragglers, random (truth with injected errors), alone, one (no identification)" },
    ParamSpec { name: "error_rate", default: "0.05", help: "fraction of flows mislabelled by pioneers/stragglers/random" },
    ParamSpec { name: "seed", default: "1", help: "seed of the injected errors" },
    ParamSpec { name: "late_binding", default: "true", help: "extend each labelled coflow with the flows within distance_s (CODA §4.2)" },
    ParamSpec { name: "distance_s", default: "0.1", help: "late-binding diameter d, in the identifier's distance (labels=identify; the injected-error sources put a mislabelled flow at distance 0 of its coflow)" },
    ParamSpec { name: "intra", default: "true", help: "intra-coflow prioritisation: per-flow queues inside each coflow" },
    ParamSpec { name: "weights", default: "spark", help: "labels=identify: weights of S_time, D_com, D_prt: spark or hadoop (CODA's As, Ah), equal, or three numbers a_t,a_com,a_prt" },
    ParamSpec { name: "eps", default: "0.5", help: "labels=identify: DBSCAN radius ε over leaders" },
    ParamSpec { name: "tau", default: "0.05", help: "labels=identify: leader range τ of Rough-DBSCAN" },
    ParamSpec { name: "interval_s", default: "0.1", help: "labels=identify: identification interval Δ, seconds" },
    ParamSpec { name: "min_bytes", default: "0", help: "labels=identify: flows are identified once they have sent this many bytes (CODA: 100000; see docs/identification.md)" },
    ParamSpec { name: "max_conductance", default: "0.1", help: "labels=identify: host communities are split while a cut has conductance below this" },
    AALO[0], AALO[1], AALO[2],
    FLOW_QUEUES[0], FLOW_QUEUES[1], FLOW_QUEUES[2],
];

fn coda_err(e: impl std::fmt::Display) -> ModelError {
    ModelError::param(
        "param",
        format!("coda: {}", e.to_string().trim_start_matches("param: ")),
    )
}

/// The `identify` labelling source's configuration from `coda`'s parameters.
fn identify_config(p: &Params) -> Result<IdentifyConfig, ModelError> {
    let w = match p.text("weights") {
        "spark" => CODA_SPARK.to_vec(),
        "hadoop" => CODA_HADOOP.to_vec(),
        "equal" => vec![1.0; 3],
        _ => {
            let w = p.f64_list("weights", 0.0, 1e12)?;
            if w.len() != 3 {
                return Err(coda_err(format!(
                    "weights={} is not spark, hadoop, equal or three numbers a_t,a_com,a_prt",
                    p.text("weights")
                )));
            }
            w
        }
    };
    Ok(IdentifyConfig {
        metric: Metric::new(w[0], vec![], w[1], w[2]).map_err(coda_err)?,
        eps: p.f64_in("eps", 1e-12, 1e12)?,
        tau: p.f64_in("tau", 0.0, 1e12)?,
        interval_s: p.f64_in("interval_s", 1e-9, 1e9)?,
        min_bytes: p.f64_in("min_bytes", 0.0, 1e18)?,
        max_conductance: p.f64_in("max_conductance", 0.0, 1.0)?,
    })
}

fn coda(p: &Params) -> Result<AnyPolicy, ModelError> {
    let name = p.text("labels");
    if name != "identify" && !LabelSource::NAMES.contains(&name) {
        return Err(coda_err(format!(
            "labels={name} is not one of identify, {}",
            LabelSource::NAMES.join(", ")
        )));
    }
    let labeller: Box<dyn Labeller> = if name == "identify" {
        Box::new(Identify::new(identify_config(p)?).map_err(coda_err)?)
    } else {
        Box::new(
            LabelSource::parse(
                p.text("labels"),
                p.f64_in("error_rate", 0.0, 1.0)?,
                p.usize_in("seed", 0, u32::MAX as usize)? as u64,
            )
            .map_err(coda_err)?,
        )
    };
    n(Coda::new(CodaConfig {
        late_binding: p.bool("late_binding")?,
        distance_s: p.f64_in("distance_s", 0.0, 1e9)?,
        intra: p.bool("intra")?,
        coflow_queues: Thresholds::new(
            p.usize_in("queues", 1, 64)?,
            p.f64_in("first_threshold_bytes", 1.0, 1e18)?,
            p.f64_in("multiplier", 1.0 + 1e-9, 1e6)?,
        ),
        flow_queues: flow_thresholds(p)?,
        labeller,
    }))
}

const SPQ: &[ParamSpec] = &[ParamSpec {
    name: "queues",
    default: "8",
    help:
        "number of strict-priority queues K (commodity switches: 8); priorities ≥ K go to the last",
}];

fn spq(p: &Params) -> Result<AnyPolicy, ModelError> {
    n(Spq::new(p.usize_in("queues", 1, 64)? as u32))
}

const BARAAT: &[ParamSpec] = &[ParamSpec {
    name: "heavy_mb",
    default: "100",
    help: "H in MiB: a coflow that has sent H stops blocking and joins the shared heavy class",
}];

fn baraat(p: &Params) -> Result<AnyPolicy, ModelError> {
    n(Baraat::new(p.f64_in("heavy_mb", 1e-6, 1e12)? * MIB))
}

const STREAM: &[ParamSpec] = &[
    ParamSpec {
        name: "queues",
        default: "8",
        help: "K strict-priority queues (the paper's evaluation: 4)",
    },
    ParamSpec {
        name: "first_threshold_mb",
        default: "10",
        help: "τ_0 in MiB (threshold of the highest class)",
    },
    ParamSpec {
        name: "multiplier",
        default: "10",
        help: "E: τ_q = τ_0 · E^q (exponentially spaced, as in Aalo)",
    },
    ParamSpec {
        name: "alpha",
        default: "1",
        help: "α: weight of the coflow condition H (eq. 2) and of Weighted-Priority W = α ln(m+1)",
    },
    ParamSpec {
        name: "beta",
        default: "1",
        help: "β: weight of relayed bytes S (Information-Relay, eq. 5)",
    },
    ParamSpec {
        name: "unit_mb",
        default: "1",
        help: "unit of X, S and τ inside eqs. (2)-(5), MiB (sets the scale of H's n/X term)",
    },
    ParamSpec {
        name: "delay_s",
        default: "0.0001",
        help: "delay before a class decided by a receiver reaches its senders (one RTT-like step)",
    },
    ParamSpec {
        name: "starvation_s",
        default: "0",
        help: "raise a unit one class when none of its flows moved for this long (0: off)",
    },
    ParamSpec {
        name: "weighted",
        default: "true",
        help: "Weighted-Priority (W from the stage's internal id)",
    },
    ParamSpec {
        name: "relay",
        default: "true",
        help: "Information-Relay (bytes of receivers that share a sender)",
    },
    ParamSpec {
        name: "child_to_parent",
        default: "true",
        help: "Child-to-Parent (finished child stages report their bytes)",
    },
];

fn stream(p: &Params) -> Result<AnyPolicy, ModelError> {
    n(Stream::new(StreamConfig {
        queues: p.usize_in("queues", 1, 64)? as u32,
        first_threshold: p.f64_in("first_threshold_mb", 1e-9, 1e12)?
            / p.f64_in("unit_mb", 1e-9, 1e12)?,
        multiplier: p.f64_in("multiplier", 1.0 + 1e-9, 1e6)?,
        alpha: p.f64_in("alpha", 0.0, 1e6)?,
        beta: p.f64_in("beta", 0.0, 1e6)?,
        unit_bytes: p.f64_in("unit_mb", 1e-9, 1e12)? * MIB,
        delay_s: p.f64_in("delay_s", 0.0, 1e6)?,
        starvation_s: p.f64_in("starvation_s", 0.0, 1e9)?,
        weighted: p.bool("weighted")?,
        relay: p.bool("relay")?,
        child_to_parent: p.bool("child_to_parent")?,
    }))
}

#[rustfmt::skip]
pub static REGISTRY: &[PolicySpec] = &[
    PolicySpec { name: "fair", info: Info::NonClairvoyant, summary: "per-flow max-min fairness (TCP-like)", params: &[], build: |_| n(Fair::default()) },
    PolicySpec { name: "pfp", info: Info::Clairvoyant, summary: "per-flow shortest-remaining-first (pFabric-like)", params: &[], build: |_| c(Pfp::default()) },
    PolicySpec { name: "fifo", info: Info::NonClairvoyant, summary: "coflows in arrival order, max-min inside (Orchestra)", params: &[], build: |_| n(Fifo::default()) },
    PolicySpec { name: "scf", info: Info::Clairvoyant, summary: "smallest largest-flow (length) first", params: &[], build: |_| c(Scf::default()) },
    PolicySpec { name: "ncf", info: Info::NonClairvoyant, summary: "narrowest (fewest flows) first", params: &[], build: |_| n(Ncf::default()) },
    PolicySpec { name: "tcf", info: Info::Clairvoyant, summary: "smallest total bytes first", params: &[], build: |_| c(Tcf::default()) },
    PolicySpec { name: "varys", info: Info::Clairvoyant, summary: "SEBF order + MADD rates + backfilling (Varys)", params: VARYS, build: varys },
    PolicySpec { name: "aalo", info: Info::NonClairvoyant, summary: "D-CLAS: queues by bytes sent, FIFO within (Aalo)", params: AALO, build: aalo },
    PolicySpec { name: "sincronia", info: Info::Clairvoyant, summary: "BSSI order + greedy rates (Sincronia)", params: &[], build: |_| c(Sincronia::default()) },
    PolicySpec { name: "ncdrf", info: Info::NonClairvoyant, summary: "DRF on per-link flow counts, then backfilling (NC-DRF)", params: NCDRF, build: ncdrf },
    PolicySpec { name: "psp", info: Info::NonClairvoyant, summary: "per-link equal shares per coflow, then max-min spare (FairCloud PS-P)", params: PSP, build: psp },
    PolicySpec { name: "drf", info: Info::Clairvoyant, summary: "DRF between coflows on remaining bytes, flows finish together (not work-conserving)", params: &[], build: |_| c(Drf::default()) },
    PolicySpec { name: "hug", info: Info::Clairvoyant, summary: "DRF, then spare max-min per flow under the cap P* per coflow and link (HUG)", params: &[], build: |_| c(Hug::default()) },
    PolicySpec { name: "coflex", info: Info::Clairvoyant, summary: "alpha x DRF shares, then Varys on the spare, no cap (Coflex)", params: ALPHA, build: coflex },
    PolicySpec { name: "naive-tradeoff", info: Info::Clairvoyant, summary: "alpha x DRF shares, then SEBF capped at alpha P* (Coflex Algorithm 1)", params: ALPHA, build: naive_tradeoff },
    PolicySpec { name: "mcs", info: Info::NonClairvoyant, summary: "width classes for the initial queue, double thresholds (bytes narrow, length wide) (MCS)", params: MCS, build: mcs },
    PolicySpec { name: "pias", info: Info::NonClairvoyant, summary: "per-flow multi-level feedback queues, no coflows (PIAS)", params: PIAS, build: pias },
    PolicySpec { name: "spq", info: Info::NonClairvoyant, summary: "strict-priority switch queues, classes from the workload, max-min inside a class", params: SPQ, build: spq },
    PolicySpec { name: "baraat", info: Info::NonClairvoyant, summary: "FIFO with limited multiplexing: heavy coflows stop blocking (Baraat)", params: BARAAT, build: baraat },
    PolicySpec { name: "stream", info: Info::NonClairvoyant, summary: "receiver-driven C-SJF over strict-priority queues, WP/IR/CP (Stream)", params: STREAM, build: stream },
    PolicySpec { name: "coda", info: Info::NonClairvoyant, summary: "D-CLAS over labelled coflows, late binding, per-flow queues inside (CODA)", params: CODA, build: coda },
];

/// The catalogue entry of `name`, or an error listing the valid names.
pub fn find(name: &str) -> Result<&'static PolicySpec, ModelError> {
    REGISTRY.iter().find(|s| s.name == name).ok_or_else(|| {
        let names: Vec<&str> = REGISTRY.iter().map(|s| s.name).collect();
        ModelError::param(
            "policy",
            format!(
                "unknown policy '{name}'; valid policies: {}",
                names.join(", ")
            ),
        )
    })
}

/// Builds policy `name` with parameters `KEY=VALUE`.
pub fn build(name: &str, params: &BTreeMap<String, String>) -> Result<AnyPolicy, ModelError> {
    let spec = find(name)?;
    let p = Params::new(name, spec.params, params.clone())?;
    (spec.build)(&p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_builds_with_defaults_and_matches_its_info_model() {
        for s in REGISTRY {
            let p = build(s.name, &BTreeMap::new()).unwrap();
            assert_eq!(p.info(), s.info, "{}", s.name);
        }
        let e = build("nope", &BTreeMap::new()).err().unwrap().to_string();
        assert!(
            e.starts_with("policy: unknown policy 'nope'; valid policies: fair, pfp"),
            "{e}"
        );
    }

    #[test]
    fn bad_parameters_are_rejected() {
        let m: BTreeMap<String, String> = [("ordering".to_string(), "random".to_string())].into();
        let e = build("varys", &m).err().unwrap().to_string();
        assert_eq!(
            e,
            "param: varys: ordering=random is not one of dynamic, static"
        );
        let m: BTreeMap<String, String> = [("multiplier".to_string(), "1".to_string())].into();
        assert!(build("aalo", &m).is_err());
    }
}
