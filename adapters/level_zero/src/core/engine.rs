//! The Level Zero side of the shared async pool engine (`ur_core::engine`).
//!
//! The engine decides which freed block an asynchronous allocation may
//! take. From this adapter it needs raw memory ([`ZeMemory`], over the same
//! `zeMemAlloc*` calls as `urUSM*Alloc`), every command of a context
//! recorded in its graph (`Queue::submit` records each one), and word of
//! their completion, which comes from the commands' Level Zero events
//! through each queue's `engine::Tracker`: polled as commands are appended
//! and settled at host synchronisation points.

use super::device::Device;
use super::usm_pool::UsmPool;
use crate::driver::{check, ZeContext};
use crate::ze;
use level_zero_sys::*;
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::Arc;
use ur_core::engine::{self, MemorySource, OutOfMemory, UsmKind};

/// `size` bytes of `kind` memory aligned to `align` (0: the driver's
/// default) in `context`; device and shared memory on `device`.
pub fn raw_alloc(
    context: &ZeContext,
    kind: UsmKind,
    device: Option<&Device>,
    size: usize,
    align: usize,
) -> Result<NonNull<c_void>, ze_result_t> {
    let host_desc = ze_host_mem_alloc_desc_t { stype: ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, pNext: std::ptr::null(), flags: 0 };
    let device_desc =
        ze_device_mem_alloc_desc_t { stype: ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, pNext: std::ptr::null(), flags: 0, ordinal: 0 };
    let dev = device.map_or(std::ptr::null_mut(), |d| d.ze);
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: a live context, one of its devices (or none for host and
    // shared memory), valid descriptors and an out pointer we own.
    let r = unsafe {
        match kind {
            UsmKind::Host => ze!(zeMemAllocHost(context.0, &host_desc, size, align, &mut p)),
            UsmKind::Device => ze!(zeMemAllocDevice(context.0, &device_desc, size, align, dev, &mut p)),
            UsmKind::Shared => ze!(zeMemAllocShared(context.0, &device_desc, &host_desc, size, align, dev, &mut p)),
        }
    };
    check(r)?;
    NonNull::new(p).ok_or(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)
}

/// Gives memory from [`raw_alloc`] back.
///
/// # Safety
/// `ptr` came from `raw_alloc` on `context`, is freed once, and no command
/// still uses it.
pub unsafe fn raw_free(context: &ZeContext, ptr: *mut c_void) {
    let r = ze!(zeMemFree(context.0, ptr));
    if r != ZE_RESULT_SUCCESS {
        ur_core::log::warning(&format!("zeMemFree failed: 0x{r:x}"));
    }
}

/// Whose an engine slab is: what any address inside pool memory reports.
pub type SlabOwner = ur_core::usm_pool::SlabOwner<UsmPool, Arc<Device>>;

/// The engine slabs of one context by address.
pub type SlabMap = engine::SlabMap<SlabOwner>;

/// Raw memory of one (context, device, USM kind) for engine pools; each
/// slab is entered in the context's [`SlabMap`]. It holds the Level Zero
/// context, so that slabs can go back after the UR context is gone.
pub struct ZeMemory {
    pub context: Arc<ZeContext>,
    pub slabs: Arc<SlabMap>,
    pub owner: SlabOwner,
}

impl MemorySource for ZeMemory {
    fn allocate(&self, size: usize, align: usize) -> Result<NonNull<u8>, OutOfMemory> {
        let o = &self.owner;
        let p = raw_alloc(&self.context, o.kind, o.device.as_deref(), size, align).map_err(|_| OutOfMemory)?;
        self.slabs.insert(p.as_ptr() as usize, size, o.clone());
        Ok(p.cast())
    }

    unsafe fn release(&self, ptr: NonNull<u8>, _size: usize, _align: usize) {
        self.slabs.remove(ptr.as_ptr() as usize);
        // SAFETY: the engine gives back a slab it took from `allocate`, once
        // no recorded command can still touch it.
        raw_free(&self.context, ptr.as_ptr().cast());
    }
}
