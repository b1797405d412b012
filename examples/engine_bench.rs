//! Micro-benchmark of the async pool engine: nanoseconds per allocation +
//! free pair, beside baselines measured in the same run; two threads on two
//! lanes of one pool beside one thread and the global allocator; and the
//! mixed-size workload of the benchmark's scenario 5 (reserved high water
//! over used high water).
//!
//! `cargo run --release -p ur_core --example engine_bench`
//! (`ENGINE_BENCH_PAIRS` sets the pairs per run, default 2 000 000;
//! `ENGINE_BENCH_REPS` the runs per case, default 3, of which the fastest is
//! shown: on a shared machine the fastest run is the one least disturbed;
//! `ENGINE_BENCH_MIXED` the allocations per batch of scenario 5, default 20 000).

use std::hint::black_box;
use std::sync::{Arc, Barrier, Mutex};
use std::time::Instant;
use ur_core::engine::*;

fn pairs() -> usize {
    std::env::var("ENGINE_BENCH_PAIRS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000_000)
}

fn reps() -> usize {
    std::env::var("ENGINE_BENCH_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
        .max(1)
}

/// Nanoseconds per pair of the fastest of `reps()` runs of `f`.
fn per_pair(pairs: usize, mut f: impl FnMut()) -> f64 {
    (0..reps())
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_nanos() as f64 / pairs as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn report(name: &str, ns: f64) {
    println!("{name:<62} {ns:>8.1} ns/pair");
}

fn section(name: &str) {
    println!("\n-- {name}");
}

fn pool(dag: &Arc<Dag>) -> Pool {
    Pool::new(
        dag.clone(),
        Arc::new(HostMemory::new()),
        PoolConfig::new(UsmKind::Device),
    )
}

const SIZES: [usize; 3] = [64, 1000, 4096];

fn malloc_pairs(n: usize, size_of: impl Fn(usize) -> usize) {
    for i in 0..n {
        let layout = std::alloc::Layout::from_size_align(size_of(i), 64).unwrap();
        // SAFETY: non-zero size; freed with the same layout.
        unsafe {
            let p = std::alloc::alloc(layout);
            black_box(p);
            std::alloc::dealloc(p, layout);
        }
    }
}

fn engine_pairs(p: &Pool, q: &Arc<Lane>, n: usize, size_of: impl Fn(usize) -> usize) {
    for i in 0..n {
        let a = p.alloc(q, &[], size_of(i), 0, false).unwrap();
        p.free(q, &[], black_box(a.ptr.as_ptr()), false).unwrap();
    }
}

fn per_pair_once(pairs: usize, f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_nanos() as f64 / pairs as f64
}

/// Wall time of `threads` threads each running `body(thread)`, started together.
fn wall_of_threads(threads: usize, body: impl Fn(usize) + Sync) -> std::time::Duration {
    let start = Barrier::new(threads + 1);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (start, body) = (&start, &body);
                s.spawn(move || {
                    start.wait();
                    body(t)
                })
            })
            .collect();
        start.wait();
        let t0 = Instant::now();
        handles.into_iter().for_each(|h| h.join().unwrap());
        t0.elapsed()
    })
}

fn fast_path(pairs: usize) {
    section("one thread, in-order queue");
    report(
        "baseline: global allocator alloc+dealloc, 3 sizes",
        per_pair(pairs, || malloc_pairs(pairs, |i| SIZES[i % 3])),
    );
    let m = Mutex::new(0u64);
    let ns = per_pair(pairs, || {
        for _ in 0..pairs {
            *m.lock().unwrap() += 1;
            *m.lock().unwrap() += 1;
        }
    });
    report("baseline: two uncontended mutex lock+unlock", ns);

    // The fast path: in-order queue, no events, work still in flight.
    let dag = Dag::new();
    let p = pool(&dag);
    let q = dag.create_lane(QueueOrder::InOrder);
    let kernel = dag.record(&q, &[]);
    let ns = per_pair(pairs, || engine_pairs(&p, &q, pairs, |_| 256));
    report("engine: in-order, no events, kernel pending, one size", ns);
    let ns = per_pair(pairs, || engine_pairs(&p, &q, pairs, |i| SIZES[i % 3]));
    report("engine: in-order, no events, kernel pending, 3 sizes", ns);
    dag.complete(kernel);
    let ns = per_pair(pairs, || engine_pairs(&p, &q, pairs, |i| SIZES[i % 3]));
    report("engine: in-order, no events, queue idle, 3 sizes", ns);

    // Interleaved kernels that complete: nodes come and go.
    let ns = per_pair(pairs, || {
        for i in 0..pairs {
            let a = p.alloc(&q, &[], SIZES[i % 3], 0, false).unwrap();
            let k = dag.record(&q, &[]);
            p.free(&q, &[], a.ptr.as_ptr(), false).unwrap();
            if i % 8 == 7 {
                dag.complete(k);
            }
        }
    });
    report("engine: in-order, + a recorded kernel per pair", ns);

    // Events and cross-queue wait lists on out-of-order queues.
    let q1 = dag.create_lane(QueueOrder::OutOfOrder);
    let q2 = dag.create_lane(QueueOrder::OutOfOrder);
    let pairs = pairs / 4;
    let ns = per_pair(pairs, || {
        let mut last = None;
        for i in 0..pairs {
            let wait: Vec<Stamp> = last.into_iter().collect();
            let a = p.alloc(&q1, &wait, SIZES[i % 3], 0, true).unwrap();
            let s = a.stamp.unwrap();
            let f = p.free(&q2, &[s], a.ptr.as_ptr(), true).unwrap();
            dag.complete(s);
            last = f.stamp;
            if let Some(fs) = f.stamp {
                dag.complete(fs);
            }
        }
    });
    report("engine: out-of-order, events and wait lists on both", ns);
    println!("in flight at the end: {} nodes", dag.in_flight());
}

/// Scenario 6 in the small: two threads, each on its own in-order lane of one
/// shared pool, against the same loop on one thread. Figures are wall time
/// over all pairs, so perfect scaling halves them.
fn two_threads(pairs: usize) {
    for (label, size_of) in [
        ("1 KiB", (|_| 1024) as fn(usize) -> usize),
        ("3 sizes", |i| SIZES[i % 3]),
    ] {
        section(&format!(
            "2 threads, 2 lanes, one pool, {label} (wall / all pairs)"
        ));
        // One thread and two threads take turns, so that whatever else runs
        // on the machine disturbs both alike; the fastest run of each counts.
        let half = pairs / 2;
        let (mut malloc_one, mut malloc_two) = (f64::INFINITY, f64::INFINITY);
        for _ in 0..reps() {
            malloc_one = malloc_one.min(per_pair_once(pairs, || malloc_pairs(pairs, size_of)));
            let wall = wall_of_threads(2, |_| malloc_pairs(half, size_of));
            malloc_two = malloc_two.min(wall.as_nanos() as f64 / (2 * half) as f64);
        }
        report("baseline: global allocator, 1 thread", malloc_one);
        report("baseline: global allocator, 2 threads", malloc_two);

        let dag = Dag::new();
        let p = pool(&dag);
        let lanes: Vec<Arc<Lane>> = (0..2)
            .map(|_| dag.create_lane(QueueOrder::InOrder))
            .collect();
        // Warm both lanes up, so both runs start from the same pool state.
        for q in &lanes {
            engine_pairs(&p, q, 1000, size_of);
        }
        let (mut one, mut two) = (f64::INFINITY, f64::INFINITY);
        for _ in 0..reps() {
            one = one.min(per_pair_once(pairs, || {
                engine_pairs(&p, &lanes[0], pairs, size_of)
            }));
            let wall = wall_of_threads(2, |t| engine_pairs(&p, &lanes[t], half, size_of));
            two = two.min(wall.as_nanos() as f64 / (2 * half) as f64);
        }
        report("engine: 1 thread, 1 lane", one);
        report("engine: 2 threads, 2 lanes, one pool", two);
        println!(
            "{:<62} {:>8.2}x   (global allocator: {:.2}x; goal >= 1.6x)",
            "pairs per second, 2 threads over 1",
            one / two,
            malloc_one / malloc_two
        );
        let s = p.stats();
        println!(
            "{:<62} {:>8} B used high, {} B reserved",
            "pool after the runs", s.used_high, s.reserved_current
        );
    }
}

/// Scenario 5's workload (`bench/src/scenarios/mixed.rs`, `mixed_workload`): random
/// log-uniform sizes 64 B..256 KiB; before each allocation, random live
/// blocks are freed until it fits an 8 MiB live budget; then everything is
/// freed. Returns the operations (allocations + frees).
fn mixed_workload(
    allocations: usize,
    mut alloc: impl FnMut(usize) -> usize,
    mut free: impl FnMut(usize, usize),
) -> usize {
    const LIVE_BUDGET: usize = 8 << 20;
    let mut rng = SplitMix64::new(0x05ee_d0fa_110c);
    let (low, high) = ((64f64).ln(), ((256 << 10) as f64).ln());
    let mut live: Vec<(usize, usize)> = Vec::new();
    let (mut live_bytes, mut operations) = (0, 0);
    for _ in 0..allocations {
        let size = (low + rng.unit() * (high - low)).exp() as usize;
        while live_bytes + size > LIVE_BUDGET {
            let victim = (rng.next_u64() % live.len() as u64) as usize;
            let (mem, victim_size) = live.swap_remove(victim);
            free(mem, victim_size);
            live_bytes -= victim_size;
            operations += 1;
        }
        live.push((alloc(size), size));
        live_bytes += size;
        operations += 1;
    }
    while let Some((mem, size)) = live.pop() {
        free(mem, size);
        operations += 1;
    }
    operations
}

/// Scenario 5 as the benchmark runs it on a pool of its own: a warm-up batch
/// and timed batches that each replay the sequence from its start, with a
/// host synchronisation (the queue drains) after each.
fn mixed_sizes(allocations: usize) {
    section("scenario 5: random 64 B..256 KiB under 8 MiB live, in-order, no events");
    let batches = [512, allocations, allocations, allocations];
    let total_ops =
        |f: &mut dyn FnMut(usize) -> usize| batches.iter().map(|&n| f(n)).sum::<usize>();

    let t_malloc = {
        let layout = |size| std::alloc::Layout::from_size_align(size, 64).unwrap();
        let t0 = Instant::now();
        let ops = total_ops(&mut |n| {
            mixed_workload(
                n,
                // SAFETY: non-zero size; freed below with the same layout, once.
                |size| unsafe { std::alloc::alloc(layout(size)) } as usize,
                |p, size| unsafe { std::alloc::dealloc(p as *mut u8, layout(size)) },
            )
        });
        t0.elapsed().as_nanos() as f64 / ops as f64
    };

    let dag = Dag::new();
    let p = pool(&dag);
    let q = dag.create_lane(QueueOrder::InOrder);
    let t0 = Instant::now();
    let ops = total_ops(&mut |n| {
        let ops = mixed_workload(
            n,
            |size| p.alloc(&q, &[], size, 0, false).unwrap().ptr.as_ptr() as usize,
            |mem, _| {
                p.free(&q, &[], mem as *const u8, false).unwrap();
            },
        );
        // The queue drains and the host synchronises (urQueueFinish).
        dag.complete(q.tail());
        p.collect();
        ops
    });
    let ns = t0.elapsed().as_nanos() as f64 / ops as f64;
    let s = p.stats();
    println!(
        "{:<62} {:>8.1} ns/op",
        "baseline: global allocator (+ a size map)", t_malloc
    );
    println!("{:<62} {:>8.1} ns/op", "engine", ns);
    let (arena_high, used_high) = first_fit_arena(&batches, p.config().granule);
    println!(
        "{:<62} {:>8.3}    (arena high {} KiB / used high {} KiB)",
        "baseline: first fit in one unbounded arena, high / used high",
        arena_high as f64 / used_high as f64,
        arena_high >> 10,
        used_high >> 10
    );
    println!(
        "{:<62} {:>8.3}    (reserved high {} KiB / used high {} KiB; goal <= 1.25)",
        "engine: reserved high / used high",
        s.reserved_high as f64 / s.used_high as f64,
        s.reserved_high >> 10,
        s.used_high >> 10
    );
}

/// The same batches placed by address-ordered first fit in one contiguous
/// arena that grows at its top as needed: no slabs, free neighbours merged
/// at once, a free block at the top given back. What placement alone can
/// do on this sequence (without moving blocks): returns the arena's high
/// water and the used high water, in bytes.
fn first_fit_arena(batches: &[usize], granule: usize) -> (usize, usize) {
    use std::collections::BTreeMap;
    struct Arena {
        holes: BTreeMap<usize, usize>,
        top: usize,
        top_high: usize,
        sizes: std::collections::HashMap<usize, usize>,
        used: usize,
        used_high: usize,
    }
    let arena = std::cell::RefCell::new(Arena {
        holes: BTreeMap::new(),
        top: 0,
        top_high: 0,
        sizes: Default::default(),
        used: 0,
        used_high: 0,
    });
    let alloc = |size: usize| {
        let a = &mut *arena.borrow_mut();
        let need = size.div_ceil(granule) * granule;
        let hole = a
            .holes
            .iter()
            .find(|(_, &len)| len >= need)
            .map(|(&at, &len)| (at, len));
        let at = match hole {
            Some((at, len)) => {
                a.holes.remove(&at);
                if len > need {
                    a.holes.insert(at + need, len - need);
                }
                at
            }
            None => {
                // Grow at the top, starting in a free block that ends there.
                let start = match a.holes.last_key_value() {
                    Some((&at, &len)) if at + len == a.top => {
                        a.holes.remove(&at);
                        at
                    }
                    _ => a.top,
                };
                a.top = start + need;
                a.top_high = a.top_high.max(a.top);
                start
            }
        };
        a.sizes.insert(at + 1, need); // + 1: address 0 is a real block here
        a.used += need;
        a.used_high = a.used_high.max(a.used);
        at + 1
    };
    let free = |mem: usize, _| {
        let a = &mut *arena.borrow_mut();
        let need = a.sizes.remove(&mem).expect("a live block");
        a.used -= need;
        let (mut at, mut len) = (mem - 1, need);
        if let Some(next) = a.holes.remove(&(at + len)) {
            len += next;
        }
        if let Some((&prev, &prev_len)) = a.holes.range(..at).next_back() {
            if prev + prev_len == at {
                a.holes.remove(&prev);
                (at, len) = (prev, prev_len + len);
            }
        }
        if at + len == a.top {
            a.top = at;
        } else {
            a.holes.insert(at, len);
        }
    };
    for &n in batches {
        mixed_workload(n, alloc, free);
    }
    let a = arena.into_inner();
    (a.top_high, a.used_high)
}

fn main() {
    let pairs = pairs();
    if std::env::var("ENGINE_BENCH_ONLY_MIXED").is_err() {
        fast_path(pairs);
        two_threads(pairs);
    }
    let mixed = std::env::var("ENGINE_BENCH_MIXED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    mixed_sizes(mixed);
}
