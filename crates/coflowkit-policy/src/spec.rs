//! How a policy describes itself to the catalogue: every policy file exports its
//! [`PolicySpec`] (`SPEC`), and `policies/mod.rs` lists them, one line each. The
//! docs tables (`docs/policies/README.md`, the README's) and `coflowkit policies`
//! are generated from these fields, and a test runs every policy on the shared
//! worked example against its hand-computed [`PolicySpec::example_ccts`].

use crate::params::{ParamSpec, Params};
use crate::policy::{AnyPolicy, ClairvoyantPolicy, Info, NonClairvoyantPolicy};
use crate::view::Input;
use coflowkit_model::ModelError;

/// Builds a policy from its checked parameters.
pub type Builder = fn(&Params) -> Result<AnyPolicy, ModelError>;

/// One catalogue entry.
pub struct PolicySpec {
    pub name: &'static str,
    pub info: Info,
    /// What the policy knows or uses beyond its information model, for the docs
    /// ("width only", "coflow-blind"); empty for nothing to add.
    pub knows: &'static str,
    /// The rule in a few words (`coflowkit policies`, the README's table).
    pub summary: &'static str,
    /// The rule in one line (docs/policies/README.md).
    pub rule: &'static str,
    /// Where the policy comes from.
    pub paper: &'static str,
    pub params: &'static [ParamSpec],
    /// Inputs only some drivers supply ([`Input`]); a driver without one refuses
    /// the policy rather than feed it zeros.
    pub needs: &'static [Input],
    pub build: Builder,
    /// CCTs (s) of the three coflows of the worked example shared by every policy
    /// page (docs/policies/README.md, "Worked example"): coflow 1 at 0 ms sends
    /// 8 MiB 0→1, coflow 2 at 0 ms 2 MiB 1→1, coflow 3 at 16 ms 4 MiB 0→0, on 2
    /// ports of 1 Gbps (128 MiB/s). Computed by hand on the policy's page.
    pub example_ccts: [f64; 3],
}

/// A clairvoyant policy, boxed for the registry.
pub fn clairvoyant(p: impl ClairvoyantPolicy + 'static) -> Result<AnyPolicy, ModelError> {
    Ok(AnyPolicy::Clairvoyant(Box::new(p)))
}

/// A non-clairvoyant policy, boxed for the registry.
pub fn non_clairvoyant(p: impl NonClairvoyantPolicy + 'static) -> Result<AnyPolicy, ModelError> {
    Ok(AnyPolicy::NonClairvoyant(Box::new(p)))
}

/// MiB, for parameters given in MiB.
pub const MIB: f64 = 1_048_576.0;
