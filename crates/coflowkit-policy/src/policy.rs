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

pub trait ClairvoyantPolicy: Send {
    fn decide(&mut self, view: &ClairvoyantView, out: &mut Decision);
}

pub trait NonClairvoyantPolicy: Send {
    fn decide(&mut self, view: &NonClairvoyantView, out: &mut Decision);

    /// For a policy that schedules coflows it identified itself: the label each
    /// flow had last (by global flow index; `u32::MAX` for a flow never seen).
    fn flow_labels(&self) -> Option<Vec<u32>> {
        None
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

    pub fn info(&self) -> Info {
        match self {
            AnyPolicy::Clairvoyant(_) => Info::Clairvoyant,
            AnyPolicy::NonClairvoyant(_) => Info::NonClairvoyant,
        }
    }
}
