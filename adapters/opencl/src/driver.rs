//! The OpenCL side below the objects: typed reads of `clGet*Info` answers,
//! the `cl_intel_unified_shared_memory` entry points, found per platform,
//! and a marker command.
//!
//! The ICD loader itself is opened lazily by `cl3` (feature `dynamic`): with
//! no `libOpenCL.so.1` every call fails with a `DLOPEN_*` code, which the
//! adapter reports as zero platforms.

use crate::conv;
use cl3::ext as sys;
use std::ffi::{c_void, CString};
use sys::{cl_event, cl_int, cl_platform_id};

/// Calls an OpenCL entry point of the ICD loader by name, giving its
/// `cl_int` status; a missing loader or entry point is a `DLOPEN_*` status.
/// Unlike `cl3`'s wrappers, event out-pointers may be null, so no event is
/// made that nobody asked for.
macro_rules! call {
    ($f:ident($($arg:expr),* $(,)?)) => {
        match cl3::load_library().as_ref() {
            Ok(runtime) => runtime.$f($($arg),*).unwrap_or(cl3::error_codes::DLOPEN_FUNCTION_NOT_AVAILABLE),
            Err(_) => cl3::error_codes::DLOPEN_RUNTIME_LOAD_FAILED,
        }
    };
}
pub(crate) use call;

/// A wait list as OpenCL takes it: null for an empty one.
pub fn wait_list_ptr(events: &[sys::cl_event]) -> *const sys::cl_event {
    if events.is_empty() {
        std::ptr::null()
    } else {
        events.as_ptr()
    }
}

/// Plain data read from an info query's bytes. Fails with
/// `CL_INVALID_VALUE` when the runtime returned fewer bytes than `T` needs.
pub fn value<T: Copy + Default>(bytes: Result<Vec<u8>, cl_int>) -> Result<T, cl_int> {
    let bytes = bytes?;
    if bytes.len() < std::mem::size_of::<T>() {
        return Err(sys::CL_INVALID_VALUE);
    }
    // SAFETY: at least size_of::<T>() bytes, and T is plain data; read
    // unaligned because a Vec<u8> makes no promise for T.
    Ok(unsafe { std::ptr::read_unaligned(bytes.as_ptr() as *const T) })
}

/// An array of plain data from an info query's bytes.
pub fn array<T: Copy>(bytes: Result<Vec<u8>, cl_int>) -> Result<Vec<T>, cl_int> {
    let bytes = bytes?;
    let n = bytes.len() / std::mem::size_of::<T>();
    // SAFETY: `n` whole elements lie inside `bytes`; unaligned reads.
    Ok((0..n).map(|i| unsafe { std::ptr::read_unaligned((bytes.as_ptr() as *const T).add(i)) }).collect())
}

/// A string answer, without its terminating NUL (and anything after it).
pub fn string(bytes: Result<Vec<u8>, cl_int>) -> Result<String, cl_int> {
    let bytes = bytes?;
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    Ok(String::from_utf8_lossy(&bytes[..end]).into_owned())
}

/// Whether a space-separated extension list names `ext`.
pub fn has_extension(list: &str, ext: &str) -> bool {
    list.split_ascii_whitespace().any(|e| e == ext)
}

/// An extension entry point of `platform`, or `None` when the platform (or
/// the ICD loader) does not provide it.
pub fn extension_function(platform: cl_platform_id, name: &str) -> Option<*mut c_void> {
    let runtime = cl3::load_library().as_ref().ok()?;
    let name = CString::new(name).ok()?;
    let f = runtime.clGetExtensionFunctionAddressForPlatform(platform, name.as_ptr())?;
    (!f.is_null()).then_some(f)
}

/// The entry points of `cl_intel_unified_shared_memory` of one platform.
pub struct IntelUsm {
    pub host_alloc: unsafe extern "C" fn(
        sys::cl_context,
        *const sys::cl_mem_properties_intel,
        usize,
        sys::cl_uint,
        *mut cl_int,
    ) -> *mut c_void,
    pub device_alloc: unsafe extern "C" fn(
        sys::cl_context,
        sys::cl_device_id,
        *const sys::cl_mem_properties_intel,
        usize,
        sys::cl_uint,
        *mut cl_int,
    ) -> *mut c_void,
    pub shared_alloc: unsafe extern "C" fn(
        sys::cl_context,
        sys::cl_device_id,
        *const sys::cl_mem_properties_intel,
        usize,
        sys::cl_uint,
        *mut cl_int,
    ) -> *mut c_void,
    pub blocking_free: unsafe extern "C" fn(sys::cl_context, *mut c_void) -> cl_int,
    /// Frees at once: the caller knows that no command uses the memory.
    pub free: unsafe extern "C" fn(sys::cl_context, *mut c_void) -> cl_int,
    pub get_alloc_info: unsafe extern "C" fn(
        sys::cl_context,
        *const c_void,
        sys::cl_mem_info_intel,
        usize,
        *mut c_void,
        *mut usize,
    ) -> cl_int,
    pub enqueue_fill: unsafe extern "C" fn(
        sys::cl_command_queue,
        *mut c_void,
        *const c_void,
        usize,
        usize,
        sys::cl_uint,
        *const sys::cl_event,
        *mut sys::cl_event,
    ) -> cl_int,
    pub enqueue_copy: unsafe extern "C" fn(
        sys::cl_command_queue,
        sys::cl_bool,
        *mut c_void,
        *const c_void,
        usize,
        sys::cl_uint,
        *const sys::cl_event,
        *mut sys::cl_event,
    ) -> cl_int,
    pub set_kernel_arg_pointer: unsafe extern "C" fn(sys::cl_kernel, sys::cl_uint, *const c_void) -> cl_int,
}

impl IntelUsm {
    /// All nine entry points of the platform, or `None` if any is missing.
    // Each transmute's target is the type of the field it initialises.
    #[allow(clippy::missing_transmute_annotations)]
    pub fn load(platform: cl_platform_id) -> Option<IntelUsm> {
        macro_rules! entry {
            ($name:literal) => {{
                let f = extension_function(platform, $name)?;
                // SAFETY: the extension defines this entry point with the
                // signature of the field it is stored in; a non-null address
                // from the platform is that function.
                unsafe { std::mem::transmute::<*mut c_void, _>(f) }
            }};
        }
        Some(IntelUsm {
            host_alloc: entry!("clHostMemAllocINTEL"),
            device_alloc: entry!("clDeviceMemAllocINTEL"),
            shared_alloc: entry!("clSharedMemAllocINTEL"),
            blocking_free: entry!("clMemBlockingFreeINTEL"),
            free: entry!("clMemFreeINTEL"),
            get_alloc_info: entry!("clGetMemAllocInfoINTEL"),
            enqueue_fill: entry!("clEnqueueMemFillINTEL"),
            enqueue_copy: entry!("clEnqueueMemcpyINTEL"),
            set_kernel_arg_pointer: entry!("clSetKernelArgMemPointerINTEL"),
        })
    }
}

/// A marker behind `waits` on `queue`, with an event out-pointer.
pub fn marker(queue: sys::cl_command_queue, waits: &[cl_event], event: *mut cl_event) -> Result<(), cl_int> {
    conv::check(call!(clEnqueueMarkerWithWaitList(
        queue,
        waits.len() as sys::cl_uint,
        wait_list_ptr(waits),
        event
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_info_bytes() {
        assert_eq!(value::<u32>(Ok(vec![1, 0, 0, 0])), Ok(1));
        assert_eq!(value::<u64>(Ok(vec![1, 0])), Err(sys::CL_INVALID_VALUE));
        assert_eq!(array::<u16>(Ok(vec![1, 0, 2, 0])), Ok(vec![1, 2]));
        assert_eq!(string(Ok(b"abc\0".to_vec())), Ok("abc".to_string()));
        assert!(has_extension("cl_khr_icd cl_intel_unified_shared_memory", "cl_intel_unified_shared_memory"));
        assert!(!has_extension("cl_khr_icd_x", "cl_khr_icd"));
    }
}

/// `clEnqueueMapBuffer`, non-blocking: the mapped pointer, or the status.
#[allow(clippy::too_many_arguments)]
pub fn map_buffer(
    queue: sys::cl_command_queue,
    mem: sys::cl_mem,
    flags: sys::cl_map_flags,
    offset: usize,
    size: usize,
    waits: &[cl_event],
    event: *mut cl_event,
) -> Result<*mut c_void, cl_int> {
    let runtime = cl3::load_library().as_ref().map_err(|_| cl3::error_codes::DLOPEN_RUNTIME_LOAD_FAILED)?;
    let mut status = sys::CL_SUCCESS;
    let n = waits.len() as sys::cl_uint;
    let ptr = runtime
        .clEnqueueMapBuffer(queue, mem, sys::CL_FALSE, flags, offset, size, n, wait_list_ptr(waits), event, &mut status)
        .ok_or(cl3::error_codes::DLOPEN_FUNCTION_NOT_AVAILABLE)?;
    conv::check(status)?;
    Ok(ptr)
}
