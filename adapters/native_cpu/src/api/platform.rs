//! `urPlatform*`.

use super::{arc, obj, write_handles};
use crate::core::platform::Platform;
use std::ffi::{c_char, c_void, CStr};
use ur_core::adapter::Adapter;
use ur_core::boundary::{ffi_call, non_null, write_out};
use ur_core::info::InfoOut;
use ur_core::*;

pub unsafe extern "C" fn urPlatformGet(
    hAdapter: ur_adapter_handle_t,
    NumEntries: u32,
    phPlatforms: *mut ur_platform_handle_t,
    pNumPlatforms: *mut u32,
) -> ur_result_t {
    ffi_call(|| {
        let adapter = arc::<Adapter>(hAdapter)?;
        if NumEntries == 0 && !phPlatforms.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        if phPlatforms.is_null() && pNumPlatforms.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        write_handles(&[Platform::of_adapter(&adapter).handle()], NumEntries, phPlatforms, pNumPlatforms);
        Ok(())
    })
}

pub unsafe extern "C" fn urPlatformGetInfo(
    hPlatform: ur_platform_handle_t,
    propName: ur_platform_info_t,
    propSize: usize,
    pPropValue: *mut c_void,
    pPropSizeRet: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let platform = obj::<Platform>(hPlatform)?;
        if propName.0 > UR_PLATFORM_INFO_ADAPTER.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let out = InfoOut::new(propSize, pPropValue, pPropSizeRet)?;
        match propName {
            UR_PLATFORM_INFO_NAME => out.string(Platform::NAME),
            UR_PLATFORM_INFO_VENDOR_NAME => out.string(Platform::VENDOR),
            UR_PLATFORM_INFO_VERSION => out.string(&Platform::version()),
            UR_PLATFORM_INFO_EXTENSIONS => out.string(Platform::EXTENSIONS),
            UR_PLATFORM_INFO_PROFILE => out.string(Platform::PROFILE),
            UR_PLATFORM_INFO_BACKEND => out.value(UR_BACKEND_NATIVE_CPU),
            UR_PLATFORM_INFO_ADAPTER => out.value(platform.adapter_handle()),
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    })
}

pub unsafe extern "C" fn urPlatformGetApiVersion(
    hPlatform: ur_platform_handle_t,
    pVersion: *mut ur_api_version_t,
) -> ur_result_t {
    ffi_call(|| {
        obj::<Platform>(hPlatform)?;
        write_out(pVersion, UR_API_VERSION_IMPLEMENTED)
    })
}

/// A host platform wraps no driver object: there is no native handle.
pub unsafe extern "C" fn urPlatformGetNativeHandle(
    hPlatform: ur_platform_handle_t,
    phNativePlatform: *mut ur_native_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        obj::<Platform>(hPlatform)?;
        non_null(phNativePlatform)?;
        Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
    })
}

pub unsafe extern "C" fn urPlatformGetBackendOption(
    hPlatform: ur_platform_handle_t,
    pFrontendOption: *const c_char,
    ppPlatformOption: *mut *const c_char,
) -> ur_result_t {
    ffi_call(|| {
        obj::<Platform>(hPlatform)?;
        non_null(pFrontendOption)?;
        non_null(ppPlatformOption)?;
        let frontend = CStr::from_ptr(pFrontendOption).to_str().map_err(|_| UR_RESULT_ERROR_INVALID_VALUE)?;
        let option = Platform::backend_option(frontend).ok_or(UR_RESULT_ERROR_INVALID_VALUE)?;
        write_out(ppPlatformOption, option.as_ptr())
    })
}
