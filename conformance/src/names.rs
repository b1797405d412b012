//! Printable names for the enumerations that appear in reports.

use ur_core::abi::*;

macro_rules! name_table {
    ($fn_name:ident, $ty:ty, [$($value:ident),* $(,)?]) => {
        /// The reference header's name for `value`, or its number when unknown.
        pub fn $fn_name(value: $ty) -> String {
            $( if value == $value { return stringify!($value).to_string(); } )*
            format!("{}(0x{:x})", stringify!($ty), value.0)
        }
    };
    // The same, and the named values as the list `$list`, in their order.
    ($fn_name:ident, $list:ident, $ty:ty, [$($value:ident),* $(,)?]) => {
        pub const $list: &[$ty] = &[$($value),*];
        name_table!($fn_name, $ty, [$($value),*]);
    };
}

name_table!(
    result_name,
    ur_result_t,
    [
        UR_RESULT_SUCCESS,
        UR_RESULT_ERROR_INVALID_OPERATION,
        UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES,
        UR_RESULT_ERROR_INVALID_QUEUE,
        UR_RESULT_ERROR_INVALID_VALUE,
        UR_RESULT_ERROR_INVALID_CONTEXT,
        UR_RESULT_ERROR_INVALID_PLATFORM,
        UR_RESULT_ERROR_INVALID_BINARY,
        UR_RESULT_ERROR_INVALID_PROGRAM,
        UR_RESULT_ERROR_INVALID_SAMPLER,
        UR_RESULT_ERROR_INVALID_BUFFER_SIZE,
        UR_RESULT_ERROR_INVALID_MEM_OBJECT,
        UR_RESULT_ERROR_INVALID_EVENT,
        UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST,
        UR_RESULT_ERROR_MISALIGNED_SUB_BUFFER_OFFSET,
        UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE,
        UR_RESULT_ERROR_COMPILER_NOT_AVAILABLE,
        UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE,
        UR_RESULT_ERROR_DEVICE_NOT_FOUND,
        UR_RESULT_ERROR_INVALID_DEVICE,
        UR_RESULT_ERROR_DEVICE_LOST,
        UR_RESULT_ERROR_DEVICE_REQUIRES_RESET,
        UR_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE,
        UR_RESULT_ERROR_DEVICE_PARTITION_FAILED,
        UR_RESULT_ERROR_INVALID_DEVICE_PARTITION_COUNT,
        UR_RESULT_ERROR_INVALID_WORK_ITEM_SIZE,
        UR_RESULT_ERROR_INVALID_WORK_DIMENSION,
        UR_RESULT_ERROR_INVALID_KERNEL_ARGS,
        UR_RESULT_ERROR_INVALID_KERNEL,
        UR_RESULT_ERROR_INVALID_KERNEL_NAME,
        UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX,
        UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE,
        UR_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE,
        UR_RESULT_ERROR_INVALID_IMAGE_SIZE,
        UR_RESULT_ERROR_INVALID_IMAGE_FORMAT_DESCRIPTOR,
        UR_RESULT_ERROR_MEM_OBJECT_ALLOCATION_FAILURE,
        UR_RESULT_ERROR_INVALID_PROGRAM_EXECUTABLE,
        UR_RESULT_ERROR_UNINITIALIZED,
        UR_RESULT_ERROR_OUT_OF_HOST_MEMORY,
        UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY,
        UR_RESULT_ERROR_OUT_OF_RESOURCES,
        UR_RESULT_ERROR_PROGRAM_BUILD_FAILURE,
        UR_RESULT_ERROR_PROGRAM_LINK_FAILURE,
        UR_RESULT_ERROR_UNSUPPORTED_VERSION,
        UR_RESULT_ERROR_UNSUPPORTED_FEATURE,
        UR_RESULT_ERROR_INVALID_ARGUMENT,
        UR_RESULT_ERROR_INVALID_NULL_HANDLE,
        UR_RESULT_ERROR_HANDLE_OBJECT_IN_USE,
        UR_RESULT_ERROR_INVALID_NULL_POINTER,
        UR_RESULT_ERROR_INVALID_SIZE,
        UR_RESULT_ERROR_UNSUPPORTED_SIZE,
        UR_RESULT_ERROR_UNSUPPORTED_ALIGNMENT,
        UR_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT,
        UR_RESULT_ERROR_INVALID_ENUMERATION,
        UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION,
        UR_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT,
        UR_RESULT_ERROR_INVALID_NATIVE_BINARY,
        UR_RESULT_ERROR_INVALID_GLOBAL_NAME,
        UR_RESULT_ERROR_FUNCTION_ADDRESS_NOT_AVAILABLE,
        UR_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION,
        UR_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION,
        UR_RESULT_ERROR_PROGRAM_UNLINKED,
        UR_RESULT_ERROR_OVERLAPPING_REGIONS,
        UR_RESULT_ERROR_INVALID_HOST_PTR,
        UR_RESULT_ERROR_INVALID_USM_SIZE,
        UR_RESULT_ERROR_OBJECT_ALLOCATION_FAILURE,
        UR_RESULT_ERROR_ADAPTER_SPECIFIC,
        UR_RESULT_ERROR_LAYER_NOT_PRESENT,
        UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS,
        UR_RESULT_ERROR_DEVICE_NOT_AVAILABLE,
        UR_RESULT_ERROR_INVALID_SPEC_ID,
        UR_RESULT_ERROR_INVALID_GRAPH,
        UR_RESULT_ERROR_GRAPH_CAPTURE_UNSUPPORTED,
        UR_RESULT_ERROR_GRAPH_CAPTURE_INVALIDATED,
        UR_RESULT_ERROR_GRAPH_CAPTURE_MERGE_ATTEMPT,
        UR_RESULT_ERROR_COMMAND_LIST_NOT_CAPTURING,
        UR_RESULT_ERROR_GRAPH_UNJOINED_FORKS,
        UR_RESULT_ERROR_GRAPH_INTERNAL_EVENT,
        UR_RESULT_ERROR_INVALID_COMMAND_BUFFER_EXP,
        UR_RESULT_ERROR_INVALID_COMMAND_BUFFER_SYNC_POINT_EXP,
        UR_RESULT_ERROR_INVALID_COMMAND_BUFFER_SYNC_POINT_WAIT_LIST_EXP,
        UR_RESULT_ERROR_INVALID_COMMAND_BUFFER_COMMAND_HANDLE_EXP,
        UR_RESULT_ERROR_UNKNOWN,
    ]
);

name_table!(
    device_type_name,
    DEVICE_TYPES,
    ur_device_type_t,
    [
        UR_DEVICE_TYPE_DEFAULT,
        UR_DEVICE_TYPE_ALL,
        UR_DEVICE_TYPE_GPU,
        UR_DEVICE_TYPE_CPU,
        UR_DEVICE_TYPE_FPGA,
        UR_DEVICE_TYPE_MCA,
        UR_DEVICE_TYPE_VPU,
        UR_DEVICE_TYPE_CUSTOM,
    ]
);

name_table!(
    event_status_name,
    ur_event_status_t,
    [
        UR_EVENT_STATUS_COMPLETE,
        UR_EVENT_STATUS_RUNNING,
        UR_EVENT_STATUS_SUBMITTED,
        UR_EVENT_STATUS_QUEUED,
        UR_EVENT_STATUS_ERROR,
    ]
);

name_table!(
    usm_type_name,
    ur_usm_type_t,
    [UR_USM_TYPE_UNKNOWN, UR_USM_TYPE_HOST, UR_USM_TYPE_DEVICE, UR_USM_TYPE_SHARED,]
);

/// Backends by the names that `--backend` and reports use.
const BACKENDS: &[(&str, ur_backend_t)] = &[
    ("level_zero", UR_BACKEND_LEVEL_ZERO),
    ("opencl", UR_BACKEND_OPENCL),
    ("cuda", UR_BACKEND_CUDA),
    ("hip", UR_BACKEND_HIP),
    ("native_cpu", UR_BACKEND_NATIVE_CPU),
    ("offload", UR_BACKEND_OFFLOAD),
];

/// The short name of a backend (`native_cpu`, `cuda`, ...).
pub fn backend_name(backend: ur_backend_t) -> String {
    BACKENDS
        .iter()
        .find(|(_, b)| *b == backend)
        .map(|(name, _)| name.to_string())
        .unwrap_or_else(|| format!("backend_{}", backend.0))
}

/// The backend that `--backend NAME` means, if any.
pub fn backend_by_name(name: &str) -> Option<ur_backend_t> {
    BACKENDS.iter().find(|(n, _)| *n == name).map(|(_, b)| *b)
}

/// Every backend name `--backend` accepts.
pub fn backend_names() -> Vec<&'static str> {
    BACKENDS.iter().map(|(n, _)| *n).collect()
}
