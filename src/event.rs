//! The event object, written once for every backend: what any event holds
//! (its handle header, its command, its queue and context, and its node in
//! the engine's graph) beside `raw`, the backend's own signal of it (a
//! `cl_event`, a `CUevent`, a Level Zero event, a native CPU completion
//! cell), which answers the questions only the driver can ([`RawEvent`]).

use crate::abi::*;
use crate::queue::object::Queue;
use crate::context::Context;
use crate::boundary::NativeOwnership;
use crate::engine::Stamp;
use crate::hal::Backend;
use crate::handle::{arc_of, HandleHeader, ObjectKind};
use crate::UrResult;
use core::ffi::c_void;
use std::sync::Arc;

/// A callback of `urEventSetCallback`, checked: the user's function, the
/// execution state it waits for, and the user's data.
#[derive(Clone, Copy, Debug)]
pub struct EventCallback {
    pub on: ur_execution_info_t,
    pub func: crate::event_callback::Notify,
    pub user_data: *mut c_void,
}

// SAFETY: UR lets callbacks run on any thread; the user data is opaque to
// us, never read.
unsafe impl Send for EventCallback {}

/// The driver's side of an event. Each function gets the whole event, so
/// that the raw part holds only what the driver needs.
pub trait RawEvent<B: Backend>: Send + Sync + Sized + 'static {
    /// `UR_EVENT_INFO_COMMAND_EXECUTION_STATUS`.
    fn status(event: &Event<B>) -> UrResult<ur_event_status_t>;
    /// A failed command's event: a wait list holding it is
    /// `IN_EVENT_LIST_EXEC_STATUS`. By default none: a backend whose
    /// command errors surface from the call that waits keeps no failed
    /// state.
    fn failed(_event: &Event<B>) -> bool {
        false
    }
    /// `UR_PROFILING_INFO_*` in nanoseconds.
    fn profiling(event: &Event<B>, prop: ur_profiling_info_t) -> UrResult<u64>;
    /// Blocks until the command completed; its error when it failed.
    fn wait(event: &Event<B>) -> UrResult;
    /// Whether [`set_callback`](Self::set_callback) takes `SUBMITTED` and
    /// `RUNNING` besides `COMPLETE` (else the core refuses them).
    const CALLBACKS_BEFORE_COMPLETE: bool = false;
    /// `urEventSetCallback`, `on` checked. The default serves events that
    /// tell completion only: the core's dispatcher (`event_callback`) holds
    /// the event, watches it until it completes, then calls `callback`.
    fn set_callback(event: &Event<B>, callback: EventCallback) -> UrResult {
        let watched = crate::event_callback::WatchedEvent::<B>(arc_of(event));
        crate::event_callback::register(watched, callback.func, callback.user_data)
    }
    fn native_handle(_event: &Event<B>) -> UrResult<ur_native_handle_t> {
        Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
    }
    /// Runs once as the event goes, before its fields drop, so that the
    /// backend may give raw resources back to the event's queue while the
    /// event still holds it.
    fn release(_event: &mut Event<B>) {}
    fn from_native(
        _native: ur_native_handle_t,
        _context: &Context<B>,
        _ownership: NativeOwnership,
    ) -> UrResult<Arc<Event<B>>> {
        Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
    }
}

/// A UR event. Its fields never change after it is made.
#[repr(C)]
pub struct Event<B: Backend> {
    /// First: the handle protocol reads it at offset 0.
    header: HandleHeader,
    /// The queue that enqueued the command (none for a native event).
    /// Strong: `UR_EVENT_INFO_COMMAND_QUEUE` names a live queue while the
    /// event lives, as an OpenCL event keeps its queue.
    pub queue: Option<Arc<Queue<B>>>,
    pub context: Arc<Context<B>>,
    pub command: ur_command_t,
    /// The command's node in the context's engine graph (none for a native
    /// event, or a command made before the context recorded any).
    pub stamp: Option<Stamp>,
    pub raw: B::RawEvent,
}

crate::core_object!(Event, Event, ur_event_handle_t_);


impl<B: Backend> Event<B> {
    pub fn new(
        queue: Option<Arc<Queue<B>>>,
        context: Arc<Context<B>>,
        command: ur_command_t,
        stamp: Option<Stamp>,
        raw: B::RawEvent,
    ) -> Arc<Self> {
        Arc::new(Event { header: HandleHeader::new(B::ddi(), ObjectKind::Event), queue, context, command, stamp, raw })
    }


    /// The command's node in `context`'s engine graph, if it has one there.
    /// Only the event's own context's graph has it: another context's lane
    /// numbers name lanes of another graph, and mean nothing in this one.
    pub fn stamp_in(&self, context: &Context<B>) -> Option<Stamp> {
        self.stamp.filter(|_| std::ptr::eq(&*self.context, context))
    }
}

impl<B: Backend> Drop for Event<B> {
    fn drop(&mut self) {
        B::RawEvent::release(self);
    }
}

/// What the core asks of an event: its own fields, or the raw event's
/// answer.
impl<B: Backend> Event<B> {
    pub fn status(&self) -> UrResult<ur_event_status_t> {
        B::RawEvent::status(self)
    }
    pub fn failed(&self) -> bool {
        B::RawEvent::failed(self)
    }
    pub fn profiling(&self, prop: ur_profiling_info_t) -> UrResult<u64> {
        B::RawEvent::profiling(self, prop)
    }
    pub fn wait(&self) -> UrResult {
        B::RawEvent::wait(self)
    }
    pub fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        B::RawEvent::native_handle(self)
    }
    pub fn from_native(native: ur_native_handle_t, context: &Context<B>, ownership: NativeOwnership) -> UrResult<Arc<Self>> {
        B::RawEvent::from_native(native, context, ownership)
    }
}
