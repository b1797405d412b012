//! ur_fuzz_seq: runs fuzz inputs as UR call sequences through our loader
//! (`libur_loader.so.0` beside the executable, or `UR_FUZZ_LOADER`), with
//! the native CPU adapter.
//!
//! - built with feature `afl` and started by afl-fuzz: AFL++'s persistent
//!   loop reads each input from stdin (coverage from the instrumented loader
//!   and adapter as well, see scripts/fuzz.sh);
//! - `ur_fuzz_seq FILE...`: runs each file once (corpus replay, crash repro).
//!
//! A finding aborts the process; a Rust panic in the harness aborts too.

mod seq;

use std::io::Read;
use std::path::PathBuf;
use ur_conformance::ur::{default_loader_path, Api, Topology};
use ur_core::abi::*;

#[cfg(feature = "afl")]
extern "C" {
    fn __afl_persistent_loop(max: u32) -> i32;
    fn __afl_manual_init();
}

/// AFL's markers: afl-fuzz looks for them in the binary to use persistent
/// mode and to start the fork server late (after the libraries are mapped).
#[cfg(feature = "afl")]
#[used]
static PERSISTENT: &[u8] = b"##SIG_AFL_PERSISTENT##\0";
#[cfg(feature = "afl")]
#[used]
static DEFERRED: &[u8] = b"##SIG_AFL_DEFER_FORKSRV##\0";

fn open() -> (&'static Api, Vec<ur_device_handle_t>) {
    let path = std::env::var_os("UR_FUZZ_LOADER").map(PathBuf::from).unwrap_or_else(default_loader_path);
    let api: &'static Api = Box::leak(Box::new(Api::load(&path).unwrap_or_else(|e| {
        eprintln!("ur_fuzz_seq: {e}");
        std::process::exit(2)
    })));
    (api, Vec::new())
}

/// urLoaderInit and the native CPU devices; after the fork, since the
/// adapter starts threads that a fork would not carry over.
fn devices(api: &'static Api) -> Vec<ur_device_handle_t> {
    let topology = Topology::discover(api).unwrap_or_else(|e| {
        eprintln!("ur_fuzz_seq: {e}");
        std::process::exit(2)
    });
    let devices: Vec<ur_device_handle_t> = topology.devices.iter().map(|d| d.handle).collect();
    // The devices stay referenced for the process's life.
    std::mem::forget(topology);
    if devices.is_empty() {
        eprintln!("ur_fuzz_seq: no device");
        std::process::exit(2);
    }
    devices
}

fn main() {
    // A panic in the harness is a finding: make it a crash AFL sees.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("ur_fuzz finding: panic: {info}");
        std::process::abort();
    }));
    let (api, _) = open();
    let files: Vec<String> = std::env::args().skip(1).collect();
    #[cfg(feature = "afl")]
    if files.is_empty() {
        // The adapter is mapped before the fork server starts, so that its
        // edges are counted from the start: the loader's dlopen of the same
        // path later finds it mapped.
        if let Some(adapter) = std::env::var_os("UR_ADAPTERS_FORCE_LOAD") {
            // SAFETY: loading our adapter runs no code but its initialisers.
            match unsafe { libloading::Library::new(&adapter) } {
                Ok(lib) => std::mem::forget(lib),
                Err(e) => eprintln!("ur_fuzz_seq: {e}"),
            }
        }
        // SAFETY: AFL++'s runtime entry points, linked by build.rs.
        unsafe { __afl_manual_init() };
        let devices = devices(api);
        let mut input = Vec::new();
        while unsafe { __afl_persistent_loop(10000) } != 0 {
            input.clear();
            let _ = std::io::stdin().read_to_end(&mut input);
            seq::Seq::new(api, &devices, &input).run();
        }
        return;
    }
    let devices = devices(api);
    let mut input = Vec::new();
    if files.is_empty() {
        let _ = std::io::stdin().read_to_end(&mut input);
        seq::Seq::new(api, &devices, &input).run();
    }
    for f in &files {
        input = std::fs::read(f).unwrap_or_else(|e| {
            eprintln!("ur_fuzz_seq: {f}: {e}");
            std::process::exit(2)
        });
        seq::Seq::new(api, &devices, &input).run();
    }
    eprintln!(
        "ur_fuzz_seq: {} inputs ran, {} calls, {} succeeded",
        files.len().max(1),
        seq::CALLS.load(std::sync::atomic::Ordering::Relaxed),
        seq::SUCCESSES.load(std::sync::atomic::Ordering::Relaxed)
    );
}
