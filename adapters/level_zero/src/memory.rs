//! Memory: blocking USM allocations and their registry entries, USM pools
//! (the core's `UsmPool` with `impl RawPool`), and the engine's memory
//! source.
//!
//! Blocking USM: `zeMemAlloc{Host,Device,Shared}` and `zeMemFree`, the
//! table that lets any pointer into an allocation find it, and what
//! `urUSMGetMemAllocInfo` reports.
//!
//! USM pools. A pool serves asynchronous allocations from engine pools
//! (`ur_core::engine`) it makes per USM kind on first use; a blocking
//! allocation with a pool is the driver's own, tagged with the pool,
//! zeroed when asked and counted in its statistics. Releasing a pool
//! leaves its live blocks valid until they are freed.
//!
//! The Level Zero side of the shared async pool engine (`ur_core::engine`).
//! The engine decides which freed block an asynchronous allocation may
//! take. From this adapter it needs raw memory ([`ZeMemory`], over the same
//! `zeMemAlloc*` calls as `urUSM*Alloc`), every command of a context
//! recorded in its graph (`queue::submit` records each one), and word of
//! their completion, which comes from the commands' Level Zero events
//! through each queue's `engine::Tracker`: polled as commands are appended
//! and settled at host synchronisation points.

use crate::context::{self, Context, ContextZe};
use crate::conv;
use crate::device::Device;
use crate::driver::{check, ZeContext};
use crate::{ze, LevelZero};
use level_zero_sys::*;
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::{Arc, Weak};
use ur_core::engine::{self, MemorySource, OutOfMemory, UsmKind};
use ur_core::hal::{AllocInfo, AllocRequest};
use ur_core::handle::arc_of;
use ur_core::pool::RawPool;
use ur_core::usm_async::{PoolApi, PoolDesc};
use ur_core::usm_pool::PoolBase;
use ur_core::usm_registry::Registered;
use ur_core::context::RawMemory;
use ur_core::*;

// Blocking USM.

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

impl RawMemory<LevelZero> for ContextZe {
    type Allocation = Allocation;

    fn pools_supported(_: &Context) -> bool {
        true
    }

    /// `urUSMHostAlloc`, `urUSMDeviceAlloc`, `urUSMSharedAlloc` (the core
    /// checked the size, the kind and the pool). Placement hints and host or
    /// device flags have no Level Zero counterpart here and are ignored.
    fn usm_alloc(ctx: &Context, req: AllocRequest<'_, LevelZero>) -> UrResult<*mut c_void> {
        let host = req.kind == UsmKind::Host;
        let device = if host { None } else { req.device.map(arc_of) };
        let device = device.as_ref();
        let ptr = raw_alloc(&ctx.raw.ze, req.kind, device.map(|d| &**d), req.size, req.align)
            .map_err(|e| conv::alloc_result(e, host))?
            .as_ptr();
        let allocation = Allocation {
            base: ptr as usize,
            size: req.size,
            kind: req.kind,
            device: device.cloned(),
            pool: req.pool.map(|p| Arc::downgrade(&arc_of(p))),
        };
        if let Some(pool) = req.pool {
            if pool.base.zero_init() {
                // Device memory need not be host-reachable: zeroed by a fill.
                if let Err(e) = crate::queue::zero_fill(ctx, device.unwrap_or(&ctx.devices[0]), ptr, req.size) {
                    // SAFETY: just allocated, never handed out.
                    unsafe { raw_free(&ctx.raw.ze, ptr) };
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
    fn usm_free(ctx: &Context, ptr: *mut c_void) -> UrResult {
        let addr = ptr as usize;
        if ctx.usm.with(addr, |a| a.base == addr) != Some(true) {
            // Not the base of a blocking allocation: a block of an engine pool,
            // or nothing that may be freed.
            return ctx.slabs.free_blocking(addr, || context::finish_busy_queues(ctx), |stamp| context::wait_for_stamp(ctx, stamp));
        }
        // Level Zero frees at once: nothing may still use the memory.
        context::finish_busy_queues(ctx)?;
        if let Ok(a) = ctx.usm.remove(addr) {
            release(ctx, &a);
        }
        Ok(())
    }

    /// Looks a pointer up: blocking allocations, engine pools, then the
    /// driver, which also knows memory allocated around this adapter.
    fn usm_alloc_info(ctx: &Context, ptr: *const c_void) -> Option<AllocInfo<LevelZero>> {
        let addr = ptr as usize;
        if let Some(a) = ctx.usm.find(addr) {
            let pool = a.pool.and_then(|p| p.upgrade()).map_or(std::ptr::null_mut(), |p| p.handle());
            return Some(AllocInfo::new(a.kind.to_ur(), a.base as *mut c_void, a.size, device_handle(a.device.as_ref()), pool));
        }
        let mut props: ze_memory_allocation_properties_t = unsafe { std::mem::zeroed() };
        props.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES;
        let mut device: ze_device_handle_t = std::ptr::null_mut();
        let (mut base, mut size): (*mut c_void, usize) = (std::ptr::null_mut(), 0);
        // SAFETY: a live context; out structs and pointers we own.
        unsafe {
            check(ze!(zeMemGetAllocProperties(ctx.raw.ze.0, ptr, &mut props, &mut device))).ok()?;
            check(ze!(zeMemGetAddressRange(ctx.raw.ze.0, ptr, &mut base, &mut size))).ok()?;
        }
        let kind = conv::memory_type(props.r#type);
        let device = device_handle(context::device_by_ze(ctx, device));
        (kind != UR_USM_TYPE_UNKNOWN).then(|| AllocInfo::new(kind, base, size, device, std::ptr::null_mut()))
    }

    /// A user's pool: of `urUSMPoolCreate` when `device` is `None`, else of
    /// `urUSMPoolCreateExp`.
    fn pool_create(context: &Context, device: Option<&Device>, desc: PoolDesc, api: PoolApi) -> UrResult<Arc<UsmPool>> {
        let (context, device) = (arc_of(context), device.map(arc_of));
        let base = PoolBase::user(&context, device, context.devices.iter().cloned(), desc, api);
        let pool = UsmPool::new(base, ZePool { _owner: Some(context.clone()) });
        context.pools.add_user(&pool);
        Ok(pool)
    }

    /// The default pool of `device` in `context` (made once by the context).
    fn make_default_pool(context: &Context, device: &Device) -> UrResult<Arc<UsmPool>> {
        let base = PoolBase::device_default(&arc_of(context), arc_of(device));
        Ok(UsmPool::new(base, ZePool { _owner: None }))
    }
}

/// Returns an allocation's memory to the driver, and its bytes to its pool.
pub(crate) fn release(ctx: &Context, a: &Allocation) {
    // SAFETY: removed from the table, so freed once; the callers made sure
    // no command uses it.
    unsafe { raw_free(&ctx.raw.ze, a.base as *mut c_void) };
    if let Some(pool) = a.pool.as_ref().and_then(Weak::upgrade) {
        pool.base.engine.account_blocking(-(a.size as isize));
    }
}

fn device_handle(device: Option<&Arc<Device>>) -> ur_device_handle_t {
    device.map_or(std::ptr::null_mut(), |d| d.handle())
}

// USM pools.

/// Least slab an engine pool takes from the driver, unless the pool's
/// descriptor names one.
const SLAB_SIZE: usize = 1 << 20;

/// A UR USM pool of this adapter: the core's, with [`ZePool`] beside its
/// base.
pub type UsmPool = ur_core::pool::UsmPool<LevelZero>;

/// What a Level Zero pool keeps beside the core's pool base.
pub struct ZePool {
    /// A user's pool keeps its context alive, as its handle does.
    _owner: Option<Arc<Context>>,
}

impl RawPool<LevelZero> for ZePool {
    const MIN_SLAB_SIZE: Option<usize> = Some(SLAB_SIZE);

    /// Driver memory in slabs of [`SLAB_SIZE`]. A pool of `urUSMPoolCreate`
    /// keeps each device's device memory apart; its host and shared memory
    /// serve every device of the context.
    fn make_engine_pool(
        pool: &UsmPool,
        kind: UsmKind,
        context: Arc<Context>,
        config: engine::PoolConfig,
        serving: Option<&Arc<Device>>,
    ) -> UrResult<Arc<engine::Pool>> {
        let (ze, slabs) = (context.raw.ze.clone(), context.slabs.clone());
        Ok(SlabOwner::new_engine_pool(context.engine.dag().clone(), config, &pool.me, kind, serving, |owner| {
            Arc::new(ZeMemory { context: ze, slabs, owner })
        }))
    }
}

// The engine's memory source.

/// `size` bytes of `kind` memory aligned to `align` (0: the driver's
/// default) in `context`; device and shared memory on `device`.
pub fn raw_alloc(
    context: &ZeContext,
    kind: UsmKind,
    device: Option<&Device>,
    size: usize,
    align: usize,
) -> Result<NonNull<c_void>, ze_result_t> {
    let host_desc = ze_host_mem_alloc_desc_t { stype: ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, pNext: std::ptr::null(), flags: 0 };
    let device_desc =
        ze_device_mem_alloc_desc_t { stype: ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, pNext: std::ptr::null(), flags: 0, ordinal: 0 };
    let dev = device.map_or(std::ptr::null_mut(), |d| d.raw.ze);
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: a live context, one of its devices (or none for host and
    // shared memory), valid descriptors and an out pointer we own.
    let r = unsafe {
        match kind {
            UsmKind::Host => ze!(zeMemAllocHost(context.0, &host_desc, size, align, &mut p)),
            UsmKind::Device => ze!(zeMemAllocDevice(context.0, &device_desc, size, align, dev, &mut p)),
            UsmKind::Shared => ze!(zeMemAllocShared(context.0, &device_desc, &host_desc, size, align, dev, &mut p)),
        }
    };
    check(r)?;
    NonNull::new(p).ok_or(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)
}

/// Gives memory from [`raw_alloc`] back.
///
/// # Safety
/// `ptr` came from `raw_alloc` on `context`, is freed once, and no command
/// still uses it.
pub unsafe fn raw_free(context: &ZeContext, ptr: *mut c_void) {
    let r = ze!(zeMemFree(context.0, ptr));
    if r != ZE_RESULT_SUCCESS {
        ur_core::log::warning(&format!("zeMemFree failed: 0x{r:x}"));
    }
}

/// Whose an engine slab is: what any address inside pool memory reports.
pub type SlabOwner = ur_core::usm_pool::SlabOwner<UsmPool, Arc<Device>>;

/// The engine slabs of one context by address.
pub type SlabMap = engine::SlabMap<SlabOwner>;

/// Raw memory of one (context, device, USM kind) for engine pools; each
/// slab is entered in the context's [`SlabMap`]. It holds the Level Zero
/// context, so that slabs can go back after the UR context is gone.
pub struct ZeMemory {
    pub context: Arc<ZeContext>,
    pub slabs: Arc<SlabMap>,
    pub owner: SlabOwner,
}

impl MemorySource for ZeMemory {
    fn allocate(&self, size: usize, align: usize) -> Result<NonNull<u8>, OutOfMemory> {
        let o = &self.owner;
        let p = raw_alloc(&self.context, o.kind, o.device.as_deref(), size, align).map_err(|_| OutOfMemory)?;
        self.slabs.insert(p.as_ptr() as usize, size, o.clone());
        Ok(p.cast())
    }

    unsafe fn release(&self, ptr: NonNull<u8>, _size: usize, _align: usize) {
        self.slabs.remove(ptr.as_ptr() as usize);
        // SAFETY: the engine gives back a slab it took from `allocate`, once
        // no recorded command can still touch it.
        raw_free(&self.context, ptr.as_ptr().cast());
    }
}
