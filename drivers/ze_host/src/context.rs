//! Contexts and the memory they own. Every allocation is host memory; the
//! context remembers each one (base, size, kind) so that frees, properties
//! and address ranges are answered exactly, and frees what is left when it
//! is destroyed.

use level_zero_sys::*;
use std::alloc::Layout;
use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

pub struct Allocation {
    layout: Layout,
    pub kind: ze_memory_type_t,
    /// The device of device and shared allocations (null for host ones).
    pub device: ze_device_handle_t,
    pub id: u64,
}

pub struct Context {
    /// Live allocations by base address.
    allocations: Mutex<BTreeMap<usize, Allocation>>,
}

// SAFETY: the device handle inside an Allocation names the driver's static
// device; it is never dereferenced through this struct.
unsafe impl Send for Allocation {}

/// Live contexts, by address: a handle is checked here before it is used,
/// so a stale or foreign handle is an error, not a crash.
static CONTEXTS: Mutex<Option<HashSet<usize>>> = Mutex::new(None);
static NEXT_ALLOCATION_ID: AtomicU64 = AtomicU64::new(1);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic never crosses the boundary, but a poisoned lock must not turn
    // every later call into one.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Context {
    pub fn create() -> ze_context_handle_t {
        let ptr = Box::into_raw(Box::new(Context { allocations: Mutex::new(BTreeMap::new()) }));
        lock(&CONTEXTS).get_or_insert_with(HashSet::new).insert(ptr as usize);
        ptr as ze_context_handle_t
    }

    /// Runs `f` on the context behind `h` while it is known to be live.
    pub fn with<R>(h: ze_context_handle_t, f: impl FnOnce(&Context) -> R) -> Result<R, ze_result_t> {
        let live = lock(&CONTEXTS);
        if h.is_null() || !live.as_ref().is_some_and(|s| s.contains(&(h as usize))) {
            return Err(ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
        }
        // SAFETY: the handle is in the live set, which holds exactly the
        // Boxes made by create and not yet destroyed; destroy takes the same
        // lock, so the context cannot go away while `f` runs.
        Ok(f(unsafe { &*(h as *const Context) }))
    }

    pub fn destroy(h: ze_context_handle_t) -> ze_result_t {
        let mut live = lock(&CONTEXTS);
        if h.is_null() || !live.as_mut().is_some_and(|s| s.remove(&(h as usize))) {
            return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        }
        drop(live);
        // SAFETY: the handle was live and is now out of the set, so this is
        // the only owner of the Box that create made.
        drop(unsafe { Box::from_raw(h as *mut Context) });
        ZE_RESULT_SUCCESS
    }

    pub fn allocate(
        &self,
        size: usize,
        alignment: usize,
        kind: ze_memory_type_t,
        device: ze_device_handle_t,
    ) -> Result<*mut u8, ze_result_t> {
        // Alignment 0 means "the driver's choice": a page, as a GPU driver
        // would give, which also keeps allocations apart.
        let align = if alignment == 0 { crate::driver::PAGE_SIZE as usize } else { alignment };
        let layout = Layout::from_size_align(size, align).map_err(|_| ZE_RESULT_ERROR_UNSUPPORTED_SIZE)?;
        // SAFETY: size is non-zero (checked by the caller) and the layout valid.
        let ptr = unsafe { std::alloc::alloc(layout) };
        if ptr.is_null() {
            return Err(ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY);
        }
        let id = NEXT_ALLOCATION_ID.fetch_add(1, Ordering::Relaxed);
        lock(&self.allocations).insert(ptr as usize, Allocation { layout, kind, device, id });
        Ok(ptr)
    }

    /// Frees the allocation starting exactly at `ptr`; anything else (an
    /// interior or foreign pointer, a second free) is an error.
    pub fn free(&self, ptr: *mut u8) -> ze_result_t {
        match lock(&self.allocations).remove(&(ptr as usize)) {
            // SAFETY: the entry was made by allocate with this layout and
            // has just been removed, so this is its only release.
            Some(a) => unsafe { std::alloc::dealloc(ptr, a.layout) },
            None => return ZE_RESULT_ERROR_INVALID_ARGUMENT,
        }
        ZE_RESULT_SUCCESS
    }

    /// The allocation containing `ptr`: (base, size, kind, device, id).
    pub fn find(&self, ptr: usize) -> Option<(usize, usize, ze_memory_type_t, ze_device_handle_t, u64)> {
        let allocations = lock(&self.allocations);
        let (&base, a) = allocations.range(..=ptr).next_back()?;
        (ptr < base + a.layout.size()).then_some((base, a.layout.size(), a.kind, a.device, a.id))
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        for (base, a) in std::mem::take(&mut *lock(&self.allocations)) {
            // SAFETY: each entry is a live allocation made with this layout.
            unsafe { std::alloc::dealloc(base as *mut u8, a.layout) };
        }
    }
}
