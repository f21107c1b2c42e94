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

    pub fn info(&self) -> Info {
        match self {
            AnyPolicy::Clairvoyant(_) => Info::Clairvoyant,
            AnyPolicy::NonClairvoyant(_) => Info::NonClairvoyant,
        }
    }
}
