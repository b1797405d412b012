//! Contexts: a Level Zero context over devices of one driver, its event
//! caches, the table of its blocking USM allocations, and its async pool
//! engine (the graph of its queues' commands, default and current pools);
//! with `impl hal::Context`.

use crate::conv::ZeExt;
use crate::device::Device;
use crate::driver::ZeContext;
use crate::event::{Command, EventCache, ZeEvent};
use crate::memory::{self, Allocation, SlabMap, UsmPool};
use crate::queue::Queue;
use crate::{LevelZero, DDI};
use level_zero_sys::ze_context_handle_t;
use std::ffi::c_void;
use std::sync::{Arc, Mutex, Weak};
use ur_core::boundary::NativeOwnership;
use ur_core::engine::{self, Cover, Engine, Stamp};
use ur_core::extended_deleter::ExtendedDeleter;
use ur_core::hal::{self, AllocInfo, AllocRequest};
use ur_core::handle::{arc_of, ArcObject, HandleHeader, ObjectKind};
use ur_core::usm_async::{PoolApi, PoolDesc};
use ur_core::usm_pool::ContextPools;
use ur_core::usm_registry::UsmRegistry;
use ur_core::*;

#[repr(C)]
pub struct Context {
    header: HandleHeader,
    /// Declared first among the engine's users: default pools go before
    /// the graph and the Level Zero context they use.
    pub pools: ContextPools<UsmPool>,
    pub devices: Vec<Arc<Device>>,
    /// Live blocking USM allocations by address.
    pub usm: UsmRegistry<Allocation>,
    queues: Mutex<Vec<Weak<Queue>>>,
    pub deleter: ExtendedDeleter,
    pub engine: Engine,
    pub slabs: Arc<SlabMap>,
    events: Arc<EventCache>,
    timed_events: Arc<EventCache>,
    pub ze: Arc<ZeContext>,
}

ur_core::ur_object!(Context, Context, ur_context_handle_t_);

// SAFETY: contexts are made only by `Context::assemble`, in an `Arc`.
unsafe impl ArcObject for Context {}

impl Context {
    fn assemble(ze: ZeContext, devices: Vec<Arc<Device>>) -> Arc<Context> {
        let ze = Arc::new(ze);
        Arc::new(Context {
            header: HandleHeader::new(&DDI, ObjectKind::Context),
            pools: ContextPools::default(),
            devices,
            usm: UsmRegistry::default(),
            queues: Mutex::new(Vec::new()),
            deleter: ExtendedDeleter::default(),
            engine: Engine::new(),
            slabs: Arc::default(),
            events: EventCache::new(ze.clone(), false),
            timed_events: EventCache::new(ze.clone(), true),
            ze,
        })
    }

    pub fn device_by_ze(&self, ze: level_zero_sys::ze_device_handle_t) -> Option<&Arc<Device>> {
        self.devices.iter().find(|d| d.ze == ze)
    }

    /// Where commands take their events: timestamped ones for profiling.
    pub fn event_cache(&self, timestamps: bool) -> &Arc<EventCache> {
        if timestamps {
            &self.timed_events
        } else {
            &self.events
        }
    }

    pub(crate) fn add_queue(&self, q: &Arc<Queue>) {
        let mut queues = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        queues.retain(|w| w.strong_count() > 0);
        queues.push(Arc::downgrade(q));
    }

    fn live_queues(&self) -> Vec<Arc<Queue>> {
        self.queues.lock().unwrap_or_else(|e| e.into_inner()).iter().filter_map(Weak::upgrade).collect()
    }

    /// Waits for every command of every live queue that still runs some.
    pub(crate) fn finish_busy_queues(&self) -> UrResult {
        for q in self.live_queues() {
            if q.busy() {
                q.finish()?;
            }
        }
        Ok(())
    }

    /// What covers the engine's command `stamp`: done, or a command whose
    /// completion implies it.
    fn covering(&self, stamp: Stamp) -> Cover<Arc<Command>> {
        let dag = self.engine.dag();
        loop {
            if dag.is_complete(stamp) {
                return Cover::Done;
            }
            let queue = self.live_queues().into_iter().find(|q| q.lane.id() == stamp.lane);
            match queue.map(|q| q.cover(stamp.seq)) {
                Some(Some(cover)) => return cover,
                // Its queue is being dropped, which waits for all its
                // commands, or its append is under way on another thread.
                Some(None) | None => std::thread::yield_now(),
            }
        }
    }

    /// Adds to `events` the Level Zero event of each of the engine's extra
    /// dependencies `deps` that has not completed.
    pub(crate) fn add_dependencies(&self, queue: &Queue, deps: &[Stamp], events: &mut Vec<Arc<ZeEvent>>) {
        for &d in deps {
            if d.lane == queue.lane.id() && queue.is_in_order() {
                // Ordered before by the queue's own chain.
                continue;
            }
            if let Cover::By(c) = self.covering(d) {
                events.push(c.done.clone());
            }
        }
    }

    /// Blocks until the command `stamp` has completed, and tells the engine.
    pub(crate) fn wait_for_stamp(&self, stamp: Stamp) {
        engine::wait_for_stamp(self.engine.dag(), stamp, |s| self.covering(s));
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // Every queue holds its context, so none is left: what the user did
        // not free goes back without waiting.
        for a in self.usm.take_all() {
            memory::release(self, &a);
        }
        self.deleter.run();
    }
}

impl hal::Context<LevelZero> for Context {
    /// A context over `devices`, which must all belong to one driver.
    fn create(devices: &[&Device], _flags: ur_context_flags_t) -> UrResult<Arc<Self>> {
        let devices: Vec<Arc<Device>> = devices.iter().map(|d| arc_of(*d)).collect();
        let platform = devices.first().ok_or(UR_RESULT_ERROR_INVALID_SIZE)?.platform.clone();
        if devices.iter().any(|d| !Weak::ptr_eq(&d.platform, &platform)) {
            return Err(UR_RESULT_ERROR_INVALID_DEVICE);
        }
        let driver = platform.upgrade().ok_or(UR_RESULT_ERROR_INVALID_DEVICE)?.ze;
        let raw: Vec<_> = devices.iter().map(|d| d.ze).collect();
        Ok(Self::assemble(ZeContext::create(driver, &raw).ur()?, devices))
    }

    fn devices(&self) -> impl ExactSizeIterator<Item = &Device> {
        self.devices.iter().map(|d| &**d)
    }

    fn extended_deleter(&self) -> &ExtendedDeleter {
        &self.deleter
    }

    fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        Ok(self.ze.0 as ur_native_handle_t)
    }

    /// `urContextCreateWithNativeHandle`: a context over the user's Level
    /// Zero context, for `devices` (every device of the first platform
    /// when none are named: Level Zero cannot list a context's devices).
    fn from_native(native: ur_native_handle_t, devices: &[&Device], ownership: NativeOwnership) -> UrResult<Arc<Self>> {
        let devices: Vec<Arc<Device>> = devices.iter().map(|d| arc_of(*d)).collect();
        let devices = if devices.is_empty() {
            let platform = crate::device::Platform::all().first().ok_or(UR_RESULT_ERROR_INVALID_CONTEXT)?;
            platform.devices.clone()
        } else {
            devices
        };
        let owned = ownership == NativeOwnership::Owned;
        Ok(Self::assemble(ZeContext::from_native(native as ze_context_handle_t, owned), devices))
    }

    fn usm_alloc(&self, r: AllocRequest<'_, LevelZero>) -> UrResult<*mut c_void> {
        memory::alloc(self, r)
    }

    fn usm_free(&self, ptr: *mut c_void) -> UrResult {
        memory::free(self, ptr)
    }

    type SlabOwner = crate::memory::SlabOwner;
    fn slabs(&self) -> &crate::memory::SlabMap {
        &self.slabs
    }

    /// `(base, size)` of the live allocation of this context holding `ptr`.
    fn usm_range(&self, ptr: *const c_void) -> Option<(usize, usize)> {
        self.usm.live_span(&self.slabs, ptr as usize)
    }

    fn usm_alloc_info(&self, ptr: *const c_void) -> Option<AllocInfo<LevelZero>> {
        let info = memory::pointer_info(self, ptr)?;
        let device = info.device.as_ref().map_or(std::ptr::null_mut(), |d| d.handle());
        Some(AllocInfo::new(info.kind, info.base as *mut c_void, info.size, device, info.pool))
    }

    fn pools_supported(&self) -> bool {
        true
    }

    fn pool_create(&self, device: Option<&Device>, desc: PoolDesc, api: PoolApi) -> UrResult<Arc<UsmPool>> {
        Ok(memory::user_pool(arc_of(self), device.map(arc_of), desc, api))
    }

    fn pools(&self) -> &ContextPools<UsmPool> {
        &self.pools
    }

    fn make_default_pool(&self, device: &Device) -> UrResult<Arc<UsmPool>> {
        Ok(memory::device_default(&arc_of(self), &arc_of(device)))
    }
}
