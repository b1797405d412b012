//! Contexts: the core's `Context` (devices, the table of blocking USM
//! allocations, the async pool engine with its default and current pools)
//! with a [`ContextZe`] as its raw part: a Level Zero context over devices
//! of one driver, its event caches and its live queues; and
//! `impl RawContext`.

use crate::conv::ZeExt;
use crate::device::Device;
use crate::driver::ZeContext;
use crate::event::{Command, EventCache, ZeEvent};
use crate::memory::{self};
use crate::queue::Queue;
use crate::LevelZero;
use level_zero_sys::ze_context_handle_t;
use std::sync::{Arc, Weak};
use ur_core::boundary::NativeOwnership;
use ur_core::context::RawContext;
use ur_core::engine::{self, Cover, Stamp};
use ur_core::handle::arc_of;
use ur_core::*;

/// A UR context of this adapter: the core's, with [`ContextZe`] as its
/// raw part.
pub type Context = ur_core::context::Context<LevelZero>;

/// What a Level Zero context keeps beside the core's fields. The core drops
/// `raw` last, after its pools and engine, so the driver context outlives
/// everything that allocated from it.
pub struct ContextZe {
    events: Arc<EventCache>,
    timed_events: Arc<EventCache>,
    pub ze: Arc<ZeContext>,
}

impl ContextZe {
    fn new(ze: ZeContext) -> ContextZe {
        let ze = Arc::new(ze);
        ContextZe {
            events: EventCache::new(ze.clone(), false),
            timed_events: EventCache::new(ze.clone(), true),
            ze,
        }
    }

    /// Where commands take their events: timestamped ones for profiling.
    pub fn event_cache(&self, timestamps: bool) -> &Arc<EventCache> {
        if timestamps {
            &self.timed_events
        } else {
            &self.events
        }
    }

}

/// Waits for every command of every live queue of `context` that still
/// runs some.
pub(crate) fn finish_busy_queues(context: &Context) -> UrResult {
    for q in context.live_queues() {
        if q.raw.busy() {
            crate::queue::wait_for_all(&q)?;
        }
    }
    Ok(())
}

/// The device of `context` that is the Level Zero device `ze`.
pub fn device_by_ze(context: &Context, ze: level_zero_sys::ze_device_handle_t) -> Option<&Arc<Device>> {
    context.devices.iter().find(|d| d.raw.ze == ze)
}

/// What covers the engine's command `stamp`: done, or a command whose
/// completion implies it.
fn covering(context: &Context, stamp: Stamp) -> Cover<Arc<Command>> {
    let dag = context.engine.dag();
    loop {
        if dag.is_complete(stamp) {
            return Cover::Done;
        }
        let queue = context.queue_of_lane(stamp.lane);
        match queue.map(|q| q.raw.cover(stamp.seq)) {
            Some(Some(cover)) => return cover,
            // Its queue is being dropped, which waits for all its
            // commands, or its append is under way on another thread.
            Some(None) | None => std::thread::yield_now(),
        }
    }
}

/// Adds to `events` the Level Zero event of each of the engine's extra
/// dependencies `deps` that has not completed.
pub(crate) fn add_dependencies(context: &Context, queue: &Queue, deps: &[Stamp], events: &mut Vec<Arc<ZeEvent>>) {
    for &d in deps {
        if d.lane == queue.lane.id() && queue.lane.is_in_order() {
            // Ordered before by the queue's own chain.
            continue;
        }
        if let Cover::By(c) = covering(context, d) {
            events.push(c.done.clone());
        }
    }
}

/// Blocks until the command `stamp` has completed, and tells the engine.
pub(crate) fn wait_for_stamp(context: &Context, stamp: Stamp) {
    engine::wait_for_stamp(context.engine.dag(), stamp, |s| covering(context, s));
}

impl RawContext<LevelZero> for ContextZe {
    /// A context over `devices`, which must all belong to one driver.
    fn create(devices: &[&Device], _flags: ur_context_flags_t) -> UrResult<Arc<Context>> {
        let devices: Vec<Arc<Device>> = devices.iter().map(|d| arc_of(*d)).collect();
        let platform = devices.first().ok_or(UR_RESULT_ERROR_INVALID_SIZE)?.raw.platform.clone();
        if devices.iter().any(|d| !Weak::ptr_eq(&d.raw.platform, &platform)) {
            return Err(UR_RESULT_ERROR_INVALID_DEVICE);
        }
        let driver = platform.upgrade().ok_or(UR_RESULT_ERROR_INVALID_DEVICE)?.raw.ze;
        let raw: Vec<_> = devices.iter().map(|d| d.raw.ze).collect();
        let ze = ZeContext::create(driver, &raw).ur()?;
        Ok(Context::new(devices, ContextZe::new(ze)))
    }

    /// `urContextCreateWithNativeHandle`: a context over the user's Level
    /// Zero context, for `devices` (every device of the first platform
    /// when none are named: Level Zero cannot list a context's devices).
    fn from_native(native: ur_native_handle_t, devices: &[&Device], ownership: NativeOwnership) -> UrResult<Arc<Context>> {
        let devices: Vec<Arc<Device>> = devices.iter().map(|d| arc_of(*d)).collect();
        let devices = if devices.is_empty() {
            let platform = crate::device::platforms().first().ok_or(UR_RESULT_ERROR_INVALID_CONTEXT)?;
            platform.raw.devices.clone()
        } else {
            devices
        };
        let owned = ownership == NativeOwnership::Owned;
        let ze = ZeContext::from_native(native as ze_context_handle_t, owned);
        Ok(Context::new(devices, ContextZe::new(ze)))
    }

    fn native_handle(context: &Context) -> UrResult<ur_native_handle_t> {
        Ok(context.raw.ze.0 as ur_native_handle_t)
    }

    /// Every queue holds its context, so none is left: what the user did
    /// not free goes back without waiting, before the core runs the
    /// deleter.
    fn release(context: &mut Context) {
        for a in context.usm.take_all() {
            memory::release(context, &a);
        }
    }
}
