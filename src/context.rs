//! The context object, written once for every backend: what any context
//! holds (its handle header, its devices, the USM allocations made in it,
//! the slabs and pools of its async engine, its extended deleter) beside
//! `raw`, what the driver needs of it (a `cl_context`, a Level Zero
//! context, CUDA's primary contexts, native CPU's queue list), behind
//! [`RawContext`], and its memory (blocking USM and pools) behind
//! [`RawMemory`], which each backend implements in its `memory.rs`.

use crate::abi::*;
use crate::device::Device;
use crate::boundary::NativeOwnership;
use crate::engine::{Engine, SlabMap};
use crate::extended_deleter::ExtendedDeleter;
use crate::hal::{AllocInfo, AllocRequest, Backend};
use crate::handle::{handle_of, HandleHeader, ObjectKind};
use crate::pool::UsmPool;
use crate::usm_async::{PoolApi, PoolDesc};
use crate::usm_pool::ContextPools;
use crate::usm_registry::{Registered, UsmRegistry};
use crate::UrResult;
use core::ffi::c_void;
use crate::engine::LaneId;
use crate::lock_order::{Mutex, Rank};
use crate::queue::object::Queue;
use std::sync::{Arc, Weak};

/// The driver's side of a context's USM memory: its blocking allocations
/// and its pools. Each backend implements it beside its memory (its
/// `memory.rs`), for its raw context type.
pub trait RawMemory<B: Backend>: Sized {
    /// What the context's registry keeps of a blocking allocation (or of a
    /// block of a driver's own pool).
    type Allocation: Registered + Send + Sync;

    /// Whether pools are served (`USM_POOL_SUPPORT`); without them every
    /// pool entry point is `UNSUPPORTED_FEATURE`.
    fn pools_supported(context: &Context<B>) -> bool;

    /// Blocking USM: allocates and registers in `context.usm` (or in an
    /// engine pool of `request.pool`).
    fn usm_alloc(context: &Context<B>, request: AllocRequest<'_, B>) -> UrResult<*mut c_void>;
    /// `INVALID_MEM_OBJECT` for memory this context did not allocate.
    fn usm_free(context: &Context<B>, ptr: *mut c_void) -> UrResult;
    /// What `urUSMGetMemAllocInfo` reports of a pointer outside every
    /// engine pool (the core answers those): `None` when this context did
    /// not allocate it.
    fn usm_alloc_info(context: &Context<B>, ptr: *const c_void) -> Option<AllocInfo<B>>;

    /// A pool of this context (`device: None` for a context-wide one).
    fn pool_create(
        context: &Context<B>,
        device: Option<&Device<B>>,
        desc: PoolDesc,
        api: PoolApi,
    ) -> UrResult<Arc<UsmPool<B>>>;
    /// A new default async pool of `device`, a device of the context (the
    /// table makes one on first use; the context owns its handle).
    fn make_default_pool(context: &Context<B>, device: &Device<B>) -> UrResult<Arc<UsmPool<B>>>;
}

/// The driver's side of a context. Each function gets the whole context,
/// so that the raw part holds only what the driver needs.
pub trait RawContext<B: Backend>: RawMemory<B> + Send + Sync + Sized + 'static {
    /// A context over `devices` (deduplicated, at least one); the backend
    /// makes its raw part and hands it to [`Context::new`].
    fn create(devices: &[&Device<B>], flags: ur_context_flags_t) -> UrResult<Arc<Context<B>>>;
    fn from_native(
        _native: ur_native_handle_t,
        _devices: &[&Device<B>],
        _ownership: NativeOwnership,
    ) -> UrResult<Arc<Context<B>>> {
        Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
    }
    fn native_handle(_context: &Context<B>) -> UrResult<ur_native_handle_t> {
        Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
    }
    /// Whether `urEnqueueUSMFill2D`/`Memcpy2D` are served (the context's
    /// `USM_FILL2D_SUPPORT` and `USM_MEMCPY2D_SUPPORT`).
    fn usm_2d_supported(_context: &Context<B>) -> bool {
        true
    }
    /// A host synchronisation point (a finished queue, a waited event, a
    /// blocking command): the context's pools take back what finished work
    /// freed, and give back what is above their thresholds.
    fn collect_pools(context: &Context<B>) {
        context.pools.collect(|p| &p.base.engine);
    }
    /// Runs once as the context goes, before its pools are cleared and its
    /// deleter runs: what the user did not free goes back here.
    fn release(_context: &mut Context<B>) {}
}

pub type AllocationOf<B> = <<B as Backend>::RawContext as RawMemory<B>>::Allocation;
/// What the slab map finds behind an address of an engine pool's memory.
pub type SlabOwnerOf<B> = crate::usm_pool::SlabOwner<UsmPool<B>, <B as Backend>::DeviceRef>;

/// A UR context.
#[repr(C)]
pub struct Context<B: Backend> {
    /// First: the handle protocol reads it at offset 0.
    header: HandleHeader,
    /// Before the engine and `raw`: default pools go before the graph and
    /// the driver context they use.
    pub pools: ContextPools<UsmPool<B>>,
    /// In the order the context was made with.
    pub devices: Vec<B::DeviceRef>,
    /// Live allocations that no engine pool sub-allocates, by address.
    pub usm: UsmRegistry<AllocationOf<B>>,
    /// Every slab of the context's engine pools, by address.
    pub slabs: Arc<SlabMap<SlabOwnerOf<B>>>,
    /// The graph of every queue's commands, and the engine's pools.
    pub engine: Engine,
    pub deleter: ExtendedDeleter,
    /// Every queue made on the context (`Queue::new` lists it), by its
    /// lane; weak, for each queue holds its context.
    queues: Mutex<Vec<(LaneId, Weak<Queue<B>>)>>,
    pub raw: B::RawContext,
}

crate::core_object!(Context, Context, ur_context_handle_t_);


impl<B: Backend> Context<B> {
    pub fn new(devices: Vec<B::DeviceRef>, raw: B::RawContext) -> Arc<Self> {
        Self::with_engine(devices, Engine::new(), raw)
    }

    /// For a raw part made with the context's engine (a lane of its graph,
    /// say).
    pub fn with_engine(devices: Vec<B::DeviceRef>, engine: Engine, raw: B::RawContext) -> Arc<Self> {
        Arc::new(Context {
            header: HandleHeader::new(B::ddi(), ObjectKind::Context),
            pools: ContextPools::default(),
            devices,
            usm: UsmRegistry::default(),
            slabs: Arc::default(),
            engine,
            deleter: ExtendedDeleter::default(),
            queues: Mutex::new(Rank::Leaf, Vec::new()),
            raw,
        })
    }

    /// Lists a new queue of the context (its constructor does).
    pub(crate) fn add_queue(&self, queue: &Arc<Queue<B>>) {
        let mut queues = self.queues.lock();
        queues.retain(|(_, w)| w.strong_count() > 0);
        queues.push((queue.lane.id(), Arc::downgrade(queue)));
    }

    /// The context's queues that are still alive. (Copied out: a queue
    /// must not be dropped, nor asked anything, under the list's lock.)
    pub fn live_queues(&self) -> Vec<Arc<Queue<B>>> {
        self.queues.lock().iter().filter_map(|(_, w)| w.upgrade()).collect()
    }

    /// The live queue of the context whose lane in the engine's graph is
    /// `lane`.
    pub fn queue_of_lane(&self, lane: LaneId) -> Option<Arc<Queue<B>>> {
        let queues = self.queues.lock();
        queues.iter().find(|(id, _)| *id == lane).and_then(|(_, w)| w.upgrade())
    }


    /// The context's devices, in the order it was made with.
    pub fn devices(&self) -> impl ExactSizeIterator<Item = &Device<B>> {
        self.devices.iter().map(|d| &**d)
    }

    pub fn has_device(&self, device: &Device<B>) -> bool {
        self.devices().any(|d| std::ptr::eq(d, device))
    }

    /// The most bytes one host allocation may take: the least of the
    /// context's devices (`spec/usm.md`), as host memory must be reachable
    /// from each of them.
    pub fn max_alloc_size(&self) -> u64 {
        self.devices().map(|d| d.max_alloc_size()).min().unwrap_or(0)
    }

    /// `(base, size)` of the live USM allocation of this context holding
    /// `ptr`: a registered one, or a block an engine pool gave out. The
    /// enqueue bounds checks use it.
    pub fn usm_range(&self, ptr: *const c_void) -> Option<(usize, usize)> {
        self.usm.live_span(&self.slabs, ptr as usize)
    }
}

/// What the core asks of a context that only the raw part answers.
impl<B: Backend> Context<B> {
    pub fn create(devices: &[&Device<B>], flags: ur_context_flags_t) -> UrResult<Arc<Self>> {
        B::RawContext::create(devices, flags)
    }
    pub fn from_native(native: ur_native_handle_t, devices: &[&Device<B>], ownership: NativeOwnership) -> UrResult<Arc<Self>> {
        B::RawContext::from_native(native, devices, ownership)
    }
    pub fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        B::RawContext::native_handle(self)
    }
    pub fn usm_2d_supported(&self) -> bool {
        B::RawContext::usm_2d_supported(self)
    }
    pub fn pools_supported(&self) -> bool {
        B::RawContext::pools_supported(self)
    }
    pub fn usm_alloc(&self, request: AllocRequest<'_, B>) -> UrResult<*mut c_void> {
        B::RawContext::usm_alloc(self, request)
    }
    pub fn usm_free(&self, ptr: *mut c_void) -> UrResult {
        B::RawContext::usm_free(self, ptr)
    }
    /// `None`: this context did not allocate `ptr`. A block of an engine
    /// pool is its pool's to tell (its size is the request rounded up to
    /// the pool's granule; a destroyed pool reads as none); anything else
    /// the backend's.
    pub fn usm_alloc_info(&self, ptr: *const c_void) -> Option<AllocInfo<B>> {
        let addr = ptr as usize;
        let Some(owner) = self.slabs.owner_of(addr) else {
            return B::RawContext::usm_alloc_info(self, ptr);
        };
        let (base, size) = owner.live_block(addr)?;
        let device = owner.device.as_ref().map_or(std::ptr::null_mut(), |d| handle_of(&**d));
        Some(AllocInfo::new(owner.kind.to_ur(), base as *mut c_void, size, device, owner.usm_pool_handle()))
    }
    pub fn pool_create(&self, device: Option<&Device<B>>, desc: PoolDesc, api: PoolApi) -> UrResult<Arc<UsmPool<B>>> {
        B::RawContext::pool_create(self, device, desc, api)
    }
    pub fn make_default_pool(&self, device: &Device<B>) -> UrResult<Arc<UsmPool<B>>> {
        B::RawContext::make_default_pool(self, device)
    }
    /// A host synchronisation point (see [`RawContext::collect_pools`]).
    pub fn collect_pools(&self) {
        B::RawContext::collect_pools(self)
    }
}

impl<B: Backend> Drop for Context<B> {
    fn drop(&mut self) {
        B::RawContext::release(self);
        // Every queue held the context, so no command can touch pool
        // memory: the pools give all of it back before the deleter tells
        // the user the context is gone.
        self.pools.clear();
        self.deleter.run();
    }
}
