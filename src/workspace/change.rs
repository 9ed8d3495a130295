//! Changing one file of the workspace (SPEC §8.6), for `edit` and `write`: where the change
//! goes, the read-before-edit rule, the run's totals, and the atomic replacement.
//!
//! The path is resolved as the read tools resolve it (links followed only while they stay
//! inside, so the file changed is the one `read` showed), then refused if it lies in a git
//! directory or a place that configures agents (`guard`). The directory that holds the file
//! is opened beneath the workspace with no link on the way (`open::open_dir`), and
//! everything after is relative to that descriptor: a directory swapped for a link once the
//! path was resolved cannot lead the change outside, and a file swapped for a link is never
//! followed (`O_NOFOLLOW`).
//!
//! Under the directory's lock (`lock`: the changes of two agents in one directory take
//! turns), the file is read (a regular file only, never blocking), checked against what this
//! run read, counted against the run's totals (`totals`), and replaced (`replace`): written
//! to a temporary file beside it, which is renamed over it only if the call still stands.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use tokio_util::sync::CancellationToken;

use super::guard::refuse_protected;
use super::lock::lock;
use super::open::{Refusal, blocking_again, c_name, not_regular, open_dir, refusal};
use super::output::quote;
use super::replace::{NotReplaced, replace};
use super::root::{Resolved, WorkspaceRoot};
use super::seen::{Seen, hash_of};
use super::state::State;
use crate::limits::WORKSPACE_CHANGE_BYTES;

/// What a cancelled change answers (nobody reads it, but it is true).
const CANCELLED: &str = "the call was cancelled; the file was not changed";

/// What a change does when the file does not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum IfMissing {
    /// `edit`: refuse.
    Refuse,
    /// `write`: create it, and the directories above it.
    Create,
}

/// A change made.
#[derive(Debug)]
pub(super) struct Changed<T> {
    /// The file as the model is shown it.
    pub shown: String,
    /// Whether the file did not exist before.
    pub created: bool,
    /// What the caller worked out while making the change.
    pub detail: T,
}

/// Where a change goes.
#[derive(Debug)]
struct Target {
    /// The file's canonical path (which may not exist yet).
    path: PathBuf,
    /// The canonical path of the nearest directory above it that exists.
    existing_dir: PathBuf,
    /// The directories to create below `existing_dir`, in order (`write` only).
    missing_dirs: Vec<OsString>,
    /// The file's name in its directory.
    name: OsString,
}

/// Changes the file `given` names: `decide` gets its content (`None` when it does not exist)
/// and gives the new content, with a detail for the answer. Refused when the file exists
/// and this run has not read it, or it has changed since; the content is checked again,
/// and the file replaced, under the directory's lock.
pub(super) fn change<T>(
    state: &State,
    given: &str,
    if_missing: IfMissing,
    cancel: &CancellationToken,
    decide: impl FnOnce(Option<&[u8]>, &str) -> Result<(Vec<u8>, T), String>,
) -> Result<Changed<T>, String> {
    let root = &state.root;
    let target = target(root, given, if_missing)?;
    let shown = root.display(&target.path);
    if !target.missing_dirs.is_empty() {
        // A new file for certain: no directory is made for one the run may not create.
        drop(state.totals.take(&shown, 0, true)?);
    }
    let mut dir = open_dir(root.anchor(), root.path(), &target.existing_dir)
        .map_err(|e| moved(&shown, &e))?;
    for name in &target.missing_dirs {
        dir = make_dir(&dir, name).map_err(|e| moved(&shown, &e))?;
    }
    let dir_path = target.path.parent().unwrap_or(root.path());
    let _held = lock(state.private.as_ref(), dir_path, &shown, cancel)?;
    let current = read_current(&dir, &target.name, &shown)?;
    unchanged_since_read(
        &state.seen,
        &target.path,
        current.as_ref(),
        if_missing,
        &shown,
    )?;
    let (content, detail) = decide(current.as_ref().map(|(bytes, _)| bytes.as_slice()), &shown)?;
    if content.len() as u64 > WORKSPACE_CHANGE_BYTES {
        return Err(too_large(&shown, content.len() as u64, "would be"));
    }
    let share = state
        .totals
        .take(&shown, content.len() as u64, current.is_none())?;
    if cancel.is_cancelled() {
        return Err(CANCELLED.to_owned());
    }
    state.journal.note(state.private.as_ref(), root, dir_path);
    let mode = current.as_ref().map(|(_, mode)| *mode);
    replace(&dir, &target.name, &content, mode, cancel).map_err(|e| match e {
        NotReplaced::Cancelled => CANCELLED.to_owned(),
        NotReplaced::Failed(e) => {
            format!("`{shown}` could not be written: {e}; it was not changed")
        }
    })?;
    share.landed();
    state.seen.remember(&target.path, hash_of(&content));
    Ok(Changed {
        shown,
        created: current.is_none(),
        detail,
    })
}

/// The read-before-edit rule: an existing file must have been read by this run as it is
/// now; a missing one is refused by `edit`.
fn unchanged_since_read(
    seen: &Seen,
    path: &Path,
    current: Option<&(Vec<u8>, u32)>,
    if_missing: IfMissing,
    shown: &str,
) -> Result<(), String> {
    match current {
        Some((bytes, _)) => match seen.hash(path) {
            None => Err(format!(
                "`{shown}` exists and this run has not read it: `read` it first (a file is \
                 changed only when its current content has been read), then make the change"
            )),
            Some(hash) if hash != hash_of(bytes) => Err(format!(
                "`{shown}` has changed since this run read it (another agent or a person \
                 changed it): `read` it again, then make the change on what it holds now"
            )),
            Some(_) => Ok(()),
        },
        None if if_missing == IfMissing::Refuse => Err(format!(
            "`{shown}` does not exist in the workspace; `write` creates a file"
        )),
        None => Ok(()),
    }
}

fn too_large(shown: &str, size: u64, is: &str) -> String {
    format!(
        "`{shown}` {is} {size} bytes; `edit` and `write` change files of at most {} MiB",
        WORKSPACE_CHANGE_BYTES / (1024 * 1024)
    )
}

/// Where the change of `given` goes: an existing file (links inside the workspace followed
/// to it), or a new one below the nearest existing directory.
fn target(root: &WorkspaceRoot, given: &str, if_missing: IfMissing) -> Result<Target, String> {
    let below = root.below(given)?;
    let resolved = root.follow(&below);
    if matches!(resolved, Resolved::Missing) {
        return new_file(root, given, &below, if_missing);
    }
    let path = root.resolved(given, resolved)?;
    let parts = (path != root.path())
        .then(|| path.parent().zip(path.file_name()))
        .flatten();
    let Some((dir, name)) = parts else {
        return Err(format!(
            "`{}` is the workspace directory, not a file",
            quote(given)
        ));
    };
    refuse_protected(root, &path)?;
    Ok(Target {
        existing_dir: dir.to_owned(),
        name: name.to_owned(),
        missing_dirs: Vec::new(),
        path,
    })
}

/// A file that does not exist yet: its name below the nearest existing directory on its
/// path, and the directories still to make (never through `..`).
fn new_file(
    root: &WorkspaceRoot,
    given: &str,
    below: &Path,
    if_missing: IfMissing,
) -> Result<Target, String> {
    let shown = quote(given);
    if if_missing == IfMissing::Refuse {
        return Err(format!(
            "`{shown}` does not exist in the workspace; `write` creates a file"
        ));
    }
    let parts: Vec<Component<'_>> = below
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect();
    let Some((Component::Normal(name), parents)) = parts.split_last() else {
        return Err(format!("`{shown}` does not name a file"));
    };
    for k in (0..=parents.len()).rev() {
        let prefix: PathBuf = parents[..k].iter().collect();
        match root.follow(&prefix) {
            Resolved::Missing => continue,
            Resolved::Inside(dir) => {
                let mut missing_dirs = Vec::new();
                let mut path = dir.clone();
                for part in &parents[k..] {
                    let Component::Normal(part) = part else {
                        return Err(format!(
                            "`{shown}` climbs with `..` out of a directory that does not exist"
                        ));
                    };
                    missing_dirs.push(part.to_os_string());
                    path.push(part);
                }
                path.push(name);
                let target = Target {
                    path,
                    existing_dir: dir,
                    missing_dirs,
                    name: name.to_os_string(),
                };
                refuse_protected(root, &target.path)?;
                return Ok(target);
            }
            other => {
                root.resolved(given, other)?;
            }
        }
    }
    // The empty prefix is the workspace root, which exists.
    Err(format!("`{shown}` does not exist in the workspace"))
}

/// Why a directory on the way could not be used: it changed since the path was resolved
/// (a link put in its place, or removed), or it is not a directory.
fn moved(shown: &str, e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::ELOOP | libc::EXDEV) => format!(
            "`{shown}` was not changed: a directory on its path became a symbolic link while \
             the change was made; the workspace tools never follow one there"
        ),
        Some(libc::ENOENT) => format!(
            "`{shown}` was not changed: a directory on its path was removed while the change \
             was made; try again"
        ),
        Some(libc::ENOTDIR | libc::EEXIST) => {
            format!("`{shown}` cannot be created: a part of its path is a file, not a directory")
        }
        _ => format!("`{shown}` cannot be changed: {e}"),
    }
}

/// Makes the directory `name` in `dir` (or finds it made by someone else) and opens it,
/// never through a link.
fn make_dir(dir: &File, name: &OsStr) -> io::Result<File> {
    let c = c_name(name)?;
    // SAFETY: `c` is NUL-terminated and outlives the call; `dir` is an open directory.
    let made = unsafe { libc::mkdirat(dir.as_raw_fd(), c.as_ptr(), 0o777) };
    if made != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EEXIST) {
            return Err(e);
        }
    }
    // SAFETY: as above; the descriptor returned is owned by the `File` made from it.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            c.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned this descriptor, and nothing else owns it.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// The file's content and permission bits, `None` when there is no such file. Only a
/// regular file is read, never through a link, never blocking, at most
/// [`WORKSPACE_CHANGE_BYTES`].
fn read_current(dir: &File, name: &OsStr, shown: &str) -> Result<Option<(Vec<u8>, u32)>, String> {
    let c = c_name(name).map_err(|e| format!("`{shown}` cannot be opened: {e}"))?;
    // SAFETY: `c` is NUL-terminated and outlives the call; the descriptor returned is owned
    // by the `File` made from it.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            c.as_ptr(),
            libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC,
        )
    };
    let refused = |r: Refusal| match r {
        Refusal::Link => format!(
            "`{shown}` is a symbolic link whose target does not exist (or it became one while \
             the change was made); name the file itself"
        ),
        Refusal::NotRegular("a directory") => {
            format!("`{shown}` is a directory; `edit` and `write` change files")
        }
        other => format!("`{shown}` {}", other.reason()),
    };
    if fd < 0 {
        return match refusal(io::Error::last_os_error()) {
            Refusal::Missing => Ok(None),
            other => Err(refused(other)),
        };
    }
    // SAFETY: the kernel just returned this descriptor, and nothing else owns it.
    let file = unsafe { File::from_raw_fd(fd) };
    let meta = file.metadata().map_err(|e| refused(refusal(e)))?;
    if let Some(kind) = not_regular(&meta.file_type()) {
        return Err(refused(kind));
    }
    if meta.len() > WORKSPACE_CHANGE_BYTES {
        return Err(too_large(shown, meta.len(), "is"));
    }
    blocking_again(&file);
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(WORKSPACE_CHANGE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("`{shown}` cannot be read: {e}"))?;
    if bytes.len() as u64 > WORKSPACE_CHANGE_BYTES {
        return Err(too_large(shown, bytes.len() as u64, "is over"));
    }
    Ok(Some((bytes, meta.permissions().mode() & 0o777)))
}
