//! `urEventSetCallback`: completion learned from the driver, callbacks run
//! by one dispatcher thread per process.
//!
//! For an event still in flight, one of its GPU's callback streams waits
//! for the event's CUDA event (`cuStreamWaitEvent`) and then runs
//! [`completed_on_device`] (`cuLaunchHostFunc`). A driver thread runs that
//! host function, where CUDA calls are forbidden, so it only moves the
//! callback onto the dispatcher's queue. The dispatcher thread makes the
//! user's call, from where the callback may call UR freely (wait, enqueue,
//! release the event). An event complete already goes to the queue at
//! once; when the driver refuses the wait or the launch, the dispatcher
//! waits for the event itself before the call.
//!
//! A pending callback holds a reference of its event, so the event lives
//! until the user's call has returned even if the user released it
//! meanwhile; the dispatcher lets it go afterwards, which may free the event
//! (and its queue) there, never on a driver thread.
//!
//! Shutdown: the dispatcher is a detached thread, which does not keep the
//! process from exiting. Once a callback has been registered, the library
//! is pinned in memory (`RTLD_NODELETE`): the dispatcher's code and the
//! host functions the driver still holds must stay mapped even if a
//! loader unloads the adapter after `urAdapterRelease`.

use super::event::Event;
use crate::conv::CuExt;
use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use ur_core::log;
use ur_core::*;

/// The user's function, as `urEventSetCallback` received it.
pub type Notify = unsafe extern "C" fn(ur_event_handle_t, ur_execution_info_t, *mut c_void);

/// One registered callback, from registration to the user's call.
struct Pending {
    /// Kept alive until the user's call has returned.
    event: Arc<Event>,
    notify: Notify,
    user_data: usize,
    /// The dispatcher must wait for the event itself: the driver was not
    /// asked to tell its completion.
    wait_first: bool,
}

/// Callbacks whose event has completed (or that the dispatcher must wait
/// for), oldest first. A leaf lock: the host function takes it on a driver
/// thread, so nothing may be waited for while it is held.
static DUE: Mutex<VecDeque<Pending>> = Mutex::new(VecDeque::new());
static DUE_CHANGED: Condvar = Condvar::new();

/// Whether the dispatcher thread runs (it never stops once started).
static DISPATCHER: Mutex<bool> = Mutex::new(false);

fn due() -> MutexGuard<'static, VecDeque<Pending>> {
    DUE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Calls `notify` once `event` has completed, from the dispatcher thread.
/// `OUT_OF_RESOURCES` when that thread cannot be started; the callback is
/// then not registered.
pub fn register(event: Arc<Event>, notify: Notify, user_data: *mut c_void) -> UrResult {
    start_dispatcher()?;
    let mut pending = Pending {
        event,
        notify,
        user_data: user_data as usize,
        wait_first: false,
    };
    match pending.event.is_complete() {
        Ok(true) => {}
        Ok(false) => match after_event_on_device(pending) {
            Ok(()) => return Ok(()),
            Err((back, why)) => {
                log::warning(&format!(
                    "event callback: the driver refused to run it on completion ({why:?}); \
                     the dispatcher waits for the event instead"
                ));
                pending = back;
                pending.wait_first = true;
            }
        },
        Err(why) => {
            log::warning(&format!(
                "event callback: querying the event failed ({why:?}); the dispatcher waits for it"
            ));
            pending.wait_first = true;
        }
    }
    hand_over(pending);
    Ok(())
}

/// Puts `pending` on a callback stream of the event's GPU, behind a wait
/// for its CUDA event. On failure it comes back with the reason.
fn after_event_on_device(pending: Pending) -> Result<(), (Pending, ur_result_t)> {
    // Our own reference: the stream below is borrowed from the event's
    // device while `pending` moves to the driver.
    let event = pending.event.clone();
    let (Some(done), Some(device)) = (event.cu_event(), event.device()) else {
        // Nothing to wait on: `is_complete` said complete already.
        return Err((pending, UR_RESULT_ERROR_INVALID_EVENT));
    };
    let stream = match device.callback_stream(event.stream) {
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
/// that could release the event: it only hands the callback over.
unsafe extern "C" fn completed_on_device(token: *mut c_void) {
    // SAFETY: `token` is the `Box<Pending>` that `after_event_on_device`
    // leaked for this launch, and the driver runs each host function once.
    let pending = unsafe { Box::from_raw(token.cast::<Pending>()) };
    hand_over(*pending);
}

/// Queues a callback for the dispatcher. Never drops it (dropping could
/// release the event, a CUDA call): the queue is static, so it outlives
/// every caller, the driver's threads included.
fn hand_over(pending: Pending) {
    due().push_back(pending);
    DUE_CHANGED.notify_one();
}

/// Starts the dispatcher thread unless it runs already.
fn start_dispatcher() -> UrResult {
    let mut running = DISPATCHER.lock().unwrap_or_else(|e| e.into_inner());
    if *running {
        return Ok(());
    }
    pin_library();
    std::thread::Builder::new()
        .name("ur-cuda-callbacks".into())
        .spawn(dispatch)
        .map_err(|e| {
            log::error(&format!("event callbacks: cannot start their thread: {e}"));
            UR_RESULT_ERROR_OUT_OF_RESOURCES
        })?;
    *running = true;
    Ok(())
}

/// The dispatcher thread: makes each due callback's call, oldest first.
fn dispatch() {
    loop {
        let pending = {
            let mut queue = due();
            loop {
                match queue.pop_front() {
                    Some(p) => break p,
                    None => queue = DUE_CHANGED.wait(queue).unwrap_or_else(|e| e.into_inner()),
                }
            }
        };
        // Our own code panicking (a poisoned lock, say) must not end the
        // thread that every later callback needs.
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(pending)));
        if ran.is_err() {
            log::error("event callback: the dispatcher caught a panic; that callback is lost");
        }
    }
}

fn run(pending: Pending) {
    let event = &pending.event;
    if pending.wait_first {
        if let Err(e) = event.wait() {
            log::error(&format!(
                "event callback: waiting for the event failed ({e:?}); calling it anyway"
            ));
        }
    } else {
        // What a host wait would tell the engine.
        event.report_complete();
    }
    // SAFETY: the user registered this function and data for this event,
    // which stays alive during the call (`pending` holds it).
    unsafe {
        (pending.notify)(
            event.handle(),
            UR_EXECUTION_INFO_COMPLETE,
            pending.user_data as *mut c_void,
        )
    };
    // Dropping `pending` may release the event, here, after the call.
}

/// Keeps this library mapped until the process exits: the dispatcher
/// thread never ends, and the driver may still hold host functions of ours.
/// `dlclose` of the adapter then only drops the loader's reference.
fn pin_library() {
    // SAFETY: `dladdr` only reads the address of one of our functions and
    // fills `info` (all zeroes is a valid `Dl_info`: null pointers);
    // `dlopen` with RTLD_NOLOAD loads nothing, it marks the library that is
    // loaded already, the one `dli_fname` names, as never to be unloaded.
    let pinned = unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        libc::dladdr(completed_on_device as *const c_void, &mut info) != 0
            && !info.dli_fname.is_null()
            && !libc::dlopen(
                info.dli_fname,
                libc::RTLD_NOW | libc::RTLD_NOLOAD | libc::RTLD_NODELETE,
            )
            .is_null()
    };
    if !pinned {
        log::warning(
            "event callbacks: could not pin the adapter library; \
             unloading it with callbacks pending would be unsafe",
        );
    }
}

#[cfg(test)]
mod tests {
    //! Without a GPU only events complete when made reach the dispatcher
    //! here, straight or through the host function called by hand.

    use super::*;
    use crate::core::context::Context;
    use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
    use std::sync::Weak;
    use std::time::{Duration, Instant};

    fn eventually(done: impl Fn() -> bool) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !done() {
            if Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        true
    }

    fn complete_event() -> Arc<Event> {
        Event::complete_for_test(Context::new(Vec::new()).unwrap())
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
            || std::thread::current().name() != Some("ur-cuda-callbacks")
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
        start_dispatcher().unwrap();
        let event = complete_event();
        let released = Arc::downgrade(&event);
        let pending = Pending {
            event,
            notify: note_handed,
            user_data: 0,
            wait_first: false,
        };
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
