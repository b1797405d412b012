//! The one way a command reaches a backend's queue.
//!
//! [`submit`] takes a command's wait list and its kind of node (a command
//! or a barrier), and:
//! - translates the wait list for the queue ([`translate`]), event by
//!   event (`RawQueue::wait_raw`);
//! - takes the queue's order (`RawQueue::command_order`), under which the
//!   engine's sequence numbers follow the backend's queue;
//! - records the command's node in the context's engine graph, where the
//!   backend's queue takes part in it (`RawQueue::records`);
//! - hands the backend's append the order, the waits and the node, which
//!   it passes to the driver with the command, and ties the command's
//!   completion to the node and to its event;
//! - when the append fails, lets the node go (`RawQueue::abandon`).
//!
//! The backend's queue methods (`RawQueue::fill` and the rest, kernel
//! launches) each only say what the driver runs.

use super::object::{Queue, RawQueue};
use super::{record_new, Node, Waits};
use crate::hal::{Backend, Events};
use crate::UrResult;

/// The order a backend's append runs under.
pub type OrderOf<'q, B> = <<B as Backend>::RawQueue as RawQueue<B>>::Order<'q>;
/// A wait list translated for a backend's queue.
pub type WaitsOf<'e, B> = Waits<<<B as Backend>::RawQueue as RawQueue<B>>::RawWait<'e>>;

/// A wait list translated for `queue`: what the backend must wait on
/// (`RawQueue::wait_raw` for each event), and the engine's view of the same
/// commands. An in-order queue's own earlier commands are still passed on,
/// although the queue runs them first anyway: a backend whose waits carry
/// failure (OpenCL's, native CPU's) fails a command whose wait failed.
pub fn translate<'e, B: Backend>(queue: &Queue<B>, events: Events<'e, B>) -> UrResult<WaitsOf<'e, B>> {
    let mut waits = Waits::none();
    for event in events.iter() {
        if let Some(raw) = B::RawQueue::wait_raw(queue, event)? {
            waits.push_event(raw, event, &queue.context);
        }
    }
    Ok(waits)
}

/// Submits one command to `queue` after `events`; a barrier also holds
/// back every later command. `append` puts it on the driver's queue under
/// the queue's order, after the waits, as node `Node::Given` of the graph
/// (or `Node::Untracked` where the queue records nothing), and returns what
/// it gave (the command's event, when one was asked for).
pub fn submit<'q, 'e, B: Backend, T>(
    queue: &'q Queue<B>,
    barrier: bool,
    events: Events<'e, B>,
    append: impl FnOnce(OrderOf<'q, B>, WaitsOf<'e, B>, Node<'static>) -> UrResult<T>,
) -> UrResult<T> {
    // An empty list is everything before: the driver's barrier waits for
    // all earlier work. A list the translation emptied (its events done,
    // or of another context) is recorded as the list it was: the engine
    // may know less than the queue enforces, never more.
    let on_all = events.is_empty();
    let waits = translate(queue, events)?;
    let order = B::RawQueue::command_order(queue)?;
    let node = match B::RawQueue::records(queue) {
        true => {
            let stamp = record_new(queue.context.engine.dag(), &queue.lane, barrier, on_all, &waits.stamps);
            Node::Given { stamp, deps: &[], on_device: true }
        }
        false => Node::Untracked,
    };
    let outcome = append(order, waits, node);
    if let (Err(_), Node::Given { stamp, .. }) = (&outcome, node) {
        B::RawQueue::abandon(queue, stamp);
    }
    outcome
}
