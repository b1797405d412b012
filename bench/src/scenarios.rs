//! Scenarios 1 to 6 on one device, through the loader's C ABI, each timed
//! beside its blocking baseline in the same run, and the size sweep behind
//! the chart.
//!
//! Scenario bodies are `unsafe fn`s: they are sequences of C calls with raw
//! USM pointers, under the contract of [`crate::session`] (handles from this
//! session, pointers allocated by it and not yet freed).

use crate::measure::{measure_against, timed, timed_batch, Batch, Budget, Measured, Progress, Sample, Variant};
use crate::report::{size_label, Goal, Outcome, Point, RatioKind, Row, Series, Unit};
use crate::session::{Event, Pool, Queue, Session};
use std::collections::HashSet;
use std::ffi::c_void;
use std::sync::Barrier;
use ur_conformance::ur::CallError;

/// Allocation size of the single-size scenarios.
pub const SIZE: usize = 1024;

/// Sizes the chart sweeps, 64 B to 4 MiB.
pub fn sweep_sizes(quick: bool) -> Vec<usize> {
    if quick {
        vec![64, 4 << 10, 256 << 10, 4 << 20]
    } else {
        (0..9).map(|i| 64usize << (2 * i)).collect()
    }
}

/// The release threshold given to the scenarios' own pools, so that their
/// slabs stay reserved across host synchronisation and an address seen
/// twice means pooled memory served it.
const KEEP_RESERVED: usize = 1 << 30;

/// What the scenarios of one device share.
pub struct DeviceRun<'r, 's> {
    pub session: &'r Session<'s>,
    pub label: String,
    pub native_cpu: bool,
    pub budget: Budget,
    /// A short run (`--quick`): scenario 5 measures its smallest budget only.
    pub quick: bool,
    /// Scenarios to run (1 to 6); empty: all.
    pub only: Vec<u32>,
    pub progress: &'r Progress,
    /// The device's name, for the chart's panel titles.
    pub name: String,
}

impl DeviceRun<'_, '_> {
    fn row(&self, scenario: u32, name: impl Into<String>, unit: Unit) -> Row {
        Row::new(&self.label, scenario, name, unit)
    }

    /// A queue for scenario `scenario`, or the row saying it could not be made.
    fn queue_or_row(&self, out_of_order: bool, scenario: u32, name: &str, unit: Unit) -> Result<Queue<'_>, Vec<Row>> {
        self.session.queue(out_of_order).map_err(|e| vec![self.setup_failed(scenario, name, unit, &e)])
    }

    /// A row that could not even be set up (a context, a queue, a pool).
    fn setup_failed(&self, scenario: u32, name: &str, unit: Unit, e: &CallError) -> Row {
        let mut row = self.row(scenario, name, unit);
        row.ours = Outcome::from_error(e);
        row.baseline = Outcome::Failed(format!("not run: {e}"));
        row
    }

    pub fn run_all(&self) -> Vec<Row> {
        let mut rows = Vec::new();
        let wants = |n: u32| self.only.is_empty() || self.only.contains(&n);
        let step = |name: &str| self.progress.begin(&format!("{} scenario {name}", self.label));
        let scenarios: [(u32, &str, &dyn Fn() -> Vec<Row>); 6] = [
            (1, "1 alloc+free pair", &|| self.pairs()),
            (2, "2 alloc+fill+copy+free", &|| self.fill_copy()),
            (3, "3 out-of-order chains", &|| self.chains()),
            (4, "4 cross-queue reuse", &|| self.cross_queue()),
            (5, "5 mixed sizes", &|| self.mixed_sizes()),
            (6, "6 two threads", &|| self.threads()),
        ];
        for (n, name, run) in scenarios {
            if wants(n) {
                step(name);
                rows.extend(run());
            }
        }
        rows
    }

    // --- 1 ------------------------------------------------------------------

    /// Scenario 1: an async alloc+free pair on an in-order queue, no events,
    /// against blocking `urUSMDeviceAlloc` + `urUSMFree`.
    pub fn pairs(&self) -> Vec<Row> {
        let name = format!("alloc+free pair, {}, in-order, no events", size_label(SIZE));
        let unit = Unit::NanosPer("pair");
        let queue = match self.queue_or_row(false, 1, &name, unit) {
            Ok(q) => q,
            Err(rows) => return rows,
        };
        let (ours, baseline) = self.pair_costs(&queue, SIZE, &self.budget, "pairs");
        let mut row = self.row(1, name, unit);
        row.ours = Outcome::cost(&ours);
        row.baseline = Outcome::cost(&baseline);
        // The brief's target is for the native CPU adapter.
        row.goal = self.native_cpu.then_some(Goal::OursAtMost(150.0));
        vec![row, self.pairs_with_events(&queue)]
    }

    /// Scenario 1 with both events asked for and released at once, against
    /// the pair without events in the same run: what an event handle costs
    /// (made, checked as a wait-free handle cell, released, quarantined).
    fn pairs_with_events(&self, queue: &Queue) -> Row {
        let name = format!("alloc+free pair, {}, in-order, events released", size_label(SIZE));
        let mut row = self.row(1, name, Unit::NanosPer("pair"));
        // SAFETY (both closures): the queue is live; each pointer freed is
        // the one just allocated.
        let mut with_events = |batch: Batch| -> Result<Sample, CallError> {
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
        let (ours, baseline) =
            measure_against(&self.budget, self.progress, "pairs with events", &mut with_events, &mut without);
        row.ours = Outcome::cost(&ours);
        row.baseline = Outcome::cost(&baseline);
        row.notes.push("baseline: the same pair without events".into());
        row
    }

    fn pair_costs(&self, queue: &Queue, size: usize, budget: &Budget, what: &str) -> Measured {
        let session = self.session;
        // SAFETY (both closures): the queue and session are live; each
        // pointer freed is the one just allocated.
        let mut ours = |batch: Batch| unsafe { async_pairs(queue, size, batch.iterations) };
        let mut baseline = |batch: Batch| -> Result<Sample, CallError> {
            timed_batch(batch, || unsafe {
                for _ in 0..batch.iterations {
                    let mem = session.alloc_blocking(size)?;
                    session.free_blocking(mem)?;
                }
                Ok(())
            })
        };
        measure_against(budget, self.progress, what, &mut ours, &mut baseline)
    }

    // --- 2 ------------------------------------------------------------------

    /// Scenario 2: alloc + fill + copy + free, all enqueued with one finish
    /// per batch, against blocking alloc + fill + copy + finish + free.
    pub fn fill_copy(&self) -> Vec<Row> {
        let name = format!("alloc+fill+copy+free, {}", size_label(SIZE));
        let unit = Unit::NanosPer("iteration");
        let queue = match self.queue_or_row(false, 2, &name, unit) {
            Ok(q) => q,
            Err(rows) => return rows,
        };
        let (ours, baseline) = self.fill_copy_costs(&queue, SIZE, &self.budget.scaled(0.25), "fill+copy");
        let mut row = self.row(2, name, unit);
        row.ours = Outcome::cost(&ours);
        row.baseline = Outcome::cost(&baseline);
        row.goal = Some(Goal::RatioAtLeast(10.0));
        vec![row]
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
        let mut ours = |batch: Batch| -> Result<Sample, CallError> {
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
        let mut baseline = |batch: Batch| -> Result<Sample, CallError> {
            timed_batch(batch, || unsafe {
                for _ in 0..batch.iterations {
                    let mem = session.alloc_blocking(size)?;
                    queue.fill(mem, size, &[], false)?;
                    queue.copy(destination, mem, size)?;
                    queue.finish()?;
                    session.free_blocking(mem)?;
                }
                Ok(())
            })
        };
        let results = measure_against(budget, self.progress, what, &mut ours, &mut baseline);
        let _ = queue.finish();
        // SAFETY: allocated above; the queue has finished every command using it.
        let _ = unsafe { session.free_blocking(destination) };
        results
    }

    // --- 3 ------------------------------------------------------------------

    /// Scenario 3: chains on an out-of-order queue ordered only by events:
    /// alloc -> fill (waits alloc) -> free (waits fill) -> the next alloc
    /// (waits the free). Reuse is read from the addresses handed out.
    pub fn chains(&self) -> Vec<Row> {
        let name = format!("event chains, {}, out-of-order", size_label(SIZE));
        let unit = Unit::NanosPer("chain");
        let queue = match self.queue_or_row(true, 3, &name, unit) {
            Ok(q) => q,
            Err(rows) => return rows,
        };
        let session = self.session;
        // SAFETY: live queue and session; each block is freed once, after
        // the fill that used it.
        let mut baseline = |batch: Batch| -> Result<Sample, CallError> {
            timed_batch(batch, || unsafe {
                for _ in 0..batch.iterations {
                    let mem = session.alloc_blocking(SIZE)?;
                    let filled = queue.fill(mem, SIZE, &[], true)?;
                    session.wait(&[filled.as_ref().unwrap()])?;
                    session.free_blocking(mem)?;
                }
                Ok(())
            })
        };
        let baseline_text = "blocking alloc, fill, event wait, free";
        self.handover_rows(3, name, unit, (&queue, &queue, false), "chains", &mut baseline, baseline_text)
    }

    // --- 4 ------------------------------------------------------------------

    /// Scenario 4: memory handed from queue A back to queue B by events: B
    /// allocates (waiting on A's last free) and fills; A frees after the
    /// fill, with an event for B's next allocation.
    pub fn cross_queue(&self) -> Vec<Row> {
        let name = format!("free on A -> alloc on B by event, {}", size_label(SIZE));
        let unit = Unit::NanosPer("handover");
        let (queue_a, queue_b) = match (self.session.queue(false), self.session.queue(false)) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(e), _) | (_, Err(e)) => return vec![self.setup_failed(4, &name, unit, &e)],
        };
        let session = self.session;
        // SAFETY: live queue and session; each block is freed once, after
        // the fill of it.
        let mut baseline = |batch: Batch| -> Result<Sample, CallError> {
            timed_batch(batch, || unsafe {
                for _ in 0..batch.iterations {
                    let mem = session.alloc_blocking(SIZE)?;
                    queue_b.fill(mem, SIZE, &[], false)?;
                    queue_b.finish()?;
                    session.free_blocking(mem)?;
                }
                Ok(())
            })
        };
        // Allocated on B, freed on A.
        let chain = (&queue_b, &queue_a, true);
        let baseline_text = "blocking alloc, fill on B, finish, free";
        self.handover_rows(4, name, unit, chain, "handovers", &mut baseline, baseline_text)
    }

    // --- 8 ------------------------------------------------------------------

    /// Scenario 8: two devices of one context hand a block to each other
    /// through events: the device `other` allocates from its default pool
    /// (waiting on the last free) and fills; this device's queue frees after
    /// the fill, and the free's event orders the next allocation. Baseline:
    /// the same handover between two queues of `other`, in the same context
    /// and run.
    pub fn two_devices(&self, other: ur_core::abi::ur_device_handle_t) -> Vec<Row> {
        let name = format!("free on device A -> alloc on device B by event, {}", size_label(SIZE));
        let unit = Unit::NanosPer("handover");
        let pair = match Session::open_many(self.session.api, &[self.session.device, other]) {
            Ok(s) => s,
            Err(e) => return vec![self.setup_failed(8, &name, unit, &e)],
        };
        let queues = (pair.queue(false), pair.queue_on(other, false), pair.queue_on(other, false));
        let (a, b, b2) = match queues {
            (Ok(a), Ok(b), Ok(b2)) => (a, b, b2),
            (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return vec![self.setup_failed(8, &name, unit, &e)],
        };
        let mut reuse = ReuseCounter::default();
        let budget = self.budget.scaled(0.25);
        // SAFETY (both closures): live queues of one context; each block is
        // freed once, after the fill of it.
        let mut ours = |batch: Batch| unsafe { timed_handovers(&b, &a, true, None, batch, Some(&mut reuse)) };
        let mut baseline = |batch: Batch| unsafe { timed_handovers(&b, &b2, true, None, batch, None) };
        let measured = measure_against(&budget, self.progress, "handovers", &mut ours, &mut baseline);
        let notes = vec!["the device's default pool served (its release threshold left as it is)".into()];
        let baseline_text = "the same handover between two queues of device B";
        self.cost_and_reuse_rows(8, name, unit, measured, &reuse, notes, baseline_text)
    }

    /// Scenarios 3 and 4: blocks handed along a chain of events (allocated
    /// on the first queue, freed on the second; `in_order` as
    /// [`handover_chain`] takes it) on a pool of the scenario's own,
    /// measured against `baseline`; the cost and reuse rows.
    #[allow(clippy::too_many_arguments)]
    fn handover_rows(
        &self,
        scenario: u32,
        name: String,
        unit: Unit,
        (alloc_q, free_q, in_order): (&Queue, &Queue, bool),
        what: &str,
        baseline: Variant,
        baseline_text: &str,
    ) -> Vec<Row> {
        let (pool, mut pool_notes) = self.own_pool();
        let mut reuse = ReuseCounter::default();
        // SAFETY: live queues and pool; each block is freed once, after the
        // fill of it.
        let pool = pool.as_ref();
        let mut ours =
            |batch: Batch| unsafe { timed_handovers(alloc_q, free_q, in_order, pool, batch, Some(&mut reuse)) };
        let measured = measure_against(&self.budget.scaled(0.25), self.progress, what, &mut ours, baseline);
        pool_notes.extend(pool_high_water(pool));
        self.cost_and_reuse_rows(scenario, name, unit, measured, &reuse, pool_notes, baseline_text)
    }

    /// A pool of the scenario's own, keeping its slabs, so that its
    /// statistics and addresses speak for this scenario alone. Without one
    /// (the call fails) the device's current pool serves, and notes say so.
    fn own_pool(&self) -> (Option<Pool<'_>>, Vec<String>) {
        match self.session.pool() {
            Ok(pool) => {
                let notes = match pool.set_release_threshold(KEEP_RESERVED) {
                    Ok(()) => Vec::new(),
                    Err(e) => vec![format!(
                        "release threshold not raised ({e}): reuse by address may count re-reserved memory"
                    )],
                };
                (Some(pool), notes)
            }
            Err(e) => (None, vec![format!("no pool of its own ({e}): the device's current pool served")]),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn cost_and_reuse_rows(
        &self,
        scenario: u32,
        name: String,
        unit: Unit,
        (ours, baseline): Measured,
        reuse: &ReuseCounter,
        pool_notes: Vec<String>,
        baseline_text: &str,
    ) -> Vec<Row> {
        let mut cost = self.row(scenario, format!("{name}: cost"), unit);
        cost.ours = Outcome::cost(&ours);
        cost.baseline = Outcome::cost(&baseline);
        cost.notes.push(format!("baseline: {baseline_text}"));
        let mut rate = self.row(scenario, format!("{name}: reuse"), Unit::Percent);
        rate.ratio_kind = RatioKind::None;
        rate.goal = Some(Goal::OursAtLeast(100.0));
        rate.ours = match (&ours, reuse.rate()) {
            (Ok(_), Some(percent)) => Outcome::plain(percent),
            (Ok(_), None) => Outcome::Failed("no timed allocation".into()),
            (Err(e), _) => Outcome::from_error(e),
        };
        if ours.is_ok() {
            rate.notes.push(format!(
                "{} of {} timed allocations at an address handed out before (steady state, after warm-up)",
                reuse.reused, reuse.total
            ));
            rate.notes.extend(pool_notes);
        }
        vec![cost, rate]
    }

    // --- 5 ------------------------------------------------------------------

    /// Scenario 5: random sizes (deterministic) under a live-byte budget.
    /// Fragmentation, reserved high water over used high water, at each
    /// budget of [`mixed_budgets`] on a pool of its own; then the cost, the
    /// same sequence blocking as its baseline.
    pub fn mixed_sizes(&self) -> Vec<Row> {
        let mut rows = Vec::new();
        let queue = match self.session.queue(false) {
            Ok(q) => q,
            Err(e) => {
                let name = format!("random 64 B..256 KiB under {} live", size_label(COST_LIVE_BUDGET));
                return vec![
                    self.setup_failed(5, &format!("{name}: fragmentation"), Unit::Bytes, &e),
                    self.setup_failed(5, &format!("{name}: cost"), Unit::NanosPer("op"), &e),
                ];
            }
        };
        for &live_budget in mixed_budgets(self.quick) {
            self.progress.begin(&format!("{} scenario 5 under {} live", self.label, size_label(live_budget)));
            rows.push(self.fragmentation(&queue, live_budget, mixed_allocations(self.quick)));
        }
        rows.push(self.mixed_cost(&queue));
        rows
    }

    /// One pass of the sequence under `live_budget` on a new pool: its
    /// reserved and used high-water marks, read after
    /// [`MIXED_CHECKPOINTS`] allocations too, to show whether the ratio
    /// grows with time.
    fn fragmentation(&self, queue: &Queue, live_budget: usize, allocations: usize) -> Row {
        let name = format!(
            "random 64 B..256 KiB under {} live, {} allocs: reserved high / used high",
            size_label(live_budget),
            allocations
        );
        let mut row = self.row(5, name, Unit::Bytes);
        row.ratio_kind = RatioKind::Quotient;
        row.goal = Some(Goal::RatioAtMost(1.25));
        let pool = match self.session.pool() {
            Ok(p) => p,
            Err(e) => {
                row.ours = Outcome::from_error(&e);
                row.baseline = Outcome::Unavailable("no pool statistics without a pool".into());
                return row;
            }
        };
        // As CUDA's pool in the raw baseline (adapters/cuda/bench): nothing
        // given back at synchronisation points.
        let threshold_note = match pool.set_release_threshold(usize::MAX) {
            Ok(()) => "release threshold SIZE_MAX".to_string(),
            Err(e) => format!("release threshold not raised ({e})"),
        };
        let mut slots: Vec<*mut c_void> = vec![std::ptr::null_mut(); allocations];
        let mut marks: Vec<String> = Vec::new();
        let mut done = 0usize;
        // SAFETY: live queue and pool; each free is of a block the sequence
        // allocated and has not freed yet.
        let result = (|| -> Result<(), CallError> {
            for op in MixedSequence::new(allocations, live_budget) {
                match op {
                    MixedOp::Alloc { id, size } => {
                        slots[id] = unsafe { queue.alloc_async(Some(&pool), size, &[], false)?.0 };
                        done += 1;
                        if MIXED_CHECKPOINTS.contains(&done) && done < allocations {
                            let (reserved, used) = pool.high_water()?;
                            marks.push(format!("{:.3} after {done}", reserved as f64 / used as f64));
                        }
                    }
                    MixedOp::Free { id } => {
                        unsafe { queue.free_async(Some(&pool), slots[id], &[], false)? };
                    }
                }
            }
            queue.finish()
        })();
        match result.and_then(|()| pool.high_water()) {
            Ok((reserved, used)) => {
                row.ours = Outcome::plain(reserved as f64);
                row.baseline = Outcome::plain(used as f64);
                row.notes.push(format!(
                    "ours: RESERVED_HIGH of a new pool ({threshold_note}); baseline: its USED_HIGH (the ideal)"
                ));
                if !marks.is_empty() {
                    marks.push(format!("{:.3} after {allocations}", reserved as f64 / used as f64));
                    row.notes.push(format!("reserved/used {}", marks.join(", ")));
                }
            }
            Err(e) => {
                row.ours = Outcome::from_error(&e);
                row.baseline = Outcome::Failed(format!("not measured: {e}"));
            }
        }
        row
    }

    /// The cost of the sequence under [`COST_LIVE_BUDGET`], async on a pool
    /// of its own against the same sequence blocking.
    fn mixed_cost(&self, queue: &Queue) -> Row {
        let name = format!("random 64 B..256 KiB under {} live: cost", size_label(COST_LIVE_BUDGET));
        // Without a pool of its own the async side cannot run; the blocking
        // baseline still does.
        let pool = self.session.pool();
        let session = self.session;
        // SAFETY (both closures): live queue, pool and session; the workload
        // frees only blocks it allocated and still holds, each once.
        let mut ours = |batch: Batch| -> Result<Sample, CallError> {
            let pool = pool.as_ref().map_err(Clone::clone)?;
            let (elapsed, operations) = timed(|| unsafe {
                let alloc = |size| Ok(queue.alloc_async(Some(pool), size, &[], false)?.0);
                let free = |mem| queue.free_async(Some(pool), mem, &[], false).map(drop);
                let operations = mixed_workload(batch.iterations, COST_LIVE_BUDGET, alloc, free)?;
                queue.finish()?;
                Ok(operations)
            })?;
            Ok(Sample::of(elapsed, operations))
        };
        let mut baseline = |batch: Batch| -> Result<Sample, CallError> {
            let (elapsed, operations) = timed(|| unsafe {
                mixed_workload(
                    batch.iterations,
                    COST_LIVE_BUDGET,
                    |size| session.alloc_blocking(size),
                    |mem| session.free_blocking(mem),
                )
            })?;
            Ok(Sample::of(elapsed, operations))
        };
        let (ours, baseline) = measure_against(&self.budget, self.progress, "mixed sizes", &mut ours, &mut baseline);
        let mut cost = self.row(5, name, Unit::NanosPer("op"));
        cost.ours = Outcome::cost(&ours);
        cost.baseline = Outcome::cost(&baseline);
        cost.notes.push("an op is one alloc or one free; baseline: the same sequence blocking".into());
        cost
    }

    // --- 6 ------------------------------------------------------------------

    /// Scenario 6: async pairs from two threads, each on its own in-order
    /// queue, against one thread: pairs per second.
    pub fn threads(&self) -> Vec<Row> {
        let name = format!("2 threads x 2 queues vs 1 thread, pairs of {}", size_label(SIZE));
        let unit = Unit::PerSecond("pair");
        let (queue_a, queue_b) = match (self.session.queue(false), self.session.queue(false)) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(e), _) | (_, Err(e)) => return vec![self.setup_failed(6, &name, unit, &e)],
        };
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
        vec![row]
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
unsafe fn async_pairs(queue: &Queue, size: usize, n: usize) -> Result<Sample, CallError> {
    let (elapsed, ()) = timed(|| {
        for _ in 0..n {
            let mem = queue.alloc_async_plain(size)?;
            queue.free_async_plain(mem)?;
        }
        queue.finish()
    })?;
    Ok(Sample::of(elapsed, n))
}

/// The pool's high-water marks as a note (or why they are unknown).
fn pool_high_water(pool: Option<&Pool>) -> Option<String> {
    let pool = pool?;
    Some(match pool.high_water() {
        Ok((reserved, used)) => format!(
            "pool high water: reserved {}, used {}",
            crate::report::format_bytes(reserved as f64),
            crate::report::format_bytes(used as f64)
        ),
        Err(e) => format!("pool high water unknown: {e}"),
    })
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

/// Counts allocations served at an address already handed out: with a pool
/// that keeps its slabs, that is memory the pool reused.
#[derive(Default)]
struct ReuseCounter {
    seen: HashSet<usize>,
    reused: usize,
    total: usize,
}

impl ReuseCounter {
    fn record(&mut self, addresses: &[usize], timed: bool) {
        for &address in addresses {
            let before = !self.seen.insert(address);
            if timed {
                self.total += 1;
                self.reused += before as usize;
            }
        }
    }

    fn rate(&self) -> Option<f64> {
        (self.total > 0).then(|| 100.0 * self.reused as f64 / self.total as f64)
    }
}

/// A small deterministic generator (SplitMix64): the same sizes every run.
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Size of scenario 5's allocations: log-uniform over 64 B .. 256 KiB, so
/// small and large blocks are both common.
fn mixed_size(rng: &mut SplitMix64) -> usize {
    let (low, high) = ((64f64).ln(), ((256 << 10) as f64).ln());
    (low + rng.unit() * (high - low)).exp() as usize
}

/// Scenario 5's live budgets: the smallest is dominated by the granule of
/// the pool's memory, the larger ones show fragmentation building up.
pub fn mixed_budgets(quick: bool) -> &'static [usize] {
    if quick {
        &[8 << 20]
    } else {
        &[8 << 20, 64 << 20, 512 << 20]
    }
}

/// Allocations of one fragmentation pass.
pub fn mixed_allocations(quick: bool) -> usize {
    if quick {
        20_000
    } else {
        200_000
    }
}

/// Allocation counts after which a fragmentation pass reads the ratio.
pub const MIXED_CHECKPOINTS: [usize; 3] = [2_000, 20_000, 200_000];

/// The live budget of scenario 5's cost row.
const COST_LIVE_BUDGET: usize = 8 << 20;

/// The seed of scenario 5's sequence, here and in the CUDA baseline.
pub const MIXED_SEED: u64 = 0x05ee_d0fa_110c;

/// One step of scenario 5's sequence. `id` numbers allocations from 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MixedOp {
    Alloc { id: usize, size: usize },
    Free { id: usize },
}

/// Scenario 5's sequence: `allocations` allocations of random sizes;
/// before each, random live blocks are freed until the new one fits the
/// live budget; at the end everything is freed, newest first.
pub struct MixedSequence {
    rng: SplitMix64,
    live: Vec<(usize, usize)>,
    live_bytes: usize,
    live_budget: usize,
    left: usize,
    next_id: usize,
    /// The size drawn for the next allocation, while frees make room.
    next_size: Option<usize>,
}

impl MixedSequence {
    pub fn new(allocations: usize, live_budget: usize) -> Self {
        MixedSequence {
            rng: SplitMix64::new(MIXED_SEED),
            live: Vec::new(),
            live_bytes: 0,
            live_budget,
            left: allocations,
            next_id: 0,
            next_size: None,
        }
    }
}

impl Iterator for MixedSequence {
    type Item = MixedOp;

    fn next(&mut self) -> Option<MixedOp> {
        if self.next_size.is_none() && self.left > 0 {
            self.left -= 1;
            self.next_size = Some(mixed_size(&mut self.rng));
        }
        let Some(size) = self.next_size else {
            let (id, _) = self.live.pop()?;
            return Some(MixedOp::Free { id });
        };
        if self.live_bytes + size > self.live_budget && !self.live.is_empty() {
            let victim = (self.rng.next_u64() % self.live.len() as u64) as usize;
            let (id, victim_size) = self.live.swap_remove(victim);
            self.live_bytes -= victim_size;
            return Some(MixedOp::Free { id });
        }
        self.next_size = None;
        let id = self.next_id;
        self.next_id += 1;
        self.live.push((id, size));
        self.live_bytes += size;
        Some(MixedOp::Alloc { id, size })
    }
}

/// Writes scenario 5's sequence for each of [`mixed_budgets`] into `dir`
/// (`mixed-8MiB.txt`, ...), for the raw CUDA baseline
/// (`adapters/cuda/bench/mixed_replay.cu`) to replay: a `#` header, then
/// one line per step, `a ID SIZE` or `f ID`. Returns the files written.
pub fn write_mixed_traces(dir: &std::path::Path, quick: bool) -> std::io::Result<Vec<std::path::PathBuf>> {
    use std::io::Write as _;
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    for &live_budget in mixed_budgets(quick) {
        let allocations = mixed_allocations(quick);
        let path = dir.join(format!("mixed-{}MiB.txt", live_budget >> 20));
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path)?);
        writeln!(out, "# ur_bench scenario 5: live budget {live_budget} bytes, {allocations} allocations, seed {MIXED_SEED:#x}")?;
        for op in MixedSequence::new(allocations, live_budget) {
            match op {
                MixedOp::Alloc { id, size } => writeln!(out, "a {id} {size}")?,
                MixedOp::Free { id } => writeln!(out, "f {id}")?,
            }
        }
        out.flush()?;
        written.push(path);
    }
    Ok(written)
}

/// Runs scenario 5's sequence (`allocations` allocations under
/// `live_budget`) through `alloc` and `free`. Returns the operations done.
fn mixed_workload(
    allocations: usize,
    live_budget: usize,
    mut alloc: impl FnMut(usize) -> Result<*mut c_void, CallError>,
    mut free: impl FnMut(*mut c_void) -> Result<(), CallError>,
) -> Result<usize, CallError> {
    let mut slots = vec![std::ptr::null_mut(); allocations];
    let mut operations = 0;
    for op in MixedSequence::new(allocations, live_budget) {
        match op {
            MixedOp::Alloc { id, size } => slots[id] = alloc(size)?,
            MixedOp::Free { id } => free(slots[id])?,
        }
        operations += 1;
    }
    Ok(operations)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixed_workload_stays_in_budget_and_frees_everything() {
        #[derive(Default)]
        struct Heap {
            next: usize,
            live: std::collections::HashMap<usize, usize>,
            live_bytes: usize,
            peak: usize,
        }
        let budget = 1 << 20;
        let heap = std::cell::RefCell::new(Heap::default());
        let ops = mixed_workload(
            2000,
            budget,
            |size| {
                let mut h = heap.borrow_mut();
                h.next += 1 << 20;
                let address = h.next;
                h.live.insert(address, size);
                h.live_bytes += size;
                h.peak = h.peak.max(h.live_bytes);
                Ok(address as *mut c_void)
            },
            |mem| {
                let mut h = heap.borrow_mut();
                let size = h.live.remove(&(mem as usize)).expect("frees a live block, once");
                h.live_bytes -= size;
                Ok(())
            },
        )
        .unwrap();
        let h = heap.into_inner();
        assert!(h.live.is_empty(), "everything freed");
        assert!(h.peak <= budget && h.peak > budget / 2, "peak {} within the budget and near it", h.peak);
        assert!(ops >= 4000, "every allocation and every free counted: {ops}");
    }

    /// The sequence is the one scenario 5 always ran (a budget check, then
    /// frees of random victims, then the allocation), so figures stay
    /// comparable with earlier runs.
    #[test]
    fn the_sequence_matches_the_original_loop() {
        let (allocations, budget) = (3000, 2 << 20);
        let mut rng = SplitMix64::new(MIXED_SEED);
        let mut live: Vec<(usize, usize)> = Vec::new();
        let mut live_bytes = 0;
        let mut expected = Vec::new();
        for id in 0..allocations {
            let size = mixed_size(&mut rng);
            while live_bytes + size > budget {
                let victim = (rng.next_u64() % live.len() as u64) as usize;
                let (v, victim_size) = live.swap_remove(victim);
                expected.push(MixedOp::Free { id: v });
                live_bytes -= victim_size;
            }
            expected.push(MixedOp::Alloc { id, size });
            live.push((id, size));
            live_bytes += size;
        }
        while let Some((id, _)) = live.pop() {
            expected.push(MixedOp::Free { id });
        }
        assert_eq!(MixedSequence::new(allocations, budget).collect::<Vec<_>>(), expected);
    }

    #[test]
    fn traces_hold_every_step() {
        let dir = std::env::temp_dir().join(format!("ur_bench_traces_{}", std::process::id()));
        let files = write_mixed_traces(&dir, true).unwrap();
        assert_eq!(files.len(), mixed_budgets(true).len());
        let text = std::fs::read_to_string(&files[0]).unwrap();
        let allocs = text.lines().filter(|l| l.starts_with("a ")).count();
        let frees = text.lines().filter(|l| l.starts_with("f ")).count();
        assert_eq!((allocs, frees), (mixed_allocations(true), mixed_allocations(true)));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn sizes_are_deterministic_and_in_range() {
        let mut a = SplitMix64::new(7);
        let mut b = SplitMix64::new(7);
        for _ in 0..1000 {
            let size = mixed_size(&mut a);
            assert_eq!(size, mixed_size(&mut b));
            assert!((64..=256 << 10).contains(&size));
        }
    }

    #[test]
    fn reuse_counts_only_timed_batches() {
        let mut counter = ReuseCounter::default();
        counter.record(&[1, 2, 1], false);
        assert_eq!(counter.rate(), None);
        counter.record(&[1, 3, 3], true);
        assert_eq!((counter.reused, counter.total), (2, 3));
    }
}

/// [`handover_chain`] over `batch`, timed; the addresses it handed out go to
/// `reuse` where one is given.
///
/// # Safety
/// As [`handover_chain`].
unsafe fn timed_handovers(
    alloc_q: &Queue,
    free_q: &Queue,
    in_order: bool,
    pool: Option<&Pool>,
    batch: Batch,
    reuse: Option<&mut ReuseCounter>,
) -> Result<Sample, CallError> {
    let mut addresses = Vec::with_capacity(batch.iterations);
    let iterations = batch.iterations;
    let sample = timed_batch(batch, || handover_chain(alloc_q, free_q, in_order, pool, iterations, &mut addresses))?;
    if let Some(reuse) = reuse {
        reuse.record(&addresses, batch.timed);
    }
    Ok(sample)
}

/// The loop scenarios 3 and 4 time: each allocation on `alloc_q` waits on
/// the previous free (kept on the stack: no allocation in the loop), its
/// block is filled on `alloc_q` after it, then freed on `free_q` after the
/// fill. On an out-of-order queue the allocation's event orders the fill;
/// on an in-order one the queue does.
///
/// # Safety
/// Live queues and pool; each block is freed once, after the fill.
unsafe fn handover_chain(
    alloc_q: &Queue,
    free_q: &Queue,
    in_order: bool,
    pool: Option<&Pool>,
    iterations: usize,
    addresses: &mut Vec<usize>,
) -> Result<(), CallError> {
    let mut previous_free: Option<Event> = None;
    for _ in 0..iterations {
        let one;
        let waits: &[&Event] = match &previous_free {
            Some(event) => {
                one = [event];
                &one
            }
            None => &[],
        };
        let (mem, allocated) = alloc_q.alloc_async(pool, SIZE, waits, !in_order)?;
        addresses.push(mem as usize);
        let after_alloc = allocated.as_ref().map(|e| [e]);
        let filled = alloc_q.fill(mem, SIZE, after_alloc.as_ref().map_or(&[][..], |e| &e[..]), true)?;
        previous_free = free_q.free_async(pool, mem, &[filled.as_ref().unwrap()], true)?;
    }
    drop(previous_free);
    alloc_q.finish()?;
    if !std::ptr::eq(alloc_q, free_q) {
        free_q.finish()?;
    }
    Ok(())
}
