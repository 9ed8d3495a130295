//! `list`: one directory's entries with their kinds and sizes (SPEC §8.6). Not recursive,
//! and nothing is hidden (`.gitignore` decides what a search covers, not what exists) but
//! the temporary files of changes under way.

use std::collections::BinaryHeap;
use std::fs;
use std::path::{Path, PathBuf};

use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::leftovers::is_temporary;
use super::output::{Answer, Page, count, json_len, json_size};
use super::root::{Resolved, WorkspaceRoot, shown_name};
use crate::limits::WORKSPACE_LIST_ENTRIES;

/// `list`'s structured content (its output schema).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(super) struct ListOutput {
    /// The directory, relative to the workspace root.
    pub path: String,
    /// Its entries in name order (at most as many as were shown).
    pub entries: Vec<ListEntry>,
    /// How many entries the directory has.
    pub total: u64,
}

/// One entry of a directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(super) struct ListEntry {
    pub name: String,
    /// `file`, `dir`, `symlink` or `other`.
    pub kind: &'static str,
    /// A file's size in bytes.
    pub size: Option<u64>,
    /// Where a symbolic link leads: a path relative to the workspace root, `outside the
    /// workspace`, or `nothing (a broken link)`.
    pub target: Option<String>,
}

pub(super) fn list(
    root: &WorkspaceRoot,
    path: &str,
    cancel: &CancellationToken,
) -> Result<Answer, String> {
    let dir = root.resolve(path)?;
    let shown = root.display(&dir);
    if !dir.is_dir() {
        return Err(format!(
            "`{shown}` is not a directory; use `read` to see a file"
        ));
    }
    let mut found = first_entries(&dir, &shown, cancel)?;
    let entries: Vec<ListEntry> = std::mem::take(&mut found.first)
        .into_iter()
        .filter_map(|(name, path)| {
            let entry = describe(root, name, &path);
            found.unreadable += u64::from(entry.is_none());
            entry
        })
        .collect();
    Ok(render(shown, &entries, &found))
}

/// What a directory holds: its first entries by name (with their paths), and how many it
/// has and could not read.
struct Found {
    first: Vec<(String, PathBuf)>,
    total: usize,
    unreadable: u64,
}

/// Reads `dir` through, keeping only its first [`WORKSPACE_LIST_ENTRIES`] entries by name (a
/// bounded heap), whatever its size; the rest are counted. A change's temporary file is
/// neither kept nor counted.
fn first_entries(dir: &Path, shown: &str, cancel: &CancellationToken) -> Result<Found, String> {
    let reading = fs::read_dir(dir).map_err(|e| format!("`{shown}` cannot be listed: {e}"))?;
    let mut first: BinaryHeap<(String, PathBuf)> = BinaryHeap::new();
    let (mut total, mut unreadable) = (0usize, 0u64);
    for entry in reading {
        if cancel.is_cancelled() {
            return Err("the call was cancelled".to_owned());
        }
        let Ok(entry) = entry else {
            unreadable += 1;
            continue;
        };
        if is_temporary(&entry.file_name()) {
            continue;
        }
        total += 1;
        first.push((shown_name(&entry.file_name()), entry.path()));
        if first.len() > WORKSPACE_LIST_ENTRIES {
            first.pop();
        }
    }
    Ok(Found {
        first: first.into_sorted_vec(),
        total,
        unreadable,
    })
}

/// One entry as it is listed: its kind, a file's size, where a link leads; `None` when it
/// cannot be looked at.
fn describe(root: &WorkspaceRoot, name: String, path: &Path) -> Option<ListEntry> {
    let meta = path.symlink_metadata().ok()?;
    let file_type = meta.file_type();
    let (kind, size, target) = if file_type.is_symlink() {
        // Found without looking outside: a target out there is "outside" whether it exists
        // or not.
        let target = match root.link_target(path) {
            Resolved::Inside(target) => root.display(&target),
            Resolved::Outside => "outside the workspace".to_owned(),
            Resolved::Missing | Resolved::Loop | Resolved::Failed(_) => {
                "nothing (a broken link)".to_owned()
            }
        };
        ("symlink", None, Some(target))
    } else if file_type.is_dir() {
        ("dir", None, None)
    } else if file_type.is_file() {
        ("file", Some(meta.len()), None)
    } else {
        ("other", None, None)
    };
    Some(ListEntry {
        name,
        kind,
        size,
        target,
    })
}

/// The answer: one line per entry that fits, then the notes.
fn render(shown: String, entries: &[ListEntry], found: &Found) -> Answer {
    let mut page = Page::reserving(json_len(&shown));
    let mut shown_entries = Vec::new();
    for entry in entries {
        let size = entry.size.map_or_else(|| "-".to_owned(), |s| s.to_string());
        let name = match (entry.kind, &entry.target) {
            ("dir", _) => format!("{}/", entry.name),
            (_, Some(target)) => format!("{} -> {target}", entry.name),
            _ => entry.name.clone(),
        };
        let line = format!("{:<7} {size:>12}  {name}", entry.kind);
        if !page.push_charged(&line, json_size(entry)) {
            break;
        }
        shown_entries.push(entry.clone());
    }
    let total = found.total;
    let mut notes = Vec::new();
    if total == 0 {
        notes.push(format!("`{shown}` is empty"));
    }
    let left_out = total.saturating_sub(shown_entries.len());
    if left_out > 0 {
        notes.push(format!(
            "{} of {total} not shown; use `glob` to find what you need",
            count(left_out as u64, "entry", "entries")
        ));
    }
    if found.unreadable > 0 {
        notes.push(format!(
            "{} could not be read",
            count(found.unreadable, "entry", "entries")
        ));
    }
    let structured = ListOutput {
        path: shown,
        entries: shown_entries,
        total: total as u64,
    };
    Answer::new(page.finish(&notes), &structured)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn entries_show_kind_size_and_where_links_lead() {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(ws.path().join("src")).unwrap();
        std::fs::write(ws.path().join("Cargo.toml"), "[package]\n").unwrap();
        std::fs::write(ws.path().join(".env"), "X=1\n").unwrap();
        std::os::unix::fs::symlink("Cargo.toml", ws.path().join("manifest")).unwrap();
        std::os::unix::fs::symlink(outside.path(), ws.path().join("away")).unwrap();
        std::os::unix::fs::symlink("gone", ws.path().join("dangling")).unwrap();
        let root = WorkspaceRoot::open(ws.path()).unwrap();
        let answer = list(&root, "", &CancellationToken::new()).unwrap();
        let lines: Vec<&str> = answer.text.lines().collect();
        let expected = [
            "file               4  .env",
            "file              10  Cargo.toml",
            "symlink            -  away -> outside the workspace",
            "symlink            -  dangling -> nothing (a broken link)",
            "symlink            -  manifest -> Cargo.toml",
            "dir                -  src/",
        ];
        assert_eq!(lines, expected);
        assert_eq!(answer.structured["total"], expected.len());
        assert_eq!(answer.structured["entries"][0]["size"], 4);

        assert!(
            list(&root, "Cargo.toml", &CancellationToken::new())
                .unwrap_err()
                .contains("is not a directory")
        );
        assert_eq!(
            list(&root, "src", &CancellationToken::new()).unwrap().text,
            "[`src` is empty]\n"
        );
    }

    #[test]
    fn a_long_directory_shows_its_first_entries_by_name_and_counts_the_rest() {
        let ws = tempfile::tempdir().unwrap();
        for i in (0..WORKSPACE_LIST_ENTRIES + 5).rev() {
            std::fs::write(ws.path().join(format!("f{i:05}")), "").unwrap();
        }
        let root = WorkspaceRoot::open(ws.path()).unwrap();
        let answer = list(&root, ".", &CancellationToken::new()).unwrap();
        let lines: Vec<&str> = answer.text.lines().collect();
        assert_eq!(lines.len(), WORKSPACE_LIST_ENTRIES + 1);
        assert!(lines[0].ends_with("f00000"), "{}", lines[0]);
        assert!(
            lines[WORKSPACE_LIST_ENTRIES - 1]
                .ends_with(&format!("f{:05}", WORKSPACE_LIST_ENTRIES - 1))
        );
        assert_eq!(
            lines[WORKSPACE_LIST_ENTRIES],
            format!(
                "[5 entries of {} not shown; use `glob` to find what you need]",
                WORKSPACE_LIST_ENTRIES + 5
            )
        );
        assert_eq!(answer.structured["total"], WORKSPACE_LIST_ENTRIES + 5);
    }
}
