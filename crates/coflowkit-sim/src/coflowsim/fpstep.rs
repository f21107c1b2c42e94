//! Many time steps of a floating-point accumulator at once, bit for bit.
//!
//! CoflowSim advances every flow once per 8-unit step: `x -= b` for a flow's
//! remaining bytes, and for a reducer `x -= b₁; x -= b₂; …` over its flows. Between
//! two events the `b`s are constant, so `k` steps could be computed as `x − k·Σb`,
//! but the rounding of `k` separate subtractions differs from that, and CoflowSim's
//! completion test (`x ≤ 10⁻³` bytes) sees the difference when a size is an exact
//! multiple of the step (which whole-MB sizes make common).
//!
//! The exact shortcut: while `x` and every intermediate result stay inside one
//! binade `[2^e, 2^(e+1))`, every representable value there is a multiple of
//! `u = 2^(e−52)`, so `fl(x − b) = x − round_u(b)` where `round_u(b)` is `b` rounded
//! to the nearest multiple of `u`, independently of `x` (unless `b/u` lies exactly
//! halfway between two integers; then ties-to-even depends on `x`, and we step
//! literally). A step therefore subtracts the integer `D = Σ round_u(bᵢ)` (in units
//! of `u`) while the values stay at least `2^52 + 1` units (so every exact
//! intermediate result is ≥ 2^e). Near the bottom of the binade one step is done
//! literally, and the next binade begins. Adding (`x += b`, for bytes completed)
//! is the mirror image. The cost is a few operations per binade crossed, not per
//! step; `tests` check it against literal stepping.

/// 2^52 and 2^53 as integers.
const TWO52: i64 = 1 << 52;
const TWO53: i64 = 1 << 53;

/// Which way an accumulator moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// `x -= b` for each op.
    Sub,
    /// `x -= b`, then `x = 0` if it went below 0 (CoflowSim's per-rack bytes).
    SubClamp,
    /// `x += b` for each op.
    Add,
}

/// One literal step.
#[inline]
pub fn step(mut x: f64, ops: &[f64], dir: Dir) -> f64 {
    match dir {
        Dir::Sub => {
            for &b in ops {
                x -= b;
            }
        }
        Dir::SubClamp => {
            for &b in ops {
                x -= b;
                if x < 0.0 {
                    x = 0.0;
                }
            }
        }
        Dir::Add => {
            for &b in ops {
                x += b;
            }
        }
    }
    x
}

/// `u = 2^(e−52)` for a normal positive `x` in `[2^e, 2^(e+1))` whose `u` is
/// itself normal; `None` otherwise (then the caller steps literally).
#[inline]
fn spacing(x: f64) -> Option<f64> {
    let exp = ((x.to_bits() >> 52) & 0x7ff) as i64;
    if x <= 0.0 || !(54..0x7ff).contains(&exp) {
        return None;
    }
    Some(f64::from_bits(((exp - 52) as u64) << 52))
}

/// One step in units of `u` from a value of parity `parity`: `(Σ dᵢ, parity after)`
/// where `dᵢ` is `bᵢ/u` rounded to the nearest integer, a tie going to whichever
/// makes the result even (IEEE ties-to-even; `X ± ⌊m⌋` and `X ∓ ⌊m⌋` have the same
/// parity). `None` when some `bᵢ/u` is too large for the binade (the step leaves it).
#[inline]
fn units(ops: &[f64], u: f64, mut parity: i64) -> Option<(i64, i64, bool)> {
    let mut d: i64 = 0;
    let mut tie = false;
    for &b in ops {
        let m = b / u; // exact: u is a power of two and m stays normal
        if !(m >= 0.0 && m < (1u64 << 60) as f64) {
            return None;
        }
        let fl = m as i64; // m ≥ 0: truncation is the floor
        let frac = m - fl as f64;
        let di = if frac == 0.5 {
            tie = true;
            fl + ((parity ^ fl) & 1)
        } else {
            fl + i64::from(frac > 0.5)
        };
        parity = (parity ^ di) & 1;
        d = d.saturating_add(di);
    }
    Some((d, parity, tie))
}

/// The binade skip available from `x = X·u`: `(u, X, D₀, D, n)`: the first step
/// moves `X` by `D₀` (ties depend on `X`'s parity), every later one by `D`, and
/// `n` whole steps provably stay inside the binade.
#[inline]
fn skip(x: f64, ops: &[f64], dir: Dir) -> Option<(f64, i64, i64, i64, u64)> {
    let u = spacing(x)?;
    let big_x = (x / u) as i64;
    let (d0, p0, tie) = units(ops, u, big_x & 1)?;
    // Without a tie the parity does not matter: every step moves the same.
    let d = if tie { units(ops, u, p0)?.0 } else { d0 };
    let room = match dir {
        Dir::Sub | Dir::SubClamp => big_x - TWO52 - 1,
        Dir::Add => TWO53 - 1 - big_x,
    };
    let n = if room < d0 {
        0
    } else if d == 0 {
        u64::MAX
    } else {
        1 + ((room - d0) / d) as u64
    };
    Some((u, big_x, d0, d, n))
}

/// `X` moved by `s ≥ 1` steps.
#[inline]
fn moved(big_x: i64, d0: i64, d: i64, s: u64, dir: Dir) -> i64 {
    // s ≤ n keeps every product inside the binade's 2^53 units
    let total = d0 + d * (s as i64 - 1);
    match dir {
        Dir::Add => big_x + total,
        _ => big_x - total,
    }
}

/// `x` after `k` steps, exactly as `k` calls of [`step`] would leave it.
pub fn advance(mut x: f64, ops: &[f64], dir: Dir, mut k: u64) -> f64 {
    if ops.is_empty() {
        return x;
    }
    while k > 0 {
        if dir != Dir::Add && x <= 0.0 {
            if dir == Dir::SubClamp {
                return if ops.iter().all(|&b| b >= 0.0) {
                    0.0
                } else {
                    step(x, ops, dir)
                };
            }
            // fl(x − b) = −fl(|x| + b) for x ≤ 0 (rounding is symmetric).
            return -advance(-x, ops, Dir::Add, k);
        }
        if let Some((u, big_x, d0, d, n)) = skip(x, ops, dir) {
            if d0 == 0 && d == 0 {
                return x;
            }
            let s = n.min(k);
            if s > 0 {
                x = moved(big_x, d0, d, s, dir) as f64 * u;
                k -= s;
                if k == 0 {
                    break;
                }
            }
        }
        x = step(x, ops, dir);
        k -= 1;
    }
    x
}

/// The first `k ≥ 1` such that `x` after `k` subtracting steps is `≤ thresh`, or
/// `None` if it never gets there (the ops round to nothing, or there are none).
/// `x` only decreases, so testing the end of each step is testing every op.
pub fn first_at_most(mut x: f64, ops: &[f64], thresh: f64) -> Option<u64> {
    if ops.is_empty() {
        return None;
    }
    let mut done: u64 = 0;
    loop {
        if x > 0.0 {
            if let Some((u, big_x, d0, d, n)) = skip(x, ops, Dir::Sub) {
                // thresh/u is exact (u is a power of two); its floor, when it could
                // matter (below 2^53), by truncation (thresh ≥ 0)
                let t = thresh / u;
                let t = if t < 9e15 { (t as i64) as f64 } else { t };
                if n > 0 {
                    // end of step j ≥ 1: X − D₀ − (j−1)·D; the first at most t
                    let first = big_x - d0;
                    let j: u64 = if (first as f64) <= t {
                        1
                    } else if d == 0 {
                        return None;
                    } else {
                        // t < first < 2^53 here, so t fits
                        1 + ((first - t as i64 + d - 1) / d) as u64
                    };
                    if j <= n {
                        return Some(done + j);
                    }
                    x = moved(big_x, d0, d, n, Dir::Sub) as f64 * u;
                    done += n;
                }
            }
        }
        x = step(x, ops, Dir::Sub);
        done += 1;
        if x <= thresh {
            return Some(done);
        }
        if done > 1 << 62 {
            return None;
        }
    }
}

/// A step count `k ≥ 1` no later than [`first_at_most`]'s, from one division:
/// every rounding moves a value by at most half the spacing `u` of `x` (values
/// only shrink), so after `k` steps `x` is at least `x − k·(Σb + n·u)`.
pub fn lower_bound(x: f64, ops: &[f64], thresh: f64) -> u64 {
    let exp = ((x.to_bits() >> 52) & 0x7ff) as i64;
    if x.is_nan() || x <= thresh || !(1..0x7ff).contains(&exp) {
        return 1;
    }
    let u = if exp > 52 {
        f64::from_bits(((exp - 52) as u64) << 52)
    } else {
        f64::MIN_POSITIVE
    };
    let per: f64 = ops.iter().sum::<f64>() + ops.len() as f64 * u;
    let k = (x - thresh) / per * (1.0 - 1e-9);
    if k >= 1.0 {
        // truncation is the floor here; `as` saturates
        (k as u64).min(1 << 62)
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coflowkit_model::Pcg32;

    fn literal(mut x: f64, ops: &[f64], dir: Dir, k: u64) -> f64 {
        for _ in 0..k {
            x = step(x, ops, dir);
        }
        x
    }

    fn literal_first(mut x: f64, ops: &[f64], t: f64, cap: u64) -> Option<u64> {
        for k in 1..=cap {
            x = step(x, ops, Dir::Sub);
            if x <= t {
                return Some(k);
            }
        }
        None
    }

    #[test]
    fn whole_mb_at_a_third_ends_on_the_step_the_exact_sum_says() {
        // 3 MB at 1 MB/3 per step: exact arithmetic says 9 steps; the rounded
        // steps leave a few 1e-10 B, which CoflowSim's 1e-3 threshold accepts.
        let q = 1_048_576.0_f64;
        let b = q / 3.0;
        assert_eq!(first_at_most(3.0 * q, &[b], 1e-3), Some(9));
        assert_eq!(literal_first(3.0 * q, &[b], 1e-3, 100), Some(9));
    }

    #[test]
    fn advance_equals_literal_stepping_on_random_chains() {
        let mut rng = Pcg32::new(7, 1);
        for case in 0..3000 {
            let dir = [Dir::Sub, Dir::SubClamp, Dir::Add][case % 3];
            let x = match case % 4 {
                0 => (1 + rng.below(5000)) as f64 * 1_048_576.0,
                1 => rng.next_f64() * 1e10,
                2 => rng.next_f64() * 1e3,
                _ => 0.0,
            };
            let n_ops = 1 + rng.below(4) as usize;
            let ops: Vec<f64> = (0..n_ops)
                .map(|i| match (case + i) % 4 {
                    0 => 1_048_576.0 / (1 + rng.below(150)) as f64,
                    1 => rng.next_f64() * 3e5,
                    // few significant bits: ties in most binades
                    3 => f64::from(1 + rng.below(1 << 12)) * 2f64.powi(-(rng.below(30) as i32)),
                    _ => (1_073_741_824.0 * rng.next_f64() / 8.0) * (8.0 / 1024.0),
                })
                .collect();
            let k = u64::from(rng.below(20_000));
            let want = literal(x, &ops, dir, k);
            let got = advance(x, &ops, dir, k);
            assert_eq!(
                got.to_bits(),
                want.to_bits(),
                "case {case}: {dir:?} x={x} ops={ops:?} k={k}: {got} vs {want}"
            );
        }
    }

    #[test]
    fn first_at_most_equals_literal_search() {
        let mut rng = Pcg32::new(11, 1);
        for case in 0..2000 {
            let x = match case % 3 {
                0 => (1 + rng.below(300)) as f64 * 1_048_576.0,
                1 => rng.next_f64() * 5e8,
                _ => rng.next_f64() * 1e4,
            };
            let n_ops = 1 + rng.below(3) as usize;
            let ops: Vec<f64> = (0..n_ops)
                .map(|_| match rng.below(4) {
                    0 => 1_048_576.0 / (1 + rng.below(150)) as f64,
                    3 => {
                        f64::from(1 + rng.below(1 << 12)) * 2f64.powi(-(rng.below(12) as i32))
                            + 64.0
                    }
                    1 => 1_048_576.0,
                    _ => rng.next_f64() * 2e5 + 1e-3,
                })
                .collect();
            let cap = 4_000_000;
            let want = literal_first(x, &ops, 1e-3, cap);
            let got = first_at_most(x, &ops, 1e-3);
            if let Some(k) = got {
                assert!(
                    lower_bound(x, &ops, 1e-3) <= k,
                    "case {case}: bound above {k}"
                );
            }
            match got {
                // beyond what the literal search tried: it must not have found one
                Some(k) if k > cap => assert_eq!(want, None, "case {case}"),
                _ => assert_eq!(got, want, "case {case}: x={x} ops={ops:?}"),
            }
        }
    }

    #[test]
    fn ties_and_tiny_ops_are_exact() {
        // b/u exactly half-way in the first binade: the literal path must be taken.
        let x = 4_503_599_627_370_497.0_f64; // 2^52 + 1, u = 1
        let b = 1.5;
        for k in [1u64, 2, 3, 10, 1000] {
            assert_eq!(advance(x, &[b], Dir::Sub, k), literal(x, &[b], Dir::Sub, k));
        }
        // Ties in every binade (b a few bits wide, as CoflowSim's leftover rates
        // are): still exact, and without stepping one by one.
        let (x, b) = (4_194_010.902_481_489f64, 19791.0 * 2f64.powi(-32));
        for k in [1u64, 2, 3, 1000, 123_457] {
            assert_eq!(advance(x, &[b], Dir::Sub, k), literal(x, &[b], Dir::Sub, k));
            assert_eq!(
                advance(x, &[b, 3.0 * b], Dir::Add, k),
                literal(x, &[b, 3.0 * b], Dir::Add, k)
            );
        }
        assert!(first_at_most(x, &[b], 1e-3).is_some());
        // An op below half a unit never moves x: no crossing, ever.
        assert_eq!(first_at_most(1e12, &[1e-6], 1e-3), None);
        assert_eq!(advance(1e12, &[1e-6], Dir::Sub, 1 << 40), 1e12);
    }
}
