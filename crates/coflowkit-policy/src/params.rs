//! Typed policy parameters given as `KEY=VALUE` strings, with defaults and clear
//! errors.

use coflowkit_model::ModelError;
use std::collections::BTreeMap;

/// One documented parameter of a policy.
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    pub name: &'static str,
    pub default: &'static str,
    pub help: &'static str,
}

/// Parameter values for one policy, checked against its [`ParamSpec`]s.
#[derive(Debug, Clone, Default)]
pub struct Params {
    policy: String,
    values: BTreeMap<String, String>,
}

impl Params {
    /// Checks that every key is a parameter of `policy`.
    pub fn new(
        policy: &str,
        specs: &[ParamSpec],
        values: BTreeMap<String, String>,
    ) -> Result<Params, ModelError> {
        for k in values.keys() {
            if !specs.iter().any(|s| s.name == k) {
                let valid = if specs.is_empty() {
                    "it takes no parameters".to_string()
                } else {
                    format!(
                        "valid parameters: {}",
                        specs.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
                    )
                };
                return Err(ModelError::param(
                    "param",
                    format!("policy '{policy}' has no parameter '{k}'; {valid}"),
                ));
            }
        }
        let mut values = values;
        for s in specs {
            values
                .entry(s.name.to_string())
                .or_insert_with(|| s.default.to_string());
        }
        Ok(Params {
            policy: policy.to_string(),
            values,
        })
    }

    fn raw(&self, key: &str) -> &str {
        self.values.get(key).map(String::as_str).unwrap_or("")
    }

    fn bad(&self, key: &str, what: &str) -> ModelError {
        ModelError::param(
            "param",
            format!("{}: {key}={} is not {what}", self.policy, self.raw(key)),
        )
    }

    /// A number in `[lo, hi]`.
    pub fn f64_in(&self, key: &str, lo: f64, hi: f64) -> Result<f64, ModelError> {
        match self.raw(key).parse::<f64>() {
            Ok(v) if v.is_finite() && v >= lo && v <= hi => Ok(v),
            _ => Err(self.bad(key, &format!("a number in [{lo}, {hi}]"))),
        }
    }

    /// A whole number in `[lo, hi]`.
    pub fn usize_in(&self, key: &str, lo: usize, hi: usize) -> Result<usize, ModelError> {
        match self.raw(key).parse::<usize>() {
            Ok(v) if v >= lo && v <= hi => Ok(v),
            _ => Err(self.bad(key, &format!("a whole number in [{lo}, {hi}]"))),
        }
    }

    /// The value as given (or its default).
    pub fn text(&self, key: &str) -> &str {
        self.raw(key)
    }

    /// `true` or `false`.
    pub fn bool(&self, key: &str) -> Result<bool, ModelError> {
        Ok(self.choice(key, &["true", "false"])? == "true")
    }

    /// A comma-separated list of numbers, each in `[lo, hi]` (empty text: none).
    pub fn f64_list(&self, key: &str, lo: f64, hi: f64) -> Result<Vec<f64>, ModelError> {
        let v = self.raw(key).trim();
        if v.is_empty() {
            return Ok(Vec::new());
        }
        v.split(',')
            .map(|x| match x.trim().parse::<f64>() {
                Ok(y) if y.is_finite() && y >= lo && y <= hi => Ok(y),
                _ => Err(self.bad(
                    key,
                    &format!("a comma-separated list of numbers in [{lo}, {hi}]"),
                )),
            })
            .collect()
    }

    /// One of `choices`.
    pub fn choice(&self, key: &str, choices: &[&'static str]) -> Result<&'static str, ModelError> {
        let v = self.raw(key);
        choices
            .iter()
            .find(|c| **c == v)
            .copied()
            .ok_or_else(|| self.bad(key, &format!("one of {}", choices.join(", "))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[ParamSpec] = &[ParamSpec {
        name: "queues",
        default: "10",
        help: "",
    }];

    #[test]
    fn defaults_and_errors() {
        let p = Params::new("aalo", SPECS, BTreeMap::new()).unwrap();
        assert_eq!(p.usize_in("queues", 1, 64).unwrap(), 10);
        let mut m = BTreeMap::new();
        m.insert("k".to_string(), "3".to_string());
        let e = Params::new("aalo", SPECS, m).unwrap_err().to_string();
        assert_eq!(
            e,
            "param: policy 'aalo' has no parameter 'k'; valid parameters: queues"
        );
        let mut m = BTreeMap::new();
        m.insert("queues".to_string(), "x".to_string());
        let p = Params::new("aalo", SPECS, m).unwrap();
        assert_eq!(
            p.usize_in("queues", 1, 64).unwrap_err().to_string(),
            "param: aalo: queues=x is not a whole number in [1, 64]"
        );
        let e = Params::new("fair", &[], [("a".to_string(), "1".to_string())].into()).unwrap_err();
        assert!(e.to_string().ends_with("it takes no parameters"));
    }
}
