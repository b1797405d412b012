//! The OpenCL side of the shared async pool engine (`ur_core::engine`).
//!
//! The engine decides which freed block an asynchronous allocation may take.
//! From this adapter it needs raw memory ([`ClMemory`], over the same Intel
//! USM or SVM calls as `urUSM*Alloc`), every command of a context recorded
//! in its graph (`Queue::submit` records each one), and word of their
//! completion, which comes from the commands' `cl_event`s ([`Trackers`]):
//! polled now and then as commands are submitted, and settled at host
//! synchronisation points (`urQueueFinish`, `urEventWait`). Completion is
//! never reported from a runtime callback thread, so the engine's releases
//! (blocking frees among them) always run on a user thread.
//!
//! OpenCL is asked for the events of only some commands ([`Trackers`]);
//! where an event of the newest command is needed and it has none
//! (`UR_QUEUE_INFO_EMPTY`, the engine's extra dependencies, a released
//! queue), a marker is enqueued for it, so that those are still answered
//! without a host wait.

use super::device::{Device, UsmPath};
use super::platform::Platform;
use super::usm::UsmPool;
use crate::cl::call;
use crate::conv;
use cl3::ext as sys;
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::Arc;
use sys::{cl_event, cl_int};
use ur_core::engine::{self, Completion, Cover, Lane, MemorySource, OutOfMemory, Progress, Seq, Tracker};
use ur_core::*;

/// The runtime allocation entry points of one context, shared by
/// `urUSM*Alloc` and the engine's slabs.
#[derive(Clone, Copy)]
pub struct RawUsm {
    pub cl: sys::cl_context,
    pub platform: &'static Platform,
    pub path: UsmPath,
    /// SVM path: host and shared memory may carry `CL_MEM_SVM_ATOMICS`.
    pub svm_atomics: bool,
}

// SAFETY: OpenCL contexts are thread-safe; the rest is plain data.
unsafe impl Send for RawUsm {}
unsafe impl Sync for RawUsm {}

impl RawUsm {
    /// `size` bytes of `kind` memory aligned to `align` (0: the runtime's
    /// default), with Intel allocation properties `flags`; `None` when the
    /// runtime refuses (`Some(error)` for an error other than exhaustion).
    pub fn alloc(
        &self,
        kind: ur_usm_type_t,
        device: Option<&Device>,
        size: usize,
        align: u32,
        flags: sys::cl_bitfield,
    ) -> Result<NonNull<c_void>, cl_int> {
        let ptr = match self.path {
            UsmPath::Intel => {
                let usm = self.platform.intel_usm.as_ref().ok_or(sys::CL_INVALID_OPERATION)?;
                let props: [sys::cl_mem_properties_intel; 3] = [sys::CL_MEM_ALLOC_FLAGS_INTEL, flags, 0];
                let props_ptr = if flags != 0 { props.as_ptr() } else { std::ptr::null() };
                let mut err: cl_int = sys::CL_SUCCESS;
                // SAFETY: entry points of this context's platform, called with
                // a live context, a device of it, a zero-terminated property
                // list and an error out-pointer we own.
                let p = unsafe {
                    match (kind, device) {
                        (UR_USM_TYPE_HOST, _) => (usm.host_alloc)(self.cl, props_ptr, size, align, &mut err),
                        (UR_USM_TYPE_DEVICE, Some(d)) => {
                            (usm.device_alloc)(self.cl, d.id, props_ptr, size, align, &mut err)
                        }
                        (_, d) => {
                            let id = d.map_or(std::ptr::null_mut(), |d| d.id);
                            (usm.shared_alloc)(self.cl, id, props_ptr, size, align, &mut err)
                        }
                    }
                };
                if p.is_null() && err == sys::CL_SUCCESS {
                    err = sys::CL_OUT_OF_RESOURCES;
                }
                NonNull::new(p).ok_or(err)?
            }
            UsmPath::Svm => {
                let mut svm_flags = sys::CL_MEM_READ_WRITE;
                if kind != UR_USM_TYPE_DEVICE {
                    // Host-visible at all times, without map/unmap.
                    svm_flags |= sys::CL_MEM_SVM_FINE_GRAIN_BUFFER;
                    if self.svm_atomics {
                        svm_flags |= sys::CL_MEM_SVM_ATOMICS;
                    }
                }
                // SAFETY: a live context and flags OpenCL defines for clSVMAlloc.
                let p = unsafe { cl3::memory::svm_alloc(self.cl, svm_flags, size, align) }
                    .map_err(|_| sys::CL_OUT_OF_RESOURCES)?;
                NonNull::new(p).ok_or(sys::CL_OUT_OF_RESOURCES)?
            }
            UsmPath::None => return Err(sys::CL_INVALID_OPERATION),
        };
        Ok(ptr)
    }

    /// Gives memory from [`alloc`](Self::alloc) back. With `blocking`, the
    /// Intel path waits for commands still using it; otherwise (and always
    /// on the SVM path) the caller makes sure that none are left.
    ///
    /// # Safety
    /// `ptr` came from `alloc` on this context and is released once.
    pub unsafe fn free(&self, ptr: *mut c_void, blocking: bool) {
        match self.path {
            UsmPath::Intel => {
                if let Some(usm) = &self.platform.intel_usm {
                    let status = if blocking { (usm.blocking_free)(self.cl, ptr) } else { (usm.free)(self.cl, ptr) };
                    if status != sys::CL_SUCCESS {
                        log::warning(&format!("clMem(Blocking)FreeINTEL failed: {status}"));
                    }
                }
            }
            UsmPath::Svm => {
                let _ = cl3::memory::svm_free(self.cl, ptr);
            }
            UsmPath::None => {}
        }
    }
}

/// Whose an engine slab is: what any address inside pool memory reports.
pub type SlabOwner = ur_core::usm_pool::SlabOwner<UsmPool, &'static Device>;

/// The engine slabs of one context by address.
pub type SlabMap = engine::SlabMap<SlabOwner>;

/// Raw memory of one (context, device, USM kind) for engine pools; each
/// slab is entered in the context's [`SlabMap`]. It holds its own reference
/// to the OpenCL context, so that slabs can go back after the UR context is
/// gone (a destroyed pool's slabs wait for the queues that may still use
/// them).
pub struct ClMemory {
    raw: RawUsm,
    slabs: Arc<SlabMap>,
    owner: SlabOwner,
}

impl ClMemory {
    pub fn new(raw: RawUsm, slabs: Arc<SlabMap>, owner: SlabOwner) -> ClMemory {
        // SAFETY: a live context; released once in Drop.
        let _ = unsafe { cl3::context::retain_context(raw.cl) };
        ClMemory { raw, slabs, owner }
    }
}

impl Drop for ClMemory {
    fn drop(&mut self) {
        // SAFETY: the reference taken in `new`.
        let _ = unsafe { cl3::context::release_context(self.raw.cl) };
    }
}

impl MemorySource for ClMemory {
    fn allocate(&self, size: usize, align: usize) -> Result<NonNull<u8>, OutOfMemory> {
        let align = u32::try_from(align).map_err(|_| OutOfMemory)?;
        let o = &self.owner;
        let p = self.raw.alloc(o.kind.to_ur(), o.device, size, align, 0).map_err(|_| OutOfMemory)?;
        self.slabs.insert(p.as_ptr() as usize, size, self.owner.clone());
        Ok(p.cast())
    }

    unsafe fn release(&self, ptr: NonNull<u8>, _size: usize, _align: usize) {
        self.slabs.remove(ptr.as_ptr() as usize);
        // SAFETY: the engine gives back a slab it took from `allocate`, once
        // no recorded command can still touch it: nothing to wait for (and
        // this may run where OpenCL forbids blocking, see `Queue`'s Drop).
        self.raw.free(ptr.as_ptr().cast(), false);
    }
}

/// A command's `cl_event`, as the engine's completion tracker sees it.
pub struct ClEvent(pub opencl3::event::Event);

impl Completion for ClEvent {
    fn poll(&self) -> Progress {
        let status = cl3::event::get_event_data(self.0.get(), sys::CL_EVENT_COMMAND_EXECUTION_STATUS);
        match crate::cl::value::<cl_int>(status) {
            Ok(sys::CL_COMPLETE) => Progress::Complete,
            Ok(s) if s < 0 => Progress::Failed,
            Ok(_) => Progress::Pending,
            // An event the runtime cannot describe is not waited for again.
            Err(_) => Progress::Failed,
        }
    }

    fn wait(&self) {
        let _ = self.0.wait();
    }
}

/// A new reference to a `cl_event`.
pub fn retained(event: cl_event) -> opencl3::event::Event {
    // SAFETY: a live event; the new reference is owned by the wrapper.
    let _ = unsafe { cl3::event::retain_event(event) };
    opencl3::event::Event::new(event)
}

/// One queue's lane and the events that tell the engine how far its
/// commands have completed (`ur_core::engine::Tracker`). OpenCL is asked
/// for a command's event only when the caller wants it or the tracker keeps
/// it: out of order every command, in order every 32nd (a `cl_event` costs
/// Intel's CPU runtime bookkeeping on every command, see the README). The
/// newest command may thus have no event: `Queue::cover_tail` enqueues a
/// marker where one is needed.
pub struct Trackers(Tracker<ClEvent>);

impl Trackers {
    pub fn new(lane: Arc<Lane>) -> Self {
        Trackers(Tracker::new(lane))
    }

    pub fn lane(&self) -> &Arc<Lane> {
        self.0.lane()
    }

    /// Counts a command whose caller wants no event: whether to ask OpenCL
    /// for one anyway (then [`keep`](Self::keep) it).
    pub fn wants_event(&mut self) -> bool {
        self.0.wants_completion()
    }

    /// Keeps `event`, of command `seq` just submitted, which
    /// [`wants_event`](Self::wants_event) asked for (or a marker's covering
    /// `seq`); looks at the older ones now and then.
    pub fn keep(&mut self, seq: Seq, event: opencl3::event::Event) {
        self.0.push(seq, ClEvent(event));
        self.0.poll_if_due(drop);
    }

    /// Offers `event`, of command `seq` just submitted, that the caller
    /// wanted anyway (counted here, not by `wants_event`); looks at the
    /// older ones now and then.
    pub fn push(&mut self, seq: Seq, event: opencl3::event::Event) {
        self.0.offer(seq, ClEvent(event), drop);
    }

    /// Waits on the host for every event still held (their commands all
    /// run, whatever happens to their queue).
    pub fn wait_all(&mut self) {
        self.0.wait_all(drop);
    }

    /// Whether every command with an event held has finished, looking
    /// (without waiting) at the events of the newest ones (the whole queue
    /// when its newest command is covered, see `Queue::cover_tail`).
    pub fn all_finished(&mut self) -> bool {
        self.0.all_finished(drop)
    }

    /// Every command up to `last` has completed (the host synchronised
    /// after reading the lane's tail).
    pub fn complete_upto(&mut self, last: Seq) {
        self.0.complete_upto(last);
    }

    /// An event whose completion implies that of command `seq`, or `None`
    /// when it has completed. `Err` when no event of it is known (the
    /// caller then waits on the host).
    pub fn event_covering(&self, seq: Seq) -> Result<Option<opencl3::event::Event>, ()> {
        match self.0.cover(seq) {
            Some(Cover::By(e)) => Ok(Some(retained(e.0.get()))),
            Some(_) => Ok(None),
            None => Err(()),
        }
    }
}

/// A marker behind `waits` on `queue`, with an event out-pointer.
pub fn marker(queue: sys::cl_command_queue, waits: &[cl_event], event: *mut cl_event) -> Result<(), cl_int> {
    conv::check(call!(clEnqueueMarkerWithWaitList(
        queue,
        waits.len() as sys::cl_uint,
        crate::cl::wait_list_ptr(waits),
        event
    )))
}
