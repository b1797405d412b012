//! Timing that holds up on a small, noisy machine: a warm-up batch that also
//! sizes the timed batches, several repetitions with ours and the baseline
//! interleaved (so drift hits both alike), and the median of each.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};
use ur_conformance::ur::CallError;

/// How much to measure.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Most iterations in one timed batch (`--iterations`).
    pub max_iterations: usize,
    /// Fewest iterations in one timed batch, however slow each is.
    pub min_iterations: usize,
    /// Timed batches per variant; the median is reported.
    pub repetitions: usize,
    /// Wanted length of one batch; batches of slow operations are shortened to it.
    pub target_batch: Duration,
}

impl Budget {
    pub fn full(max_iterations: usize) -> Budget {
        Budget { max_iterations, min_iterations: 8, repetitions: 7, target_batch: Duration::from_millis(150) }
    }

    pub fn quick(max_iterations: usize) -> Budget {
        Budget { max_iterations, min_iterations: 4, repetitions: 3, target_batch: Duration::from_millis(15) }
    }

    /// The same budget with at most `factor` of the iterations (heavier operations).
    pub fn scaled(self, factor: f64) -> Budget {
        let max = ((self.max_iterations as f64 * factor) as usize).max(self.min_iterations);
        Budget { max_iterations: max, ..self }
    }
}

/// One batch that a scenario runs: how many iterations, and whether it counts.
#[derive(Clone, Copy, Debug)]
pub struct Batch {
    pub iterations: usize,
    /// False for the warm-up batch, whose figures (reuse counts) are not kept.
    pub timed: bool,
}

/// What one batch took.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    pub elapsed: Duration,
    /// Operations done, the divisor of the cost (iterations, or iterations
    /// times threads).
    pub operations: usize,
}

impl Sample {
    pub fn of(elapsed: Duration, operations: usize) -> Sample {
        Sample { elapsed, operations }
    }

    fn nanos_per_op(&self) -> f64 {
        self.elapsed.as_secs_f64() * 1e9 / self.operations.max(1) as f64
    }
}

/// Nanoseconds per operation over the timed batches. Its fields are the
/// ones `--json` gives a measured figure (non-finite values as `null`).
#[derive(Clone, Debug, serde::Serialize)]
pub struct Stats {
    pub median_ns: f64,
    pub min_ns: f64,
    pub max_ns: f64,
    pub samples_ns: Vec<f64>,
    pub iterations_per_batch: usize,
}

impl Stats {
    pub fn from_samples(mut samples: Vec<f64>, iterations_per_batch: usize) -> Stats {
        let kept = samples.clone();
        samples.sort_by(f64::total_cmp);
        Stats {
            median_ns: median_of_sorted(&samples),
            min_ns: samples.first().copied().unwrap_or(f64::NAN),
            max_ns: samples.last().copied().unwrap_or(f64::NAN),
            samples_ns: kept,
            iterations_per_batch,
        }
    }
}

fn median_of_sorted(sorted: &[f64]) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// A variant under measurement: runs one batch.
pub type Variant<'a> = &'a mut dyn FnMut(Batch) -> Result<Sample, CallError>;

/// Measures each variant: a warm-up batch sizes the timed ones so that each
/// lasts about `budget.target_batch`, then the timed batches run round-robin
/// across variants. A variant that fails drops out with its error; the
/// others go on.
pub fn measure(
    budget: &Budget,
    progress: &Progress,
    what: &str,
    variants: &mut [Variant],
) -> Vec<Result<Stats, CallError>> {
    let mut state: Vec<Result<(usize, Vec<f64>), CallError>> = Vec::new();
    for variant in variants.iter_mut() {
        progress.show(&format!("{what}: warm-up"));
        let warmup_iterations = budget.max_iterations.min(512).max(budget.min_iterations);
        state.push(variant(Batch { iterations: warmup_iterations, timed: false }).map(|sample| {
            let per_op = sample.elapsed.as_secs_f64() / warmup_iterations as f64;
            let fitting = if per_op > 0.0 { (budget.target_batch.as_secs_f64() / per_op) as usize } else { usize::MAX };
            (fitting.clamp(budget.min_iterations, budget.max_iterations.max(budget.min_iterations)), Vec::new())
        }));
    }
    for repetition in 0..budget.repetitions {
        progress.show(&format!("{what}: repetition {}/{}", repetition + 1, budget.repetitions));
        for (variant, slot) in variants.iter_mut().zip(state.iter_mut()) {
            let Ok((iterations, samples)) = slot else { continue };
            match variant(Batch { iterations: *iterations, timed: true }) {
                Ok(sample) => samples.push(sample.nanos_per_op()),
                Err(e) => *slot = Err(e),
            }
        }
    }
    state.into_iter().map(|slot| slot.map(|(iterations, samples)| Stats::from_samples(samples, iterations))).collect()
}

/// The figures of our variant and of its baseline.
pub type Measured = (Result<Stats, CallError>, Result<Stats, CallError>);

/// [`measure`] of our variant beside its baseline.
pub fn measure_against(budget: &Budget, progress: &Progress, what: &str, ours: Variant, baseline: Variant) -> Measured {
    let mut results = measure(budget, progress, what, &mut [ours, baseline]).into_iter();
    (results.next().unwrap(), results.next().unwrap())
}

/// Times `body`, the work of `batch`, as a sample of one operation per
/// iteration.
pub fn timed_batch(batch: Batch, body: impl FnOnce() -> Result<(), CallError>) -> Result<Sample, CallError> {
    let (elapsed, ()) = timed(body)?;
    Ok(Sample::of(elapsed, batch.iterations))
}

/// Times `body` once.
pub fn timed<T>(body: impl FnOnce() -> Result<T, CallError>) -> Result<(Duration, T), CallError> {
    let start = Instant::now();
    let value = body()?;
    Ok((start.elapsed(), value))
}

/// The progress line on stderr: rewritten in place on a terminal, one line
/// per step otherwise (logs stay readable).
pub struct Progress {
    terminal: bool,
    prefix: std::cell::RefCell<String>,
    last_prefix: std::cell::RefCell<String>,
}

impl Progress {
    pub fn new() -> Progress {
        Progress {
            terminal: std::io::stderr().is_terminal(),
            prefix: Default::default(),
            last_prefix: Default::default(),
        }
    }

    /// Sets what the following messages are about (device and scenario).
    pub fn begin(&self, prefix: &str) {
        *self.prefix.borrow_mut() = prefix.to_string();
        self.show("starting");
    }

    pub fn show(&self, message: &str) {
        let prefix = self.prefix.borrow();
        let mut stderr = std::io::stderr().lock();
        if self.terminal {
            let line: String = format!("ur_bench: {prefix}: {message}").chars().take(110).collect();
            let _ = write!(stderr, "\r\x1b[K{line}");
            let _ = stderr.flush();
        } else if *self.last_prefix.borrow() != *prefix {
            // Without a terminal, one line per step keeps logs readable.
            let _ = writeln!(stderr, "ur_bench: {prefix}");
            *self.last_prefix.borrow_mut() = prefix.clone();
        }
    }

    /// Clears the line before the report is printed.
    pub fn done(&self) {
        if self.terminal {
            let _ = write!(std::io::stderr(), "\r\x1b[K");
        }
    }
}

impl Default for Progress {
    fn default() -> Self {
        Progress::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median_of_sorted(&[1.0, 2.0, 9.0]), 2.0);
        assert_eq!(median_of_sorted(&[1.0, 2.0, 4.0, 9.0]), 3.0);
        assert!(median_of_sorted(&[]).is_nan());
    }

    #[test]
    fn batches_are_sized_from_the_warm_up_and_a_failing_variant_drops_out() {
        let budget =
            Budget { max_iterations: 1000, min_iterations: 4, repetitions: 3, target_batch: Duration::from_millis(1) };
        let mut seen = Vec::new();
        // Pretends each iteration takes 10 µs: 100 fit the 1 ms target.
        let mut slow = |batch: Batch| -> Result<Sample, CallError> {
            seen.push(batch);
            Ok(Sample::of(Duration::from_micros(10 * batch.iterations as u64), batch.iterations))
        };
        let mut calls = 0;
        let mut failing = |_: Batch| -> Result<Sample, CallError> {
            calls += 1;
            if calls > 1 {
                Err(CallError { call: "urSomething".into(), code: None })
            } else {
                Ok(Sample::of(Duration::from_micros(1), 1))
            }
        };
        let results = measure(&budget, &Progress::new(), "test", &mut [&mut slow, &mut failing]);
        let stats = results[0].as_ref().unwrap();
        assert_eq!(stats.iterations_per_batch, 100);
        assert_eq!(stats.samples_ns.len(), 3);
        assert!((stats.median_ns - 10_000.0).abs() < 1e-6);
        assert!(!seen[0].timed && seen[1..].iter().all(|b| b.timed && b.iterations == 100));
        assert!(results[1].is_err());
        assert_eq!(calls, 2, "a failed variant is not run again");
    }
}
