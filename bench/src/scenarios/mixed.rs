//! Scenario 5: random sizes under a live-byte budget. Its deterministic
//! sequence, the fragmentation and cost rows, and the traces the raw CUDA
//! baseline replays.

use super::{DeviceRun, Rows};
use crate::measure::{measure_against, timed, Batch, Sample};
use crate::report::{size_label, Goal, Outcome, RatioKind, Row, Unit};
use crate::session::Queue;
use std::ffi::c_void;
use ur_conformance::ur::CallError;

impl DeviceRun<'_, '_> {
    // --- 5 ------------------------------------------------------------------

    /// Scenario 5: random sizes (deterministic) under a live-byte budget.
    /// Fragmentation, reserved high water over used high water, at each
    /// budget of [`mixed_budgets`] on a pool of its own; then the cost, the
    /// same sequence blocking as its baseline.
    pub fn mixed_sizes(&self) -> Rows {
        let mut rows = Vec::new();
        // Scenario 5 has two rows, so a queue it cannot make fails both.
        let queue = self.session.queue(false).map_err(|e| {
            let name = format!("random 64 B..256 KiB under {} live", size_label(COST_LIVE_BUDGET));
            vec![
                self.setup_failed(5, &format!("{name}: fragmentation"), Unit::Bytes, &e),
                self.setup_failed(5, &format!("{name}: cost"), Unit::NanosPer("op"), &e),
            ]
        })?;
        for &live_budget in mixed_budgets(self.quick) {
            self.progress.begin(&format!("{} scenario 5 under {} live", self.label, size_label(live_budget)));
            rows.push(self.fragmentation(&queue, live_budget, mixed_allocations(self.quick)));
        }
        rows.push(self.mixed_cost(&queue));
        Ok(rows)
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
        let measured = measure_against(&self.budget, self.progress, "mixed sizes", &mut ours, &mut baseline);
        let mut cost = self.cost_row(5, name, Unit::NanosPer("op"), &measured);
        cost.notes.push("an op is one alloc or one free; baseline: the same sequence blocking".into());
        cost
    }

}

/// The deterministic generator of the sequence: the same sizes every run,
/// and the same as the engine's example and tests replay.
pub use ur_core::engine::SplitMix64;

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

}
