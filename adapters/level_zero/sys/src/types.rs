//! Handles and the structs of `ze_api.h` that the adapter and the host
//! driver read or fill, written by hand. Every struct is listed in
//! `STRUCT_LAYOUTS`, which the ABI test compares with the C compiler's view.
#![allow(non_camel_case_types, non_snake_case)]

use core::ffi::{c_char, c_void};

use crate::generated::{
    ze_command_queue_mode_t, ze_command_queue_priority_t, ze_device_type_t, ze_memory_type_t, ze_structure_type_t,
};

pub type ze_bool_t = u8;

/// Name, size, alignment and (field, offset) pairs of one C type.
pub type Layout = (&'static str, usize, usize, &'static [(&'static str, usize)]);

macro_rules! handles {
    ($($opaque:ident => $handle:ident),* $(,)?) => {$(
        /// Opaque object behind a handle; only ever used by pointer.
        #[repr(C)]
        pub struct $opaque { _private: [u8; 0] }
        pub type $handle = *mut $opaque;
    )*};
}

handles! {
    _ze_driver_handle_t => ze_driver_handle_t,
    _ze_device_handle_t => ze_device_handle_t,
    _ze_context_handle_t => ze_context_handle_t,
    _ze_command_queue_handle_t => ze_command_queue_handle_t,
    _ze_command_list_handle_t => ze_command_list_handle_t,
    _ze_fence_handle_t => ze_fence_handle_t,
    _ze_event_pool_handle_t => ze_event_pool_handle_t,
    _ze_event_handle_t => ze_event_handle_t,
    _ze_image_handle_t => ze_image_handle_t,
    _ze_module_handle_t => ze_module_handle_t,
    _ze_module_build_log_handle_t => ze_module_build_log_handle_t,
    _ze_kernel_handle_t => ze_kernel_handle_t,
    _ze_sampler_handle_t => ze_sampler_handle_t,
    _ze_physical_mem_handle_t => ze_physical_mem_handle_t,
    _ze_fabric_vertex_handle_t => ze_fabric_vertex_handle_t,
    _ze_fabric_edge_handle_t => ze_fabric_edge_handle_t,
}

pub const ZE_MAX_IPC_HANDLE_SIZE: usize = 64;
pub const ZE_MAX_DRIVER_UUID_SIZE: usize = 16;
pub const ZE_MAX_DEVICE_UUID_SIZE: usize = 16;
pub const ZE_MAX_DEVICE_NAME: usize = 256;
pub const ZE_SUBGROUPSIZE_COUNT: usize = 8;

/// `ZE_MAKE_VERSION`: major in the high 16 bits.
pub const fn ze_make_version(major: u32, minor: u32) -> u32 {
    (major << 16) | (minor & 0xffff)
}

/// Declares `#[repr(C)]` structs and their entry in `STRUCT_LAYOUTS`.
macro_rules! structs {
    ($($name:ident { $($field:ident : $ty:ty),* $(,)? })*) => {
        $(
            #[repr(C)]
            #[derive(Clone, Copy)]
            pub struct $name { $(pub $field: $ty),* }
        )*
        /// Every hand-written struct, for the ABI test.
        pub const STRUCT_LAYOUTS: &[Layout] = &[$(
            (stringify!($name), core::mem::size_of::<$name>(), core::mem::align_of::<$name>(),
             &[$((stringify!($field), core::mem::offset_of!($name, $field))),*]),
        )*];
    };
}

structs! {
    ze_driver_uuid_t { id: [u8; ZE_MAX_DRIVER_UUID_SIZE] }
    ze_driver_properties_t { stype: ze_structure_type_t, pNext: *mut c_void, uuid: ze_driver_uuid_t, driverVersion: u32 }
    ze_driver_ipc_properties_t { stype: ze_structure_type_t, pNext: *mut c_void, flags: u32 }
    ze_device_uuid_t { id: [u8; ZE_MAX_DEVICE_UUID_SIZE] }
    ze_device_properties_t {
        stype: ze_structure_type_t, pNext: *mut c_void, r#type: ze_device_type_t, vendorId: u32, deviceId: u32,
        flags: u32, subdeviceId: u32, coreClockRate: u32, maxMemAllocSize: u64, maxHardwareContexts: u32,
        maxCommandQueuePriority: u32, numThreadsPerEU: u32, physicalEUSimdWidth: u32, numEUsPerSubslice: u32,
        numSubslicesPerSlice: u32, numSlices: u32, timerResolution: u64, timestampValidBits: u32,
        kernelTimestampValidBits: u32, uuid: ze_device_uuid_t, name: [c_char; ZE_MAX_DEVICE_NAME],
    }
    ze_device_compute_properties_t {
        stype: ze_structure_type_t, pNext: *mut c_void, maxTotalGroupSize: u32, maxGroupSizeX: u32,
        maxGroupSizeY: u32, maxGroupSizeZ: u32, maxGroupCountX: u32, maxGroupCountY: u32, maxGroupCountZ: u32,
        maxSharedLocalMemory: u32, numSubGroupSizes: u32, subGroupSizes: [u32; ZE_SUBGROUPSIZE_COUNT],
    }
    ze_device_memory_properties_t {
        stype: ze_structure_type_t, pNext: *mut c_void, flags: u32, maxClockRate: u32, maxBusWidth: u32,
        totalSize: u64, name: [c_char; ZE_MAX_DEVICE_NAME],
    }
    ze_device_memory_access_properties_t {
        stype: ze_structure_type_t, pNext: *mut c_void, hostAllocCapabilities: u32, deviceAllocCapabilities: u32,
        sharedSingleDeviceAllocCapabilities: u32, sharedCrossDeviceAllocCapabilities: u32,
        sharedSystemAllocCapabilities: u32,
    }
    ze_command_queue_group_properties_t {
        stype: ze_structure_type_t, pNext: *mut c_void, flags: u32, maxMemoryFillPatternSize: usize, numQueues: u32,
    }
    ze_context_desc_t { stype: ze_structure_type_t, pNext: *const c_void, flags: u32 }
    ze_device_mem_alloc_desc_t { stype: ze_structure_type_t, pNext: *const c_void, flags: u32, ordinal: u32 }
    ze_host_mem_alloc_desc_t { stype: ze_structure_type_t, pNext: *const c_void, flags: u32 }
    ze_memory_allocation_properties_t {
        stype: ze_structure_type_t, pNext: *mut c_void, r#type: ze_memory_type_t, id: u64, pageSize: u64,
    }
    ze_command_queue_desc_t {
        stype: ze_structure_type_t, pNext: *const c_void, ordinal: u32, index: u32, flags: u32,
        mode: ze_command_queue_mode_t, priority: ze_command_queue_priority_t,
    }
    ze_command_list_desc_t { stype: ze_structure_type_t, pNext: *const c_void, commandQueueGroupOrdinal: u32, flags: u32 }
    ze_event_pool_desc_t { stype: ze_structure_type_t, pNext: *const c_void, flags: u32, count: u32 }
    ze_event_desc_t { stype: ze_structure_type_t, pNext: *const c_void, index: u32, signal: u32, wait: u32 }
    ze_fence_desc_t { stype: ze_structure_type_t, pNext: *const c_void, flags: u32 }
    ze_kernel_timestamp_data_t { kernelStart: u64, kernelEnd: u64 }
    ze_kernel_timestamp_result_t { global: ze_kernel_timestamp_data_t, context: ze_kernel_timestamp_data_t }
    ze_copy_region_t { originX: u32, originY: u32, originZ: u32, width: u32, height: u32, depth: u32 }
    ze_ipc_mem_handle_t { data: [c_char; ZE_MAX_IPC_HANDLE_SIZE] }
    ze_ipc_event_pool_handle_t { data: [c_char; ZE_MAX_IPC_HANDLE_SIZE] }
    ze_device_thread_t { slice: u32, subslice: u32, eu: u32, thread: u32 }
}
