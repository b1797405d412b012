//! `urLoaderConfig*`: the loader's own refcounted config object.

use std::ffi::CStr;
use std::sync::{Arc, Mutex};
use ur_core::abi::*;
use ur_core::boundary::{ffi_call, non_null, write_out};
use ur_core::handle::{self, HandleHeader, ObjectKind};
use ur_core::info::InfoOut;

/// Loader objects are dispatched by the loader itself; their header names
/// this table, which belongs to no adapter.
pub static LOADER_DDI: ur_dditable_t = ur_core::ddi::UNSUPPORTED_DDI;

/// Layers a user may enable, by Intel's loader's names. The validation
/// layers change nothing here: this loader always checks handles and
/// arguments at its boundary. Tracing and leak checking are in `layers`.
pub const AVAILABLE_LAYERS: &[&str] = &[
    "UR_LAYER_PARAMETER_VALIDATION",
    "UR_LAYER_FULL_VALIDATION",
    crate::layers::TRACING,
    crate::layers::LEAK_CHECKING,
];

#[repr(C)]
pub struct LoaderConfig {
    header: HandleHeader,
    enabled_layers: Mutex<Vec<String>>,
    code_location: Mutex<Option<(ur_code_location_callback_t, usize)>>,
}
ur_core::ur_object!(LoaderConfig, LoaderConfig, ur_loader_config_handle_t_);

impl LoaderConfig {
    pub fn enabled_layers(&self) -> Vec<String> {
        self.enabled_layers.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

unsafe fn config<'a>(h: ur_loader_config_handle_t) -> ur_core::UrResult<&'a LoaderConfig> {
    handle::borrow::<LoaderConfig>(h, &LOADER_DDI)
}

#[no_mangle]
pub unsafe extern "C" fn urLoaderConfigCreate(phLoaderConfig: *mut ur_loader_config_handle_t) -> ur_result_t {
    ffi_call(|| {
        let cfg = Arc::new(LoaderConfig {
            header: HandleHeader::new(&LOADER_DDI, ObjectKind::LoaderConfig),
            enabled_layers: Mutex::new(Vec::new()),
            code_location: Mutex::new(None),
        });
        if phLoaderConfig.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        write_out(phLoaderConfig, handle::into_handle(cfg))
    })
}

#[no_mangle]
pub unsafe extern "C" fn urLoaderConfigRetain(hLoaderConfig: ur_loader_config_handle_t) -> ur_result_t {
    ffi_call(|| {
        config(hLoaderConfig)?;
        handle::retain::<LoaderConfig>(hLoaderConfig, &LOADER_DDI)
    })
}

#[no_mangle]
pub unsafe extern "C" fn urLoaderConfigRelease(hLoaderConfig: ur_loader_config_handle_t) -> ur_result_t {
    ffi_call(|| {
        config(hLoaderConfig)?;
        handle::release::<LoaderConfig>(hLoaderConfig, &LOADER_DDI)
    })
}

#[no_mangle]
pub unsafe extern "C" fn urLoaderConfigGetInfo(
    hLoaderConfig: ur_loader_config_handle_t,
    propName: ur_loader_config_info_t,
    propSize: usize,
    pPropValue: *mut core::ffi::c_void,
    pPropSizeRet: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let cfg = config(hLoaderConfig)?;
        if propName.0 > UR_LOADER_CONFIG_INFO_REFERENCE_COUNT.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let out = InfoOut::new(propSize, pPropValue, pPropSizeRet)?;
        match propName {
            UR_LOADER_CONFIG_INFO_AVAILABLE_LAYERS => out.string(&AVAILABLE_LAYERS.join(";")),
            UR_LOADER_CONFIG_INFO_REFERENCE_COUNT => out.value(handle::ref_count_of(cfg)),
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn urLoaderConfigEnableLayer(
    hLoaderConfig: ur_loader_config_handle_t,
    pLayerName: *const core::ffi::c_char,
) -> ur_result_t {
    ffi_call(|| {
        let cfg = config(hLoaderConfig)?;
        non_null(pLayerName)?;
        let name = CStr::from_ptr(pLayerName).to_string_lossy().into_owned();
        if !AVAILABLE_LAYERS.contains(&name.as_str()) {
            return Err(UR_RESULT_ERROR_LAYER_NOT_PRESENT);
        }
        cfg.enabled_layers.lock().unwrap_or_else(|e| e.into_inner()).push(name);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn urLoaderConfigSetCodeLocationCallback(
    hLoaderConfig: ur_loader_config_handle_t,
    pfnCodeloc: ur_code_location_callback_t,
    pUserData: *mut core::ffi::c_void,
) -> ur_result_t {
    ffi_call(|| {
        let cfg = config(hLoaderConfig)?;
        pfnCodeloc.ok_or(UR_RESULT_ERROR_INVALID_NULL_POINTER)?;
        // Kept; the tracing layer prints through its own log, not this callback.
        *cfg.code_location.lock().unwrap_or_else(|e| e.into_inner()) = Some((pfnCodeloc, pUserData as usize));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn urLoaderConfigSetMockingEnabled(
    hLoaderConfig: ur_loader_config_handle_t,
    enable: ur_bool_t,
) -> ur_result_t {
    ffi_call(|| {
        config(hLoaderConfig)?;
        // There is no mock adapter: asking for one is unsupported, turning
        // mocking off is what is already the case.
        if enable != 0 {
            Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
        } else {
            Ok(())
        }
    })
}
