//! How a queue's commands tell the shared async pool engine that they have
//! completed: the `cl_event`s each queue keeps ([`Trackers`]).
//!
//! The OpenCL side of the shared async pool engine (`ur_core::engine`).
//!
//! The engine decides which freed block an asynchronous allocation may take.
//! From this adapter it needs raw memory
//! ([`ClMemory`](crate::memory::ClMemory), over the same Intel USM or SVM
//! calls as `urUSM*Alloc`), every command of a context recorded in its
//! graph (`queue::submit` records each one), and word of their completion,
//! which comes from the commands' `cl_event`s ([`Trackers`]): polled now and
//! then as commands are submitted, and settled at host
//! synchronisation points (`urQueueFinish`, `urEventWait`). Completion is
//! never reported from a runtime callback thread, so the engine's releases
//! (blocking frees among them) always run on a user thread.
//!
//! OpenCL is asked for the events of only some commands ([`Trackers`]);
//! where an event of the newest command is needed and it has none
//! (`UR_QUEUE_INFO_EMPTY`, the engine's extra dependencies, a released
//! queue), a marker is enqueued for it, so that those are still answered
//! without a host wait.

use crate::driver;
use cl3::ext as sys;
use sys::{cl_event, cl_int};
use ur_core::engine::{Completion, Cover, Progress, Seq, Tracker};

/// A command's `cl_event`, as the engine's completion tracker sees it.
pub struct ClEvent(pub opencl3::event::Event);

impl Completion for ClEvent {
    fn poll(&self) -> Progress {
        let status = cl3::event::get_event_data(self.0.get(), sys::CL_EVENT_COMMAND_EXECUTION_STATUS);
        match driver::value::<cl_int>(status) {
            Ok(sys::CL_COMPLETE) => Progress::Complete,
            Ok(s) if s < 0 => Progress::Failed,
            Ok(_) => Progress::Pending,
            // An event the runtime cannot describe is not waited for again.
            Err(_) => Progress::Failed,
        }
    }

    fn wait(&self) {
        let _ = self.0.wait();
    }
}

/// A new reference to a `cl_event`.
pub fn retained(event: cl_event) -> opencl3::event::Event {
    // SAFETY: a live event; the new reference is owned by the wrapper.
    let _ = unsafe { cl3::event::retain_event(event) };
    opencl3::event::Event::new(event)
}

/// One queue's lane and the events that tell the engine how far its
/// commands have completed (`ur_core::engine::Tracker`). OpenCL is asked
/// for a command's event only when the caller wants it or the tracker keeps
/// it: out of order every command, in order every 32nd (a `cl_event` costs
/// Intel's CPU runtime bookkeeping on every command, see the README). The
/// newest command may thus have no event: `queue::cover_tail` enqueues a
/// marker where one is needed.
pub type Trackers = Tracker<ClEvent>;

/// Keeps `event`, of command `seq` just submitted, which
/// `wants_completion` asked for (or a marker's covering `seq`); looks at
/// the older ones now and then.
pub fn keep(trackers: &mut Trackers, seq: Seq, event: opencl3::event::Event) {
    trackers.push(seq, ClEvent(event));
    trackers.poll_if_due(drop);
}

/// An event whose completion implies that of command `seq`, or `None`
/// when it has completed. `Err` when no event of it is known (the caller
/// then waits on the host).
pub fn event_covering(trackers: &Trackers, seq: Seq) -> Result<Option<opencl3::event::Event>, ()> {
    match trackers.cover(seq) {
        Some(Cover::By(e)) => Ok(Some(retained(e.0.get()))),
        Some(_) => Ok(None),
        None => Err(()),
    }
}
