//! Steps every driver of policies shares (the simulator's engine and the runtime's
//! `Live`): grouping the active flows by coflow for the view, and turning a class
//! decision into rates.

use crate::view::ActiveCoflow;
use coflowkit_alloc::MaxMin;
use coflowkit_model::{Fabric, PathId};

/// `out` = the active flows (sorted global indices, a coflow's flows contiguous
/// from `first_flow[k]` for `width[k]`) as one range per coflow.
pub fn group_active(
    active: &[u32],
    flow_coflow: &[u32],
    first_flow: &[u32],
    width: &[u32],
    out: &mut Vec<ActiveCoflow>,
) {
    out.clear();
    let mut i = 0;
    while i < active.len() {
        let k = flow_coflow[active[i] as usize];
        let past = first_flow[k as usize] + width[k as usize];
        let end = i + active[i..].partition_point(|&f| f < past);
        out.push(ActiveCoflow {
            coflow: k,
            start: i as u32,
            end: end as u32,
        });
        i = end;
    }
}

/// Strict priority across classes, max-min fair within a class (the flow-level
/// model of strict-priority switch queues): `rates[i]` for the flow on `paths[i]`
/// in class `classes[i]`, taken from `residual`, which is left with what remains.
pub fn class_rates(
    mm: &mut MaxMin,
    fabric: &Fabric,
    residual: &mut [f64],
    paths: &[PathId],
    classes: &[u8],
    rates: &mut [f64],
) {
    let mut pos: Vec<u32> = (0..paths.len() as u32).collect();
    pos.sort_by_key(|&i| (classes[i as usize], i));
    let sorted: Vec<PathId> = pos.iter().map(|&i| paths[i as usize]).collect();
    let mut ends = Vec::new();
    for k in 1..=pos.len() {
        if k == pos.len() || classes[pos[k] as usize] != classes[pos[k - 1] as usize] {
            ends.push(k);
        }
    }
    let mut r = vec![0.0; pos.len()];
    mm.priority(fabric, residual, &sorted, &ends, &mut r);
    for (k, &i) in pos.iter().enumerate() {
        rates[i as usize] = r[k];
    }
}
