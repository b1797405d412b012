//! The CUDA side of the shared async pool engine (`ur_core::engine`).
//!
//! The engine decides which freed block an asynchronous allocation may take;
//! it needs raw memory ([`CudaMemory`]), every command of a context recorded
//! in its graph, and word of their completion. Recording starts the first
//! time a context uses an engine pool: commands enqueued before that cannot
//! touch engine memory, so the native-pool path pays nothing until then.
//!
//! Completion comes from CUDA events ([`Trackers`], over the core's
//! `engine::Tracker`): on an in-order queue a stream event recorded after
//! command `s` completes every command up to `s`, so a queue records one
//! every `engine::completion::TRACK_EVERY` commands (user events count too);
//! on an out-of-order queue each command gets its own. When the engine
//! makes an allocation wait for a command of another queue (a pending free),
//! the adapter waits on an event covering that command, recording one if
//! none exists yet.

use super::device::Device;
use super::usm::UsmKind;
use super::usm_pool::UsmPool;
use crate::driver::{self, CUstream, CuEvent};
use std::ptr::NonNull;
use std::sync::Arc;
use super::vmm;
use ur_core::engine::{
    self, Completion, Cover, Lane, MemorySource, OutOfMemory, Progress, Seq, Stamp, Tracker, VirtualMemory,
};

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
        let mut readers = vec![device.cu];
        for other in devices.iter().filter(|d| d.cu != device.cu) {
            match driver::can_access_peer(other.cu, device.cu) {
                Ok(true) => readers.push(other.cu),
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
        if align > self.natural_align() || self.device.activate().is_err() {
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
        if self.device.activate().is_err() {
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
        (self.kind == UsmKind::Device && !self.readers.is_empty() && vmm::granule(self.device.cu).is_some())
            .then_some(self)
    }
}

/// Device memory in granules (`virtual_memory` offers it for device memory
/// only, where the GPU supports it).
impl VirtualMemory for CudaMemory {
    fn granule(&self) -> usize {
        vmm::granule(self.device.cu).unwrap_or(0)
    }

    fn reserve(&self, size: usize) -> Result<NonNull<u8>, OutOfMemory> {
        self.device.activate().map_err(|_| OutOfMemory)?;
        let p = vmm::reserve(size, self.granule()).map_err(|_| OutOfMemory)?;
        let p = NonNull::new(p as usize as *mut u8).ok_or(OutOfMemory)?;
        self.slabs.insert(p.as_ptr() as usize, size, self.owner.clone());
        Ok(p)
    }

    unsafe fn commit(&self, addr: NonNull<u8>, len: usize) -> Result<(), OutOfMemory> {
        self.device.activate().map_err(|_| OutOfMemory)?;
        // SAFETY: the engine commits whole granules of a reservation of ours, none mapped.
        vmm::commit(self.device.cu, &self.readers, addr.as_ptr() as usize as u64, len, self.granule()).map_err(|_| OutOfMemory)
    }

    unsafe fn decommit(&self, addr: NonNull<u8>, len: usize) {
        if self.device.activate().is_ok() {
            // SAFETY: the engine decommits granules it committed, once no
            // command can touch them (their frees have completed).
            vmm::decommit(addr.as_ptr() as usize as u64, len, self.granule());
        }
    }

    unsafe fn unreserve(&self, addr: NonNull<u8>, size: usize) {
        self.slabs.remove(addr.as_ptr() as usize);
        if self.device.activate().is_ok() {
            // SAFETY: a reservation of ours with nothing mapped in it.
            vmm::unreserve(addr.as_ptr() as usize as u64, size);
        }
    }
}

impl UsmKind {
    pub fn engine_kind(self) -> engine::UsmKind {
        match self {
            UsmKind::Host => engine::UsmKind::Host,
            UsmKind::Device => engine::UsmKind::Device,
            UsmKind::Shared => engine::UsmKind::Shared,
        }
    }
}

impl Completion for CuEvent {
    fn poll(&self) -> Progress {
        // An event the driver cannot query is looked at again later.
        match self.is_complete() {
            Ok(true) => Progress::Complete,
            _ => Progress::Pending,
        }
    }

    fn wait(&self) {
        let _ = self.synchronize();
    }
}

/// One queue's lane and the CUDA events that tell the engine how far it has
/// completed, oldest first (the core's `Tracker`; events are made only
/// when one is wanted, since each costs a driver call).
pub struct Trackers(Tracker<Arc<CuEvent>>);

impl Trackers {
    pub fn new(lane: Arc<Lane>) -> Self {
        Trackers(Tracker::new(lane))
    }

    pub fn lane(&self) -> &Arc<Lane> {
        self.0.lane()
    }

    /// Whether a command just recorded needs its own event to report its
    /// completion.
    pub fn wants_event(&mut self) -> bool {
        self.0.wants_completion()
    }

    /// Keeps `event`, recorded after command `seq`, to report it complete.
    pub fn push(&mut self, seq: Seq, event: Arc<CuEvent>) {
        self.0.push(seq, event);
    }

    /// Reports tracked commands whose events have fired. Settled events go
    /// to `recycle`. On an in-order lane the newest fired event settles all
    /// older ones.
    pub fn poll(&mut self, recycle: impl FnMut(Arc<CuEvent>)) {
        self.0.poll(recycle);
    }

    /// Whether enough events have piled up to be worth a poll.
    pub fn due(&self) -> bool {
        self.0.due()
    }

    /// Every command up to `last` has completed (the host synchronised
    /// after reading the lane's tail).
    pub fn complete_upto(&mut self, last: Seq) {
        self.0.complete_upto(last);
    }

    /// An event whose completion implies that of command `seq`, or `None`
    /// when the command has completed. On an in-order lane without one, a
    /// new event is recorded on `stream` now: `seq`'s work is already on the
    /// stream (the caller saw the queue publish it). It is filed under
    /// `seq`, not the lane's tail, whose work may still be being enqueued.
    pub fn event_covering(
        &mut self,
        seq: Seq,
        stream: CUstream,
        fresh: impl FnOnce() -> Option<CuEvent>,
    ) -> Option<Arc<CuEvent>> {
        if seq == 0 {
            return None;
        }
        match self.0.cover(seq) {
            Some(Cover::By(e)) => Some(e.clone()),
            Some(_) => None,
            None if self.0.lane().is_in_order() => {
                let event = Arc::new(fresh()?);
                event.record(stream).ok()?;
                self.0.push(seq, event.clone());
                Some(event)
            }
            None => None,
        }
    }
}

/// Converts a wait list's stamps (events recorded before tracking began have
/// none and are left out: they cannot order engine memory).
pub fn stamps_of(events: &[&super::event::Event]) -> Vec<Stamp> {
    events.iter().filter_map(|e| e.stamp).collect()
}
