//! `urinfo`: what a Unified Runtime loader finds on this machine. Lists each
//! adapter, its platforms (name, vendor, version, backend) and their devices
//! (name, type, compute units, global memory, async allocation support).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use ur_conformance::names::{backend_name, device_type_name};
use ur_conformance::ur::{self, Api, CallError, Topology};
use ur_core::abi::*;

const USAGE: &str = "\
usage: urinfo [--loader PATH]

  --loader PATH   the UR loader to ask (default: libur_loader.so.0 beside
                  this executable)";

fn main() -> ExitCode {
    let mut loader = ur::default_loader_path();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--loader", Some(path)) => loader = PathBuf::from(path),
            _ => {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    match list(&loader) {
        Ok(()) => ExitCode::SUCCESS,
        Err(reason) => {
            eprintln!("urinfo: {reason}");
            ExitCode::FAILURE
        }
    }
}

/// Opens the loader at `path` and prints what it finds.
fn list(path: &Path) -> Result<(), String> {
    let api = Api::load(path)?;
    let topology = Topology::discover(&api)?;
    println!("loader: {}", api.path.display());
    // SAFETY: every handle printed comes from the loader's own answers.
    unsafe { print(&topology) };
    Ok(())
}

/// An answer, or why there is none.
fn shown<T>(answer: Result<T, CallError>, show: impl FnOnce(T) -> String) -> String {
    match answer {
        Ok(value) => show(value),
        Err(e) => match e.code {
            Some(code) => format!("? ({})", ur_conformance::names::result_name(code)),
            None => format!("? ({e})"),
        },
    }
}

fn gibibytes(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// # Safety
/// The topology's handles must be live.
unsafe fn print(topology: &Topology) {
    let api = topology.api;
    if topology.adapters.is_empty() {
        println!("no adapters");
    }
    for (a, adapter) in topology.adapters.iter().enumerate() {
        let version = shown(api.adapter_info::<u32>(adapter.handle, UR_ADAPTER_INFO_VERSION), |v| v.to_string());
        println!("adapter {a}: {} (version {version})", backend_name(adapter.backend));
        let platforms: Vec<_> =
            topology.platforms.iter().enumerate().filter(|(_, p)| p.adapter == adapter.handle).collect();
        if platforms.is_empty() {
            println!("  no platforms");
        }
        for (p, platform) in platforms {
            let text = |prop| shown(api.platform_info_string(platform.handle, prop), |s| s);
            println!(
                "  [{}] {} | vendor {} | version {} | backend {}",
                topology.platform_label(platform),
                text(UR_PLATFORM_INFO_NAME),
                text(UR_PLATFORM_INFO_VENDOR_NAME),
                text(UR_PLATFORM_INFO_VERSION),
                backend_name(platform.backend)
            );
            for device in topology.devices.iter().filter(|d| d.platform == p) {
                let d = device.handle;
                let name = shown(api.device_info_string(d, UR_DEVICE_INFO_NAME), |s| s);
                let kind = shown(api.device_info::<ur_device_type_t>(d, UR_DEVICE_INFO_TYPE), |t| {
                    device_type_name(t).trim_start_matches("UR_DEVICE_TYPE_").to_string()
                });
                let units = shown(api.device_info::<u32>(d, UR_DEVICE_INFO_MAX_COMPUTE_UNITS), |n| n.to_string());
                let memory = shown(api.device_info::<u64>(d, UR_DEVICE_INFO_GLOBAL_MEM_SIZE), gibibytes);
                let async_alloc =
                    shown(api.device_info::<ur_bool_t>(d, UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP), |b| {
                        if b != 0 {
                            "yes".into()
                        } else {
                            "no".into()
                        }
                    });
                println!("    [{}] {name}", topology.device_label(device));
                println!(
                    "        type {kind}, {units} compute units, {memory} global memory, async USM allocation: {async_alloc}"
                );
            }
        }
    }
}
