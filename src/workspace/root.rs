//! Confinement (SPEC §8.6): every path a model names is resolved against the workspace and
//! canonicalized, and a path whose canonical form is not inside the workspace is refused with
//! the rule it broke. Paths shown back are relative to the workspace, with `/` separators.

use std::path::{Component, Path, PathBuf};

/// The rule every refusal ends with, so the model knows what it may do instead.
const RULE: &str = "the workspace tools reach only files inside the workspace; name paths \
    relative to the workspace root";

/// The canonical workspace directory the tools are confined to.
#[derive(Debug, Clone)]
pub struct WorkspaceRoot {
    root: PathBuf,
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
        Ok(WorkspaceRoot { root })
    }

    pub fn path(&self) -> &Path {
        &self.root
    }

    /// The canonical path inside the workspace that `given` names: relative to the
    /// workspace root, or absolute inside it; empty means the root. Refused when it climbs
    /// out with `..`, is absolute elsewhere, leads out through a symbolic link, or does not
    /// exist.
    pub fn resolve(&self, given: &str) -> Result<PathBuf, String> {
        if given.contains('\0') {
            return Err(format!(
                "`{}` contains a NUL character",
                given.escape_debug()
            ));
        }
        let path = Path::new(given);
        let joined = if path.is_absolute() {
            path.to_owned()
        } else {
            self.root.join(path)
        };
        // Checked before the file system is asked anything, so that nothing outside is
        // probed: not even whether a path there exists.
        if !lexically_normal(&joined).starts_with(&self.root) {
            return Err(if path.is_absolute() {
                format!("`{given}` is outside the workspace: {RULE}")
            } else {
                format!("`{given}` climbs out of the workspace with `..`: {RULE}")
            });
        }
        match joined.canonicalize() {
            Ok(canonical) if canonical.starts_with(&self.root) => Ok(canonical),
            Ok(_) => Err(format!(
                "`{given}` leads outside the workspace through a symbolic link: {RULE}"
            )),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(format!("`{given}` does not exist in the workspace"))
            }
            Err(e) => Err(format!("`{given}` cannot be opened: {e}")),
        }
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

    /// Whether `path`, canonicalized, is inside the workspace (a symbolic link's target, for
    /// `list`). `None` when it cannot be resolved (a dangling link).
    pub fn contains_target(&self, path: &Path) -> Option<PathBuf> {
        path.canonicalize()
            .ok()
            .filter(|target| target.starts_with(&self.root))
    }
}

/// A file name as the model is shown it: lossy UTF-8, with control characters escaped, so
/// a name with a newline cannot pass for another line of an answer.
pub(super) fn shown_name(name: &std::ffi::OsStr) -> String {
    let name = name.to_string_lossy();
    if name.chars().any(char::is_control) {
        name.chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_default().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect()
    } else {
        name.into_owned()
    }
}

/// `path` with `.` removed and each `..` taking away the component before it, without
/// looking at the file system (so links are not followed).
fn lexically_normal(path: &Path) -> PathBuf {
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
    }

    #[test]
    fn names_with_control_characters_cannot_forge_lines() {
        assert_eq!(
            shown_name(std::ffi::OsStr::new("a\n[output cut]\tb")),
            "a\\n[output cut]\\tb"
        );
        assert_eq!(shown_name(std::ffi::OsStr::new("plain é.rs")), "plain é.rs");
    }
}
