//! Lane caches: a pool's fast path for in-order queues.
//!
//! For each in-order lane that uses it, a pool keeps a cache of the few
//! blocks that lane freed last (parked: later allocations on the lane take
//! them back with no wait, complete or not) and of the blocks handed out on
//! that lane, which a later free there may park (the lane's live set).
//! Caches sit in shards, each behind a mutex of its own on a cache line of
//! its own and picked by lane id, so that queues driven from different
//! threads share no lock and no written memory in steady state: an
//! allocation that finds a parked block of its size, and a free of a block
//! of the lane's live set, take their shard's lock and nothing else.
//!
//! **Locking.** The fast path holds one shard lock and waits for nothing
//! else while holding it (when it cannot finish, it takes the pool lock only
//! if that is free at once, else lets its shard go first). Everything else
//! takes the pool's lock first and then the shard locks it needs
//! ([`ShardLocks`]), in any order: only the holder of the pool lock ever
//! holds more than one, so no cycle can form.
//!
//! **Blocks.** The pool's heap marks every cached block `Cached` and leaves
//! it alone (no merging, no reuse) until it takes the block back under both
//! locks; the cache holds what the heap would (size, free position, guard).
//!
//! **Used bytes.** A cache may raise its used bytes up to its allowance
//! without the pool lock. The pool keeps its own used bytes plus every
//! allowance within the used high-water mark, and raises the mark only
//! while it holds every lock, to a total reached at that moment: the mark
//! is exact, and so is the sum of the used bytes that a query reads under
//! every lock.

use super::addr_map::AddrMap;
use super::clock::{LaneId, Seq, Stamp};
use crate::lock_order::{Mutex, MutexGuard, Rank};

/// Shards per pool; queues with consecutive lane ids land in different ones.
pub(super) const SHARDS: usize = 16;
/// How many recent frees a lane keeps parked.
pub(super) const PARKED: usize = 4;

#[inline]
pub(super) fn shard_of(lane: LaneId) -> usize {
    lane.0 as usize % SHARDS
}

/// A block freed on the cache's lane at `stamp`, kept for the lane to take back.
#[derive(Clone, Copy, Debug)]
pub(super) struct Parked {
    pub(super) block: u32,
    pub(super) addr: usize,
    pub(super) size: usize,
    pub(super) stamp: Stamp,
}

const NO_PARKED: Parked = Parked {
    block: u32::MAX,
    addr: 0,
    size: 0,
    stamp: Stamp::new(LaneId(0), 0),
};

/// A block of the lane's live set. `guard`, when set, is on the cache's
/// lane: a free there is ordered after it, so it needs no dependency.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct CachedLive {
    pub(super) block: u32,
    pub(super) size: usize,
    pub(super) guard: Option<Stamp>,
}

/// Aligned so that two lanes' caches never share a cache line, wherever
/// their shards' vectors happen to be allocated.
#[repr(align(128))]
pub(super) struct LaneCache {
    pub(super) lane: LaneId,
    /// Oldest first.
    parked: [Parked; PARKED],
    n_parked: usize,
    live: AddrMap<CachedLive>,
    /// Bytes of the live set.
    pub(super) used: usize,
    /// `used` may grow up to this without the pool lock.
    pub(super) allowance: usize,
    /// The most this cache has asked to use at once: what it is given back
    /// when allowances are shared out again.
    pub(super) demand: usize,
}

impl LaneCache {
    fn new(lane: LaneId) -> Self {
        LaneCache {
            lane,
            parked: [NO_PARKED; PARKED],
            n_parked: 0,
            live: AddrMap::new(),
            used: 0,
            allowance: 0,
            demand: 0,
        }
    }

    pub(super) fn parked(&self) -> &[Parked] {
        &self.parked[..self.n_parked]
    }

    pub(super) fn is_full(&self) -> bool {
        self.n_parked == PARKED
    }

    pub(super) fn live_len(&self) -> usize {
        self.live.len()
    }

    pub(super) fn push_parked(&mut self, p: Parked) {
        debug_assert!(!self.is_full());
        self.parked[self.n_parked] = p;
        self.n_parked += 1;
    }

    pub(super) fn remove_parked(&mut self, k: usize) -> Parked {
        let p = self.parked[k];
        self.parked.copy_within(k + 1..self.n_parked, k);
        self.n_parked -= 1;
        self.parked[self.n_parked] = NO_PARKED;
        p
    }

    pub(super) fn get_live(&self, addr: usize) -> Option<CachedLive> {
        self.live.get(addr)
    }

    /// Takes `addr` out of the live set.
    pub(super) fn take_live(&mut self, addr: usize) -> Option<CachedLive> {
        let e = self.live.remove(addr)?;
        self.used -= e.size;
        Some(e)
    }

    /// Adds a block to the live set; the caller made room in the allowance.
    pub(super) fn add_live(&mut self, addr: usize, e: CachedLive) {
        debug_assert!(self.used + e.size <= self.allowance);
        self.live.insert(addr, e);
        self.used += e.size;
    }

    pub(super) fn live_entries(&self) -> impl Iterator<Item = (usize, CachedLive)> + '_ {
        self.live.iter()
    }

    /// Fast path: the newest parked block of exactly `size` bytes at
    /// `align`, moved to the live set when the allowance has room. Its guard
    /// is its free, unless the lane has completed that (`done_upto`).
    #[inline]
    pub(super) fn alloc_exact(
        &mut self,
        size: usize,
        align: usize,
        done_upto: Seq,
    ) -> Option<usize> {
        if self.used + size > self.allowance {
            return None;
        }
        let k = self
            .parked()
            .iter()
            .rposition(|p| p.size == size && p.addr & (align - 1) == 0)?;
        let p = self.remove_parked(k);
        let guard = (p.stamp.seq > done_upto).then_some(p.stamp);
        self.add_live(
            p.addr,
            CachedLive {
                block: p.block,
                size: p.size,
                guard,
            },
        );
        Some(p.addr)
    }

    /// Fast path: parks the block of the live set based at `addr`, freed at
    /// `position`, when there is room. Returns its size.
    #[inline]
    pub(super) fn free_live(&mut self, addr: usize, position: Stamp) -> Option<usize> {
        if self.is_full() {
            return None;
        }
        let e = self.take_live(addr)?;
        self.push_parked(Parked {
            block: e.block,
            addr,
            size: e.size,
            stamp: position,
        });
        Some(e.size)
    }
}

/// The caches of the lanes whose ids fall in one shard (usually one).
#[repr(align(128))]
pub(super) struct Shard {
    caches: Mutex<Vec<LaneCache>>,
}

impl Shard {
    pub(super) fn new() -> Self {
        Shard {
            caches: Mutex::new(Rank::Shard, Vec::new()),
        }
    }

    #[inline]
    pub(super) fn lock(&self) -> MutexGuard<'_, Vec<LaneCache>> {
        // Every mutation keeps a cache consistent before it can panic.
        self.caches.lock()
    }
}

#[inline]
pub(super) fn find(caches: &mut [LaneCache], lane: LaneId) -> Option<&mut LaneCache> {
    caches.iter_mut().find(|c| c.lane == lane)
}

/// Shard locks taken by the holder of the pool lock, as it needs them;
/// all are released together when this is dropped.
pub(super) struct ShardLocks<'a> {
    shards: &'a [Shard],
    /// `(shard, guard)`: one or two in the common case, kept inline.
    first: Option<(usize, ShardGuard<'a>)>,
    second: Option<(usize, ShardGuard<'a>)>,
    rest: Vec<(usize, ShardGuard<'a>)>,
}

pub(super) type ShardGuard<'a> = MutexGuard<'a, Vec<LaneCache>>;

impl<'a> ShardLocks<'a> {
    /// The caller holds the pool lock (see the module docs).
    pub(super) fn new(shards: &'a [Shard]) -> Self {
        debug_assert_eq!(shards.len(), SHARDS);
        ShardLocks {
            shards,
            first: None,
            second: None,
            rest: Vec::new(),
        }
    }

    /// Like [`new`](Self::new), with the shard of `lane` already locked.
    pub(super) fn holding(shards: &'a [Shard], lane: LaneId, guard: ShardGuard<'a>) -> Self {
        let mut locks = Self::new(shards);
        locks.first = Some((shard_of(lane), guard));
        locks
    }

    fn shard(&mut self, lane: LaneId) -> &mut Vec<LaneCache> {
        let i = shard_of(lane);
        let is = |held: &Option<(usize, ShardGuard<'a>)>| held.as_ref().is_some_and(|h| h.0 == i);
        let at = if is(&self.first) {
            0
        } else if is(&self.second) {
            1
        } else if let Some(k) = self.rest.iter().position(|h| h.0 == i) {
            2 + k
        } else {
            let held = (i, self.shards[i].lock());
            if self.first.is_none() {
                self.first = Some(held);
                0
            } else if self.second.is_none() {
                self.second = Some(held);
                1
            } else {
                self.rest.push(held);
                1 + self.rest.len()
            }
        };
        match at {
            0 => &mut self.first.as_mut().expect("held").1,
            1 => &mut self.second.as_mut().expect("held").1,
            k => &mut self.rest[k - 2].1,
        }
    }

    pub(super) fn cache(&mut self, lane: LaneId) -> Option<&mut LaneCache> {
        find(self.shard(lane), lane)
    }

    pub(super) fn cache_or_new(&mut self, lane: LaneId) -> &mut LaneCache {
        let shard = self.shard(lane);
        match shard.iter().position(|c| c.lane == lane) {
            Some(k) => &mut shard[k],
            None => {
                shard.push(LaneCache::new(lane));
                shard.last_mut().expect("just pushed")
            }
        }
    }

    pub(super) fn remove(&mut self, lane: LaneId) -> Option<LaneCache> {
        let shard = self.shard(lane);
        let k = shard.iter().position(|c| c.lane == lane)?;
        Some(shard.swap_remove(k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parked(block: u32, size: usize, seq: Seq) -> Parked {
        Parked {
            block,
            addr: 0x1000 * (block as usize + 1),
            size,
            stamp: Stamp::new(LaneId(3), seq),
        }
    }

    #[test]
    fn fast_path_takes_exact_sizes_within_the_allowance() {
        let mut c = LaneCache::new(LaneId(3));
        c.push_parked(parked(0, 128, 5));
        c.push_parked(parked(1, 256, 6));
        c.push_parked(parked(2, 128, 7));
        assert_eq!(c.alloc_exact(128, 64, 0), None, "no allowance yet");
        c.allowance = 128;
        assert_eq!(c.alloc_exact(192, 64, 0), None, "no exact size");
        let a = c.alloc_exact(128, 64, 6).unwrap();
        assert_eq!(a, 0x3000, "the newest of the size");
        assert_eq!(c.get_live(a).unwrap().guard, Some(Stamp::new(LaneId(3), 7)));
        assert_eq!(c.used, 128);
        assert_eq!(c.alloc_exact(128, 64, 0), None, "allowance used up");
        // Freed again: parked at the new position, no longer live.
        assert_eq!(c.free_live(a, Stamp::new(LaneId(3), 9)), Some(128));
        assert_eq!(
            c.free_live(a, Stamp::new(LaneId(3), 9)),
            None,
            "double free"
        );
        assert_eq!((c.used, c.live_len(), c.parked().len()), (0, 0, 3));
        assert_eq!(c.parked().last().unwrap().stamp.seq, 9);
        // A completed free leaves no guard.
        let b = c.alloc_exact(128, 64, 9).unwrap();
        assert_eq!(c.get_live(b).unwrap().guard, None);
    }

    #[test]
    fn a_full_cache_parks_nothing_more() {
        let mut c = LaneCache::new(LaneId(1));
        c.allowance = usize::MAX;
        for i in 0..PARKED as u32 {
            c.push_parked(parked(i, 64, 1));
        }
        let a = c.alloc_exact(64, 64, 0).unwrap();
        c.push_parked(parked(99, 64, 2));
        assert!(c.is_full());
        assert_eq!(c.free_live(a, Stamp::new(LaneId(1), 3)), None);
        assert_eq!(c.used, 64, "still live: the pool's slow path frees it");
        assert_eq!(c.remove_parked(0).block, 0, "oldest first");
    }

    #[test]
    fn shards_are_apart() {
        assert!(std::mem::align_of::<Shard>() >= 128);
        assert_ne!(shard_of(LaneId(1)), shard_of(LaneId(2)));
    }
}
