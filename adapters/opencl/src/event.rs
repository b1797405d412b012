//! Events: a UR event is the core's `Event<OpenCl>`, whose raw part is the
//! `cl_event` of its command ([`EventCl`]). Completion is observed by status
//! polling (`status`) or by a callback (`EventCl::on_status`, over
//! `clSetEventCallback`). Waiting for an event is a host synchronisation
//! point: the async pool engine hears that its command completed, and the
//! context's pools give back what their thresholds say.

use crate::context::Context;
use crate::driver;
use crate::queue::Queue;
use crate::conv::{self, ClResultExt};
use crate::OpenCl;
use cl3::ext as sys;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use sys::{cl_event, cl_int};
use ur_core::boundary::NativeOwnership;
use ur_core::engine::Stamp;
use ur_core::event::{EventCallback, RawEvent};
use ur_core::handle::arc_of;
use ur_core::*;

/// A UR event of this adapter.
pub type Event = ur_core::event::Event<OpenCl>;

/// The `cl_event` behind a UR event: the event's raw part. It drops after
/// the event's queue and context: an OpenCL event keeps its own references
/// to both, and a borrowed `Completed` one is only read, never released.
pub enum EventCl {
    /// A reference this event owns.
    Own(opencl3::event::Event),
    /// The command completed before its event was made, so the event is the
    /// queue's completed user event, borrowed: the UR event holds the queue,
    /// which holds that event. Status and waits need no runtime call, and
    /// making and dropping the UR event retains and releases nothing.
    Completed(cl_event),
}

// SAFETY: OpenCL objects may be used from any thread, and a borrowed
// `Completed` event is only read while its queue lives.
unsafe impl Send for EventCl {}
unsafe impl Sync for EventCl {}

impl EventCl {
    pub fn get(&self) -> cl_event {
        match self {
            EventCl::Own(e) => e.get(),
            EventCl::Completed(e) => *e,
        }
    }

    /// Whether the command is known to have completed without asking.
    pub fn completed(&self) -> bool {
        matches!(self, EventCl::Completed(_))
    }

    pub fn cl_status(&self) -> UrResult<cl_int> {
        if self.completed() {
            return Ok(sys::CL_COMPLETE);
        }
        driver::value(cl3::event::get_event_data(self.get(), sys::CL_EVENT_COMMAND_EXECUTION_STATUS)).ur()
    }

    /// Runs `f` once the command reaches `status` (`CL_COMPLETE`,
    /// `CL_RUNNING` or `CL_SUBMITTED`), on a runtime thread or at once.
    pub fn on_status(&self, status: cl_int, f: StatusCallback) -> UrResult {
        let user_data = Box::into_raw(Box::new(f)) as *mut c_void;
        let r = cl3::event::set_event_callback(self.get(), status, run_status_callback, user_data);
        if r.is_err() {
            // SAFETY: the runtime refused the callback, so the box is ours again.
            drop(unsafe { Box::from_raw(user_data as *mut StatusCallback) });
        }
        r.ur()
    }
}

/// The event over a `cl_event` this adapter owns one reference of.
pub fn wrap(
    cl: cl_event,
    queue: Option<Arc<Queue>>,
    context: Arc<Context>,
    command: ur_command_t,
    stamp: Option<Stamp>,
) -> Arc<Event> {
    Event::new(queue, context, command, stamp, EventCl::Own(opencl3::event::Event::new(cl)))
}

/// The event of `queue`'s command `stamp`, which has completed; `None`
/// when the runtime could not make the queue's completed user event.
pub fn completed(queue: &Queue, command: ur_command_t, stamp: Stamp) -> Option<Arc<Event>> {
    let cl = crate::queue::completed_cl(queue)?;
    Some(Event::new(Some(arc_of(queue)), queue.context.clone(), command, Some(stamp), EventCl::Completed(cl)))
}

/// Tells the engine that `event`'s command has completed.
fn report_complete(event: &Event) {
    if let Some(s) = event.stamp {
        event.context.engine.dag().complete(s);
    }
}

/// What runs when an event reaches a status: given the OpenCL status
/// (`CL_COMPLETE`, or a negative error).
pub type StatusCallback = Box<dyn FnOnce(cl_int) + Send>;

extern "C" fn run_status_callback(_event: cl_event, status: cl_int, user_data: *mut c_void) {
    // SAFETY: `user_data` is the box `on_status` leaked for this one call.
    let f = unsafe { Box::from_raw(user_data as *mut StatusCallback) };
    // The runtime's thread is C code: nothing may unwind into it.
    let _ = catch_unwind(AssertUnwindSafe(move || f(status)));
}

/// The user's callback and data, moved to the runtime's thread.
struct UserCallback {
    f: unsafe extern "C" fn(ur_event_handle_t, ur_execution_info_t, *mut c_void),
    user_data: usize,
}

impl RawEvent<OpenCl> for EventCl {
    fn status(event: &Event) -> UrResult<ur_event_status_t> {
        Ok(conv::event_status(event.raw.cl_status()?))
    }

    /// Whether the command ended in error (a negative OpenCL status).
    fn failed(event: &Event) -> bool {
        event.raw.cl_status().is_ok_and(|s| s < 0)
    }

    /// `urEventGetProfilingInfo`.
    fn profiling(event: &Event, prop: ur_profiling_info_t) -> UrResult<u64> {
        if !event.queue.as_ref().is_some_and(|q| q.is_profiling()) {
            return Err(UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE);
        }
        let param = conv::profiling_info(prop)?;
        let read = |p| driver::value::<sys::cl_ulong>(cl3::event::get_event_profiling_data(event.raw.get(), p));
        match read(param) {
            Ok(v) => Ok(v),
            // COMPLETE is OpenCL 2.0; END is the same moment for commands
            // without child commands.
            Err(sys::CL_INVALID_VALUE) if param == sys::CL_PROFILING_COMMAND_COMPLETE => {
                read(sys::CL_PROFILING_COMMAND_END).ur()
            }
            Err(e) => Err(conv::result(e)),
        }
    }

    /// Waits on the host for the event.
    fn wait(event: &Event) -> UrResult {
        if !event.raw.completed() {
            wait_result(cl3::event::wait_for_events(&[event.raw.get()]))?;
        }
        report_complete(event);
        Ok(())
    }


    /// `clSetEventCallback` takes submitted, running and complete.
    const CALLBACKS_BEFORE_COMPLETE: bool = true;

    fn set_callback(event: &Event, c: EventCallback) -> UrResult {
        let (on, status) = (c.on, conv::execution_info(c.on)?);
        let callback = UserCallback { f: c.func, user_data: c.user_data as usize };
        // The closure holds the event, so its handle stays valid for the call.
        let held = arc_of(event);
        event.raw.on_status(
            status,
            Box::new(move |_| {
                // SAFETY: the user registered this callback for this event.
                unsafe { (callback.f)(held.handle(), on, callback.user_data as *mut c_void) };
            }),
        )
    }

    fn native_handle(event: &Event) -> UrResult<ur_native_handle_t> {
        Ok(event.raw.get() as ur_native_handle_t)
    }

    /// `urEventCreateWithNativeHandle`: an event over the user's
    /// `cl_event`, which must belong to `context`; its status and waits are
    /// the `cl_event`'s. When the command ran on a live queue of this
    /// context, the event names that queue (and profiles like its events).
    /// A borrowed event is retained here and released with this object; an
    /// owned one takes over the caller's reference.
    fn from_native(native: ur_native_handle_t, context: &Context, ownership: NativeOwnership) -> UrResult<Arc<Event>> {
        let context = arc_of(context);
        let native = native as cl_event;
        let data = |p| cl3::event::get_event_data(native, p);
        if driver::value::<sys::cl_context>(data(sys::CL_EVENT_CONTEXT)).ur()? != context.raw.cl.get() {
            return Err(UR_RESULT_ERROR_INVALID_CONTEXT);
        }
        // A user event has no queue.
        let cl_queue = driver::value::<sys::cl_command_queue>(data(sys::CL_EVENT_COMMAND_QUEUE)).ur()?;
        let queue = if cl_queue.is_null() { None } else { crate::context::queue_by_cl(&context, cl_queue) };
        let command = command_type(driver::value::<sys::cl_command_type>(data(sys::CL_EVENT_COMMAND_TYPE)).ur()?);
        if ownership == ur_core::boundary::NativeOwnership::Borrowed {
            // SAFETY: the caller's live event; this reference is the one
            // the wrapper releases.
            unsafe { cl3::event::retain_event(native) }.ur()?;
        }
        Ok(wrap(native, queue, context, command, None))
    }
}

/// The UR command of an OpenCL command type, for events made from native
/// ones (a command UR has no name for reads as a wait).
fn command_type(t: sys::cl_command_type) -> ur_command_t {
    match t {
        sys::CL_COMMAND_NDRANGE_KERNEL | sys::CL_COMMAND_TASK => UR_COMMAND_KERNEL_LAUNCH,
        sys::CL_COMMAND_BARRIER => UR_COMMAND_EVENTS_WAIT_WITH_BARRIER,
        sys::CL_COMMAND_SVM_MEMCPY | sys::CL_COMMAND_MEMCPY_INTEL => UR_COMMAND_USM_MEMCPY,
        sys::CL_COMMAND_SVM_MEMFILL | sys::CL_COMMAND_MEMFILL_INTEL => UR_COMMAND_USM_FILL,
        sys::CL_COMMAND_MIGRATEMEM_INTEL => UR_COMMAND_USM_PREFETCH,
        sys::CL_COMMAND_MEMADVISE_INTEL => UR_COMMAND_USM_ADVISE,
        _ => UR_COMMAND_EVENTS_WAIT,
    }
}

fn wait_result(r: Result<(), cl_int>) -> UrResult {
    r.map_err(|e| match e {
        sys::CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST => UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS,
        e => conv::result(e),
    })
}
