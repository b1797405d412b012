//! `urAdapter*`: the shared adapter object of `ur_core` answers them; this
//! backend adds only what lives beside it (its platform, its workers).

use crate::core::platform::Platform;
use crate::DDI;
use std::ffi::{c_char, c_void};
use ur_core::adapter::AdapterSlot;
use ur_core::boundary::ffi_call;
use ur_core::handle;
use ur_core::*;

pub static ADAPTER: AdapterSlot = AdapterSlot::new(&DDI, UR_BACKEND_NATIVE_CPU, "NATIVE_CPU");

pub unsafe extern "C" fn urAdapterGet(
    NumEntries: u32,
    phAdapters: *mut ur_adapter_handle_t,
    pNumAdapters: *mut u32,
) -> ur_result_t {
    ffi_call(|| ADAPTER.get(NumEntries, phAdapters, pNumAdapters))
}

pub unsafe extern "C" fn urAdapterRetain(hAdapter: ur_adapter_handle_t) -> ur_result_t {
    ffi_call(|| ADAPTER.retain(hAdapter))
}

/// The last release also lets the platform go and joins the workers of
/// released queues, so that a loader may unload the library afterwards.
pub unsafe extern "C" fn urAdapterRelease(hAdapter: ur_adapter_handle_t) -> ur_result_t {
    ffi_call(|| {
        let last = handle::ref_count_of(ADAPTER.borrow(hAdapter)?) == 1;
        ADAPTER.release(hAdapter)?;
        if last {
            Platform::adapter_released();
        }
        Ok(())
    })
}

pub unsafe extern "C" fn urAdapterGetLastError(
    hAdapter: ur_adapter_handle_t,
    ppMessage: *mut *const c_char,
    pError: *mut i32,
) -> ur_result_t {
    ffi_call(|| ADAPTER.get_last_error(hAdapter, ppMessage, pError))
}

pub unsafe extern "C" fn urAdapterGetInfo(
    hAdapter: ur_adapter_handle_t,
    propName: ur_adapter_info_t,
    propSize: usize,
    pPropValue: *mut c_void,
    pPropSizeRet: *mut usize,
) -> ur_result_t {
    ffi_call(|| ADAPTER.get_info(hAdapter, propName, propSize, pPropValue, pPropSizeRet))
}

pub unsafe extern "C" fn urAdapterSetLoggerCallback(
    hAdapter: ur_adapter_handle_t,
    pfnLoggerCallback: ur_logger_callback_t,
    pUserData: *mut c_void,
    level: ur_logger_level_t,
) -> ur_result_t {
    ffi_call(|| ADAPTER.set_logger_callback(hAdapter, pfnLoggerCallback, pUserData, level))
}

pub unsafe extern "C" fn urAdapterSetLoggerCallbackLevel(
    hAdapter: ur_adapter_handle_t,
    level: ur_logger_level_t,
) -> ur_result_t {
    ffi_call(|| ADAPTER.set_logger_callback_level(hAdapter, level))
}
