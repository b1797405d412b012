//! Events, their callbacks, and the one place where a command completes.
//! An event is the core's `Event` over a [`CommandState`], this backend's
//! raw event.
//!
//! An event exists only when the caller of an enqueue asked for one: queues
//! track their own commands by sequence number. The event's status moves
//! SUBMITTED -> RUNNING -> COMPLETE (or ERROR when a command or one of its
//! dependencies failed); waiters, queues whose commands depend on it, and
//! `urEventSetCallback` callbacks are told on the way.

use crate::driver::monotonic_ns;
use crate::queue::{Queue, QueueShared};
use crate::NativeCpu;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use ur_core::lock_order::{Condvar, Mutex, MutexGuard, Rank};
use ur_core::engine::Stamp;
use ur_core::event::{EventCallback, RawEvent};
use ur_core::*;

/// This backend's events: the core's event object over a [`CommandState`].
pub type Event = ur_core::event::Event<NativeCpu>;

/// How far an event's command has got, and who waits for it.
pub struct CommandState {
    /// A `ur_event_status_t` value.
    status: AtomicU32,
    /// Why the command failed, once `status` is ERROR.
    error: AtomicU32,
    /// Whether the queue profiles: `times` are kept.
    profiling: bool,
    /// QUEUED, SUBMIT, START and END, in `monotonic_ns`; 0 until reached.
    times: [AtomicU64; 4],
    waiters: Mutex<Waiters>,
    signalled: Condvar,
}

#[derive(Default)]
struct Waiters {
    /// Threads asleep on `signalled`.
    sleepers: usize,
    callbacks: Vec<EventCallback>,
    /// Queues with commands that wait for this event.
    wakers: Vec<Weak<QueueShared>>,
}


const QUEUED: usize = 0;
const SUBMIT: usize = 1;
const START: usize = 2;
const END: usize = 3;

/// A new event for command `seq` of `queue`, already submitted: commands
/// go to the queue's workers as they are enqueued.
pub(crate) fn new(queue: Arc<Queue>, command_type: ur_command_t, seq: u64) -> Arc<Event> {
    let profiling = queue.raw.profiling;
    let now = if profiling { monotonic_ns() } else { 0 };
    let state = CommandState {
        status: AtomicU32::new(UR_EVENT_STATUS_SUBMITTED.0),
        error: AtomicU32::new(UR_RESULT_SUCCESS.0),
        profiling,
        times: [AtomicU64::new(now), AtomicU64::new(now), AtomicU64::new(0), AtomicU64::new(0)],
        waiters: Mutex::new(Rank::Leaf, Waiters::default()),
        signalled: Condvar::new(),
    };
    let context = queue.raw.context.clone();
    let stamp = Stamp::new(queue.raw.lane.id(), seq);
    Event::new(Some(queue), context, command_type, Some(stamp), state)
}

/// The worker starts the event's command.
pub(crate) fn mark_running(event: &Event) {
    let state = &event.raw;
    if state.profiling {
        state.times[START].store(monotonic_ns(), Ordering::Release);
    }
    let due = {
        let mut w = state.lock();
        state.status.store(UR_EVENT_STATUS_RUNNING.0, Ordering::Release);
        take_due(&mut w.callbacks, UR_EVENT_STATUS_RUNNING)
    };
    run_callbacks(event, due);
}

fn run_callbacks(event: &Event, callbacks: Vec<EventCallback>) {
    if callbacks.is_empty() {
        return;
    }
    let handle = event.handle();
    for cb in callbacks {
        // A panic cannot come from C, but keep ours from unwinding out of
        // a worker with a half-finished queue.
        let _ = std::panic::catch_unwind(|| {
            // SAFETY: the user registered `func` for this call; the event
            // is alive (the caller holds it) for the duration of the call.
            unsafe { (cb.func)(handle, cb.on, cb.user_data) }
        });
    }
}

impl CommandState {
    pub fn status(&self) -> ur_event_status_t {
        ur_event_status_t(self.status.load(Ordering::Acquire))
    }

    /// Finished, successfully or not.
    pub fn is_done(&self) -> bool {
        matches!(self.status(), UR_EVENT_STATUS_COMPLETE | UR_EVENT_STATUS_ERROR)
    }

    pub fn failed(&self) -> bool {
        self.status() == UR_EVENT_STATUS_ERROR
    }

    fn lock(&self) -> MutexGuard<'_, Waiters> {
        self.waiters.lock()
    }

    /// Blocks until the command finished; `IN_EVENT_LIST_EXEC_STATUS` when
    /// it failed (the code `urEventWait` gives for a failed event).
    pub fn wait(&self) -> UrResult {
        self.outcome().map_err(|_| UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS)
    }

    /// Blocks until the command finished, and gives its own result: what a
    /// blocking enqueue returns.
    pub fn outcome(&self) -> UrResult {
        if !self.is_done() {
            let mut w = self.lock();
            while !self.is_done() {
                w.sleepers += 1;
                w = self.signalled.wait(w);
                w.sleepers -= 1;
            }
        }
        if self.failed() {
            Err(ur_result_t(self.error.load(Ordering::Acquire)))
        } else {
            Ok(())
        }
    }

    /// Asks for `queue` to be woken when this event finishes. `false` when
    /// it finished already (nothing to wait for).
    pub(crate) fn wake_on_done(&self, queue: Weak<QueueShared>) -> bool {
        let mut w = self.lock();
        if self.is_done() {
            return false;
        }
        // One wake per queue is enough, however many of its commands wait.
        if !w.wakers.iter().any(|q| q.ptr_eq(&queue)) {
            w.wakers.push(queue);
        }
        true
    }

    /// Makes completion visible: status, waiters, dependent queues. Returns
    /// the callbacks, which run last, once the queue has retired the command.
    fn signal(&self, outcome: UrResult) -> Vec<EventCallback> {
        if self.profiling {
            let end = monotonic_ns();
            let _ = self.times[START].compare_exchange(0, end, Ordering::AcqRel, Ordering::Acquire);
            self.times[END].store(end, Ordering::Release);
        }
        let (callbacks, wakers, sleepers) = {
            let mut w = self.lock();
            let status = match outcome {
                Ok(()) => UR_EVENT_STATUS_COMPLETE,
                Err(code) => {
                    self.error.store(code.0, Ordering::Release);
                    UR_EVENT_STATUS_ERROR
                }
            };
            self.status.store(status.0, Ordering::Release);
            (std::mem::take(&mut w.callbacks), std::mem::take(&mut w.wakers), w.sleepers)
        };
        if sleepers > 0 {
            self.signalled.notify_all();
        }
        for queue in wakers.iter().filter_map(Weak::upgrade) {
            queue.wake_workers();
        }
        callbacks
    }
}

impl RawEvent<NativeCpu> for CommandState {
    fn status(event: &Event) -> UrResult<ur_event_status_t> {
        Ok(event.raw.status())
    }

    fn failed(event: &Event) -> bool {
        event.raw.failed()
    }

    /// `urEventGetProfilingInfo`: one timestamp, or `PROFILING_INFO_NOT_AVAILABLE`
    /// when the queue does not profile or the command has not got there yet.
    fn profiling(event: &Event, what: ur_profiling_info_t) -> UrResult<u64> {
        if !event.raw.profiling {
            return Err(UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE);
        }
        let slot = match what {
            UR_PROFILING_INFO_COMMAND_QUEUED => QUEUED,
            UR_PROFILING_INFO_COMMAND_SUBMIT => SUBMIT,
            UR_PROFILING_INFO_COMMAND_START => START,
            // Host commands spawn no children: COMPLETE is END.
            UR_PROFILING_INFO_COMMAND_END | UR_PROFILING_INFO_COMMAND_COMPLETE => END,
            _ => return Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        };
        match event.raw.times[slot].load(Ordering::Acquire) {
            0 => Err(UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE),
            t => Ok(t),
        }
    }

    fn wait(event: &Event) -> UrResult {
        event.raw.wait()
    }


    /// Workers mark commands running and complete: every stage calls back.
    const CALLBACKS_BEFORE_COMPLETE: bool = true;

    /// Registers the callback, or runs it now when the event is at or past
    /// `on`.
    fn set_callback(event: &Event, cb: EventCallback) -> UrResult {
        let mut w = event.raw.lock();
        if reached(event.raw.status(), cb.on) {
            drop(w);
            run_callbacks(event, vec![cb]);
        } else {
            w.callbacks.push(cb);
        }
        Ok(())
    }
}

/// Whether an event in `status` is at or past the execution state `on`
/// (COMPLETE = 0 is the furthest; a failed command counts as past all).
fn reached(status: ur_event_status_t, on: ur_execution_info_t) -> bool {
    status == UR_EVENT_STATUS_ERROR || status.0 <= on.0
}

fn take_due(callbacks: &mut Vec<EventCallback>, status: ur_event_status_t) -> Vec<EventCallback> {
    if callbacks.is_empty() {
        return Vec::new();
    }
    let (due, later): (Vec<_>, Vec<_>) = callbacks.drain(..).partition(|cb| reached(status, cb.on));
    *callbacks = later;
    due
}

/// Finishes command `seq` of `queue`: every command, with or without an
/// event, ends here, on the worker that ran it, with no lock held.
///
/// The order matters: the engine learns first (so that an event seen
/// complete is complete in the engine's graph too, and a wait list holding
/// it orders reuse); the event is complete before the queue forgets the
/// command (so `urQueueFinish` never returns with an event still running);
/// user callbacks run last (so a callback may wait on the queue).
pub(crate) fn complete_command(queue: &QueueShared, seq: u64, event: Option<Arc<Event>>, outcome: UrResult) {
    // A failed command is over too: it touches no memory any more.
    queue.lane.complete(seq);
    let callbacks = event.as_ref().map(|e| e.raw.signal(outcome)).unwrap_or_default();
    queue.retire(seq, outcome);
    queue.context.raw.wake_stamp_watchers();
    if let Some(e) = &event {
        run_callbacks(e, callbacks);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn execution_states_order_as_ur_numbers_them() {
        assert!(reached(UR_EVENT_STATUS_COMPLETE, UR_EXECUTION_INFO_COMPLETE));
        assert!(reached(UR_EVENT_STATUS_COMPLETE, UR_EXECUTION_INFO_RUNNING));
        assert!(reached(UR_EVENT_STATUS_RUNNING, UR_EXECUTION_INFO_SUBMITTED));
        assert!(!reached(UR_EVENT_STATUS_RUNNING, UR_EXECUTION_INFO_COMPLETE));
        assert!(!reached(UR_EVENT_STATUS_SUBMITTED, UR_EXECUTION_INFO_RUNNING));
        assert!(reached(UR_EVENT_STATUS_ERROR, UR_EXECUTION_INFO_COMPLETE));
    }
}
