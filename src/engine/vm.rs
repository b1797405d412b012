//! Which granules of an address range reserved from a backend's virtual
//! memory ([`VirtualMemory`](super::backend::VirtualMemory)) are committed,
//! and which of those no block in use touches (idle: the ones that may be
//! decommitted). Pure bookkeeping: the pool makes the backend calls.
//!
//! Each granule counts the bytes of blocks in use (live, pending, parked or
//! being freed) that lie in it; a committed granule whose count is zero is
//! idle. The arrays grow with the highest granule ever touched, not with
//! the range, so a large reservation costs nothing until it is used.

/// A bitmap with a summary bit per non-zero word, to find the highest set
/// bit without scanning every word.
#[derive(Default)]
struct Bits {
    words: Vec<u64>,
    summary: Vec<u64>,
}

impl Bits {
    fn grow(&mut self, bits: usize) {
        let words = bits.div_ceil(64);
        if self.words.len() < words {
            self.words.resize(words, 0);
            self.summary.resize(words.div_ceil(64), 0);
        }
    }

    #[inline]
    fn get(&self, i: usize) -> bool {
        self.words.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    #[inline]
    fn set(&mut self, i: usize) {
        let w = i / 64;
        self.words[w] |= 1 << (i % 64);
        self.summary[w / 64] |= 1 << (w % 64);
    }

    #[inline]
    fn clear(&mut self, i: usize) {
        let w = i / 64;
        if let Some(word) = self.words.get_mut(w) {
            *word &= !(1 << (i % 64));
            if *word == 0 {
                self.summary[w / 64] &= !(1 << (w % 64));
            }
        }
    }

    fn highest(&self) -> Option<usize> {
        let s = self.summary.iter().rposition(|&s| s != 0)?;
        let w = s * 64 + 63 - self.summary[s].leading_zeros() as usize;
        Some(w * 64 + 63 - self.words[w].leading_zeros() as usize)
    }
}

/// The committed granules of one reserved range.
pub(crate) struct Commits {
    base: usize,
    shift: u32,
    /// Granules in the range.
    len: usize,
    /// Bytes of blocks in use per granule.
    used: Vec<u32>,
    committed: Bits,
    idle: Bits,
    pub(crate) n_committed: usize,
    pub(crate) n_idle: usize,
}

impl Commits {
    pub(crate) fn new(base: usize, size: usize, granule: usize) -> Self {
        debug_assert!(granule.is_power_of_two() && granule <= 1 << 31);
        debug_assert!(base % granule == 0 && size % granule == 0);
        Commits {
            base,
            shift: granule.trailing_zeros(),
            len: size / granule,
            used: Vec::new(),
            committed: Bits::default(),
            idle: Bits::default(),
            n_committed: 0,
            n_idle: 0,
        }
    }

    #[inline]
    pub(crate) fn granule(&self) -> usize {
        1 << self.shift
    }

    /// Address of granule `g`.
    #[inline]
    pub(crate) fn addr_of(&self, g: usize) -> usize {
        self.base + (g << self.shift)
    }

    /// The granules `[first, end)` that `[addr, addr + size)` touches.
    #[inline]
    fn span(&self, addr: usize, size: usize) -> (usize, usize) {
        debug_assert!(size > 0 && addr >= self.base);
        let first = (addr - self.base) >> self.shift;
        let end = ((addr - self.base + size - 1) >> self.shift) + 1;
        debug_assert!(end <= self.len);
        (first, end)
    }

    /// Bytes of `[addr, addr + size)` in each granule it touches.
    fn overlaps(&self, addr: usize, size: usize) -> impl Iterator<Item = (usize, u32)> {
        let (first, end) = self.span(addr, size);
        let (base, shift) = (self.base, self.shift);
        (first..end).map(move |g| {
            let lo = addr.max(base + (g << shift));
            let hi = (addr + size).min(base + ((g + 1) << shift));
            (g, (hi - lo) as u32)
        })
    }

    fn grow(&mut self, end: usize) {
        if self.used.len() < end {
            self.used.resize(end, 0);
            self.committed.grow(end);
            self.idle.grow(end);
        }
    }

    /// A block at `[addr, addr + size)` goes into use: none of its granules
    /// is idle any more.
    pub(crate) fn claim(&mut self, addr: usize, size: usize) {
        let (_, end) = self.span(addr, size);
        self.grow(end);
        for (g, bytes) in self.overlaps(addr, size) {
            if self.used[g] == 0 && self.committed.get(g) {
                self.idle.clear(g);
                self.n_idle -= 1;
            }
            self.used[g] += bytes;
        }
    }

    /// A block at `[addr, addr + size)` is free again: committed granules
    /// no other block in use touches become idle.
    pub(crate) fn unclaim(&mut self, addr: usize, size: usize) {
        for (g, bytes) in self.overlaps(addr, size) {
            debug_assert!(self.used[g] >= bytes, "granule {g} unclaimed more than claimed");
            self.used[g] -= bytes;
            if self.used[g] == 0 && self.committed.get(g) {
                self.idle.set(g);
                self.n_idle += 1;
            }
        }
    }

    /// Calls `f(first, count)` for each run of uncommitted granules that
    /// `[addr, addr + size)` touches.
    pub(crate) fn uncommitted_runs(&self, addr: usize, size: usize, mut f: impl FnMut(usize, usize)) {
        let (first, end) = self.span(addr, size);
        let mut g = first;
        while g < end {
            if self.committed.get(g) {
                g += 1;
                continue;
            }
            let start = g;
            while g < end && !self.committed.get(g) {
                g += 1;
            }
            f(start, g - start);
        }
    }

    pub(crate) fn set_committed(&mut self, first: usize, count: usize) {
        self.grow(first + count);
        for g in first..first + count {
            debug_assert!(!self.committed.get(g));
            self.committed.set(g);
            if self.used[g] == 0 {
                self.idle.set(g);
                self.n_idle += 1;
            }
        }
        self.n_committed += count;
    }

    pub(crate) fn set_decommitted(&mut self, first: usize, count: usize) {
        for g in first..first + count {
            debug_assert!(self.committed.get(g));
            self.committed.clear(g);
            if self.used[g] == 0 {
                self.idle.clear(g);
                self.n_idle -= 1;
            }
        }
        self.n_committed -= count;
    }

    /// Calls `f(first, count)` for each run of committed granules that lie
    /// wholly inside `[addr, addr + size)`.
    pub(crate) fn committed_runs_inside(&self, addr: usize, size: usize, f: impl FnMut(usize, usize)) {
        let g = self.granule();
        let first = (addr - self.base).div_ceil(g);
        let end = ((addr - self.base + size) / g).min(self.used.len());
        self.runs_between(first, end, f);
    }

    /// The highest idle granule and the idle ones just below it, at most
    /// `max` in all, as `(first, count)`.
    pub(crate) fn highest_idle_run(&self, max: usize) -> Option<(usize, usize)> {
        let top = self.idle.highest()?;
        let mut first = top;
        while first > 0 && top + 1 - first < max && self.idle.get(first - 1) {
            first -= 1;
        }
        Some((first, top + 1 - first))
    }

    /// Every run of committed granules, as `(first, count)`.
    pub(crate) fn committed_runs(&self) -> Vec<(usize, usize)> {
        let mut runs = Vec::new();
        self.runs_between(0, self.used.len(), |start, count| runs.push((start, count)));
        runs
    }

    /// Calls `f(first, count)` for each run of committed granules in
    /// `[from, end)`.
    fn runs_between(&self, from: usize, end: usize, mut f: impl FnMut(usize, usize)) {
        let mut i = from;
        while i < end {
            if !self.committed.get(i) {
                i += 1;
                continue;
            }
            let start = i;
            while i < end && self.committed.get(i) {
                i += 1;
            }
            f(start, i - start);
        }
    }

    /// Checks the counts against `in_use`, the `(address, size)` of every
    /// block of the range that is not ready. (Tests.)
    #[cfg(test)]
    pub(crate) fn check(&self, in_use: &[(usize, usize)]) {
        let mut used = vec![0u32; self.used.len()];
        for &(addr, size) in in_use {
            for (g, bytes) in self.overlaps(addr, size) {
                assert!(g < used.len(), "a block in use in granule {g}, never claimed");
                used[g] += bytes;
            }
        }
        assert_eq!(used, self.used, "bytes in use per granule");
        let (mut committed, mut idle) = (0, 0);
        for (g, &u) in used.iter().enumerate() {
            let c = self.committed.get(g);
            assert!(u == 0 || c, "granule {g} holds a block in use but is not committed");
            assert_eq!(self.idle.get(g), c && u == 0, "granule {g}: idle flag");
            committed += c as usize;
            idle += (c && u == 0) as usize;
        }
        assert_eq!((committed, idle), (self.n_committed, self.n_idle));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_means_committed_and_untouched() {
        let mut c = Commits::new(0x10000, 64 * 4096, 4096);
        // A block over granules 1..=3, committed.
        c.claim(0x10000 + 4096 + 100, 2 * 4096);
        let mut runs = Vec::new();
        c.uncommitted_runs(0x10000 + 4096 + 100, 2 * 4096, |f, n| runs.push((f, n)));
        assert_eq!(runs, vec![(1, 3)]);
        c.set_committed(1, 3);
        assert_eq!((c.n_committed, c.n_idle), (3, 0));
        // A second block shares granule 3.
        c.claim(0x10000 + 3 * 4096 + 200, 100);
        c.unclaim(0x10000 + 4096 + 100, 2 * 4096);
        assert_eq!(c.n_idle, 2, "granules 1 and 2; 3 still holds the second block");
        assert_eq!(c.highest_idle_run(8), Some((1, 2)));
        assert_eq!(c.highest_idle_run(1), Some((2, 1)));
        c.set_decommitted(2, 1);
        assert_eq!((c.n_committed, c.n_idle), (2, 1));
        assert_eq!(c.committed_runs(), vec![(1, 1), (3, 1)]);
        c.unclaim(0x10000 + 3 * 4096 + 200, 100);
        assert_eq!(c.highest_idle_run(8), Some((3, 1)), "granule 2 is no longer committed");
    }

    #[test]
    fn highest_finds_bits_across_words() {
        let mut b = Bits::default();
        b.grow(10_000);
        assert_eq!(b.highest(), None);
        for i in [3, 64, 4095, 4096, 9_999] {
            b.set(i);
            assert_eq!(b.highest(), Some(i));
        }
        for i in [9_999, 4096, 4095, 64] {
            b.clear(i);
        }
        assert_eq!(b.highest(), Some(3));
    }
}
