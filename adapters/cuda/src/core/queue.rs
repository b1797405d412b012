//! Queues: an in-order queue is one CUDA stream; an out-of-order queue
//! spreads its commands over a few streams and joins them for barriers.

use super::context::Context;
use super::device::Device;
use super::event::{now_ns, Event};
use crate::conv::CuExt;
use crate::driver::{CuEvent, Stream};
use crate::DDI;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use ur_core::handle::{HandleHeader, ObjectKind, UrObject};
use ur_core::info::InfoOut;
use ur_core::*;

/// Streams behind one out-of-order queue.
const OUT_OF_ORDER_STREAMS: usize = 4;

#[repr(C)]
pub struct Queue {
    header: HandleHeader,
    pub context: Arc<Context>,
    pub device: Arc<Device>,
    pub flags: ur_queue_flags_t,
    streams: Vec<Stream>,
    next: AtomicUsize,
    /// CUDA events ready to record again (timed on profiling queues).
    spare: Mutex<Vec<CuEvent>>,
    /// A timed event recorded at creation and the host time it completed:
    /// device timestamps are offsets from it.
    profiling_base: Option<(CuEvent, u64)>,
}

const _: () = assert!(core::mem::offset_of!(Queue, header) == 0);

// SAFETY: `#[repr(C)]` with the header first.
unsafe impl UrObject for Queue {
    const KIND: ObjectKind = ObjectKind::Queue;
    type Handle = ur_queue_handle_t_;
}

/// What one submitted command produced.
pub struct Submitted<T> {
    pub value: T,
    pub event: Option<Arc<Event>>,
}

impl Queue {
    pub fn new(context: Arc<Context>, device: Arc<Device>, flags: ur_queue_flags_t) -> UrResult<Arc<Queue>> {
        device.activate()?;
        let count = if flags & UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0 != 0 { OUT_OF_ORDER_STREAMS } else { 1 };
        let streams = (0..count).map(|_| Stream::new()).collect::<Result<Vec<_>, _>>().cu()?;
        let profiling_base = if flags & UR_QUEUE_FLAG_PROFILING_ENABLE.0 != 0 {
            let base = CuEvent::new(true).cu()?;
            base.record(streams[0].raw()).cu()?;
            base.synchronize().cu()?;
            Some((base, now_ns()))
        } else {
            None
        };
        Ok(Arc::new(Queue {
            header: HandleHeader::new(&DDI, ObjectKind::Queue),
            context,
            device,
            flags,
            streams,
            next: AtomicUsize::new(0),
            spare: Mutex::new(Vec::new()),
            profiling_base,
        }))
    }

    pub fn handle(&self) -> ur_queue_handle_t {
        self as *const Self as ur_queue_handle_t
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
        if let Some(e) = self.spare.lock().unwrap_or_else(|e| e.into_inner()).pop() {
            return Ok(e);
        }
        CuEvent::new(self.profiling()).cu()
    }

    pub fn recycle_event(&self, e: CuEvent) {
        let mut spare = self.spare.lock().unwrap_or_else(|e| e.into_inner());
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
        if let Some(s) = wait.iter().find_map(|e| self.streams.iter().find(|s| s.raw() as usize == e.stream)) {
            return s;
        }
        &self.streams[self.next.fetch_add(1, Ordering::Relaxed) % self.streams.len()]
    }

    /// Makes `stream` wait for every event of `wait` not already ordered
    /// before it.
    fn wait_for(&self, stream: &Stream, wait: &[&Event]) -> UrResult {
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
        }
        Ok(())
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
        self.device.activate()?;
        let stream = self.pick_stream(wait);
        self.wait_for(stream, wait)?;
        self.finish_submit(command, stream, want_event, work)
    }

    fn finish_submit<T>(
        self: &Arc<Self>,
        command: ur_command_t,
        stream: &Stream,
        want_event: bool,
        work: impl FnOnce(&Stream) -> UrResult<T>,
    ) -> UrResult<Submitted<T>> {
        let queued = now_ns();
        let start = if want_event && self.profiling() {
            let e = CuEvent::new(true).cu()?;
            e.record(stream.raw()).cu()?;
            Some(e)
        } else {
            None
        };
        let value = work(stream)?;
        let event = if want_event {
            let done = self.take_event()?;
            done.record(stream.raw()).cu()?;
            Some(Event::recorded(self, command, stream.raw(), done, start, queued))
        } else {
            None
        };
        Ok(Submitted { value, event })
    }

    /// `urEnqueueEventsWait` (`barrier == false`) and
    /// `urEnqueueEventsWaitWithBarrier`. An empty list means every command
    /// submitted before; a barrier also holds back every command after it.
    pub fn wait_events(self: &Arc<Self>, wait: &[&Event], barrier: bool, want_event: bool) -> UrResult<Option<Arc<Event>>> {
        self.device.activate()?;
        let stream = self.pick_stream(wait);
        if wait.is_empty() {
            self.join_other_streams(stream)?;
        } else {
            self.wait_for(stream, wait)?;
        }
        let command = if barrier { UR_COMMAND_EVENTS_WAIT_WITH_BARRIER } else { UR_COMMAND_EVENTS_WAIT };
        // A barrier on several streams needs an event to hold the others back.
        let need_event = want_event || (barrier && !self.is_in_order());
        let done = self.finish_submit(command, stream, need_event, |_| Ok(()))?.event;
        if barrier && !self.is_in_order() {
            let gate = done.as_ref().and_then(|e| e.cu_event()).ok_or(UR_RESULT_ERROR_UNKNOWN)?;
            for other in self.streams.iter().filter(|s| s.raw() != stream.raw()) {
                other.wait(gate.raw()).cu()?;
            }
        }
        Ok(if want_event { done } else { None })
    }

    /// `urQueueFinish`: waits for every stream.
    pub fn finish(&self) -> UrResult {
        self.device.activate()?;
        for s in &self.streams {
            s.synchronize().cu()?;
        }
        Ok(())
    }

    /// `urQueueGetInfo`.
    pub fn info(&self, prop: ur_queue_info_t, out: InfoOut) -> UrResult {
        match prop {
            UR_QUEUE_INFO_CONTEXT => out.value(self.context.handle()),
            UR_QUEUE_INFO_DEVICE => out.value(self.device.handle()),
            UR_QUEUE_INFO_FLAGS => out.value(self.flags),
            // SAFETY: `self` lives in an `Arc`.
            UR_QUEUE_INFO_REFERENCE_COUNT => out.value(unsafe { ur_core::handle::ref_count_of(self) }),
            UR_QUEUE_INFO_EMPTY => {
                self.device.activate()?;
                let mut empty = true;
                for s in &self.streams {
                    let marker = self.take_event()?;
                    marker.record(s.raw()).cu()?;
                    empty &= marker.is_complete().cu()?;
                    self.recycle_event(marker);
                }
                out.bool(empty)
            }
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        // Commands still in flight finish on their own; the streams and
        // events are released once they have.
        let _ = self.device.activate();
    }
}
