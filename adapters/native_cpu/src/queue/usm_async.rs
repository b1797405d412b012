//! Unit tests of stream-ordered allocation (`urEnqueueUSM*AllocExp`,
//! `urEnqueueUSMFreeExp`) on this backend's queues: the core writes the
//! algorithm once (`ur_core::queue::usm_async`); these check how the
//! queue runs what the engine records (in seq order, on the caller's
//! thread when idle, behind a pending free on another queue).

#[cfg(test)]
mod tests {
    use super::super::Queue;
    use crate::context::Context;
    use crate::event::Event;
    use crate::memory::{Pool, UsmKind};
    use crate::NativeCpu;
    use std::sync::Arc;
    use ur_core::hal::Events;
    use ur_core::handle::handle_of;
    use ur_core::*;
    use crate::queue::command::Command;
    use crate::queue::{new_queue, submit, Order};
    use ur_core::hal::Completion;
    use std::sync::{Condvar, Mutex, Weak};
    use std::time::Duration;
    use ur_core::usm_async::{PoolApi, PoolDesc};

    fn setup() -> (Arc<Context>, Arc<crate::device::Device>) {
        let device = crate::device::PlatformHost::new(Weak::new()).raw.devices[0].clone();
        (crate::context::new_context(vec![device.clone()]), device)
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
        (g, host_submit(q, command, true).unwrap())
    }

    /// A command with no wait list, as an enqueue hands it over.
    fn host_submit(q: &Queue, command: Command, want_event: bool) -> Option<Arc<Event>> {
        let c = Completion { want_event, blocking: false };
        submit(q, UR_COMMAND_EVENTS_WAIT, command, Order::default(), Events::none(), c).unwrap()
    }

    /// The core's async allocation on `q`, after `waits`.
    fn alloc_async(
        q: &Queue,
        kind: UsmKind,
        pool: Option<&Pool>,
        size: usize,
        waits: Vec<Arc<Event>>,
        want_event: bool,
    ) -> UrResult<(*mut u8, Option<Arc<Event>>)> {
        let handles: Vec<ur_event_handle_t> = waits.iter().map(|e| handle_of(&**e)).collect();
        // SAFETY: live events of this backend, held by `waits` for the call.
        let events = unsafe { Events::<NativeCpu>::checked(&handles) };
        let (p, e) = ur_core::queue::usm_async::alloc::<NativeCpu>(q, kind, pool, size, events, want_event)?;
        Ok((p as *mut u8, e))
    }

    /// The core's async free on `q`, after `waits`.
    fn free_async(q: &Queue, pool: Option<&Pool>, ptr: *mut u8, waits: Vec<Arc<Event>>, want_event: bool) -> UrResult<Option<Arc<Event>>> {
        let handles: Vec<ur_event_handle_t> = waits.iter().map(|e| handle_of(&**e)).collect();
        // SAFETY: as in `alloc_async`.
        let events = unsafe { Events::<NativeCpu>::checked(&handles) };
        ur_core::queue::usm_async::free::<NativeCpu>(q, pool, ptr.cast(), events, want_event)
    }

    fn open(g: &(Mutex<bool>, Condvar)) {
        *g.0.lock().unwrap() = true;
        g.1.notify_all();
    }

    #[test]
    fn in_order_pairs_queue_nothing_and_reuse_the_block() {
        let (ctx, device) = setup();
        let q = new_queue(ctx.clone(), device, 0);
        let (g, blocker) = gate(&q);
        let (first, e) = alloc_async(&q, UsmKind::Device, None, 1000, vec![], false).unwrap();
        assert!(e.is_none());
        free_async(&q, None, first, vec![], false).unwrap();
        for _ in 0..100 {
            let (p, e) = alloc_async(&q, UsmKind::Device, None, 1000, vec![], false).unwrap();
            assert!(e.is_none() && p == first, "the block freed last comes back at once");
            free_async(&q, None, p, vec![], false).unwrap();
        }
        assert_eq!(ctx.engine.dag().in_flight(), 1, "only the blocked command is a node");
        assert_eq!(q.raw.lane.tail().seq, 1, "no pair recorded a node");
        open(&g);
        blocker.raw.wait().unwrap();
        crate::queue::wait_for_all(&q).unwrap();
    }

    /// A block freed on an out-of-order queue behind a closed gate, taken by
    /// an allocation on another queue that nothing orders after the free:
    /// the allocation waits for the free (woken when it completes), and so
    /// does the command after it on its in-order queue.
    #[test]
    fn a_pending_block_taken_across_queues_waits_for_its_free() {
        let (ctx, device) = setup();
        let pool = crate::memory::create_pool(&ctx, Some(device.clone()), PoolDesc::default(), PoolApi::Exp);
        let owner = new_queue(ctx.clone(), device.clone(), UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0);
        let taker = new_queue(ctx.clone(), device, 0);
        let (a, ready) = alloc_async(&owner, UsmKind::Device, Some(&pool), 4096, vec![], true).unwrap();
        ready.unwrap().raw.wait().unwrap();
        let (g, blocker) = gate(&owner);
        let freed = free_async(&owner, Some(&pool), a, vec![blocker.clone()], true).unwrap().unwrap();
        let (b, alloc_event) = alloc_async(&taker, UsmKind::Device, Some(&pool), 4096, vec![], true).unwrap();
        assert_eq!(b, a, "the only free block is the pending one");
        let alloc_event = alloc_event.unwrap();
        std::thread::sleep(Duration::from_millis(30));
        assert!(!alloc_event.raw.is_done() && !freed.raw.is_done(), "the allocation waits for the free");
        open(&g);
        alloc_event.raw.wait().unwrap();
        assert!(freed.raw.is_done());
        free_async(&taker, Some(&pool), b, vec![], false).unwrap();
        crate::queue::wait_for_all(&taker).unwrap();
        crate::queue::wait_for_all(&owner).unwrap();
        assert_eq!(crate::memory::live_blocks(&pool), 0);
    }

    /// Two threads drive one in-order queue: one allocates from a
    /// zero-initialising pool (every allocation is a command the engine
    /// records without the queue's lock), the other enqueues ordinary
    /// commands. Every command runs, once, in seq order.
    #[test]
    fn commands_recorded_without_the_lock_run_in_seq_order() {
        let (ctx, device) = setup();
        let desc = PoolDesc { flags: UR_USM_POOL_FLAG_ZERO_INITIALIZE_BLOCK.0, limits: None };
        let pool = crate::memory::create_pool(&ctx, None, desc, PoolApi::Classic);
        let q = new_queue(ctx.clone(), device, 0);
        let ran = Arc::new(Mutex::new(Vec::new()));
        crate::queue::wait_for_all(&q).unwrap();
        let (g, blocker) = gate(&q); // starts the worker
        std::thread::scope(|s| {
            let q2 = &q;
            let pool = &pool;
            s.spawn(move || {
                for _ in 0..500 {
                    let (p, e) = alloc_async(q2, UsmKind::Host, Some(pool), 256, vec![], false).unwrap();
                    assert!(e.is_none());
                    free_async(q2, Some(pool), p, vec![], false).unwrap();
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
                    host_submit(q3, command, false);
                }
            });
        });
        open(&g);
        blocker.raw.wait().unwrap();
        crate::queue::wait_for_all(&q).unwrap();
        assert_eq!(*ran.lock().unwrap(), (0..500).collect::<Vec<_>>());
        assert_eq!(q.raw.lane.done_upto(), q.raw.lane.tail().seq, "every recorded command completed");
    }

    /// On an idle queue an allocation or free asked for an event completes
    /// before it returns (no worker is involved); behind a running command
    /// it waits for that command.
    #[test]
    fn event_of_an_alloc_on_an_idle_queue_is_complete_at_once() {
        let (ctx, device) = setup();
        let q = new_queue(ctx.clone(), device, 0);
        let (p, e) = alloc_async(&q, UsmKind::Device, None, 1000, vec![], true).unwrap();
        assert!(e.unwrap().raw.is_done(), "nothing to wait for on an idle queue");
        let freed = free_async(&q, None, p, vec![], true).unwrap().unwrap();
        assert!(freed.raw.is_done());
        let (g, blocker) = gate(&q);
        let (p, e) = alloc_async(&q, UsmKind::Device, None, 1000, vec![], true).unwrap();
        let e = e.unwrap();
        std::thread::sleep(Duration::from_millis(20));
        assert!(!e.raw.is_done(), "in order behind a blocked command");
        open(&g);
        blocker.raw.wait().unwrap();
        e.raw.wait().unwrap();
        free_async(&q, None, p, vec![], false).unwrap();
        crate::queue::wait_for_all(&q).unwrap();
        assert_eq!(ctx.engine.dag().in_flight(), 0);
    }

    /// Two threads on one in-order queue: one completes its allocations
    /// and frees on its own thread, the other hands commands to the worker
    /// and waits for each. A command queued while one ran on the caller's
    /// thread must still be started once that one completes.
    #[test]
    fn commands_completed_on_the_callers_thread_leave_no_queued_command_behind() {
        let (ctx, device) = setup();
        let q = new_queue(ctx.clone(), device, 0);
        std::thread::scope(|s| {
            let q2 = &q;
            s.spawn(move || {
                for _ in 0..2000 {
                    let (p, e) = alloc_async(q2, UsmKind::Device, None, 512, vec![], true).unwrap();
                    drop(e);
                    free_async(q2, None, p, vec![], true).unwrap();
                }
            });
            let q3 = &q;
            s.spawn(move || {
                for _ in 0..2000 {
                    host_submit(q3, Command::Marker, true).unwrap().raw.wait().unwrap();
                }
            });
        });
        crate::queue::wait_for_all(&q).unwrap();
        assert_eq!(q.raw.lane.done_upto(), q.raw.lane.tail().seq, "every recorded command completed");
    }
}
