//! Queues: an in-order queue is one CUDA stream; an out-of-order queue
//! spreads its commands over a few streams and joins them for barriers.

use super::context::Context;
use super::device::Device;
use super::engine::{stamps_of, Trackers};
use super::event::{now_ns, Event};
use crate::conv::CuExt;
use crate::driver::{CuEvent, Stream};
use crate::DDI;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use ur_core::lock_order::{Mutex, MutexGuard, Rank};
use ur_core::engine::{Lane, QueueOrder, Stamp};
use ur_core::handle::{HandleHeader, ObjectKind};
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
    /// The queue's lane in the engine's graph and its completion trackers,
    /// once the context records commands.
    trackers: Mutex<Option<Trackers>>,
    /// The lane of `trackers`, readable without its lock.
    lane: OnceLock<Arc<Lane>>,
    /// Held while a command is recorded on the lane and put on its stream
    /// ([`Submitting`]), so that the lane's order is the stream's order.
    submit: Mutex<()>,
    /// The device's default pool in the context, kept while the context
    /// has no current pool set (see [`Queue::current_pool`]).
    default_pool: OnceLock<Arc<super::usm_pool::UsmPool>>,
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

/// Proof that the caller holds the queue's submit lock. Dropping it
/// publishes everything recorded on the lane meanwhile.
pub struct Submitting<'a> {
    queue: &'a Queue,
    _order: MutexGuard<'a, ()>,
}

impl Drop for Submitting<'_> {
    fn drop(&mut self) {
        if let Some(lane) = self.queue.lane.get() {
            // Only this lock's holders record on the lane, and their work
            // is on the stream by now (or failed and will never be).
            self.queue
                .published
                .store(lane.tail().seq, Ordering::Release);
        }
    }
}

ur_core::ur_object!(Queue, Queue, ur_queue_handle_t_);

/// Counts a command in a queue's `stream_work` once its work is on the
/// stream: at [`now`](Self::now), or when dropped on a way out that failed
/// (and may have left some there).
struct CountsWork<'a>(Option<&'a AtomicU64>);

impl CountsWork<'_> {
    fn now(&mut self) {
        if let Some(count) = self.0.take() {
            count.fetch_add(1, Ordering::Release);
        }
    }

    /// The command put nothing on the stream: it is not counted.
    fn nothing(&mut self) {
        self.0 = None;
    }
}

impl Drop for CountsWork<'_> {
    fn drop(&mut self) {
        self.now();
    }
}

/// What one submitted command produced.
pub struct Submitted<T> {
    pub value: T,
    pub event: Option<Arc<Event>>,
}

/// How a command enters the engine's graph.
pub enum Node<'a> {
    /// Recorded after its wait list (when the context records commands).
    Command,
    /// Left out: it touches no engine memory (a native-pool allocation or
    /// free), so the engine need not order anything after it.
    Untracked,
    /// A barrier: later commands of the queue are ordered after it.
    Barrier,
    /// Already recorded by the engine (an async allocation or free), with
    /// extra commands to wait for; `host_only` when its work puts nothing
    /// on the stream (no zeroing).
    Given { stamp: Stamp, deps: &'a [Stamp], host_only: bool },
}

impl Queue {
    pub fn new(
        context: Arc<Context>,
        device: Arc<Device>,
        flags: ur_queue_flags_t,
    ) -> UrResult<Arc<Queue>> {
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

    /// `urQueueCreateWithNativeHandle`: an in-order queue over the user's
    /// stream, which must belong to the primary context of a device of
    /// `context` (`device`, when one is named). `flags` are those the
    /// caller chained; one stream is in order whatever they say. Owned,
    /// the stream is destroyed with the queue; borrowed, it is left to its
    /// owner (CUDA streams have no reference count).
    pub fn from_native(
        context: Arc<Context>,
        device: Option<Arc<Device>>,
        native: crate::driver::CUstream,
        flags: ur_queue_flags_t,
        ownership: ur_core::boundary::NativeOwnership,
    ) -> UrResult<Arc<Queue>> {
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
        Ok(Arc::new(Queue {
            header: HandleHeader::new(&DDI, ObjectKind::Queue),
            device_index: context.device_index(&device).ok(),
            context,
            device,
            flags,
            streams,
            next: AtomicUsize::new(0),
            spare: Mutex::new(Rank::Leaf, Vec::new()),
            profiling_base,
            trackers: Mutex::new(Rank::QueueTrackers, None),
            lane: OnceLock::new(),
            default_pool: OnceLock::new(),
            submit: Mutex::new(Rank::QueueSubmit, ()),
            published: AtomicU64::new(0),
            stream_work: AtomicU64::new(0),
            newest: Mutex::new(Rank::Leaf, None),
            shares_events: AtomicBool::new(shares_events),
        }))
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
            .find_map(|e| self.streams.iter().find(|s| s.raw() as usize == e.stream))
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
            let Some(done) = e.cu_event() else { continue };
            if e.stream == stream.raw() as usize {
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

    /// The queue's lane and trackers, made when first needed (the context
    /// records commands from then on).
    fn trackers(self: &Arc<Self>) -> MutexGuard<'_, Option<Trackers>> {
        let mut t = self.trackers.lock();
        if t.is_none() {
            let order = if self.is_in_order() {
                QueueOrder::InOrder
            } else {
                QueueOrder::OutOfOrder
            };
            let lane = self.context.engine.dag().create_lane(order);
            self.context.register_lane(lane.id(), Arc::downgrade(self));
            let _ = self.lane.set(lane.clone());
            *t = Some(Trackers::new(lane));
        }
        t
    }

    /// The queue's lane in the engine's graph.
    /// Borrowed: its reference count is not written on every command.
    pub fn lane(self: &Arc<Self>) -> &Arc<Lane> {
        if self.lane.get().is_none() {
            // Makes the lane and trackers, and sets `lane`.
            drop(self.trackers());
        }
        self.lane.get().expect("set with the trackers")
    }

    /// The pool asynchronous allocations of this queue use when none is
    /// named: without a current pool set in the context, the device's
    /// default pool from this queue's own copy, so that threads on
    /// different queues do not meet on the context's pool table.
    pub fn with_current_pool<R>(
        &self,
        f: impl FnOnce(&super::usm_pool::UsmPool) -> R,
    ) -> UrResult<R> {
        let make_default = || super::usm_pool::UsmPool::device_default(&self.context, &self.device);
        self.context.pools.with_current(&*self.device, &self.default_pool, make_default, f)
    }

    /// Takes the submit lock: commands are recorded and put on the stream
    /// under it (see [`Submitting`]).
    pub fn begin_submit(&self) -> Submitting<'_> {
        Submitting {
            queue: self,
            _order: self.submit.lock(),
        }
    }

    /// An event covering command `seq` of this queue's lane (see
    /// [`Trackers::event_covering`]), for a command of another queue.
    /// `seq` may have been recorded by a thread still putting its work on
    /// the stream: that thread holds this queue's submit lock (no engine
    /// lock) and waits only on commands recorded before `seq`, so the wait
    /// ends, and is short (src/engine/LOCKING.md).
    pub fn event_covering(&self, seq: u64) -> Option<Arc<CuEvent>> {
        let mut spins = 0u32;
        while self.published.load(Ordering::Acquire) < seq {
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
            spins = spins.saturating_add(1);
        }
        self.covering_own(seq)
    }

    /// [`event_covering`](Self::event_covering) for a command of this
    /// queue's own lane, whose submit lock the caller holds: everything
    /// recorded before the caller's command is on the stream.
    pub(super) fn covering_own(&self, seq: u64) -> Option<Arc<CuEvent>> {
        let mut t = self.trackers.lock();
        let stream = self.streams[0].raw();
        t.as_mut()?
            .event_covering(seq, stream, || self.take_event().ok())
    }

    /// Submits one command: picks its stream, orders it after `wait`, runs
    /// `work` to enqueue the CUDA operations, and records an event after it
    /// when the caller wants one.
    pub fn submit<T>(
        self: &Arc<Self>,
        command: ur_command_t,
        wait: &[&Event],
        want_event: bool,
        work: impl FnOnce(&Stream) -> UrResult<T>,
    ) -> UrResult<Submitted<T>> {
        let submitting = self.begin_submit();
        self.submit_node(&submitting, command, wait, Node::Command, want_event, work)
    }

    /// [`submit`](Self::submit) for a command whose place in the graph is
    /// given, under the submit lock the caller took before recording it.
    pub fn submit_node<T>(
        self: &Arc<Self>,
        _held: &Submitting<'_>,
        command: ur_command_t,
        wait: &[&Event],
        node: Node,
        want_event: bool,
        work: impl FnOnce(&Stream) -> UrResult<T>,
    ) -> UrResult<Submitted<T>> {
        self.submit_unlocked(command, wait, node, want_event, work)
    }

    /// [`submit`](Self::submit) for a command left out of the engine's
    /// graph ([`Node::Untracked`]: a native pool's allocation or free),
    /// without the submit lock. The lock keeps the lane's order the
    /// stream's; such a command records nothing on the lane, and may land
    /// on the stream between another thread's recording and its work, as
    /// a command of a third queue could as far as the engine is concerned.
    pub fn submit_untracked<T>(
        self: &Arc<Self>,
        command: ur_command_t,
        wait: &[&Event],
        want_event: bool,
        work: impl FnOnce(&Stream) -> UrResult<T>,
    ) -> UrResult<Submitted<T>> {
        self.submit_unlocked(command, wait, Node::Untracked, want_event, work)
    }

    /// The body of [`submit_node`](Self::submit_node): the caller holds
    /// the submit lock unless `node` is [`Node::Untracked`].
    #[inline]
    fn submit_unlocked<T>(
        self: &Arc<Self>,
        command: ur_command_t,
        wait: &[&Event],
        node: Node,
        want_event: bool,
        work: impl FnOnce(&Stream) -> UrResult<T>,
    ) -> UrResult<Submitted<T>> {
        self.device.activate()?;
        let stream = self.pick_stream(wait);
        // Whatever fails from here may have left work on the stream.
        let mut counts = CountsWork(Some(&self.stream_work));
        let mut on_stream = self.wait_for(stream, wait)?;
        let host_only = matches!(node, Node::Given { host_only: true, .. });
        let stamp = match node {
            Node::Given { stamp, deps, .. } => {
                for &d in deps {
                    if let Some(e) = self.context.event_covering(d, self) {
                        stream.wait(e.raw()).cu()?;
                        on_stream = true;
                    }
                }
                Some(stamp)
            }
            Node::Untracked => None,
            _ if !self.context.tracking() => None,
            Node::Command => Some(
                self.context
                    .engine
                    .dag()
                    .record(&self.lane(), &stamps_of(wait)),
            ),
            Node::Barrier => Some(
                self.context
                    .engine
                    .dag()
                    .record_barrier(&self.lane(), &stamps_of(wait)),
            ),
        };
        // Only a timed event reports when its command was queued.
        let queued = if want_event && self.profiling() { now_ns() } else { 0 };
        let start = if want_event && self.profiling() {
            let e = CuEvent::new(true).cu()?;
            e.record(stream.raw()).cu()?;
            Some(e)
        } else {
            None
        };
        let value = match work(stream) {
            Ok(v) => v,
            Err(e) => {
                // Nothing ran. On an out-of-order lane the node completes on
                // its own; on an in-order one the next tracker settles it.
                if let (Some(s), false) = (stamp, self.is_in_order()) {
                    self.context.engine.dag().complete(s);
                }
                return Err(e);
            }
        };
        if on_stream || !host_only {
            counts.now();
        } else {
            counts.nothing();
        }
        let mut trackers = stamp.map(|_| self.trackers());
        // On an in-order lane an engine node needs no event of its own: a
        // later one, or one recorded when another queue must wait for it,
        // covers it.
        let track = trackers
            .as_mut()
            .and_then(|t| t.as_mut())
            .is_some_and(|t| t.wants_event());
        let done = if want_event || (stamp.is_some() && track) {
            Some(self.event_after(stream)?)
        } else {
            None
        };
        if let (Some(s), Some(t), Some(d)) =
            (stamp, trackers.as_mut().and_then(|t| t.as_mut()), &done)
        {
            t.push(s.seq, d.clone());
            if t.due() {
                t.poll(|e| self.recycle_shared(e));
            }
        }
        let event = match (want_event, done) {
            (true, Some(done)) => Some(Event::recorded(
                self,
                command,
                stream.raw(),
                done,
                stamp,
                start,
                queued,
            )),
            _ => None,
        };
        Ok(Submitted { value, event })
    }

    /// `urEnqueueEventsWait` (`barrier == false`) and
    /// `urEnqueueEventsWaitWithBarrier`. An empty list means every command
    /// submitted before; a barrier also holds back every command after it.
    pub fn wait_events(
        self: &Arc<Self>,
        wait: &[&Event],
        barrier: bool,
        want_event: bool,
    ) -> UrResult<Option<Arc<Event>>> {
        let submitting = self.begin_submit();
        self.device.activate()?;
        let command = if barrier {
            UR_COMMAND_EVENTS_WAIT_WITH_BARRIER
        } else {
            UR_COMMAND_EVENTS_WAIT
        };
        // A barrier on several streams needs an event to hold the others back.
        let spread = barrier && !self.is_in_order();
        // A plain wait with an empty list follows everything before it but
        // holds nothing back; the graph can only say less than that, which
        // is safe (a missed reuse at worst).
        let node = if barrier {
            Node::Barrier
        } else {
            Node::Command
        };
        let joined = |s: &Stream| {
            if wait.is_empty() {
                self.join_other_streams(s)
            } else {
                Ok(())
            }
        };
        let done = self
            .submit_node(&submitting, command, wait, node, want_event || spread, joined)?
            .event;
        if spread {
            let gate = done
                .as_ref()
                .and_then(|e| e.cu_event())
                .ok_or(UR_RESULT_ERROR_UNKNOWN)?;
            let gate_stream = done.as_ref().map_or(0, |e| e.stream);
            for other in self
                .streams
                .iter()
                .filter(|s| s.raw() as usize != gate_stream)
            {
                other.wait(gate.raw()).cu()?;
            }
        }
        Ok(if want_event { done } else { None })
    }

    /// `urQueueFinish`: waits for every stream.
    pub fn finish(&self) -> UrResult {
        self.device.activate()?;
        // Only what was recorded (and so, under the submit lock, put on its
        // stream) before the wait is known to be done after it.
        let tail = {
            let _submitting = self.begin_submit();
            self.lane.get().map(|lane| lane.tail().seq)
        };
        for s in &self.streams {
            s.synchronize().cu()?;
        }
        if let (Some(last), Some(t)) = (
            tail,
            self.trackers
                .lock()
                .as_mut(),
        ) {
            t.complete_upto(last);
        }
        Ok(())
    }

    /// `UR_QUEUE_INFO_EMPTY`: whether every stream has run dry.
    pub fn is_empty(&self) -> UrResult<bool> {
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
}

impl Drop for Queue {
    fn drop(&mut self) {
        // Commands still in flight finish on their own; the streams and
        // events are released once they have. A lane of the engine's graph
        // may only be retired once its commands are done.
        let _ = self.device.activate();
        if let Some(t) = self
            .trackers
            .get_mut()
            .take()
        {
            for s in &self.streams {
                let _ = s.synchronize();
            }
            self.context.unregister_lane(t.lane().id());
            self.context.engine.dag().retire_lane(t.lane());
        }
    }
}
