//! USM on the host: every kind of allocation is host memory. A context keeps
//! its live allocations in an interval map, so that any pointer into one
//! (not only its base) finds it. Commands hold an `Arc` to the allocations
//! they touch, so a free while they are pending cannot release the memory
//! under them: it is released when the last of them finishes.

use super::context::Context;
use super::device::{Device, DEFAULT_USM_ALIGNMENT};
use super::refcount::{Counted, UserRefs};
use crate::DDI;
use std::alloc::Layout;
use std::collections::BTreeMap;
use std::ptr::NonNull;
use std::sync::{Arc, RwLock, Weak};
use ur_core::handle::{HandleHeader, ObjectKind, UrObject};
use ur_core::*;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum UsmKind {
    Host,
    Device,
    Shared,
}

impl UsmKind {
    pub fn as_ur(self) -> ur_usm_type_t {
        match self {
            UsmKind::Host => UR_USM_TYPE_HOST,
            UsmKind::Device => UR_USM_TYPE_DEVICE,
            UsmKind::Shared => UR_USM_TYPE_SHARED,
        }
    }
}

/// One live USM allocation. Dropping it returns the memory.
pub struct Allocation {
    base: NonNull<u8>,
    layout: Layout,
    /// The size the user asked for (the layout may be larger).
    size: usize,
    pub kind: UsmKind,
    /// `None` for host allocations, which belong to no device.
    pub device: Option<Arc<Device>>,
    /// Weak: a pool's reference count is its users' business.
    pub pool: Option<Weak<Pool>>,
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

    pub fn pool_handle(&self) -> ur_usm_pool_handle_t {
        match &self.pool {
            Some(p) if p.strong_count() > 0 => p.as_ptr() as ur_usm_pool_handle_t,
            _ => std::ptr::null_mut(),
        }
    }
}

impl Drop for Allocation {
    fn drop(&mut self) {
        // SAFETY: allocated in `allocate` with exactly this layout.
        unsafe { std::alloc::dealloc(self.base.as_ptr(), self.layout) };
    }
}

/// The live allocations of one context, keyed by base address.
#[derive(Default)]
pub struct UsmRegistry {
    live: RwLock<BTreeMap<usize, Arc<Allocation>>>,
}

impl UsmRegistry {
    fn insert(&self, alloc: Arc<Allocation>) {
        let base = alloc.base() as usize;
        self.live.write().unwrap_or_else(|e| e.into_inner()).insert(base, alloc);
    }

    /// The allocation that holds `addr`, wherever inside it `addr` points.
    pub fn find(&self, addr: usize) -> Option<Arc<Allocation>> {
        let live = self.live.read().unwrap_or_else(|e| e.into_inner());
        let (_, alloc) = live.range(..=addr).next_back()?;
        alloc.contains(addr, 1).then(|| alloc.clone())
    }

    /// Takes the allocation based exactly at `base` out of the map. An
    /// interior, foreign or already freed pointer is `INVALID_MEM_OBJECT`.
    pub fn remove(&self, base: usize) -> UrResult<Arc<Allocation>> {
        self.live.write().unwrap_or_else(|e| e.into_inner()).remove(&base).ok_or(UR_RESULT_ERROR_INVALID_MEM_OBJECT)
    }

    /// How many allocations are live.
    pub fn len(&self) -> usize {
        self.live.read().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What `urUSM{Host,Device,Shared}Alloc` asks for, after the C layer read it.
pub struct AllocRequest<'a> {
    pub kind: UsmKind,
    pub size: usize,
    /// 0 for the default alignment, else a power of two.
    pub align: usize,
    pub device: Option<&'a Arc<Device>>,
    pub pool: Option<&'a Arc<Pool>>,
}

fn page_size() -> usize {
    // SAFETY: `sysconf` only reads a system constant.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 {
        n as usize
    } else {
        4096
    }
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
        let mut align = req.align.max(DEFAULT_USM_ALIGNMENT);
        let mut bytes = req.size;
        let mut zeroed = false;
        if let Some(pool) = req.pool {
            // UR keeps allocations of different pools off each other's pages.
            let page = page_size();
            align = align.max(page);
            bytes = bytes.checked_next_multiple_of(page).ok_or(UR_RESULT_ERROR_INVALID_USM_SIZE)?;
            zeroed = pool.zero_initialize();
        }
        let layout = Layout::from_size_align(bytes, align).map_err(|_| UR_RESULT_ERROR_INVALID_USM_SIZE)?;
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe {
            if zeroed {
                std::alloc::alloc_zeroed(layout)
            } else {
                std::alloc::alloc(layout)
            }
        };
        let base = NonNull::new(raw).ok_or(UR_RESULT_ERROR_OUT_OF_HOST_MEMORY)?;
        self.usm.insert(Arc::new(Allocation {
            base,
            layout,
            size: req.size,
            kind: req.kind,
            device: req.device.cloned(),
            pool: req.pool.map(Arc::downgrade),
        }));
        Ok(base.as_ptr())
    }

    /// `urUSMFree`: forgets the allocation now; its memory goes once no
    /// pending command holds it.
    pub fn usm_free(&self, ptr: *mut u8) -> UrResult {
        self.usm.remove(ptr as usize).map(drop)
    }
}

/// Sizes from a `ur_usm_pool_limits_desc_t`.
#[derive(Clone, Copy, Debug, Default)]
pub struct PoolLimits {
    pub max_poolable_size: usize,
    pub min_driver_alloc_size: usize,
}

/// A USM pool (`urUSMPoolCreate`). Allocations made through it are tagged
/// with it; the async pool engine extends it with reuse.
#[repr(C)]
pub struct Pool {
    header: HandleHeader,
    pub refs: UserRefs,
    pub context: Arc<Context>,
    pub flags: ur_usm_pool_flags_t,
    pub limits: Option<PoolLimits>,
}

const _: () = assert!(core::mem::offset_of!(Pool, header) == 0);

impl Counted for Pool {
    fn user_refs(&self) -> &UserRefs {
        &self.refs
    }
}

// SAFETY: `Pool` is `#[repr(C)]` with its header at offset 0.
unsafe impl UrObject for Pool {
    const KIND: ObjectKind = ObjectKind::UsmPool;
    type Handle = ur_usm_pool_handle_t_;
}

impl Pool {
    pub fn new(context: Arc<Context>, flags: ur_usm_pool_flags_t, limits: Option<PoolLimits>) -> Arc<Pool> {
        Arc::new(Pool {
            header: HandleHeader::new(&DDI, ObjectKind::UsmPool),
            refs: UserRefs::one(),
            context,
            flags,
            limits,
        })
    }

    pub fn zero_initialize(&self) -> bool {
        self.flags & UR_USM_POOL_FLAG_ZERO_INITIALIZE_BLOCK.0 != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::platform::Platform;

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
    fn pool_allocations_are_page_isolated_and_zeroed_on_request() {
        let ctx = context();
        let pool = Pool::new(ctx.clone(), UR_USM_POOL_FLAG_ZERO_INITIALIZE_BLOCK.0, None);
        let req = AllocRequest { kind: UsmKind::Host, size: 100, align: 0, device: None, pool: Some(&pool) };
        let p = ctx.usm_alloc(req).unwrap();
        assert_eq!(p as usize % page_size(), 0);
        // SAFETY: 100 bytes were just allocated.
        assert!(unsafe { std::slice::from_raw_parts(p, 100) }.iter().all(|&b| b == 0));
        assert_eq!(ctx.usm.find(p as usize).unwrap().pool_handle(), Arc::as_ptr(&pool) as ur_usm_pool_handle_t);
        drop(pool);
        assert!(ctx.usm.find(p as usize).unwrap().pool_handle().is_null());
    }
}
