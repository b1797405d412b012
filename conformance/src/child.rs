//! Child processes with a time limit: the conformance runner's isolated
//! cases and the benchmark's SYCL helper.

use std::io::Read;
use std::process::{Child, ExitStatus};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Reads all of `pipe` on a thread of its own, so that a chatty child never
/// blocks on a full pipe while its parent waits for it.
pub fn read_on_thread(mut pipe: impl Read + Send + 'static) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
    })
}

/// Waits for `child`, looking every `poll`; past `deadline` kills it and
/// answers `None`.
pub fn wait_until(child: &mut Child, deadline: Instant, poll: Duration) -> std::io::Result<Option<ExitStatus>> {
    loop {
        match child.try_wait()? {
            Some(status) => return Ok(Some(status)),
            None if Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Ok(None);
            }
            None => std::thread::sleep(poll),
        }
    }
}
