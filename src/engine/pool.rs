//! A pool: slabs from a [`MemorySource`], or ranges of its virtual memory
//! committed granule by granule (`vm.rs`), sub-allocated, and the reuse
//! rules that decide which freed block an allocation may take without a
//! host wait.
//!
//! Every block is in one state (ready, pending, live, cached). Ready blocks
//! sit in size bins; slab space never handed out has bins of its own and is
//! used last. Pending blocks (freed by a command that may not have
//! completed) belong to the lane of their free (`pending.rs`). Cached blocks
//! belong to an in-order lane's cache, parked or live (`cache.rs`).

use super::addr_map::AddrMap;
use super::allocator::{align_up, Heap, State};
use super::backend::{MemorySource, OutOfMemory, VirtualMemory};
use super::cache::{self, shard_of, CachedLive, Shard, ShardGuard, ShardLocks, SHARDS};
use super::clock::{Clock, LaneId, Stamp};
use super::config::PoolConfig;
use super::dag::Dag;
use super::lane::{Lane, NodeKind};
use super::pending::{Flush, PendingLane};
use super::stats::PoolStats;
use super::vm::Commits;
use crate::abi::*;
use crate::UrResult;
use std::mem::ManuallyDrop;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use crate::lock_order::{Mutex, MutexGuard, Rank};
use std::sync::Arc;

/// Extra dependencies the engine adds to a command (at most one today).
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Deps(Option<Stamp>);

impl Deps {
    pub fn as_slice(&self) -> &[Stamp] {
        self.0.as_slice()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }
}

/// The answer to an allocation request.
#[derive(Clone, Copy, Debug)]
pub struct Allocation {
    pub ptr: NonNull<u8>,
    /// Bytes of the block (the request rounded up to the pool's granule).
    pub size: usize,
    /// The node recorded for the allocation, when one was needed: the adapter
    /// runs the allocation as a command ordered after its wait list and
    /// `deps`, zeroes the block first when `zero` is set, and reports this
    /// stamp complete. `None` only on an in-order queue when nothing had to
    /// be waited for, zeroed or signalled: then there is nothing to run.
    pub stamp: Option<Stamp>,
    /// Commands the allocation must also wait for: the pending free of the
    /// block it was given.
    pub deps: Deps,
    /// The pool zero-initialises blocks; the adapter does it in the command.
    pub zero: bool,
}

/// The answer to an asynchronous free.
#[derive(Clone, Copy, Debug)]
pub struct FreeOutcome {
    /// The node recorded for the free, when one was needed; the adapter runs
    /// it after its wait list and `deps` and reports it complete. `None` on
    /// an in-order queue with no wait list and no event: the free then sits
    /// at the queue's current tail and costs nothing.
    pub stamp: Option<Stamp>,
    /// Commands the free must also wait for (the block's allocation, when
    /// the free was not ordered after it).
    pub deps: Deps,
}

pub(super) struct Inner {
    pub(super) heap: Heap,
    pub(super) lanes: Vec<PendingLane>,
    /// Address of every live block's base -> block, except the blocks of
    /// lane caches' live sets (`cache.rs`).
    pub(super) live: AddrMap,
    /// Slabs that were wholly free when last filed (checked again on use).
    pub(super) idle: Vec<u32>,
    pub(super) idle_listed: Vec<bool>,
    /// `used_current` counts the blocks of `live` only; `used_high` is the
    /// pool's mark, which also covers every cache's allowance (`cache.rs`).
    pub(super) stats: PoolStats,
    /// Sum of the lane caches' allowances.
    pub(super) allowances: usize,
    pub(super) max_size: usize,
    pub(super) release_threshold: usize,
    pub(super) scratch: Vec<u32>,
    /// Clock of the command being allocated or freed, when it is needed.
    pub(super) ctx: Clock,
    /// Slabs that are ranges of the backend's virtual memory, oldest first.
    pub(super) ranges: Vec<u32>,
    /// Size of the next range to reserve.
    pub(super) next_range: usize,
    /// Scratch list of granule runs `(first, count)` to commit.
    pub(super) runs: Vec<(usize, usize)>,
    /// Memory already forgotten by the heap and uncounted, that goes back to
    /// the source once the pool lock is let go (`Locked`'s drop): backend
    /// frees can take milliseconds and other queues need the lock.
    pub(super) to_release: Vec<Release>,
}

/// Memory to give back to the source after the pool lock (see `to_release`).
/// Nothing else can reach it: the heap forgot it and the source has not
/// got it back, so no allocation can be handed its addresses meanwhile.
pub(super) enum Release {
    /// From `MemorySource::allocate(size, align)`.
    Slab { addr: usize, size: usize, align: usize },
    /// A reservation of the source's virtual memory, nothing committed in it.
    Range { addr: usize, size: usize },
}

impl Release {
    /// # Safety
    /// `self` came from `source` as described and is given back once.
    unsafe fn give(self, source: &dyn MemorySource) {
        match self {
            Release::Slab { addr, size, align } => {
                source.release(NonNull::new_unchecked(addr as *mut u8), size, align)
            }
            Release::Range { addr, size } => match source.virtual_memory() {
                Some(vm) => vm.unreserve(NonNull::new_unchecked(addr as *mut u8), size),
                None => debug_assert!(false, "a range without virtual memory"),
            },
        }
    }
}

/// The first address range a pool reserves, when its backend has virtual
/// memory; each further one is twice the last, up to [`MAX_RANGE`].
/// Address space is cheap (nothing is committed until used), and one range
/// lets blocks of any size sit next to each other.
pub const FIRST_RANGE: usize = 256 << 20;
pub const MAX_RANGE: usize = 64 << 30;

/// A memory pool of one (context, device, USM kind). Thread-safe: one lock
/// for the pool, and lane caches behind locks of their own for the
/// in-order fast path (`cache.rs`).
pub struct Pool {
    dag: Arc<Dag>,
    source: Arc<dyn MemorySource>,
    config: PoolConfig,
    inner: Mutex<Inner>,
    shards: Box<[Shard]>,
    /// Frees may park blocks in lane caches: reserved memory is within the
    /// release threshold. Written under the pool lock, read by the fast path.
    parking: AtomicBool,
}

/// The pool lock, with the shard locks taken under it. Dropping it lets
/// both go and then gives back the memory the pool released meanwhile.
struct Locked<'p> {
    // Dropped by hand in `drop`, before the backend calls.
    inner: ManuallyDrop<MutexGuard<'p, Inner>>,
    shards: ManuallyDrop<ShardLocks<'p>>,
    parking: &'p AtomicBool,
    source: &'p dyn MemorySource,
}

impl<'p> Locked<'p> {
    fn parts(&mut self) -> (&mut Inner, &mut ShardLocks<'p>) {
        (&mut self.inner, &mut self.shards)
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        let within = self.inner.stats.reserved_current <= self.inner.release_threshold;
        // Written only on change: fast paths on other cores read it.
        if self.parking.load(Relaxed) != within {
            self.parking.store(within, Relaxed);
        }
        let released = std::mem::take(&mut self.inner.to_release);
        // SAFETY: each field is dropped once, here, and not used after.
        unsafe {
            ManuallyDrop::drop(&mut self.shards);
            ManuallyDrop::drop(&mut self.inner);
        }
        for r in released {
            // SAFETY: listed once by the pool, which forgot the memory (`Release`).
            unsafe { r.give(self.source) };
        }
    }
}

impl Pool {
    pub fn new(dag: Arc<Dag>, source: Arc<dyn MemorySource>, mut config: PoolConfig) -> Self {
        config.granule = config.granule.max(8).next_power_of_two();
        config.min_slab_size = align_up(config.min_slab_size.max(config.granule), config.granule)
            .unwrap_or(usize::MAX);
        Pool {
            dag,
            source,
            inner: Mutex::new(Rank::Pool, Inner {
                heap: Heap::new(config.granule),
                lanes: Vec::new(),
                live: AddrMap::new(),
                idle: Vec::new(),
                idle_listed: Vec::new(),
                stats: PoolStats::default(),
                allowances: 0,
                max_size: config.max_size,
                release_threshold: config.release_threshold,
                scratch: Vec::new(),
                ctx: Clock::new(),
                ranges: Vec::new(),
                next_range: FIRST_RANGE,
                runs: Vec::new(),
                to_release: Vec::new(),
            }),
            shards: (0..SHARDS).map(|_| Shard::new()).collect(),
            parking: AtomicBool::new(true),
            config,
        }
    }

    fn lock(&self) -> Locked<'_> {
        Locked {
            // Every mutation keeps the structure consistent before it can panic.
            inner: ManuallyDrop::new(self.inner.lock()),
            shards: ManuallyDrop::new(ShardLocks::new(&self.shards)),
            parking: &self.parking,
            source: &*self.source,
        }
    }

    /// The pool lock, for a fast path that holds `shard` (of `lane`) and
    /// could not finish: when the pool lock is free right now the shard's
    /// lock is kept (taking it without waiting cannot deadlock), else it is
    /// let go first, as the lock order wants.
    fn lock_after<'p>(&'p self, lane: LaneId, shard: ShardGuard<'p>) -> Locked<'p> {
        let Some(inner) = self.inner.try_lock() else {
            drop(shard);
            return self.lock();
        };
        Locked {
            inner: ManuallyDrop::new(inner),
            shards: ManuallyDrop::new(ShardLocks::holding(&self.shards, lane, shard)),
            parking: &self.parking,
            source: &*self.source,
        }
    }

    pub fn config(&self) -> &PoolConfig {
        &self.config
    }

    pub fn dag(&self) -> &Arc<Dag> {
        &self.dag
    }

    /// Allocates `size` bytes (aligned to `align`, 0 for the pool's granule)
    /// for a command enqueued on `lane` after `wait`. `want_event` says the
    /// caller needs a stamp for the allocation (its event).
    ///
    /// Reuse order: on an in-order queue, one of its own latest frees of
    /// exactly this size (no wait needed); a block whose free has completed; a block whose free is
    /// ordered before this command; by policy, a pending block, returned in
    /// `deps`; fresh memory (slab space never handed out, then a new slab up
    /// to the pool's maximum size).
    pub fn alloc(
        &self,
        lane: &Arc<Lane>,
        wait: &[Stamp],
        size: usize,
        align: usize,
        want_event: bool,
    ) -> UrResult<Allocation> {
        if size == 0 {
            return Err(UR_RESULT_ERROR_INVALID_USM_SIZE);
        }
        if align != 0 && !align.is_power_of_two() {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        let align = align.max(self.config.granule);
        let oom = self.config.kind.out_of_memory();
        let need = align_up(size, self.config.granule).ok_or(oom)?;
        let dedicated = size > self.config.max_poolable_size;
        // The fast path: a block the queue parked, of exactly this size.
        if lane.is_in_order()
            && wait.is_empty()
            && !want_event
            && !dedicated
            && !self.config.zero_init
        {
            let mut caches = self.shards[shard_of(lane.id())].lock();
            if let Some(addr) = cache::find(&mut caches, lane.id())
                .and_then(|c| c.alloc_exact(need, align, lane.done_upto()))
            {
                return Ok(Allocation {
                    // SAFETY: parked blocks lie inside slabs, never at address 0.
                    ptr: unsafe { NonNull::new_unchecked(addr as *mut u8) },
                    size: need,
                    stamp: None,
                    deps: Deps(None),
                    zero: false,
                });
            }
            let mut locked = self.lock_after(lane.id(), caches);
            let (inner, locks) = locked.parts();
            return self.alloc_locked(inner, locks, lane, wait, need, align, want_event, dedicated);
        }
        let mut locked = self.lock();
        let (inner, locks) = locked.parts();
        self.alloc_locked(inner, locks, lane, wait, need, align, want_event, dedicated)
    }

    #[allow(clippy::too_many_arguments)]
    fn alloc_locked(
        &self,
        inner: &mut Inner,
        locks: &mut ShardLocks<'_>,
        lane: &Arc<Lane>,
        wait: &[Stamp],
        need: usize,
        align: usize,
        want_event: bool,
        dedicated: bool,
    ) -> UrResult<Allocation> {
        let policy = self.config.policy;
        let source = &*self.source;
        let in_order = lane.is_in_order();
        // The lane whose cache an in-order allocation searches first, and
        // whose cache flushes of the others leave alone.
        let own = in_order.then(|| lane.id());
        if policy.allow_opportunistic {
            inner.collect(locks, source, false);
        }
        // The command's clock, computed only when a cross-queue search needs it.
        let mut ctx: Option<Clock> = None;
        let mut context_known = false;
        // (block, stamp that must complete before the block is surely free, extra dependency)
        let mut pick: Option<(u32, Option<Stamp>, Option<Stamp>)> = None;
        if !dedicated {
            // The queue's own latest frees of exactly this size first: no
            // wait, no split, and the best fit there is.
            if in_order {
                pick = inner
                    .take_parked(locks, lane, need, align)
                    .map(|(i, s)| (i, Some(s), None));
                // At the reserved high-water mark of a pool of ranges, the
                // queue's other parked blocks go back before it searches:
                // merged with their neighbours they may serve this request,
                // and else their granules may be moved rather than the mark
                // raised (parked, they would hold memory nobody uses).
                if pick.is_none()
                    && !inner.ranges.is_empty()
                    && inner.stats.reserved_current >= inner.stats.reserved_high
                {
                    if let Some(slot) = inner.slot_of(lane.id()) {
                        inner.flush_cache(locks, slot, Flush::All);
                    }
                }
            }
            // 1. Among the blocks the allocation may take with no host wait
            // (completed frees, frees earlier on this in-order queue, frees
            // its wait list or a barrier orders before it), the best fit.
            // Parked blocks join them only when nothing fits: completed ones
            // of other queues, then this queue's, then every other queue's.
            let search = |inner: &mut Inner, ctx: &mut Option<Clock>| {
                inner.take_best_without_wait(source, &self.dag, policy, lane, own, wait, need, align, ctx)
            };
            let mut found = if pick.is_none() { search(inner, &mut ctx) } else { Ok(None) };
            for stage in 0..3 {
                if pick.is_some() || !matches!(found, Ok(None)) {
                    break;
                }
                let flushed = match stage {
                    0 => policy.allow_opportunistic && inner.flush_caches(locks, own, Flush::Complete),
                    1 => own
                        .and_then(|l| inner.slot_of(l))
                        .is_some_and(|slot| inner.flush_cache(locks, slot, Flush::All)),
                    _ => {
                        (policy.follow_event_dependencies || policy.allow_internal_dependencies)
                            && inner.flush_caches(locks, own, Flush::All)
                    }
                };
                if flushed {
                    found = search(inner, &mut ctx);
                }
            }
            match found {
                Ok(Some(p)) => pick = Some(p),
                Ok(None) => {}
                Err(OutOfMemory) => {
                    // Committing the block's granules failed.
                    if let Some(c) = ctx {
                        inner.ctx = c;
                    }
                    return Err(self.config.kind.out_of_memory());
                }
            }
            context_known = ctx.is_some();
            // 2. By policy, a pending block, waited for by the allocation.
            if pick.is_none() && policy.allow_internal_dependencies {
                pick = inner
                    .take_any_pending(need, align)
                    .map(|(i, s)| (i, Some(s), Some(s)));
            }
        }
        // 3. Fresh memory: slab space never handed out, then a new slab.
        let (block, mut guard, dep) = match pick {
            Some(p) => p,
            None => match inner.fresh_memory(source, &self.config, need, align, dedicated) {
                Ok(b) => (b, None, None),
                Err(OutOfMemory) => {
                    if let Some(c) = ctx {
                        inner.ctx = c;
                    }
                    return Err(self.config.kind.out_of_memory());
                }
            },
        };

        let needs_node = want_event || !wait.is_empty() || dep.is_some() || self.config.zero_init;
        let stamp = needs_node.then(|| {
            let w = if context_known { &[][..] } else { wait };
            let c = ctx.get_or_insert_with(|| inner.take_ctx());
            self.dag
                .record_into(lane, w, dep.as_slice(), NodeKind::Command, c)
        });
        if let Some(c) = ctx {
            inner.ctx = c;
        }
        if stamp.is_some() {
            guard = stamp; // the allocation is ordered after everything guarded so far
        }
        let guard = guard.filter(|g| g.seq != 0);
        let b = inner.heap.block_mut(block);
        b.fresh = false;
        let (addr, bytes) = (b.addr, b.size);
        // A later free on this in-order queue is ordered after the guard: it
        // may park the block without the pool lock.
        if in_order && !dedicated && guard.is_none_or(|g| g.lane == lane.id()) {
            b.state = State::Cached;
            b.stamp = None;
            inner.cache_for(locks, lane);
            inner.make_room(locks, Some(lane.id()), bytes);
            let cache = locks.cache(lane.id()).expect("made above");
            cache.add_live(
                addr,
                CachedLive {
                    block,
                    size: bytes,
                    guard,
                },
            );
        } else {
            b.state = State::Live;
            b.stamp = guard;
            inner.make_room(locks, None, bytes);
            inner.live.insert(addr, block);
            inner.stats.use_bytes(bytes);
        }
        Ok(Allocation {
            // SAFETY: blocks lie inside slabs from the source, which never returns null.
            ptr: unsafe { NonNull::new_unchecked(addr as *mut u8) },
            size: bytes,
            stamp,
            deps: Deps(dep),
            zero: self.config.zero_init,
        })
    }

    /// Frees, on `lane` after `wait`, the allocation based at `ptr`. Only the
    /// exact base of a live allocation of this pool is accepted; anything
    /// else is `UR_RESULT_ERROR_INVALID_VALUE` and changes nothing.
    pub fn free(
        &self,
        lane: &Arc<Lane>,
        wait: &[Stamp],
        ptr: *const u8,
        want_event: bool,
    ) -> UrResult<FreeOutcome> {
        // The fast path: a block of the queue's live set, parked in its cache.
        let mut locked =
            if lane.is_in_order() && wait.is_empty() && !want_event && self.parking.load(Relaxed) {
                let mut caches = self.shards[shard_of(lane.id())].lock();
                if cache::find(&mut caches, lane.id())
                    .and_then(|c| c.free_live(ptr as usize, lane.tail()))
                    .is_some()
                {
                    return Ok(FreeOutcome {
                        stamp: None,
                        deps: Deps(None),
                    });
                }
                self.lock_after(lane.id(), caches)
            } else {
                self.lock()
            };
        let (inner, locks) = locked.parts();
        let block = inner.take_live(locks, lane.id(), ptr as usize)?;
        let guard = inner.heap.block(block).stamp;
        let mut ctx: Option<Clock> = None;
        let mut context_known = false;
        let dep = match guard {
            None => None,
            Some(g) if g.lane == lane.id() && (lane.is_in_order() || lane.is_complete(g.seq)) => {
                None
            }
            Some(g) if g.lane != lane.id() && self.dag.is_complete(g) => None,
            Some(g) => {
                let ctx = ctx.insert(inner.take_ctx());
                self.dag.context_clock(lane, wait, ctx);
                context_known = true;
                (!ctx.covers(g)).then_some(g)
            }
        };
        let needs_node = want_event || !wait.is_empty() || !lane.is_in_order() || dep.is_some();
        let position = if needs_node {
            let w = if context_known { &[][..] } else { wait };
            let c = ctx.get_or_insert_with(|| inner.take_ctx());
            self.dag
                .record_into(lane, w, dep.as_slice(), NodeKind::Command, c)
        } else {
            lane.tail()
        };
        if let Some(c) = ctx {
            inner.ctx = c;
        }
        let complete = position.seq <= lane.done_upto();
        if lane.is_in_order()
            && !inner.is_dedicated(block)
            && inner.stats.reserved_current <= inner.release_threshold
            && (!needs_node || !complete)
        {
            // Parked even when already complete: the queue's next allocation
            // takes it back without a split; collection files it later.
            inner.park(locks, lane, block, position);
        } else if complete {
            // Ready now; the release threshold waits for a synchronisation point.
            inner.retire_block(block);
        } else {
            let slot = inner.slot_for(lane);
            inner.file_pending(block, position, slot);
        }
        Ok(FreeOutcome {
            stamp: needs_node.then_some(position),
            deps: Deps(dep),
        })
    }

    /// A blocking free (`urUSMFree`) of a block of this pool. When commands
    /// that earlier owners may still run are pending, calls `wait_for` with
    /// the stamp to wait on (without holding the pool lock), then files the
    /// block as free.
    pub fn free_blocking(&self, ptr: *const u8, wait_for: impl FnOnce(Stamp)) -> UrResult<()> {
        let mut locked = self.lock();
        let (inner, locks) = locked.parts();
        let block = inner.take_live(locks, None, ptr as usize)?;
        if let Some(g) = inner
            .heap
            .block(block)
            .stamp
            .filter(|g| !self.dag.is_complete(*g))
        {
            inner.heap.block_mut(block).state = State::Freeing;
            drop(locked);
            wait_for(g);
            locked = self.lock();
        }
        let (inner, _) = locked.parts();
        inner.retire_block(block);
        inner.apply_threshold(&*self.source);
        Ok(())
    }

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
        while i != super::allocator::NIL {
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
        let mut locked = self.lock();
        let (inner, locks) = locked.parts();
        let parked: usize = inner
            .lanes
            .iter()
            .filter(|l| l.cached)
            .filter_map(|l| locks.cache(l.id).map(|c| c.parked().len()))
            .sum();
        inner.lanes.iter().map(|l| l.count).sum::<usize>() + parked
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
            while i != super::allocator::NIL {
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
        let mut locked = self.lock();
        let (inner, locks) = locked.parts();
        let cached: usize = inner
            .lanes
            .iter()
            .filter(|l| l.cached)
            .filter_map(|l| locks.cache(l.id).map(|c| c.live_len()))
            .sum();
        inner.live.len() + cached
    }
}

impl Drop for Pool {
    /// Gives back every slab no command can still touch; the others go back
    /// once every lane has completed what it had recorded by now.
    fn drop(&mut self) {
        {
            // The pool is ours alone, but shard locks nest only under the
            // pool lock (the order `lock_order` checks), so it is taken.
            // Dropping it gives back what the collection released.
            let mut locked = self.lock();
            let (inner, locks) = locked.parts();
            inner.collect(locks, &*self.source, true);
            inner.flush_caches(locks, None, Flush::All);
        }
        let inner = self.inner.get_mut();
        let busy_lanes = self.dag.unfinished_tails();
        let mut later = Vec::new();
        for s in 0..inner.heap.slabs.len() as u32 {
            if !inner.heap.slabs[s as usize].in_use {
                continue;
            }
            let give = inner.slab_to_give_back(s);
            if busy_lanes.is_empty() || inner.slab_idle(s) {
                // SAFETY: an in-use slab came from this source and is given back once.
                unsafe { give.give(&*self.source) };
            } else {
                later.push(give);
            }
        }
        if !later.is_empty() {
            let source = self.source.clone();
            self.dag.graveyard().bury(
                busy_lanes,
                Box::new(move || {
                    for give in later {
                        // SAFETY: as above; the pool is gone, so nothing else gives these back.
                        unsafe { give.give(&*source) };
                    }
                }),
            );
        }
    }
}

impl Inner {
    /// Takes the live block based at `addr` out of the live map or out of a
    /// lane cache's live set (`lane`'s first), uncounts its bytes, and
    /// returns it as `Live` with its guard.
    fn take_live(
        &mut self,
        locks: &mut ShardLocks<'_>,
        lane: impl Into<Option<LaneId>>,
        addr: usize,
    ) -> UrResult<u32> {
        if let Some(block) = self.live.remove(addr) {
            let bytes = self.heap.block(block).size;
            self.stats.unuse_bytes(bytes);
            return Ok(block);
        }
        let lane = lane.into();
        let mut found = lane.and_then(|l| locks.cache(l)?.take_live(addr));
        for slot in 0..self.lanes.len() {
            if found.is_some() {
                break;
            }
            let pl = &self.lanes[slot];
            if pl.cached && Some(pl.id) != lane {
                found = locks.cache(pl.id).and_then(|c| c.take_live(addr));
            }
        }
        let e = found.ok_or(UR_RESULT_ERROR_INVALID_VALUE)?;
        let b = self.heap.block_mut(e.block);
        b.state = State::Live;
        b.stamp = e.guard;
        Ok(e.block)
    }

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
    pub(super) fn make_room(
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

    /// The scratch clock, cleared (give it back through `self.ctx`).
    pub(super) fn take_ctx(&mut self) -> Clock {
        let mut c = std::mem::take(&mut self.ctx);
        c.clear();
        c
    }

    pub(super) fn is_dedicated(&self, block: u32) -> bool {
        self.heap.slabs[self.heap.block(block).slab as usize].dedicated
    }

    /// Is slab `s` wholly free (one ready block)?
    pub(super) fn slab_idle(&self, s: u32) -> bool {
        let slab = &self.heap.slabs[s as usize];
        if !slab.in_use || slab.dedicated {
            return false;
        }
        let first = self.heap.slab_first(s);
        self.heap.block(first).state == State::Ready && self.heap.covers_slab(first)
    }

    /// Takes the best-fitting block that an allocation on `lane` after
    /// `wait` may use with no host wait: a ready block (its free completed),
    /// one freed earlier on this in-order queue, or one whose free the
    /// command's clock orders before it. Returns it with the stamp of its
    /// free (none for a ready block). The clock is computed into `ctx` on
    /// first need and kept for the caller.
    #[allow(clippy::too_many_arguments)]
    fn take_best_without_wait(
        &mut self,
        source: &dyn MemorySource,
        dag: &Dag,
        policy: super::ReusePolicy,
        lane: &Arc<Lane>,
        own: Option<LaneId>,
        wait: &[Stamp],
        size: usize,
        align: usize,
        ctx: &mut Option<Clock>,
    ) -> Result<Option<(u32, Option<Stamp>, Option<Stamp>)>, OutOfMemory> {
        let granule = self.heap.granule;
        let mut best: Option<(u32, usize, bool)> = None; // (block, size, pending)
        let consider = |best: &mut Option<(u32, usize, bool)>, found: Option<(u32, usize)>, pending: bool| {
            if let Some((i, bytes)) = found {
                if best.is_none_or(|(_, s, _)| bytes < s) {
                    *best = Some((i, bytes, pending));
                }
            }
        };
        let ready = self.heap.ready.find(&self.heap.blocks, size, align, granule, |_| true);
        consider(&mut best, ready.map(|i| (i, self.heap.block(i).size)), false);
        if let Some(slot) = own.and_then(|l| self.slot_of(l)) {
            consider(&mut best, self.find_pending_of(slot, size, align), true);
        }
        // An exact fit needs no further search (nor the clock).
        if policy.follow_event_dependencies && self.has_pending_besides(lane) && best.is_none_or(|(_, s, _)| s > size) {
            if ctx.is_none() {
                let c = ctx.insert(self.take_ctx());
                dag.context_clock(lane, wait, c);
            }
            let c = ctx.as_ref().expect("set above");
            consider(&mut best, self.find_ordered(lane, c, wait, size, align), true);
        }
        let Some((i, _, pending)) = best else {
            return Ok(None);
        };
        if pending {
            let stamp = self.heap.block(i).stamp.expect("pending blocks have a stamp");
            Ok(Some((self.take_pending(i, size, align), Some(stamp), None)))
        } else {
            self.heap.unfile_ready(i);
            Ok(Some((self.carve_ready(source, i, size, align)?, None, None)))
        }
    }

    /// Cuts `size` out of the unfiled ready block `i`; the rest stays ready.
    /// In a range, the piece's granules are committed; when that fails the
    /// block is filed back as it was.
    pub(super) fn carve_ready(
        &mut self,
        source: &dyn MemorySource,
        i: u32,
        size: usize,
        align: usize,
    ) -> Result<u32, OutOfMemory> {
        let (piece, before, after) = self.heap.carve(i, size, align);
        // Leftovers merge with ready neighbours, so the piece must not look ready.
        self.heap.block_mut(piece).state = State::Live;
        for rest in [before, after].into_iter().flatten() {
            self.heap.file_ready(rest);
        }
        if let Err(e) = self.claim(source, piece) {
            // Merges with the leftovers again: as if nothing happened.
            self.heap.file_ready(piece);
            return Err(e);
        }
        Ok(piece)
    }

    /// Puts committed memory under block `i` (of a range) that has just
    /// gone into use: its granules stop being idle, and those not committed
    /// are committed. When that would lift the reserved bytes above their
    /// high-water mark, idle granules elsewhere are decommitted first (the
    /// pool moves its memory rather than take more, so the mark rises only
    /// when no committed granule is idle); the maximum size is never
    /// passed. On error the block is unclaimed again (idle granules may
    /// have been given back meanwhile).
    fn claim(&mut self, source: &dyn MemorySource, i: u32) -> Result<(), OutOfMemory> {
        let (addr, size, s) = {
            let b = self.heap.block(i);
            (b.addr, b.size, b.slab as usize)
        };
        let Some(c) = self.heap.slabs[s].vm.as_deref_mut() else {
            return Ok(());
        };
        c.claim(addr, size);
        let granule = c.granule();
        let mut runs = std::mem::take(&mut self.runs);
        runs.clear();
        c.uncommitted_runs(addr, size, |first, n| runs.push((first, n)));
        let need = runs.iter().map(|&(_, n)| n * granule).sum::<usize>();
        let done = if need == 0 {
            Ok(())
        } else {
            self.commit_runs(source, s, &runs, need)
        };
        self.runs = runs;
        if done.is_err() {
            if let Some(c) = self.heap.slabs[s].vm.as_deref_mut() {
                c.unclaim(addr, size);
            }
        }
        done
    }

    /// Commits the granule runs of range `s`, `need` bytes in all.
    fn commit_runs(
        &mut self,
        source: &dyn MemorySource,
        s: usize,
        runs: &[(usize, usize)],
        need: usize,
    ) -> Result<(), OutOfMemory> {
        let vm = source
            .virtual_memory()
            .expect("ranges come from the source's virtual memory");
        let cap = self.stats.reserved_high.min(self.max_size);
        if self.stats.reserved_current.saturating_add(need) > cap {
            self.move_idle(vm, self.stats.reserved_current + need - cap);
        }
        if self.stats.reserved_current.saturating_add(need) > self.max_size {
            self.release_idle(source, self.max_size.saturating_sub(need));
            if self.stats.reserved_current.saturating_add(need) > self.max_size {
                return Err(OutOfMemory);
            }
        }
        for (k, &(first, n)) in runs.iter().enumerate() {
            let c = self.heap.slabs[s].vm.as_deref().expect("a range");
            let (addr, len) = (c.addr_of(first), n * c.granule());
            // SAFETY: range addresses are never 0.
            let ptr = unsafe { NonNull::new_unchecked(addr as *mut u8) };
            // SAFETY (both): the run lies in range `s` and none of it is committed.
            let mut done = unsafe { vm.commit(ptr, len) };
            if done.is_err() {
                // Give back everything free and try once more. The claimed
                // block keeps its granules (and range `s`) from going.
                self.release_idle(source, 0);
                self.release_now(source);
                done = unsafe { vm.commit(ptr, len) };
            }
            if done.is_err() {
                for &(first, n) in &runs[..k] {
                    let c = self.heap.slabs[s].vm.as_deref_mut().expect("a range");
                    let (addr, len) = (c.addr_of(first), n * c.granule());
                    c.set_decommitted(first, n);
                    // SAFETY: committed just above, and not handed out yet.
                    unsafe { vm.decommit(NonNull::new_unchecked(addr as *mut u8), len) };
                    self.stats.unreserve(len);
                }
                return Err(OutOfMemory);
            }
            self.heap.slabs[s]
                .vm
                .as_deref_mut()
                .expect("a range")
                .set_committed(first, n);
            self.stats.reserve(len);
        }
        Ok(())
    }

    /// Makes room for `bytes` more committed bytes at the high-water mark:
    /// decommits the committed insides of the biggest free blocks first
    /// (best fit takes them last, and each goes in one call), then any idle
    /// granule. May give back more than `bytes`: the rest makes room for
    /// the commits that follow.
    fn move_idle(&mut self, vm: &dyn VirtualMemory, bytes: usize) {
        let mut given = 0;
        let mut biggest = std::mem::take(&mut self.scratch);
        biggest.clear();
        self.heap.ready.biggest(&self.heap.blocks, 8, &mut biggest);
        let mut runs = Vec::new();
        for &i in &biggest {
            if given >= bytes {
                break;
            }
            let b = *self.heap.block(i);
            let Some(c) = self.heap.slabs[b.slab as usize].vm.as_deref_mut() else {
                continue;
            };
            runs.clear();
            c.committed_runs_inside(b.addr, b.size, |first, n| runs.push((first, n)));
            for &(first, n) in &runs {
                let (addr, len) = (c.addr_of(first), n * c.granule());
                c.set_decommitted(first, n);
                // SAFETY: granules wholly inside a ready block are idle: committed, and no block in use touches them.
                unsafe { vm.decommit(NonNull::new_unchecked(addr as *mut u8), len) };
                self.stats.unreserve(len);
                given += len;
            }
        }
        biggest.clear();
        self.scratch = biggest;
        if given < bytes {
            self.decommit_idle(vm, bytes - given);
        }
    }

    /// Decommits idle granules, highest first in the newest ranges, until
    /// `bytes` are given back or none is idle.
    fn decommit_idle(&mut self, vm: &dyn VirtualMemory, mut bytes: usize) {
        for k in (0..self.ranges.len()).rev() {
            let s = self.ranges[k] as usize;
            while bytes > 0 {
                let Some(c) = self.heap.slabs[s].vm.as_deref_mut() else {
                    break;
                };
                let granule = c.granule();
                let Some((first, n)) = c.highest_idle_run(bytes.div_ceil(granule)) else {
                    break;
                };
                let (addr, len) = (c.addr_of(first), n * granule);
                c.set_decommitted(first, n);
                // SAFETY: idle granules are committed and no block in use touches them.
                unsafe { vm.decommit(NonNull::new_unchecked(addr as *mut u8), len) };
                self.stats.unreserve(len);
                bytes = bytes.saturating_sub(len);
            }
        }
    }

    /// Reserves a new range that holds `need` bytes at `align`; `None` when
    /// the backend refuses (the pool then takes slabs).
    fn reserve_range(&mut self, vm: &dyn VirtualMemory, need: usize, align: usize) -> Option<u32> {
        let granule = vm.granule();
        // Blocks are split at multiples of the pool's granule: the range base must be one.
        if !granule.is_power_of_two() || granule > 1 << 31 || granule < self.heap.granule {
            return None;
        }
        let want = need.checked_add(align.saturating_sub(granule))?;
        let size = align_up(want.max(self.next_range), granule)?;
        let addr = vm.reserve(size).ok()?.as_ptr() as usize;
        let first = self.heap.add_slab(addr, size, granule, false);
        let s = self.heap.block(first).slab as usize;
        self.heap.slabs[s].vm = Some(Box::new(Commits::new(addr, size, granule)));
        if self.idle_listed.len() <= s {
            self.idle_listed.resize(s + 1, false);
        }
        self.ranges.push(s as u32);
        self.next_range = self.next_range.saturating_mul(2).min(MAX_RANGE);
        Some(first)
    }

    /// Slab space never handed out, else a new slab.
    fn fresh_memory(
        &mut self,
        source: &dyn MemorySource,
        config: &PoolConfig,
        need: usize,
        align: usize,
        dedicated: bool,
    ) -> Result<u32, OutOfMemory> {
        if !dedicated {
            if let Some(i) =
                self.heap
                    .fresh
                    .find(&self.heap.blocks, need, align, self.heap.granule, |_| true)
            {
                self.heap.unfile_ready(i);
                return self.carve_ready(source, i, need, align);
            }
        }
        self.grow(source, config, need, align, dedicated)
    }

    /// Takes a new slab (or, for a dedicated allocation, exactly its memory).
    /// Free slabs are given back first when the maximum size or the backend
    /// would refuse.
    fn grow(
        &mut self,
        source: &dyn MemorySource,
        config: &PoolConfig,
        need: usize,
        align: usize,
        dedicated: bool,
    ) -> Result<u32, OutOfMemory> {
        if !dedicated {
            if let Some(first) = source
                .virtual_memory()
                .and_then(|vm| self.reserve_range(vm, need, align))
            {
                return self.carve_ready(source, first, need, align);
            }
        }
        let granule = self.heap.granule;
        if self.stats.reserved_current.saturating_add(need) > self.max_size {
            let keep = self.max_size.saturating_sub(need);
            self.release_idle(source, keep);
            if self.stats.reserved_current.saturating_add(need) > self.max_size {
                return Err(OutOfMemory);
            }
        }
        let headroom = self.max_size - self.stats.reserved_current;
        let mut size = if dedicated {
            need
        } else {
            need.max(config.min_slab_size)
        };
        if size > headroom {
            size = need.max(headroom & !(granule - 1));
        }
        let slab_align = align.max(granule);
        let addr = match source.allocate(size, slab_align) {
            Ok(p) => p,
            Err(OutOfMemory) => {
                // Give back everything free and try again, then with the bare need.
                self.release_idle(source, 0);
                self.release_now(source);
                match source.allocate(size, slab_align) {
                    Ok(p) => p,
                    Err(_) if size > need => {
                        size = need;
                        source.allocate(size, slab_align)?
                    }
                    Err(e) => return Err(e),
                }
            }
        };
        let addr = addr.as_ptr() as usize;
        debug_assert_eq!(addr % slab_align, 0);
        let slab_block = self.heap.add_slab(addr, size, slab_align, dedicated);
        let s = self.heap.block(slab_block).slab as usize;
        if self.idle_listed.len() <= s {
            self.idle_listed.resize(s + 1, false);
        }
        self.stats.reserve(size);
        if dedicated {
            return Ok(slab_block);
        }
        self.carve_ready(source, slab_block, need, align)
    }

    /// Gives back what `to_release` holds now, under the pool lock: only
    /// where the backend refused memory and is about to be asked again.
    fn release_now(&mut self, source: &dyn MemorySource) {
        for r in std::mem::take(&mut self.to_release) {
            // SAFETY: listed once by the pool, which forgot the memory (`Release`).
            unsafe { r.give(source) };
        }
    }

    /// A block nobody can touch any more: ready it, or give a dedicated slab
    /// back (after the pool lock, through `to_release`).
    pub(super) fn retire_block(&mut self, block: u32) {
        if self.is_dedicated(block) {
            let (addr, size, align) = self.heap.remove_slab(block);
            self.stats.unreserve(size);
            self.to_release.push(Release::Slab { addr, size, align });
            return;
        }
        self.ready_block(block);
    }

    /// Files a (non-dedicated) block nobody can touch any more as ready,
    /// merged with its ready neighbours.
    pub(super) fn ready_block(&mut self, block: u32) {
        let b = self.heap.block(block);
        let (addr, size, s) = (b.addr, b.size, b.slab as usize);
        if let Some(c) = self.heap.slabs[s].vm.as_deref_mut() {
            c.unclaim(addr, size);
        }
        let merged = self.heap.file_ready(block);
        // Ranges are not listed: their granules go back one by one.
        if self.heap.covers_slab(merged) && self.heap.slabs[s].vm.is_none() {
            let s = self.heap.block(merged).slab as usize;
            if !self.idle_listed[s] {
                self.idle_listed[s] = true;
                self.idle.push(s as u32);
            }
        }
    }

    pub(super) fn apply_threshold(&mut self, source: &dyn MemorySource) {
        if self.stats.reserved_current > self.release_threshold {
            self.release_idle(source, self.release_threshold);
        }
    }

    /// Gives back wholly free slabs, then idle granules of ranges, while more
    /// than `keep` bytes are reserved.
    pub(super) fn release_idle(&mut self, source: &dyn MemorySource, keep: usize) {
        while self.stats.reserved_current > keep {
            let Some(s) = self.idle.pop() else { break };
            self.idle_listed[s as usize] = false;
            if !self.slab_idle(s) {
                continue; // no longer wholly free; listed again when it is
            }
            let first = self.heap.slab_first(s);
            self.heap.unfile_ready(first);
            let (addr, size, align) = self.heap.remove_slab(first);
            self.stats.unreserve(size);
            self.to_release.push(Release::Slab { addr, size, align });
        }
        if self.ranges.is_empty() {
            return;
        }
        let Some(vm) = source.virtual_memory() else {
            return;
        };
        if self.stats.reserved_current > keep {
            self.decommit_idle(vm, self.stats.reserved_current - keep);
        }
    }

    /// Gives back the address space of ranges wholly free with nothing
    /// committed (at a trim: growing again reserves anew).
    pub(super) fn release_empty_ranges(&mut self, source: &dyn MemorySource) {
        if source.virtual_memory().is_none() {
            return;
        }
        let mut k = 0;
        while k < self.ranges.len() {
            let s = self.ranges[k];
            let empty = self.heap.slabs[s as usize]
                .vm
                .as_deref()
                .is_some_and(|c| c.n_committed == 0);
            if !(empty && self.slab_idle(s)) {
                k += 1;
                continue;
            }
            self.ranges.remove(k);
            let first = self.heap.slab_first(s);
            self.heap.unfile_ready(first);
            let (addr, size, _) = self.heap.remove_slab(first);
            self.to_release.push(Release::Range { addr, size });
        }
        if self.ranges.is_empty() {
            self.next_range = FIRST_RANGE;
        }
    }

    /// What giving back slab `s` takes: its address, size and alignment, and
    /// for a range, the runs `(address, length)` still committed in it.
    fn slab_to_give_back(&self, s: u32) -> GiveBack {
        let slab = &self.heap.slabs[s as usize];
        GiveBack {
            addr: slab.addr,
            size: slab.size,
            align: slab.align,
            committed: slab.vm.as_deref().map(|c| {
                c.committed_runs()
                    .into_iter()
                    .map(|(first, n)| (c.addr_of(first), n * c.granule()))
                    .collect()
            }),
        }
    }
}

/// A slab or range to give back when its pool goes.
struct GiveBack {
    addr: usize,
    size: usize,
    align: usize,
    committed: Option<Vec<(usize, usize)>>,
}

impl GiveBack {
    /// # Safety
    /// The slab or range came from `source`, no command can touch it any
    /// more, and it is given back once.
    unsafe fn give(self, source: &dyn MemorySource) {
        let base = NonNull::new_unchecked(self.addr as *mut u8);
        match (self.committed, source.virtual_memory()) {
            (None, _) => source.release(base, self.size, self.align),
            (Some(runs), Some(vm)) => {
                for (addr, len) in runs {
                    vm.decommit(NonNull::new_unchecked(addr as *mut u8), len);
                }
                vm.unreserve(base, self.size);
            }
            (Some(_), None) => debug_assert!(false, "a range without virtual memory"),
        }
    }
}
