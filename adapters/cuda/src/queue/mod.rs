//! Queues: an in-order queue is one CUDA stream; an out-of-order queue
//! spreads its commands over a few streams and joins them for barriers.
//!
//! Here the queue object and `impl hal::Queue`; command submission in
//! `submit`, completion tracking for the engine in `tracking`, the USM
//! commands in `usm`, the async allocations and frees in `usm_async`.

mod submit;
pub mod tracking;
mod usm;
mod usm_async;

pub use submit::{Submitted, Submitting};
pub use ur_core::queue::Node;

use crate::context::Context;
use crate::device::Device;
use crate::event::{now_ns, Event};
use crate::memory::cuda_kind;
use crate::memory::pool::{self, UsmPool};
use tracking::Trackers;
use crate::conv::CuExt;
use crate::driver::{self, CuEvent, Stream};
use crate::{Cuda, DDI};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use ur_core::lock_order::{Mutex, Rank};
use ur_core::engine::{Lane, QueueOrder};
use ur_core::boundary::NativeOwnership;
use ur_core::engine;
use ur_core::hal::{self, Completion, Events, UsmCommand};
use ur_core::queue::{EngineCommand, Waits};
use ur_core::handle::{arc_of, arc_ref, ArcObject, HandleHeader, ObjectKind};
use ur_core::*;

/// Streams behind one out-of-order queue.
const OUT_OF_ORDER_STREAMS: usize = 4;

#[repr(C)]
pub struct Queue {
    header: HandleHeader,
    pub context: Arc<Context>,
    pub device: Arc<Device>,
    /// `device`'s index in the context's devices (what a registry entry
    /// names, rather than counting a reference to the device).
    pub device_index: Option<usize>,
    pub flags: ur_queue_flags_t,
    streams: Vec<Stream>,
    next: AtomicUsize,
    /// CUDA events ready to record again (timed on profiling queues).
    spare: Mutex<Vec<CuEvent>>,
    /// A timed event recorded at creation and the host time it completed:
    /// device timestamps are offsets from it.
    profiling_base: Option<(CuEvent, u64)>,
    /// The queue's lane in the engine's graph, made with the queue (that
    /// only registers it in the graph: nothing is recorded on it before
    /// the context starts tracking).
    lane: Arc<Lane>,
    /// The lane's completion trackers. Made with the queue: empty, they
    /// cost nothing, and only commands recorded on the lane reach them.
    trackers: Mutex<Trackers>,
    /// Set when the queue first takes part in the engine's tracking (a
    /// command recorded on its lane, or an engine allocation or free on
    /// it): only then may its lane hold commands, which `Drop` waits for
    /// before retiring the lane.
    tracked: AtomicBool,
    /// Held while a command is recorded on the lane and put on its stream
    /// ([`Submitting`]), so that the lane's order is the stream's order.
    submit: Mutex<()>,
    /// The device's default pool in the context, kept while the context
    /// has no current pool set (see [`Queue::with_current_pool`]).
    default_pool: OnceLock<Arc<UsmPool>>,
    /// The newest seq of the lane whose work is on its stream: another
    /// queue may record an event covering any command up to it.
    published: AtomicU64,
    /// Counts the commands that put anything on the stream, each once its
    /// work is there (see `newest`).
    stream_work: AtomicU64,
    /// The newest event recorded on the stream, with the `stream_work`
    /// count read before it was recorded. While the count is unchanged,
    /// nothing has gone on the stream since, and a command that puts
    /// nothing there (an async allocation or free the engine resolved on
    /// the host) shares this event rather than recording one: the record
    /// is most of what an event costs. Only while `shares_events`.
    newest: Mutex<Option<(Arc<CuEvent>, u64)>>,
    /// In order, untimed, and its stream never the user's (work the user
    /// puts there is not counted): `newest` may be shared.
    shares_events: AtomicBool,
}

ur_core::ur_object!(Queue, Queue, ur_queue_handle_t_);

// SAFETY: made only by `Arc::new` in this module, and handed out only
// from there.
unsafe impl ArcObject for Queue {}

impl Queue {
    fn assemble(
        context: Arc<Context>,
        device: Arc<Device>,
        flags: ur_queue_flags_t,
        streams: Vec<Stream>,
    ) -> UrResult<Arc<Queue>> {
        let profiling_base = if flags & UR_QUEUE_FLAG_PROFILING_ENABLE.0 != 0 {
            let base = CuEvent::new(true).cu()?;
            base.record(streams[0].raw()).cu()?;
            base.synchronize().cu()?;
            Some((base, now_ns()))
        } else {
            None
        };
        let shares_events = streams.len() == 1 && profiling_base.is_none();
        let order = if streams.len() == 1 {
            QueueOrder::InOrder
        } else {
            QueueOrder::OutOfOrder
        };
        // Made after everything that may fail: a lane, once made, is
        // retired by the queue's `Drop`.
        let lane = context.engine.dag().create_lane(order);
        let queue = Arc::new(Queue {
            header: HandleHeader::new(&DDI, ObjectKind::Queue),
            device_index: crate::context::device_index(&context, &device).ok(),
            context,
            device,
            flags,
            streams,
            next: AtomicUsize::new(0),
            spare: Mutex::new(Rank::Leaf, Vec::new()),
            profiling_base,
            trackers: Mutex::new(Rank::QueueTrackers, Trackers::new(lane.clone())),
            lane,
            tracked: AtomicBool::new(false),
            default_pool: OnceLock::new(),
            submit: Mutex::new(Rank::QueueSubmit, ()),
            published: AtomicU64::new(0),
            stream_work: AtomicU64::new(0),
            newest: Mutex::new(Rank::Leaf, None),
            shares_events: AtomicBool::new(shares_events),
        });
        queue.context.raw.register_lane(queue.lane.id(), Arc::downgrade(&queue));
        Ok(queue)
    }

    /// The user has the stream (a native handle): work may go there that
    /// this queue does not count, so no event is shared from now on.
    pub fn stream_given_out(&self) {
        self.shares_events.store(false, Ordering::Relaxed);
        let newest = self.newest.lock().take();
        if let Some((e, _)) = newest {
            self.recycle_shared(e);
        }
    }

    /// An event that completes once everything now on `stream` (the
    /// queue's only one, when sharing) has: `newest` when nothing has gone
    /// on the stream since it was recorded, else one recorded now.
    fn event_after(&self, stream: &Stream) -> UrResult<Arc<CuEvent>> {
        let sharing = self.shares_events.load(Ordering::Relaxed);
        if sharing {
            if let Some((e, counted)) = &*self.newest.lock() {
                if *counted == self.stream_work.load(Ordering::Acquire) {
                    return Ok(e.clone());
                }
            }
        }
        // Read before the record: work counted by then is on the stream.
        let counted = self.stream_work.load(Ordering::Acquire);
        let done = Arc::new(self.take_event()?);
        done.record(stream.raw()).cu()?;
        if sharing {
            let replaced = self.newest.lock().replace((done.clone(), counted));
            if let Some((e, _)) = replaced {
                self.recycle_shared(e);
            }
        }
        Ok(done)
    }

    pub fn handle(&self) -> ur_queue_handle_t {
        ur_core::handle::handle_of(self)
    }

    pub fn is_in_order(&self) -> bool {
        self.streams.len() == 1
    }

    pub fn profiling(&self) -> bool {
        self.profiling_base.is_some()
    }

    pub fn profiling_base(&self) -> Option<(&CuEvent, u64)> {
        self.profiling_base.as_ref().map(|(e, ns)| (e, *ns))
    }

    /// The native stream of an in-order queue (the first one otherwise).
    pub fn first_stream(&self) -> &Stream {
        &self.streams[0]
    }

    fn take_event(&self) -> UrResult<CuEvent> {
        if let Some(e) = self.spare.lock().pop() {
            return Ok(e);
        }
        CuEvent::new(self.profiling()).cu()
    }

    /// Recycles a shared event once nobody else holds it.
    pub fn recycle_shared(&self, e: Arc<CuEvent>) {
        if let Ok(e) = Arc::try_unwrap(e) {
            self.recycle_event(e);
        }
    }

    pub fn recycle_event(&self, e: CuEvent) {
        let mut spare = self.spare.lock();
        if spare.len() < 1024 {
            spare.push(e);
        }
    }

    /// The stream a command runs on: on an out-of-order queue, the stream of
    /// a wait-list event of this queue when there is one (no cross-stream
    /// wait needed), else the next in turn.
    fn pick_stream(&self, wait: &[&Event]) -> &Stream {
        if self.streams.len() == 1 {
            return &self.streams[0];
        }
        if let Some(s) = wait
            .iter()
            .find_map(|e| self.streams.iter().find(|s| s.raw() as usize == e.raw.stream))
        {
            return s;
        }
        &self.streams[self.next.fetch_add(1, Ordering::Relaxed) % self.streams.len()]
    }

    /// Makes `stream` wait for every event of `wait` not already ordered
    /// before it; returns whether it put any wait there.
    fn wait_for(&self, stream: &Stream, wait: &[&Event]) -> UrResult<bool> {
        let mut waited = false;
        for e in wait {
            let Some(done) = e.raw.cu_event() else { continue };
            if e.raw.stream == stream.raw() as usize {
                continue;
            }
            if let Some(q) = &e.queue {
                if !std::ptr::eq(&*q.device, &*self.device) {
                    // Another GPU's event: its context must be current to
                    // query it, so just wait on it from our stream.
                    q.device.activate()?;
                    self.device.activate()?;
                }
            }
            stream.wait(done.raw()).cu()?;
            waited = true;
        }
        Ok(waited)
    }

    /// Makes `stream` wait for everything already submitted to the other
    /// streams of this queue.
    fn join_other_streams(&self, stream: &Stream) -> UrResult {
        for other in self.streams.iter().filter(|s| s.raw() != stream.raw()) {
            let marker = self.take_event()?;
            marker.record(other.raw()).cu()?;
            stream.wait(marker.raw()).cu()?;
            // A wait takes the event's state when it is enqueued, so the
            // marker can be recorded again at once.
            self.recycle_event(marker);
        }
        Ok(())
    }

    /// Whether the queue takes part in the engine's tracking (see
    /// `tracked`).
    #[inline]
    fn tracked(&self) -> bool {
        self.tracked.load(Ordering::Acquire)
    }

    /// Marks the queue as taking part in the engine's tracking, before
    /// anything is recorded on its lane.
    #[inline]
    fn mark_tracked(&self) {
        // Read first: a store on every command would bounce the line
        // between the threads of a queue.
        if !self.tracked() {
            self.tracked.store(true, Ordering::Release);
        }
    }

    /// The pool asynchronous allocations of this queue use when none is
    /// named: without a current pool set in the context, the device's
    /// default pool from this queue's own copy, so that threads on
    /// different queues do not meet on the context's pool table.
    pub fn with_current_pool<R>(
        &self,
        f: impl FnOnce(&UsmPool) -> R,
    ) -> UrResult<R> {
        let make_default = || pool::device_default(&self.context, &self.device);
        self.context.pools.with_current(&*self.device, &self.default_pool, make_default, f)
    }

    /// `urQueueFinish`: waits for every stream.
    pub fn finish(&self) -> UrResult {
        self.device.activate()?;
        // Only what was recorded (and so, under the submit lock, put on its
        // stream) before the wait is known to be done after it.
        let tail = {
            let _submitting = self.begin_submit();
            self.lane.tail().seq
        };
        for s in &self.streams {
            s.synchronize().cu()?;
        }
        // Only a tracked queue's lane holds commands.
        if self.tracked() {
            self.trackers.lock().complete_upto(tail);
        }
        Ok(())
    }
}

impl hal::Queue<Cuda> for Queue {
    fn create(context: &Context, device: &Device, flags: ur_queue_flags_t) -> UrResult<Arc<Self>> {
        let (context, device) = (arc_of(context), arc_of(device));
        device.activate()?;
        let count = if flags & UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0 != 0 {
            OUT_OF_ORDER_STREAMS
        } else {
            1
        };
        let streams = (0..count)
            .map(|_| Stream::new())
            .collect::<Result<Vec<_>, _>>()
            .cu()?;
        Self::assemble(context, device, flags, streams)
    }

    fn context(&self) -> &Context {
        &self.context
    }

    fn device(&self) -> &Device {
        &self.device
    }

    fn flags(&self) -> ur_queue_flags_t {
        self.flags
    }

    /// `UR_QUEUE_INFO_EMPTY`: whether every stream has run dry.
    fn is_empty(&self) -> UrResult<bool> {
        self.device.activate()?;
        let mut empty = true;
        for s in &self.streams {
            let marker = self.take_event()?;
            marker.record(s.raw()).cu()?;
            empty &= marker.is_complete().cu()?;
            self.recycle_event(marker);
        }
        Ok(empty)
    }

    /// A host synchronisation point: the context's pools take back what the
    /// finished work freed, and give back what is above their thresholds.
    fn finish(&self) -> UrResult {
        let outcome = Queue::finish(self);
        self.context.engine.collect_all();
        outcome
    }

    /// CUDA submits work as it is enqueued.
    fn flush(&self) -> UrResult {
        Ok(())
    }

    fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        self.stream_given_out();
        Ok(self.first_stream().raw() as ur_native_handle_t)
    }

    /// `urQueueCreateWithNativeHandle`: an in-order queue over the user's
    /// stream, which must belong to the primary context of a device of
    /// `context` (`device`, when one is named). `flags` are those the
    /// caller chained; one stream is in order whatever they say. Owned,
    /// the stream is destroyed with the queue; borrowed, it is left to its
    /// owner (CUDA streams have no reference count).
    fn from_native(
        native: ur_native_handle_t,
        context: &Context,
        device: Option<&Device>,
        flags: ur_queue_flags_t,
        ownership: NativeOwnership,
    ) -> UrResult<Arc<Self>> {
        let context = arc_of(context);
        let device = device.map(arc_of);
        let native = native as driver::CUstream;
        let owned = ownership == ur_core::boundary::NativeOwnership::Owned;
        // Borrowed until every check has passed, so that a refused stream
        // stays the caller's.
        let stream = Stream::from_raw(native, false);
        let stream_ctx = stream.context().cu()?;
        let mut found = None;
        for d in &context.devices {
            if d.primary_context()? == stream_ctx {
                found = Some(d.clone());
                break;
            }
        }
        let queue_device = found.ok_or(UR_RESULT_ERROR_INVALID_CONTEXT)?;
        if device.is_some_and(|d| !Arc::ptr_eq(&d, &queue_device)) {
            return Err(UR_RESULT_ERROR_INVALID_DEVICE);
        }
        queue_device.activate()?;
        let flags = flags & !UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0;
        let queue = Self::assemble(context, queue_device, flags, vec![Stream::from_raw(native, owned)])?;
        queue.stream_given_out();
        Ok(queue)
    }

    fn enqueue_usm(
        &self,
        command: UsmCommand<'_>,
        waits: Events<'_, Cuda>,
        completion: Completion,
    ) -> UrResult<Option<Arc<Event>>> {
        // Events keep their queue: commands need it as an `Arc` (borrowed;
        // an event clones it).
        let queue = arc_ref(self);
        let wait: Vec<&Event> = waits.iter().collect();
        let want = completion.want_event;
        // A blocking command's event is waited for by the core.
        match command {
            UsmCommand::Wait { barrier } => queue.wait_events(&wait, barrier, want),
            UsmCommand::Fill { dst, pattern, size, .. } => {
                queue.usm_fill(dst, pattern, size, &wait, want)
            }
            UsmCommand::Copy { dst, src, size, .. } => {
                queue.usm_memcpy(false, dst, src, size, &wait, want)
            }
            UsmCommand::Prefetch { ptr, size, flags } => {
                queue.usm_prefetch(ptr, size, flags, &wait, want)
            }
            UsmCommand::Advise { ptr, size, advice } => queue.usm_advise(ptr, size, advice, want),
            // The context's `usm_2d_supported` is false: the core never sends these.
            UsmCommand::Fill2D { .. } | UsmCommand::Copy2D { .. } => {
                Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
            }
        }
    }

    fn async_alloc_supported(&self) -> bool {
        self.device.props.memory_pools
    }

    fn lane(&self) -> &Arc<Lane> {
        // Commands of the context are recorded from the first async
        // allocation on (`ContextCu::start_tracking`), and this queue is
        // tracked.
        self.context.raw.start_tracking();
        self.mark_tracked();
        &self.lane
    }

    fn default_pool(&self) -> &OnceLock<Arc<UsmPool>> {
        &self.default_pool
    }

    /// The wait list's events (the stream waits on each, whatever its
    /// context); the engine's view, where this context's graph has a node
    /// (events made before the context recorded commands have none, and
    /// another context's stamps are of another graph).
    type RawWait<'a> = &'a Event;
    fn translate<'a>(&self, events: Events<'a, Cuda>) -> UrResult<Waits<&'a Event>> {
        let mut waits = Waits::none();
        events.iter().for_each(|e| waits.push_event(e, e, &self.context));
        Ok(waits)
    }

    type Order<'a> = Submitting<'a>;
    fn order(&self) -> UrResult<Submitting<'_>> {
        Ok(self.begin_submit())
    }

    /// A zeroing memset, or nothing on the stream: the command's place in
    /// the queue's order, after the wait list and the engine's dependencies.
    fn enqueue_recorded(
        &self,
        order: Submitting<'_>,
        c: EngineCommand<'_>,
        waits: Waits<&Event>,
    ) -> UrResult<Option<Arc<Event>>> {
        let (p, zero) = (c.ptr as u64, c.zero);
        let run = |s: &Stream| match zero {
            // SAFETY: the engine handed this block, `bytes` long, to this
            // allocation; no command ordered after it has run.
            Some(bytes) => unsafe { driver::memset_async(p, 0, 1, bytes, s.raw()) }.cu(),
            None => Ok(()),
        };
        let done = arc_ref(self).submit_node(&order, c.command, &waits.raw, Node::of(&c), c.want_event, run)?;
        Ok(done.event)
    }

    fn alloc_outside_engine(
        &self,
        pool: &UsmPool,
        kind: engine::UsmKind,
        size: usize,
        events: Events<'_, Cuda>,
        want_event: bool,
    ) -> Option<UrResult<(*mut c_void, Option<Arc<Event>>)>> {
        if kind != engine::UsmKind::Device || !pool.raw.is_native() {
            return None;
        }
        let wait: Vec<&Event> = events.iter().collect();
        arc_ref(self).alloc_native(cuda_kind(kind), pool, size, &wait, want_event)
    }

    fn free_outside_engine(
        &self,
        pool: Option<&UsmPool>,
        ptr: *mut c_void,
        events: Events<'_, Cuda>,
        want_event: bool,
    ) -> UrResult<Option<Arc<Event>>> {
        let wait: Vec<&Event> = events.iter().collect();
        arc_ref(self).free_native_async(pool, ptr, &wait, want_event)
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        // Commands still in flight finish on their own; the streams and
        // events are released once they have. A lane of the engine's graph
        // may only be retired once its commands are done.
        let _ = self.device.activate();
        if self.tracked() {
            for s in &self.streams {
                let _ = s.synchronize();
            }
        }
        self.context.raw.unregister_lane(self.lane.id());
        self.context.engine.dag().retire_lane(&self.lane);
    }
}
