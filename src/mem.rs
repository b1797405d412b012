//! The memory object (a buffer, or a sub-buffer of one), written once for
//! every backend (`spec/memory_objects.md`): what any buffer holds (its
//! handle header, context, size, flags, parent and live maps) beside `raw`,
//! what its backend keeps of it, behind [`RawMem`].
//!
//! A root buffer's storage is either one address that the host and every
//! device of its context reach (the `Unified` storage of the spec: its
//! commands are the USM commands of that address, and a map is that
//! address), or a driver object (`RawMem::DRIVER`: OpenCL's `cl_mem`),
//! whose commands reach the backend as [`BufferCommand`]s.

use crate::abi::*;
use crate::boundary::NativeOwnership;
use crate::context::{Context, RawMemory};
use crate::engine::UsmKind;
use crate::hal::{AllocRequest, Backend, KernelArg};
use crate::handle::{HandleHeader, ObjectKind};
use crate::lock_order::{Mutex, Rank};
use crate::UrResult;
use core::ffi::c_void;
use std::sync::Arc;

/// The backend's part of a buffer: where its storage comes from, and how a
/// driver object stands for it.
pub trait RawMem<B: Backend>: Send + Sync + Sized + 'static {
    /// Whether the storage is a driver object (OpenCL's `cl_mem`) rather
    /// than an address: its commands then reach the backend as
    /// [`BufferCommand`]s (`RawQueue::buffer`), not as USM commands.
    const DRIVER: bool = false;
    /// The storage of a new root buffer of `size` bytes (checked) with
    /// `flags` (checked, the access mode filled in), and the raw part:
    /// `host` is the caller's data, the storage itself with
    /// `USE_HOST_POINTER`, else copied in when given. The address of the
    /// storage (0 for driver storage).
    fn create(context: &Context<B>, size: usize, host: Option<*mut c_void>, flags: ur_mem_flags_t) -> UrResult<(usize, Self)>;
    /// The raw part of a sub-buffer of `self` (a root's), checked: `None`
    /// where a sub-buffer needs nothing of its own (it is an address).
    fn partition(&self, _origin: usize, _size: usize, _flags: ur_mem_flags_t) -> UrResult<Option<Self>> {
        Ok(None)
    }
    /// `urMemBufferCreateWithNativeHandle`: the storage's address (0 for
    /// driver storage), size and raw part of a root buffer over `native`,
    /// which the buffer owns or borrows as `ownership` says.
    fn from_native(_context: &Context<B>, _native: ur_native_handle_t, _ownership: NativeOwnership) -> UrResult<(usize, usize, Self)> {
        Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
    }
    /// `urMemGetNativeHandle`: by default the buffer's address.
    fn native_handle(mem: &Mem<B>) -> ur_native_handle_t {
        mem.address() as ur_native_handle_t
    }
    /// The kernel argument that passes `mem` at `index`: by default its
    /// address, as a pointer.
    fn kernel_arg(mem: &Mem<B>, index: u32) -> KernelArg<'static> {
        KernelArg::Pointer { index, ptr: mem.address() as *const c_void }
    }
    /// Runs once as the root buffer goes: its storage, at `storage`, goes
    /// back. (A sub-buffer's raw part is only dropped.)
    fn release(self, context: &Context<B>, storage: usize);
}

/// Buffers in host USM of the context (every device of a host backend
/// reaches it), or in the caller's memory with `USE_HOST_POINTER`.
pub struct HostStorage {
    /// The storage is a USM allocation of the context, freed with the
    /// buffer (else it is the caller's).
    owned: bool,
}

impl<B: Backend> RawMem<B> for HostStorage {

    fn create(context: &Context<B>, size: usize, host: Option<*mut c_void>, flags: ur_mem_flags_t) -> UrResult<(usize, Self)> {
        if let (true, Some(host)) = (flags & UR_MEM_FLAG_USE_HOST_POINTER.0 != 0, host) {
            return Ok((host as usize, HostStorage { owned: false }));
        }
        let storage = usm_storage(context, UsmKind::Host, size, host)?;
        Ok((storage, HostStorage { owned: true }))
    }

    /// A live USM allocation of the context, from its base.
    fn from_native(context: &Context<B>, native: ur_native_handle_t, ownership: NativeOwnership) -> UrResult<(usize, usize, Self)> {
        let (base, size) = imported_usm(context, native)?;
        Ok((base, size, HostStorage { owned: ownership == NativeOwnership::Owned }))
    }

    /// The allocation is freed at once: commands still using it hold it
    /// (a backend's commands keep the USM allocations they touch).
    fn release(self, context: &Context<B>, storage: usize) {
        if self.owned {
            let _ = B::RawContext::usm_free(context, storage as *mut c_void);
        }
    }
}

/// One side of a rect command on a driver buffer: where its byte `(0, 0,
/// 0)` lies from the side's base, and its pitches (all in bytes).
#[derive(Clone, Copy, Debug)]
pub struct RectSide {
    pub offset: usize,
    pub row_pitch: usize,
    pub slice_pitch: usize,
}

/// A checked command on buffers with driver storage (`RawMem::DRIVER`),
/// each on a root's raw part at offsets from its start; a host pointer was
/// bounds-checked where it is USM of the context.
pub enum BufferCommand<'a, B: Backend> {
    Read { mem: &'a B::RawMem, offset: usize, size: usize, dst: *mut c_void },
    Write { mem: &'a B::RawMem, offset: usize, size: usize, src: *const c_void },
    Copy { src: &'a B::RawMem, src_offset: usize, dst: &'a B::RawMem, dst_offset: usize, size: usize },
    /// `pattern` is copied already; its length divides `offset` and `size`.
    Fill { mem: &'a B::RawMem, offset: usize, size: usize, pattern: &'a [u8] },
    /// A rect read (`read`) or write between `mem` and host memory at
    /// `host`; `region` is bytes, rows and slices, none zero.
    HostRect { read: bool, mem: &'a B::RawMem, buffer: RectSide, host: *mut c_void, host_side: RectSide, region: [usize; 3] },
    CopyRect { src: &'a B::RawMem, src_side: RectSide, dst: &'a B::RawMem, dst_side: RectSide, region: [usize; 3] },
    /// Maps `size` bytes from `offset`; the pointer goes to `out` as the
    /// command is enqueued (the data is there when it completes).
    Map { mem: &'a B::RawMem, offset: usize, size: usize, flags: ur_map_flags_t, out: &'a mut *mut c_void },
    /// Ends a map of `mem` made at `ptr`.
    Unmap { mem: &'a B::RawMem, ptr: *mut c_void },
}

/// The base and size of the live USM allocation of `context` that starts
/// at `native` (`urMemBufferCreateWithNativeHandle` over an address): any
/// other address, an interior one included, is `INVALID_VALUE`.
pub fn imported_usm<B: Backend>(context: &Context<B>, native: ur_native_handle_t) -> UrResult<(usize, usize)> {
    match context.usm_alloc_info(native as *const c_void) {
        Some(info) if info.base as usize == native as usize => Ok((native as usize, info.size)),
        _ => Err(UR_RESULT_ERROR_INVALID_VALUE),
    }
}

/// A USM allocation of `kind` of the context for a buffer of `size` bytes,
/// holding the caller's data `host` when given; its address.
pub fn usm_storage<B: Backend>(context: &Context<B>, kind: UsmKind, size: usize, host: Option<*mut c_void>) -> UrResult<usize> {
    let request = AllocRequest { kind, size, align: 0, device: None, pool: None, hints: 0, host_flags: 0, device_flags: 0 };
    let storage = B::RawContext::usm_alloc(context, request).map_err(|e| match e {
        UR_RESULT_ERROR_INVALID_USM_SIZE => UR_RESULT_ERROR_INVALID_BUFFER_SIZE,
        e => e,
    })?;
    if let Some(host) = host {
        // SAFETY: the caller's `size` bytes (UR requires them readable for
        // the call); the storage was just made, `size` long, and no command
        // uses it yet, so the host may write it (host and shared USM).
        unsafe { std::ptr::copy_nonoverlapping(host as *const u8, storage as *mut u8, size) };
    }
    Ok(storage as usize)
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
    /// The raw part: a root buffer's always; a sub-buffer's where its
    /// backend makes one (`RawMem::partition`).
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
        let flags = with_access(flags);
        let (storage, raw) = B::RawMem::create(&context, size, host, flags)?;
        Ok(Self::new(context, flags, size, MemKind::Buffer { storage }, Some(raw)))
    }

    /// A root buffer over a native handle (checked), read-write.
    pub fn from_native(context: Arc<Context<B>>, native: ur_native_handle_t, ownership: NativeOwnership) -> UrResult<Arc<Self>> {
        let (storage, size, raw) = B::RawMem::from_native(&context, native, ownership)?;
        Ok(Self::new(context, UR_MEM_FLAG_READ_WRITE.0, size, MemKind::Buffer { storage }, Some(raw)))
    }

    /// A sub-buffer of root `parent` (checked region and flags).
    pub fn partition(parent: Arc<Self>, flags: ur_mem_flags_t, origin: usize, size: usize) -> UrResult<Arc<Self>> {
        let flags = if flags & ACCESS_FLAGS == 0 { parent.flags & ACCESS_FLAGS } else { flags };
        let raw = parent.root_raw().0.partition(origin, size, flags)?;
        Ok(Self::new(parent.context.clone(), flags, size, MemKind::Sub { parent, origin }, raw))
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

    /// The root buffer's raw part and this handle's offset in it.
    pub fn root_raw(&self) -> (&B::RawMem, usize) {
        let (root, origin) = self.root();
        (root.raw.as_ref().expect("a root buffer keeps its raw part until it drops"), origin)
    }

    pub fn is_sub_buffer(&self) -> bool {
        matches!(self.kind, MemKind::Sub { .. })
    }

    /// Records a live map at `ptr` of `size` bytes from `offset`.
    pub fn record_map(&self, ptr: *mut c_void, offset: usize, size: usize) {
        self.maps.lock().push(MapRecord { ptr: ptr as usize, offset, size });
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
