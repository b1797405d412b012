//! Memory: blocking USM allocations and their registry entries here, USM
//! pools in `pool`, the engine's memory source in `source` (over CUDA's
//! virtual memory management, `vmm`).
//!
//! USM allocations: the blocking `urUSM*Alloc`/`urUSMFree` paths and the
//! registry that knows every live allocation of a context outside the
//! engine's pools (for frees, for `urUSMGetMemAllocInfo`, and to refuse
//! interior, foreign and double frees). Engine blocks are found through the
//! context's slab map instead (`Context::slabs`).

pub mod buffer;
pub mod pool;
pub mod source;
pub mod vmm;

use crate::context::{device_index, host_lane, Context, ContextCu};
use crate::device::Device;
use pool::UsmPool;
use crate::conv::CuExt;
use crate::driver;
use crate::Cuda;
use ur_core::hal::{AllocInfo, AllocRequest};
use ur_core::context::RawMemory;
use ur_core::usm_async::{PoolApi, PoolDesc};
use ur_core::handle::arc_of;
use std::sync::Arc;
use ur_core::engine::{self, Cover};
use ur_core::usm_registry::Registered;
use ur_core::log;
use ur_core::*;

/// The core's USM kinds: the engine's, the registry's and the slab map's.
pub use ur_core::engine::UsmKind;

/// Where an allocation's memory came from, which decides how it goes back.
#[derive(Clone)]
pub enum Backing {
    /// `cuMemAlloc`, `cuMemAllocManaged` or `cuMemHostAlloc`.
    Driver,
    /// A stream-ordered native pool (`cuMemAllocFromPoolAsync`).
    NativePool,
}

impl Backing {
    pub fn is_pool(&self) -> bool {
        !matches!(self, Backing::Driver)
    }
}

/// One live allocation.
pub struct Allocation {
    /// What the user got.
    pub base: usize,
    /// What the driver gave (lower than `base` when over-aligned).
    raw: usize,
    pub size: usize,
    pub kind: UsmKind,
    /// The owning GPU's index in the context's devices: no reference count
    /// that every queue of the GPU shares is written per allocation (the
    /// context, which holds the devices, outlives its registry).
    pub device: Option<usize>,
    pub pool: Option<Arc<UsmPool>>,
    pub backing: Backing,
}

impl Allocation {
    pub fn new(
        raw: usize,
        base: usize,
        size: usize,
        kind: UsmKind,
        device: Option<usize>,
        pool: Option<Arc<UsmPool>>,
        backing: Backing,
    ) -> Allocation {
        Allocation {
            base,
            raw,
            size,
            kind,
            device,
            pool,
            backing,
        }
    }

    pub fn raw(&self) -> usize {
        self.raw
    }

    /// Gives the memory back at once. Work that may still use it must have
    /// completed (the caller synchronised the devices). `devices`: the
    /// context's.
    pub(crate) fn release_now(&self, devices: &[Arc<Device>]) -> UrResult {
        if let Some(d) = self.device.and_then(|i| devices.get(i)) {
            d.raw.activate()?;
        }
        // SAFETY: the registry held the only record of this allocation and
        // the caller has waited for the work that could use it.
        unsafe {
            match (&self.backing, self.kind) {
                (Backing::Driver, UsmKind::Host) => driver::mem_free_host(self.raw as *mut _).cu(),
                (Backing::Driver, _) => driver::mem_free(self.raw as u64).cu(),
                (Backing::NativePool, _) => {
                    driver::free_async(self.raw as u64, std::ptr::null_mut()).cu()?;
                    driver::ctx_synchronize().cu()
                }
            }
        }
    }
}

impl Registered for Allocation {
    fn span(&self) -> (usize, usize) {
        (self.base, self.size)
    }
}

/// The context's allocations outside the engine: the driver's and native
/// pools' blocks.
pub type UsmRegistry = ur_core::usm_registry::UsmRegistry<Allocation>;

/// Frees every allocation of `registry` (the context, whose `devices`
/// these are, is going away; the caller synchronised).
pub fn free_all(registry: &UsmRegistry, devices: &[Arc<Device>]) {
    for a in registry.take_all() {
        if let Err(e) = a.release_now(devices) {
            log::warning(&format!("freeing a leftover allocation failed: {e:?}"));
        }
    }
}

/// The alignment the driver gives every allocation without asking.
const NATURAL_ALIGN: usize = 256;

impl RawMemory<Cuda> for ContextCu {
    type Allocation = Allocation;

    fn pools_supported(context: &Context) -> bool {
        context.devices.iter().all(|d| d.raw.props.memory_pools)
    }

    /// `urUSMHostAlloc`, `urUSMDeviceAlloc`, `urUSMSharedAlloc`. The core
    /// checked the size, the alignment and the device's limit. Placement
    /// hints and host/device flags have no CUDA counterpart here and are
    /// ignored.
    fn usm_alloc(context: &Context, req: AllocRequest<'_, Cuda>) -> UrResult<*mut core::ffi::c_void> {
        let kind = req.kind;
        // Over-allocate only when the driver's own alignment is not enough.
        let slack = if req.align > NATURAL_ALIGN {
            req.align
        } else {
            0
        };
        let bytes = req
            .size
            .checked_add(slack)
            .ok_or(UR_RESULT_ERROR_INVALID_USM_SIZE)?;
        let device = req.device.or(context.devices.first().map(|d| &**d));
        let native = kind == UsmKind::Device && req.pool.is_some_and(|p| p.raw.is_native());
        if let Some(pool) = req.pool.filter(|_| !native && req.align <= NATURAL_ALIGN) {
            return engine_alloc(context, pool, kind, &req);
        }
        let raw = match kind {
            UsmKind::Host => {
                if let Some(d) = device {
                    d.raw.activate()?;
                }
                driver::mem_host_alloc(bytes).map_err(|_| UR_RESULT_ERROR_OUT_OF_HOST_MEMORY)?
                    as usize
            }
            UsmKind::Device if native => {
                pool::alloc_blocking(req.pool.expect("checked above"), bytes)? as usize
            }
            UsmKind::Device => {
                device.ok_or(UR_RESULT_ERROR_INVALID_DEVICE)?.raw.activate()?;
                driver::mem_alloc(bytes).cu()? as usize
            }
            UsmKind::Shared => {
                let d = device.ok_or(UR_RESULT_ERROR_INVALID_DEVICE)?;
                if !d.raw.props.managed_memory {
                    return Err(UR_RESULT_ERROR_INVALID_OPERATION);
                }
                d.raw.activate()?;
                // Never ask for more managed memory than the GPU has free:
                // oversubscribing it can stall the whole GPU.
                let (free, _) = driver::mem_get_info().cu()?;
                if bytes > free {
                    return Err(UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY);
                }
                driver::mem_alloc_managed(bytes).cu()? as usize
            }
        };
        let base = if slack > 0 {
            raw.next_multiple_of(req.align)
        } else {
            raw
        };
        let backing = if native {
            Backing::NativePool
        } else {
            Backing::Driver
        };
        let owner = match kind {
            UsmKind::Host => None,
            _ => device.and_then(|d| device_index(context, d).ok()),
        };
        context.usm.insert(Allocation::new(
            raw,
            base,
            req.size,
            kind,
            owner,
            req.pool.map(arc_of),
            backing,
        ));
        Ok(base as *mut _)
    }

    /// `urUSMFree`: waits for the devices' pending work, then frees.
    fn usm_free(context: &Context, ptr: *mut core::ffi::c_void) -> UrResult {
        let a = match context.usm.remove(ptr as usize) {
            Ok(a) => a,
            Err(e) => return engine_free_blocking(context, ptr as usize).map_err(|_| e),
        };
        synchronize_devices(context)?;
        a.release_now(&context.devices)
    }

    fn usm_alloc_info(context: &Context, ptr: *const core::ffi::c_void) -> Option<AllocInfo<Cuda>> {
        context.usm.with(ptr as usize, |a| {
            let device = a.device.and_then(|i| context.devices.get(i)).map_or(std::ptr::null_mut(), |d| d.handle());
            let pool = a.pool.as_ref().map_or(std::ptr::null_mut(), |p| p.handle());
            AllocInfo::new(a.kind.to_ur(), a.base as *mut core::ffi::c_void, a.size, device, pool)
        })
    }

    /// A pool belongs to one GPU: a context-wide pool needs a context of one.
    fn pool_create(context: &Context, device: Option<&Device>, desc: PoolDesc, api: PoolApi) -> UrResult<Arc<UsmPool>> {
        pool::create(&arc_of(context), device.map(arc_of).as_ref(), desc, api)
    }

    fn make_default_pool(context: &Context, device: &Device) -> UrResult<Arc<UsmPool>> {
        pool::device_default(&arc_of(context), &arc_of(device))
    }
}

/// A blocking allocation from a pool served by the engine, made on the
/// host lane. A block whose earlier owner's free may still be pending
/// is waited for (the devices synchronise) before it is handed out.
fn engine_alloc(
    context: &Context,
    pool: &UsmPool,
    kind: UsmKind,
    req: &AllocRequest<'_, Cuda>,
) -> UrResult<*mut core::ffi::c_void> {
    let engine_pool = pool.engine_pool(kind, req.device)?;
    context.raw.start_tracking();
    let a = engine_pool.alloc(host_lane(context), &[], req.size, req.align, false)?;
    let p = a.ptr.as_ptr() as usize;
    if let Some(stamp) = a.stamp {
        let ready = (|| -> UrResult {
            for d in &context.devices {
                d.raw.activate()?;
                driver::ctx_synchronize().cu()?;
            }
            if a.zero {
                // SAFETY: the block is ours and `a.size` long.
                unsafe { driver::memset_async(p as u64, 0, 1, a.size, std::ptr::null_mut()) }
                    .cu()?;
                driver::ctx_synchronize().cu()?;
            }
            Ok(())
        })();
        context.engine.dag().complete(stamp);
        if let Err(e) = ready {
            let _ = engine_pool.free_blocking(p as *const u8, |_| {});
            return Err(e);
        }
    }
    // Found through the slab map, as async blocks are.
    Ok(p as *mut _)
}

/// USM frees in UR are not ordered with queues; like cuMemFree, wait for
/// what the devices have in flight before memory goes back.
pub(crate) fn synchronize_devices(context: &Context) -> UrResult {
    for d in &context.devices {
        d.raw.activate()?;
        driver::ctx_synchronize().cu()?;
    }
    Ok(())
}

/// `urUSMFree` of an engine block (the exact base of a live one): any
/// command may still use it, so the devices synchronise first.
pub(crate) fn engine_free_blocking(context: &Context, base: usize) -> UrResult {
    let dag = context.engine.dag();
    context.slabs.free_blocking(base, || synchronize_devices(context), |s| {
        // The devices synchronised: it is done.
        engine::wait_for_stamp::<std::convert::Infallible>(dag, s, |_| Cover::Done)
    })
}

/// `(base, size, kind)` of the live allocation holding `addr`: one in
/// the registry, or an engine block.
pub fn usm_lookup(context: &Context, addr: usize) -> Option<(usize, usize, UsmKind)> {
    if let Some(found) = context.usm.with(addr, |a| (a.base, a.size, a.kind)) {
        return Some(found);
    }
    // The pool is asked after the slab map's lock is dropped: the pool
    // lock comes first (src/engine/LOCKING.md).
    let (pool, kind) = context.slabs.with_owner(addr, |o| Some((o.pool.upgrade()?, o.kind)))??;
    let (base, size) = pool.live_block_containing(addr)?;
    Some((base, size, kind))
}
