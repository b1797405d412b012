//! Scenarios 1 (alloc+free pairs) and 2 (alloc+fill+copy+free) on one
//! in-order queue, and the sweep that runs both at every chart size.

use super::{blocking_rounds, DeviceRun, Rows, SIZE};
use crate::measure::{measure_against, timed, timed_batch, Batch, Budget, Measured, Sample};
use crate::report::{size_label, Goal, Outcome, Point, Row, Series, Unit};
use crate::session::Queue;
use ur_conformance::ur::CallError;

impl DeviceRun<'_, '_> {
    // --- 1 ------------------------------------------------------------------

    /// Scenario 1: an async alloc+free pair on an in-order queue, no events,
    /// against blocking `urUSMDeviceAlloc` + `urUSMFree`.
    pub fn pairs(&self) -> Rows {
        let name = format!("alloc+free pair, {}, in-order, no events", size_label(SIZE));
        let unit = Unit::NanosPer("pair");
        let queue = self.set_up(1, &name, unit, self.session.queue(false))?;
        let mut row = self.cost_row(1, name, unit, &self.pair_costs(&queue, SIZE, &self.budget, "pairs"));
        // The brief's target is for the native CPU adapter.
        row.goal = self.native_cpu.then_some(Goal::OursAtMost(150.0));
        Ok(vec![row, self.pairs_with_events(&queue)])
    }

    /// Scenario 1 with both events asked for and released at once, against
    /// the pair without events in the same run: what an event handle costs
    /// (made, checked as a wait-free handle cell, released, quarantined).
    fn pairs_with_events(&self, queue: &Queue) -> Row {
        let name = format!("alloc+free pair, {}, in-order, events released", size_label(SIZE));
        // SAFETY (both closures): the queue is live; each pointer freed is
        // the one just allocated.
        let mut with_events = |batch: Batch| {
            timed_batch(batch, || unsafe {
                for _ in 0..batch.iterations {
                    let (mem, alloc_event) = queue.alloc_async(None, SIZE, &[], true)?;
                    let free_event = queue.free_async(None, mem, &[], true)?;
                    drop((alloc_event, free_event));
                }
                queue.finish()
            })
        };
        let mut without = |batch: Batch| unsafe { async_pairs(queue, SIZE, batch.iterations) };
        let measured = measure_against(&self.budget, self.progress, "pairs with events", &mut with_events, &mut without);
        let mut row = self.cost_row(1, name, Unit::NanosPer("pair"), &measured);
        row.notes.push("baseline: the same pair without events".into());
        row
    }

    fn pair_costs(&self, queue: &Queue, size: usize, budget: &Budget, what: &str) -> Measured {
        let session = self.session;
        // SAFETY (both closures): the queue and session are live; each
        // pointer freed is the one just allocated.
        let mut ours = |batch: Batch| unsafe { async_pairs(queue, size, batch.iterations) };
        let mut baseline = |batch: Batch| unsafe { blocking_rounds(session, batch, size, |_| Ok(())) };
        measure_against(budget, self.progress, what, &mut ours, &mut baseline)
    }

    // --- 2 ------------------------------------------------------------------

    /// Scenario 2: alloc + fill + copy + free, all enqueued with one finish
    /// per batch, against blocking alloc + fill + copy + finish + free.
    pub fn fill_copy(&self) -> Rows {
        let name = format!("alloc+fill+copy+free, {}", size_label(SIZE));
        let unit = Unit::NanosPer("iteration");
        let queue = self.set_up(2, &name, unit, self.session.queue(false))?;
        let measured = self.fill_copy_costs(&queue, SIZE, &self.budget.scaled(0.25), "fill+copy");
        let mut row = self.cost_row(2, name, unit, &measured);
        row.goal = Some(Goal::RatioAtLeast(10.0));
        Ok(vec![row])
    }

    fn fill_copy_costs(&self, queue: &Queue, size: usize, budget: &Budget, what: &str) -> Measured {
        let session = self.session;
        let destination = match session.alloc_blocking(size) {
            Ok(mem) => mem,
            Err(e) => return (Err(e.clone()), Err(e)),
        };
        // SAFETY (both closures): live queue and session; every command
        // touches the block just allocated (freed after them, in queue
        // order) and `destination`, live until the end of this function.
        let mut ours = |batch: Batch| {
            timed_batch(batch, || unsafe {
                for _ in 0..batch.iterations {
                    let (mem, _) = queue.alloc_async(None, size, &[], false)?;
                    queue.fill(mem, size, &[], false)?;
                    queue.copy(destination, mem, size)?;
                    queue.free_async(None, mem, &[], false)?;
                }
                queue.finish()
            })
        };
        let mut baseline = |batch: Batch| unsafe {
            blocking_rounds(session, batch, size, |mem| {
                queue.fill(mem, size, &[], false)?;
                queue.copy(destination, mem, size)?;
                queue.finish()
            })
        };
        let results = measure_against(budget, self.progress, what, &mut ours, &mut baseline);
        let _ = queue.finish();
        // SAFETY: allocated above; the queue has finished every command using it.
        let _ = unsafe { session.free_blocking(destination) };
        results
    }

    // --- the sweep behind the chart ----------------------------------------------

    /// Scenarios 1 and 2 at every size of the sweep: four series.
    pub fn sweep(&self, sizes: &[usize]) -> Vec<Series> {
        let panel = format!("{}: {}", self.label, self.name);
        let mut series = [
            ("alloc+free: async (ours)", true),
            ("alloc+free: blocking urUSMDeviceAlloc/urUSMFree", false),
            ("alloc+fill+copy+free: async, one finish (ours)", true),
            ("alloc+fill+copy+free: blocking, finish each", false),
        ]
        .map(|(name, ours)| Series {
            panel: panel.clone(),
            name: name.into(),
            ours,
            points: Vec::new(),
            note: None,
        });
        let queue = match self.session.queue(false) {
            Ok(q) => q,
            Err(e) => {
                for s in &mut series {
                    s.note = Some(e.to_string());
                }
                return series.into();
            }
        };
        for &size in sizes {
            // Slower operations at large sizes: fewer iterations, same time.
            let byte_limit = if self.budget.repetitions <= 3 { 16 << 20 } else { 128 << 20 };
            let budget = Budget {
                max_iterations: (byte_limit / size).clamp(self.budget.min_iterations, self.budget.max_iterations),
                ..self.budget
            };
            let label = size_label(size);
            self.progress.begin(&format!("{} sweep {label}", self.label));
            let (a, b) = self.pair_costs(&queue, size, &budget, "pairs");
            let (c, d) = self.fill_copy_costs(&queue, size, &budget, "fill+copy");
            for (s, result) in series.iter_mut().zip([a, b, c, d]) {
                match result {
                    Ok(stats) => s.points.push(Point { size, ns: Some(stats.median_ns) }),
                    Err(e) => {
                        s.points.push(Point { size, ns: None });
                        s.note.get_or_insert_with(|| Outcome::from_error(&e).describe());
                    }
                }
            }
        }
        series.into()
    }
}

/// `n` async alloc+free pairs on an in-order queue with no events, then a
/// finish: the cost of scenario 1.
///
/// # Safety
/// `queue` is live.
pub(super) unsafe fn async_pairs(queue: &Queue, size: usize, n: usize) -> Result<Sample, CallError> {
    let (elapsed, ()) = timed(|| {
        for _ in 0..n {
            let mem = queue.alloc_async_plain(size)?;
            queue.free_async_plain(mem)?;
        }
        queue.finish()
    })?;
    Ok(Sample::of(elapsed, n))
}
