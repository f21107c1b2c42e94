//! What a policy answers: rates or classes per active flow, and wake-ups.

/// A request to be called again.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Wakeup {
    /// At an absolute time (seconds).
    At(f64),
    /// When coflow `coflow` (index) has sent `bytes` in all (finished flows included).
    CoflowSent { coflow: u32, bytes: f64 },
    /// When flow `flow` (global index) has sent `bytes`.
    FlowSent { flow: u32, bytes: f64 },
    /// When the active flows whose [`Decision::wake_groups`] entry is `group`
    /// (or, in a class delta decision, the flows [`Decision::wake_flows`] lists
    /// for `group`) have together sent `bytes` more than now (a policy's own
    /// grouping of flows, such as Stream's sub-coflows at one receiver).
    GroupSent { group: u32, bytes: f64 },
}

/// What a policy returns: one rate (bytes/s) per active flow, or one strict-priority
/// class per active flow (0 = highest; the driver shares max-min within a class), and
/// optional wake-ups.
#[derive(Debug, Default, Clone)]
pub struct Decision {
    /// `rates[i]` for `view.active[i]`; the driver sizes it and zeroes it.
    pub rates: Vec<f64>,
    /// If non-empty, `classes[i]` for `view.active[i]`, and `rates` is ignored
    /// and must be left at zero (the driver then skips zeroing it; so for
    /// `class_delta`).
    pub classes: Vec<u8>,
    pub wakeups: Vec<Wakeup>,
    /// Wake-up group of each active flow (`wake_groups[i]` for `view.active[i]`),
    /// read only for [`Wakeup::GroupSent`]; dense small numbers, so the driver can
    /// index by them. (Not [`crate::view::Common::groups`], the ranges of active coflows.)
    pub wake_groups: Vec<u32>,
    /// Sparse decision: a policy that gives most flows nothing sets `sparse` and
    /// lists in `touched` every position it wrote a non-zero rate to (repeats
    /// allowed); the driver then reads only those, in `O(touched)` instead of
    /// `O(active)`. Positions not listed must be left at zero.
    pub sparse: bool,
    pub touched: Vec<u32>,
    /// Set by a driver that takes delta decisions (kept by [`Decision::reset`]).
    pub delta_ok: bool,
    /// Delta decision (only when `delta_ok`; implies `sparse`): the positions in
    /// `touched` take the rate written there, zero included; every other active
    /// flow keeps the rate it had (a flow that just started has 0). The driver
    /// then reads only what changed.
    pub delta: bool,
    /// Set by the driver when it has put every rate back to zero after reading
    /// them, so the next [`Decision::reset`] need not clear the vector.
    pub all_zero: bool,
    /// Path mode (a policy whose [`crate::policy::NonClairvoyantPolicy::path_mode`]
    /// is true): every active flow of path `p` gets rate `r`, for the `(p, r)`
    /// listed; a path not listed keeps the rate it had (a new path starts at 0).
    /// `rates` is then ignored and left at zero.
    pub path_rates: Vec<(coflowkit_model::PathId, f64)>,
    /// Set by a driver that serves paths by bottleneck groups (kept by
    /// [`Decision::reset`]): the engine in path mode.
    pub groups_ok: bool,
    /// Group decision (path mode, only when `groups_ok`): `(p, g)` puts path
    /// `p` into group `g` (a link id), whose flows then go at the group's rate;
    /// `(g, r)` gives group `g` per-flow rate `r`. A path not listed stays where
    /// it was; a path given a rate in `path_rates` leaves its group. Applied
    /// after `path_rates`, path moves before group rates.
    pub path_groups: Vec<(coflowkit_model::PathId, u32)>,
    pub group_rates: Vec<(u32, f64)>,
    /// Delta decision by flow (only when `delta_ok`): every flow in `flow_rates`
    /// (global index, each at most once) takes the rate given there; every other
    /// active flow keeps its own. `rates` and `touched` are then ignored and left
    /// at zero. Costs the driver `O(listed)`, with no positions to sort.
    pub by_flow: bool,
    pub flow_rates: Vec<(u32, f64)>,
    /// Class delta decision (only when `delta_ok`): instead of `classes`,
    /// `class_moves` lists `(flow, class)` for every flow that started since
    /// the last call and every active flow whose class changed (a flow may
    /// repeat; the last entry holds); every other active flow keeps its class.
    /// Group wake-ups then name their flows in `wake_flows` as `(group,
    /// flow)` instead of `wake_groups`. Costs the driver `O(listed)`.
    pub class_delta: bool,
    pub class_moves: Vec<(u32, u8)>,
    /// Class renames of a class delta decision, applied before
    /// `class_moves`: `(a, b)` puts every flow of class `a` in class `b`,
    /// all pairs at once (each class at most once as `a` and once as `b`); a
    /// class named as `b` and not as `a` must hold no flow then (the driver
    /// refuses the decision otherwise). A coflow alone in its class that moves
    /// to another class costs the driver one entry, not one per flow: the
    /// engine keeps the class's solution and counters under its new number.
    pub class_renames: Vec<(u8, u8)>,
    pub wake_flows: Vec<(u32, u32)>,
    /// Set by a driver that keeps proportional groups (kept by
    /// [`Decision::reset`]): the engine with per-flow rates and delta decisions.
    pub speeds_ok: bool,
    /// Speed decision (only when `speeds_ok`), for policies that give every
    /// flow of a coflow `rem_f · x_k` plus, for a few flows, an extra. Applied
    /// in this order:
    /// * a flow in `flow_rates` leaves its coflow's proportional group (if it
    ///   is in it) and takes the rate given there;
    /// * a flow in `group_joins` (finished ones are skipped), and every flow
    ///   that started since the last call and is not in `flow_rates`, joins
    ///   its coflow's group;
    /// * `(k, x)` in `coflow_speeds` gives every member of coflow `k`'s group
    ///   the rate `rem_f · x` from now on (`x = 1 / T`: they all finish in `T`
    ///   at these rates).
    ///
    /// Every other flow keeps its rate, and a group not listed keeps its
    /// members' rates (a new member of it then gets `rem_f` times the speed
    /// the group has now). `rates` and `touched` are left at zero. Costs the
    /// driver `O(listed)`: one value per coflow instead of one per flow
    /// ([`crate::view::Progress`]). A decision of another form takes every
    /// member out of its group, at the rate it had; a policy that answers by
    /// speed again lists in `group_joins` the flows it wants back.
    pub by_speed: bool,
    pub coflow_speeds: Vec<(u32, f64)>,
    pub group_joins: Vec<u32>,
    /// Set by a driver that demotes flows between classes itself (kept by
    /// [`Decision::reset`]): the engine with delta decisions and decisions at
    /// events, in either class form.
    pub limits_ok: bool,
    /// Demotion limits of a class decision (only when `limits_ok`):
    /// `class_limits[q]` is the bytes sent at which a flow of class `q`
    /// moves to class `q + 1`, within the engine's byte tolerance (as
    /// [`crate::support::thresholds::crossed`]); missing or infinite: never.
    /// The driver moves each flow at the instant it crosses, and calls the
    /// policy then (a crossing is an event), so a policy whose classes are
    /// multi-level feedback queues on flows' bytes (`pias`) names a flow's
    /// class once, when it starts, and asks for no wake-ups.
    pub class_limits: Vec<f64>,
}

impl Decision {
    /// Prepares the decision for `n` active flows.
    pub fn reset(&mut self, n: usize) {
        if self.all_zero {
            self.rates.truncate(n);
        } else {
            self.rates.clear();
        }
        self.rates.resize(n, 0.0);
        self.all_zero = false;
        self.classes.clear();
        self.wakeups.clear();
        self.wake_groups.clear();
        self.sparse = false;
        self.delta = false;
        self.touched.clear();
        self.path_rates.clear();
        self.path_groups.clear();
        self.group_rates.clear();
        self.by_flow = false;
        self.flow_rates.clear();
        self.class_delta = false;
        self.class_moves.clear();
        self.class_renames.clear();
        self.wake_flows.clear();
        self.by_speed = false;
        self.coflow_speeds.clear();
        self.group_joins.clear();
        self.class_limits.clear();
    }

    /// Whether this is a class decision (dense or delta).
    pub fn has_classes(&self) -> bool {
        self.class_delta || !self.classes.is_empty()
    }

    /// Marks `rates[i]` as written (sparse decisions); a no-op for a zero rate.
    #[inline]
    pub fn touch(&mut self, i: usize) {
        if self.rates[i] != 0.0 {
            self.touched.push(i as u32);
        }
    }
}
