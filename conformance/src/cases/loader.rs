//! urLoaderInit, urLoaderTearDown and the loader config object.

use crate::cases::common::reserved_flags;
use crate::harness::*;
use crate::ur::*;
use crate::{check, check_eq, expect_result, expect_success, info, ref_counting, ref_null_cases, skip};
use core::ffi::{c_char, c_void};
use std::ptr::null_mut;
use ur_core::abi::*;

pub const CASES: &[Case] = &[
    Case::fresh_process("urLoaderInit.required_before_other_calls", init_required),
    Case::fresh_process("urLoaderInit.invalid_flags", init_invalid_flags),
    Case::fresh_process("urLoaderInit.with_config", init_with_config),
    Case::loader("urLoaderInit.repeated", init_repeated),
    Case::fresh_process("urLoaderTearDown.after_init", teardown_after_init),
    Case::loader("urLoaderConfigCreate.success", config_create),
    Case::loader("urLoaderConfigCreate.null_pointer", config_create_null),
    Case::loader("urLoaderConfigRetain.success", config_retain),
    Case::loader("urLoaderConfigRetain.null_handle", config_retain_null),
    Case::loader("urLoaderConfigRelease.success", config_release),
    Case::loader("urLoaderConfigRelease.null_handle", config_release_null),
    Case::loader("urLoaderConfigGetInfo.available_layers", config_info_layers),
    Case::loader("urLoaderConfigGetInfo.size_protocol", config_info_protocol),
    Case::loader("urLoaderConfigGetInfo.null_handle", config_info_null),
    Case::loader("urLoaderConfigGetInfo.invalid_enumeration", config_info_bad_enum),
    Case::loader("urLoaderConfigEnableLayer.available_layers", enable_available_layers),
    Case::loader("urLoaderConfigEnableLayer.unknown_layer", enable_unknown_layer),
    Case::loader("urLoaderConfigEnableLayer.null_handle", enable_layer_null_handle),
    Case::loader("urLoaderConfigEnableLayer.null_name", enable_layer_null_name),
    Case::loader("urLoaderConfigSetCodeLocationCallback.success", code_location),
    Case::loader("urLoaderConfigSetCodeLocationCallback.null_handle", code_location_null_handle),
    Case::loader("urLoaderConfigSetCodeLocationCallback.null_callback", code_location_null_callback),
    Case::loader("urLoaderConfigSetMockingEnabled.disable", mocking_disable),
    Case::loader("urLoaderConfigSetMockingEnabled.null_handle", mocking_null_handle),
];

/// A flag above every `ur_device_init_flag_t`.
const INVALID_INIT_FLAG: ur_device_init_flags_t = reserved_flags(UR_DEVICE_INIT_FLAGS_MASK, 1 << 5);

/// Counts adapters, taking and dropping references to them.
unsafe fn adapter_count(api: &Api) -> Result<u32, Outcome> {
    let mut count = 0u32;
    expect_success!(api.urAdapterGet(0, null_mut(), &mut count));
    let mut adapters = vec![null_mut(); count as usize];
    if count > 0 {
        expect_success!(api.urAdapterGet(count, adapters.as_mut_ptr(), null_mut()));
    }
    for adapter in adapters {
        expect_success!(api.urAdapterRelease(adapter));
    }
    Ok(count)
}

unsafe fn new_config(api: &Api) -> Result<OwnedConfig, Outcome> {
    let mut config = null_mut();
    expect_success!(api.urLoaderConfigCreate(&mut config));
    check!(!config.is_null(), "urLoaderConfigCreate succeeded with a null handle");
    Ok(Owned::new(config, api.fns.urLoaderConfigRelease))
}

unsafe fn config_refs(api: &Api, config: ur_loader_config_handle_t) -> Result<u32, Outcome> {
    Ok(api.loader_config_info::<u32>(config, UR_LOADER_CONFIG_INFO_REFERENCE_COUNT)?)
}

unsafe fn available_layers(api: &Api, config: ur_loader_config_handle_t) -> Result<Vec<String>, Outcome> {
    let text = api.loader_config_info_string(config, UR_LOADER_CONFIG_INFO_AVAILABLE_LAYERS)?;
    Ok(text.split(';').filter(|s| !s.is_empty()).map(str::to_string).collect())
}

unsafe fn init_required(api: &Api) -> CaseResult {
    let mut count = 0u32;
    expect_result!(UR_RESULT_ERROR_UNINITIALIZED, api.urAdapterGet(0, null_mut(), &mut count));
    expect_success!(api.urLoaderInit(0, null_mut()));
    check!(adapter_count(api)? >= 1, "no adapter after urLoaderInit");
    Ok(())
}

unsafe fn init_invalid_flags(api: &Api) -> CaseResult {
    expect_result!(UR_RESULT_ERROR_INVALID_ENUMERATION, api.urLoaderInit(INVALID_INIT_FLAG, null_mut()));
    // A refused call leaves the loader usable.
    expect_success!(api.urLoaderInit(0, null_mut()));
    check!(adapter_count(api)? >= 1, "no adapter after urLoaderInit");
    Ok(())
}

unsafe fn init_with_config(api: &Api) -> CaseResult {
    let config = new_config(api)?;
    expect_success!(api.urLoaderInit(0, config.get()));
    // The loader keeps what it needs; the application may drop its config.
    expect_success!(config.release());
    check!(adapter_count(api)? >= 1, "no adapter after urLoaderInit with a config");
    expect_success!(api.urLoaderTearDown());
    Ok(())
}

unsafe fn init_repeated(fx: &LoaderFx) -> CaseResult {
    let api = fx.api;
    expect_success!(api.urLoaderInit(0, null_mut()));
    let count = adapter_count(api)?;
    check_eq!(count as usize, fx.topology.adapters.len());
    Ok(())
}

unsafe fn teardown_after_init(api: &Api) -> CaseResult {
    expect_success!(api.urLoaderInit(0, null_mut()));
    check!(adapter_count(api)? >= 1, "no adapter after urLoaderInit");
    expect_success!(api.urLoaderTearDown());
    Ok(())
}

unsafe fn config_create(fx: &LoaderFx) -> CaseResult {
    let config = new_config(fx.api)?;
    check_eq!(config_refs(fx.api, config.get())?, 1);
    expect_success!(config.release());
    Ok(())
}

unsafe fn config_create_null(fx: &LoaderFx) -> CaseResult {
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_POINTER, fx.api.urLoaderConfigCreate(null_mut()));
    Ok(())
}

unsafe fn config_retain(fx: &LoaderFx) -> CaseResult {
    let config = new_config(fx.api)?;
    ref_counting!(fx.api, urLoaderConfigRetain, urLoaderConfigRelease)
        .retain_then_release(config.get(), |c| config_refs(fx.api, c))
}

unsafe fn config_release(fx: &LoaderFx) -> CaseResult {
    let config = new_config(fx.api)?;
    ref_counting!(fx.api, urLoaderConfigRetain, urLoaderConfigRelease)
        .release_drops_one_then_last(config, |c| config_refs(fx.api, c))
}

ref_null_cases!(urLoaderConfigRetain, urLoaderConfigRelease => config_retain_null, config_release_null);

unsafe fn config_info_layers(fx: &LoaderFx) -> CaseResult {
    let config = new_config(fx.api)?;
    // `info_string` checks the size protocol and the terminating null.
    let layers = available_layers(fx.api, config.get())?;
    for layer in &layers {
        check!(!layer.trim().is_empty(), "a blank layer name in {layers:?}");
    }
    Ok(())
}

unsafe fn config_info_protocol(fx: &LoaderFx) -> CaseResult {
    let config = new_config(fx.api)?;
    let props = [("REFERENCE_COUNT", UR_LOADER_CONFIG_INFO_REFERENCE_COUNT)];
    info!(fx.api, urLoaderConfigGetInfo).size_protocol(config.get(), &props)
}

unsafe fn config_info_null(fx: &LoaderFx) -> CaseResult {
    info!(fx.api, urLoaderConfigGetInfo).null_handle_into::<u32>(UR_LOADER_CONFIG_INFO_REFERENCE_COUNT)
}

unsafe fn config_info_bad_enum(fx: &LoaderFx) -> CaseResult {
    let config = new_config(fx.api)?;
    let past_last = ur_loader_config_info_t(UR_LOADER_CONFIG_INFO_REFERENCE_COUNT.0 + 1);
    info!(fx.api, urLoaderConfigGetInfo).past_last(config.get(), past_last)
}

unsafe fn enable_available_layers(fx: &LoaderFx) -> CaseResult {
    let config = new_config(fx.api)?;
    let layers = available_layers(fx.api, config.get())?;
    if layers.is_empty() {
        skip!("the loader reports no available layer");
    }
    for layer in layers {
        let name = std::ffi::CString::new(layer.clone()).map_err(|_| "a layer name with a null byte")?;
        expect_success!(fx.api.urLoaderConfigEnableLayer(config.get(), name.as_ptr()));
    }
    Ok(())
}

unsafe fn enable_unknown_layer(fx: &LoaderFx) -> CaseResult {
    let config = new_config(fx.api)?;
    let name = c"UR_LAYER_THAT_DOES_NOT_EXIST";
    expect_result!(UR_RESULT_ERROR_LAYER_NOT_PRESENT, fx.api.urLoaderConfigEnableLayer(config.get(), name.as_ptr()));
    Ok(())
}

unsafe fn enable_layer_null_handle(fx: &LoaderFx) -> CaseResult {
    let name = c"UR_LAYER_PARAMETER_VALIDATION";
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_HANDLE, fx.api.urLoaderConfigEnableLayer(null_mut(), name.as_ptr()));
    Ok(())
}

unsafe fn enable_layer_null_name(fx: &LoaderFx) -> CaseResult {
    let config = new_config(fx.api)?;
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_POINTER,
        fx.api.urLoaderConfigEnableLayer(config.get(), null_const::<c_char>())
    );
    Ok(())
}

unsafe extern "C" fn code_location_of_this_file(_user_data: *mut c_void) -> ur_code_location_t {
    ur_code_location_t {
        functionName: c"code_location_of_this_file".as_ptr(),
        sourceFile: c"conformance/src/cases/loader.rs".as_ptr(),
        lineNumber: line!(),
        columnNumber: column!(),
    }
}

unsafe fn code_location(fx: &LoaderFx) -> CaseResult {
    let config = new_config(fx.api)?;
    let mut user_data = 0u32;
    expect_success!(fx.api.urLoaderConfigSetCodeLocationCallback(
        config.get(),
        Some(code_location_of_this_file),
        (&mut user_data as *mut u32).cast()
    ));
    Ok(())
}

unsafe fn code_location_null_handle(fx: &LoaderFx) -> CaseResult {
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_HANDLE,
        fx.api.urLoaderConfigSetCodeLocationCallback(null_mut(), Some(code_location_of_this_file), null_mut())
    );
    Ok(())
}

unsafe fn code_location_null_callback(fx: &LoaderFx) -> CaseResult {
    let config = new_config(fx.api)?;
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_POINTER,
        fx.api.urLoaderConfigSetCodeLocationCallback(config.get(), None, null_mut())
    );
    Ok(())
}

unsafe fn mocking_disable(fx: &LoaderFx) -> CaseResult {
    let config = new_config(fx.api)?;
    expect_success!(fx.api.urLoaderConfigSetMockingEnabled(config.get(), 0));
    Ok(())
}

unsafe fn mocking_null_handle(fx: &LoaderFx) -> CaseResult {
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_HANDLE, fx.api.urLoaderConfigSetMockingEnabled(null_mut(), 0));
    Ok(())
}
