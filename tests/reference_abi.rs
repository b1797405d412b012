//! Our generated headers against the reference Unified Runtime 0.12 headers
//! (PyPI wheel `intel-sycl-rt==2026.2.0`, fetched by `scripts/fetch_reference.sh`).
//!
//! Names are read from both headers after the C preprocessor has run over them
//! (so conditionals and comments are gone). Values and layouts are not read
//! from text: a probe program lists every shared name, is compiled once against
//! each header, and the compiler itself prints enumerator values, sizes,
//! alignments and field offsets. The two outputs must be identical, and every
//! name of the reference must exist in ours.
//!
//! Ours spell enumerators as `#define`s and the reference as enum constants;
//! the probe prints both the same way. A C++ probe does the same for the shape
//! of every entry point and DDI function-pointer type (parameter count, and
//! the kind and size of each parameter and of the result).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Names that exist only in our header, on purpose.
const OUR_EXTRA_MACROS: &[&str] = &["UR_API_VERSION_IMPLEMENTED"];

/// Macros of the reference that only steer the compiler, not the API.
const PLUMBING_MACROS: &[&str] = &["UR_APICALL", "UR_APIEXPORT", "UR_DLLEXPORT"];

/// Sample uses of the reference's function-like macros, compared where both
/// headers have the macro.
const MACRO_CALLS: &[(&str, &str)] = &[
    ("UR_MAKE_VERSION", "UR_MAKE_VERSION(3, 7)"),
    ("UR_MAJOR_VERSION", "UR_MAJOR_VERSION(0x00030007)"),
    ("UR_MINOR_VERSION", "UR_MINOR_VERSION(0x00030007)"),
    ("UR_BIT", "UR_BIT(9)"),
];

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn reference_include() -> PathBuf {
    repo_root().join(".deps/reference/include/unified-runtime")
}

fn scratch_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("reference_abi");
    std::fs::create_dir_all(&dir).expect("create scratch folder");
    dir
}

/// The two sides being compared: how to compile against each.
#[derive(Clone, Copy, PartialEq)]
enum Side {
    Ours,
    Reference,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::Ours => "ours",
            Side::Reference => "reference",
        }
    }

    fn include_dir(self) -> PathBuf {
        match self {
            Side::Ours => repo_root().join("include"),
            Side::Reference => reference_include(),
        }
    }

    /// Compiler flags for C. The reference header uses `bool` without
    /// including <stdbool.h> itself.
    fn c_flags(self) -> Vec<String> {
        let mut flags = vec!["-std=c11".to_string(), "-I".to_string()];
        flags.push(self.include_dir().display().to_string());
        if self == Side::Reference {
            // Its ur_ddi.h includes "unified-runtime/ur_api.h".
            flags.extend(["-I".to_string(), repo_root().join(".deps/reference/include").display().to_string()]);
            flags.extend(["-include".to_string(), "stdbool.h".to_string()]);
        }
        flags
    }

    fn cpp_flags(self) -> Vec<String> {
        let mut flags = vec!["-std=c++17".to_string(), "-I".to_string(), self.include_dir().display().to_string()];
        if self == Side::Reference {
            flags.extend(["-I".to_string(), repo_root().join(".deps/reference/include").display().to_string()]);
        }
        flags
    }
}

fn run(command: &mut Command) -> String {
    let output = command.output().unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("UTF-8 output")
}

// ---------------------------------------------------------------------------
// Reading declarations out of preprocessed header text.
// ---------------------------------------------------------------------------

#[derive(Default, Debug)]
struct Record {
    is_union: bool,
    fields: Vec<String>,
}

/// Every name a C user of the header can write, by kind.
#[derive(Default, Debug)]
struct Api {
    /// Enumerators and object-like macros with a value.
    values: BTreeSet<String>,
    function_macros: BTreeSet<String>,
    /// Struct and union types with a body, by the name C code uses for them.
    records: BTreeMap<String, Record>,
    /// `struct X` / `union X` tags that C code can name.
    tags: BTreeSet<String>,
    typedefs: BTreeSet<String>,
    /// Typedef names of incomplete types (sizeof is not allowed).
    opaque_typedefs: BTreeSet<String>,
    function_pointer_typedefs: BTreeSet<String>,
    functions: BTreeSet<String>,
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The identifiers of a piece of C, in order.
fn identifiers(text: &str) -> Vec<&str> {
    text.split(|c: char| !is_ident_char(c))
        .filter(|w| !w.is_empty() && !w.starts_with(|c: char| c.is_ascii_digit()))
        .collect()
}

fn last_identifier(text: &str) -> Option<&str> {
    identifiers(text).pop()
}

/// The name declared by one member or parameter-less declarator:
/// `T *name`, `T name[4]`, `R (*name)(args)`.
fn declarator_name(decl: &str) -> Option<String> {
    if let Some(at) = decl.find("(*") {
        let rest = &decl[at + 2..];
        let end = rest.find(')')?;
        return last_identifier(&rest[..end]).map(str::to_string);
    }
    let mut decl = decl.trim();
    while decl.ends_with(']') {
        decl = decl[..decl.rfind('[')?].trim_end();
    }
    if let Some(colon) = decl.find(':') {
        decl = decl[..colon].trim_end(); // bit-field width
    }
    last_identifier(decl).map(str::to_string)
}

/// Splits top-level C code into statements ending in `;`; a function
/// definition (a body not followed by `;`) also ends a statement.
fn statements(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in code.chars() {
        current.push(c);
        match c {
            '{' => depth += 1,
            '}' => {
                depth = depth.saturating_sub(1);
                let head = current.trim_start();
                let is_definition = depth == 0
                    && !head.starts_with("typedef")
                    && !head.starts_with("struct")
                    && !head.starts_with("union")
                    && !head.starts_with("enum")
                    && current.find('(').is_some_and(|p| p < current.find('{').unwrap());
                if is_definition {
                    out.push(std::mem::take(&mut current));
                }
            }
            ';' if depth == 0 => out.push(std::mem::take(&mut current)),
            _ => {}
        }
    }
    // One spelling of white space, so that `( *name)` reads as `(*name)`.
    out.into_iter()
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" ").replace("( ", "(").replace(" )", ")"))
        .collect()
}

fn parse_macro(line: &str, api: &mut Api) {
    let Some(rest) = line.strip_prefix("#define ") else { return };
    let name_end = rest.find(|c: char| !is_ident_char(c)).unwrap_or(rest.len());
    let name = &rest[..name_end];
    // Include guards have no body and are skipped below.
    if PLUMBING_MACROS.contains(&name) {
        return;
    }
    let after = &rest[name_end..];
    if after.starts_with('(') {
        api.function_macros.insert(name.to_string());
    } else if !after.trim().is_empty() {
        api.values.insert(name.to_string());
    }
}

/// `{ ... }` body and what follows it, of a statement with one body.
fn split_body(stmt: &str) -> Option<(&str, &str, &str)> {
    let open = stmt.find('{')?;
    let close = stmt.rfind('}')?;
    Some((&stmt[..open], &stmt[open + 1..close], &stmt[close + 1..]))
}

fn parse_record_body(body: &str, what: &str) -> Vec<String> {
    assert!(!body.contains('{'), "nested struct or union in {what} is not handled: {body}");
    body.split(';')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| declarator_name(d).unwrap_or_else(|| panic!("cannot read field `{d}` of {what}")))
        .collect()
}

fn parse_statement(stmt: &str, api: &mut Api) {
    let stmt = stmt.trim().trim_end_matches(';').trim();
    let words = identifiers(stmt);
    let is_typedef = words.first() == Some(&"typedef");
    let keyword_at = usize::from(is_typedef);
    let keyword = words.get(keyword_at).copied().unwrap_or("");

    if let Some((head, body, tail)) = split_body(stmt) {
        let head_words = identifiers(head);
        let tag = head_words.get(keyword_at + 1).map(|t| t.to_string());
        let typedef_name = if is_typedef { last_identifier(tail).map(str::to_string) } else { None };
        match keyword {
            "enum" => {
                for item in body.split(',') {
                    // The name comes first; attributes such as
                    // `[[deprecated("...")]]` may follow it.
                    if let Some(name) = identifiers(item.split('=').next().unwrap()).first() {
                        api.values.insert(name.to_string());
                    }
                }
                if let Some(name) = typedef_name {
                    api.typedefs.insert(name);
                }
            }
            "struct" | "union" => {
                let label = typedef_name.clone().or_else(|| tag.as_ref().map(|t| format!("{keyword} {t}")));
                let label = label.unwrap_or_else(|| panic!("anonymous record: {stmt}"));
                if let Some(tag) = &tag {
                    api.tags.insert(format!("{keyword} {tag}"));
                }
                if let Some(name) = typedef_name {
                    api.typedefs.insert(name);
                }
                let fields = parse_record_body(body, &label);
                api.records.insert(label, Record { is_union: keyword == "union", fields });
            }
            _ => {} // a function definition: not part of the API surface we compare
        }
        return;
    }

    if is_typedef {
        if stmt.contains("(*") {
            let name = declarator_name(stmt).unwrap_or_else(|| panic!("cannot read `{stmt}`"));
            api.function_pointer_typedefs.insert(name.clone());
            api.typedefs.insert(name);
            return;
        }
        let name = last_identifier(stmt).unwrap_or_else(|| panic!("cannot read `{stmt}`")).to_string();
        if matches!(keyword, "struct" | "union") {
            api.tags.insert(format!("{keyword} {}", words[keyword_at + 1]));
            if !stmt.contains('*') {
                // `typedef struct X Y;` with no body anywhere here: an opaque type.
                api.opaque_typedefs.insert(name.clone());
            }
        }
        api.typedefs.insert(name);
        return;
    }

    // A function declaration: the `ur...` identifier that opens a parameter list.
    // Attributes such as `__attribute__((visibility("default")))` may come first.
    for (open, _) in stmt.match_indices('(') {
        let name = last_identifier(&stmt[..open]).unwrap_or("");
        if name.starts_with("ur") && name[2..].starts_with(|c: char| c.is_ascii_uppercase()) {
            api.functions.insert(name.to_string());
            return;
        }
    }
}

/// The file a preprocessor line marker (`# 12 "path" flags`) names.
fn line_marker_file(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("# ")?;
    if !rest.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let open = rest.find('"')?;
    let close = rest[open + 1..].find('"')?;
    Some(&rest[open + 1..open + 1 + close])
}

/// Runs the preprocessor over `<ur_ddi.h>` (which includes `<ur_api.h>`) and
/// reads every declaration that comes from the side's own header files (line
/// markers say which file each line comes from; system headers are skipped).
fn read_api(side: Side, scratch: &Path) -> Api {
    let source = scratch.join(format!("include_{}.c", side.name()));
    std::fs::write(&source, "#include <ur_api.h>\n#include <ur_ddi.h>\n").unwrap();
    let text = run(Command::new("gcc").args(side.c_flags()).args(["-E", "-dD"]).arg(&source));
    let header_dir = side.include_dir().display().to_string();
    let mut api = Api::default();
    let mut code = String::new();
    let mut in_header = false;
    for line in text.lines() {
        let line = line.trim_start();
        if let Some(file) = line_marker_file(line) {
            in_header = file.starts_with(&header_dir);
        } else if !in_header {
            continue;
        } else if line.starts_with('#') {
            parse_macro(line, &mut api);
        } else {
            code.push_str(line);
            code.push('\n');
        }
    }
    for stmt in statements(&code) {
        parse_statement(&stmt, &mut api);
    }
    api
}

// ---------------------------------------------------------------------------
// The probes.
// ---------------------------------------------------------------------------

/// C source printing one `key value` line for every shared value and layout.
fn c_probe(ours: &Api, reference: &Api) -> String {
    let mut src = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include <ur_api.h>\n#include <ur_ddi.h>\n\n\
         static void print_int(const char *name, long long value) { printf(\"value %s %lld\\n\", name, value); }\n\
         static void print_str(const char *name, const char *value) { printf(\"value %s \\\"%s\\\"\\n\", name, value); }\n\
         #define VALUE(name, expr) _Generic((expr), char *: print_str, const char *: print_str, default: print_int)(name, expr)\n\
         #define LAYOUT(T) printf(\"layout %s size %zu align %zu\\n\", #T, sizeof(T), _Alignof(T))\n\
         #define FIELD(T, f) printf(\"field %s.%s offset %zu size %zu\\n\", #T, #f, offsetof(T, f), sizeof(((T *)0)->f))\n\n\
         int main(void) {\n",
    );
    for name in ours.values.intersection(&reference.values) {
        writeln!(src, "  VALUE(\"{name}\", {name});").unwrap();
    }
    for (name, call) in MACRO_CALLS {
        if ours.function_macros.contains(*name) && reference.function_macros.contains(*name) {
            writeln!(src, "  VALUE(\"{call}\", {call});").unwrap();
        }
    }
    let sized = |api: &Api, n: &String| api.typedefs.contains(n) && !api.opaque_typedefs.contains(n);
    for name in ours.typedefs.iter().filter(|n| sized(ours, n) && sized(reference, n)) {
        writeln!(src, "  LAYOUT({name});").unwrap();
    }
    for (name, record) in &ours.records {
        let Some(theirs) = reference.records.get(name) else { continue };
        if !name.contains(' ') && !ours.typedefs.contains(name) {
            continue;
        }
        if name.contains(' ') {
            writeln!(src, "  LAYOUT({name});").unwrap();
        }
        for field in record.fields.iter().filter(|f| theirs.fields.contains(f)) {
            writeln!(src, "  FIELD({name}, {field});").unwrap();
        }
    }
    src.push_str("  return 0;\n}\n");
    src
}

/// C++ source printing the shape of every shared entry point and DDI
/// function-pointer type: result and parameters as kind + size.
fn cpp_probe(ours: &Api, reference: &Api) -> String {
    let mut src = String::from(
        r#"#include <cstdio>
#include <string>
#include <type_traits>
#include <ur_api.h>
#include <ur_ddi.h>

template <class T> std::string shape() {
    if constexpr (std::is_void_v<T>) return "void";
    else {
        const char *kind = std::is_pointer_v<T> ? "ptr"
                         : std::is_floating_point_v<T> ? "float"
                         : (std::is_integral_v<T> || std::is_enum_v<T>) ? "int"
                         : std::is_class_v<T> ? "struct"
                         : std::is_union_v<T> ? "union" : "other";
        return std::string(kind) + std::to_string(sizeof(T));
    }
}

template <class F> struct Signature;
template <class R, class... A> struct Signature<R (*)(A...)> {
    static void print(const char *name) {
        std::string params;
        ((params += shape<A>() + ","), ...);
        std::printf("signature %s %s(%s)\n", name, shape<R>().c_str(), params.c_str());
    }
};

int main() {
"#,
    );
    for name in ours.functions.intersection(&reference.functions) {
        writeln!(src, "    Signature<decltype(&{name})>::print(\"{name}\");").unwrap();
    }
    for name in ours.function_pointer_typedefs.intersection(&reference.function_pointer_typedefs) {
        writeln!(src, "    Signature<{name}>::print(\"{name}\");").unwrap();
    }
    src.push_str("    return 0;\n}\n");
    src
}

/// Compiles a probe against one side, runs it, returns its lines by key.
fn run_probe(side: Side, source: &str, cpp: bool, scratch: &Path) -> BTreeMap<String, String> {
    let ext = if cpp { "cpp" } else { "c" };
    let path = scratch.join(format!("probe_{}.{ext}", side.name()));
    std::fs::write(&path, source).unwrap();
    let exe = path.with_extension(format!("{ext}.bin"));
    let (compiler, flags) = if cpp { ("g++", side.cpp_flags()) } else { ("gcc", side.c_flags()) };
    // Two reference enumerators are marked deprecated; naming them is the point.
    run(Command::new(compiler).args(flags).arg("-Wno-deprecated-declarations").arg(&path).arg("-o").arg(&exe));
    let output = run(&mut Command::new(&exe));
    output
        .lines()
        .map(|line| {
            // "<kind> <name> <rest>": the key is kind and name.
            let mut parts = line.splitn(3, ' ');
            let key = format!("{} {}", parts.next().unwrap(), parts.next().unwrap_or(""));
            (key, parts.next().unwrap_or("").to_string())
        })
        .collect()
}

/// One difference, grouped by `kind` in the failure message.
struct Problem {
    kind: String,
    text: String,
}

fn problem(problems: &mut Vec<Problem>, kind: impl Into<String>, text: String) {
    problems.push(Problem { kind: kind.into(), text });
}

fn compare_outputs(ours: &BTreeMap<String, String>, reference: &BTreeMap<String, String>, problems: &mut Vec<Problem>) {
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        reference.keys().collect::<Vec<_>>(),
        "both probes print the same keys"
    );
    for (key, our_value) in ours {
        let their_value = &reference[key];
        if our_value != their_value {
            let kind = format!("different {}", key.split(' ').next().unwrap());
            problem(problems, kind, format!("{key}: ours `{our_value}`, reference `{their_value}`"));
        }
    }
}

/// Names the reference has and we lack (and, for `extras_fail`, the reverse).
fn compare_names(
    what: &str,
    ours: &BTreeSet<String>,
    reference: &BTreeSet<String>,
    allowed_extra: &dyn Fn(&str) -> bool,
    problems: &mut Vec<Problem>,
) {
    for name in reference.difference(ours) {
        problem(problems, format!("{what} missing in ours"), format!("{what} `{name}` of the reference is missing in ours"));
    }
    for name in ours.difference(reference).filter(|n| !allowed_extra(n)) {
        problem(problems, format!("{what} only in ours"), format!("{what} `{name}` is in ours but not in the reference"));
    }
}

fn compare_fields(ours: &Api, reference: &Api, problems: &mut Vec<Problem>) {
    for (name, theirs) in &reference.records {
        let Some(mine) = ours.records.get(name) else { continue };
        for field in theirs.fields.iter().filter(|f| !mine.fields.contains(f)) {
            problem(problems, "field missing in ours", format!("field `{name}.{field}` of the reference is missing in ours"));
        }
        for field in mine.fields.iter().filter(|f| !theirs.fields.contains(f)) {
            problem(problems, "field only in ours", format!("field `{name}.{field}` is in ours but not in the reference"));
        }
        // Offsets already prove the order of struct members; say it plainly too.
        if !theirs.is_union && mine.fields != theirs.fields {
            problem(problems, "field order", format!(
                "fields of `{name}` are in a different order:\n    ours:      {}\n    reference: {}",
                mine.fields.join(", "),
                theirs.fields.join(", ")
            ));
        }
        if mine.is_union != theirs.is_union {
            problem(problems, "union or struct", format!("`{name}` is a union on one side only"));
        }
    }
}

#[test]
fn our_headers_match_the_reference_abi() {
    let reference_dir = reference_include();
    assert!(
        reference_dir.join("ur_api.h").is_file() && reference_dir.join("ur_ddi.h").is_file(),
        "the reference headers are missing from {}: run `bash scripts/fetch_reference.sh` first",
        reference_dir.display()
    );
    let scratch = scratch_dir();
    let ours = read_api(Side::Ours, &scratch);
    let reference = read_api(Side::Reference, &scratch);

    // The parser must have found the bulk of the API on both sides, or every
    // comparison below would pass vacuously.
    for (side, api) in [("ours", &ours), ("reference", &reference)] {
        assert!(api.values.len() > 1000, "{side}: only {} values read", api.values.len());
        assert!(api.records.len() > 200, "{side}: only {} structs read", api.records.len());
        assert!(api.functions.len() > 200, "{side}: only {} functions read", api.functions.len());
        assert!(api.records.contains_key("ur_dditable_t"), "{side}: no ur_dditable_t");
        assert!(api.function_pointer_typedefs.len() > 200, "{side}: only {} ur_pfn types read", api.function_pointer_typedefs.len());
    }

    let mut problems = Vec::new();
    let no_extras = |_: &str| false;
    compare_names("enumerator or macro", &ours.values, &reference.values, &|n| OUR_EXTRA_MACROS.contains(&n), &mut problems);
    compare_names("function-like macro", &ours.function_macros, &reference.function_macros, &no_extras, &mut problems);
    compare_names("entry point", &ours.functions, &reference.functions, &no_extras, &mut problems);
    compare_names("type name", &ours.typedefs, &reference.typedefs, &|n| n.ends_with("_handle_t_"), &mut problems);
    compare_names("function-pointer type", &ours.function_pointer_typedefs, &reference.function_pointer_typedefs, &no_extras, &mut problems);
    let our_records: BTreeSet<String> = ours.records.keys().cloned().collect();
    let their_records: BTreeSet<String> = reference.records.keys().cloned().collect();
    compare_names("struct or union", &our_records, &their_records, &no_extras, &mut problems);
    compare_names("struct or union tag", &ours.tags, &reference.tags, &no_extras, &mut problems);
    compare_fields(&ours, &reference, &mut problems);

    let c_source = c_probe(&ours, &reference);
    let c_ours = run_probe(Side::Ours, &c_source, false, &scratch);
    let c_reference = run_probe(Side::Reference, &c_source, false, &scratch);
    compare_outputs(&c_ours, &c_reference, &mut problems);

    let cpp_source = cpp_probe(&ours, &reference);
    let cpp_ours = run_probe(Side::Ours, &cpp_source, true, &scratch);
    let cpp_reference = run_probe(Side::Reference, &cpp_source, true, &scratch);
    compare_outputs(&cpp_ours, &cpp_reference, &mut problems);

    let count = |prefix: &str| c_ours.keys().chain(cpp_ours.keys()).filter(|k| k.starts_with(prefix)).count();
    let summary = format!(
        "compared {} values, {} type layouts, {} struct fields, {} signatures",
        count("value "),
        count("layout "),
        count("field "),
        count("signature ")
    );
    println!("{summary}");

    let report = scratch.join("differences.txt");
    let full: Vec<&str> = problems.iter().map(|p| p.text.as_str()).collect();
    std::fs::write(&report, full.join("\n") + "\n").unwrap();
    if !problems.is_empty() {
        // A few examples of each kind, so that one large kind does not hide the others.
        const SHOWN_PER_KIND: usize = 8;
        let mut by_kind: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for p in &problems {
            by_kind.entry(p.kind.as_str()).or_default().push(p.text.as_str());
        }
        let mut message = format!("{} differences from the reference ABI ({summary}):\n", problems.len());
        for (kind, texts) in &by_kind {
            writeln!(message, "{kind}: {}", texts.len()).unwrap();
            for text in texts.iter().take(SHOWN_PER_KIND) {
                writeln!(message, "  {text}").unwrap();
            }
            if texts.len() > SHOWN_PER_KIND {
                writeln!(message, "  ... and {} more", texts.len() - SHOWN_PER_KIND).unwrap();
            }
        }
        panic!("{message}full list: {}", report.display());
    }
}
