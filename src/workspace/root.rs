//! Confinement (SPEC §8.6): every path a model names is resolved inside the workspace, one
//! component at a time from its root, following symbolic links only while they stay inside;
//! a path that climbs out with `..`, is absolute elsewhere, or leads out through a link is
//! refused with the rule it broke, and nothing outside the workspace is looked at on the way
//! (not even whether it exists). Paths shown back are relative to the workspace, with `/`
//! separators and hidden characters escaped.

use std::ffi::OsString;
use std::fs::File;
use std::path::{Component, Path, PathBuf};

use super::open::{Anchor, Refusal, open_regular};
use super::output::{escape_hidden, quote};
use crate::limits::{WORKSPACE_LINK_HOPS, WORKSPACE_PATH_BYTES};

/// The rule every refusal ends with, so the model knows what it may do instead.
pub(super) const RULE: &str = "the workspace tools reach only files inside the workspace; name paths \
    relative to the workspace root";

/// The canonical workspace directory the tools are confined to.
#[derive(Debug, Clone)]
pub struct WorkspaceRoot {
    root: PathBuf,
    anchor: Anchor,
}

/// Where a path inside the workspace leads once its links are followed.
#[derive(Debug)]
pub(super) enum Resolved {
    /// A canonical path inside the workspace (no link, no `.` or `..`).
    Inside(PathBuf),
    /// Out of the workspace: a link or a `..` led there. Nothing out there was looked at.
    Outside,
    /// Nothing is there, or a component on the way is not a directory.
    Missing,
    /// More links than [`WORKSPACE_LINK_HOPS`]: a loop.
    Loop,
    /// The file system refused to say (permissions).
    Failed(std::io::Error),
}

/// One step of a path being resolved.
enum Step {
    Up,
    Name(OsString),
}

impl WorkspaceRoot {
    /// Canonicalizes `dir`, which must be an existing directory.
    pub fn open(dir: &Path) -> Result<Self, String> {
        let root = dir
            .canonicalize()
            .map_err(|e| format!("workspace {} cannot be opened: {e}", dir.display()))?;
        if !root.is_dir() {
            return Err(format!("workspace {} is not a directory", dir.display()));
        }
        let anchor = Anchor::open(&root);
        Ok(WorkspaceRoot { root, anchor })
    }

    pub fn path(&self) -> &Path {
        &self.root
    }

    /// The canonical path inside the workspace that `given` names: relative to the
    /// workspace root, or absolute inside it; empty means the root. Refused when it climbs
    /// out with `..`, is absolute elsewhere, leads out through a symbolic link, or does not
    /// exist.
    pub fn resolve(&self, given: &str) -> Result<PathBuf, String> {
        let below = self.below(given)?;
        self.resolved(given, self.follow(&below))
    }

    /// What [`follow`](Self::follow) found for `given`, as `resolve` answers it.
    pub(super) fn resolved(&self, given: &str, resolved: Resolved) -> Result<PathBuf, String> {
        let shown = quote(given);
        match resolved {
            Resolved::Inside(canonical) => Ok(canonical),
            Resolved::Outside => Err(format!(
                "`{shown}` leads outside the workspace through a symbolic link: {RULE}"
            )),
            Resolved::Missing => Err(format!("`{shown}` does not exist in the workspace")),
            Resolved::Loop => Err(format!(
                "`{shown}` cannot be opened: its symbolic links form a loop"
            )),
            Resolved::Failed(e) => Err(format!("`{shown}` cannot be opened: {e}")),
        }
    }

    /// The text checks of a path, made before the file system is asked anything: `given`
    /// relative to the root (links and `..` still in it), or the rule it breaks.
    pub(super) fn below(&self, given: &str) -> Result<PathBuf, String> {
        if given.len() > WORKSPACE_PATH_BYTES {
            return Err(format!(
                "the path is {} bytes long; a path is at most {WORKSPACE_PATH_BYTES} bytes",
                given.len()
            ));
        }
        let shown = quote(given);
        if given.contains('\0') {
            return Err(format!("`{shown}` contains a NUL character"));
        }
        let path = Path::new(given);
        let joined = if path.is_absolute() {
            path.to_owned()
        } else {
            self.root.join(path)
        };
        // Checked before the file system is asked anything, so that nothing outside is
        // probed: not even whether a path there exists.
        let normal = lexically_normal(&joined);
        if !normal.starts_with(&self.root) {
            return Err(if path.is_absolute() {
                format!("`{shown}` is outside the workspace: {RULE}")
            } else {
                format!("`{shown}` climbs out of the workspace with `..`: {RULE}")
            });
        }
        Ok(joined
            .strip_prefix(&self.root)
            .or_else(|_| normal.strip_prefix(&self.root))
            .unwrap_or(Path::new(""))
            .to_owned())
    }

    /// Follows `relative` from the root one component at a time, as the kernel would, and
    /// stops as soon as a `..` or a link's target leaves the workspace: what lies outside is
    /// never looked at, so the answer cannot tell whether it exists.
    pub(super) fn follow(&self, relative: &Path) -> Resolved {
        let mut current = self.root.clone();
        let mut pending = Vec::new();
        push_steps(&mut pending, relative);
        let mut hops = 0;
        while let Some(step) = pending.pop() {
            let name = match step {
                Step::Up => {
                    if current == self.root {
                        return Resolved::Outside;
                    }
                    current.pop();
                    continue;
                }
                Step::Name(name) => name,
            };
            let next = current.join(&name);
            let meta = match std::fs::symlink_metadata(&next) {
                Ok(meta) => meta,
                Err(e) if is_missing(&e) => return Resolved::Missing,
                Err(e) => return Resolved::Failed(e),
            };
            if meta.file_type().is_symlink() {
                hops += 1;
                if hops > WORKSPACE_LINK_HOPS {
                    return Resolved::Loop;
                }
                let target = match std::fs::read_link(&next) {
                    Ok(target) => target,
                    Err(e) => return Resolved::Failed(e),
                };
                if target.is_absolute() {
                    // An absolute target is inside only if written under the canonical root.
                    let Ok(rest) = target.strip_prefix(&self.root) else {
                        return Resolved::Outside;
                    };
                    current = self.root.clone();
                    push_steps(&mut pending, rest);
                } else {
                    push_steps(&mut pending, &target);
                }
            } else if !meta.is_dir() && !pending.is_empty() {
                return Resolved::Missing;
            } else {
                current = next;
            }
        }
        Resolved::Inside(current)
    }

    /// Where the symbolic link at `link` (inside the workspace) leads, for `list`: found
    /// without looking outside, so a target outside is `Outside` whether it exists or not.
    pub(super) fn link_target(&self, link: &Path) -> Resolved {
        match link.strip_prefix(&self.root) {
            Ok(relative) => self.follow(relative),
            Err(_) => Resolved::Outside,
        }
    }

    /// The workspace directory, held open, that files are opened beneath.
    pub(super) fn anchor(&self) -> &Anchor {
        &self.anchor
    }

    /// Opens `path` (canonical, inside the workspace) for reading if it is a regular file,
    /// never through a link and never blocking (see `open`).
    pub(super) fn open_regular(&self, path: &Path) -> Result<File, Refusal> {
        open_regular(&self.anchor, &self.root, path)
    }

    /// `path` (inside the workspace) as the model is shown it: relative to the root, with
    /// `/` between components; the root itself is `.`.
    pub fn display(&self, path: &Path) -> String {
        let relative = path.strip_prefix(&self.root).unwrap_or(path);
        let parts: Vec<String> = relative
            .components()
            .map(|c| shown_name(c.as_os_str()))
            .collect();
        if parts.is_empty() {
            ".".to_owned()
        } else {
            parts.join("/")
        }
    }
}

/// Pushes the steps of `path` onto `pending` so that its first component is popped first.
fn push_steps(pending: &mut Vec<Step>, path: &Path) {
    for component in path.components().rev() {
        match component {
            Component::ParentDir => pending.push(Step::Up),
            Component::Normal(name) => pending.push(Step::Name(name.to_owned())),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
}

fn is_missing(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    if e.raw_os_error() == Some(libc::ENOTDIR) {
        return true;
    }
    e.kind() == std::io::ErrorKind::NotFound
}

/// A file name as the model is shown it: lossy UTF-8, with control, bidirectional and
/// other invisible characters escaped (`\n`, `\u{202e}`), so a name with a newline cannot
/// pass for another line of an answer, and one with a right-to-left override cannot read as
/// another name.
pub(super) fn shown_name(name: &std::ffi::OsStr) -> String {
    escape_hidden(&name.to_string_lossy())
}

/// `path` with `.` removed and each `..` taking away the component before it, without
/// looking at the file system (so links are not followed).
pub(super) fn lexically_normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workspace() -> (tempfile::TempDir, tempfile::TempDir, WorkspaceRoot) {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(ws.path().join("src")).unwrap();
        std::fs::write(ws.path().join("src/lib.rs"), "fn x() {}\n").unwrap();
        std::fs::write(outside.path().join("secret.txt"), "secret\n").unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(outside.path(), ws.path().join("out")).unwrap();
            std::os::unix::fs::symlink("src/lib.rs", ws.path().join("inside-link")).unwrap();
        }
        let root = WorkspaceRoot::open(ws.path()).unwrap();
        (ws, outside, root)
    }

    #[test]
    fn paths_inside_resolve_and_display_relative() {
        let (_ws, _out, root) = workspace();
        for given in [
            "src/lib.rs",
            "./src/lib.rs",
            "src/../src/lib.rs",
            "src//lib.rs",
        ] {
            let resolved = root.resolve(given).unwrap();
            assert_eq!(root.display(&resolved), "src/lib.rs", "{given}");
        }
        let absolute = root.path().join("src/lib.rs");
        assert_eq!(
            root.display(&root.resolve(absolute.to_str().unwrap()).unwrap()),
            "src/lib.rs"
        );
        assert_eq!(root.display(&root.resolve("").unwrap()), ".");
        assert_eq!(root.display(&root.resolve(".").unwrap()), ".");
        #[cfg(unix)]
        assert_eq!(
            root.display(&root.resolve("inside-link").unwrap()),
            "src/lib.rs"
        );
    }

    #[test]
    fn every_way_out_is_refused_with_the_rule() {
        let (_ws, outside, root) = workspace();
        let outside_file = outside.path().join("secret.txt");
        let cases = [
            ("../x", "climbs out of the workspace with `..`"),
            ("src/../../x", "climbs out of the workspace with `..`"),
            ("..", "climbs out of the workspace with `..`"),
            ("/etc/passwd", "is outside the workspace"),
            (outside_file.to_str().unwrap(), "is outside the workspace"),
            #[cfg(unix)]
            (
                "out/secret.txt",
                "leads outside the workspace through a symbolic link",
            ),
            #[cfg(unix)]
            ("out", "leads outside the workspace through a symbolic link"),
        ];
        for (given, why) in cases {
            let error = root.resolve(given).unwrap_err();
            assert!(error.contains(why), "{given}: {error}");
            assert!(error.ends_with(RULE), "{given}: {error}");
        }
        assert_eq!(
            root.resolve("missing.rs").unwrap_err(),
            "`missing.rs` does not exist in the workspace"
        );
        assert!(root.resolve("a\0b").unwrap_err().contains("NUL"));
        let long = "a/".repeat(3000);
        assert_eq!(
            root.resolve(&long).unwrap_err(),
            "the path is 6000 bytes long; a path is at most 4096 bytes"
        );
    }

    #[cfg(unix)]
    #[test]
    fn links_are_followed_inside_and_nothing_outside_is_looked_at() {
        let (ws, outside, root) = workspace();
        let link = |target: &Path, name: &str| {
            std::os::unix::fs::symlink(target, ws.path().join(name)).unwrap();
        };
        // Out of the workspace, whether the target exists or not: the same answer.
        link(&outside.path().join("secret.txt"), "to-secret");
        link(&outside.path().join("missing.txt"), "to-missing");
        link(Path::new("to-missing"), "chain");
        link(Path::new("../x"), "up");
        for name in ["to-secret", "to-missing", "chain", "up", "out/missing"] {
            assert!(
                root.resolve(name)
                    .unwrap_err()
                    .contains("leads outside the workspace through a symbolic link"),
                "{name}"
            );
            assert!(matches!(
                root.link_target(&root.path().join(name.split('/').next().unwrap())),
                Resolved::Outside
            ));
        }
        // Inside: relative, absolute under the canonical root, through a directory link.
        link(&root.path().join("src/lib.rs"), "absolute");
        link(Path::new("src"), "code");
        link(Path::new("code/../src/lib.rs"), "winding");
        for name in ["absolute", "code/lib.rs", "winding", "inside-link"] {
            assert_eq!(
                root.display(&root.resolve(name).unwrap()),
                "src/lib.rs",
                "{name}"
            );
        }
        link(Path::new("gone"), "dangling");
        link(Path::new("loop-b"), "loop-a");
        link(Path::new("loop-a"), "loop-b");
        assert!(matches!(
            root.link_target(&root.path().join("dangling")),
            Resolved::Missing
        ));
        assert_eq!(
            root.resolve("dangling").unwrap_err(),
            "`dangling` does not exist in the workspace"
        );
        assert!(root.resolve("loop-a").unwrap_err().contains("form a loop"));
        assert_eq!(
            root.resolve("src/lib.rs/x").unwrap_err(),
            "`src/lib.rs/x` does not exist in the workspace"
        );
    }

    #[test]
    fn names_with_control_characters_cannot_forge_lines() {
        assert_eq!(
            shown_name(std::ffi::OsStr::new("a\n[output cut]\tb")),
            "a\\n[output cut]\\tb"
        );
        assert_eq!(
            shown_name(std::ffi::OsStr::new("invoice\u{202E}fdp.exe")),
            "invoice\\u{202e}fdp.exe"
        );
        assert_eq!(
            shown_name(std::ffi::OsStr::new("a\u{200B}b\u{2066}")),
            "a\\u{200b}b\\u{2066}"
        );
        assert_eq!(shown_name(std::ffi::OsStr::new("plain é.rs")), "plain é.rs");
    }
}
