//! Sub-allocation of slabs: blocks with boundary links, size-class bins
//! (two-level, four sub-classes per power of two, as in TLSF), splitting
//! and coalescing. It knows nothing of ordering: the pool decides which
//! blocks may be handed out and files pending ones itself.

use super::clock::Stamp;
use super::vm::Commits;

pub(crate) const NIL: u32 = u32::MAX;
const CLASSES: usize = 256;
/// How many blocks of one class a search compares (a class is a list,
/// newest first). On `ur_bench` scenario 5's sequence 32 packs blocks as
/// well as a full scan (`tests/vm.rs`), 8 does not; the cost stays bounded.
const CLASS_SCAN: usize = 32;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum State {
    /// Metadata slot not in use.
    Vacant,
    /// Free, and no command may still touch it.
    Ready,
    /// Freed by a command that may not have completed (`stamp`).
    Pending,
    /// Handed out. `stamp`, when set, must complete before earlier owners are
    /// surely done with it.
    Live,
    /// Being freed by a blocking free that waits for `stamp`.
    Freeing,
    /// Held by a lane cache, parked or live; the cache keeps its stamps.
    Cached,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Block {
    pub(crate) addr: usize,
    pub(crate) size: usize,
    pub(crate) slab: u32,
    pub(crate) phys_prev: u32,
    pub(crate) phys_next: u32,
    pub(crate) state: State,
    /// Never handed out since its slab was taken from the backend.
    pub(crate) fresh: bool,
    pub(crate) stamp: Option<Stamp>,
    /// Pending blocks: the index of their lane's list in the pool.
    pub(crate) lane_slot: u32,
    /// Bin links.
    pub(crate) prev: u32,
    pub(crate) next: u32,
    /// Pending blocks: links of their lane's list in seq order.
    pub(crate) seq_prev: u32,
    pub(crate) seq_next: u32,
}

impl Block {
    fn vacant() -> Self {
        Block {
            addr: 0,
            size: 0,
            slab: NIL,
            phys_prev: NIL,
            phys_next: NIL,
            state: State::Vacant,
            fresh: false,
            stamp: None,
            lane_slot: NIL,
            prev: NIL,
            next: NIL,
            seq_prev: NIL,
            seq_next: NIL,
        }
    }
}

pub(crate) struct Slab {
    pub(crate) addr: usize,
    pub(crate) size: usize,
    pub(crate) align: usize,
    /// Serves one allocation above the pool's poolable size; never split.
    pub(crate) dedicated: bool,
    pub(crate) in_use: bool,
    /// The block at the slab's base. Its index never changes: a split keeps
    /// the head's index and a merge keeps the lower block's.
    pub(crate) first: u32,
    /// A range reserved from the backend's virtual memory, committed
    /// granule by granule (`vm.rs`); `None` for a slab taken whole.
    pub(crate) vm: Option<Box<Commits>>,
}

fn class_of(units: usize) -> usize {
    if units < 8 {
        units
    } else {
        let fl = (usize::BITS - 1 - units.leading_zeros()) as usize;
        let sl = (units >> (fl - 2)) & 3;
        8 + (fl - 3) * 4 + sl
    }
}

/// Segregated free lists with a bitmap of the non-empty ones.
pub(crate) struct Bins {
    heads: Box<[u32; CLASSES]>,
    map: [u64; CLASSES / 64],
    len: usize,
}

impl Bins {
    pub(crate) fn new() -> Self {
        Bins {
            heads: Box::new([NIL; CLASSES]),
            map: [0; CLASSES / 64],
            len: 0,
        }
    }

    pub(crate) fn insert(&mut self, blocks: &mut [Block], i: u32, granule: usize) {
        let c = class_of(blocks[i as usize].size / granule);
        let head = self.heads[c];
        blocks[i as usize].prev = NIL;
        blocks[i as usize].next = head;
        if head != NIL {
            blocks[head as usize].prev = i;
        }
        self.heads[c] = i;
        self.map[c / 64] |= 1 << (c % 64);
        self.len += 1;
    }

    pub(crate) fn remove(&mut self, blocks: &mut [Block], i: u32, granule: usize) {
        let Block {
            prev, next, size, ..
        } = blocks[i as usize];
        if prev != NIL {
            blocks[prev as usize].next = next;
        } else {
            let c = class_of(size / granule);
            debug_assert_eq!(self.heads[c], i);
            self.heads[c] = next;
            if next == NIL {
                self.map[c / 64] &= !(1 << (c % 64));
            }
        }
        if next != NIL {
            blocks[next as usize].prev = prev;
        }
        blocks[i as usize].prev = NIL;
        blocks[i as usize].next = NIL;
        self.len -= 1;
    }

    fn next_class(&self, from: usize) -> Option<usize> {
        let mut w = from / 64;
        if w >= self.map.len() {
            return None;
        }
        let mut bits = self.map[w] & (!0u64 << (from % 64));
        loop {
            if bits != 0 {
                return Some(w * 64 + bits.trailing_zeros() as usize);
            }
            w += 1;
            if w == self.map.len() {
                return None;
            }
            bits = self.map[w];
        }
    }

    /// Up to `n` blocks of the biggest classes, biggest class first.
    pub(crate) fn biggest(&self, blocks: &[Block], n: usize, out: &mut Vec<u32>) {
        for w in (0..self.map.len()).rev() {
            let mut bits = self.map[w];
            while bits != 0 {
                let c = w * 64 + 63 - bits.leading_zeros() as usize;
                bits &= !(1 << (c % 64));
                let mut i = self.heads[c];
                while i != NIL {
                    if out.len() == n {
                        return;
                    }
                    out.push(i);
                    i = blocks[i as usize].next;
                }
            }
        }
    }

    /// A block that can hold `size` bytes at `align`, among those `accept`
    /// allows: the smallest, and of equal sizes the lowest (a bounded scan
    /// of the request's own class, then of the first bigger class that has
    /// one).
    ///
    /// Lowest address among equals: blocks pack towards the start of a
    /// range, so free space at its end coalesces and fewer granules hold
    /// blocks. Taking equal fits newest first (the lists' order) spreads
    /// them: on scenario 5's sequence with 2 MiB granules, 40 granules at
    /// 64 MiB live rather than 38-39 (`tests/vm.rs`).
    pub(crate) fn find(
        &self,
        blocks: &[Block],
        size: usize,
        align: usize,
        granule: usize,
        mut accept: impl FnMut(&Block) -> bool,
    ) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        // (block, size, address) of the best so far.
        let mut best: Option<(u32, usize, usize)> = None;
        let mut consider = |i: u32, b: &Block, best: &mut Option<(u32, usize, usize)>| {
            if fits(b, size, align) && best.is_none_or(|(_, s, a)| (b.size, b.addr) < (s, a)) && accept(b) {
                *best = Some((i, b.size, b.addr));
            }
        };
        let c = class_of(size / granule);
        let mut i = self.heads[c];
        for _ in 0..CLASS_SCAN {
            if i == NIL {
                break;
            }
            let b = &blocks[i as usize];
            consider(i, b, &mut best);
            i = b.next;
        }
        if let Some((i, ..)) = best {
            return Some(i);
        }
        let mut class = c + 1;
        while let Some(k) = self.next_class(class) {
            let mut i = self.heads[k];
            let mut n = 0;
            // Past the bound only while nothing fits (alignment, `accept`).
            while i != NIL && (n < CLASS_SCAN || best.is_none()) {
                let b = &blocks[i as usize];
                consider(i, b, &mut best);
                n += 1;
                i = b.next;
            }
            if let Some((i, ..)) = best {
                return Some(i);
            }
            class = k + 1;
        }
        None
    }
}

#[inline]
pub(crate) fn align_up(x: usize, align: usize) -> Option<usize> {
    Some(x.checked_add(align - 1)? & !(align - 1))
}

#[inline]
pub(crate) fn fits(b: &Block, size: usize, align: usize) -> bool {
    match align_up(b.addr, align) {
        Some(start) => start - b.addr + size <= b.size,
        None => false,
    }
}

/// Blocks and slabs of one pool, and the bins of its ready blocks: those
/// freed before (`ready`) and slab space never handed out (`fresh`).
pub(crate) struct Heap {
    pub(crate) blocks: Vec<Block>,
    vacant_blocks: Vec<u32>,
    pub(crate) slabs: Vec<Slab>,
    vacant_slabs: Vec<u32>,
    pub(crate) ready: Bins,
    pub(crate) fresh: Bins,
    /// Every block size and address is a multiple of this.
    pub(crate) granule: usize,
}

impl Heap {
    pub(crate) fn new(granule: usize) -> Self {
        debug_assert!(granule.is_power_of_two());
        Heap {
            blocks: Vec::new(),
            vacant_blocks: Vec::new(),
            slabs: Vec::new(),
            vacant_slabs: Vec::new(),
            ready: Bins::new(),
            fresh: Bins::new(),
            granule,
        }
    }

    #[inline]
    pub(crate) fn block(&self, i: u32) -> &Block {
        &self.blocks[i as usize]
    }

    #[inline]
    pub(crate) fn block_mut(&mut self, i: u32) -> &mut Block {
        &mut self.blocks[i as usize]
    }

    fn new_block(&mut self, b: Block) -> u32 {
        match self.vacant_blocks.pop() {
            Some(i) => {
                self.blocks[i as usize] = b;
                i
            }
            None => {
                self.blocks.push(b);
                (self.blocks.len() - 1) as u32
            }
        }
    }

    fn drop_block(&mut self, i: u32) {
        self.blocks[i as usize] = Block::vacant();
        self.vacant_blocks.push(i);
    }

    /// Adopts a slab from the backend as one block in state `Live` (not filed).
    pub(crate) fn add_slab(
        &mut self,
        addr: usize,
        size: usize,
        align: usize,
        dedicated: bool,
    ) -> u32 {
        let slab = Slab {
            addr,
            size,
            align,
            dedicated,
            in_use: true,
            first: NIL,
            vm: None,
        };
        let s = match self.vacant_slabs.pop() {
            Some(s) => {
                self.slabs[s as usize] = slab;
                s
            }
            None => {
                self.slabs.push(slab);
                (self.slabs.len() - 1) as u32
            }
        };
        let first = self.new_block(Block {
            addr,
            size,
            slab: s,
            state: State::Live,
            fresh: true,
            ..Block::vacant()
        });
        self.slabs[s as usize].first = first;
        first
    }

    pub(crate) fn slab_first(&self, s: u32) -> u32 {
        self.slabs[s as usize].first
    }

    /// Forgets a slab whose only block is `i` (unfiled); returns what to give back.
    pub(crate) fn remove_slab(&mut self, i: u32) -> (usize, usize, usize) {
        let s = self.blocks[i as usize].slab;
        debug_assert!(self.covers_slab(i));
        self.drop_block(i);
        let slab = &mut self.slabs[s as usize];
        slab.in_use = false;
        slab.first = NIL;
        slab.vm = None;
        self.vacant_slabs.push(s);
        (slab.addr, slab.size, slab.align)
    }

    /// Is block `i` the whole of its slab?
    pub(crate) fn covers_slab(&self, i: u32) -> bool {
        let b = &self.blocks[i as usize];
        b.phys_prev == NIL && b.phys_next == NIL
    }

    /// Splits block `i` at `offset`; the new block (returned) takes the tail
    /// and copies the state and stamp. Neither is filed anywhere.
    fn split(&mut self, i: u32, offset: usize) -> u32 {
        let b = self.blocks[i as usize];
        debug_assert!(offset > 0 && offset < b.size && offset.is_multiple_of(self.granule));
        let tail = self.new_block(Block {
            addr: b.addr + offset,
            size: b.size - offset,
            slab: b.slab,
            phys_prev: i,
            phys_next: b.phys_next,
            state: b.state,
            fresh: b.fresh,
            stamp: b.stamp,
            lane_slot: b.lane_slot,
            ..Block::vacant()
        });
        if b.phys_next != NIL {
            self.blocks[b.phys_next as usize].phys_prev = tail;
        }
        let head = &mut self.blocks[i as usize];
        head.size = offset;
        head.phys_next = tail;
        tail
    }

    /// Cuts `size` bytes at `align` out of the unfiled block `i`. Returns the
    /// piece and the unfiled leftovers before and after it (same state).
    pub(crate) fn carve(
        &mut self,
        i: u32,
        size: usize,
        align: usize,
    ) -> (u32, Option<u32>, Option<u32>) {
        let (addr, whole) = (self.blocks[i as usize].addr, self.blocks[i as usize].size);
        if whole == size && addr & (align - 1) == 0 {
            return (i, None, None);
        }
        let b = self.blocks[i as usize];
        let start = align_up(b.addr, align).expect("fits() checked the alignment");
        let (mut piece, mut before) = (i, None);
        if start > b.addr {
            piece = self.split(i, start - b.addr);
            before = Some(i);
        }
        let after = if self.blocks[piece as usize].size > size {
            Some(self.split(piece, size))
        } else {
            None
        };
        (piece, before, after)
    }

    /// Merges the unfiled block `i` with `other`, its physical neighbour,
    /// which must already be unfiled too. Returns the merged block.
    pub(crate) fn merge(&mut self, i: u32, other: u32) -> u32 {
        let (lo, hi) = if self.blocks[other as usize].addr < self.blocks[i as usize].addr {
            (other, i)
        } else {
            (i, other)
        };
        debug_assert_eq!(self.blocks[lo as usize].phys_next, hi);
        let h = self.blocks[hi as usize];
        let l = &mut self.blocks[lo as usize];
        l.size += h.size;
        l.fresh &= h.fresh;
        l.phys_next = h.phys_next;
        if h.phys_next != NIL {
            self.blocks[h.phys_next as usize].phys_prev = lo;
        }
        self.drop_block(hi);
        lo
    }

    /// Files the unfiled block `i` as ready, merged with ready neighbours of
    /// its own kind: space freed before merges with space freed before, and
    /// never-handed-out space with its like, so that placement can rank
    /// reuse before fresh space. Once the slab is wholly free its parts
    /// become one block again, counted as fresh: nothing in it is in use.
    /// Returns the filed block.
    pub(crate) fn file_ready(&mut self, mut i: u32) -> u32 {
        self.blocks[i as usize].state = State::Ready;
        self.blocks[i as usize].stamp = None;
        let ready = |blocks: &[Block], n: u32| n != NIL && blocks[n as usize].state == State::Ready;
        for neighbour in [self.blocks[i as usize].phys_prev, self.blocks[i as usize].phys_next] {
            if ready(&self.blocks, neighbour) && self.blocks[neighbour as usize].fresh == self.blocks[i as usize].fresh {
                self.unfile_ready(neighbour);
                i = self.merge(i, neighbour);
            }
        }
        let (prev, next) = (self.blocks[i as usize].phys_prev, self.blocks[i as usize].phys_next);
        let prev_ends = prev == NIL || (ready(&self.blocks, prev) && self.blocks[prev as usize].phys_prev == NIL);
        let next_ends = next == NIL || (ready(&self.blocks, next) && self.blocks[next as usize].phys_next == NIL);
        if prev_ends && next_ends {
            for n in [prev, next] {
                if n != NIL {
                    self.unfile_ready(n);
                    i = self.merge(i, n);
                }
            }
            self.blocks[i as usize].fresh = true;
        }
        let bins = if self.blocks[i as usize].fresh {
            &mut self.fresh
        } else {
            &mut self.ready
        };
        bins.insert(&mut self.blocks, i, self.granule);
        i
    }

    /// Takes the ready block `i` out of its bins.
    pub(crate) fn unfile_ready(&mut self, i: u32) {
        let bins = if self.blocks[i as usize].fresh {
            &mut self.fresh
        } else {
            &mut self.ready
        };
        bins.remove(&mut self.blocks, i, self.granule);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_monotone_and_fit() {
        let mut prev = 0;
        for units in 1..100_000usize {
            let c = class_of(units);
            assert!(c >= prev && c < CLASSES);
            prev = c;
        }
        assert!(class_of(usize::MAX) < CLASSES);
        // Any block of a bigger class holds any request of a smaller one.
        for units in [9usize, 17, 100, 1000, 4097] {
            let c = class_of(units);
            let first_bigger = (units..).find(|&u| class_of(u) > c).unwrap();
            assert!(first_bigger > units);
        }
    }

    #[test]
    fn split_and_coalesce_restore_the_slab() {
        let mut h = Heap::new(64);
        let whole = h.add_slab(0x10000, 64 * 100, 64, false);
        let (piece, before, after) = h.carve(whole, 64 * 10, 256);
        assert!(before.is_none(), "slab base is already aligned");
        assert_eq!(h.block(piece).size, 640);
        let rest = after.unwrap();
        let rest = h.file_ready(rest);
        assert_eq!(h.block(rest).size, 64 * 90);
        // A second carve at a higher alignment leaves a front piece.
        h.unfile_ready(rest);
        h.block_mut(rest).state = State::Live;
        let (p2, before2, after2) = h.carve(rest, 64, 1024);
        assert_eq!(h.block(p2).addr % 1024, 0);
        let b2 = h.file_ready(before2.unwrap());
        let a2 = h.file_ready(after2.unwrap());
        assert_ne!(b2, a2);
        // Free everything: it all merges back into one block covering the slab.
        h.file_ready(p2);
        let last = h.file_ready(piece);
        assert!(h.covers_slab(last));
        assert_eq!(h.block(last).size, 6400);
        assert_eq!(h.ready.len + h.fresh.len, 1);
    }

    #[test]
    fn used_space_stays_apart_from_fresh_space_until_the_slab_is_free() {
        let mut h = Heap::new(64);
        let whole = h.add_slab(0, 64 * 100, 64, false);
        let (used, _, rest) = h.carve(whole, 64 * 10, 64);
        let (live, _, rest) = h.carve(rest.unwrap(), 64, 64);
        let rest = h.file_ready(rest.unwrap());
        assert!(h.block(rest).fresh);
        // Ten units handed out, then freed, one still live, the rest never
        // handed out: the freed block is ready, apart from the fresh rest,
        // so that placement can rank it first.
        h.block_mut(used).fresh = false;
        h.block_mut(live).fresh = false;
        let freed = h.file_ready(used);
        assert!(!h.block(freed).fresh);
        assert_eq!((h.ready.len, h.fresh.len), (1, 1));
        assert_eq!(h.block(freed).size, 640);
        // Once the live block comes back, the slab is wholly free: one block
        // again, as good as new.
        let last = h.file_ready(live);
        assert!(h.covers_slab(last) && h.block(last).fresh);
        assert_eq!((h.ready.len, h.fresh.len), (0, 1));
    }

    #[test]
    fn find_takes_the_lowest_of_equal_best_fits() {
        let mut h = Heap::new(64);
        let s = h.add_slab(0, 64 * 1000, 64, false);
        // Free blocks of 9, 8, 8 and 8 units from low to high addresses
        // (one class), live blocks between them.
        let mut free = Vec::new();
        let mut rest = s;
        for units in [9, 8, 8, 8] {
            let (f, _, r) = h.carve(rest, units * 64, 64);
            let (_, _, r) = h.carve(r.unwrap(), 64, 64);
            free.push(f);
            rest = r.unwrap();
        }
        // Filed low to high: the list holds the highest first.
        for &i in &free {
            h.file_ready(i);
        }
        assert_eq!(h.fresh.find(&h.blocks, 8 * 64, 64, 64, |_| true), Some(free[1]), "lowest of the 8-unit blocks");
        assert_eq!(h.fresh.find(&h.blocks, 6 * 64, 64, 64, |_| true), Some(free[1]), "from a bigger class too");
        assert_eq!(h.fresh.find(&h.blocks, 9 * 64, 64, 64, |_| true), Some(free[0]));
        assert_eq!(
            h.fresh.find(&h.blocks, 8 * 64, 64, 64, |b| b.addr > h.blocks[free[1] as usize].addr),
            Some(free[2]),
            "accept still applies"
        );
    }

    #[test]
    fn find_prefers_the_exact_class_and_respects_accept() {
        let mut h = Heap::new(64);
        let s = h.add_slab(0, 64 * 1000, 64, false);
        // Cut the slab into blocks of 3, 5 and 900 units, separated by live ones.
        let (a, _, r) = h.carve(s, 3 * 64, 64);
        let (_, _, r) = h.carve(r.unwrap(), 64, 64);
        let (b, _, r) = h.carve(r.unwrap(), 5 * 64, 64);
        let (_, _, r) = h.carve(r.unwrap(), 64, 64);
        let big = r.unwrap();
        for i in [a, b, big] {
            h.file_ready(i);
        }
        let found = h.fresh.find(&h.blocks, 5 * 64, 64, 64, |_| true).unwrap();
        assert_eq!(found, b);
        let found = h
            .fresh
            .find(&h.blocks, 64, 64, 64, |blk| blk.size > 5 * 64)
            .unwrap();
        assert_eq!(found, big);
        assert!(h
            .fresh
            .find(&h.blocks, 64 * 2000, 64, 64, |_| true)
            .is_none());
    }
}
