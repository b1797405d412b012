//! Pools on virtual memory: a reserved range committed granule by granule,
//! on real host memory (`mmap`, `mprotect`, `madvise`).

use crate::abi::*;
use crate::engine::*;
use std::collections::BTreeSet;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

const PAGE: usize = 4096;

/// Host virtual memory that counts its calls, refuses every commit from
/// the `fail_from`th on (counting from 1), and the next `refuse` ones.
struct Counted {
    mem: HostMemory,
    commits: AtomicUsize,
    decommits: AtomicUsize,
    fail_from: AtomicUsize,
    refuse: AtomicUsize,
}

impl Counted {
    fn new(granule: usize) -> Arc<Self> {
        Arc::new(Counted {
            mem: HostMemory::with_virtual_memory(granule, usize::MAX),
            commits: AtomicUsize::new(0),
            decommits: AtomicUsize::new(0),
            fail_from: AtomicUsize::new(usize::MAX),
            refuse: AtomicUsize::new(0),
        })
    }
}

impl MemorySource for Counted {
    fn allocate(&self, size: usize, align: usize) -> Result<NonNull<u8>, OutOfMemory> {
        self.mem.allocate(size, align)
    }

    unsafe fn release(&self, ptr: NonNull<u8>, size: usize, align: usize) {
        self.mem.release(ptr, size, align)
    }

    fn virtual_memory(&self) -> Option<&dyn VirtualMemory> {
        Some(self)
    }
}

impl VirtualMemory for Counted {
    fn granule(&self) -> usize {
        VirtualMemory::granule(&self.mem)
    }

    fn reserve(&self, size: usize) -> Result<NonNull<u8>, OutOfMemory> {
        self.mem.reserve(size)
    }

    unsafe fn commit(&self, addr: NonNull<u8>, len: usize) -> Result<(), OutOfMemory> {
        let n = self.commits.fetch_add(1, Relaxed) + 1;
        let refuse = self.refuse.load(Relaxed);
        if refuse > 0 {
            self.refuse.store(refuse - 1, Relaxed);
            return Err(OutOfMemory);
        }
        if n >= self.fail_from.load(Relaxed) {
            return Err(OutOfMemory);
        }
        self.mem.commit(addr, len)
    }

    unsafe fn decommit(&self, addr: NonNull<u8>, len: usize) {
        self.decommits.fetch_add(1, Relaxed);
        self.mem.decommit(addr, len)
    }

    unsafe fn unreserve(&self, addr: NonNull<u8>, size: usize) {
        self.mem.unreserve(addr, size)
    }
}

fn setup(kind: UsmKind, granule: usize) -> (Arc<Dag>, Arc<Counted>, Pool, Arc<Lane>) {
    let dag = Dag::new();
    let mem = Counted::new(granule);
    let mut config = PoolConfig::new(kind);
    config.release_threshold = 0;
    let pool = Pool::new(dag.clone(), mem.clone(), config);
    let q = dag.create_lane(QueueOrder::InOrder);
    (dag, mem, pool, q)
}

/// Pages that the blocks `(address, size)` touch.
fn pages(blocks: &[(usize, usize)]) -> usize {
    let mut set = BTreeSet::new();
    for &(a, s) in blocks {
        set.extend(a / PAGE..(a + s).div_ceil(PAGE));
    }
    set.len()
}

fn alloc(pool: &Pool, q: &Arc<Lane>, size: usize) -> (usize, usize) {
    let a = pool.alloc(q, &[], size, 0, false).unwrap();
    // Committed memory: writable, and stays so while the block lives.
    unsafe { std::ptr::write_bytes(a.ptr.as_ptr(), 0xa5, a.size) };
    (a.ptr.as_ptr() as usize, a.size)
}

fn intact(block: (usize, usize)) -> bool {
    unsafe { std::slice::from_raw_parts(block.0 as *const u8, block.1) }
        .iter()
        .all(|&b| b == 0xa5)
}

#[test]
fn reserved_is_exactly_the_committed_granules() {
    let (_, mem, pool, q) = setup(UsmKind::Device, PAGE);
    let mut live = Vec::new();
    for size in [1000, 5000, 64, 3 * PAGE + 1, 200 * 1024, 100] {
        live.push(alloc(&pool, &q, size));
        let s = pool.stats();
        assert_eq!(s.reserved_current, pages(&live) * PAGE, "after {size} bytes");
        assert_eq!(s.reserved_current, mem.mem.taken());
        assert_eq!(pool.check_ranges(), s.reserved_current);
    }
    assert!(live.windows(2).all(|w| w[1].0 == w[0].0 + w[0].1), "placed one after another");
    assert!(live.iter().all(|&b| intact(b)));
}

#[test]
fn the_threshold_decommits_granules_that_hold_no_live_or_pending_block() {
    let (dag, mem, pool, q) = setup(UsmKind::Device, PAGE);
    let a = alloc(&pool, &q, 10 * PAGE);
    let b = alloc(&pool, &q, 100); // shares no page with `a`'s interior
    let c = alloc(&pool, &q, 6 * PAGE);
    let d = alloc(&pool, &q, 100);
    // `a` goes back at once; `c` is freed behind work that has not run.
    pool.free(&q, &[], a.0 as *const u8, false).unwrap();
    let k = dag.record(&q, &[]);
    pool.free(&q, &[], c.0 as *const u8, false).unwrap();
    assert_eq!(pool.stats().reserved_current, pages(&[a, b, c, d]) * PAGE, "nothing before a synchronisation point");
    pool.collect();
    assert_eq!(
        pool.stats().reserved_current,
        pages(&[b, c, d]) * PAGE,
        "the pending block keeps its granules; the page `a` shares with `b` stays"
    );
    assert_eq!(pool.check_ranges(), mem.mem.taken());
    assert!(intact(b) && intact(d));
    dag.complete(k);
    pool.set_release_threshold(usize::MAX);
    pool.trim_to(usize::MAX);
    assert_eq!(pool.stats().reserved_current, pages(&[b, c, d]) * PAGE, "trim keeps what it is told to");
    pool.trim_to(0);
    assert_eq!(pool.stats().reserved_current, pages(&[b, d]) * PAGE);
    assert!(intact(b) && intact(d));
    assert!(mem.decommits.load(Relaxed) >= 2);
    pool.set_release_threshold(0);
    for x in [b, d] {
        pool.free(&q, &[], x.0 as *const u8, false).unwrap();
    }
    pool.collect();
    assert_eq!((pool.stats().reserved_current, mem.mem.taken()), (0, 0));
    // The granules come back when used again.
    let e = alloc(&pool, &q, 3 * PAGE);
    assert_eq!(pool.stats().reserved_current, pages(&[e]) * PAGE);
}

#[test]
fn growth_at_the_high_water_mark_moves_idle_granules() {
    let (_, mem, pool, q) = setup(UsmKind::Device, PAGE);
    let a = alloc(&pool, &q, 16 * PAGE);
    let b = alloc(&pool, &q, PAGE);
    pool.free(&q, &[], a.0 as *const u8, false).unwrap();
    let high = pool.stats().reserved_high;
    assert_eq!(high, 17 * PAGE);
    // Does not fit where `a` was: fresh space, committed by decommitting
    // `a`'s idle granules rather than growing.
    let c = alloc(&pool, &q, 20 * PAGE);
    assert!(c.0 > b.0);
    let s = pool.stats();
    assert_eq!(s.reserved_current, pages(&[b, c]) * PAGE);
    assert_eq!(s.reserved_high, 21 * PAGE, "the mark rose by what no idle granule could cover");
    assert_eq!(mem.decommits.load(Relaxed), 1);
    assert_eq!(pool.check_ranges(), mem.mem.taken());
    // Where `a` was is ready space again, committed anew when taken.
    let d = alloc(&pool, &q, 16 * PAGE);
    assert_eq!(d.0, a.0, "the freed block still ranks before fresh space");
    assert!([b, c, d].iter().all(|&x| intact(x)));
    assert_eq!(pool.check_ranges(), pool.stats().reserved_current);
}

#[test]
fn a_failed_commit_is_out_of_memory_and_every_earlier_block_stays_valid() {
    // A sequence of allocations and frees (with granules moved and taken
    // back), on a source that refuses every commit from the Nth on: each
    // refused allocation is the kind's out-of-memory error, changes no
    // counter, and leaves every live block intact; the pool carries on.
    let commits = run_failing(UsmKind::Device, usize::MAX);
    assert!(commits > 10, "the sequence commits often: {commits}");
    for kind in [UsmKind::Device, UsmKind::Host] {
        for n in 1..=commits {
            run_failing(kind, n);
        }
    }
}

/// The sequence of [`a_failed_commit_is_out_of_memory_and_every_earlier_block_stays_valid`]
/// with commits refused from the `n`th on; returns the commits asked for.
fn run_failing(kind: UsmKind, n: usize) -> usize {
    {
        {
            let (_, mem, pool, q) = setup(kind, PAGE);
            mem.fail_from.store(n, Relaxed);
            let mut rng = crate::engine::testkit::Rng::new(7);
            let mut live: Vec<(usize, usize)> = Vec::new();
            let mut refused = 0;
            for _ in 0..60 {
                if !live.is_empty() && rng.chance(3) {
                    let (addr, _) = live.swap_remove(rng.below(live.len() as u64) as usize);
                    pool.free(&q, &[], addr as *const u8, false).unwrap();
                    continue;
                }
                let size = 1 + rng.below(6 * PAGE as u64) as usize;
                let before = pool.stats();
                match pool.alloc(&q, &[], size, 0, false) {
                    Ok(a) => {
                        unsafe { std::ptr::write_bytes(a.ptr.as_ptr(), 0xa5, a.size) };
                        live.push((a.ptr.as_ptr() as usize, a.size));
                    }
                    Err(e) => {
                        assert_eq!(e, kind.out_of_memory());
                        let after = pool.stats();
                        assert_eq!((after.used_current, after.used_high), (before.used_current, before.used_high));
                        // Idle memory may have gone back; runs committed
                        // before a later one was refused count in the mark.
                        assert!(after.reserved_current <= before.reserved_current);
                        assert!(after.reserved_high >= before.reserved_high);
                        refused += 1;
                    }
                }
                assert_eq!(pool.check_ranges(), mem.mem.taken());
                assert!(live.iter().all(|&b| intact(b)), "commit {n}: a live block lost its data");
            }
            assert!(refused > 0 || n == usize::MAX, "commit {n} was reached");
            let asked = mem.commits.load(Relaxed);
            // Commits work again: the pool carries on.
            mem.fail_from.store(usize::MAX, Relaxed);
            live.push(alloc(&pool, &q, 10 * PAGE));
            assert!(live.iter().all(|&b| intact(b)));
            assert_eq!(pool.check_ranges(), pool.stats().reserved_current);
            asked
        }
    }
}

#[test]
fn a_commit_refused_once_is_retried_after_giving_idle_memory_back() {
    let (_, mem, pool, q) = setup(UsmKind::Device, PAGE);
    let a = alloc(&pool, &q, 8 * PAGE);
    let b = alloc(&pool, &q, 100);
    pool.free(&q, &[], a.0 as *const u8, false).unwrap();
    pool.reset_reserved_high(); // growth would move idle granules anyway
    pool.set_info(UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP, usize::MAX).unwrap();
    let n = mem.commits.load(Relaxed);
    mem.refuse.store(1, Relaxed);
    let c = alloc(&pool, &q, 12 * PAGE);
    assert_eq!(mem.commits.load(Relaxed), n + 2, "refused, then committed");
    assert!(mem.decommits.load(Relaxed) > 0, "idle granules went back in between");
    assert!(intact(b) && intact(c));
    assert_eq!(pool.check_ranges(), mem.mem.taken());
}

#[test]
fn bad_frees_release_nothing() {
    let (dag, mem, pool, q) = setup(UsmKind::Device, PAGE);
    let a = alloc(&pool, &q, 5 * PAGE);
    let before = (pool.stats(), mem.mem.taken());
    let other = dag.create_lane(QueueOrder::OutOfOrder);
    for bad in [a.0 + 64, a.0 + PAGE, a.0 + a.1, 0x1000] {
        for lane in [&q, &other] {
            assert_eq!(
                pool.free(lane, &[], bad as *const u8, false).unwrap_err(),
                UR_RESULT_ERROR_INVALID_VALUE
            );
        }
        assert_eq!(pool.free_blocking(bad as *const u8, |_| {}).unwrap_err(), UR_RESULT_ERROR_INVALID_VALUE);
        pool.collect();
    }
    assert_eq!((pool.stats(), mem.mem.taken()), before);
    assert!(intact(a));
    pool.free(&q, &[], a.0 as *const u8, false).unwrap();
    assert_eq!(
        pool.free(&q, &[], a.0 as *const u8, false).unwrap_err(),
        UR_RESULT_ERROR_INVALID_VALUE,
        "a double free"
    );
}

#[test]
fn a_pool_gives_everything_back_when_it_goes() {
    let (dag, mem, pool, q) = setup(UsmKind::Device, PAGE);
    let a = alloc(&pool, &q, 3 * PAGE);
    let _b = alloc(&pool, &q, 5 * PAGE);
    let k = dag.record(&q, &[]);
    pool.free(&q, &[], a.0 as *const u8, false).unwrap();
    drop(pool);
    assert!(mem.mem.taken() > 0, "the pending block's memory waits for its lane");
    dag.complete(k); // the graveyard releases it
    assert_eq!(mem.mem.taken(), 0);
}

/// One step of `ur_bench` scenario 5's sequence: allocate `size` bytes, or
/// free the live block at index `victim` of the live list (swap-removed,
/// as the bench does).
enum Step {
    Alloc(usize),
    Free(usize),
}

/// `ur_bench` scenario 5's sequence (the same generator, seed and size
/// law: `bench/src/scenarios/mixed.rs`) under `live_budget` live bytes: `on_step`
/// sees each step with the live list as it stands before it; the list
/// holds what `on_step` returned for each allocation, with its size.
fn scenario5_steps<T: Copy>(seed: u64, live_budget: usize, allocations: usize, mut on_step: impl FnMut(Step, &[(T, usize)]) -> Option<T>) {
    let mut rng = SplitMix64::new(seed);
    let mut live: Vec<(T, usize)> = Vec::new();
    let mut live_bytes = 0;
    for _ in 0..allocations {
        let (lo, hi) = ((64f64).ln(), ((256 << 10) as f64).ln());
        let size = (lo + rng.unit() * (hi - lo)).exp() as usize;
        while live_bytes + size > live_budget {
            let v = (rng.next_u64() % live.len() as u64) as usize;
            on_step(Step::Free(v), &live);
            live_bytes -= live.swap_remove(v).1;
        }
        match on_step(Step::Alloc(size), &live) {
            Some(t) => live.push((t, size)),
            None => return,
        }
        live_bytes += size;
    }
}

/// Scenario 5 under `live_budget` on one in-order queue of `pool`, up to
/// the last of `marks` allocations. Returns the pool's counters after each
/// of `marks` allocations.
fn replay_scenario5(pool: &Pool, q: &Arc<Lane>, seed: u64, live_budget: usize, marks: &[usize]) -> Vec<PoolStats> {
    let mut stats = Vec::new();
    let mut n = 0;
    scenario5_steps(seed, live_budget, marks.iter().copied().max().unwrap_or(0), |step, live| match step {
        Step::Free(v) => {
            pool.free(q, &[], live[v].0 as *const u8, false).unwrap();
            None
        }
        Step::Alloc(size) => {
            let a = pool.alloc(q, &[], size, 0, false).unwrap();
            n += 1;
            if marks.contains(&n) {
                stats.push(pool.stats());
            }
            Some(a.ptr.as_ptr() as usize)
        }
    });
    stats
}

/// A reference allocator for placement figures: free ranges kept exactly
/// (no size classes, no scan limit), coalesced, taken best fit (smallest,
/// then lowest address) or address-ordered first fit, fresh space at the
/// top last. Blocks are multiples of 64 bytes, as CUDA's.
struct Reference {
    by_addr: std::collections::BTreeMap<usize, usize>,
    by_size: BTreeSet<(usize, usize)>,
    top: usize,
    /// The top may not pass this (a fixed arena).
    cap: usize,
    first_fit: bool,
}

impl Reference {
    fn new(cap: usize, first_fit: bool) -> Self {
        Reference { by_addr: Default::default(), by_size: BTreeSet::new(), top: 0, cap, first_fit }
    }

    fn take_range(&mut self, addr: usize) -> usize {
        let size = self.by_addr.remove(&addr).unwrap();
        self.by_size.remove(&(size, addr));
        size
    }

    fn put_range(&mut self, addr: usize, size: usize) {
        self.by_addr.insert(addr, size);
        self.by_size.insert((size, addr));
    }

    fn alloc(&mut self, size: usize) -> Option<usize> {
        let need = size.next_multiple_of(64);
        let fit = if self.first_fit {
            self.by_addr.iter().find(|&(_, &s)| s >= need).map(|(&a, _)| a)
        } else {
            self.by_size.range((need, 0)..).next().map(|&(_, a)| a)
        };
        if let Some(addr) = fit {
            let s = self.take_range(addr);
            if s > need {
                self.put_range(addr + need, s - need);
            }
            return Some(addr);
        }
        // Fresh space, joined to a free range that ends at the top.
        let base = match self.by_addr.iter().next_back() {
            Some((&a, &s)) if a + s == self.top => {
                self.take_range(a);
                a
            }
            _ => self.top,
        };
        if base + need > self.cap {
            return None;
        }
        self.top = base + need;
        Some(base)
    }

    fn free(&mut self, mut addr: usize, size: usize) {
        let mut size = size.next_multiple_of(64);
        if let Some((&a, &s)) = self.by_addr.range(..addr).next_back() {
            if a + s == addr {
                self.take_range(a);
                addr = a;
                size += s;
            }
        }
        if self.by_addr.contains_key(&(addr + size)) {
            size += self.take_range(addr + size);
        }
        self.put_range(addr, size);
    }

    /// Replays scenario 5; returns the highest address ever used, or the
    /// allocation number that found no room.
    fn replay(mut self, seed: u64, live_budget: usize, allocations: usize) -> Result<usize, usize> {
        let (mut n, mut failed, mut high) = (0, None, 0);
        scenario5_steps(seed, live_budget, allocations, |step, live| match step {
            Step::Free(v) => {
                self.free(live[v].0, live[v].1);
                None
            }
            Step::Alloc(size) => {
                n += 1;
                let a = self.alloc(size);
                failed = failed.or(a.is_none().then_some(n));
                high = high.max(self.top);
                a
            }
        });
        failed.map_or(Ok(high), Err)
    }
}

/// Why scenario 5 at 8 MiB live cannot reach reserved/used 1.25 on 2 MiB
/// granules, whatever the pool does short of moving live blocks: five
/// granules (10 MiB) do not hold the sequence under exact best fit or
/// address-ordered first fit, on any of these seeds (each fails within
/// 2 000 allocations), and the engine takes as few granules as exact best
/// fit at 8 MiB, and at most one more at 64 MiB. (Replayed to a million
/// allocations at 512 MiB, exact best fit levels off at 1.07, as the
/// engine's 1.073 after 200 000 does: what grows between 20 000 and
/// 200 000 is the sequence reaching its steady state.)
#[test]
fn scenario5_takes_as_few_2mib_granules_as_exact_best_fit() {
    const G: usize = 2 << 20;
    for seed in [SCENARIO5_SEED, 1, 2, 3] {
        for first_fit in [false, true] {
            let fits = Reference::new(5 * G, first_fit).replay(seed, 8 << 20, 20_000);
            assert!(fits.is_err(), "seed {seed}: 8 MiB live fits five granules (first fit: {first_fit})");
        }
        for live_budget in [8usize << 20, 64 << 20] {
            let best_fit = Reference::new(usize::MAX, false).replay(seed, live_budget, 20_000).unwrap();
            let (_, pool, q) = scenario5_pool(G);
            let ours = replay_scenario5(&pool, &q, seed, live_budget, &[20_000])[0];
            // Size classes compare at most 32 blocks each: one granule
            // more than the exact search at 64 MiB on some seeds.
            let slack = if live_budget > 8 << 20 { G } else { 0 };
            assert!(
                ours.reserved_high <= best_fit.next_multiple_of(G) + slack,
                "seed {seed}, {} MiB live: {} granules, exact best fit {}",
                live_budget >> 20,
                ours.reserved_high / G,
                best_fit.div_ceil(G)
            );
        }
    }
}

fn ratio(s: &PoolStats) -> f64 {
    s.reserved_high as f64 / s.used_high as f64
}

/// The seed of `ur_bench` scenario 5.
const SCENARIO5_SEED: u64 = 0x05ee_d0fa_110c;

/// A pool as `ur_bench` scenario 5 sees it on CUDA: granules of 2 MiB
/// (`cuMemMap`'s least), 64-byte blocks, nothing given back at
/// synchronisation points.
fn scenario5_pool(granule: usize) -> (Arc<Counted>, Pool, Arc<Lane>) {
    let dag = Dag::new();
    let mem = Counted::new(granule);
    let pool = Pool::new(dag.clone(), mem.clone(), PoolConfig::new(UsmKind::Device));
    let q = dag.create_lane(QueueOrder::InOrder);
    (mem, pool, q)
}

/// With granules as big as CUDA's, how tightly blocks pack decides how
/// many granules hold them: taking equal best fits newest first, scenario
/// 5 at 64 MiB live reaches 40 granules (1.25) on the bench's own seed;
/// lowest address first, 38 or 39 (1.19-1.22) on each of these seeds.
#[test]
fn scenario5_packs_blocks_into_few_2mib_granules() {
    const G: usize = 2 << 20;
    for seed in [SCENARIO5_SEED, 1, 2, 3, 4, 5] {
        let (_, pool, q) = scenario5_pool(G);
        let s = replay_scenario5(&pool, &q, seed, 64 << 20, &[20_000, 200_000]);
        assert!(
            s[1].reserved_high <= 39 * G,
            "seed {seed}, 64 MiB live: reserved/used {:.3} after 20 000, {:.3} after 200 000",
            ratio(&s[0]),
            ratio(&s[1])
        );
        pool.check_ranges();
    }
}

/// Scenario 5 replayed per live budget and granule, to compare placement
/// choices quickly (the figures match `ur_bench`'s on native CPU, and on
/// CUDA with 2 MiB). Prints, asserts nothing; run with
/// `-- --ignored --nocapture`. `GRANULES=a,b` picks the granules (bytes);
/// with `SLABS=1` they are slab sizes of a pool on plain host memory (no
/// virtual memory), as on OpenCL; `BLOCK` the pool's block granule (128,
/// native CPU's; CUDA's is 64); `SEED` another sequence; `THRESHOLD` a
/// release threshold.
#[test]
#[ignore]
fn scenario5_fragmentation_by_granule() {
    let threshold = std::env::var("THRESHOLD").ok().and_then(|t| t.parse().ok()).unwrap_or(usize::MAX);
    let seed = std::env::var("SEED").ok().and_then(|t| t.parse().ok()).unwrap_or(SCENARIO5_SEED);
    // Native CPU's blocks are multiples of 128 bytes, CUDA's of 64.
    let block = std::env::var("BLOCK").ok().and_then(|t| t.parse().ok()).unwrap_or(128);
    let granules: Vec<usize> = match std::env::var("GRANULES") {
        Ok(g) => g.split(',').filter_map(|g| g.parse().ok()).collect(),
        Err(_) => vec![16 << 10, 32 << 10, 64 << 10, 2 << 20],
    };
    for granule in granules {
        for live_budget in [8usize << 20, 64 << 20, 512 << 20] {
            let dag = Dag::new();
            let mem = Counted::new(granule);
            let mut config = PoolConfig::new(UsmKind::Device);
            config.granule = block;
            config.release_threshold = threshold;
            let pool = if std::env::var_os("SLABS").is_some() {
                config.min_slab_size = granule;
                Pool::new(dag.clone(), Arc::new(HostMemory::new()), config)
            } else {
                Pool::new(dag.clone(), mem.clone(), config)
            };
            let q = dag.create_lane(QueueOrder::InOrder);
            let marks = replay_scenario5(&pool, &q, seed, live_budget, &[2_000, 20_000, 200_000]);
            let s = pool.stats();
            println!(
                "granule {:>4} KiB, {:>3} MiB live: reserved/used {} (after 2k, 20k, 200k; {} / {} bytes); {} commits, {} decommits",
                granule >> 10,
                live_budget >> 20,
                marks.iter().map(|m| format!("{:.3}", ratio(m))).collect::<Vec<_>>().join(" "),
                s.reserved_high,
                s.used_high,
                mem.commits.load(Relaxed),
                mem.decommits.load(Relaxed)
            );
        }
    }
}
