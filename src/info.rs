//! The `(propSize, pPropValue, pPropSizeRet)` protocol shared by every
//! `ur*GetInfo` entry point.

use crate::abi::*;
use crate::UrResult;
use core::ffi::c_void;

/// Where an info query writes its answer.
pub struct InfoOut {
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
}

impl InfoOut {
    /// Checks the three output arguments as UR specifies.
    ///
    /// # Safety
    /// `value` must be valid for `size` bytes of writes and `size_ret` for one
    /// `usize`, where not null.
    pub unsafe fn new(size: usize, value: *mut c_void, size_ret: *mut usize) -> UrResult<Self> {
        if size == 0 && !value.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        if size != 0 && value.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        if value.is_null() && size_ret.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        Ok(InfoOut { size, value, size_ret })
    }

    /// Writes raw bytes: reports their length, and copies them when a buffer
    /// was given (one too small is `INVALID_SIZE`).
    pub fn bytes(self, bytes: &[u8]) -> UrResult {
        // SAFETY: pointers checked in `new`, lengths checked here.
        unsafe {
            if !self.size_ret.is_null() {
                *self.size_ret = bytes.len();
            }
            if !self.value.is_null() {
                if self.size < bytes.len() {
                    return Err(UR_RESULT_ERROR_INVALID_SIZE);
                }
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.value as *mut u8, bytes.len());
            }
        }
        Ok(())
    }

    /// Writes one plain value (an integer, a handle, a flag word).
    pub fn value<T: Copy>(self, v: T) -> UrResult {
        self.slice(std::slice::from_ref(&v))
    }

    /// Writes an array of plain values.
    pub fn slice<T: Copy>(self, v: &[T]) -> UrResult {
        // SAFETY: T is Copy plain data; we only read its bytes.
        let bytes = unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) };
        self.bytes(bytes)
    }

    /// Writes a NUL-terminated string.
    pub fn string(self, s: &str) -> UrResult {
        let mut b = Vec::with_capacity(s.len() + 1);
        b.extend_from_slice(s.as_bytes());
        b.push(0);
        self.bytes(&b)
    }

    /// `UR_PROGRAM_INFO_BINARIES`' own protocol: the value is an array of
    /// one buffer per binary, each sized as `BINARY_SIZES` said; the size is
    /// that of the array of pointers.
    ///
    /// # Safety
    /// Each non-null buffer of the caller's array holds its binary's size.
    pub unsafe fn binaries(self, binaries: &[Vec<u8>]) -> UrResult {
        let bytes = std::mem::size_of_val(binaries.iter().map(|b| b.as_ptr()).collect::<Vec<_>>().as_slice());
        if !self.value.is_null() {
            if self.size < bytes {
                return Err(UR_RESULT_ERROR_INVALID_SIZE);
            }
            let buffers = std::slice::from_raw_parts(self.value as *const *mut u8, binaries.len());
            for (buffer, binary) in buffers.iter().zip(binaries) {
                if !buffer.is_null() {
                    std::ptr::copy_nonoverlapping(binary.as_ptr(), *buffer, binary.len());
                }
            }
        }
        if !self.size_ret.is_null() {
            *self.size_ret = bytes;
        }
        Ok(())
    }

    /// Writes a `ur_bool_t`.
    pub fn bool(self, b: bool) -> UrResult {
        self.value::<ur_bool_t>(b as ur_bool_t)
    }
}

/// Device queries for features that no adapter of this project serves (no
/// entry points behind them: command buffers, bindless images, external
/// memory, IPC, host tasks, ...): every adapter that lists them answers
/// false from this one list, so their answers cannot drift apart.
///
/// cbindgen:ignore
pub const UNSERVED_FEATURES: &[ur_device_info_t] = &[
    UR_DEVICE_INFO_ASYNC_BARRIER,
    UR_DEVICE_INFO_MEM_CHANNEL_SUPPORT,
    UR_DEVICE_INFO_HOST_PIPE_READ_WRITE_SUPPORT,
    UR_DEVICE_INFO_VIRTUAL_MEMORY_SUPPORT,
    UR_DEVICE_INFO_ESIMD_SUPPORT,
    UR_DEVICE_INFO_GLOBAL_VARIABLE_SUPPORT,
    UR_DEVICE_INFO_COMMAND_BUFFER_SUPPORT_EXP,
    UR_DEVICE_INFO_COMMAND_BUFFER_EVENT_SUPPORT_EXP,
    UR_DEVICE_INFO_COMMAND_BUFFER_SUBGRAPH_SUPPORT_EXP,
    UR_DEVICE_INFO_BINDLESS_IMAGES_SUPPORT_EXP,
    UR_DEVICE_INFO_BINDLESS_IMAGES_SHARED_USM_SUPPORT_EXP,
    UR_DEVICE_INFO_BINDLESS_IMAGES_1D_USM_SUPPORT_EXP,
    UR_DEVICE_INFO_BINDLESS_IMAGES_2D_USM_SUPPORT_EXP,
    UR_DEVICE_INFO_MIPMAP_SUPPORT_EXP,
    UR_DEVICE_INFO_TIMESTAMP_RECORDING_SUPPORT_EXP,
    UR_DEVICE_INFO_ENQUEUE_NATIVE_COMMAND_SUPPORT_EXP,
    UR_DEVICE_INFO_LOW_POWER_EVENTS_SUPPORT_EXP,
    UR_DEVICE_INFO_MULTI_DEVICE_COMPILE_SUPPORT_EXP,
    UR_DEVICE_INFO_USM_HOST_ALLOC_REGISTER_SUPPORT_EXP,
    UR_DEVICE_INFO_GRAPH_RECORD_AND_REPLAY_SUPPORT_EXP,
    UR_DEVICE_INFO_ENQUEUE_HOST_TASK_SUPPORT_EXP,
    UR_DEVICE_INFO_MIPMAP_ANISOTROPY_SUPPORT_EXP,
    UR_DEVICE_INFO_MIPMAP_LEVEL_REFERENCE_SUPPORT_EXP,
    UR_DEVICE_INFO_EXTERNAL_MEMORY_IMPORT_SUPPORT_EXP,
    UR_DEVICE_INFO_EXTERNAL_SEMAPHORE_IMPORT_SUPPORT_EXP,
    UR_DEVICE_INFO_CUBEMAP_SUPPORT_EXP,
    UR_DEVICE_INFO_CUBEMAP_SEAMLESS_FILTERING_SUPPORT_EXP,
    UR_DEVICE_INFO_BINDLESS_SAMPLED_IMAGE_FETCH_1D_USM_SUPPORT_EXP,
    UR_DEVICE_INFO_BINDLESS_SAMPLED_IMAGE_FETCH_1D_SUPPORT_EXP,
    UR_DEVICE_INFO_BINDLESS_SAMPLED_IMAGE_FETCH_2D_USM_SUPPORT_EXP,
    UR_DEVICE_INFO_BINDLESS_SAMPLED_IMAGE_FETCH_2D_SUPPORT_EXP,
    UR_DEVICE_INFO_BINDLESS_SAMPLED_IMAGE_FETCH_3D_SUPPORT_EXP,
    UR_DEVICE_INFO_IMAGE_ARRAY_SUPPORT_EXP,
    UR_DEVICE_INFO_BINDLESS_UNIQUE_ADDRESSING_PER_DIM_SUPPORT_EXP,
    UR_DEVICE_INFO_BINDLESS_SAMPLE_1D_USM_SUPPORT_EXP,
    UR_DEVICE_INFO_BINDLESS_SAMPLE_2D_USM_SUPPORT_EXP,
    UR_DEVICE_INFO_BINDLESS_IMAGES_GATHER_SUPPORT_EXP,
    UR_DEVICE_INFO_MEMORY_EXPORT_EXPORTABLE_DEVICE_MEM_EXP,
    UR_DEVICE_INFO_IPC_MEMORY_SUPPORT_EXP,
    UR_DEVICE_INFO_IPC_PHYSICAL_MEMORY_SUPPORT_EXP,
    UR_DEVICE_INFO_IPC_EVENT_SUPPORT_EXP,
    UR_DEVICE_INFO_REUSABLE_EVENTS_SUPPORT_EXP,
    UR_DEVICE_INFO_PER_EVENT_PROFILING_SUPPORT_EXP,
    UR_DEVICE_INFO_DEVICE_WAIT_SUPPORT_EXP,
    UR_DEVICE_INFO_DYNAMIC_LINK_SUPPORT_EXP,
    UR_DEVICE_INFO_USM_CONTEXT_MEMCPY_SUPPORT_EXP,
];

/// Whether `prop` is one of [`UNSERVED_FEATURES`].
pub fn is_unserved_feature(prop: ur_device_info_t) -> bool {
    UNSERVED_FEATURES.contains(&prop)
}
