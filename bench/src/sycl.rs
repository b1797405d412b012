//! Scenarios 7 and 9: the SYCL client's view. A small SYCL program
//! (`bench/sycl/async_bench.cpp`, built here with g++ against the headers of
//! Intel's `intel-sycl-rt` wheel) runs as a child process under Intel's
//! `libsycl.so.9`, once per configuration, and prints its timings as JSON
//! lines. Ours is our adapters, forced in with `UR_ADAPTERS_FORCE_LOAD`
//! (native CPU, and OpenCL on Intel's CPU runtime); the baseline is
//! libsycl's own built-in OpenCL adapter, on the same CPU through Intel's
//! CPU OpenCL runtime (`ONEAPI_DEVICE_SELECTOR=opencl:cpu`).
//!
//! - 7: ours does `async_malloc` + `memset` + `async_free`, the baseline
//!   `malloc_device` + `memset` + `wait` + `free`;
//! - 9: both do the same buffer loop: a `sycl::buffer` over 16 KiB of host
//!   memory, a `fill` through an accessor, and the write-back when the
//!   buffer goes.

use serde::Deserialize;
use crate::measure::{Budget, Progress, Stats};
use crate::report::{size_label, Goal, Outcome, Point, Row, Series, Unit};
use crate::scenarios::SIZE;
use std::collections::BTreeMap;
use ur_conformance::child::{read_on_thread, wait_until};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Where scenarios 7 and 9 find what they need.
pub struct SyclSetup {
    /// Intel's SYCL runtime as `scripts/install_sycl.sh` unpacks it.
    pub sycl_root: PathBuf,
    /// The OpenCL vendors folder of `scripts/install_opencl.sh`.
    pub ocl_vendors: PathBuf,
    /// The folder holding our `libur_adapter_*.so.0`.
    pub adapter_dir: PathBuf,
    pub helper_source: PathBuf,
    pub helper_binary: PathBuf,
}

impl SyclSetup {
    /// The layout of this checkout: `.deps/` beside the bench crate (or
    /// `$SYCL_ROOT`), and the helper built next to the bench executable.
    pub fn from_checkout(adapter_dir: &Path) -> SyclSetup {
        let repo = crate::checkout_root();
        let sycl_root = std::env::var_os("SYCL_ROOT").map(PathBuf::from).unwrap_or_else(|| repo.join(".deps/sycl"));
        let exe_dir = std::env::current_exe().ok().and_then(|e| e.parent().map(Path::to_path_buf)).unwrap_or_default();
        SyclSetup {
            sycl_root,
            ocl_vendors: repo.join(".deps/ocl-vendors"),
            adapter_dir: adapter_dir.to_path_buf(),
            helper_source: Path::new(env!("CARGO_MANIFEST_DIR")).join("sycl/async_bench.cpp"),
            helper_binary: exe_dir.join("ur_bench-sycl/async_bench"),
        }
    }

    fn libsycl(&self) -> PathBuf {
        self.sycl_root.join("lib/libsycl.so.9")
    }

    fn intel_icd(&self) -> PathBuf {
        self.ocl_vendors.join("intel.icd")
    }

    /// Builds the helper when it is missing or older than its source.
    fn build_helper(&self) -> Result<(), String> {
        let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        if let (Some(bin), Some(src)) = (modified(&self.helper_binary), modified(&self.helper_source)) {
            if bin >= src {
                return Ok(());
            }
        }
        let folder = self.helper_binary.parent().ok_or("no folder for the SYCL helper")?;
        std::fs::create_dir_all(folder).map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
        // Built under a temporary name and renamed, so that a concurrent run
        // never executes a half-written file.
        let partial = folder.join(format!("async_bench.{}.tmp", std::process::id()));
        let output = Command::new("g++")
            .args(["-std=c++17", "-O2", "-Wall", "-DSYCL_DISABLE_FSYCL_SYCLHPP_WARNING", "-isystem"])
            .arg(self.sycl_root.join("include"))
            .arg(&self.helper_source)
            .arg(format!("-L{}", self.sycl_root.join("lib").display()))
            .arg("-l:libsycl.so.9")
            .arg("-o")
            .arg(&partial)
            .output()
            .map_err(|e| format!("cannot run g++: {e}"))?;
        if !output.status.success() {
            let _ = std::fs::remove_file(&partial);
            let stderr = String::from_utf8_lossy(&output.stderr);
            let tail: Vec<&str> = stderr.lines().rev().take(6).collect();
            return Err(format!(
                "g++ failed on {}: {}",
                self.helper_source.display(),
                tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
            ));
        }
        std::fs::rename(&partial, &self.helper_binary).map_err(|e| format!("cannot place the SYCL helper: {e}"))
    }
}

/// One configuration the helper runs in.
struct Config {
    /// Row label: `sycl/native_cpu`.
    label: String,
    /// Series name in the chart.
    series: String,
    mode: &'static str,
    env: Vec<(&'static str, String)>,
    /// Whether the configuration can run here, or why not.
    available: Result<(), String>,
}

/// One JSON line of the helper (`bench/sycl/async_bench.cpp`), by its
/// `kind`. Fields it may leave out are optional; other kinds (`done`) are
/// read and ignored.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum HelperLine {
    Device { name: Option<String>, platform: Option<String>, backend: Option<String>, async_aspect: Option<bool> },
    Sample { size: Option<usize>, ns_per_iteration: Option<f64>, iterations: Option<usize> },
    Error { stage: Option<String>, what: Option<String> },
    #[serde(other)]
    Other,
}

/// What one helper run reported.
struct HelperRun {
    device: Option<DeviceSeen>,
    /// Samples (ns per iteration) by size.
    samples: BTreeMap<usize, Vec<f64>>,
    iterations: BTreeMap<usize, usize>,
    /// Why it stopped early, if it did.
    error: Option<Outcome>,
}

/// The device the helper's default selector picked.
struct DeviceSeen {
    name: String,
    platform: String,
    backend: String,
    async_aspect: Option<bool>,
}

impl DeviceSeen {
    /// The device in words, with whether it has the async allocation aspect
    /// when `aspect` asks for it.
    fn describe(&self, aspect: bool) -> String {
        let aspect = match aspect {
            true if self.async_aspect == Some(true) => "; async alloc aspect yes",
            true => "; async alloc aspect no",
            false => "",
        };
        format!("{} ({}, {}{aspect})", self.name, self.platform, self.backend)
    }
}

impl HelperRun {
    fn at(&self, size: usize) -> Outcome {
        match self.samples.get(&size) {
            Some(samples) if !samples.is_empty() => {
                let stats = Stats::from_samples(samples.clone(), self.iterations.get(&size).copied().unwrap_or(0));
                Outcome::Measured { value: stats.median_ns, stats: Some(stats) }
            }
            _ => self.error.clone().unwrap_or_else(|| Outcome::Failed(format!("no samples at {}", size_label(size)))),
        }
    }
}

const HELPER_TIME_LIMIT: Duration = Duration::from_secs(300);

fn run_helper(setup: &SyclSetup, config: &Config, sizes: &[usize], budget: &Budget) -> HelperRun {
    let failed = |reason: String| HelperRun {
        device: None,
        samples: BTreeMap::new(),
        iterations: BTreeMap::new(),
        error: Some(Outcome::Failed(reason)),
    };
    let mut command = Command::new(&setup.helper_binary);
    command
        .args(["--mode", config.mode])
        .args(["--sizes", &sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(",")])
        .args(["--max-iterations", &budget.max_iterations.to_string()])
        .args(["--min-iterations", &budget.min_iterations.to_string()])
        .args(["--repetitions", &budget.repetitions.to_string()])
        .args(["--target-ms", &budget.target_batch.as_millis().to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // A clean slate of the variables that pick adapters and devices; each
    // configuration sets its own.
    for name in ["UR_ADAPTERS_FORCE_LOAD", "ONEAPI_DEVICE_SELECTOR", "OCL_ICD_VENDORS", "SYCL_UR_TRACE"] {
        command.env_remove(name);
    }
    let library_path = match std::env::var("LD_LIBRARY_PATH") {
        Ok(old) if !old.is_empty() => format!("{}:{old}", setup.sycl_root.join("lib").display()),
        _ => setup.sycl_root.join("lib").display().to_string(),
    };
    command.env("LD_LIBRARY_PATH", library_path);
    for (name, value) in &config.env {
        command.env(name, value);
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => return failed(format!("cannot start {}: {e}", setup.helper_binary.display())),
    };
    let out_reader = read_on_thread(child.stdout.take().expect("piped"));
    let err_reader = read_on_thread(child.stderr.take().expect("piped"));
    let deadline = Instant::now() + HELPER_TIME_LIMIT;
    let status = wait_until(&mut child, deadline, Duration::from_millis(20)).ok().flatten();
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();

    let mut run = HelperRun { device: None, samples: BTreeMap::new(), iterations: BTreeMap::new(), error: None };
    for line in stdout.lines().filter(|l| l.starts_with('{')) {
        let value = match serde_json::from_str::<HelperLine>(line) {
            Ok(value) => value,
            Err(e) => {
                run.error.get_or_insert(Outcome::Failed(format!("the helper printed a bad line ({e}): {line}")));
                continue;
            }
        };
        let text = |field: &Option<String>| field.clone().unwrap_or_else(|| "?".into());
        match value {
            HelperLine::Device { name, platform, backend, async_aspect } => {
                run.device = Some(DeviceSeen {
                    name: text(&name),
                    platform: text(&platform),
                    backend: text(&backend),
                    async_aspect,
                });
            }
            HelperLine::Sample { size: Some(size), ns_per_iteration: Some(ns), iterations } => {
                run.samples.entry(size).or_default().push(ns);
                if let Some(n) = iterations {
                    run.iterations.insert(size, n);
                }
            }
            HelperLine::Sample { .. } | HelperLine::Other => {}
            HelperLine::Error { stage, what } => {
                let what = text(&what);
                let reason = format!("libsycl: {}: {what}", text(&stage));
                run.error =
                    Some(if what.contains("UR_RESULT_ERROR_UNSUPPORTED_FEATURE") || what.contains("not supported") {
                        Outcome::Unsupported(format!("unsupported on this device: {reason}"))
                    } else {
                        Outcome::Failed(reason)
                    });
            }
        }
    }
    let status_problem = match status {
        None => Some(format!("the helper ran past {} s and was stopped", HELPER_TIME_LIMIT.as_secs())),
        Some(s) if !s.success() && run.error.is_none() => {
            let tail: Vec<&str> = stderr.lines().rev().take(3).collect();
            Some(format!("the helper exited with {s}: {}", tail.into_iter().rev().collect::<Vec<_>>().join(" | ")))
        }
        _ => None,
    };
    if let Some(problem) = status_problem {
        run.error.get_or_insert(Outcome::Failed(problem));
    }
    run
}

/// One side's loop in the helper: its `--mode`, one iteration in words
/// (row names, legends, notes) and, for the chart's panel, in short.
struct Work {
    mode: &'static str,
    what: &'static str,
    panel: &'static str,
}

const ASYNC: Work = Work { mode: "async", what: "async_malloc+memset+async_free", panel: "allocate + memset + free" };
const BLOCKING: Work =
    Work { mode: "blocking", what: "malloc_device+memset+wait+free", panel: "allocate + memset + free" };
const BUFFER: Work =
    Work { mode: "buffer", what: "buffer create+fill+write-back", panel: "buffer + fill + write-back" };

/// A SYCL scenario: ours runs `ours` on each of our adapters, the baseline
/// runs `baseline` on libsycl's own OpenCL adapter (Intel's CPU runtime).
pub struct Spec {
    number: u32,
    /// Row labels start with it: `sycl` gives `sycl/native_cpu`.
    label: &'static str,
    /// The size of the rows' figures; a chart sweep adds others.
    size: usize,
    ours: Work,
    baseline: Work,
    goal: Goal,
}

/// Scenario 7: `async_malloc` + `memset` + `async_free` against
/// `malloc_device` + `memset` + `wait` + `free`, 1 KiB.
pub const ASYNC_ALLOC: Spec =
    Spec { number: 7, label: "sycl", size: SIZE, ours: ASYNC, baseline: BLOCKING, goal: Goal::RatioAtLeast(3.0) };

/// The buffer size of scenario 9.
pub const BUFFER_SIZE: usize = 16 << 10;

/// Scenario 9: a `sycl::buffer` over host memory, a fill through an
/// accessor and the write-back when the buffer goes, the same loop on both
/// sides; ours at most Intel's time.
pub const BUFFER_LIFE: Spec = Spec {
    number: 9,
    label: "sycl-buffer",
    size: BUFFER_SIZE,
    ours: BUFFER,
    baseline: BUFFER,
    goal: Goal::TimeAtMost(1.0, "Intel's"),
};

/// A SYCL scenario's rows (one per adapter of ours), and its chart series
/// when `sweep` sizes are given. `wanted` filters our adapters by name.
pub fn scenario(
    setup: &SyclSetup,
    spec: &Spec,
    budget: &Budget,
    sweep: Option<&[usize]>,
    progress: &Progress,
    wanted: &dyn Fn(&str) -> bool,
) -> (Vec<Row>, Vec<Series>) {
    let intel_icd = setup.intel_icd();
    let intel_runtime = if intel_icd.exists() {
        Ok(())
    } else {
        Err(format!(
            "Intel's CPU OpenCL runtime is not installed ({} missing; scripts/install_opencl.sh)",
            intel_icd.display()
        ))
    };
    let adapter = |name: &str| setup.adapter_dir.join(format!("libur_adapter_{name}.so.0"));
    let adapter_present = |name: &str| {
        let path = adapter(name);
        if path.exists() {
            Ok(())
        } else {
            Err(format!("{} is not built (scripts/build.sh)", path.display()))
        }
    };
    let ours: Vec<Config> = [
        ("native_cpu", "our native_cpu adapter", Vec::new()),
        ("opencl", "our opencl adapter, Intel CPU OpenCL", vec![("OCL_ICD_VENDORS", intel_icd.display().to_string())]),
    ]
    .into_iter()
    .filter(|(adapter_name, _, _)| wanted(adapter_name))
    .map(|(adapter_name, text, mut env)| {
        env.push(("UR_ADAPTERS_FORCE_LOAD", adapter(adapter_name).display().to_string()));
        let available = adapter_present(adapter_name).and_then(|()| {
            if adapter_name == "opencl" {
                intel_runtime.clone()
            } else {
                Ok(())
            }
        });
        Config {
            label: format!("{}/{adapter_name}", spec.label),
            series: format!("{} on {text} (ours)", spec.ours.what),
            mode: spec.ours.mode,
            env,
            available,
        }
    })
    .collect();
    if ours.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let baseline = Config {
        label: format!("{}/intel-opencl", spec.label),
        series: format!("{} on Intel's OpenCL adapter (baseline)", spec.baseline.what),
        mode: spec.baseline.mode,
        env: vec![
            ("ONEAPI_DEVICE_SELECTOR", "opencl:cpu".into()),
            ("OCL_ICD_VENDORS", intel_icd.display().to_string()),
        ],
        available: intel_runtime.clone(),
    };

    // What all configurations need: libsycl and the helper.
    let common = if !setup.libsycl().exists() {
        Err(Outcome::Unavailable(format!(
            "Intel's libsycl is not installed ({} missing; scripts/install_sycl.sh)",
            setup.libsycl().display()
        )))
    } else {
        progress.begin(&format!("scenario {} SYCL", spec.number));
        progress.show("building the SYCL helper");
        setup.build_helper().map_err(Outcome::Failed)
    };

    let mut sizes = sweep.map(<[usize]>::to_vec).unwrap_or_default();
    if !sizes.contains(&spec.size) {
        sizes.push(spec.size);
    }
    sizes.sort_unstable();
    let run = |config: &Config| -> Result<HelperRun, Outcome> {
        if let Err(e) = &common {
            return Err(e.clone());
        }
        config.available.clone().map_err(Outcome::Unavailable)?;
        progress.begin(&format!("scenario {} {}", spec.number, config.label));
        progress.show("running the SYCL helper");
        Ok(run_helper(setup, config, &sizes, budget))
    };
    // Whether the device has the async allocation aspect matters where ours allocates that way.
    let device_text = |run: &HelperRun| run.device.as_ref().map(|device| device.describe(spec.ours.mode == ASYNC.mode));
    let baseline_run = run(&baseline);
    let mut rows = Vec::new();
    let mut series = Vec::new();
    let mut add_series = |config: &Config, outcome: &Result<HelperRun, Outcome>, ours: bool| {
        if sweep.is_none() {
            return;
        }
        let (points, note) = match outcome {
            Ok(run) => (
                sizes.iter().map(|&size| Point { size, ns: run.at(size).value() }).collect(),
                run.error.as_ref().map(Outcome::describe),
            ),
            Err(o) => (sizes.iter().map(|&size| Point { size, ns: None }).collect(), Some(o.describe())),
        };
        series.push(Series {
            panel: format!("SYCL client (Intel libsycl.so.9), one iteration: {}", spec.ours.panel),
            name: config.series.clone(),
            ours,
            points,
            note,
        });
    };
    add_series(&baseline, &baseline_run, false);
    for config in &ours {
        let ours_run = run(config);
        add_series(config, &ours_run, true);
        let name = format!("SYCL {}, {}", spec.ours.what, size_label(spec.size));
        let mut row = Row::new(&config.label, spec.number, name, Unit::NanosPer("iteration"));
        row.goal = Some(spec.goal);
        row.ours = match &ours_run {
            Ok(r) => r.at(spec.size),
            Err(o) => o.clone(),
        };
        row.baseline = match &baseline_run {
            Ok(r) => r.at(spec.size),
            Err(o) => o.clone(),
        };
        if let Some(device) = ours_run.as_ref().ok().and_then(device_text) {
            row.notes.push(format!("ours ran on {device}"));
        }
        let baseline_device = baseline_run.as_ref().ok().and_then(device_text);
        row.notes.push(format!(
            "baseline: {} through libsycl's own OpenCL adapter{}",
            spec.baseline.what,
            baseline_device.map_or_else(|| ", Intel CPU runtime".into(), |device| format!(" on {device}"))
        ));
        rows.push(row);
    }
    (rows, series)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Component;

    #[test]
    fn paths_in_messages_are_clean_and_absolute() {
        let setup = SyclSetup::from_checkout(Path::new("/adapters"));
        let mut paths = vec![setup.ocl_vendors.clone(), setup.intel_icd(), setup.helper_source.clone()];
        if std::env::var_os("SYCL_ROOT").is_none() {
            paths.push(setup.libsycl());
        }
        for path in paths {
            assert!(
                path.is_absolute() && !path.components().any(|c| c == Component::ParentDir),
                "{} is not a clean absolute path",
                path.display()
            );
        }
        assert!(setup.ocl_vendors.ends_with(".deps/ocl-vendors"));
    }

    #[test]
    fn helper_lines_read_as_the_helper_prints_them() {
        let line = |text: &str| serde_json::from_str::<HelperLine>(text);
        assert_eq!(
            line(r#"{"kind":"sample","mode":"async","size":4096,"iterations":10,"ns_per_iteration":12.500}"#).unwrap(),
            HelperLine::Sample { size: Some(4096), ns_per_iteration: Some(12.5), iterations: Some(10) }
        );
        assert_eq!(
            line(r#"{"kind":"error","stage":"malloc","what":"a \"quoted\" \u0001 text"}"#).unwrap(),
            HelperLine::Error { stage: Some("malloc".into()), what: Some("a \"quoted\" \u{1} text".into()) }
        );
        assert_eq!(
            line(r#"{"kind":"device","name":"CPU","platform":"P","backend":"opencl","async_aspect":true}"#).unwrap(),
            HelperLine::Device {
                name: Some("CPU".into()),
                platform: Some("P".into()),
                backend: Some("opencl".into()),
                async_aspect: Some(true)
            }
        );
        assert_eq!(line(r#"{"kind":"done"}"#).unwrap(), HelperLine::Other);
        for bad in ["{", r#"{"kind":"sample","size":-1}"#, r#"{"kind":"sample"} x"#, r#"{"size":1}"#] {
            assert!(line(bad).is_err(), "accepted {bad}");
        }
    }
}
