//! Commands and the threads that run them. Each command queue and each
//! immediate command list owns one worker thread, which runs what it is
//! given strictly in submission order: every command first waits for the
//! events of its wait list, then does its work, then signals its event.
//! Commands therefore really run after the append or execute call has
//! returned, and event order is what orders work across queues.

use crate::driver::now_ns;
use crate::event::Event;
use crate::fence::Fence;
use crate::object::{lock, wait_for};
use level_zero_sys::*;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex};

/// What a command does. Addresses are the caller's, kept as integers; Level
/// Zero's contract is that they stay valid until the command has run.
pub enum Op {
    /// Barriers, event waits and signals: the wait list and the signal are
    /// the whole command.
    Nop,
    Fill { dst: usize, size: usize, pattern: Vec<u8> },
    Copy { dst: usize, src: usize, size: usize },
    /// A box of `depth` slices of `height` rows of `width` bytes.
    CopyRegion { dst: Region, src: Region, width: usize, height: usize, depth: usize },
    ResetEvent(Arc<Event>),
    /// One `ze_kernel_timestamp_result_t` per event, at `dst + offsets[i]`.
    QueryTimestamps { events: Vec<Arc<Event>>, dst: usize, offsets: Vec<usize> },
    WriteTimestamp { dst: usize },
}

/// One side of a region copy: the address of the region's first byte and
/// the pitches of its rows and slices.
pub struct Region {
    pub start: usize,
    pub pitch: usize,
    pub slice_pitch: usize,
}

impl Region {
    fn row(&self, y: usize, z: usize) -> usize {
        self.start + z * self.slice_pitch + y * self.pitch
    }
}

pub struct Command {
    pub op: Op,
    pub waits: Vec<Arc<Event>>,
    pub signal: Option<Arc<Event>>,
}

impl Command {
    fn run(&self) {
        for e in &self.waits {
            e.wait(u64::MAX);
        }
        let start = now_ns();
        match &self.op {
            Op::Nop => {}
            Op::Fill { dst, size, pattern } => {
                // SAFETY: the append checked dst for null; the caller owns
                // `size` writable bytes there until this command completes.
                let dst = unsafe { std::slice::from_raw_parts_mut(*dst as *mut u8, *size) };
                for chunk in dst.chunks_mut(pattern.len()) {
                    chunk.copy_from_slice(&pattern[..chunk.len()]);
                }
            }
            Op::Copy { dst, src, size } => {
                // SAFETY: as for Fill, for both ranges; `copy` allows overlap.
                unsafe { std::ptr::copy(*src as *const u8, *dst as *mut u8, *size) };
            }
            Op::CopyRegion { dst, src, width, height, depth } => {
                for z in 0..*depth {
                    for y in 0..*height {
                        // SAFETY: as for Copy; each row lies in the caller's
                        // regions, whose origins and pitches it gave (the
                        // append checked that no offset overflows).
                        unsafe { std::ptr::copy(src.row(y, z) as *const u8, dst.row(y, z) as *mut u8, *width) };
                    }
                }
            }
            Op::ResetEvent(e) => e.reset(),
            Op::QueryTimestamps { events, dst, offsets } => {
                for (e, off) in events.iter().zip(offsets) {
                    let (s, t) = e.timestamps().unwrap_or((0, 0));
                    let data = ze_kernel_timestamp_data_t { kernelStart: s, kernelEnd: t };
                    let r = ze_kernel_timestamp_result_t { global: data, context: data };
                    // SAFETY: the caller gave room for one result at each offset.
                    unsafe { ((*dst + off) as *mut ze_kernel_timestamp_result_t).write_unaligned(r) };
                }
            }
            Op::WriteTimestamp { dst } => {
                // SAFETY: the caller gave room for one u64 at dst.
                unsafe { (*dst as *mut u64).write_unaligned(now_ns()) };
            }
        }
        if let Some(e) = &self.signal {
            e.signal(start, now_ns());
        }
    }
}

/// One submission: lists run one after the other, then the fence is signalled.
pub struct Job {
    pub lists: Vec<Arc<[Command]>>,
    pub fence: Option<Arc<Fence>>,
}

#[derive(Default)]
struct Counts {
    submitted: u64,
    done: u64,
}

#[derive(Default)]
struct Progress {
    counts: Mutex<Counts>,
    cv: Condvar,
}

pub struct Worker {
    sender: Mutex<Sender<Job>>,
    progress: Arc<Progress>,
}

impl Worker {
    pub fn spawn() -> Result<Worker, ze_result_t> {
        let (sender, receiver) = channel();
        let progress = Arc::new(Progress::default());
        let p = progress.clone();
        std::thread::Builder::new()
            .name("ze-host-queue".into())
            .spawn(move || run(receiver, p))
            .map_err(|_| ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY)?;
        Ok(Worker { sender: Mutex::new(sender), progress })
    }

    /// Queues `job`; returns its ticket for `wait`.
    pub fn submit(&self, job: Job) -> u64 {
        // The sender's lock makes ticket order and queue order the same.
        let sender = lock(&self.sender);
        let ticket = {
            let mut c = lock(&self.progress.counts);
            c.submitted += 1;
            c.submitted
        };
        if sender.send(job).is_err() {
            // The thread is gone (it cannot panic past `run`), so count the
            // job as done rather than leave waiters hanging.
            lock(&self.progress.counts).done += 1;
        }
        ticket
    }

    /// Waits until job `ticket` has run; false on timeout.
    pub fn wait(&self, ticket: u64, timeout_ns: u64) -> bool {
        wait_for(&self.progress.counts, &self.progress.cv, timeout_ns, |c| c.done >= ticket)
    }

    /// Waits for everything submitted so far.
    pub fn wait_idle(&self, timeout_ns: u64) -> bool {
        let ticket = lock(&self.progress.counts).submitted;
        self.wait(ticket, timeout_ns)
    }
}

/// The worker thread: ends when its owner drops the sender and the queue is
/// drained.
fn run(receiver: Receiver<Job>, progress: Arc<Progress>) {
    while let Ok(job) = receiver.recv() {
        // A panic in a command (there should be none) must not stop the
        // queue: later jobs and waiters still need to make progress.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            for list in &job.lists {
                for c in list.iter() {
                    c.run();
                }
            }
        }));
        if let Some(f) = &job.fence {
            f.signal();
        }
        lock(&progress.counts).done += 1;
        progress.cv.notify_all();
    }
}
