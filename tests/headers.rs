//! The checked-in C headers are what cbindgen makes of `src/abi`, and they
//! compile as C and as C++.
//!
//! `include/ur_api.h` and `include/ur_ddi.h` are generated, but committed so that
//! a C user needs no Rust tooling. This test regenerates both in memory, exactly
//! as the documented command does, and fails when the committed copy differs.

use std::path::{Path, PathBuf};
use std::process::Command;

struct Header {
    config: &'static str,
    output: &'static str,
}

const HEADERS: [Header; 2] = [
    Header { config: "spec/cbindgen_api.toml", output: "include/ur_api.h" },
    Header { config: "spec/cbindgen_ddi.toml", output: "include/ur_ddi.h" },
];

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn regenerate_command(header: &Header) -> String {
    format!("cbindgen -q --config {} --crate ur_core -o {}", header.config, header.output)
}

/// What `cbindgen --config <config> --crate ur_core` writes, as a string.
fn generate(header: &Header) -> String {
    let root = repo_root();
    let config = cbindgen::Config::from_file(root.join(header.config))
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", header.config));
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_crate_and_name(&root, "ur_core")
        .generate()
        .unwrap_or_else(|e| panic!("cbindgen failed on {}: {e}", header.config));
    let mut text = Vec::new();
    bindings.write(&mut text);
    String::from_utf8(text).expect("cbindgen wrote UTF-8")
}

/// The first line where two texts differ, 1-based, with both versions of it.
fn first_difference(expected: &str, actual: &str) -> (usize, String, String) {
    let mut expected_lines = expected.lines();
    let mut actual_lines = actual.lines();
    let mut line = 1;
    loop {
        match (expected_lines.next(), actual_lines.next()) {
            (Some(e), Some(a)) if e == a => line += 1,
            (e, a) => {
                let show = |l: Option<&str>| l.map_or("<end of file>".to_string(), str::to_string);
                return (line, show(e), show(a));
            }
        }
    }
}

#[test]
fn checked_in_headers_match_the_abi_module() {
    let mut stale = Vec::new();
    for header in &HEADERS {
        let fresh = generate(header);
        let path = repo_root().join(header.output);
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        if fresh != committed {
            let (line, generated, checked_in) = first_difference(&fresh, &committed);
            stale.push(format!(
                "{} is stale: first difference at line {line}\n  generated:  {generated}\n  checked in: {checked_in}",
                header.output
            ));
        }
    }
    if !stale.is_empty() {
        let commands: Vec<String> = HEADERS.iter().map(regenerate_command).collect();
        panic!(
            "{}\n\nRegenerate both headers from the repository root with:\n  {}\n",
            stale.join("\n"),
            commands.join("\n  ")
        );
    }
}

/// A scratch folder of this test process, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("ur_headers_{name}_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create scratch folder");
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run(command: &mut Command) -> String {
    let output = command.output().unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{command:?} failed:\n{text}");
    text
}

/// A translation unit that includes both headers and takes the address of
/// one entry point and one table type, so that declarations are really used.
const USE_HEADERS: &str = r#"
#include <ur_api.h>
#include <ur_ddi.h>

ur_result_t (*probe_create)(ur_context_handle_t, ur_device_handle_t,
                            const ur_queue_properties_t *, ur_queue_handle_t *) = urQueueCreate;

int probe_table_size(void) {
    ur_dditable_t table;
    return (int)sizeof(table) + (int)UR_RESULT_SUCCESS;
}
"#;

fn compile(compiler: &str, std_flag: &str, source_name: &str, scratch: &Scratch) -> PathBuf {
    let source = scratch.0.join(source_name);
    std::fs::write(&source, USE_HEADERS).unwrap();
    let object = source.with_extension("o");
    let include = repo_root().join("include");
    run(Command::new(compiler)
        .arg(std_flag)
        .args(["-Wall", "-Wextra", "-Werror", "-c"])
        .arg("-I")
        .arg(&include)
        .arg(&source)
        .arg("-o")
        .arg(&object));
    object
}

/// The undefined symbols an object file refers to.
fn undefined_symbols(object: &Path) -> Vec<String> {
    run(Command::new("nm").arg("--undefined-only").arg("--format=just-symbols").arg(object))
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn headers_compile_as_c() {
    let scratch = Scratch::new("c");
    for std_flag in ["-std=c99", "-std=c11"] {
        let object = compile("gcc", std_flag, "use_headers.c", &scratch);
        assert!(undefined_symbols(&object).contains(&"urQueueCreate".to_string()));
    }
}

#[test]
fn headers_compile_as_cpp_with_c_linkage() {
    let scratch = Scratch::new("cpp");
    for std_flag in ["-std=c++11", "-std=c++17"] {
        let object = compile("g++", std_flag, "use_headers.cpp", &scratch);
        // extern "C" must hold: a C++ caller links against the plain name.
        let symbols = undefined_symbols(&object);
        assert!(
            symbols.contains(&"urQueueCreate".to_string()),
            "C++ code refers to the entry point by a mangled name: {symbols:?}"
        );
    }
}
