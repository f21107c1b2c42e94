//! The exact, event-driven simulator.
//!
//! No time quanta: rates are constant between events, and the next event is the
//! earliest of the next flow start, the earliest completion at current rates and the
//! earliest policy wake-up. Events less than [`TIME_EPS`] apart are one event,
//! handled as: completions, starts (in global index order, i.e. coflow arrival,
//! coflow id, flow index), timers, then one policy call.
//!
//! A flow is finished when its remaining bytes are at most
//! `max(1e-6 B, 1e-9 · size)`, or when at its current rate it would finish within
//! [`TIME_EPS`] (the same event); the remainder is credited so bytes are conserved.
//! A flow starts at the later of its start time and the finish of every flow it
//! depends on. CCT = finish of the coflow's last flow − coflow arrival.
//!
//! On request ([`SimOptions::record`]) the engine also records the instantaneous
//! metrics of the fairness papers (per-coflow progress, isolation guarantee,
//! progress disparity, utilization) as a [`Series`].

pub mod coflowsim;
mod engine;
mod rates;
mod series;
mod sorted;

pub use coflowkit_model::TIME_EPS;
pub use engine::{simulate, ClassForm, Progress, Realloc, SimError, SimOptions, SimResult};
pub use series::{Recording, Series};
