//! Queues: an in-order queue is one CUDA stream; an out-of-order queue
//! spreads its commands over a few streams and joins them for barriers.
//!
//! A queue is the core's [`Queue`] over a [`QueueCu`]: the core holds the
//! handle header, the context, the device, the flags, the queue's lane in
//! the context's engine graph and its copy of the device's default pool;
//! [`QueueCu`] the streams, their events and what tracks their completion
//! for the engine. Here the raw part and `impl RawQueue`; command
//! submission in `submit`, completion tracking for the engine in
//! `tracking`, the USM commands in `usm`, the async allocations and frees
//! in `usm_async`. The queue's operations are functions over the whole
//! queue; what needs only the driver's state is a method of [`QueueCu`].
//!
//! The lane is made with the queue (making one only registers it in the
//! graph), but nothing is recorded on it before the context starts
//! tracking (`ContextCu::start_tracking`): commands are recorded only from
//! then on, and the engine records on it only under [`RawQueue::order`],
//! which switches tracking on first.

mod submit;
pub mod tracking;
mod usm;
mod usm_async;

pub use submit::{begin_submit, submit, submit_node, submit_untracked, wait_events, Submitted, Submitting};
pub use ur_core::queue::Node;
pub use usm::{usm_advise, usm_fill, usm_memcpy, usm_prefetch};
pub use usm_async::{alloc_native, free_native_async};

use crate::context::Context;
use crate::device::Device;
use crate::event::{now_ns, Event};
use crate::memory::pool::UsmPool;
use tracking::Trackers;
use crate::conv::CuExt;
use crate::driver::{self, CuEvent, Stream};
use crate::Cuda;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use ur_core::lock_order::{Mutex, Rank};
use ur_core::engine::QueueOrder;
use ur_core::engine;
use ur_core::hal::{Completion, Events, UsmCopy, UsmCopy2D, UsmFill, UsmFill2D, UsmHint};
use ur_core::queue::object::{Enqueued, NativeQueue, RawQueue};
use ur_core::queue::{EngineCommand, Waits};
use ur_core::handle::arc_of;
use ur_core::*;

/// Streams behind one out-of-order queue.
const OUT_OF_ORDER_STREAMS: usize = 4;

/// A queue of this adapter: the core's, with [`QueueCu`] as its raw part.
pub type Queue = ur_core::queue::object::Queue<Cuda>;

/// What a queue keeps beside the core's part: its streams and their
/// events, and its commands' completion for the engine. The core drops it
/// first, after [`RawQueue::release`], while the context still lives.
pub struct QueueCu {
    /// The queue's device's index in the context's devices (what a
    /// registry entry names, rather than counting a reference to the
    /// device).
    pub device_index: Option<usize>,
    streams: Vec<Stream>,
    next: AtomicUsize,
    /// CUDA events ready to record again (timed on profiling queues).
    spare: Mutex<Vec<CuEvent>>,
    /// A timed event recorded at creation and the host time it completed:
    /// device timestamps are offsets from it.
    profiling_base: Option<(CuEvent, u64)>,
    /// The completion trackers of the queue's lane. Made with the queue:
    /// empty, they cost nothing, and only commands recorded on the lane
    /// (so, while the context tracks) reach them.
    trackers: Mutex<Trackers>,
    /// Set when the queue first takes part in the engine's tracking (a
    /// command recorded on its lane, or an engine allocation or free on
    /// it): only then may its lane hold commands, which its release waits
    /// for before retiring the lane.
    tracked: AtomicBool,
    /// Held while a command is recorded on the lane and put on its stream
    /// ([`Submitting`]), so that the lane's order is the stream's order.
    submit: Mutex<()>,
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

/// A queue over `streams` (one: in order), with its lane in the context's
/// graph, registered with the context so that other queues find events
/// covering its commands.
fn new_queue(
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
    // Made after everything that may fail: a lane, once made, is retired
    // by the queue's release.
    let lane = context.engine.dag().create_lane(order);
    let raw = QueueCu {
        device_index: crate::context::device_index(&context, &device).ok(),
        streams,
        next: AtomicUsize::new(0),
        spare: Mutex::new(Rank::Leaf, Vec::new()),
        profiling_base,
        trackers: Mutex::new(Rank::QueueTrackers, Trackers::new(lane.clone())),
        tracked: AtomicBool::new(false),
        submit: Mutex::new(Rank::QueueSubmit, ()),
        published: AtomicU64::new(0),
        stream_work: AtomicU64::new(0),
        newest: Mutex::new(Rank::Leaf, None),
        shares_events: AtomicBool::new(shares_events),
    };
    let queue = Queue::new(context, device, flags, lane, raw);
    Ok(queue)
}

impl QueueCu {
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
}

/// Makes `stream` wait for every event of `wait` not already ordered
/// before it; returns whether it put any wait there.
fn wait_for(queue: &Queue, stream: &Stream, wait: &[&Event]) -> UrResult<bool> {
    let mut waited = false;
    for e in wait {
        let Some(done) = e.raw.cu_event() else { continue };
        if e.raw.stream == stream.raw() as usize {
            continue;
        }
        if let Some(q) = &e.queue {
            if !std::ptr::eq(&*q.device, &*queue.device) {
                // Another GPU's event: its context must be current to
                // query it, so just wait on it from our stream.
                q.device.raw.activate()?;
                queue.device.raw.activate()?;
            }
        }
        stream.wait(done.raw()).cu()?;
        waited = true;
    }
    Ok(waited)
}

/// Waits for every stream of `queue` (`urQueueFinish` without the pools'
/// collection); the engine hears that what was recorded before is done.
fn synchronize(queue: &Queue) -> UrResult {
    queue.device.raw.activate()?;
    // Only what was recorded (and so, under the submit lock, put on its
    // stream) before the wait is known to be done after it.
    let tail = {
        let _submitting = begin_submit(queue);
        queue.lane.tail().seq
    };
    for s in &queue.raw.streams {
        s.synchronize().cu()?;
    }
    // Only a tracked queue's lane holds commands.
    if queue.raw.tracked() {
        queue.raw.trackers.lock().complete_upto(tail);
    }
    Ok(())
}

impl RawQueue<Cuda> for QueueCu {
    fn create(context: &Context, device: &Device, flags: ur_queue_flags_t) -> UrResult<Arc<Queue>> {
        let (context, device) = (arc_of(context), arc_of(device));
        device.raw.activate()?;
        let count = if flags & UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0 != 0 {
            OUT_OF_ORDER_STREAMS
        } else {
            1
        };
        let streams = (0..count)
            .map(|_| Stream::new())
            .collect::<Result<Vec<_>, _>>()
            .cu()?;
        new_queue(context, device, flags, streams)
    }

    /// `UR_QUEUE_INFO_EMPTY`: whether every stream has run dry.
    fn is_empty(queue: &Queue) -> UrResult<bool> {
        queue.device.raw.activate()?;
        let mut empty = true;
        for s in &queue.raw.streams {
            let marker = queue.raw.take_event()?;
            marker.record(s.raw()).cu()?;
            empty &= marker.is_complete().cu()?;
            queue.raw.recycle_event(marker);
        }
        Ok(empty)
    }

    /// A host synchronisation point: the context's pools take back what the
    /// finished work freed, and give back what is above their thresholds.
    fn finish(queue: &Queue) -> UrResult {
        synchronize(queue)
    }

    fn native_handle(queue: &Queue) -> UrResult<ur_native_handle_t> {
        queue.raw.stream_given_out();
        Ok(queue.raw.first_stream().raw() as ur_native_handle_t)
    }

    /// `urQueueCreateWithNativeHandle`: an in-order queue over the user's
    /// stream, which must belong to the primary context of a device of
    /// `context` (`device`, when one is named). `flags` are those the
    /// caller chained; one stream is in order whatever they say. Owned,
    /// the stream is destroyed with the queue; borrowed, it is left to its
    /// owner (CUDA streams have no reference count).
    fn from_native(native: NativeQueue<'_, Cuda>) -> UrResult<Arc<Queue>> {
        let NativeQueue { handle: native, context, device, flags, ownership } = native;
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
            if d.raw.primary_context()? == stream_ctx {
                found = Some(d.clone());
                break;
            }
        }
        let queue_device = found.ok_or(UR_RESULT_ERROR_INVALID_CONTEXT)?;
        if device.is_some_and(|d| !Arc::ptr_eq(&d, &queue_device)) {
            return Err(UR_RESULT_ERROR_INVALID_DEVICE);
        }
        queue_device.raw.activate()?;
        let flags = flags & !UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0;
        let queue = new_queue(context, queue_device, flags, vec![Stream::from_raw(native, owned)])?;
        queue.raw.stream_given_out();
        Ok(queue)
    }

    // A blocking command's event is waited for by the core.

    /// Prefetch and advice are real here: waits, barriers and commands that
    /// run nothing (an empty launch) come, each reporting its `command`.
    fn marker(queue: &Queue, command: ur_command_t, waits: Events<'_, Cuda>, c: Completion) -> Enqueued<Cuda> {
        wait_events(queue, waits, command, c.want_event)
    }

    fn fill(queue: &Queue, f: UsmFill<'_>, waits: Events<'_, Cuda>, c: Completion) -> Enqueued<Cuda> {
        usm_fill(queue, f.command, f.dst, f.pattern, f.size, waits, c.want_event)
    }

    fn copy(queue: &Queue, m: UsmCopy, waits: Events<'_, Cuda>, c: Completion) -> Enqueued<Cuda> {
        usm_memcpy(queue, m.command, false, m.dst, m.src, m.size, waits, c.want_event)
    }

    fn fill_2d(queue: &Queue, f: UsmFill2D<'_>, waits: Events<'_, Cuda>, c: Completion) -> Enqueued<Cuda> {
        usm::usm_fill_2d(queue, f, waits, c.want_event)
    }

    fn copy_2d(queue: &Queue, m: UsmCopy2D, waits: Events<'_, Cuda>, c: Completion) -> Enqueued<Cuda> {
        usm::usm_memcpy_2d(queue, m, false, waits, c.want_event)
    }

    fn prefetch(queue: &Queue, h: UsmHint, waits: Events<'_, Cuda>, c: Completion) -> Enqueued<Cuda> {
        usm_prefetch(queue, h.ptr, h.size, h.flags, waits, c.want_event)
    }

    fn advise(queue: &Queue, h: UsmHint, c: Completion) -> Enqueued<Cuda> {
        usm_advise(queue, h.ptr, h.size, h.flags, c.want_event)
    }

    fn async_alloc_supported(queue: &Queue) -> bool {
        queue.device.raw.props.memory_pools
    }

    /// Every event: the stream waits on each, whatever its context (the
    /// engine sees those with a node in this context's graph; events made
    /// before the context recorded commands have none).
    type RawWait<'a> = &'a Event;
    fn wait_raw<'a>(_: &Queue, event: &'a Event) -> UrResult<Option<&'a Event>> {
        Ok(Some(event))
    }

    /// The submit lock, and where tracking starts. The core's async
    /// allocations and frees take it before the engine records anything
    /// on the queue's lane, on every path that used to ask this adapter
    /// for the lane (the old `RawQueue::lane` switched tracking on; the core now
    /// reads the lane itself). So the context records commands from the
    /// first async allocation or free on (`ContextCu::start_tracking`; an
    /// allocation from a native pool still leaves it off), and this queue
    /// is tracked.
    type Order<'a> = Submitting<'a>;
    fn order(queue: &Queue) -> UrResult<Submitting<'_>> {
        queue.context.raw.start_tracking();
        queue.raw.mark_tracked();
        Ok(begin_submit(queue))
    }

    /// A command of the queue's own takes the submit lock without starting
    /// tracking: plain commands alone never make the context record.
    fn command_order(queue: &Queue) -> UrResult<Submitting<'_>> {
        Ok(begin_submit(queue))
    }

    /// Once the context tracks commands (from its first async allocation
    /// or free on), and the queue is then marked tracked.
    fn records(queue: &Queue) -> bool {
        let tracking = queue.context.raw.tracking();
        if tracking {
            queue.raw.mark_tracked();
        }
        tracking
    }

    /// A zeroing memset, or nothing on the stream: the command's place in
    /// the queue's order, after the wait list and the engine's dependencies.
    fn enqueue_recorded(
        queue: &Queue,
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
        let done = submit_node(queue, &order, c.command, &waits.raw, Node::of(&c), c.want_event, run)?;
        Ok(done.event)
    }

    fn alloc_outside_engine(
        queue: &Queue,
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
        alloc_native(queue, kind, pool, size, &wait, want_event)
    }

    fn free_outside_engine(
        queue: &Queue,
        pool: Option<&UsmPool>,
        ptr: *mut c_void,
        events: Events<'_, Cuda>,
        want_event: bool,
    ) -> UrResult<Option<Arc<Event>>> {
        let wait: Vec<&Event> = events.iter().collect();
        free_native_async(queue, pool, ptr, &wait, want_event)
    }

    /// Commands still in flight finish on their own; the streams and
    /// events, dropped next with the raw part, are released once they
    /// have. A lane of the engine's graph may only be retired once its
    /// commands are done: a tracked queue waits for its streams first.
    fn release(queue: &mut Queue) {
        let _ = queue.device.raw.activate();
        if queue.raw.tracked() {
            for s in &queue.raw.streams {
                let _ = s.synchronize();
            }
        }
        queue.context.engine.dag().retire_lane(&queue.lane);
    }
}
