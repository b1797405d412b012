//! The bindings against Debian libze-dev's headers (`/usr/include/level_zero`,
//! installed by scripts/test.sh): gcc compiles a probe that prints the size,
//! alignment and field offsets of every struct and DDI table this crate
//! declares, and the value of every enumerator; the same lines printed from
//! the Rust side must be identical. A second test regenerates
//! `src/generated.rs` and fails when the checked-in file is stale.

use level_zero_sys::{Layout, DDI_LAYOUTS, ENUMERATORS, STRUCT_LAYOUTS};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

const INCLUDE: &str = "/usr/include/level_zero";

fn headers_present() {
    assert!(
        Path::new(INCLUDE).join("ze_ddi.h").exists(),
        "{INCLUDE}/ze_ddi.h is missing: install libze-dev (scripts/test.sh does)"
    );
}

fn scratch() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("level_zero_abi");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn field_name(f: &str) -> &str {
    f.trim_start_matches("r#")
}

/// The lines both sides print, from the Rust side's values.
fn rust_lines(layouts: &[Layout]) -> String {
    let mut s = String::new();
    for (name, size, align, fields) in layouts {
        writeln!(s, "{name} size {size} align {align}").unwrap();
        for (f, off) in *fields {
            writeln!(s, "{name}.{} {off}", field_name(f)).unwrap();
        }
    }
    for (name, value) in ENUMERATORS {
        writeln!(s, "{name} = {value}").unwrap();
    }
    s
}

/// A C program that prints the same lines as the C compiler sees them.
fn c_probe(layouts: &[Layout]) -> String {
    let mut c = String::from(
        "#include <stddef.h>\n#include <stdio.h>\n#include <level_zero/ze_ddi.h>\n\
         #include <level_zero/zet_ddi.h>\n#include <level_zero/zes_ddi.h>\nint main(void) {\n",
    );
    for (name, _, _, fields) in layouts {
        writeln!(c, "  printf(\"{name} size %zu align %zu\\n\", sizeof({name}), _Alignof({name}));").unwrap();
        for (f, _) in *fields {
            let f = field_name(f);
            writeln!(c, "  printf(\"{name}.{f} %zu\\n\", offsetof({name}, {f}));").unwrap();
        }
    }
    for (name, _) in ENUMERATORS {
        writeln!(c, "  printf(\"{name} = %u\\n\", (unsigned)({name}));").unwrap();
    }
    c.push_str("  return 0;\n}\n");
    c
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(out.status.success(), "{cmd:?} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn layouts_and_values_match_libze_dev() {
    headers_present();
    let layouts: Vec<Layout> = STRUCT_LAYOUTS.iter().chain(DDI_LAYOUTS).copied().collect();
    let dir = scratch();
    let (src, exe) = (dir.join("probe.c"), dir.join("probe"));
    std::fs::write(&src, c_probe(&layouts)).unwrap();
    run(Command::new("gcc").args(["-std=c11", "-o"]).arg(&exe).arg(&src));
    let c = run(&mut Command::new(&exe));
    let rust = rust_lines(&layouts);
    let diff: Vec<String> = rust
        .lines()
        .zip(c.lines())
        .filter(|(r, c)| r != c)
        .map(|(r, c)| format!("  ours: {r}\n  gcc:  {c}"))
        .collect();
    assert!(diff.is_empty() && rust.lines().count() == c.lines().count(), "differences:\n{}", diff.join("\n"));
    // Something real was compared: every table the headers declare, and the
    // structs and enumerators the driver uses.
    assert!(DDI_LAYOUTS.len() >= 50 && STRUCT_LAYOUTS.len() >= 20 && ENUMERATORS.len() >= 300);
    println!("{} lines compared", rust.lines().count());
}

#[test]
fn generated_bindings_are_fresh() {
    headers_present();
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fresh = scratch().join("generated.rs");
    run(Command::new("python3").arg(crate_dir.join("generate.py")).arg(INCLUDE).arg(&fresh));
    let checked_in = std::fs::read_to_string(crate_dir.join("src/generated.rs")).unwrap();
    assert!(
        std::fs::read_to_string(&fresh).unwrap() == checked_in,
        "src/generated.rs is stale: run python3 adapters/level_zero/sys/generate.py"
    );
}
