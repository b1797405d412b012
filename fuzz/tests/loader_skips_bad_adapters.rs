//! The loader skips an adapter library that fails to load, and one that
//! loads but lacks the DDI getters, with one warning line each, and still
//! serves the good adapter named beside them. The loader's log is read once
//! per process, so the test runs its own binary again as the child that
//! opens the loader.

mod common;

use std::process::Command;

const CHILD: &str = "UR_FUZZ_SKIP_TEST_CHILD";

/// In the child: loader init with the three candidates; the native CPU
/// device must still be found.
#[test]
fn child_discovers_the_good_adapter() {
    let Ok(force) = std::env::var(CHILD) else { return };
    std::env::set_var("UR_LOG_LOADER", "level:warning;output:stderr");
    let (_api, topology) = common::open(&force);
    assert_eq!(topology.adapters.len(), 1, "one adapter of the three loads");
    assert!(!topology.devices.is_empty(), "the native CPU adapter reports its device");
}

#[test]
fn bad_adapters_are_skipped_with_one_line_each() {
    let dir = std::env::temp_dir().join(format!("ur_skip_test_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Not a library at all: dlopen fails.
    let garbage = dir.join("libur_adapter_garbage.so");
    std::fs::write(&garbage, b"not an ELF file\n").unwrap();
    // A real library with no urGet*ProcAddrTable.
    let src = dir.join("empty.c");
    std::fs::write(&src, "int ur_skip_test_marker(void) { return 1; }\n").unwrap();
    let no_ddi = dir.join("libur_adapter_noddi.so");
    let cc = Command::new("cc").args(["-shared", "-fPIC", "-o"]).arg(&no_ddi).arg(&src).status().expect("run cc");
    assert!(cc.success(), "cc could not build the library without getters");
    let good = common::library_dir().join("libur_adapter_native_cpu.so.0");
    let force = format!("{},{},{}", garbage.display(), no_ddi.display(), good.display());

    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_discovers_the_good_adapter", "--nocapture", "--test-threads=1"])
        .env(CHILD, &force)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "child failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "the child test did not run:\n{stdout}");
    for bad in [&garbage, &no_ddi] {
        let name = bad.file_name().unwrap().to_string_lossy();
        let lines = stderr.lines().filter(|l| l.contains(&*name)).count();
        assert_eq!(lines, 1, "expected one log line naming {name}, got {lines}:\n{stderr}");
    }
    let good_name = good.file_name().unwrap().to_string_lossy();
    assert!(!stderr.lines().any(|l| l.contains("skipped") && l.contains(&*good_name)), "good adapter skipped:\n{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
