//! Where the built loader and native CPU adapter are, for the tests that
//! drive them through the C ABI in a process of their own.
#![allow(dead_code)]

use std::path::PathBuf;
use ur_conformance::ur::{Api, Topology};

/// `target/release` of this build (CARGO_TARGET_DIR when it was set), where
/// scripts/build.sh leaves the libraries with their `.so.0` names.
pub fn library_dir() -> PathBuf {
    let target = option_env!("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"));
    let dir = target.join("release");
    for lib in ["libur_loader.so.0", "libur_adapter_native_cpu.so.0"] {
        assert!(dir.join(lib).exists(), "{} missing: run `bash scripts/build.sh` first", dir.join(lib).display());
    }
    dir
}

/// Our loader, with the adapters named in `force` (UR_ADAPTERS_FORCE_LOAD),
/// initialised; the whole process keeps them.
pub fn open(force: &str) -> (&'static Api, Topology<'static>) {
    // Set before the loader is opened: it reads the variable in urLoaderInit.
    std::env::set_var("UR_ADAPTERS_FORCE_LOAD", force);
    let api: &'static Api = Box::leak(Box::new(Api::load(&library_dir().join("libur_loader.so.0")).expect("load loader")));
    let topology = Topology::discover(api).expect("urLoaderInit and discovery");
    (api, topology)
}
