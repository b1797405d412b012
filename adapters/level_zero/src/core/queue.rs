//! Queues: one immediate command list each, and `Queue::submit`, the one
//! place every command passes: its wait list translated, its Level Zero
//! event taken, its node recorded in the context's async pool engine, and
//! the command kept until seen to complete.
//!
//! A Level Zero command list does not order its commands by itself, so on
//! an in-order queue every command also waits for the event of the one
//! before it.
//!
//! Locks: `order` (held from a command's node to its append, so that the
//! engine's sequence numbers follow the list) is taken before `tracker`,
//! and a queue never holds another queue's `order`; `tracker` locks are
//! leaves, taken of any queue of the context while finding what covers a
//! command of the engine's graph.

use super::context::Context;
use super::device::Device;
use super::event::{Command, Event, ZeEvent};
use super::usm_pool::UsmPool;
use crate::conv::ZeExt;
use crate::driver::ImmediateList;
use crate::DDI;
use level_zero_sys::*;
use std::sync::{Arc, OnceLock};
use ur_core::lock_order::{Mutex, MutexGuard, Rank};
use ur_core::engine::{Cover, Lane, QueueOrder, Seq, Stamp, Tracker};
use ur_core::handle::{ArcObject, HandleHeader, ObjectKind};
use ur_core::*;

/// How a command enters the engine's graph.
#[derive(Clone, Copy)]
pub enum Node<'a> {
    /// After its wait list (and, in order, the queue's previous command).
    Command,
    /// Also before every later command of the queue.
    Barrier,
    /// Already recorded by the engine (an async allocation or free), with
    /// extra commands to wait for.
    Given { stamp: Stamp, deps: &'a [Stamp] },
}

/// What a command waits on, as Level Zero events.
pub struct Waits {
    pub events: Vec<Arc<ZeEvent>>,
    pub stamps: Vec<Stamp>,
}

impl Waits {
    /// Whether every wait is a command of `lane` (or nothing at all).
    pub fn only_lane(&self, lane: &Lane) -> bool {
        self.events.len() == self.stamps.len() && self.stamps.iter().all(|s| s.lane == lane.id())
    }
}

/// Serialised appends: the newest command's event, for in-order chaining.
pub struct Order {
    last: Option<Arc<ZeEvent>>,
}

#[repr(C)]
pub struct Queue {
    header: HandleHeader,
    /// The context's default pool of `device`, taken on first use
    /// (declared before `context`, so dropped first).
    default_pool: OnceLock<Arc<UsmPool>>,
    pub context: Arc<Context>,
    pub device: Arc<Device>,
    pub flags: ur_queue_flags_t,
    pub lane: Arc<Lane>,
    list: ImmediateList,
    order: Mutex<Order>,
    tracker: Mutex<Tracker<Arc<Command>>>,
}

ur_core::ur_object!(Queue, Queue, ur_queue_handle_t_);

// SAFETY: queues are made only by `Queue::new`, in an `Arc`.
unsafe impl ArcObject for Queue {}

impl Queue {
    pub fn new(context: Arc<Context>, device: Arc<Device>, flags: ur_queue_flags_t) -> UrResult<Arc<Queue>> {
        let list = ImmediateList::create(&context.ze, device.ze, device.facts.ordinal).ur()?;
        let order = if flags & UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0 != 0 {
            QueueOrder::OutOfOrder
        } else {
            QueueOrder::InOrder
        };
        let lane = context.engine.dag().create_lane(order);
        let queue = Arc::new(Queue {
            header: HandleHeader::new(&DDI, ObjectKind::Queue),
            default_pool: OnceLock::new(),
            context,
            device,
            flags,
            tracker: Mutex::new(Rank::QueueTrackers, Tracker::new(lane.clone())),
            lane,
            list,
            order: Mutex::new(Rank::QueueSubmit, Order { last: None }),
        });
        queue.context.add_queue(&queue);
        Ok(queue)
    }

    pub fn is_in_order(&self) -> bool {
        self.lane.is_in_order()
    }

    pub fn profiling(&self) -> bool {
        self.flags & UR_QUEUE_FLAG_PROFILING_ENABLE.0 != 0
    }

    /// The pool async allocations on this queue use when none is named.
    pub fn with_current_pool<R>(&self, f: impl FnOnce(&UsmPool) -> R) -> UrResult<R> {
        let make_default = || Ok(UsmPool::device_default(&self.context, &self.device));
        self.context.pools.with_current(&*self.device, &self.default_pool, make_default, f)
    }

    /// Held from a command's node in the engine's graph to its append.
    pub fn order(&self) -> MutexGuard<'_, Order> {
        self.order.lock()
    }

    fn tracker(&self) -> MutexGuard<'_, Tracker<Arc<Command>>> {
        self.tracker.lock()
    }

    /// The Level Zero events a UR wait list stands for. Events of another
    /// context, which no command of this one can wait on, are waited for
    /// on the host first.
    pub fn translate<'a>(&self, events: impl IntoIterator<Item = &'a Event>) -> UrResult<Waits> {
        let mut waits = Waits { events: Vec::new(), stamps: Vec::new() };
        for e in events {
            if Arc::ptr_eq(&e.context.ze, &self.context.ze) {
                waits.events.push(e.done.clone());
                waits.stamps.extend(e.stamp);
            } else {
                e.wait()?;
            }
        }
        Ok(waits)
    }

    /// Appends one command. `append` gets the list, the event the command
    /// must signal, and the events it must wait on. The command's event is
    /// returned when `want_event`.
    pub fn submit(
        self: &Arc<Self>,
        command: ur_command_t,
        node: Node,
        waits: Waits,
        want_event: bool,
        keep: Option<Box<[u8]>>,
        append: impl FnOnce(ze_command_list_handle_t, ze_event_handle_t, &mut Vec<ze_event_handle_t>) -> Result<(), ze_result_t>,
    ) -> UrResult<Option<Arc<Event>>> {
        self.submit_locked(self.order(), command, node, waits, want_event, keep, append)
    }

    /// [`submit`](Self::submit) under an order lock taken earlier (when the
    /// engine recorded the command's node).
    pub fn submit_locked(
        self: &Arc<Self>,
        mut order: MutexGuard<'_, Order>,
        command: ur_command_t,
        node: Node,
        mut waits: Waits,
        want_event: bool,
        keep: Option<Box<[u8]>>,
        append: impl FnOnce(ze_command_list_handle_t, ze_event_handle_t, &mut Vec<ze_event_handle_t>) -> Result<(), ze_result_t>,
    ) -> UrResult<Option<Arc<Event>>> {
        let done = self.context.event_cache(self.profiling()).take()?;
        let dag = self.context.engine.dag();
        let stamp = match node {
            Node::Command => dag.record(&self.lane, &waits.stamps),
            Node::Barrier => dag.record_barrier(&self.lane, &waits.stamps),
            Node::Given { stamp, deps } => {
                self.context.add_dependencies(self, deps, &mut waits.events);
                stamp
            }
        };
        if let Some(last) = order.last.as_ref().filter(|_| self.is_in_order()) {
            waits.events.push(last.clone());
        }
        let submitted_ns = if self.profiling() { Some(self.device.now_ns()?) } else { None };
        let mut raw: Vec<ze_event_handle_t> = waits.events.iter().map(|e| e.raw).collect();
        if let Err(e) = append(self.list.0, done.raw, &mut raw) {
            // Nothing ran. Out of order the node completes on its own; in
            // order the next command settles it.
            if !self.is_in_order() {
                dag.complete(stamp);
            }
            return Err(crate::conv::result(e));
        }
        if self.is_in_order() {
            order.last = Some(done.clone());
        }
        self.track(stamp.seq, Command::new(done.clone(), waits.events, keep));
        drop(order);
        Ok(want_event.then(|| Event::new(self, command, done, Some(stamp), submitted_ns)))
    }

    /// Keeps `command` (of node `seq`) until seen to complete; looks at the
    /// older ones now and then. Call it with the order lock held.
    fn track(&self, seq: Seq, command: Arc<Command>) {
        let mut tracker = self.tracker();
        tracker.push(seq, command);
        tracker.poll_if_due(drop);
    }

    /// An allocation or free with nothing to run, on an in-order queue
    /// whose newest command already follows everything it waits for: that
    /// command's event is its own. `None` when there is no such command.
    pub fn share_newest(
        self: &Arc<Self>,
        order: &MutexGuard<'_, Order>,
        command: ur_command_t,
        stamp: Stamp,
        want_event: bool,
    ) -> Option<Option<Arc<Event>>> {
        let last = order.last.clone()?;
        let cmd = Command::new(last.clone(), Vec::new(), None);
        self.track(stamp.seq, cmd);
        Some(want_event.then(|| Event::new(self, command, last, Some(stamp), None)))
    }

    /// What covers command `seq` of this queue: `Done`, or a command whose
    /// completion implies it; `None` while its append is still under way.
    pub fn cover(&self, seq: Seq) -> Option<Cover<Arc<Command>>> {
        match self.tracker().cover(seq) {
            Some(Cover::By(c)) => Some(Cover::By(c.clone())),
            Some(_) => Some(Cover::Done),
            None => None,
        }
    }

    /// `urQueueFinish`: waits for every command appended so far.
    pub fn finish(&self) -> UrResult {
        let (last_seq, newest) = {
            let order = self.order();
            (self.lane.tail().seq, order.last.clone())
        };
        match newest {
            // In order, the newest command's completion implies all others.
            Some(e) => e.wait()?,
            // Out of order, each command held is waited for.
            None => self.tracker().wait_all(drop),
        }
        self.tracker().complete_upto(last_seq);
        Ok(())
    }

    /// Whether every command appended so far has completed (no wait).
    pub fn is_empty(&self) -> bool {
        self.tracker().all_finished(drop)
    }

    /// Whether commands are still held as running.
    pub fn busy(&self) -> bool {
        !self.tracker().is_empty()
    }
}

impl Drop for Queue {
    /// A command list may only go once its commands have run; then the
    /// lane may retire.
    fn drop(&mut self) {
        let tracker = self.tracker.get_mut();
        tracker.wait_all(drop);
        self.order.get_mut().last = None;
        self.context.engine.dag().retire_lane(&self.lane);
    }
}

