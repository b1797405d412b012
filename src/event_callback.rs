//! `urEventSetCallback` for adapters that do not run callbacks themselves:
//! one dispatcher thread per adapter library makes every user's call.
//!
//! A backend hands a callback over in one of two ways:
//!
//! - [`hand_over`]: the event has completed (the backend knows it, or its
//!   driver told it, as CUDA's host function after a stream wait does). The
//!   dispatcher calls at once, oldest first. `hand_over` takes only the
//!   queue's lock and drops nothing, so a driver thread may call it.
//! - [`watch`]: the dispatcher must find out itself. It asks each watched
//!   event, without blocking, whether it has completed, and calls those
//!   that have, in registration order (see `dispatch` for the order when
//!   events complete during a look).
//!
//! Why polling rather than one blocking wait per event: a blocking wait in
//! the one dispatcher would hold every later callback behind an event that
//! may never complete (a Level Zero event made from a native handle that
//! its owner never signals), and a thread per event (the earlier design)
//! makes a thousand threads of a thousand callbacks. The dispatcher asks
//! again after a nap that doubles from [`FIRST_NAP`] up to [`LONGEST_NAP`]
//! while nothing changes, and goes back to the shortest whenever a callback
//! arrives or an event completes; with nothing watched it sleeps until a
//! callback arrives. The cost is a status query per watched event per nap
//! and a callback up to `LONGEST_NAP` late after a long idle wait.
//!
//! A pending callback holds its event (the backend's `Arc`), so the event
//! lives until the user's call has returned even if the user released it
//! meanwhile; the dispatcher lets it go after the call, which may free the
//! event there. The user's function runs with no lock of ours held: it may
//! wait, enqueue, release the event or register another callback.
//!
//! Shutdown: the dispatcher is a detached thread, which does not keep the
//! process from exiting. The core is linked into each adapter library, so
//! each adapter has its own queue and thread; when the thread starts, the
//! library holding this code (the adapter's) is pinned in memory
//! (`RTLD_NODELETE`): the thread's code, and any host function a driver
//! still holds, must stay mapped even if a loader unloads the adapter after
//! `urAdapterRelease`.

use crate::abi::*;
use crate::hal::Backend;
use crate::handle::handle_of;
use crate::log;
use crate::UrResult;
use std::collections::VecDeque;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use crate::lock_order::{Condvar, Mutex, MutexGuard, Rank};
use std::sync::Arc;
use std::time::Duration;

/// The user's function, as `urEventSetCallback` received it.
pub type Notify = unsafe extern "C" fn(ur_event_handle_t, ur_execution_info_t, *mut c_void);

/// The name of the dispatcher thread.
pub const THREAD_NAME: &str = "ur-callbacks";

/// The first nap between two rounds of status queries of watched events.
pub const FIRST_NAP: Duration = Duration::from_micros(50);
/// The longest nap between two rounds of status queries.
pub const LONGEST_NAP: Duration = Duration::from_millis(2);

/// What the dispatcher needs of a backend's event. Implemented by the
/// backend's event type; a pending callback holds it in an `Arc`.
pub trait CallbackEvent: Send + Sync + 'static {
    /// The handle the user's function receives.
    fn handle(&self) -> ur_event_handle_t;
    /// Whether the command has completed (or failed), without blocking.
    /// An error counts as completion: the dispatcher then waits (see
    /// [`CallbackEvent::wait`]) and calls.
    fn is_complete(&self) -> UrResult<bool>;
    /// Blocks until the command has completed, doing what a host wait does
    /// in the backend. The dispatcher calls it for a watched event once
    /// `is_complete` said yes, so it returns at once then.
    fn wait(&self) -> UrResult;
    /// The event was handed over as complete ([`hand_over`]): what a host
    /// wait would tell the backend. Runs on the dispatcher before the call.
    fn told_complete(&self) {}
}

impl<E: CallbackEvent + ?Sized> CallbackEvent for Arc<E> {
    fn handle(&self) -> ur_event_handle_t {
        (**self).handle()
    }
    fn is_complete(&self) -> UrResult<bool> {
        (**self).is_complete()
    }
    fn wait(&self) -> UrResult {
        (**self).wait()
    }
    fn told_complete(&self) {
        (**self).told_complete()
    }
}

/// One registered callback, from registration to the user's call.
pub struct Pending {
    /// Kept alive until the user's call has returned.
    event: Box<dyn CallbackEvent>,
    notify: Notify,
    /// A pointer is not `Send`: the user's data travels as its address.
    user_data: usize,
    /// Handed over by [`watch`]: the dispatcher finds out when the event
    /// completes.
    watched: bool,
}

impl Pending {
    /// `event` is what keeps the backend's event alive (its `Arc`).
    pub fn new(event: impl CallbackEvent, notify: Notify, user_data: *mut c_void) -> Pending {
        Pending { event: Box::new(event), notify, user_data: user_data as usize, watched: false }
    }
}

/// Callbacks handed over and not yet taken by the dispatcher, oldest first.
/// A leaf lock: [`hand_over`] takes it on driver threads, so nothing is
/// taken or waited for while it is held.
static DUE: Mutex<VecDeque<Pending>> = Mutex::new(Rank::Leaf, VecDeque::new());
static DUE_CHANGED: Condvar = Condvar::new();

/// Whether the dispatcher thread runs (it never stops once started). Held
/// only to start it.
static STARTED: Mutex<bool> = Mutex::new(Rank::Leaf, false);

fn due() -> MutexGuard<'static, VecDeque<Pending>> {
    DUE.lock()
}

/// Starts the dispatcher thread unless it runs already, and pins the
/// library. `OUT_OF_RESOURCES` when the thread cannot be started: the
/// caller then registers nothing.
pub fn start() -> UrResult {
    let mut started = STARTED.lock();
    if *started {
        return Ok(());
    }
    pin_library();
    std::thread::Builder::new().name(THREAD_NAME.into()).spawn(dispatch).map_err(|e| {
        log::error(&format!("event callbacks: cannot start their thread: {e}"));
        UR_RESULT_ERROR_OUT_OF_RESOURCES
    })?;
    *started = true;
    Ok(())
}

/// Queues a callback whose event has completed. Never drops it (dropping
/// could release the event, a backend call a driver thread may not make):
/// the queue is static, so it outlives every caller. [`start`] first.
pub fn hand_over(mut pending: Pending) {
    pending.watched = false;
    queue(pending);
}

/// Queues a callback whose event the dispatcher must watch until it
/// completes. [`start`] first.
pub fn watch(mut pending: Pending) {
    pending.watched = true;
    queue(pending);
}

fn queue(pending: Pending) {
    due().push_back(pending);
    DUE_CHANGED.notify_one();
}

/// Starts the dispatcher and has it call `notify` once `event` has
/// completed ([`watch`]).
pub fn register(event: impl CallbackEvent, notify: Notify, user_data: *mut c_void) -> UrResult {
    start()?;
    watch(Pending::new(event, notify, user_data));
    Ok(())
}

/// An event as the dispatcher sees it, for the default
/// `RawEvent::set_callback`: completion from `status`, as a query would.
pub(crate) struct WatchedEvent<B: Backend>(pub Arc<crate::event::Event<B>>);

impl<B: Backend> CallbackEvent for WatchedEvent<B> {
    fn handle(&self) -> ur_event_handle_t {
        handle_of(&*self.0)
    }
    fn is_complete(&self) -> UrResult<bool> {
        Ok(matches!(self.0.status()?, UR_EVENT_STATUS_COMPLETE | UR_EVENT_STATUS_ERROR))
    }
    fn wait(&self) -> UrResult {
        self.0.wait()
    }
}

/// The dispatcher thread.
fn dispatch() {
    // Watched callbacks whose event had not completed at the last look,
    // in registration order. Only this thread sees them.
    let mut watched: Vec<Pending> = Vec::new();
    let mut arrived: VecDeque<Pending> = VecDeque::new();
    let mut nap = FIRST_NAP;
    loop {
        {
            let mut queue = due();
            while queue.is_empty() {
                if watched.is_empty() {
                    queue = DUE_CHANGED.wait(queue);
                } else {
                    let (back, timed_out) = DUE_CHANGED.wait_timeout(queue, nap);
                    queue = back;
                    if timed_out {
                        break;
                    }
                }
            }
            std::mem::swap(&mut *queue, &mut arrived);
        }
        let mut progress = !arrived.is_empty();
        for pending in arrived.drain(..) {
            if pending.watched {
                watched.push(pending);
            } else {
                call(pending);
            }
        }
        if !watched.is_empty() {
            // Looked at newest first: when events complete in registration
            // order (one in-order queue), each event older than one found
            // complete is found complete too, even if they complete during
            // the look; the calls then keep registration order.
            let mut done = vec![false; watched.len()];
            for (i, pending) in watched.iter().enumerate().rev() {
                done[i] = completed(pending);
            }
            let mut ready = Vec::new();
            for (pending, done) in std::mem::take(&mut watched).into_iter().zip(done) {
                if done {
                    ready.push(pending);
                } else {
                    watched.push(pending);
                }
            }
            progress |= !ready.is_empty();
            ready.into_iter().for_each(call);
        }
        nap = if progress { FIRST_NAP } else { (nap * 2).min(LONGEST_NAP) };
    }
}

/// Whether a watched callback's event has completed; a failed query counts
/// as completion (the wait before the call then reports it).
fn completed(pending: &Pending) -> bool {
    match catch_unwind(AssertUnwindSafe(|| pending.event.is_complete())) {
        Ok(Ok(done)) => done,
        Ok(Err(e)) => {
            log::warning(&format!("event callback: querying the event failed ({e:?}); waiting for it"));
            true
        }
        Err(_) => {
            log::error("event callback: querying the event panicked; waiting for it");
            true
        }
    }
}

/// Makes one user's call; our own code panicking (a poisoned lock, say)
/// must not end the thread every later callback needs.
fn call(pending: Pending) {
    if catch_unwind(AssertUnwindSafe(|| run(pending))).is_err() {
        log::error("event callback: the dispatcher caught a panic; that callback is lost");
    }
}

fn run(pending: Pending) {
    let event = &pending.event;
    if pending.watched {
        if let Err(e) = event.wait() {
            log::error(&format!("event callback: waiting for the event failed ({e:?}); calling it anyway"));
        }
    } else {
        event.told_complete();
    }
    // SAFETY: the user registered this function and data for this event,
    // which stays alive during the call (`pending` holds it).
    unsafe { (pending.notify)(event.handle(), UR_EXECUTION_INFO_COMPLETE, pending.user_data as *mut c_void) };
    // Dropping `pending` may release the event, here, after the call.
}

/// Keeps the library holding this code mapped until the process exits: the
/// dispatcher thread never ends, and a driver may still hold host functions
/// of the adapter. `dlclose` of the adapter then only drops the loader's
/// reference. The core is linked statically into each adapter, so the
/// library found here is the adapter's.
fn pin_library() {
    // SAFETY: all zeroes is a valid `Dl_info` (null pointers). `dladdr`
    // only reads the address of one of our functions and fills `info`;
    // `dlopen` with RTLD_NOLOAD loads nothing, it marks the library that is
    // loaded already, the one `dli_fname` names, as never to be unloaded;
    // `dli_fname` is a C string when `dladdr` succeeds.
    let pinned = unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        let found = libc::dladdr(dispatch as fn() as *const c_void, &mut info) != 0 && !info.dli_fname.is_null();
        let kept = found
            && !libc::dlopen(info.dli_fname, libc::RTLD_NOW | libc::RTLD_NOLOAD | libc::RTLD_NODELETE).is_null();
        kept.then(|| std::ffi::CStr::from_ptr(info.dli_fname).to_string_lossy().into_owned())
    };
    if let Some(name) = pinned {
        log::debug(&format!("event callbacks: {name} pinned in memory"));
    } else {
        log::warning("event callbacks: could not pin the adapter library; unloading it with callbacks pending would be unsafe");
    }
}

#[cfg(test)]
mod tests {
    //! The dispatcher is one per process here too: the tests share it, so
    //! each keeps its own statics and waits for its own callbacks only.

    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
    use std::sync::{Condvar, Mutex, Weak};

    fn eventually(done: impl Fn() -> bool) -> bool {
        crate::poll::eventually(Duration::from_secs(20), done)
    }

    /// What events complete by: several events behind one gate complete
    /// at once.
    #[derive(Default)]
    struct Gate {
        open: Mutex<bool>,
        opened: Condvar,
    }

    impl Gate {
        fn new(open: bool) -> Arc<Gate> {
            Arc::new(Gate { open: Mutex::new(open), opened: Condvar::new() })
        }
        fn open(&self) {
            *self.open.lock().unwrap() = true;
            self.opened.notify_all();
        }
        fn is_open(&self) -> bool {
            *self.open.lock().unwrap()
        }
    }

    /// An event that completes when the test says so. Its handle is its
    /// own address (the dispatcher never reads through it).
    struct TestEvent {
        gate: Arc<Gate>,
        told: AtomicBool,
        waited: AtomicBool,
    }

    impl TestEvent {
        fn new(done: bool) -> Arc<TestEvent> {
            TestEvent::behind(Gate::new(done))
        }
        fn behind(gate: Arc<Gate>) -> Arc<TestEvent> {
            Arc::new(TestEvent { gate, told: AtomicBool::new(false), waited: AtomicBool::new(false) })
        }
        fn complete(&self) {
            self.gate.open();
        }
        fn address(&self) -> usize {
            self as *const TestEvent as usize
        }
    }

    impl CallbackEvent for TestEvent {
        fn handle(&self) -> ur_event_handle_t {
            self.address() as ur_event_handle_t
        }
        fn is_complete(&self) -> UrResult<bool> {
            Ok(self.gate.is_open())
        }
        fn wait(&self) -> UrResult {
            let mut open = self.gate.open.lock().unwrap();
            while !*open {
                open = self.gate.opened.wait(open).unwrap();
            }
            self.waited.store(true, Ordering::SeqCst);
            Ok(())
        }
        fn told_complete(&self) {
            self.told.store(true, Ordering::SeqCst);
        }
    }

    /// What one callback saw.
    #[derive(Default)]
    struct Seen {
        calls: AtomicU32,
        handle: AtomicUsize,
        elsewhere: AtomicBool,
        /// The event had completed (per `done`) when called.
        early: AtomicBool,
        event: Mutex<Option<Arc<TestEvent>>>,
    }

    unsafe extern "C" fn record(event: ur_event_handle_t, on: ur_execution_info_t, data: *mut c_void) {
        // SAFETY: every test passes a leaked `Seen`.
        let seen = unsafe { &*(data as *const Seen) };
        seen.handle.store(event as usize, Ordering::SeqCst);
        if on != UR_EXECUTION_INFO_COMPLETE || std::thread::current().name() != Some(THREAD_NAME) {
            seen.elsewhere.store(true, Ordering::SeqCst);
        }
        if let Some(e) = &*seen.event.lock().unwrap() {
            if !e.gate.is_open() {
                seen.early.store(true, Ordering::SeqCst);
            }
        }
        seen.calls.fetch_add(1, Ordering::SeqCst);
    }

    fn leak_seen() -> &'static Seen {
        Box::leak(Box::default())
    }

    fn data(seen: &'static Seen) -> *mut c_void {
        seen as *const Seen as *mut c_void
    }

    fn threads() -> usize {
        std::fs::read_dir("/proc/self/task").map(|d| d.count()).unwrap_or(0)
    }

    #[test]
    fn each_callback_runs_once_on_the_dispatcher_with_its_data_then_lets_the_event_go() {
        const MANY: usize = 200;
        let events: Vec<Arc<TestEvent>> = (0..MANY).map(|i| TestEvent::new(i % 2 == 0)).collect();
        let released: Vec<Weak<TestEvent>> = events.iter().map(Arc::downgrade).collect();
        let handles: Vec<usize> = events.iter().map(|e| e.address()).collect();
        let seen: Vec<&'static Seen> = (0..MANY).map(|_| leak_seen()).collect();
        for (i, event) in events.iter().enumerate() {
            // A test-only second reference: `record` checks completion
            // through it, so it must not keep the event alive after.
            *seen[i].event.lock().unwrap() = Some(event.clone());
        }
        for (i, event) in events.iter().enumerate() {
            register(event.clone(), record, data(seen[i])).unwrap();
        }
        for e in &events {
            e.complete();
        }
        drop(events);
        assert!(eventually(|| seen.iter().all(|s| s.calls.load(Ordering::SeqCst) >= 1)));
        for s in &seen {
            s.event.lock().unwrap().take();
        }
        assert!(eventually(|| released.iter().all(|w| w.upgrade().is_none())), "an event outlived its call");
        for (i, s) in seen.iter().enumerate() {
            assert_eq!(s.calls.load(Ordering::SeqCst), 1, "callback {i}");
            assert_eq!(s.handle.load(Ordering::SeqCst), handles[i], "callback {i}");
            assert!(!s.elsewhere.load(Ordering::SeqCst), "callback {i} ran off the dispatcher");
            assert!(!s.early.load(Ordering::SeqCst), "callback {i} ran before its event completed");
        }
    }

    #[test]
    fn the_user_releasing_the_event_first_keeps_it_until_the_call() {
        let event = TestEvent::new(false);
        let gone = Arc::downgrade(&event);
        let seen = leak_seen();
        register(event.clone(), record, data(seen)).unwrap();
        drop(event);
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(seen.calls.load(Ordering::SeqCst), 0, "called before completion");
        let held = gone.upgrade().expect("the pending callback holds its event");
        held.complete();
        drop(held);
        assert!(eventually(|| seen.calls.load(Ordering::SeqCst) == 1));
        assert!(eventually(|| gone.upgrade().is_none()), "the event outlived its call");
    }

    #[test]
    fn a_handed_over_callback_is_told_complete_and_called_without_a_wait() {
        start().unwrap();
        let event = TestEvent::new(true);
        let seen = leak_seen();
        let pending = Pending::new(event.clone(), record, data(seen));
        // What a driver thread does in CUDA's host function.
        let token = Box::into_raw(Box::new(pending)) as usize;
        std::thread::spawn(move || {
            // SAFETY: the token made just above, used once.
            hand_over(*unsafe { Box::from_raw(token as *mut Pending) })
        })
        .join()
        .unwrap();
        assert!(eventually(|| seen.calls.load(Ordering::SeqCst) == 1));
        assert!(event.told.load(Ordering::SeqCst));
        assert!(!event.waited.load(Ordering::SeqCst));
        assert!(eventually(|| Arc::strong_count(&event) == 1));
    }

    static NESTED: [AtomicU32; 2] = [const { AtomicU32::new(0) }; 2];
    static NESTED_EVENT: Mutex<Option<Weak<TestEvent>>> = Mutex::new(None);

    /// Registers a second callback on its own event from inside the first:
    /// the dispatcher must hold no lock of its queue during the call.
    unsafe extern "C" fn register_again(_: ur_event_handle_t, _: ur_execution_info_t, _: *mut c_void) {
        NESTED[0].fetch_add(1, Ordering::SeqCst);
        let event = NESTED_EVENT.lock().unwrap().as_ref().and_then(Weak::upgrade).unwrap();
        register(event, second, std::ptr::null_mut()).unwrap();
    }

    unsafe extern "C" fn second(_: ur_event_handle_t, _: ur_execution_info_t, _: *mut c_void) {
        NESTED[1].fetch_add(1, Ordering::SeqCst);
    }

    #[test]
    fn a_callback_may_register_another_on_its_event() {
        let event = TestEvent::new(false);
        *NESTED_EVENT.lock().unwrap() = Some(Arc::downgrade(&event));
        let released = Arc::downgrade(&event);
        register(event.clone(), register_again, std::ptr::null_mut()).unwrap();
        event.complete();
        drop(event);
        assert!(eventually(|| NESTED[1].load(Ordering::SeqCst) == 1));
        assert_eq!(NESTED[0].load(Ordering::SeqCst), 1);
        assert!(eventually(|| released.upgrade().is_none()));
    }

    #[test]
    fn an_event_that_never_completes_holds_up_no_later_callback() {
        let stuck = TestEvent::new(false);
        let stuck_seen = leak_seen();
        register(stuck.clone(), record, data(stuck_seen)).unwrap();
        let later = TestEvent::new(false);
        let later_seen = leak_seen();
        register(later.clone(), record, data(later_seen)).unwrap();
        let done_seen = leak_seen();
        register(TestEvent::new(true), record, data(done_seen)).unwrap();
        assert!(eventually(|| done_seen.calls.load(Ordering::SeqCst) == 1));
        later.complete();
        assert!(eventually(|| later_seen.calls.load(Ordering::SeqCst) == 1));
        assert_eq!(stuck_seen.calls.load(Ordering::SeqCst), 0);
        // Let it go, so as not to leave it to later tests.
        stuck.complete();
        assert!(eventually(|| stuck_seen.calls.load(Ordering::SeqCst) == 1));
    }

    /// Registration order among callbacks whose events complete together,
    /// even while the dispatcher is looking at them.
    #[test]
    fn callbacks_complete_together_run_in_registration_order() {
        static ORDER: Mutex<Vec<usize>> = Mutex::new(Vec::new());
        unsafe extern "C" fn note(_: ur_event_handle_t, _: ur_execution_info_t, data: *mut c_void) {
            ORDER.lock().unwrap().push(data as usize);
        }
        // All complete at once, once all are registered.
        const N: usize = 50;
        let gate = Gate::new(false);
        for i in 0..N {
            register(TestEvent::behind(gate.clone()), note, i as *mut c_void).unwrap();
        }
        gate.open();
        assert!(eventually(|| ORDER.lock().unwrap().len() == N));
        let order = ORDER.lock().unwrap().clone();
        assert_eq!(order, (0..N).collect::<Vec<_>>());
    }

    #[test]
    fn many_pending_callbacks_start_no_threads() {
        start().unwrap();
        const MANY: usize = 500;
        let before = threads();
        let events: Vec<Arc<TestEvent>> = (0..MANY).map(|_| TestEvent::new(false)).collect();
        let seen: Vec<&'static Seen> = (0..MANY).map(|_| leak_seen()).collect();
        for (e, s) in events.iter().zip(&seen) {
            register(e.clone(), record, data(s)).unwrap();
        }
        std::thread::sleep(Duration::from_millis(20));
        let during = threads();
        assert!(before > 0, "cannot count threads");
        // Other tests of this process may start a few threads meanwhile;
        // a thread per callback would be hundreds.
        assert!(during < before + 50, "{before} threads before, {during} with {MANY} callbacks pending");
        for e in &events {
            e.complete();
        }
        assert!(eventually(|| seen.iter().all(|s| s.calls.load(Ordering::SeqCst) == 1)));
        assert!(seen.iter().all(|s| !s.elsewhere.load(Ordering::SeqCst)));
    }
}
