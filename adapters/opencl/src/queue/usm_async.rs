//! Stream-ordered USM (`urEnqueueUSM{Device,Shared,Host}AllocExp`,
//! `urEnqueueUSMFreeExp`, written once in `ur_core::queue::usm_async`):
//! how this adapter runs the command the engine records for one
//! (`RawQueue::enqueue_recorded` in `mod.rs`).
//!
//! The engine picks the block and says what the command must wait for; the
//! adapter turns that into OpenCL commands: none either when,
//! on an in-order queue, it waits only on that queue's own commands (the
//! previous command's event serves, when it has one, see `shared_event`); else a marker
//! (a one-byte fill on out-of-order queues, see `enqueue_command`; a zeroing
//! fill for zero-initialising pools) behind the wait list and the engine's
//! extra dependencies, whose event is the command's. Deciding and
//! enqueueing happen under the queue's order lock, so that the engine's
//! sequence numbers follow the OpenCL queue. A block whose free another
//! queue is still enqueueing may be handed out with that free as a
//! dependency before its event exists: waiting for that queue (whose order
//! lock its enqueuer holds) covers it.

use super::{completed_cl, cover_after, Cover, Queue, Waits};
use crate::context::{self, Context, Covering};
use crate::driver;
use crate::memory;
use crate::conv::ClResultExt;
use cl3::ext as sys;
use std::ffi::c_void;
use std::sync::Arc;
use sys::{cl_event, cl_int};
use ur_core::engine::Stamp;
use ur_core::*;

/// Adds to `waits` an event for each of the engine's extra dependencies
/// that has not completed; their queues are flushed, as OpenCL needs for
/// progress across queues. A dependency whose event is unknown is waited
/// for on the host.
pub(super) fn add_dependencies(ctx: &Context, queue: &Queue, deps: &[Stamp], waits: &mut Vec<cl_event>) -> UrResult<Vec<opencl3::event::Event>> {
    let mut held = Vec::new();
    for &d in deps {
        match context::covering(ctx, d) {
            Covering::Event(e, owner) => {
                if let Some(owner) = owner.filter(|o| !std::ptr::eq(Arc::as_ptr(o), queue)) {
                    owner.raw.cl.flush().ur()?;
                }
                waits.push(e.get());
                held.push(e);
            }
            Covering::Done => {}
            // This queue's own commands all have their events (its order
            // lock is held); another queue's is being enqueued right now.
            Covering::Unknown(owner) if std::ptr::eq(Arc::as_ptr(&owner), queue) => {}
            Covering::Unknown(_) => context::wait_for_stamp(ctx, d),
        }
    }
    Ok(held)
}

/// The command of an allocation or free that the engine gave a node: a
/// zeroing fill of `zero` bytes at `ptr`, or a marker.
///
/// On an out-of-order queue the marker is a one-byte fill of the context's
/// scratch word instead: PoCL 3.1 slows down without bound on chains of
/// markers with wait lists in out-of-order queues (200 chained markers cost
/// 38 µs each, 800 cost 1.6 ms each, 3000 cost 15 ms each, where as many
/// chained one-byte fills cost 15, 8 and 6 µs), and an alloc -> use -> free
/// -> alloc chain is exactly that.
pub(super) fn enqueue_command(
    ctx: &Context,
    queue: &Queue,
    ptr: *mut c_void,
    zero: Option<usize>,
    waits: &[cl_event],
    event: *mut cl_event,
) -> Result<(), cl_int> {
    match (zero, queue.raw.out_of_order.then(|| context::scratch(ctx)).flatten()) {
        (Some(bytes), _) => memory::enqueue_fill(ctx, queue.raw.cl.get(), ptr, &[0u8], bytes, waits, event),
        (None, Some(word)) => memory::enqueue_fill(ctx, queue.raw.cl.get(), word, &[0u8], 1, waits, event),
        (None, None) => driver::marker(queue.raw.cl.get(), waits, event),
    }
}

/// An allocation or free (node `stamp`) with nothing to run needs no
/// marker (which costs the runtime a command) when:
/// - on an in-order queue, its wait list and extra dependencies name only
///   this queue's earlier commands (or finished ones): it is complete as
///   soon as the queue's previous command is, and an event covering that
///   one serves as its own. This is what libsycl asks for on an in-order
///   queue (an event, waiting on the previous command's);
/// - on an out-of-order queue, everything it waits for has completed: it
///   completes at once (an alloc -> fill -> free chain ordered by events,
///   whose fills ran on the host).
///
/// `None` otherwise, or when no event can stand for it.
pub(super) fn shared_cover(ctx: &Context, queue: &Queue, waits: &Waits, deps: &[Stamp], stamp: Stamp) -> Option<Cover> {
    if waits.unstamped {
        return None;
    }
    let dag = ctx.engine.dag();
    let own = |s: &Stamp| s.lane == queue.lane.id();
    if !queue.lane.is_in_order() {
        // Out of order only what it waits for orders it: when all of that
        // has completed, so has the command.
        let done = waits.stamps.iter().chain(deps).all(|s| dag.is_complete(*s));
        return (done && !queue.is_profiling() && completed_cl(queue).is_some()).then_some(Cover::Done);
    }
    let waits_own = waits.stamps.iter().all(|s| own(s) || dag.is_complete(*s));
    let deps_own = deps.iter().all(|d| own(d) || matches!(context::covering(ctx, *d), Covering::Done));
    if !waits_own || !deps_own {
        return None;
    }
    cover_after(queue, stamp.seq - 1)
}

/// The one reference of `event` that [`track`](super::track) takes over.
pub(crate) fn into_raw(event: opencl3::event::Event) -> cl_event {
    let raw = event.get();
    std::mem::forget(event);
    raw
}
