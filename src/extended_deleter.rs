//! The extended deleter of a context (`urContextSetExtendedDeleter`), kept
//! the same way by every adapter: one registration, a second replacing the
//! first (`spec/context.md`), run once when the context is destroyed.

use core::ffi::c_void;
use std::sync::Mutex;

/// The deleter a context runs when it is destroyed, if one was set.
#[derive(Default)]
pub struct ExtendedDeleter(Mutex<Option<Registration>>);

struct Registration {
    callback: unsafe extern "C" fn(*mut c_void),
    /// Opaque to us: kept as an address so the cell is `Send`.
    user_data: usize,
}

impl ExtendedDeleter {
    /// Registers `callback(user_data)`, replacing an earlier registration.
    pub fn set(&self, callback: unsafe extern "C" fn(*mut c_void), user_data: *mut c_void) {
        let registration = Registration { callback, user_data: user_data as usize };
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(registration);
    }

    /// Runs the registered deleter, if any, and forgets it: called once, from
    /// the context's drop, after everything the user could still observe of
    /// the context is gone.
    pub fn run(&mut self) {
        let registration = self.0.get_mut().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(r) = registration {
            // SAFETY: the user registered this callback, with this user data,
            // for the destruction of the context that owns this cell; UR lets
            // it run on whichever thread destroys the context.
            unsafe { (r.callback)(r.user_data as *mut c_void) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    unsafe extern "C" fn count(user_data: *mut c_void) {
        // SAFETY: the tests pass a pointer to a live `AtomicU32`.
        unsafe { &*(user_data as *const AtomicU32) }.fetch_add(1, Ordering::SeqCst);
    }

    fn data(counter: &AtomicU32) -> *mut c_void {
        counter as *const AtomicU32 as *mut c_void
    }

    #[test]
    fn a_second_registration_replaces_the_first() {
        let (first, second) = (AtomicU32::new(0), AtomicU32::new(0));
        let mut deleter = ExtendedDeleter::default();
        deleter.set(count, data(&first));
        deleter.set(count, data(&second));
        deleter.run();
        assert_eq!((first.load(Ordering::SeqCst), second.load(Ordering::SeqCst)), (0, 1));
    }

    #[test]
    fn runs_once() {
        let calls = AtomicU32::new(0);
        let mut deleter = ExtendedDeleter::default();
        deleter.set(count, data(&calls));
        deleter.run();
        deleter.run();
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn nothing_registered_runs_nothing() {
        ExtendedDeleter::default().run();
    }
}
