//! `urPlatform*`.

use crate::core::platform::{platforms, Platform};
use std::ffi::{c_char, c_void, CStr};
use ur_core::boundary::{ffi_call, write_optional, write_out};
use ur_core::info::InfoOut;
use ur_core::*;

pub unsafe extern "C" fn urPlatformGet(
    h_adapter: ur_adapter_handle_t,
    num_entries: u32,
    ph_platforms: *mut ur_platform_handle_t,
    p_num_platforms: *mut u32,
) -> ur_result_t {
    ffi_call(|| {
        super::adapter::ADAPTER.borrow(h_adapter)?;
        if num_entries == 0 && !ph_platforms.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        if ph_platforms.is_null() && p_num_platforms.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        let all = platforms();
        if !ph_platforms.is_null() {
            for (i, p) in all.iter().take(num_entries as usize).enumerate() {
                *ph_platforms.add(i) = p.handle();
            }
        }
        write_optional(p_num_platforms, all.len() as u32);
        Ok(())
    })
}

pub unsafe extern "C" fn urPlatformGetInfo(
    h: ur_platform_handle_t,
    prop: ur_platform_info_t,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let p = Platform::from_handle(h)?;
        if prop.0 > UR_PLATFORM_INFO_ADAPTER.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let out = InfoOut::new(size, value, size_ret)?;
        match prop {
            UR_PLATFORM_INFO_NAME => out.string(&p.name),
            UR_PLATFORM_INFO_VENDOR_NAME => out.string(&p.vendor),
            UR_PLATFORM_INFO_VERSION => out.string(&p.version),
            UR_PLATFORM_INFO_EXTENSIONS => out.string(&p.extensions),
            UR_PLATFORM_INFO_PROFILE => out.string(&p.profile),
            UR_PLATFORM_INFO_BACKEND => out.value(UR_BACKEND_OPENCL),
            UR_PLATFORM_INFO_ADAPTER => out.value(super::adapter::handle()),
            _ => Err(UR_RESULT_ERROR_INVALID_ENUMERATION),
        }
    })
}

pub unsafe extern "C" fn urPlatformGetApiVersion(h: ur_platform_handle_t, p_version: *mut ur_api_version_t) -> ur_result_t {
    ffi_call(|| {
        Platform::from_handle(h)?;
        write_out(p_version, UR_API_VERSION_IMPLEMENTED)
    })
}

pub unsafe extern "C" fn urPlatformGetNativeHandle(
    h: ur_platform_handle_t,
    ph_native: *mut ur_native_handle_t,
) -> ur_result_t {
    ffi_call(|| write_out(ph_native, Platform::from_handle(h)?.id as ur_native_handle_t))
}

/// The OpenCL compiler option for a SYCL frontend option.
fn backend_option(frontend: &CStr) -> Option<&'static CStr> {
    Some(match frontend.to_bytes() {
        b"-O0" => c"-cl-opt-disable",
        // Optimisation is OpenCL's default.
        b"-O1" | b"-O2" | b"-O3" => c"",
        b"-ftarget-compile-fast" => c"",
        b"-foffload-fp32-prec-div" | b"-foffload-fp32-prec-sqrt" => c"-cl-fp32-correctly-rounded-divide-sqrt",
        _ => return None,
    })
}

pub unsafe extern "C" fn urPlatformGetBackendOption(
    h: ur_platform_handle_t,
    p_frontend_option: *const c_char,
    pp_platform_option: *mut *const c_char,
) -> ur_result_t {
    ffi_call(|| {
        Platform::from_handle(h)?;
        if p_frontend_option.is_null() || pp_platform_option.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        let option = backend_option(CStr::from_ptr(p_frontend_option)).ok_or(UR_RESULT_ERROR_INVALID_VALUE)?;
        *pp_platform_option = option.as_ptr();
        Ok(())
    })
}

/// An OpenCL platform id gives back the adapter's platform for it; an id
/// the adapter did not find is `INVALID_VALUE` (spec/platform.md). Platform
/// ids are not reference counted, so ownership changes nothing.
pub unsafe extern "C" fn urPlatformCreateWithNativeHandle(
    h_native: ur_native_handle_t,
    h_adapter: ur_adapter_handle_t,
    p_properties: *const ur_platform_native_properties_t,
    ph_platform: *mut ur_platform_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        super::adapter::ADAPTER.borrow(h_adapter)?;
        ur_core::boundary::native_args(h_native, false, p_properties, ph_platform)?;
        let platform = crate::core::platform::platform_by_id(h_native as cl3::ext::cl_platform_id)
            .ok_or(UR_RESULT_ERROR_INVALID_VALUE)?;
        *ph_platform = platform.handle();
        Ok(())
    })
}
