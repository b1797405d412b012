//! The engine's memory source: the CUDA side of the shared async pool
//! engine (`ur_core::engine`), raw memory for its pools.
//!
//! The engine decides which freed block an asynchronous allocation may take;
//! it needs raw memory ([`CudaMemory`]), every command of a context recorded
//! in its graph, and word of their completion. Recording starts the first
//! time a context uses an engine pool: commands enqueued before that cannot
//! touch engine memory, so the native-pool path pays nothing until then.

use super::pool::UsmPool;
use super::vmm;
use super::UsmKind;
use crate::device::Device;
use crate::driver;
use std::ptr::NonNull;
use std::sync::Arc;
use ur_core::engine::{self, MemorySource, OutOfMemory, VirtualMemory};

/// Whose an engine slab or reserved range is: what any address inside
/// engine memory reports, so that blocks need no entry of their own in the
/// context's allocation registry (which threads on different queues would
/// all write).
pub type SlabOwner = ur_core::usm_pool::SlabOwner<UsmPool, Arc<Device>, UsmKind>;

/// The engine slabs and ranges of one context by address.
pub type SlabMap = engine::SlabMap<SlabOwner>;

/// Raw memory of one (device, USM kind) for engine pools. Device memory
/// comes in granules of address ranges where the GPU has virtual memory
/// management (`vmm.rs`), else in slabs from `cuMemAlloc`. Every slab and
/// range is entered in the context's [`SlabMap`] while the pool has it.
pub struct CudaMemory {
    pub device: Arc<Device>,
    pub kind: UsmKind,
    pub slabs: Arc<SlabMap>,
    pub owner: SlabOwner,
    /// The GPUs a granule is opened to: the device, then every other device
    /// of the context. Empty where some device of the context cannot reach
    /// this one's memory: granules would shut it out even of copies, so
    /// slabs come from `cuMemAlloc`, which the driver copies between GPUs
    /// through the host when it must.
    readers: Vec<driver::CUdevice>,
}

impl CudaMemory {
    /// Raw `kind` memory of `device` for a pool of a context of `devices`.
    pub fn new(device: Arc<Device>, devices: &[Arc<Device>], kind: UsmKind, slabs: Arc<SlabMap>, owner: SlabOwner) -> Self {
        let mut readers = vec![device.raw.cu];
        for other in devices.iter().filter(|d| d.raw.cu != device.raw.cu) {
            match driver::can_access_peer(other.raw.cu, device.raw.cu) {
                Ok(true) => readers.push(other.raw.cu),
                _ => {
                    readers.clear();
                    break;
                }
            }
        }
        CudaMemory { device, kind, slabs, owner, readers }
    }

    /// The largest alignment the driver gives without asking.
    fn natural_align(&self) -> usize {
        match self.kind {
            UsmKind::Host => 4096,
            UsmKind::Device | UsmKind::Shared => 256,
        }
    }
}

impl MemorySource for CudaMemory {
    fn allocate(&self, size: usize, align: usize) -> Result<NonNull<u8>, OutOfMemory> {
        if align > self.natural_align() || self.device.raw.activate().is_err() {
            return Err(OutOfMemory);
        }
        let p = match self.kind {
            UsmKind::Device => driver::mem_alloc(size).map_err(|_| OutOfMemory)? as usize,
            UsmKind::Shared => {
                // Never ask for more managed memory than the GPU has free.
                let (free, _) = driver::mem_get_info().map_err(|_| OutOfMemory)?;
                if size > free {
                    return Err(OutOfMemory);
                }
                driver::mem_alloc_managed(size).map_err(|_| OutOfMemory)? as usize
            }
            UsmKind::Host => driver::mem_host_alloc(size).map_err(|_| OutOfMemory)? as usize,
        };
        let p = NonNull::new(p as *mut u8).ok_or(OutOfMemory)?;
        self.slabs.insert(p.as_ptr() as usize, size, self.owner.clone());
        Ok(p)
    }

    unsafe fn release(&self, ptr: NonNull<u8>, _size: usize, _align: usize) {
        self.slabs.remove(ptr.as_ptr() as usize);
        if self.device.raw.activate().is_err() {
            return;
        }
        // SAFETY: the engine gives back a slab it took from `allocate` once no
        // recorded command can still touch it.
        let _ = match self.kind {
            UsmKind::Host => driver::mem_free_host(ptr.as_ptr().cast()),
            UsmKind::Device | UsmKind::Shared => driver::mem_free(ptr.as_ptr() as u64),
        };
    }

    fn virtual_memory(&self) -> Option<&dyn VirtualMemory> {
        (self.kind == UsmKind::Device && !self.readers.is_empty() && vmm::granule(self.device.raw.cu).is_some())
            .then_some(self)
    }
}

/// Device memory in granules (`virtual_memory` offers it for device memory
/// only, where the GPU supports it).
impl VirtualMemory for CudaMemory {
    fn granule(&self) -> usize {
        vmm::granule(self.device.raw.cu).unwrap_or(0)
    }

    fn reserve(&self, size: usize) -> Result<NonNull<u8>, OutOfMemory> {
        self.device.raw.activate().map_err(|_| OutOfMemory)?;
        let p = vmm::reserve(size, self.granule()).map_err(|_| OutOfMemory)?;
        let p = NonNull::new(p as usize as *mut u8).ok_or(OutOfMemory)?;
        self.slabs.insert(p.as_ptr() as usize, size, self.owner.clone());
        Ok(p)
    }

    unsafe fn commit(&self, addr: NonNull<u8>, len: usize) -> Result<(), OutOfMemory> {
        self.device.raw.activate().map_err(|_| OutOfMemory)?;
        // SAFETY: the engine commits whole granules of a reservation of ours, none mapped.
        vmm::commit(self.device.raw.cu, &self.readers, addr.as_ptr() as usize as u64, len, self.granule()).map_err(|_| OutOfMemory)
    }

    unsafe fn decommit(&self, addr: NonNull<u8>, len: usize) {
        if self.device.raw.activate().is_ok() {
            // SAFETY: the engine decommits granules it committed, once no
            // command can touch them (their frees have completed).
            vmm::decommit(addr.as_ptr() as usize as u64, len, self.granule());
        }
    }

    unsafe fn unreserve(&self, addr: NonNull<u8>, size: usize) {
        self.slabs.remove(addr.as_ptr() as usize);
        if self.device.raw.activate().is_ok() {
            // SAFETY: a reservation of ours with nothing mapped in it.
            vmm::unreserve(addr.as_ptr() as usize as u64, size);
        }
    }
}
