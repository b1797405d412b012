//! `urContext*`.

use super::obj;
use crate::abi::*;
use crate::device::Device;
use crate::context::Context;
use crate::adapter::Adapter;
use crate::boundary::{ffi_call, native_args, non_null, slice_arg, write_out};
use crate::hal::Backend;
use crate::handle;
use crate::UrResult;
use core::ffi::c_void;

/// The devices of a context, checked and without repeats: naming a device
/// twice does not make it two devices.
///
/// # Safety
/// `list` points at `count` handles when `count > 0`.
unsafe fn devices<'a, B: Backend>(count: u32, list: *const ur_device_handle_t) -> UrResult<Vec<&'a Device<B>>> {
    let mut devices: Vec<&Device<B>> = Vec::with_capacity(count as usize);
    for &h in slice_arg(list, count)? {
        let device = obj::<B, Device<B>>(h)?;
        if !devices.iter().any(|d| std::ptr::eq(*d, device)) {
            devices.push(device);
        }
    }
    Ok(devices)
}

pub(super) unsafe extern "C" fn create<B: Backend>(
    count: u32,
    list: *const ur_device_handle_t,
    properties: *const ur_context_properties_t,
    out: *mut ur_context_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        non_null(list)?;
        non_null(out)?;
        let flags = properties.as_ref().map_or(0, |p| p.flags);
        if flags & UR_CONTEXT_FLAGS_MASK != 0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        if count == 0 {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        let devices = devices::<B>(count, list)?;
        write_out(out, handle::into_handle(Context::<B>::create(&devices, flags)?))
    })
}

super::info_entry!(Context<B>, ur_context_handle_t, ur_context_info_t, UR_CONTEXT_INFO_USM_FILL2D_SUPPORT, |context, prop, out| {
    match prop {
        UR_CONTEXT_INFO_NUM_DEVICES => out.value(context.devices().len() as u32),
        UR_CONTEXT_INFO_DEVICES => out.slice(&context.devices().map(handle::handle_of).collect::<Vec<_>>()),
        UR_CONTEXT_INFO_REFERENCE_COUNT => out.value(handle::ref_count_of(context)),
        UR_CONTEXT_INFO_USM_MEMCPY2D_SUPPORT | UR_CONTEXT_INFO_USM_FILL2D_SUPPORT => {
            out.bool(context.usm_2d_supported())
        }
        _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
    }
});

super::native_handle_entry!(Context<B>, ur_context_handle_t);

pub(super) unsafe extern "C" fn create_with_native_handle<B: Backend>(
    native: ur_native_handle_t,
    adapter: ur_adapter_handle_t,
    count: u32,
    list: *const ur_device_handle_t,
    properties: *const ur_context_native_properties_t,
    out: *mut ur_context_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        obj::<B, Adapter>(adapter)?;
        let (ownership, _) = native_args(native, false, properties, out)?;
        let devices = devices::<B>(count, list)?;
        write_out(out, handle::into_handle(Context::<B>::from_native(native, &devices, ownership)?))
    })
}

pub(super) unsafe extern "C" fn set_extended_deleter<B: Backend>(
    h: ur_context_handle_t,
    deleter: ur_context_extended_deleter_t,
    user_data: *mut c_void,
) -> ur_result_t {
    ffi_call(|| {
        let context = obj::<B, Context<B>>(h)?;
        let deleter = deleter.ok_or(UR_RESULT_ERROR_INVALID_NULL_POINTER)?;
        context.deleter.set(deleter, user_data);
        Ok(())
    })
}
