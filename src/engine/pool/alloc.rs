//! Placing an allocation: the in-order fast path, then the reuse order
//! (a queue's own parked frees, blocks free with no host wait, a pending
//! block by policy, fresh memory), and carving the chosen block.

use super::{Allocation, Deps, Inner, Pool};
use crate::abi::*;
use crate::engine::allocator::{align_up, State};
use crate::engine::backend::{MemorySource, OutOfMemory};
use crate::engine::cache::{self, shard_of, CachedLive, ShardLocks};
use crate::engine::clock::{Clock, LaneId, Stamp};
use crate::engine::dag::Dag;
use crate::engine::lane::{Lane, NodeKind};
use crate::engine::pending::Flush;
use crate::UrResult;
use std::ptr::NonNull;
use std::sync::Arc;

impl Pool {
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
}

impl Inner {
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
        policy: crate::engine::ReusePolicy,
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
    pub(in crate::engine) fn carve_ready(
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
}
