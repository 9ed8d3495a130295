//! Walking the workspace as ripgrep does, with the `ignore` crate's walker: hidden files and
//! directories are skipped, `.gitignore`, `.ignore` and `.git/info/exclude` are honoured
//! even outside a git repository (read by [`Rules`], only inside the workspace), and
//! symbolic links are neither followed nor listed, so a walk never leaves the directory it
//! starts in, and the temporary files of changes under way are never walked. Entries come
//! in file-name order, so every answer is the same for the same tree.
//!
//! [`NameGlob`] is the file filter `glob` and `grep` share, read the way ripgrep reads
//! `--glob`.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use ignore::{DirEntry, WalkBuilder};

use super::leftovers::is_temporary;
use super::output::{quote, shorten};
use super::root::WorkspaceRoot;
use super::rules::Rules;
use crate::limits::WORKSPACE_GLOB_BYTES;

/// A walk of one directory of the workspace, with the rules above.
pub(super) struct Walk {
    entries: ignore::Walk,
    rules: Arc<Mutex<Rules>>,
}

/// A walk of `dir` (inside `root`). The directory itself is walked whatever the rules say
/// of it: a `path` that names an ignored or hidden directory is searched.
pub(super) fn walk(root: &WorkspaceRoot, dir: &Path) -> Walk {
    let rules = Arc::new(Mutex::new(Rules::new(root.clone())));
    let filter = Arc::clone(&rules);
    let entries = WalkBuilder::new(dir)
        // No file is read by the walker itself: `parents`, `ignore`, `git_ignore`,
        // `git_global`, `git_exclude` and `hidden` are all off; `Rules` does their work.
        .standard_filters(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(move |entry| {
            // A change's temporary file is never shown, whatever the rules say.
            if entry.depth() > 0 && is_temporary(entry.file_name()) {
                return false;
            }
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            let mut rules = filter.lock().unwrap_or_else(PoisonError::into_inner);
            !rules.leaves_out(entry.path(), is_dir)
        })
        .build();
    Walk { entries, rules }
}

impl Walk {
    /// What the answer says about ignore files that were not applied.
    pub(super) fn notes(&self) -> Vec<String> {
        self.rules
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .notes()
    }
}

impl Iterator for Walk {
    type Item = Result<DirEntry, ignore::Error>;

    fn next(&mut self) -> Option<Self::Item> {
        self.entries.next()
    }
}

/// A glob over files: without a `/` it matches a file's name at any depth (`*.rs`); with
/// one it matches the path below the searched directory (`src/**/*.rs`), `*` staying
/// within one path segment and `**` crossing them. `{a,b}`, `?` and `[ab]` work as usual.
#[derive(Debug, Clone)]
pub(super) struct NameGlob {
    matcher: GlobSet,
    whole_path: bool,
}

impl NameGlob {
    pub(super) fn new(pattern: &str) -> Result<NameGlob, String> {
        if pattern.len() > WORKSPACE_GLOB_BYTES {
            return Err(format!(
                "the glob is {} bytes long; a glob is at most {WORKSPACE_GLOB_BYTES} bytes",
                pattern.len()
            ));
        }
        let trimmed = pattern.trim();
        if trimmed.is_empty() {
            return Err("the glob pattern is empty".to_owned());
        }
        // A leading `/` anchors the pattern at the searched directory, as in .gitignore.
        let anchored = trimmed.strip_prefix('/').unwrap_or(trimmed);
        if anchored.split('/').any(|part| part == "..") {
            return Err(format!(
                "the glob `{}` climbs out with `..`; set `path` to the directory to search \
                 instead",
                quote(pattern)
            ));
        }
        let whole_path = anchored.contains('/') || anchored != trimmed;
        let invalid = |why: String| {
            format!(
                "the glob `{}` is not valid: {}",
                quote(pattern),
                shorten(&why)
            )
        };
        let glob = GlobBuilder::new(anchored)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| invalid(e.kind().to_string()))?;
        // A set of one glob matches as the glob does, and its `build` returns the error that
        // `Glob::compile_matcher` would panic with (a glob too large to compile).
        let matcher = GlobSetBuilder::new()
            .add(glob)
            .build()
            .map_err(|e| invalid(last_line(&e.to_string())))?;
        Ok(NameGlob {
            matcher,
            whole_path,
        })
    }

    /// Whether the file at `relative` (below the searched directory) matches.
    pub(super) fn matches(&self, relative: &Path) -> bool {
        if self.whole_path {
            self.matcher.is_match(relative)
        } else {
            relative
                .file_name()
                .is_some_and(|name| self.matcher.is_match(name))
        }
    }
}

/// The last line of an engine's error: where regex-syntax and globset say what went wrong,
/// after quoting the whole pattern.
pub(super) fn last_line(message: &str) -> String {
    message
        .lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .unwrap_or(message)
        .trim()
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_read_like_ripgreps() {
        let rs = NameGlob::new("*.rs").unwrap();
        assert!(rs.matches(Path::new("a.rs")));
        assert!(
            rs.matches(Path::new("src/deep/a.rs")),
            "any depth without a slash"
        );
        assert!(!rs.matches(Path::new("a.rsx")));
        let src = NameGlob::new("src/*.rs").unwrap();
        assert!(src.matches(Path::new("src/a.rs")));
        assert!(
            !src.matches(Path::new("src/deep/a.rs")),
            "`*` stays in one segment"
        );
        assert!(!src.matches(Path::new("other/src/a.rs")));
        let deep = NameGlob::new("src/**/*.{rs,toml}").unwrap();
        assert!(deep.matches(Path::new("src/a.rs")));
        assert!(deep.matches(Path::new("src/x/y/Cargo.toml")));
        let anchored = NameGlob::new("/README.md").unwrap();
        assert!(anchored.matches(Path::new("README.md")));
        assert!(!anchored.matches(Path::new("docs/README.md")));
        let any = NameGlob::new("**/test_*.py").unwrap();
        assert!(any.matches(Path::new("test_a.py")) && any.matches(Path::new("x/test_a.py")));
    }

    #[test]
    fn long_globs_are_refused_before_they_are_compiled() {
        assert_eq!(
            NameGlob::new(&"*".repeat(1_000_000)).unwrap_err(),
            "the glob is 1000000 bytes long; a glob is at most 1024 bytes"
        );
        let most = NameGlob::new(&"*".repeat(WORKSPACE_GLOB_BYTES)).unwrap();
        assert!(most.matches(Path::new("a.rs")));
        // A bad glob near the cap is quoted cut, with the reason.
        let error =
            NameGlob::new(&format!("{}[", "a".repeat(WORKSPACE_GLOB_BYTES - 1))).unwrap_err();
        assert!(
            error.len() < 2 * crate::limits::WORKSPACE_QUOTE_BYTES,
            "{error}"
        );
        assert!(
            error.ends_with("unclosed character class; missing ']'"),
            "{error}"
        );
    }

    #[test]
    fn bad_globs_are_explained() {
        assert!(NameGlob::new("../*.rs").unwrap_err().contains("climbs out"));
        assert!(
            NameGlob::new("a/../../b")
                .unwrap_err()
                .contains("climbs out")
        );
        assert_eq!(
            NameGlob::new("  ").unwrap_err(),
            "the glob pattern is empty"
        );
        assert!(
            NameGlob::new("a[")
                .unwrap_err()
                .starts_with("the glob `a[` is not valid")
        );
    }
}
