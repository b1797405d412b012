//! Frees: the asynchronous free (parked in the queue's cache, filed as
//! pending, or ready at once), the blocking free, and filing a block that
//! nobody can touch any more.

use super::{Deps, FreeOutcome, Inner, Pool, Release};
use crate::abi::*;
use crate::engine::allocator::State;
use crate::engine::cache::{self, shard_of, ShardLocks};
use crate::engine::clock::{Clock, LaneId, Stamp};
use crate::engine::lane::{Lane, NodeKind};
use crate::UrResult;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

impl Pool {
    /// Undoes an allocation whose command never reached the backend (the
    /// enqueue failed): the block goes straight back to the pool, the
    /// free's node (if any) counts as done, and on an out-of-order lane so
    /// does the allocation's own node `alloc_stamp` (in order, the lane's
    /// next command settles it). Nothing ran, so nothing can still touch
    /// the block.
    pub fn give_back_unrun(&self, lane: &Arc<Lane>, ptr: *const u8, alloc_stamp: Stamp) {
        if let Ok(out) = self.free(lane, &[], ptr, false) {
            out.stamp.into_iter().for_each(|s| self.dag.complete(s));
        }
        if !lane.is_in_order() {
            self.dag.complete(alloc_stamp);
        }
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

    /// A block nobody can touch any more: ready it, or give a dedicated slab
    /// back (after the pool lock, through `to_release`).
    pub(in crate::engine) fn retire_block(&mut self, block: u32) {
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
    pub(in crate::engine) fn ready_block(&mut self, block: u32) {
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
}
