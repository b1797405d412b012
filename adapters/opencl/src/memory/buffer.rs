//! Buffers on OpenCL: each UR buffer is a `cl_mem` of the context's
//! `cl_context` (a sub-buffer has its own, from `clCreateSubBuffer`), so
//! the runtime keeps its copies coherent over its devices and keeps the
//! object alive for the commands that use it (`spec/memory_objects.md`).
//! The commands themselves are `queue/buffer_commands.rs`'.

use crate::conv::{self, ClResultExt};
use crate::driver::{self, call};
use crate::OpenCl;
use cl3::ext as sys;
use std::ffi::c_void;
use ur_core::boundary::NativeOwnership;
use ur_core::context::Context;
use ur_core::hal::KernelArg;
use ur_core::mem::{Mem, RawMem};
use ur_core::*;

/// The `cl_mem` of a buffer or sub-buffer; released with it.
pub struct ClBuffer {
    mem: sys::cl_mem,
}

// SAFETY: OpenCL memory objects may be used and released from any thread;
// this holds only the handle, which it releases once.
unsafe impl Send for ClBuffer {}
unsafe impl Sync for ClBuffer {}

impl ClBuffer {
    pub fn get(&self) -> sys::cl_mem {
        self.mem
    }
}

impl Drop for ClBuffer {
    fn drop(&mut self) {
        // The runtime keeps the object for commands still using it.
        let _ = call!(clReleaseMemObject(self.mem));
    }
}

/// The raw part of a buffer, or of its sub-buffer.
fn raw_of(mem: &Mem<OpenCl>) -> sys::cl_mem {
    mem.raw.as_ref().map_or(std::ptr::null_mut(), ClBuffer::get)
}

impl RawMem<OpenCl> for ClBuffer {
    const DRIVER: bool = true;

    /// The runtime's allocation failure is out of device memory (the
    /// header's code for a buffer without backing).
    fn create(context: &Context<OpenCl>, size: usize, host: Option<*mut c_void>, flags: ur_mem_flags_t) -> UrResult<(usize, Self)> {
        let host = host.unwrap_or(std::ptr::null_mut());
        // SAFETY: the core checked the flags against `host`: with a host
        // flag it is the caller's `size` bytes, else null.
        let mem = unsafe { cl3::memory::create_buffer(context.raw.cl.get(), conv::mem_flags(flags), size, host) }
            .map_err(|e| match e {
                sys::CL_MEM_OBJECT_ALLOCATION_FAILURE | sys::CL_OUT_OF_RESOURCES => UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY,
                e => conv::result(e),
            })?;
        Ok((0, ClBuffer { mem }))
    }

    /// A sub-buffer is the runtime's too: a kernel argument or native
    /// handle of it names only its region.
    fn partition(&self, origin: usize, size: usize, flags: ur_mem_flags_t) -> UrResult<Option<Self>> {
        let region = sys::cl_buffer_region { origin, size };
        // SAFETY: `region` is a `cl_buffer_region`, as the create type says,
        // and lives for the call.
        let mem = unsafe {
            cl3::memory::create_sub_buffer(
                self.mem,
                conv::mem_flags(flags),
                sys::CL_BUFFER_CREATE_TYPE_REGION,
                &region as *const sys::cl_buffer_region as *const c_void,
            )
        }
        .ur()?;
        Ok(Some(ClBuffer { mem }))
    }

    /// A buffer `cl_mem` of the context's `cl_context` (another context's
    /// is `INVALID_CONTEXT`, an image `UNSUPPORTED_FEATURE`); a borrowed
    /// one is retained for the buffer's life. A sub-buffer becomes a root.
    fn from_native(context: &Context<OpenCl>, native: ur_native_handle_t, ownership: NativeOwnership) -> UrResult<(usize, usize, Self)> {
        let mem = native as sys::cl_mem;
        let info = |param| cl3::memory::get_mem_object_data(mem, param);
        let owner = driver::value::<sys::cl_context>(info(sys::CL_MEM_CONTEXT)).map_err(|_| UR_RESULT_ERROR_INVALID_VALUE)?;
        if owner != context.raw.cl.get() {
            return Err(UR_RESULT_ERROR_INVALID_CONTEXT);
        }
        if driver::value::<sys::cl_mem_object_type>(info(sys::CL_MEM_TYPE)).ur()? != sys::CL_MEM_OBJECT_BUFFER {
            return Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
        }
        let size = driver::value::<usize>(info(sys::CL_MEM_SIZE)).ur()?;
        if ownership == NativeOwnership::Borrowed {
            // SAFETY: a live memory object of the context (its info answered).
            unsafe { cl3::memory::retain_mem_object(mem) }.ur()?;
        }
        Ok((0, size, ClBuffer { mem }))
    }

    fn native_handle(mem: &Mem<OpenCl>) -> ur_native_handle_t {
        raw_of(mem) as ur_native_handle_t
    }

    fn kernel_arg(mem: &Mem<OpenCl>, index: u32) -> KernelArg<'static> {
        KernelArg::MemHandle { index, handle: raw_of(mem) as *mut c_void }
    }

    fn release(self, _context: &Context<OpenCl>, _storage: usize) {}
}
