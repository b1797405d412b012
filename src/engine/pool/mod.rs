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
//!
//! Layout: this file holds the pool's types, its lock, and its creation
//! and drop (what goes back to the source when the pool goes). The rest is
//! split by what it does: `alloc.rs` places allocations (the reuse order),
//! `free.rs` takes frees and files freed blocks, `info.rs` answers queries
//! and settings (statistics, thresholds, trims, the used high-water mark),
//! `slabs.rs` takes fresh memory and gives idle memory back, and
//! `ranges.rs` commits and decommits the granules of virtual-memory ranges.

use super::addr_map::AddrMap;
use super::allocator::{align_up, Heap, State};
use super::backend::MemorySource;
use super::cache::{Shard, ShardGuard, ShardLocks, SHARDS};
use super::clock::{Clock, LaneId, Stamp};
use super::config::PoolConfig;
use super::dag::Dag;
use super::pending::{Flush, PendingLane};
use super::stats::PoolStats;
use std::mem::ManuallyDrop;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use crate::lock_order::{Mutex, MutexGuard, Rank};
use std::sync::Arc;

// `Inner`'s methods that the rest of the engine calls are
// `pub(in crate::engine)` in the parts (the reach `pub(super)` gave them
// here); those only the parts share are `pub(super)`.
mod alloc;
mod free;
mod info;
mod ranges;
mod slabs;

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
