//! Address -> value (a block index, or a lane cache's record of a block):
//! open addressing with linear probing and
//! backward-shift deletion, no tombstones. Address 0 marks an empty slot
//! (no block starts at address 0).
//!
//! The slots are padded with 128 unused bytes at each end, so that maps
//! written by different threads (lane caches) never share a cache line with
//! each other or with anything allocated next to them.

const EMPTY: usize = 0;

pub(crate) struct AddrMap<V: Copy + Default = u32> {
    slots: Vec<(usize, V)>,
    len: usize,
    /// 64 - log2(capacity): Fibonacci hashing keeps the top bits.
    shift: u32,
}

impl<V: Copy + Default> AddrMap<V> {
    /// Unused slots at each end.
    const PAD: usize = 128usize.div_ceil(std::mem::size_of::<(usize, V)>());

    pub(crate) fn new() -> Self {
        AddrMap {
            slots: vec![(EMPTY, V::default()); 16 + 2 * Self::PAD],
            len: 0,
            shift: 64 - 4,
        }
    }

    #[inline]
    fn capacity(&self) -> usize {
        self.slots.len() - 2 * Self::PAD
    }

    #[inline]
    fn at(&self, i: usize) -> &(usize, V) {
        &self.slots[Self::PAD + i]
    }

    #[inline]
    fn at_mut(&mut self, i: usize) -> &mut (usize, V) {
        &mut self.slots[Self::PAD + i]
    }

    #[inline]
    fn home(&self, key: usize) -> usize {
        ((key as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize
    }

    #[inline]
    fn mask(&self) -> usize {
        self.capacity() - 1
    }

    #[inline]
    fn find(&self, key: usize) -> Option<usize> {
        if key == EMPTY {
            return None;
        }
        let mut i = self.home(key);
        loop {
            match self.at(i).0 {
                EMPTY => return None,
                k if k == key => return Some(i),
                _ => i = (i + 1) & self.mask(),
            }
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The value stored under `key`.
    #[inline]
    pub(crate) fn get(&self, key: usize) -> Option<V> {
        self.find(key).map(|i| self.at(i).1)
    }

    #[inline]
    pub(crate) fn contains(&self, key: usize) -> bool {
        self.find(key).is_some()
    }

    /// Inserts a key that is not present.
    #[inline]
    pub(crate) fn insert(&mut self, key: usize, value: V) {
        debug_assert!(key != EMPTY && !self.contains(key));
        if (self.len + 1) * 2 > self.capacity() {
            self.grow();
        }
        let mut i = self.home(key);
        while self.at(i).0 != EMPTY {
            i = (i + 1) & self.mask();
        }
        *self.at_mut(i) = (key, value);
        self.len += 1;
    }

    #[inline]
    pub(crate) fn remove(&mut self, key: usize) -> Option<V> {
        let found = self.find(key)?;
        let value = self.at(found).1;
        let mask = self.mask();
        let mut hole = found;
        let mut j = (found + 1) & mask;
        while self.at(j).0 != EMPTY {
            let home = self.home(self.at(j).0);
            // Move the entry back when its home is not between the hole and it.
            if (j.wrapping_sub(home) & mask) >= (j.wrapping_sub(hole) & mask) {
                *self.at_mut(hole) = *self.at(j);
                hole = j;
            }
            j = (j + 1) & mask;
        }
        *self.at_mut(hole) = (EMPTY, V::default());
        self.len -= 1;
        Some(value)
    }

    /// Every entry, in no particular order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (usize, V)> + '_ {
        self.slots.iter().copied().filter(|&(k, _)| k != EMPTY)
    }

    fn grow(&mut self) {
        let doubled = vec![(EMPTY, V::default()); self.capacity() * 2 + 2 * Self::PAD];
        let old = std::mem::replace(&mut self.slots, doubled);
        self.shift -= 1;
        self.len = 0;
        for (k, v) in old {
            if k != EMPTY {
                self.insert(k, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::testkit::Rng;
    use std::collections::HashMap;

    #[test]
    fn behaves_like_a_hash_map() {
        let mut rng = Rng::new(3);
        let mut m = AddrMap::new();
        let mut truth = HashMap::new();
        for step in 0..20_000u32 {
            // Few distinct keys, so removals and reinsertions collide often.
            let key = 64 * (1 + rng.below(500) as usize);
            if rng.chance(2) {
                assert_eq!(m.remove(key), truth.remove(&key));
            } else if let std::collections::hash_map::Entry::Vacant(e) = truth.entry(key) {
                m.insert(key, step);
                e.insert(step);
            }
            assert_eq!(m.len(), truth.len());
        }
        for (k, v) in &truth {
            assert_eq!(m.remove(*k), Some(*v));
        }
        assert_eq!(m.len(), 0);
        assert!(!m.contains(0));
    }
}
