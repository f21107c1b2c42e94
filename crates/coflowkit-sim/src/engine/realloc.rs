//! When the engine calls the policy: the `realloc` modes and the decision
//! times of `realloc=interval` (docs/engines.md).

use coflowkit_model::TIME_EPS;

/// When the engine calls the policy (`--param realloc=event|coflow|interval`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Realloc {
    /// At every event: a start, a completion, a wake-up.
    #[default]
    Event,
    /// At coflow arrivals and completions, flow starts and the policy's own
    /// wake-ups, but not when a flow ends without completing its coflow: then
    /// every other flow keeps its rate (or class), and the ended flow's rate goes
    /// to no one, as in CoflowSim's coflow schedulers. Also when nothing would move
    /// otherwise (every active flow at rate 0, nothing pending), so a policy that
    /// leaves flows waiting for a link cannot stall the run.
    Coflow,
    /// Only at the decision times k·Δ (Δ seconds, k = 0, 1, ...) while flows are
    /// active, as a simulator with fixed decision intervals (CODA §6.1's "1 s
    /// decision intervals"): between two decisions every flow keeps its rate, a
    /// flow that starts waits at rate 0 for the next one, a finished flow's rate
    /// goes to no one, and the policy's own wake-ups are not used.
    Interval(f64),
}

impl Realloc {
    /// Parses `event`, `coflow` or `interval` (Δ = 1 s; see
    /// [`Realloc::with_decision_s`]).
    pub fn parse(v: &str) -> Result<Realloc, String> {
        match v {
            "event" => Ok(Realloc::Event),
            "coflow" => Ok(Realloc::Coflow),
            "interval" => Ok(Realloc::Interval(1.0)),
            _ => Err(format!(
                "realloc must be 'event', 'coflow' or 'interval', got '{v}'"
            )),
        }
    }

    /// `Interval` with Δ = `v` seconds (`--param decision_s=V`, 1e-6 to 1e6).
    pub fn with_decision_s(self, v: &str) -> Result<Realloc, String> {
        match (self, v.parse::<f64>()) {
            (Realloc::Interval(_), Ok(dt)) if (1e-6..=1e6).contains(&dt) => {
                Ok(Realloc::Interval(dt))
            }
            (Realloc::Interval(_), _) => Err(format!(
                "decision_s must be seconds from 1e-6 to 1e6, got '{v}'"
            )),
            _ => Err("decision_s is the decision interval of realloc=interval; \
                      give realloc=interval too"
                .to_string()),
        }
    }

    /// The decision interval Δ of `Interval`, if that is the mode.
    pub fn interval_s(self) -> Option<f64> {
        match self {
            Realloc::Interval(dt) => Some(dt),
            _ => None,
        }
    }
}

/// The first decision time k·Δ (k = 0, 1, ...) after `now`, or at `now` when
/// `or_now` and `now` is one; a time within `TIME_EPS` of k·Δ counts as k·Δ.
pub(super) fn next_decision(now: f64, dt: f64, or_now: bool) -> f64 {
    let k = (now / dt).round();
    let k = if (now - k * dt).abs() <= TIME_EPS {
        if or_now {
            k
        } else {
            k + 1.0
        }
    } else {
        (now / dt).ceil()
    };
    k * dt
}
