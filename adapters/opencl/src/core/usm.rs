//! USM on OpenCL: allocations through `cl_intel_unified_shared_memory` where
//! the platform has it, else through SVM; the table that lets any pointer
//! into an allocation find it; fills, copies and kernel pointer arguments
//! for either path; and USM pools. A pool here tags its allocations (for
//! `UR_USM_ALLOC_INFO_POOL`), zeroes them when asked and counts their bytes;
//! keeping freed blocks for reuse is the async pool engine's part. Releasing
//! a pool leaves its live allocations valid until they are freed.
//!
//! On the SVM path, device memory is a coarse-grained SVM buffer (only the
//! device and the copy/fill commands touch it), while host and shared memory
//! are fine-grained SVM buffers, which the host may read and write at any
//! time without mapping. Devices without fine-grained buffers report no host
//! or shared USM support, so no memory is handed out whose host access
//! would be wrong.

use super::context::Context;
use super::device::{Device, UsmPath};
use super::refcount::{Counted, UserRefs};
use crate::cl::{call, wait_list_ptr};
use crate::conv::{self, check, ClResultExt};
use crate::DDI;
use cl3::ext as sys;
use std::ffi::c_void;
use std::sync::{Arc, Mutex, Weak};
use sys::{cl_event, cl_int};
use ur_core::handle::{HandleHeader, ObjectKind, UrObject};
use ur_core::*;

/// One live USM allocation of a context.
#[derive(Clone)]
pub struct Allocation {
    pub base: usize,
    pub size: usize,
    pub kind: ur_usm_type_t,
    /// `None` for host memory.
    pub device: Option<&'static Device>,
    pub pool: Option<Weak<UsmPool>>,
}

/// What a `urUSM*Alloc` asks for, after argument checks.
pub struct AllocRequest {
    pub kind: ur_usm_type_t,
    pub device: Option<&'static Device>,
    pub size: usize,
    /// 0: the runtime's default.
    pub align: u32,
    pub host_flags: ur_usm_host_mem_flags_t,
    pub device_flags: ur_usm_device_mem_flags_t,
    pub pool: Option<Arc<UsmPool>>,
}

/// `urUSMHostAlloc`, `urUSMDeviceAlloc`, `urUSMSharedAlloc`.
pub fn alloc(ctx: &Context, req: AllocRequest) -> UrResult<*mut c_void> {
    if req.size == 0 {
        return Err(UR_RESULT_ERROR_INVALID_USM_SIZE);
    }
    if req.align & req.align.wrapping_sub(1) != 0 {
        return Err(UR_RESULT_ERROR_INVALID_VALUE);
    }
    if let Some(pool) = &req.pool {
        if !std::ptr::eq(Arc::as_ptr(&pool.context), ctx) {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
    }
    let limit_devices: Vec<&'static Device> = match req.device {
        Some(d) => {
            if !ctx.has_device(d) {
                return Err(UR_RESULT_ERROR_INVALID_DEVICE);
            }
            vec![d]
        }
        None => ctx.devices.clone(),
    };
    if limit_devices.iter().any(|d| req.size as u64 > d.max_mem_alloc) {
        return Err(UR_RESULT_ERROR_INVALID_USM_SIZE);
    }
    let supported = match req.kind {
        UR_USM_TYPE_HOST => ctx.devices.iter().any(|d| d.usm_host != 0),
        UR_USM_TYPE_DEVICE => limit_devices[0].usm_device != 0,
        _ => limit_devices[0].usm_single_shared | limit_devices[0].usm_cross_shared != 0,
    };
    if !supported {
        return Err(UR_RESULT_ERROR_INVALID_OPERATION);
    }

    let ptr = match ctx.usm_path() {
        UsmPath::Intel => intel_alloc(ctx, &req)?,
        UsmPath::Svm => svm_alloc(ctx, &req)?,
        UsmPath::None => return Err(UR_RESULT_ERROR_INVALID_OPERATION),
    };
    let allocation = Allocation {
        base: ptr as usize,
        size: req.size,
        kind: req.kind,
        device: req.device,
        pool: req.pool.as_ref().map(Arc::downgrade),
    };
    if let Some(pool) = &req.pool {
        if pool.zero_init {
            if let Err(e) = zero(ctx, &allocation) {
                release_backing(ctx, &allocation);
                return Err(e);
            }
        }
        pool.account(req.size as isize);
    }
    ctx.allocations().insert(allocation.base, allocation);
    Ok(ptr)
}

fn intel_alloc(ctx: &Context, req: &AllocRequest) -> UrResult<*mut c_void> {
    let usm = ctx.platform.intel_usm.as_ref().ok_or(UR_RESULT_ERROR_INVALID_OPERATION)?;
    let flags = conv::usm_alloc_flags(req.host_flags, req.device_flags);
    let props: [sys::cl_mem_properties_intel; 3] = [sys::CL_MEM_ALLOC_FLAGS_INTEL, flags, 0];
    let props_ptr = if flags != 0 { props.as_ptr() } else { std::ptr::null() };
    let mut err: cl_int = sys::CL_SUCCESS;
    let cl_ctx = ctx.cl.get();
    // SAFETY: entry points of this context's platform, called with a live
    // context, a device of it, a zero-terminated property list and an error
    // out-pointer we own.
    let ptr = unsafe {
        match (req.kind, req.device) {
            (UR_USM_TYPE_HOST, _) => (usm.host_alloc)(cl_ctx, props_ptr, req.size, req.align, &mut err),
            (UR_USM_TYPE_DEVICE, Some(d)) => (usm.device_alloc)(cl_ctx, d.id, props_ptr, req.size, req.align, &mut err),
            (_, d) => {
                let id = d.map_or(std::ptr::null_mut(), |d| d.id);
                (usm.shared_alloc)(cl_ctx, id, props_ptr, req.size, req.align, &mut err)
            }
        }
    };
    if ptr.is_null() {
        return Err(match err {
            sys::CL_SUCCESS | sys::CL_OUT_OF_RESOURCES | sys::CL_MEM_OBJECT_ALLOCATION_FAILURE => {
                out_of_memory(req.kind)
            }
            sys::CL_INVALID_BUFFER_SIZE => UR_RESULT_ERROR_INVALID_USM_SIZE,
            e => conv::result(e),
        });
    }
    Ok(ptr)
}

fn svm_alloc(ctx: &Context, req: &AllocRequest) -> UrResult<*mut c_void> {
    let mut flags = sys::CL_MEM_READ_WRITE;
    if req.kind != UR_USM_TYPE_DEVICE {
        // Host-visible at all times, without map/unmap.
        flags |= sys::CL_MEM_SVM_FINE_GRAIN_BUFFER;
        if ctx.devices.iter().all(|d| d.svm & sys::CL_DEVICE_SVM_ATOMICS != 0) {
            flags |= sys::CL_MEM_SVM_ATOMICS;
        }
    }
    // SAFETY: a live context and flags OpenCL defines for clSVMAlloc.
    unsafe { cl3::memory::svm_alloc(ctx.cl.get(), flags, req.size, req.align) }.map_err(|_| out_of_memory(req.kind))
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
    let queue = ctx.internal_queue(device)?;
    let zero = [0u8; 1];
    enqueue_fill(ctx, queue.get(), a.base as *mut c_void, &zero, a.size, &[], std::ptr::null_mut()).ur()?;
    queue.finish().ur()
}

/// `urUSMFree`: only the base of a live allocation may be freed. Commands
/// still using the memory finish first.
pub fn free(ctx: &Context, ptr: *mut c_void) -> UrResult {
    let a = ctx.allocations().remove(&(ptr as usize)).ok_or(UR_RESULT_ERROR_INVALID_MEM_OBJECT)?;
    if ctx.usm_path() == UsmPath::Svm {
        // clSVMFree does not wait for commands that use the memory.
        if let Err(e) = ctx.finish_all_queues() {
            ctx.allocations().insert(a.base, a);
            return Err(e);
        }
    }
    release_backing(ctx, &a);
    Ok(())
}

/// Returns an allocation's memory to the runtime, and its bytes to its pool.
/// The Intel path waits for commands using it; callers of the SVM path
/// make sure none are left.
pub(crate) fn release_backing(ctx: &Context, a: &Allocation) {
    match ctx.usm_path() {
        UsmPath::Intel => {
            if let Some(usm) = &ctx.platform.intel_usm {
                // SAFETY: `a.base` came from this platform's allocator in this
                // context and was removed from the table, so it is freed once.
                let status = unsafe { (usm.blocking_free)(ctx.cl.get(), a.base as *mut c_void) };
                if status != sys::CL_SUCCESS {
                    log::warning(&format!("clMemBlockingFreeINTEL failed: {status}"));
                }
            }
        }
        UsmPath::Svm => {
            // SAFETY: as above, from clSVMAlloc in this context.
            let _ = unsafe { cl3::memory::svm_free(ctx.cl.get(), a.base as *mut c_void) };
        }
        UsmPath::None => {}
    }
    if let Some(pool) = a.pool.as_ref().and_then(Weak::upgrade) {
        pool.account(-(a.size as isize));
    }
}

/// What `urUSMGetMemAllocInfo` reports about a pointer.
pub struct PointerInfo {
    pub kind: ur_usm_type_t,
    pub base: usize,
    pub size: usize,
    pub device: Option<&'static Device>,
    pub pool: ur_usm_pool_handle_t,
}

/// Looks a pointer up: first in the context's own table (any pointer into
/// an allocation finds it), then, on the Intel path, in the runtime's table,
/// which also knows memory allocated around this adapter.
pub fn pointer_info(ctx: &Context, ptr: *const c_void) -> Option<PointerInfo> {
    if let Some((a, _)) = ctx.find_allocation(ptr as usize) {
        return Some(PointerInfo {
            kind: a.kind,
            base: a.base,
            size: a.size,
            device: a.device,
            // A released pool is reported as none.
            pool: a
                .pool
                .as_ref()
                .filter(|p| p.strong_count() > 0)
                .map_or(std::ptr::null_mut(), |p| Weak::as_ptr(p) as ur_usm_pool_handle_t),
        });
    }
    let usm = ctx.platform.intel_usm.as_ref()?;
    let query = |param: sys::cl_mem_info_intel, out: *mut c_void, size: usize| {
        // SAFETY: the runtime writes at most `size` bytes to `out`.
        unsafe { (usm.get_alloc_info)(ctx.cl.get(), ptr, param, size, out, std::ptr::null_mut()) }
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
    ok.then(|| PointerInfo {
        kind: conv::usm_type_from_intel(kind),
        base,
        size,
        device: ctx.device_by_id(device),
        pool: std::ptr::null_mut(),
    })
}

/// Checks that `[ptr, ptr + len)` stays inside its allocation, when the
/// pointer is one of this context's (other pointers are the runtime's to
/// judge).
pub fn check_bounds(ctx: &Context, ptr: *const c_void, len: usize) -> UrResult {
    match ctx.find_allocation(ptr as usize) {
        Some((a, offset)) if offset.checked_add(len).is_none_or(|end| end > a.size) => {
            Err(UR_RESULT_ERROR_INVALID_SIZE)
        }
        _ => Ok(()),
    }
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
    match ctx.usm_path() {
        UsmPath::Intel => {
            let usm = ctx.platform.intel_usm.as_ref().ok_or(sys::CL_INVALID_OPERATION)?;
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
    match ctx.usm_path() {
        UsmPath::Intel => {
            let usm = ctx.platform.intel_usm.as_ref().ok_or(sys::CL_INVALID_OPERATION)?;
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
    match ctx.usm_path() {
        UsmPath::Intel => {
            let usm = ctx.platform.intel_usm.as_ref().ok_or(sys::CL_INVALID_OPERATION)?;
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

#[repr(C)]
pub struct UsmPool {
    header: HandleHeader,
    pub refs: UserRefs,
    pub context: Arc<Context>,
    pub zero_init: bool,
    /// Bytes of live allocations, and their high-water mark.
    usage: Mutex<(usize, usize)>,
}

const _: () = assert!(core::mem::offset_of!(UsmPool, header) == 0);

// SAFETY: `UsmPool` is `#[repr(C)]` with its header at offset 0.
unsafe impl UrObject for UsmPool {
    const KIND: ObjectKind = ObjectKind::UsmPool;
    type Handle = ur_usm_pool_handle_t_;
}

impl Counted for UsmPool {
    fn refs(&self) -> &UserRefs {
        &self.refs
    }
}

impl UsmPool {
    pub fn new(context: Arc<Context>, flags: ur_usm_pool_flags_t) -> UrResult<Arc<UsmPool>> {
        if context.usm_path() == UsmPath::None {
            return Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
        }
        Ok(Arc::new(UsmPool {
            header: HandleHeader::new(&DDI, ObjectKind::UsmPool),
            refs: UserRefs::one(),
            context,
            zero_init: flags & UR_USM_POOL_FLAG_ZERO_INITIALIZE_BLOCK.0 != 0,
            usage: Mutex::new((0, 0)),
        }))
    }

    fn account(&self, delta: isize) {
        let mut u = self.usage.lock().unwrap_or_else(|e| e.into_inner());
        u.0 = u.0.saturating_add_signed(delta);
        u.1 = u.1.max(u.0);
    }

    /// Bytes in use now, and at most so far. Each allocation is its own
    /// runtime allocation, so reserved equals used.
    pub fn usage(&self) -> (usize, usize) {
        *self.usage.lock().unwrap_or_else(|e| e.into_inner())
    }
}
