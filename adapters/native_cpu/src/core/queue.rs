//! Queues and their workers.
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
//! Commands are recorded and queued under the queue's lock. Async
//! allocations and frees are recorded by the engine itself
//! ([`Queue::submit_engine`]); on an in-order queue without the queue's
//! lock (that is what keeps the common alloc/free pair cheap), so a command
//! may be queued after one with a higher seq: pending commands are kept in
//! seq order, and an in-order queue starts seq `n` only after `n - 1`. The
//! engine may make a command wait for a command of any queue of the context
//! by its stamp.

use super::context::Context;
use super::device::Device;
use super::enqueue::Command;
use super::event::{complete_command, Event};
use super::usm_pool::Pool;
use crate::DDI;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, Weak};
use std::thread::JoinHandle;
use ur_core::engine::{Lane, QueueOrder, Stamp};
use ur_core::handle::{ArcObject, HandleHeader, ObjectKind};
use ur_core::*;

/// The handle object. Workers and events hold the shared state or the handle
/// object itself; users hold the handle, whose header counts their references.
#[repr(C)]
pub struct Queue {
    header: HandleHeader,
    pub shared: Arc<QueueShared>,
}

ur_core::ur_object!(Queue, Queue, ur_queue_handle_t_, {

    /// Closes the queue and, unless called from one of its own workers (a
    /// callback), waits for its commands and joins its workers: when the
    /// release returns, everything enqueued has completed, and what it freed
    /// asynchronously is free in its pools.
    fn last_user_release(&self) {
        self.close();
        if WORKER_OF.get() != self.shared.id {
            self.drain();
            join_workers_of(&self.shared);
            self.shared.retire_lane();
            self.shared.context.collect_pools();
        }
    }
});

// SAFETY: every `Queue` is made inside an `Arc` by its constructor.
unsafe impl ArcObject for Queue {}

/// What the workers of a queue share with it.
pub struct QueueShared {
    /// Unique in the process: names the queue in command positions.
    pub id: u64,
    pub context: Arc<Context>,
    pub device: Arc<Device>,
    pub flags: ur_queue_flags_t,
    /// The queue in the engine's graph; command seqs are its seqs.
    pub lane: Arc<Lane>,
    /// The context's default pool of `device`, taken on first use, so that
    /// async allocations on different queues meet on no lock or count
    /// (`ContextPools::with_current`).
    pub default_pool: OnceLock<Arc<Pool>>,
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

/// A command as an enqueue entry point hands it to its queue.
pub struct Submission {
    pub command_type: ur_command_t,
    pub command: Command,
    /// Events still pending that the command waits for.
    pub deps: Vec<Arc<Event>>,
    pub order: Order,
    /// Whether the caller asked for an event.
    pub want_event: bool,
    /// The caller waits for the command: on an idle queue it may run on the
    /// caller's thread, which orders it exactly as a worker would.
    pub blocking: bool,
}

pub struct Submitted {
    pub seq: u64,
    pub event: Option<Arc<Event>>,
}

/// A command the engine has already recorded on the queue's lane (an async
/// allocation or free), for [`Queue::submit_engine`] to queue. Small on
/// purpose: it is returned through the hot path.
pub struct EngineCommand {
    pub stamp: Stamp,
    pub command_type: ur_command_t,
    /// `(address, bytes)` to fill with zeros when the command runs.
    pub zero: Option<(usize, usize)>,
    /// A command of any queue of the context that must complete first (the
    /// pending free of a reused block, or a block's allocation).
    pub after: Option<Stamp>,
    pub want_event: bool,
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
struct State {
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

impl Queue {
    pub fn new(context: Arc<Context>, device: Arc<Device>, flags: ur_queue_flags_t) -> Arc<Queue> {
        let in_order = flags & UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0 == 0;
        let max_workers = if in_order { 1 } else { (device.host.compute_units as usize).clamp(2, 4) };
        let order = if in_order { QueueOrder::InOrder } else { QueueOrder::OutOfOrder };
        let lane = context.dag.create_lane(order);
        let shared = Arc::new(QueueShared {
            id: NEXT_QUEUE_ID.fetch_add(1, Ordering::Relaxed),
            context,
            device,
            flags,
            state: Mutex::new(State { next_start: lane.tail().seq + 1, ..State::default() }),
            lane,
            default_pool: OnceLock::new(),
            has_worker: AtomicBool::new(false),
            in_order,
            max_workers,
            work: Condvar::new(),
            retired: Condvar::new(),
        });
        shared.context.register_queue(&shared);
        Arc::new(Queue { header: HandleHeader::new(&DDI, ObjectKind::Queue), shared })
    }

    pub fn handle(self: &Arc<Self>) -> ur_queue_handle_t {
        ur_core::handle::handle_of(&**self)
    }

    /// This queue as an `Arc`, for an event that must keep it.
    fn this(&self) -> Arc<Queue> {
        // SAFETY: a `Queue` is only ever made by `Queue::new`, inside an
        // `Arc` (its header is private), and `&self` proves that Arc alive.
        unsafe {
            Arc::increment_strong_count(self as *const Queue);
            Arc::from_raw(self as *const Queue)
        }
    }

    /// Hands a command to the workers; returns once it is queued, not run.
    /// A blocking command on an idle queue, whose wait list is done, runs on
    /// the calling thread instead (it has nothing to wait for, and the caller
    /// would only sleep while a worker woke up): it has returned by then.
    pub fn submit(&self, sub: Submission) -> UrResult<Submitted> {
        let q = &self.shared;
        let mut st = q.lock();
        if st.closed {
            return Err(UR_RESULT_ERROR_INVALID_QUEUE);
        }
        let may_inline =
            sub.blocking && st.pending.is_empty() && st.running.is_empty() && sub.deps.iter().all(|d| d.is_done());
        if !may_inline {
            q.ensure_worker(&mut st)?;
        }
        let seq = q.record(&sub.deps, sub.order);
        let inline = may_inline && st.start_here(q.in_order, seq, sub.order.fence);
        debug_assert!(inline || !may_inline || st.workers > 0);
        let event = sub.want_event.then(|| Event::new(self.this(), sub.command_type, seq));
        let mut deps = sub.deps;
        let task = |deps| Task { seq, order: sub.order, command: sub.command, deps, after: None, event: event.clone() };
        if inline {
            drop(st);
            execute(q, task(deps));
        } else {
            deps.retain(|d| d.wake_on_done(Arc::downgrade(q)));
            q.enqueue(&mut st, task(deps));
        }
        Ok(Submitted { seq, event })
    }

    /// Runs an engine operation (an async allocation or free) and queues
    /// the command it asks for, after `deps` (the pending events of its wait
    /// list) and its `after` stamp. `op` gets the lane and the wait list as
    /// stamps. Returns `op`'s value and the command's event when one was
    /// asked for.
    ///
    /// On an in-order queue that has its worker, `op` runs without the
    /// queue's lock: usually the engine needs no command at all, and when it
    /// records one, the queue starts it in seq order wherever it lands in
    /// the queue. Elsewhere `op` runs under the lock, so that a command it
    /// records is queued before any later one (an out-of-order queue's
    /// barriers order by what is queued).
    pub fn submit_engine<T>(
        &self,
        deps: Vec<Arc<Event>>,
        op: impl FnOnce(&Arc<Lane>, &[Stamp]) -> UrResult<(T, Option<EngineCommand>)>,
    ) -> UrResult<(T, Option<Arc<Event>>)> {
        let q = &self.shared;
        if q.in_order && q.has_worker.load(Ordering::Acquire) {
            let stamps = q.stamps_of(&deps);
            let (value, command) = op(&q.lane, &stamps)?;
            let Some(c) = command else { return Ok((value, None)) };
            return Ok((value, self.enqueue_engine(q.lock(), deps, c)));
        }
        let mut st = q.lock();
        if st.closed {
            return Err(UR_RESULT_ERROR_INVALID_QUEUE);
        }
        // Before the engine records anything: queuing must not fail after.
        q.ensure_worker(&mut st)?;
        let stamps = q.stamps_of(&deps);
        let (value, command) = op(&q.lane, &stamps)?;
        let Some(c) = command else { return Ok((value, None)) };
        Ok((value, self.enqueue_engine(st, deps, c)))
    }

    /// Whether an engine operation with no wait list may run without the
    /// queue's lock (see [`submit_engine`](Self::submit_engine)); the caller
    /// then hands what the engine recorded, if anything, to
    /// [`enqueue_recorded`](Self::enqueue_recorded).
    #[inline]
    pub fn engine_fast_path(&self) -> bool {
        self.shared.in_order && self.shared.has_worker.load(Ordering::Acquire)
    }

    /// Queues a command the engine recorded on the fast path.
    #[cold]
    pub fn enqueue_recorded(&self, c: EngineCommand) -> Option<Arc<Event>> {
        self.enqueue_engine(self.shared.lock(), Vec::new(), c)
    }

    /// Queues the command the engine recorded, under the queue's lock `st`.
    /// A marker whose wait list and engine dependency are done, on a queue
    /// with nothing before it pending or running, runs on the calling
    /// thread instead: handing it to the worker would cost a wake-up and a
    /// switch to run nothing.
    fn enqueue_engine(&self, mut st: MutexGuard<'_, State>, deps: Vec<Arc<Event>>, c: EngineCommand) -> Option<Arc<Event>> {
        let q = &self.shared;
        let seq = c.stamp.seq;
        debug_assert_eq!(c.stamp.lane, q.lane.id(), "the engine recorded on the queue's lane");
        let event = c.want_event.then(|| Event::new(self.this(), c.command_type, seq));
        let command = match c.zero {
            Some((addr, bytes)) => zero_block(addr, bytes),
            None => Command::Marker,
        };
        let order = Order::default();
        let mut task = Task { seq, order, command, deps, after: c.after, event: event.clone() };
        if c.zero.is_none() && deps_done(&task, q) && st.start_here(q.in_order, seq, order.fence) {
            drop(st);
            execute(q, task);
            return event;
        }
        task.deps.retain(|d| d.wake_on_done(Arc::downgrade(q)));
        if let Some(s) = c.after {
            q.context.watch_stamp(q, s);
        }
        q.enqueue(&mut st, task);
        event
    }

    /// `urQueueFinish`: blocks until everything enqueued so far finished,
    /// then reports the first of them that failed since the last finish.
    pub fn finish(&self) -> UrResult {
        let q = &self.shared;
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
    /// the most commands in flight at once, and [`finish`](Self::finish)
    /// gives back what a burst left.
    pub fn retained_bytes(&self) -> usize {
        let q = &self.shared;
        let st = q.lock();
        st.pending.capacity() * std::mem::size_of::<Task>()
            + st.running.capacity() * std::mem::size_of::<Running>()
            + q.lane.retained_bytes()
    }

    /// No command pending or running.
    pub fn is_empty(&self) -> bool {
        let st = self.shared.lock();
        st.pending.is_empty() && st.running.is_empty()
    }

    /// Called when the user's last reference goes: workers finish what was
    /// enqueued, then leave.
    pub fn close(&self) {
        self.shared.close();
    }

    /// Blocks until nothing is pending or running.
    fn drain(&self) {
        let q = &self.shared;
        let mut st = q.lock();
        while !(st.pending.is_empty() && st.running.is_empty()) {
            st.finishers += 1;
            st = q.retired.wait(st).unwrap_or_else(|e| e.into_inner());
            st.finishers -= 1;
        }
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        self.shared.close();
    }
}

impl Drop for QueueShared {
    /// No worker is left, so nothing the queue recorded can still run.
    fn drop(&mut self) {
        self.retire_lane();
    }
}

impl QueueShared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn profiling(&self) -> bool {
        self.flags & UR_QUEUE_FLAG_PROFILING_ENABLE.0 != 0
    }

    pub fn in_order(&self) -> bool {
        self.in_order
    }

    fn close(&self) {
        let mut st = self.lock();
        st.closed = true;
        drop(st);
        self.work.notify_all();
    }

    fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Forgets the lane once nothing on it can run any more.
    fn retire_lane(&self) {
        self.context.dag.retire_lane(&self.lane);
        self.context.unregister_queue(self.id);
    }

    /// The stamps of the events of a wait list that the engine can order:
    /// those of this context (another context's lanes are another graph).
    fn stamps_of(&self, deps: &[Arc<Event>]) -> Vec<Stamp> {
        if deps.is_empty() {
            return Vec::new();
        }
        deps.iter().filter(|e| Arc::ptr_eq(&e.queue().shared.context, &self.context)).map(|e| e.stamp()).collect()
    }

    /// Records the next command on the lane, after the wait list `deps`, and
    /// returns its seq. A barrier that waits for everything earlier orders
    /// later commands after it; one with a wait list, after its list. Other
    /// commands, an event wait with an empty list included, are recorded as
    /// ordered after their list only: the engine may know less than the
    /// queue enforces, never more. Call with the queue's lock held.
    fn record(&self, deps: &[Arc<Event>], order: Order) -> u64 {
        let stamps = self.stamps_of(deps);
        let dag = &self.context.dag;
        let stamp = match (order.fence, order.after_all) {
            (true, true) => dag.record_barrier(&self.lane, &[]),
            (true, false) if !stamps.is_empty() => dag.record_barrier(&self.lane, &stamps),
            _ => dag.record(&self.lane, &stamps),
        };
        stamp.seq
    }

    /// Queues a task in seq order (almost always at the back) and wakes a
    /// worker.
    fn enqueue(&self, st: &mut State, task: Task) {
        let at = st.pending.iter().rposition(|t| t.seq < task.seq).map_or(0, |i| i + 1);
        st.pending.insert(at, task);
        if st.idle_workers > 0 {
            self.work.notify_one();
        }
    }

    /// Gives back the per-command bookkeeping a burst of commands left
    /// behind (list capacity, lane slots and their clocks), keeping room for
    /// [`KEEP_SLOTS`] commands in flight; when that was much, asks the C
    /// allocator to return free pages to the system too. Called by
    /// `urQueueFinish`, which blocks anyway; never on the enqueue path.
    fn give_back(&self, st: &mut State) {
        let before = st.pending.capacity() * std::mem::size_of::<Task>()
            + st.running.capacity() * std::mem::size_of::<Running>();
        st.pending.shrink_to(KEEP_SLOTS);
        st.running.shrink_to(KEEP_SLOTS);
        let after = st.pending.capacity() * std::mem::size_of::<Task>()
            + st.running.capacity() * std::mem::size_of::<Running>();
        let given = before - after + self.lane.shrink(KEEP_SLOTS);
        if given >= TRIM_AFTER_BYTES {
            // SAFETY: `malloc_trim` only returns free heap pages to the
            // system; it touches no live allocation.
            #[cfg(all(target_os = "linux", target_env = "gnu"))]
            unsafe {
                libc::malloc_trim(0);
            }
        }
    }

    /// Blocks until no command numbered below `end` is pending or running.
    fn wait_before<'a>(&'a self, mut st: MutexGuard<'a, State>, end: u64) -> MutexGuard<'a, State> {
        while st.pending.front().is_some_and(|t| t.seq < end) || st.running.iter().any(|r| r.seq < end) {
            st.finishers += 1;
            st = self.retired.wait(st).unwrap_or_else(|e| e.into_inner());
            st.finishers -= 1;
        }
        st
    }

    /// Blocks until every command enqueued so far has finished (failures
    /// stay for `urQueueFinish` to report). Returns at once on one of the
    /// queue's own workers, whose command is running.
    pub(crate) fn wait_idle(&self) {
        if WORKER_OF.get() == self.id {
            return;
        }
        let st = self.lock();
        let end = self.lane.tail().seq + 1;
        drop(self.wait_before(st, end));
    }

    /// A dependency finished: let the workers look again.
    pub(crate) fn wake_workers(&self) {
        // Under the lock: ordered after a worker's check-then-sleep.
        let st = self.lock();
        if st.idle_workers > 0 {
            self.work.notify_all();
        }
    }

    /// Starts a worker when none is idle and the queue may have more.
    fn ensure_worker(self: &Arc<Self>, st: &mut State) -> UrResult {
        if st.idle_workers > 0 || st.workers >= self.max_workers {
            return Ok(());
        }
        match spawn_worker(self) {
            Ok(()) => {
                st.workers += 1;
                self.has_worker.store(true, Ordering::Release);
            }
            Err(_) if st.workers == 0 => return Err(UR_RESULT_ERROR_OUT_OF_RESOURCES),
            Err(_) => {}
        }
        Ok(())
    }

    /// The queue's bookkeeping half of [`complete_command`].
    pub(crate) fn retire(&self, seq: u64, outcome: UrResult) {
        let mut st = self.lock();
        st.running.retain(|r| r.seq != seq);
        if let Err(code) = outcome {
            if st.unreported_failure.is_none_or(|(first, _)| seq < first) {
                st.unreported_failure = Some((seq, code));
            }
        }
        if st.finishers > 0 {
            self.retired.notify_all();
        }
        // On an out-of-order queue a barrier or an after-all command may have
        // become ready. An in-order worker looks again by itself after its
        // own command, but not after one run on the caller's thread, which
        // a command queued meanwhile (and its woken worker) waited behind.
        if st.idle_workers > 0 && (!self.in_order || !st.pending.is_empty()) {
            self.work.notify_all();
        }
    }
}

impl State {
    /// Marks command `seq`, whose wait list is done, running on the calling
    /// thread when nothing is pending or running before it; false (nothing
    /// changed) otherwise. On an in-order queue an earlier command may be
    /// recorded by the engine and not queued yet (which implies a worker):
    /// `seq` then waits for it.
    fn start_here(&mut self, in_order: bool, seq: u64, fence: bool) -> bool {
        let idle = self.pending.is_empty() && self.running.is_empty() && (!in_order || seq == self.next_start);
        if idle {
            self.running.push(Running { seq, fence });
            self.next_start = seq + 1;
        }
        idle
    }

    /// Takes the next command that may start, and marks it running.
    fn take_ready(&mut self, q: &Arc<QueueShared>) -> Option<Task> {
        let index = if q.in_order { self.ready_in_order(q) } else { self.ready_out_of_order(q) }?;
        let task = self.pending.remove(index)?;
        self.running.push(Running { seq: task.seq, fence: task.order.fence });
        Some(task)
    }

    fn ready_in_order(&mut self, q: &Arc<QueueShared>) -> Option<usize> {
        let head = self.pending.front()?;
        // Seq `next_start` may be recorded and not queued yet: wait for it.
        let ready = self.running.is_empty() && head.seq == self.next_start && deps_done(head, q);
        if ready {
            self.next_start = head.seq + 1;
        }
        ready.then_some(0)
    }

    fn ready_out_of_order(&self, q: &Arc<QueueShared>) -> Option<usize> {
        if self.running.iter().any(|r| r.fence) {
            return None;
        }
        for (i, task) in self.pending.iter().enumerate() {
            let earlier_unfinished = i > 0 || self.running.iter().any(|r| r.seq < task.seq);
            let ready = !(task.order.after_all && earlier_unfinished) && deps_done(task, q);
            if ready {
                return Some(i);
            }
            if task.order.fence {
                // Nothing enqueued after a barrier may overtake it.
                return None;
            }
        }
        None
    }
}

/// Whether a task's events have finished and its engine dependency has
/// completed; when that one has not, the queue is woken when it may have.
fn deps_done(task: &Task, q: &Arc<QueueShared>) -> bool {
    task.deps.iter().all(|d| d.is_done()) && task.after.is_none_or(|s| q.context.watch_stamp(q, s))
}

thread_local! {
    /// The id of the queue whose worker this thread is; 0 on other threads.
    static WORKER_OF: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

fn worker_main(q: Arc<QueueShared>) {
    WORKER_OF.set(q.id);
    let mut st = q.lock();
    loop {
        if let Some(task) = st.take_ready(&q) {
            drop(st);
            execute(&q, task);
            st = q.lock();
            continue;
        }
        if st.closed && st.pending.is_empty() {
            break;
        }
        st.idle_workers += 1;
        st = q.work.wait(st).unwrap_or_else(|e| e.into_inner());
        st.idle_workers -= 1;
    }
    st.workers -= 1;
}

fn execute(q: &QueueShared, task: Task) {
    let Task { seq, command, deps, event, .. } = task;
    // An engine dependency is a command that completed (`deps_done`); it
    // cannot fail the way an event of the wait list can.
    if let Some(e) = &event {
        e.mark_running();
    }
    // A failed dependency fails the command without running it.
    let outcome = if deps.iter().any(|d| d.failed()) {
        Err(UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS)
    } else {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| command.run())).unwrap_or(Err(UR_RESULT_ERROR_UNKNOWN))
    };
    drop(deps);
    complete_command(q, seq, event, outcome);
}

/// Every worker thread started, so that the adapter can join them before
/// its library is unloaded.
struct WorkerThread {
    handle: JoinHandle<()>,
    queue: Weak<QueueShared>,
    queue_id: u64,
}

static WORKERS: Mutex<Vec<WorkerThread>> = Mutex::new(Vec::new());

fn workers() -> MutexGuard<'static, Vec<WorkerThread>> {
    WORKERS.lock().unwrap_or_else(|e| e.into_inner())
}

fn spawn_worker(q: &Arc<QueueShared>) -> std::io::Result<()> {
    let shared = q.clone();
    let handle =
        std::thread::Builder::new().name(format!("ur-native-cpu-q{}", q.id)).spawn(move || worker_main(shared))?;
    let mut list = workers();
    // Reap threads that left, so the list stays as long as the live workers.
    let (done, live): (Vec<_>, Vec<_>) = std::mem::take(&mut *list).into_iter().partition(|w| w.handle.is_finished());
    *list = live;
    list.push(WorkerThread { handle, queue: Arc::downgrade(q), queue_id: q.id });
    drop(list);
    for w in done {
        let _ = w.handle.join();
    }
    Ok(())
}

/// Joins the workers of one closed queue.
fn join_workers_of(q: &Arc<QueueShared>) {
    let mine: Vec<WorkerThread> = {
        let mut list = workers();
        let (mine, others) =
            std::mem::take(&mut *list).into_iter().partition(|w| std::ptr::eq(w.queue.as_ptr(), Arc::as_ptr(q)));
        *list = others;
        mine
    };
    for w in mine {
        let _ = w.handle.join();
    }
}

/// Joins the workers of every released queue (they finish their pending
/// commands first). Workers of queues still held are left running.
pub fn join_released_workers() {
    let all = std::mem::take(&mut *workers());
    let mut keep = Vec::new();
    for w in all {
        let released = w.queue.upgrade().is_none_or(|q| q.is_closed());
        // A worker cannot join itself (an adapter released in a callback).
        if released && w.queue_id != WORKER_OF.get() {
            let _ = w.handle.join();
        } else {
            keep.push(w);
        }
    }
    workers().extend(keep);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::enqueue::{Pattern, UsmPtr};
    use crate::core::platform::Platform;
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;
    use ur_core::handle::UrObject;

    fn queue(flags: ur_queue_flags_t) -> Arc<Queue> {
        let device = Platform::new(Weak::new()).devices[0].clone();
        Queue::new(Context::new(vec![device.clone()]), device, flags)
    }

    fn host(f: impl FnOnce() -> UrResult + Send + 'static) -> Command {
        Command::Host(Box::new(f))
    }

    fn submit(q: &Arc<Queue>, command: Command, deps: Vec<Arc<Event>>, order: Order, want_event: bool) -> Submitted {
        q.submit(Submission { command_type: UR_COMMAND_EVENTS_WAIT, command, deps, order, want_event, blocking: false })
            .unwrap()
    }

    /// A command that counts its runs in `ran`.
    fn count(ran: Arc<AtomicUsize>) -> Command {
        host(move || {
            ran.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })
    }

    /// A command that blocks its worker until the returned gate opens.
    fn gate() -> (Arc<(Mutex<bool>, Condvar)>, Command) {
        let g = Arc::new((Mutex::new(false), Condvar::new()));
        let g2 = g.clone();
        (
            g,
            host(move || {
                let mut open = g2.0.lock().unwrap();
                while !*open {
                    open = g2.1.wait(open).unwrap();
                }
                Ok(())
            }),
        )
    }

    fn open(g: &(Mutex<bool>, Condvar)) {
        *g.0.lock().unwrap() = true;
        g.1.notify_all();
    }

    #[test]
    fn in_order_commands_run_asynchronously_and_in_order() {
        let q = queue(0);
        let (g, blocker) = gate();
        submit(&q, blocker, vec![], Order::default(), false);
        let log = Arc::new(Mutex::new(Vec::new()));
        for i in 0..20 {
            let log = log.clone();
            let push = host(move || {
                log.lock().unwrap().push(i);
                Ok(())
            });
            submit(&q, push, vec![], Order::default(), false);
        }
        // The enqueues returned while the first command still blocks.
        assert!(log.lock().unwrap().is_empty());
        assert!(!q.is_empty());
        open(&g);
        q.finish().unwrap();
        assert_eq!(*log.lock().unwrap(), (0..20).collect::<Vec<_>>());
        assert!(q.is_empty());
    }

    /// A burst of 100 000 commands in flight at once grows the queue's
    /// bookkeeping; `urQueueFinish` gives it back, and steady work with a
    /// finish every 1000 commands keeps it bounded.
    #[test]
    fn finish_gives_back_the_bookkeeping_of_a_burst() {
        let q = queue(0);
        let small = q.retained_bytes();
        let (g, blocker) = gate();
        submit(&q, blocker, vec![], Order::default(), false);
        for _ in 0..100_000 {
            submit(&q, Command::Marker, vec![], Order::default(), true);
        }
        let burst = q.retained_bytes();
        assert!(burst > 100_000 * std::mem::size_of::<Task>(), "the burst is in flight: {burst} B");
        open(&g);
        q.finish().unwrap();
        let bound = 64 * 1024;
        let after = q.retained_bytes();
        assert!(after <= bound.max(small), "kept {after} B after finish (was {burst} B in the burst)");
        for i in 0..100_000 {
            submit(&q, Command::Marker, vec![], Order::default(), i % 2 == 0);
            if i % 1000 == 999 {
                q.finish().unwrap();
                let now = q.retained_bytes();
                assert!(now <= bound.max(small), "kept {now} B after finish at command {i}");
            }
        }
        assert!(q.is_empty());
    }

    #[test]
    fn a_command_waits_for_an_event_of_another_queue() {
        let a = queue(0);
        let b = queue(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0);
        let (g, blocker) = gate();
        let first = submit(&a, blocker, vec![], Order::default(), true).event.unwrap();
        let ran = Arc::new(AtomicUsize::new(0));
        let r = ran.clone();
        let second = submit(&b, count(r), vec![first.clone()], Order::default(), true).event.unwrap();
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(ran.load(Ordering::SeqCst), 0);
        assert_eq!(second.status(), UR_EVENT_STATUS_SUBMITTED);
        open(&g);
        second.wait().unwrap();
        assert_eq!(ran.load(Ordering::SeqCst), 1);
        assert!(first.is_done());
    }

    #[test]
    fn out_of_order_commands_overtake_a_blocked_one() {
        let q = queue(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0);
        let (g, blocker) = gate();
        let blocked = submit(&q, blocker, vec![], Order::default(), true).event.unwrap();
        let later = submit(&q, Command::Marker, vec![], Order::default(), true).event.unwrap();
        later.wait().unwrap();
        assert!(!blocked.is_done());
        open(&g);
        q.finish().unwrap();
        assert!(blocked.is_done());
    }

    #[test]
    fn a_barrier_holds_back_later_commands_on_an_out_of_order_queue() {
        let q = queue(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0);
        let (g, blocker) = gate();
        let blocked = submit(&q, blocker, vec![], Order::default(), true).event.unwrap();
        let barrier = submit(&q, Command::Marker, vec![], Order { after_all: true, fence: true }, true).event.unwrap();
        let after = submit(&q, Command::Marker, vec![], Order::default(), true).event.unwrap();
        std::thread::sleep(Duration::from_millis(20));
        assert!(!barrier.is_done() && !after.is_done());
        open(&g);
        after.wait().unwrap();
        assert!(blocked.is_done() && barrier.is_done());
    }

    #[test]
    fn a_failed_dependency_fails_its_dependents() {
        let q = queue(0);
        let bad = submit(&q, host(|| Err(UR_RESULT_ERROR_UNKNOWN)), vec![], Order::default(), true).event.unwrap();
        let ran = Arc::new(AtomicUsize::new(0));
        let r = ran.clone();
        let next = submit(&q, count(r), vec![bad.clone()], Order::default(), true).event.unwrap();
        assert_eq!(next.wait(), Err(UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS));
        assert_eq!(bad.status(), UR_EVENT_STATUS_ERROR);
        assert_eq!(bad.outcome(), Err(UR_RESULT_ERROR_UNKNOWN));
        assert_eq!(ran.load(Ordering::SeqCst), 0);
        // Finish reports the first failure once.
        assert_eq!(q.finish(), Err(UR_RESULT_ERROR_UNKNOWN));
        assert_eq!(q.finish(), Ok(()));
    }

    #[test]
    fn releasing_a_queue_does_not_drop_its_pending_work() {
        let q = queue(0);
        let (g, blocker) = gate();
        submit(&q, blocker, vec![], Order::default(), false);
        let mut buf = vec![0u8; 4096];
        // SAFETY: the test waits for the command before `buf` goes.
        let dst = unsafe { UsmPtr::new(buf.as_mut_ptr(), None) };
        let fill =
            submit(&q, Command::Fill { dst, pattern: Pattern::new(&[7]), size: 4096 }, vec![], Order::default(), true)
                .event
                .unwrap();
        let shared = Arc::downgrade(&q.shared);
        q.close();
        drop(q);
        open(&g);
        fill.wait().unwrap();
        assert!(buf.iter().all(|&b| b == 7));
        drop(fill);
        join_released_workers();
        assert!(shared.upgrade().is_none(), "a released, drained queue frees its state");
    }

    #[test]
    fn the_last_release_waits_for_the_work_and_joins_the_workers() {
        let q = queue(0);
        let (g, blocker) = gate();
        submit(&q, blocker, vec![], Order::default(), false);
        let ran = Arc::new(AtomicUsize::new(0));
        submit(&q, count(ran.clone()), vec![], Order::default(), false);
        let opener = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            open(&g);
        });
        q.last_user_release();
        assert_eq!(ran.load(Ordering::SeqCst), 1);
        assert_eq!(Arc::strong_count(&q.shared), 1, "no worker holds the queue any more");
        opener.join().unwrap();
    }

    /// Many commands over three queues, each waiting on random earlier
    /// events of any queue, with barriers: all finish, none starts before
    /// what it waits for has finished.
    #[test]
    fn random_cross_queue_dependencies_all_complete_in_order() {
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let queues = [
                queue(0),
                queue(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0),
                queue(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0),
            ];
            let clock = Arc::new(AtomicUsize::new(1));
            // Per command: (start tick, end tick), written by the command.
            let ticks: Arc<Vec<(AtomicUsize, AtomicUsize)>> =
                Arc::new((0..3000).map(|_| (AtomicUsize::new(0), AtomicUsize::new(0))).collect());
            let mut events: Vec<(usize, Arc<Event>)> = Vec::new();
            let mut deps_of = Vec::new();
            let mut placed: Vec<(usize, Order)> = Vec::new();
            let mut seed = 0x2545_f491_4f6c_dd1du64;
            let mut rand = move |n: usize| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed % n as u64) as usize
            };
            for i in 0..3000 {
                let qi = rand(3);
                let q = &queues[qi];
                let mut deps = Vec::new();
                let mut dep_ids = Vec::new();
                for _ in 0..rand(4) {
                    if !events.is_empty() {
                        let (id, e) = &events[rand(events.len())];
                        deps.push(e.clone());
                        dep_ids.push(*id);
                    }
                }
                let order =
                    if rand(50) == 0 { Order { after_all: deps.is_empty(), fence: true } } else { Order::default() };
                let (c, t) = (clock.clone(), ticks.clone());
                let work = host(move || {
                    t[i].0.store(c.fetch_add(1, Ordering::SeqCst), Ordering::SeqCst);
                    std::thread::yield_now();
                    t[i].1.store(c.fetch_add(1, Ordering::SeqCst), Ordering::SeqCst);
                    Ok(())
                });
                let deps_pending: Vec<_> = deps.into_iter().filter(|d| !d.is_done()).collect();
                let e = submit(q, work, deps_pending, order, true).event.unwrap();
                events.push((i, e));
                deps_of.push(dep_ids);
                placed.push((qi, order));
            }
            for q in &queues {
                q.finish().unwrap();
            }
            for (i, deps) in deps_of.iter().enumerate() {
                let start = ticks[i].0.load(Ordering::SeqCst);
                assert!(start > 0, "command {i} never ran");
                for &d in deps {
                    assert!(
                        ticks[d].1.load(Ordering::SeqCst) < start,
                        "command {i} started before its dependency {d} ended"
                    );
                }
            }
            for j in 0..placed.len() {
                for i in 0..j {
                    let (qi, oi) = placed[i];
                    let (qj, oj) = placed[j];
                    if qi != qj {
                        continue;
                    }
                    let before = ticks[i].1.load(Ordering::SeqCst) < ticks[j].0.load(Ordering::SeqCst);
                    assert!(qi != 0 || before, "in-order queue: {j} started before {i} ended");
                    assert!(!oi.fence || before, "{j} overtook the barrier {i}");
                    assert!(!oj.after_all || before, "the barrier {j} started before {i} ended");
                }
            }
            done_tx.send(()).unwrap();
        });
        done_rx.recv_timeout(Duration::from_secs(60)).expect("the commands deadlocked or a check failed");
    }
}
