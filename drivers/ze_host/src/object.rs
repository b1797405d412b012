//! Live objects behind handles. Each object kind has a registry that maps a
//! handle (the address of the object's `Arc`) to the object, so that a null,
//! foreign or destroyed handle is answered with an error instead of being
//! dereferenced. A destroyed object lives on while a worker still holds it
//! (an event a queued command will signal), but its handle is dead at once.
//!
//! Lock order (a thread holding one of these takes only later ones):
//!   1. a registry's map (held only to clone or remove an `Arc`)
//!   2. `EventPool::slots`
//!   3. `CommandList::recording`
//!   4. `Worker::sender`
//!   5. `Worker` progress counts, `Event::state`, `Fence::signaled`
//!      (leaves: never two at once)
//!
//! Worker threads take only the leaves.

use level_zero_sys::*;
use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// A poisoned lock must not turn every later call into a panic: the data
/// behind these locks stays consistent at every unlock.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

pub struct Registry<T> {
    live: Mutex<BTreeMap<usize, Arc<T>>>,
}

impl<T> Registry<T> {
    pub const fn new() -> Self {
        Registry { live: Mutex::new(BTreeMap::new()) }
    }

    /// Registers `obj` and returns its handle.
    pub fn insert<H>(&self, obj: Arc<T>) -> *mut H {
        let h = Arc::as_ptr(&obj) as usize;
        lock(&self.live).insert(h, obj);
        h as *mut H
    }

    /// The live object behind `h`.
    pub fn get<H>(&self, h: *mut H) -> Result<Arc<T>, ze_result_t> {
        lock(&self.live).get(&(h as usize)).cloned().ok_or(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)
    }

    /// Takes `h` out of the live set: later calls with it fail.
    pub fn remove<H>(&self, h: *mut H) -> Result<Arc<T>, ze_result_t> {
        lock(&self.live).remove(&(h as usize)).ok_or(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)
    }
}

/// Level Zero's host-wait timeout: nanoseconds, `u64::MAX` for ever, 0 for
/// a query. Waits on `cv` until `done` holds; false when the time ran out.
pub fn wait_for<T>(m: &Mutex<T>, cv: &Condvar, timeout_ns: u64, mut done: impl FnMut(&T) -> bool) -> bool {
    let mut guard = lock(m);
    if timeout_ns == u64::MAX {
        while !done(&guard) {
            guard = cv.wait(guard).unwrap_or_else(|e| e.into_inner());
        }
        return true;
    }
    let deadline = Instant::now().checked_add(Duration::from_nanos(timeout_ns));
    loop {
        if done(&guard) {
            return true;
        }
        let left = match deadline {
            Some(d) => d.saturating_duration_since(Instant::now()),
            None => Duration::MAX,
        };
        if left.is_zero() {
            return false;
        }
        guard = cv.wait_timeout(guard, left).unwrap_or_else(|e| e.into_inner()).0;
    }
}
