//! The test backend's contexts: a core [`Context`] whose raw part holds
//! only the switches tests flip. Blocking allocations are host memory from
//! the global allocator, registered in the context's registry as a real
//! adapter's are.

use super::objects::{new_pool, Settings, TDevice, TPool};
use super::{record, TestBackend as B};
use crate::abi::*;
use crate::boundary::NativeOwnership;
use crate::context::{Context, RawContext, RawMemory};
use crate::engine::UsmKind;
use crate::hal::{AllocInfo, AllocRequest};
use crate::handle::{arc_of, handle_of};
use crate::usm_async::{PoolApi, PoolDesc};
use crate::usm_pool::PoolBase;
use crate::usm_registry::Registered;
use crate::UrResult;
use core::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

pub type TContext = Context<B>;

/// What tests switch per context.
pub struct TContextRaw {
    pub settings: Settings,
}

/// A live blocking USM allocation: its memory, and what
/// `urUSMGetMemAllocInfo` reports (async allocations are the engine's, in
/// `Context::slabs`).
pub struct Alloc {
    _memory: Box<[u8]>,
    base: usize,
    size: usize,
    kind: UsmKind,
    device: Option<Arc<TDevice>>,
    pool: Option<Arc<TPool>>,
}

impl Registered for Alloc {
    fn span(&self) -> (usize, usize) {
        (self.base, self.size)
    }
}

fn new_context(devices: &[&TDevice]) -> Arc<TContext> {
    let (on, off) = (|| AtomicBool::new(true), || AtomicBool::new(false));
    let settings = Settings {
        usm_2d: on(),
        pools: on(),
        async_alloc: on(),
        fail_commands: off(),
        fail_next_recorded: off(),
        fail_next_append: off(),
        hold_commands: off(),
    };
    Context::new(devices.iter().map(|d| arc_of(*d)).collect(), TContextRaw { settings })
}

/// Allocates `size` bytes aligned to `align` (0: 8), as the real adapters
/// do: a zero size or one past the device's limit is `INVALID_USM_SIZE`.
fn allocate(context: &TContext, r: &AllocRequest<'_, B>) -> UrResult<*mut c_void> {
    let limit = r.device.map_or_else(|| context.max_alloc_size(), |d| d.raw.max_alloc);
    if r.size == 0 || r.size as u64 > limit {
        return Err(UR_RESULT_ERROR_INVALID_USM_SIZE);
    }
    let align = r.align.max(8);
    let memory = vec![0u8; r.size + align].into_boxed_slice();
    let base = (memory.as_ptr() as usize).next_multiple_of(align);
    let (device, pool) = (r.device.map(arc_of), r.pool.map(arc_of));
    context.usm.insert(Alloc { _memory: memory, base, size: r.size, kind: r.kind, device, pool });
    Ok(base as *mut c_void)
}

impl RawContext<B> for TContextRaw {
    fn create(devices: &[&TDevice], flags: ur_context_flags_t) -> UrResult<Arc<TContext>> {
        record("context.create", format!("{devices:?} flags={flags:#x}"));
        Ok(new_context(devices))
    }
    fn usm_2d_supported(context: &TContext) -> bool {
        context.raw.settings.usm_2d.load(Relaxed)
    }
    fn native_handle(_: &TContext) -> UrResult<ur_native_handle_t> {
        record("context.native_handle", String::new());
        Ok(super::objects::NATIVE_OBJECT)
    }
    fn from_native(native: ur_native_handle_t, devices: &[&TDevice], ownership: NativeOwnership) -> UrResult<Arc<TContext>> {
        record("context.from_native", format!("{native:#x} {devices:?} {ownership:?}"));
        Ok(new_context(devices))
    }

    fn collect_pools(context: &TContext) {
        record("context.collect_pools", format!("{:?}", handle_of(context)));
    }
}

impl RawMemory<B> for TContextRaw {
    type Allocation = Alloc;

    fn usm_alloc(context: &TContext, r: AllocRequest<'_, B>) -> UrResult<*mut c_void> {
        record(
            "context.usm_alloc",
            format!(
                "{:?} size={} align={} device={:?} pool={:?} hints={:#x} host_flags={:#x} device_flags={:#x}",
                r.kind,
                r.size,
                r.align,
                r.device,
                r.pool.map(handle_of),
                r.hints,
                r.host_flags,
                r.device_flags
            ),
        );
        allocate(context, &r)
    }
    fn usm_free(context: &TContext, ptr: *mut c_void) -> UrResult {
        record("context.usm_free", format!("{ptr:?}"));
        context.usm.remove(ptr as usize).map(drop)
    }
    fn usm_alloc_info(context: &TContext, ptr: *const c_void) -> Option<AllocInfo<B>> {
        record("context.usm_alloc_info", format!("{ptr:?}"));
        context.usm.with(ptr as usize, |a| {
            let kind = match a.kind {
                UsmKind::Host => UR_USM_TYPE_HOST,
                UsmKind::Device => UR_USM_TYPE_DEVICE,
                UsmKind::Shared => UR_USM_TYPE_SHARED,
            };
            let device = a.device.as_deref().map_or(std::ptr::null_mut(), handle_of);
            let pool = a.pool.as_deref().map_or(std::ptr::null_mut(), handle_of);
            AllocInfo::new(kind, a.base as *mut c_void, a.size, device, pool)
        })
    }
    fn pools_supported(context: &TContext) -> bool {
        context.raw.settings.pools.load(Relaxed)
    }
    fn pool_create(context: &TContext, device: Option<&TDevice>, desc: PoolDesc, api: PoolApi) -> UrResult<Arc<TPool>> {
        record("context.pool_create", format!("{device:?} {desc:?} {api:?}"));
        let base = PoolBase::user(&arc_of(context), device.map(arc_of), context.devices.iter().cloned(), desc, api);
        Ok(new_pool(base))
    }
    fn make_default_pool(context: &TContext, device: &TDevice) -> UrResult<Arc<TPool>> {
        record("context.make_default_pool", format!("{device:?}"));
        Ok(new_pool(PoolBase::device_default(&arc_of(context), arc_of(device))))
    }
}
