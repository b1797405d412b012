//! `urAdapter*`.

use super::obj;
use crate::core::adapter::Adapter;
use std::ffi::{c_char, c_void};
use ur_core::boundary::{ffi_call, write_out};
use ur_core::info::InfoOut;
use ur_core::*;

/// The adapter's own version (`UR_ADAPTER_INFO_VERSION`): 1 until a second
/// generation of this adapter has to be told apart.
const ADAPTER_VERSION: u32 = 1;

pub unsafe extern "C" fn urAdapterGet(
    NumEntries: u32,
    phAdapters: *mut ur_adapter_handle_t,
    pNumAdapters: *mut u32,
) -> ur_result_t {
    ffi_call(|| {
        log::init("NATIVE_CPU");
        if NumEntries == 0 && !phAdapters.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        if !phAdapters.is_null() {
            // Only a handle handed out takes a reference.
            let adapter = Adapter::acquire();
            phAdapters.write(std::sync::Arc::as_ptr(&adapter) as ur_adapter_handle_t);
        }
        if !pNumAdapters.is_null() {
            pNumAdapters.write(1);
        }
        Ok(())
    })
}

pub unsafe extern "C" fn urAdapterRetain(hAdapter: ur_adapter_handle_t) -> ur_result_t {
    ffi_call(|| obj::<Adapter>(hAdapter)?.retain())
}

pub unsafe extern "C" fn urAdapterRelease(hAdapter: ur_adapter_handle_t) -> ur_result_t {
    ffi_call(|| obj::<Adapter>(hAdapter)?.release())
}

pub unsafe extern "C" fn urAdapterGetLastError(
    hAdapter: ur_adapter_handle_t,
    ppMessage: *mut *const c_char,
    pError: *mut i32,
) -> ur_result_t {
    ffi_call(|| {
        obj::<Adapter>(hAdapter)?;
        if ppMessage.is_null() || pError.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        // No entry point of this adapter returns ADAPTER_SPECIFIC: there is
        // no driver error to report.
        write_out(ppMessage, c"".as_ptr())?;
        write_out(pError, 0)
    })
}

pub unsafe extern "C" fn urAdapterGetInfo(
    hAdapter: ur_adapter_handle_t,
    propName: ur_adapter_info_t,
    propSize: usize,
    pPropValue: *mut c_void,
    pPropSizeRet: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let adapter = obj::<Adapter>(hAdapter)?;
        if propName.0 > UR_ADAPTER_INFO_VERSION.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let out = InfoOut::new(propSize, pPropValue, pPropSizeRet)?;
        match propName {
            UR_ADAPTER_INFO_BACKEND => out.value(UR_BACKEND_NATIVE_CPU),
            UR_ADAPTER_INFO_REFERENCE_COUNT => out.value(adapter.ref_count()),
            UR_ADAPTER_INFO_VERSION => out.value(ADAPTER_VERSION),
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    })
}

pub unsafe extern "C" fn urAdapterSetLoggerCallback(
    hAdapter: ur_adapter_handle_t,
    pfnLoggerCallback: ur_logger_callback_t,
    pUserData: *mut c_void,
    level: ur_logger_level_t,
) -> ur_result_t {
    ffi_call(|| {
        let adapter = obj::<Adapter>(hAdapter)?;
        if pfnLoggerCallback.is_none() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        if level.0 > UR_LOGGER_LEVEL_QUIET.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        adapter.set_logger(pfnLoggerCallback, pUserData, level);
        Ok(())
    })
}

pub unsafe extern "C" fn urAdapterSetLoggerCallbackLevel(
    hAdapter: ur_adapter_handle_t,
    level: ur_logger_level_t,
) -> ur_result_t {
    ffi_call(|| {
        let adapter = obj::<Adapter>(hAdapter)?;
        if level.0 > UR_LOGGER_LEVEL_QUIET.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        adapter.set_logger_level(level);
        Ok(())
    })
}
