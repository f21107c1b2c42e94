//! What several policies share.

pub mod buckets;
pub mod classes;
pub mod cuts;
pub mod drive;
pub mod flowsync;
pub mod forms;
pub mod identify;
pub mod labels;
pub mod levelclasses;
pub mod loads;
pub mod loadtree;
pub mod mlfq;
pub mod pathflows;
pub mod priority;
pub mod rankclasses;
pub mod thresholds;
