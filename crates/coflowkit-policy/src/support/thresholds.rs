//! Demotion thresholds of multi-level feedback queues.

/// Exponentially spaced demotion thresholds of a multi-level feedback queue:
/// `T_q = first · multiplier^q` for `q = 0..queues-1`; queue `queues-1` is unbounded.
/// Shared by every least-attained-service policy (aalo's coflow queues, mcs's
/// double thresholds, the per-flow queues of pias and coda).
#[derive(Debug, Clone, PartialEq)]
pub struct Thresholds {
    bounds: Vec<f64>,
    /// `bounds[q]` less its byte tolerance: `sent` has crossed `bounds[q]` when
    /// `sent >= crossed_at[q]` ([`crossed`], computed once).
    crossed_at: Vec<f64>,
}

impl Thresholds {
    pub fn new(queues: usize, first: f64, multiplier: f64) -> Self {
        let bounds: Vec<f64> = (0..queues.saturating_sub(1))
            .map(|q| first * multiplier.powi(q as i32))
            .collect();
        let crossed_at = bounds
            .iter()
            .map(|&t| t - coflowkit_model::finish_threshold(t))
            .collect();
        Thresholds { bounds, crossed_at }
    }

    /// The queue of something that has sent `sent` bytes: the first `q` whose
    /// threshold is not yet crossed (within the byte tolerance of [`crossed`]).
    /// Written as `!(sent >= at)` so that a NaN counts as not crossed, as in
    /// [`crossed`].
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    pub fn queue(&self, sent: f64) -> usize {
        self.crossed_at
            .iter()
            .position(|&at| !(sent >= at))
            .unwrap_or(self.crossed_at.len())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_threshold_counts_as_crossed_within_the_engines_tolerance() {
        // Bounds 10 and 100 B (tolerance 1e-6 B), then 1e12 B (tolerance 1e-9 of
        // it, 1000 B): queues 0..3.
        let t = Thresholds::new(3, 10.0, 10.0);
        assert_eq!(t.queue(0.0), 0);
        assert_eq!(t.queue(10.0 - 2e-6), 0);
        assert_eq!(t.queue(10.0 - 5e-7), 1);
        assert_eq!(t.queue(99.0), 1);
        assert_eq!(t.queue(100.0 - 5e-7), 2);
        assert_eq!(t.queue(1e9), 2);
        assert_eq!(t.queue(f64::NAN), 0);
        let big = Thresholds::new(2, 1e12, 2.0);
        assert_eq!(big.queue(1e12 - 1001.0), 0);
        assert_eq!(big.queue(1e12 - 999.0), 1);
        // And queue() agrees with `crossed` on every bound.
        for (q, &b) in t.bounds.iter().enumerate() {
            for x in [b - 1.0, b - 1e-6, b - 9e-7, b, b + 1.0] {
                assert_eq!(t.queue(x) > q, crossed(x, b), "bound {b}, sent {x}");
            }
        }
    }
}
