//! Runs the selected cases on their targets and reports one line per run.
//!
//! In-process by default, guarded by a watchdog that ends the run when a case
//! hangs. With `--isolate` (and always for cases that need a fresh process)
//! each run is a child process of this same binary (`--run-case NAME
//! --target LABEL`), so a crash fails one case instead of the whole run.

use crate::child::{read_on_thread, wait_until};
use crate::harness::*;
use crate::names::backend_name;
use crate::ur::*;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use ur_core::abi::*;

/// What the command line asked for.
pub struct Options {
    pub loader: PathBuf,
    pub filters: Vec<String>,
    pub backends: Vec<ur_backend_t>,
    pub isolate: bool,
    pub timeout: Duration,
}

impl Options {
    /// Whether a case name passes the `--filter` substrings (any of them).
    pub fn selects(&self, name: &str) -> bool {
        self.filters.is_empty() || self.filters.iter().any(|f| name.contains(f.as_str()))
    }

    fn selects_backend(&self, backend: ur_backend_t) -> bool {
        self.backends.is_empty() || self.backends.contains(&backend)
    }
}

/// Counts of each verdict.
#[derive(Default)]
pub struct Tally {
    pub passed: AtomicUsize,
    pub failed: AtomicUsize,
    pub skipped: AtomicUsize,
}

impl Tally {
    /// `N passed, N failed` and, when any were skipped, `, N skipped`.
    pub fn summary(&self) -> String {
        let mut line =
            format!("{} passed, {} failed", self.passed.load(Ordering::SeqCst), self.failed.load(Ordering::SeqCst));
        let skipped = self.skipped.load(Ordering::SeqCst);
        if skipped > 0 {
            line.push_str(&format!(", {skipped} skipped"));
        }
        line
    }

    pub fn any_failed(&self) -> bool {
        self.failed.load(Ordering::SeqCst) > 0
    }
}

/// Prints the verdict line of one run and counts it.
fn report(tally: &Tally, name: &str, label: &str, verdict: &CaseResult) {
    let line = match verdict {
        Ok(()) => {
            tally.passed.fetch_add(1, Ordering::SeqCst);
            format!("PASS {name} [{label}]")
        }
        Err(Outcome::Fail(reason)) => {
            tally.failed.fetch_add(1, Ordering::SeqCst);
            format!("FAIL {name} [{label}]: {}", one_line(reason))
        }
        Err(Outcome::Skip(reason)) => {
            tally.skipped.fetch_add(1, Ordering::SeqCst);
            format!("SKIP {name} [{label}]: {}", one_line(reason))
        }
    };
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Where one run of a case happens.
#[derive(Clone, Copy)]
enum Target {
    Process,
    Loader,
    Adapter(usize),
    Platform(usize),
    Device(usize),
}

fn label(topology: Option<&Topology>, target: Target) -> String {
    match (target, topology) {
        (Target::Process, _) => "fresh process".into(),
        (Target::Loader, _) => "loader".into(),
        (Target::Adapter(i), Some(t)) => {
            let backend = t.adapters[i].backend;
            let nth = t.adapters[..i].iter().filter(|a| a.backend == backend).count();
            if nth == 0 {
                backend_name(backend)
            } else {
                format!("{}#{nth}", backend_name(backend))
            }
        }
        (Target::Platform(i), Some(t)) => t.platform_label(&t.platforms[i]),
        (Target::Device(i), Some(t)) => t.device_label(&t.devices[i]),
        _ => "?".into(),
    }
}

/// The targets a case runs on.
fn targets(case: &Case, topology: &Topology, options: &Options) -> Vec<Target> {
    let adapters = (0..topology.adapters.len()).filter(|&i| options.selects_backend(topology.adapters[i].backend));
    let platforms = (0..topology.platforms.len()).filter(|&i| options.selects_backend(topology.platforms[i].backend));
    let devices = (0..topology.devices.len())
        .filter(|&i| options.selects_backend(topology.platforms[topology.devices[i].platform].backend));
    match case.body {
        Body::FreshProcess(_) => vec![Target::Process],
        Body::Loader(_) => vec![Target::Loader],
        Body::Adapter(_) => adapters.map(Target::Adapter).collect(),
        Body::Platform(_) => platforms.map(Target::Platform).collect(),
        Body::Device(_) => devices.map(Target::Device).collect(),
    }
}

/// Runs one case on one target in this process.
fn run_here(api: &Api, topology: Option<&Topology>, case: &Case, target: Target) -> CaseResult {
    let outcome = catch_unwind(AssertUnwindSafe(|| -> CaseResult {
        // SAFETY: every handle below comes from the loader's own answers in
        // `Topology::discover` and stays live for the run.
        unsafe {
            match (&case.body, target, topology) {
                (Body::FreshProcess(f), _, _) => f(api),
                (Body::Loader(f), _, Some(topology)) => f(&LoaderFx { api, topology }),
                (Body::Adapter(f), Target::Adapter(i), Some(t)) => {
                    let adapter = &t.adapters[i];
                    f(&AdapterFx { api, adapter: adapter.handle, backend: adapter.backend })
                }
                (Body::Platform(f), Target::Platform(i), Some(t)) => {
                    let p = &t.platforms[i];
                    f(&PlatformFx { api, adapter: p.adapter, platform: p.handle, backend: p.backend })
                }
                (Body::Device(f), Target::Device(i), Some(t)) => {
                    let d = &t.devices[i];
                    let p = &t.platforms[d.platform];
                    let fixture = DeviceFx::new(api, p.adapter, p.handle, p.backend, d.handle)?;
                    fixture.run(*f)
                }
                _ => Err(Outcome::Fail("internal: case and target do not match".into())),
            }
        }
    }));
    match outcome {
        Ok(verdict) => verdict,
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Err(Outcome::Fail(format!("the case panicked: {message}")))
        }
    }
}

/// Runs one case on one target in a child process and relays its line.
fn run_in_child(options: &Options, tally: &Tally, case: &Case, target_label: &str) {
    let verdict = child_verdict(options, case, target_label);
    match verdict {
        ChildVerdict::Line(line) => {
            let counter = match &line[..4] {
                "PASS" => &tally.passed,
                "SKIP" => &tally.skipped,
                _ => &tally.failed,
            };
            counter.fetch_add(1, Ordering::SeqCst);
            println!("{line}");
        }
        ChildVerdict::Failed(reason) => report(tally, case.name, target_label, &Err(Outcome::Fail(reason))),
    }
}

enum ChildVerdict {
    Line(String),
    Failed(String),
}

fn child_verdict(options: &Options, case: &Case, target_label: &str) -> ChildVerdict {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return ChildVerdict::Failed(format!("cannot find this executable to start a child: {e}")),
    };
    let child = Command::new(exe)
        .arg("--loader")
        .arg(&options.loader)
        .args(["--run-case", case.name, "--target", target_label])
        .stdout(Stdio::piped())
        .stdin(Stdio::null())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) => return ChildVerdict::Failed(format!("cannot start a child process: {e}")),
    };
    let reader = read_on_thread(child.stdout.take().expect("stdout was piped"));
    let status = match wait_until(&mut child, Instant::now() + options.timeout, Duration::from_millis(5)) {
        Ok(Some(status)) => Ok(status),
        Ok(None) => Err(format!("did not finish within {} s", options.timeout.as_secs())),
        Err(e) => Err(format!("lost the child process: {e}")),
    };
    let text = reader.join().unwrap_or_default();
    let status = match status {
        Ok(status) => status,
        Err(reason) => return ChildVerdict::Failed(reason),
    };
    let line = text.lines().rev().find(|l| l.starts_with("PASS ") || l.starts_with("FAIL ") || l.starts_with("SKIP "));
    match line {
        Some(line) => ChildVerdict::Line(line.to_string()),
        None => {
            use std::os::unix::process::ExitStatusExt;
            let how = match status.signal() {
                Some(signal) => format!("the child process died of signal {signal}"),
                None => format!("the child process exited with {status} and no verdict"),
            };
            ChildVerdict::Failed(how)
        }
    }
}

/// Ends the run when an in-process case outlives the time limit: the case
/// cannot be interrupted, so this is the only way to still report.
struct Watchdog {
    running: Mutex<Option<(String, Instant)>>,
}

impl Watchdog {
    fn start(limit: Duration, tally: Arc<Tally>) -> Arc<Watchdog> {
        let dog = Arc::new(Watchdog { running: Mutex::new(None) });
        let watched = dog.clone();
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(200));
            let running = watched.running.lock().unwrap_or_else(|e| e.into_inner()).clone();
            if let Some((what, since)) = running {
                if since.elapsed() > limit {
                    tally.failed.fetch_add(1, Ordering::SeqCst);
                    println!("FAIL {what}: did not finish within {} s; the run stops here", limit.as_secs());
                    println!("{}", tally.summary());
                    let _ = std::io::stdout().flush();
                    std::process::exit(1);
                }
            }
        });
        dog
    }

    fn enter(&self, what: String) {
        *self.running.lock().unwrap_or_else(|e| e.into_inner()) = Some((what, Instant::now()));
    }

    fn leave(&self) {
        *self.running.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// Runs every selected case on its targets; returns the tally.
pub fn run(options: &Options, cases: &[&'static Case]) -> Arc<Tally> {
    let tally = Arc::new(Tally::default());
    let api = match Api::load(&options.loader) {
        Ok(api) => api,
        Err(reason) => {
            // Nothing can run: one failure says why.
            report(&tally, "load_loader", &options.loader.display().to_string(), &Err(Outcome::Fail(reason)));
            return tally;
        }
    };
    let missing = api.fns.missing();
    if !missing.is_empty() {
        println!("# {} does not export {} entry points: {}", api.path.display(), missing.len(), missing.join(" "));
    }

    for case in cases.iter().filter(|c| matches!(c.body, Body::FreshProcess(_))) {
        run_in_child(options, &tally, case, &label(None, Target::Process));
    }
    let in_loader: Vec<_> = cases.iter().filter(|c| !matches!(c.body, Body::FreshProcess(_))).collect();
    if in_loader.is_empty() {
        return tally;
    }

    let topology = match Topology::discover(&api) {
        Ok(topology) => topology,
        Err(reason) => {
            for case in in_loader {
                report(&tally, case.name, "loader", &Err(Outcome::Fail(format!("setup failed: {reason}"))));
            }
            return tally;
        }
    };
    describe(&topology);
    check_selection(options, &topology, &tally);

    let watchdog = Watchdog::start(options.timeout, tally.clone());
    for case in in_loader {
        for target in targets(case, &topology, options) {
            let target_label = label(Some(&topology), target);
            if options.isolate {
                run_in_child(options, &tally, case, &target_label);
            } else {
                watchdog.enter(format!("{} [{target_label}]", case.name));
                let verdict = run_here(&api, Some(&topology), case, target);
                watchdog.leave();
                report(&tally, case.name, &target_label, &verdict);
            }
        }
    }
    tally
}

/// Lists what the loader reported, as comment lines.
fn describe(topology: &Topology) {
    for (i, device) in topology.devices.iter().enumerate() {
        // SAFETY: a live device handle from the loader.
        let name = unsafe { topology.api.device_info_string(device.handle, UR_DEVICE_INFO_NAME) }
            .unwrap_or_else(|e| format!("(name unknown: {e})"));
        println!("# device {i}: [{}] {name}", topology.device_label(device));
    }
}

/// A backend that was asked for but has no device is a failure, and so is a
/// loader that reports no device at all: nothing silently runs zero cases.
fn check_selection(options: &Options, topology: &Topology, tally: &Tally) {
    for backend in &options.backends {
        let devices = topology.devices.iter().filter(|d| topology.platforms[d.platform].backend == *backend).count();
        if devices == 0 {
            let reason = format!("the loader reports no device with backend {}", backend_name(*backend));
            report(tally, "urDeviceGet.selected_backend_present", &backend_name(*backend), &Err(Outcome::Fail(reason)));
        }
    }
    if options.backends.is_empty() && topology.devices.is_empty() {
        report(
            tally,
            "urDeviceGet.any_device_present",
            "loader",
            &Err(Outcome::Fail("the loader reports no device at all".into())),
        );
    }
}

/// The child side of `run_in_child`: runs one case on the target with that
/// label and prints its line. Returns the process exit code.
pub fn run_one(options: &Options, case: &'static Case, target_label: &str) -> i32 {
    let tally = Tally::default();
    let api = match Api::load(&options.loader) {
        Ok(api) => api,
        Err(reason) => {
            report(&tally, case.name, target_label, &Err(Outcome::Fail(reason)));
            return 1;
        }
    };
    if matches!(case.body, Body::FreshProcess(_)) {
        let verdict = run_here(&api, None, case, Target::Process);
        report(&tally, case.name, target_label, &verdict);
        return i32::from(tally.any_failed());
    }
    let topology = match Topology::discover(&api) {
        Ok(topology) => topology,
        Err(reason) => {
            report(&tally, case.name, target_label, &Err(Outcome::Fail(format!("setup failed: {reason}"))));
            return 1;
        }
    };
    let all = Options {
        backends: Vec::new(),
        filters: Vec::new(),
        isolate: false,
        loader: options.loader.clone(),
        timeout: options.timeout,
    };
    let target = targets(case, &topology, &all).into_iter().find(|t| label(Some(&topology), *t) == target_label);
    let verdict = match target {
        Some(target) => run_here(&api, Some(&topology), case, target),
        None => Err(Outcome::Fail(format!("no target labelled {target_label} in the child process"))),
    };
    report(&tally, case.name, target_label, &verdict);
    let _ = std::io::stdout().flush();
    i32::from(tally.any_failed())
}
