//! `urEvent*`.

use super::borrow;
use crate::core::event::Event;
use std::sync::Arc;
use ur_core::boundary::{ffi_call, slice_arg, write_out};
use ur_core::handle;
use ur_core::info::InfoOut;
use ur_core::*;

pub unsafe extern "C" fn urEventGetInfo(
    hEvent: ur_event_handle_t,
    propName: ur_event_info_t,
    propSize: usize,
    pPropValue: *mut core::ffi::c_void,
    pPropSizeRet: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let event = borrow::<Event>(hEvent)?;
        if propName.0 > UR_EVENT_INFO_REFERENCE_COUNT.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        event.info(propName, InfoOut::new(propSize, pPropValue, pPropSizeRet)?)
    })
}

pub unsafe extern "C" fn urEventGetProfilingInfo(
    hEvent: ur_event_handle_t,
    propName: ur_profiling_info_t,
    propSize: usize,
    pPropValue: *mut core::ffi::c_void,
    pPropSizeRet: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let event = borrow::<Event>(hEvent)?;
        if propName.0 > UR_PROFILING_INFO_COMMAND_COMPLETE.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        if !pPropValue.is_null() && propSize == 0 {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        let out = InfoOut::new(propSize, pPropValue, pPropSizeRet)?;
        event.profiling(propName, out)
    })
}

pub unsafe extern "C" fn urEventWait(
    numEvents: u32,
    phEventWaitList: *const ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        if phEventWaitList.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        if numEvents == 0 {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        let events = slice_arg(phEventWaitList, numEvents)?
            .iter()
            .map(|&h| borrow::<Event>(h))
            .collect::<UrResult<Vec<_>>>()?;
        let waited = events.iter().try_for_each(|e| e.wait());
        // A host synchronisation point for the pools of each context.
        let mut seen: Vec<*const crate::core::context::Context> = Vec::new();
        for e in &events {
            let context = Arc::as_ptr(&e.context);
            if !seen.contains(&context) {
                seen.push(context);
                e.context.engine.collect_all();
            }
        }
        waited
    })
}

pub unsafe extern "C" fn urEventRetain(hEvent: ur_event_handle_t) -> ur_result_t {
    ffi_call(|| handle::retain::<Event>(hEvent, &crate::DDI))
}

pub unsafe extern "C" fn urEventRelease(hEvent: ur_event_handle_t) -> ur_result_t {
    ffi_call(|| handle::release::<Event>(hEvent, &crate::DDI))
}

pub unsafe extern "C" fn urEventGetNativeHandle(
    hEvent: ur_event_handle_t,
    phNativeEvent: *mut ur_native_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let event = borrow::<Event>(hEvent)?;
        let raw = event.cu_event().map_or(std::ptr::null_mut(), |e| e.raw());
        write_out(phNativeEvent, raw as ur_native_handle_t)
    })
}

pub unsafe extern "C" fn urEventSetCallback(
    hEvent: ur_event_handle_t,
    execStatus: ur_execution_info_t,
    pfnNotify: ur_event_callback_t,
    pUserData: *mut core::ffi::c_void,
) -> ur_result_t {
    ffi_call(|| {
        let event = super::arc::<Event>(hEvent)?;
        if execStatus.0 > UR_EXECUTION_INFO_QUEUED.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let notify = pfnNotify.ok_or(UR_RESULT_ERROR_INVALID_NULL_POINTER)?;
        // CUDA tells completion only; the earlier stages have no signal.
        if execStatus != UR_EXECUTION_INFO_COMPLETE {
            return Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION);
        }
        event.on_complete(notify, pUserData);
        Ok(())
    })
}

pub unsafe extern "C" fn urEventCreateWithNativeHandle(
    hNativeEvent: ur_native_handle_t,
    hContext: ur_context_handle_t,
    pProperties: *const ur_event_native_properties_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let context = super::arc::<crate::core::context::Context>(hContext)?;
        let (ownership, _) =
            ur_core::boundary::native_args(hNativeEvent, false, pProperties, phEvent)?;
        let owned = ownership == ur_core::boundary::NativeOwnership::Owned;
        let native = crate::driver::CuEvent::from_raw(hNativeEvent as crate::driver::CUevent, owned);
        *phEvent = handle::into_handle(Event::from_native(context, native));
        Ok(())
    })
}
