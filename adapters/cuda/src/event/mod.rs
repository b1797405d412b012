//! Events: the core's `Event` with [`StreamEvents`] as its raw part, a CUDA
//! event recorded after the command and for profiling queues a second one
//! recorded before it; `impl RawEvent` here, event callbacks in `callback`.

pub mod callback;

use crate::context::Context;
use crate::device::Device;
use crate::queue::Queue;
use crate::conv::{self, CuExt};
use crate::driver::{self, CUstream, CuEvent};
use crate::Cuda;
use std::sync::{Arc, OnceLock};
use std::time::Instant;
use ur_core::engine::Stamp;
use ur_core::boundary::NativeOwnership;
use ur_core::event::{EventCallback, RawEvent};
use ur_core::handle::arc_of;
use ur_core::*;

/// Nanoseconds on the host's monotonic clock since the adapter first asked.
pub fn now_ns() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// A UR event of this adapter: the core's, with [`StreamEvents`] as its raw
/// part.
pub type Event = ur_core::event::Event<Cuda>;

/// The driver's side of a UR event: the CUDA events recorded around its
/// command on the command's stream, and when the command was queued.
pub struct StreamEvents {
    /// The stream the command ran on: work later on the same stream is
    /// ordered after it without a wait.
    pub stream: usize,
    /// Recorded after the command; `None` for an event complete when made.
    /// Shared with the queue's completion trackers.
    done: Option<Arc<CuEvent>>,
    /// Recorded before the command, on profiling queues.
    start: Option<CuEvent>,
    queued_ns: u64,
}

impl StreamEvents {
    /// The CUDA event later work waits on; `None` when already complete.
    pub fn cu_event(&self) -> Option<&CuEvent> {
        self.done.as_deref()
    }
}

/// The event of a command `queue` put on `stream`: complete once `done`
/// is, timed by `start` on profiling queues.
pub fn recorded(
    queue: &Queue,
    command: ur_command_t,
    stream: CUstream,
    done: Arc<CuEvent>,
    stamp: Option<Stamp>,
    start: Option<CuEvent>,
    queued_ns: u64,
) -> Arc<Event> {
    let raw = StreamEvents {
        stream: stream as usize,
        done: Some(done),
        start,
        queued_ns,
    };
    Event::new(Some(arc_of(queue)), queue.context.clone(), command, stamp, raw)
}

/// An event complete when made, with no CUDA event: for tests that
/// run without a driver.
#[cfg(test)]
pub fn complete_for_test(context: Arc<Context>) -> Arc<Event> {
    let raw = StreamEvents {
        stream: 0,
        done: None,
        start: None,
        queued_ns: now_ns(),
    };
    Event::new(None, context, UR_COMMAND_EVENTS_WAIT, None, raw)
}

/// Tells the engine the command has completed.
pub(super) fn report_complete(event: &Event) {
    if let Some(s) = event.stamp {
        event.context.engine.dag().complete(s);
    }
}

pub fn is_complete(event: &Event) -> UrResult<bool> {
    let done = match &event.raw.done {
        None => true,
        Some(e) => {
            activate(event)?;
            e.is_complete().cu()?
        }
    };
    if done {
        report_complete(event);
    }
    Ok(done)
}

/// The GPU whose context is made current to use the CUDA event: the
/// queue's, or for an event from a native handle the context's first.
pub(super) fn device(event: &Event) -> Option<&Arc<Device>> {
    match &event.queue {
        Some(q) => Some(&q.device),
        None => event.context.devices.first(),
    }
}

fn activate(event: &Event) -> UrResult {
    if let Some(d) = device(event) {
        d.raw.activate()?;
    }
    Ok(())
}

/// Blocks until the command has completed.
pub fn wait(event: &Event) -> UrResult {
    if let Some(e) = &event.raw.done {
        activate(event)?;
        e.synchronize().cu()?;
    }
    report_complete(event);
    Ok(())
}

impl RawEvent<Cuda> for StreamEvents {
    fn status(event: &Event) -> UrResult<ur_event_status_t> {
        Ok(if is_complete(event)? {
            UR_EVENT_STATUS_COMPLETE
        } else {
            UR_EVENT_STATUS_SUBMITTED
        })
    }

    /// `urEventGetProfilingInfo`: host times for queued and submitted, device
    /// times (placed on the host clock through the queue's base event) for
    /// start and end.
    fn profiling(event: &Event, prop: ur_profiling_info_t) -> UrResult<u64> {
        let queue = event
            .queue
            .as_ref()
            .ok_or(UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE)?;
        let (base, base_ns) = queue
            .raw
            .profiling_base()
            .ok_or(UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE)?;
        let (Some(start), Some(done)) = (&event.raw.start, &event.raw.done) else {
            return Err(UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE);
        };
        let device_time = |e: &CuEvent| -> UrResult<u64> {
            queue.device.raw.activate()?;
            let ms = base
                .elapsed_ms(e)
                .map_err(|_| UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE)?;
            Ok(base_ns + conv::ms_to_ns(ms))
        };
        let ns = match prop {
            UR_PROFILING_INFO_COMMAND_QUEUED | UR_PROFILING_INFO_COMMAND_SUBMIT => event.raw.queued_ns,
            UR_PROFILING_INFO_COMMAND_START => device_time(start)?.max(event.raw.queued_ns),
            UR_PROFILING_INFO_COMMAND_END | UR_PROFILING_INFO_COMMAND_COMPLETE => {
                let begin = device_time(start)?.max(event.raw.queued_ns);
                device_time(done)?.max(begin)
            }
            _ => return Err(UR_RESULT_ERROR_INVALID_ENUMERATION),
        };
        Ok(ns)
    }

    fn wait(event: &Event) -> UrResult {
        self::wait(event)
    }


    /// `urEventSetCallback` for completion: `callback` runs on the callback
    /// dispatcher's thread once the command has completed
    /// (`event/callback.rs`); the event stays alive until it has. CUDA
    /// tells completion only; the earlier stages have no signal (the core
    /// answers them `UNSUPPORTED_ENUMERATION`).
    fn set_callback(event: &Event, c: EventCallback) -> UrResult {
        callback::register(arc_of(event), c.func, c.user_data)
    }

    fn native_handle(event: &Event) -> UrResult<ur_native_handle_t> {
        Ok(event.raw.cu_event().map_or(std::ptr::null_mut(), |e| e.raw()) as ur_native_handle_t)
    }

    /// `urEventCreateWithNativeHandle`: an event whose completion is the
    /// user's CUDA event's (its last record). Owned, the CUDA event is
    /// destroyed with this one; borrowed, it is left to its owner (CUDA
    /// events have no reference count).
    fn from_native(
        native: ur_native_handle_t,
        context: &Context,
        ownership: NativeOwnership,
    ) -> UrResult<Arc<Event>> {
        let owned = ownership == NativeOwnership::Owned;
        let native = CuEvent::from_raw(native as driver::CUevent, owned);
        let context = arc_of(context);
        let raw = StreamEvents {
            // No stream of ours: every queue waits for it explicitly.
            stream: 0,
            done: Some(Arc::new(native)),
            start: None,
            queued_ns: now_ns(),
        };
        Ok(Event::new(None, context, UR_COMMAND_EVENTS_WAIT, None, raw))
    }

    /// An event's finished CUDA event goes back to its queue for reuse:
    /// creating a CUDA event costs more than recording one. Only a queue's
    /// own, untimed events are recycled (native events have no queue).
    fn release(event: &mut Event) {
        if let (Some(q), Some(e)) = (&event.queue, event.raw.done.take()) {
            if let Ok(e) = Arc::try_unwrap(e) {
                q.raw.recycle_event(e);
            }
        }
    }
}
