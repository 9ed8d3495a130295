//! Walking the workspace as ripgrep does (the `ignore` crate): `.gitignore`, `.ignore`,
//! `.git/info/exclude` and the global git excludes are honoured even outside a git
//! repository, hidden files and directories are skipped, and symbolic links are neither
//! followed nor listed, so a walk never leaves the directory it starts in. Entries come in
//! file-name order, so every answer is the same for the same tree.
//!
//! [`NameGlob`] is the file filter `glob` and `grep` share, read the way ripgrep reads
//! `--glob`.

use std::path::Path;

use globset::{GlobBuilder, GlobMatcher};
use ignore::{Walk, WalkBuilder};

/// A walk of `dir` with the rules above.
pub(super) fn walk(dir: &Path) -> Walk {
    WalkBuilder::new(dir)
        .standard_filters(true)
        // The workspace is the project, git repository or not.
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .build()
}

/// A glob over files: without a `/` it matches a file's name at any depth (`*.rs`); with
/// one it matches the path below the searched directory (`src/**/*.rs`), `*` staying
/// within one path segment and `**` crossing them. `{a,b}`, `?` and `[ab]` work as usual.
#[derive(Debug, Clone)]
pub(super) struct NameGlob {
    matcher: GlobMatcher,
    whole_path: bool,
}

impl NameGlob {
    pub(super) fn new(pattern: &str) -> Result<NameGlob, String> {
        let trimmed = pattern.trim();
        if trimmed.is_empty() {
            return Err("the glob pattern is empty".to_owned());
        }
        // A leading `/` anchors the pattern at the searched directory, as in .gitignore.
        let anchored = trimmed.strip_prefix('/').unwrap_or(trimmed);
        if anchored.split('/').any(|part| part == "..") {
            return Err(format!(
                "the glob `{pattern}` climbs out with `..`; set `path` to the directory to \
                 search instead"
            ));
        }
        let whole_path = anchored.contains('/') || anchored != trimmed;
        let matcher = GlobBuilder::new(anchored)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| format!("the glob `{pattern}` is not valid: {}", e.kind()))?
            .compile_matcher();
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
