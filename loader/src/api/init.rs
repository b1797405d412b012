//! `urLoaderInit` and `urLoaderTearDown`.

use crate::api::config::LoaderConfig;
use crate::registry;
use ur_core::abi::*;
use ur_core::boundary::ffi_call;
use ur_core::handle;

#[no_mangle]
pub unsafe extern "C" fn urLoaderInit(
    device_flags: ur_device_init_flags_t,
    hLoaderConfig: ur_loader_config_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        if device_flags & UR_DEVICE_INIT_FLAGS_MASK != 0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        // The config is optional; when given it must be one of ours. Every
        // layer it may enable is one whose checks this loader always makes.
        if !hLoaderConfig.is_null() {
            handle::borrow::<LoaderConfig>(hLoaderConfig, &crate::api::config::LOADER_DDI)?;
        }
        registry::init()
    })
}

#[no_mangle]
pub unsafe extern "C" fn urLoaderTearDown() -> ur_result_t {
    ffi_call(registry::tear_down)
}
