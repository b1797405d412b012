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

use super::context::Context;
use super::device::{Device, DEFAULT_USM_ALIGNMENT};
use super::usm_pool::Pool;
use std::alloc::Layout;
use std::ptr::NonNull;
use std::sync::Arc;
use ur_core::engine::wait_reported;
use ur_core::usm_registry::Registered;
pub use ur_core::engine::UsmKind;
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

/// What `urUSM{Host,Device,Shared}Alloc` asks for, after the C layer read it.
pub struct AllocRequest<'a> {
    pub kind: UsmKind,
    pub size: usize,
    /// 0 for the default alignment, else a power of two.
    pub align: usize,
    pub device: Option<&'a Arc<Device>>,
    pub pool: Option<&'a Arc<Pool>>,
}

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

impl Context {
    /// Allocates USM memory in this context and records it.
    pub fn usm_alloc(&self, req: AllocRequest) -> UrResult<*mut u8> {
        if req.size == 0 {
            return Err(UR_RESULT_ERROR_INVALID_USM_SIZE);
        }
        let max = self.devices.iter().map(|d| d.max_alloc_size()).min().unwrap_or(0);
        if req.size as u64 > max {
            return Err(UR_RESULT_ERROR_INVALID_USM_SIZE);
        }
        if req.align != 0 && !req.align.is_power_of_two() {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        if let Some(pool) = req.pool {
            return self.pool_alloc(pool, req.kind, req.device.map(|d| &**d), req.size, req.align);
        }
        let align = req.align.max(DEFAULT_USM_ALIGNMENT);
        let layout = Layout::from_size_align(req.size, align).map_err(|_| UR_RESULT_ERROR_INVALID_USM_SIZE)?;
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { std::alloc::alloc(layout) };
        let base = NonNull::new(raw).ok_or(UR_RESULT_ERROR_OUT_OF_HOST_MEMORY)?;
        self.usm.insert(Arc::new(Allocation {
            base,
            layout,
            size: req.size,
            kind: req.kind,
            device: req.device.cloned(),
        }));
        Ok(base.as_ptr())
    }

    /// A blocking allocation from `pool`, made on the host lane: when the
    /// engine hands out a block whose earlier owner's free is still pending,
    /// this waits for that free.
    fn pool_alloc(&self, pool: &Pool, kind: UsmKind, device: Option<&Device>, size: usize, align: usize) -> UrResult<*mut u8> {
        let engine = pool.engine_pool(kind, device)?;
        let a = engine.alloc(&self.host_lane, &[], size, align, false)?;
        if let Some(stamp) = a.stamp {
            for &dep in a.deps.as_slice() {
                wait_reported(&self.dag, dep);
            }
            if a.zero {
                // SAFETY: the block is ours, `a.size` bytes, and nothing else uses it yet.
                unsafe { a.ptr.as_ptr().write_bytes(0, a.size) };
            }
            self.dag.complete(stamp);
        }
        Ok(a.ptr.as_ptr())
    }

    /// The live block of pool memory that holds `addr`, if any.
    pub fn pool_block(&self, addr: usize) -> Option<PoolBlock> {
        let owner = self.slabs.owner_of(addr)?;
        let (base, size) = owner.live_block(addr)?;
        Some(PoolBlock { pool: owner.usm_pool.upgrade()?, kind: owner.kind, device: owner.device, base, size })
    }

    /// `urUSMFree`. A plain allocation is forgotten now; its memory goes
    /// once no pending command holds it. A pool block goes back to its pool
    /// once every command enqueued so far on the context's queues has
    /// finished (any of them may use it). Anything but the base of a live
    /// allocation is `INVALID_MEM_OBJECT`.
    pub fn usm_free(&self, ptr: *mut u8) -> UrResult {
        let addr = ptr as usize;
        if let Ok(alloc) = self.usm.remove(addr) {
            drop(alloc);
            return Ok(());
        }
        let settle = || {
            self.wait_all_queues();
            Ok(())
        };
        self.slabs.free_blocking(addr, settle, |s| wait_reported(&self.dag, s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::platform::Platform;
    use std::sync::Weak;
    use ur_core::usm_async::{PoolApi, PoolDesc};

    fn context() -> Arc<Context> {
        Context::new(Platform::new(Weak::new()).devices.clone())
    }

    fn request(kind: UsmKind, size: usize, align: usize) -> AllocRequest<'static> {
        AllocRequest { kind, size, align, device: None, pool: None }
    }

    #[test]
    fn interior_pointers_resolve_to_their_allocation() {
        let ctx = context();
        let a = ctx.usm_alloc(request(UsmKind::Host, 100, 0)).unwrap() as usize;
        let b = ctx.usm_alloc(request(UsmKind::Shared, 10, 4096)).unwrap() as usize;
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
        let a = ctx.usm_alloc(request(UsmKind::Device, 64, 0)).unwrap();
        assert_eq!(ctx.usm_free(a.wrapping_add(8)), Err(UR_RESULT_ERROR_INVALID_MEM_OBJECT));
        assert_eq!(ctx.usm_free(a), Ok(()));
        assert_eq!(ctx.usm_free(a), Err(UR_RESULT_ERROR_INVALID_MEM_OBJECT), "double free");
        assert_eq!(ctx.usm.len(), 0);
    }

    #[test]
    fn a_pending_holder_keeps_freed_memory_alive() {
        let ctx = context();
        let a = ctx.usm_alloc(request(UsmKind::Device, 64, 0)).unwrap();
        let held = ctx.usm.find(a as usize).unwrap();
        ctx.usm_free(a).unwrap();
        // SAFETY: `held` keeps the block alive after the free.
        unsafe { a.write_bytes(7, 64) };
        assert_eq!(Arc::strong_count(&held), 1);
    }

    #[test]
    fn bad_sizes_and_alignments_are_refused() {
        let ctx = context();
        assert_eq!(ctx.usm_alloc(request(UsmKind::Host, 0, 0)), Err(UR_RESULT_ERROR_INVALID_USM_SIZE));
        assert_eq!(ctx.usm_alloc(request(UsmKind::Host, usize::MAX, 0)), Err(UR_RESULT_ERROR_INVALID_USM_SIZE));
        assert_eq!(ctx.usm_alloc(request(UsmKind::Host, 8, 3)), Err(UR_RESULT_ERROR_INVALID_VALUE));
    }

    #[test]
    fn pool_allocations_come_from_the_engine_zeroed_on_request() {
        let ctx = context();
        let desc = PoolDesc { flags: UR_USM_POOL_FLAG_ZERO_INITIALIZE_BLOCK.0, limits: None };
        let pool = Pool::create(&ctx, None, desc, PoolApi::Classic);
        let req = AllocRequest { kind: UsmKind::Host, size: 100, align: 4096, device: None, pool: Some(&pool) };
        let p = ctx.usm_alloc(req).unwrap();
        assert_eq!(p as usize % 4096, 0);
        // SAFETY: 100 bytes were just allocated.
        assert!(unsafe { std::slice::from_raw_parts(p, 100) }.iter().all(|&b| b == 0));
        assert!(ctx.usm.find(p as usize).is_none(), "pool blocks are the engine's, not the registry's");
        let block = ctx.pool_block(p as usize + 99).unwrap();
        assert!(Arc::ptr_eq(&block.pool, &pool) && block.base == p as usize && block.kind == UsmKind::Host);
        // SAFETY: the block is live and 100 bytes long.
        unsafe { p.write_bytes(0xee, 100) };
        assert_eq!(ctx.usm_free(p.wrapping_add(8)), Err(UR_RESULT_ERROR_INVALID_MEM_OBJECT));
        assert_eq!(ctx.usm_free(p), Ok(()));
        assert_eq!(ctx.usm_free(p), Err(UR_RESULT_ERROR_INVALID_MEM_OBJECT), "double free");
        let again =
            ctx.usm_alloc(AllocRequest { kind: UsmKind::Host, size: 100, align: 0, device: None, pool: Some(&pool) });
        let again = again.unwrap();
        // SAFETY: as above.
        assert!(unsafe { std::slice::from_raw_parts(again, 100) }.iter().all(|&b| b == 0), "zeroed again on reuse");
        ctx.usm_free(again).unwrap();
    }
}
