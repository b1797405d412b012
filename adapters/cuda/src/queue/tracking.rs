//! Completion of a queue's commands, for the shared async pool engine
//! (`ur_core::engine`).
//!
//! Completion comes from CUDA events ([`Trackers`], over the core's
//! `engine::Tracker`): on an in-order queue a stream event recorded after
//! command `s` completes every command up to `s`, so a queue records one
//! every `engine::completion::TRACK_EVERY` commands (user events count too);
//! on an out-of-order queue each command gets its own. When the engine
//! makes an allocation wait for a command of another queue (a pending free),
//! the adapter waits on an event covering that command, recording one if
//! none exists yet.

use crate::driver::{CUstream, CuEvent};
use crate::context::Context;
use crate::event::Event;
use std::sync::Arc;
use ur_core::engine::{Completion, Cover, Progress, Seq, Stamp, Tracker};

impl Completion for CuEvent {
    fn poll(&self) -> Progress {
        // An event the driver cannot query is looked at again later.
        match self.is_complete() {
            Ok(true) => Progress::Complete,
            _ => Progress::Pending,
        }
    }

    fn wait(&self) {
        let _ = self.synchronize();
    }
}

/// One queue's lane and the CUDA events that tell the engine how far it has
/// completed, oldest first (events are made only when one is wanted, since
/// each costs a driver call).
pub type Trackers = Tracker<Arc<CuEvent>>;

/// An event whose completion implies that of command `seq`, or `None` when
/// the command has completed. On an in-order lane without one, a new event
/// is recorded on `stream` now: `seq`'s work is already on the stream (the
/// caller saw the queue publish it). It is filed under `seq`, not the
/// lane's tail, whose work may still be being enqueued.
pub fn event_covering(
    trackers: &mut Trackers,
    seq: Seq,
    stream: CUstream,
    fresh: impl FnOnce() -> Option<CuEvent>,
) -> Option<Arc<CuEvent>> {
    if seq == 0 {
        return None;
    }
    match trackers.cover(seq) {
        Some(Cover::By(e)) => Some(e.clone()),
        Some(_) => None,
        None if trackers.lane().is_in_order() => {
            let event = Arc::new(fresh()?);
            event.record(stream).ok()?;
            trackers.push(seq, event.clone());
            Some(event)
        }
        None => None,
    }
}

/// The stamps of a wait list's events that `context`'s graph knows
/// (`Event::stamp_in`): events recorded before tracking began, and other
/// contexts' events, cannot order this context's engine memory.
pub fn stamps_of(context: &Context, events: &[&Event]) -> Vec<Stamp> {
    events.iter().filter_map(|e| e.stamp_in(context)).collect()
}
