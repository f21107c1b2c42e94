//! Sorting a sparse decision's positions.

/// Sorts `pos` (active positions, each below `n`) and drops repeats: what
/// `sort_unstable` then `dedup` give, by a bitset of `n` bits when the list is
/// long enough for one pass over `n / 64` words to beat a comparison sort
/// (a policy that lists every flow it serves lists thousands per call).
pub(crate) fn sort_positions(pos: &mut Vec<u32>, n: usize, bits: &mut Vec<u64>) {
    let words = n.div_ceil(64);
    if pos.len() < 32 || words > 4 * pos.len() {
        pos.sort_unstable();
        pos.dedup();
        return;
    }
    bits.clear();
    bits.resize(words, 0);
    for &i in pos.iter() {
        debug_assert!((i as usize) < n, "position {i} not below {n}");
        bits[i as usize >> 6] |= 1u64 << (i & 63);
    }
    pos.clear();
    for (w, &word) in bits.iter().enumerate() {
        let mut b = word;
        while b != 0 {
            pos.push((w as u32) << 6 | b.trailing_zeros());
            b &= b - 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::sort_positions;

    #[test]
    fn equals_sort_and_dedup_on_both_forms() {
        // Lists short and long against n, with repeats, both ends of the range
        // and word boundaries (63, 64, 127, 128).
        let mut seed = 7u64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as u32
        };
        let mut bits = Vec::new();
        for case in 0..200 {
            let n = 1 + (next() % 5000) as usize;
            let len = [3, 40, 200, 3000][case % 4];
            let mut pos: Vec<u32> = (0..len).map(|_| next() % n as u32).collect();
            for edge in [0, 63, 64, 127, 128, n as u32 - 1] {
                if (edge as usize) < n {
                    pos.push(edge);
                    pos.push(edge);
                }
            }
            let mut want = pos.clone();
            want.sort_unstable();
            want.dedup();
            sort_positions(&mut pos, n, &mut bits);
            assert_eq!(pos, want, "case {case}: n {n}, len {len}");
        }
    }
}
