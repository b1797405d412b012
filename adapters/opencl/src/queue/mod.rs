//! Queues: the core's [`Queue`] over [`QueueCl`], the OpenCL command queue
//! and what this adapter keeps to order and track its commands; and
//! [`submit`], how every command passes the core's submission path: its
//! OpenCL enqueue, and its event kept for the engine.
//!
//! `impl RawQueue` here enqueues the USM commands (`marker`, `fill` and the
//! rest, over the helpers of `usm_commands.rs`) and the commands the engine
//! records for the core's async allocations and frees (`enqueue_recorded`,
//! over those of `usm_async.rs`); the events that report a queue's progress
//! to the engine are `trackers.rs`'.

use crate::context::Context;
use crate::device::{self, Device, UsmPath};
use crate::driver;
use crate::event::{self, Event};
use crate::conv::{self, ClResultExt};
use crate::memory;
use crate::OpenCl;
use cl3::ext as sys;
use opencl3::command_queue::CommandQueue;
use trackers::Trackers;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};
use ur_core::lock_order::{Mutex, MutexGuard, Rank};
use sys::{cl_event, cl_int};
use ur_core::engine::{QueueOrder, Seq, Stamp};
use ur_core::hal::{is_event_wait, Completion, Events, UsmCopy, UsmCopy2D, UsmFill, UsmFill2D};
use ur_core::queue::object::{Enqueued, NativeQueue, RawQueue};
use ur_core::queue::{EngineCommand, Node};
use ur_core::handle::arc_of;
use ur_core::mem::BufferCommand;
use ur_core::*;
use usm_async::{add_dependencies, enqueue_command, shared_cover};
use usm_commands::{at, fill_on_host, marker, rows, run_on_host, wait_in_order};

mod buffer_commands;
pub mod trackers;
mod usm_async;
mod usm_commands;

/// A wait list translated for this queue: the `cl_event`s OpenCL waits
/// for, and the engine's view of the same commands.
pub type Waits = ur_core::queue::Waits<cl_event>;

/// A UR queue of this adapter.
pub type Queue = ur_core::queue::object::Queue<OpenCl>;

/// What an OpenCL queue keeps beside the core's fields.
pub struct QueueCl {
    pub cl: CommandQueue,
    /// Whether the OpenCL queue runs out of order (the device may not
    /// offer it, and an in-order queue satisfies every out-of-order one);
    /// the queue's lane is in order exactly when this is false.
    pub out_of_order: bool,
    /// Held from a command's node to its enqueue, so that the engine's
    /// sequence numbers follow the OpenCL queue's order.
    order: Mutex<()>,
    /// The events that report this queue's progress to the engine.
    trackers: Mutex<Trackers>,
    /// The seq of the newest node that gave the OpenCL queue work (0:
    /// none): once the lane is done up to it, the OpenCL queue has nothing
    /// left to run. Written under the order lock.
    cl_work_upto: AtomicU64,
    /// Whether the OpenCL queue may hold work this adapter did not enqueue:
    /// its native handle was handed out, or it came from one.
    foreign_work: AtomicBool,
    /// A user event set complete when made: the event of commands that
    /// needed nothing run, or ran on the host (`usm_commands.rs`). The
    /// queue's, not the context's: an OpenCL event holds its context, and
    /// the context must not outlive the user's last queue because of it.
    completed: OnceLock<Option<opencl3::event::Event>>,
}

/// What stands for everything a new command waits for, when that command
/// has nothing to run ([`cover_after`], `usm_async::shared_cover`).
pub(crate) enum Cover {
    /// An event whose completion implies theirs.
    Held(opencl3::event::Event),
    /// They have all completed, and so has the command.
    Done,
}

/// A queue over `cl`, on a new lane of its context's graph, listed in its
/// context. `foreign_work`: the OpenCL queue came from the user.
fn new_queue(
    context: Arc<Context>,
    device: &'static Device,
    flags: ur_queue_flags_t,
    out_of_order: bool,
    cl: CommandQueue,
    foreign_work: bool,
) -> Arc<Queue> {
    let lane = context.engine.dag().create_lane(if out_of_order { QueueOrder::OutOfOrder } else { QueueOrder::InOrder });
    let raw = QueueCl {
        cl,
        out_of_order,
        order: Mutex::new(Rank::QueueSubmit, ()),
        trackers: Mutex::new(Rank::QueueTrackers, Trackers::new(lane.clone())),
        cl_work_upto: AtomicU64::new(0),
        foreign_work: AtomicBool::new(foreign_work),
        completed: OnceLock::new(),
    };
    Queue::new(context, device, flags, lane, raw)
}

impl QueueCl {
    /// Node `seq`, just recorded, put a command on the OpenCL queue. Call
    /// with the order lock held.
    pub(crate) fn gave_cl_work(&self, seq: Seq) {
        self.cl_work_upto.store(seq, Relaxed);
    }

    /// The native queue was handed out: the user may enqueue on it.
    fn handed_out(&self) {
        self.foreign_work.store(true, Relaxed);
    }

    /// Serialises this queue's submissions (see `order`).
    pub(crate) fn order_lock(&self) -> MutexGuard<'_, ()> {
        self.order.lock()
    }

    fn trackers(&self) -> MutexGuard<'_, Trackers> {
        self.trackers.lock()
    }
}

/// Enqueues one command on `queue` through the core's submission path
/// (`ur_core::queue::submit`), which translates the wait list (events of
/// other contexts, which OpenCL cannot wait for on this queue, are waited
/// for on the host first) and records the command's node; a barrier also
/// holds back later commands. `enqueue` receives the OpenCL wait list and
/// the event out-pointer. The command's event is kept to report its
/// completion; when `want_event`, the UR event returned wraps the same
/// `cl_event`.
pub fn submit(
    queue: &Queue,
    command: ur_command_t,
    barrier: bool,
    events: Events<'_, OpenCl>,
    want_event: bool,
    enqueue: impl FnOnce(&[cl_event], *mut cl_event) -> Result<(), cl_int>,
) -> UrResult<Option<Arc<Event>>> {
    ur_core::queue::submit::submit(queue, barrier, events, |_order, waits, node| {
        let Node::Given { stamp, .. } = node else { unreachable!("every command is recorded") };
        let mut event: cl_event = std::ptr::null_mut();
        // An event only where someone needs it (see `Trackers`).
        let ask = want_event || queue.raw.trackers().wants_completion();
        enqueue(&waits.raw, if ask { &mut event } else { std::ptr::null_mut() }).ur()?;
        queue.raw.gave_cl_work(stamp.seq);
        Ok(track(queue, command, stamp, event, want_event))
    })
}

/// Whether the OpenCL queue has run everything it was given (polling the
/// events held when the engine does not know yet), so that a command may
/// run on the host without passing any. Call with the order lock held.
pub(crate) fn cl_idle(queue: &Queue) -> bool {
    if queue.raw.foreign_work.load(Relaxed) {
        return false;
    }
    let upto = queue.raw.cl_work_upto.load(Relaxed);
    if queue.lane.done_upto() >= upto {
        return true;
    }
    queue.raw.trackers().all_finished(drop);
    queue.lane.done_upto() >= upto
}

/// Keeps the event of `queue`'s command `stamp` (one reference of `event`,
/// which this takes; null when OpenCL was not asked for one) to report its
/// completion, and makes a UR event for it when `want_event`. Call it with
/// the order lock held.
pub(crate) fn track(queue: &Queue, command: ur_command_t, stamp: Stamp, event: cl_event, want_event: bool) -> Option<Arc<Event>> {
    if event.is_null() {
        return None;
    }
    if want_event {
        queue.raw.trackers().offer(stamp.seq, trackers::ClEvent(trackers::retained(event)), drop);
        Some(event::wrap(event, Some(arc_of(queue)), queue.context.clone(), command, Some(stamp)))
    } else {
        // Asked for because the trackers keep it.
        trackers::keep(&mut queue.raw.trackers(), stamp.seq, opencl3::event::Event::new(event));
        None
    }
}

/// An event whose completion implies that of `queue`'s command `seq`, or
/// `None` when it has completed. `Err` when none is known and none can be
/// made now: a marker is enqueued for a command that has no event unless
/// another thread is enqueueing on this queue (or this one is, holding the
/// order lock); the caller then waits for the queue on the host.
pub(crate) fn event_covering(queue: &Queue, seq: Seq) -> Result<Option<opencl3::event::Event>, ()> {
    if let Ok(e) = trackers::event_covering(&queue.raw.trackers(), seq) {
        return Ok(e);
    }
    let Some(_order) = queue.raw.order.try_lock() else {
        return Err(());
    };
    if seq > queue.lane.tail().seq {
        return Err(());
    }
    let mut trackers = queue.raw.trackers();
    cover_tail(queue, &mut trackers).map_err(|_| ())?;
    trackers::event_covering(&trackers, seq)
}

/// In order: an event whose completion implies that of command `seq` and
/// every one before it (that command's own, or a later one's), while it
/// has not been seen to finish. Call with the order lock held.
pub(crate) fn event_after(queue: &Queue, seq: Seq) -> Option<opencl3::event::Event> {
    if !queue.lane.is_in_order() {
        return None;
    }
    trackers::event_covering(&queue.raw.trackers(), seq).ok().flatten()
}

/// In order: what stands for command `seq` and every one before it, for a
/// command that waits for nothing else: an event held that covers them,
/// or, when they have all completed (the engine knows), nothing, since the
/// command completes at once. Not on profiling queues, where an event's
/// timestamps must be its command's, nor where the queue's completed user
/// event cannot be made. Call with the order lock held.
pub(crate) fn cover_after(queue: &Queue, seq: Seq) -> Option<Cover> {
    if let Some(e) = event_after(queue, seq) {
        return Some(Cover::Held(e));
    }
    if !queue.lane.is_in_order() || queue.is_profiling() || queue.lane.done_upto() < seq {
        return None;
    }
    completed_cl(queue).map(|_| Cover::Done)
}

/// Settles command `stamp` as [`cover_after`] found it: tracked with the
/// covering event, or completed now. Returns its event when `want_event`.
pub(crate) fn settle(queue: &Queue, command: ur_command_t, stamp: Stamp, cover: Cover, want_event: bool) -> Option<Arc<Event>> {
    match cover {
        Cover::Held(e) => track(queue, command, stamp, usm_async::into_raw(e), want_event),
        Cover::Done => {
            // The command is this queue's: its lane, at hand, needs no
            // lookup in the graph's registry.
            debug_assert_eq!(stamp.lane, queue.lane.id());
            queue.lane.complete(stamp.seq);
            want_event.then(|| event::completed(queue, command, stamp)).flatten()
        }
    }
}

/// `queue`'s completed user event, made on first use, valid while the
/// queue lives (no reference is taken); `None` when the runtime could not
/// make one.
pub(crate) fn completed_cl(queue: &Queue) -> Option<cl_event> {
    let made = queue.raw.completed.get_or_init(|| {
        let event = opencl3::event::Event::new(cl3::event::create_user_event(queue.context.raw.cl.get()).ok()?);
        cl3::event::set_user_event_status(event.get(), sys::CL_COMPLETE).ok()?;
        Some(event)
    });
    made.as_ref().map(|e| e.get())
}

/// Makes sure that an event held covers `queue`'s newest command: when
/// that command has none (OpenCL was not asked for one), a marker behind
/// every command so far gets one. Call with the order lock held (or with
/// the queue to oneself).
fn cover_tail(queue: &Queue, trackers: &mut Trackers) -> Result<(), cl_int> {
    let tail = queue.lane.tail().seq;
    if trackers::event_covering(trackers, tail).is_ok() {
        return Ok(());
    }
    let mut event: cl_event = std::ptr::null_mut();
    driver::marker(queue.raw.cl.get(), &[], &mut event)?;
    queue.raw.gave_cl_work(tail);
    trackers::keep(trackers, tail, opencl3::event::Event::new(event));
    Ok(())
}

impl RawQueue<OpenCl> for QueueCl {
    /// A queue on `device`, a device of `context` (the core refused
    /// device-side flags).
    fn create(context: &Context, device: &Device, flags: ur_queue_flags_t) -> UrResult<Arc<Queue>> {
        let (context, device) = (arc_of(context), device::kept(device));
        let mut properties = conv::queue_flags_to_cl(flags);
        let device_properties = device.raw.queue_properties()?;
        let out_of_order = properties & sys::CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE != 0
            && device_properties & UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0 != 0
            && device.raw.out_of_order_queues;
        if !out_of_order {
            properties &= !sys::CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
        }
        // SAFETY: the device belongs to the context (the core checked).
        let cl = unsafe { CommandQueue::create_with_properties(&context.raw.cl, device.raw.id, properties, 0) }.ur()?;
        Ok(new_queue(context, device, flags, out_of_order, cl, false))
    }

    /// `UR_QUEUE_INFO_EMPTY`: whether every command enqueued so far has
    /// finished, from the events of the newest ones (no wait).
    fn is_empty(queue: &Queue) -> UrResult<bool> {
        let _order = queue.raw.order_lock();
        let mut trackers = queue.raw.trackers();
        cover_tail(queue, &mut trackers).ur()?;
        // A caller polling for empty needs the commands (and the marker
        // just enqueued) to make progress, which OpenCL promises only once
        // they are flushed.
        queue.raw.cl.flush().ur()?;
        Ok(trackers.all_finished(drop))
    }

    /// `urQueueFinish`: waits for every command enqueued so far, and tells
    /// the engine; a host synchronisation point for the context's pools.
    fn finish(queue: &Queue) -> UrResult {
        // Read under the order lock: every command recorded by then is enqueued.
        let last = {
            let _order = queue.raw.order_lock();
            queue.lane.tail().seq
        };
        queue.raw.cl.finish().ur()?;
        queue.raw.trackers().complete_upto(last);
        Ok(())
    }

    fn flush(queue: &Queue) -> UrResult {
        queue.raw.cl.flush().ur()
    }

    fn native_handle(queue: &Queue) -> UrResult<ur_native_handle_t> {
        // The user may enqueue on it from now on, unseen by this queue.
        queue.raw.handed_out();
        Ok(queue.raw.cl.get() as ur_native_handle_t)
    }

    /// `urQueueCreateWithNativeHandle`: a queue over the user's
    /// `cl_command_queue`, which must belong to `context` (and to `device`
    /// when one is named). Its order and profiling come from the OpenCL
    /// queue's properties; `flags` (from a `ur_queue_properties_t` the
    /// caller chained) add the rest of what `UR_QUEUE_INFO_FLAGS` reports.
    /// A borrowed queue is retained here and released with this object; an
    /// owned one takes over the caller's reference.
    fn from_native(native: NativeQueue<'_, OpenCl>) -> UrResult<Arc<Queue>> {
        let NativeQueue { handle: native, context, device, flags, ownership } = native;
        let native = native as sys::cl_command_queue;
        let (context, device) = (arc_of(context), device.map(device::kept));
        let data = |p| cl3::command_queue::get_command_queue_data(native, p);
        let cl_context = crate::driver::value::<sys::cl_context>(data(sys::CL_QUEUE_CONTEXT)).ur()?;
        if cl_context != context.raw.cl.get() {
            return Err(UR_RESULT_ERROR_INVALID_CONTEXT);
        }
        let id = crate::driver::value::<sys::cl_device_id>(data(sys::CL_QUEUE_DEVICE)).ur()?;
        let queue_device = crate::context::device_by_id(&context, id).ok_or(UR_RESULT_ERROR_INVALID_DEVICE)?;
        if device.is_some_and(|d| !std::ptr::eq(d, queue_device)) {
            return Err(UR_RESULT_ERROR_INVALID_DEVICE);
        }
        let properties = crate::driver::value::<sys::cl_command_queue_properties>(data(sys::CL_QUEUE_PROPERTIES)).ur()?;
        let out_of_order = properties & sys::CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE != 0;
        // What the OpenCL queue does decides; the caller's flags may only
        // add what does not change it.
        let decided = UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0 | UR_QUEUE_FLAG_PROFILING_ENABLE.0;
        let flags = (flags & !decided) | (conv::queue_properties_to_ur(properties) & decided);
        if ownership == ur_core::boundary::NativeOwnership::Borrowed {
            // SAFETY: the caller's live queue; this reference is the one the
            // wrapper below releases.
            unsafe { cl3::command_queue::retain_command_queue(native) }.ur()?;
        }
        let cl = CommandQueue::new(native, 3);
        // The user's queue may hold work of theirs.
        Ok(new_queue(context, queue_device, flags, out_of_order, cl, true))
    }

    /// A marker behind the wait list; an event wait or barrier on an
    /// in-order queue may need none (`wait_in_order`). On an in-order
    /// queue every command already waits for the one before it, so a
    /// barrier is a marker there. Hints (prefetch, advice) are markers too:
    /// they keep the command's place in the queue's order, and the memory
    /// is where both host and device reach it anyway (CPU devices,
    /// fine-grained SVM, the runtime's own USM placement).
    fn marker(queue: &Queue, command: ur_command_t, waits: Events<'_, OpenCl>, c: Completion) -> Enqueued<OpenCl> {
        let cl = queue.raw.cl.get();
        if !is_event_wait(command) {
            return submit(queue, command, false, waits, c.want_event, |w, ev| marker(cl, false, w, ev));
        }
        // With an empty list both wait for everything enqueued before
        // (which the engine's graph records only for a barrier: knowing
        // less is safe).
        let barrier = command == UR_COMMAND_EVENTS_WAIT_WITH_BARRIER;
        let listed: Vec<&Event> = waits.iter().collect();
        if let Some(done) = wait_in_order(queue, command, barrier, &listed, c.want_event) {
            return Ok(done);
        }
        let cl_barrier = barrier && queue.raw.out_of_order;
        submit(queue, command, barrier, waits, c.want_event, |w, ev| marker(cl, cl_barrier, w, ev))
    }

    fn fill(queue: &Queue, f: UsmFill<'_>, waits: Events<'_, OpenCl>, c: Completion) -> Enqueued<OpenCl> {
        let listed: Vec<&Event> = waits.iter().collect();
        // SAFETY: `run_on_host` runs it only over memory of a live USM
        // allocation that the host addresses and no command still running
        // can touch.
        let run = || unsafe { fill_on_host(f.dst, f.pattern, f.size) };
        if let Some(done) = run_on_host(queue, f.command, &listed, c.want_event, (f.in_usm, f.size), run) {
            return done;
        }
        let (ctx, cl) = (&*queue.context, queue.raw.cl.get());
        submit(queue, f.command, false, waits, c.want_event, |w, ev| {
            memory::enqueue_fill(ctx, cl, f.dst, f.pattern, f.size, w, ev)
        })
    }

    /// A blocking copy returns once done.
    fn copy(queue: &Queue, m: UsmCopy, waits: Events<'_, OpenCl>, c: Completion) -> Enqueued<OpenCl> {
        let listed: Vec<&Event> = waits.iter().collect();
        // SAFETY: as for a fill, for both ranges; the core refused
        // overlapping ones, and `copy` would take them anyway.
        let run = || unsafe { std::ptr::copy(m.src as *const u8, m.dst as *mut u8, m.size) };
        if let Some(done) = run_on_host(queue, m.command, &listed, c.want_event, (m.in_usm, m.size), run) {
            return done;
        }
        let (ctx, cl) = (&*queue.context, queue.raw.cl.get());
        submit(queue, m.command, false, waits, c.want_event, |w, ev| {
            memory::enqueue_copy(ctx, cl, c.blocking, m.dst, m.src, m.size, w, ev)
        })
    }

    /// One fill when the rows are contiguous, else one per row.
    fn fill_2d(queue: &Queue, f: UsmFill2D<'_>, waits: Events<'_, OpenCl>, c: Completion) -> Enqueued<OpenCl> {
        let (ctx, cl) = (&*queue.context, queue.raw.cl.get());
        submit(queue, UR_COMMAND_USM_FILL_2D, false, waits, c.want_event, |w, ev| {
            if f.pitch == f.width {
                return memory::enqueue_fill(ctx, cl, f.dst, f.pattern, f.width * f.height, w, ev);
            }
            rows(cl, f.height, false, w, ev, |r, w, e| {
                memory::enqueue_fill(ctx, cl, at(f.dst, r * f.pitch), f.pattern, f.width, w, e)
            })
        })
    }

    /// One copy when both sides' rows are contiguous, else one per row.
    fn copy_2d(queue: &Queue, m: UsmCopy2D, waits: Events<'_, OpenCl>, c: Completion) -> Enqueued<OpenCl> {
        let (ctx, cl) = (&*queue.context, queue.raw.cl.get());
        submit(queue, m.command, false, waits, c.want_event, |w, ev| {
            if m.src_pitch == m.width && m.dst_pitch == m.width {
                return memory::enqueue_copy(ctx, cl, c.blocking, m.dst, m.src, m.width * m.height, w, ev);
            }
            rows(cl, m.height, c.blocking, w, ev, |r, w, e| {
                let (dst, src) = (at(m.dst, r * m.dst_pitch), at(m.src, r * m.src_pitch));
                memory::enqueue_copy(ctx, cl, false, dst, src, m.width, w, e)
            })
        })
    }

    fn buffer(queue: &Queue, command: ur_command_t, buffer: BufferCommand<'_, OpenCl>, waits: Events<'_, OpenCl>, c: Completion) -> Enqueued<OpenCl> {
        buffer_commands::enqueue(queue, command, buffer, waits, c)
    }

    fn async_alloc_supported(queue: &Queue) -> bool {
        queue.device.raw.usm_path != UsmPath::None
    }

    type RawWait<'a> = cl_event;
    /// An event of this context that has not completed (a completed one
    /// orders nothing: the runtime need not see it, nor its queue be
    /// flushed for it); one of another context, which OpenCL cannot wait
    /// for on this queue, is waited for on the host.
    fn wait_raw<'a>(queue: &Queue, e: &'a Event) -> UrResult<Option<cl_event>> {
        if e.context.raw.cl.get() != queue.context.raw.cl.get() {
            e.wait()?;
            return Ok(None);
        }
        if e.raw.completed() {
            return Ok(None);
        }
        // OpenCL guarantees progress across queues only once the other
        // queue is flushed.
        if let Some(q) = e.queue.as_ref().filter(|q| !std::ptr::eq(Arc::as_ptr(q), queue)) {
            q.raw.cl.flush().ur()?;
        }
        Ok(Some(e.raw.get()))
    }

    type Order<'a> = MutexGuard<'a, ()>;
    fn order(queue: &Queue) -> UrResult<MutexGuard<'_, ()>> {
        Ok(queue.raw.order_lock())
    }

    /// No command when an earlier one's completion stands for this one's
    /// (`shared_cover`); else a marker or a zeroing fill (`enqueue_command`)
    /// behind the wait list and the engine's extra dependencies.
    fn enqueue_recorded(
        queue: &Queue,
        _order: MutexGuard<'_, ()>,
        c: EngineCommand<'_>,
        waits: Waits,
    ) -> UrResult<Option<Arc<Event>>> {
        let ctx = &queue.context;
        if c.zero.is_none() {
            if let Some(cover) = shared_cover(ctx, queue, &waits, c.deps, c.stamp) {
                return Ok(settle(queue, c.command, c.stamp, cover, c.want_event));
            }
        }
        let mut cl_waits = waits.raw;
        let enqueued = add_dependencies(ctx, queue, c.deps, &mut cl_waits).and_then(|_held| {
            let mut cl_event: cl_event = std::ptr::null_mut();
            enqueue_command(ctx, queue, c.ptr, c.zero, &cl_waits, &mut cl_event).ur()?;
            Ok(cl_event)
        });
        match enqueued {
            Ok(cl_event) => {
                queue.raw.gave_cl_work(c.stamp.seq);
                Ok(track(queue, c.command, c.stamp, cl_event, c.want_event))
            }
            Err(e) => {
                if c.command == UR_COMMAND_ENQUEUE_USM_FREE_EXP {
                    // The engine has taken the block back: what the free was
                    // to wait for must be done before it is reused.
                    if !cl_waits.is_empty() {
                        let _ = cl3::event::wait_for_events(&cl_waits);
                    }
                    if !queue.lane.is_in_order() {
                        ctx.engine.dag().complete(c.stamp);
                    }
                }
                Err(e)
            }
        }
    }

    /// The engine may count what this queue recorded as complete only once
    /// it has run. Nothing waits here (the last release may come on a
    /// runtime callback thread): a queue with commands still running leaves
    /// its trackers to the context, which retires the lane once they finish.
    /// Runs before the fields drop: the OpenCL queue is released after.
    fn release(queue: &mut Queue) {
        let mut trackers = std::mem::replace(queue.raw.trackers.get_mut(), Trackers::new(queue.lane.clone()));
        let queue = &*queue;
        if cover_tail(queue, &mut trackers).is_err() {
            // No marker (the runtime refused): the queue's own finish it is.
            let _ = queue.raw.cl.finish();
            trackers.complete_upto(queue.lane.tail().seq);
        }
        if trackers.all_finished(drop) {
            queue.context.engine.dag().retire_lane(&queue.lane);
        } else {
            // Releasing the OpenCL queue flushes it, so its commands run.
            queue.context.raw.adopt(trackers);
        }
    }
}
