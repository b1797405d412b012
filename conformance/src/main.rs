//! `ur_conformance`: drives a Unified Runtime 0.12 loader through its C ABI
//! and checks each entry point of the supported subset against the
//! behaviour the reference header documents.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use ur_conformance::names::{backend_by_name, backend_names};
use ur_conformance::runner::{self, Options};
use ur_conformance::{cases, ur};

const USAGE: &str = "\
usage: ur_conformance [options]

  --loader PATH     the UR loader to test (default: libur_loader.so.0 beside
                    this executable)
  --backend NAME    only devices, platforms and adapters of this backend
                    (native_cpu, opencl, cuda, level_zero, ...); repeatable
  --filter SUBSTR   only cases whose name contains SUBSTR; repeatable
  --list            print the selected case names and their scope, run nothing
  --isolate         run every case in its own child process
  --timeout SECS    time limit of one case (default 120)

Prints `PASS name [target]`, `FAIL name [target]: reason` or
`SKIP name [target]: reason` per run, then `N passed, N failed`.
Exit code 1 when any case failed.";

struct Command {
    options: Options,
    list: bool,
    run_case: Option<String>,
    target: Option<String>,
}

fn parse(args: impl Iterator<Item = String>) -> Result<Command, String> {
    let mut command = Command {
        options: Options {
            loader: ur::default_loader_path(),
            filters: Vec::new(),
            backends: Vec::new(),
            isolate: false,
            timeout: Duration::from_secs(120),
        },
        list: false,
        run_case: None,
        target: None,
    };
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--loader" => command.options.loader = PathBuf::from(value("--loader")?),
            "--backend" => {
                let name = value("--backend")?;
                let backend = backend_by_name(&name)
                    .ok_or_else(|| format!("unknown backend {name}; known: {}", backend_names().join(", ")))?;
                command.options.backends.push(backend);
            }
            "--filter" => command.options.filters.push(value("--filter")?),
            "--timeout" => {
                let secs = value("--timeout")?;
                let secs: u64 = secs.parse().map_err(|_| format!("--timeout wants seconds, not {secs}"))?;
                command.options.timeout = Duration::from_secs(secs.max(1));
            }
            "--list" => command.list = true,
            "--isolate" => command.options.isolate = true,
            // Used by the parent process to run one case in a child.
            "--run-case" => command.run_case = Some(value("--run-case")?),
            "--target" => command.target = Some(value("--target")?),
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(command)
}

fn main() -> ExitCode {
    let command = match parse(std::env::args().skip(1)) {
        Ok(command) => command,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("ur_conformance: {message}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let all = cases::all();

    if let Some(name) = &command.run_case {
        let Some(case) = all.iter().find(|c| c.name == name) else {
            eprintln!("ur_conformance: no case named {name}");
            return ExitCode::from(2);
        };
        let target = command.target.as_deref().unwrap_or("loader");
        let code = runner::run_one(&command.options, case, target);
        std::process::exit(code);
    }

    let selected: Vec<_> = all.into_iter().filter(|c| command.options.selects(c.name)).collect();
    if command.list {
        let mut out = std::io::stdout().lock();
        for case in &selected {
            // A closed pipe (`| head`) just ends the listing.
            if writeln!(out, "{}  ({})", case.name, case.scope()).is_err() {
                break;
            }
        }
        return ExitCode::SUCCESS;
    }
    let tally = runner::run(&command.options, &selected);
    println!("{}", tally.summary());
    if tally.any_failed() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
