//! `urDevice*`: the GPUs of the platform. Root devices live as long as the
//! process, so retain and release only check the handle.

use super::borrow;
use crate::core::device::Device;
use crate::core::event::now_ns;
use crate::core::platform::Platform;
use ur_core::boundary::{ffi_call, write_optional, write_out};
use ur_core::info::InfoOut;
use ur_core::*;

pub unsafe extern "C" fn urDeviceGet(
    hPlatform: ur_platform_handle_t,
    DeviceType: ur_device_type_t,
    NumEntries: u32,
    phDevices: *mut ur_device_handle_t,
    pNumDevices: *mut u32,
) -> ur_result_t {
    ffi_call(|| {
        let platform = borrow::<Platform>(hPlatform)?;
        if DeviceType.0 > UR_DEVICE_TYPE_CUSTOM.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        if NumEntries == 0 && !phDevices.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        if phDevices.is_null() && pNumDevices.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        if phDevices.is_null() && NumEntries > 0 {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        let matching: &[_] = match DeviceType {
            UR_DEVICE_TYPE_GPU | UR_DEVICE_TYPE_ALL => &platform.devices,
            UR_DEVICE_TYPE_DEFAULT => &platform.devices[..1],
            _ => &[],
        };
        if !phDevices.is_null() {
            for (i, d) in matching.iter().take(NumEntries as usize).enumerate() {
                *phDevices.add(i) = d.handle();
            }
        }
        write_optional(pNumDevices, matching.len() as u32);
        Ok(())
    })
}

pub unsafe extern "C" fn urDeviceGetInfo(
    hDevice: ur_device_handle_t,
    propName: ur_device_info_t,
    propSize: usize,
    pPropValue: *mut core::ffi::c_void,
    pPropSizeRet: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let device = borrow::<Device>(hDevice)?;
        if propName.0 > UR_DEVICE_INFO_ENQUEUE_HOST_TASK_SUPPORT_EXP.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let out = InfoOut::new(propSize, pPropValue, pPropSizeRet)?;
        device.info(propName, out)
    })
}

pub unsafe extern "C" fn urDeviceRetain(hDevice: ur_device_handle_t) -> ur_result_t {
    ffi_call(|| borrow::<Device>(hDevice).map(drop))
}

pub unsafe extern "C" fn urDeviceRelease(hDevice: ur_device_handle_t) -> ur_result_t {
    ffi_call(|| borrow::<Device>(hDevice).map(drop))
}

/// A GPU is not partitioned here (`SUPPORTED_PARTITIONS` is empty): a
/// well-formed request is `INVALID_VALUE`, a malformed one gets the code
/// the shared decoder gives it.
pub unsafe extern "C" fn urDevicePartition(
    hDevice: ur_device_handle_t,
    pProperties: *const ur_device_partition_properties_t,
    _NumDevices: u32,
    _phSubDevices: *mut ur_device_handle_t,
    _pNumDevicesRet: *mut u32,
) -> ur_result_t {
    ffi_call(|| {
        borrow::<Device>(hDevice)?;
        ur_core::partition::refuse(pProperties)
    })
}

pub unsafe extern "C" fn urDeviceSelectBinary(
    hDevice: ur_device_handle_t,
    pBinaries: *const ur_device_binary_t,
    NumBinaries: u32,
    pSelectedBinary: *mut u32,
) -> ur_result_t {
    ffi_call(|| {
        borrow::<Device>(hDevice)?;
        ur_core::boundary::select_binary(pBinaries, NumBinaries, pSelectedBinary, &[b"nvptx64"])
    })
}

pub unsafe extern "C" fn urDeviceGetNativeHandle(
    hDevice: ur_device_handle_t,
    phNativeDevice: *mut ur_native_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let device = borrow::<Device>(hDevice)?;
        write_out(phNativeDevice, device.cu as ur_native_handle_t)
    })
}

pub unsafe extern "C" fn urDeviceGetGlobalTimestamps(
    hDevice: ur_device_handle_t,
    pDeviceTimestamp: *mut u64,
    pHostTimestamp: *mut u64,
) -> ur_result_t {
    ffi_call(|| {
        borrow::<Device>(hDevice)?;
        // Device times (event profiling) are placed on the host's monotonic
        // clock, so one reading serves both.
        let now = now_ns();
        write_optional(pDeviceTimestamp, now);
        write_optional(pHostTimestamp, now);
        Ok(())
    })
}

/// A `CUdevice` gives back the adapter's device for it, the same handle
/// `urDeviceGet` hands out; one the adapter did not find is
/// `INVALID_VALUE` (spec/device.md). A `CUdevice` is an ordinal-like integer, so 0 is a
/// device, not a null handle; devices are not reference counted, so
/// ownership changes nothing.
pub unsafe extern "C" fn urDeviceCreateWithNativeHandle(
    hNativeDevice: ur_native_handle_t,
    hAdapter: ur_adapter_handle_t,
    pProperties: *const ur_device_native_properties_t,
    phDevice: *mut ur_device_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        crate::api::adapter::ADAPTER.borrow(hAdapter)?;
        ur_core::boundary::native_args(hNativeDevice, true, pProperties, phDevice)?;
        let device = Device::find_native(hNativeDevice).ok_or(UR_RESULT_ERROR_INVALID_VALUE)?;
        *phDevice = device.handle();
        Ok(())
    })
}
