//! Finding and building policies by name. The list itself is in
//! [`crate::policies`] (one line per policy).

use crate::params::Params;
use crate::policies::REGISTRY;
use crate::policy::AnyPolicy;
use crate::spec::PolicySpec;
use coflowkit_model::ModelError;
use std::collections::BTreeMap;

/// The catalogue entry of `name`, or an error listing the valid names.
pub fn find(name: &str) -> Result<&'static PolicySpec, ModelError> {
    REGISTRY
        .iter()
        .copied()
        .find(|s| s.name == name)
        .ok_or_else(|| {
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
