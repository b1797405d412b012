//! The memory object (a buffer, or a sub-buffer of one), written once for
//! every backend (`spec/memory_objects.md`): what any buffer holds (its
//! handle header, context, size, flags, parent and live maps) beside `raw`,
//! what its backend keeps of it, behind [`RawMem`].
//!
//! A root buffer has one address that the host and every device of its
//! context reach (the `Unified` storage of the spec): its commands are the
//! USM commands of that address, and a map is that address. Backends whose
//! buffers need copies of their own per device, or a driver object
//! (`cl_mem`), are not served yet: their `RawMem` is [`NoMem`].

use crate::abi::*;
use crate::context::{Context, RawMemory};
use crate::engine::UsmKind;
use crate::hal::{AllocRequest, Backend};
use crate::handle::{HandleHeader, ObjectKind};
use crate::lock_order::{Mutex, Rank};
use crate::UrResult;
use core::ffi::c_void;
use std::sync::Arc;

/// The backend's part of a root buffer: where its storage comes from.
pub trait RawMem<B: Backend>: Send + Sync + Sized + 'static {
    /// Whether buffers are served; without them every `urMem*` and
    /// `urEnqueueMem*` entry point is `UNSUPPORTED_FEATURE`.
    const SUPPORTED: bool;
    /// The storage of a new root buffer of `size` bytes (checked), and the
    /// raw part: `host` is the caller's data, the storage itself with
    /// `USE_HOST_POINTER` (`use_host`), else copied in when given.
    fn create(context: &Context<B>, size: usize, host: Option<*mut c_void>, use_host: bool) -> UrResult<(usize, Self)>;
    /// Runs once as the root buffer goes: its storage, at `storage`, goes
    /// back.
    fn release(self, context: &Context<B>, storage: usize);
}

/// No buffers (the backend keeps a copy per device, or a driver object,
/// which the core does not serve yet).
pub struct NoMem;

impl<B: Backend> RawMem<B> for NoMem {
    const SUPPORTED: bool = false;
    fn create(_: &Context<B>, _: usize, _: Option<*mut c_void>, _: bool) -> UrResult<(usize, Self)> {
        Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
    }
    fn release(self, _: &Context<B>, _: usize) {}
}

/// Buffers in host USM of the context (every device of a host backend
/// reaches it), or in the caller's memory with `USE_HOST_POINTER`.
pub struct HostStorage {
    /// The storage is a USM allocation of the context, freed with the
    /// buffer (else it is the caller's).
    owned: bool,
}

impl<B: Backend> RawMem<B> for HostStorage {
    const SUPPORTED: bool = true;

    fn create(context: &Context<B>, size: usize, host: Option<*mut c_void>, use_host: bool) -> UrResult<(usize, Self)> {
        if let (true, Some(host)) = (use_host, host) {
            return Ok((host as usize, HostStorage { owned: false }));
        }
        let request = AllocRequest {
            kind: UsmKind::Host,
            size,
            align: 0,
            device: None,
            pool: None,
            hints: 0,
            host_flags: 0,
            device_flags: 0,
        };
        let storage = B::RawContext::usm_alloc(context, request).map_err(|e| match e {
            UR_RESULT_ERROR_INVALID_USM_SIZE => UR_RESULT_ERROR_INVALID_BUFFER_SIZE,
            e => e,
        })?;
        if let Some(host) = host {
            // SAFETY: the caller's `size` bytes at `host` (UR requires them
            // readable for the call); the storage was just made, `size` long.
            unsafe { std::ptr::copy_nonoverlapping(host as *const u8, storage as *mut u8, size) };
        }
        Ok((storage as usize, HostStorage { owned: true }))
    }

    /// The allocation is freed at once: commands still using it hold it
    /// (a backend's commands keep the USM allocations they touch).
    fn release(self, context: &Context<B>, storage: usize) {
        if self.owned {
            let _ = B::RawContext::usm_free(context, storage as *mut c_void);
        }
    }
}

/// What a buffer is.
pub enum MemKind<B: Backend> {
    /// A root buffer at `storage`.
    Buffer { storage: usize },
    /// A region of `parent` (a root) from `origin`.
    Sub { parent: Arc<Mem<B>>, origin: usize },
}

/// A live map: the pointer handed out and the region it covers.
#[derive(Clone, Copy, Debug)]
pub struct MapRecord {
    pub ptr: usize,
    pub offset: usize,
    pub size: usize,
}

/// A UR memory object.
#[repr(C)]
pub struct Mem<B: Backend> {
    /// First: the handle protocol reads it at offset 0.
    header: HandleHeader,
    pub context: Arc<Context<B>>,
    /// As asked (a sub-buffer's region).
    pub size: usize,
    /// The access mode filled in (`READ_WRITE` when none was given).
    pub flags: ur_mem_flags_t,
    pub kind: MemKind<B>,
    /// The live maps of this handle (a leaf lock).
    maps: Mutex<Vec<MapRecord>>,
    /// A root buffer's raw part; none for a sub-buffer.
    pub raw: Option<B::RawMem>,
}

crate::core_object!(Mem, Mem, ur_mem_handle_t_);

/// The access-mode bits of `ur_mem_flags_t`.
pub(crate) const ACCESS_FLAGS: ur_mem_flags_t =
    UR_MEM_FLAG_READ_WRITE.0 | UR_MEM_FLAG_WRITE_ONLY.0 | UR_MEM_FLAG_READ_ONLY.0;

impl<B: Backend> Mem<B> {
    /// A root buffer with checked arguments.
    pub fn create(
        context: Arc<Context<B>>,
        flags: ur_mem_flags_t,
        size: usize,
        host: Option<*mut c_void>,
    ) -> UrResult<Arc<Self>> {
        let use_host = flags & UR_MEM_FLAG_USE_HOST_POINTER.0 != 0;
        let (storage, raw) = B::RawMem::create(&context, size, host, use_host)?;
        Ok(Self::new(context, with_access(flags), size, MemKind::Buffer { storage }, Some(raw)))
    }

    /// A sub-buffer of root `parent` (checked region and flags).
    pub fn partition(parent: Arc<Self>, flags: ur_mem_flags_t, origin: usize, size: usize) -> Arc<Self> {
        let flags = if flags & ACCESS_FLAGS == 0 { parent.flags & ACCESS_FLAGS } else { flags };
        Self::new(parent.context.clone(), flags, size, MemKind::Sub { parent, origin }, None)
    }

    fn new(context: Arc<Context<B>>, flags: ur_mem_flags_t, size: usize, kind: MemKind<B>, raw: Option<B::RawMem>) -> Arc<Self> {
        Arc::new(Mem {
            header: HandleHeader::new(B::ddi(), ObjectKind::Mem),
            context,
            size,
            flags,
            kind,
            maps: Mutex::new(Rank::Leaf, Vec::new()),
            raw,
        })
    }

    /// The address of byte 0 of this buffer (or sub-buffer).
    pub fn address(&self) -> usize {
        match &self.kind {
            MemKind::Buffer { storage } => *storage,
            MemKind::Sub { parent, origin } => parent.address() + origin,
        }
    }

    /// The root buffer and this handle's offset in it.
    pub fn root(&self) -> (&Mem<B>, usize) {
        match &self.kind {
            MemKind::Buffer { .. } => (self, 0),
            MemKind::Sub { parent, origin } => (parent, *origin),
        }
    }

    pub fn is_sub_buffer(&self) -> bool {
        matches!(self.kind, MemKind::Sub { .. })
    }

    /// Records a live map of `size` bytes from `offset`; its pointer.
    pub fn map(&self, offset: usize, size: usize) -> *mut c_void {
        let ptr = self.address() + offset;
        self.maps.lock().push(MapRecord { ptr, offset, size });
        ptr as *mut c_void
    }

    /// Ends the live map at `ptr`; `None` when there is none.
    pub fn unmap(&self, ptr: *mut c_void) -> Option<MapRecord> {
        let mut maps = self.maps.lock();
        let at = maps.iter().position(|m| m.ptr == ptr as usize)?;
        Some(maps.swap_remove(at))
    }
}

/// `flags` with the default access mode filled in.
fn with_access(flags: ur_mem_flags_t) -> ur_mem_flags_t {
    if flags & ACCESS_FLAGS == 0 {
        flags | UR_MEM_FLAG_READ_WRITE.0
    } else {
        flags
    }
}

impl<B: Backend> Drop for Mem<B> {
    fn drop(&mut self) {
        if let (Some(raw), MemKind::Buffer { storage }) = (self.raw.take(), &self.kind) {
            raw.release(&self.context, *storage);
        }
    }
}
