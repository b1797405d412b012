//! Pending blocks of a pool, per lane of their free: the few latest frees
//! parked for the queue to take straight back, the others in size bins and
//! in a list in seq order; collection of those whose free has completed; and
//! the searches of reuse steps 2 and 3.

use super::allocator::{fits, Bins, Block, State, NIL};
use super::backend::MemorySource;
use super::clock::{Clock, LaneId, Stamp};
use super::lane::Lane;
use super::pool::Inner;
use std::sync::Arc;

/// How many pending blocks of one lane a search for an ordered block looks at.
const ORDERED_SCAN: usize = 64;
/// How many recent frees each lane keeps parked.
const PARKED: usize = 4;

/// Pending blocks freed on one lane.
pub(super) struct PendingLane {
    pub(super) id: LaneId,
    pub(super) lane: Arc<Lane>,
    /// The latest frees, oldest first, kept out of the bins and the list
    /// (and out of the ready bins even once complete): on an in-order queue
    /// the next allocations usually take them straight back.
    parked: [u32; PARKED],
    pub(super) n_parked: usize,
    bins: Bins,
    /// Seq-ordered list of the other blocks.
    head: u32,
    tail: u32,
    /// Blocks, the parked ones included.
    pub(super) count: usize,
    /// `done_upto` (in-order) or `epoch` (out-of-order) at the last collection.
    seen: u64,
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
            parked: [NIL; PARKED],
            n_parked: 0,
            bins: Bins::new(),
            head: NIL,
            tail: NIL,
            count: 0,
            seen: 0,
        });
        self.lanes.len() - 1
    }

    pub(super) fn has_pending_besides(&self, lane: &Lane) -> bool {
        self.lanes
            .iter()
            .any(|l| l.count > 0 && (l.id != lane.id() || !lane.is_in_order()))
    }

    /// Parks `block` on lane `slot`, filing the oldest parked block when full.
    #[inline]
    pub(super) fn park_pending(
        &mut self,
        block: u32,
        stamp: Stamp,
        slot: usize,
        source: &dyn MemorySource,
    ) {
        if self.is_dedicated(block) {
            return self.file_pending(block, stamp, slot);
        }
        if self.lanes[slot].n_parked == PARKED {
            self.unpark(slot, 0, source);
        }
        let b = self.heap.block_mut(block);
        b.state = State::Pending;
        b.stamp = Some(stamp);
        b.lane_slot = slot as u32;
        let pl = &mut self.lanes[slot];
        pl.parked[pl.n_parked] = block;
        pl.n_parked += 1;
        pl.count += 1;
    }

    /// Takes parked entry `k` of lane `slot` out of the parking.
    pub(super) fn remove_parked(&mut self, slot: usize, k: usize) -> u32 {
        let pl = &mut self.lanes[slot];
        let block = pl.parked[k];
        for j in k..pl.n_parked - 1 {
            pl.parked[j] = pl.parked[j + 1];
        }
        pl.n_parked -= 1;
        pl.parked[pl.n_parked] = NIL;
        pl.count -= 1;
        block
    }

    /// Files parked entry `k` of lane `slot` with the other pending blocks,
    /// or as ready when its free has completed.
    pub(super) fn unpark(&mut self, slot: usize, k: usize, source: &dyn MemorySource) {
        let block = self.remove_parked(slot, k);
        let stamp = self
            .heap
            .block(block)
            .stamp
            .expect("pending blocks have a stamp");
        if stamp.seq <= self.lanes[slot].lane.done_upto() {
            self.retire_block(block, source);
        } else {
            self.file_pending(block, stamp, slot);
        }
    }

    pub(super) fn unpark_all(&mut self, slot: usize, source: &dyn MemorySource) {
        while self.lanes[slot].n_parked > 0 {
            self.unpark(slot, 0, source);
        }
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
        let pl = &self.lanes[slot];
        if let Some(k) = pl.parked[..pl.n_parked].iter().position(|&p| p == block) {
            self.remove_parked(slot, k);
            return;
        }
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

    /// Takes a block of lane `slot` that `accept` allows; the rest of it stays
    /// pending with the same free position.
    pub(super) fn take_pending_where(
        &mut self,
        slot: usize,
        size: usize,
        align: usize,
        accept: impl FnMut(&Block) -> bool,
    ) -> Option<(u32, Stamp)> {
        let i = self.lanes[slot].bins.find(
            &self.heap.blocks,
            size,
            align,
            self.heap.granule,
            accept,
        )?;
        let stamp = self.heap.block(i).stamp?;
        Some((self.take_pending(i, size, align), stamp))
    }

    /// Takes a parked block of lane `slot`: the newest of exactly the right
    /// size, else the newest that fits without wasting more than half.
    pub(super) fn take_parked(
        &mut self,
        slot: usize,
        size: usize,
        align: usize,
    ) -> Option<(u32, Stamp)> {
        let pl = &self.lanes[slot];
        let parked = &pl.parked[..pl.n_parked];
        let exact = parked.iter().rposition(|&p| {
            let b = self.heap.block(p);
            b.size == size && b.addr & (align - 1) == 0
        });
        let k = exact.or_else(|| {
            parked.iter().rposition(|&p| {
                let b = self.heap.block(p);
                b.size / 2 <= size && fits(b, size, align)
            })
        })?;
        let i = parked[k];
        let stamp = self.heap.block(i).stamp?;
        if exact.is_some() {
            self.remove_parked(slot, k);
            return Some((i, stamp));
        }
        Some((self.take_pending(i, size, align), stamp))
    }

    /// A completed free parked on another lane (the allocating in-order
    /// lane's own parked blocks are taken after, whether complete or not).
    pub(super) fn take_parked_complete(
        &mut self,
        lane: &Lane,
        size: usize,
        align: usize,
    ) -> Option<u32> {
        let own = lane.is_in_order().then(|| lane.id());
        let found = self
            .lanes
            .iter()
            .filter(|pl| pl.n_parked > 0 && Some(pl.id) != own)
            .find_map(|pl| {
                let upto = pl.lane.done_upto();
                pl.parked[..pl.n_parked].iter().copied().find(|&p| {
                    let b = self.heap.block(p);
                    b.stamp.map_or(0, |s| s.seq) <= upto && fits(b, size, align)
                })
            })?;
        Some(self.take_pending(found, size, align))
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
        for rest in [before, after].into_iter().flatten() {
            self.file_pending(rest, stamp, slot);
        }
        piece
    }

    /// The best-fitting pending block whose free `ctx` orders before the new
    /// command (a bounded scan per lane, oldest frees first).
    pub(super) fn take_ordered(
        &mut self,
        lane: &Lane,
        ctx: &Clock,
        size: usize,
        align: usize,
    ) -> Option<(u32, Stamp)> {
        let mut best: Option<(u32, usize)> = None;
        for pl in &self.lanes {
            if pl.count == 0 || (pl.id == lane.id() && lane.is_in_order()) {
                continue;
            }
            let bound = pl.lane.is_in_order().then(|| ctx.prefix(pl.id));
            let mut consider = |i: u32| {
                let b = self.heap.block(i);
                let stamp = b.stamp.expect("pending blocks have a stamp");
                if !self.heap.slabs[b.slab as usize].dedicated
                    && fits(b, size, align)
                    && ctx.covers(stamp)
                    && best.is_none_or(|(_, s)| b.size < s)
                {
                    best = Some((i, b.size));
                }
            };
            pl.parked[..pl.n_parked].iter().for_each(|&p| consider(p));
            let mut i = pl.head;
            for _ in 0..ORDERED_SCAN {
                if i == NIL
                    || bound
                        .is_some_and(|upto| self.heap.block(i).stamp.map_or(0, |s| s.seq) > upto)
                {
                    break;
                }
                consider(i);
                i = self.heap.block(i).seq_next;
            }
        }
        let (i, _) = best?;
        let stamp = self.heap.block(i).stamp?;
        Some((self.take_pending(i, size, align), stamp))
    }

    /// Any pending block that fits: of each lane's best fit, the one whose
    /// free is fewest commands away from its lane's completed prefix.
    pub(super) fn take_any_pending(&mut self, size: usize, align: usize) -> Option<(u32, Stamp)> {
        let mut best: Option<(u32, u64)> = None;
        for pl in &self.lanes {
            if pl.count == 0 {
                continue;
            }
            let parked = pl.parked[..pl.n_parked]
                .iter()
                .copied()
                .filter(|&p| fits(self.heap.block(p), size, align));
            let found = pl
                .bins
                .find(&self.heap.blocks, size, align, self.heap.granule, |_| true);
            for i in parked.chain(found) {
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
    /// `force` looks at every lane, not only those that made progress since
    /// the last look (parked blocks may have been complete when parked).
    #[inline(always)]
    pub(super) fn collect(&mut self, source: &dyn MemorySource, force: bool) {
        let progress = |pl: &PendingLane| {
            pl.count > 0
                && (if pl.lane.is_in_order() {
                    pl.lane.done_upto()
                } else {
                    pl.lane.epoch()
                }) != pl.seen
        };
        if force || self.lanes.iter().any(progress) {
            self.collect_slow(source, force);
        }
    }

    pub(super) fn collect_slow(&mut self, source: &dyn MemorySource, force: bool) {
        // Parked blocks stay parked between synchronisation points (other
        // queues can still take them once complete), unless memory is above
        // the release threshold.
        let with_parked = force || self.stats.reserved_current > self.release_threshold;
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
                if with_parked {
                    done.extend(
                        pl.parked[..pl.n_parked]
                            .iter()
                            .copied()
                            .filter(|&p| seq_of(p) <= mark),
                    );
                }
                let mut i = pl.head;
                while i != NIL && seq_of(i) <= mark {
                    done.push(i);
                    i = heap.block(i).seq_next;
                }
            } else {
                pl.lane.with_completion(|is_done| {
                    if with_parked {
                        done.extend(
                            pl.parked[..pl.n_parked]
                                .iter()
                                .copied()
                                .filter(|&p| is_done(seq_of(p))),
                        );
                    }
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
                self.retire_block(i, source);
            }
            done.clear();
            self.scratch = done;
        }
        // Memory above the release threshold goes back at synchronisation
        // points only (`force`), never as a side effect of an allocation.
        if force {
            self.apply_threshold(source);
        }
    }
}
