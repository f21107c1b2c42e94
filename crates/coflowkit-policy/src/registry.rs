//! The catalogue of policies: one line per policy. Adding a policy is one file, its
//! tests, its docs/policies page and one line here.

use crate::aalo::Aalo;
use crate::coflex::Coflex;
use crate::drf::Drf;
use crate::fair::Fair;
use crate::fifo::Fifo;
use crate::hug::Hug;
use crate::naive_tradeoff::NaiveTradeoff;
use crate::ncdrf::NcDrf;
use crate::ncf::Ncf;
use crate::pfp::Pfp;
use crate::psp::Psp;
use crate::scf::Scf;
use crate::sincronia::Sincronia;
use crate::tcf::Tcf;
use crate::varys::Varys;
use crate::{AnyPolicy, Info, ParamSpec, Params};
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
