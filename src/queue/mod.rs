//! The submission seam between the core and a backend's queue, written
//! once: how a command enters the engine's graph ([`Node`]), a wait list
//! translated for one queue ([`Waits`]), and the command the engine
//! recorded for an async allocation or free ([`EngineCommand`]).
//!
//! [`usm_async`] writes `urEnqueueUSM*AllocExp` and `urEnqueueUSMFreeExp`
//! once on top of it, for every backend: the core picks the pool, asks the
//! engine for a block, and hands the backend only what it must run (a
//! marker or a zeroing fill behind the waits the engine cannot prove), through
//! `RawQueue::enqueue_recorded`.

pub mod object;
pub mod submit;
pub mod usm_async;

use crate::abi::ur_command_t;
use crate::engine::{Dag, Lane, Stamp};
use crate::context::Context;
use crate::event::Event;
use crate::hal::Backend;
use core::ffi::c_void;

/// Where a command stands in the engine's graph when its backend appends
/// it (new commands and barriers are recorded by `submit::submit`).
#[derive(Clone, Copy, Debug)]
pub enum Node<'a> {
    /// Left out of the graph: it touches no engine memory (an allocation or
    /// free of a driver's own pool), so nothing need be ordered after it.
    Untracked,
    /// Already recorded: by the core's submission path, or by the engine
    /// for an async allocation or free, with extra commands to wait for; `on_device` when it puts work on the
    /// device (a zeroing fill), not only a point in the queue's order.
    Given { stamp: Stamp, deps: &'a [Stamp], on_device: bool },
}

impl<'a> Node<'a> {
    /// The node of an engine command.
    pub fn of(command: &EngineCommand<'a>) -> Self {
        Node::Given { stamp: command.stamp, deps: command.deps, on_device: command.zero.is_some() }
    }
}

/// Records a new command on `lane` after `stamps`, the engine's nodes of
/// its wait list, and returns its stamp; every backend's submission records
/// with it. A barrier orders every later command of the lane after it:
/// after everything before it when `on_all` (the driver's barrier has an
/// empty wait list, and so waits for all earlier work), else after its
/// stamps. A barrier whose wait list the engine sees none of (events made
/// from native handles, or from before the context recorded commands) is
/// recorded as a plain command: the driver's barrier waits for that list
/// only, and the engine may know less than the queue enforces, never more.
pub fn record_new(dag: &Dag, lane: &Lane, barrier: bool, on_all: bool, stamps: &[Stamp]) -> Stamp {
    if barrier && on_all {
        dag.record_barrier(lane, &[])
    } else if barrier && !stamps.is_empty() {
        dag.record_barrier(lane, stamps)
    } else {
        dag.record(lane, stamps)
    }
}

/// A wait list translated for one queue: what the backend waits on, and the
/// engine's view of the same commands.
#[derive(Debug)]
pub struct Waits<R> {
    /// The backend's own waits (its events, or ours where it has none).
    pub raw: Vec<R>,
    /// The engine's nodes of the waited-for commands of the queue's context.
    pub stamps: Vec<Stamp>,
    /// Some waited-for command has no node the engine sees (an event of
    /// another context, or one made from a native handle): the engine then
    /// cannot prove what the command waits for, and the command needs a
    /// node of its own to carry the wait.
    pub unstamped: bool,
}

impl<R> Waits<R> {
    pub const fn none() -> Self {
        Waits { raw: Vec::new(), stamps: Vec::new(), unstamped: false }
    }

    /// Adds the wait for `event`, `raw`, on a queue of `context`.
    pub fn push_event<B: Backend>(&mut self, raw: R, event: &Event<B>, context: &Context<B>) {
        self.raw.push(raw);
        self.note(event, context);
    }

    /// Adds `event` to the engine's view only (the backend need not wait for
    /// it: it has completed). An event without a node in `context`'s graph
    /// (`Event::stamp_in`) is one the engine cannot see.
    pub fn note<B: Backend>(&mut self, event: &Event<B>, context: &Context<B>) {
        match event.stamp_in(context) {
            Some(s) => self.stamps.push(s),
            None => self.unstamped = true,
        }
    }

    /// Whether every wait is a command of `lane` (or there is none): on an
    /// in-order queue, its newest command already follows them all.
    pub fn only_lane(&self, lane: &Lane) -> bool {
        !self.unstamped && self.stamps.iter().all(|s| s.lane == lane.id())
    }
}

impl<R> Default for Waits<R> {
    fn default() -> Self {
        Waits::none()
    }
}

/// The command of an async allocation or free that the engine recorded on
/// the queue's lane. The backend runs it after the command's wait list and
/// `deps`, and reports `stamp` complete when it has run.
#[derive(Clone, Copy, Debug)]
pub struct EngineCommand<'a> {
    pub stamp: Stamp,
    pub command: ur_command_t,
    /// The block allocated or freed.
    pub ptr: *mut c_void,
    /// `Some(bytes)`: zero that many bytes at `ptr` (a new block of a
    /// zero-initialising pool); `None`: the command runs nothing.
    pub zero: Option<usize>,
    /// Commands of any queue of the context that must complete first: the
    /// pending free of a reused block, or a block's allocation.
    pub deps: &'a [Stamp],
    pub want_event: bool,
}

#[cfg(test)]
mod tests {
    use super::record_new;
    use crate::engine::{Dag, QueueOrder};

    #[test]
    fn a_barrier_orders_later_commands_only_after_what_it_waits_for() {
        let dag = Dag::new();
        let lane = dag.create_lane(QueueOrder::OutOfOrder);
        let other = dag.create_lane(QueueOrder::InOrder);
        let earlier = record_new(&dag, &lane, false, false, &[]);
        let waited = record_new(&dag, &other, false, false, &[]);

        // An empty wait list: the driver's barrier waits for everything.
        let on_all = record_new(&dag, &lane, true, true, &[]);
        let after = record_new(&dag, &lane, false, false, &[]);
        assert!(dag.is_ordered_before(earlier, after));
        assert!(dag.is_ordered_before(on_all, after));

        // A wait list the engine sees: after the list, not after `first`.
        let first = record_new(&dag, &lane, false, false, &[]);
        let on_list = record_new(&dag, &lane, true, false, &[waited]);
        let later = record_new(&dag, &lane, false, false, &[]);
        assert!(dag.is_ordered_before(waited, later));
        assert!(dag.is_ordered_before(on_list, later));
        assert!(!dag.is_ordered_before(first, later));

        // A wait list the engine sees none of: a plain command, so nothing
        // before it is taken to come before later commands.
        let second = record_new(&dag, &lane, false, false, &[]);
        let unseen = record_new(&dag, &lane, true, false, &[]);
        let last = record_new(&dag, &lane, false, false, &[]);
        assert!(!dag.is_ordered_before(second, last));
        assert!(!dag.is_ordered_before(unseen, last));
    }
}
