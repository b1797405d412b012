//! Micro-benchmark of the async pool engine: nanoseconds per allocation +
//! free pair, beside baselines measured in the same run.
//!
//! `cargo run --release -p ur_core --example engine_bench`

use std::hint::black_box;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use ur_core::engine::*;

fn pairs() -> usize {
    std::env::var("ENGINE_BENCH_PAIRS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000_000)
}

fn per_pair(pairs: usize, f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_nanos() as f64 / pairs as f64
}

fn report(name: &str, ns: f64) {
    println!("{name:<58} {ns:>8.1} ns/pair");
}

fn pool(dag: &Arc<Dag>) -> Pool {
    Pool::new(
        dag.clone(),
        Arc::new(HostMemory::new()),
        PoolConfig::new(UsmKind::Device),
    )
}

fn main() {
    #[allow(non_snake_case)]
    let PAIRS = pairs();
    let sizes = [64usize, 1000, 4096];

    // Baselines.
    let ns = per_pair(PAIRS, || {
        for i in 0..PAIRS {
            let layout = std::alloc::Layout::from_size_align(sizes[i % 3], 64).unwrap();
            // SAFETY: non-zero size; freed with the same layout.
            unsafe {
                let p = std::alloc::alloc(layout);
                black_box(p);
                std::alloc::dealloc(p, layout);
            }
        }
    });
    report("baseline: global allocator alloc+dealloc", ns);
    let m = Mutex::new(0u64);
    let ns = per_pair(PAIRS, || {
        for _ in 0..PAIRS {
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
    let ns = per_pair(PAIRS, || {
        for _ in 0..PAIRS {
            let a = p.alloc(&q, &[], 256, 0, false).unwrap();
            p.free(&q, &[], black_box(a.ptr.as_ptr()), false).unwrap();
        }
    });
    report("engine: in-order, no events, kernel pending, one size", ns);
    let ns = per_pair(PAIRS, || {
        for i in 0..PAIRS {
            let a = p.alloc(&q, &[], sizes[i % 3], 0, false).unwrap();
            p.free(&q, &[], black_box(a.ptr.as_ptr()), false).unwrap();
        }
    });
    report("engine: in-order, no events, kernel pending, 3 sizes", ns);
    dag.complete(kernel);

    let ns = per_pair(PAIRS, || {
        for i in 0..PAIRS {
            let a = p.alloc(&q, &[], sizes[i % 3], 0, false).unwrap();
            p.free(&q, &[], black_box(a.ptr.as_ptr()), false).unwrap();
        }
    });
    report("engine: in-order, no events, queue idle, 3 sizes", ns);

    // Interleaved kernels that complete: nodes come and go.
    let ns = per_pair(PAIRS, || {
        for i in 0..PAIRS {
            let a = p.alloc(&q, &[], sizes[i % 3], 0, false).unwrap();
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
    let pairs = PAIRS / 4;
    let ns = per_pair(pairs, || {
        let mut last = None;
        for i in 0..pairs {
            let wait: Vec<Stamp> = last.into_iter().collect();
            let a = p.alloc(&q1, &wait, sizes[i % 3], 0, true).unwrap();
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

    // Two threads, one in-order queue each, one shared pool.
    let shared = Arc::new(pool(&dag));
    let ns = per_pair(PAIRS, || {
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let p = shared.clone();
                let q = dag.create_lane(QueueOrder::InOrder);
                std::thread::spawn(move || {
                    for i in 0..PAIRS / 2 {
                        let a = p.alloc(&q, &[], sizes[i % 3], 0, false).unwrap();
                        p.free(&q, &[], black_box(a.ptr.as_ptr()), false).unwrap();
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
    });
    report("engine: 2 threads x in-order, one pool (wall / total)", ns);
    println!("in flight at the end: {} nodes", dag.in_flight());
}
