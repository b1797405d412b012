//! The test backend's engine memory: host memory from the global
//! allocator, each slab entered in its context's slab map, as a real
//! adapter's are, so that the core's async free finds the pool behind a
//! pointer the same way.

use super::objects::{TDevice, TPool};
use crate::engine::{MemorySource, OutOfMemory, SlabMap};
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;
use std::sync::Arc;

pub type TSlabOwner = crate::usm_pool::SlabOwner<TPool, Arc<TDevice>>;

pub struct HostSlabs {
    pub slabs: Arc<SlabMap<TSlabOwner>>,
    pub owner: TSlabOwner,
}

impl MemorySource for HostSlabs {
    fn allocate(&self, size: usize, align: usize) -> Result<NonNull<u8>, OutOfMemory> {
        let layout = Layout::from_size_align(size.max(1), align).map_err(|_| OutOfMemory)?;
        // SAFETY: the layout's size is not zero.
        let p = NonNull::new(unsafe { alloc_zeroed(layout) }).ok_or(OutOfMemory)?;
        self.slabs.insert(p.as_ptr() as usize, size, self.owner.clone());
        Ok(p)
    }

    unsafe fn release(&self, ptr: NonNull<u8>, size: usize, align: usize) {
        self.slabs.remove(ptr.as_ptr() as usize);
        // SAFETY: `allocate` took `ptr` with this layout (the engine gives
        // back each slab once, with the size and alignment it asked for).
        unsafe { dealloc(ptr.as_ptr(), Layout::from_size_align_unchecked(size.max(1), align)) }
    }
}
