//! Scenarios 1 to 6 on one device, through the loader's C ABI, each timed
//! beside its blocking baseline in the same run, and the size sweep behind
//! the chart.
//!
//! Scenario bodies are `unsafe fn`s: they are sequences of C calls with raw
//! USM pointers, under the contract of [`crate::session`] (handles from this
//! session, pointers allocated by it and not yet freed).
//!
//! Layout: this file holds what the scenarios share (`DeviceRun` and the
//! list of scenarios); each scenario lives with its helpers: `pairs.rs`
//! (1 and 2, and the size sweep built from them), `handover.rs` (3, 4 and
//! 8: blocks handed on by events, and the reuse they show), `mixed.rs` (5:
//! random sizes, fragmentation, the sequence and its traces) and
//! `threads.rs` (6).

use crate::measure::{timed_batch, Batch, Budget, Measured, Progress, Sample};
use crate::report::{Outcome, Row, Unit};
use crate::session::Session;
use std::ffi::c_void;
use ur_conformance::ur::CallError;

mod handover;
mod mixed;
mod pairs;
mod threads;

pub use mixed::{
    mixed_allocations, mixed_budgets, write_mixed_traces, MixedOp, MixedSequence, SplitMix64, MIXED_CHECKPOINTS,
    MIXED_SEED,
};

/// A scenario's rows; `Err` holds those of a scenario that could not be
/// set up (a context, a queue, a pool), each saying why.
pub type Rows = Result<Vec<Row>, Vec<Row>>;

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

    /// A row that could not even be set up (a context, a queue, a pool).
    fn setup_failed(&self, scenario: u32, name: &str, unit: Unit, e: &CallError) -> Row {
        let mut row = self.row(scenario, name, unit);
        row.ours = Outcome::from_error(e);
        row.baseline = Outcome::Failed(format!("not run: {e}"));
        row
    }

    /// What a scenario needs before it can run (`made`); when it could not
    /// be made, the scenario's one row, saying why, for `?` to return.
    fn set_up<T>(&self, scenario: u32, name: &str, unit: Unit, made: Result<T, CallError>) -> Result<T, Vec<Row>> {
        made.map_err(|e| vec![self.setup_failed(scenario, name, unit, &e)])
    }

    /// A row of what ours and its baseline cost, each per `unit`.
    fn cost_row(&self, scenario: u32, name: impl Into<String>, unit: Unit, (ours, baseline): &Measured) -> Row {
        let mut row = self.row(scenario, name, unit);
        row.ours = Outcome::cost(ours);
        row.baseline = Outcome::cost(baseline);
        row
    }

    pub fn run_all(&self) -> Vec<Row> {
        let mut rows = Vec::new();
        let wants = |n: u32| self.only.is_empty() || self.only.contains(&n);
        let step = |name: &str| self.progress.begin(&format!("{} scenario {name}", self.label));
        let scenarios: [(u32, &str, &dyn Fn() -> Rows); 6] = [
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
                rows.extend(run().unwrap_or_else(|failed| failed));
            }
        }
        rows
    }
}

/// The blocking baselines' loop, timed: per iteration, a blocking
/// allocation of `size`, `body` on it, and a blocking free.
///
/// # Safety
/// `body` leaves no command using the block when it returns.
unsafe fn blocking_rounds(
    session: &Session,
    batch: Batch,
    size: usize,
    mut body: impl FnMut(*mut c_void) -> Result<(), CallError>,
) -> Result<Sample, CallError> {
    timed_batch(batch, || {
        for _ in 0..batch.iterations {
            let mem = session.alloc_blocking(size)?;
            body(mem)?;
            session.free_blocking(mem)?;
        }
        Ok(())
    })
}
