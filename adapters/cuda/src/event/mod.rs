//! Events: a CUDA event recorded after the command, and for profiling
//! queues a second one recorded before it; `impl hal::Event` here, event
//! callbacks in `callback`.

pub mod callback;

use crate::context::Context;
use crate::device::Device;
use crate::queue::Queue;
use crate::conv::{self, CuExt};
use crate::driver::{self, CUstream, CuEvent};
use crate::{Cuda, DDI};
use std::ffi::c_void;
use std::sync::{Arc, OnceLock};
use std::time::Instant;
use ur_core::engine::Stamp;
use ur_core::boundary::NativeOwnership;
use ur_core::hal;
use ur_core::handle::{arc_of, ArcObject, HandleHeader, ObjectKind};
use ur_core::*;

/// Nanoseconds on the host's monotonic clock since the adapter first asked.
pub fn now_ns() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

#[repr(C)]
pub struct Event {
    header: HandleHeader,
    pub context: Arc<Context>,
    pub queue: Option<Arc<Queue>>,
    pub command: ur_command_t,
    /// The stream the command ran on: work later on the same stream is
    /// ordered after it without a wait.
    pub stream: usize,
    /// Recorded after the command; `None` for an event complete when made.
    /// Shared with the queue's completion trackers.
    done: Option<Arc<CuEvent>>,
    /// The command in the engine's graph, when the context records them.
    pub stamp: Option<Stamp>,
    /// Recorded before the command, on profiling queues.
    start: Option<CuEvent>,
    queued_ns: u64,
}

ur_core::ur_object!(Event, Event, ur_event_handle_t_);

// SAFETY: made only by `Arc::new` in this module, and handed out only
// from there.
unsafe impl ArcObject for Event {}

impl Event {
    pub fn recorded(
        queue: &Arc<Queue>,
        command: ur_command_t,
        stream: CUstream,
        done: Arc<CuEvent>,
        stamp: Option<Stamp>,
        start: Option<CuEvent>,
        queued_ns: u64,
    ) -> Arc<Event> {
        Arc::new(Event {
            header: HandleHeader::new(&DDI, ObjectKind::Event),
            context: queue.context.clone(),
            queue: Some(queue.clone()),
            command,
            stream: stream as usize,
            done: Some(done),
            stamp,
            start,
            queued_ns,
        })
    }

    /// An event complete when made, with no CUDA event: for tests that
    /// run without a driver.
    #[cfg(test)]
    pub fn complete_for_test(context: Arc<Context>) -> Arc<Event> {
        Arc::new(Event {
            header: HandleHeader::new(&DDI, ObjectKind::Event),
            context,
            queue: None,
            command: UR_COMMAND_EVENTS_WAIT,
            stream: 0,
            done: None,
            stamp: None,
            start: None,
            queued_ns: now_ns(),
        })
    }

    pub fn handle(&self) -> ur_event_handle_t {
        ur_core::handle::handle_of(self)
    }

    /// The CUDA event later work waits on; `None` when already complete.
    pub fn cu_event(&self) -> Option<&CuEvent> {
        self.done.as_deref()
    }

    /// Tells the engine the command has completed.
    pub(super) fn report_complete(&self) {
        if let Some(s) = self.stamp {
            self.context.engine.dag().complete(s);
        }
    }

    pub fn is_complete(&self) -> UrResult<bool> {
        let done = match &self.done {
            None => true,
            Some(e) => {
                self.activate()?;
                e.is_complete().cu()?
            }
        };
        if done {
            self.report_complete();
        }
        Ok(done)
    }

    /// The GPU whose context is made current to use the CUDA event: the
    /// queue's, or for an event from a native handle the context's first.
    pub(super) fn device(&self) -> Option<&Arc<Device>> {
        match &self.queue {
            Some(q) => Some(&q.device),
            None => self.context.devices.first(),
        }
    }

    fn activate(&self) -> UrResult {
        if let Some(d) = self.device() {
            d.activate()?;
        }
        Ok(())
    }

    /// Blocks until the command has completed.
    pub fn wait(&self) -> UrResult {
        if let Some(e) = &self.done {
            self.activate()?;
            e.synchronize().cu()?;
        }
        self.report_complete();
        Ok(())
    }
}

impl hal::Event<Cuda> for Event {
    fn queue(&self) -> Option<&Queue> {
        self.queue.as_deref()
    }

    fn context(&self) -> &Context {
        &self.context
    }

    fn command_type(&self) -> ur_command_t {
        self.command
    }

    fn status(&self) -> UrResult<ur_event_status_t> {
        Ok(if self.is_complete()? {
            UR_EVENT_STATUS_COMPLETE
        } else {
            UR_EVENT_STATUS_SUBMITTED
        })
    }

    /// `urEventGetProfilingInfo`: host times for queued and submitted, device
    /// times (placed on the host clock through the queue's base event) for
    /// start and end.
    fn profiling(&self, prop: ur_profiling_info_t) -> UrResult<u64> {
        let queue = self
            .queue
            .as_ref()
            .ok_or(UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE)?;
        let (base, base_ns) = queue
            .profiling_base()
            .ok_or(UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE)?;
        let (Some(start), Some(done)) = (&self.start, &self.done) else {
            return Err(UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE);
        };
        let device_time = |e: &CuEvent| -> UrResult<u64> {
            queue.device.activate()?;
            let ms = base
                .elapsed_ms(e)
                .map_err(|_| UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE)?;
            Ok(base_ns + conv::ms_to_ns(ms))
        };
        let ns = match prop {
            UR_PROFILING_INFO_COMMAND_QUEUED | UR_PROFILING_INFO_COMMAND_SUBMIT => self.queued_ns,
            UR_PROFILING_INFO_COMMAND_START => device_time(start)?.max(self.queued_ns),
            UR_PROFILING_INFO_COMMAND_END | UR_PROFILING_INFO_COMMAND_COMPLETE => {
                let begin = device_time(start)?.max(self.queued_ns);
                device_time(done)?.max(begin)
            }
            _ => return Err(UR_RESULT_ERROR_INVALID_ENUMERATION),
        };
        Ok(ns)
    }

    fn wait(&self) -> UrResult {
        Event::wait(self)
    }

    fn host_sync(context: &Context) {
        context.engine.collect_all();
    }

    /// `urEventSetCallback` for completion: `callback` runs on the callback
    /// dispatcher's thread once the command has completed
    /// (`event/callback.rs`); the event stays alive until it has. CUDA
    /// tells completion only; the earlier stages have no signal (the core
    /// answers them `UNSUPPORTED_ENUMERATION`).
    fn set_callback(
        &self,
        _on: ur_execution_info_t,
        callback: unsafe extern "C" fn(ur_event_handle_t, ur_execution_info_t, *mut c_void),
        user_data: *mut c_void,
    ) -> UrResult {
        callback::register(arc_of(self), callback, user_data)
    }

    fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        Ok(self.cu_event().map_or(std::ptr::null_mut(), |e| e.raw()) as ur_native_handle_t)
    }

    /// `urEventCreateWithNativeHandle`: an event whose completion is the
    /// user's CUDA event's (its last record). Owned, the CUDA event is
    /// destroyed with this one; borrowed, it is left to its owner (CUDA
    /// events have no reference count).
    fn from_native(
        native: ur_native_handle_t,
        context: &Context,
        ownership: NativeOwnership,
    ) -> UrResult<Arc<Self>> {
        let owned = ownership == NativeOwnership::Owned;
        let native = CuEvent::from_raw(native as driver::CUevent, owned);
        let context = arc_of(context);
        Ok(Arc::new(Event {
            header: HandleHeader::new(&DDI, ObjectKind::Event),
            context,
            queue: None,
            command: UR_COMMAND_EVENTS_WAIT,
            // No stream of ours: every queue waits for it explicitly.
            stream: 0,
            done: Some(Arc::new(native)),
            stamp: None,
            start: None,
            queued_ns: now_ns(),
        }))
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // Untimed events go back to their queue for reuse: creating a CUDA
        // event costs more than recording one.
        if let (Some(q), Some(e)) = (&self.queue, self.done.take()) {
            if let Ok(e) = Arc::try_unwrap(e) {
                q.recycle_event(e);
            }
        }
    }
}
