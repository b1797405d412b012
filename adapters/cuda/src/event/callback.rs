//! `urEventSetCallback`: completion learned from the driver, callbacks run
//! by the core's dispatcher thread (`ur_core::event_callback`).
//!
//! For an event still in flight, one of its GPU's callback streams waits
//! for the event's CUDA event (`cuStreamWaitEvent`) and then runs
//! [`completed_on_device`] (`cuLaunchHostFunc`). A driver thread runs that
//! host function, where CUDA calls are forbidden, so it only hands the
//! callback over to the dispatcher's queue. The dispatcher thread makes the
//! user's call, from where the callback may call UR freely (wait, enqueue,
//! release the event). An event complete already is handed over at once;
//! when the driver refuses the wait or the launch, the dispatcher watches
//! the event itself (`cuEventQuery`) before the call.
//!
//! A pending callback holds a reference of its event, so the event lives
//! until the user's call has returned even if the user released it
//! meanwhile; the dispatcher lets it go afterwards, which may free the event
//! (and its queue) there, never on a driver thread.
//!
//! Shutdown: the dispatcher pins the adapter library in memory
//! (`RTLD_NODELETE`) when it starts, which keeps the host functions the
//! driver still holds mapped too.

use super::Event;
use crate::conv::CuExt;
use std::ffi::c_void;
use std::sync::Arc;
use ur_core::event_callback::{self as dispatcher, CallbackEvent, Pending};
use ur_core::log;
use ur_core::*;

/// The user's function, as `urEventSetCallback` received it.
pub use dispatcher::Notify;

/// The event a pending callback holds. A newtype: `CallbackEvent` and the
/// core's `Event` are both the core's, so the impl needs a type of ours.
struct EventRef(Arc<Event>);

impl CallbackEvent for EventRef {
    fn handle(&self) -> ur_event_handle_t {
        self.0.handle()
    }

    fn is_complete(&self) -> UrResult<bool> {
        super::is_complete(&self.0)
    }

    fn wait(&self) -> UrResult {
        super::wait(&self.0)
    }

    /// The host function ran: what a host wait would tell the engine.
    fn told_complete(&self) {
        super::report_complete(&self.0);
    }
}

/// Calls `notify` once `event` has completed, from the dispatcher thread.
/// `OUT_OF_RESOURCES` when that thread cannot be started; the callback is
/// then not registered.
pub fn register(event: Arc<Event>, notify: Notify, user_data: *mut c_void) -> UrResult {
    dispatcher::start()?;
    let pending = Pending::new(EventRef(event.clone()), notify, user_data);
    match super::is_complete(&event) {
        Ok(true) => dispatcher::hand_over(pending),
        Ok(false) => {
            if let Err((back, why)) = after_event_on_device(&event, pending) {
                log::warning(&format!(
                    "event callback: the driver refused to run it on completion ({why:?}); \
                     the dispatcher watches the event instead"
                ));
                dispatcher::watch(back);
            }
        }
        Err(why) => {
            log::warning(&format!(
                "event callback: querying the event failed ({why:?}); the dispatcher watches it"
            ));
            dispatcher::watch(pending);
        }
    }
    Ok(())
}

/// Puts `pending` (which holds `event`) on a callback stream of the event's
/// GPU, behind a wait for its CUDA event. On failure it comes back with the
/// reason.
fn after_event_on_device(event: &Event, pending: Pending) -> Result<(), (Pending, ur_result_t)> {
    let (Some(done), Some(device)) = (event.raw.cu_event(), super::device(event)) else {
        // Nothing to wait on: `is_complete` said complete already.
        return Err((pending, UR_RESULT_ERROR_INVALID_EVENT));
    };
    let stream = match device.raw.callback_stream(event.raw.stream) {
        Ok(s) => s,
        Err(e) => return Err((pending, e)),
    };
    // Held across both calls, so that this callback's host function comes
    // right after its own wait, not behind another thread's wait too. Both
    // only enqueue; neither waits for the GPU or for a host function.
    let stream = stream.lock().unwrap_or_else(|e| e.into_inner());
    if let Err(e) = stream.wait(done.raw()).cu() {
        drop(stream);
        return Err((pending, e));
    }
    let token = Box::into_raw(Box::new(pending));
    // SAFETY: `completed_on_device` makes no CUDA call and does not unwind;
    // it takes `token` back exactly once, as the driver calls it once.
    let launched = unsafe { stream.launch_host_fn(completed_on_device, token.cast()) }.cu();
    drop(stream);
    launched.map_err(|e| {
        // SAFETY: the launch failed, so the driver never runs the host
        // function: `token` is still ours, from `Box::into_raw` above.
        (*unsafe { Box::from_raw(token) }, e)
    })
}

/// The host function behind a callback's wait: runs on a driver thread once
/// the event has completed. No CUDA call here (a driver rule), and nothing
/// that could release the event: it only hands the callback over (the
/// dispatcher's queue is static and `hand_over` drops nothing).
unsafe extern "C" fn completed_on_device(token: *mut c_void) {
    // SAFETY: `token` is the `Box<Pending>` that `after_event_on_device`
    // leaked for this launch, and the driver runs each host function once.
    let pending = unsafe { Box::from_raw(token.cast::<Pending>()) };
    dispatcher::hand_over(*pending);
}

#[cfg(test)]
mod tests {
    //! Without a GPU only events complete when made reach the dispatcher
    //! here, straight or through the host function called by hand.

    use super::*;
    use crate::context::new_context;
    use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
    use std::sync::Weak;
    use std::time::Duration;

    fn eventually(done: impl Fn() -> bool) -> bool {
        ur_core::poll::eventually(Duration::from_secs(10), done)
    }

    fn complete_event() -> Arc<Event> {
        crate::event::complete_for_test(new_context(Vec::new(), None).unwrap())
    }

    const MANY: usize = 200;
    static CALLS: [AtomicU32; MANY] = [const { AtomicU32::new(0) }; MANY];
    static HANDLES: [AtomicUsize; MANY] = [const { AtomicUsize::new(0) }; MANY];
    static ELSEWHERE: AtomicBool = AtomicBool::new(false);

    unsafe extern "C" fn count(
        event: ur_event_handle_t,
        on: ur_execution_info_t,
        data: *mut c_void,
    ) {
        let i = data as usize;
        HANDLES[i].store(event as usize, Ordering::SeqCst);
        if on != UR_EXECUTION_INFO_COMPLETE
            || std::thread::current().name() != Some(dispatcher::THREAD_NAME)
        {
            ELSEWHERE.store(true, Ordering::SeqCst);
        }
        CALLS[i].fetch_add(1, Ordering::SeqCst);
    }

    #[test]
    fn each_callback_runs_once_on_the_dispatcher_with_its_data() {
        let events: Vec<Arc<Event>> = (0..MANY).map(|_| complete_event()).collect();
        let released: Vec<Weak<Event>> = events.iter().map(Arc::downgrade).collect();
        let handles: Vec<usize> = events.iter().map(|e| e.handle() as usize).collect();
        for (i, event) in events.into_iter().enumerate() {
            register(event, count, i as *mut c_void).unwrap();
        }
        assert!(eventually(|| CALLS
            .iter()
            .all(|c| c.load(Ordering::SeqCst) >= 1)));
        // The dispatcher lets each event go after its call.
        assert!(eventually(|| released
            .iter()
            .all(|w| w.upgrade().is_none())));
        for i in 0..MANY {
            assert_eq!(CALLS[i].load(Ordering::SeqCst), 1, "callback {i}");
            assert_eq!(
                HANDLES[i].load(Ordering::SeqCst),
                handles[i],
                "callback {i}"
            );
        }
        assert!(
            !ELSEWHERE.load(Ordering::SeqCst),
            "a callback ran off the dispatcher"
        );
    }

    static HANDED: AtomicU32 = AtomicU32::new(0);

    unsafe extern "C" fn note_handed(_: ur_event_handle_t, _: ur_execution_info_t, _: *mut c_void) {
        HANDED.fetch_add(1, Ordering::SeqCst);
    }

    /// What the driver does once a callback stream reaches the host
    /// function: call it, on a thread of its own.
    #[test]
    fn the_host_function_hands_the_callback_to_the_dispatcher() {
        dispatcher::start().unwrap();
        let event = complete_event();
        let released = Arc::downgrade(&event);
        let pending = Pending::new(EventRef(event), note_handed, null_data());
        let token = Box::into_raw(Box::new(pending)) as usize;
        // SAFETY: a token made as `after_event_on_device` makes it, used once.
        std::thread::spawn(move || unsafe { completed_on_device(token as *mut c_void) })
            .join()
            .unwrap();
        assert!(eventually(|| HANDED.load(Ordering::SeqCst) == 1));
        assert!(eventually(|| released.upgrade().is_none()));
    }

    static NESTED: [AtomicU32; 2] = [const { AtomicU32::new(0) }; 2];

    /// The first callback takes its own reference of the event from the
    /// handle (as `urEventRetain` would), registers a second callback with
    /// it, and returns: the dispatcher must not hold its queue meanwhile.
    unsafe extern "C" fn register_again(
        event: ur_event_handle_t,
        _: ur_execution_info_t,
        _: *mut c_void,
    ) {
        NESTED[0].fetch_add(1, Ordering::SeqCst);
        // SAFETY: `event` is the handle of a live event (the dispatcher
        // holds it during this call).
        let event = ur_core::handle::arc_of(unsafe { ur_core::handle::object_of::<Event>(event) });
        register(event, second, null_data()).unwrap();
    }

    unsafe extern "C" fn second(_: ur_event_handle_t, _: ur_execution_info_t, _: *mut c_void) {
        NESTED[1].fetch_add(1, Ordering::SeqCst);
    }

    fn null_data() -> *mut c_void {
        std::ptr::null_mut()
    }

    #[test]
    fn a_callback_may_register_another_on_its_event() {
        let event = complete_event();
        let released = Arc::downgrade(&event);
        register(event, register_again, null_data()).unwrap();
        assert!(eventually(|| NESTED[1].load(Ordering::SeqCst) == 1));
        assert_eq!(NESTED[0].load(Ordering::SeqCst), 1);
        assert!(eventually(|| released.upgrade().is_none()));
    }
}
