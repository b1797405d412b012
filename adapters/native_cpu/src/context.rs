//! The context object, with its `hal::Context` impl.
//!
//! A context: the devices it spans, the USM allocations made in it, and its
//! share of the async pool engine: the graph of every queue's commands, the
//! pools, and who waits for which command.

use ur_core::extended_deleter::ExtendedDeleter;
use ur_core::usm_pool::ContextPools;
use crate::device::{Device, USM_POOL_SUPPORT};
use crate::memory::{Pool, SlabMap, UsmRegistry};
use crate::queue::QueueShared;
use crate::{NativeCpu, DDI};
use std::ffi::c_void;
use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use ur_core::lock_order::{Mutex, MutexGuard, Rank};
use ur_core::engine::{Dag, Lane, QueueOrder, Stamp};
use ur_core::hal::{self, AllocInfo, AllocRequest};
use ur_core::handle::{arc_of, ArcObject, HandleHeader, ObjectKind};
use ur_core::usm_async::{PoolApi, PoolDesc};
use ur_core::*;

#[repr(C)]
pub struct Context {
    header: HandleHeader,
    pub devices: Vec<Arc<Device>>,
    /// Live USM allocations; dropping the context frees those that no
    /// pending command still holds.
    pub usm: UsmRegistry,
    pub deleter: ExtendedDeleter,
    /// Every command of every queue of this context, as the engine sees it.
    pub dag: Arc<Dag>,
    /// Blocking allocations from a pool are made on this lane, which runs
    /// no commands: it stands for the host.
    pub host_lane: Arc<Lane>,
    /// Which pool owns each slab of pool memory.
    pub slabs: Arc<SlabMap>,
    /// Each device's default pool and the one chosen for it, and the
    /// pools the user made.
    pub pools: ContextPools<Pool>,
    /// Pools the user released while some of their allocations were live:
    /// kept until those are freed.
    orphan_pools: Mutex<Vec<Arc<Pool>>>,
    /// Every live queue, by id. Never upgraded under the lock: the last
    /// reference of a queue dropping there would come back for it.
    queues: Mutex<Vec<(u64, Weak<QueueShared>)>>,
    /// Queues with a command that waits for an engine stamp; woken, once,
    /// when any command of the context completes.
    stamp_watchers: Mutex<Vec<Weak<QueueShared>>>,
    has_stamp_watchers: AtomicBool,
}

ur_core::ur_object!(Context, Context, ur_context_handle_t_);

// SAFETY: every `Context` is made inside an `Arc` by its constructor.
unsafe impl ArcObject for Context {}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock()
}

impl Context {
    pub fn new(devices: Vec<Arc<Device>>) -> Arc<Context> {
        let dag = Dag::new();
        let host_lane = dag.create_lane(QueueOrder::InOrder);
        Arc::new(Context {
            header: HandleHeader::new(&DDI, ObjectKind::Context),
            pools: ContextPools::default(),
            devices,
            usm: UsmRegistry::default(),
            deleter: ExtendedDeleter::default(),
            dag,
            host_lane,
            slabs: Arc::default(),
            orphan_pools: Mutex::new(Rank::Leaf, Vec::new()),
            queues: Mutex::new(Rank::Leaf, Vec::new()),
            stamp_watchers: Mutex::new(Rank::Leaf, Vec::new()),
            has_stamp_watchers: AtomicBool::new(false),
        })
    }

    pub fn handle(self: &Arc<Self>) -> ur_context_handle_t {
        ur_core::handle::handle_of(&**self)
    }

    // -- pools --------------------------------------------------------------

    pub(crate) fn keep_until_freed(&self, pool: Arc<Pool>) {
        lock(&self.orphan_pools).push(pool);
    }

    // -- queues -------------------------------------------------------------

    pub(crate) fn register_queue(&self, queue: &Arc<QueueShared>) {
        let mut queues = lock(&self.queues);
        queues.retain(|(_, q)| q.strong_count() > 0);
        queues.push((queue.id, Arc::downgrade(queue)));
    }

    pub(crate) fn unregister_queue(&self, id: u64) {
        lock(&self.queues).retain(|(q, w)| *q != id && w.strong_count() > 0);
    }

    /// Blocks until every command enqueued so far on the context's queues
    /// has finished (a queue's own worker does not wait for its queue).
    pub fn wait_all_queues(&self) {
        let weak: Vec<Weak<QueueShared>> = lock(&self.queues).iter().map(|(_, q)| q.clone()).collect();
        for q in weak.iter().filter_map(Weak::upgrade) {
            q.wait_idle();
        }
    }

    /// Whether command `s` has completed. When it has not, `queue` is woken
    /// at the next completion in the context, when it may have. (The watcher
    /// is registered before the check, and completion is published before
    /// watchers are read, so no completion falls between the two.)
    pub(crate) fn watch_stamp(&self, queue: &Arc<QueueShared>, s: Stamp) -> bool {
        if self.dag.is_complete(s) {
            return true;
        }
        {
            let mut watchers = lock(&self.stamp_watchers);
            if !watchers.iter().any(|w| std::ptr::eq(w.as_ptr(), Arc::as_ptr(queue))) {
                watchers.push(Arc::downgrade(queue));
            }
            self.has_stamp_watchers.store(true, Ordering::SeqCst);
        }
        fence(Ordering::SeqCst);
        self.dag.is_complete(s)
    }

    /// A command completed: wakes the queues waiting for an engine stamp.
    pub(crate) fn wake_stamp_watchers(&self) {
        fence(Ordering::SeqCst);
        if !self.has_stamp_watchers.load(Ordering::SeqCst) {
            return;
        }
        let watchers = {
            let mut w = lock(&self.stamp_watchers);
            self.has_stamp_watchers.store(false, Ordering::SeqCst);
            std::mem::take(&mut *w)
        };
        for q in watchers.iter().filter_map(Weak::upgrade) {
            q.wake_workers();
        }
    }
}

impl hal::Context<NativeCpu> for Context {
    fn create(devices: &[&Device], _flags: ur_context_flags_t) -> UrResult<Arc<Self>> {
        Ok(Context::new(devices.iter().map(|d| arc_of(*d)).collect()))
    }

    fn devices(&self) -> impl ExactSizeIterator<Item = &Device> {
        self.devices.iter().map(|d| &**d)
    }

    fn extended_deleter(&self) -> &ExtendedDeleter {
        &self.deleter
    }

    fn usm_alloc(&self, r: AllocRequest<'_, NativeCpu>) -> UrResult<*mut c_void> {
        Ok(Context::usm_alloc(self, r)? as *mut c_void)
    }

    fn usm_free(&self, ptr: *mut c_void) -> UrResult {
        Context::usm_free(self, ptr as *mut u8)
    }

    /// A host synchronisation point: frees that have completed become
    /// reusable, and each pool gives back what is above its release
    /// threshold. Released pools whose last allocation was freed go.
    fn collect_pools(&self) {
        self.pools.collect(|p| &p.base.engine);
        // Counted with the list let go (counting takes each pool's lock),
        // and the pools that go are dropped after it (a drop gives memory
        // back): the list is a leaf of the lock order.
        let orphans = std::mem::take(&mut *lock(&self.orphan_pools));
        let (done, keep): (Vec<_>, Vec<_>) = orphans.into_iter().partition(|p| crate::memory::live_blocks(p) == 0);
        if !keep.is_empty() {
            lock(&self.orphan_pools).extend(keep);
        }
        drop(done);
    }

    type SlabOwner = crate::memory::SlabOwner;
    fn slabs(&self) -> &SlabMap {
        &self.slabs
    }

    fn usm_range(&self, ptr: *const c_void) -> Option<(usize, usize)> {
        self.usm.live_span(&self.slabs, ptr as usize)
    }

    fn usm_alloc_info(&self, ptr: *const c_void) -> Option<AllocInfo<NativeCpu>> {
        let addr = ptr as usize;
        if let Some(a) = self.usm.find(addr) {
            let device = a.device.as_ref().map_or(std::ptr::null_mut(), |d| d.handle());
            return Some(AllocInfo::new(a.kind.to_ur(), a.base() as *mut c_void, a.size(), device, std::ptr::null_mut()));
        }
        let block = self.pool_block(addr)?;
        let device = block.device.as_ref().map_or(std::ptr::null_mut(), |d| d.handle());
        Some(AllocInfo::new(block.kind.to_ur(), block.base as *mut c_void, block.size, device, block.pool.handle()))
    }

    fn pools_supported(&self) -> bool {
        USM_POOL_SUPPORT
    }

    fn pool_create(&self, device: Option<&Device>, desc: PoolDesc, api: PoolApi) -> UrResult<Arc<Pool>> {
        Ok(crate::memory::create_pool(&arc_of(self), device.map(arc_of), desc, api))
    }

    fn pools(&self) -> &ContextPools<Pool> {
        &self.pools
    }

    fn make_default_pool(&self, device: &Device) -> UrResult<Arc<Pool>> {
        Ok(crate::memory::default_for(&arc_of(self), arc_of(device)))
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // Every queue is gone (each held the context), so no command can
        // touch pool memory: the pools give all of it back now, before the
        // user hears that the context is destroyed.
        self.pools.clear();
        self.orphan_pools.get_mut().clear();
        self.deleter.run();
    }
}
