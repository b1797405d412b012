//! `urPlatformGet`: zero platforms, found out honestly.

use crate::api::adapter::ADAPTER;
use crate::sys;
use std::sync::OnceLock;
use ur_core::abi::*;
use ur_core::boundary::{ffi_call, write_optional};
use ur_core::log;

/// How many Level Zero drivers the system has (0 without the loader).
fn driver_count() -> u32 {
    static COUNT: OnceLock<u32> = OnceLock::new();
    *COUNT.get_or_init(|| {
        let Some(ze) = sys::loader() else {
            log::info("libze_loader.so.1 not found: no Level Zero platforms");
            return 0;
        };
        // SAFETY: documented Level Zero calls with valid out pointers.
        unsafe {
            if (ze.ze_init)(0) != sys::ZE_RESULT_SUCCESS {
                log::info("zeInit failed: no Level Zero driver");
                return 0;
            }
            let mut count = 0u32;
            if (ze.ze_driver_get)(&mut count, std::ptr::null_mut()) != sys::ZE_RESULT_SUCCESS {
                return 0;
            }
            count
        }
    })
}

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
        let drivers = driver_count();
        if drivers > 0 {
            log::warning(&format!(
                "{drivers} Level Zero driver(s) found, but this adapter has no device support yet"
            ));
        }
        write_optional(pNumPlatforms, 0);
        Ok(())
    })
}
