//! Buffers on CUDA, a first step (`spec/memory_objects.md`): a buffer is
//! one address that every GPU of the context and the host reach, so its
//! commands are the USM commands of that address and a kernel takes it as a
//! pointer. The storage is managed memory of the context (shared USM: the
//! driver migrates its pages to whichever GPU or the host touches them);
//! with `ALLOC_HOST_POINTER`, pinned host USM of the context; with
//! `USE_HOST_POINTER`, the caller's memory itself, page-locked for every
//! context.

use crate::context::{Context, ContextCu};
use crate::conv::CuExt;
use crate::driver;
use crate::memory::synchronize_devices;
use crate::Cuda;
use std::ffi::c_void;
use ur_core::boundary::NativeOwnership;
use ur_core::context::RawMemory;
use ur_core::engine::UsmKind;
use ur_core::mem::{self, RawMem};
use ur_core::*;

/// Where a root buffer's storage came from, which decides how it goes.
pub enum CuStorage {
    /// A USM allocation of the context: managed memory made for the
    /// buffer (`owned`), or one imported from a native handle, owned or
    /// borrowed.
    Usm { owned: bool },
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
        // ALLOC_HOST_POINTER asks for host memory: pinned, read in place
        // by every GPU (as Intel's CUDA adapter serves it).
        let kind = if flags & UR_MEM_FLAG_ALLOC_HOST_POINTER.0 != 0 { UsmKind::Host } else { UsmKind::Shared };
        Ok((mem::usm_storage(context, kind, size, host)?, CuStorage::Usm { owned: true }))
    }

    /// A live USM allocation of the context, from its base.
    fn from_native(context: &Context, native: ur_native_handle_t, ownership: NativeOwnership) -> UrResult<(usize, usize, Self)> {
        let (base, size) = mem::imported_usm(context, native)?;
        Ok((base, size, CuStorage::Usm { owned: ownership == NativeOwnership::Owned }))
    }

    /// Storage that goes waits for the GPUs first, as `urUSMFree` does:
    /// commands still using it finish before it goes.
    fn release(self, context: &Context, storage: usize) {
        match self {
            CuStorage::Usm { owned: false } => {}
            CuStorage::Usm { owned: true } => {
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
