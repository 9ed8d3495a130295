//! The layering of docs/architecture.md, held against the code: which top-level module may
//! use which, and no import cycle between files. Read from the sources' `use` lines and
//! `crate::…` paths (test modules at the end of a file are left out: they may reach
//! further), so a new arrow that breaks a rule fails here with the file that drew it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layer table of docs/architecture.md, the one source of the layering: for each
/// top-level module, the modules it may use (besides itself and external crates). A row
/// reads `` | `src/net.rs` | job | limits | `` or `` | `src/cli/` | job | everything | ``;
/// `—` is nothing.
fn layering() -> BTreeMap<String, Vec<String>> {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .expect("docs/architecture.md is readable");
    let mut rows: Vec<(String, String)> = Vec::new();
    for line in doc.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // `| a | b | c |` splits into five cells, the outer two empty.
        let [_, module, _job, may, _] = cells[..] else {
            continue;
        };
        let Some(module) = module
            .strip_prefix("`src/")
            .and_then(|m| m.strip_suffix('`'))
        else {
            continue;
        };
        let module = module
            .trim_end_matches('/')
            .trim_end_matches(".rs")
            .to_owned();
        rows.push((module, may.to_owned()));
    }
    let names: Vec<String> = rows.iter().map(|(m, _)| m.clone()).collect();
    rows.into_iter()
        .map(|(module, may)| {
            let may = match may.as_str() {
                "—" => Vec::new(),
                "everything" => names.iter().filter(|n| **n != module).cloned().collect(),
                list => list.split(',').map(|m| m.trim().to_owned()).collect(),
            };
            (module, may)
        })
        .collect()
}

/// The layers `lib.rs` declares (`pub mod x;`).
fn declared_layers() -> BTreeSet<String> {
    let lib = std::fs::read_to_string(src().join("lib.rs")).expect("src/lib.rs is readable");
    lib.lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod ")?.strip_suffix(';'))
        .map(str::to_owned)
        .collect()
}

/// One source file: its module path and the module paths it uses.
struct Source {
    file: PathBuf,
    module: Vec<String>,
    uses: Vec<Vec<String>>,
}

pub(super) fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    match last.as_str() {
        "lib.rs" | "mod.rs" => {}
        other => parts.push(other.trim_end_matches(".rs").to_owned()),
    }
    parts
}

/// The code of a file without comments and without its trailing `#[cfg(test)] mod tests`.
pub(super) fn code(text: &str) -> String {
    let end = text.find("#[cfg(test)]\nmod tests").unwrap_or(text.len());
    text[..end]
        .lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Expands `a::{b, c::{d, e}}` into `a::b`, `a::c::d`, `a::c::e`; a rename (`b as x`)
/// names `b`.
fn expand(tree: &str) -> Vec<String> {
    let mut words: Vec<&str> = Vec::new();
    let mut renamed = false;
    for word in tree.split_whitespace() {
        if word == "as" {
            renamed = true;
            continue;
        }
        if renamed {
            // The new name, and whatever punctuation follows it (`x,` or `x}`).
            renamed = false;
            words.push(word.trim_start_matches(|c: char| c.is_alphanumeric() || c == '_'));
            continue;
        }
        words.push(word);
    }
    let tree: String = words.concat();
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| expand(p).into_iter().map(move |e| format!("{prefix}{e}")))
        .collect()
}

/// Every `.rs` file below `root`, at any depth.
pub(super) fn rs_files(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![root.to_owned()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files
}

/// The files of modules declared `#[cfg(test)] mod NAME;` (a test harness a layer's unit
/// tests share): test code, like a file's own `mod tests`.
pub(super) fn test_only_files(root: &Path) -> BTreeSet<PathBuf> {
    let mut test_only = BTreeSet::new();
    for file in rs_files(root) {
        let rel = file.strip_prefix(root).unwrap().to_owned();
        let folder = match rel.file_name().and_then(|n| n.to_str()) {
            Some("mod.rs" | "lib.rs") => rel.parent().unwrap().to_owned(),
            _ => rel.with_extension(""),
        };
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for pair in lines.windows(2) {
            if pair[0] == "#[cfg(test)]"
                && let Some(name) = pair[1]
                    .strip_prefix("mod ")
                    .and_then(|m| m.strip_suffix(';'))
            {
                test_only.insert(folder.join(format!("{name}.rs")));
            }
        }
    }
    test_only
}

fn read_sources() -> Vec<Source> {
    let root = src();
    let test_only = test_only_files(&root);
    let mut sources = Vec::new();
    for file in rs_files(&root) {
        let rel = file.strip_prefix(&root).unwrap().to_owned();
        // The binaries are thin callers of `cli`; test harnesses are test code.
        if rel.starts_with("bin") || rel == Path::new("main.rs") || test_only.contains(&rel) {
            continue;
        }
        let module = module_of(&rel);
        let text = code(&std::fs::read_to_string(&file).unwrap());
        let children: BTreeSet<String> = text
            .lines()
            .filter_map(|l| {
                let l = l
                    .trim()
                    .trim_start_matches("pub ")
                    .trim_start_matches("pub(crate) ");
                l.strip_prefix("mod ")?.strip_suffix(';').map(str::to_owned)
            })
            .collect();
        let uses = used_paths(&text, &children)
            .into_iter()
            .filter_map(|path| absolute(&path, &module, &children))
            .collect();
        sources.push(Source {
            file: rel,
            module,
            uses,
        });
    }
    sources
}

/// The module paths a file's code names: its `use` trees, braces expanded, and inline
/// `crate::…`, `super::…`, `self::…` and child-module paths.
fn used_paths(text: &str, children: &BTreeSet<String>) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    // `use` statements (at any depth, after attributes too), braces expanded.
    let mut rest = text;
    while let Some(at) = rest.find("use ") {
        let before = rest[..at].chars().next_back();
        let after = &rest[at + 4..];
        let end = after.find(';').unwrap_or(after.len());
        let tree = &after[..end];
        // Only a path tree: `use` in a string or comment text is not one.
        let is_tree = tree
            .chars()
            .all(|c| c.is_alphanumeric() || "_:{},* \n".contains(c))
            && tree.matches('{').count() == tree.matches('}').count();
        if before.is_none_or(|c| !(c.is_alphanumeric() || c == '_')) && is_tree {
            paths.extend(expand(tree));
        }
        rest = &after[end.min(after.len())..];
    }
    // Inline paths: `crate::net::child_client(…)`, `super::stderr::forward(…)`, and a
    // child module's items named from its `mod.rs` (`messages::request_body(…)`).
    for word in text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')) {
        let first = word.split("::").next().unwrap_or("");
        // A word that ends in `::` opens braces, which the `use` reading expands.
        if word.contains("::")
            && !word.ends_with("::")
            && (matches!(first, "crate" | "super" | "self") || children.contains(first))
        {
            paths.push(word.to_owned());
        }
    }
    paths
}

/// `path`, as written in the file of `module`, as a module path from the crate root; `None`
/// for an external crate's path.
fn absolute(path: &str, module: &[String], children: &BTreeSet<String>) -> Option<Vec<String>> {
    let segments: Vec<&str> = path
        .split("::")
        .map(|s| s.split(" as ").next().unwrap_or(s))
        .filter(|s| !s.is_empty())
        .collect();
    let first = *segments.first()?;
    let mut absolute: Vec<String> = match first {
        "crate" => Vec::new(),
        "self" => module.to_owned(),
        "super" => {
            // `super` of a file's module; for `mod.rs` the folder is the module.
            let mut m = module.to_owned();
            let mut rest = &segments[..];
            while rest.first() == Some(&"super") {
                m.pop();
                rest = &rest[1..];
            }
            // `super::{…}` as a word before its braces: the braces are read above.
            if rest.is_empty() {
                return None;
            }
            m.extend(rest.iter().map(|s| s.to_string()));
            return Some(m);
        }
        child if children.contains(child) => module.to_owned(),
        _ => return None,
    };
    let skip = usize::from(matches!(first, "crate" | "self"));
    absolute.extend(segments[skip..].iter().map(|s| s.to_string()));
    Some(absolute)
}

/// The file a module path lands in: the longest prefix that is a module of ours.
fn resolve<'a>(
    path: &[String],
    modules: &'a BTreeMap<Vec<String>, PathBuf>,
) -> Option<&'a PathBuf> {
    (0..=path.len()).rev().find_map(|n| modules.get(&path[..n]))
}

#[test]
fn each_layer_uses_only_the_layers_below_it() {
    let sources = read_sources();
    let allowed = layering();
    let mut broken = Vec::new();
    for source in &sources {
        let Some(top) = source.module.first() else {
            continue; // lib.rs
        };
        let Some(may) = allowed.get(top.as_str()) else {
            broken.push(format!(
                "{}: module `{top}` is not in the layering",
                source.file.display()
            ));
            continue;
        };
        for used in &source.uses {
            let Some(target) = used.first() else { continue };
            if target != top && !may.contains(target) && allowed.contains_key(target.as_str()) {
                broken.push(format!(
                    "{} uses crate::{} (`{top}` may use: {})",
                    source.file.display(),
                    used.join("::"),
                    may.join(", ")
                ));
            }
        }
    }
    broken.sort();
    broken.dedup();
    assert!(
        broken.is_empty(),
        "imports against the layering:\n{}",
        broken.join("\n")
    );
}

/// The `mcp_agents::…` paths of the test suite, the benches and the fuzz targets, as
/// module paths of the library (`mcp_agents::sessions::SessionManager` is
/// `["sessions", "SessionManager"]`), with the file that names each.
fn outside_uses() -> Vec<(PathBuf, Vec<String>)> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    let mut dirs: Vec<PathBuf> = ["tests", "benches", "fuzz", "examples"]
        .iter()
        .map(|d| manifest.join(d))
        .filter(|d| d.is_dir())
        .collect();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                // Build output of the fuzz targets.
                if path.file_name().is_some_and(|n| n == "target") {
                    continue;
                }
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    let mut uses = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let rel = file.strip_prefix(manifest).unwrap().to_owned();
        let mut paths: Vec<String> = Vec::new();
        let mut rest = text.as_str();
        while let Some(at) = rest.find("use mcp_agents::") {
            let after = &rest[at + 4..];
            let end = after.find(';').unwrap_or(after.len());
            paths.extend(expand(&after[..end]));
            rest = &after[end.min(after.len())..];
        }
        for word in text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')) {
            if word.starts_with("mcp_agents::") && !word.ends_with("::") {
                paths.push(word.to_owned());
            }
        }
        for path in paths {
            let segments: Vec<String> = path
                .split("::")
                .skip(1)
                .map(|s| s.split(" as ").next().unwrap_or(s).to_owned())
                .filter(|s| !s.is_empty())
                .collect();
            uses.push((rel.clone(), segments));
        }
    }
    uses
}

/// Whether `path` (a module path of the library) names a file or folder inside a folder
/// layer, as `sessions::manager::SessionManager` does, instead of the layer's face.
fn names_an_inner_file(path: &[String]) -> bool {
    let [layer, inner, ..] = path else {
        return false;
    };
    let folder = src().join(layer);
    folder.is_dir() && (folder.join(format!("{inner}.rs")).is_file() || folder.join(inner).is_dir())
}

#[test]
fn no_path_from_outside_a_layer_names_a_file_inside_it() {
    let mut broken = Vec::new();
    for source in read_sources() {
        let top = source.module.first();
        for used in &source.uses {
            if used.first() != top && names_an_inner_file(used) {
                broken.push(format!(
                    "{}: crate::{}",
                    source.file.display(),
                    used.join("::")
                ));
            }
        }
    }
    for (file, used) in outside_uses() {
        if names_an_inner_file(&used) {
            broken.push(format!(
                "{}: mcp_agents::{}",
                file.display(),
                used.join("::")
            ));
        }
    }
    broken.sort();
    broken.dedup();
    assert!(
        broken.is_empty(),
        "paths that name a file inside another layer instead of its face (the layer's \
         mod.rs re-exports what others use):\n{}",
        broken.join("\n")
    );
}

#[test]
fn the_documented_layers_are_the_declared_ones() {
    let documented: BTreeSet<String> = layering().into_keys().collect();
    assert_eq!(
        documented,
        declared_layers(),
        "docs/architecture.md's layer table and src/lib.rs's `pub mod`s must list the same layers"
    );
    // Each may-use entry names a layer of the table.
    for (module, may) in layering() {
        for used in may {
            assert!(
                documented.contains(&used),
                "`{module}` may use `{used}`, which is no layer"
            );
        }
    }
}

#[test]
fn no_two_files_import_each_other_through_any_chain() {
    let sources = read_sources();
    let modules: BTreeMap<Vec<String>, PathBuf> = sources
        .iter()
        .map(|s| (s.module.clone(), s.file.clone()))
        .collect();
    // A folder's `mod.rs` declares its children; a child naming its folder's own items
    // (`super::X`) is the usual Rust shape, so only edges between different files count,
    // and a child's use of its parent `mod.rs` is an edge like any other.
    let mut edges: BTreeMap<&PathBuf, BTreeSet<&PathBuf>> = BTreeMap::new();
    for source in &sources {
        let entry = edges.entry(&source.file).or_default();
        for used in &source.uses {
            if let Some(target) = resolve(used, &modules)
                && target != &source.file
            {
                entry.insert(target);
            }
        }
    }
    // Tarjan's strongly connected components.
    struct State<'a> {
        index: BTreeMap<&'a PathBuf, usize>,
        low: BTreeMap<&'a PathBuf, usize>,
        stack: Vec<&'a PathBuf>,
        on_stack: BTreeSet<&'a PathBuf>,
        next: usize,
        cycles: Vec<Vec<String>>,
    }
    fn visit<'a>(
        node: &'a PathBuf,
        edges: &BTreeMap<&'a PathBuf, BTreeSet<&'a PathBuf>>,
        st: &mut State<'a>,
    ) {
        st.index.insert(node, st.next);
        st.low.insert(node, st.next);
        st.next += 1;
        st.stack.push(node);
        st.on_stack.insert(node);
        for &next in edges.get(node).into_iter().flatten() {
            if !st.index.contains_key(next) {
                visit(next, edges, st);
                let low = st.low[next].min(st.low[node]);
                st.low.insert(node, low);
            } else if st.on_stack.contains(next) {
                let low = st.index[next].min(st.low[node]);
                st.low.insert(node, low);
            }
        }
        if st.low[node] == st.index[node] {
            let mut component = Vec::new();
            while let Some(top) = st.stack.pop() {
                st.on_stack.remove(top);
                component.push(top.display().to_string());
                if top == node {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                st.cycles.push(component);
            }
        }
    }
    let mut st = State {
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        cycles: Vec::new(),
    };
    for node in edges.keys().copied().collect::<Vec<_>>() {
        if !st.index.contains_key(node) {
            visit(node, &edges, &mut st);
        }
    }
    let shown: Vec<String> = st.cycles.iter().map(|c| c.join(" <-> ")).collect();
    assert!(
        shown.is_empty(),
        "files that import each other:\n{}",
        shown.join("\n")
    );
}

#[test]
fn the_reader_sees_uses_through_braces_and_relative_paths() {
    assert_eq!(
        expand("crate::definition::{AgentDefinition, catalog::{Catalog, Warning}}"),
        [
            "crate::definition::AgentDefinition",
            "crate::definition::catalog::Catalog",
            "crate::definition::catalog::Warning"
        ]
    );
    assert!(names_an_inner_file(&[
        "sessions".into(),
        "manager".into(),
        "X".into()
    ]));
    assert!(!names_an_inner_file(&[
        "sessions".into(),
        "SessionManager".into()
    ]));
    assert!(!names_an_inner_file(&[
        "limits".into(),
        "CONCURRENT_RUNS".into()
    ]));
    let sources = read_sources();
    let child_mcp = sources
        .iter()
        .find(|s| s.file == Path::new("child_mcp/mod.rs"))
        .unwrap();
    assert!(
        child_mcp
            .uses
            .iter()
            .any(|u| u.starts_with(&["toolbox".to_owned()])),
        "{:?}",
        child_mcp.uses
    );
    assert!(
        child_mcp
            .uses
            .iter()
            .any(|u| u.starts_with(&["child_mcp".to_owned(), "connect".to_owned()])),
        "`use connect::…` in child_mcp/mod.rs is a use of child_mcp::connect"
    );
}
