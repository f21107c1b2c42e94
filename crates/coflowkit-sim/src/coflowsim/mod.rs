//! `--engine coflowsim`: the simulator the NC-DRF, Coflex and MCS papers used
//! (github.com/coflow/coflowsim), replayed with its own semantics: 8-unit steps
//! of 1/1024 s, admission in 10.24 s epochs, rack-merged jobs with whole-MB flows,
//! and its schedulers FAIR, PFP, FIFO, SCF, NCF, LCF, SEBF and DARK. Every choice is
//! documented with the CoflowSim source it comes from in `docs/engines.md`.

mod engine;
mod flowsim;
mod fpstep;
mod hooked;
mod iheap;
mod jobs;
mod jrandom;
mod rates;

pub use engine::{simulate_coflowsim, simulate_coflowsim_with, CsOptions, CsResult, Scheduler};
pub use hooked::CsPolicy;
