//! Every entry point that the written spec (`spec/*.md`) names is exported by
//! the built loader library.

mod common;

use common::{built_library_dir, repo_root};
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Entry point names written in backticks: identifiers `ur[A-Z]\w+`.
/// A name followed by `*`, `{` or `<` is a pattern such as
/// `urEnqueueUSM{Device,Host}AllocExp` and is not taken as a name.
fn backticked_entry_points(markdown: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (i, span) in markdown.split('`').enumerate() {
        if i % 2 == 0 {
            continue; // outside backticks
        }
        let bytes: Vec<char> = span.chars().collect();
        let mut start = 0;
        while start < bytes.len() {
            let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
            let boundary = start == 0 || !is_word(bytes[start - 1]);
            if boundary
                && bytes[start] == 'u'
                && bytes.get(start + 1) == Some(&'r')
                && bytes.get(start + 2).is_some_and(|c| c.is_ascii_uppercase())
            {
                let mut end = start + 2;
                while end < bytes.len() && is_word(bytes[end]) {
                    end += 1;
                }
                let is_pattern = matches!(bytes.get(end), Some('*' | '{' | '<'));
                if !is_pattern {
                    names.insert(bytes[start..end].iter().collect());
                }
                start = end;
            } else {
                start += 1;
            }
        }
    }
    names
}

fn spec_entry_points() -> BTreeMap<String, Vec<String>> {
    let mut by_name: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let spec_dir = repo_root().join("spec");
    let mut files: Vec<_> = std::fs::read_dir(&spec_dir)
        .expect("read spec/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let file_name = file.file_name().unwrap().to_string_lossy().into_owned();
        for name in backticked_entry_points(&text) {
            by_name.entry(name).or_default().push(file_name.clone());
        }
    }
    by_name
}

fn loader_exports() -> BTreeSet<String> {
    let library = built_library_dir(&["libur_loader.so"]).join("libur_loader.so");
    let output = Command::new("nm")
        .args(["-D", "--defined-only", "--format=posix"])
        .arg(&library)
        .output()
        .expect("run nm (binutils)");
    assert!(output.status.success(), "nm failed on {}", library.display());
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let name = fields.next()?;
            let kind = fields.next()?;
            (kind == "T").then(|| name.to_string())
        })
        .collect()
}

#[test]
fn backtick_extraction_reads_names_and_skips_patterns() {
    let found = backticked_entry_points(
        "Call `urQueueCreate` then `urEnqueueUSMFill(hQueue, ...)`; see `ur_queue_handle_t`, \
         `urEnqueueUSM{Device,Host}AllocExp` and `urGet*ProcAddrTable`; not urLoaderInit.",
    );
    let expected: BTreeSet<String> = ["urEnqueueUSMFill", "urQueueCreate"].iter().map(|s| s.to_string()).collect();
    assert_eq!(found, expected);
}

#[test]
fn every_entry_point_in_the_spec_is_exported_by_the_loader() {
    let named = spec_entry_points();
    assert!(
        named.len() >= 40,
        "the spec names only {} entry points; is spec/ missing?",
        named.len()
    );
    let exported = loader_exports();
    let missing: Vec<String> = named
        .iter()
        .filter(|(name, _)| !exported.contains(*name))
        .map(|(name, files)| format!("{name} (named in {})", files.join(", ")))
        .collect();
    assert!(
        missing.is_empty(),
        "{} entry points named in spec/ are not exported by {}:\n  {}",
        missing.len(),
        built_library_dir(&["libur_loader.so"]).join("libur_loader.so").display(),
        missing.join("\n  ")
    );
}
