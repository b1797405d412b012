//! `urEvent*`.

use super::obj;
use crate::conv;
use crate::core::event::Event;
use crate::core::refcount;
use std::ffi::c_void;
use std::sync::Arc;
use ur_core::boundary::{ffi_call, slice_arg, write_out};
use ur_core::info::InfoOut;
use ur_core::*;

pub unsafe extern "C" fn urEventGetInfo(
    h: ur_event_handle_t,
    prop: ur_event_info_t,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let e = obj::<Event>(h)?;
        if prop.0 > UR_EVENT_INFO_REFERENCE_COUNT.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let out = InfoOut::new(size, value, size_ret)?;
        match prop {
            UR_EVENT_INFO_COMMAND_QUEUE => {
                out.value(e.queue.as_ref().map_or(std::ptr::null_mut(), refcount::handle_of))
            }
            UR_EVENT_INFO_CONTEXT => out.value(refcount::handle_of(&e.context)),
            UR_EVENT_INFO_COMMAND_TYPE => out.value(e.command),
            UR_EVENT_INFO_COMMAND_EXECUTION_STATUS => out.value(e.status()?),
            UR_EVENT_INFO_REFERENCE_COUNT => out.value(e.refs.get()),
            _ => Err(UR_RESULT_ERROR_INVALID_ENUMERATION),
        }
    })
}

pub unsafe extern "C" fn urEventGetProfilingInfo(
    h: ur_event_handle_t,
    prop: ur_profiling_info_t,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let e = obj::<Event>(h)?;
        if prop.0 > UR_PROFILING_INFO_COMMAND_COMPLETE.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        // This query names a zero size with a buffer INVALID_VALUE.
        if size == 0 && !value.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        let out = InfoOut::new(size, value, size_ret)?;
        out.value(e.profiling(prop)?)
    })
}

pub unsafe extern "C" fn urEventWait(num_events: u32, ph_events: *const ur_event_handle_t) -> ur_result_t {
    ffi_call(|| {
        if ph_events.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        if num_events == 0 {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        let events =
            slice_arg(ph_events, num_events)?.iter().map(|&h| Event::from_handle(h)).collect::<UrResult<Vec<_>>>()?;
        Event::wait_all(&events)
    })
}

pub unsafe extern "C" fn urEventRetain(h: ur_event_handle_t) -> ur_result_t {
    ffi_call(|| refcount::retain::<Event>(h))
}

pub unsafe extern "C" fn urEventRelease(h: ur_event_handle_t) -> ur_result_t {
    ffi_call(|| refcount::release::<Event>(h))
}

pub unsafe extern "C" fn urEventGetNativeHandle(h: ur_event_handle_t, ph_native: *mut ur_native_handle_t) -> ur_result_t {
    ffi_call(|| write_out(ph_native, obj::<Event>(h)?.cl.get() as ur_native_handle_t))
}

/// The user's callback and data, moved to the runtime's thread.
struct UserCallback {
    f: unsafe extern "C" fn(ur_event_handle_t, ur_execution_info_t, *mut c_void),
    user_data: usize,
}

pub unsafe extern "C" fn urEventSetCallback(
    h: ur_event_handle_t,
    exec_status: ur_execution_info_t,
    pfn_notify: ur_event_callback_t,
    p_user_data: *mut c_void,
) -> ur_result_t {
    ffi_call(|| {
        let event = Event::from_handle(h)?;
        if exec_status.0 > UR_EXECUTION_INFO_QUEUED.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let f = pfn_notify.ok_or(UR_RESULT_ERROR_INVALID_NULL_POINTER)?;
        let status = conv::execution_info(exec_status)?;
        let callback = UserCallback { f, user_data: p_user_data as usize };
        // The closure holds the event, so its handle stays valid for the call.
        let held = Arc::clone(&event);
        event.on_status(
            status,
            Box::new(move |_| {
                let handle = refcount::handle_of(&held);
                // SAFETY: the user registered this callback for this event.
                unsafe { (callback.f)(handle, exec_status, callback.user_data as *mut c_void) };
            }),
        )
    })
}

pub unsafe extern "C" fn urEventCreateWithNativeHandle(
    h_native: ur_native_handle_t,
    h_context: ur_context_handle_t,
    p_properties: *const ur_event_native_properties_t,
    ph_event: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let context = super::arc::<crate::core::context::Context>(h_context)?;
        let (ownership, _) = ur_core::boundary::native_args(h_native, false, p_properties, ph_event)?;
        let event = Event::from_native(context, h_native as cl3::ext::cl_event, ownership)?;
        *ph_event = refcount::into_handle(event);
        Ok(())
    })
}
