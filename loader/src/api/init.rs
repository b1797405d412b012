//! `urLoaderInit` and `urLoaderTearDown`.

use crate::api::config::LoaderConfig;
use crate::layers::Arg;
use crate::registry;
use ur_core::abi::*;
use ur_core::boundary::ffi_call;
use ur_core::handle;

/// `urLoaderInit`, traced once the layers it switches on are on (a call
/// before it cannot be: the layers are chosen by this call).
#[no_mangle]
pub unsafe extern "C" fn urLoaderInit(
    device_flags: ur_device_init_flags_t,
    hLoaderConfig: ur_loader_config_handle_t,
) -> ur_result_t {
    let start = std::time::Instant::now();
    let r = init(device_flags, hLoaderConfig);
    if crate::layers::on() {
        let args = [
            Arg { name: "device_flags", ty: "ur_device_init_flags_t", val: &device_flags },
            Arg { name: "hLoaderConfig", ty: "ur_loader_config_handle_t", val: &hLoaderConfig },
        ];
        crate::layers::traced("urLoaderInit", &args, r, start.elapsed());
    }
    r
}

unsafe fn init(device_flags: ur_device_init_flags_t, hLoaderConfig: ur_loader_config_handle_t) -> ur_result_t {
    ffi_call(|| {
        if device_flags & UR_DEVICE_INIT_FLAGS_MASK != 0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        // The config is optional; when given it must be one of ours.
        let mut layers = Vec::new();
        if !hLoaderConfig.is_null() {
            layers = handle::borrow::<LoaderConfig>(hLoaderConfig, &crate::api::config::LOADER_DDI)?.enabled_layers();
        }
        registry::init()?;
        crate::layers::enable(&layers);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn urLoaderTearDown() -> ur_result_t {
    if crate::layers::on() {
        return crate::layers::call("urLoaderTearDown", &[], &mut || tear_down());
    }
    tear_down()
}

fn tear_down() -> ur_result_t {
    ffi_call(|| {
        registry::tear_down()?;
        // The leak report comes with the tear-down that unloads the adapters.
        if registry::current().is_err() {
            crate::layers::torn_down();
        }
        Ok(())
    })
}
