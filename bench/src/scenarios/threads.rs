//! Scenario 6: async pairs from two threads, each on its own queue,
//! against one thread.

use super::pairs::async_pairs;
use super::{DeviceRun, Rows, SIZE};
use crate::measure::{measure_against, timed, Batch, Sample};
use crate::report::{size_label, Goal, Outcome, RatioKind, Unit};
use crate::session::Queue;
use std::sync::Barrier;
use ur_conformance::ur::CallError;

impl DeviceRun<'_, '_> {
    // --- 6 ------------------------------------------------------------------

    /// Scenario 6: async pairs from two threads, each on its own in-order
    /// queue, against one thread: pairs per second.
    pub fn threads(&self) -> Rows {
        let name = format!("2 threads x 2 queues vs 1 thread, pairs of {}", size_label(SIZE));
        let unit = Unit::PerSecond("pair");
        let (queue_a, queue_b) = self.set_up(6, &name, unit, self.session.two_queues())?;
        // SAFETY (both closures): live queues; each thread uses its own.
        let mut two = |batch: Batch| -> Result<Sample, CallError> {
            let start = Barrier::new(2);
            let shared_b = SendQueue(&queue_b);
            let (elapsed, ()) = std::thread::scope(|scope| {
                let other = scope.spawn(|| {
                    let queue = &shared_b;
                    start.wait();
                    unsafe { async_pairs(queue.0, SIZE, batch.iterations) }
                });
                start.wait();
                timed(|| {
                    unsafe { async_pairs(&queue_a, SIZE, batch.iterations) }?;
                    other
                        .join()
                        .unwrap_or_else(|_| Err(CallError { call: "the second thread panicked".into(), code: None }))?;
                    Ok(())
                })
            })?;
            Ok(Sample::of(elapsed, 2 * batch.iterations))
        };
        let mut one =
            |batch: Batch| -> Result<Sample, CallError> { unsafe { async_pairs(&queue_a, SIZE, batch.iterations) } };
        let (two, one) = measure_against(&self.budget, self.progress, "threads", &mut two, &mut one);
        let mut row = self.row(6, name, unit);
        row.ours = Outcome::rate(&two);
        row.baseline = Outcome::rate(&one);
        row.ratio_kind = RatioKind::Quotient;
        row.goal = Some(Goal::RatioAtLeast(1.6));
        row.notes.push(format!("ours: two threads together; baseline: one thread; {} CPUs", cpu_count()));
        Ok(vec![row])
    }

}

/// A queue handed to a second thread.
struct SendQueue<'q, 's>(&'q Queue<'s>);

// SAFETY: UR entry points are thread-safe for distinct queues, and the
// thread that gets this queue is the only one that enqueues on it while it
// runs; the guard itself is dropped on the creating thread.
unsafe impl Send for SendQueue<'_, '_> {}
unsafe impl Sync for SendQueue<'_, '_> {}

fn cpu_count() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
