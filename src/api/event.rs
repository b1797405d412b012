//! `urEvent*`.

use super::obj;
use crate::abi::*;
use crate::context::Context;
use crate::boundary::{ffi_call, non_null, slice_arg};
use crate::event::{Event, EventCallback, RawEvent};
use crate::hal::Backend;
use crate::handle;
use crate::info::InfoOut;
use core::ffi::c_void;

super::info_entry!(crate::event::Event<B>, ur_event_handle_t, ur_event_info_t, UR_EVENT_INFO_REFERENCE_COUNT, |event, prop, out| {
    match prop {
        UR_EVENT_INFO_COMMAND_QUEUE => out.value(event.queue.as_deref().map_or(std::ptr::null_mut(), handle::handle_of)),
        UR_EVENT_INFO_CONTEXT => out.value(handle::handle_of(&*event.context)),
        UR_EVENT_INFO_COMMAND_TYPE => out.value(event.command),
        UR_EVENT_INFO_COMMAND_EXECUTION_STATUS => out.value(event.status()?),
        _ => out.value(handle::ref_count_of(event)),
    }
});

pub(super) unsafe extern "C" fn get_profiling_info<B: Backend>(
    h: ur_event_handle_t,
    prop: ur_profiling_info_t,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let event = obj::<B, Event<B>>(h)?;
        super::prop_in_range(prop.0, UR_PROFILING_INFO_COMMAND_COMPLETE.0, &[])?;
        // This query names a zero size with a buffer INVALID_VALUE, not
        // INVALID_SIZE.
        if !value.is_null() && size == 0 {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        let out = InfoOut::new(size, value, size_ret)?;
        out.value(event.profiling(prop)?)
    })
}

/// Waits for every event, then reports a failure among them; a host
/// synchronisation point for each context waited on.
pub(super) unsafe extern "C" fn wait<B: Backend>(count: u32, list: *const ur_event_handle_t) -> ur_result_t {
    ffi_call(|| {
        non_null(list)?;
        if count == 0 {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        let events = slice_arg(list, count)?
            .iter()
            .map(|&h| obj::<B, Event<B>>(h))
            .collect::<Result<Vec<_>, _>>()?;
        let mut outcome = Ok(());
        for e in &events {
            outcome = outcome.and(e.wait());
        }
        let mut contexts: Vec<&Context<B>> = Vec::new();
        for e in &events {
            let context = &*e.context;
            if !contexts.iter().any(|c| std::ptr::eq(*c, context)) {
                contexts.push(context);
                context.collect_pools();
            }
        }
        outcome.map_err(|_| UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS)
    })
}

super::native_handle_entry!(crate::event::Event<B>, ur_event_handle_t);

super::native_in_context_entry!(crate::event::Event<B>, ur_event_native_properties_t, ur_event_handle_t);

pub(super) unsafe extern "C" fn set_callback<B: Backend>(
    h: ur_event_handle_t,
    on: ur_execution_info_t,
    callback: ur_event_callback_t,
    user_data: *mut c_void,
) -> ur_result_t {
    ffi_call(|| {
        let event = obj::<B, Event<B>>(h)?;
        if on.0 > UR_EXECUTION_INFO_QUEUED.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let callback = callback.ok_or(UR_RESULT_ERROR_INVALID_NULL_POINTER)?;
        // No backend calls back on queueing; a backend whose events tell
        // completion only takes nothing earlier than completion.
        if on == UR_EXECUTION_INFO_QUEUED
            || (on != UR_EXECUTION_INFO_COMPLETE && !B::RawEvent::CALLBACKS_BEFORE_COMPLETE)
        {
            return Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION);
        }
        B::RawEvent::set_callback(event, EventCallback { on, func: callback, user_data })
    })
}
