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

    /// Waits for a command to complete, or panics if the run has failed
    /// (the executors stop then, and nothing would complete it).
    fn wait(&self, s: Stamp) {
        while !self.dag.is_complete(s) {
            assert!(!self.failed.load(Relaxed), "another thread failed");
            std::thread::sleep(Duration::from_micros(50));
        }
    }

    fn throttle(&self) {
        while self.tasks.lock().unwrap().len() > 200 && !self.failed.load(Relaxed) {
            std::thread::yield_now();
        }
    }
}

/// Marks a producer finished when dropped, and the run failed when that
/// happens in a panic, so that the executors stop instead of waiting.
struct Producing<'s>(&'s Shared);

impl Drop for Producing<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.failed.store(true, Relaxed);
        }
        self.0.producing.fetch_sub(1, AcqRel);
        self.0.ready.notify_all();
    }
}

struct Block {
    addr: usize,
    kernels: Vec<Stamp>,
}

fn produce(shared: &Shared, seed: u64, own: Arc<Lane>, ops: usize) {
    let _producing = Producing(shared);
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

/// A block one producer holds: its tag and the last command that touched it.
struct Held {
    addr: usize,
    len: usize,
    tag: u32,
    last: Stamp,
}

/// One producer on an in-order queue of its own, using the lane caches'
/// fast path for most of its work: alloc, fill, check, free with no wait
/// list and no event. Blocks also go to other producers, which free them
/// on their own queues (a cached block freed through another lane), and
/// some go back with a blocking free or through host synchronisation.
fn produce_on_own_queue(
    shared: &Shared,
    seed: u64,
    lanes: &[Arc<Lane>],
    inboxes: &[Mutex<Vec<Held>>],
    me: usize,
    ops: usize,
) {
    const SIZES: [usize; 5] = [64, 256, 1000, 4096, 1000];
    let _producing = Producing(shared);
    let mut rng = Rng::new(seed);
    let own = &lanes[me];
    let mut tail: Option<Stamp> = None; // last command submitted on `own`
    let mut held: Vec<Held> = Vec::new();
    // Submits a command of `own`, after the previous one (in order).
    let submit_own = |stamp: Stamp, mut deps: Vec<Stamp>, work: Work, tail: &mut Option<Stamp>| {
        deps.extend(tail.iter());
        shared.submit(Some(stamp), deps, work);
        *tail = Some(stamp);
    };
    let check_and_free = |h: Held, tail: &mut Option<Stamp>, blocking: bool| {
        let check = shared.dag.record(own, &[h.last]);
        let work = Work::Check {
            addr: h.addr,
            len: h.len,
            tag: h.tag,
        };
        submit_own(check, vec![h.last], work, tail);
        if blocking {
            shared.wait(check);
            shared
                .pool
                .free_blocking(h.addr as *const u8, |s| shared.wait(s))
                .unwrap();
            return;
        }
        let f = shared
            .pool
            .free(own, &[], h.addr as *const u8, false)
            .unwrap();
        if let Some(s) = f.stamp {
            submit_own(s, f.deps.as_slice().to_vec(), Work::Nothing, tail);
        }
    };
    for _ in 0..ops {
        shared.throttle();
        match rng.below(20) {
            0..=11 => {
                let size = if rng.chance(8) {
                    1 + rng.below(20_000) as usize
                } else {
                    SIZES[rng.below(SIZES.len() as u64) as usize]
                };
                let a = match shared.pool.alloc(own, &[], size, 0, false) {
                    Ok(a) => a,
                    Err(_) => continue, // the pool is bounded: a clean failure is fine
                };
                if let Some(s) = a.stamp {
                    submit_own(s, a.deps.as_slice().to_vec(), Work::Nothing, &mut tail);
                }
                let tag = shared.next_tag.fetch_add(1, Relaxed);
                let (addr, len) = (a.ptr.as_ptr() as usize, a.size);
                let fill = shared.dag.record(own, &[]);
                submit_own(fill, vec![], Work::Fill { addr, len, tag }, &mut tail);
                let h = Held {
                    addr,
                    len,
                    tag,
                    last: fill,
                };
                if held.len() < 8 && rng.chance(3) {
                    held.push(h);
                } else {
                    check_and_free(h, &mut tail, false);
                }
            }
            12..=14 if !held.is_empty() => {
                let h = held.swap_remove(rng.below(held.len() as u64) as usize);
                check_and_free(h, &mut tail, rng.chance(10));
            }
            15 if !held.is_empty() => {
                let h = held.swap_remove(rng.below(held.len() as u64) as usize);
                let to = rng.below(inboxes.len() as u64) as usize;
                inboxes[to].lock().unwrap().push(h);
            }
            16 => {
                let handed = std::mem::take(&mut *inboxes[me].lock().unwrap());
                for h in handed {
                    check_and_free(h, &mut tail, false);
                }
            }
            17 => {
                let s = shared.pool.stats();
                assert!(s.used_current <= s.used_high);
                assert!(s.used_current <= s.reserved_current);
                assert!(s.reserved_current <= s.reserved_high);
            }
            18 if rng.chance(4) => shared.pool.collect(),
            _ => {}
        }
    }
    for h in held {
        check_and_free(h, &mut tail, false);
    }
}

#[test]
fn threads_on_their_own_in_order_queues_share_a_pool_through_lane_caches() {
    const PRODUCERS: usize = 4;
    const EXECUTORS: usize = 2;
    let dag = Dag::new();
    let mem = Arc::new(HostMemory::new());
    let mut config = PoolConfig::new(UsmKind::Device);
    config.min_slab_size = 64 * 1024;
    config.max_size = 2 << 20;
    let pool = Pool::new(dag.clone(), mem.clone(), config);
    let lanes: Vec<Arc<Lane>> = (0..PRODUCERS)
        .map(|_| dag.create_lane(QueueOrder::InOrder))
        .collect();
    let shared = Arc::new(Shared {
        dag: dag.clone(),
        pool,
        queues: Vec::new(),
        tasks: Mutex::new(Vec::new()),
        ready: Condvar::new(),
        recent: Mutex::new(VecDeque::new()),
        // The producers, and this thread until it has freed what is left.
        producing: AtomicU32::new(PRODUCERS as u32 + 1),
        failed: AtomicBool::new(false),
        next_tag: AtomicU32::new(1),
    });
    let inboxes: Arc<Vec<Mutex<Vec<Held>>>> =
        Arc::new((0..PRODUCERS).map(|_| Mutex::new(Vec::new())).collect());
    let mut producers = Vec::new();
    for p in 0..PRODUCERS {
        let (s, lanes, inboxes) = (shared.clone(), lanes.clone(), inboxes.clone());
        producers.push(std::thread::spawn(move || {
            produce_on_own_queue(&s, 3000 + p as u64, &lanes, &inboxes, p, 4000);
        }));
    }
    let executors: Vec<_> = (0..EXECUTORS)
        .map(|e| {
            let s = shared.clone();
            std::thread::spawn(move || execute(&s, 4000 + e as u64))
        })
        .collect();
    let producing = Producing(&shared);
    let produced: Vec<_> = producers.into_iter().map(|t| t.join()).collect();
    // Blocks still in an inbox when their receiver stopped: freed here, after
    // their last command, on an in-order queue of this thread's own. (Not on
    // a producer's: a free there not chained after that queue's last
    // command could complete first and, the queue being in order, mark the
    // commands before it complete before they ran.)
    let cleanup = dag.create_lane(QueueOrder::InOrder);
    let mut tail: Option<Stamp> = None;
    for h in inboxes
        .iter()
        .flat_map(|i| std::mem::take(&mut *i.lock().unwrap()))
    {
        let f = shared
            .pool
            .free(&cleanup, &[h.last], h.addr as *const u8, false)
            .unwrap();
        let mut deps = vec![h.last];
        deps.extend_from_slice(f.deps.as_slice());
        deps.extend(tail);
        if f.stamp.is_some() {
            tail = f.stamp;
        }
        shared.submit(f.stamp, deps, Work::Nothing);
    }
    drop(producing);
    let executed: Vec<_> = executors.into_iter().map(|t| t.join()).collect();
    assert!(
        produced.iter().chain(&executed).all(|r| r.is_ok()),
        "a thread failed"
    );
    assert!(shared.tasks.lock().unwrap().is_empty());
    let s = shared.pool.stats();
    assert_eq!((s.used_current, shared.pool.live_blocks()), (0, 0));
    assert_eq!(s.reserved_current, mem.taken());
    shared.pool.collect();
    assert_eq!(shared.pool.pending_blocks(), 0);
    assert_eq!(dag.in_flight(), 0);
    shared.pool.trim_to(0);
    assert_eq!((shared.pool.stats().reserved_current, mem.taken()), (0, 0));
}

/// A barrier that a panicking party breaks for everyone, so that a failed
/// run ends instead of waiting forever.
struct Rendezvous {
    parties: usize,
    state: Mutex<(usize, u64, bool)>, // (arrived, generation, broken)
    changed: Condvar,
}

impl Rendezvous {
    fn new(parties: usize) -> Self {
        Rendezvous {
            parties,
            state: Mutex::new((0, 0, false)),
            changed: Condvar::new(),
        }
    }

    fn wait(&self) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let generation = st.1;
        st.0 += 1;
        if st.0 == self.parties {
            *st = (0, generation + 1, st.2);
            self.changed.notify_all();
        }
        while st.1 == generation && !st.2 {
            st = self.changed.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        assert!(!st.2, "another party failed");
    }

    /// Breaks the barrier if the calling thread is panicking.
    fn leave(&self) {
        if std::thread::panicking() {
            self.state.lock().unwrap_or_else(|e| e.into_inner()).2 = true;
            self.changed.notify_all();
        }
    }
}

/// Calls [`Rendezvous::leave`] when dropped.
struct Party<'r>(&'r Rendezvous);

impl Drop for Party<'_> {
    fn drop(&mut self) {
        self.0.leave();
    }
}

#[test]
fn used_high_water_is_exact_with_threads_on_lane_caches() {
    const THREADS: usize = 4;
    const ROUNDS: usize = 300;
    const SIZES: [usize; 4] = [64, 512, 3000, 20_000];
    let dag = Dag::new();
    let pool = Arc::new(Pool::new(
        dag.clone(),
        Arc::new(HostMemory::new()),
        PoolConfig::new(UsmKind::Host),
    ));
    let granule = pool.config().granule;
    // What thread `t` holds in round `r`: one to three blocks.
    let sizes_of = |t: usize, r: usize| -> Vec<usize> {
        let mut rng = Rng::new((r * THREADS + t) as u64);
        (0..1 + rng.below(3))
            .map(|_| SIZES[rng.below(SIZES.len() as u64) as usize])
            .collect()
    };
    let rounded = |s: usize| s.div_ceil(granule) * granule;
    let barrier = Arc::new(Rendezvous::new(THREADS + 1));
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let (pool, barrier) = (pool.clone(), barrier.clone());
            let lane = dag.create_lane(QueueOrder::InOrder);
            std::thread::spawn(move || {
                let _party = Party(&barrier);
                for r in 0..ROUNDS {
                    let blocks: Vec<_> = sizes_of(t, r)
                        .into_iter()
                        .map(|s| pool.alloc(&lane, &[], s, 0, false).unwrap())
                        .collect();
                    barrier.wait(); // everyone holds their blocks
                    barrier.wait(); // the counters have been read
                    for a in blocks {
                        pool.free(&lane, &[], a.ptr.as_ptr(), false).unwrap();
                    }
                    barrier.wait(); // everything is freed
                    barrier.wait(); // the counters have been read again
                }
            })
        })
        .collect();
    let party = Party(&barrier);
    let mut high = 0;
    for r in 0..ROUNDS {
        barrier.wait();
        let held: usize = (0..THREADS).flat_map(|t| sizes_of(t, r)).map(rounded).sum();
        high = high.max(held);
        let s = pool.stats();
        assert_eq!((s.used_current, s.used_high), (held, high), "round {r}");
        if r % 50 == 49 {
            // Restarting the mark while blocks are held.
            pool.reset_used_high();
            high = held;
        }
        barrier.wait();
        barrier.wait();
        let s = pool.stats();
        assert_eq!(
            (s.used_current, s.used_high),
            (0, high),
            "round {r}, all freed"
        );
        barrier.wait();
    }
    drop(party);
    threads.into_iter().for_each(|t| t.join().unwrap());
}
