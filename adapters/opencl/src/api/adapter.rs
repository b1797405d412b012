//! `urAdapter*`: the shared adapter object of `ur_core`.

use crate::DDI;
use std::ffi::{c_char, c_void};
use ur_core::adapter::AdapterSlot;
use ur_core::boundary::ffi_call;
use ur_core::*;

pub static ADAPTER: AdapterSlot = AdapterSlot::new(&DDI, UR_BACKEND_OPENCL, "OPENCL");

/// The adapter handle platforms report.
pub fn handle() -> ur_adapter_handle_t {
    std::sync::Arc::as_ptr(&ADAPTER.get_or_create()) as ur_adapter_handle_t
}

pub unsafe extern "C" fn urAdapterGet(
    num_entries: u32,
    ph_adapters: *mut ur_adapter_handle_t,
    p_num_adapters: *mut u32,
) -> ur_result_t {
    ffi_call(|| ADAPTER.get(num_entries, ph_adapters, p_num_adapters))
}

pub unsafe extern "C" fn urAdapterRetain(h: ur_adapter_handle_t) -> ur_result_t {
    ffi_call(|| ADAPTER.retain(h))
}

pub unsafe extern "C" fn urAdapterRelease(h: ur_adapter_handle_t) -> ur_result_t {
    ffi_call(|| ADAPTER.release(h))
}

pub unsafe extern "C" fn urAdapterGetInfo(
    h: ur_adapter_handle_t,
    prop: ur_adapter_info_t,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> ur_result_t {
    ffi_call(|| ADAPTER.get_info(h, prop, size, value, size_ret))
}

pub unsafe extern "C" fn urAdapterGetLastError(
    h: ur_adapter_handle_t,
    message: *mut *const c_char,
    error: *mut i32,
) -> ur_result_t {
    ffi_call(|| ADAPTER.get_last_error(h, message, error))
}

pub unsafe extern "C" fn urAdapterSetLoggerCallback(
    h: ur_adapter_handle_t,
    callback: ur_logger_callback_t,
    user_data: *mut c_void,
    level: ur_logger_level_t,
) -> ur_result_t {
    ffi_call(|| ADAPTER.set_logger_callback(h, callback, user_data, level))
}

pub unsafe extern "C" fn urAdapterSetLoggerCallbackLevel(h: ur_adapter_handle_t, level: ur_logger_level_t) -> ur_result_t {
    ffi_call(|| ADAPTER.set_logger_callback_level(h, level))
}
