//! [`KeptClasses`]: strict priority across classes of flows, max-min fair within
//! a class, kept across calls and told only what changed.
//!
//! The model is [`crate::drive::class_rates`]'s (strict-priority switch queues
//! at flow level). What is kept:
//!
//! * per flow its class, and per path the flows on it (whatever their class):
//!   a driver tells only the flows that joined, left or changed class;
//! * per class a [`TailMaxMin`] in delta form over the class's per-path flow
//!   counts (the flows of one path in one class get one rate), told the count
//!   changes and answering with the paths whose rate moved;
//! * per class the residual it solves on, kept across calls (class 0's is the
//!   capacities, class `q + 1`'s what class `q` leaves): each class is told the
//!   links where its input moved and tells the next one where its output did
//!   ([`TailMaxMin::solve_chained`]).
//!
//! A call costs the flows told, the paths solved again, the flows on the paths
//! whose rate moved and the links where a residual moved; never a pass over
//! every tracked flow or every link of a class. The rates are those of a fresh
//! [`class_rates`] up to the order of float sums.
//!
//! [`class_rates`]: crate::drive::class_rates

use coflowkit_alloc::TailMaxMin;
use coflowkit_model::{Fabric, PathId};

/// Not tracked (not active, or not classified yet).
const NONE: u16 = u16::MAX;

/// Classes kept across calls (see the module docs).
#[derive(Default)]
pub struct KeptClasses {
    levels: Vec<TailMaxMin>,
    /// Per class: its tracked flows, and this call's `(path, ±1)` changes.
    members: Vec<u32>,
    deltas: Vec<Vec<(PathId, i32)>>,
    changed: Vec<(PathId, f64)>,
    /// Per flow (global index): its class and its slot in `on_path`.
    class: Vec<u16>,
    slot: Vec<u32>,
    /// Per path: its tracked flows, whatever their class.
    on_path: Vec<Vec<u32>>,
    /// Per class: its tracked flows; per flow its slot there.
    in_class: Vec<Vec<u32>>,
    cslot: Vec<u32>,
    /// Flows that joined or changed class since [`KeptClasses::begin`].
    moved: Vec<u32>,
    /// Per class its input residual, and one more for the last class's
    /// output; where the capacities copied into the first live (a fabric
    /// whose capacities are elsewhere is copied in whole, and every link
    /// counts as moved).
    chain: Vec<Vec<f64>>,
    caps_at: usize,
    /// The links where the current class's input moved, and where its output
    /// did.
    moved_in: Vec<u32>,
    moved_out: Vec<u32>,
}

impl KeptClasses {
    pub fn new() -> Self {
        Self::default()
    }

    /// Sizes the per-flow and per-path tables (they only grow).
    pub fn grow(&mut self, flows: usize, paths: usize) {
        if self.class.len() < flows {
            self.class.resize(flows, NONE);
            self.slot.resize(flows, 0);
            self.cslot.resize(flows, 0);
        }
        if self.on_path.len() < paths {
            self.on_path.resize_with(paths, Vec::new);
        }
    }

    /// Starts a call: the list of moved flows is emptied.
    pub fn begin(&mut self) {
        self.moved.clear();
    }

    /// Flow `f`'s class, if tracked.
    pub fn class_of(&self, f: u32) -> Option<usize> {
        match self.class.get(f as usize) {
            None | Some(&NONE) => None,
            Some(&q) => Some(q as usize),
        }
    }

    /// The flows tracked in class `q` (in no particular order).
    pub fn flows_of(&self, q: usize) -> &[u32] {
        self.in_class.get(q).map_or(&[], |v| &v[..])
    }

    /// Takes flow `f` out of class `q`'s list.
    fn leave_class(&mut self, f: u32, q: usize) {
        let list = &mut self.in_class[q];
        let at = self.cslot[f as usize] as usize;
        list.swap_remove(at);
        if let Some(&g) = list.get(at) {
            self.cslot[g as usize] = at as u32;
        }
    }

    /// Renames classes: for each `(a, b)` every flow of class `a` moves to
    /// class `b`, all at once (see
    /// [`crate::decision::Decision::class_renames`]; the flows are told as
    /// moved, `path[f]` is flow `f`'s path). Nothing changes on an error.
    pub fn rename(&mut self, path: &[PathId], pairs: &[(u8, u8)]) -> Result<(), String> {
        if pairs.is_empty() {
            return Ok(());
        }
        let n = u8::MAX as usize + 1;
        check_renames(pairs, n, |q| !self.flows_of(q).is_empty())?;
        let mut moves: Vec<(u32, usize)> = Vec::new();
        for &(a, b) in pairs {
            moves.extend(self.flows_of(a as usize).iter().map(|&f| (f, b as usize)));
        }
        for (f, b) in moves {
            self.assign(f, path[f as usize], b);
        }
        Ok(())
    }

    /// Whether any flow is tracked.
    pub fn is_empty(&self) -> bool {
        self.members.iter().all(|&n| n == 0)
    }

    /// The flows that joined or changed class since [`KeptClasses::begin`]
    /// (a flow may repeat).
    pub fn moved(&self) -> &[u32] {
        &self.moved
    }

    /// Puts flow `f` (on path `p`) in class `q`: tracked if new, moved if in
    /// another class, nothing if already there.
    pub fn assign(&mut self, f: u32, p: PathId, q: usize) {
        assert!(q < NONE as usize, "class {q} is out of range");
        let fi = f as usize;
        let old = self.class[fi];
        if old as usize == q {
            return;
        }
        if self.levels.len() <= q {
            self.levels.resize_with(q + 1, TailMaxMin::new);
            self.members.resize(q + 1, 0);
            self.deltas.resize_with(q + 1, Vec::new);
            self.in_class.resize_with(q + 1, Vec::new);
        }
        if old == NONE {
            let list = &mut self.on_path[p as usize];
            self.slot[fi] = list.len() as u32;
            list.push(f);
        } else {
            self.members[old as usize] -= 1;
            self.deltas[old as usize].push((p, -1));
            self.leave_class(f, old as usize);
        }
        self.cslot[fi] = self.in_class[q].len() as u32;
        self.in_class[q].push(f);
        self.class[fi] = q as u16;
        self.members[q] += 1;
        self.deltas[q].push((p, 1));
        self.moved.push(f);
    }

    /// Stops tracking flow `f` (on path `p`), if tracked.
    pub fn remove(&mut self, f: u32, p: PathId) {
        let fi = f as usize;
        let q = self.class[fi];
        if q == NONE {
            return;
        }
        self.members[q as usize] -= 1;
        self.deltas[q as usize].push((p, -1));
        self.leave_class(f, q as usize);
        let list = &mut self.on_path[p as usize];
        let at = self.slot[fi] as usize;
        list.swap_remove(at);
        if let Some(&g) = list.get(at) {
            self.slot[g as usize] = at as u32;
        }
        self.class[fi] = NONE;
    }

    /// Solves the classes in increasing order on `fabric`'s capacities and
    /// calls `set(flow, rate)` for every tracked flow whose rate may have
    /// moved: the flows of a path whose rate changed in their class (class by
    /// class), then the moved flows (`flow_path[f]` is flow `f`'s path). A flow
    /// may be named more than once; the last rate named is its rate.
    pub fn solve(&mut self, fabric: &Fabric, flow_path: &[PathId], mut set: impl FnMut(u32, f64)) {
        let caps = &fabric.capacities;
        let n = self.levels.len() + 1;
        // Every link counts as moved on a new fabric, or when the chain grew
        // (a new class's input is not known yet).
        let mut all = self.chain.len() != n
            || self.chain[0].len() != caps.len()
            || self.caps_at != caps.as_ptr() as usize;
        if all {
            self.chain.resize_with(n, Vec::new);
            for r in &mut self.chain {
                r.clear();
                r.resize(caps.len(), 0.0);
            }
            self.chain[0].copy_from_slice(caps);
            self.caps_at = caps.as_ptr() as usize;
        }
        self.moved_in.clear();
        for q in 0..self.levels.len() {
            let (before, after) = self.chain.split_at_mut(q + 1);
            if self.deltas[q].is_empty() && self.levels[q].holds_nothing() {
                // An empty class takes nothing: its input passes through where
                // it moved, as its solver would pass it (which would first
                // size its per-path tables: classes a policy numbers sparsely,
                // as `baraat`'s, stay empty at no cost). Its solver, empty
                // since its last call, starts from scratch when flows come.
                if all {
                    after[0].copy_from_slice(&before[q]);
                } else {
                    for &l in &self.moved_in {
                        after[0][l as usize] = before[q][l as usize];
                    }
                }
                continue;
            }
            let moved = (!all).then_some(&self.moved_in[..]);
            let precise = self.levels[q].solve_chained(
                fabric,
                &mut before[q],
                moved,
                &self.deltas[q],
                &mut self.changed,
                &mut after[0],
                &mut self.moved_out,
            );
            all = !precise;
            std::mem::swap(&mut self.moved_in, &mut self.moved_out);
            self.deltas[q].clear();
            for &(p, r) in &self.changed {
                for &f in &self.on_path[p as usize] {
                    if self.class[f as usize] as usize == q {
                        set(f, r);
                    }
                }
            }
        }
        for &f in &self.moved {
            if let Some(q) = self.class_of(f) {
                set(f, self.levels[q].rate_of(flow_path[f as usize]));
            }
        }
    }
}

/// Checks a decision's class renames
/// ([`crate::decision::Decision::class_renames`]) over classes `0..n` (each
/// named class below `n`): each class at most once as `a` and once as `b`,
/// and a class named only as `b` holds no flow (`holds(q)`). Returns which
/// classes are named as `a` (`from`) and as `b` (`to`).
pub(crate) fn check_renames(
    pairs: &[(u8, u8)],
    n: usize,
    holds: impl Fn(usize) -> bool,
) -> Result<(Vec<bool>, Vec<bool>), String> {
    let (mut from, mut to) = (vec![false; n], vec![false; n]);
    for &(a, b) in pairs {
        let (a, b) = (a as usize, b as usize);
        if from[a] || to[b] {
            let q = if from[a] { a } else { b };
            return Err(format!("class {q} renamed twice in one decision"));
        }
        from[a] = true;
        to[b] = true;
    }
    if let Some(q) = (0..n).find(|&q| to[q] && !from[q] && holds(q)) {
        return Err(format!(
            "class {q} is renamed into while it holds flows and is not renamed itself"
        ));
    }
    Ok((from, to))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::drive::class_rates;
    use coflowkit_alloc::MaxMin;

    /// The tests' random numbers (xorshift64), and random routes on `f`'s
    /// 16 hosts (a k = 4 FatTree).
    pub(crate) struct Xorshift(pub u64);

    impl Xorshift {
        pub(crate) fn below(&mut self, m: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % m
        }
    }

    pub(crate) fn random_routes(f: &mut Fabric, n: usize, rng: &mut Xorshift) -> Vec<PathId> {
        (0..n)
            .map(|_| {
                let s = rng.below(16) as u32;
                let d = (s + 1 + rng.below(15) as u32) % 16;
                f.route(s, d, rng.below(4)).unwrap()
            })
            .collect()
    }

    /// Rates of every tracked flow by a fresh `class_rates` on the flows
    /// `(flow, path, class)` (also the reference of `levelclasses`' tests).
    pub(crate) fn fresh(f: &Fabric, flows: &[(u32, PathId, usize)], n: usize) -> Vec<f64> {
        let paths: Vec<PathId> = flows.iter().map(|x| x.1).collect();
        let classes: Vec<u8> = flows.iter().map(|x| x.2 as u8).collect();
        let mut residual = f.capacities.clone();
        let mut r = vec![0.0; flows.len()];
        class_rates(
            &mut MaxMin::new(),
            f,
            &mut residual,
            &paths,
            &classes,
            &mut r,
        );
        let mut out = vec![0.0; n];
        for (x, &rate) in flows.iter().zip(&r) {
            out[x.0 as usize] = rate;
        }
        out
    }

    /// The hand case of the class solvers' tests: a big switch of 3 ports at
    /// C = 10 (links up0 up1 up2 down0 down1 down2) and the paths of flows
    /// 0→1, 0→2, 2→1 and 1→2.
    pub(crate) fn hand_case() -> (Fabric, [PathId; 4]) {
        let mut f = Fabric::big_switch(3, 10.0).unwrap();
        let p = [
            f.route(0, 1, 0).unwrap(),
            f.route(0, 2, 0).unwrap(),
            f.route(2, 1, 0).unwrap(),
            f.route(1, 2, 0).unwrap(),
        ];
        (f, p)
    }

    #[test]
    fn classes_are_served_in_order_and_only_moved_rates_are_named() {
        // C = 10, 3 ports (links: up0 up1 up2 down0 down1 down2).
        // Flow 0: 0→1 class 2; flow 1: 0→2 class 0; flow 2: 2→1 class 1;
        // flow 3: 1→2 class 0.
        // Class 0: flows 1 and 3 share down2, 5 each, leaving 5 on up0 and up1.
        // Class 1: flow 2 gets 10, filling down1. Class 2: flow 0 finds down1
        // full: 0.
        let (f, p) = hand_case();
        let mut kc = KeptClasses::new();
        kc.grow(4, f.num_paths());
        let mut rate = [f64::NAN; 4];
        kc.begin();
        for (i, q) in [2, 0, 1, 0].into_iter().enumerate() {
            kc.assign(i as u32, p[i], q);
        }
        kc.solve(&f, &p, |x, r| rate[x as usize] = r);
        assert_eq!(rate, [0.0, 5.0, 10.0, 5.0]);
        // Flow 3 leaves: flow 1 has down2 and up0 alone (10), which fills up0,
        // so flow 0 (class 2, 0→1) still gets 0 and flow 2 (class 1) keeps 10.
        // Only flow 1's rate moved, and only it is named.
        kc.begin();
        kc.remove(3, p[3]);
        let mut named = Vec::new();
        kc.solve(&f, &p, |x, r| named.push((x, r)));
        assert_eq!(named, [(1, 10.0)]);
        // Flow 2 drops to class 0 (with flow 1): they share nothing, both 10;
        // down1 is full again for flow 0. Only flow 2 is named (its path is new
        // to class 0, and it moved), at 10.
        kc.begin();
        kc.assign(2, p[2], 0);
        let mut named = Vec::new();
        kc.solve(&f, &p, |x, r| named.push((x, r)));
        assert!(
            !named.is_empty() && named.iter().all(|&n| n == (2, 10.0)),
            "{named:?}"
        );
        assert_eq!(kc.class_of(2), Some(0));
        assert_eq!(kc.class_of(3), None);
    }

    #[test]
    fn kept_rates_equal_fresh_solves_under_random_changes() {
        // A k = 4 FatTree (16 hosts), 60 flows on random host pairs with
        // random classes in 0..4; each step some flows leave, join or change
        // class. After every step the rates named so far must equal a fresh
        // strict-priority solve of the tracked flows, to 1e-9 relative.
        random_changes(60, &[0, 1, 2, 3], 0x9e37_79b9_7f4a_7c15);
    }

    #[test]
    fn sparse_classes_that_empty_and_fill_again_are_solved_as_fresh() {
        // Few flows on classes numbered with gaps (as `baraat` numbers its
        // light coflows): classes 0-1, 4-6 and 8-14 never hold a flow, and the
        // others empty out and fill again, so empty classes are passed over
        // (their solvers never sized) and a class that fills after being
        // passed over starts from scratch on an input that moved meanwhile.
        random_changes(8, &[2, 3, 7, 15], 0x2545_f491_4f6c_dd1d);
    }

    fn random_changes(n: usize, classes: &[usize], seed: u64) {
        let mut f = Fabric::from_spec("fattree:k=4", 16).unwrap();
        let mut rng = Xorshift(seed);
        let path = random_routes(&mut f, n, &mut rng);
        let mut kc = KeptClasses::new();
        kc.grow(n, f.num_paths());
        let mut on: Vec<Option<usize>> = vec![None; n];
        let mut rate = vec![0.0; n];
        for step in 0..200 {
            kc.begin();
            if step % 5 == 4 {
                // Rename the classes by a random permutation of them.
                let mut perm = classes.to_vec();
                for i in (1..perm.len()).rev() {
                    perm.swap(i, rng.below(i as u64 + 1) as usize);
                }
                let pairs: Vec<(u8, u8)> = classes
                    .iter()
                    .zip(&perm)
                    .map(|(&a, &b)| (a as u8, b as u8))
                    .collect();
                kc.rename(&path, &pairs).unwrap();
                for q in on.iter_mut().flatten() {
                    *q = perm[classes.iter().position(|c| c == q).unwrap()];
                }
            }
            for _ in 0..1 + rng.below(6) {
                let i = rng.below(n as u64) as usize;
                match (on[i], rng.below(3)) {
                    (Some(_), 0) => {
                        kc.remove(i as u32, path[i]);
                        on[i] = None;
                        rate[i] = 0.0;
                    }
                    _ => {
                        let q = classes[rng.below(classes.len() as u64) as usize];
                        kc.assign(i as u32, path[i], q);
                        on[i] = Some(q);
                    }
                }
            }
            kc.solve(&f, &path, |x, r| rate[x as usize] = r);
            let flows: Vec<(u32, PathId, usize)> = (0..n)
                .filter_map(|i| on[i].map(|q| (i as u32, path[i], q)))
                .collect();
            let want = fresh(&f, &flows, n);
            for i in 0..n {
                assert!(
                    (rate[i] - want[i]).abs() <= 1e-9 * want[i].abs().max(1.0),
                    "step {step}, flow {i}: kept {} fresh {}",
                    rate[i],
                    want[i]
                );
            }
            // Each class lists exactly its tracked flows (renames included).
            for &q in classes {
                let mut got = kc.flows_of(q).to_vec();
                got.sort_unstable();
                let want: Vec<u32> = flows.iter().filter(|x| x.2 == q).map(|x| x.0).collect();
                assert_eq!(got, want, "step {step}, class {q}");
            }
        }
    }
}
