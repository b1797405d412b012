//! Queues: the core's `Queue` with a [`QueueZe`] as its raw part (one
//! immediate command list each), and `impl RawQueue`; [`submit`], how
//! every command passes the core's submission path (which translates its
//! wait list and records its node), and [`append_given`], its append: its
//! Level Zero event taken and the command kept until seen to complete.
//!
//! A Level Zero command list does not order its commands by itself, so on
//! an in-order queue every command also waits for the event of the one
//! before it.
//!
//! Locks: `order` (held from a command's node to its append, so that the
//! engine's sequence numbers follow the list) is taken before `tracker`,
//! and a queue never holds another queue's `order`; `tracker` locks are
//! leaves, taken of any queue of the context while finding what covers a
//! command of the engine's graph.
//!
//! Commands: USM fills and copies, waits, barriers and markers as appends
//! to a queue's immediate command list, each through [`submit`]; and
//! stream-ordered USM (`urEnqueueUSM*AllocExp`, `urEnqueueUSMFreeExp`)
//! through the shared async pool engine.
//!
//! A marker (an event wait, a prefetch or advice hint, an async allocation
//! or free that the engine gave a node) is a barrier with a wait list:
//! Level Zero's only command that signals after other events and does
//! nothing else. It also holds back later commands, which only ever waits
//! more than UR asks.

use crate::context::{self, Context};
use crate::conv::ZeExt;
use crate::device::Device;
use crate::driver::{check, ImmediateList};
use crate::event::{self, Command, Event, ZeEvent};
use crate::{ze, LevelZero};
use level_zero_sys::*;
use std::ffi::c_void;
use std::sync::Arc;
use ur_core::engine::{Cover, QueueOrder, Seq, Stamp, Tracker};
use ur_core::hal::{Completion, Events, UsmCopy, UsmCopy2D, UsmFill, UsmFill2D};
use ur_core::handle::arc_of;
use ur_core::lock_order::{Mutex, MutexGuard, Rank};
use ur_core::queue::object::{Enqueued, RawQueue};
use ur_core::queue::{EngineCommand, Node};
use ur_core::*;

/// What a command waits on, as Level Zero events.
pub type Waits = ur_core::queue::Waits<Arc<ZeEvent>>;

/// A UR queue of this adapter: the core's, with [`QueueZe`] as its raw
/// part.
pub type Queue = ur_core::queue::object::Queue<LevelZero>;

/// Serialised appends: the newest command's event, for in-order chaining.
pub struct Order {
    last: Option<Arc<ZeEvent>>,
}

/// What a Level Zero queue keeps beside the core's fields. The core drops
/// it first, so the command list goes while its context lives.
pub struct QueueZe {
    list: ImmediateList,
    order: Mutex<Order>,
    tracker: Mutex<Tracker<Arc<Command>>>,
}

impl QueueZe {
    fn tracker(&self) -> MutexGuard<'_, Tracker<Arc<Command>>> {
        self.tracker.lock()
    }

    /// Keeps `command` (of node `seq`) until seen to complete; looks at the
    /// older ones now and then. Call it with the order lock held.
    fn track(&self, seq: Seq, command: Arc<Command>) {
        let mut tracker = self.tracker();
        tracker.push(seq, command);
        tracker.poll_if_due(drop);
    }

    /// What covers command `seq` of this queue: `Done`, or a command whose
    /// completion implies it; `None` while its append is still under way.
    pub fn cover(&self, seq: Seq) -> Option<Cover<Arc<Command>>> {
        match self.tracker().cover(seq) {
            Some(Cover::By(c)) => Some(Cover::By(c.clone())),
            Some(_) => Some(Cover::Done),
            None => None,
        }
    }

    /// Whether commands are still held as running.
    pub fn busy(&self) -> bool {
        !self.tracker().is_empty()
    }
}

/// Appends one command through the core's submission path
/// (`ur_core::queue::submit`), which translates the wait list and records
/// the command's node; a barrier also holds back later commands. `append`
/// gets the list, the event the command must signal, and the events it
/// must wait on. The command's event is returned when `want_event`.
pub fn submit(
    queue: &Queue,
    command: ur_command_t,
    barrier: bool,
    events: Events<'_, LevelZero>,
    want_event: bool,
    keep: Option<Box<[u8]>>,
    append: impl FnOnce(ze_command_list_handle_t, ze_event_handle_t, &mut Vec<ze_event_handle_t>) -> Result<(), ze_result_t>,
) -> UrResult<Option<Arc<Event>>> {
    ur_core::queue::submit::submit(queue, barrier, events, |order, waits, node| {
        append_given(&arc_of(queue), order, command, node, waits, want_event, keep, append)
    })
}

/// Appends the command of `node`, recorded already (by the core's
/// submission path, or by the engine for an async allocation or free),
/// under the order lock taken when it was recorded.
pub fn append_given(
    queue: &Arc<Queue>,
    mut order: MutexGuard<'_, Order>,
    command: ur_command_t,
    node: Node,
    mut waits: Waits,
    want_event: bool,
    keep: Option<Box<[u8]>>,
    append: impl FnOnce(ze_command_list_handle_t, ze_event_handle_t, &mut Vec<ze_event_handle_t>) -> Result<(), ze_result_t>,
) -> UrResult<Option<Arc<Event>>> {
    let Node::Given { stamp, deps, .. } = node else { unreachable!("every command is recorded") };
    let in_order = queue.lane.is_in_order();
    let done = queue.context.raw.event_cache(queue.is_profiling()).take()?;
    context::add_dependencies(&queue.context, queue, deps, &mut waits.raw);
    if let Some(last) = order.last.as_ref().filter(|_| in_order) {
        waits.raw.push(last.clone());
    }
    let submitted_ns = if queue.is_profiling() { Some(queue.device.raw.now_ns()?) } else { None };
    let mut raw: Vec<ze_event_handle_t> = waits.raw.iter().map(|e| e.raw).collect();
    if let Err(e) = append(queue.raw.list.0, done.raw, &mut raw) {
        // Nothing ran. Out of order the node completes on its own; in
        // order the next command settles it.
        if !in_order {
            queue.context.engine.dag().complete(stamp);
        }
        return Err(crate::conv::result(e));
    }
    if in_order {
        order.last = Some(done.clone());
    }
    queue.raw.track(stamp.seq, Command::new(done.clone(), waits.raw, keep));
    drop(order);
    Ok(want_event.then(|| event::new(queue, command, done, Some(stamp), submitted_ns)))
}

/// An allocation or free with nothing to run, on an in-order queue whose
/// newest command already follows everything it waits for: that command's
/// event is its own. `None` when there is no such command.
pub fn share_newest(
    queue: &Arc<Queue>,
    order: &MutexGuard<'_, Order>,
    command: ur_command_t,
    stamp: Stamp,
    want_event: bool,
) -> Option<Option<Arc<Event>>> {
    let last = order.last.clone()?;
    let cmd = Command::new(last.clone(), Vec::new(), None);
    queue.raw.track(stamp.seq, cmd);
    Some(want_event.then(|| event::new(queue, command, last, Some(stamp), None)))
}

/// `urQueueFinish` without the pools' collection: waits for every command
/// appended so far.
pub fn wait_for_all(queue: &Queue) -> UrResult {
    let (last_seq, newest) = {
        let order = queue.raw.order.lock();
        (queue.lane.tail().seq, order.last.clone())
    };
    match newest {
        // In order, the newest command's completion implies all others.
        Some(e) => e.wait()?,
        // Out of order, each command held is waited for.
        None => queue.raw.tracker().wait_all(drop),
    }
    queue.raw.tracker().complete_upto(last_seq);
    Ok(())
}

/// In order, with a wait list and engine dependencies that name only this
/// queue's earlier commands: its newest command covers them all.
fn needs_nothing_run(queue: &Queue, waits: &Waits, deps: &[Stamp]) -> bool {
    queue.lane.is_in_order() && waits.only_lane(&queue.lane) && deps.iter().all(|d| d.lane == queue.lane.id())
}

fn wait_ptr(waits: &mut [ze_event_handle_t]) -> *mut ze_event_handle_t {
    if waits.is_empty() {
        std::ptr::null_mut()
    } else {
        waits.as_mut_ptr()
    }
}

/// A barrier after `waits` (after every earlier command when empty) that
/// signals `signal`.
fn barrier(list: ze_command_list_handle_t, signal: ze_event_handle_t, waits: &mut [ze_event_handle_t]) -> Result<(), ze_result_t> {
    // SAFETY: a live list; live events of its context.
    check(unsafe { ze!(zeCommandListAppendBarrier(list, signal, waits.len() as u32, wait_ptr(waits))) })
}

fn fill(
    list: ze_command_list_handle_t,
    dst: *mut c_void,
    pattern: &[u8],
    size: usize,
    signal: ze_event_handle_t,
    waits: &mut [ze_event_handle_t],
) -> Result<(), ze_result_t> {
    // SAFETY: a live list; memory the core checked to lie in a live
    // allocation; the pattern is kept alive until the command completes.
    check(unsafe {
        ze!(zeCommandListAppendMemoryFill(
            list,
            dst,
            pattern.as_ptr() as *const c_void,
            pattern.len(),
            size,
            signal,
            waits.len() as u32,
            wait_ptr(waits)
        ))
    })
}

fn copy(
    list: ze_command_list_handle_t,
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    signal: ze_event_handle_t,
    waits: &mut [ze_event_handle_t],
) -> Result<(), ze_result_t> {
    // SAFETY: a live list; regions the core checked.
    check(unsafe { ze!(zeCommandListAppendMemoryCopy(list, dst, src, size, signal, waits.len() as u32, wait_ptr(waits))) })
}

/// The address `offset` bytes past `ptr`.
fn at(ptr: *const c_void, offset: usize) -> *mut c_void {
    (ptr as *const u8).wrapping_add(offset) as *mut c_void
}

/// A pattern the device cannot fill with, as the bytes of a copy.
fn repeated(pattern: &[u8], size: usize) -> Box<[u8]> {
    pattern.iter().copied().cycle().take(size).collect()
}

/// Appends `row` for every row, each after `waits`, then a barrier that
/// signals `signal` once all have run.
fn rows(
    list: ze_command_list_handle_t,
    height: usize,
    signal: ze_event_handle_t,
    waits: &mut [ze_event_handle_t],
    mut row: impl FnMut(usize, &mut [ze_event_handle_t]) -> Result<(), ze_result_t>,
) -> Result<(), ze_result_t> {
    for r in 0..height {
        row(r, waits)?;
    }
    barrier(list, signal, &mut [])
}

/// Zeroes `size` bytes at `ptr` (of `device`'s memory, or host memory) and
/// waits: a new allocation of a zero-initialising pool.
pub fn zero_fill(ctx: &Context, device: &Arc<Device>, ptr: *mut c_void, size: usize) -> UrResult {
    let list = ImmediateList::create(&ctx.raw.ze, device.raw.ze, device.raw.facts.ordinal).ur()?;
    let done = ctx.raw.event_cache(false).take()?;
    fill(list.0, ptr, &[0u8], size, done.raw, &mut []).ur()?;
    done.wait()
}

impl RawQueue<LevelZero> for QueueZe {
    fn create(context: &Context, device: &Device, flags: ur_queue_flags_t) -> UrResult<Arc<Queue>> {
        let (context, device) = (arc_of(context), arc_of(device));
        let list = ImmediateList::create(&context.raw.ze, device.raw.ze, device.raw.facts.ordinal).ur()?;
        let order = if flags & UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0 != 0 {
            QueueOrder::OutOfOrder
        } else {
            QueueOrder::InOrder
        };
        let lane = context.engine.dag().create_lane(order);
        let raw = QueueZe {
            list,
            order: Mutex::new(Rank::QueueSubmit, Order { last: None }),
            tracker: Mutex::new(Rank::QueueTrackers, Tracker::new(lane.clone())),
        };
        Ok(Queue::new(context, device, flags, lane, raw))
    }

    /// Whether every command appended so far has completed (no wait).
    fn is_empty(queue: &Queue) -> UrResult<bool> {
        Ok(queue.raw.tracker().all_finished(drop))
    }

    /// A host synchronisation point for the context's pools.
    fn finish(queue: &Queue) -> UrResult {
        wait_for_all(queue)
    }

    /// A barrier behind the wait list (behind everything before when it is
    /// empty); hints (prefetch, advice) too: the memory is where host and
    /// device reach it.
    fn marker(queue: &Queue, command: ur_command_t, waits: Events<'_, LevelZero>, c: Completion) -> Enqueued<LevelZero> {
        let is_barrier = command == UR_COMMAND_EVENTS_WAIT_WITH_BARRIER;
        submit(queue, command, is_barrier, waits, c.want_event, None, |l, s, w| barrier(l, s, w))
    }

    /// A pattern longer than the device fills with is copied from a
    /// buffer of it repeated.
    fn fill(queue: &Queue, f: UsmFill<'_>, waits: Events<'_, LevelZero>, c: Completion) -> Enqueued<LevelZero> {
        let (dst, size) = (f.dst, f.size);
        if f.pattern.len() > queue.device.raw.facts.max_fill_pattern {
            let bytes = repeated(f.pattern, size);
            let src = bytes.as_ptr() as *const c_void;
            return submit(queue, f.command, false, waits, c.want_event, Some(bytes), |l, s, w| {
                copy(l, dst, src, size, s, w)
            });
        }
        let kept: Box<[u8]> = f.pattern.into();
        let (p, n) = (kept.as_ptr(), kept.len());
        submit(queue, f.command, false, waits, c.want_event, Some(kept), |l, s, w| {
            // SAFETY: `p` points at the kept copy of the pattern.
            fill(l, dst, unsafe { std::slice::from_raw_parts(p, n) }, size, s, w)
        })
    }

    fn copy(queue: &Queue, m: UsmCopy, waits: Events<'_, LevelZero>, c: Completion) -> Enqueued<LevelZero> {
        submit(queue, m.command, false, waits, c.want_event, None, |l, s, w| {
            copy(l, m.dst, m.src, m.size, s, w)
        })
    }

    /// One row pattern, copied to every row.
    fn fill_2d(queue: &Queue, f: UsmFill2D<'_>, waits: Events<'_, LevelZero>, c: Completion) -> Enqueued<LevelZero> {
        let row = repeated(f.pattern, f.width);
        let src = row.as_ptr() as *const c_void;
        submit(queue, UR_COMMAND_USM_FILL_2D, false, waits, c.want_event, Some(row), |l, s, w| {
            rows(l, f.height, s, w, |r, w| copy(l, at(f.dst, r * f.pitch), src, f.width, std::ptr::null_mut(), w))
        })
    }

    fn copy_2d(queue: &Queue, m: UsmCopy2D, waits: Events<'_, LevelZero>, c: Completion) -> Enqueued<LevelZero> {
        submit(queue, m.command, false, waits, c.want_event, None, |l, s, w| {
            rows(l, m.height, s, w, |r, w| {
                copy(l, at(m.dst, r * m.dst_pitch), at(m.src, r * m.src_pitch), m.width, std::ptr::null_mut(), w)
            })
        })
    }

    fn async_alloc_supported(_: &Queue) -> bool {
        true
    }

    type RawWait<'a> = Arc<ZeEvent>;
    /// The Level Zero events a UR wait list stands for. Events of another
    /// context, which no command of this one can wait on, are waited for
    /// on the host first.
    fn wait_raw<'a>(queue: &Queue, event: &'a Event) -> UrResult<Option<Arc<ZeEvent>>> {
        if Arc::ptr_eq(&event.context.raw.ze, &queue.context.raw.ze) {
            return Ok(Some(event.raw.done.clone()));
        }
        event::wait(event)?;
        Ok(None)
    }

    type Order<'a> = MutexGuard<'a, Order>;
    /// Held from a command's node in the engine's graph to its append.
    fn order(queue: &Queue) -> UrResult<MutexGuard<'_, Order>> {
        Ok(queue.raw.order.lock())
    }

    /// No command when, in order, the newest command already follows
    /// everything it waits for (its event is this one's); else a barrier, or
    /// a zeroing fill, behind the wait list and the engine's dependencies.
    fn enqueue_recorded(
        queue: &Queue,
        order: MutexGuard<'_, Order>,
        c: EngineCommand<'_>,
        waits: Waits,
    ) -> UrResult<Option<Arc<Event>>> {
        let this = &arc_of(queue);
        if c.zero.is_none() && needs_nothing_run(queue, &waits, c.deps) {
            if let Some(event) = share_newest(this, &order, c.command, c.stamp, c.want_event) {
                return Ok(event);
            }
        }
        let (ptr, zero) = (c.ptr, c.zero);
        append_given(this, order, c.command, Node::of(&c), waits, c.want_event, None, |l, s, w| match zero {
            Some(bytes) => fill(l, ptr, &[0u8], bytes, s, w),
            None => barrier(l, s, w),
        })
    }

    /// A command list may only go once its commands have run; then the
    /// lane may retire. Runs before the core drops the fields, so the list
    /// (dropped with `raw`, first) goes while the context lives.
    fn release(queue: &mut Queue) {
        queue.raw.tracker.get_mut().wait_all(drop);
        queue.raw.order.get_mut().last = None;
        queue.context.engine.dag().retire_lane(&queue.lane);
    }
}
