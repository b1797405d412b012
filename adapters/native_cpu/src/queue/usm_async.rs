//! Stream-ordered allocation (`urEnqueueUSM*AllocExp`, `urEnqueueUSMFreeExp`):
//! the engine decides which block to hand out and whether a command is
//! needed at all; the queue runs that command (zeroing the block when the
//! pool asks) in its order, after the engine's extra dependency.
//!
//! On an in-order queue with no wait list and no event the engine usually
//! needs no command: the call costs a pool lookup and the engine's work,
//! nothing is queued and no event exists.

use super::{EngineCommand, Queue, QueueShared};
use crate::event::Event;
use crate::memory::{Pool, UsmKind};
use std::sync::Arc;
use ur_core::engine;
use ur_core::usm_async::alloc_command;
use ur_core::usm_pool::FreeScope;
use ur_core::*;

impl QueueShared {
    /// Runs `f` with the pool async allocations on this queue use when none
    /// is named: the one set for its device, else its default pool.
    #[inline]
    fn with_current_pool<R>(&self, f: impl FnOnce(&Pool) -> R) -> UrResult<R> {
        let make_default = || Ok(Pool::default_for(&self.context, self.device.clone()));
        self.context.pools.with_current(&*self.device, &self.default_pool, make_default, f)
    }
}

impl Queue {
    /// The hot path of an async allocation: an in-order queue, nothing to
    /// wait for, no event, the device's default pool. Usually the engine
    /// needs no command at all. `None` when the path does not apply; then
    /// nothing has changed.
    #[inline]
    pub fn alloc_async_hot(&self, kind: UsmKind, size: usize) -> Option<UrResult<*mut u8>> {
        let q = &self.shared;
        if !self.engine_fast_path() {
            return None;
        }
        let engine = q.context.pools.cached_default(&q.default_pool)?.base.engine.get(kind)?;
        Some(engine.alloc(&q.lane, &[], size, 0, false).map(|a| {
            if let Some(stamp) = a.stamp {
                self.enqueue_recorded(EngineCommand {
                    stamp,
                    command_type: alloc_command(kind),
                    zero: a.zero.then_some((a.ptr.as_ptr() as usize, a.size)),
                    after: a.deps.as_slice().first().copied(),
                    want_event: false,
                });
            }
            a.ptr.as_ptr()
        }))
    }

    /// The hot path of an async free, as for allocations: device memory of
    /// the default pool. `false` when it does not apply (the pointer is not
    /// such a block, for one); then nothing has changed.
    #[inline]
    pub fn free_async_hot(&self, ptr: *mut u8) -> bool {
        let q = &self.shared;
        if !self.engine_fast_path() {
            return false;
        }
        let Some(engine) = q.context.pools.cached_default(&q.default_pool).and_then(|p| p.base.engine.get(UsmKind::Device)) else {
            return false;
        };
        let Ok(out) = engine.free(&q.lane, &[], ptr, false) else { return false };
        if let Some(stamp) = out.stamp {
            self.enqueue_recorded(EngineCommand {
                stamp,
                command_type: UR_COMMAND_ENQUEUE_USM_FREE_EXP,
                zero: None,
                after: out.deps.as_slice().first().copied(),
                want_event: false,
            });
        }
        true
    }

    /// `urEnqueueUSM{Device,Shared,Host}AllocExp` from `pool`, or from the
    /// device's current pool when none is named. `deps` is the wait list,
    /// reduced to its pending events.
    pub fn alloc_async(
        &self,
        kind: UsmKind,
        pool: Option<&Pool>,
        size: usize,
        deps: Vec<Arc<Event>>,
        want_event: bool,
    ) -> UrResult<(*mut u8, Option<Arc<Event>>)> {
        let q = &self.shared;
        if deps.is_empty() && !want_event && pool.is_none() {
            if let Some(done) = self.alloc_async_hot(kind, size) {
                return done.map(|p| (p, None));
            }
        }
        // A pending event of another context orders nothing in this one's
        // graph, but the allocation must still wait for it: that needs a command.
        let want_node = want_event || !deps.is_empty();
        let run = |engine: &engine::Pool| {
            self.submit_engine(deps, |lane, wait| {
                let a = engine.alloc(lane, wait, size, 0, want_node)?;
                let command = a.stamp.map(|stamp| EngineCommand {
                    stamp,
                    command_type: alloc_command(kind),
                    zero: a.zero.then_some((a.ptr.as_ptr() as usize, a.size)),
                    after: a.deps.as_slice().first().copied(),
                    want_event,
                });
                Ok((a.ptr.as_ptr(), command))
            })
        };
        match pool {
            Some(p) => run(p.engine_pool(kind, Some(&q.device))?),
            None => q.with_current_pool(|p| run(p.engine_pool(kind, Some(&q.device))?))?,
        }
    }

    /// `urEnqueueUSMFreeExp`. Only the exact base of a live block of `pool`
    /// (or, when none is named, of any pool of the context) is accepted;
    /// anything else is `INVALID_VALUE` and releases nothing.
    pub fn free_async(
        &self,
        pool: Option<&Pool>,
        ptr: *mut u8,
        deps: Vec<Arc<Event>>,
        want_event: bool,
    ) -> UrResult<Option<Arc<Event>>> {
        let q = &self.shared;
        let context = &q.context;
        if deps.is_empty() && !want_event && pool.is_none() && self.free_async_hot(ptr) {
            return Ok(None);
        }
        if pool.is_some_and(|p| !p.base.belongs_to(context)) {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        let want_node = want_event || !deps.is_empty();
        // The likeliest owner is tried first (device memory of the named
        // pool, or of the device's current pool), then the slab's owner.
        let scope = FreeScope::of(pool);
        let run = |from: &Pool| {
            self.submit_engine(deps, |lane, wait| {
                let free = |e: &engine::Pool| e.free(lane, wait, ptr, want_node);
                let freed = from.base.free_async_block(&context.slabs, Some(&q.device), scope, ptr as usize, free);
                let out = freed.ok_or(UR_RESULT_ERROR_INVALID_VALUE)??;
                let command = out.stamp.map(|stamp| EngineCommand {
                    stamp,
                    command_type: UR_COMMAND_ENQUEUE_USM_FREE_EXP,
                    zero: None,
                    after: out.deps.as_slice().first().copied(),
                    want_event,
                });
                Ok(((), command))
            })
        };
        let ((), event) = match pool {
            Some(p) => run(p)?,
            None => q.with_current_pool(|p| run(p))??,
        };
        Ok(event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::Context;
    use crate::device::Platform;
    use crate::queue::command::Command;
    use crate::queue::{Order, Submission};
    use std::sync::{Condvar, Mutex, Weak};
    use std::time::Duration;
    use ur_core::usm_async::{PoolApi, PoolDesc};

    fn setup() -> (Arc<Context>, Arc<crate::device::Device>) {
        let device = Platform::new(Weak::new()).devices[0].clone();
        (Context::new(vec![device.clone()]), device)
    }

    /// A command that blocks its worker until the returned gate opens.
    fn gate(q: &Queue) -> (Arc<(Mutex<bool>, Condvar)>, Arc<Event>) {
        let g = Arc::new((Mutex::new(false), Condvar::new()));
        let g2 = g.clone();
        let command = Command::Host(Box::new(move || {
            let mut open = g2.0.lock().unwrap();
            while !*open {
                open = g2.1.wait(open).unwrap();
            }
            Ok(())
        }));
        let sub = Submission {
            command_type: UR_COMMAND_EVENTS_WAIT,
            command,
            deps: vec![],
            order: Order::default(),
            want_event: true,
            blocking: false,
        };
        (g, q.submit(sub).unwrap().event.unwrap())
    }

    fn open(g: &(Mutex<bool>, Condvar)) {
        *g.0.lock().unwrap() = true;
        g.1.notify_all();
    }

    #[test]
    fn in_order_pairs_queue_nothing_and_reuse_the_block() {
        let (ctx, device) = setup();
        let q = Queue::new(ctx.clone(), device, 0);
        let (g, blocker) = gate(&q);
        let (first, e) = q.alloc_async(UsmKind::Device, None, 1000, vec![], false).unwrap();
        assert!(e.is_none());
        q.free_async(None, first, vec![], false).unwrap();
        for _ in 0..100 {
            let (p, e) = q.alloc_async(UsmKind::Device, None, 1000, vec![], false).unwrap();
            assert!(e.is_none() && p == first, "the block freed last comes back at once");
            q.free_async(None, p, vec![], false).unwrap();
        }
        assert_eq!(ctx.dag.in_flight(), 1, "only the blocked command is a node");
        open(&g);
        blocker.wait().unwrap();
        q.finish().unwrap();
    }

    /// A block freed on an out-of-order queue behind a closed gate, taken by
    /// an allocation on another queue that nothing orders after the free:
    /// the allocation waits for the free (woken when it completes), and so
    /// does the command after it on its in-order queue.
    #[test]
    fn a_pending_block_taken_across_queues_waits_for_its_free() {
        let (ctx, device) = setup();
        let pool = Pool::create(&ctx, Some(device.clone()), PoolDesc::default(), PoolApi::Exp);
        let owner = Queue::new(ctx.clone(), device.clone(), UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0);
        let taker = Queue::new(ctx.clone(), device, 0);
        let (a, ready) = owner.alloc_async(UsmKind::Device, Some(&pool), 4096, vec![], true).unwrap();
        ready.unwrap().wait().unwrap();
        let (g, blocker) = gate(&owner);
        let freed = owner.free_async(Some(&pool), a, vec![blocker.clone()], true).unwrap().unwrap();
        let (b, alloc_event) = taker.alloc_async(UsmKind::Device, Some(&pool), 4096, vec![], true).unwrap();
        assert_eq!(b, a, "the only free block is the pending one");
        let alloc_event = alloc_event.unwrap();
        std::thread::sleep(Duration::from_millis(30));
        assert!(!alloc_event.is_done() && !freed.is_done(), "the allocation waits for the free");
        open(&g);
        alloc_event.wait().unwrap();
        assert!(freed.is_done());
        taker.free_async(Some(&pool), b, vec![], false).unwrap();
        taker.finish().unwrap();
        owner.finish().unwrap();
        assert_eq!(pool.live_blocks(), 0);
    }

    /// Two threads drive one in-order queue: one allocates from a
    /// zero-initialising pool (every allocation is a command the engine
    /// records without the queue's lock), the other enqueues ordinary
    /// commands. Every command runs, once, in seq order.
    #[test]
    fn commands_recorded_without_the_lock_run_in_seq_order() {
        let (ctx, device) = setup();
        let desc = PoolDesc { flags: UR_USM_POOL_FLAG_ZERO_INITIALIZE_BLOCK.0, limits: None };
        let pool = Pool::create(&ctx, None, desc, PoolApi::Classic);
        let q = Queue::new(ctx.clone(), device, 0);
        let ran = Arc::new(Mutex::new(Vec::new()));
        q.finish().unwrap();
        let (g, blocker) = gate(&q); // starts the worker
        std::thread::scope(|s| {
            let q2 = &q;
            let pool = &pool;
            s.spawn(move || {
                for _ in 0..500 {
                    let (p, e) = q2.alloc_async(UsmKind::Host, Some(pool), 256, vec![], false).unwrap();
                    assert!(e.is_none());
                    q2.free_async(Some(pool), p, vec![], false).unwrap();
                }
            });
            let ran = ran.clone();
            let q3 = &q;
            s.spawn(move || {
                for i in 0..500 {
                    let r = ran.clone();
                    let command = Command::Host(Box::new(move || {
                        r.lock().unwrap().push(i);
                        Ok(())
                    }));
                    let sub = Submission {
                        command_type: UR_COMMAND_EVENTS_WAIT,
                        command,
                        deps: vec![],
                        order: Order::default(),
                        want_event: false,
                        blocking: false,
                    };
                    q3.submit(sub).unwrap();
                }
            });
        });
        open(&g);
        blocker.wait().unwrap();
        q.finish().unwrap();
        assert_eq!(*ran.lock().unwrap(), (0..500).collect::<Vec<_>>());
        assert_eq!(q.shared.lane.done_upto(), q.shared.lane.tail().seq, "every recorded command completed");
    }

    /// On an idle queue an allocation or free asked for an event completes
    /// before it returns (no worker is involved); behind a running command
    /// it waits for that command.
    #[test]
    fn event_of_an_alloc_on_an_idle_queue_is_complete_at_once() {
        let (ctx, device) = setup();
        let q = Queue::new(ctx.clone(), device, 0);
        let (p, e) = q.alloc_async(UsmKind::Device, None, 1000, vec![], true).unwrap();
        assert!(e.unwrap().is_done(), "nothing to wait for on an idle queue");
        let freed = q.free_async(None, p, vec![], true).unwrap().unwrap();
        assert!(freed.is_done());
        let (g, blocker) = gate(&q);
        let (p, e) = q.alloc_async(UsmKind::Device, None, 1000, vec![], true).unwrap();
        let e = e.unwrap();
        std::thread::sleep(Duration::from_millis(20));
        assert!(!e.is_done(), "in order behind a blocked command");
        open(&g);
        blocker.wait().unwrap();
        e.wait().unwrap();
        q.free_async(None, p, vec![], false).unwrap();
        q.finish().unwrap();
        assert_eq!(ctx.dag.in_flight(), 0);
    }

    /// Two threads on one in-order queue: one completes its allocations
    /// and frees on its own thread, the other hands commands to the worker
    /// and waits for each. A command queued while one ran on the caller's
    /// thread must still be started once that one completes.
    #[test]
    fn commands_completed_on_the_callers_thread_leave_no_queued_command_behind() {
        let (ctx, device) = setup();
        let q = Queue::new(ctx.clone(), device, 0);
        std::thread::scope(|s| {
            let q2 = &q;
            s.spawn(move || {
                for _ in 0..2000 {
                    let (p, e) = q2.alloc_async(UsmKind::Device, None, 512, vec![], true).unwrap();
                    drop(e);
                    q2.free_async(None, p, vec![], true).unwrap();
                }
            });
            let q3 = &q;
            s.spawn(move || {
                for _ in 0..2000 {
                    let sub = Submission {
                        command_type: UR_COMMAND_EVENTS_WAIT,
                        command: Command::Marker,
                        deps: vec![],
                        order: Order::default(),
                        want_event: true,
                        blocking: false,
                    };
                    q3.submit(sub).unwrap().event.unwrap().wait().unwrap();
                }
            });
        });
        q.finish().unwrap();
        assert_eq!(q.shared.lane.done_upto(), q.shared.lane.tail().seq, "every recorded command completed");
    }
}
