//! Queues and their workers: the core's queue over [`QueueShared`], with
//! its `RawQueue` impl.
//!
//! Each queue owns its worker threads (never a pool shared across queues, so
//! a command blocked on another queue's event cannot starve that queue). An
//! in-order queue has one worker running commands first in, first out; an
//! out-of-order queue has a few, and any command whose dependencies are done
//! may run. Commands are numbered in enqueue order (`seq`); the queue tracks
//! them by number, so a command needs no event unless the caller asked for
//! one. A command waits for the events of its wait list, from any queue:
//! those events wake the queue when they finish.
//!
//! The last release of a queue closes it and waits until what was enqueued
//! has run; then its workers leave and are joined. Commands hold the USM
//! allocations they touch, so nothing they use is freed early.
//!
//! Every command is also a node of the context's async pool engine graph:
//! the queue is a lane, and a command's `seq` is its seq on that lane.
//! Commands come through the core's submission path
//! (`ur_core::queue::submit`), which records them under the queue's lock
//! (`RawQueue::command_order`); they are queued under it too. Async
//! allocations and frees are recorded by the engine itself (the core's
//! `ur_core::queue::usm_async`, under `RawQueue::order`); on an in-order
//! queue without the queue's lock (that is what keeps the common
//! alloc/free pair cheap), so a command
//! may be queued after one with a higher seq: pending commands are kept in
//! seq order, and an in-order queue starts seq `n` only after `n - 1`. The
//! engine may make a command wait for a command of any queue of the context
//! by its stamp.
//!
//! Layout: this file holds the queue's types, the handle's operations
//! (submitting, the engine's commands, finishing) and its `RawQueue`
//! impl (the enqueued USM commands among them); `shared.rs` the shared
//! state's bookkeeping (queuing, waiting, retiring,
//! and which command may start next); `worker.rs` the worker threads that
//! run commands, and their joining; `command.rs` what a command does when
//! it runs, and which memory it may touch; `usm_async.rs` the async
//! allocations and frees; `tests.rs` the unit tests.

use crate::context::Context;
use crate::device::{Device, ASYNC_USM_ALLOCATIONS_SUPPORT};
use crate::event::Event;
use command::{resolve, Command, Pattern, UsmPtr};
use crate::NativeCpu;
use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use ur_core::lock_order::{Condvar, Mutex, MutexGuard, Rank};
use ur_core::engine::{Lane, QueueOrder, Stamp};
use ur_core::hal::{is_event_wait, region_bytes, Completion, Events, UsmCopy, UsmCopy2D, UsmFill, UsmFill2D};
use ur_core::queue::object::{Enqueued, RawQueue};
use ur_core::queue::{EngineCommand, Node, Waits};
use ur_core::handle::arc_of;
use ur_core::*;

pub mod command;
mod shared;
mod usm_async;
mod worker;
#[cfg(test)]
mod tests;

pub use worker::join_released_workers;
use shared::deps_done;
use worker::{execute, join_workers_of, WORKER_OF};

/// The queue: the core's [`ur_core::queue::object::Queue`] over the state
/// its workers share ([`QueueShared`]). Workers and events hold the shared
/// state or the queue itself; users hold the handle, whose header counts
/// their references.
pub type Queue = ur_core::queue::object::Queue<NativeCpu>;

/// What the workers of a queue share with it: the queue's raw part. The
/// workers outlive the handle until they have run what was enqueued, so
/// they hold their own references to the context and the lane.
pub struct QueueShared {
    /// Unique in the process: names the queue in command positions.
    pub id: u64,
    pub context: Arc<Context>,
    /// The queue's lane in the engine's graph (the core queue's).
    pub lane: Arc<Lane>,
    /// Commands' events keep device timestamps.
    pub profiling: bool,
    /// A worker exists (set once, before the first is started): commands
    /// queued without the lock will run.
    has_worker: AtomicBool,
    in_order: bool,
    max_workers: usize,
    state: Mutex<State>,
    /// Workers sleep here: new work, or a dependency finished.
    work: Condvar,
    /// `urQueueFinish` sleeps here: a command retired.
    retired: Condvar,
}

/// How a command is ordered beyond its wait list.
#[derive(Clone, Copy, Default, Debug)]
pub struct Order {
    /// Runs only after every command enqueued before it finished.
    pub after_all: bool,
    /// No command enqueued after it starts before it finished (a barrier).
    pub fence: bool,
}

struct Task {
    seq: u64,
    order: Order,
    command: Command,
    deps: Vec<Arc<Event>>,
    after: Option<Stamp>,
    event: Option<Arc<Event>>,
}

struct Running {
    seq: u64,
    fence: bool,
}

#[derive(Default)]
pub struct State {
    /// In-order queues: the seq of the next command to start.
    next_start: u64,
    /// Not started, in `seq` order.
    pending: VecDeque<Task>,
    running: Vec<Running>,
    workers: usize,
    idle_workers: usize,
    /// Threads asleep on `retired`; waking costs a system call, so only
    /// when someone sleeps.
    finishers: usize,
    closed: bool,
    /// The earliest failure `urQueueFinish` has not reported yet.
    unreported_failure: Option<(u64, ur_result_t)>,
}

static NEXT_QUEUE_ID: AtomicU64 = AtomicU64::new(1);

/// Commands in flight a finished queue keeps room for.
const KEEP_SLOTS: usize = 64;

/// Bookkeeping given back at once above which `urQueueFinish` also hands
/// the allocator's free pages back to the system (a burst of some ten
/// thousand commands or more; the commands' own objects were freed as they
/// completed, and glibc keeps freed pages resident otherwise).
const TRIM_AFTER_BYTES: usize = 1 << 20;

/// Fills a new block with zeros, as its allocation command.
fn zero_block(addr: usize, bytes: usize) -> Command {
    Command::Host(Box::new(move || {
        // SAFETY: the engine gave this block to the allocation being run;
        // no command ordered after it has started yet.
        unsafe { (addr as *mut u8).write_bytes(0, bytes) };
        Ok(())
    }))
}

pub fn new_queue(context: Arc<Context>, device: Arc<Device>, flags: ur_queue_flags_t) -> Arc<Queue> {
    let in_order = flags & UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0 == 0;
    let max_workers = if in_order { 1 } else { (device.raw.host.compute_units as usize).clamp(2, 4) };
    let order = if in_order { QueueOrder::InOrder } else { QueueOrder::OutOfOrder };
    let lane = context.engine.dag().create_lane(order);
    let shared = Arc::new(QueueShared {
        id: NEXT_QUEUE_ID.fetch_add(1, Ordering::Relaxed),
        context: context.clone(),
        profiling: flags & UR_QUEUE_FLAG_PROFILING_ENABLE.0 != 0,
        state: Mutex::new(Rank::QueueSubmit, State { next_start: lane.tail().seq + 1, ..State::default() }),
        lane: lane.clone(),
        has_worker: AtomicBool::new(false),
        in_order,
        max_workers,
        work: Condvar::new(),
        retired: Condvar::new(),
    });
    shared.context.raw.register_queue(&shared);
    Queue::new(context, device, flags, lane, shared)
}

/// Hands a command to the workers, after `events`, through the core's
/// submission path (which records its node); returns once it is queued,
/// not run. A blocking command on an idle queue, whose wait list is done,
/// runs on the calling thread instead (it has nothing to wait for, and the
/// caller would only sleep while a worker woke up): it has returned by
/// then. So does a small fill or copy on an idle in-order queue
/// ([`INLINE_MAX`]), where a worker's wake-up would cost more than it.
pub fn submit(
    queue: &Queue,
    command_type: ur_command_t,
    command: Command,
    order: Order,
    events: Events<'_, NativeCpu>,
    c: Completion,
) -> Enqueued<NativeCpu> {
    ur_core::queue::submit::submit(queue, order.fence, events, |st, waits, node| {
        let Node::Given { stamp, .. } = node else { unreachable!("every command is recorded") };
        let st = st.expect("a command's order holds the lock");
        Ok(queue_task(queue, st, stamp.seq, command_type, command, order, waits.raw, c))
    })
}

/// The largest fill or copy that an idle in-order queue runs on the
/// calling thread: a 64 KiB memset takes a few microseconds, about what
/// waking a worker costs.
const INLINE_MAX: usize = 64 * 1024;

/// Queues (or runs here, see [`submit`]) command `seq`, under the lock.
fn queue_task(
    queue: &Queue,
    mut st: MutexGuard<'_, State>,
    seq: u64,
    command_type: ur_command_t,
    command: Command,
    order: Order,
    mut deps: Vec<Arc<Event>>,
    c: Completion,
) -> Option<Arc<Event>> {
    let q = &queue.raw;
    let small = q.in_order && command.bytes().is_some_and(|b| b <= INLINE_MAX);
    let may_inline = (c.blocking || small) && st.pending.is_empty() && st.running.is_empty() && deps.iter().all(|d| d.raw.is_done());
    let inline = may_inline && st.start_here(q.in_order, seq, order.fence);
    let event = c.want_event.then(|| crate::event::new(arc_of(queue), command_type, seq));
    let task = |deps| Task { seq, order, command, deps, after: None, event: event.clone() };
    if inline {
        drop(st);
        execute(q, task(deps));
    } else {
        deps.retain(|d| d.raw.wake_on_done(Arc::downgrade(q)));
        q.enqueue(&mut st, task(deps));
    }
    event
}

/// The queue's order for an engine operation (an async allocation or
/// free), held until the command it records is queued
/// (`RawQueue::enqueue_recorded`).
///
/// On an in-order queue that has its worker, the operation runs without
/// the queue's lock (`None`): usually the engine needs no command at
/// all, and when it records one, the queue starts it in seq order
/// wherever it lands in the queue. Elsewhere it runs under the lock, so
/// that a command it records is queued before any later one (an
/// out-of-order queue's barriers order by what is queued).
#[inline]
fn engine_order(queue: &Queue) -> UrResult<Option<MutexGuard<'_, State>>> {
    let q = &queue.raw;
    if q.in_order && q.has_worker.load(Ordering::Acquire) {
        return Ok(None);
    }
    locked_order(queue).map(Some)
}

/// The queue's lock, on a queue that takes work and has a worker: taken
/// before anything is recorded, so that queuing cannot fail after.
fn locked_order(queue: &Queue) -> UrResult<MutexGuard<'_, State>> {
    let q = &queue.raw;
    let mut st = q.lock();
    if st.closed {
        return Err(UR_RESULT_ERROR_INVALID_QUEUE);
    }
    q.ensure_worker(&mut st)?;
    Ok(st)
}

/// Queues the command the engine recorded, under the queue's lock `st`.
/// A marker whose wait list and engine dependency are done, on a queue
/// with nothing before it pending or running, runs on the calling
/// thread instead: handing it to the worker would cost a wake-up and a
/// switch to run nothing.
fn enqueue_engine(queue: &Queue, mut st: MutexGuard<'_, State>, deps: Vec<Arc<Event>>, c: EngineCommand<'_>) -> Option<Arc<Event>> {
    let q = &queue.raw;
    let seq = c.stamp.seq;
    debug_assert_eq!(c.stamp.lane, q.lane.id(), "the engine recorded on the queue's lane");
    let event = c.want_event.then(|| crate::event::new(arc_of(queue), c.command, seq));
    let command = match c.zero {
        Some(bytes) => zero_block(c.ptr as usize, bytes),
        None => Command::Marker,
    };
    let order = Order::default();
    // The engine gives a block at most one command to wait for.
    let after = c.deps.first().copied();
    let mut task = Task { seq, order, command, deps, after, event: event.clone() };
    if c.zero.is_none() && deps_done(&task, q) && st.start_here(q.in_order, seq, order.fence) {
        drop(st);
        execute(q, task);
        return event;
    }
    task.deps.retain(|d| d.raw.wake_on_done(Arc::downgrade(q)));
    if let Some(s) = after {
        crate::context::watch_stamp(&q.context, q, s);
    }
    q.enqueue(&mut st, task);
    event
}

/// `urQueueFinish`: blocks until everything enqueued so far finished,
/// then reports the first of them that failed since the last finish.
pub fn wait_for_all(queue: &Queue) -> UrResult {
    let q = &queue.raw;
    let mut st = q.lock();
    let last = q.lane.tail().seq + 1;
    st = q.wait_before(st, last);
    q.give_back(&mut st);
    match st.unreported_failure.take_if(|(seq, _)| *seq < last) {
        Some((_, code)) => Err(code),
        None => Ok(()),
    }
}

/// Heap bytes of the queue's per-command bookkeeping (its pending and
/// running lists and its lane's node ring, used or not): they grow to
/// the most commands in flight at once, and [`wait_for_all`]
/// gives back what a burst left.
pub fn retained_bytes(queue: &Queue) -> usize {
    let q = &queue.raw;
    let st = q.lock();
    st.pending.capacity() * std::mem::size_of::<Task>()
        + st.running.capacity() * std::mem::size_of::<Running>()
        + q.lane.retained_bytes()
}

/// Called when the user's last reference goes: workers finish what was
/// enqueued, then leave.
pub fn close(queue: &Queue) {
    queue.raw.close();
}

/// Blocks until nothing is pending or running.
fn drain(queue: &Queue) {
    let q = &queue.raw;
    let mut st = q.lock();
    while !(st.pending.is_empty() && st.running.is_empty()) {
        st.finishers += 1;
        st = q.retired.wait(st);
        st.finishers -= 1;
    }
}

/// A pointer a command will access for `len` bytes (the core checked the
/// bounds): a USM allocation of the context is held by the command.
fn usm_ptr(queue: &Queue, addr: *const c_void, len: usize) -> UrResult<UsmPtr> {
    let owner = resolve(&queue.context, addr as *const u8, len)?;
    // SAFETY: `owner` holds a range checked to cover `len` bytes, or the
    // caller vouches for host memory of its own, as UR requires.
    Ok(unsafe { UsmPtr::new(addr as *mut u8, owner) })
}

impl RawQueue<NativeCpu> for Arc<QueueShared> {
    fn create(context: &Context, device: &Device, flags: ur_queue_flags_t) -> UrResult<Arc<Queue>> {
        // Priority, submission, device-queue and event-discarding flags are
        // hints a host device honours by changing nothing.
        let queue = new_queue(arc_of(context), arc_of(device), flags);
        log::debug(&format!("queue {} created, flags {flags:#x}", queue.raw.id));
        Ok(queue)
    }

    /// Closes the queue and, unless called from one of its own workers (a
    /// callback), waits for its commands and joins its workers: when the
    /// release returns, everything enqueued has completed, and what it freed
    /// asynchronously is free in its pools.
    fn last_user_release(queue: &Queue) {
        close(queue);
        if WORKER_OF.get() != queue.raw.id {
            drain(queue);
            join_workers_of(&queue.raw);
            queue.raw.retire_lane();
            queue.context.collect_pools();
        }
    }

    fn release(queue: &mut Queue) {
        queue.raw.close();
    }

    /// No command pending or running.
    fn is_empty(queue: &Queue) -> UrResult<bool> {
        let st = queue.raw.lock();
        Ok(st.pending.is_empty() && st.running.is_empty())
    }

    /// (The core collects the context's pools after it.)
    fn finish(queue: &Queue) -> UrResult {
        wait_for_all(queue)
    }

    /// An event wait or barrier with an empty list runs after every
    /// command before it; a hint only keeps its place.
    fn marker(queue: &Queue, command: ur_command_t, waits: Events<'_, NativeCpu>, c: Completion) -> Enqueued<NativeCpu> {
        let waits_all = is_event_wait(command) && waits.is_empty();
        let order = Order { after_all: waits_all, fence: command == UR_COMMAND_EVENTS_WAIT_WITH_BARRIER };
        submit(queue, command, Command::Marker, order, waits, c)
    }

    fn fill(queue: &Queue, f: UsmFill<'_>, waits: Events<'_, NativeCpu>, c: Completion) -> Enqueued<NativeCpu> {
        let command = Command::Fill { dst: usm_ptr(queue, f.dst, f.size)?, pattern: Pattern::new(f.pattern), size: f.size };
        submit(queue, f.command, command, Order::default(), waits, c)
    }

    fn copy(queue: &Queue, m: UsmCopy, waits: Events<'_, NativeCpu>, c: Completion) -> Enqueued<NativeCpu> {
        let command = Command::Copy { dst: usm_ptr(queue, m.dst, m.size)?, src: usm_ptr(queue, m.src, m.size)?, size: m.size };
        submit(queue, m.command, command, Order::default(), waits, c)
    }

    fn fill_2d(queue: &Queue, f: UsmFill2D<'_>, waits: Events<'_, NativeCpu>, c: Completion) -> Enqueued<NativeCpu> {
        let command = Command::Fill2D {
            dst: usm_ptr(queue, f.dst, region_bytes(f.pitch, f.width, f.height)?)?,
            pitch: f.pitch,
            pattern: Pattern::new(f.pattern),
            width: f.width,
            height: f.height,
        };
        submit(queue, UR_COMMAND_USM_FILL_2D, command, Order::default(), waits, c)
    }

    fn copy_2d(queue: &Queue, m: UsmCopy2D, waits: Events<'_, NativeCpu>, c: Completion) -> Enqueued<NativeCpu> {
        let command = Command::Copy2D {
            dst: usm_ptr(queue, m.dst, region_bytes(m.dst_pitch, m.width, m.height)?)?,
            dst_pitch: m.dst_pitch,
            src: usm_ptr(queue, m.src, region_bytes(m.src_pitch, m.width, m.height)?)?,
            src_pitch: m.src_pitch,
            width: m.width,
            height: m.height,
        };
        submit(queue, m.command, command, Order::default(), waits, c)
    }

    // Host memory has nowhere to migrate to, and ignores advice: prefetch
    // and advice are the default markers.

    fn async_alloc_supported(_: &Queue) -> bool {
        ASYNC_USM_ALLOCATIONS_SUPPORT
    }

    /// The wait list's pending events (a worker waits on each).
    type RawWait<'a> = Arc<Event>;
    #[inline]
    fn wait_raw<'a>(_: &Queue, event: &'a Event) -> UrResult<Option<Arc<Event>>> {
        Ok((!event.raw.is_done()).then(|| arc_of(event)))
    }

    type Order<'a> = Option<MutexGuard<'a, State>>;
    #[inline]
    fn order(queue: &Queue) -> UrResult<Option<MutexGuard<'_, State>>> {
        engine_order(queue)
    }

    /// A command of the queue's own always takes the lock: it is recorded
    /// and queued under it. A worker is started first, so that queuing
    /// cannot fail once the command is recorded.
    fn command_order(queue: &Queue) -> UrResult<Option<MutexGuard<'_, State>>> {
        locked_order(queue).map(Some)
    }

    /// Queues the engine's command; taken without the lock, it takes it now.
    fn enqueue_recorded(
        queue: &Queue,
        order: Option<MutexGuard<'_, State>>,
        command: EngineCommand<'_>,
        waits: Waits<Arc<Event>>,
    ) -> UrResult<Option<Arc<Event>>> {
        let st = order.unwrap_or_else(|| queue.raw.lock());
        Ok(enqueue_engine(queue, st, waits.raw, command))
    }
}

impl Drop for QueueShared {
    /// No worker is left, so nothing the queue recorded can still run.
    fn drop(&mut self) {
        self.retire_lane();
    }
}
