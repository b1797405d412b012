//! What the engine needs from a backend: raw memory, in slabs.

use crate::abi::*;
use std::alloc::Layout;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering::*};

/// The backend has no memory left for this request.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct OutOfMemory;

/// The USM kind a pool serves; it picks the out-of-memory code.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum UsmKind {
    Host,
    Device,
    Shared,
}

impl UsmKind {
    pub fn from_ur(t: ur_usm_type_t) -> Option<Self> {
        match t {
            UR_USM_TYPE_HOST => Some(UsmKind::Host),
            UR_USM_TYPE_DEVICE => Some(UsmKind::Device),
            UR_USM_TYPE_SHARED => Some(UsmKind::Shared),
            _ => None,
        }
    }

    pub fn to_ur(self) -> ur_usm_type_t {
        match self {
            UsmKind::Host => UR_USM_TYPE_HOST,
            UsmKind::Device => UR_USM_TYPE_DEVICE,
            UsmKind::Shared => UR_USM_TYPE_SHARED,
        }
    }

    /// The UR code for running out of this kind of memory.
    pub fn out_of_memory(self) -> ur_result_t {
        match self {
            UsmKind::Host => UR_RESULT_ERROR_OUT_OF_HOST_MEMORY,
            UsmKind::Device | UsmKind::Shared => UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY,
        }
    }
}

/// Raw memory of one (context, device, USM kind), implemented by an adapter.
/// The engine calls it with its pool lock held, so it must not call back
/// into the same pool.
pub trait MemorySource: Send + Sync {
    /// Takes `size` bytes aligned to `align` (a power of two) from the backend.
    fn allocate(&self, size: usize, align: usize) -> Result<NonNull<u8>, OutOfMemory>;

    /// Gives back memory taken with [`allocate`](Self::allocate).
    ///
    /// # Safety
    /// `(ptr, size, align)` came from one `allocate` call and is released once.
    unsafe fn release(&self, ptr: NonNull<u8>, size: usize, align: usize);
}

/// Host memory from the global allocator, with an optional budget past which
/// it reports out of memory (to bound a context, and to test that path).
pub struct HostMemory {
    budget: usize,
    taken: AtomicUsize,
}

impl HostMemory {
    pub fn new() -> Self {
        Self::with_budget(usize::MAX)
    }

    pub fn with_budget(budget: usize) -> Self {
        HostMemory {
            budget,
            taken: AtomicUsize::new(0),
        }
    }

    /// Bytes currently taken from the global allocator.
    pub fn taken(&self) -> usize {
        self.taken.load(Acquire)
    }
}

impl Default for HostMemory {
    fn default() -> Self {
        Self::new()
    }
}

impl MemorySource for HostMemory {
    fn allocate(&self, size: usize, align: usize) -> Result<NonNull<u8>, OutOfMemory> {
        let layout = Layout::from_size_align(size.max(1), align).map_err(|_| OutOfMemory)?;
        let mut taken = self.taken.load(Relaxed);
        loop {
            let next = taken
                .checked_add(layout.size())
                .filter(|&n| n <= self.budget)
                .ok_or(OutOfMemory)?;
            match self
                .taken
                .compare_exchange_weak(taken, next, AcqRel, Relaxed)
            {
                Ok(_) => break,
                Err(now) => taken = now,
            }
        }
        // SAFETY: the layout has a non-zero size.
        match NonNull::new(unsafe { std::alloc::alloc(layout) }) {
            Some(p) => Ok(p),
            None => {
                self.taken.fetch_sub(layout.size(), AcqRel);
                Err(OutOfMemory)
            }
        }
    }

    unsafe fn release(&self, ptr: NonNull<u8>, size: usize, align: usize) {
        let layout = Layout::from_size_align_unchecked(size.max(1), align);
        self.taken.fetch_sub(layout.size(), AcqRel);
        // SAFETY: the caller passes back exactly what `allocate` returned, with its layout.
        std::alloc::dealloc(ptr.as_ptr(), layout);
    }
}
