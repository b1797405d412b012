//! Names of commands and sparse vector clocks over lanes.
//!
//! A lane is one queue as the engine sees it. Every command recorded on a lane
//! gets the next sequence number there, so a command is named by a [`Stamp`].
//! A [`Clock`] says which commands are ordered before (or are) one command.
//!
//! Per lane a clock keeps a prefix (every seq up to `upto`) and a 64-wide
//! window of single seqs above it. The window is what out-of-order lanes
//! need: there, seq 7 being ordered says nothing about seq 6. Forgetting is
//! always safe (an answer of "not ordered" only costs a reuse), so when a
//! window overflows the clock drops its oldest bits, and a command that
//! completed may be dropped or folded into the prefix: completion is at least
//! as strong as ordering for the question the engine asks.

/// Sequence number of a command on its lane. Lanes count from 1; 0 names
/// "before every command" and is always complete.
pub type Seq = u64;

/// Identifies a lane within its [`Dag`](super::Dag).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct LaneId(pub u32);

/// One recorded command: its lane and its sequence number there.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Stamp {
    pub lane: LaneId,
    pub seq: Seq,
}

impl Stamp {
    pub const fn new(lane: LaneId, seq: Seq) -> Self {
        Stamp { lane, seq }
    }
}

const WINDOW: u64 = 64;

/// What a clock knows about one lane.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Entry {
    pub(crate) lane: LaneId,
    /// Every seq `<= upto` is covered.
    upto: Seq,
    /// Seq `base + i` is covered when bit `i` is set; `base > upto`.
    base: Seq,
    bits: u64,
}

impl Entry {
    fn new(lane: LaneId) -> Self {
        Entry {
            lane,
            upto: 0,
            base: 1,
            bits: 0,
        }
    }

    fn covers(&self, seq: Seq) -> bool {
        seq <= self.upto
            || (seq >= self.base
                && seq - self.base < WINDOW
                && self.bits >> (seq - self.base) & 1 == 1)
    }

    /// Keeps `base > upto` and folds a run of bits right after `upto` into it.
    fn normalize(&mut self) {
        if self.base <= self.upto {
            let shift = self.upto + 1 - self.base;
            self.bits = if shift >= WINDOW {
                0
            } else {
                self.bits >> shift
            };
            self.base = self.upto + 1;
        }
        if self.bits == 0 {
            self.base = self.upto + 1;
            return;
        }
        if self.base == self.upto + 1 {
            let run = self.bits.trailing_ones() as u64;
            self.upto += run;
            self.bits = if run >= WINDOW { 0 } else { self.bits >> run };
            self.base = self.upto + 1;
            if self.bits != 0 {
                // Start the window at its lowest set bit so it reaches as far up as it can.
                let skip = self.bits.trailing_zeros() as u64;
                self.bits >>= skip;
                self.base += skip;
            }
        }
    }

    fn raise_prefix(&mut self, upto: Seq) {
        if upto > self.upto {
            self.upto = upto;
            self.normalize();
        }
    }

    /// Adds one seq. Newer seqs win: sliding the window down never drops a set bit,
    /// sliding it up drops the oldest ones.
    fn insert(&mut self, seq: Seq) {
        if self.covers(seq) {
            return;
        }
        if self.bits == 0 {
            self.base = seq;
            self.bits = 1;
        } else if seq >= self.base + WINDOW {
            let shift = seq - (self.base + WINDOW - 1);
            self.bits = if shift >= WINDOW {
                0
            } else {
                self.bits >> shift
            };
            self.base += shift;
            self.bits |= 1 << (seq - self.base);
        } else if seq >= self.base {
            self.bits |= 1 << (seq - self.base);
        } else {
            // upto < seq < base
            let shift = self.base - seq;
            if shift < WINDOW && self.bits.leading_zeros() as u64 >= shift {
                self.bits = (self.bits << shift) | 1;
                self.base = seq;
            } else {
                return; // keep the newer seqs
            }
        }
        self.normalize();
    }

    fn join(&mut self, other: &Entry) {
        self.raise_prefix(other.upto);
        let mut bits = other.bits;
        while bits != 0 {
            let i = bits.trailing_zeros() as u64;
            bits &= bits - 1;
            self.insert(other.base + i);
        }
    }
}

/// A sparse vector clock: entries sorted by lane, at most one per lane.
#[derive(Default, Debug, PartialEq, Eq)]
pub struct Clock {
    entries: Vec<Entry>,
}

// By hand: a derived `clone_from` would allocate instead of reusing storage.
impl Clone for Clock {
    fn clone(&self) -> Self {
        Clock {
            entries: self.entries.clone(),
        }
    }

    fn clone_from(&mut self, source: &Self) {
        self.entries.clone_from(&source.entries);
    }
}

impl Clock {
    pub const fn new() -> Self {
        Clock {
            entries: Vec::new(),
        }
    }

    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Heap bytes the clock holds (its storage, used or not).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<Entry>()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Number of lanes this clock knows something about.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    fn position(&self, lane: LaneId) -> Result<usize, usize> {
        self.entries.binary_search_by(|e| e.lane.cmp(&lane))
    }

    fn entry_mut(&mut self, lane: LaneId) -> &mut Entry {
        match self.position(lane) {
            Ok(i) => &mut self.entries[i],
            Err(i) => {
                self.entries.insert(i, Entry::new(lane));
                &mut self.entries[i]
            }
        }
    }

    /// Is the command `s` ordered before (or equal to) the command this clock describes?
    pub fn covers(&self, s: Stamp) -> bool {
        s.seq == 0
            || self
                .position(s.lane)
                .is_ok_and(|i| self.entries[i].covers(s.seq))
    }

    /// The highest seq of `lane` below which every command is covered.
    pub fn prefix(&self, lane: LaneId) -> Seq {
        self.position(lane).map_or(0, |i| self.entries[i].upto)
    }

    /// Covers one command.
    pub fn insert(&mut self, s: Stamp) {
        if s.seq != 0 {
            self.entry_mut(s.lane).insert(s.seq);
        }
    }

    /// Covers every command of `lane` up to `upto`.
    pub fn insert_prefix(&mut self, lane: LaneId, upto: Seq) {
        if upto != 0 {
            self.entry_mut(lane).raise_prefix(upto);
        }
    }

    /// Least upper bound: afterwards this clock covers what either covered
    /// (less whatever a full window had to drop).
    pub fn join(&mut self, other: &Clock) {
        if self.entries.is_empty() {
            self.entries.clone_from(&other.entries);
            return;
        }
        for e in &other.entries {
            match self.position(e.lane) {
                Ok(i) => self.entries[i].join(e),
                Err(i) => self.entries.insert(i, *e),
            }
        }
    }

    /// [`prune`](Self::prune) for one lane only.
    pub fn prune_lane(&mut self, lane: LaneId, done_upto: Seq) {
        if let Ok(i) = self.position(lane) {
            let e = &mut self.entries[i];
            e.raise_prefix(done_upto);
            if e.bits == 0 && e.upto <= done_upto {
                self.entries.remove(i);
            }
        }
    }

    /// Drops what completion makes useless. `done_upto(lane)` gives the seq up
    /// to which that lane is known complete.
    pub fn prune(&mut self, mut done_upto: impl FnMut(LaneId) -> Seq) {
        self.entries.retain_mut(|e| {
            let done = done_upto(e.lane);
            e.raise_prefix(done);
            !(e.bits == 0 && e.upto <= done)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: LaneId = LaneId(1);
    const B: LaneId = LaneId(2);

    fn st(lane: LaneId, seq: Seq) -> Stamp {
        Stamp::new(lane, seq)
    }

    #[test]
    fn prefix_covers_everything_below() {
        let mut c = Clock::new();
        c.insert_prefix(A, 5);
        assert!(c.covers(st(A, 1)) && c.covers(st(A, 5)));
        assert!(!c.covers(st(A, 6)));
        assert!(!c.covers(st(B, 1)));
        assert!(c.covers(st(B, 0)), "seq 0 is before everything");
    }

    #[test]
    fn single_seqs_do_not_imply_earlier_ones() {
        let mut c = Clock::new();
        c.insert(st(A, 7));
        assert!(c.covers(st(A, 7)));
        assert!(!c.covers(st(A, 6)) && !c.covers(st(A, 8)));
        c.insert(st(A, 3));
        assert!(c.covers(st(A, 3)) && !c.covers(st(A, 4)));
    }

    #[test]
    fn a_run_after_the_prefix_folds_into_it() {
        let mut c = Clock::new();
        c.insert_prefix(A, 2);
        c.insert(st(A, 4));
        c.insert(st(A, 3));
        assert_eq!(c.prefix(A), 4);
        c.insert(st(A, 6));
        assert_eq!(c.prefix(A), 4);
        assert!(c.covers(st(A, 6)) && !c.covers(st(A, 5)));
    }

    #[test]
    fn an_overflowing_window_keeps_the_newest() {
        let mut c = Clock::new();
        c.insert(st(A, 10));
        c.insert(st(A, 10 + 200));
        assert!(c.covers(st(A, 210)));
        assert!(!c.covers(st(A, 10)), "the old bit fell out of the window");
        // An old seq that does not fit below the window is dropped, not the new ones.
        c.insert(st(A, 100));
        assert!(c.covers(st(A, 210)) && !c.covers(st(A, 100)));
        c.insert(st(A, 190));
        assert!(c.covers(st(A, 190)) && c.covers(st(A, 210)));
    }

    #[test]
    fn join_is_an_upper_bound() {
        let mut x = Clock::new();
        x.insert_prefix(A, 3);
        x.insert(st(B, 9));
        let mut y = Clock::new();
        y.insert(st(A, 5));
        y.insert_prefix(B, 4);
        let mut j = x.clone();
        j.join(&y);
        for s in [st(A, 1), st(A, 3), st(A, 5), st(B, 4), st(B, 9)] {
            assert!(j.covers(s), "{s:?}");
        }
        for s in [st(A, 4), st(A, 6), st(B, 5), st(B, 8)] {
            assert!(!j.covers(s), "{s:?}");
        }
    }

    #[test]
    fn prune_drops_complete_lanes() {
        let mut c = Clock::new();
        c.insert_prefix(A, 3);
        c.insert(st(B, 9));
        c.prune(|l| if l == A { 3 } else { 2 });
        assert_eq!(c.len(), 1);
        assert!(c.covers(st(B, 9)) && c.covers(st(B, 2)) && !c.covers(st(B, 5)));
        c.prune(|_| 9);
        assert!(c.is_empty());
    }

    /// Random joins and inserts never claim a seq that was not put in.
    #[test]
    fn never_covers_what_was_not_inserted() {
        let mut rng = crate::engine::testkit::Rng::new(7);
        for _ in 0..200 {
            let mut c = Clock::new();
            let mut truth = std::collections::HashSet::new();
            for _ in 0..40 {
                let seq = 1 + rng.below(150);
                if rng.below(8) == 0 {
                    let mut other = Clock::new();
                    let upto = rng.below(40);
                    other.insert_prefix(A, upto);
                    truth.extend(1..=upto);
                    c.join(&other);
                } else {
                    c.insert(st(A, seq));
                    truth.insert(seq);
                }
                for s in 1..220 {
                    if c.covers(st(A, s)) {
                        assert!(truth.contains(&s), "claims {s}");
                    }
                }
            }
        }
    }
}
