//! An indexed binary min-heap: at most one key per item, updated in place, so a
//! re-rated reducer moves its one entry instead of leaving a stale one behind.

const ABSENT: u32 = u32::MAX;

pub struct IndexedHeap<K: Ord + Copy> {
    heap: Vec<(K, u32)>,
    pos: Vec<u32>,
}

impl<K: Ord + Copy> IndexedHeap<K> {
    pub fn new(items: usize) -> Self {
        IndexedHeap {
            heap: Vec::new(),
            pos: vec![ABSENT; items],
        }
    }

    pub fn peek(&self) -> Option<(K, u32)> {
        self.heap.first().copied()
    }

    /// Inserts `item` with `key`, or moves it there.
    pub fn set(&mut self, item: u32, key: K) {
        let p = self.pos[item as usize];
        if p == ABSENT {
            self.heap.push((key, item));
            let i = self.heap.len() - 1;
            self.pos[item as usize] = i as u32;
            self.up(i);
        } else {
            let i = p as usize;
            let old = self.heap[i].0;
            self.heap[i].0 = key;
            if key < old {
                self.up(i);
            } else {
                self.down(i);
            }
        }
    }

    pub fn remove(&mut self, item: u32) {
        let p = self.pos[item as usize];
        if p == ABSENT {
            return;
        }
        let i = p as usize;
        let last = self.heap.len() - 1;
        self.swap(i, last);
        self.heap.pop();
        self.pos[item as usize] = ABSENT;
        if i < self.heap.len() {
            self.down(i);
            self.up(i);
        }
    }

    pub fn clear(&mut self) {
        for &(_, item) in &self.heap {
            self.pos[item as usize] = ABSENT;
        }
        self.heap.clear();
    }

    fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        self.pos[self.heap[a].1 as usize] = a as u32;
        self.pos[self.heap[b].1 as usize] = b as u32;
    }

    fn up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.heap[i].0 < self.heap[parent].0 {
                self.swap(i, parent);
                i = parent;
            } else {
                break;
            }
        }
    }

    fn down(&mut self, mut i: usize) {
        let n = self.heap.len();
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut m = i;
            if l < n && self.heap[l].0 < self.heap[m].0 {
                m = l;
            }
            if r < n && self.heap[r].0 < self.heap[m].0 {
                m = r;
            }
            if m == i {
                break;
            }
            self.swap(i, m);
            i = m;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_key_order_after_moves_and_removals() {
        let mut h = IndexedHeap::new(10);
        for (i, k) in [5u64, 3, 9, 1, 7, 8, 2].iter().enumerate() {
            h.set(i as u32, *k);
        }
        h.set(2, 0); // 9 → 0
        h.set(3, 10); // 1 → 10
        h.remove(1); // drop the 3
        let mut out = Vec::new();
        while let Some((k, i)) = h.peek() {
            out.push((k, i));
            h.remove(i);
        }
        assert_eq!(out, vec![(0, 2), (2, 6), (5, 0), (7, 4), (8, 5), (10, 3)]);
    }
}
