//! Compaction of [`Live`] (the module documentation of the crate): finished
//! coflows, their flows and the paths no held flow uses are dropped, keeping
//! order, and the policy renames its state or is built afresh.

use crate::{Live, HISTORY};
use coflowkit_policy::{registry, Remap};

impl Live {
    /// Drops the finished coflows now if they are due (see the module
    /// documentation); true if it did.
    pub fn compact_if_due(&mut self) -> bool {
        let alive = self.d.coflow_id.len() - self.done;
        let alive_flows = self.state.len() - self.done_flows;
        let due = self.done >= self.min_compact.max(alive)
            || self.done_flows >= self.min_compact_flows.max(alive_flows);
        if !due || !self.policy.compactable() {
            return false;
        }
        self.compact();
        true
    }

    /// Drops every finished coflow and its flows, keeping order (only for a
    /// compactable policy: see `compact_if_due`).
    fn compact(&mut self) {
        let nc = self.d.coflow_id.len();
        let mut m = Remap {
            flows: vec![Remap::DROPPED; self.state.len()],
            coflows: vec![Remap::DROPPED; nc],
            paths: Vec::new(),
        };
        let mut kept = 0u32;
        for k in 0..nc {
            if self.coflow_left[k] > 0 {
                m.coflows[k] = kept;
                kept += 1;
            } else {
                self.compacted_bytes += self.d.coflow_base[k];
                if self.history.len() == HISTORY {
                    self.history.pop_front();
                }
                self.history.push_back(self.row(k));
            }
        }
        let mut kept = 0u32;
        for (i, &k) in self.d.flow_coflow.iter().enumerate() {
            if m.coflows[k as usize] != Remap::DROPPED {
                m.flows[i] = kept;
                kept += 1;
            }
        }
        self.apply(&m);
        m.paths = self.compact_paths();
        self.done = 0;
        self.done_flows = 0;
        self.compactions += 1;
        if !self.policy.remap(&m) {
            self.policy = registry::build(&self.policy_name, &self.params)
                .expect("the policy was built with these parameters before");
            // A fresh policy has no per-path state: every path is news to it.
            self.d.changed_paths = self.d.active_paths.clone();
        }
    }

    /// A fresh fabric with only the paths of the flows held, numbered in the
    /// order of their old ids (a big switch interns a path per host pair ever
    /// used: 10,000 hosts have 10^8 of them); returns old path -> new.
    fn compact_paths(&mut self) -> Vec<u32> {
        let old = self.fabric.num_paths();
        let mut ends: Vec<Option<(u32, u32)>> = vec![None; old];
        for (i, &p) in self.d.flow_path.iter().enumerate() {
            ends[p as usize] = Some((self.d.flow_src[i], self.d.flow_dst[i]));
        }
        let mut fabric = self.fabric.cleared();
        let map: Vec<u32> = ends
            .iter()
            .map(|e| match *e {
                Some((s, d)) => fabric
                    .route(s, d, 0)
                    .expect("these hosts were routed on this fabric before"),
                None => Remap::DROPPED,
            })
            .collect();
        self.fabric = fabric;
        let d = &mut self.d;
        for p in d.flow_path.iter_mut() {
            *p = map[*p as usize];
        }
        for list in [&mut d.active_paths, &mut d.changed_paths] {
            list.retain_mut(|p| match Remap::get(&map, *p) {
                Some(q) => {
                    *p = q;
                    true
                }
                None => false,
            });
        }
        for v in [
            &mut d.path_base,
            &mut d.path_rate,
            &mut d.path_since,
            &mut self.path_rate,
        ] {
            Remap::compact(&map, v);
        }
        Remap::compact(&map, &mut d.path_count);
        let np = self.fabric.num_paths();
        d.path_count.resize(np, 0);
        self.path_rate.resize(np, 0.0);
        map
    }

    fn apply(&mut self, m: &Remap) {
        let (fm, cm) = (&m.flows[..], &m.coflows[..]);
        let d = &mut self.d;
        macro_rules! per_flow {
            ($($v:expr),*) => { $( Remap::compact(fm, &mut $v); )* };
        }
        macro_rules! per_coflow {
            ($($v:expr),*) => { $( Remap::compact(cm, &mut $v); )* };
        }
        per_flow!(
            d.flow_coflow,
            d.flow_index,
            d.flow_path,
            d.flow_src,
            d.flow_dst,
            d.flow_src_port,
            d.flow_dst_port,
            d.flow_stage,
            d.flow_priority,
            d.flow_seen_s,
            d.size,
            d.base,
            d.rate,
            d.since,
            self.known,
            self.state,
            self.observed,
            self.handle
        );
        per_coflow!(
            d.coflow_id,
            d.arrival,
            d.weight,
            d.width,
            d.first_flow,
            d.length,
            d.csize,
            d.coflow_base,
            d.coflow_rate,
            d.coflow_since,
            d.coflow_started,
            d.reports,
            self.coflow_left,
            self.coflow_finish,
            self.arrived
        );
        for k in d.flow_coflow.iter_mut() {
            *k = cm[*k as usize];
        }
        for f in d.first_flow.iter_mut() {
            *f = fm[*f as usize];
        }
        d.stage_parents
            .retain(|p| cm.get(p.0 as usize).is_some_and(|&k| k != Remap::DROPPED));
        for p in d.stage_parents.iter_mut() {
            p.0 = cm[p.0 as usize];
        }
        for list in [
            &mut d.active,
            &mut self.hidden,
            &mut d.started,
            &mut d.finished,
        ] {
            list.retain_mut(|f| match Remap::get(fm, *f) {
                Some(g) => {
                    *f = g;
                    true
                }
                None => false,
            });
        }
        d.groups.clear();
        self.by_id = d
            .coflow_id
            .iter()
            .enumerate()
            .map(|(k, &id)| (id, k as u32))
            .collect();
        self.ext = self
            .handle
            .iter()
            .enumerate()
            .map(|(i, &h)| (h, i as u32))
            .collect();
    }
}
