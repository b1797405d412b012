//! Contexts: a Level Zero context over devices of one driver, its event
//! caches, the table of its blocking USM allocations, and its async pool
//! engine (the graph of its queues' commands, default and current pools).

use super::device::Device;
use super::engine::SlabMap;
use super::event::{Command, EventCache, ZeEvent};
use super::queue::Queue;
use super::usm::Allocation;
use super::usm_pool::UsmPool;
use crate::conv::ZeExt;
use crate::driver::ZeContext;
use crate::DDI;
use level_zero_sys::ze_context_handle_t;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, Weak};
use ur_core::engine::{self, Cover, Engine, RangeMap, Stamp};
use ur_core::handle::{ArcObject, HandleHeader, ObjectKind};
use ur_core::*;

/// The pools of a context, by device (keyed by the device's address).
#[derive(Default)]
struct Pools {
    /// Made on first use; they live as long as the context.
    defaults: Vec<(usize, Arc<UsmPool>)>,
    /// Set by `urUSMPoolSetDevicePoolExp`; weak, so that a pool goes when
    /// its user releases it (the default serves again).
    current: Vec<(usize, Weak<UsmPool>)>,
    /// Every user pool, for synchronisation points.
    users: Vec<Weak<UsmPool>>,
}

fn device_key(device: &Device) -> usize {
    device as *const Device as usize
}

#[repr(C)]
pub struct Context {
    header: HandleHeader,
    /// Declared first among the engine's users: default pools go before
    /// the graph and the Level Zero context they use.
    pools: RwLock<Pools>,
    /// Engine pools of released UR pools that still have live blocks.
    kept_pools: Mutex<Vec<Arc<engine::Pool>>>,
    pub devices: Vec<Arc<Device>>,
    /// Live blocking USM allocations by base address.
    allocations: Mutex<RangeMap<Allocation>>,
    queues: Mutex<Vec<Weak<Queue>>>,
    extended_deleter: Mutex<Option<(unsafe extern "C" fn(*mut core::ffi::c_void), usize)>>,
    pub engine: Engine,
    pub slabs: Arc<SlabMap>,
    any_current: AtomicBool,
    events: Arc<EventCache>,
    timed_events: Arc<EventCache>,
    pub ze: Arc<ZeContext>,
}

ur_core::ur_object!(Context, Context, ur_context_handle_t_);

// SAFETY: contexts are made only by `Context::new`, in an `Arc`.
unsafe impl ArcObject for Context {}

impl Context {
    /// A context over `devices`, which must all belong to one driver.
    pub fn new(devices: Vec<Arc<Device>>) -> UrResult<Arc<Context>> {
        let platform = devices.first().ok_or(UR_RESULT_ERROR_INVALID_SIZE)?.platform.clone();
        if devices.iter().any(|d| !Weak::ptr_eq(&d.platform, &platform)) {
            return Err(UR_RESULT_ERROR_INVALID_DEVICE);
        }
        let driver = platform.upgrade().ok_or(UR_RESULT_ERROR_INVALID_DEVICE)?.ze;
        let raw: Vec<_> = devices.iter().map(|d| d.ze).collect();
        Ok(Self::assemble(ZeContext::create(driver, &raw).ur()?, devices))
    }

    /// `urContextCreateWithNativeHandle`: a context over the user's Level
    /// Zero context, for `devices` (every device of the first platform
    /// when none are named: Level Zero cannot list a context's devices).
    pub fn from_native(native: ze_context_handle_t, devices: Vec<Arc<Device>>, owned: bool) -> UrResult<Arc<Context>> {
        let devices = if devices.is_empty() {
            let platform = super::platform::Platform::all().first().ok_or(UR_RESULT_ERROR_INVALID_CONTEXT)?;
            platform.devices.clone()
        } else {
            devices
        };
        Ok(Self::assemble(ZeContext::from_native(native, owned), devices))
    }

    fn assemble(ze: ZeContext, devices: Vec<Arc<Device>>) -> Arc<Context> {
        let ze = Arc::new(ze);
        Arc::new(Context {
            header: HandleHeader::new(&DDI, ObjectKind::Context),
            pools: RwLock::new(Pools::default()),
            kept_pools: Mutex::new(Vec::new()),
            devices,
            allocations: Mutex::new(RangeMap::new()),
            queues: Mutex::new(Vec::new()),
            extended_deleter: Mutex::new(None),
            engine: Engine::new(),
            slabs: Arc::default(),
            any_current: AtomicBool::new(false),
            events: EventCache::new(ze.clone(), false),
            timed_events: EventCache::new(ze.clone(), true),
            ze,
        })
    }

    pub fn has_device(&self, device: &Device) -> bool {
        self.devices.iter().any(|d| std::ptr::eq(&**d, device))
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

    pub(crate) fn allocations(&self) -> MutexGuard<'_, RangeMap<Allocation>> {
        self.allocations.lock().unwrap_or_else(|e| e.into_inner())
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

    fn pools(&self) -> std::sync::RwLockReadGuard<'_, Pools> {
        self.pools.read().unwrap_or_else(|e| e.into_inner())
    }

    fn pools_mut(&self) -> std::sync::RwLockWriteGuard<'_, Pools> {
        self.pools.write().unwrap_or_else(|e| e.into_inner())
    }

    /// The default pool of `device` (a device of this context).
    pub fn default_pool(self: &Arc<Self>, device: &Arc<Device>) -> Arc<UsmPool> {
        let key = device_key(device);
        if let Some((_, p)) = self.pools().defaults.iter().find(|(k, _)| *k == key) {
            return p.clone();
        }
        let mut pools = self.pools_mut();
        if let Some((_, p)) = pools.defaults.iter().find(|(k, _)| *k == key) {
            return p.clone();
        }
        let pool = UsmPool::device_default(self, device);
        pools.defaults.push((key, pool.clone()));
        pool
    }

    /// The pool that async allocations on `device` use when none is named.
    pub fn current_pool(self: &Arc<Self>, device: &Arc<Device>) -> Arc<UsmPool> {
        let key = device_key(device);
        let set = self.pools().current.iter().find(|(k, _)| *k == key).and_then(|(_, p)| p.upgrade());
        set.unwrap_or_else(|| self.default_pool(device))
    }

    pub fn set_current_pool(&self, device: &Device, pool: &Arc<UsmPool>) {
        let key = device_key(device);
        let mut pools = self.pools_mut();
        pools.current.retain(|(k, _)| *k != key);
        pools.current.push((key, Arc::downgrade(pool)));
        self.any_current.store(true, Ordering::Release);
    }

    pub fn any_current_pool(&self) -> bool {
        self.any_current.load(Ordering::Acquire)
    }

    /// A pool being destroyed stops being any device's current pool.
    pub fn forget_pool(&self, pool: &UsmPool) {
        let mut pools = self.pools_mut();
        pools.current.retain(|(_, p)| !std::ptr::eq(p.as_ptr(), pool));
        self.any_current.store(!pools.current.is_empty(), Ordering::Release);
    }

    pub(crate) fn register_pool(&self, pool: &Arc<UsmPool>) {
        let mut pools = self.pools_mut();
        pools.users.retain(|p| p.strong_count() > 0);
        pools.users.push(Arc::downgrade(pool));
    }

    /// Keeps the engine pool of a released UR pool while blocks of it live.
    pub(crate) fn keep_pool(&self, pool: Arc<engine::Pool>) {
        self.kept_pools.lock().unwrap_or_else(|e| e.into_inner()).push(pool);
    }

    /// A host synchronisation point: every pool files the blocks whose
    /// frees have completed and gives back what is above its threshold.
    pub(crate) fn collect_pools(&self) {
        self.kept_pools.lock().unwrap_or_else(|e| e.into_inner()).retain(|p| p.live_blocks() > 0);
        let pools: Vec<Arc<UsmPool>> = {
            let pools = self.pools();
            pools.defaults.iter().map(|(_, p)| p.clone()).chain(pools.users.iter().filter_map(Weak::upgrade)).collect()
        };
        pools.iter().for_each(|p| p.base.engine.collect());
    }

    pub fn set_extended_deleter(&self, f: unsafe extern "C" fn(*mut core::ffi::c_void), user_data: *mut core::ffi::c_void) {
        *self.extended_deleter.lock().unwrap_or_else(|e| e.into_inner()) = Some((f, user_data as usize));
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // Every queue holds its context, so none is left: what the user did
        // not free goes back without waiting.
        let leftovers = std::mem::take(&mut *self.allocations());
        for a in leftovers.into_values() {
            super::usm::release(self, &a);
        }
        if let Some((f, user_data)) = self.extended_deleter.get_mut().unwrap_or_else(|e| e.into_inner()).take() {
            // SAFETY: the user registered this deleter for this context's
            // destruction, with this user data.
            unsafe { f(user_data as *mut core::ffi::c_void) };
        }
    }
}
