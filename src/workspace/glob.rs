//! `glob`: the workspace's files whose names match a pattern, newest first (SPEC §8.6).
//! Only the newest [`WORKSPACE_GLOB_RESULTS`] are kept while walking (a bounded heap), so
//! memory stays bounded however many files match; the rest are counted.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;
use std::time::SystemTime;

use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::output::{Answer, Page, count, json_len, json_size, quote};
use super::root::WorkspaceRoot;
use super::walk::{NameGlob, walk};
use crate::limits::WORKSPACE_GLOB_RESULTS;

/// `glob`'s structured content (its output schema).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub(super) struct GlobOutput {
    pub pattern: String,
    /// The directory searched, relative to the workspace root.
    pub path: String,
    /// The matching files shown, newest first, relative to the workspace root.
    pub files: Vec<String>,
    /// How many files match in all.
    pub total_matches: u64,
}

/// A match, ordered so that the heap's smallest is the one to drop first: the oldest, and
/// among equally old ones the last in path order.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Found {
    modified: SystemTime,
    path: Reverse<String>,
}

pub(super) fn glob(
    root: &WorkspaceRoot,
    pattern: &str,
    path: &str,
    cancel: &CancellationToken,
) -> Result<Answer, String> {
    let dir = root.resolve(path)?;
    let shown_dir = root.display(&dir);
    if !dir.is_dir() {
        return Err(format!(
            "`{shown_dir}` is a file; `path` is the directory to search (use `read` for a file)"
        ));
    }
    let filter = NameGlob::new(pattern)?;
    let matches = newest_matches(root, &dir, &filter, cancel)?;
    Ok(render(pattern, shown_dir, matches))
}

/// What a walk found: the newest matches, newest first, and the counts.
struct Matches {
    newest: Vec<Found>,
    total: u64,
    unreadable: u64,
    notes: Vec<String>,
}

/// Walks `dir`, keeping only the newest [`WORKSPACE_GLOB_RESULTS`] files that match (a
/// bounded heap); the rest are counted.
fn newest_matches(
    root: &WorkspaceRoot,
    dir: &Path,
    filter: &NameGlob,
    cancel: &CancellationToken,
) -> Result<Matches, String> {
    let mut newest: BinaryHeap<Reverse<Found>> = BinaryHeap::new();
    let (mut total, mut unreadable) = (0u64, 0u64);
    let mut walk = walk(root, dir);
    for entry in &mut walk {
        if cancel.is_cancelled() {
            return Err("the call was cancelled".to_owned());
        }
        let Ok(entry) = entry else {
            unreadable += 1;
            continue;
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let relative = entry.path().strip_prefix(dir).unwrap_or(entry.path());
        if !filter.matches(relative) {
            continue;
        }
        total += 1;
        let modified = entry
            .metadata()
            .ok()
            .and_then(|m| m.modified().ok())
            .unwrap_or(SystemTime::UNIX_EPOCH);
        newest.push(Reverse(Found {
            modified,
            path: Reverse(root.display(entry.path())),
        }));
        if newest.len() > WORKSPACE_GLOB_RESULTS {
            newest.pop();
        }
    }
    // Newest first; equally new ones in path order.
    let mut newest: Vec<Found> = newest.into_iter().map(|Reverse(f)| f).collect();
    newest.sort_by(|a, b| b.cmp(a));
    Ok(Matches {
        newest,
        total,
        unreadable,
        notes: walk.notes(),
    })
}

/// The answer: the paths that fit, newest first, then the notes.
fn render(pattern: &str, shown_dir: String, matches: Matches) -> Answer {
    // The structured content repeats the pattern, the path and every file shown.
    let mut page = Page::reserving(json_len(pattern) + json_len(&shown_dir));
    let mut files = Vec::new();
    for Found {
        path: Reverse(path),
        ..
    } in matches.newest
    {
        if !page.push_charged(&path, json_size(&path)) {
            break;
        }
        files.push(path);
    }
    let total = matches.total;
    let mut notes = Vec::new();
    if total == 0 {
        notes.push(format!(
            "no files match `{}` in `{shown_dir}`",
            quote(pattern)
        ));
    }
    let left_out = total - files.len() as u64;
    if left_out > 0 {
        notes.push(format!(
            "{} of {total} matching files not shown (the oldest); narrow the pattern or `path`",
            count(left_out, "more", "more")
        ));
    }
    if matches.unreadable > 0 {
        notes.push(format!(
            "{} could not be read",
            count(
                matches.unreadable,
                "directory or file",
                "directories or files"
            )
        ));
    }
    notes.extend(matches.notes);
    let structured = GlobOutput {
        pattern: pattern.to_owned(),
        path: shown_dir,
        files,
        total_matches: total,
    };
    Answer::new(page.finish(&notes), &structured)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn touch(dir: &std::path::Path, rel: &str, age_secs: u64) {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, rel).unwrap();
        let when = SystemTime::now() - Duration::from_secs(age_secs);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(when)
            .unwrap();
    }

    #[test]
    fn newest_first_honouring_ignore_files_and_hidden_names() {
        let ws = tempfile::tempdir().unwrap();
        touch(ws.path(), "src/old.rs", 300);
        touch(ws.path(), "src/new.rs", 10);
        touch(ws.path(), "src/deep/mid.rs", 100);
        touch(ws.path(), "target/debug/build.rs", 1);
        touch(ws.path(), ".hidden/secret.rs", 1);
        touch(ws.path(), "notes.txt", 1);
        std::fs::write(ws.path().join(".gitignore"), "target/\n").unwrap();
        let root = WorkspaceRoot::open(ws.path()).unwrap();
        let answer = glob(&root, "*.rs", "", &CancellationToken::new()).unwrap();
        assert_eq!(answer.text, "src/new.rs\nsrc/deep/mid.rs\nsrc/old.rs\n");
        assert_eq!(answer.structured["total_matches"], 3);
        // A path names an ignored or hidden directory: it is searched.
        let answer = glob(&root, "*.rs", ".hidden", &CancellationToken::new()).unwrap();
        assert_eq!(answer.text, ".hidden/secret.rs\n");
        let answer = glob(&root, "src/*.rs", "", &CancellationToken::new()).unwrap();
        assert_eq!(answer.text, "src/new.rs\nsrc/old.rs\n");
        let none = glob(&root, "*.py", "src", &CancellationToken::new()).unwrap();
        assert_eq!(none.text, "[no files match `*.py` in `src`]\n");
    }

    #[test]
    fn results_are_capped_with_a_count_of_the_rest() {
        let ws = tempfile::tempdir().unwrap();
        let extra = 7;
        for i in 0..WORKSPACE_GLOB_RESULTS + extra {
            touch(ws.path(), &format!("f{i:04}.txt"), i as u64 + 1);
        }
        let root = WorkspaceRoot::open(ws.path()).unwrap();
        let answer = glob(&root, "*.txt", ".", &CancellationToken::new()).unwrap();
        let lines: Vec<&str> = answer.text.lines().collect();
        assert_eq!(lines.len(), WORKSPACE_GLOB_RESULTS + 1);
        assert_eq!(lines[0], "f0000.txt", "the newest");
        assert_eq!(
            lines.last().unwrap(),
            &format!(
                "[{extra} more of {} matching files not shown (the oldest); narrow the pattern or `path`]",
                WORKSPACE_GLOB_RESULTS + extra
            )
        );
        assert!(
            glob(&root, "*.txt", "f0000.txt", &CancellationToken::new())
                .unwrap_err()
                .contains("is a file")
        );
    }
}
