//! USM on OpenCL: allocations through `cl_intel_unified_shared_memory` where
//! the platform has it, else through SVM; the table that lets any pointer
//! into an allocation find it; fills, copies and kernel pointer arguments
//! for either path; and USM pools. A pool serves asynchronous allocations
//! (`urEnqueueUSM*AllocExp`) from engine pools (`ur_core::engine`) that it
//! makes per USM kind and device on first use; a blocking allocation with a
//! pool is the runtime's own, tagged with the pool (for
//! `UR_USM_ALLOC_INFO_POOL`), zeroed when asked and counted in its
//! statistics. Releasing a pool leaves its live allocations valid until
//! they are freed.
//!
//! On the SVM path, device memory is a coarse-grained SVM buffer (only the
//! device and the copy/fill commands touch it), while host and shared memory
//! are fine-grained SVM buffers, which the host may read and write at any
//! time without mapping. Devices without fine-grained buffers report no host
//! or shared USM support, so no memory is handed out whose host access
//! would be wrong.
//!
//! The runtime's allocation entry points of a context ([`RawUsm`]) serve
//! both `urUSM*Alloc` and the engine pools' raw memory ([`ClMemory`], the
//! engine's `MemorySource`).

pub mod buffer;

use crate::context::{self, Context, ContextCl};
use crate::device::platform::Platform;
use crate::device::{self, Device, UsmPath};
use crate::driver::{call, wait_list_ptr};
use crate::conv::{self, check, ClResultExt};
use crate::OpenCl;
use cl3::ext as sys;
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::{Arc, Weak};
use sys::{cl_event, cl_int};
use ur_core::engine::{self, MemorySource, OutOfMemory, UsmKind};
use ur_core::hal::{AllocInfo, AllocRequest};
use ur_core::handle::arc_of;
use ur_core::pool::RawPool;
use ur_core::usm_async::{PoolApi, PoolDesc};
use ur_core::usm_pool::PoolBase;
use ur_core::usm_registry::Registered;
use ur_core::context::RawMemory;
use ur_core::*;

/// One live USM allocation of a context.
#[derive(Clone)]
pub struct Allocation {
    /// The address the user got.
    pub base: usize,
    pub size: usize,
    pub kind: ur_usm_type_t,
    /// `None` for host memory.
    pub device: Option<&'static Device>,
    pub pool: Option<Weak<UsmPool>>,
    /// The runtime's address of the memory, to free: below `base` when the
    /// runtime could not align it as asked and the adapter over-allocated.
    pub raw: usize,
}

impl Registered for Allocation {
    fn span(&self) -> (usize, usize) {
        (self.base, self.size)
    }
}

/// The largest alignment every OpenCL device gives on its own: that of its
/// largest data type (`long16`, 128 bytes). Larger ones are honoured by
/// over-allocating where the runtime refuses them (SVM).
const NATIVE_ALIGN: u32 = 128;

/// Least slab an engine pool takes from the runtime, unless the pool's
/// descriptor names one (a bigger block gets a slab of its own size).
/// OpenCL has no virtual memory: a slab goes back only when wholly free,
/// and no block spans two, so the pool holds whole slabs that free space
/// pins. `ur_bench` scenario 5 (reserved / used high water under 8, 64 and
/// 512 MiB live) reads 1.62, 1.23 and 1.10 with 1 MiB slabs, 2.00, 1.25 and
/// 1.09 with 4 MiB, and 256 KiB ones gain nothing more for more calls to
/// the runtime.
const SLAB_SIZE: usize = 1 << 20;

/// What the runtime is asked for: the kind, device and Intel allocation
/// flags of one `urUSM*Alloc`.
struct RuntimeRequest {
    kind: ur_usm_type_t,
    device: Option<&'static Device>,
    flags: sys::cl_bitfield,
}

impl RawMemory<OpenCl> for ContextCl {
    type Allocation = Allocation;

    /// Pools are offered wherever USM is.
    fn pools_supported(context: &Context) -> bool {
        context::usm_path(context) != UsmPath::None
    }

    /// `urUSMHostAlloc`, `urUSMDeviceAlloc`, `urUSMSharedAlloc` (the core
    /// checked the size, the kind, the device, the pool and the alignment).
    fn usm_alloc(ctx: &Context, req: AllocRequest<'_, OpenCl>) -> UrResult<*mut c_void> {
        // 0: the runtime's default.
        let align = u32::try_from(req.align).map_err(|_| UR_RESULT_ERROR_INVALID_VALUE)?;
        let runtime = RuntimeRequest {
            kind: req.kind.to_ur(),
            device: req.device.map(device::kept),
            flags: conv::usm_alloc_flags(req.host_flags, req.device_flags),
        };
        let (ptr, raw) = match context::usm_path(ctx) {
            UsmPath::Intel => {
                let p = runtime_alloc(ctx, &runtime, req.size, align)?;
                (p, p)
            }
            // SVM runtimes refuse alignments past their largest data type:
            // take more and align inside, keeping the runtime's address to free.
            UsmPath::Svm if align > NATIVE_ALIGN => {
                let extra = (align - NATIVE_ALIGN) as usize;
                let size = req.size.checked_add(extra).ok_or(UR_RESULT_ERROR_INVALID_USM_SIZE)?;
                let raw = runtime_alloc(ctx, &runtime, size, NATIVE_ALIGN)?;
                ((raw as usize).next_multiple_of(align as usize) as *mut c_void, raw)
            }
            UsmPath::Svm => {
                let p = runtime_alloc(ctx, &runtime, req.size, align)?;
                (p, p)
            }
            UsmPath::None => return Err(UR_RESULT_ERROR_INVALID_OPERATION),
        };
        let allocation = Allocation {
            base: ptr as usize,
            size: req.size,
            kind: runtime.kind,
            device: runtime.device,
            pool: req.pool.map(|p| Arc::downgrade(&arc_of(p))),
            raw: raw as usize,
        };
        if let Some(pool) = req.pool {
            if pool.base.zero_init() {
                if let Err(e) = zero(ctx, &allocation) {
                    release_backing(ctx, &allocation);
                    return Err(e);
                }
            }
            pool.base.engine.account_blocking(req.size as isize);
        }
        ctx.usm.insert(allocation);
        Ok(ptr)
    }

    /// `urUSMFree`: only the base of a live allocation may be freed. Commands
    /// still using the memory finish first.
    fn usm_free(ctx: &Context, ptr: *mut c_void) -> UrResult {
        let Ok(a) = ctx.usm.remove(ptr as usize) else {
            // A block of an engine pool: every command of the context finishes
            // first.
            let finish_all = || context::finish_all_queues(ctx);
            return ctx.slabs.free_blocking(ptr as usize, finish_all, |stamp| context::wait_for_stamp(ctx, stamp));
        };
        if context::usm_path(ctx) == UsmPath::Svm {
            // clSVMFree does not wait for commands that use the memory.
            if let Err(e) = context::finish_all_queues(ctx) {
                ctx.usm.insert(a);
                return Err(e);
            }
        }
        release_backing(ctx, &a);
        Ok(())
    }

    /// Looks a pointer up: first in the context's own table (any pointer into
    /// an allocation finds it), then, on the Intel path, in the runtime's table,
    /// which also knows memory allocated around this adapter.
    fn usm_alloc_info(ctx: &Context, ptr: *const c_void) -> Option<AllocInfo<OpenCl>> {
        if let Some(a) = ctx.usm.with(ptr as usize, Allocation::clone) {
            // A released pool is reported as none.
            let pool = a.pool.as_ref().filter(|p| p.strong_count() > 0);
            let pool = pool.map_or(std::ptr::null_mut(), ur_core::handle::handle_of_weak);
            return Some(AllocInfo::new(a.kind, a.base as *mut c_void, a.size, device_handle(a.device), pool));
        }
        let usm = ctx.raw.platform.raw.intel_usm.as_ref()?;
        let query = |param: sys::cl_mem_info_intel, out: *mut c_void, size: usize| {
            // SAFETY: the runtime writes at most `size` bytes to `out`.
            unsafe { (usm.get_alloc_info)(ctx.raw.cl.get(), ptr, param, size, out, std::ptr::null_mut()) }
        };
        let mut kind: sys::cl_uint = 0;
        let mut base: usize = 0;
        let mut size: usize = 0;
        let mut device: sys::cl_device_id = std::ptr::null_mut();
        let ok = query(sys::CL_MEM_ALLOC_TYPE_INTEL, &mut kind as *mut _ as *mut c_void, 4) == sys::CL_SUCCESS
            && conv::usm_type_from_intel(kind) != UR_USM_TYPE_UNKNOWN
            && query(sys::CL_MEM_ALLOC_BASE_PTR_INTEL, &mut base as *mut _ as *mut c_void, 8) == sys::CL_SUCCESS
            && query(sys::CL_MEM_ALLOC_SIZE_INTEL, &mut size as *mut _ as *mut c_void, 8) == sys::CL_SUCCESS
            && query(sys::CL_MEM_ALLOC_DEVICE_INTEL, &mut device as *mut _ as *mut c_void, 8) == sys::CL_SUCCESS;
        let device = device_handle(context::device_by_id(ctx, device));
        ok.then(|| AllocInfo::new(conv::usm_type_from_intel(kind), base as *mut c_void, size, device, std::ptr::null_mut()))
    }
    /// A user's pool: of `urUSMPoolCreate` when `device` is `None` (`api`
    /// Classic), else of `urUSMPoolCreateExp` (`api` Exp).
    fn pool_create(context: &Context, device: Option<&Device>, desc: PoolDesc, api: PoolApi) -> UrResult<Arc<UsmPool>> {
        if context::usm_path(context) == UsmPath::None {
            return Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
        }
        let (context, device) = (arc_of(context), device.map(device::kept));
        let base = PoolBase::user(&context, device, context.devices.iter().copied(), desc, api);
        let pool = UsmPool::new(base, PoolCl { _owner: Some(context.clone()) });
        context.pools.add_user(&pool);
        Ok(pool)
    }

    /// The default pool of `device` in `context` (made once by the context).
    fn make_default_pool(context: &Context, device: &Device) -> UrResult<Arc<UsmPool>> {
        let base = PoolBase::device_default(&arc_of(context), device::kept(device));
        Ok(UsmPool::new(base, PoolCl { _owner: None }))
    }
}

/// The runtime's allocation for `req`, `size` bytes aligned to `align`.
fn runtime_alloc(ctx: &Context, req: &RuntimeRequest, size: usize, align: u32) -> UrResult<*mut c_void> {
    match context::raw_usm(ctx).alloc(req.kind, req.device, size, align, req.flags) {
        Ok(p) => Ok(p.as_ptr()),
        Err(sys::CL_OUT_OF_RESOURCES | sys::CL_MEM_OBJECT_ALLOCATION_FAILURE | sys::CL_OUT_OF_HOST_MEMORY) => {
            Err(out_of_memory(req.kind))
        }
        Err(sys::CL_INVALID_BUFFER_SIZE) => Err(UR_RESULT_ERROR_INVALID_USM_SIZE),
        Err(e) => Err(conv::result(e)),
    }
}

fn out_of_memory(kind: ur_usm_type_t) -> ur_result_t {
    if kind == UR_USM_TYPE_HOST {
        UR_RESULT_ERROR_OUT_OF_HOST_MEMORY
    } else {
        UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY
    }
}

/// Zeroes a new pool allocation, for `UR_USM_POOL_FLAG_ZERO_INITIALIZE_BLOCK`.
fn zero(ctx: &Context, a: &Allocation) -> UrResult {
    let device = a.device.unwrap_or(ctx.devices[0]);
    let queue = ctx.raw.internal_queue(device)?;
    let zero = [0u8; 1];
    enqueue_fill(ctx, queue.get(), a.base as *mut c_void, &zero, a.size, &[], std::ptr::null_mut()).ur()?;
    queue.finish().ur()
}

/// Returns an allocation's memory to the runtime, and its bytes to its pool.
/// The Intel path waits for commands using it; callers of the SVM path
/// make sure none are left.
pub(crate) fn release_backing(ctx: &Context, a: &Allocation) {
    // SAFETY: `raw` came from this context's allocator and its allocation
    // was removed from the table, so it is freed once.
    unsafe { context::raw_usm(ctx).free(a.raw as *mut c_void, true) };
    if let Some(pool) = a.pool.as_ref().and_then(Weak::upgrade) {
        pool.base.engine.account_blocking(-(a.size as isize));
    }
}

fn device_handle(device: Option<&'static Device>) -> ur_device_handle_t {
    device.map_or(std::ptr::null_mut(), |d| d.handle())
}

/// The largest fill pattern OpenCL takes (a `long16`/`double16`).
const MAX_CL_PATTERN: usize = 128;

/// Fills `size` bytes at `ptr` with `pattern` on `queue`.
pub fn enqueue_fill(
    ctx: &Context,
    queue: sys::cl_command_queue,
    ptr: *mut c_void,
    pattern: &[u8],
    size: usize,
    waits: &[cl_event],
    event: *mut cl_event,
) -> Result<(), cl_int> {
    if pattern.len() > MAX_CL_PATTERN {
        // OpenCL fills take patterns up to 128 bytes: copy the repeated
        // pattern instead. The copy blocks, so the buffer outlives it.
        let repeated: Vec<u8> = pattern.iter().copied().cycle().take(size).collect();
        return enqueue_copy(ctx, queue, true, ptr, repeated.as_ptr() as *const c_void, size, waits, event);
    }
    let n = waits.len() as sys::cl_uint;
    match context::usm_path(ctx) {
        UsmPath::Intel => {
            let usm = ctx.raw.platform.raw.intel_usm.as_ref().ok_or(sys::CL_INVALID_OPERATION)?;
            // SAFETY: live queue and memory of its context; the pattern is
            // copied by the runtime before the call returns.
            check(unsafe {
                (usm.enqueue_fill)(
                    queue,
                    ptr,
                    pattern.as_ptr() as *const c_void,
                    pattern.len(),
                    size,
                    n,
                    wait_list_ptr(waits),
                    event,
                )
            })
        }
        _ => check(call!(clEnqueueSVMMemFill(
            queue,
            ptr,
            pattern.as_ptr() as *const c_void,
            pattern.len(),
            size,
            n,
            wait_list_ptr(waits),
            event,
        ))),
    }
}

/// Copies `size` bytes from `src` to `dst` on `queue`.
#[allow(clippy::too_many_arguments)]
pub fn enqueue_copy(
    ctx: &Context,
    queue: sys::cl_command_queue,
    blocking: bool,
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    waits: &[cl_event],
    event: *mut cl_event,
) -> Result<(), cl_int> {
    let n = waits.len() as sys::cl_uint;
    let blocking = blocking as sys::cl_bool;
    match context::usm_path(ctx) {
        UsmPath::Intel => {
            let usm = ctx.raw.platform.raw.intel_usm.as_ref().ok_or(sys::CL_INVALID_OPERATION)?;
            // SAFETY: live queue; the pointers' validity is the caller's
            // promise to UR, which the runtime checks as far as it can.
            check(unsafe { (usm.enqueue_copy)(queue, blocking, dst, src, size, n, wait_list_ptr(waits), event) })
        }
        _ => check(call!(clEnqueueSVMMemcpy(queue, blocking, dst, src, size, n, wait_list_ptr(waits), event))),
    }
}

/// Sets a kernel's pointer argument to a USM pointer.
pub fn set_kernel_arg_pointer(
    ctx: &Context,
    kernel: sys::cl_kernel,
    index: u32,
    ptr: *const c_void,
) -> Result<(), cl_int> {
    match context::usm_path(ctx) {
        UsmPath::Intel => {
            let usm = ctx.raw.platform.raw.intel_usm.as_ref().ok_or(sys::CL_INVALID_OPERATION)?;
            // SAFETY: a live kernel of this platform; the runtime reads only
            // the pointer value.
            check(unsafe { (usm.set_kernel_arg_pointer)(kernel, index, ptr) })
        }
        _ if ptr.is_null() => {
            // A null pointer is no SVM pointer: pass it as a plain value.
            let null: *const c_void = std::ptr::null();
            check(call!(clSetKernelArg(
                kernel,
                index,
                std::mem::size_of::<*const c_void>(),
                &null as *const _ as *const c_void
            )))
        }
        _ => check(call!(clSetKernelArgSVMPointer(kernel, index, ptr))),
    }
}

/// A UR USM pool of this adapter.
pub type UsmPool = ur_core::pool::UsmPool<OpenCl>;

/// What this adapter keeps beside a pool's base: OpenCL has no pool object
/// of its own, so only a user's pool's hold on its context.
pub struct PoolCl {
    /// A user's pool keeps its context alive, as its handle does.
    _owner: Option<Arc<Context>>,
}

impl RawPool<OpenCl> for PoolCl {
    const MIN_SLAB_SIZE: Option<usize> = Some(SLAB_SIZE);

    /// The runtime's USM (or SVM) memory, in slabs of [`SLAB_SIZE`]. A pool
    /// of `urUSMPoolCreate` keeps each device's device memory apart; its
    /// host and shared memory belong to no device and serve every device
    /// of the context.
    fn make_engine_pool(
        pool: &UsmPool,
        kind: UsmKind,
        context: Arc<Context>,
        config: engine::PoolConfig,
        serving: Option<&&'static Device>,
    ) -> UrResult<Arc<engine::Pool>> {
        let (raw, slabs) = (crate::context::raw_usm(&context), context.slabs.clone());
        Ok(SlabOwner::new_engine_pool(context.engine.dag().clone(), config, &pool.me, kind, serving, |owner| {
            Arc::new(ClMemory::new(raw, slabs, owner))
        }))
    }
}

/// The runtime allocation entry points of one context, shared by
/// `urUSM*Alloc` and the engine's slabs.
#[derive(Clone, Copy)]
pub struct RawUsm {
    pub cl: sys::cl_context,
    pub platform: &'static Platform,
    pub path: UsmPath,
    /// SVM path: host and shared memory may carry `CL_MEM_SVM_ATOMICS`.
    pub svm_atomics: bool,
}

// SAFETY: OpenCL contexts are thread-safe; the rest is plain data.
unsafe impl Send for RawUsm {}
unsafe impl Sync for RawUsm {}

impl RawUsm {
    /// `size` bytes of `kind` memory aligned to `align` (0: the runtime's
    /// default), with Intel allocation properties `flags`; `None` when the
    /// runtime refuses (`Some(error)` for an error other than exhaustion).
    pub fn alloc(
        &self,
        kind: ur_usm_type_t,
        device: Option<&Device>,
        size: usize,
        align: u32,
        flags: sys::cl_bitfield,
    ) -> Result<NonNull<c_void>, cl_int> {
        let ptr = match self.path {
            UsmPath::Intel => {
                let usm = self.platform.raw.intel_usm.as_ref().ok_or(sys::CL_INVALID_OPERATION)?;
                let props: [sys::cl_mem_properties_intel; 3] = [sys::CL_MEM_ALLOC_FLAGS_INTEL, flags, 0];
                let props_ptr = if flags != 0 { props.as_ptr() } else { std::ptr::null() };
                let mut err: cl_int = sys::CL_SUCCESS;
                // SAFETY: entry points of this context's platform, called with
                // a live context, a device of it, a zero-terminated property
                // list and an error out-pointer we own.
                let p = unsafe {
                    match (kind, device) {
                        (UR_USM_TYPE_HOST, _) => (usm.host_alloc)(self.cl, props_ptr, size, align, &mut err),
                        (UR_USM_TYPE_DEVICE, Some(d)) => {
                            (usm.device_alloc)(self.cl, d.raw.id, props_ptr, size, align, &mut err)
                        }
                        (_, d) => {
                            let id = d.map_or(std::ptr::null_mut(), |d| d.raw.id);
                            (usm.shared_alloc)(self.cl, id, props_ptr, size, align, &mut err)
                        }
                    }
                };
                if p.is_null() && err == sys::CL_SUCCESS {
                    err = sys::CL_OUT_OF_RESOURCES;
                }
                NonNull::new(p).ok_or(err)?
            }
            UsmPath::Svm => {
                let mut svm_flags = sys::CL_MEM_READ_WRITE;
                if kind != UR_USM_TYPE_DEVICE {
                    // Host-visible at all times, without map/unmap.
                    svm_flags |= sys::CL_MEM_SVM_FINE_GRAIN_BUFFER;
                    if self.svm_atomics {
                        svm_flags |= sys::CL_MEM_SVM_ATOMICS;
                    }
                }
                // SAFETY: a live context and flags OpenCL defines for clSVMAlloc.
                let p = unsafe { cl3::memory::svm_alloc(self.cl, svm_flags, size, align) }
                    .map_err(|_| sys::CL_OUT_OF_RESOURCES)?;
                NonNull::new(p).ok_or(sys::CL_OUT_OF_RESOURCES)?
            }
            UsmPath::None => return Err(sys::CL_INVALID_OPERATION),
        };
        Ok(ptr)
    }

    /// Gives memory from [`alloc`](Self::alloc) back. With `blocking`, the
    /// Intel path waits for commands still using it; otherwise (and always
    /// on the SVM path) the caller makes sure that none are left.
    ///
    /// # Safety
    /// `ptr` came from `alloc` on this context and is released once.
    pub unsafe fn free(&self, ptr: *mut c_void, blocking: bool) {
        match self.path {
            UsmPath::Intel => {
                if let Some(usm) = &self.platform.raw.intel_usm {
                    let status = if blocking { (usm.blocking_free)(self.cl, ptr) } else { (usm.free)(self.cl, ptr) };
                    if status != sys::CL_SUCCESS {
                        log::warning(&format!("clMem(Blocking)FreeINTEL failed: {status}"));
                    }
                }
            }
            UsmPath::Svm => {
                let _ = cl3::memory::svm_free(self.cl, ptr);
            }
            UsmPath::None => {}
        }
    }
}

/// Whose an engine slab is: what any address inside pool memory reports.
pub type SlabOwner = ur_core::usm_pool::SlabOwner<UsmPool, &'static Device>;

/// The engine slabs of one context by address.
pub type SlabMap = engine::SlabMap<SlabOwner>;

/// Raw memory of one (context, device, USM kind) for engine pools; each
/// slab is entered in the context's [`SlabMap`]. It holds its own reference
/// to the OpenCL context, so that slabs can go back after the UR context is
/// gone (a destroyed pool's slabs wait for the queues that may still use
/// them).
pub struct ClMemory {
    raw: RawUsm,
    slabs: Arc<SlabMap>,
    owner: SlabOwner,
}

impl ClMemory {
    pub fn new(raw: RawUsm, slabs: Arc<SlabMap>, owner: SlabOwner) -> ClMemory {
        // SAFETY: a live context; released once in Drop.
        let _ = unsafe { cl3::context::retain_context(raw.cl) };
        ClMemory { raw, slabs, owner }
    }
}

impl Drop for ClMemory {
    fn drop(&mut self) {
        // SAFETY: the reference taken in `new`.
        let _ = unsafe { cl3::context::release_context(self.raw.cl) };
    }
}

impl MemorySource for ClMemory {
    fn allocate(&self, size: usize, align: usize) -> Result<NonNull<u8>, OutOfMemory> {
        let align = u32::try_from(align).map_err(|_| OutOfMemory)?;
        let o = &self.owner;
        let p = self.raw.alloc(o.kind.to_ur(), o.device, size, align, 0).map_err(|_| OutOfMemory)?;
        self.slabs.insert(p.as_ptr() as usize, size, self.owner.clone());
        Ok(p.cast())
    }

    unsafe fn release(&self, ptr: NonNull<u8>, _size: usize, _align: usize) {
        self.slabs.remove(ptr.as_ptr() as usize);
        // SAFETY: the engine gives back a slab it took from `allocate`, once
        // no recorded command can still touch it: nothing to wait for (and
        // this may run where OpenCL forbids blocking, see `QueueCl`'s release).
        self.raw.free(ptr.as_ptr().cast(), false);
    }
}
