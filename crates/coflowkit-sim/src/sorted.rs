//! The engine's sorted list of active flows: finished flows leave and new ones
//! join it by binary search and memmove, so an event moves each stretch of the
//! list once instead of passing over every active flow.

/// Removes `gone` (sorted, each in `active`) from the sorted `active`, moving
/// only the stretches between them: `O(gone · log active)` searches and one
/// memmove of what follows the first removed flow.
pub(crate) fn remove_sorted(active: &mut Vec<u32>, gone: &[u32]) {
    let (mut write, mut read) = (0, 0);
    for &f in gone {
        let at = read + active[read..].partition_point(|&x| x < f);
        debug_assert_eq!(active.get(at), Some(&f), "flow {f} is not active");
        if write != read {
            active.copy_within(read..at, write);
        }
        write += at - read;
        read = at + 1;
    }
    let n = active.len();
    if write != read {
        active.copy_within(read..n, write);
    }
    active.truncate(write + n - read);
}

/// Inserts `new` (sorted, none in `active`) into the sorted `active`, from the
/// back, moving each stretch of old flows once.
pub(crate) fn insert_sorted(active: &mut Vec<u32>, new: &[u32]) {
    let old = active.len();
    active.resize(old + new.len(), 0);
    let mut read = old; // old flows still to place are active[..read]
    let mut write = old + new.len(); // active[write..] is final
    for &f in new.iter().rev() {
        let at = active[..read].partition_point(|&x| x < f);
        let n = read - at;
        active.copy_within(at..read, write - n);
        write -= n;
        read = at;
        write -= 1;
        active[write] = f;
    }
}

#[cfg(test)]
mod tests {
    use super::{insert_sorted, remove_sorted};
    use coflowkit_model::Pcg32;

    #[test]
    fn sorted_removal_and_insertion_match_the_plain_ones() {
        // Hand-checked first: remove 3 and 9 from [1 3 5 9 12]; insert 0, 4, 13.
        let mut a = vec![1, 3, 5, 9, 12];
        remove_sorted(&mut a, &[3, 9]);
        assert_eq!(a, [1, 5, 12]);
        insert_sorted(&mut a, &[0, 4, 13]);
        assert_eq!(a, [0, 1, 4, 5, 12, 13]);
        // Then random sets against retain and sort.
        let mut rng = Pcg32::new(11, 5);
        for _ in 0..200 {
            let all: Vec<u32> = (0..60).filter(|_| rng.below(2) == 0).collect();
            let (gone, kept): (Vec<u32>, Vec<u32>) = all.iter().partition(|_| rng.below(3) == 0);
            let mut a = all.clone();
            remove_sorted(&mut a, &gone);
            assert_eq!(a, kept);
            let fresh: Vec<u32> = (0..120)
                .filter(|x| !a.contains(x) && rng.below(4) == 0)
                .collect();
            let mut want = a.clone();
            want.extend_from_slice(&fresh);
            want.sort_unstable();
            insert_sorted(&mut a, &fresh);
            assert_eq!(a, want);
        }
    }
}
