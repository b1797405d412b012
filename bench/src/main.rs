//! `ur_bench`: see the crate docs and `--help`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use ur_bench::measure::{Budget, Progress};
use ur_bench::report::{self, DeviceInfo, Row, Series};
use ur_bench::scenarios::{self, DeviceRun, SIZE};
use ur_bench::session::Session;
use ur_bench::sycl::{self, SyclSetup};
use ur_conformance::ur::{self, Api, Topology};
use ur_core::abi::UR_DEVICE_INFO_NAME;

const USAGE: &str = "\
usage: ur_bench [options]

Measures stream-ordered USM allocation (urEnqueueUSM*AllocExp / FreeExp and
the async pools) through a UR loader on every device it finds, each figure
beside a baseline from the same run, and prints a table:

  1  async alloc+free pair vs blocking urUSMDeviceAlloc/urUSMFree
  2  async alloc+fill+copy+free (one finish per batch) vs blocking with finish
  3  event chains on an out-of-order queue: cost and reuse
  4  free on queue A -> alloc on queue B by event: cost and reuse
  5  random sizes under live-byte budgets of 8, 64 and 512 MiB (quick: 8 MiB,
     fewer allocations): reserved/used high water per budget, cost at 8 MiB
  6  two threads on two queues vs one thread: pairs per second
  7  SYCL (Intel libsycl) async_malloc+memset+async_free on our adapters vs
     malloc_device+memset+wait+free on libsycl's own OpenCL adapter
  8  free on device A -> alloc on device B by event (where a platform has two)
  9  SYCL buffer create+fill+write-back, 16 KiB, on our adapters vs the same
     on libsycl's own OpenCL adapter

Entry points a device does not serve show as \"unsupported\" with the UR error.

Each row shows ours, its baseline, the ratio (for costs \"Nx faster\", or
\"Nx slower\" when ours takes longer), a goal and whether it is met. Goals are
targets, not tests: a \"NO\" leaves the exit status 0, which is non-zero only
when the loader cannot be used, an option is wrong or a file cannot be
written. bench/README.md explains every scenario and column.

options:
  --quick               short run (tests, CI): fewer iterations and repetitions
  --iterations N        most iterations per timed batch (default 100000, quick 5000)
  --repetitions N       timed batches per figure; the median is shown (default 7, quick 3)
  --device-filter TEXT  only devices whose label or name contains TEXT
                        (comma-separated alternatives, e.g. native_cpu,opencl:0);
                        scenarios 7 and 9 run the adapters named by it
  --scenarios LIST      only these scenarios (comma-separated numbers, e.g. 1,5)
  --mixed-trace DIR     write scenario 5's sequences (one file per live budget)
                        into DIR for a raw baseline to replay, and exit
                        (adapters/cuda/bench/mixed_replay.cu reads them)
  --json FILE           write every figure, sample and sweep point as JSON
  --plot FILE.svg       sweep 64 B..4 MiB for scenarios 1, 2 and 7 and draw the
                        cost per operation against allocation size
  --loader PATH         the UR loader (default: libur_loader.so.0 beside this program)

OCL_ICD_VENDORS, when unset, is pointed at this checkout's .deps/ocl-vendors
(scripts/install_opencl.sh) if it exists, so OpenCL devices are found.";

struct Options {
    quick: bool,
    iterations: Option<usize>,
    repetitions: Option<usize>,
    device_filter: Vec<String>,
    scenarios: Vec<u32>,
    mixed_trace: Option<PathBuf>,
    json: Option<PathBuf>,
    plot: Option<PathBuf>,
    loader: PathBuf,
}

fn parse_options() -> Result<Options, String> {
    let mut options = Options {
        quick: false,
        iterations: None,
        repetitions: None,
        device_filter: Vec::new(),
        scenarios: Vec::new(),
        mixed_trace: None,
        json: None,
        plot: None,
        loader: ur::default_loader_path(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        let count = |text: String, name: &str| -> Result<usize, String> {
            text.parse::<usize>().ok().filter(|&n| n > 0).ok_or_else(|| format!("{name}: not a positive count: {text}"))
        };
        match arg.as_str() {
            "--quick" => options.quick = true,
            "--iterations" => options.iterations = Some(count(value(&arg)?, &arg)?),
            "--repetitions" => options.repetitions = Some(count(value(&arg)?, &arg)?),
            "--device-filter" => {
                options.device_filter =
                    value(&arg)?.split(',').map(|s| s.trim().to_lowercase()).filter(|s| !s.is_empty()).collect()
            }
            "--scenarios" => {
                let text = value(&arg)?;
                options.scenarios = text
                    .split(',')
                    .map(|n| n.trim().parse::<u32>().ok().filter(|n| (1..=9).contains(n)))
                    .collect::<Option<Vec<u32>>>()
                    .ok_or_else(|| format!("--scenarios: not a list of scenarios 1 to 9: {text}"))?;
            }
            "--mixed-trace" => options.mixed_trace = Some(value(&arg)?.into()),
            "--json" => options.json = Some(value(&arg)?.into()),
            "--plot" => options.plot = Some(value(&arg)?.into()),
            "--loader" => options.loader = value(&arg)?.into(),
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(options)
}

impl Options {
    fn budget(&self) -> Budget {
        let mut budget = if self.quick {
            Budget::quick(self.iterations.unwrap_or(5_000))
        } else {
            Budget::full(self.iterations.unwrap_or(100_000))
        };
        if let Some(r) = self.repetitions {
            budget.repetitions = r;
        }
        budget
    }

    fn wants(&self, texts: &[&str]) -> bool {
        self.device_filter.is_empty()
            || self.device_filter.iter().any(|f| texts.iter().any(|t| t.to_lowercase().contains(f.as_str())))
    }
}

/// Points the ICD loader at this checkout's OpenCL runtimes when nothing
/// else chose, before the UR loader (and so the ICD loader) starts.
fn default_opencl_vendors() {
    if std::env::var_os("OCL_ICD_VENDORS").is_some() {
        return;
    }
    let vendors = ur_bench::checkout_root().join(".deps/ocl-vendors");
    if vendors.is_dir() {
        if let Ok(path) = vendors.canonicalize() {
            // No other thread exists yet.
            std::env::set_var("OCL_ICD_VENDORS", &path);
            eprintln!("ur_bench: OCL_ICD_VENDORS={}", path.display());
        }
    }
}

fn main() -> ExitCode {
    let options = match parse_options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("ur_bench: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if let Some(dir) = &options.mixed_trace {
        return match scenarios::write_mixed_traces(dir, options.quick) {
            Ok(files) => {
                for f in files {
                    println!("{}", f.display());
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("ur_bench: cannot write traces into {}: {e}", dir.display());
                ExitCode::FAILURE
            }
        };
    }
    default_opencl_vendors();
    let api = match Api::load(&options.loader) {
        Ok(api) => api,
        Err(e) => {
            eprintln!("ur_bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    let topology = match Topology::discover(&api) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("ur_bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    let budget = options.budget();
    let progress = Progress::new();
    let sweep_sizes = options.plot.as_ref().map(|_| scenarios::sweep_sizes(options.quick));
    let mut rows: Vec<Row> = Vec::new();
    let mut series: Vec<Series> = Vec::new();
    let mut devices: Vec<DeviceInfo> = Vec::new();

    for entry in &topology.devices {
        let label = topology.device_label(entry);
        // SAFETY: a live device handle from the loader.
        let name =
            unsafe { api.device_info_string(entry.handle, UR_DEVICE_INFO_NAME) }.unwrap_or_else(|e| format!("? ({e})"));
        if !options.wants(&[&label, &name]) {
            continue;
        }
        progress.begin(&label);
        let session = match Session::open(&api, entry.handle) {
            Ok(s) => s,
            Err(e) => {
                let mut row = Row::new(&label, 0, "open a context", report::Unit::NanosPer("op"));
                row.ours = report::Outcome::from_error(&e);
                rows.push(row);
                devices.push(DeviceInfo { label, name, async_claimed: Err(e.to_string()) });
                continue;
            }
        };
        let claimed = session.async_alloc_claimed().map_err(|e| e.to_string());
        let run = DeviceRun {
            session: &session,
            label: label.clone(),
            native_cpu: label.starts_with("native_cpu"),
            budget,
            quick: options.quick,
            only: options.scenarios.iter().copied().filter(|&n| n <= 6).collect(),
            progress: &progress,
            name: name.clone(),
        };
        if !options.scenarios.is_empty() && run.only.is_empty() && !options.scenarios.contains(&8) {
            devices.push(DeviceInfo { label, name, async_claimed: claimed });
            continue;
        }
        if options.scenarios.is_empty() || !run.only.is_empty() {
            rows.extend(run.run_all());
        }
        // Scenario 8 pairs the device with the next of its platform, when it has one.
        if options.scenarios.is_empty() || options.scenarios.contains(&8) {
            let mates: Vec<_> = topology.devices.iter().filter(|d| d.platform == entry.platform).collect();
            if mates.len() > 1 {
                let me = mates.iter().position(|d| d.handle == entry.handle).unwrap_or(0);
                progress.begin(&format!("{label} scenario 8 two devices"));
                rows.extend(run.two_devices(mates[(me + 1) % mates.len()].handle).unwrap_or_else(|failed| failed));
            }
        }
        if let Some(sizes) = &sweep_sizes {
            series.extend(run.sweep(sizes));
        }
        devices.push(DeviceInfo { label, name, async_claimed: claimed });
    }

    let adapter_dir = api.path.parent().map(Path::to_path_buf).unwrap_or_default();
    let setup = SyclSetup::from_checkout(&adapter_dir);
    let wants_adapter =
        |adapter: &str| options.wants(&[adapter, &format!("sycl/{adapter}"), &format!("sycl-buffer/{adapter}")]);
    let sycl_budget = budget.scaled(0.25);
    if options.scenarios.is_empty() || options.scenarios.contains(&7) {
        let sweep = sweep_sizes.as_deref();
        let (sycl_rows, sycl_series) =
            sycl::scenario(&setup, &sycl::ASYNC_ALLOC, &sycl_budget, sweep, &progress, &wants_adapter);
        rows.extend(sycl_rows);
        series.extend(sycl_series);
    }
    if options.scenarios.is_empty() || options.scenarios.contains(&9) {
        let (buffer_rows, _) =
            sycl::scenario(&setup, &sycl::BUFFER_LIFE, &sycl_budget, None, &progress, &wants_adapter);
        rows.extend(buffer_rows);
    }
    progress.done();

    let how = format!(
        "median of {} timed batches after a warm-up; batches of up to {} iterations (about {} ms each); {} CPUs",
        budget.repetitions,
        budget.max_iterations,
        budget.target_batch.as_millis(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!("ur_bench: loader {}", api.path.display());
    for d in &devices {
        let claim = match &d.async_claimed {
            Ok(true) => "yes".to_string(),
            Ok(false) => "no".to_string(),
            Err(e) => format!("unknown ({e})"),
        };
        println!("  device {}: {} (UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP: {claim})", d.label, d.name);
    }
    if devices.is_empty() {
        println!("  no device matched");
    }
    println!("  {how}{}", if options.quick { " (--quick)" } else { "" });
    println!(
        "  ratio: for costs, how many times faster ours is (baseline time / ours), or slower (ours / baseline time); \
         otherwise ours / baseline"
    );
    println!("  goal and met?: targets the figures are compared with, not tests; a NO does not fail the run");
    println!();
    print!("{}", report::table(&rows));

    let mut status = ExitCode::SUCCESS;
    if let Some(path) = &options.json {
        let settings = report::Settings {
            tool: "ur_bench",
            loader: api.path.display().to_string(),
            quick: options.quick,
            repetitions: budget.repetitions,
            max_iterations: budget.max_iterations,
            size: SIZE,
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        };
        let written = report::to_json(&settings, &devices, &rows, &series)
            .map_err(|e| e.to_string())
            .and_then(|text| std::fs::write(path, text).map_err(|e| e.to_string()));
        if let Err(e) = written {
            eprintln!("ur_bench: cannot write {}: {e}", path.display());
            status = ExitCode::FAILURE;
        } else {
            println!("\nJSON: {}", path.display());
        }
    }
    if let Some(path) = &options.plot {
        if let Err(e) = std::fs::write(path, ur_bench::plot::svg(&series, &how)) {
            eprintln!("ur_bench: cannot write {}: {e}", path.display());
            status = ExitCode::FAILURE;
        } else {
            println!("chart: {}", path.display());
        }
    }
    drop(topology);
    status
}
