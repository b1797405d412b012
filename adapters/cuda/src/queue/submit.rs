//! Command submission: a command's stream, its waits, its node in the
//! engine's graph and its event, under the queue's submit lock; event waits
//! and barriers.

use super::{wait_for, Queue, QueueCu};
use crate::conv::CuExt;
use crate::driver::{CuEvent, Stream};
use crate::event::{now_ns, Event};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use ur_core::hal::Events;
use ur_core::queue::Node;
use crate::Cuda;
use ur_core::lock_order::MutexGuard;
use ur_core::*;

/// Proof that the caller holds the queue's submit lock. Dropping it
/// publishes everything recorded on the lane meanwhile.
pub struct Submitting<'a> {
    queue: &'a Queue,
    _order: MutexGuard<'a, ()>,
}

impl Drop for Submitting<'_> {
    fn drop(&mut self) {
        // Only a tracked queue's lane holds commands.
        if self.queue.raw.tracked() {
            // Only this lock's holders record on the lane, and their work
            // is on the stream by now (or failed and will never be).
            self.queue
                .raw
                .published
                .store(self.queue.lane.tail().seq, Ordering::Release);
        }
    }
}

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

/// Takes `queue`'s submit lock: commands are recorded and put on the
/// stream under it (see [`Submitting`]).
pub fn begin_submit(queue: &Queue) -> Submitting<'_> {
    Submitting {
        queue,
        _order: queue.raw.submit.lock(),
    }
}

impl QueueCu {
    /// An event covering command `seq` of this queue's lane (see
    /// [`tracking::event_covering`](super::tracking::event_covering)), for a command of another queue.
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
    pub(crate) fn covering_own(&self, seq: u64) -> Option<Arc<CuEvent>> {
        let mut t = self.trackers.lock();
        let stream = self.streams[0].raw();
        super::tracking::event_covering(&mut t, seq, stream, || self.take_event().ok())
    }
}

/// Submits one command to `queue` through the core's submission path
/// (`ur_core::queue::submit`), which records its node while the context
/// tracks commands: picks its stream, orders it after `events`, runs
/// `work` to enqueue the CUDA operations, and records an event after it
/// when the caller wants one.
pub fn submit<T>(
    queue: &Queue,
    command: ur_command_t,
    events: Events<'_, Cuda>,
    want_event: bool,
    work: impl FnOnce(&Stream) -> UrResult<T>,
) -> UrResult<Submitted<T>> {
    ur_core::queue::submit::submit(queue, false, events, |submitting, waits, node| {
        submit_node(queue, &submitting, command, &waits.raw, node, want_event, work)
    })
}

/// [`submit`] for a command whose place in the graph is given, under the
/// submit lock the caller took before recording it.
pub fn submit_node<T>(
    queue: &Queue,
    _held: &Submitting<'_>,
    command: ur_command_t,
    wait: &[&Event],
    node: Node,
    want_event: bool,
    work: impl FnOnce(&Stream) -> UrResult<T>,
) -> UrResult<Submitted<T>> {
    submit_unlocked(queue, command, wait, node, want_event, work)
}

/// [`submit`] for a command left out of the engine's graph
/// ([`Node::Untracked`]: a native pool's allocation or free), without the
/// submit lock. The lock keeps the lane's order the stream's; such a
/// command records nothing on the lane, and may land on the stream between
/// another thread's recording and its work, as a command of a third queue
/// could as far as the engine is concerned.
pub fn submit_untracked<T>(
    queue: &Queue,
    command: ur_command_t,
    wait: &[&Event],
    want_event: bool,
    work: impl FnOnce(&Stream) -> UrResult<T>,
) -> UrResult<Submitted<T>> {
    submit_unlocked(queue, command, wait, Node::Untracked, want_event, work)
}

/// The body of [`submit_node`]: the caller holds the submit lock unless
/// `node` is [`Node::Untracked`].
#[inline]
fn submit_unlocked<T>(
    queue: &Queue,
    command: ur_command_t,
    wait: &[&Event],
    node: Node,
    want_event: bool,
    work: impl FnOnce(&Stream) -> UrResult<T>,
) -> UrResult<Submitted<T>> {
    let q = &queue.raw;
    queue.device.raw.activate()?;
    let stream = q.pick_stream(wait);
    // Whatever fails from here may have left work on the stream.
    let mut counts = CountsWork(Some(&q.stream_work));
    let mut on_stream = wait_for(queue, stream, wait)?;
    let host_only = matches!(node, Node::Given { on_device: false, .. });
    let stamp = match node {
        // Recorded by the core's submission path, or by the engine for an
        // async allocation or free (under `RawQueue::order`, which marked
        // the queue tracked).
        Node::Given { stamp, deps, .. } => {
            for &d in deps {
                if let Some(e) = crate::context::event_covering(&queue.context, d, queue) {
                    stream.wait(e.raw()).cu()?;
                    on_stream = true;
                }
            }
            Some(stamp)
        }
        Node::Untracked => None,
    };
    // Only a timed event reports when its command was queued.
    let queued = if want_event && q.profiling() { now_ns() } else { 0 };
    let start = if want_event && q.profiling() {
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
            if let (Some(s), false) = (stamp, q.is_in_order()) {
                queue.context.engine.dag().complete(s);
            }
            return Err(e);
        }
    };
    if on_stream || !host_only {
        counts.now();
    } else {
        counts.nothing();
    }
    let mut trackers = stamp.map(|_| q.trackers.lock());
    // On an in-order lane an engine node needs no event of its own: a
    // later one, or one recorded when another queue must wait for it,
    // covers it.
    let track = trackers.as_mut().is_some_and(|t| t.wants_completion());
    let done = if want_event || (stamp.is_some() && track) {
        Some(q.event_after(stream)?)
    } else {
        None
    };
    if let (Some(s), Some(t), Some(d)) = (stamp, trackers.as_mut(), &done) {
        t.push(s.seq, d.clone());
        if t.due() {
            t.poll(|e| q.recycle_shared(e));
        }
    }
    let event = match (want_event, done) {
        (true, Some(done)) => Some(crate::event::recorded(
            queue,
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
pub fn wait_events(queue: &Queue, events: Events<'_, Cuda>, command: ur_command_t, want_event: bool) -> UrResult<Option<Arc<Event>>> {
    let q = &queue.raw;
    queue.device.raw.activate()?;
    let barrier = command == UR_COMMAND_EVENTS_WAIT_WITH_BARRIER;
    // A barrier on several streams needs an event to hold the others back.
    let spread = barrier && !q.is_in_order();
    // A plain wait with an empty list follows everything before it but
    // holds nothing back; the graph can only say less than that, which
    // is safe (a missed reuse at worst).
    let everything_before = events.is_empty();
    let joined = |s: &Stream| if everything_before { q.join_other_streams(s) } else { Ok(()) };
    ur_core::queue::submit::submit(queue, barrier, events, |submitting, waits, node| {
        let done = submit_node(queue, &submitting, command, &waits.raw, node, want_event || spread, joined)?.event;
        if spread {
            // Under the submit lock: no later command may land on another
            // stream before that stream waits for the barrier.
            let gate = done.as_ref().and_then(|e| e.raw.cu_event()).ok_or(UR_RESULT_ERROR_UNKNOWN)?;
            let gate_stream = done.as_ref().map_or(0, |e| e.raw.stream);
            for other in q.streams.iter().filter(|s| s.raw() as usize != gate_stream) {
                other.wait(gate.raw()).cu()?;
            }
        }
        Ok(if want_event { done } else { None })
    })
}
