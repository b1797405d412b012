//! `urPlatform*`.

use super::{obj, write_handles};
use crate::abi::*;
use crate::device::{Platform, RawPlatform};
use crate::adapter::Adapter;
use crate::boundary::{ffi_call, native_args, non_null, write_out};
use crate::hal::{Backend};
use crate::handle;
use crate::UrResult;
use core::ffi::{c_char, CStr};
use std::sync::Arc;

pub(super) unsafe extern "C" fn get<B: Backend>(
    adapter: ur_adapter_handle_t,
    entries: u32,
    out: *mut ur_platform_handle_t,
    num: *mut u32,
) -> ur_result_t {
    ffi_call(|| {
        let adapter = handle::clone_arc::<Adapter>(adapter, B::ddi())?;
        if entries == 0 && !out.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        if out.is_null() && num.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        write_handles(&B::RawPlatform::all(&adapter)?, entries, out, num);
        Ok(())
    })
}

super::info_entry!(Platform<B>, ur_platform_handle_t, ur_platform_info_t, UR_PLATFORM_INFO_ADAPTER, |platform, prop, out| {
    match prop {
        UR_PLATFORM_INFO_BACKEND => out.value(B::slot().backend()),
        _ => platform.info(prop, out),
    }
});

super::native_handle_entry!(Platform<B>, ur_platform_handle_t);

pub(super) unsafe extern "C" fn create_with_native_handle<B: Backend>(
    native: ur_native_handle_t,
    adapter: ur_adapter_handle_t,
    properties: *const ur_platform_native_properties_t,
    out: *mut ur_platform_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let adapter = handle::clone_arc::<Adapter>(adapter, B::ddi())?;
        native_args(native, false, properties, out)?;
        write_out(out, platform_of_native::<B>(native, &adapter)?)
    })
}

/// The adapter's platform whose native handle is `native`: platforms are
/// the adapter's own and never made anew, so a native handle can only name
/// one of them (`INVALID_VALUE` when it names none). A backend without
/// native platform handles refuses, as `urPlatformGetNativeHandle` does.
fn platform_of_native<B: Backend>(native: ur_native_handle_t, adapter: &Arc<Adapter>) -> UrResult<ur_platform_handle_t> {
    for h in B::RawPlatform::all(adapter)? {
        // SAFETY: the adapter's own live platform handle.
        let platform = unsafe { obj::<B, Platform<B>>(h)? };
        if B::RawPlatform::native_handle(platform)? == native {
            return Ok(h);
        }
    }
    Err(UR_RESULT_ERROR_INVALID_VALUE)
}

pub(super) unsafe extern "C" fn get_api_version<B: Backend>(h: ur_platform_handle_t, out: *mut ur_api_version_t) -> ur_result_t {
    ffi_call(|| {
        obj::<B, Platform<B>>(h)?;
        write_out(out, UR_API_VERSION_IMPLEMENTED)
    })
}

/// A frontend option the platform has no spelling for is `INVALID_VALUE`.
pub(super) unsafe extern "C" fn get_backend_option<B: Backend>(
    h: ur_platform_handle_t,
    frontend: *const c_char,
    out: *mut *const c_char,
) -> ur_result_t {
    ffi_call(|| {
        let platform = obj::<B, Platform<B>>(h)?;
        non_null(frontend)?;
        non_null(out)?;
        let frontend = CStr::from_ptr(frontend).to_str().map_err(|_| UR_RESULT_ERROR_INVALID_VALUE)?;
        let option = platform.backend_option(frontend).ok_or(UR_RESULT_ERROR_INVALID_VALUE)?;
        write_out(out, option.as_ptr())
    })
}
