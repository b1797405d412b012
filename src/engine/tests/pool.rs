//! Pool behaviour, one rule at a time, on real host memory.

use crate::abi::*;
use crate::engine::*;
use std::sync::Arc;

const KIB: usize = 1024;

fn setup(config: PoolConfig) -> (Arc<Dag>, Arc<HostMemory>, Pool) {
    let dag = Dag::new();
    let mem = Arc::new(HostMemory::new());
    let pool = Pool::new(dag.clone(), mem.clone(), config);
    (dag, mem, pool)
}

fn small_slabs(kind: UsmKind) -> PoolConfig {
    PoolConfig {
        min_slab_size: 64 * KIB,
        ..PoolConfig::new(kind)
    }
}

/// `setup`, and one in-order queue.
fn setup_in_order(config: PoolConfig) -> (Arc<Dag>, Arc<HostMemory>, Pool, Arc<Lane>) {
    let (dag, mem, pool) = setup(config);
    let q = dag.create_lane(QueueOrder::InOrder);
    (dag, mem, pool, q)
}

/// Frees `block` with a blocking free that completes what it waits for;
/// returns that (`None`: it did not wait).
fn free_blocking_completing(pool: &Pool, dag: &Dag, block: &Allocation) -> Option<Stamp> {
    let mut waited = None;
    pool.free_blocking(block.ptr.as_ptr(), |s| {
        waited = Some(s);
        dag.complete(s);
    })
    .unwrap();
    waited
}

/// The calls most of these tests make: no wait list, the default
/// alignment, no event asked for; each must succeed.
trait PlainCalls {
    fn alloc_plain(&self, q: &Arc<Lane>, size: usize) -> Allocation;
    fn free_plain(&self, q: &Arc<Lane>, block: &Allocation) -> FreeOutcome;
}

impl PlainCalls for Pool {
    fn alloc_plain(&self, q: &Arc<Lane>, size: usize) -> Allocation {
        self.alloc(q, &[], size, 0, false).unwrap()
    }

    fn free_plain(&self, q: &Arc<Lane>, block: &Allocation) -> FreeOutcome {
        self.free(q, &[], block.ptr.as_ptr(), false).unwrap()
    }
}

/// Two queues of `order`.
fn two_lanes(dag: &Dag, order: QueueOrder) -> (Arc<Lane>, Arc<Lane>) {
    (dag.create_lane(order), dag.create_lane(order))
}

/// A second host pool on the same DAG, over memory of its own: its blocks
/// are foreign to the pool under test.
fn other_pool(dag: &Arc<Dag>) -> Pool {
    Pool::new(
        dag.clone(),
        Arc::new(HostMemory::new()),
        small_slabs(UsmKind::Host),
    )
}

/// `(dag, pool, q1, q2, k, block)`: a device pool with two in-order queues,
/// and a block that `q1` allocated, freed and took back from its cache while
/// the kernel `k` on `q1` may still use it: `k` guards the block.
fn block_guarded_by_a_kernel() -> (Arc<Dag>, Pool, Arc<Lane>, Arc<Lane>, Stamp, Allocation) {
    let (dag, _, pool) = setup(small_slabs(UsmKind::Device));
    let (q1, q2) = two_lanes(&dag, QueueOrder::InOrder);
    let k = dag.record(&q1, &[]);
    let a = pool.alloc_plain(&q1, 1000);
    pool.free_plain(&q1, &a);
    let block = pool.alloc_plain(&q1, 1000);
    assert_eq!(block.ptr, a.ptr, "the same block, from q1's cache");
    (dag, pool, q1, q2, k, block)
}

#[test]
fn in_order_alloc_free_pairs_create_no_nodes_and_reuse_at_once() {
    let (dag, _, pool, q) = setup_in_order(small_slabs(UsmKind::Device));
    // Work in flight on the queue, never completed during the test.
    let k = dag.record(&q, &[]);
    let a = pool.alloc_plain(&q, 1000);
    assert!(a.stamp.is_none() && a.deps.is_empty());
    let f = pool.free_plain(&q, &a);
    assert!(f.stamp.is_none() && f.deps.is_empty());
    assert_eq!(pool.pending_blocks(), 1, "the free waits behind the kernel");
    let reserved = pool.stats().reserved_current;
    let mut ptrs = std::collections::HashSet::new();
    for _ in 0..1000 {
        let b = pool.alloc_plain(&q, 1000);
        assert!(b.stamp.is_none() && b.deps.is_empty());
        ptrs.insert(b.ptr);
        pool.free_plain(&q, &b);
    }
    assert_eq!(dag.in_flight(), 1, "only the kernel is a node");
    assert_eq!(pool.stats().reserved_current, reserved, "no growth");
    assert!(
        ptrs.len() <= 2,
        "the slab's rest, then the same block again: {}",
        ptrs.len()
    );
    dag.complete(k);
    pool.collect();
    assert_eq!(pool.pending_blocks(), 0);
}

#[test]
fn another_queue_waits_for_completion_or_ordering() {
    let config = PoolConfig {
        policy: ReusePolicy {
            allow_internal_dependencies: false,
            ..Default::default()
        },
        ..small_slabs(UsmKind::Device)
    };
    let (dag, _, pool) = setup(config);
    let (q1, q2) = two_lanes(&dag, QueueOrder::OutOfOrder);
    // Fill the slab so that only the freed block could be reused.
    let a = pool.alloc(&q1, &[], 64 * KIB, 0, true).unwrap();
    dag.complete(a.stamp.unwrap());
    let use_a = dag.record(&q1, &[a.stamp.unwrap()]);
    let f = pool.free(&q1, &[use_a], a.ptr.as_ptr(), true).unwrap();
    let free_stamp = f.stamp.unwrap();

    // Unordered and incomplete: q2 gets fresh memory.
    let b = pool.alloc(&q2, &[], 64 * KIB, 0, true).unwrap();
    assert_ne!(b.ptr, a.ptr);
    assert!(b.deps.is_empty());
    // Ordered through the wait list: reuse with no extra dependency.
    let c = pool.alloc(&q2, &[free_stamp], 64 * KIB, 0, true).unwrap();
    assert_eq!(c.ptr, a.ptr);
    assert!(c.deps.is_empty());
    assert!(dag.is_ordered_before(free_stamp, c.stamp.unwrap()));
    pool.free(&q2, &[c.stamp.unwrap()], c.ptr.as_ptr(), true)
        .unwrap();
    pool.free(&q2, &[b.stamp.unwrap()], b.ptr.as_ptr(), true)
        .unwrap();
}

#[test]
fn a_completed_free_is_reused_anywhere() {
    let (dag, _, pool) = setup(small_slabs(UsmKind::Host));
    let (q1, q2) = two_lanes(&dag, QueueOrder::OutOfOrder);
    let a = pool.alloc_plain(&q1, 64 * KIB);
    let f = pool.free_plain(&q1, &a);
    dag.complete(f.stamp.unwrap());
    let b = pool.alloc_plain(&q2, 64 * KIB);
    assert_eq!(b.ptr, a.ptr);
    assert!(b.deps.is_empty() && b.stamp.is_none());
}

#[test]
fn without_opportunistic_reuse_completion_is_seen_only_at_collect() {
    let config = PoolConfig {
        policy: ReusePolicy {
            allow_opportunistic: false,
            allow_internal_dependencies: false,
            ..Default::default()
        },
        ..small_slabs(UsmKind::Host)
    };
    let (dag, _, pool) = setup(config);
    let (q1, q2) = two_lanes(&dag, QueueOrder::OutOfOrder);
    let a = pool.alloc_plain(&q1, 64 * KIB);
    let f = pool.free_plain(&q1, &a);
    dag.complete(f.stamp.unwrap());
    let b = pool.alloc_plain(&q2, 64 * KIB);
    assert_ne!(b.ptr, a.ptr, "completion is not checked at allocation time");
    pool.collect();
    let c = pool.alloc_plain(&q2, 64 * KIB);
    assert_eq!(c.ptr, a.ptr);
}

#[test]
fn internal_dependency_is_returned_when_allowed() {
    let (dag, _, pool) = setup(PoolConfig {
        max_size: 64 * KIB,
        ..small_slabs(UsmKind::Device)
    });
    let (q1, q2) = two_lanes(&dag, QueueOrder::OutOfOrder);
    let a = pool.alloc(&q1, &[], 64 * KIB, 0, true).unwrap();
    let f = pool
        .free(&q1, &[a.stamp.unwrap()], a.ptr.as_ptr(), true)
        .unwrap();
    let b = pool.alloc_plain(&q2, 64 * KIB);
    assert_eq!(b.ptr, a.ptr);
    assert_eq!(b.deps.as_slice(), &[f.stamp.unwrap()]);
    let s = b
        .stamp
        .expect("an allocation with a dependency is a command");
    assert!(dag.is_ordered_before(f.stamp.unwrap(), s));
}

#[test]
fn strict_policy_never_takes_pending_blocks_of_other_queues() {
    let config = PoolConfig {
        max_size: 64 * KIB,
        policy: ReusePolicy::STRICT,
        ..small_slabs(UsmKind::Device)
    };
    let (dag, _, pool) = setup(config);
    let (q1, q2) = two_lanes(&dag, QueueOrder::InOrder);
    let k = dag.record(&q1, &[]);
    let a = pool.alloc_plain(&q1, 64 * KIB);
    pool.free_plain(&q1, &a);
    let before = pool.stats();
    assert_eq!(
        pool.alloc(&q2, &[k], 64 * KIB, 0, false).unwrap_err(),
        UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY
    );
    assert_eq!(pool.stats(), before, "a failed allocation changes nothing");
    // The same in-order queue may always reuse.
    let b = pool.alloc_plain(&q1, 64 * KIB);
    assert_eq!(b.ptr, a.ptr);
}

#[test]
fn bad_frees_are_rejected_and_release_nothing() {
    let (dag, _, pool) = setup(small_slabs(UsmKind::Host));
    let other = other_pool(&dag);
    let q = dag.create_lane(QueueOrder::InOrder);
    let a = pool.alloc_plain(&q, 256);
    let foreign = other.alloc_plain(&q, 256);
    let stats = pool.stats();
    let interior = unsafe { a.ptr.as_ptr().add(64) };
    for bad in [
        interior,
        foreign.ptr.as_ptr(),
        std::ptr::null_mut(),
        8 as *mut u8,
    ] {
        assert_eq!(
            pool.free(&q, &[], bad, false).unwrap_err(),
            UR_RESULT_ERROR_INVALID_VALUE
        );
        assert_eq!(
            pool.free_blocking(bad, |_| ()).unwrap_err(),
            UR_RESULT_ERROR_INVALID_VALUE
        );
    }
    assert_eq!(pool.stats(), stats);
    assert!(pool.owns(a.ptr.as_ptr()));
    pool.free_plain(&q, &a);
    assert_eq!(
        pool.free(&q, &[], a.ptr.as_ptr(), false).unwrap_err(),
        UR_RESULT_ERROR_INVALID_VALUE,
        "double free"
    );
    assert_eq!(
        pool.free_blocking(a.ptr.as_ptr(), |_| ()).unwrap_err(),
        UR_RESULT_ERROR_INVALID_VALUE
    );
    assert_eq!(pool.stats().used_current, 0);
    // Nothing was recorded for the failed calls.
    assert_eq!(q.tail().seq, 0);
    other.free_plain(&q, &foreign);
}

#[test]
fn stats_track_reserved_and_used_with_high_marks() {
    let (_dag, mem, pool, q) = setup_in_order(small_slabs(UsmKind::Device));
    let a = pool.alloc_plain(&q, 1000);
    let b = pool.alloc_plain(&q, 3000);
    let s = pool.stats();
    assert_eq!(s.reserved_current, 64 * KIB);
    assert_eq!(mem.taken(), 64 * KIB);
    assert_eq!(s.used_current, 1024 + 3008);
    assert_eq!(s.used_high, s.used_current);
    pool.free_plain(&q, &a);
    let s = pool.stats();
    assert_eq!((s.used_current, s.used_high), (3008, 1024 + 3008));
    assert_eq!(pool.info(UR_USM_POOL_INFO_USED_HIGH_EXP), Ok(4032));
    pool.set_info(UR_USM_POOL_INFO_USED_HIGH_EXP, 0).unwrap();
    assert_eq!(pool.info(UR_USM_POOL_INFO_USED_HIGH_EXP), Ok(3008));
    assert_eq!(
        pool.set_info(UR_USM_POOL_INFO_USED_HIGH_EXP, 5),
        Err(UR_RESULT_ERROR_INVALID_VALUE)
    );
    assert_eq!(
        pool.info(UR_USM_POOL_INFO_RESERVED_CURRENT_EXP),
        Ok(64 * KIB)
    );
    assert_eq!(
        pool.info(ur_usm_pool_info_t(0x2056)),
        Err(UR_RESULT_ERROR_INVALID_ENUMERATION)
    );
    assert_eq!(
        pool.info(UR_USM_POOL_INFO_CONTEXT),
        Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION)
    );
    assert_eq!(
        pool.set_info(UR_USM_POOL_INFO_USED_CURRENT_EXP, 0),
        Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION)
    );
    pool.free_plain(&q, &b);
    pool.trim_to(0);
    let s = pool.stats();
    assert_eq!(
        (s.reserved_current, s.reserved_high, s.used_current),
        (0, 64 * KIB, 0)
    );
    pool.reset_reserved_high();
    assert_eq!(pool.stats().reserved_high, 0);
    assert_eq!(mem.taken(), 0);
}

#[test]
fn release_threshold_gives_memory_back_only_once_free_and_complete() {
    let (dag, mem, pool) = setup(small_slabs(UsmKind::Device));
    pool.set_info(UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP, 64 * KIB)
        .unwrap();
    assert_eq!(pool.release_threshold(), 64 * KIB);
    let q = dag.create_lane(QueueOrder::InOrder);
    let blocks: Vec<_> = (0..3).map(|_| pool.alloc_plain(&q, 64 * KIB)).collect();
    assert_eq!(mem.taken(), 192 * KIB);
    let k = dag.record(&q, &[]);
    for b in &blocks {
        pool.free_plain(&q, b);
    }
    pool.collect();
    assert_eq!(
        mem.taken(),
        192 * KIB,
        "the kernel may still use the blocks"
    );
    dag.complete(k);
    pool.collect();
    assert_eq!(pool.stats().reserved_current, 64 * KIB);
    assert_eq!(mem.taken(), 64 * KIB);
    pool.set_release_threshold(0);
    assert_eq!(mem.taken(), 0);
}

#[test]
fn trim_keeps_what_pending_commands_may_touch() {
    let (dag, mem, pool, q) = setup_in_order(small_slabs(UsmKind::Host));
    let a = pool.alloc_plain(&q, 64 * KIB);
    let b = pool.alloc_plain(&q, 64 * KIB);
    pool.free_plain(&q, &a); // complete at once: nothing recorded yet
    let k = dag.record(&q, &[]);
    pool.free_plain(&q, &b);
    pool.trim_to(0);
    assert_eq!(mem.taken(), 64 * KIB, "b's slab is still in use by k");
    dag.complete(k);
    pool.trim_to(0);
    assert_eq!(mem.taken(), 0);
}

#[test]
fn out_of_memory_fails_cleanly_and_keeps_earlier_blocks() {
    let dag = Dag::new();
    let mem = Arc::new(HostMemory::with_budget(256 * KIB));
    let pool = Pool::new(dag.clone(), mem.clone(), small_slabs(UsmKind::Host));
    let q = dag.create_lane(QueueOrder::InOrder);
    let mut held = Vec::new();
    let err = loop {
        match pool.alloc(&q, &[], 40 * KIB, 0, false) {
            Ok(a) => {
                unsafe { a.ptr.as_ptr().write_bytes(held.len() as u8 + 1, a.size) };
                held.push(a);
            }
            Err(e) => break e,
        }
    };
    assert_eq!(err, UR_RESULT_ERROR_OUT_OF_HOST_MEMORY);
    assert_eq!(
        held.len(),
        4,
        "four 64 KiB slabs fit the budget, one 40 KiB block each"
    );
    let s = pool.stats();
    assert!(s.reserved_current <= 256 * KIB);
    for (n, a) in held.iter().enumerate() {
        let bytes = unsafe { std::slice::from_raw_parts(a.ptr.as_ptr(), a.size) };
        assert!(bytes.iter().all(|&x| x == n as u8 + 1), "block {n} intact");
    }
    // A device pool reports the device code.
    let dev = Pool::new(
        dag.clone(),
        Arc::new(HostMemory::with_budget(0)),
        small_slabs(UsmKind::Device),
    );
    assert_eq!(
        dev.alloc(&q, &[], 8, 0, false).unwrap_err(),
        UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY
    );
    // Freeing makes room again.
    pool.free_plain(&q, &held[0]);
    let again = pool.alloc_plain(&q, 40 * KIB);
    assert_eq!(again.ptr, held[0].ptr);
}

#[test]
fn max_size_limits_growth() {
    let (_dag, _, pool, q) = setup_in_order(PoolConfig {
        max_size: 100 * KIB,
        ..small_slabs(UsmKind::Shared)
    });
    let _a = pool.alloc_plain(&q, 60 * KIB);
    let b = pool.alloc_plain(&q, 30 * KIB);
    assert_eq!(
        pool.stats().reserved_current,
        100 * KIB,
        "the second slab was cut to the headroom"
    );
    assert_eq!(
        pool.alloc(&q, &[], 20 * KIB, 0, false).unwrap_err(),
        UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY
    );
    assert_eq!(pool.info(UR_USM_POOL_INFO_MAXIMUM_SIZE_EXP), Ok(100 * KIB));
    pool.set_max_size(200 * KIB);
    pool.alloc_plain(&q, 20 * KIB);
    pool.free_plain(&q, &b);
}

#[test]
fn oversized_allocations_get_their_own_memory_returned_on_completion() {
    let (dag, mem, pool) = setup(PoolConfig {
        max_poolable_size: 4 * KIB,
        ..small_slabs(UsmKind::Device)
    });
    let q = dag.create_lane(QueueOrder::OutOfOrder);
    let a = pool.alloc_plain(&q, 100 * KIB);
    assert_eq!(mem.taken(), 100 * KIB);
    let f = pool.free_plain(&q, &a);
    assert_eq!(mem.taken(), 100 * KIB);
    dag.complete(f.stamp.unwrap());
    pool.collect();
    assert_eq!(mem.taken(), 0);
    assert_eq!(pool.stats().reserved_current, 0);
}

#[test]
fn zero_init_asks_the_adapter_to_zero_in_a_command() {
    let (_dag, _, pool, q) = setup_in_order(PoolConfig {
        zero_init: true,
        ..small_slabs(UsmKind::Device)
    });
    let a = pool.alloc_plain(&q, 100);
    assert!(a.zero);
    assert!(a.stamp.is_some(), "zeroing touches memory, so it is a node");
}

#[test]
fn alignment_is_honoured() {
    let (_dag, _, pool, q) = setup_in_order(small_slabs(UsmKind::Host));
    for align in [64, 128, 4096, 16 * KIB] {
        let a = pool.alloc(&q, &[], 100, align, false).unwrap();
        assert_eq!(a.ptr.as_ptr() as usize % align, 0);
    }
    assert_eq!(
        pool.alloc(&q, &[], 100, 48, false).unwrap_err(),
        UR_RESULT_ERROR_INVALID_VALUE
    );
    assert_eq!(
        pool.alloc(&q, &[], 0, 0, false).unwrap_err(),
        UR_RESULT_ERROR_INVALID_USM_SIZE
    );
    assert_eq!(
        pool.alloc(&q, &[], usize::MAX - 8, 0, false).unwrap_err(),
        UR_RESULT_ERROR_OUT_OF_HOST_MEMORY
    );
}

#[test]
fn a_free_on_another_queue_not_ordered_after_the_allocation_waits_for_it() {
    // Same queue, so the block is reused with k still running; the guard is k.
    let (dag, pool, q1, q2, k, b) = block_guarded_by_a_kernel();
    let f = pool.free_plain(&q2, &b);
    assert_eq!(f.deps.as_slice(), &[k]);
    assert!(dag.is_ordered_before(k, f.stamp.unwrap()));
    // Ordered through the wait list: no dependency needed.
    let c = pool.alloc_plain(&q1, 1000);
    let e = dag.record(&q1, &[]);
    let f2 = pool.free(&q2, &[e], c.ptr.as_ptr(), false).unwrap();
    assert!(f2.deps.is_empty());
}

#[test]
fn blocking_free_waits_for_pending_earlier_users() {
    let (dag, _, pool, q) = setup_in_order(small_slabs(UsmKind::Device));
    let k = dag.record(&q, &[]);
    let a = pool.alloc_plain(&q, 1000);
    pool.free_plain(&q, &a);
    let b = pool.alloc_plain(&q, 1000);
    assert_eq!(free_blocking_completing(&pool, &dag, &b), Some(k));
    // Nothing pending now: a blocking free does not wait.
    let c = pool.alloc_plain(&q, 1000);
    pool.free_blocking(c.ptr.as_ptr(), |_| panic!("nothing to wait for"))
        .unwrap();
    assert_eq!(pool.stats().used_current, 0);
}

#[test]
fn dropping_a_pool_keeps_memory_that_pending_commands_use() {
    let dag = Dag::new();
    let mem = Arc::new(HostMemory::new());
    let q = dag.create_lane(QueueOrder::OutOfOrder);
    let pool = Pool::new(dag.clone(), mem.clone(), small_slabs(UsmKind::Device));
    let a = pool.alloc(&q, &[], 1000, 0, true).unwrap();
    let k = dag.record(&q, &[a.stamp.unwrap()]);
    pool.free(&q, &[k], a.ptr.as_ptr(), false).unwrap();
    drop(pool);
    assert_eq!(mem.taken(), 64 * KIB, "the kernel may still run");
    dag.retire_lane(&q);
    assert_eq!(mem.taken(), 0);

    // With nothing in flight the memory goes back at once.
    let q = dag.create_lane(QueueOrder::InOrder);
    let pool = Pool::new(dag.clone(), mem.clone(), small_slabs(UsmKind::Device));
    pool.alloc_plain(&q, 1000);
    drop(pool);
    assert_eq!(mem.taken(), 0);
}

#[test]
fn pending_frees_on_one_in_order_queue_coalesce() {
    let (dag, _, pool, q) = setup_in_order(small_slabs(UsmKind::Device));
    let blocks: Vec<_> = (0..8).map(|_| pool.alloc_plain(&q, 8 * KIB)).collect();
    for b in &blocks {
        dag.record(&q, &[]);
        pool.free_plain(&q, b);
    }
    assert!(
        pool.pending_blocks() < 8,
        "neighbours freed on one in-order queue merge (the latest stay parked)"
    );
    let big = pool.alloc_plain(&q, 64 * KIB);
    assert_eq!(big.ptr, blocks[0].ptr);
}

#[test]
fn engine_finds_the_owner_and_keeps_one_default_pool_per_kind() {
    let engine = Engine::new();
    let make = |kind| {
        move || {
            (
                Arc::new(HostMemory::new()) as Arc<dyn MemorySource>,
                small_slabs(kind),
            )
        }
    };
    let d1 = engine.default_pool(1, UsmKind::Device, make(UsmKind::Device));
    let d1_again = engine.default_pool(1, UsmKind::Device, || unreachable!());
    assert!(Arc::ptr_eq(&d1, &d1_again));
    let h1 = engine.default_pool(1, UsmKind::Host, make(UsmKind::Host));
    assert!(!Arc::ptr_eq(&d1, &h1));
    let user = engine.create_pool(Arc::new(HostMemory::new()), small_slabs(UsmKind::Device));
    let q = engine.dag().create_lane(QueueOrder::InOrder);
    let a = d1.alloc_plain(&q, 100);
    let b = user.alloc_plain(&q, 100);
    assert!(Arc::ptr_eq(&engine.pool_of(b.ptr.as_ptr()).unwrap(), &user));
    assert_eq!(
        engine
            .free(Some(&user), &q, &[], a.ptr.as_ptr(), false)
            .unwrap_err(),
        UR_RESULT_ERROR_INVALID_VALUE
    );
    engine.free(None, &q, &[], a.ptr.as_ptr(), false).unwrap();
    engine.free(None, &q, &[], b.ptr.as_ptr(), false).unwrap();
    assert_eq!(
        engine
            .free(None, &q, &[], b.ptr.as_ptr(), false)
            .unwrap_err(),
        UR_RESULT_ERROR_INVALID_VALUE
    );
}

#[test]
fn the_release_threshold_applies_at_synchronisation_points_only() {
    let (dag, mem, pool) = setup(small_slabs(UsmKind::Device));
    pool.set_release_threshold(0);
    let q = dag.create_lane(QueueOrder::InOrder);
    let k = dag.record(&q, &[]);
    let a = pool.alloc_plain(&q, 64 * KIB);
    pool.free_plain(&q, &a);
    dag.complete(k);
    // Completion seen by an allocation and by a free does not give memory back.
    let b = pool.alloc_plain(&q, 64 * KIB);
    assert_eq!(b.ptr, a.ptr, "the completed block is reused");
    pool.free_plain(&q, &b);
    assert_eq!(mem.taken(), 64 * KIB);
    assert_eq!(pool.stats().reserved_current, 64 * KIB);
    pool.collect();
    assert_eq!((mem.taken(), pool.stats().reserved_current), (0, 0));
}

#[test]
fn live_blocks_are_found_from_any_address_inside() {
    let (_dag, _, pool, q) = setup_in_order(small_slabs(UsmKind::Host));
    let a = pool.alloc_plain(&q, 1000);
    let b = pool.alloc_plain(&q, 3000);
    let (a0, b0) = (a.ptr.as_ptr() as usize, b.ptr.as_ptr() as usize);
    assert_eq!(pool.live_block_containing(a0), Some((a0, a.size)));
    assert_eq!(pool.live_block_containing(b0 + 2999), Some((b0, b.size)));
    assert_eq!(
        pool.live_block_containing(a0 + a.size - 1),
        Some((a0, a.size))
    );
    pool.free_plain(&q, &b);
    assert_eq!(pool.live_block_containing(b0 + 8), None, "freed");
    assert_eq!(pool.live_block_containing(1), None, "not the pool's memory");
}

#[test]
fn lane_caches_keep_used_bytes_and_high_water_exact() {
    let (dag, mem, pool) = setup(small_slabs(UsmKind::Device));
    let (q1, q2) = two_lanes(&dag, QueueOrder::InOrder);
    let used = |p: &Pool| (p.stats().used_current, p.stats().used_high);
    let a = pool.alloc_plain(&q1, 1000);
    let b = pool.alloc_plain(&q2, 3000);
    assert_eq!(used(&pool), (1024 + 3008, 1024 + 3008));
    pool.free_plain(&q1, &a);
    pool.free_plain(&q2, &b);
    assert_eq!(used(&pool), (0, 4032));
    assert_eq!(pool.pending_blocks(), 2, "parked in their queues' caches");
    assert_eq!(
        pool.stats().reserved_current,
        mem.taken(),
        "parked blocks stay reserved"
    );
    // Taken back from the caches: the same blocks, counted again.
    let a2 = pool.alloc_plain(&q1, 1000);
    assert_eq!(a2.ptr, a.ptr);
    assert_eq!(used(&pool), (1024, 4032));
    // More at once than ever before: the mark follows exactly.
    let b2 = pool.alloc_plain(&q2, 3000);
    let c = pool.alloc_plain(&q2, 64);
    assert_eq!(b2.ptr, b.ptr);
    assert_eq!(used(&pool), (1024 + 3008 + 64, 1024 + 3008 + 64));
    pool.free_plain(&q2, &c);
    pool.free_plain(&q1, &a2);
    assert_eq!(used(&pool), (3008, 4096));
    // Restarting the mark shrinks every allowance to what is in use.
    pool.set_info(UR_USM_POOL_INFO_USED_HIGH_EXP, 0).unwrap();
    assert_eq!(used(&pool), (3008, 3008));
    let a3 = pool.alloc_plain(&q1, 1000);
    assert_eq!(a3.ptr, a.ptr, "from q1's cache");
    assert_eq!(used(&pool), (3008 + 1024, 3008 + 1024));
    assert_eq!(pool.info(UR_USM_POOL_INFO_USED_CURRENT_EXP), Ok(4032));
    assert_eq!(pool.info(UR_USM_POOL_INFO_USED_HIGH_EXP), Ok(4032));
    pool.free_plain(&q1, &a3);
    pool.free_plain(&q2, &b2);
    assert_eq!(used(&pool), (0, 4032));
    assert_eq!(pool.live_blocks(), 0);
}

#[test]
fn a_block_of_one_queue_freed_on_another_waits_for_its_guard() {
    // Taken back from q1's cache while k may still use it: k guards it.
    let (dag, pool, q1, q2, k, b) = block_guarded_by_a_kernel();
    assert!(pool.owns(b.ptr.as_ptr()));
    let f = pool.free_plain(&q2, &b);
    assert_eq!(f.deps.as_slice(), &[k]);
    assert!(dag.is_ordered_before(k, f.stamp.unwrap()));
    assert!(!pool.owns(b.ptr.as_ptr()));
    // Parked in q2's cache now: q2 takes it back with no wait.
    let c = pool.alloc_plain(&q2, 1000);
    assert_eq!(c.ptr, b.ptr);
    assert!(c.deps.is_empty() && c.stamp.is_none());
    // Parked on q2 again, behind f: q1 gets it only by waiting for f.
    pool.free_plain(&q2, &c);
    let d = pool.alloc_plain(&q1, 1000);
    assert_eq!(d.ptr, b.ptr, "no ready block: an internal dependency");
    assert_eq!(d.deps.as_slice(), &[f.stamp.unwrap()]);
    assert!(dag.is_ordered_before(f.stamp.unwrap(), d.stamp.unwrap()));
    pool.free_plain(&q1, &d);
}

#[test]
fn bad_frees_of_cached_blocks_are_rejected() {
    let (dag, _, pool) = setup(small_slabs(UsmKind::Host));
    let other = other_pool(&dag);
    let q = dag.create_lane(QueueOrder::InOrder);
    let q2 = dag.create_lane(QueueOrder::InOrder);
    let a = pool.alloc_plain(&q, 256);
    pool.free_plain(&q, &a);
    let a = pool.alloc_plain(&q, 256); // from the cache
    let foreign = other.alloc_plain(&q, 256);
    let stats = pool.stats();
    let interior = unsafe { a.ptr.as_ptr().add(64) };
    for lane in [&q, &q2] {
        for bad in [interior, foreign.ptr.as_ptr(), std::ptr::null_mut()] {
            assert_eq!(
                pool.free(lane, &[], bad, false).unwrap_err(),
                UR_RESULT_ERROR_INVALID_VALUE
            );
        }
    }
    assert_eq!(pool.stats(), stats);
    pool.free_plain(&q, &a);
    for lane in [&q, &q2] {
        assert_eq!(
            pool.free(lane, &[], a.ptr.as_ptr(), false).unwrap_err(),
            UR_RESULT_ERROR_INVALID_VALUE,
            "double free of a parked block"
        );
    }
    assert_eq!(
        pool.free_blocking(a.ptr.as_ptr(), |_| ()).unwrap_err(),
        UR_RESULT_ERROR_INVALID_VALUE
    );
    assert_eq!(
        other.free(&q, &[], a.ptr.as_ptr(), false).unwrap_err(),
        UR_RESULT_ERROR_INVALID_VALUE,
        "another pool's cached block"
    );
    assert_eq!(pool.stats().used_current, 0);
    other.free_plain(&q, &foreign);
}

#[test]
fn cached_blocks_are_found_and_freed_like_any_other() {
    let (dag, _, pool, q) = setup_in_order(small_slabs(UsmKind::Host));
    let a = pool.alloc_plain(&q, 1000);
    let base = a.ptr.as_ptr() as usize;
    assert_eq!(pool.live_block_containing(base + 999), Some((base, a.size)));
    assert_eq!(pool.live_block_containing(base), Some((base, a.size)));
    assert_eq!(pool.live_blocks(), 1);
    let k = dag.record(&q, &[]);
    pool.free_plain(&q, &a);
    assert_eq!(pool.live_block_containing(base + 8), None, "parked");
    let b = pool.alloc_plain(&q, 1000);
    assert_eq!(
        free_blocking_completing(&pool, &dag, &b),
        Some(k),
        "the blocking free waits for the kernel"
    );
    assert_eq!((pool.live_blocks(), pool.stats().used_current), (0, 0));
}

#[test]
fn above_the_threshold_frees_park_nothing_and_collect_gives_memory_back() {
    let (_dag, mem, pool, q) = setup_in_order(small_slabs(UsmKind::Device));
    let a = pool.alloc_plain(&q, 64 * KIB);
    let b = pool.alloc_plain(&q, 1000);
    pool.free_plain(&q, &b);
    assert_eq!(pool.pending_blocks(), 1, "parked within the threshold");
    pool.set_release_threshold(0);
    pool.free_plain(&q, &a);
    assert_eq!(pool.pending_blocks(), 1, "not parked above it");
    assert_eq!(mem.taken(), 128 * KIB);
    pool.collect();
    assert_eq!(pool.pending_blocks(), 0);
    assert_eq!((mem.taken(), pool.stats().reserved_current), (0, 0));
}

#[test]
fn a_retired_queue_leaves_no_cache_behind() {
    let (dag, mem, pool) = setup(small_slabs(UsmKind::Device));
    let (q1, q2) = two_lanes(&dag, QueueOrder::InOrder);
    let k = dag.record(&q1, &[]);
    let a = pool.alloc_plain(&q1, 1000);
    let b = pool.alloc_plain(&q1, 2000);
    pool.free_plain(&q1, &a);
    let held = pool.alloc_plain(&q1, 1000);
    pool.free_plain(&q1, &b);
    dag.complete(k);
    dag.retire_lane(&q1);
    pool.collect();
    assert_eq!(pool.pending_blocks(), 0, "q1's parked block is ready");
    assert_eq!(pool.live_blocks(), 1);
    assert_eq!(pool.stats().used_current, 1024);
    // Its live block is still known, and freed on another queue.
    assert!(pool.owns(held.ptr.as_ptr()));
    let f = pool.free_plain(&q2, &held);
    assert!(f.deps.is_empty(), "q1's work has completed");
    pool.collect();
    pool.trim_to(0);
    assert_eq!((mem.taken(), pool.stats().used_current), (0, 0));
}
