//! `urContext*`.

use super::obj;
use crate::core::context::Context;
use crate::core::device::Device;
use crate::core::refcount;
use std::ffi::c_void;
use ur_core::boundary::{ffi_call, slice_arg, write_out};
use ur_core::info::InfoOut;
use ur_core::*;

pub unsafe extern "C" fn urContextCreate(
    device_count: u32,
    ph_devices: *const ur_device_handle_t,
    p_properties: *const ur_context_properties_t,
    ph_context: *mut ur_context_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        if ph_devices.is_null() || ph_context.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        if device_count == 0 {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        if !p_properties.is_null() && (*p_properties).flags & UR_CONTEXT_FLAGS_MASK != 0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let devices = slice_arg(ph_devices, device_count)?
            .iter()
            .map(|&h| Device::from_handle(h))
            .collect::<UrResult<Vec<_>>>()?;
        let context = Context::new(devices)?;
        *ph_context = refcount::into_handle(context);
        Ok(())
    })
}

pub unsafe extern "C" fn urContextRetain(h: ur_context_handle_t) -> ur_result_t {
    ffi_call(|| refcount::retain::<Context>(h))
}

pub unsafe extern "C" fn urContextRelease(h: ur_context_handle_t) -> ur_result_t {
    ffi_call(|| refcount::release::<Context>(h))
}

pub unsafe extern "C" fn urContextGetInfo(
    h: ur_context_handle_t,
    prop: ur_context_info_t,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let c = obj::<Context>(h)?;
        if prop.0 > UR_CONTEXT_INFO_USM_FILL2D_SUPPORT.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let out = InfoOut::new(size, value, size_ret)?;
        match prop {
            UR_CONTEXT_INFO_NUM_DEVICES => out.value(c.devices.len() as u32),
            UR_CONTEXT_INFO_DEVICES => {
                out.slice(&c.devices.iter().map(|d| d.handle()).collect::<Vec<ur_device_handle_t>>())
            }
            UR_CONTEXT_INFO_REFERENCE_COUNT => out.value(c.refs.get()),
            // Rows of 2D fills and copies are enqueued one by one.
            UR_CONTEXT_INFO_USM_MEMCPY2D_SUPPORT | UR_CONTEXT_INFO_USM_FILL2D_SUPPORT => out.bool(true),
            _ => Err(UR_RESULT_ERROR_INVALID_ENUMERATION),
        }
    })
}

pub unsafe extern "C" fn urContextGetNativeHandle(h: ur_context_handle_t, ph_native: *mut ur_native_handle_t) -> ur_result_t {
    ffi_call(|| write_out(ph_native, obj::<Context>(h)?.cl.get() as ur_native_handle_t))
}

pub unsafe extern "C" fn urContextSetExtendedDeleter(
    h: ur_context_handle_t,
    pfn_deleter: ur_context_extended_deleter_t,
    p_user_data: *mut c_void,
) -> ur_result_t {
    ffi_call(|| {
        let c = obj::<Context>(h)?;
        if pfn_deleter.is_none() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        c.set_extended_deleter(pfn_deleter, p_user_data);
        Ok(())
    })
}

pub unsafe extern "C" fn urContextCreateWithNativeHandle(
    h_native: ur_native_handle_t,
    h_adapter: ur_adapter_handle_t,
    num_devices: u32,
    ph_devices: *const ur_device_handle_t,
    p_properties: *const ur_context_native_properties_t,
    ph_context: *mut ur_context_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        crate::api::adapter::ADAPTER.borrow(h_adapter)?;
        let (ownership, _) = ur_core::boundary::native_args(h_native, false, p_properties, ph_context)?;
        let devices = slice_arg(ph_devices, num_devices)?
            .iter()
            .map(|&h| Device::from_handle(h))
            .collect::<UrResult<Vec<_>>>()?;
        let context = Context::from_native(h_native as cl3::ext::cl_context, devices, ownership)?;
        *ph_context = refcount::into_handle(context);
        Ok(())
    })
}
