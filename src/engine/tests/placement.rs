//! Placement order, one tier at a time: among the blocks an allocation may
//! take with no host wait (parked on its in-order queue, freed by completed
//! commands, freed by commands its wait list, queue or a barrier orders
//! before it) the best fit wins; slab space never handed out comes next;
//! growing the pool comes last. Each case leaves fresh slab space beside the
//! freed block, so a wrong order shows as a different address.

use crate::engine::*;
use std::sync::Arc;

const MIB: usize = 1 << 20;

fn setup(policy: ReusePolicy) -> (Arc<Dag>, Pool) {
    let dag = Dag::new();
    let config = PoolConfig { min_slab_size: 4 * MIB, policy, ..PoolConfig::new(UsmKind::Device) };
    let pool = Pool::new(dag.clone(), Arc::new(HostMemory::new()), config);
    (dag, pool)
}

const POLICIES: [ReusePolicy; 3] = [
    ReusePolicy { follow_event_dependencies: true, allow_opportunistic: true, allow_internal_dependencies: true },
    ReusePolicy { follow_event_dependencies: true, allow_opportunistic: false, allow_internal_dependencies: false },
    ReusePolicy { follow_event_dependencies: true, allow_opportunistic: true, allow_internal_dependencies: false },
];

/// The minimal case: alloc a, a fill of a, free a after the fill,
/// alloc b waiting on the free: b is a, with no extra dependency.
#[test]
fn out_of_order_free_ordered_by_the_wait_list_is_reused_before_fresh_space() {
    for policy in POLICIES {
        let (dag, pool) = setup(policy);
        let q = dag.create_lane(QueueOrder::OutOfOrder);
        let a = pool.alloc(&q, &[], MIB, 0, true).unwrap();
        let fill = dag.record(&q, &[a.stamp.unwrap()]);
        let free = pool.free(&q, &[fill], a.ptr.as_ptr(), true).unwrap().stamp.unwrap();
        let b = pool.alloc(&q, &[free], MIB, 0, true).unwrap();
        assert_eq!(b.ptr, a.ptr, "{policy:?}");
        assert!(b.deps.is_empty(), "{policy:?}");
        assert_eq!(pool.stats().reserved_current, 4 * MIB, "{policy:?}");
    }
}

/// A completed free is taken before never-used space, also when nothing
/// orders it and the allocation is on another queue.
#[test]
fn completed_free_is_reused_before_fresh_space() {
    for policy in POLICIES {
        let (dag, pool) = setup(policy);
        let q1 = dag.create_lane(QueueOrder::OutOfOrder);
        let q2 = dag.create_lane(QueueOrder::OutOfOrder);
        let a = pool.alloc(&q1, &[], MIB, 0, true).unwrap();
        dag.complete(a.stamp.unwrap());
        let free = pool.free(&q1, &[], a.ptr.as_ptr(), true).unwrap().stamp.unwrap();
        dag.complete(free);
        if !policy.allow_opportunistic {
            pool.collect();
        }
        let b = pool.alloc(&q2, &[], MIB, 0, true).unwrap();
        assert_eq!(b.ptr, a.ptr, "{policy:?}");
    }
}

/// Free on queue A, alloc on queue B waiting on the free's event: the same
/// address every iteration, as CUDA's own pools give.
#[test]
fn hand_over_between_queues_keeps_one_address() {
    for (qa, qb) in [(QueueOrder::InOrder, QueueOrder::InOrder), (QueueOrder::OutOfOrder, QueueOrder::OutOfOrder), (QueueOrder::InOrder, QueueOrder::OutOfOrder)] {
        for policy in POLICIES {
            let (dag, pool) = setup(policy);
            let a_q = dag.create_lane(qa);
            let b_q = dag.create_lane(qb);
            let mut addresses = std::collections::BTreeSet::new();
            let mut pending = Vec::new();
            let mut last = None;
            for i in 0..50 {
                let wait: Vec<Stamp> = last.into_iter().collect();
                let x = pool.alloc(&a_q, &wait, MIB, 0, true).unwrap();
                addresses.insert(x.ptr.as_ptr() as usize);
                let use_x = dag.record(&a_q, &[x.stamp.unwrap()]);
                let free = pool.free(&a_q, &[use_x], x.ptr.as_ptr(), true).unwrap().stamp.unwrap();
                let y = pool.alloc(&b_q, &[free], MIB, 0, true).unwrap();
                addresses.insert(y.ptr.as_ptr() as usize);
                if std::env::var("PLACEMENT_DEBUG").is_ok() { eprintln!("{qa:?}->{qb:?} {i}: x {:?} y {:?} deps {:?}", x.ptr, y.ptr, y.deps.as_slice()); }
                assert!(y.deps.is_empty());
                let use_y = dag.record(&b_q, &[y.stamp.unwrap()]);
                let free_y = pool.free(&b_q, &[use_y], y.ptr.as_ptr(), true).unwrap().stamp.unwrap();
                last = Some(free_y);
                pending.extend([x.stamp.unwrap(), use_x, free, y.stamp.unwrap(), use_y, free_y]);
                // Now and then the device catches up.
                if i % 7 == 6 {
                    for s in pending.drain(..) {
                        dag.complete(s);
                    }
                }
            }
            assert_eq!(addresses.len(), 1, "{qa:?} -> {qb:?}, {policy:?}: {} addresses", addresses.len());
        }
    }
}
