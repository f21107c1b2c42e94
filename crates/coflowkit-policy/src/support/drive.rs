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
    by_class(paths, classes, rates, |_, p, r| {
        mm.solve(fabric, residual, p, r)
    });
}

/// Calls `solve(class, paths, rates)` for each class present, in increasing
/// class order, with the paths of its flows in position order, and scatters the
/// rates back to `rates` by position.
fn by_class(
    paths: &[PathId],
    classes: &[u8],
    rates: &mut [f64],
    mut solve: impl FnMut(u8, &[PathId], &mut [f64]),
) {
    // Positions by (class, position): a counting sort, classes being bytes.
    let mut start = [0usize; 257];
    for &c in classes {
        start[c as usize + 1] += 1;
    }
    for c in 0..256 {
        start[c + 1] += start[c];
    }
    let bounds: Vec<(u8, usize, usize)> = (0..256)
        .filter(|&c| start[c + 1] > start[c])
        .map(|c| (c as u8, start[c], start[c + 1]))
        .collect();
    let mut pos = vec![0u32; paths.len()];
    for (i, &c) in classes.iter().enumerate() {
        pos[start[c as usize]] = i as u32;
        start[c as usize] += 1;
    }
    let sorted: Vec<PathId> = pos.iter().map(|&i| paths[i as usize]).collect();
    let mut r = vec![0.0; pos.len()];
    for &(c, a, b) in &bounds {
        solve(c, &sorted[a..b], &mut r[a..b]);
    }
    for (k, &i) in pos.iter().enumerate() {
        rates[i as usize] = r[k];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::classes::tests::hand_case;

    #[test]
    fn classes_are_served_in_order_whatever_the_positions() {
        // C = 10, 3 ports. Class 0: positions 1 (0→2) and 3 (1→2) share down2,
        // 5 each, leaving 5 on up0 and up1. Class 1: position 2 (2→1) gets 10,
        // filling down1. Class 2: position 0 (0→1) finds down1 full: 0.
        let (f, paths) = hand_case();
        let mut residual = f.capacities.clone();
        let mut rates = [0.0; 4];
        class_rates(
            &mut MaxMin::new(),
            &f,
            &mut residual,
            &paths,
            &[2, 0, 1, 0],
            &mut rates,
        );
        assert_eq!(rates, [0.0, 5.0, 10.0, 5.0]);
        // Left: up0 5, up1 5, up2 0; down0 10, down1 0, down2 0.
        assert_eq!(residual, [5.0, 5.0, 0.0, 10.0, 0.0, 0.0]);
    }
}
