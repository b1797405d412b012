//! `urDevice*`.

use super::{obj, write_handles};
use crate::abi::*;
use crate::device::{Device, Platform, RawDevice};
use crate::adapter::Adapter;
use crate::boundary::{ffi_call, native_args, select_binary, write_optional, write_out};
use crate::hal::{Backend};
use crate::handle;
use crate::info::InfoOut;
use crate::partition::{write_sub_devices, PartitionRequest};
use core::ffi::c_void;

pub(super) unsafe extern "C" fn get<B: Backend>(
    platform: ur_platform_handle_t,
    device_type: ur_device_type_t,
    entries: u32,
    out: *mut ur_device_handle_t,
    num: *mut u32,
) -> ur_result_t {
    ffi_call(|| {
        let platform = obj::<B, Platform<B>>(platform)?;
        if device_type.0 > UR_DEVICE_TYPE_CUSTOM.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        if entries == 0 && !out.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        if (entries > 0 && out.is_null()) || (out.is_null() && num.is_null()) {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        write_handles(&B::RawDevice::all(platform, device_type)?, entries, out, num);
        Ok(())
    })
}

pub(super) unsafe extern "C" fn get_info<B: Backend>(
    h: ur_device_handle_t,
    prop: ur_device_info_t,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let device = obj::<B, Device<B>>(h)?;
        super::prop_in_range(prop.0, UR_DEVICE_INFO_ENQUEUE_HOST_TASK_SUPPORT_EXP.0, &[])?;
        let out = InfoOut::new(size, value, size_ret)?;
        match prop {
            UR_DEVICE_INFO_USM_P2P_SUPPORT_EXP => out.bool(<B::RawDevice as crate::device::RawDevice<B>>::PEER_ACCESS),
            // The same on every backend: one compute queue index, and
            // programs are built for root devices.
            UR_DEVICE_INFO_MAX_COMPUTE_QUEUE_INDICES => out.value(1u32),
            UR_DEVICE_INFO_BUILD_ON_SUBDEVICE => out.bool(false),
            // No backend serves images (`spec/memory_objects.md`): every
            // device says so, whatever its driver offers, so that libsycl
            // never tries them; every image limit is 0.
            UR_DEVICE_INFO_IMAGE_SUPPORT | UR_DEVICE_INFO_IMAGE_SRGB => out.bool(false),
            UR_DEVICE_INFO_MAX_READ_IMAGE_ARGS
            | UR_DEVICE_INFO_MAX_WRITE_IMAGE_ARGS
            | UR_DEVICE_INFO_MAX_READ_WRITE_IMAGE_ARGS
            | UR_DEVICE_INFO_MAX_SAMPLERS => out.value(0u32),
            UR_DEVICE_INFO_IMAGE2D_MAX_WIDTH
            | UR_DEVICE_INFO_IMAGE2D_MAX_HEIGHT
            | UR_DEVICE_INFO_IMAGE3D_MAX_WIDTH
            | UR_DEVICE_INFO_IMAGE3D_MAX_HEIGHT
            | UR_DEVICE_INFO_IMAGE3D_MAX_DEPTH
            | UR_DEVICE_INFO_IMAGE_MAX_BUFFER_SIZE
            | UR_DEVICE_INFO_IMAGE_MAX_ARRAY_SIZE => out.value(0usize),
            _ if <B::RawProgram as crate::program::RawProgram<B>>::SUPPORTED => device.info(prop, out),
            // A backend that builds no programs runs no device code: what
            // only device code uses is not offered (bindless images
            // neither: their limits are 0).
            UR_DEVICE_INFO_KERNEL_SET_SPECIALIZATION_CONSTANTS
            | UR_DEVICE_INFO_PROGRAM_SET_SPECIALIZATION_CONSTANTS
            | UR_DEVICE_INFO_USE_NATIVE_ASSERT
            | UR_DEVICE_INFO_CLOCK_SUB_GROUP_SUPPORT_EXP
            | UR_DEVICE_INFO_CLOCK_WORK_GROUP_SUPPORT_EXP
            | UR_DEVICE_INFO_CLOCK_DEVICE_SUPPORT_EXP => out.bool(false),
            UR_DEVICE_INFO_IMAGE_PITCH_ALIGN_EXP | UR_DEVICE_INFO_MIPMAP_MAX_ANISOTROPY_EXP => out.value(0u32),
            UR_DEVICE_INFO_MAX_IMAGE_LINEAR_WIDTH_EXP
            | UR_DEVICE_INFO_MAX_IMAGE_LINEAR_HEIGHT_EXP
            | UR_DEVICE_INFO_MAX_IMAGE_LINEAR_PITCH_EXP => out.value(0usize),
            _ => device.info(prop, out),
        }
    })
}

/// Root devices count no references (SYCL releases them anyway); a
/// sub-device counts the user's like any object.
pub(super) unsafe extern "C" fn retain<B: Backend>(h: ur_device_handle_t) -> ur_result_t {
    super::counted::<B, Device<B>>(h, |d| !d.is_root(), handle::retain::<Device<B>>)
}

pub(super) unsafe extern "C" fn release<B: Backend>(h: ur_device_handle_t) -> ur_result_t {
    super::counted::<B, Device<B>>(h, |d| !d.is_root(), handle::release_kept::<Device<B>>)
}

/// Each sub-device handle written out is one user reference.
pub(super) unsafe extern "C" fn partition<B: Backend>(
    h: ur_device_handle_t,
    properties: *const ur_device_partition_properties_t,
    entries: u32,
    out: *mut ur_device_handle_t,
    num: *mut u32,
) -> ur_result_t {
    ffi_call(|| {
        let device = obj::<B, Device<B>>(h)?;
        let request = PartitionRequest::decode(properties)?;
        if entries == 0 && !out.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        let subs = device.partition(&request)?;
        if !out.is_null() {
            subs.iter().take(entries as usize).for_each(|s| handle::count_user_ref(*s));
        }
        let handles: Vec<ur_device_handle_t> = subs.iter().map(|s| handle::handle_of(*s)).collect();
        write_sub_devices(&handles, entries, out, num);
        Ok(())
    })
}

pub(super) unsafe extern "C" fn select_binary_entry<B: Backend>(
    h: ur_device_handle_t,
    binaries: *const ur_device_binary_t,
    count: u32,
    selected: *mut u32,
) -> ur_result_t {
    ffi_call(|| {
        let device = obj::<B, Device<B>>(h)?;
        select_binary(binaries, count, selected, device.binary_targets())
    })
}

super::native_handle_entry!(Device<B>, ur_device_handle_t);

pub(super) unsafe extern "C" fn create_with_native_handle<B: Backend>(
    native: ur_native_handle_t,
    adapter: ur_adapter_handle_t,
    properties: *const ur_device_native_properties_t,
    out: *mut ur_device_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let adapter = obj::<B, Adapter>(adapter)?;
        native_args(native, <B::RawDevice as crate::device::RawDevice<B>>::NATIVE_NULL_IS_VALID, properties, out)?;
        let h = B::RawDevice::from_native(native, adapter)?;
        let device = obj::<B, Device<B>>(h)?;
        // The caller's handle is one reference of a sub-device.
        if !device.is_root() {
            handle::count_user_ref(device);
        }
        write_out(out, h)
    })
}

pub(super) unsafe extern "C" fn get_global_timestamps<B: Backend>(
    h: ur_device_handle_t,
    device_time: *mut u64,
    host_time: *mut u64,
) -> ur_result_t {
    ffi_call(|| {
        let (device, host) = obj::<B, Device<B>>(h)?.global_timestamps()?;
        write_optional(device_time, device);
        write_optional(host_time, host);
        Ok(())
    })
}
