//! Rate allocators over residual link capacities.
//!
//! Every allocator takes the residual capacity `c_l` of every link (bytes/s), assigns
//! rates `r_f` to a set of flows, and subtracts them: on return
//! `c_l ← c_l − Σ_{f ∋ l} r_f ≥ 0`. A residual `c_l ≤ 1e-9 · C_l` (`C_l` the
//! capacity) counts as zero.
//!
//! * [`MaxMin`]: weighted max-min fairness by progressive filling. Entities are
//!   flows aggregated by path (flows with the same links get the same rate), each with
//!   weight `w_i` = number of flows. All unfrozen entities rise at the same per-flow
//!   rate `x`; link `l` saturates when `Σ_{frozen i ∋ l} w_i r_i + x Σ_{unfrozen i ∋ l} w_i = c_l`;
//!   entities crossing the first saturated link freeze at `x`. Repeat until all freeze.
//! * [`LevelMaxMin`]: the same max-min kept as a level per bottleneck link and
//!   solved by progressive filling over links (groups of paths), not paths.
//! * [`TailMaxMin`]: [`MaxMin`] for one group kept across calls, solved again only
//!   from the lowest level a change can reach.
//! * [`MaxMin::priority`]: ordered groups; group 1 gets max-min rates on the residual
//!   capacity, group 2 on what is left, and so on.
//! * [`madd`]: MADD (Varys): `Γ' = max_l R_l / c_l` with `R_l` the group's remaining
//!   bytes on `l`; `r_f = rem_f / Γ'` so all flows finish together; nothing if some
//!   `c_l` of the group is zero.
//! * [`greedy`]: flows in order, `r_f = min_{l ∈ f} c_l`.
//! * [`IncGreedy`]: the same greedy over an order kept across calls, recomputed
//!   only where a change can reach (bit for bit what `greedy` gives).
//! * [`Filling`]: max-min over arbitrary constraint sets (links and per-coflow
//!   caps alike), for HUG's second stage.

mod filling;
mod incgreedy;
mod levels;
mod maxmin;
mod rate_order;
mod reach;
mod tail;

pub use filling::Filling;
pub use incgreedy::IncGreedy;
pub use levels::LevelMaxMin;
pub use maxmin::MaxMin;
pub use reach::Reach;
pub use tail::TailMaxMin;

use coflowkit_model::{Fabric, PathId, CAPACITY_EPS};

/// The residual capacity of link `l`, zero when at most `1e-9 · C_l`.
#[inline]
pub fn avail(residual: &[f64], capacity: &[f64], l: usize) -> f64 {
    let r = residual[l];
    if r <= CAPACITY_EPS * capacity[l] {
        0.0
    } else {
        r
    }
}

/// Subtracts `rate` from every link of `path`, clamping at zero.
#[inline]
pub fn consume(fabric: &Fabric, residual: &mut [f64], path: PathId, rate: f64) {
    if rate > 0.0 {
        for &l in fabric.path(path) {
            let r = &mut residual[l as usize];
            *r = (*r - rate).max(0.0);
        }
    }
}

/// The largest rate a single flow on `path` can get: `min_{l ∈ path} c_l`.
#[inline]
pub fn path_avail(fabric: &Fabric, residual: &[f64], path: PathId) -> f64 {
    let mut m = f64::INFINITY;
    for &l in fabric.path(path) {
        m = m.min(avail(residual, &fabric.capacities, l as usize));
    }
    if m.is_finite() {
        m
    } else {
        0.0
    }
}

/// Greedy: in the given order, each flow gets `min_{l ∈ f} c_l` (added to
/// `rates[i]`, so it also serves as the backfilling step of Varys).
pub fn greedy(fabric: &Fabric, residual: &mut [f64], paths: &[PathId], rates: &mut [f64]) {
    for (i, &p) in paths.iter().enumerate() {
        let r = path_avail(fabric, residual, p);
        if r > 0.0 {
            rates[i] += r;
            consume(fabric, residual, p, r);
        }
    }
}

/// Scratch space for [`madd`], reused across calls.
#[derive(Default)]
pub struct MaddScratch {
    load: Vec<f64>,
    touched: Vec<u32>,
}

/// MADD for one coflow: `Γ' = max_l R_l / c_l`, `r_f = rem_f / Γ'`. Writes `rates`
/// and consumes the residual; returns `false` (and all-zero rates) when some link
/// used by the coflow has zero residual.
pub fn madd(
    fabric: &Fabric,
    residual: &mut [f64],
    paths: &[PathId],
    remaining: &[f64],
    rates: &mut [f64],
    s: &mut MaddScratch,
) -> bool {
    if s.load.len() < fabric.num_links() {
        s.load.resize(fabric.num_links(), 0.0);
    }
    s.touched.clear();
    for (&p, &rem) in paths.iter().zip(remaining) {
        for &l in fabric.path(p) {
            let l = l as usize;
            if s.load[l] == 0.0 {
                s.touched.push(l as u32);
            }
            s.load[l] += rem;
        }
    }
    let mut gamma: f64 = 0.0;
    let mut blocked = false;
    for &l in &s.touched {
        let l = l as usize;
        let c = avail(residual, &fabric.capacities, l);
        if c <= 0.0 {
            blocked = true;
        } else {
            gamma = gamma.max(s.load[l] / c);
        }
        s.load[l] = 0.0;
    }
    if blocked || gamma <= 0.0 {
        rates.iter_mut().for_each(|r| *r = 0.0);
        return false;
    }
    for ((&p, &rem), r) in paths.iter().zip(remaining).zip(rates.iter_mut()) {
        *r = rem / gamma;
        consume(fabric, residual, p, *r);
    }
    true
}

/// MADD from a coflow's per-link remaining bytes `loads` (`(l, R_l)`, as a
/// policy keeps them across calls), for a caller that gives each flow
/// `rem_f / Γ'` itself: returns `Γ' = max_l R_l / c_l` and takes `R_l / Γ'`
/// from each link, or `None` (nothing taken) when some `c_l` is zero or
/// nothing remains. `caps`, when given, holds one more bound per entry of
/// `loads` (the coflow's room under a cap on that link): `c_l` is then the
/// smaller of the two, and the share is taken from both. The same rates as
/// [`madd`] up to the order of its sums (`madd` takes each flow's rate from
/// each of its links), without a pass over the flows' links.
pub fn madd_gamma(
    fabric: &Fabric,
    residual: &mut [f64],
    loads: &[(u32, f64)],
    caps: Option<&mut [f64]>,
) -> Option<f64> {
    let c = &fabric.capacities;
    let mut gamma: f64 = 0.0;
    for (j, &(l, b)) in loads.iter().enumerate() {
        let mut room = avail(residual, c, l as usize);
        if let Some(h) = caps.as_deref() {
            room = room.min(h[j]);
        }
        if room <= 0.0 {
            return None;
        }
        gamma = gamma.max(b / room);
    }
    if gamma <= 0.0 {
        return None;
    }
    for &(l, b) in loads {
        let r = &mut residual[l as usize];
        *r = (*r - b / gamma).max(0.0);
    }
    if let Some(h) = caps {
        for (x, &(_, b)) in h.iter_mut().zip(loads) {
            *x = (*x - b / gamma).max(0.0);
        }
    }
    Some(gamma)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fabric(ports: u32, cap: f64) -> (Fabric, Vec<f64>) {
        let f = Fabric::big_switch(ports, cap).unwrap();
        let r = f.capacities.clone();
        (f, r)
    }

    #[test]
    fn greedy_takes_the_min_residual_in_order() {
        // f0: up0→down1, f1: up0→down2, f2: up1→down1; C = 10.
        // f0 = min(10,10) = 10; f1 = min(0,10) = 0; f2 = min(10, 0) = 0.
        let (mut f, mut res) = fabric(3, 10.0);
        let p = [
            f.route(0, 1, 0).unwrap(),
            f.route(0, 2, 0).unwrap(),
            f.route(1, 1, 0).unwrap(),
        ];
        let mut rates = [0.0; 3];
        greedy(&f, &mut res, &p, &mut rates);
        assert_eq!(rates, [10.0, 0.0, 0.0]);
        assert_eq!(res[0], 0.0);
        assert_eq!(res[4], 0.0); // down1
        assert_eq!(res[5], 10.0); // down2
    }

    #[test]
    fn madd_finishes_all_flows_together_at_the_bottleneck() {
        // Coflow: f0 up0→down2 with 30 B, f1 up1→down2 with 10 B; C = 10 B/s.
        // down2 carries 40 B → Γ' = 40/10 = 4 s; r0 = 30/4 = 7.5, r1 = 10/4 = 2.5.
        let (mut f, mut res) = fabric(3, 10.0);
        let p = [f.route(0, 2, 0).unwrap(), f.route(1, 2, 0).unwrap()];
        let mut rates = [0.0; 2];
        let mut s = MaddScratch::default();
        assert!(madd(&f, &mut res, &p, &[30.0, 10.0], &mut rates, &mut s));
        assert_eq!(rates, [7.5, 2.5]);
        assert_eq!(res[0], 2.5); // up0 keeps 10 − 7.5
        assert_eq!(res[5], 0.0); // down2 full
                                 // A second coflow through down2 now gets nothing.
        let mut r2 = [1.0];
        assert!(!madd(&f, &mut res, &[p[1]], &[5.0], &mut r2, &mut s));
        assert_eq!(r2, [0.0]);
    }

    #[test]
    fn madd_from_loads_gives_madd_rates_and_residual() {
        // The coflow of the test above, as loads: up0 30, up1 10, down2 40.
        // Γ' = 4 s; the residual is madd's: up0 2.5, up1 7.5, down2 0.
        let (mut f, mut res) = fabric(3, 10.0);
        let p = [f.route(0, 2, 0).unwrap(), f.route(1, 2, 0).unwrap()];
        let mut want = res.clone();
        let mut rates = [0.0; 2];
        assert!(madd(
            &f,
            &mut want,
            &p,
            &[30.0, 10.0],
            &mut rates,
            &mut MaddScratch::default()
        ));
        let (up0, up1, down2) = (f.path(p[0])[0], f.path(p[1])[0], f.path(p[0])[1]);
        assert_eq!(
            madd_gamma(
                &f,
                &mut res,
                &[(up0, 30.0), (up1, 10.0), (down2, 40.0)],
                None
            ),
            Some(4.0)
        );
        assert_eq!(res, want);
        assert_eq!((30.0 / 4.0, 10.0 / 4.0), (rates[0], rates[1]));
        // down2 is full: a second coflow through it gets nothing, and takes nothing.
        let before = res.clone();
        assert_eq!(
            madd_gamma(&f, &mut res, &[(up1, 5.0), (down2, 5.0)], None),
            None
        );
        assert_eq!(res, before);
        // Nothing remaining: nothing to give.
        assert_eq!(madd_gamma(&f, &mut res, &[(up0, 0.0)], None), None);
        // Caps: on a fresh residual, up0 30 B under a cap of 5 B/s and down2
        // 40 B with no cap to speak of (100): Γ' = max(30/5, 40/10) = 6 s;
        // each cap loses its share (5 − 5 = 0, 100 − 40/6).
        let (_, mut fresh) = fabric(3, 10.0);
        let mut caps = [5.0, 100.0];
        let g = madd_gamma(
            &f,
            &mut fresh,
            &[(up0, 30.0), (down2, 40.0)],
            Some(&mut caps),
        );
        assert_eq!(g, Some(6.0));
        assert_eq!(caps, [0.0, 100.0 - 40.0 / 6.0]);
        assert_eq!(
            (fresh[up0 as usize], fresh[down2 as usize]),
            (5.0, 10.0 - 40.0 / 6.0)
        );
    }

    #[test]
    fn residual_below_epsilon_counts_as_zero() {
        let (mut f, mut res) = fabric(2, 1e9);
        let p = [f.route(0, 1, 0).unwrap()];
        res[0] = 0.5; // 5e-10 of capacity
        let mut rates = [0.0];
        greedy(&f, &mut res, &p, &mut rates);
        assert_eq!(rates, [0.0]);
    }
}
