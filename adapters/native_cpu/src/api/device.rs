//! `urDevice*`.

use super::{obj, write_handles};
use crate::core::device::{self, kernel_limits, Device};
use crate::core::host;
use crate::core::platform::Platform;
use std::ffi::c_void;
use ur_core::boundary::{ffi_call, non_null, write_optional};
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
        let platform = obj::<Platform>(hPlatform)?;
        if DeviceType.0 > UR_DEVICE_TYPE_CUSTOM.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        if NumEntries == 0 && !phDevices.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        if NumEntries > 0 && phDevices.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        if phDevices.is_null() && pNumDevices.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        let matching: Vec<ur_device_handle_t> = if Device::matches(DeviceType) {
            platform.devices.iter().map(|d| d.handle()).collect()
        } else {
            Vec::new()
        };
        write_handles(&matching, NumEntries, phDevices, pNumDevices);
        Ok(())
    })
}

/// Root devices are not reference counted: retain and release only check.
pub unsafe extern "C" fn urDeviceRetain(hDevice: ur_device_handle_t) -> ur_result_t {
    ffi_call(|| obj::<Device>(hDevice).map(drop))
}

pub unsafe extern "C" fn urDeviceRelease(hDevice: ur_device_handle_t) -> ur_result_t {
    ffi_call(|| obj::<Device>(hDevice).map(drop))
}

/// The host device wraps no driver object: there is no native handle.
pub unsafe extern "C" fn urDeviceGetNativeHandle(
    hDevice: ur_device_handle_t,
    phNativeDevice: *mut ur_native_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        obj::<Device>(hDevice)?;
        non_null(phNativeDevice)?;
        Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
    })
}

/// The host device offers no partition kind (`SUPPORTED_PARTITIONS` is
/// empty): a well-formed request is `INVALID_VALUE`, a malformed one gets
/// the code the shared decoder gives it.
pub unsafe extern "C" fn urDevicePartition(
    hDevice: ur_device_handle_t,
    pProperties: *const ur_device_partition_properties_t,
    _NumDevices: u32,
    _phSubDevices: *mut ur_device_handle_t,
    _pNumDevicesRet: *mut u32,
) -> ur_result_t {
    ffi_call(|| {
        obj::<Device>(hDevice)?;
        ur_core::partition::refuse(pProperties)
    })
}

/// Only images built for native CPU fit: this adapter runs no SPIR-V or
/// other device code, so for every other image it answers INVALID_BINARY,
/// which SYCL device selection reads as "not this device's images".
pub unsafe extern "C" fn urDeviceSelectBinary(
    hDevice: ur_device_handle_t,
    pBinaries: *const ur_device_binary_t,
    NumBinaries: u32,
    pSelectedBinary: *mut u32,
) -> ur_result_t {
    ffi_call(|| {
        obj::<Device>(hDevice)?;
        ur_core::boundary::select_binary(pBinaries, NumBinaries, pSelectedBinary, &[b"native_cpu"])
    })
}

/// Device and host share one clock, the one of profiling timestamps.
pub unsafe extern "C" fn urDeviceGetGlobalTimestamps(
    hDevice: ur_device_handle_t,
    pDeviceTimestamp: *mut u64,
    pHostTimestamp: *mut u64,
) -> ur_result_t {
    ffi_call(|| {
        obj::<Device>(hDevice)?;
        let now = device::monotonic_ns();
        write_optional(pDeviceTimestamp, now);
        write_optional(pHostTimestamp, now);
        Ok(())
    })
}

pub unsafe extern "C" fn urDeviceGetInfo(
    hDevice: ur_device_handle_t,
    propName: ur_device_info_t,
    propSize: usize,
    pPropValue: *mut c_void,
    pPropSizeRet: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let device = obj::<Device>(hDevice)?;
        if propName.0 > UR_DEVICE_INFO_ENQUEUE_HOST_TASK_SUPPORT_EXP.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let out = InfoOut::new(propSize, pPropValue, pPropSizeRet)?;
        device_info(device, propName, out)
    })
}

/// Every flag of a capability word.
const ALL_MEMORY_ORDERS: u32 = !UR_MEMORY_ORDER_CAPABILITY_FLAGS_MASK;
const ALL_MEMORY_SCOPES: u32 = !UR_MEMORY_SCOPE_CAPABILITY_FLAGS_MASK;
/// Host memory is plain coherent RAM: every kind of USM is reachable, also
/// atomically and concurrently with the host.
const FULL_USM_ACCESS: u32 = !UR_DEVICE_USM_ACCESS_CAPABILITY_FLAGS_MASK;
const QUEUE_FLAGS: u32 = UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0 | UR_QUEUE_FLAG_PROFILING_ENABLE.0;

fn fp_config(device: &Device, correctly_rounded: bool) -> u32 {
    let mut flags = UR_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_NEAREST.0
        | UR_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_ZERO.0
        | UR_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_INF.0
        | UR_DEVICE_FP_CAPABILITY_FLAG_INF_NAN.0
        | UR_DEVICE_FP_CAPABILITY_FLAG_DENORM.0;
    if device.host.has_fma {
        flags |= UR_DEVICE_FP_CAPABILITY_FLAG_FMA.0;
    }
    if correctly_rounded {
        flags |= UR_DEVICE_FP_CAPABILITY_FLAG_CORRECTLY_ROUNDED_DIVIDE_SQRT.0;
    }
    flags
}

fn device_info(device: &Device, prop: ur_device_info_t, out: InfoOut) -> UrResult {
    let h = &device.host;
    let vector_width = |bytes: u32| device.vector_width(bytes);
    match prop {
        UR_DEVICE_INFO_TYPE => out.value(UR_DEVICE_TYPE_CPU),
        UR_DEVICE_INFO_VENDOR_ID => out.value(h.vendor_id),
        UR_DEVICE_INFO_MAX_COMPUTE_UNITS | UR_DEVICE_INFO_NUM_COMPUTE_UNITS => out.value(h.compute_units),
        UR_DEVICE_INFO_SINGLE_FP_CONFIG => out.value(fp_config(device, true)),
        UR_DEVICE_INFO_DOUBLE_FP_CONFIG => out.value(fp_config(device, true)),
        UR_DEVICE_INFO_HALF_FP_CONFIG => out.value(if h.has_fp16 { fp_config(device, false) } else { 0 }),
        UR_DEVICE_INFO_QUEUE_PROPERTIES | UR_DEVICE_INFO_QUEUE_ON_HOST_PROPERTIES => out.value(QUEUE_FLAGS),
        UR_DEVICE_INFO_QUEUE_ON_DEVICE_PROPERTIES => out.value(0u32),
        UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_CHAR | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_CHAR => {
            out.value(vector_width(1))
        }
        UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_SHORT
        | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_SHORT
        | UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_HALF
        | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_HALF => out.value(vector_width(2)),
        UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_INT
        | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_INT
        | UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_FLOAT
        | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_FLOAT => out.value(vector_width(4)),
        UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_LONG
        | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_LONG
        | UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_LONG_LONG
        | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_LONG_LONG
        | UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_DOUBLE
        | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_DOUBLE => out.value(vector_width(8)),
        UR_DEVICE_INFO_MAX_CLOCK_FREQUENCY if h.max_clock_mhz > 0 => out.value(h.max_clock_mhz),
        UR_DEVICE_INFO_ADDRESS_BITS => out.value(usize::BITS),
        UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE => out.value(device.max_alloc_size()),
        UR_DEVICE_INFO_GLOBAL_MEM_SIZE => out.value(h.total_memory),
        UR_DEVICE_INFO_GLOBAL_MEM_FREE => match host::available_memory() {
            Some(bytes) => out.value(bytes),
            None => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        },
        // No image support: every image limit is 0.
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
        // In bits, as OpenCL counts it: the default USM alignment.
        UR_DEVICE_INFO_MEM_BASE_ADDR_ALIGN => out.value((device::DEFAULT_USM_ALIGNMENT * 8) as u32),
        UR_DEVICE_INFO_GLOBAL_MEM_CACHE_TYPE => out.value(UR_DEVICE_MEM_CACHE_TYPE_READ_WRITE_CACHE),
        UR_DEVICE_INFO_GLOBAL_MEM_CACHELINE_SIZE => out.value(h.cache_line),
        UR_DEVICE_INFO_GLOBAL_MEM_CACHE_SIZE if h.cache_size > 0 => out.value(h.cache_size),
        UR_DEVICE_INFO_ERROR_CORRECTION_SUPPORT => out.bool(false),
        UR_DEVICE_INFO_HOST_UNIFIED_MEMORY => out.bool(true),
        UR_DEVICE_INFO_PROFILING_TIMER_RESOLUTION => out.value(device::clock_resolution_ns()),
        UR_DEVICE_INFO_ENDIAN_LITTLE => out.bool(cfg!(target_endian = "little")),
        UR_DEVICE_INFO_AVAILABLE => out.bool(true),
        // This adapter builds no programs and runs no kernels.
        UR_DEVICE_INFO_COMPILER_AVAILABLE | UR_DEVICE_INFO_LINKER_AVAILABLE => out.bool(false),
        UR_DEVICE_INFO_EXECUTION_CAPABILITIES => out.value(0u32),
        UR_DEVICE_INFO_BUILT_IN_KERNELS => out.string(""),
        UR_DEVICE_INFO_PLATFORM => out.value(device.platform_handle()),
        // Root devices are not reference counted.
        UR_DEVICE_INFO_REFERENCE_COUNT => out.value(1u32),
        UR_DEVICE_INFO_NAME => out.string(&h.cpu_name),
        UR_DEVICE_INFO_VENDOR => out.string(&h.vendor_name),
        UR_DEVICE_INFO_DRIVER_VERSION | UR_DEVICE_INFO_BACKEND_RUNTIME_VERSION => out.string(env!("CARGO_PKG_VERSION")),
        UR_DEVICE_INFO_PROFILE => out.string(Platform::PROFILE),
        UR_DEVICE_INFO_VERSION => {
            let v = UR_API_VERSION_IMPLEMENTED.0;
            out.string(&format!("{}.{}", v >> 16, v & 0xffff))
        }
        UR_DEVICE_INFO_EXTENSIONS => out.string(&device.extensions()),
        // Not partitionable: no parent, no partitions.
        UR_DEVICE_INFO_PARENT_DEVICE => out.value(std::ptr::null_mut::<ur_device_handle_t_>()),
        UR_DEVICE_INFO_SUPPORTED_PARTITIONS => out.slice::<ur_device_partition_t>(&[]),
        UR_DEVICE_INFO_PARTITION_TYPE => out.slice::<ur_device_partition_property_t>(&[]),
        UR_DEVICE_INFO_PARTITION_MAX_SUB_DEVICES | UR_DEVICE_INFO_PARTITION_AFFINITY_DOMAIN => out.value(0u32),
        UR_DEVICE_INFO_USM_HOST_SUPPORT
        | UR_DEVICE_INFO_USM_DEVICE_SUPPORT
        | UR_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT
        | UR_DEVICE_INFO_USM_CROSS_SHARED_SUPPORT
        | UR_DEVICE_INFO_USM_SYSTEM_SHARED_SUPPORT => out.value(FULL_USM_ACCESS),
        UR_DEVICE_INFO_UUID => match h.uuid {
            Some(uuid) => out.slice(&uuid),
            None => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        },
        UR_DEVICE_INFO_BUILD_ON_SUBDEVICE => out.bool(false),
        UR_DEVICE_INFO_ATOMIC_64 => out.bool(true),
        UR_DEVICE_INFO_ATOMIC_MEMORY_ORDER_CAPABILITIES | UR_DEVICE_INFO_ATOMIC_FENCE_ORDER_CAPABILITIES => {
            out.value(ALL_MEMORY_ORDERS)
        }
        UR_DEVICE_INFO_ATOMIC_MEMORY_SCOPE_CAPABILITIES | UR_DEVICE_INFO_ATOMIC_FENCE_SCOPE_CAPABILITIES => {
            out.value(ALL_MEMORY_SCOPES)
        }
        UR_DEVICE_INFO_BFLOAT16 | UR_DEVICE_INFO_BFLOAT16_CONVERSIONS_NATIVE => out.bool(h.has_bf16),
        UR_DEVICE_INFO_MAX_COMPUTE_QUEUE_INDICES => out.value(1u32),
        UR_DEVICE_INFO_COMPONENT_DEVICES => out.slice::<ur_device_handle_t>(&[]),
        UR_DEVICE_INFO_COMPOSITE_DEVICE => out.value(std::ptr::null_mut::<ur_device_handle_t_>()),
        UR_DEVICE_INFO_KERNEL_LAUNCH_CAPABILITIES
        | UR_DEVICE_INFO_COMMAND_BUFFER_UPDATE_CAPABILITIES_EXP
        | UR_DEVICE_INFO_2D_BLOCK_ARRAY_CAPABILITIES_EXP => out.value(0u32),
        // Kernel limits: see `device::kernel_limits`.
        UR_DEVICE_INFO_MAX_WORK_ITEM_DIMENSIONS => out.value(kernel_limits::WORK_ITEM_DIMENSIONS),
        UR_DEVICE_INFO_MAX_WORK_ITEM_SIZES => {
            out.slice(&[kernel_limits::WORK_GROUP_SIZE; kernel_limits::WORK_ITEM_DIMENSIONS as usize])
        }
        UR_DEVICE_INFO_MAX_WORK_GROUP_SIZE => out.value(kernel_limits::WORK_GROUP_SIZE),
        UR_DEVICE_INFO_MAX_NUM_SUB_GROUPS => out.value(kernel_limits::NUM_SUB_GROUPS),
        UR_DEVICE_INFO_SUB_GROUP_SIZES_INTEL => out.slice(&kernel_limits::SUB_GROUP_SIZES),
        UR_DEVICE_INFO_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS => out.bool(false),
        UR_DEVICE_INFO_MAX_WORK_GROUPS_3D => {
            out.slice(&[kernel_limits::WORK_GROUPS; kernel_limits::WORK_ITEM_DIMENSIONS as usize])
        }
        UR_DEVICE_INFO_MAX_WORK_GROUPS => out.value(kernel_limits::WORK_GROUPS),
        // Local memory is host memory, like everything else.
        UR_DEVICE_INFO_LOCAL_MEM_TYPE => out.value(UR_DEVICE_LOCAL_MEM_TYPE_GLOBAL),
        UR_DEVICE_INFO_LOCAL_MEM_SIZE => out.value(kernel_limits::LOCAL_MEM_SIZE),
        UR_DEVICE_INFO_MAX_PARAMETER_SIZE => out.value(kernel_limits::PARAMETER_SIZE),
        UR_DEVICE_INFO_MAX_CONSTANT_ARGS => out.value(kernel_limits::CONSTANT_ARGS),
        // Constant memory is host memory too: any allocation can hold it.
        UR_DEVICE_INFO_MAX_CONSTANT_BUFFER_SIZE => out.value(device.max_alloc_size()),
        UR_DEVICE_INFO_PRINTF_BUFFER_SIZE => out.value(kernel_limits::PRINTF_BUFFER_SIZE),
        UR_DEVICE_INFO_USM_POOL_SUPPORT => out.bool(device::USM_POOL_SUPPORT),
        UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP => out.bool(device::ASYNC_USM_ALLOCATIONS_SUPPORT),
        // Features no adapter of this project serves (ur_core::info).
        p if ur_core::info::is_unserved_feature(p) => out.bool(false),
        // Features this adapter does not offer.
        UR_DEVICE_INFO_KERNEL_SET_SPECIALIZATION_CONSTANTS
        | UR_DEVICE_INFO_PROGRAM_SET_SPECIALIZATION_CONSTANTS
        | UR_DEVICE_INFO_USE_NATIVE_ASSERT
        | UR_DEVICE_INFO_CLOCK_SUB_GROUP_SUPPORT_EXP
        | UR_DEVICE_INFO_CLOCK_WORK_GROUP_SUPPORT_EXP
        | UR_DEVICE_INFO_CLOCK_DEVICE_SUPPORT_EXP
        | UR_DEVICE_INFO_IS_INTEGRATED_GPU => out.bool(false),
        // Limits of features this adapter does not offer.
        UR_DEVICE_INFO_IMAGE_PITCH_ALIGN_EXP | UR_DEVICE_INFO_MIPMAP_MAX_ANISOTROPY_EXP => out.value(0u32),
        UR_DEVICE_INFO_MAX_IMAGE_LINEAR_WIDTH_EXP
        | UR_DEVICE_INFO_MAX_IMAGE_LINEAR_HEIGHT_EXP
        | UR_DEVICE_INFO_MAX_IMAGE_LINEAR_PITCH_EXP => out.value(0usize),
        // GPU facts, PCI and power data, device ids, IL (this adapter takes
        // no device code), registers: nothing true to answer.
        _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
    }
}
