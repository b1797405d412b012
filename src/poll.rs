//! [`eventually`]: polling for something another thread makes true.

use std::time::{Duration, Instant};

/// Waits up to `limit` for `done` to hold, looking every millisecond; for
/// what happens on another thread (callbacks, deleters, a runtime's worker).
/// Whether it held in time; not a timing measurement.
pub fn eventually(limit: Duration, done: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while !done() {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}
