//! `urContext*`.

use super::{arc, borrow};
use crate::core::context::Context;
use crate::core::device::Device;
use ur_core::boundary::{ffi_call, slice_arg, write_out};
use ur_core::handle;
use ur_core::info::InfoOut;
use ur_core::*;

pub unsafe extern "C" fn urContextCreate(
    DeviceCount: u32,
    phDevices: *const ur_device_handle_t,
    pProperties: *const ur_context_properties_t,
    phContext: *mut ur_context_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        if phDevices.is_null() || phContext.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        if DeviceCount == 0 {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        if !pProperties.is_null() && (*pProperties).flags & UR_CONTEXT_FLAGS_MASK != 0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let devices = slice_arg(phDevices, DeviceCount)?
            .iter()
            .map(|&d| {
                if d.is_null() {
                    Err(UR_RESULT_ERROR_INVALID_NULL_HANDLE)
                } else {
                    arc::<Device>(d)
                }
            })
            .collect::<UrResult<Vec<_>>>()?;
        let context = Context::new(devices)?;
        *phContext = handle::into_handle(context);
        Ok(())
    })
}

pub unsafe extern "C" fn urContextRetain(hContext: ur_context_handle_t) -> ur_result_t {
    ffi_call(|| handle::retain::<Context>(hContext, &crate::DDI))
}

pub unsafe extern "C" fn urContextRelease(hContext: ur_context_handle_t) -> ur_result_t {
    ffi_call(|| handle::release::<Context>(hContext, &crate::DDI))
}

pub unsafe extern "C" fn urContextGetInfo(
    hContext: ur_context_handle_t,
    propName: ur_context_info_t,
    propSize: usize,
    pPropValue: *mut core::ffi::c_void,
    pPropSizeRet: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let context = borrow::<Context>(hContext)?;
        if propName.0 > UR_CONTEXT_INFO_USM_FILL2D_SUPPORT.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let out = InfoOut::new(propSize, pPropValue, pPropSizeRet)?;
        match propName {
            UR_CONTEXT_INFO_NUM_DEVICES => out.value(context.devices.len() as u32),
            UR_CONTEXT_INFO_DEVICES => out.slice(
                &context
                    .devices
                    .iter()
                    .map(|d| d.handle())
                    .collect::<Vec<_>>(),
            ),
            UR_CONTEXT_INFO_REFERENCE_COUNT => out.value(handle::ref_count_of(context)),
            UR_CONTEXT_INFO_USM_MEMCPY2D_SUPPORT | UR_CONTEXT_INFO_USM_FILL2D_SUPPORT => {
                out.bool(false)
            }
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    })
}

pub unsafe extern "C" fn urContextGetNativeHandle(
    hContext: ur_context_handle_t,
    phNativeContext: *mut ur_native_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let context = borrow::<Context>(hContext)?;
        // The primary CUDA context of the first device.
        let ctx = context.devices[0].activate()?;
        write_out(phNativeContext, ctx as ur_native_handle_t)
    })
}

pub unsafe extern "C" fn urContextSetExtendedDeleter(
    hContext: ur_context_handle_t,
    pfnDeleter: ur_context_extended_deleter_t,
    pUserData: *mut core::ffi::c_void,
) -> ur_result_t {
    ffi_call(|| {
        let context = borrow::<Context>(hContext)?;
        let f = pfnDeleter.ok_or(UR_RESULT_ERROR_INVALID_NULL_POINTER)?;
        context.add_deleter(f, pUserData);
        Ok(())
    })
}

pub unsafe extern "C" fn urContextCreateWithNativeHandle(
    hNativeContext: ur_native_handle_t,
    hAdapter: ur_adapter_handle_t,
    numDevices: u32,
    phDevices: *const ur_device_handle_t,
    pProperties: *const ur_context_native_properties_t,
    phContext: *mut ur_context_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        crate::api::adapter::ADAPTER.borrow(hAdapter)?;
        let (ownership, _) =
            ur_core::boundary::native_args(hNativeContext, false, pProperties, phContext)?;
        let devices = slice_arg(phDevices, numDevices)?
            .iter()
            .map(|&d| arc::<Device>(d))
            .collect::<UrResult<Vec<_>>>()?;
        let context = Context::from_native(
            hNativeContext as crate::driver::CUcontext,
            devices,
            ownership,
        )?;
        *phContext = handle::into_handle(context);
        Ok(())
    })
}
