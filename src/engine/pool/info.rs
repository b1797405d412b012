//! What the pool answers and what may be set on it: ownership and block
//! lookups, collection and trims, the statistics (the lane caches' bytes
//! included, and the used high-water mark kept exact across them), the
//! release threshold and maximum size.

use super::{Inner, Pool};
use crate::abi::*;
use crate::engine::allocator::State;
use crate::engine::cache::{CachedLive, LaneCache, ShardLocks};
use crate::engine::clock::LaneId;
use crate::engine::dag::Dag;
use crate::engine::pending::Flush;
use crate::engine::stats::PoolStats;
use crate::UrResult;

impl Pool {
    /// Is `ptr` the base of a live allocation of this pool?
    pub fn owns(&self, ptr: *const u8) -> bool {
        let mut locked = self.lock();
        let (inner, locks) = locked.parts();
        inner.live.contains(ptr as usize) || inner.cached_live(locks, ptr as usize).is_some()
    }

    /// The live allocation holding `addr` (its base or any byte inside),
    /// as `(base, size)`; `size` is the block's, the request rounded up to
    /// the granule. A base is one lookup; an interior address walks the
    /// blocks of its slab.
    pub fn live_block_containing(&self, addr: usize) -> Option<(usize, usize)> {
        let mut locked = self.lock();
        let (inner, locks) = locked.parts();
        let is_live = |inner: &Inner, locks: &mut ShardLocks<'_>, base: usize| {
            inner.live.contains(base) || inner.cached_live(locks, base).is_some()
        };
        if let Some(i) = inner.live.get(addr) {
            let b = inner.heap.block(i);
            return Some((b.addr, b.size));
        }
        if let Some(e) = inner.cached_live(locks, addr) {
            return Some((addr, e.size));
        }
        let s = inner
            .heap
            .slabs
            .iter()
            .position(|s| s.in_use && addr >= s.addr && addr - s.addr < s.size)?;
        let mut i = inner.heap.slab_first(s as u32);
        while i != crate::engine::allocator::NIL {
            let b = *inner.heap.block(i);
            if addr >= b.addr && addr - b.addr < b.size {
                let live =
                    matches!(b.state, State::Live | State::Cached) && is_live(inner, locks, b.addr);
                return live.then_some((b.addr, b.size));
            }
            i = b.phys_next;
        }
        None
    }

    /// A synchronisation point: files every block whose free has completed
    /// as ready, then gives back what is above the release threshold.
    pub fn collect(&self) {
        let mut locked = self.lock();
        let (inner, locks) = locked.parts();
        inner.drop_retired_caches(locks, &self.dag);
        inner.collect(locks, &*self.source, true);
    }

    /// Gives back free slabs until at most `keep` bytes stay reserved
    /// (`urUSMPoolTrimToExp`). Memory that pending commands may still touch
    /// is kept.
    pub fn trim_to(&self, keep: usize) {
        let mut locked = self.lock();
        let (inner, locks) = locked.parts();
        inner.collect(locks, &*self.source, true);
        inner.release_idle(&*self.source, keep);
        inner.release_empty_ranges(&*self.source);
    }

    /// The counters, the lane caches' used bytes included.
    pub fn stats(&self) -> PoolStats {
        let mut locked = self.lock();
        let (inner, locks) = locked.parts();
        inner.stats_with_caches(locks)
    }

    pub fn release_threshold(&self) -> usize {
        self.lock().inner.release_threshold
    }

    pub fn set_release_threshold(&self, bytes: usize) {
        let mut locked = self.lock();
        locked.inner.release_threshold = bytes;
        locked.inner.apply_threshold(&*self.source);
    }

    pub fn max_size(&self) -> usize {
        self.lock().inner.max_size
    }

    /// Limits future growth; what is reserved already stays.
    pub fn set_max_size(&self, bytes: usize) {
        self.lock().inner.max_size = bytes;
    }

    pub fn reset_reserved_high(&self) {
        self.lock().inner.stats.reset_reserved_high();
    }

    /// Restarts the used high-water mark from the current used bytes; every
    /// lane cache's allowance shrinks to what it uses.
    pub fn reset_used_high(&self) {
        let mut locked = self.lock();
        let (inner, locks) = locked.parts();
        let used = inner.stats_with_caches(locks).used_current;
        inner.stats.used_high = used;
        inner.allowances = 0;
        for slot in 0..inner.lanes.len() {
            if inner.lanes[slot].cached {
                if let Some(c) = locks.cache(inner.lanes[slot].id) {
                    c.allowance = c.used;
                    inner.allowances += c.used;
                }
            }
        }
    }

    /// The pool's answer to `urUSMPoolGetInfoExp` for the size queries.
    /// `REFERENCE_COUNT` and `CONTEXT` belong to the adapter's pool object.
    pub fn info(&self, prop: ur_usm_pool_info_t) -> UrResult<usize> {
        if prop.0 > UR_USM_POOL_INFO_USED_HIGH_EXP.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let mut locked = self.lock();
        let (inner, locks) = locked.parts();
        let s = inner.stats_with_caches(locks);
        Ok(match prop {
            UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP => inner.release_threshold,
            UR_USM_POOL_INFO_MAXIMUM_SIZE_EXP => inner.max_size,
            UR_USM_POOL_INFO_RESERVED_CURRENT_EXP => s.reserved_current,
            UR_USM_POOL_INFO_RESERVED_HIGH_EXP => s.reserved_high,
            UR_USM_POOL_INFO_USED_CURRENT_EXP => s.used_current,
            UR_USM_POOL_INFO_USED_HIGH_EXP => s.used_high,
            _ => return Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        })
    }

    /// `urUSMPoolSetInfoExp`: the threshold and maximum size take a new
    /// value; the two high-water marks take 0, which restarts them from the
    /// current value.
    pub fn set_info(&self, prop: ur_usm_pool_info_t, value: usize) -> UrResult {
        if prop.0 > UR_USM_POOL_INFO_USED_HIGH_EXP.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        match prop {
            UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP => self.set_release_threshold(value),
            UR_USM_POOL_INFO_MAXIMUM_SIZE_EXP => self.set_max_size(value),
            UR_USM_POOL_INFO_RESERVED_HIGH_EXP | UR_USM_POOL_INFO_USED_HIGH_EXP if value != 0 => {
                return Err(UR_RESULT_ERROR_INVALID_VALUE)
            }
            UR_USM_POOL_INFO_RESERVED_HIGH_EXP => self.reset_reserved_high(),
            UR_USM_POOL_INFO_USED_HIGH_EXP => self.reset_used_high(),
            _ => return Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
        Ok(())
    }

    /// Blocks freed by commands that have not been seen to complete, and
    /// blocks parked in lane caches (complete or not).
    pub fn pending_blocks(&self) -> usize {
        self.count_with_caches(|inner| inner.lanes.iter().map(|l| l.count).sum(), |c| c.parked().len())
    }

    /// Checks every range's committed granules against its blocks, and the
    /// reserved bytes against the slabs and granules held; returns the
    /// bytes committed in ranges. (Tests.)
    #[cfg(test)]
    pub(crate) fn check_ranges(&self) -> usize {
        let locked = self.lock();
        let heap = &locked.inner.heap;
        let mut reserved = 0;
        let mut committed = 0;
        for slab in heap.slabs.iter().filter(|s| s.in_use) {
            let Some(c) = slab.vm.as_deref() else {
                reserved += slab.size;
                continue;
            };
            let mut in_use = Vec::new();
            let mut i = slab.first;
            while i != crate::engine::allocator::NIL {
                let b = heap.block(i);
                if b.state != State::Ready {
                    in_use.push((b.addr, b.size));
                }
                i = b.phys_next;
            }
            c.check(&in_use);
            committed += c.n_committed * c.granule();
        }
        assert_eq!(locked.inner.stats.reserved_current, reserved + committed, "reserved bytes");
        committed
    }

    /// Allocations handed out and not freed.
    pub fn live_blocks(&self) -> usize {
        self.count_with_caches(|inner| inner.live.len(), LaneCache::live_len)
    }

    /// `own(inner)` plus `per_cache` summed over the lane caches, under the
    /// pool lock: the blocks a cache holds count with the pool's own.
    fn count_with_caches(&self, own: impl FnOnce(&Inner) -> usize, per_cache: impl Fn(&LaneCache) -> usize) -> usize {
        let mut locked = self.lock();
        let (inner, locks) = locked.parts();
        let cached: usize = inner
            .lanes
            .iter()
            .filter(|l| l.cached)
            .filter_map(|l| locks.cache(l.id).map(|c| per_cache(c)))
            .sum();
        own(inner) + cached
    }
}

impl Inner {
    /// The lane-cache record of the live block based at `addr`, if any.
    fn cached_live(&self, locks: &mut ShardLocks<'_>, addr: usize) -> Option<CachedLive> {
        self.lanes
            .iter()
            .filter(|pl| pl.cached)
            .find_map(|pl| locks.cache(pl.id)?.get_live(addr))
    }

    /// The counters with the lane caches' used bytes added.
    fn stats_with_caches(&self, locks: &mut ShardLocks<'_>) -> PoolStats {
        let mut s = self.stats;
        for pl in self.lanes.iter().filter(|pl| pl.cached) {
            if let Some(c) = locks.cache(pl.id) {
                s.used_current += c.used;
            }
        }
        debug_assert!(s.used_current <= s.used_high);
        s
    }

    /// Makes room for `bytes` more used bytes in `lane`'s cache, or in the
    /// pool's own count when `lane` is `None`, keeping the used high-water
    /// mark exact: the pool's used bytes plus every allowance stay within
    /// the mark, which rises only here, with every lock held, to the total
    /// in use once this allocation counts.
    pub(in crate::engine) fn make_room(
        &mut self,
        locks: &mut ShardLocks<'_>,
        lane: Option<LaneId>,
        bytes: usize,
    ) {
        let fits = match lane.and_then(|l| locks.cache(l)) {
            Some(c) => {
                c.demand = c.demand.max(c.used + bytes);
                c.used + bytes <= c.allowance
            }
            None => self.stats.used_current + bytes + self.allowances <= self.stats.used_high,
        };
        if fits {
            return;
        }
        let mut total = self.stats.used_current + bytes;
        for pl in self.lanes.iter().filter(|pl| pl.cached) {
            total += locks.cache(pl.id).map_or(0, |c| c.used);
        }
        self.stats.used_high = self.stats.used_high.max(total);
        // Share the headroom out again: the asking cache first, then each
        // other up to what it has needed before.
        let mut slack = self.stats.used_high - total;
        let mut allowances = 0;
        if let Some(c) = lane.and_then(|l| locks.cache(l)) {
            let give = slack.min(c.demand - (c.used + bytes));
            c.allowance = c.used + bytes + give;
            slack -= give;
            allowances += c.allowance;
        }
        for pl in self
            .lanes
            .iter()
            .filter(|pl| pl.cached && Some(pl.id) != lane)
        {
            if let Some(c) = locks.cache(pl.id) {
                let give = slack.min(c.demand.saturating_sub(c.used));
                c.allowance = c.used + give;
                slack -= give;
                allowances += c.allowance;
            }
        }
        self.allowances = allowances;
    }

    /// Removes the caches of lanes that no longer exist (their queues are
    /// gone, so everything they recorded has completed): parked blocks
    /// become ready, and live ones move to the pool's live map.
    fn drop_retired_caches(
        &mut self,
        locks: &mut ShardLocks<'_>,
        dag: &Dag,
    ) {
        for slot in 0..self.lanes.len() {
            let id = self.lanes[slot].id;
            if !self.lanes[slot].cached || dag.lane(id).is_some() {
                continue;
            }
            self.flush_cache(locks, slot, Flush::All);
            let Some(cache) = locks.remove(id) else {
                continue;
            };
            self.lanes[slot].cached = false;
            self.allowances -= cache.allowance;
            for (addr, e) in cache.live_entries() {
                let b = self.heap.block_mut(e.block);
                b.state = State::Live;
                b.stamp = e.guard;
                self.live.insert(addr, e.block);
            }
            // Its used bytes were within its allowance, now given up.
            self.stats.used_current += cache.used;
        }
    }
}
