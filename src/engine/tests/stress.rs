//! Several producer threads enqueue allocations, kernels and frees on shared
//! out-of-order queues (and one in-order queue each) with random wait lists;
//! executor threads run whatever is ready in any order and report completion.
//! Each allocation fills its block with a unique tag and each kernel checks it.

use crate::engine::testkit::Rng;
use crate::engine::*;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::*};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

enum Work {
    Fill { addr: usize, len: usize, tag: u32 },
    Check { addr: usize, len: usize, tag: u32 },
    Nothing,
}

struct Task {
    stamp: Stamp,
    deps: Vec<Stamp>,
    work: Work,
}

struct Shared {
    dag: Arc<Dag>,
    pool: Pool,
    queues: Vec<Arc<Lane>>,
    tasks: Mutex<Vec<Task>>,
    ready: Condvar,
    recent: Mutex<VecDeque<Stamp>>,
    producing: AtomicU32,
    failed: AtomicBool,
    next_tag: AtomicU32,
}

impl Shared {
    fn submit(&self, stamp: Option<Stamp>, deps: Vec<Stamp>, work: Work) {
        let Some(stamp) = stamp else { return };
        self.tasks.lock().unwrap().push(Task { stamp, deps, work });
        self.ready.notify_one();
        let mut recent = self.recent.lock().unwrap();
        recent.push_back(stamp);
        if recent.len() > 32 {
            recent.pop_front();
        }
    }

    fn random_waits(&self, rng: &mut Rng) -> Vec<Stamp> {
        let recent = self.recent.lock().unwrap();
        let n = rng.below(3);
        let mut out: Vec<Stamp> = Vec::new();
        for _ in 0..n {
            if recent.is_empty() {
                break;
            }
            let s = recent[rng.below(recent.len() as u64) as usize];
            if !out.contains(&s) {
                out.push(s);
            }
        }
        out
    }

    fn throttle(&self) {
        while self.tasks.lock().unwrap().len() > 200 && !self.failed.load(Relaxed) {
            std::thread::yield_now();
        }
    }
}

struct Block {
    addr: usize,
    kernels: Vec<Stamp>,
}

fn produce(shared: &Shared, seed: u64, own: Arc<Lane>, ops: usize) {
    let mut rng = Rng::new(seed);
    let mut held: Vec<Block> = Vec::new();
    let mut own_tail: Option<Stamp> = None; // last stamped command on the in-order queue
    for _ in 0..ops {
        shared.throttle();
        let on_own_queue = rng.chance(4);
        if held.len() < 6 && rng.chance(2) {
            let size = 1 + rng.below(3000) as usize;
            let tag = shared.next_tag.fetch_add(1, Relaxed);
            if on_own_queue {
                // The in-order fast path: no event, and the first kernel fills the block.
                let a = shared.pool.alloc(&own, &[], size, 0, false).unwrap();
                let mut deps: Vec<Stamp> = own_tail.into_iter().collect();
                deps.extend_from_slice(a.deps.as_slice());
                if a.stamp.is_some() {
                    shared.submit(a.stamp, deps.clone(), Work::Nothing);
                    own_tail = a.stamp;
                    deps = own_tail.into_iter().collect();
                }
                let fill = shared.dag.record(&own, &[]);
                shared.submit(
                    Some(fill),
                    deps,
                    Work::Fill {
                        addr: a.ptr.as_ptr() as usize,
                        len: a.size,
                        tag,
                    },
                );
                let check = shared.dag.record(&own, &[]);
                shared.submit(
                    Some(check),
                    vec![fill],
                    Work::Check {
                        addr: a.ptr.as_ptr() as usize,
                        len: a.size,
                        tag,
                    },
                );
                own_tail = Some(check);
                let f = shared.pool.free(&own, &[], a.ptr.as_ptr(), false).unwrap();
                if let Some(s) = f.stamp {
                    let mut deps = vec![check];
                    deps.extend_from_slice(f.deps.as_slice());
                    shared.submit(Some(s), deps, Work::Nothing);
                    own_tail = Some(s);
                }
                continue;
            }
            let q = shared.queues[rng.below(shared.queues.len() as u64) as usize].clone();
            let wait = shared.random_waits(&mut rng);
            let a = match shared.pool.alloc(&q, &wait, size, 0, true) {
                Ok(a) => a,
                Err(_) => continue, // the pool is bounded: a clean failure is fine
            };
            let mut deps = wait;
            deps.extend_from_slice(a.deps.as_slice());
            let stamp = a.stamp.expect("an event was asked for");
            shared.submit(
                Some(stamp),
                deps,
                Work::Fill {
                    addr: a.ptr.as_ptr() as usize,
                    len: a.size,
                    tag,
                },
            );
            let mut kernels = Vec::new();
            for _ in 0..1 + rng.below(3) {
                let kq = shared.queues[rng.below(shared.queues.len() as u64) as usize].clone();
                let mut wait = shared.random_waits(&mut rng);
                wait.push(stamp);
                let k = shared.dag.record(&kq, &wait);
                shared.submit(
                    Some(k),
                    wait,
                    Work::Check {
                        addr: a.ptr.as_ptr() as usize,
                        len: a.size,
                        tag,
                    },
                );
                kernels.push(k);
            }
            held.push(Block {
                addr: a.ptr.as_ptr() as usize,
                kernels,
            });
        } else if !held.is_empty() {
            let b = held.swap_remove(rng.below(held.len() as u64) as usize);
            let q = shared.queues[rng.below(shared.queues.len() as u64) as usize].clone();
            let mut wait = b.kernels.clone();
            wait.extend(shared.random_waits(&mut rng));
            wait.dedup();
            let want_event = rng.chance(2);
            let f = shared
                .pool
                .free(&q, &wait, b.addr as *const u8, want_event)
                .unwrap();
            let mut deps = wait;
            deps.extend_from_slice(f.deps.as_slice());
            shared.submit(f.stamp, deps, Work::Nothing);
        }
    }
    for b in held {
        let q = shared.queues[0].clone();
        let f = shared
            .pool
            .free(&q, &b.kernels, b.addr as *const u8, false)
            .unwrap();
        let mut deps = b.kernels.clone();
        deps.extend_from_slice(f.deps.as_slice());
        shared.submit(f.stamp, deps, Work::Nothing);
    }
    shared.producing.fetch_sub(1, AcqRel);
    shared.ready.notify_all();
}

fn execute(shared: &Shared, seed: u64) {
    let mut rng = Rng::new(seed);
    loop {
        let task = {
            let mut tasks = shared.tasks.lock().unwrap();
            loop {
                let ready: Vec<usize> = (0..tasks.len())
                    .filter(|&i| tasks[i].deps.iter().all(|d| shared.dag.is_complete(*d)))
                    .collect();
                if let Some(&i) = rng.pick(&ready) {
                    break Some(tasks.swap_remove(i));
                }
                if shared.failed.load(Relaxed)
                    || (tasks.is_empty() && shared.producing.load(Acquire) == 0)
                {
                    break None;
                }
                tasks = shared
                    .ready
                    .wait_timeout(tasks, Duration::from_millis(1))
                    .unwrap()
                    .0;
            }
        };
        let Some(task) = task else { return };
        match task.work {
            Work::Fill { addr, len, tag } => {
                // SAFETY: the engine handed this block to the task's owner.
                let words = unsafe { std::slice::from_raw_parts_mut(addr as *mut u32, len / 4) };
                words.fill(tag);
            }
            Work::Check { addr, len, tag } => {
                // SAFETY: as above.
                let words = unsafe { std::slice::from_raw_parts(addr as *const u32, len / 4) };
                if let Some(w) = words.iter().find(|&&w| w != tag) {
                    shared.failed.store(true, Relaxed);
                    panic!("block at {addr:#x} holds tag {w}, expected {tag}");
                }
            }
            Work::Nothing => {}
        }
        shared.dag.complete(task.stamp);
        shared.ready.notify_all();
    }
}

#[test]
fn threads_on_shared_out_of_order_queues_keep_data_intact() {
    const PRODUCERS: usize = 4;
    const EXECUTORS: usize = 2;
    let dag = Dag::new();
    let mut config = PoolConfig::new(UsmKind::Device);
    config.min_slab_size = 64 * 1024;
    config.max_size = 1 << 20;
    let pool = Pool::new(dag.clone(), Arc::new(HostMemory::new()), config);
    let queues = (0..3)
        .map(|_| dag.create_lane(QueueOrder::OutOfOrder))
        .collect();
    let shared = Arc::new(Shared {
        dag: dag.clone(),
        pool,
        queues,
        tasks: Mutex::new(Vec::new()),
        ready: Condvar::new(),
        recent: Mutex::new(VecDeque::new()),
        producing: AtomicU32::new(PRODUCERS as u32),
        failed: AtomicBool::new(false),
        next_tag: AtomicU32::new(1),
    });
    let mut threads = Vec::new();
    for p in 0..PRODUCERS {
        let s = shared.clone();
        let own = dag.create_lane(QueueOrder::InOrder);
        threads.push(std::thread::spawn(move || {
            produce(&s, 1000 + p as u64, own, 3000)
        }));
    }
    for e in 0..EXECUTORS {
        let s = shared.clone();
        threads.push(std::thread::spawn(move || execute(&s, 2000 + e as u64)));
    }
    let results: Vec<_> = threads.into_iter().map(|t| t.join()).collect();
    assert!(results.iter().all(|r| r.is_ok()), "a thread failed");
    assert!(shared.tasks.lock().unwrap().is_empty());
    shared.pool.collect();
    assert_eq!(shared.pool.stats().used_current, 0);
    assert_eq!(shared.pool.pending_blocks(), 0);
    assert_eq!(dag.in_flight(), 0);
    shared.pool.trim_to(0);
    assert_eq!(shared.pool.stats().reserved_current, 0);
}
