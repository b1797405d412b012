//! `examples/demo.c` builds against our header and, unchanged, against the
//! reference UR 0.12 header, and both binaries run to success on our loader
//! with the native CPU adapter.

mod common;

use common::{built_library_dir, library_dir_with_sonames, repo_root};
use std::path::{Path, PathBuf};
use std::process::Command;

fn scratch() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("demo");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn compile_demo(include_flags: &[&str], lib_dir: &Path, out: &Path) {
    let output = Command::new("gcc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror"])
        .args(include_flags)
        .arg(repo_root().join("examples/demo.c"))
        .arg("-L")
        .arg(lib_dir)
        .arg("-l:libur_loader.so.0")
        .arg("-o")
        .arg(out)
        .output()
        .expect("run gcc");
    assert!(
        output.status.success(),
        "building the demo with {include_flags:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Runs a demo binary on our loader with only the native CPU adapter.
fn run_demo(exe: &Path, lib_dir: &Path) -> String {
    let output = Command::new(exe)
        .env("LD_LIBRARY_PATH", lib_dir)
        .env("UR_ADAPTERS_FORCE_LOAD", lib_dir.join("libur_adapter_native_cpu.so.0"))
        .output()
        .expect("run the demo");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{} failed ({}):\n{stdout}{}",
        exe.display(),
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[test]
fn demo_builds_against_both_headers_and_runs_on_native_cpu() {
    let reference = repo_root().join(".deps/reference/include/unified-runtime");
    assert!(
        reference.join("ur_api.h").is_file(),
        "the reference headers are missing: run `bash scripts/fetch_reference.sh` first"
    );
    let built = built_library_dir(&["libur_loader.so", "libur_adapter_native_cpu.so"]);
    let scratch = scratch();
    let lib_dir = library_dir_with_sonames(&built, &scratch);

    let ours = scratch.join("demo_ours");
    let with_reference = scratch.join("demo_reference");
    let our_include = repo_root().join("include");
    compile_demo(&["-I", our_include.to_str().unwrap()], &lib_dir, &ours);
    compile_demo(&["-include", "stdbool.h", "-I", reference.to_str().unwrap()], &lib_dir, &with_reference);

    let ours_said = run_demo(&ours, &lib_dir);
    let reference_said = run_demo(&with_reference, &lib_dir);
    println!("{ours_said}");
    assert!(ours_said.contains("native CPU backend"), "the native CPU adapter was not listed:\n{ours_said}");
    assert!(ours_said.contains("verified 65536 elements of host memory"), "{ours_said}");
    assert!(ours_said.contains("demo passed"), "{ours_said}");
    // Same source, same library: the header must make no difference.
    assert_eq!(ours_said, reference_said, "the two builds of the demo behave differently");
}
