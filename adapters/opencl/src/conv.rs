//! Every translation between UR's and OpenCL's enums, flags and error codes,
//! in one place.

use cl3::ext as cl;
use cl3::error_codes::{DLOPEN_FUNCTION_NOT_AVAILABLE, DLOPEN_RUNTIME_LOAD_FAILED};
use cl::{cl_bitfield, cl_int, cl_uint, cl_ulong};
use ur_core::*;

/// The UR code for a `clCreateSubDevices` error.
pub fn partition_result(e: cl_int) -> ur_result_t {
    match e {
        cl::CL_DEVICE_PARTITION_FAILED => UR_RESULT_ERROR_DEVICE_PARTITION_FAILED,
        cl::CL_INVALID_DEVICE_PARTITION_COUNT => UR_RESULT_ERROR_INVALID_DEVICE_PARTITION_COUNT,
        e => result(e),
    }
}

/// The UR code for an OpenCL error returned by a call that has no more
/// specific mapping of its own.
pub fn result(e: cl_int) -> ur_result_t {
    match e {
        cl::CL_SUCCESS => UR_RESULT_SUCCESS,
        cl::CL_DEVICE_NOT_FOUND => UR_RESULT_ERROR_DEVICE_NOT_FOUND,
        cl::CL_DEVICE_NOT_AVAILABLE => UR_RESULT_ERROR_DEVICE_NOT_AVAILABLE,
        cl::CL_COMPILER_NOT_AVAILABLE | cl::CL_LINKER_NOT_AVAILABLE => UR_RESULT_ERROR_COMPILER_NOT_AVAILABLE,
        cl::CL_MEM_OBJECT_ALLOCATION_FAILURE => UR_RESULT_ERROR_MEM_OBJECT_ALLOCATION_FAILURE,
        cl::CL_OUT_OF_RESOURCES => UR_RESULT_ERROR_OUT_OF_RESOURCES,
        cl::CL_OUT_OF_HOST_MEMORY => UR_RESULT_ERROR_OUT_OF_HOST_MEMORY,
        cl::CL_PROFILING_INFO_NOT_AVAILABLE => UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE,
        cl::CL_MEM_COPY_OVERLAP => UR_RESULT_ERROR_OVERLAPPING_REGIONS,
        cl::CL_BUILD_PROGRAM_FAILURE | cl::CL_COMPILE_PROGRAM_FAILURE => UR_RESULT_ERROR_PROGRAM_BUILD_FAILURE,
        cl::CL_LINK_PROGRAM_FAILURE => UR_RESULT_ERROR_PROGRAM_LINK_FAILURE,
        cl::CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST => UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS,
        cl::CL_INVALID_VALUE => UR_RESULT_ERROR_INVALID_VALUE,
        cl::CL_INVALID_DEVICE_TYPE => UR_RESULT_ERROR_INVALID_ENUMERATION,
        cl::CL_INVALID_PLATFORM => UR_RESULT_ERROR_INVALID_PLATFORM,
        cl::CL_INVALID_DEVICE => UR_RESULT_ERROR_INVALID_DEVICE,
        cl::CL_INVALID_CONTEXT => UR_RESULT_ERROR_INVALID_CONTEXT,
        cl::CL_INVALID_QUEUE_PROPERTIES => UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES,
        cl::CL_INVALID_COMMAND_QUEUE => UR_RESULT_ERROR_INVALID_QUEUE,
        cl::CL_INVALID_HOST_PTR => UR_RESULT_ERROR_INVALID_HOST_PTR,
        cl::CL_INVALID_MEM_OBJECT => UR_RESULT_ERROR_INVALID_MEM_OBJECT,
        cl::CL_INVALID_BINARY => UR_RESULT_ERROR_INVALID_BINARY,
        cl::CL_INVALID_BUILD_OPTIONS | cl::CL_INVALID_COMPILER_OPTIONS | cl::CL_INVALID_LINKER_OPTIONS => {
            UR_RESULT_ERROR_INVALID_VALUE
        }
        cl::CL_INVALID_PROGRAM => UR_RESULT_ERROR_INVALID_PROGRAM,
        cl::CL_INVALID_PROGRAM_EXECUTABLE => UR_RESULT_ERROR_INVALID_PROGRAM_EXECUTABLE,
        cl::CL_INVALID_KERNEL_NAME => UR_RESULT_ERROR_INVALID_KERNEL_NAME,
        cl::CL_INVALID_KERNEL_DEFINITION | cl::CL_INVALID_KERNEL => UR_RESULT_ERROR_INVALID_KERNEL,
        cl::CL_INVALID_ARG_INDEX => UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX,
        cl::CL_INVALID_ARG_VALUE => UR_RESULT_ERROR_INVALID_KERNEL_ARGS,
        cl::CL_INVALID_ARG_SIZE => UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE,
        cl::CL_INVALID_KERNEL_ARGS => UR_RESULT_ERROR_INVALID_KERNEL_ARGS,
        cl::CL_INVALID_WORK_DIMENSION => UR_RESULT_ERROR_INVALID_WORK_DIMENSION,
        cl::CL_INVALID_WORK_GROUP_SIZE => UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE,
        cl::CL_INVALID_WORK_ITEM_SIZE => UR_RESULT_ERROR_INVALID_WORK_ITEM_SIZE,
        cl::CL_INVALID_GLOBAL_OFFSET => UR_RESULT_ERROR_INVALID_VALUE,
        cl::CL_INVALID_GLOBAL_WORK_SIZE => UR_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION,
        cl::CL_INVALID_EVENT_WAIT_LIST => UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST,
        cl::CL_INVALID_EVENT => UR_RESULT_ERROR_INVALID_EVENT,
        cl::CL_INVALID_OPERATION => UR_RESULT_ERROR_INVALID_OPERATION,
        cl::CL_INVALID_BUFFER_SIZE => UR_RESULT_ERROR_INVALID_BUFFER_SIZE,
        cl::CL_MISALIGNED_SUB_BUFFER_OFFSET => UR_RESULT_ERROR_MISALIGNED_SUB_BUFFER_OFFSET,
        cl::CL_INVALID_PROPERTY => UR_RESULT_ERROR_INVALID_VALUE,
        cl::CL_INVALID_SPEC_ID => UR_RESULT_ERROR_INVALID_SPEC_ID,
        cl::CL_INVALID_DEVICE_QUEUE => UR_RESULT_ERROR_INVALID_QUEUE,
        cl::CL_PLATFORM_NOT_FOUND_KHR => UR_RESULT_ERROR_DEVICE_NOT_FOUND,
        // The ICD loader or one of its entry points is missing.
        DLOPEN_RUNTIME_LOAD_FAILED | DLOPEN_FUNCTION_NOT_AVAILABLE => UR_RESULT_ERROR_UNSUPPORTED_FEATURE,
        _ => UR_RESULT_ERROR_UNKNOWN,
    }
}

/// Maps OpenCL results to `UrResult`s.
pub trait ClResultExt<T> {
    fn ur(self) -> UrResult<T>;
}

impl<T> ClResultExt<T> for Result<T, cl_int> {
    fn ur(self) -> UrResult<T> {
        self.map_err(result)
    }
}

impl<T> ClResultExt<T> for Result<T, cl3::error_codes::ClError> {
    fn ur(self) -> UrResult<T> {
        self.map_err(|e| result(e.0))
    }
}

/// `cl_int` status of a raw call as a `Result`.
pub fn check(status: cl_int) -> Result<(), cl_int> {
    if status == cl::CL_SUCCESS {
        Ok(())
    } else {
        Err(status)
    }
}

/// Maps each set bit of UR `flags` found in `table` to its OpenCL bit.
fn to_cl_bits(flags: u32, table: &[(u32, cl_bitfield)]) -> cl_bitfield {
    table.iter().filter(|(ur, _)| flags & ur != 0).fold(0, |acc, (_, cl)| acc | cl)
}

/// A buffer's flags (checked by the core) as `clCreateBuffer` takes them.
pub fn mem_flags(flags: ur_mem_flags_t) -> cl::cl_mem_flags {
    to_cl_bits(
        flags,
        &[
            (UR_MEM_FLAG_READ_WRITE.0, cl::CL_MEM_READ_WRITE),
            (UR_MEM_FLAG_WRITE_ONLY.0, cl::CL_MEM_WRITE_ONLY),
            (UR_MEM_FLAG_READ_ONLY.0, cl::CL_MEM_READ_ONLY),
            (UR_MEM_FLAG_USE_HOST_POINTER.0, cl::CL_MEM_USE_HOST_PTR),
            (UR_MEM_FLAG_ALLOC_HOST_POINTER.0, cl::CL_MEM_ALLOC_HOST_PTR),
            (UR_MEM_FLAG_ALLOC_COPY_HOST_POINTER.0, cl::CL_MEM_COPY_HOST_PTR),
        ],
    )
}

/// A map's flags (checked by the core; 0 reads and writes).
pub fn map_flags(flags: ur_map_flags_t) -> cl::cl_map_flags {
    if flags == 0 {
        return cl::CL_MAP_READ | cl::CL_MAP_WRITE;
    }
    to_cl_bits(
        flags,
        &[
            (UR_MAP_FLAG_READ.0, cl::CL_MAP_READ),
            (UR_MAP_FLAG_WRITE.0, cl::CL_MAP_WRITE),
            (UR_MAP_FLAG_WRITE_INVALIDATE_REGION.0, cl::CL_MAP_WRITE_INVALIDATE_REGION),
        ],
    )
}

/// The OpenCL device-type filter of a `urDeviceGet`; `None` for a UR type
/// that OpenCL cannot name (it simply matches nothing).
pub fn device_type_filter(t: ur_device_type_t) -> UrResult<Option<cl::cl_device_type>> {
    Ok(Some(match t {
        UR_DEVICE_TYPE_DEFAULT => cl::CL_DEVICE_TYPE_DEFAULT,
        UR_DEVICE_TYPE_ALL => cl::CL_DEVICE_TYPE_ALL,
        UR_DEVICE_TYPE_GPU => cl::CL_DEVICE_TYPE_GPU,
        UR_DEVICE_TYPE_CPU => cl::CL_DEVICE_TYPE_CPU,
        UR_DEVICE_TYPE_FPGA => cl::CL_DEVICE_TYPE_ACCELERATOR,
        UR_DEVICE_TYPE_CUSTOM => cl::CL_DEVICE_TYPE_CUSTOM,
        UR_DEVICE_TYPE_MCA | UR_DEVICE_TYPE_VPU => return Ok(None),
        _ => return Err(UR_RESULT_ERROR_INVALID_ENUMERATION),
    }))
}

pub fn device_type(t: cl::cl_device_type) -> ur_device_type_t {
    if t & cl::CL_DEVICE_TYPE_GPU != 0 {
        UR_DEVICE_TYPE_GPU
    } else if t & cl::CL_DEVICE_TYPE_CPU != 0 {
        UR_DEVICE_TYPE_CPU
    } else if t & cl::CL_DEVICE_TYPE_ACCELERATOR != 0 {
        UR_DEVICE_TYPE_FPGA
    } else if t & cl::CL_DEVICE_TYPE_CUSTOM != 0 {
        UR_DEVICE_TYPE_CUSTOM
    } else {
        UR_DEVICE_TYPE_DEFAULT
    }
}

/// Maps each set bit of `bits` found in `table` to its counterpart.
fn map_bits(bits: u64, table: &[(u64, u32)]) -> u32 {
    table.iter().filter(|(from, _)| bits & from != 0).fold(0, |acc, (_, to)| acc | to)
}

pub fn fp_config(c: cl::cl_device_fp_config) -> ur_device_fp_capability_flags_t {
    map_bits(
        c,
        &[
            (cl::CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT, UR_DEVICE_FP_CAPABILITY_FLAG_CORRECTLY_ROUNDED_DIVIDE_SQRT.0),
            (cl::CL_FP_ROUND_TO_NEAREST, UR_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_NEAREST.0),
            (cl::CL_FP_ROUND_TO_ZERO, UR_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_ZERO.0),
            (cl::CL_FP_ROUND_TO_INF, UR_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_INF.0),
            (cl::CL_FP_INF_NAN, UR_DEVICE_FP_CAPABILITY_FLAG_INF_NAN.0),
            (cl::CL_FP_DENORM, UR_DEVICE_FP_CAPABILITY_FLAG_DENORM.0),
            (cl::CL_FP_FMA, UR_DEVICE_FP_CAPABILITY_FLAG_FMA.0),
            (cl::CL_FP_SOFT_FLOAT, UR_DEVICE_FP_CAPABILITY_FLAG_SOFT_FLOAT.0),
        ],
    )
}

pub fn exec_capabilities(c: cl::cl_device_exec_capabilities) -> ur_device_exec_capability_flags_t {
    map_bits(
        c,
        &[
            (cl::CL_EXEC_KERNEL, UR_DEVICE_EXEC_CAPABILITY_FLAG_KERNEL.0),
            (cl::CL_EXEC_NATIVE_KERNEL, UR_DEVICE_EXEC_CAPABILITY_FLAG_NATIVE_KERNEL.0),
        ],
    )
}

/// OpenCL queue properties a device reports, as UR queue flags.
pub fn queue_properties_to_ur(p: cl::cl_command_queue_properties) -> ur_queue_flags_t {
    map_bits(
        p,
        &[
            (cl::CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0),
            (cl::CL_QUEUE_PROFILING_ENABLE, UR_QUEUE_FLAG_PROFILING_ENABLE.0),
            (cl::CL_QUEUE_ON_DEVICE, UR_QUEUE_FLAG_ON_DEVICE.0),
            (cl::CL_QUEUE_ON_DEVICE_DEFAULT, UR_QUEUE_FLAG_ON_DEVICE_DEFAULT.0),
        ],
    )
}

/// The OpenCL properties for a UR queue: only ordering and profiling have an
/// OpenCL meaning; priority, submission and event hints are UR-side only.
pub fn queue_flags_to_cl(f: ur_queue_flags_t) -> cl::cl_command_queue_properties {
    let mut p = 0;
    if f & UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0 != 0 {
        p |= cl::CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
    }
    if f & UR_QUEUE_FLAG_PROFILING_ENABLE.0 != 0 {
        p |= cl::CL_QUEUE_PROFILING_ENABLE;
    }
    p
}

pub fn mem_cache_type(t: cl_uint) -> ur_device_mem_cache_type_t {
    match t {
        cl::CL_READ_ONLY_CACHE => UR_DEVICE_MEM_CACHE_TYPE_READ_ONLY_CACHE,
        cl::CL_READ_WRITE_CACHE => UR_DEVICE_MEM_CACHE_TYPE_READ_WRITE_CACHE,
        _ => UR_DEVICE_MEM_CACHE_TYPE_NONE,
    }
}

pub fn local_mem_type(t: cl_uint) -> ur_device_local_mem_type_t {
    match t {
        cl::CL_LOCAL => UR_DEVICE_LOCAL_MEM_TYPE_LOCAL,
        cl::CL_GLOBAL => UR_DEVICE_LOCAL_MEM_TYPE_GLOBAL,
        _ => UR_DEVICE_LOCAL_MEM_TYPE_NONE,
    }
}

/// OpenCL 3.0 atomic capabilities as UR memory-order flags. OpenCL's
/// acquire-release implies UR's separate acquire and release.
pub fn atomic_order_capabilities(c: cl_bitfield) -> ur_memory_order_capability_flags_t {
    map_bits(
        c,
        &[
            (cl::CL_DEVICE_ATOMIC_ORDER_RELAXED, UR_MEMORY_ORDER_CAPABILITY_FLAG_RELAXED.0),
            (
                cl::CL_DEVICE_ATOMIC_ORDER_ACQ_REL,
                UR_MEMORY_ORDER_CAPABILITY_FLAG_ACQUIRE.0
                    | UR_MEMORY_ORDER_CAPABILITY_FLAG_RELEASE.0
                    | UR_MEMORY_ORDER_CAPABILITY_FLAG_ACQ_REL.0,
            ),
            (cl::CL_DEVICE_ATOMIC_ORDER_SEQ_CST, UR_MEMORY_ORDER_CAPABILITY_FLAG_SEQ_CST.0),
        ],
    )
}

/// OpenCL 3.0 atomic scopes as UR memory-scope flags. Scopes nest (work-item
/// in sub-group in work-group in device in system), and what holds for all
/// work-items of a scope holds for those of every scope inside it, so each
/// scope brings the narrower ones along; OpenCL has no sub-group bit at all.
pub fn atomic_scope_capabilities(c: cl_bitfield) -> ur_memory_scope_capability_flags_t {
    let nested = [
        (cl::CL_DEVICE_ATOMIC_SCOPE_WORK_ITEM, UR_MEMORY_SCOPE_CAPABILITY_FLAG_WORK_ITEM.0),
        (0, UR_MEMORY_SCOPE_CAPABILITY_FLAG_SUB_GROUP.0),
        (cl::CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP, UR_MEMORY_SCOPE_CAPABILITY_FLAG_WORK_GROUP.0),
        (cl::CL_DEVICE_ATOMIC_SCOPE_DEVICE, UR_MEMORY_SCOPE_CAPABILITY_FLAG_DEVICE.0),
        (cl::CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES, UR_MEMORY_SCOPE_CAPABILITY_FLAG_SYSTEM.0),
    ];
    match nested.iter().rposition(|(from, _)| c & from != 0) {
        Some(widest) => nested[..=widest].iter().fold(0, |acc, (_, to)| acc | to),
        None => 0,
    }
}

/// The `cl_khr_kernel_clock` scope bit a UR clock query asks about.
pub fn kernel_clock_scope(prop: ur_device_info_t) -> cl_bitfield {
    match prop {
        UR_DEVICE_INFO_CLOCK_SUB_GROUP_SUPPORT_EXP => cl::CL_DEVICE_KERNEL_CLOCK_SCOPE_SUB_GROUP_KHR,
        UR_DEVICE_INFO_CLOCK_WORK_GROUP_SUPPORT_EXP => cl::CL_DEVICE_KERNEL_CLOCK_SCOPE_WORK_GROUP_KHR,
        UR_DEVICE_INFO_CLOCK_DEVICE_SUPPORT_EXP => cl::CL_DEVICE_KERNEL_CLOCK_SCOPE_DEVICE_KHR,
        _ => 0,
    }
}

/// `cl_intel_unified_shared_memory` capabilities: the extension's four bits
/// are UR's four bits, in the same order.
pub fn usm_capabilities(c: cl_bitfield) -> ur_device_usm_access_capability_flags_t {
    map_bits(
        c,
        &[
            (cl::CL_UNIFIED_SHARED_MEMORY_ACCESS_INTEL, UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ACCESS.0),
            (cl::CL_UNIFIED_SHARED_MEMORY_ATOMIC_ACCESS_INTEL, UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ATOMIC_ACCESS.0),
            (
                cl::CL_UNIFIED_SHARED_MEMORY_CONCURRENT_ACCESS_INTEL,
                UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_CONCURRENT_ACCESS.0,
            ),
            (
                cl::CL_UNIFIED_SHARED_MEMORY_CONCURRENT_ATOMIC_ACCESS_INTEL,
                UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ATOMIC_CONCURRENT_ACCESS.0,
            ),
        ],
    )
}

/// The USM access a device offers through OpenCL 2.0 SVM alone.
pub struct SvmUsm {
    pub host: ur_device_usm_access_capability_flags_t,
    pub device: ur_device_usm_access_capability_flags_t,
    pub shared: ur_device_usm_access_capability_flags_t,
    pub system: ur_device_usm_access_capability_flags_t,
}

/// Device memory is coarse-grained SVM, which only the device touches.
/// Host and shared memory must be usable from the host at any time, which
/// only fine-grained buffers give; without them the device offers neither.
pub fn svm_usm_capabilities(svm: cl::cl_device_svm_capabilities) -> SvmUsm {
    let atomics = svm & cl::CL_DEVICE_SVM_ATOMICS != 0;
    let concurrent = UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ACCESS.0
        | UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_CONCURRENT_ACCESS.0
        | if atomics {
            UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ATOMIC_ACCESS.0
                | UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ATOMIC_CONCURRENT_ACCESS.0
        } else {
            0
        };
    let device = if svm & (cl::CL_DEVICE_SVM_COARSE_GRAIN_BUFFER | cl::CL_DEVICE_SVM_FINE_GRAIN_BUFFER) != 0 {
        UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ACCESS.0
            | if atomics { UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ATOMIC_ACCESS.0 } else { 0 }
    } else {
        0
    };
    let fine = if svm & cl::CL_DEVICE_SVM_FINE_GRAIN_BUFFER != 0 { concurrent } else { 0 };
    let system = if svm & cl::CL_DEVICE_SVM_FINE_GRAIN_SYSTEM != 0 { concurrent } else { 0 };
    SvmUsm { host: fine, device, shared: fine, system }
}

/// `CL_EVENT_COMMAND_EXECUTION_STATUS` as a UR status: OpenCL's four states
/// have UR's values; any negative value is an error.
pub fn event_status(s: cl_int) -> ur_event_status_t {
    match s {
        cl::CL_COMPLETE => UR_EVENT_STATUS_COMPLETE,
        cl::CL_RUNNING => UR_EVENT_STATUS_RUNNING,
        cl::CL_SUBMITTED => UR_EVENT_STATUS_SUBMITTED,
        cl::CL_QUEUED => UR_EVENT_STATUS_QUEUED,
        _ => UR_EVENT_STATUS_ERROR,
    }
}

/// The OpenCL status a UR callback status waits for.
pub fn execution_info(s: ur_execution_info_t) -> UrResult<cl_int> {
    match s {
        UR_EXECUTION_INFO_COMPLETE => Ok(cl::CL_COMPLETE),
        UR_EXECUTION_INFO_RUNNING => Ok(cl::CL_RUNNING),
        UR_EXECUTION_INFO_SUBMITTED => Ok(cl::CL_SUBMITTED),
        // The core lets only the three above through to `set_callback`.
        _ => Err(UR_RESULT_ERROR_INVALID_ENUMERATION),
    }
}

pub fn profiling_info(p: ur_profiling_info_t) -> UrResult<cl::cl_profiling_info> {
    Ok(match p {
        UR_PROFILING_INFO_COMMAND_QUEUED => cl::CL_PROFILING_COMMAND_QUEUED,
        UR_PROFILING_INFO_COMMAND_SUBMIT => cl::CL_PROFILING_COMMAND_SUBMIT,
        UR_PROFILING_INFO_COMMAND_START => cl::CL_PROFILING_COMMAND_START,
        UR_PROFILING_INFO_COMMAND_END => cl::CL_PROFILING_COMMAND_END,
        UR_PROFILING_INFO_COMMAND_COMPLETE => cl::CL_PROFILING_COMMAND_COMPLETE,
        _ => return Err(UR_RESULT_ERROR_INVALID_ENUMERATION),
    })
}

pub fn build_status(s: cl_int) -> ur_program_build_status_t {
    match s {
        cl::CL_BUILD_SUCCESS => UR_PROGRAM_BUILD_STATUS_SUCCESS,
        cl::CL_BUILD_ERROR => UR_PROGRAM_BUILD_STATUS_ERROR,
        cl::CL_BUILD_IN_PROGRESS => UR_PROGRAM_BUILD_STATUS_IN_PROGRESS,
        _ => UR_PROGRAM_BUILD_STATUS_NONE,
    }
}

pub fn binary_type(t: cl_uint) -> ur_program_binary_type_t {
    match t {
        cl::CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT => UR_PROGRAM_BINARY_TYPE_COMPILED_OBJECT,
        cl::CL_PROGRAM_BINARY_TYPE_LIBRARY => UR_PROGRAM_BINARY_TYPE_LIBRARY,
        cl::CL_PROGRAM_BINARY_TYPE_EXECUTABLE => UR_PROGRAM_BINARY_TYPE_EXECUTABLE,
        _ => UR_PROGRAM_BINARY_TYPE_NONE,
    }
}

/// `cl_intel_unified_shared_memory` allocation flags for UR's host and
/// device descriptor flags.
pub fn usm_alloc_flags(host: ur_usm_host_mem_flags_t, device: ur_usm_device_mem_flags_t) -> cl_bitfield {
    let mut f = 0;
    if device & UR_USM_DEVICE_MEM_FLAG_WRITE_COMBINED.0 != 0 {
        f |= cl::CL_MEM_ALLOC_WRITE_COMBINED_INTEL;
    }
    if device & UR_USM_DEVICE_MEM_FLAG_INITIAL_PLACEMENT.0 != 0 {
        f |= cl::CL_MEM_ALLOC_INITIAL_PLACEMENT_DEVICE_INTEL;
    }
    if host & UR_USM_HOST_MEM_FLAG_INITIAL_PLACEMENT.0 != 0 {
        f |= cl::CL_MEM_ALLOC_INITIAL_PLACEMENT_HOST_INTEL;
    }
    f
}

pub fn usm_type_from_intel(t: cl_uint) -> ur_usm_type_t {
    match t {
        cl::CL_MEM_TYPE_HOST_INTEL => UR_USM_TYPE_HOST,
        cl::CL_MEM_TYPE_DEVICE_INTEL => UR_USM_TYPE_DEVICE,
        cl::CL_MEM_TYPE_SHARED_INTEL => UR_USM_TYPE_SHARED,
        _ => UR_USM_TYPE_UNKNOWN,
    }
}

/// A cl_ulong info value as the `size_t` UR asks for.
pub fn to_usize(v: cl_ulong) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usm_bits_carry_over_one_to_one() {
        assert_eq!(usm_capabilities(0xf), 0xf);
        assert_eq!(usm_capabilities(0x5), 0x5);
    }

    #[test]
    fn svm_without_fine_grain_offers_no_host_memory() {
        let c = svm_usm_capabilities(cl::CL_DEVICE_SVM_COARSE_GRAIN_BUFFER);
        assert_eq!(c.host, 0);
        assert_eq!(c.shared, 0);
        assert_eq!(c.device, UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ACCESS.0);
        let f = svm_usm_capabilities(cl::CL_DEVICE_SVM_COARSE_GRAIN_BUFFER | cl::CL_DEVICE_SVM_FINE_GRAIN_BUFFER);
        assert_ne!(f.host & UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_CONCURRENT_ACCESS.0, 0);
    }

    #[test]
    fn atomic_scopes_bring_the_narrower_ones() {
        let wi = UR_MEMORY_SCOPE_CAPABILITY_FLAG_WORK_ITEM.0;
        let sg = UR_MEMORY_SCOPE_CAPABILITY_FLAG_SUB_GROUP.0;
        let wg = UR_MEMORY_SCOPE_CAPABILITY_FLAG_WORK_GROUP.0;
        let dev = UR_MEMORY_SCOPE_CAPABILITY_FLAG_DEVICE.0;
        let sys = UR_MEMORY_SCOPE_CAPABILITY_FLAG_SYSTEM.0;
        // PoCL's memory and fence scopes.
        let mem = cl::CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP
            | cl::CL_DEVICE_ATOMIC_SCOPE_DEVICE
            | cl::CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES;
        assert_eq!(atomic_scope_capabilities(mem), wi | sg | wg | dev | sys);
        let fence = cl::CL_DEVICE_ATOMIC_SCOPE_WORK_ITEM
            | cl::CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP
            | cl::CL_DEVICE_ATOMIC_SCOPE_DEVICE;
        assert_eq!(atomic_scope_capabilities(fence), wi | sg | wg | dev);
        assert_eq!(atomic_scope_capabilities(cl::CL_DEVICE_ATOMIC_SCOPE_WORK_ITEM), wi);
        assert_eq!(atomic_scope_capabilities(0), 0);
    }

    #[test]
    fn errors_and_states() {
        assert_eq!(result(cl::CL_INVALID_KERNEL_NAME), UR_RESULT_ERROR_INVALID_KERNEL_NAME);
        assert_eq!(result(-9999), UR_RESULT_ERROR_UNKNOWN);
        assert_eq!(event_status(-5), UR_EVENT_STATUS_ERROR);
        assert_eq!(build_status(cl::CL_BUILD_NONE), UR_PROGRAM_BUILD_STATUS_NONE);
        assert_eq!(binary_type(cl::CL_PROGRAM_BINARY_TYPE_EXECUTABLE), UR_PROGRAM_BINARY_TYPE_EXECUTABLE);
        assert_eq!(queue_flags_to_cl(UR_QUEUE_FLAG_PRIORITY_HIGH.0), 0);
    }
}
