//! `urAdapter*`, served by the shared adapter object.

use crate::DDI;
use ur_core::abi::*;
use ur_core::adapter::AdapterSlot;
use ur_core::boundary::ffi_call;

pub static ADAPTER: AdapterSlot = AdapterSlot::new(&DDI, UR_BACKEND_CUDA, "CUDA");

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

pub unsafe extern "C" fn urAdapterRelease(hAdapter: ur_adapter_handle_t) -> ur_result_t {
    ffi_call(|| ADAPTER.release(hAdapter))
}

pub unsafe extern "C" fn urAdapterGetInfo(
    hAdapter: ur_adapter_handle_t,
    propName: ur_adapter_info_t,
    propSize: usize,
    pPropValue: *mut core::ffi::c_void,
    pPropSizeRet: *mut usize,
) -> ur_result_t {
    ffi_call(|| ADAPTER.get_info(hAdapter, propName, propSize, pPropValue, pPropSizeRet))
}

pub unsafe extern "C" fn urAdapterGetLastError(
    hAdapter: ur_adapter_handle_t,
    ppMessage: *mut *const core::ffi::c_char,
    pError: *mut i32,
) -> ur_result_t {
    ffi_call(|| ADAPTER.get_last_error(hAdapter, ppMessage, pError))
}

pub unsafe extern "C" fn urAdapterSetLoggerCallback(
    hAdapter: ur_adapter_handle_t,
    pfnLoggerCallback: ur_logger_callback_t,
    pUserData: *mut core::ffi::c_void,
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
