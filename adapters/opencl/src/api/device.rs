//! `urDevice*`.

use crate::conv;
use crate::core::device::Device;
use crate::core::platform::Platform;
use std::ffi::c_void;
use ur_core::boundary::{ffi_call, write_optional, write_out};
use ur_core::info::InfoOut;
use ur_core::partition::{write_sub_devices, PartitionRequest};
use ur_core::*;

pub unsafe extern "C" fn urDeviceGet(
    h_platform: ur_platform_handle_t,
    device_type: ur_device_type_t,
    num_entries: u32,
    ph_devices: *mut ur_device_handle_t,
    p_num_devices: *mut u32,
) -> ur_result_t {
    ffi_call(|| {
        let platform = Platform::from_handle(h_platform)?;
        let filter = conv::device_type_filter(device_type)?;
        if num_entries == 0 && !ph_devices.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        if num_entries > 0 && ph_devices.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        if ph_devices.is_null() && p_num_devices.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        let found: Vec<&'static Device> = match filter {
            Some(f) => platform.devices().iter().copied().filter(|d| d.matches(f)).collect(),
            None => Vec::new(),
        };
        if !ph_devices.is_null() {
            for (i, d) in found.iter().take(num_entries as usize).enumerate() {
                *ph_devices.add(i) = d.handle();
            }
        }
        write_optional(p_num_devices, found.len() as u32);
        Ok(())
    })
}

pub unsafe extern "C" fn urDeviceGetInfo(
    h: ur_device_handle_t,
    prop: ur_device_info_t,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let d = Device::from_handle(h)?;
        if prop.0 > UR_DEVICE_INFO_ENQUEUE_HOST_TASK_SUPPORT_EXP.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        d.get_info(prop, InfoOut::new(size, value, size_ret)?)
    })
}

/// Devices live as long as the process (sub-devices with their parent):
/// retain and release count a sub-device's user references and free nothing.
pub unsafe extern "C" fn urDeviceRetain(h: ur_device_handle_t) -> ur_result_t {
    ffi_call(|| Device::from_handle(h)?.retain())
}

pub unsafe extern "C" fn urDeviceRelease(h: ur_device_handle_t) -> ur_result_t {
    ffi_call(|| Device::from_handle(h)?.release())
}

pub unsafe extern "C" fn urDevicePartition(
    h: ur_device_handle_t,
    p_properties: *const ur_device_partition_properties_t,
    num_devices: u32,
    ph_sub_devices: *mut ur_device_handle_t,
    p_num_devices_ret: *mut u32,
) -> ur_result_t {
    ffi_call(|| {
        let d = Device::from_handle(h)?;
        let request = PartitionRequest::decode(p_properties)?;
        let subs = d.partition(&request)?;
        if !ph_sub_devices.is_null() {
            // Each handle given out is one user reference.
            for sub in subs.iter().take(num_devices as usize) {
                sub.retain()?;
            }
        }
        let handles: Vec<ur_device_handle_t> = subs.into_iter().map(Device::handle).collect();
        write_sub_devices(&handles, num_devices, ph_sub_devices, p_num_devices_ret);
        Ok(())
    })
}

pub unsafe extern "C" fn urDeviceGetNativeHandle(h: ur_device_handle_t, ph_native: *mut ur_native_handle_t) -> ur_result_t {
    ffi_call(|| write_out(ph_native, Device::from_handle(h)?.id as ur_native_handle_t))
}

pub unsafe extern "C" fn urDeviceGetGlobalTimestamps(
    h: ur_device_handle_t,
    p_device_timestamp: *mut u64,
    p_host_timestamp: *mut u64,
) -> ur_result_t {
    ffi_call(|| {
        let (device, host) = Device::from_handle(h)?.global_timestamps()?;
        write_optional(p_device_timestamp, device);
        write_optional(p_host_timestamp, host);
        Ok(())
    })
}

/// Binary targets this device runs, best first: an image compiled ahead of
/// time for its kind beats generic SPIR-V.
fn preferred_targets(d: &Device) -> &'static [&'static [u8]] {
    match conv::device_type(d.device_type) {
        UR_DEVICE_TYPE_CPU => &[b"spir64_x86_64", b"spir64"],
        UR_DEVICE_TYPE_GPU => &[b"spir64_gen", b"spir64"],
        UR_DEVICE_TYPE_FPGA => &[b"spir64_fpga", b"spir64"],
        _ => &[b"spir64"],
    }
}

pub unsafe extern "C" fn urDeviceSelectBinary(
    h: ur_device_handle_t,
    p_binaries: *const ur_device_binary_t,
    num_binaries: u32,
    p_selected: *mut u32,
) -> ur_result_t {
    ffi_call(|| {
        let d = Device::from_handle(h)?;
        ur_core::boundary::select_binary(p_binaries, num_binaries, p_selected, preferred_targets(d))
    })
}

/// An OpenCL device id gives back the adapter's device for it: the handle
/// `urDeviceGet` hands out, or a sub-device `urDevicePartition` made; an id
/// the adapter did not find is `INVALID_VALUE` (spec/device.md). The
/// adapter's devices hold the OpenCL ids for as long as they live, so
/// ownership changes nothing.
pub unsafe extern "C" fn urDeviceCreateWithNativeHandle(
    h_native: ur_native_handle_t,
    h_adapter: ur_adapter_handle_t,
    p_properties: *const ur_device_native_properties_t,
    ph_device: *mut ur_device_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        super::adapter::ADAPTER.borrow(h_adapter)?;
        ur_core::boundary::native_args(h_native, false, p_properties, ph_device)?;
        let device = crate::core::platform::device_by_id(h_native as cl3::ext::cl_device_id)
            .ok_or(UR_RESULT_ERROR_INVALID_VALUE)?;
        // The caller's handle: one reference of a sub-device (none for a
        // root device, which counts nothing).
        device.retain()?;
        *ph_device = device.handle();
        Ok(())
    })
}
