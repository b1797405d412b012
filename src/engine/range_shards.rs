//! [`ShardedRangeMap`]: disjoint address ranges to values, like a
//! [`RangeMap`] behind a lock, but split by address into shards with a lock
//! each, so that threads entering and removing ranges in different parts of
//! the address space share no lock and no cache line.
//!
//! The address space is cut into regions of `1 << REGION_SHIFT` bytes and
//! region `r` belongs to shard `r % SHARDS`. A range's value lives in the
//! shard of its base (its *home*); every other shard that one of its regions
//! belongs to holds a *link*: the same range with no value, which sends an
//! interior lookup to the home. So an exact-base operation (insert, remove)
//! takes the home's lock, plus one lock per link for a range that crosses a
//! region boundary; a lookup takes one lock, or two (one after the other)
//! through a link. No operation holds two shard locks at once: the shard
//! locks are leaves (`src/engine/LOCKING.md`).
//!
//! Contract, as for live memory: ranges entered are disjoint, and memory is
//! handed back to its source only after [`remove`](ShardedRangeMap::remove)
//! has returned, so that no range overlapping it is entered meanwhile.

use super::addr_map::RangeMap;
use std::ops::Range;
use std::sync::{Mutex, MutexGuard};

/// 2 MiB regions: CUDA's and the engines' large granule, so that the small
/// blocks of one pool chunk mostly stay within a region (no link), while
/// blocks of different chunks land in different shards.
const REGION_SHIFT: u32 = 21;
/// A range spanning this many regions or more has a link in every shard.
const SHARDS: usize = 16;

/// What a shard's range map holds for a range: the index of its value in
/// the shard's slab, or `LINK`. Values sit apart from the ordered map so
/// that its nodes stay small (half the time of an insert and a removal with
/// 48-byte values in the nodes).
const LINK: u32 = u32::MAX;

struct Entries<V> {
    ranges: RangeMap<u32>,
    values: Vec<Option<V>>,
    /// Free indices of `values`.
    free: Vec<u32>,
}

impl<V> Entries<V> {
    const fn new() -> Self {
        Entries { ranges: RangeMap::new(), values: Vec::new(), free: Vec::new() }
    }

    fn put(&mut self, value: V) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.values[i as usize] = Some(value);
                i
            }
            None => {
                self.values.push(Some(value));
                u32::try_from(self.values.len() - 1).ok().filter(|&i| i != LINK).expect("too many ranges")
            }
        }
    }

    fn take(&mut self, i: u32) -> V {
        self.free.push(i);
        self.values[i as usize].take().expect("a home's value is set")
    }

    fn value(&self, i: u32) -> &V {
        self.values[i as usize].as_ref().expect("a home's value is set")
    }

    fn homes(&self) -> usize {
        self.values.len() - self.free.len()
    }
}

/// One shard, on cache lines of its own.
#[repr(align(128))]
struct Shard<V> {
    entries: Mutex<Entries<V>>,
}

pub struct ShardedRangeMap<V> {
    shards: Box<[Shard<V>]>,
}

impl<V> Default for ShardedRangeMap<V> {
    fn default() -> Self {
        Self::new()
    }
}

#[inline]
fn shard_of(addr: usize) -> usize {
    (addr >> REGION_SHIFT) % SHARDS
}

/// The shards other than the home that regions of `base..end` belong to.
#[inline]
fn link_shards(base: usize, end: usize) -> impl Iterator<Item = usize> {
    let first = base >> REGION_SHIFT;
    let last = (end.max(base + 1) - 1) >> REGION_SHIFT;
    let regions = (last - first).saturating_add(1).min(SHARDS);
    (1..regions).map(move |i| (first + i) % SHARDS)
}

impl<V> ShardedRangeMap<V> {
    pub fn new() -> Self {
        let shards = (0..SHARDS).map(|_| Shard { entries: Mutex::new(Entries::new()) }).collect();
        ShardedRangeMap { shards }
    }

    #[inline]
    fn lock(&self, shard: usize) -> MutexGuard<'_, Entries<V>> {
        // A panic under a shard lock leaves the map as it was or with one
        // operation done: nothing half written that a later call trips on.
        self.shards[shard].entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Enters `[base, base + len)` with `value`. The range must not overlap
    /// a live one, except one starting at `base`, whose value it replaces
    /// and returns (the two must then have the same length).
    pub fn insert(&self, base: usize, len: usize, value: V) -> Option<V> {
        let end = base.checked_add(len).expect("range wraps the address space");
        let old = {
            let mut home = self.lock(shard_of(base));
            let i = home.put(value);
            match home.ranges.insert(base, len, i) {
                Some(old) if old != LINK => Some(home.take(old)),
                _ => None,
            }
        };
        for s in link_shards(base, end) {
            self.lock(s).ranges.insert(base, len, LINK);
        }
        old
    }

    /// Runs `f` on the range holding `addr` (its base or any byte inside)
    /// and its value.
    pub fn with<R>(&self, addr: usize, f: impl FnOnce(Range<usize>, &V) -> R) -> Option<R> {
        let home = {
            let entries = self.lock(shard_of(addr));
            match entries.ranges.find(addr)? {
                (range, &LINK) => shard_of(range.start),
                (range, &i) => return Some(f(range, entries.value(i))),
            }
        };
        // The range may have gone meanwhile (or another taken its place,
        // which is then the right answer): what the home says now stands.
        let entries = self.lock(home);
        match entries.ranges.find(addr)? {
            (_, &LINK) => None,
            (range, &i) => Some(f(range, entries.value(i))),
        }
    }

    /// Takes out the range starting exactly at `base`; an address inside a
    /// range (or anywhere else) finds nothing and changes nothing.
    pub fn remove(&self, base: usize) -> Option<V> {
        self.remove_if(base, |_| Ok::<(), ()>(())).map(|r| r.unwrap_or_else(|()| unreachable!()))
    }

    /// Like [`remove`](Self::remove), but only when `check`, run on the
    /// value under the home's lock, accepts it; its error leaves the range
    /// in. `None`: no live range starts at `base`.
    pub fn remove_if<E>(&self, base: usize, check: impl FnOnce(&V) -> Result<(), E>) -> Option<Result<V, E>> {
        let (value, end) = {
            let mut home = self.lock(shard_of(base));
            // By key: a zero-length range, which holds no address, not even
            // its base, is found too.
            let (end, &i) = home.ranges.get_with_end(base)?;
            if i == LINK {
                return None;
            }
            if let Err(e) = check(home.value(i)) {
                return Some(Err(e));
            }
            home.ranges.remove(base);
            (home.take(i), end)
        };
        // Lookups through a link find the home empty until the link goes.
        for s in link_shards(base, end) {
            let mut entries = self.lock(s);
            if entries.ranges.get(base) == Some(&LINK) {
                entries.ranges.remove(base);
            }
        }
        Some(Ok(value))
    }

    /// The number of live ranges.
    pub fn len(&self) -> usize {
        (0..SHARDS).map(|s| self.lock(s).homes()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every value, emptying the map (shard by shard: ranges entered
    /// meanwhile may stay).
    pub fn take_all(&self) -> Vec<V> {
        let mut all = Vec::new();
        for s in 0..SHARDS {
            let taken = std::mem::replace(&mut *self.lock(s), Entries::new());
            all.extend(taken.values.into_iter().flatten());
        }
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::testkit::{random_ranges, range_model, Rng};
    use std::sync::Arc;

    const MIB: usize = 1 << 20;
    const REGION: usize = 1 << REGION_SHIFT;

    /// Checks every lookup of `m` against a plain list of the same ranges.
    fn agrees(m: &ShardedRangeMap<u32>, truth: &[(usize, usize, u32)], probes: impl Iterator<Item = usize>) {
        for addr in probes {
            let want = truth.iter().find(|&&(b, l, _)| addr >= b && addr < b + l);
            let got = m.with(addr, |r, &v| (r.start, r.end - r.start, v));
            assert_eq!(got, want.copied(), "with({addr:#x})");
        }
        assert_eq!(m.len(), truth.len());
    }

    #[test]
    fn interior_lookups_find_ranges_across_regions_and_shards() {
        let m = ShardedRangeMap::new();
        // Within one region; across a boundary; across every shard and more.
        let small = (3 * REGION + 0x1000, MIB);
        let crossing = (8 * REGION - MIB, 2 * MIB);
        let huge = (64 * REGION + 0x100, (SHARDS + 3) * REGION);
        for (i, &(b, l)) in [small, crossing, huge].iter().enumerate() {
            assert!(m.insert(b, l, i as u32).is_none());
        }
        let truth = [(small.0, small.1, 0), (crossing.0, crossing.1, 1), (huge.0, huge.1, 2)];
        let edges = truth.iter().flat_map(|&(b, l, _)| [b - 1, b, b + 1, b + l / 2, b + l - 1, b + l]);
        let strides = (0..(SHARDS + 4) * 4).map(|i| huge.0 + i * REGION / 4);
        agrees(&m, &truth, edges.chain(strides));
        assert_eq!(m.with(crossing.0 + MIB + 5, |r, _| r), Some(crossing.0..crossing.0 + crossing.1));
    }

    #[test]
    fn only_the_exact_base_removes_and_only_once() {
        let m = ShardedRangeMap::new();
        let (base, len) = (5 * REGION - 0x800, REGION + 0x1000);
        m.insert(base, len, 7u32);
        for interior in [base + 1, base + 0x800, base + len - 1] {
            assert_eq!(m.remove(interior), None, "interior {interior:#x}");
        }
        assert_eq!(m.remove(base + len), None);
        assert_eq!(m.len(), 1);
        assert_eq!(m.remove_if(base, |_| Err("refused")), Some(Err("refused")));
        assert_eq!(m.with(base + len - 1, |_, &v| v), Some(7), "a refused check keeps every link");
        assert_eq!(m.remove(base), Some(7));
        assert_eq!(m.remove(base), None);
        assert!(m.is_empty());
        for addr in [base, base + 0x800, base + len - 1] {
            assert_eq!(m.with(addr, |_, &v| v), None, "no link is left behind at {addr:#x}");
        }
        // The same range may come back (a refused free puts it back).
        m.insert(base, len, 8);
        assert_eq!(m.with(base + len - 1, |_, &v| v), Some(8));
        assert_eq!(m.insert(base, len, 9), Some(8), "the same base replaces");
        assert_eq!(m.len(), 1);
        assert_eq!(m.take_all(), [9]);
        assert!(m.is_empty() && m.with(base, |_, _| ()).is_none());
    }

    #[test]
    fn a_zero_length_range_is_removed_by_its_base_and_found_by_nothing() {
        let m = ShardedRangeMap::new();
        m.insert(REGION, 0, 1u32);
        assert_eq!(m.with(REGION, |_, &v| v), None);
        assert_eq!(m.len(), 1);
        assert_eq!(m.remove(REGION), Some(1));
        assert!(m.is_empty());
    }

    range_model!(ShardedRangeMap<u32>);

    #[test]
    fn behaves_like_a_list_of_ranges() {
        // Slots of a quarter region; a range covers 1..=40 of them, so
        // neighbours touch and some ranges reach every shard.
        let slot = REGION / 4;
        let mut m = ShardedRangeMap::new();
        let truth = random_ranges(&mut m, &mut Rng::new(11), 4_000, 8, slot as u64 * 450, |rng| {
            let base = slot * (1 + rng.below(400) as usize);
            let most = if rng.chance(8) { 40 } else { 3 };
            (base, slot * (1 + rng.below(most) as usize) - 8 * rng.below(2) as usize)
        });
        let mut all = m.take_all();
        all.sort_unstable();
        let mut want: Vec<u32> = truth.iter().map(|t| t.2).collect();
        want.sort_unstable();
        assert_eq!(all, want);
    }

    /// Two threads enter and remove ranges of their own, in the same shards
    /// as the other's, some with links, while each checks
    /// that its live ranges stay found (from any byte) and its freed ones
    /// stay gone.
    #[test]
    fn two_threads_insert_and_remove_concurrently() {
        let m = Arc::new(ShardedRangeMap::new());
        let threads: Vec<_> = (0..2usize)
            .map(|t| {
                let m = m.clone();
                std::thread::spawn(move || {
                    let mut rng = Rng::new(20 + t as u64);
                    let mut live: Vec<(usize, usize)> = Vec::new();
                    let mut linked = 0;
                    for i in 0..20_000u32 {
                        // Thread t owns every other span of three regions,
                        // so the threads meet in every shard; a range may
                        // cross a region boundary inside its span.
                        let (quarter, span) = (REGION / 4, 12);
                        let offset = rng.below(span as u64) as usize;
                        let q = span * (2 * rng.below(25) as usize + t) + offset;
                        let k = if rng.chance(8) { 5 } else { 1 };
                        let (base, len) = (q * quarter + 0x100, k * quarter - 0x200);
                        let clear = live.iter().all(|&(b, l)| base + len <= b || b + l <= base);
                        let crosses = offset + k > span;
                        if rng.chance(2) && !live.is_empty() {
                            let (b, l) = live.swap_remove(rng.below(live.len() as u64) as usize);
                            assert_eq!(m.with(b + l - 1, |r, &v| (r, v)), Some((b..b + l, b as u64)));
                            assert_eq!(m.remove(b + 1), None);
                            assert_eq!(m.remove(b), Some(b as u64));
                            assert_eq!(m.with(b, |_, _| ()), None);
                        } else if clear && !crosses {
                            assert_eq!(m.insert(base, len, base as u64), None, "step {i}");
                            live.push((base, len));
                            linked += usize::from(shard_of(base) != shard_of(base + len - 1));
                        }
                    }
                    assert!(linked > 100, "ranges with links: {linked}");
                    for (b, l) in live {
                        assert_eq!(m.with(b + l / 2, |_, &v| v), Some(b as u64));
                        assert_eq!(m.remove(b), Some(b as u64));
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert!(m.is_empty());
        assert!(m.take_all().is_empty());
    }

    /// Insert + remove pairs per thread, as an allocation and its free make
    /// them, on the registry's old shape (one lock, one `RangeMap`, the
    /// free's check and removal two searches) and on this map, with 1 and 2
    /// threads and some other ranges live. Prints ns per pair; asserts
    /// nothing about time. Run:
    /// `cargo test --release -p ur_core --lib range_shards -- --ignored --nocapture`
    #[test]
    #[ignore = "microbenchmark"]
    fn pair_cost() {
        use std::sync::Mutex;
        use std::time::Instant;
        type V = [usize; 6];
        const PAIRS: usize = 2_000_000;
        fn run(threads: usize, pair: impl Fn(usize) + Sync) -> f64 {
            let best = (0..5)
                .map(|_| {
                    let start = Instant::now();
                    std::thread::scope(|s| {
                        for t in 0..threads {
                            let pair = &pair;
                            // Each thread's block in a region of its own, as
                            // two queues' allocations from two pools.
                            let base = (1 << 40) + t * 7 * REGION + MIB;
                            debug_assert_eq!((base >> REGION_SHIFT) % 2, t);
                            s.spawn(move || (0..PAIRS).for_each(|_| pair(std::hint::black_box(base))));
                        }
                    });
                    start.elapsed().as_secs_f64()
                })
                .fold(f64::MAX, f64::min);
            best * 1e9 / PAIRS as f64
        }
        for background in [0usize, 256] {
            let old = Mutex::new(RangeMap::<V>::new());
            let new = ShardedRangeMap::<V>::new();
            for i in 0..background {
                let b = (1 << 36) + i * 3 * MIB;
                old.lock().unwrap().insert(b, MIB, [b; 6]);
                new.insert(b, MIB, [b; 6]);
            }
            for threads in [1, 2] {
                let o = run(threads, |b| {
                    old.lock().unwrap().insert(b, MIB, [b; 6]);
                    let mut m = old.lock().unwrap();
                    assert!(m.get(b).is_some_and(|v| v[0] == b));
                    std::hint::black_box(m.remove(b));
                });
                let n = run(threads, |b| {
                    new.insert(b, MIB, [b; 6]);
                    std::hint::black_box(new.remove_if(b, |v| if v[0] == b { Ok(()) } else { Err(()) }));
                });
                // The machine's own scaling: a map per thread, nothing shared.
                let own = [ShardedRangeMap::<V>::new(), ShardedRangeMap::<V>::new()];
                let apart = run(threads, |b| {
                    let m = &own[(b >> REGION_SHIFT) % 2];
                    m.insert(b, MIB, [b; 6]);
                    std::hint::black_box(m.remove_if(b, |v| if v[0] == b { Ok(()) } else { Err(()) }));
                });
                println!(
                    "{background} other ranges, {threads} thread(s): old {o:.1} ns/pair, sharded {n:.1} ns/pair \
                     (a map per thread: {apart:.1})"
                );
            }
        }
    }
}
