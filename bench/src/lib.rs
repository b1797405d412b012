//! `ur_bench`: stream-ordered USM allocation measured through the C ABI of a
//! Unified Runtime loader, on every device it finds, each figure beside a
//! baseline from the same run.
//!
//! - `session`: a device's context, queues, pools and events, and the calls;
//! - `scenarios`: scenarios 1 to 6 and the size sweep of the chart;
//! - `sycl`: scenarios 7 and 9, through Intel's libsycl and a SYCL helper program;
//! - `measure`: warm-up, repetitions, medians; the progress line;
//! - `report`, `plot`: the table, `--json` (through serde_json) and `--plot`.

pub mod measure;
pub mod plot;
pub mod report;
pub mod scenarios;
pub mod session;
pub mod sycl;

use std::path::{Path, PathBuf};

/// The checkout this benchmark was built in (the workspace root, parent of
/// the bench crate), where `.deps/` is looked for: a clean absolute path,
/// for messages that name files in it.
pub fn checkout_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = manifest.parent().unwrap_or(manifest);
    root.canonicalize().unwrap_or_else(|_| root.to_path_buf())
}
