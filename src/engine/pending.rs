//! Pending blocks of a pool, per lane of their free, in size bins and in a
//! list in seq order; collection of those whose free has completed; moving
//! blocks between the pool and the lane caches (`cache.rs`); and the
//! searches of reuse steps 2 and 3.

use super::allocator::{fits, Bins, State, NIL};
use super::backend::MemorySource;
use super::cache::{Parked, ShardLocks};
use super::clock::{Clock, LaneId, Stamp};
use super::lane::Lane;
use super::pool::Inner;
use std::sync::Arc;

/// How many pending blocks of one lane a search for an ordered block looks at.
const ORDERED_SCAN: usize = 64;

/// Pending blocks freed on one lane.
pub(super) struct PendingLane {
    pub(super) id: LaneId,
    pub(super) lane: Arc<Lane>,
    bins: Bins,
    /// Seq-ordered list of the blocks.
    head: u32,
    tail: u32,
    pub(super) count: usize,
    /// `done_upto` (in-order) or `epoch` (out-of-order) at the last collection.
    seen: u64,
    /// The lane has a cache in this pool (in-order lanes only).
    pub(super) cached: bool,
}

/// Which parked blocks a flush hands back to the pool.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Flush {
    /// Only those whose free has completed (they become ready).
    Complete,
    /// All of them (the others become pending on their lane).
    All,
}

impl Inner {
    #[inline]
    pub(super) fn slot_of(&self, lane: LaneId) -> Option<usize> {
        self.lanes.iter().position(|l| l.id == lane)
    }

    #[inline]
    pub(super) fn slot_for(&mut self, lane: &Arc<Lane>) -> usize {
        if let Some(s) = self.slot_of(lane.id()) {
            return s;
        }
        self.lanes.push(PendingLane {
            id: lane.id(),
            lane: lane.clone(),
            bins: Bins::new(),
            head: NIL,
            tail: NIL,
            count: 0,
            seen: 0,
            cached: false,
        });
        self.lanes.len() - 1
    }

    pub(super) fn has_pending_besides(&self, lane: &Lane) -> bool {
        self.lanes
            .iter()
            .any(|l| l.count > 0 && (l.id != lane.id() || !lane.is_in_order()))
    }

    /// The cache of `lane` (made on first use), with its lane registered.
    pub(super) fn cache_for<'l>(
        &mut self,
        locks: &'l mut ShardLocks<'_>,
        lane: &Arc<Lane>,
    ) -> &'l mut super::cache::LaneCache {
        let slot = self.slot_for(lane);
        self.lanes[slot].cached = true;
        locks.cache_or_new(lane.id())
    }

    /// Parks `block`, freed at `stamp` on the in-order `lane`, in the lane's
    /// cache; the oldest parked block goes back to the pool when it is full.
    pub(super) fn park(
        &mut self,
        locks: &mut ShardLocks<'_>,
        lane: &Arc<Lane>,
        block: u32,
        stamp: Stamp,
    ) {
        debug_assert!(lane.is_in_order() && !self.is_dedicated(block));
        let b = self.heap.block_mut(block);
        b.state = State::Cached;
        b.stamp = None;
        let (addr, size) = (b.addr, b.size);
        let cache = self.cache_for(locks, lane);
        let evicted = cache.is_full().then(|| cache.remove_parked(0));
        cache.push_parked(Parked {
            block,
            addr,
            size,
            stamp,
        });
        if let Some(p) = evicted {
            self.unpark(p.block, p.stamp, lane);
        }
    }

    /// Hands a block parked by `lane` (freed at `stamp`) back to the pool:
    /// ready when its free has completed, else pending on the lane.
    pub(super) fn unpark(
        &mut self,
        block: u32,
        stamp: Stamp,
        lane: &Arc<Lane>,
    ) {
        if stamp.seq <= lane.done_upto() {
            self.retire_block(block);
        } else {
            let slot = self.slot_for(lane);
            self.file_pending(block, stamp, slot);
        }
    }

    /// Hands parked blocks of lane `slot`'s cache back to the pool. Returns
    /// whether any went.
    pub(super) fn flush_cache(
        &mut self,
        locks: &mut ShardLocks<'_>,
        slot: usize,
        what: Flush,
    ) -> bool {
        if !self.lanes[slot].cached {
            return false;
        }
        let lane = self.lanes[slot].lane.clone();
        let Some(cache) = locks.cache(lane.id()) else {
            return false;
        };
        let done_upto = lane.done_upto();
        let mut taken = [None; super::cache::PARKED];
        let mut n = 0;
        let mut k = 0;
        while k < cache.parked().len() {
            if what == Flush::All || cache.parked()[k].stamp.seq <= done_upto {
                taken[n] = Some(cache.remove_parked(k));
                n += 1;
            } else {
                k += 1;
            }
        }
        for p in taken.into_iter().flatten() {
            self.unpark(p.block, p.stamp, &lane);
        }
        n > 0
    }

    /// Flushes the caches of every lane but `except`. Returns whether any
    /// block went back.
    pub(super) fn flush_caches(
        &mut self,
        locks: &mut ShardLocks<'_>,
        except: Option<LaneId>,
        what: Flush,
    ) -> bool {
        let mut any = false;
        for slot in 0..self.lanes.len() {
            if Some(self.lanes[slot].id) != except {
                any |= self.flush_cache(locks, slot, what);
            }
        }
        any
    }

    /// Takes the newest block `lane` parked of exactly `size` bytes at
    /// `align`; returns it with its free position. (Cutting a bigger parked
    /// block would pass over a better fit elsewhere: those go back to the
    /// pool, merged, before the pool grows.)
    pub(super) fn take_parked(
        &mut self,
        locks: &mut ShardLocks<'_>,
        lane: &Lane,
        size: usize,
        align: usize,
    ) -> Option<(u32, Stamp)> {
        let cache = locks.cache(lane.id())?;
        let k = cache
            .parked()
            .iter()
            .rposition(|p| p.size == size && p.addr & (align - 1) == 0)?;
        let p = cache.remove_parked(k);
        self.heap.block_mut(p.block).state = State::Live;
        Some((p.block, p.stamp))
    }

    /// Files a pending block of lane `slot`, merged with pending neighbours
    /// freed on the same in-order lane (the merged free position is the later one).
    pub(super) fn file_pending(&mut self, mut block: u32, mut stamp: Stamp, slot: usize) {
        let dedicated = self.is_dedicated(block);
        let in_order = self.lanes[slot].lane.is_in_order();
        if !dedicated {
            let b = *self.heap.block(block);
            for n in [b.phys_prev, b.phys_next] {
                if n == NIL {
                    continue;
                }
                let nb = *self.heap.block(n);
                if nb.state == State::Pending
                    && nb.lane_slot as usize == slot
                    && (in_order || nb.stamp == Some(stamp))
                {
                    self.unfile_pending(n);
                    stamp.seq = stamp.seq.max(nb.stamp.map_or(0, |s| s.seq));
                    block = self.heap.merge(block, n);
                }
            }
        }
        let granule = self.heap.granule;
        let b = self.heap.block_mut(block);
        b.state = State::Pending;
        b.stamp = Some(stamp);
        b.lane_slot = slot as u32;
        let pl = &mut self.lanes[slot];
        if !dedicated {
            pl.bins.insert(&mut self.heap.blocks, block, granule);
        }
        // Insert in seq order, searching from the newest end.
        let mut after = pl.tail;
        while after != NIL && self.heap.block(after).stamp.map_or(0, |s| s.seq) > stamp.seq {
            after = self.heap.block(after).seq_prev;
        }
        let before = if after == NIL {
            pl.head
        } else {
            self.heap.block(after).seq_next
        };
        let b = self.heap.block_mut(block);
        b.seq_prev = after;
        b.seq_next = before;
        if after == NIL {
            pl.head = block;
        } else {
            self.heap.block_mut(after).seq_next = block;
        }
        if before == NIL {
            pl.tail = block;
        } else {
            self.heap.block_mut(before).seq_prev = block;
        }
        pl.count += 1;
    }

    pub(super) fn unfile_pending(&mut self, block: u32) {
        debug_assert_eq!(self.heap.block(block).state, State::Pending);
        let slot = self.heap.block(block).lane_slot as usize;
        let b = *self.heap.block(block);
        let dedicated = self.is_dedicated(block);
        let granule = self.heap.granule;
        let pl = &mut self.lanes[slot];
        if !dedicated {
            pl.bins.remove(&mut self.heap.blocks, block, granule);
        }
        if b.seq_prev == NIL {
            pl.head = b.seq_next;
        } else {
            self.heap.block_mut(b.seq_prev).seq_next = b.seq_next;
        }
        if b.seq_next == NIL {
            pl.tail = b.seq_prev;
        } else {
            self.heap.block_mut(b.seq_next).seq_prev = b.seq_prev;
        }
        let blk = self.heap.block_mut(block);
        blk.seq_prev = NIL;
        blk.seq_next = NIL;
        pl.count -= 1;
    }

    /// The best-fitting pending block of lane `slot`, with its size.
    pub(super) fn find_pending_of(&self, slot: usize, size: usize, align: usize) -> Option<(u32, usize)> {
        if self.lanes[slot].count == 0 {
            return None;
        }
        let i = self.lanes[slot].bins.find(&self.heap.blocks, size, align, self.heap.granule, |_| true)?;
        Some((i, self.heap.block(i).size))
    }

    pub(super) fn take_pending(&mut self, i: u32, size: usize, align: usize) -> u32 {
        let stamp = self
            .heap
            .block(i)
            .stamp
            .expect("pending blocks have a stamp");
        let slot = self.heap.block(i).lane_slot as usize;
        self.unfile_pending(i);
        let (piece, before, after) = self.heap.carve(i, size, align);
        self.heap.block_mut(piece).state = State::Live;
        // What is left of a block whose free has completed is ready, so that
        // it merges with its ready neighbours.
        let complete = self.lanes[slot].lane.is_complete(stamp.seq);
        for rest in [before, after].into_iter().flatten() {
            if complete {
                self.ready_block(rest);
            } else {
                self.file_pending(rest, stamp, slot);
            }
        }
        piece
    }

    /// The best-fitting pending block whose free `ctx` orders before the new
    /// command (a bounded scan per lane, oldest frees first), with its size.
    ///
    /// The clock leaves out completed commands, so a free that has completed
    /// but was not collected yet (no opportunistic reuse) counts as ordered
    /// when `wait` names it: directly, or through a later command of its
    /// in-order queue.
    pub(super) fn find_ordered(
        &self,
        lane: &Lane,
        ctx: &Clock,
        wait: &[Stamp],
        size: usize,
        align: usize,
    ) -> Option<(u32, usize)> {
        let mut best: Option<(u32, usize)> = None;
        for pl in &self.lanes {
            if pl.count == 0 || (pl.id == lane.id() && lane.is_in_order()) {
                continue;
            }
            let bound = pl.lane.is_in_order().then(|| ctx.prefix(pl.id));
            let mut i = pl.head;
            for _ in 0..ORDERED_SCAN {
                if i == NIL
                    || bound
                        .is_some_and(|upto| self.heap.block(i).stamp.map_or(0, |s| s.seq) > upto)
                {
                    break;
                }
                let b = self.heap.block(i);
                let stamp = b.stamp.expect("pending blocks have a stamp");
                if !self.heap.slabs[b.slab as usize].dedicated
                    && fits(b, size, align)
                    && (ctx.covers(stamp)
                        || (pl.lane.is_complete(stamp.seq)
                            && wait.iter().any(|w| {
                                w.lane == stamp.lane
                                    && (w.seq == stamp.seq || (pl.lane.is_in_order() && w.seq > stamp.seq))
                            })))
                    && best.is_none_or(|(_, s)| b.size < s)
                {
                    best = Some((i, b.size));
                }
                i = b.seq_next;
            }
        }
        best
    }

    pub(super) fn take_any_pending(&mut self, size: usize, align: usize) -> Option<(u32, Stamp)> {
        let mut best: Option<(u32, u64)> = None;
        for pl in &self.lanes {
            if pl.count == 0 {
                continue;
            }
            let found = pl
                .bins
                .find(&self.heap.blocks, size, align, self.heap.granule, |_| true);
            if let Some(i) = found {
                let seq = self.heap.block(i).stamp.map_or(0, |s| s.seq);
                let lag = seq.saturating_sub(pl.lane.done_upto());
                if best.is_none_or(|(_, l)| lag < l) {
                    best = Some((i, lag));
                }
            }
        }
        let (i, _) = best?;
        let stamp = self.heap.block(i).stamp?;
        Some((self.take_pending(i, size, align), stamp))
    }

    /// Files every pending block whose free has completed as ready.
    /// `force` (a synchronisation point) looks at every lane, not only those
    /// that made progress since the last look, hands completed parked blocks
    /// back to the pool and applies the release threshold.
    #[inline(always)]
    pub(super) fn collect(
        &mut self,
        locks: &mut ShardLocks<'_>,
        source: &dyn MemorySource,
        force: bool,
    ) {
        let progress = |pl: &PendingLane| {
            pl.count > 0
                && (if pl.lane.is_in_order() {
                    pl.lane.done_upto()
                } else {
                    pl.lane.epoch()
                }) != pl.seen
        };
        if force || self.lanes.iter().any(progress) {
            self.collect_slow(locks, source, force);
        }
    }

    pub(super) fn collect_slow(
        &mut self,
        locks: &mut ShardLocks<'_>,
        source: &dyn MemorySource,
        force: bool,
    ) {
        let mut done: Option<Vec<u32>> = None;
        for pl in &mut self.lanes {
            if pl.count == 0 {
                continue;
            }
            let in_order = pl.lane.is_in_order();
            let mark = if in_order {
                pl.lane.done_upto()
            } else {
                pl.lane.epoch()
            };
            if mark == pl.seen && !force {
                continue;
            }
            pl.seen = mark;
            let done = done.get_or_insert_with(|| std::mem::take(&mut self.scratch));
            let heap = &self.heap;
            let seq_of = |i: u32| heap.block(i).stamp.map_or(0, |s| s.seq);
            if in_order {
                let mut i = pl.head;
                while i != NIL && seq_of(i) <= mark {
                    done.push(i);
                    i = heap.block(i).seq_next;
                }
            } else {
                pl.lane.with_completion(|is_done| {
                    let mut i = pl.head;
                    while i != NIL {
                        if is_done(seq_of(i)) {
                            done.push(i);
                        }
                        i = heap.block(i).seq_next;
                    }
                });
            }
        }
        if let Some(mut done) = done {
            for &i in &done {
                self.unfile_pending(i);
                self.retire_block(i);
            }
            done.clear();
            self.scratch = done;
        }
        // Parked blocks stay in their caches between synchronisation points
        // (their lanes take them back without a lock), unless memory is above
        // the release threshold.
        if force || self.stats.reserved_current > self.release_threshold {
            self.flush_caches(locks, None, Flush::Complete);
        }
        // Memory above the release threshold goes back at synchronisation
        // points only (`force`), never as a side effect of an allocation.
        if force {
            self.apply_threshold(source);
        }
    }
}
