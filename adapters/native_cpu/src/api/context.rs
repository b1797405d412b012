//! `urContext*`.

use super::{arc, obj, release_counted, retain_counted};
use crate::core::context::Context;
use crate::core::device::Device;
use crate::core::refcount::Counted;
use std::ffi::c_void;
use ur_core::boundary::{ffi_call, non_null, write_out};
use ur_core::handle::into_handle;
use ur_core::info::InfoOut;
use ur_core::*;

pub unsafe extern "C" fn urContextCreate(
    DeviceCount: u32,
    phDevices: *const ur_device_handle_t,
    pProperties: *const ur_context_properties_t,
    phContext: *mut ur_context_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        non_null(phDevices)?;
        non_null(phContext)?;
        if let Some(props) = pProperties.as_ref() {
            if props.flags & UR_CONTEXT_FLAGS_MASK != 0 {
                return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
            }
        }
        if DeviceCount == 0 {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        let handles = std::slice::from_raw_parts(phDevices, DeviceCount as usize);
        let mut devices = Vec::with_capacity(handles.len());
        for &h in handles {
            let device = arc::<Device>(h)?;
            // Naming a device twice does not make it two devices.
            if !devices.iter().any(|d| std::sync::Arc::ptr_eq(d, &device)) {
                devices.push(device);
            }
        }
        write_out(phContext, into_handle(Context::new(devices)))
    })
}

pub unsafe extern "C" fn urContextRetain(hContext: ur_context_handle_t) -> ur_result_t {
    ffi_call(|| retain_counted::<Context>(hContext))
}

pub unsafe extern "C" fn urContextRelease(hContext: ur_context_handle_t) -> ur_result_t {
    ffi_call(|| release_counted::<Context>(hContext))
}

pub unsafe extern "C" fn urContextGetInfo(
    hContext: ur_context_handle_t,
    propName: ur_context_info_t,
    propSize: usize,
    pPropValue: *mut c_void,
    pPropSizeRet: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let ctx = obj::<Context>(hContext)?;
        if propName.0 > UR_CONTEXT_INFO_USM_FILL2D_SUPPORT.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let out = InfoOut::new(propSize, pPropValue, pPropSizeRet)?;
        match propName {
            UR_CONTEXT_INFO_NUM_DEVICES => out.value(ctx.devices.len() as u32),
            UR_CONTEXT_INFO_DEVICES => {
                let handles: Vec<ur_device_handle_t> = ctx.devices.iter().map(|d| d.handle()).collect();
                out.slice(&handles)
            }
            UR_CONTEXT_INFO_REFERENCE_COUNT => out.value(ctx.user_refs().get()),
            UR_CONTEXT_INFO_USM_MEMCPY2D_SUPPORT | UR_CONTEXT_INFO_USM_FILL2D_SUPPORT => out.bool(true),
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    })
}

/// A host context wraps no driver object: there is no native handle.
pub unsafe extern "C" fn urContextGetNativeHandle(
    hContext: ur_context_handle_t,
    phNativeContext: *mut ur_native_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        obj::<Context>(hContext)?;
        non_null(phNativeContext)?;
        Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
    })
}

pub unsafe extern "C" fn urContextSetExtendedDeleter(
    hContext: ur_context_handle_t,
    pfnDeleter: ur_context_extended_deleter_t,
    pUserData: *mut c_void,
) -> ur_result_t {
    ffi_call(|| {
        let ctx = obj::<Context>(hContext)?;
        let deleter = pfnDeleter.ok_or(UR_RESULT_ERROR_INVALID_NULL_POINTER)?;
        ctx.set_extended_deleter(deleter, pUserData);
        Ok(())
    })
}
