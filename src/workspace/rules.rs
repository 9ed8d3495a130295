//! The ignore rules a walk honours (SPEC §8.6), read by us rather than by the `ignore`
//! crate, which would open them with a plain `open` wherever they are: in directories above
//! the workspace, through links, from FIFOs and devices, and of any size.
//!
//! Here the rules come only from the workspace: `.ignore` and `.gitignore` in the
//! workspace root and every directory below it down to the entry, and `.git/info/exclude`
//! where `.git` is a directory of the workspace. Nothing above the workspace and no global
//! git configuration counts. Each file is opened as `open` opens files (a regular file
//! only, not through a link, never blocking), at most [`WORKSPACE_IGNORE_FILE_BYTES`] of
//! it, at most [`WORKSPACE_IGNORE_WALK_BYTES`] in all per walk; a line longer than a glob
//! may be is skipped. A file that cannot be used is left out with a note, never an error.
//!
//! The precedence is ripgrep's: the deepest `.ignore` that says anything about an entry
//! decides; failing that, the deepest `.gitignore`; failing that, an exclude file. A `!`
//! line makes an entry visible again, hidden names included; an entry no rule speaks of is
//! left out when its name starts with `.`.

use std::io::Read;
use std::path::{Path, PathBuf};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use super::open::Refusal;
use super::output::{count, shorten};
use super::root::WorkspaceRoot;
use crate::limits::{
    WORKSPACE_GLOB_BYTES, WORKSPACE_IGNORE_FILE_BYTES, WORKSPACE_IGNORE_NOTES,
    WORKSPACE_IGNORE_WALK_BYTES,
};

/// The rules of one directory.
struct Level {
    dir: PathBuf,
    ignore: Option<Gitignore>,
    git: Option<Gitignore>,
    exclude: Option<Gitignore>,
}

/// The rules in force at the point a walk has reached: one level per directory from the
/// workspace root down to the directory of the latest entry. A depth-first walk only ever
/// leaves directories it is done with, so each directory's files are read once.
pub(super) struct Rules {
    root: WorkspaceRoot,
    levels: Vec<Level>,
    /// Bytes of ignore files this walk may still read.
    budget: u64,
    /// The first notes about ignore files that were not applied (or only in part).
    notes: Vec<String>,
    /// How many more there were.
    more: u64,
}

impl Rules {
    pub(super) fn new(root: WorkspaceRoot) -> Rules {
        Rules {
            root,
            levels: Vec::new(),
            budget: WORKSPACE_IGNORE_WALK_BYTES,
            notes: Vec::new(),
            more: 0,
        }
    }

    /// Whether the walk leaves `path` out (and, for a directory, everything below it).
    pub(super) fn leaves_out(&mut self, path: &Path, is_dir: bool) -> bool {
        let Some(parent) = path.parent() else {
            return false;
        };
        self.enter(parent);
        let deepest = |pick: fn(&Level) -> &Option<Gitignore>| {
            self.levels
                .iter()
                .rev()
                .filter_map(|level| pick(level).as_ref())
                .map(|rules| rules.matched(path, is_dir))
                .find(|m| !m.is_none())
                .unwrap_or(Match::None)
        };
        let decided = deepest(|l| &l.ignore)
            .or(deepest(|l| &l.git))
            .or(deepest(|l| &l.exclude));
        match decided {
            Match::Ignore(_) => true,
            Match::Whitelist(_) => false,
            Match::None => path
                .file_name()
                .is_some_and(|name| name.as_encoded_bytes().starts_with(b".")),
        }
    }

    /// What the answer says about ignore files that were not applied.
    pub(super) fn notes(&self) -> Vec<String> {
        let mut notes = self.notes.clone();
        if self.more > 0 {
            notes.push(format!(
                "{} not applied, or applied in part, for the same reasons",
                count(self.more, "more ignore file was", "more ignore files were")
            ));
        }
        notes
    }

    /// Makes the levels those of `dir`: leaves the directories that do not hold it and
    /// reads the rules of the ones between the deepest that does and `dir`.
    fn enter(&mut self, dir: &Path) {
        while self
            .levels
            .last()
            .is_some_and(|level| !dir.starts_with(&level.dir))
        {
            self.levels.pop();
        }
        let base = match self.levels.last() {
            Some(level) => level.dir.clone(),
            None => {
                let root = self.root.path().to_owned();
                if !dir.starts_with(&root) {
                    return;
                }
                let level = self.load(root.clone());
                self.levels.push(level);
                root
            }
        };
        let Ok(below) = dir.strip_prefix(&base) else {
            return;
        };
        let mut current = base;
        for part in below.components() {
            current.push(part);
            let level = self.load(current.clone());
            self.levels.push(level);
        }
    }

    fn load(&mut self, dir: PathBuf) -> Level {
        let ignore = self.read(&dir, &dir.join(".ignore"));
        let git = self.read(&dir, &dir.join(".gitignore"));
        // Only a `.git` directory of the workspace: a `.git` file (a worktree, a submodule)
        // names a directory that may be anywhere.
        let git_dir = dir.join(".git");
        let exclude = std::fs::symlink_metadata(&git_dir)
            .is_ok_and(|meta| meta.is_dir())
            .then(|| self.read(&dir, &git_dir.join("info/exclude")))
            .flatten();
        Level {
            dir,
            ignore,
            git,
            exclude,
        }
    }

    /// The rules of the ignore file at `path`, relative to `dir`; `None` when there is no
    /// such file, or it cannot be used (with a note).
    fn read(&mut self, dir: &Path, path: &Path) -> Option<Gitignore> {
        let file = match self.root.open_regular(path) {
            Ok(file) => file,
            Err(Refusal::Missing) => return None,
            Err(refusal @ (Refusal::Link | Refusal::NotRegular(_))) => {
                self.note(format!(
                    "`{}` {}: ignore files are read only as regular files inside the \
                     workspace, so its rules were not applied",
                    self.root.display(path),
                    refusal.reason()
                ));
                return None;
            }
            Err(refusal) => {
                self.note(format!(
                    "`{}` {}; its rules were not applied",
                    self.root.display(path),
                    refusal.reason()
                ));
                return None;
            }
        };
        let cap = WORKSPACE_IGNORE_FILE_BYTES.min(self.budget);
        let mut bytes = Vec::new();
        // One byte past the cap tells a file that is too large (or grew since).
        if let Err(e) = file.take(cap + 1).read_to_end(&mut bytes) {
            self.note(format!(
                "`{}` cannot be read: {e}; its rules were not applied",
                self.root.display(path)
            ));
            return None;
        }
        if bytes.len() as u64 > cap {
            let why = if cap < WORKSPACE_IGNORE_FILE_BYTES {
                format!(
                    "was not read: the ignore files of one search may hold {} KiB in all",
                    WORKSPACE_IGNORE_WALK_BYTES / 1024
                )
            } else {
                format!("is larger than {} KiB", WORKSPACE_IGNORE_FILE_BYTES / 1024)
            };
            self.note(format!(
                "`{}` {why}; its rules were not applied",
                self.root.display(path)
            ));
            return None;
        }
        self.budget -= bytes.len() as u64;
        let text = String::from_utf8_lossy(&bytes);
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let mut builder = GitignoreBuilder::new(dir);
        let mut skipped = 0u64;
        for line in text.lines() {
            if line.len() > WORKSPACE_GLOB_BYTES || builder.add_line(None, line).is_err() {
                skipped += 1;
            }
        }
        if skipped > 0 {
            self.note(format!(
                "`{}`: {} longer than {WORKSPACE_GLOB_BYTES} bytes or not a valid glob, so \
                 not applied",
                self.root.display(path),
                count(skipped, "line is", "lines are")
            ));
        }
        match builder.build() {
            Ok(rules) => Some(rules),
            Err(e) => {
                self.note(format!(
                    "`{}`: its rules could not be compiled ({}), so they were not applied",
                    self.root.display(path),
                    shorten(&e.to_string())
                ));
                None
            }
        }
    }

    fn note(&mut self, note: String) {
        if self.notes.len() < WORKSPACE_IGNORE_NOTES {
            self.notes.push(note);
        } else {
            self.more += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::super::walk::walk;
    use super::*;

    fn write(dir: &Path, rel: &str, text: &str) {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn mkfifo(path: &Path) {
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    }

    /// The files a walk of the whole workspace keeps, and its notes.
    fn files(root: &WorkspaceRoot) -> (Vec<String>, Vec<String>) {
        let mut walk = walk(root, root.path());
        let mut found: Vec<String> = (&mut walk)
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
            .map(|e| root.display(e.path()))
            .collect();
        found.sort();
        (found, walk.notes())
    }

    #[test]
    fn only_regular_ignore_files_inside_the_workspace_count() {
        let top = tempfile::tempdir().unwrap();
        // Rules three levels above the workspace, and a FIFO one level above: neither is
        // read, even though the workspace is a git repository of its own.
        write(top.path(), ".gitignore", "*.secret\n");
        write(top.path(), "a/.ignore", "*.md\n");
        let ws = top.path().join("a/b/ws");
        std::fs::create_dir_all(&ws).unwrap();
        mkfifo(&top.path().join("a/b/.gitignore"));
        write(&ws, "keep.secret", "x");
        write(&ws, "README.md", "x");
        write(&ws, ".git/info/exclude", "*.excluded\n");
        write(&ws, "x.excluded", "x");
        // In the workspace: a FIFO, links to a device and to the server's own input, and
        // a regular file whose rules apply.
        mkfifo(&ws.join(".gitignore"));
        write(&ws, "sub/a.log", "x");
        symlink("/dev/zero", ws.join("sub/.gitignore")).unwrap();
        write(&ws, "sub2/b.log", "x");
        write(&ws, "sub2/c.tmp", "x");
        symlink("/dev/stdin", ws.join("sub2/.ignore")).unwrap();
        write(&ws, "sub2/.gitignore", "*.tmp\n");
        let root = WorkspaceRoot::open(&ws).unwrap();
        let (found, notes) = files(&root);
        assert_eq!(
            found,
            ["README.md", "keep.secret", "sub/a.log", "sub2/b.log"],
            "{notes:?}"
        );
        assert_eq!(
            notes,
            [
                "`.gitignore` is a FIFO, not a regular file: ignore files are read only as \
                 regular files inside the workspace, so its rules were not applied",
                "`sub/.gitignore` is a symbolic link: ignore files are read only as regular \
                 files inside the workspace, so its rules were not applied",
                "`sub2/.ignore` is a symbolic link: ignore files are read only as regular \
                 files inside the workspace, so its rules were not applied",
            ]
        );
    }

    #[test]
    fn precedence_whitelists_and_hidden_names_are_ripgreps() {
        let ws = tempfile::tempdir().unwrap();
        let dir = ws.path();
        write(dir, ".gitignore", "*.log\n!keep.log\n!.github/\n");
        write(dir, "a.log", "x");
        write(dir, "keep.log", "x");
        write(dir, ".github/ci.yml", "x");
        write(dir, ".cache/c", "x");
        // A deeper file wins; `.ignore` wins over `.gitignore` in the same directory.
        write(dir, "deep/.gitignore", "!b.log\n");
        write(dir, "deep/b.log", "x");
        write(dir, "deep/.ignore", "c.txt\n");
        write(dir, "deep/c.txt", "x");
        write(dir, "deep/d.txt", "x");
        // A `.git` file names a directory elsewhere: its exclude file is not looked for.
        write(dir, "wt/.git", "gitdir: /elsewhere\n");
        write(dir, "wt/e.txt", "x");
        let root = WorkspaceRoot::open(dir).unwrap();
        let (found, notes) = files(&root);
        assert_eq!(
            found,
            [
                ".github/ci.yml",
                "deep/b.log",
                "deep/d.txt",
                "keep.log",
                "wt/e.txt"
            ]
        );
        assert!(notes.is_empty(), "{notes:?}");
        // Walking a directory below the root still applies the root's rules.
        let mut below: Vec<String> = walk(&root, &root.path().join("deep"))
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
            .map(|e| root.display(e.path()))
            .collect();
        below.sort();
        assert_eq!(below, ["deep/b.log", "deep/d.txt"]);
    }

    #[test]
    fn large_files_long_lines_and_the_walk_budget_are_notes() {
        let ws = tempfile::tempdir().unwrap();
        let dir = ws.path();
        let big = "x\n".repeat(WORKSPACE_IGNORE_FILE_BYTES as usize / 2 + 1);
        write(dir, "big/.gitignore", &big);
        write(dir, "big/x", "x");
        let long = format!("{}\n*.skip\nbad[\n", "*".repeat(WORKSPACE_GLOB_BYTES + 1));
        write(dir, "long/.gitignore", &long);
        write(dir, "long/a.skip", "x");
        write(dir, "long/keep", "x");
        let root = WorkspaceRoot::open(dir).unwrap();
        let (found, notes) = files(&root);
        assert_eq!(found, ["big/x", "long/keep"], "{notes:?}");
        assert_eq!(
            notes,
            [
                "`big/.gitignore` is larger than 64 KiB; its rules were not applied",
                "`long/.gitignore`: 1 line is longer than 1024 bytes or not a valid glob, so \
                 not applied",
            ]
        );
        // Files of just under 64 KiB each: the walk reads 1 MiB of them, then stops.
        let ws = tempfile::tempdir().unwrap();
        let near = "# a comment line of some length, to fill the file\n"
            .repeat(WORKSPACE_IGNORE_FILE_BYTES as usize / 52);
        for i in 0..20 {
            write(ws.path(), &format!("d{i:02}/.gitignore"), &near);
        }
        let root = WorkspaceRoot::open(ws.path()).unwrap();
        let (_, notes) = files(&root);
        assert_eq!(notes.len(), WORKSPACE_IGNORE_NOTES + 1, "{notes:?}");
        assert!(
            notes[0].ends_with(
                "was not read: the ignore files of one search may hold 1024 KiB in all; its \
                 rules were not applied"
            ),
            "{notes:?}"
        );
        assert!(
            notes[3]
                == "1 more ignore file was not applied, or applied in part, for the same reasons",
            "{notes:?}"
        );
    }
}
