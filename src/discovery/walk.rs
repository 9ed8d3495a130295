//! Finding candidate files below the roots (SPEC §3): recursive to depth 8, every path
//! canonicalized and confined to its root and the workspace, each canonical file and
//! directory visited once, and the result ordered by root precedence then canonical path.
//!
//! Entries whose name starts with `.` (editor lock files, `.git`) are skipped silently, and
//! so are what a root's own tool leaves out (the Gemini CLI: folders below `.gemini/agents`
//! and files starting with `_`).

use std::collections::HashSet;
use std::ffi::OsStr;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::definition::{Effect, SkillRoot, Warning};
use crate::limits::DISCOVERY_DEPTH;

/// A folder the walk starts from: agent roots and skill roots alike.
pub(super) trait Root: Copy {
    /// Relative to the workspace.
    fn path(self) -> &'static str;
    /// Lower comes first.
    fn precedence(self) -> usize;
    /// `None` when folders below the root are searched (to [`DISCOVERY_DEPTH`]); otherwise
    /// the tool that reads only the root's top level, as a note names it: such a root skips
    /// its folders, as its tool does, and notes each one that holds definition files.
    fn subfolders_read_by_none(self) -> Option<&'static str> {
        None
    }
    /// Whether its tool leaves out a file of this name.
    fn skips_file(self, _name: &str) -> bool {
        false
    }
}

impl Root for SkillRoot {
    fn path(self) -> &'static str {
        SkillRoot::path(self)
    }
    fn precedence(self) -> usize {
        SkillRoot::precedence(self)
    }
}

/// A file worth parsing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Candidate<R> {
    /// The root that found it.
    pub root: R,
    pub canonical: PathBuf,
    /// The canonical path below the (canonical) root that found it.
    pub rel_in_root: PathBuf,
}

/// Walks `roots` and returns the candidates whose file name satisfies `wanted`, sorted by
/// root precedence then canonical path, with each canonical file once.
pub(super) fn walk<R: Root>(
    workspace: &Path,
    roots: &[R],
    wanted: &dyn Fn(&OsStr) -> bool,
    warnings: &mut Vec<Warning>,
) -> Vec<Candidate<R>> {
    let mut walker = Walker {
        workspace,
        wanted,
        warnings,
        visited_dirs: HashSet::new(),
        found: Vec::new(),
    };
    for &root in roots {
        walker.walk_root(root);
    }
    let mut found = walker.found;
    found.sort_by(|a, b| {
        (
            a.root.precedence(),
            a.canonical.as_os_str().as_encoded_bytes(),
        )
            .cmp(&(
                b.root.precedence(),
                b.canonical.as_os_str().as_encoded_bytes(),
            ))
    });
    let mut seen = HashSet::new();
    found.retain(|c| seen.insert(c.canonical.clone()));
    found
}

/// What a directory entry (or a link's target) is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Dir,
    File,
    /// A FIFO, socket or device: never opened.
    Other,
}

impl Kind {
    fn of(file_type: fs::FileType) -> Kind {
        if file_type.is_dir() {
            Kind::Dir
        } else if file_type.is_file() {
            Kind::File
        } else {
            Kind::Other
        }
    }
}

/// The directory being read, and where it is.
struct Dir<'a, R> {
    found_by: R,
    canonical_root: &'a Path,
    dir: &'a Path,
    /// Its path as messages show it.
    shown: &'a Path,
    depth: usize,
}

struct Walker<'a, R> {
    workspace: &'a Path,
    wanted: &'a dyn Fn(&OsStr) -> bool,
    warnings: &'a mut Vec<Warning>,
    visited_dirs: HashSet<PathBuf>,
    found: Vec<Candidate<R>>,
}

impl<R: Root> Walker<'_, R> {
    fn walk_root(&mut self, found_by: R) {
        let root = found_by.path();
        let path = self.workspace.join(root);
        let Some(canonical_root) = self.open_root(root, &path) else {
            return;
        };
        let mut stack = vec![(canonical_root.clone(), path, 1usize)];
        while let Some((dir, shown, depth)) = stack.pop() {
            if !self.visited_dirs.insert(dir.clone()) {
                continue;
            }
            let entries = match fs::read_dir(&dir) {
                Ok(entries) => entries,
                Err(e) => {
                    self.warn_path(&shown, format!("cannot be read: {e}"), Effect::Skipped);
                    continue;
                }
            };
            let at = Dir {
                found_by,
                canonical_root: &canonical_root,
                dir: &dir,
                shown: &shown,
                depth,
            };
            for entry in entries.flatten() {
                stack.extend(self.visit(&at, &entry));
            }
        }
    }

    /// The root's canonical path, or `None` (with a warning where it matters) when it is
    /// missing, unreadable, outside the workspace or not a directory.
    fn open_root(&mut self, root: &str, path: &Path) -> Option<PathBuf> {
        let canonical_root = match path.canonicalize() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return None,
            Err(e) => {
                self.warn(root, format!("cannot be searched: {e}"), Effect::Skipped);
                return None;
            }
        };
        if !canonical_root.starts_with(self.workspace) {
            self.warn(
                root,
                "is a link to a directory outside the workspace; not searched".to_owned(),
                Effect::Skipped,
            );
            return None;
        }
        if !canonical_root.is_dir() {
            self.warn(
                root,
                "is not a directory; not searched".to_owned(),
                Effect::Skipped,
            );
            return None;
        }
        Some(canonical_root)
    }

    /// One entry of a directory: a wanted file becomes a candidate; a directory to search
    /// is returned, with its shown path and depth.
    fn visit(
        &mut self,
        at: &Dir<'_, R>,
        entry: &fs::DirEntry,
    ) -> Option<(PathBuf, PathBuf, usize)> {
        let name = entry.file_name();
        if name.as_encoded_bytes().starts_with(b".")
            || at.found_by.skips_file(&name.to_string_lossy())
        {
            return None;
        }
        let shown = at.shown.join(&name);
        let file_type = entry.file_type().ok()?;
        let (canonical, kind) = if file_type.is_symlink() {
            self.follow_link(&entry.path(), &shown, &name, at.canonical_root)?
        } else {
            (at.dir.join(&name), Kind::of(file_type))
        };
        match kind {
            Kind::Other => {
                // A FIFO would block the read forever; sockets and devices are no
                // definitions either.
                if (self.wanted)(&name) {
                    self.warn_path(
                        &shown,
                        "is not a regular file (a FIFO, socket or device); not read".to_owned(),
                        Effect::Skipped,
                    );
                }
                None
            }
            Kind::Dir if at.found_by.subfolders_read_by_none().is_some() => {
                let tool = at.found_by.subfolders_read_by_none().unwrap_or_default();
                let files = self.wanted_files_below(&canonical, 1);
                if files > 0 {
                    self.warn_path(
                        &shown,
                        format!(
                            "holds {files} definition file{}, which {tool} does not read: it \
                             reads only the files directly in {}, and so does this server; \
                             move {} up to load {}",
                            if files == 1 { "" } else { "s" },
                            at.found_by.path(),
                            if files == 1 { "it" } else { "them" },
                            if files == 1 { "it" } else { "them" },
                        ),
                        Effect::Skipped,
                    );
                }
                None
            }
            Kind::Dir if at.depth < DISCOVERY_DEPTH => Some((canonical, shown, at.depth + 1)),
            Kind::Dir => {
                self.warn_path(
                    &shown,
                    format!(
                        "is deeper than the {DISCOVERY_DEPTH} levels searched below {}; not \
                         searched",
                        at.found_by.path()
                    ),
                    Effect::Skipped,
                );
                None
            }
            Kind::File => {
                if (self.wanted)(&name) {
                    let rel_in_root = canonical
                        .strip_prefix(at.canonical_root)
                        .unwrap_or(&canonical)
                        .to_owned();
                    self.found.push(Candidate {
                        root: at.found_by,
                        canonical,
                        rel_in_root,
                    });
                }
                None
            }
        }
    }

    /// How many files below `dir` (to [`DISCOVERY_DEPTH`], links not followed) a format
    /// would read, for the note on a folder its tool leaves out.
    fn wanted_files_below(&self, dir: &Path, depth: usize) -> usize {
        let Ok(entries) = fs::read_dir(dir) else {
            return 0;
        };
        entries
            .flatten()
            .filter(|entry| !entry.file_name().as_encoded_bytes().starts_with(b"."))
            .map(|entry| match entry.file_type() {
                Ok(t) if t.is_dir() && depth < DISCOVERY_DEPTH => {
                    self.wanted_files_below(&entry.path(), depth + 1)
                }
                Ok(t) if t.is_file() && (self.wanted)(&entry.file_name()) => 1,
                _ => 0,
            })
            .sum()
    }

    /// Resolves a symbolic link; `None` (with a warning where it matters) when it is broken
    /// or leads outside its root.
    fn follow_link(
        &mut self,
        link: &Path,
        shown: &Path,
        name: &OsStr,
        canonical_root: &Path,
    ) -> Option<(PathBuf, Kind)> {
        let target = match link.canonicalize() {
            Ok(t) => t,
            Err(e) => {
                if (self.wanted)(name) {
                    self.warn_path(
                        shown,
                        format!("is a broken or looping symbolic link ({e})"),
                        Effect::Rejected,
                    );
                }
                return None;
            }
        };
        // `canonicalize` succeeded, so the target exists; a failure here is a race, and the
        // read that follows will report it.
        let kind = fs::metadata(&target).map_or(Kind::File, |m| Kind::of(m.file_type()));
        let is_dir = kind == Kind::Dir;
        if !target.starts_with(canonical_root) {
            if is_dir || (self.wanted)(name) {
                let where_to = if target.starts_with(self.workspace) {
                    "outside its root"
                } else {
                    "outside the workspace"
                };
                self.warn_path(
                    shown,
                    format!("is a symbolic link to a path {where_to}; skipped"),
                    Effect::Skipped,
                );
            }
            return None;
        }
        Some((target, kind))
    }

    fn warn(&mut self, rel: &str, reason: String, effect: Effect) {
        self.warnings
            .push(Warning::new(PathBuf::from(rel), reason, effect));
    }

    fn warn_path(&mut self, shown: &Path, reason: String, effect: Effect) {
        let rel = shown.strip_prefix(self.workspace).unwrap_or(shown);
        self.warnings
            .push(Warning::new(rel.to_owned(), reason, effect));
    }
}
