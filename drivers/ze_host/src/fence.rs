//! Fences: signalled by a queue's worker once the lists of the execution
//! they were passed with have run.

use crate::object::{lock, wait_for, Registry};
use std::sync::{Condvar, Mutex};

pub static FENCES: Registry<Fence> = Registry::new();

pub struct Fence {
    /// The queue's handle: a fence may be used only with its own queue.
    pub queue: usize,
    signaled: Mutex<bool>,
    cv: Condvar,
}

impl Fence {
    pub fn new(queue: usize, signaled: bool) -> Self {
        Fence { queue, signaled: Mutex::new(signaled), cv: Condvar::new() }
    }

    pub fn signal(&self) {
        *lock(&self.signaled) = true;
        self.cv.notify_all();
    }

    pub fn reset(&self) {
        *lock(&self.signaled) = false;
    }

    pub fn is_signaled(&self) -> bool {
        *lock(&self.signaled)
    }

    pub fn wait(&self, timeout_ns: u64) -> bool {
        wait_for(&self.signaled, &self.cv, timeout_ns, |s| *s)
    }
}
