//! Address maps: [`AddrMap`], exact addresses to small values (the pools'
//! live blocks and lane caches), and [`RangeMap`], address ranges to any
//! value (what adapters keep per allocation or slab, so that any address
//! inside finds its owner).
//!
//! `AddrMap`: address -> value (a block index, or a lane cache's record of a block):
//! open addressing with linear probing and
//! backward-shift deletion, no tombstones. Address 0 marks an empty slot
//! (no block starts at address 0).
//!
//! The slots are padded with 128 unused bytes at each end, so that maps
//! written by different threads (lane caches) never share a cache line with
//! each other or with anything allocated next to them.

use std::collections::BTreeMap;
use std::ops::Range;
use crate::lock_order::{Rank, RwLock};
use std::sync::{Arc, Weak};
use super::clock::Stamp;
use super::pool::Pool;
use crate::abi::*;
use crate::UrResult;

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

/// Disjoint address ranges `[base, base + len)`, each with a value, by base:
/// finds the range holding any address (an interior pointer), or exactly
/// the one starting at a base (frees accept only bases).
///
/// A B-tree keyed by base: the containing range is the last one starting at
/// or below the address, so a lookup is one ordered search, with no
/// per-byte or per-page entries however large the ranges.
pub struct RangeMap<V> {
    by_base: BTreeMap<usize, (usize, V)>,
}

impl<V> Default for RangeMap<V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<V> RangeMap<V> {
    pub const fn new() -> Self {
        RangeMap { by_base: BTreeMap::new() }
    }

    pub fn len(&self) -> usize {
        self.by_base.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_base.is_empty()
    }

    /// Enters `[base, base + len)`, which must not overlap a range already
    /// entered (live memory never does; checked in debug builds). Returns
    /// the value of a range that started at `base`, which it replaces.
    pub fn insert(&mut self, base: usize, len: usize, value: V) -> Option<V> {
        let end = base.checked_add(len).expect("range wraps the address space");
        debug_assert!(
            self.by_base.range(..end).next_back().is_none_or(|(&b, &(e, _))| b == base || e <= base),
            "range {base:#x}+{len:#x} overlaps one already entered"
        );
        self.by_base.insert(base, (end, value)).map(|(_, v)| v)
    }

    /// Takes out the range starting exactly at `base`; an address inside a
    /// range (or anywhere else) finds nothing and changes nothing.
    pub fn remove(&mut self, base: usize) -> Option<V> {
        self.by_base.remove(&base).map(|(_, v)| v)
    }

    /// The value of the range starting exactly at `base`.
    pub fn get(&self, base: usize) -> Option<&V> {
        self.by_base.get(&base).map(|(_, v)| v)
    }

    /// The end and value of the range starting exactly at `base` (one
    /// lookup by key, cheaper than [`find`](Self::find)).
    pub fn get_with_end(&self, base: usize) -> Option<(usize, &V)> {
        self.by_base.get(&base).map(|(e, v)| (*e, v))
    }

    /// The range holding `addr` (its base or any byte inside) and its value.
    #[inline]
    pub fn find(&self, addr: usize) -> Option<(Range<usize>, &V)> {
        let (&base, (end, v)) = self.by_base.range(..=addr).next_back()?;
        (addr < *end).then_some((base..*end, v))
    }

    /// The value of the range holding `addr`.
    #[inline]
    pub fn value_at(&self, addr: usize) -> Option<&V> {
        self.find(addr).map(|(_, v)| v)
    }

    /// Every range and its value, by base.
    pub fn iter(&self) -> impl Iterator<Item = (Range<usize>, &V)> + '_ {
        self.by_base.iter().map(|(&b, (e, v))| (b..*e, v))
    }

    /// The values, by base, emptying the map.
    pub fn into_values(self) -> impl Iterator<Item = V> {
        self.by_base.into_values().map(|(_, v)| v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::testkit::{random_ranges, range_model, Rng};
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

    /// Checks every lookup of `m` against a plain list of the same ranges.
    fn agrees(m: &RangeMap<u32>, truth: &[(usize, usize, u32)], probes: impl Iterator<Item = usize>) {
        for addr in probes {
            let want = truth.iter().find(|&&(b, l, _)| addr >= b && addr < b + l);
            let got = m.find(addr).map(|(r, &v)| (r.start, r.end - r.start, v));
            assert_eq!(got, want.copied(), "find({addr:#x})");
            let exact = truth.iter().find(|&&(b, _, _)| b == addr).map(|t| t.2);
            assert_eq!(m.get(addr).copied(), exact, "get({addr:#x})");
        }
        assert_eq!(m.len(), truth.len());
    }

    #[test]
    fn range_map_finds_the_range_holding_an_address() {
        let mut m = RangeMap::new();
        assert!(m.find(0).is_none() && m.find(usize::MAX).is_none());
        assert_eq!(m.insert(0x1000, 0x100, 1), None);
        assert_eq!(m.insert(0x1100, 0x10, 2), None, "adjacent ranges are disjoint");
        assert_eq!(m.insert(0x3000, 0, 3), None);
        let truth = [(0x1000, 0x100, 1), (0x1100, 0x10, 2), (0x3000, 0, 3)];
        agrees(&m, &truth, [0, 0xfff, 0x1000, 0x10ff, 0x1100, 0x110f, 0x1110, 0x3000, usize::MAX].into_iter());
        assert_eq!(m.find(0x10ff).unwrap().0, 0x1000..0x1100);
        // Only a base removes, and only once.
        assert_eq!(m.remove(0x1008), None);
        assert_eq!(m.remove(0x1000), Some(1));
        assert_eq!(m.remove(0x1000), None);
        assert!(m.find(0x1000).is_none() && m.value_at(0x1100) == Some(&2));
        assert_eq!(m.insert(0x1100, 0x20, 4), Some(2), "the same base replaces");
        assert_eq!(m.value_at(0x111f), Some(&4));
        assert_eq!(m.iter().map(|(r, _)| r.start).collect::<Vec<_>>(), [0x1100, 0x3000]);
        assert_eq!(m.into_values().collect::<Vec<_>>(), [4, 3]);
    }

    range_model!(RangeMap<u32>);

    #[test]
    fn range_map_behaves_like_a_list_of_ranges() {
        // Slots of 256 bytes; a range covers 1..=4 of them, so neighbours touch.
        random_ranges(&mut RangeMap::new(), &mut Rng::new(7), 4_000, 1, 256 * 210, |rng| {
            let base = 256 * (1 + rng.below(200) as usize);
            (base, 256 * (1 + rng.below(4) as usize) - 8 * rng.below(2) as usize)
        });
    }
}

/// The slabs of a context's engine pools by address, each with its owner
/// (which pool, which kind): any pointer into pool memory finds its pool
/// without a table entry per allocation, so asynchronous allocations and
/// frees touch no shared table. A backend's `MemorySource` enters each slab
/// it hands out and removes it when it takes it back.
pub struct SlabMap<O> {
    slabs: RwLock<RangeMap<O>>,
}

impl<O> Default for SlabMap<O> {
    fn default() -> Self {
        SlabMap { slabs: RwLock::new(Rank::SlabMap, RangeMap::new()) }
    }
}

impl<O> SlabMap<O> {
    pub fn insert(&self, addr: usize, size: usize, owner: O) {
        self.slabs.write().insert(addr, size, owner);
    }

    pub fn remove(&self, addr: usize) {
        self.slabs.write().remove(addr);
    }

    /// `f` of the owner of the slab holding `addr`, when there is one.
    pub fn with_owner<R>(&self, addr: usize, f: impl FnOnce(&O) -> R) -> Option<R> {
        self.slabs.read().value_at(addr).map(f)
    }

    /// The owner of the slab holding `addr`, when there is one.
    pub fn owner_of(&self, addr: usize) -> Option<O>
    where
        O: Clone,
    {
        self.with_owner(addr, O::clone)
    }
}

/// An owner that names the engine pool sub-allocating its slab.
pub trait SlabOfPool {
    fn engine_pool(&self) -> &Weak<Pool>;
}

impl<O: SlabOfPool> SlabMap<O> {
    /// The engine pool whose slab holds `addr`, while it lives.
    pub fn pool_of(&self, addr: usize) -> Option<Arc<Pool>> {
        self.with_owner(addr, |o| o.engine_pool().upgrade()).flatten()
    }

    /// An engine free of the block at `addr`, by `free`: first on `likely`,
    /// the pool a free usually gives back to (the named pool's or the
    /// queue's current pool's device memory), which needs neither this
    /// map's lock nor a reference count that other queues' threads also
    /// write; a free that pool refuses changes nothing. Else on the pool
    /// whose slab holds `addr`, when `accept` takes it. `None` when no slab
    /// of this map holds `addr`.
    #[inline]
    pub fn free_with<R>(
        &self,
        addr: usize,
        likely: Option<&Arc<Pool>>,
        accept: impl FnOnce(&Arc<Pool>, &O) -> bool,
        free: impl Fn(&Pool) -> UrResult<R>,
    ) -> Option<UrResult<R>> {
        if let Some(Ok(done)) = likely.map(|p| free(p)) {
            return Some(Ok(done));
        }
        let (pool, accepted) = self.with_owner(addr, |o| {
            let pool = o.engine_pool().upgrade()?;
            let accepted = accept(&pool, o);
            Some((pool, accepted))
        })??;
        Some(if accepted { free(&pool) } else { Err(UR_RESULT_ERROR_INVALID_VALUE) })
    }

    /// The live block holding `addr` (its base or any byte inside), as
    /// `(base, size)`: see [`Pool::live_block_containing`].
    pub fn live_block_containing(&self, addr: usize) -> Option<(usize, usize)> {
        self.pool_of(addr)?.live_block_containing(addr)
    }

    /// `urUSMFree` of a block of an engine pool: only the exact base of a
    /// live block is accepted, anything else is `INVALID_MEM_OBJECT` and
    /// frees nothing. Any command may still use the block (the engine knows
    /// only its allocation's order), so `settle` first lets them finish;
    /// then the block goes back to its pool (`wait_for` as for
    /// [`Pool::free_blocking`]).
    pub fn free_blocking(
        &self,
        addr: usize,
        settle: impl FnOnce() -> UrResult,
        wait_for: impl FnOnce(Stamp),
    ) -> UrResult {
        let pool = self.pool_of(addr).ok_or(UR_RESULT_ERROR_INVALID_MEM_OBJECT)?;
        if !pool.owns(addr as *const u8) {
            return Err(UR_RESULT_ERROR_INVALID_MEM_OBJECT);
        }
        settle()?;
        pool.free_blocking(addr as *const u8, wait_for).map_err(|_| UR_RESULT_ERROR_INVALID_MEM_OBJECT)
    }
}
