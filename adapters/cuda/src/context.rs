//! A context: a set of GPUs (each used through its primary CUDA context),
//! the USM allocations made in it, and the pools its devices use by default.

use ur_core::extended_deleter::ExtendedDeleter;
use ur_core::usm_pool::ContextPools;
use crate::device::Device;
use crate::memory::pool::{self, UsmPool};
use crate::memory::source::SlabMap;
use crate::memory::UsmRegistry;
use crate::queue::Queue;
use crate::driver::{self, CuEvent};
use crate::{Cuda, DDI};
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use ur_core::engine::{self, Engine, Lane, LaneId, Stamp};
use ur_core::boundary::NativeOwnership;
use ur_core::hal::{self, AllocInfo, AllocRequest};
use ur_core::handle::{arc_of, ArcObject, HandleHeader, ObjectKind};
use ur_core::usm_async::{PoolApi, PoolDesc};
use ur_core::log;
use ur_core::*;

#[repr(C)]
pub struct Context {
    header: HandleHeader,
    pub devices: Vec<Arc<Device>>,
    pub usm: UsmRegistry,
    /// Each device's default pool and the one chosen for it.
    pub pools: ContextPools<UsmPool>,
    pub deleter: ExtendedDeleter,
    /// The async pool engine of this context.
    pub engine: Engine,
    /// Every slab and range of this context's engine pools, by address: an
    /// engine block is found through it, not through `usm`.
    pub slabs: Arc<SlabMap>,
    /// Engine pools of destroyed UR pools that still have live blocks.
    kept_pools: Mutex<Vec<Arc<engine::Pool>>>,
    /// Set when an engine pool is first used: from then on every command is
    /// recorded in the engine's graph.
    tracking: AtomicBool,
    /// The queue behind each lane, to find events covering its commands.
    lanes: Mutex<HashMap<LaneId, Weak<Queue>>>,
    /// The lane blocking allocations from engine pools are made on: it
    /// stands for the host and runs no commands.
    host_lane: OnceLock<Arc<Lane>>,
    /// The GPU whose primary context the user handed over, owned, with
    /// `urContextCreateWithNativeHandle`: its reference goes back when
    /// this context does.
    owned_primary: Option<crate::driver::CUdevice>,
}

ur_core::ur_object!(Context, Context, ur_context_handle_t_);

// SAFETY: made only by `Arc::new` in this module, and handed out only
// from there.
unsafe impl ArcObject for Context {}

impl Context {
    pub fn new(devices: Vec<Arc<Device>>) -> UrResult<Arc<Context>> {
        Self::with_primary(devices, None)
    }

    fn with_primary(
        devices: Vec<Arc<Device>>,
        owned_primary: Option<crate::driver::CUdevice>,
    ) -> UrResult<Arc<Context>> {
        for d in &devices {
            d.activate()?;
        }
        Ok(Arc::new(Context {
            header: HandleHeader::new(&DDI, ObjectKind::Context),
            devices,
            usm: UsmRegistry::default(),
            pools: ContextPools::default(),
            deleter: ExtendedDeleter::default(),
            engine: Engine::new(),
            slabs: Arc::default(),
            kept_pools: Mutex::new(Vec::new()),
            tracking: AtomicBool::new(false),
            lanes: Mutex::new(HashMap::new()),
            host_lane: OnceLock::new(),
            owned_primary,
        }))
    }

    pub fn handle(&self) -> ur_context_handle_t {
        ur_core::handle::handle_of(self)
    }

    /// The index of `device` in this context, or `INVALID_DEVICE`.
    pub fn device_index(&self, device: &Device) -> UrResult<usize> {
        self.devices
            .iter()
            .position(|d| std::ptr::eq(&**d, device))
            .ok_or(UR_RESULT_ERROR_INVALID_DEVICE)
    }

    /// Whether commands are being recorded for the engine.
    #[inline]
    pub fn tracking(&self) -> bool {
        self.tracking.load(Ordering::Acquire)
    }

    /// The lane of blocking allocations from engine pools.
    pub fn host_lane(&self) -> &Arc<Lane> {
        self.host_lane
            .get_or_init(|| self.engine.dag().create_lane(engine::QueueOrder::InOrder))
    }

    /// Starts recording commands (before the first engine allocation).
    #[inline]
    pub fn start_tracking(&self) {
        // Read first: a store on every allocation would bounce the line
        // between the threads of a context.
        if !self.tracking() {
            self.tracking.store(true, Ordering::Release);
        }
    }

    pub fn register_lane(&self, id: LaneId, queue: Weak<Queue>) {
        self.lanes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, queue);
    }

    pub fn unregister_lane(&self, id: LaneId) {
        self.lanes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id);
    }

    /// A CUDA event whose completion implies command `s`'s, or `None` when it
    /// has completed (or its queue is gone, which waited for it), for a
    /// command `from` is submitting under its submit lock.
    pub fn event_covering(&self, s: Stamp, from: &Queue) -> Option<Arc<CuEvent>> {
        let queue = self
            .lanes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&s.lane)?
            .upgrade()?;
        if std::ptr::eq(&*queue, from) {
            return queue.covering_own(s.seq);
        }
        queue.event_covering(s.seq)
    }

    /// Keeps the engine pool of a destroyed UR pool while blocks of it live.
    pub fn keep_pool(&self, pool: Arc<engine::Pool>) {
        let mut kept = self.kept_pools.lock().unwrap_or_else(|e| e.into_inner());
        kept.retain(|p| p.live_blocks() > 0);
        kept.push(pool);
    }
}

impl hal::Context<Cuda> for Context {
    fn create(devices: &[&Device], _flags: ur_context_flags_t) -> UrResult<Arc<Self>> {
        Context::new(devices.iter().map(|d| arc_of(*d)).collect())
    }

    fn devices(&self) -> impl ExactSizeIterator<Item = &Device> {
        self.devices.iter().map(|d| &**d)
    }

    /// Not served yet: driver/memory.rs has a pitched fill but no pitched copy.
    fn usm_2d_supported(&self) -> bool {
        false
    }

    fn extended_deleter(&self) -> &ExtendedDeleter {
        &self.deleter
    }

    /// The primary CUDA context of the first device.
    fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        Ok(self.devices[0].activate()? as ur_native_handle_t)
    }

    /// `urContextCreateWithNativeHandle`: the adapter runs every GPU
    /// through its primary context, so a native context must be the
    /// primary context of one of `devices` (or, when none are named, of a
    /// GPU of the platform, which is then the context's one device); any
    /// other CUDA context is `UNSUPPORTED_FEATURE`. Owned, the user's
    /// reference of that primary context is released with this context;
    /// borrowed, nothing is.
    fn from_native(
        native: ur_native_handle_t,
        devices: &[&Device],
        ownership: NativeOwnership,
    ) -> UrResult<Arc<Self>> {
        let native = native as driver::CUcontext;
        let devices: Vec<Arc<Device>> = devices.iter().map(|d| arc_of(*d)).collect();
        let candidates: Vec<Arc<Device>> = if devices.is_empty() {
            crate::device::Platform::get()
                .map(|p| p.devices.clone())
                .unwrap_or_default()
        } else {
            devices.clone()
        };
        let mut owner = None;
        for d in &candidates {
            if d.primary_context()? == native {
                owner = Some(d.clone());
                break;
            }
        }
        let owner = owner.ok_or(UR_RESULT_ERROR_UNSUPPORTED_FEATURE)?;
        let devices = if devices.is_empty() {
            vec![owner.clone()]
        } else {
            devices
        };
        let owned = (ownership == ur_core::boundary::NativeOwnership::Owned).then_some(owner.cu);
        Self::with_primary(devices, owned)
    }

    fn usm_alloc(&self, r: AllocRequest<'_, Cuda>) -> UrResult<*mut c_void> {
        Context::usm_alloc(self, r)
    }

    /// `urUSMFree`: waits for the devices' pending work, then frees.
    fn usm_free(&self, ptr: *mut c_void) -> UrResult {
        let a = match self.usm.remove(ptr as usize) {
            Ok(a) => a,
            Err(e) => return self.engine_free_blocking(ptr as usize).map_err(|_| e),
        };
        self.synchronize_devices()?;
        a.release_now(&self.devices)
    }

    /// The context's engine collects every pool, default ones included.
    fn collect_pools(&self) {
        self.engine.collect_all();
    }

    type SlabOwner = crate::memory::source::SlabOwner;
    fn slabs(&self) -> &crate::memory::source::SlabMap {
        &self.slabs
    }

    fn usm_range(&self, ptr: *const c_void) -> Option<(usize, usize)> {
        self.usm.live_span(&self.slabs, ptr as usize)
    }

    fn usm_alloc_info(&self, ptr: *const c_void) -> Option<AllocInfo<Cuda>> {
        let registered = self.usm.with(ptr as usize, |a| {
            let device = a
                .device
                .and_then(|i| self.devices.get(i))
                .map_or(std::ptr::null_mut(), |d| d.handle());
            let pool = a.pool.as_ref().map_or(std::ptr::null_mut(), |p| p.handle());
            AllocInfo::new(a.kind.as_ur(), a.base as *mut c_void, a.size, device, pool)
        });
        if registered.is_some() {
            return registered;
        }
        // An engine block: its pool knows it; a destroyed pool reads as none.
        let owner = self.slabs.owner_of(ptr as usize)?;
        let (base, size) = owner.live_block(ptr as usize)?;
        let device = owner
            .device
            .as_ref()
            .map_or(std::ptr::null_mut(), |d| d.handle());
        let pool = owner.usm_pool_handle();
        Some(AllocInfo::new(owner.kind.as_ur(), base as *mut c_void, size, device, pool))
    }

    fn pools_supported(&self) -> bool {
        self.devices.iter().all(|d| d.props.memory_pools)
    }

    /// A pool belongs to one GPU: a context-wide pool needs a context of one.
    fn pool_create(
        &self,
        device: Option<&Device>,
        desc: PoolDesc,
        api: PoolApi,
    ) -> UrResult<Arc<UsmPool>> {
        pool::create(&arc_of(self), device.map(arc_of).as_ref(), desc, api)
    }

    fn pools(&self) -> &ContextPools<UsmPool> {
        &self.pools
    }

    fn make_default_pool(&self, device: &Device) -> UrResult<Arc<UsmPool>> {
        pool::device_default(&arc_of(self), &arc_of(device))
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        let leftover = self.usm.len();
        if leftover > 0 {
            log::warning(&format!(
                "context released with {leftover} USM allocation(s) still live; freeing them"
            ));
            for d in &self.devices {
                if d.activate().is_ok() {
                    let _ = crate::driver::ctx_synchronize();
                }
            }
            crate::memory::free_all(&self.usm, &self.devices);
        }
        self.engine.release_default_pools();
        self.pools.clear();
        self.deleter.run();
        if let Some(dev) = self.owned_primary {
            // The adapter keeps its own reference of every primary context,
            // so this one going leaves the context alive for the adapter.
            if let Err(e) = crate::driver::primary_ctx_release(dev) {
                log::warning(&format!(
                    "releasing the primary context handed over with a native context failed: {}",
                    crate::driver::error_name(e)
                ));
            }
        }
    }
}
