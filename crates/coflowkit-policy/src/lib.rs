//! Scheduling policies: the trait, the views matching each information model, and
//! one file per policy (the registry: [`policies`]).
//!
//! A policy never reads a clock or a global: the driver (the simulator's engine, or
//! the runtime master's `Live`) hands it a view at every event and the policy writes
//! a [`Decision`]. What a policy may know is explicit in its type:
//!
//! * [`ClairvoyantPolicy`] gets a [`ClairvoyantView`]: flow sizes and remaining bytes.
//! * [`NonClairvoyantPolicy`] gets a [`NonClairvoyantView`]: each active flow's links
//!   and bytes sent so far, each coflow's known width; no sizes.
//!
//! Layout: `view`, `decision` and `policy` are the interface; `params` and `spec`
//! describe a policy to the catalogue; `policies/` has one file per policy and the
//! list of them; `registry` finds and builds them by name; `support/` holds what
//! several policies share (priority max-min, cuts, load caches, thresholds, the
//! drivers' shared steps, coda's labellers); `testkit` builds views for unit tests.
//! Modules import each other, never the crate root (no cycles).

pub mod decision;
mod params;
pub mod policies;
pub mod policy;
pub mod registry;
pub mod spec;
pub mod support;
#[cfg(test)]
pub(crate) mod testkit;
pub mod view;

pub use decision::{Decision, Wakeup};
pub use params::{ParamSpec, Params};
pub use policies::coda::{Coda, CodaConfig};
pub use policies::mcs::{Mcs, McsConfig};
pub use policies::stream::{Stream, StreamConfig};
pub use policies::REGISTRY;
pub use policy::{AnyPolicy, ClairvoyantPolicy, Info, NonClairvoyantPolicy, Remap};
pub use registry::{build, find};
pub use spec::PolicySpec;
pub use support::drive;
pub use support::identify;
pub use support::labels;
pub use support::thresholds::Thresholds;
pub use view::{ActiveCoflow, ClairvoyantView, Common, NonClairvoyantView, NO_PORT};
