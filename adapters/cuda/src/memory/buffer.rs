//! Buffers on CUDA, a first step (`spec/memory_objects.md`): a buffer is
//! one address that every GPU of the context and the host reach, so its
//! commands are the USM commands of that address and a kernel takes it as a
//! pointer. The storage is managed memory of the context (shared USM: the
//! driver migrates its pages to whichever GPU or the host touches them), or,
//! with `USE_HOST_POINTER`, the caller's memory itself, page-locked for
//! every context.

use crate::context::{Context, ContextCu};
use crate::conv::CuExt;
use crate::driver;
use crate::memory::synchronize_devices;
use crate::Cuda;
use std::ffi::c_void;
use ur_core::context::RawMemory;
use ur_core::engine::UsmKind;
use ur_core::mem::{self, RawMem};
use ur_core::*;

/// Where a root buffer's storage came from, which decides how it goes.
pub enum CuStorage {
    /// A shared USM allocation of the context.
    Managed,
    /// The caller's memory; `registered` when this buffer page-locked it
    /// (not when it already was).
    CallerMemory { registered: bool },
}

impl RawMem<Cuda> for CuStorage {

    fn create(context: &Context, size: usize, host: Option<*mut c_void>, flags: ur_mem_flags_t) -> UrResult<(usize, Self)> {
        if let (true, Some(host)) = (flags & UR_MEM_FLAG_USE_HOST_POINTER.0 != 0, host) {
            context.devices.first().ok_or(UR_RESULT_ERROR_INVALID_CONTEXT)?.raw.activate()?;
            // SAFETY: the caller's `size` bytes, which UR keeps live until the
            // buffer goes.
            let registered = unsafe { driver::mem_host_register(host, size) }.cu()?;
            return Ok((host as usize, CuStorage::CallerMemory { registered }));
        }
        Ok((mem::usm_storage(context, UsmKind::Shared, size, host)?, CuStorage::Managed))
    }

    /// Both kinds wait for the GPUs first, as `urUSMFree` does: commands
    /// still using the storage finish before it goes.
    fn release(self, context: &Context, storage: usize) {
        match self {
            CuStorage::Managed => {
                let _ = ContextCu::usm_free(context, storage as *mut c_void);
            }
            CuStorage::CallerMemory { registered } => {
                if synchronize_devices(context).is_ok() && registered {
                    // SAFETY: registered by `create`; the GPUs are idle.
                    let _ = unsafe { driver::mem_host_unregister(storage as *mut c_void) };
                }
            }
        }
    }
}
