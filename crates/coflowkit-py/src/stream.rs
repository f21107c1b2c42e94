//! Stream's receiver rule for the decentralized agents (`coflowkit agent
//! --decentralized stream`): the policy crate's eq. (5) and Algorithm 1, so
//! that real receivers and the simulator compute classes with one formula.

use crate::{model_err, CoflowkitError};
use coflowkit_policy::policies::stream::{config, internal_id, PARAMS};
use coflowkit_policy::{Params, Stream};
use pyo3::prelude::*;
use std::collections::BTreeMap;

/// Eq. (5) with the parameters of `--policy stream` (docs/policies/stream.md).
#[pyclass(module = "coflowkit._core", frozen)]
pub struct StreamRule {
    rule: Stream,
}

#[pymethods]
impl StreamRule {
    #[new]
    #[pyo3(signature = (params=BTreeMap::new()))]
    fn new(params: BTreeMap<String, String>) -> PyResult<Self> {
        let p = Params::new("stream", PARAMS, params).map_err(model_err)?;
        Ok(StreamRule {
            rule: Stream::new(config(&p).map_err(model_err)?),
        })
    }

    /// K, the number of classes.
    #[getter]
    fn queues(&self) -> u32 {
        self.rule.config().queues
    }

    /// Whether Information-Relay and Child-to-Parent are on, and β.
    #[getter]
    fn relay(&self) -> bool {
        self.rule.config().relay
    }

    #[getter]
    fn child_to_parent(&self) -> bool {
        self.rule.config().child_to_parent
    }

    /// Seconds without new bytes after which a unit is raised one class (0: off).
    #[getter]
    fn starvation_s(&self) -> f64 {
        self.rule.config().starvation_s
    }

    /// The class of a receiver unit now in class `q` once it has received `x`
    /// bytes, with `s` relayed and child bytes, `known` flows seen and
    /// `finished` of them done, of a sub-coflow with internal id `m`.
    ///
    /// Eq. (5) is evaluated in the τ of the unit's current class, and the
    /// simulator demotes a unit at each class boundary as its bytes cross it
    /// (`Stream::crossing`). An agent sees bytes once per round, perhaps past
    /// several boundaries, so this moves one class at a time while (5) gives a
    /// class above the current one: the class the simulator reaches with the
    /// same inputs. Never below `q`.
    fn classify(&self, q: u8, x: f64, s: f64, known: u32, finished: u32, m: u32) -> PyResult<u8> {
        if !(x.is_finite() && x >= 0.0 && s.is_finite() && s >= 0.0) {
            return Err(CoflowkitError::new_err(format!(
                "stream: bytes must be finite and >= 0, got x={x}, s={s}"
            )));
        }
        let unit = self.rule.config().unit_bytes;
        Ok(self
            .rule
            .settle(q, x / unit, s / unit, known, finished, m.max(1)))
    }

    /// Eq. (5) itself, in class `q`'s τ (one evaluation, no settling).
    fn equation_five(&self, q: u8, x: f64, s: f64, known: u32, finished: u32, m: u32) -> u8 {
        let unit = self.rule.config().unit_bytes;
        self.rule
            .class(q, x / unit, s / unit, known, finished, m.max(1))
    }
}

/// Algorithm 1: the internal id of `stage` in a coflow whose stage DAG is
/// `parents`, `[(child, parent)]` (a registration's `parents`).
#[pyfunction]
pub fn stream_internal_id(parents: Vec<(u32, u32)>, stage: u32) -> u32 {
    let dag: Vec<(u32, u32, u32)> = parents.iter().map(|&(c, p)| (0, c, p)).collect();
    internal_id(&dag, stage, &mut Vec::new())
}
