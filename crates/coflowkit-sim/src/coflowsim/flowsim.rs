//! CoflowSim's `FlowSimulator`: FAIR and PFP, whose rates change whenever a flow
//! ends (not only at its admission and departure hooks).
//!
//! * FAIR (`fairShare`): each laid flow moves
//!   `min(1 MB / flows into its reducer rack, 1 MB / flows out of its mapper rack)`
//!   per step, the counts taken at the start of the step; not max-min.
//! * PFP (`proceedFlowsInAllRacksInSortedOrder`): rack by rack, the first flow of
//!   the rack's list whose mapper rack no earlier rack serves moves 1 MB; the list
//!   is ordered once, at admission (`addAscending`).

use super::engine::{jmin, Scheduler, Sim, NONE};
use super::jobs::{QUANTUM, RACK_BYTES_PER_SEC};

impl Sim<'_> {
    pub(super) fn fair_admit(&mut self, j: u32) {
        for r in self.js[j as usize].reds.clone() {
            let rack = self.reds[r as usize].rack as usize;
            for i in 0..self.reds[r as usize].flows.len() {
                let f = self.reds[r as usize].flows[i];
                self.fl[f as usize].laid = true;
                let src = self.fl[f as usize].src as usize;
                self.cnt_dst[rack] += 1;
                self.cnt_src[src] += 1;
                self.by_dst[rack].push(f);
                self.by_src[src].push(f);
            }
        }
    }

    /// `FlowSimulator.addAscending`: before the first flow whose remaining bytes
    /// exceed the new flow's size.
    pub(super) fn pfp_admit(&mut self, j: u32) {
        let s = self.sigma;
        for i in 0..self.racks {
            let f = self.served[i];
            if f != NONE {
                self.sync_flow(f, s);
            }
        }
        for r in self.js[j as usize].reds.clone() {
            let rack = self.reds[r as usize].rack as usize;
            for i in 0..self.reds[r as usize].flows.len() {
                let f = self.reds[r as usize].flows[i];
                self.fl[f as usize].laid = true;
                let size = self.fl[f as usize].rem;
                let list = &self.plist[rack];
                let at = list
                    .iter()
                    .position(|&g| self.fl[g as usize].rem > size)
                    .unwrap_or(list.len());
                self.plist[rack].insert(at, f);
            }
        }
    }

    /// FAIR: `min(1 MB / flows into the rack, 1 MB / flows out of the mapper)`.
    pub(super) fn fair_b(&self, f: u32) -> f64 {
        let x = &self.fl[f as usize];
        let q = RACK_BYTES_PER_SEC * (1.0 * QUANTUM as f64 / 1024.0);
        let dst = self.reds[x.red as usize].rack as usize;
        jmin(
            q / self.cnt_dst[dst] as f64,
            q / self.cnt_src[x.src as usize] as f64,
        )
    }

    /// Re-rates the FAIR flows of the given racks at step `s`.
    pub(super) fn fair_update(&mut self, dst: &[u32], src: &[u32], s: u64) {
        self.gen = self.gen.wrapping_add(1);
        let gen = self.gen;
        let mut changed: Vec<u32> = Vec::new();
        let mut reds: Vec<u32> = Vec::new();
        for (lists, counts, racks) in [(0, 0, dst), (1, 1, src)] {
            for &k in racks {
                let k = k as usize;
                let live = if counts == 0 {
                    self.cnt_dst[k]
                } else {
                    self.cnt_src[k]
                } as usize;
                let list = if lists == 0 {
                    &mut self.by_dst[k]
                } else {
                    &mut self.by_src[k]
                };
                if list.len() > 2 * live + 16 {
                    let fl = &self.fl;
                    list.retain(|&f| !fl[f as usize].done);
                }
                let list = if lists == 0 {
                    &self.by_dst[k]
                } else {
                    &self.by_src[k]
                };
                for &f in list {
                    let x = &self.fl[f as usize];
                    if x.done || self.stamp[f as usize] == gen {
                        continue;
                    }
                    self.stamp[f as usize] = gen;
                    if self.fair_b(f).to_bits() != x.b.to_bits() {
                        changed.push(f);
                        if self.red_stamp[x.red as usize] != gen {
                            self.red_stamp[x.red as usize] = gen;
                            reds.push(x.red);
                        }
                    }
                }
            }
        }
        for &r in &reds {
            self.sync_red(r, s);
        }
        for &f in &changed {
            self.sync_flow(f, s);
            let b = self.fair_b(f);
            self.set_flow(f, b, true, s);
        }
        for &r in &reds {
            self.rebuild_red(r);
        }
    }

    /// PFP: rack by rack, the first flow whose mapper is not yet busy moves 1 MB.
    pub(super) fn pfp_update(&mut self, s: u64) {
        let mut busy = vec![false; self.racks];
        let mut next = vec![NONE; self.racks];
        for (slot, list) in next.iter_mut().zip(&self.plist) {
            for &f in list {
                let src = self.fl[f as usize].src as usize;
                if !busy[src] {
                    busy[src] = true;
                    *slot = f;
                    break;
                }
            }
        }
        let q = RACK_BYTES_PER_SEC * (1.0 * QUANTUM as f64 / 1024.0);
        for (i, &new) in next.iter().enumerate() {
            let old = self.served[i];
            if old == new {
                continue;
            }
            for (f, b) in [(old, 0.0), (new, q)] {
                if f == NONE || self.fl[f as usize].done {
                    continue;
                }
                let r = self.fl[f as usize].red;
                self.sync_red(r, s);
                self.sync_flow(f, s);
                self.set_flow(f, b, true, s);
                self.rebuild_red(r);
            }
            self.served[i] = new;
        }
    }

    /// FAIR re-rates the racks of flows that ended; PFP picks the flows to serve.
    pub(super) fn after_finishes(&mut self, finished: &[u32], s1: u64) {
        match self.kind {
            Scheduler::Fair if !finished.is_empty() => {
                let mut dst = Vec::new();
                let mut src = Vec::new();
                for &f in finished {
                    let x = &self.fl[f as usize];
                    let d = self.reds[x.red as usize].rack;
                    self.cnt_dst[d as usize] -= 1;
                    self.cnt_src[x.src as usize] -= 1;
                    dst.push(d);
                    src.push(x.src);
                }
                dst.sort_unstable();
                dst.dedup();
                src.sort_unstable();
                src.dedup();
                self.fair_update(&dst, &src, s1);
            }
            Scheduler::Pfp if !finished.is_empty() => {
                for &f in finished {
                    let rack = self.reds[self.fl[f as usize].red as usize].rack as usize;
                    self.plist[rack].retain(|&g| g != f);
                    if self.served[rack] == f {
                        self.served[rack] = NONE;
                    }
                }
                self.pfp_update(s1);
            }
            _ => {}
        }
    }
}
