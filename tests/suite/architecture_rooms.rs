//! The rooms of docs/architecture.md's "Where a change goes", held against the code: a wire
//! is named only in its row of the wire rules, the client's one switch and its mock; a
//! definition format only by its own module and the one list; and every place the table
//! names exists.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::architecture::{code, rs_files, src, test_only_files};

/// The variants of `pub enum {name}` in `file` (below `src/`).
fn enum_variants(file: &str, name: &str) -> Vec<String> {
    let text = code(&std::fs::read_to_string(src().join(file)).unwrap());
    let start = text
        .find(&format!("pub enum {name} {{"))
        .unwrap_or_else(|| panic!("{file} declares `pub enum {name}`"));
    let body = &text[start..];
    let body = &body[body.find('{').unwrap() + 1..body.find("\n}").unwrap()];
    body.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            l.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next()
                .unwrap_or("")
                .to_owned()
        })
        .filter(|v| !v.is_empty())
        .collect()
}

/// For each file of `src/` whose code (tests left out) names a variant of `name`
/// (`WireApi::Responses`), how many times it does.
fn files_naming(name: &str, variants: &[String]) -> BTreeMap<String, usize> {
    let root = src();
    let test_only = test_only_files(&root);
    let mut found = BTreeMap::new();
    for file in rs_files(&root) {
        let rel = file.strip_prefix(&root).unwrap();
        if test_only.contains(rel) {
            continue;
        }
        let rel = rel.display().to_string();
        let text = code(&std::fs::read_to_string(&file).unwrap());
        let count = variants
            .iter()
            .map(|variant| {
                let path = format!("{name}::{variant}");
                text.match_indices(&path)
                    .filter(|(at, _)| {
                        let next = text[at + path.len()..].chars().next();
                        next.is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
                    })
                    .count()
            })
            .sum::<usize>();
        if count > 0 {
            found.insert(rel, count);
        }
    }
    found
}

/// The rows of docs/architecture.md's "Where a change goes": (change, where).
fn where_a_change_goes() -> Vec<(String, String)> {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .unwrap();
    let start = doc
        .find("## Where a change goes")
        .expect("docs/architecture.md has \"Where a change goes\"");
    let section = &doc[start..];
    let section = &section[..section[2..].find("\n## ").map_or(section.len(), |e| e + 2)];
    section
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let [_, change, place, _] = cells[..] else {
                return None;
            };
            (change != "change" && !change.starts_with("---"))
                .then(|| (change.to_owned(), place.to_owned()))
        })
        .collect()
}

/// The paths among a row's `code` spans: a span with a `/` or ending in `.rs` or `.md`.
fn named_paths(place: &str) -> Vec<String> {
    place
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|span| {
            !span.contains(' ')
                && (span.contains('/') || span.ends_with(".rs") || span.ends_with(".md"))
        })
        .map(str::to_owned)
        .collect()
}

/// Where a wire may be named: its row of rules, a built-in provider's wire, the client's one
/// switch, and the mocks (one per wire).
const WIRE_NAMED_IN: &[&str] = &[
    "definition/wire.rs",
    "definition/provider.rs",
    "providers/formats.rs",
    "testkit/mock/",
];

#[test]
fn a_wire_is_named_only_in_its_row_the_one_switch_and_its_mock() {
    let variants = enum_variants("definition/wire.rs", "WireApi");
    assert_eq!(variants.len(), 3, "{variants:?}");
    let elsewhere: Vec<String> = files_naming("WireApi", &variants)
        .into_iter()
        .filter(|(file, _)| !WIRE_NAMED_IN.iter().any(|place| file.starts_with(place)))
        .map(|(file, n)| format!("{file} ({n})"))
        .collect();
    assert!(
        elsewhere.is_empty(),
        "files that name a wire (`WireApi::…`) outside {WIRE_NAMED_IN:?}; read the wire's \
         `WireRules` row instead:\n{}",
        elsewhere.join("\n")
    );
    row_names("a new wire API", WIRE_NAMED_IN);
}

/// The format modules `discovery/mod.rs` lists in `FORMATS`, in order.
fn listed_formats() -> Vec<String> {
    let text = std::fs::read_to_string(src().join("discovery/mod.rs")).unwrap();
    let start = text
        .find("const FORMATS")
        .expect("discovery/mod.rs lists the formats in `FORMATS`");
    let list = &text[start..];
    let list = &list[..list.find("];").unwrap()];
    list.lines()
        .filter_map(|l| l.trim().strip_prefix('&')?.strip_suffix("::SPEC,"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_format_module_is_listed_once_and_a_format_is_named_only_by_its_own() {
    let listed = listed_formats();
    let modules: BTreeSet<String> = rs_files(&src().join("discovery"))
        .into_iter()
        .filter(|file| {
            let text = code(&std::fs::read_to_string(file).unwrap());
            text.contains("const SPEC: FormatSpec")
        })
        .map(|file| file.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        listed.iter().cloned().collect::<BTreeSet<_>>(),
        modules,
        "discovery/mod.rs's `FORMATS` must list each module with a `SPEC` once"
    );
    assert_eq!(
        listed.len(),
        modules.len(),
        "a format listed twice: {listed:?}"
    );

    let variants = enum_variants("definition/agent.rs", "Format");
    let own: Vec<String> = modules
        .iter()
        .map(|m| format!("discovery/{m}.rs"))
        .collect();
    let elsewhere: Vec<String> = files_naming("Format", &variants)
        .into_iter()
        .filter(|(file, _)| {
            file != "definition/agent.rs" && !file.starts_with("testkit/") && !own.contains(file)
        })
        .map(|(file, n)| format!("{file} ({n})"))
        .collect();
    assert!(
        elsewhere.is_empty(),
        "files that name a format (`Format::…`) outside its own module; read the format's \
         `FormatSpec` instead:\n{}",
        elsewhere.join("\n")
    );
    // Each format is named by exactly one module: the one whose spec reads it.
    for variant in &variants {
        let path = format!("Format::{variant}");
        let naming: Vec<&String> = own
            .iter()
            .filter(|file| {
                code(&std::fs::read_to_string(src().join(file)).unwrap()).contains(&path)
            })
            .collect();
        assert_eq!(naming.len(), 1, "{path} is named by {naming:?}");
    }
    row_names(
        "a new definition format",
        &[
            "discovery/mod.rs",
            "discovery/spec.rs",
            "definition/agent.rs",
        ],
    );
}

/// Asserts that the row of "Where a change goes" for `change` names each of `places`.
fn row_names(change: &str, places: &[&str]) {
    let rows = where_a_change_goes();
    let (_, row) = rows
        .iter()
        .find(|(c, _)| c == change)
        .unwrap_or_else(|| panic!("\"Where a change goes\" has a row for {change}"));
    let named = named_paths(row);
    for place in places {
        assert!(
            named.iter().any(|p| p == place),
            "the row for {change} names `{place}`: {named:?}"
        );
    }
}

#[test]
fn where_a_change_goes_names_files_that_exist() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let names: BTreeSet<String> = rs_files(&src())
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let rows = where_a_change_goes();
    assert!(rows.len() >= 10, "{rows:?}");
    let mut missing = Vec::new();
    for (change, place) in &rows {
        for path in named_paths(place) {
            let exists = if path.contains('/') {
                src().join(&path).exists() || manifest.join(&path).exists()
            } else {
                names.contains(&path) || manifest.join(&path).exists()
            };
            if !exists {
                missing.push(format!("{change}: `{path}`"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "\"Where a change goes\" names files that do not exist:\n{}",
        missing.join("\n")
    );
}

/// The most lines a file in `src/` or `tests/` may have (issue 33): past it, a file is
/// doing more than one job and is split by job.
const FILE_LINES: usize = 800;

#[test]
fn no_file_in_src_or_tests_is_longer_than_800_lines() {
    let tests = src().parent().unwrap().join("tests");
    let long: Vec<String> = rs_files(&src())
        .into_iter()
        .chain(rs_files(&tests))
        .filter_map(|file| {
            let lines = std::fs::read_to_string(&file).unwrap().lines().count();
            (lines > FILE_LINES).then(|| format!("{} ({lines} lines)", file.display()))
        })
        .collect();
    assert!(long.is_empty(), "split by job: {long:?}");
}
