//! Demotion thresholds of multi-level feedback queues.

/// Exponentially spaced demotion thresholds of a multi-level feedback queue:
/// `T_q = first · multiplier^q` for `q = 0..queues-1`; queue `queues-1` is unbounded.
/// Shared by every least-attained-service policy (aalo's coflow queues, mcs's
/// double thresholds, the per-flow queues of pias and coda).
#[derive(Debug, Clone, PartialEq)]
pub struct Thresholds {
    bounds: Vec<f64>,
}

impl Thresholds {
    pub fn new(queues: usize, first: f64, multiplier: f64) -> Self {
        Thresholds {
            bounds: (0..queues.saturating_sub(1))
                .map(|q| first * multiplier.powi(q as i32))
                .collect(),
        }
    }

    /// The queue of something that has sent `sent` bytes: the first `q` whose
    /// threshold is not yet crossed (within the byte tolerance of [`crossed`]).
    pub fn queue(&self, sent: f64) -> usize {
        self.bounds
            .iter()
            .position(|&t| !crossed(sent, t))
            .unwrap_or(self.bounds.len())
    }

    /// The upper threshold of queue `q`, `None` for the last (unbounded) queue.
    pub fn upper(&self, q: usize) -> Option<f64> {
        self.bounds.get(q).copied()
    }

    /// Number of queues.
    pub fn queues(&self) -> usize {
        self.bounds.len() + 1
    }
}

/// Bytes tolerance when comparing bytes sent with a threshold: the engine's finish
/// tolerance, `max(1e-6, 1e-9 · threshold)`.
#[inline]
pub fn crossed(sent: f64, threshold: f64) -> bool {
    sent >= threshold - coflowkit_model::finish_threshold(threshold)
}
