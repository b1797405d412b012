//! `urPlatform*`: one platform when the driver reports a GPU, none otherwise.

use super::borrow;
use crate::api::adapter::ADAPTER;
use crate::core::platform::Platform;
use ur_core::boundary::{ffi_call, write_optional, write_out};
use ur_core::info::InfoOut;
use ur_core::*;

pub unsafe extern "C" fn urPlatformGet(
    hAdapter: ur_adapter_handle_t,
    NumEntries: u32,
    phPlatforms: *mut ur_platform_handle_t,
    pNumPlatforms: *mut u32,
) -> ur_result_t {
    ffi_call(|| {
        ADAPTER.borrow(hAdapter)?;
        if NumEntries == 0 && !phPlatforms.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        if phPlatforms.is_null() && pNumPlatforms.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        let platform = Platform::get();
        if let (Some(p), false) = (platform, phPlatforms.is_null()) {
            *phPlatforms = p.handle();
        }
        write_optional(pNumPlatforms, platform.is_some() as u32);
        Ok(())
    })
}

pub unsafe extern "C" fn urPlatformGetInfo(
    hPlatform: ur_platform_handle_t,
    propName: ur_platform_info_t,
    propSize: usize,
    pPropValue: *mut core::ffi::c_void,
    pPropSizeRet: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let platform = borrow::<Platform>(hPlatform)?;
        if propName.0 > UR_PLATFORM_INFO_ADAPTER.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let out = InfoOut::new(propSize, pPropValue, pPropSizeRet)?;
        match propName {
            UR_PLATFORM_INFO_NAME => out.string(Platform::NAME),
            UR_PLATFORM_INFO_VENDOR_NAME => out.string(Platform::VENDOR),
            UR_PLATFORM_INFO_VERSION => out.string(&platform.version()),
            UR_PLATFORM_INFO_EXTENSIONS => out.string(""),
            UR_PLATFORM_INFO_PROFILE => out.string(Platform::PROFILE),
            UR_PLATFORM_INFO_BACKEND => out.value(UR_BACKEND_CUDA),
            UR_PLATFORM_INFO_ADAPTER => {
                // The value only: the caller holds the adapter while it uses
                // the platform.
                out.value(std::sync::Arc::as_ptr(&ADAPTER.get_or_create()) as ur_adapter_handle_t)
            }
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    })
}

pub unsafe extern "C" fn urPlatformGetApiVersion(
    hPlatform: ur_platform_handle_t,
    pVersion: *mut ur_api_version_t,
) -> ur_result_t {
    ffi_call(|| {
        borrow::<Platform>(hPlatform)?;
        write_out(pVersion, UR_API_VERSION_IMPLEMENTED)
    })
}

pub unsafe extern "C" fn urPlatformGetBackendOption(
    hPlatform: ur_platform_handle_t,
    pFrontendOption: *const core::ffi::c_char,
    ppPlatformOption: *mut *const core::ffi::c_char,
) -> ur_result_t {
    ffi_call(|| {
        borrow::<Platform>(hPlatform)?;
        let option = super::str_arg(pFrontendOption)?;
        if ppPlatformOption.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        // The driver JIT takes PTX as it is: optimisation levels and
        // precision hints from the frontend have no backend spelling.
        let mapped: &'static std::ffi::CStr = match option {
            "-O0"
            | "-O1"
            | "-O2"
            | "-O3"
            | "-ftarget-compile-fast"
            | "-foffload-fp32-prec-div"
            | "-foffload-fp32-prec-sqrt" => c"",
            _ => return Err(UR_RESULT_ERROR_INVALID_VALUE),
        };
        *ppPlatformOption = mapped.as_ptr();
        Ok(())
    })
}

pub unsafe extern "C" fn urPlatformGetNativeHandle(
    hPlatform: ur_platform_handle_t,
    phNativePlatform: *mut ur_native_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        borrow::<Platform>(hPlatform)?;
        if phNativePlatform.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        // The CUDA driver has no platform object to hand out.
        Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
    })
}
