//! urAdapterGet, urAdapterRetain/Release, urAdapterGetInfo,
//! urAdapterGetLastError and the logger callback.

use crate::cases::common::count_then_fill;
use crate::harness::*;
use crate::ur::*;
use crate::{check, check_eq, expect_result, expect_success, info_cases, ref_counting, ref_null_cases};
use core::ffi::{c_char, c_void};
use std::ffi::CStr;
use std::ptr::null_mut;
use ur_core::abi::*;

pub const CASES: &[Case] = &[
    Case::loader("urAdapterGet.count_then_fill", get_count_then_fill),
    Case::loader("urAdapterGet.fewer_entries", get_fewer_entries),
    Case::loader("urAdapterGet.invalid_size", get_invalid_size),
    Case::adapter("urAdapterGet.takes_a_reference", get_takes_reference),
    Case::adapter("urAdapterRetain.success", retain),
    Case::loader("urAdapterRetain.null_handle", retain_null),
    Case::adapter("urAdapterRelease.success", release),
    Case::loader("urAdapterRelease.null_handle", release_null),
    Case::adapter("urAdapterGetInfo.backend", info_backend),
    Case::adapter("urAdapterGetInfo.reference_count", info_reference_count),
    Case::adapter("urAdapterGetInfo.version", info_version),
    Case::adapter("urAdapterGetInfo.size_protocol", info_protocol),
    Case::loader("urAdapterGetInfo.null_handle", info_null),
    Case::adapter("urAdapterGetInfo.invalid_enumeration", info_bad_enum),
    Case::adapter("urAdapterGetLastError.success", last_error),
    Case::loader("urAdapterGetLastError.null_handle", last_error_null_handle),
    Case::adapter("urAdapterGetLastError.null_message", last_error_null_message),
    Case::adapter("urAdapterGetLastError.null_error", last_error_null_error),
    Case::adapter("urAdapterSetLoggerCallback.success", logger),
    Case::loader("urAdapterSetLoggerCallback.null_handle", logger_null_handle),
    Case::adapter("urAdapterSetLoggerCallback.null_callback", logger_null_callback),
    Case::adapter("urAdapterSetLoggerCallback.invalid_level", logger_bad_level),
    Case::adapter("urAdapterSetLoggerCallbackLevel.success", logger_level),
    Case::loader("urAdapterSetLoggerCallbackLevel.null_handle", logger_level_null),
    Case::adapter("urAdapterSetLoggerCallbackLevel.invalid_level", logger_level_bad),
];

/// A level past `UR_LOGGER_LEVEL_QUIET`, the last one.
const INVALID_LEVEL: ur_logger_level_t = ur_logger_level_t(UR_LOGGER_LEVEL_QUIET.0 + 1);

unsafe fn refs(api: &Api, adapter: ur_adapter_handle_t) -> Result<u32, Outcome> {
    Ok(api.adapter_info::<u32>(adapter, UR_ADAPTER_INFO_REFERENCE_COUNT)?)
}

/// Takes a new reference to every adapter.
unsafe fn get_all(api: &Api) -> Result<Vec<ur_adapter_handle_t>, Outcome> {
    count_then_fill("urAdapterGet", |n, adapters, count| api.urAdapterGet(n, adapters, count))
}

unsafe fn release_all(api: &Api, adapters: &[ur_adapter_handle_t]) -> CaseResult {
    ref_counting!(api, urAdapterRetain, urAdapterRelease).release_each(adapters)
}

unsafe fn get_count_then_fill(fx: &LoaderFx) -> CaseResult {
    let adapters = get_all(fx.api)?;
    let outcome = (|| -> CaseResult {
        check!(!adapters.is_empty(), "the loader reports no adapter");
        for &adapter in &adapters {
            check!(!adapter.is_null(), "a null adapter handle among {adapters:?}");
            // Repeated calls hand out references to the same adapters.
            check!(
                fx.topology.adapters.iter().any(|a| a.handle == adapter),
                "adapter {adapter:?} was not returned by the first urAdapterGet"
            );
        }
        Ok(())
    })();
    release_all(fx.api, &adapters)?;
    outcome
}

unsafe fn get_fewer_entries(fx: &LoaderFx) -> CaseResult {
    let api = fx.api;
    let mut out = [null_mut(), 0x1 as ur_adapter_handle_t];
    let mut count = 0u32;
    expect_success!(api.urAdapterGet(1, out.as_mut_ptr(), &mut count));
    let taken = out[0];
    let outcome = (|| -> CaseResult {
        check!(!taken.is_null(), "no adapter written");
        check_eq!(out[1], 0x1 as ur_adapter_handle_t);
        check_eq!(count as usize, fx.topology.adapters.len());
        Ok(())
    })();
    if !taken.is_null() {
        expect_success!(api.urAdapterRelease(taken));
    }
    outcome
}

unsafe fn get_invalid_size(fx: &LoaderFx) -> CaseResult {
    let mut adapter = null_mut();
    let mut count = 0u32;
    expect_result!(UR_RESULT_ERROR_INVALID_SIZE, fx.api.urAdapterGet(0, &mut adapter, &mut count));
    Ok(())
}

unsafe fn get_takes_reference(fx: &AdapterFx) -> CaseResult {
    let before = refs(fx.api, fx.adapter)?;
    let adapters = get_all(fx.api)?;
    let during = refs(fx.api, fx.adapter);
    release_all(fx.api, &adapters)?;
    check_eq!(during?, before + 1);
    check_eq!(refs(fx.api, fx.adapter)?, before);
    Ok(())
}

unsafe fn retain(fx: &AdapterFx) -> CaseResult {
    let before = refs(fx.api, fx.adapter)?;
    expect_success!(fx.api.urAdapterRetain(fx.adapter));
    let during = refs(fx.api, fx.adapter);
    expect_success!(fx.api.urAdapterRelease(fx.adapter));
    check_eq!(during?, before + 1);
    Ok(())
}

unsafe fn release(fx: &AdapterFx) -> CaseResult {
    expect_success!(fx.api.urAdapterRetain(fx.adapter));
    let before = refs(fx.api, fx.adapter)?;
    expect_success!(fx.api.urAdapterRelease(fx.adapter));
    check_eq!(refs(fx.api, fx.adapter)?, before - 1);
    Ok(())
}

ref_null_cases!(urAdapterRetain, urAdapterRelease => retain_null, release_null);

unsafe fn info_backend(fx: &AdapterFx) -> CaseResult {
    let backend = fx.api.adapter_info::<ur_backend_t>(fx.adapter, UR_ADAPTER_INFO_BACKEND)?;
    let known = [
        UR_BACKEND_LEVEL_ZERO,
        UR_BACKEND_OPENCL,
        UR_BACKEND_CUDA,
        UR_BACKEND_HIP,
        UR_BACKEND_NATIVE_CPU,
        UR_BACKEND_OFFLOAD,
    ];
    check!(known.contains(&backend), "backend {backend:?} is not a known ur_backend_t");
    Ok(())
}

unsafe fn info_reference_count(fx: &AdapterFx) -> CaseResult {
    check!(refs(fx.api, fx.adapter)? >= 1, "a live adapter reports no reference");
    Ok(())
}

unsafe fn info_version(fx: &AdapterFx) -> CaseResult {
    let version = fx.api.adapter_info::<u32>(fx.adapter, UR_ADAPTER_INFO_VERSION)?;
    check!(version >= 1, "adapter version {version}; versions start at 1");
    Ok(())
}

info_cases!(urAdapterGetInfo, AdapterFx, |fx| fx.adapter,
    props: [("BACKEND", UR_ADAPTER_INFO_BACKEND)],
    null: UR_ADAPTER_INFO_BACKEND,
    past_last: ur_adapter_info_t(UR_ADAPTER_INFO_VERSION.0 + 1));

unsafe fn last_error(fx: &AdapterFx) -> CaseResult {
    let mut message: *const c_char = null_const();
    let mut error = 0i32;
    expect_success!(fx.api.urAdapterGetLastError(fx.adapter, &mut message, &mut error));
    if !message.is_null() {
        // Must be a readable, null-terminated string owned by the adapter.
        let _ = CStr::from_ptr(message).to_bytes().len();
    }
    Ok(())
}

unsafe fn last_error_null_handle(fx: &LoaderFx) -> CaseResult {
    let mut message: *const c_char = null_const();
    let mut error = 0i32;
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_HANDLE,
        fx.api.urAdapterGetLastError(null_mut(), &mut message, &mut error)
    );
    Ok(())
}

unsafe fn last_error_null_message(fx: &AdapterFx) -> CaseResult {
    let mut error = 0i32;
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_POINTER,
        fx.api.urAdapterGetLastError(fx.adapter, null_mut(), &mut error)
    );
    Ok(())
}

unsafe fn last_error_null_error(fx: &AdapterFx) -> CaseResult {
    let mut message: *const c_char = null_const();
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_POINTER,
        fx.api.urAdapterGetLastError(fx.adapter, &mut message, null_mut())
    );
    Ok(())
}

/// Receives adapter log messages; keeps nothing (the adapter may call it
/// from any thread, at any time after registration).
unsafe extern "C" fn ignore_log(_level: ur_logger_level_t, _message: *const c_char, _user_data: *mut c_void) {}

unsafe fn logger(fx: &AdapterFx) -> CaseResult {
    expect_success!(fx.api.urAdapterSetLoggerCallback(fx.adapter, Some(ignore_log), null_mut(), UR_LOGGER_LEVEL_ERROR));
    // Back to silence, so later cases do not feed this callback.
    expect_success!(fx.api.urAdapterSetLoggerCallbackLevel(fx.adapter, UR_LOGGER_LEVEL_QUIET));
    Ok(())
}

unsafe fn logger_null_handle(fx: &LoaderFx) -> CaseResult {
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_HANDLE,
        fx.api.urAdapterSetLoggerCallback(null_mut(), Some(ignore_log), null_mut(), UR_LOGGER_LEVEL_QUIET)
    );
    Ok(())
}

unsafe fn logger_null_callback(fx: &AdapterFx) -> CaseResult {
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_POINTER,
        fx.api.urAdapterSetLoggerCallback(fx.adapter, None, null_mut(), UR_LOGGER_LEVEL_QUIET)
    );
    Ok(())
}

unsafe fn logger_bad_level(fx: &AdapterFx) -> CaseResult {
    expect_result!(
        UR_RESULT_ERROR_INVALID_ENUMERATION,
        fx.api.urAdapterSetLoggerCallback(fx.adapter, Some(ignore_log), null_mut(), INVALID_LEVEL)
    );
    Ok(())
}

unsafe fn logger_level(fx: &AdapterFx) -> CaseResult {
    expect_success!(fx.api.urAdapterSetLoggerCallbackLevel(fx.adapter, UR_LOGGER_LEVEL_WARN));
    expect_success!(fx.api.urAdapterSetLoggerCallbackLevel(fx.adapter, UR_LOGGER_LEVEL_QUIET));
    Ok(())
}

unsafe fn logger_level_null(fx: &LoaderFx) -> CaseResult {
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_HANDLE,
        fx.api.urAdapterSetLoggerCallbackLevel(null_mut(), UR_LOGGER_LEVEL_QUIET)
    );
    Ok(())
}

unsafe fn logger_level_bad(fx: &AdapterFx) -> CaseResult {
    expect_result!(
        UR_RESULT_ERROR_INVALID_ENUMERATION,
        fx.api.urAdapterSetLoggerCallbackLevel(fx.adapter, INVALID_LEVEL)
    );
    Ok(())
}
