//! Blocking USM: `zeMemAlloc{Host,Device,Shared}` and `zeMemFree`, the
//! table that lets any pointer into an allocation find it, and what
//! `urUSMGetMemAllocInfo` reports.

use super::context::Context;
use super::device::Device;
use super::engine::{raw_alloc, raw_free};
use super::usm_pool::UsmPool;
use crate::conv;
use crate::driver::check;
use crate::ze;
use level_zero_sys::*;
use std::ffi::c_void;
use std::sync::{Arc, Weak};
use ur_core::engine::UsmKind;
use ur_core::usm_registry::Registered;
use ur_core::*;

/// One live blocking USM allocation of a context.
#[derive(Clone)]
pub struct Allocation {
    pub base: usize,
    pub size: usize,
    pub kind: UsmKind,
    /// `None` for host memory.
    pub device: Option<Arc<Device>>,
    pub pool: Option<Weak<UsmPool>>,
}

impl Registered for Allocation {
    fn span(&self) -> (usize, usize) {
        (self.base, self.size)
    }
}

/// What a `urUSM*Alloc` asks for, after the core's checks.
pub struct Request<'a> {
    pub kind: UsmKind,
    pub device: Option<&'a Arc<Device>>,
    pub size: usize,
    pub align: usize,
    pub pool: Option<Arc<UsmPool>>,
}

/// `urUSMHostAlloc`, `urUSMDeviceAlloc`, `urUSMSharedAlloc`.
pub fn alloc(ctx: &Context, req: Request) -> UrResult<*mut c_void> {
    let limit = match req.device {
        Some(d) => d.max_alloc_size(),
        None => ur_core::hal::Context::max_alloc_size(ctx),
    };
    if req.size == 0 || req.size as u64 > limit {
        return Err(UR_RESULT_ERROR_INVALID_USM_SIZE);
    }
    let supported = match req.device {
        Some(d) => d.usm_supported(req.kind.to_ur()),
        None => ctx.devices.iter().any(|d| d.usm_supported(req.kind.to_ur())),
    };
    if !supported {
        return Err(UR_RESULT_ERROR_INVALID_OPERATION);
    }
    let host = req.kind == UsmKind::Host;
    let device = if host { None } else { req.device };
    let ptr = raw_alloc(&ctx.ze, req.kind, device.map(|d| &**d), req.size, req.align)
        .map_err(|e| conv::alloc_result(e, host))?
        .as_ptr();
    let allocation = Allocation {
        base: ptr as usize,
        size: req.size,
        kind: req.kind,
        device: device.cloned(),
        pool: req.pool.as_ref().map(Arc::downgrade),
    };
    if let Some(pool) = &req.pool {
        if pool.base.zero_init() {
            // Device memory need not be host-reachable: zeroed by a fill.
            if let Err(e) = super::enqueue::zero_fill(ctx, device.unwrap_or(&ctx.devices[0]), ptr, req.size) {
                // SAFETY: just allocated, never handed out.
                unsafe { raw_free(&ctx.ze, ptr) };
                return Err(e);
            }
        }
        pool.base.engine.account_blocking(req.size as isize);
    }
    ctx.usm.insert(allocation);
    Ok(ptr)
}

/// `urUSMFree`: the base of a live allocation, or of a block of an engine
/// pool. Commands that may still use the memory finish first.
pub fn free(ctx: &Context, ptr: *mut c_void) -> UrResult {
    let addr = ptr as usize;
    if ctx.usm.with(addr, |a| a.base == addr) != Some(true) {
        // Not the base of a blocking allocation: a block of an engine pool,
        // or nothing that may be freed.
        return ctx.slabs.free_blocking(addr, || ctx.finish_busy_queues(), |stamp| ctx.wait_for_stamp(stamp));
    }
    // Level Zero frees at once: nothing may still use the memory.
    ctx.finish_busy_queues()?;
    if let Ok(a) = ctx.usm.remove(addr) {
        release(ctx, &a);
    }
    Ok(())
}

/// Returns an allocation's memory to the driver, and its bytes to its pool.
pub(crate) fn release(ctx: &Context, a: &Allocation) {
    // SAFETY: removed from the table, so freed once; the callers made sure
    // no command uses it.
    unsafe { raw_free(&ctx.ze, a.base as *mut c_void) };
    if let Some(pool) = a.pool.as_ref().and_then(Weak::upgrade) {
        pool.base.engine.account_blocking(-(a.size as isize));
    }
}

/// What `urUSMGetMemAllocInfo` reports of a pointer.
pub struct PointerInfo {
    pub kind: ur_usm_type_t,
    pub base: usize,
    pub size: usize,
    pub device: Option<Arc<Device>>,
    pub pool: ur_usm_pool_handle_t,
}

/// Looks a pointer up: blocking allocations, engine pools, then the
/// driver, which also knows memory allocated around this adapter.
pub fn pointer_info(ctx: &Context, ptr: *const c_void) -> Option<PointerInfo> {
    let addr = ptr as usize;
    if let Some(a) = ctx.usm.find(addr) {
        return Some(PointerInfo {
            kind: a.kind.to_ur(),
            base: a.base,
            size: a.size,
            device: a.device,
            pool: a.pool.and_then(|p| p.upgrade()).map_or(std::ptr::null_mut(), |p| p.handle()),
        });
    }
    if let Some(owner) = ctx.slabs.owner_of(addr) {
        let (base, size) = owner.live_block(addr)?;
        let pool = owner.usm_pool_handle();
        return Some(PointerInfo { kind: owner.kind.to_ur(), base, size, device: owner.device, pool });
    }
    let mut props: ze_memory_allocation_properties_t = unsafe { std::mem::zeroed() };
    props.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES;
    let mut device: ze_device_handle_t = std::ptr::null_mut();
    let (mut base, mut size): (*mut c_void, usize) = (std::ptr::null_mut(), 0);
    // SAFETY: a live context; out structs and pointers we own.
    unsafe {
        check(ze!(zeMemGetAllocProperties(ctx.ze.0, ptr, &mut props, &mut device))).ok()?;
        check(ze!(zeMemGetAddressRange(ctx.ze.0, ptr, &mut base, &mut size))).ok()?;
    }
    let kind = conv::memory_type(props.r#type);
    (kind != UR_USM_TYPE_UNKNOWN).then(|| PointerInfo {
        kind,
        base: base as usize,
        size,
        device: ctx.device_by_ze(device).cloned(),
        pool: std::ptr::null_mut(),
    })
}

/// `(base, size)` of the live allocation of this context holding `ptr`.
pub fn range_of(ctx: &Context, ptr: *const c_void) -> Option<(usize, usize)> {
    ctx.usm.live_span(&ctx.slabs, ptr as usize)
}
