//! USM pools. A pool handle stands for the async pool engine's pools of one
//! context (one per USM kind, made on first use), which reserve ranges of
//! host address space and commit them in granules of [`GRANULE`] bytes
//! (or, past their poolable size, take memory of the allocator), and
//! sub-allocate them; reuse, statistics, the release threshold and trimming
//! are the engine's. Every range and slab is entered in the context's
//! [`SlabMap`], so that any address inside pool memory finds its pool.

use super::context::Context;
use super::device::{Device, DEFAULT_USM_ALIGNMENT};
use crate::DDI;
use std::ptr::NonNull;
use std::sync::{Arc, Weak};
use ur_core::lock_order::{Mutex, Rank};
use ur_core::engine::{self, HostMemory, MemorySource, OutOfMemory, PoolConfig, UsmKind, VirtualMemory};
use ur_core::handle::{ArcObject, HandleHeader, ObjectKind};
use ur_core::usm_async::{PoolApi, PoolDesc};
use ur_core::usm_pool::{self, PoolBase};
use ur_core::*;

/// Which engine pool, UR pool, USM kind and device own each slab of a
/// context.
pub type SlabOwner = usm_pool::SlabOwner<Pool, Arc<Device>>;
pub type SlabMap = engine::SlabMap<SlabOwner>;

/// Host memory for one USM kind (and device) of one pool. The engine pools
/// of a UR pool share one [`HostMemory`], whose budget is the pool's
/// maximum size.
struct PoolMemory {
    host: Arc<HostMemory>,
    slabs: Arc<SlabMap>,
    owner: SlabOwner,
}

/// Test hook: `UR_NATIVE_CPU_FAIL_ALLOC_AT=N` makes the Nth memory request
/// of the process's pools (allocate, reserve or commit, counted from 1), and
/// every later one, fail as out of memory, so that tests through the C API
/// can run a pool out of memory mid-stream. Read once; unset, it costs one
/// relaxed load per request.
fn injected_failure() -> Result<(), OutOfMemory> {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    use std::sync::OnceLock;
    static FAIL_AT: OnceLock<u64> = OnceLock::new();
    static REQUESTS: AtomicU64 = AtomicU64::new(0);
    let at = *FAIL_AT.get_or_init(|| {
        std::env::var("UR_NATIVE_CPU_FAIL_ALLOC_AT").ok().and_then(|v| v.parse().ok()).unwrap_or(0)
    });
    if at != 0 && REQUESTS.fetch_add(1, Relaxed) + 1 >= at {
        return Err(OutOfMemory);
    }
    Ok(())
}

impl MemorySource for PoolMemory {
    fn allocate(&self, size: usize, align: usize) -> Result<NonNull<u8>, OutOfMemory> {
        injected_failure()?;
        let p = self.host.allocate(size, align)?;
        self.slabs.insert(p.as_ptr() as usize, size, self.owner.clone());
        Ok(p)
    }

    unsafe fn release(&self, ptr: NonNull<u8>, size: usize, align: usize) {
        self.slabs.remove(ptr.as_ptr() as usize);
        // SAFETY: the engine gives back, once, a slab this source took.
        self.host.release(ptr, size, align)
    }

    fn virtual_memory(&self) -> Option<&dyn VirtualMemory> {
        self.host.virtual_memory().map(|_| self as &dyn VirtualMemory)
    }
}

/// The host's ranges, entered in the slab map while reserved.
impl VirtualMemory for PoolMemory {
    fn granule(&self) -> usize {
        VirtualMemory::granule(&*self.host)
    }

    fn reserve(&self, size: usize) -> Result<NonNull<u8>, OutOfMemory> {
        injected_failure()?;
        let p = self.host.reserve(size)?;
        self.slabs.insert(p.as_ptr() as usize, size, self.owner.clone());
        Ok(p)
    }

    unsafe fn commit(&self, addr: NonNull<u8>, len: usize) -> Result<(), OutOfMemory> {
        injected_failure()?;
        // SAFETY: the engine's contract, passed on.
        self.host.commit(addr, len)
    }

    unsafe fn decommit(&self, addr: NonNull<u8>, len: usize) {
        // SAFETY: the engine's contract, passed on.
        self.host.decommit(addr, len)
    }

    unsafe fn unreserve(&self, addr: NonNull<u8>, size: usize) {
        self.slabs.remove(addr.as_ptr() as usize);
        // SAFETY: the engine's contract, passed on.
        self.host.unreserve(addr, size)
    }
}

/// A USM pool handle: `urUSMPoolCreate`, `urUSMPoolCreateExp`, or a
/// device's default pool.
#[repr(C)]
pub struct Pool {
    header: HandleHeader,
    pub base: PoolBase<Context, Arc<Device>>,
    /// Pools the user made keep their context alive, as other handles do,
    /// until their last user reference goes.
    user_context: Mutex<Option<Arc<Context>>>,
    host: Arc<HostMemory>,
    slabs: Arc<SlabMap>,
    me: Weak<Pool>,
}

ur_core::ur_object!(Pool, UsmPool, ur_usm_pool_handle_t_, {

    /// A pool the user gave up is nobody's current pool any more. Its
    /// allocations still live stay valid: the context keeps the pool until
    /// they are freed (and the pool no longer keeps the context).
    fn last_user_release(&self) {
        let held = self.user_context.lock().take();
        if let Some(context) = self.base.context() {
            context.pools.forget(self);
            if self.live_blocks() > 0 {
                if let Some(me) = self.me.upgrade() {
                    context.keep_until_freed(me);
                }
            }
        }
        drop(held);
    }
});

// SAFETY: every `Pool` is made inside an `Arc` by its constructor.
unsafe impl ArcObject for Pool {}

/// Slabs taken from the host when the pool's creator names no size: large
/// enough that a second block of a few MiB fits beside a first one, so that
/// alternating large allocations do not each cost a trip to the allocator.
/// Used only where a range of address space cannot be reserved.
const SLAB_SIZE: usize = 4 << 20;

/// Pools commit host memory in granules of this size. Smaller granules
/// hold less memory that no block uses, larger ones make fewer system
/// calls: `ur_bench` scenario 5 (200 000 allocations under 8, 64 and
/// 512 MiB live) reaches reserved/used high water of 1.22, 1.10 and 1.05
/// with 32 KiB; 1.15, 1.06 and 1.03 with 16 KiB at twice the `madvise`
/// calls; 1.36, 1.15 and 1.06 with 64 KiB.
pub const GRANULE: usize = 32 << 10;

/// Host memory of a pool: ranges committed in [`GRANULE`]s, within `budget`.
fn host_memory(budget: usize) -> Arc<HostMemory> {
    Arc::new(HostMemory::with_virtual_memory(GRANULE, budget))
}

/// Every pool block is aligned as every USM allocation; slabs are
/// [`SLAB_SIZE`] unless a `urUSMPoolCreate` descriptor chose.
fn engine_config(mut config: PoolConfig, desc: &PoolDesc, api: PoolApi) -> PoolConfig {
    config.granule = DEFAULT_USM_ALIGNMENT;
    let chosen = api == PoolApi::Classic && desc.limits.is_some_and(|(_, min_driver)| min_driver != 0);
    if !chosen {
        config.min_slab_size = SLAB_SIZE;
    }
    config
}

impl Pool {
    /// A pool the user asked for: `device` for `urUSMPoolCreateExp`, none
    /// for `urUSMPoolCreate`.
    pub fn create(context: &Arc<Context>, device: Option<Arc<Device>>, desc: PoolDesc, api: PoolApi) -> Arc<Pool> {
        // The maximum size does not depend on the kind.
        let host = host_memory(desc.engine_config(UsmKind::Device, api).max_size);
        let base = PoolBase::user(context, device, context.devices.iter().cloned(), desc, api);
        let pool = Arc::new_cyclic(|me| Pool {
            header: HandleHeader::new(&DDI, ObjectKind::UsmPool),
            base,
            user_context: Mutex::new(Rank::Leaf, Some(context.clone())),
            host,
            slabs: context.slabs.clone(),
            me: me.clone(),
        });
        context.pools.add_user(&pool);
        pool
    }

    /// The default pool of `device` in `context`: it keeps everything it
    /// reserves (threshold `SIZE_MAX`) until trimmed or the context goes.
    pub fn default_for(context: &Arc<Context>, device: Arc<Device>) -> Arc<Pool> {
        Arc::new_cyclic(|me| Pool {
            header: HandleHeader::new(&DDI, ObjectKind::UsmPool),
            base: PoolBase::device_default(context, device),
            user_context: Mutex::new(Rank::Leaf, None),
            host: host_memory(usize::MAX),
            slabs: context.slabs.clone(),
            me: me.clone(),
        })
    }

    pub fn handle(&self) -> ur_usm_pool_handle_t {
        ur_core::handle::handle_of(self)
    }

    /// Allocations of the pool, of every kind, handed out and not freed.
    pub fn live_blocks(&self) -> usize {
        self.base.engine.made().map(|p| p.live_blocks()).sum()
    }

    /// The engine pool serving `kind` memory to `device`, made on first
    /// use. A pool of `urUSMPoolCreate` keeps each device's device memory
    /// apart; its host and shared memory serve every device.
    #[inline]
    pub fn engine_pool(&self, kind: UsmKind, device: Option<&Device>) -> UrResult<&Arc<engine::Pool>> {
        self.base.engine_pool(kind, device, |context, config, serving| {
            let config = engine_config(config, &self.base.desc, self.base.api);
            Ok(Arc::new_cyclic(|engine_pool| {
                let owner = SlabOwner {
                    pool: engine_pool.clone(),
                    usm_pool: self.me.clone(),
                    kind,
                    device: if kind == UsmKind::Host { None } else { serving.cloned() },
                };
                let source = PoolMemory { host: self.host.clone(), slabs: self.slabs.clone(), owner };
                engine::Pool::new(context.dag.clone(), Arc::new(source), config)
            }))
        })
    }
}
