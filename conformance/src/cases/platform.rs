//! urPlatformGet, urPlatformGetInfo, urPlatformGetApiVersion,
//! urPlatformGetNativeHandle and urPlatformGetBackendOption.

use crate::cases::common::count_then_fill;
use crate::cases::native::native_platform;
use crate::harness::*;
use crate::ur::*;
use crate::{check, check_eq, expect_result, expect_success, info, info_cases, native_handle_cases, skip};
use core::ffi::c_char;
use std::ffi::CStr;
use std::ptr::null_mut;
use ur_core::abi::*;

pub const CASES: &[Case] = &[
    Case::adapter("urPlatformGet.count_then_fill", get_count_then_fill),
    Case::adapter("urPlatformGet.fewer_entries", get_fewer_entries),
    Case::loader("urPlatformGet.null_handle", get_null_handle),
    Case::adapter("urPlatformGet.invalid_size", get_invalid_size),
    Case::adapter("urPlatformGet.no_output", get_no_output),
    Case::platform("urPlatformGetInfo.strings", info_strings),
    Case::platform("urPlatformGetInfo.backend", info_backend),
    Case::platform("urPlatformGetInfo.adapter", info_adapter),
    Case::platform("urPlatformGetInfo.size_protocol", info_protocol),
    Case::loader("urPlatformGetInfo.null_handle", info_null),
    Case::platform("urPlatformGetInfo.invalid_enumeration", info_bad_enum),
    Case::loader("urPlatformGetInfo.foreign_handle", info_foreign),
    Case::platform("urPlatformGetApiVersion.success", api_version),
    Case::loader("urPlatformGetApiVersion.null_handle", api_version_null_handle),
    Case::platform("urPlatformGetApiVersion.null_pointer", api_version_null_pointer),
    Case::platform("urPlatformGetNativeHandle.success", native_handle),
    Case::loader("urPlatformGetNativeHandle.null_handle", native_handle_null_handle),
    Case::platform("urPlatformGetNativeHandle.null_pointer", native_handle_null_pointer),
    Case::platform("urPlatformGetBackendOption.optimisation_levels", backend_option),
    Case::platform("urPlatformGetBackendOption.unknown_option", backend_option_unknown),
    Case::loader("urPlatformGetBackendOption.null_handle", backend_option_null_handle),
    Case::platform("urPlatformGetBackendOption.null_pointers", backend_option_null_pointers),
];

unsafe fn platforms_of(api: &Api, adapter: ur_adapter_handle_t) -> Result<Vec<ur_platform_handle_t>, Outcome> {
    count_then_fill("urPlatformGet", |n, platforms, count| api.urPlatformGet(adapter, n, platforms, count))
}

unsafe fn get_count_then_fill(fx: &AdapterFx) -> CaseResult {
    let first = platforms_of(fx.api, fx.adapter)?;
    for &platform in &first {
        check!(!platform.is_null(), "a null platform among {first:?}");
    }
    // The reference promises identical handles, in the same order.
    let second = platforms_of(fx.api, fx.adapter)?;
    check_eq!(second, first);
    Ok(())
}

unsafe fn get_fewer_entries(fx: &AdapterFx) -> CaseResult {
    let all = platforms_of(fx.api, fx.adapter)?;
    if all.is_empty() {
        skip!("the adapter reports no platform (no driver or device for it here)");
    }
    let mut out = [null_mut(), 0x1 as ur_platform_handle_t];
    let mut count = 0u32;
    expect_success!(fx.api.urPlatformGet(fx.adapter, 1, out.as_mut_ptr(), &mut count));
    check_eq!(out[0], all[0]);
    check_eq!(out[1], 0x1 as ur_platform_handle_t);
    check_eq!(count as usize, all.len());
    Ok(())
}

unsafe fn get_null_handle(fx: &LoaderFx) -> CaseResult {
    let mut count = 0u32;
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_HANDLE, fx.api.urPlatformGet(null_mut(), 0, null_mut(), &mut count));
    Ok(())
}

unsafe fn get_invalid_size(fx: &AdapterFx) -> CaseResult {
    let mut platform = null_mut();
    expect_result!(UR_RESULT_ERROR_INVALID_SIZE, fx.api.urPlatformGet(fx.adapter, 0, &mut platform, null_mut()));
    Ok(())
}

unsafe fn get_no_output(fx: &AdapterFx) -> CaseResult {
    expect_result!(UR_RESULT_ERROR_INVALID_VALUE, fx.api.urPlatformGet(fx.adapter, 0, null_mut(), null_mut()));
    Ok(())
}

unsafe fn info_strings(fx: &PlatformFx) -> CaseResult {
    for (prop, may_be_empty) in [
        (UR_PLATFORM_INFO_NAME, false),
        (UR_PLATFORM_INFO_VENDOR_NAME, false),
        (UR_PLATFORM_INFO_VERSION, false),
        (UR_PLATFORM_INFO_EXTENSIONS, true),
        (UR_PLATFORM_INFO_PROFILE, false),
    ] {
        // `info_string` also checks that the size covers exactly one
        // null-terminated string.
        let text = fx.api.platform_info_string(fx.platform, prop)?;
        check!(may_be_empty || !text.is_empty(), "{prop:?} is empty");
    }
    Ok(())
}

unsafe fn info_backend(fx: &PlatformFx) -> CaseResult {
    let backend = fx.api.platform_info::<ur_backend_t>(fx.platform, UR_PLATFORM_INFO_BACKEND)?;
    let adapter_backend = fx.api.adapter_info::<ur_backend_t>(fx.adapter, UR_ADAPTER_INFO_BACKEND)?;
    check_eq!(backend, adapter_backend);
    Ok(())
}

unsafe fn info_adapter(fx: &PlatformFx) -> CaseResult {
    let adapter = fx.api.platform_info::<ur_adapter_handle_t>(fx.platform, UR_PLATFORM_INFO_ADAPTER)?;
    check_eq!(adapter, fx.adapter);
    Ok(())
}

info_cases!(urPlatformGetInfo, PlatformFx, |fx| fx.platform,
    props: [("NAME", UR_PLATFORM_INFO_NAME), ("BACKEND", UR_PLATFORM_INFO_BACKEND)],
    null: UR_PLATFORM_INFO_NAME,
    past_last: ur_platform_info_t(UR_PLATFORM_INFO_ADAPTER.0 + 1));

unsafe fn api_version(fx: &PlatformFx) -> CaseResult {
    let mut version = ur_api_version_t(0);
    expect_success!(fx.api.urPlatformGetApiVersion(fx.platform, &mut version));
    let (major, minor) = (version.0 >> 16, version.0 & 0xffff);
    check!((major, minor) == (0, 12), "API version {major}.{minor}, expected 0.12");
    Ok(())
}

unsafe fn api_version_null_handle(fx: &LoaderFx) -> CaseResult {
    let mut version = ur_api_version_t(0);
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_HANDLE, fx.api.urPlatformGetApiVersion(null_mut(), &mut version));
    Ok(())
}

unsafe fn api_version_null_pointer(fx: &PlatformFx) -> CaseResult {
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_POINTER, fx.api.urPlatformGetApiVersion(fx.platform, null_mut()));
    Ok(())
}

native_handle_cases!(urPlatformGetNativeHandle, PlatformFx, |fx| fx.platform,
    probe: native_platform(fx.api, fx.platform));

unsafe fn backend_option(fx: &PlatformFx) -> CaseResult {
    for option in [c"-O0", c"-O1", c"-O2", c"-O3"] {
        let mut answer: *const c_char = null_const();
        expect_success!(fx.api.urPlatformGetBackendOption(fx.platform, option.as_ptr(), &mut answer));
        check!(!answer.is_null(), "no backend option returned for {option:?}");
        // Must be a readable null-terminated string.
        let _ = CStr::from_ptr(answer).to_bytes().len();
    }
    Ok(())
}

unsafe fn backend_option_unknown(fx: &PlatformFx) -> CaseResult {
    let mut answer: *const c_char = null_const();
    expect_result!(
        UR_RESULT_ERROR_INVALID_VALUE,
        fx.api.urPlatformGetBackendOption(fx.platform, c"-fno-such-frontend-option".as_ptr(), &mut answer)
    );
    Ok(())
}

unsafe fn backend_option_null_handle(fx: &LoaderFx) -> CaseResult {
    let mut answer: *const c_char = null_const();
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_HANDLE,
        fx.api.urPlatformGetBackendOption(null_mut(), c"-O2".as_ptr(), &mut answer)
    );
    Ok(())
}

unsafe fn backend_option_null_pointers(fx: &PlatformFx) -> CaseResult {
    let mut answer: *const c_char = null_const();
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_POINTER,
        fx.api.urPlatformGetBackendOption(fx.platform, null_const(), &mut answer)
    );
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_POINTER,
        fx.api.urPlatformGetBackendOption(fx.platform, c"-O2".as_ptr(), null_mut())
    );
    Ok(())
}

unsafe fn info_foreign(fx: &LoaderFx) -> CaseResult {
    let info = info!(fx.api, urPlatformGetInfo);
    info.refuses(foreign_handle(), "a handle no adapter made", UR_PLATFORM_INFO_NAME, UR_RESULT_ERROR_INVALID_PLATFORM)
}
