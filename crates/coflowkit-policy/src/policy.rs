//! The policy traits, one per information model, and the information models.

use crate::decision::Decision;
use crate::view::{ClairvoyantView, NonClairvoyantView};

/// The information a policy is allowed to see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Info {
    Clairvoyant,
    NonClairvoyant,
}

impl Info {
    pub fn name(self) -> &'static str {
        match self {
            Info::Clairvoyant => "clairvoyant",
            Info::NonClairvoyant => "non-clairvoyant",
        }
    }
}

/// New indices after a driver compacted its flows, coflows and paths (the
/// runtime's master drops finished coflows, and the paths no flow held uses):
/// `flows[old]`, `coflows[old]` and `paths[old]` are the new index, or
/// [`Remap::DROPPED`]. Relative order is kept, and a coflow is kept or dropped
/// with all its flows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Remap {
    pub flows: Vec<u32>,
    pub coflows: Vec<u32>,
    pub paths: Vec<u32>,
}

impl Remap {
    pub const DROPPED: u32 = u32::MAX;

    /// `v` (indexed by old flow or coflow, per `map`) keeping only the
    /// surviving entries, in their new places. Entries past `map`'s end (state
    /// a policy never grew to) are dropped.
    pub fn compact<T>(map: &[u32], v: &mut Vec<T>) {
        let mut w = 0;
        for (r, &to) in map.iter().enumerate().take(v.len()) {
            if to != Self::DROPPED {
                debug_assert_eq!(to as usize, w);
                v.swap(w, r);
                w += 1;
            }
        }
        v.truncate(w);
    }

    /// Old index `i` renamed; `None` if dropped or out of range.
    pub fn get(map: &[u32], i: u32) -> Option<u32> {
        map.get(i as usize).copied().filter(|&j| j != Self::DROPPED)
    }
}

pub trait ClairvoyantPolicy: Send {
    fn decide(&mut self, view: &ClairvoyantView, out: &mut Decision);

    /// The driver renamed its flows and coflows (see [`Remap`]). A policy that
    /// keeps state by flow or coflow index across decisions renames it and
    /// returns true; `false` (the default) asks the driver for a fresh policy,
    /// which is exact for a policy whose decisions depend only on the view.
    fn remap(&mut self, _m: &Remap) -> bool {
        false
    }
}

pub trait NonClairvoyantPolicy: Send {
    fn decide(&mut self, view: &NonClairvoyantView, out: &mut Decision);

    /// See [`ClairvoyantPolicy::remap`].
    fn remap(&mut self, _m: &Remap) -> bool {
        false
    }

    /// False for a policy that can neither rename its state nor start afresh
    /// without changing its decisions (`coda`: its identifier's clusters are
    /// kept by flow index): a driver then never compacts under it.
    fn compactable(&self) -> bool {
        true
    }

    /// For a policy that schedules coflows it identified itself: the label each
    /// flow had last (by global flow index; `u32::MAX` for a flow never seen).
    fn flow_labels(&self) -> Option<Vec<u32>> {
        None
    }

    /// For such a policy that also binds flows to the coflow they are served with
    /// (CODA's late binding): the labelled coflow each flow was last bound to (by
    /// global flow index; `u32::MAX` for a flow never served).
    fn flow_bindings(&self) -> Option<Vec<u32>> {
        None
    }

    /// Per-flow columns a policy reports about its own state at the end of a
    /// simulation (by global flow index; NaN for a flow it never saw), each
    /// named after the policy (`stream_first_class`, ...). Empty by default.
    fn flow_columns(&self) -> Vec<(&'static str, Vec<f64>)> {
        Vec::new()
    }

    /// The same for one flow, for a driver that asks about a few (the runtime's
    /// master, per round): `None` for a policy that does not label flows,
    /// `Some(u32::MAX)` for a flow it has not seen.
    fn flow_label(&self, _f: u32) -> Option<u32> {
        None
    }

    /// True for a policy whose rates depend only on a flow's path (every flow of a
    /// path gets the same rate): it answers with [`Decision::path_rates`], listing
    /// only the paths whose rate changed, and the driver serves each path's flows
    /// as one group (`fair`). A driver that serves paths may hand it a decision
    /// with no per-flow rates (`out.rates` empty): it must not write them.
    fn path_mode(&self) -> bool {
        false
    }
}

/// A policy of either information model.
pub enum AnyPolicy {
    Clairvoyant(Box<dyn ClairvoyantPolicy>),
    NonClairvoyant(Box<dyn NonClairvoyantPolicy>),
}

impl AnyPolicy {
    /// See [`NonClairvoyantPolicy::flow_labels`].
    pub fn flow_labels(&self) -> Option<Vec<u32>> {
        match self {
            AnyPolicy::Clairvoyant(_) => None,
            AnyPolicy::NonClairvoyant(p) => p.flow_labels(),
        }
    }

    /// See [`NonClairvoyantPolicy::flow_bindings`].
    pub fn flow_bindings(&self) -> Option<Vec<u32>> {
        match self {
            AnyPolicy::Clairvoyant(_) => None,
            AnyPolicy::NonClairvoyant(p) => p.flow_bindings(),
        }
    }

    /// See [`NonClairvoyantPolicy::flow_columns`].
    pub fn flow_columns(&self) -> Vec<(&'static str, Vec<f64>)> {
        match self {
            AnyPolicy::Clairvoyant(_) => Vec::new(),
            AnyPolicy::NonClairvoyant(p) => p.flow_columns(),
        }
    }

    /// See [`NonClairvoyantPolicy::flow_label`].
    pub fn flow_label(&self, f: u32) -> Option<u32> {
        match self {
            AnyPolicy::Clairvoyant(_) => None,
            AnyPolicy::NonClairvoyant(p) => p.flow_label(f),
        }
    }

    /// See [`NonClairvoyantPolicy::path_mode`].
    pub fn path_mode(&self) -> bool {
        match self {
            AnyPolicy::Clairvoyant(_) => false,
            AnyPolicy::NonClairvoyant(p) => p.path_mode(),
        }
    }

    /// See [`NonClairvoyantPolicy::compactable`].
    pub fn compactable(&self) -> bool {
        match self {
            AnyPolicy::Clairvoyant(_) => true,
            AnyPolicy::NonClairvoyant(p) => p.compactable(),
        }
    }

    /// See [`ClairvoyantPolicy::remap`].
    pub fn remap(&mut self, m: &Remap) -> bool {
        match self {
            AnyPolicy::Clairvoyant(p) => p.remap(m),
            AnyPolicy::NonClairvoyant(p) => p.remap(m),
        }
    }

    pub fn info(&self) -> Info {
        match self {
            AnyPolicy::Clairvoyant(_) => Info::Clairvoyant,
            AnyPolicy::NonClairvoyant(_) => Info::NonClairvoyant,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Remap;

    #[test]
    fn remap_keeps_survivors_in_order_and_drops_state_past_the_map() {
        let d = Remap::DROPPED;
        let map = [d, 0, d, 1, 2];
        let mut v = vec!['a', 'b', 'c', 'd', 'e', 'f'];
        Remap::compact(&map, &mut v);
        assert_eq!(v, ['b', 'd', 'e']);
        let mut short = vec![10, 11];
        Remap::compact(&map, &mut short);
        assert_eq!(short, [11]);
        assert_eq!(Remap::get(&map, 3), Some(1));
        assert_eq!(Remap::get(&map, 2), None);
        assert_eq!(Remap::get(&map, 9), None);
    }
}
