//! `urEvent*`.

use super::{arc, obj, release_counted, retain_counted};
use crate::core::context::Context;
use crate::core::event::{Callback, Event};
use crate::core::refcount::Counted;
use std::ffi::c_void;
use ur_core::boundary::{ffi_call, non_null};
use ur_core::info::InfoOut;
use ur_core::*;

pub unsafe extern "C" fn urEventGetInfo(
    hEvent: ur_event_handle_t,
    propName: ur_event_info_t,
    propSize: usize,
    pPropValue: *mut c_void,
    pPropSizeRet: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let event = obj::<Event>(hEvent)?;
        if propName.0 > UR_EVENT_INFO_REFERENCE_COUNT.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let out = InfoOut::new(propSize, pPropValue, pPropSizeRet)?;
        match propName {
            UR_EVENT_INFO_COMMAND_QUEUE => out.value(event.queue().handle()),
            UR_EVENT_INFO_CONTEXT => out.value(event.queue().shared.context.handle()),
            UR_EVENT_INFO_COMMAND_TYPE => out.value(event.command_type()),
            UR_EVENT_INFO_COMMAND_EXECUTION_STATUS => out.value(event.status()),
            UR_EVENT_INFO_REFERENCE_COUNT => out.value(event.user_refs().get()),
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    })
}

pub unsafe extern "C" fn urEventGetProfilingInfo(
    hEvent: ur_event_handle_t,
    propName: ur_profiling_info_t,
    propSize: usize,
    pPropValue: *mut c_void,
    pPropSizeRet: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let event = obj::<Event>(hEvent)?;
        if propName.0 > UR_PROFILING_INFO_COMMAND_COMPLETE.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        // This entry point names INVALID_VALUE, not INVALID_SIZE, for a
        // buffer of size 0.
        if !pPropValue.is_null() && propSize == 0 {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        let time = event.profiling_time(propName)?;
        InfoOut::new(propSize, pPropValue, pPropSizeRet)?.value(time)
    })
}

pub unsafe extern "C" fn urEventWait(numEvents: u32, phEventWaitList: *const ur_event_handle_t) -> ur_result_t {
    ffi_call(|| {
        non_null(phEventWaitList)?;
        if numEvents == 0 {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        let handles = std::slice::from_raw_parts(phEventWaitList, numEvents as usize);
        let events = handles.iter().map(|&h| obj::<Event>(h)).collect::<UrResult<Vec<_>>>()?;
        // Wait for all of them, then report a failure among them.
        let mut result = Ok(());
        for e in &events {
            result = result.and(e.wait());
        }
        // A host synchronisation point for the pools of each context waited on.
        let mut contexts: Vec<&Context> = Vec::new();
        for e in &events {
            let context = &*e.queue().shared.context;
            if !contexts.iter().any(|c| std::ptr::eq(*c, context)) {
                contexts.push(context);
                context.collect_pools();
            }
        }
        result
    })
}

pub unsafe extern "C" fn urEventRetain(hEvent: ur_event_handle_t) -> ur_result_t {
    ffi_call(|| retain_counted::<Event>(hEvent))
}

pub unsafe extern "C" fn urEventRelease(hEvent: ur_event_handle_t) -> ur_result_t {
    ffi_call(|| release_counted::<Event>(hEvent))
}

pub unsafe extern "C" fn urEventSetCallback(
    hEvent: ur_event_handle_t,
    execStatus: ur_execution_info_t,
    pfnNotify: ur_event_callback_t,
    pUserData: *mut c_void,
) -> ur_result_t {
    ffi_call(|| {
        let event = arc::<Event>(hEvent)?;
        if execStatus.0 > UR_EXECUTION_INFO_QUEUED.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let func = pfnNotify.ok_or(UR_RESULT_ERROR_INVALID_NULL_POINTER)?;
        if execStatus == UR_EXECUTION_INFO_QUEUED {
            return Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION);
        }
        event.set_callback(Callback { on: execStatus, func, user_data: pUserData });
        Ok(())
    })
}
