//! Host memory for USM: blocking allocations and their registry entries,
//! USM pools (the core's `UsmPool` over a `HostPool`), and the engine's memory
//! source over the host.
//!
//! USM on the host: every kind of allocation is host memory.
//!
//! A blocking allocation without a pool is its own block from the global
//! allocator, kept in the context's interval map so that any pointer into
//! it (not only its base) finds it; commands hold an `Arc` to the
//! allocations they touch, so a free while they are pending cannot release
//! the memory under them: it goes when the last of them finishes.
//!
//! Memory from a pool (blocking allocations with a pool, and every async
//! allocation) is a block of the async pool engine; the context's slab map
//! finds its pool from any address inside. A blocking free of such a block
//! first waits for the work of the context's queues enqueued before it.
//!
//! USM pools. A pool handle stands for the async pool engine's pools of one
//! context (one per USM kind, made on first use), which reserve ranges of
//! host address space and commit them in granules of [`GRANULE`] bytes
//! (or, past their poolable size, take memory of the allocator), and
//! sub-allocate them; reuse, statistics, the release threshold and trimming
//! are the engine's. Every range and slab is entered in the context's
//! [`SlabMap`], so that any address inside pool memory finds its pool.

use crate::context::{Context, ContextHost};
use crate::device::{Device, DEFAULT_USM_ALIGNMENT, USM_POOL_SUPPORT};
use crate::NativeCpu;
use std::alloc::Layout;
use std::ptr::NonNull;
use std::sync::Arc;
pub use ur_core::engine::UsmKind;
use ur_core::engine::{self, wait_reported, HostMemory, MemorySource, OutOfMemory, PoolConfig, VirtualMemory};
use ur_core::hal::{AllocInfo, AllocRequest};
use ur_core::context::RawMemory;
use std::ffi::c_void;
use ur_core::handle::arc_of;
use ur_core::lock_order::{Mutex, Rank};
use ur_core::usm_async::{PoolApi, PoolDesc};
use ur_core::pool::RawPool;
use ur_core::usm_pool::{self, PoolBase};
use ur_core::usm_registry::Registered;
use ur_core::*;

/// One live USM allocation. Dropping it returns the memory.
pub struct Allocation {
    base: NonNull<u8>,
    layout: Layout,
    /// The size the user asked for (the layout may be larger).
    size: usize,
    pub kind: UsmKind,
    /// `None` for host allocations, which belong to no device.
    pub device: Option<Arc<Device>>,
}

// SAFETY: the record owns its memory block exclusively; the bytes inside are
// the user's, accessed under the user's synchronisation.
unsafe impl Send for Allocation {}
unsafe impl Sync for Allocation {}

impl Allocation {
    pub fn base(&self) -> *mut u8 {
        self.base.as_ptr()
    }

    pub fn size(&self) -> usize {
        self.size
    }

    /// Whether `[addr, addr + len)` lies inside this allocation.
    pub fn contains(&self, addr: usize, len: usize) -> bool {
        let start = self.base.as_ptr() as usize;
        addr >= start && addr.checked_add(len).is_some_and(|end| end <= start + self.size)
    }
}

impl Drop for Allocation {
    fn drop(&mut self) {
        // SAFETY: allocated in `usm_alloc` with exactly this layout.
        unsafe { std::alloc::dealloc(self.base.as_ptr(), self.layout) };
    }
}

impl Registered for Allocation {
    fn span(&self) -> (usize, usize) {
        (self.base() as usize, self.size)
    }
}

/// The live blocking allocations of one context, by address.
pub type UsmRegistry = ur_core::usm_registry::UsmRegistry<Arc<Allocation>>;

/// A live block of pool memory, as found from an address inside it.
pub struct PoolBlock {
    pub pool: Arc<Pool>,
    pub kind: UsmKind,
    /// The device whose memory it is; none for host memory and for shared
    /// memory of a pool of every device.
    pub device: Option<Arc<Device>>,
    pub base: usize,
    /// The block's size: the request rounded up to the pool's granule.
    pub size: usize,
}

impl RawMemory<NativeCpu> for ContextHost {
    type Allocation = Arc<Allocation>;

    fn pools_supported(_: &Context) -> bool {
        USM_POOL_SUPPORT
    }

    /// Allocates USM memory in this context and records it. Host and
    /// device flags and placement hints mean nothing here: all host memory
    /// is one place. The core checked the size against the devices' limit;
    /// the zero size and the alignment are checked again here because the
    /// host allocator needs them right.
    fn usm_alloc(context: &Context, req: AllocRequest<'_, NativeCpu>) -> UrResult<*mut c_void> {
        if req.size == 0 {
            return Err(UR_RESULT_ERROR_INVALID_USM_SIZE);
        }
        if req.align != 0 && !req.align.is_power_of_two() {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        if let Some(pool) = req.pool {
            return Ok(pool_alloc(context, pool, req.kind, req.device, req.size, req.align)? as *mut c_void);
        }
        let align = req.align.max(DEFAULT_USM_ALIGNMENT);
        let layout = Layout::from_size_align(req.size, align).map_err(|_| UR_RESULT_ERROR_INVALID_USM_SIZE)?;
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { std::alloc::alloc(layout) };
        let base = NonNull::new(raw).ok_or(UR_RESULT_ERROR_OUT_OF_HOST_MEMORY)?;
        context.usm.insert(Arc::new(Allocation {
            base,
            layout,
            size: req.size,
            kind: req.kind,
            device: req.device.map(arc_of),
        }));
        Ok(base.as_ptr() as *mut c_void)
    }

    /// `urUSMFree`. A plain allocation is forgotten now; its memory goes
    /// once no pending command holds it. A pool block goes back to its pool
    /// once every command enqueued so far on the context's queues has
    /// finished (any of them may use it). Anything but the base of a live
    /// allocation is `INVALID_MEM_OBJECT`.
    fn usm_free(context: &Context, ptr: *mut c_void) -> UrResult {
        let addr = ptr as usize;
        if let Ok(alloc) = context.usm.remove(addr) {
            drop(alloc);
            return Ok(());
        }
        let settle = || {
            context.raw.wait_all_queues();
            Ok(())
        };
        context.slabs.free_blocking(addr, settle, |s| wait_reported(context.engine.dag(), s))
    }
    fn usm_alloc_info(context: &Context, ptr: *const c_void) -> Option<AllocInfo<NativeCpu>> {
        let a = context.usm.find(ptr as usize)?;
        let device = a.device.as_ref().map_or(std::ptr::null_mut(), |d| d.handle());
        Some(AllocInfo::new(a.kind.to_ur(), a.base() as *mut c_void, a.size(), device, std::ptr::null_mut()))
    }

    fn pool_create(context: &Context, device: Option<&Device>, desc: PoolDesc, api: PoolApi) -> UrResult<Arc<Pool>> {
        Ok(create_pool(&arc_of(context), device.map(arc_of), desc, api))
    }

    /// The default pool of `device` in `context`: it keeps everything it
    /// reserves (threshold `SIZE_MAX`) until trimmed or the context goes.
    fn make_default_pool(context: &Context, device: &Device) -> UrResult<Arc<Pool>> {
        let raw = HostPool {
            user_context: Mutex::new(Rank::Leaf, None),
            host: host_memory(usize::MAX),
            slabs: context.slabs.clone(),
        };
        Ok(Pool::new(PoolBase::device_default(&arc_of(context), arc_of(device)), raw))
    }
}

/// A blocking allocation from `pool`, made on the host lane: when the
/// engine hands out a block whose earlier owner's free is still pending,
/// this waits for that free.
fn pool_alloc(context: &Context, pool: &Pool, kind: UsmKind, device: Option<&Device>, size: usize, align: usize) -> UrResult<*mut u8> {
    let engine = pool.engine_pool(kind, device)?;
    let a = engine.alloc(&context.raw.host_lane, &[], size, align, false)?;
    if let Some(stamp) = a.stamp {
        for &dep in a.deps.as_slice() {
            wait_reported(context.engine.dag(), dep);
        }
        if a.zero {
            // SAFETY: the block is ours, `a.size` bytes, and nothing else uses it yet.
            unsafe { a.ptr.as_ptr().write_bytes(0, a.size) };
        }
        context.engine.dag().complete(stamp);
    }
    Ok(a.ptr.as_ptr())
}

/// The live block of pool memory that holds `addr`, if any.
pub fn pool_block(context: &Context, addr: usize) -> Option<PoolBlock> {
    let owner = context.slabs.owner_of(addr)?;
    let (base, size) = owner.live_block(addr)?;
    Some(PoolBlock { pool: owner.usm_pool.upgrade()?, kind: owner.kind, device: owner.device, base, size })
}

// -- pools ------------------------------------------------------------------

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

/// This backend's USM pools: the core's pool object over a [`HostPool`].
pub type Pool = ur_core::pool::UsmPool<NativeCpu>;

/// What a pool keeps beside its base: the host memory its engine pools
/// take slabs from.
pub struct HostPool {
    /// Pools the user made keep their context alive, as other handles do,
    /// until their last user reference goes.
    user_context: Mutex<Option<Arc<Context>>>,
    host: Arc<HostMemory>,
    slabs: Arc<SlabMap>,
}

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

/// A pool the user asked for: `device` for `urUSMPoolCreateExp`, none for
/// `urUSMPoolCreate`.
pub fn create_pool(context: &Arc<Context>, device: Option<Arc<Device>>, desc: PoolDesc, api: PoolApi) -> Arc<Pool> {
    // The maximum size does not depend on the kind.
    let host = host_memory(desc.engine_config(UsmKind::Device, api).max_size);
    let base = PoolBase::user(context, device, context.devices.iter().cloned(), desc, api);
    let raw = HostPool { user_context: Mutex::new(Rank::Leaf, Some(context.clone())), host, slabs: context.slabs.clone() };
    let pool = Pool::new(base, raw);
    context.pools.add_user(&pool);
    pool
}

/// Allocations of the pool, of every kind, handed out and not freed.
pub fn live_blocks(pool: &Pool) -> usize {
    pool.base.engine.made().map(|p| p.live_blocks()).sum()
}

impl RawPool<NativeCpu> for HostPool {
    /// Host memory, its slabs entered in the context's slab map. A pool of
    /// `urUSMPoolCreate` keeps each device's device memory apart; its host
    /// and shared memory serve every device.
    fn make_engine_pool(
        pool: &Pool,
        kind: UsmKind,
        context: Arc<Context>,
        config: PoolConfig,
        serving: Option<&Arc<Device>>,
    ) -> UrResult<Arc<engine::Pool>> {
        let config = engine_config(config, &pool.base.desc, pool.base.api);
        let (host, slabs) = (pool.raw.host.clone(), pool.raw.slabs.clone());
        Ok(SlabOwner::new_engine_pool(context.engine.dag().clone(), config, &pool.me, kind, serving, |owner| {
            Arc::new(PoolMemory { host, slabs, owner })
        }))
    }

    /// A pool the user gave up is nobody's current pool any more. Its
    /// allocations still live stay valid: the context keeps the pool until
    /// they are freed (and the pool no longer keeps the context).
    fn last_user_release(pool: &Pool) {
        let held = pool.raw.user_context.lock().take();
        if let Some(context) = pool.base.context() {
            context.pools.forget(pool);
            if live_blocks(pool) > 0 {
                if let Some(me) = pool.me.upgrade() {
                    context.raw.keep_until_freed(me);
                }
            }
        }
        drop(held);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Weak;

    fn usm_alloc(context: &Context, req: AllocRequest<'_, NativeCpu>) -> UrResult<*mut u8> {
        ContextHost::usm_alloc(context, req).map(|p| p as *mut u8)
    }

    fn usm_free(context: &Context, ptr: *mut u8) -> UrResult {
        ContextHost::usm_free(context, ptr as *mut c_void)
    }

    fn context() -> Arc<Context> {
        crate::context::new_context(crate::device::PlatformHost::new(Weak::new()).raw.devices.clone())
    }

    fn request(kind: UsmKind, size: usize, align: usize) -> AllocRequest<'static, NativeCpu> {
        from_pool(kind, size, align, None)
    }

    fn from_pool(kind: UsmKind, size: usize, align: usize, pool: Option<&Pool>) -> AllocRequest<'_, NativeCpu> {
        AllocRequest { kind, size, align, device: None, pool, hints: 0, host_flags: 0, device_flags: 0 }
    }

    #[test]
    fn interior_pointers_resolve_to_their_allocation() {
        let ctx = context();
        let a = usm_alloc(&ctx, request(UsmKind::Host, 100, 0)).unwrap() as usize;
        let b = usm_alloc(&ctx, request(UsmKind::Shared, 10, 4096)).unwrap() as usize;
        assert_eq!(b % 4096, 0);
        assert_eq!(a % DEFAULT_USM_ALIGNMENT, 0);
        assert_eq!(ctx.usm.find(a + 99).unwrap().base() as usize, a);
        assert!(ctx.usm.find(a + 100).is_none_or(|x| x.base() as usize != a), "one past the end is outside");
        assert_eq!(ctx.usm.find(b).unwrap().kind, UsmKind::Shared);
        assert!(ctx.usm.find(1).is_none());
        assert!(ctx.usm.find(a).unwrap().contains(a + 50, 50));
        assert!(!ctx.usm.find(a).unwrap().contains(a + 50, 51));
    }

    #[test]
    fn only_the_exact_base_frees() {
        let ctx = context();
        let a = usm_alloc(&ctx, request(UsmKind::Device, 64, 0)).unwrap();
        assert_eq!(usm_free(&ctx, a.wrapping_add(8)), Err(UR_RESULT_ERROR_INVALID_MEM_OBJECT));
        assert_eq!(usm_free(&ctx, a), Ok(()));
        assert_eq!(usm_free(&ctx, a), Err(UR_RESULT_ERROR_INVALID_MEM_OBJECT), "double free");
        assert_eq!(ctx.usm.len(), 0);
    }

    #[test]
    fn a_pending_holder_keeps_freed_memory_alive() {
        let ctx = context();
        let a = usm_alloc(&ctx, request(UsmKind::Device, 64, 0)).unwrap();
        let held = ctx.usm.find(a as usize).unwrap();
        usm_free(&ctx, a).unwrap();
        // SAFETY: `held` keeps the block alive after the free.
        unsafe { a.write_bytes(7, 64) };
        assert_eq!(Arc::strong_count(&held), 1);
    }

    #[test]
    fn bad_sizes_and_alignments_are_refused() {
        let ctx = context();
        assert_eq!(usm_alloc(&ctx, request(UsmKind::Host, 0, 0)), Err(UR_RESULT_ERROR_INVALID_USM_SIZE));
        assert_eq!(usm_alloc(&ctx, request(UsmKind::Host, usize::MAX, 0)), Err(UR_RESULT_ERROR_INVALID_USM_SIZE));
        assert_eq!(usm_alloc(&ctx, request(UsmKind::Host, 8, 3)), Err(UR_RESULT_ERROR_INVALID_VALUE));
    }

    #[test]
    fn pool_allocations_come_from_the_engine_zeroed_on_request() {
        let ctx = context();
        let desc = PoolDesc { flags: UR_USM_POOL_FLAG_ZERO_INITIALIZE_BLOCK.0, limits: None };
        let pool = crate::memory::create_pool(&ctx, None, desc, PoolApi::Classic);
        let req = from_pool(UsmKind::Host, 100, 4096, Some(&pool));
        let p = usm_alloc(&ctx, req).unwrap();
        assert_eq!(p as usize % 4096, 0);
        // SAFETY: 100 bytes were just allocated.
        assert!(unsafe { std::slice::from_raw_parts(p, 100) }.iter().all(|&b| b == 0));
        assert!(ctx.usm.find(p as usize).is_none(), "pool blocks are the engine's, not the registry's");
        let block = pool_block(&ctx, p as usize + 99).unwrap();
        assert!(Arc::ptr_eq(&block.pool, &pool) && block.base == p as usize && block.kind == UsmKind::Host);
        // SAFETY: the block is live and 100 bytes long.
        unsafe { p.write_bytes(0xee, 100) };
        assert_eq!(usm_free(&ctx, p.wrapping_add(8)), Err(UR_RESULT_ERROR_INVALID_MEM_OBJECT));
        assert_eq!(usm_free(&ctx, p), Ok(()));
        assert_eq!(usm_free(&ctx, p), Err(UR_RESULT_ERROR_INVALID_MEM_OBJECT), "double free");
        let again = usm_alloc(&ctx, from_pool(UsmKind::Host, 100, 0, Some(&pool)));
        let again = again.unwrap();
        // SAFETY: as above.
        assert!(unsafe { std::slice::from_raw_parts(again, 100) }.iter().all(|&b| b == 0), "zeroed again on reuse");
        usm_free(&ctx, again).unwrap();
    }
}
