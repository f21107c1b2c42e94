//! [`FormChoice`]: when a policy has an incremental form and a from-scratch form
//! that give the same rates, which one runs, chosen from counts (so runs stay
//! deterministic), never from timings.

/// Calls per window over which the incremental form's work is counted.
pub const WINDOW: u64 = 64;
/// Calls the from-scratch form runs after a window in which the incremental form
/// did too much, before the incremental one is tried again; doubled after each
/// such window in a row (up to [`RETRY_MAX`]), back to `RETRY` after a good one.
/// On the FB big switch a bad window is an isolated burst of arrivals, and a
/// long hand-over then runs the dearer form long after it: 1024 rather than
/// 4096 makes `pfp` 1.27x and `sincronia` 1.13x faster there, at par on
/// `fattree:k=8`, where every window is bad and the doubling soon makes the
/// hand-overs long (docs/results/bench/form-choice-retry.md).
pub const RETRY: u64 = 1024;
pub const RETRY_MAX: u64 = 1 << 20;

/// The incremental form visits an entry in a few hundred ns, the from-scratch form
/// an active flow in a few ns: when, over a window of [`WINDOW`] calls, the
/// incremental form visited more than 1/16 of the active flows (long dirty
/// stretches, as on FatTree paths of six links), the from-scratch form runs for
/// [`RETRY`] calls, twice as many after each further such window. The call that
/// builds the incremental state visits every active flow once and is not counted.
#[derive(Default)]
pub struct FormChoice {
    calls: u64,
    scratch_until: u64,
    /// The next hand-over's length (0: `RETRY`).
    retry: u64,
    /// Entries visited, active flows, and calls, in this window.
    window: (u64, u64, u64),
}

impl FormChoice {
    /// Counts a call; true when it may run the incremental form (the driver takes
    /// delta decisions and the from-scratch form's turn is over).
    pub fn incremental(&mut self, delta_ok: bool) -> bool {
        self.calls += 1;
        delta_ok && self.calls >= self.scratch_until
    }

    /// After an incremental call that visited `work` entries with `active` flows
    /// (`building`: the call that built the state). False when the incremental
    /// form must be dropped for the next [`RETRY`] calls.
    pub fn record(&mut self, work: u64, active: usize, building: bool) -> bool {
        if !building {
            self.window.0 += work;
            self.window.1 += active as u64;
            self.window.2 += 1;
        }
        if self.window.2 < WINDOW {
            return true;
        }
        let keep = 16 * self.window.0 <= self.window.1;
        if keep {
            self.retry = RETRY;
        } else {
            let retry = self.retry.max(RETRY);
            self.scratch_until = self.calls + retry;
            self.retry = (2 * retry).min(RETRY_MAX);
        }
        self.window = (0, 0, 0);
        keep
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_much_work_in_a_window_hands_over_to_the_from_scratch_form() {
        let mut c = FormChoice::default();
        // Building call, then a window at 1/20 of the active flows: kept.
        assert!(c.incremental(true));
        assert!(c.record(10_000, 1000, true));
        for _ in 0..WINDOW {
            assert!(c.incremental(true));
            assert!(c.record(50, 1000, false));
        }
        // A window at 1/10: dropped, and the next RETRY calls run from scratch.
        for i in 0..WINDOW {
            assert!(c.incremental(true));
            assert_eq!(c.record(100, 1000, false), i + 1 < WINDOW);
        }
        for _ in 0..RETRY - 1 {
            assert!(!c.incremental(true));
        }
        // Tried again; a second bad window in a row hands over for twice as long.
        for _ in 0..WINDOW {
            assert!(c.incremental(true));
            c.record(100, 1000, false);
        }
        for _ in 0..2 * RETRY - 1 {
            assert!(!c.incremental(true));
        }
        assert!(c.incremental(true));
        // A driver without delta decisions never gets the incremental form.
        assert!(!FormChoice::default().incremental(false));
    }
}
