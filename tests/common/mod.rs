//! Helpers shared by the integration tests that use the built libraries.
// Each test crate uses a different part of this module.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::SystemTime;

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The folder (`target/release` or `target/debug`) holding every library in
/// `required`, the more recently built one when both do.
///
/// Panics, saying how to build them, when neither does: these tests check
/// the real libraries and never pass without them.
pub fn built_library_dir(required: &[&str]) -> PathBuf {
    let target = repo_root().join("target");
    let mut built: Vec<(SystemTime, PathBuf)> = ["release", "debug"]
        .iter()
        .map(|profile| target.join(profile))
        .filter(|dir| required.iter().all(|lib| dir.join(lib).is_file()))
        .filter_map(|dir| {
            let newest = required
                .iter()
                .filter_map(|lib| std::fs::metadata(dir.join(lib)).and_then(|m| m.modified()).ok())
                .max()?;
            Some((newest, dir))
        })
        .collect();
    built.sort();
    match built.pop() {
        Some((_, dir)) => dir,
        None => panic!(
            "{} not built in target/release nor target/debug: run `bash scripts/build.sh` first",
            required.join(" and ")
        ),
    }
}

/// A folder where each library of `dir` also has the `.so.0` name that the
/// loader's SONAME and the adapter discovery use (scripts/build.sh makes
/// these links in target/release; a debug build has none).
pub fn library_dir_with_sonames(dir: &Path, scratch: &Path) -> PathBuf {
    let links = scratch.join("lib");
    let _ = std::fs::remove_dir_all(&links);
    std::fs::create_dir_all(&links).expect("create library folder");
    for entry in std::fs::read_dir(dir).expect("read library folder").flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_ur_library = name.starts_with("libur_") && name.ends_with(".so");
        if is_ur_library {
            std::os::unix::fs::symlink(entry.path(), links.join(format!("{name}.0"))).expect("link library");
        }
    }
    links
}
