//! Events: the core's `Event` with a [`Signal`] as its raw part, and
//! `impl RawEvent`. Every command a queue appends signals one Level Zero
//! event, taken from its context's [`EventCache`] (timestamped ones on
//! profiling queues). A Level Zero event goes back to its cache, reset, only
//! once nothing can still read it: its command and every command that waits
//! on it have been seen to complete (each [`Command`] holds the events it
//! waits on), and no UR event names it.

use crate::context::Context;
use crate::conv::ZeExt;
use crate::driver::{self, EventPool, ZeContext};
use crate::queue::Queue;
use crate::{ze, LevelZero};
use level_zero_sys::*;
use std::sync::Arc;
use ur_core::lock_order::{Mutex, Rank};
use ur_core::boundary::NativeOwnership;
use ur_core::engine::{self, Progress, Stamp};
use ur_core::event::RawEvent;
use ur_core::handle::arc_of;
use ur_core::*;

/// Events made per Level Zero event pool.
const EVENTS_PER_POOL: u32 = 256;

/// The Level Zero events of one context, of one kind (timestamped or not):
/// pools grow by [`EVENTS_PER_POOL`] events when none is free.
pub struct EventCache {
    context: Arc<ZeContext>,
    timestamps: bool,
    /// Reset events ready to signal again.
    free: Mutex<Vec<ze_event_handle_t>>,
    /// Declared last: the pools go after their events.
    pools: Mutex<Vec<EventPool>>,
}

// SAFETY: event handles are opaque tokens the driver lets any thread use.
unsafe impl Send for EventCache {}
unsafe impl Sync for EventCache {}

impl EventCache {
    pub fn new(context: Arc<ZeContext>, timestamps: bool) -> Arc<EventCache> {
        Arc::new(EventCache { context, timestamps, free: Mutex::new(Rank::Leaf, Vec::new()), pools: Mutex::new(Rank::Leaf, Vec::new()) })
    }

    /// A reset event, from a new pool when none is free.
    pub fn take(self: &Arc<Self>) -> UrResult<Arc<ZeEvent>> {
        let raw = self.free.lock().pop();
        let raw = match raw {
            Some(raw) => raw,
            None => self.grow()?,
        };
        Ok(Arc::new(ZeEvent { raw, origin: Origin::Cache(self.clone()) }))
    }

    /// Makes a pool, keeps all its events but the one returned.
    fn grow(&self) -> UrResult<ze_event_handle_t> {
        let pool = EventPool::create(&self.context, EVENTS_PER_POOL, self.timestamps).ur()?;
        let mut made = Vec::with_capacity(EVENTS_PER_POOL as usize);
        for index in 0..EVENTS_PER_POOL {
            match pool.event(index) {
                Ok(e) => made.push(e),
                Err(e) if made.is_empty() => return Err(crate::conv::result(e)),
                Err(_) => break,
            }
        }
        let first = made.pop().expect("one event made");
        self.free.lock().extend(made);
        self.pools.lock().push(pool);
        Ok(first)
    }
}

impl Drop for EventCache {
    fn drop(&mut self) {
        // Every event holds the cache, so all are back and free.
        for raw in self.free.get_mut().drain(..) {
            // SAFETY: an event of our pools that nothing uses any more.
            unsafe { ze!(zeEventDestroy(raw)) };
        }
    }
}

/// Where a Level Zero event came from, and so where it goes.
enum Origin {
    /// A cache's: reset and given back.
    Cache(Arc<EventCache>),
    /// The user's (`urEventCreateWithNativeHandle`): destroyed when owned.
    Native { owned: bool },
}

/// One Level Zero event, given back with the last holder.
pub struct ZeEvent {
    pub raw: ze_event_handle_t,
    origin: Origin,
}

// SAFETY: as for `EventCache`.
unsafe impl Send for ZeEvent {}
unsafe impl Sync for ZeEvent {}

impl ZeEvent {
    pub fn signalled(&self) -> UrResult<bool> {
        driver::event_signalled(self.raw).ur()
    }

    pub fn wait(&self) -> UrResult {
        driver::event_wait(self.raw).ur()
    }

    pub fn timestamped(&self) -> bool {
        matches!(&self.origin, Origin::Cache(c) if c.timestamps)
    }

    pub fn native(raw: ze_event_handle_t, owned: bool) -> Arc<ZeEvent> {
        Arc::new(ZeEvent { raw, origin: Origin::Native { owned } })
    }
}

impl Drop for ZeEvent {
    fn drop(&mut self) {
        match &self.origin {
            Origin::Native { owned: false } => {}
            // SAFETY: the user handed the event over; nothing of ours uses it.
            Origin::Native { owned: true } => unsafe {
                ze!(zeEventDestroy(self.raw));
            },
            // SAFETY: no command signals or waits on it any more (see the
            // module comment), so it may be reset for the next one.
            Origin::Cache(cache) => unsafe {
                if ze!(zeEventHostReset(self.raw)) == ZE_RESULT_SUCCESS {
                    cache.free.lock().push(self.raw);
                } else {
                    // An event that cannot be reset is not reused.
                    ze!(zeEventDestroy(self.raw));
                }
            },
        }
    }
}

/// One appended command, as its queue keeps it until seen to complete.
pub struct Command {
    /// What the command signals.
    pub done: Arc<ZeEvent>,
    /// The events it waits on: they may not be reused before it has run.
    _waits: Vec<Arc<ZeEvent>>,
    /// Memory the command reads after its append returned (a fill pattern).
    _keep: Option<Box<[u8]>>,
}

impl Command {
    pub fn new(done: Arc<ZeEvent>, waits: Vec<Arc<ZeEvent>>, keep: Option<Box<[u8]>>) -> Arc<Command> {
        Arc::new(Command { done, _waits: waits, _keep: keep })
    }
}

/// How the engine's completion tracker sees a command.
impl engine::Completion for Command {
    fn poll(&self) -> Progress {
        match self.done.signalled() {
            Ok(true) => Progress::Complete,
            Ok(false) => Progress::Pending,
            // An event the driver cannot describe is not waited for again.
            Err(_) => Progress::Failed,
        }
    }

    fn wait(&self) {
        let _ = self.done.wait();
    }
}

/// A UR event of this adapter: the core's, with a [`Signal`] as its raw part.
pub type Event = ur_core::event::Event<LevelZero>;

/// The driver's side of a UR event: the Level Zero event its command
/// signals, and when the command was submitted. It needs no `Drop` of its
/// own, and may go after the core event's queue and context: the Level
/// Zero event holds its cache, and the cache its driver context.
pub struct Signal {
    pub done: Arc<ZeEvent>,
    /// Device time of the submission, on profiling queues.
    pub submitted_ns: Option<u64>,
}

/// The event of a command `queue` appended, which signals `done`.
pub fn new(
    queue: &Arc<Queue>,
    command: ur_command_t,
    done: Arc<ZeEvent>,
    stamp: Option<Stamp>,
    submitted_ns: Option<u64>,
) -> Arc<Event> {
    Event::new(Some(queue.clone()), queue.context.clone(), command, stamp, Signal { done, submitted_ns })
}

/// Tells the engine the command has completed.
fn report_complete(event: &Event) {
    if let Some(s) = event.stamp {
        event.context.engine.dag().complete(s);
    }
}

pub fn is_complete(event: &Event) -> UrResult<bool> {
    let done = event.raw.done.signalled()?;
    if done {
        report_complete(event);
    }
    Ok(done)
}

/// Blocks until the command has completed.
pub fn wait(event: &Event) -> UrResult {
    event.raw.done.wait()?;
    report_complete(event);
    Ok(())
}

impl RawEvent<LevelZero> for Signal {
    fn status(event: &Event) -> UrResult<ur_event_status_t> {
        Ok(if is_complete(event)? { UR_EVENT_STATUS_COMPLETE } else { UR_EVENT_STATUS_SUBMITTED })
    }

    /// `urEventGetProfilingInfo`: queued and submitted are the device's
    /// clock at the append; start and end the event's timestamps.
    fn profiling(event: &Event, prop: ur_profiling_info_t) -> UrResult<u64> {
        let (Some(queue), Some(submitted)) = (&event.queue, event.raw.submitted_ns) else {
            return Err(UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE);
        };
        if !event.raw.done.timestamped() {
            return Err(UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE);
        }
        if matches!(prop, UR_PROFILING_INFO_COMMAND_QUEUED | UR_PROFILING_INFO_COMMAND_SUBMIT) {
            return Ok(submitted);
        }
        if !is_complete(event)? {
            return Err(UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE);
        }
        let (start, end) = driver::event_timestamps(event.raw.done.raw)
            .map_err(|_| UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE)?;
        // A command never starts before it was submitted, nor ends before
        // it started, whatever the two clocks' rounding says.
        let start = queue.device.raw.ticks_to_ns(start).max(submitted);
        let end = queue.device.raw.ticks_to_ns(end).max(start);
        match prop {
            UR_PROFILING_INFO_COMMAND_START => Ok(start),
            UR_PROFILING_INFO_COMMAND_END | UR_PROFILING_INFO_COMMAND_COMPLETE => Ok(end),
            _ => Err(UR_RESULT_ERROR_INVALID_ENUMERATION),
        }
    }

    fn wait(event: &Event) -> UrResult {
        self::wait(event)
    }


    // Level Zero events tell completion only: `set_callback` is the core's
    // default.

    fn native_handle(event: &Event) -> UrResult<ur_native_handle_t> {
        Ok(event.raw.done.raw as ur_native_handle_t)
    }

    /// `urEventCreateWithNativeHandle`: an event whose completion is the
    /// user's Level Zero event's, of no queue.
    fn from_native(native: ur_native_handle_t, context: &Context, ownership: NativeOwnership) -> UrResult<Arc<Event>> {
        let owned = ownership == NativeOwnership::Owned;
        let done = ZeEvent::native(native as ze_event_handle_t, owned);
        Ok(Event::new(None, arc_of(context), UR_COMMAND_EVENTS_WAIT, None, Signal { done, submitted_ns: None }))
    }
}
