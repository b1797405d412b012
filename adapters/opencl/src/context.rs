//! Contexts: the core's [`Context`] over devices of one platform, whose raw
//! part ([`ContextCl`]) is the OpenCL context and what the adapter keeps
//! beside the core's fields: its queues, its own internal queues, the
//! trackers of released queues, and the scratch word.

use crate::conv::ClResultExt;
use crate::device::platform::{self, Platform};
use crate::device::{kept_all, Device, UsmPath};
use crate::memory::{self, RawUsm};
use crate::queue::trackers::{ClEvent, Trackers};
use crate::queue::{self, Queue, QueueCl};
use crate::OpenCl;
use cl3::ext as sys;
use std::ffi::c_void;
use std::sync::Arc;
use ur_core::lock_order::{Mutex, MutexGuard, Rank};
use ur_core::boundary::NativeOwnership;
use ur_core::context::RawContext;
use ur_core::queue::object::RawQueue;
use ur_core::engine::{self, Cover, Stamp};
use ur_core::*;

/// A UR context of this adapter.
pub type Context = ur_core::context::Context<OpenCl>;

/// What an OpenCL context keeps beside the core's fields.
pub struct ContextCl {
    pub cl: opencl3::context::Context,
    pub platform: &'static Platform,
    /// An in-order queue per device for the adapter's own commands (zeroing
    /// pool memory), made on first use.
    /// Keyed by the device's address.
    internal_queues: Mutex<Vec<(usize, Arc<opencl3::command_queue::CommandQueue>)>>,
    /// Progress trackers of released queues whose commands had not all
    /// finished: their lanes retire once they have (released queues are
    /// not waited for, since the last release may come on a runtime
    /// callback thread, where OpenCL forbids blocking).
    orphans: Mutex<Vec<Trackers>>,
    /// A word of USM that commands standing in for markers write (see
    /// `queue/usm_async.rs`); null when it could not be allocated.
    scratch: std::sync::OnceLock<usize>,
}

/// The live UR queue of `context` over the OpenCL queue `cl`.
pub(crate) fn queue_by_cl(context: &Context, cl: sys::cl_command_queue) -> Option<Arc<Queue>> {
    context.live_queues().into_iter().find(|q| q.raw.cl.get() == cl)
}

/// Waits for every command of every live queue of `context`: `urUSMFree`
/// of SVM memory waits for them.
pub(crate) fn finish_all_queues(context: &Context) -> UrResult {
    for q in context.live_queues() {
        QueueCl::finish(&q)?;
    }
    Ok(())
}

/// What stands on the OpenCL side for a command of the engine's graph.
pub(crate) enum Covering {
    /// It has completed, or its queue has drained.
    Done,
    /// An event whose completion implies the command's, and the command's
    /// queue when it is still live (to flush before another queue waits).
    Event(opencl3::event::Event, Option<Arc<Queue>>),
    /// No event of it is known: its live queue must be waited for.
    Unknown(Arc<Queue>),
}

impl ContextCl {
    fn new(cl: opencl3::context::Context, platform: &'static Platform) -> ContextCl {
        ContextCl {
            cl,
            platform,
            internal_queues: Mutex::new(Rank::Leaf, Vec::new()),
            orphans: Mutex::new(Rank::QueueTrackers, Vec::new()),
            scratch: std::sync::OnceLock::new(),
        }
    }

    fn orphans(&self) -> MutexGuard<'_, Vec<Trackers>> {
        self.orphans.lock()
    }

    /// Takes the trackers of a released queue whose commands have not all
    /// finished (see `orphans`).
    pub(crate) fn adopt(&self, trackers: Trackers) {
        self.orphans().push(trackers);
    }

    /// The adapter's own in-order queue on `device`.
    pub(crate) fn internal_queue(&self, device: &Device) -> UrResult<Arc<opencl3::command_queue::CommandQueue>> {
        let mut queues = self.internal_queues.lock();
        let key = device as *const Device as usize;
        if let Some((_, q)) = queues.iter().find(|(k, _)| *k == key) {
            return Ok(q.clone());
        }
        // SAFETY: `device` belongs to this context (callers check).
        let q = unsafe { opencl3::command_queue::CommandQueue::create_with_properties(&self.cl, device.raw.id, 0, 0) }
            .ur()?;
        let q = Arc::new(q);
        queues.push((key, q.clone()));
        Ok(q)
    }
}

/// The device of `context` with OpenCL id `id`.
pub fn device_by_id(context: &Context, id: sys::cl_device_id) -> Option<&'static Device> {
    context.devices.iter().copied().find(|d| d.raw.id == id)
}

/// How USM reaches the runtime in `context`: the platform's devices share
/// one path.
pub fn usm_path(context: &Context) -> UsmPath {
    context.devices[0].raw.usm_path
}

/// The runtime's USM allocation entry points for `context`.
pub fn raw_usm(context: &Context) -> RawUsm {
    RawUsm {
        cl: context.raw.cl.get(),
        platform: context.raw.platform,
        path: usm_path(context),
        svm_atomics: context.devices.iter().all(|d| d.raw.svm & sys::CL_DEVICE_SVM_ATOMICS != 0),
    }
}

/// What covers the command `stamp` of `context`'s graph on the OpenCL side.
pub(crate) fn covering(context: &Context, stamp: Stamp) -> Covering {
    let dag = context.engine.dag();
    loop {
        if dag.is_complete(stamp) {
            return Covering::Done;
        }
        if let Some(q) = context.queue_of_lane(stamp.lane) {
            return match queue::event_covering(&q, stamp.seq) {
                Ok(Some(e)) => Covering::Event(e, Some(q)),
                Ok(None) => Covering::Done,
                Err(()) => Covering::Unknown(q),
            };
        }
        if let Some(t) = context.raw.orphans().iter().find(|t| t.lane().id() == stamp.lane) {
            // An orphan's events cover everything its queue ran.
            return match queue::trackers::event_covering(t, stamp.seq) {
                Ok(Some(e)) => Covering::Event(e, None),
                _ => Covering::Done,
            };
        }
        // The queue is being dropped: its trackers are on their way to
        // the orphans, or its lane to retirement.
        std::thread::yield_now();
    }
}

/// Blocks until the command `stamp` of `context` has completed, and tells
/// the engine.
pub(crate) fn wait_for_stamp(context: &Context, stamp: Stamp) {
    engine::wait_for_stamp(context.engine.dag(), stamp, |s| match covering(context, s) {
        Covering::Done => Cover::Done,
        Covering::Event(e, _) => Cover::By(ClEvent(e)),
        Covering::Unknown(q) => {
            // Its queue's finish reports it (and everything before it).
            let _ = QueueCl::finish(&q);
            Cover::Done
        }
    })
}

/// Retires the lanes of `context`'s released queues whose commands have
/// finished.
fn reap_orphans(context: &Context) {
    let dag = context.engine.dag();
    context.raw.orphans().retain_mut(|t| {
        let finished = t.all_finished(drop);
        if finished {
            dag.retire_lane(t.lane());
        }
        !finished
    });
}

/// `context`'s scratch word: host USM on the Intel path (any device
/// reaches it), a coarse-grained SVM word otherwise; `None` when the
/// runtime refused it.
pub(crate) fn scratch(context: &Context) -> Option<*mut c_void> {
    let word = *context.raw.scratch.get_or_init(|| {
        let kind = if usm_path(context) == UsmPath::Intel { UR_USM_TYPE_HOST } else { UR_USM_TYPE_DEVICE };
        raw_usm(context).alloc(kind, None, 64, 0, 0).map_or(0, |p| p.as_ptr() as usize)
    });
    (word != 0).then_some(word as *mut c_void)
}

impl RawContext<OpenCl> for ContextCl {
    /// A context over `devices`, which must all belong to one platform.
    fn create(devices: &[&Device], _flags: ur_context_flags_t) -> UrResult<Arc<Context>> {
        let devices = kept_all(devices);
        let platform = devices.first().ok_or(UR_RESULT_ERROR_INVALID_SIZE)?.raw.platform;
        if devices.iter().any(|d| !std::ptr::eq(d.raw.platform, platform)) {
            // One OpenCL context cannot span platforms.
            return Err(UR_RESULT_ERROR_INVALID_DEVICE);
        }
        let ids: Vec<sys::cl_device_id> = devices.iter().map(|d| d.raw.id).collect();
        let properties = [sys::CL_CONTEXT_PLATFORM as sys::cl_context_properties, platform.raw.id as isize, 0];
        let cl = opencl3::context::Context::from_devices(&ids, &properties, None, std::ptr::null_mut()).ur()?;
        Ok(Context::new(devices, ContextCl::new(cl, platform)))
    }

    fn native_handle(context: &Context) -> UrResult<ur_native_handle_t> {
        Ok(context.raw.cl.get() as ur_native_handle_t)
    }

    /// `urContextCreateWithNativeHandle`: a context over the user's
    /// `cl_context`, for `devices` (each must be one of its devices), or
    /// for all of its devices when none are named. A borrowed context is
    /// retained here and released with this object; an owned one takes
    /// over the caller's reference.
    fn from_native(native: ur_native_handle_t, devices: &[&Device], ownership: NativeOwnership) -> UrResult<Arc<Context>> {
        let native = native as sys::cl_context;
        let devices = kept_all(devices);
        let ids = crate::driver::array::<sys::cl_device_id>(cl3::context::get_context_data(native, sys::CL_CONTEXT_DEVICES))
            .ur()?;
        let devices = if devices.is_empty() {
            // Every device of the context must be one the adapter knows.
            ids.iter()
                .map(|&id| platform::device_by_id(id).ok_or(UR_RESULT_ERROR_INVALID_DEVICE))
                .collect::<UrResult<Vec<_>>>()?
        } else {
            if devices.iter().any(|d| !ids.contains(&d.raw.id)) {
                return Err(UR_RESULT_ERROR_INVALID_DEVICE);
            }
            devices
        };
        let platform = devices.first().ok_or(UR_RESULT_ERROR_INVALID_CONTEXT)?.raw.platform;
        if devices.iter().any(|d| !std::ptr::eq(d.raw.platform, platform)) {
            return Err(UR_RESULT_ERROR_INVALID_DEVICE);
        }
        if ownership == NativeOwnership::Borrowed {
            // SAFETY: the caller's live context; this reference is the one
            // the wrapper below releases.
            unsafe { cl3::context::retain_context(native) }.ur()?;
        }
        let ids: Vec<sys::cl_device_id> = devices.iter().map(|d| d.raw.id).collect();
        let cl = opencl3::context::Context::new(native, &ids);
        Ok(Context::new(devices, ContextCl::new(cl, platform)))
    }

    /// A host synchronisation point: released queues that have finished
    /// retire, and every pool files the blocks whose frees have completed
    /// and gives back what is above its release threshold.
    fn collect_pools(context: &Context) {
        reap_orphans(context);
        context.pools.collect(|p| &p.base.engine);
    }

    /// Before the core clears the pools and runs the deleter: released
    /// queues' last commands finish, then what the user did not free and
    /// the scratch word go back.
    fn release(context: &mut Context) {
        // Released queues' last commands run before their memory goes back.
        let dag = context.engine.dag().clone();
        for mut t in std::mem::take(&mut *context.raw.orphans()) {
            t.wait_all(drop);
            dag.retire_lane(t.lane());
        }
        // Every queue holds its context, so none is left: what the user did
        // not free can go back now without waiting.
        for a in context.usm.take_all() {
            memory::release_backing(context, &a);
        }
        if let Some(&word) = context.raw.scratch.get().filter(|&&w| w != 0) {
            // SAFETY: allocated once by `scratch`; no queue is left to use it.
            unsafe { raw_usm(context).free(word as *mut c_void, true) };
        }
    }
}
