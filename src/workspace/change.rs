//! Changing one file of the workspace (SPEC §8.6), for `edit` and `write`: where the change
//! goes, the read-before-edit rule, and the atomic replacement.
//!
//! The path is resolved as the read tools resolve it (links followed only while they stay
//! inside, so the file changed is the one `read` showed), then refused if it lies under
//! `.git/`. The directory that holds the file is opened beneath the workspace with no link
//! on the way (`open::open_dir`), and everything after is relative to that descriptor: a
//! directory swapped for a link once the path was resolved cannot lead the change outside,
//! and a file swapped for a link is never followed (`O_NOFOLLOW`).
//!
//! Under an exclusive `flock` of that directory (every workspace server takes it, so the
//! changes of two agents in one directory take turns), the file is read (a regular file
//! only, never blocking), checked against what this run read, and replaced: the new content
//! goes to a new temporary file in the same directory (`O_CREAT | O_EXCL`, so nothing found
//! there is reused), takes the old file's permission bits, is synced, and is renamed over
//! the name in one step. A reader sees the old file or the new one, never a part of either.

use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::open::{Refusal, blocking_again, not_regular, open_dir, refusal};
use super::output::quote;
use super::root::{Resolved, WorkspaceRoot};
use super::seen::{Seen, hash_of};
use crate::limits::{WORKSPACE_CHANGE_BYTES, WORKSPACE_CHANGE_LOCK_WAIT};

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
    root: &WorkspaceRoot,
    seen: &Seen,
    given: &str,
    if_missing: IfMissing,
    cancel: &CancellationToken,
    decide: impl FnOnce(Option<&[u8]>, &str) -> Result<(Vec<u8>, T), String>,
) -> Result<Changed<T>, String> {
    let target = target(root, given, if_missing)?;
    let shown = root.display(&target.path);
    let mut dir = open_dir(root.anchor(), root.path(), &target.existing_dir)
        .map_err(|e| moved(&shown, &e))?;
    for name in &target.missing_dirs {
        dir = make_dir(&dir, name).map_err(|e| moved(&shown, &e))?;
    }
    lock(&dir, &shown, cancel)?;
    let current = read_current(&dir, &target.name, &shown)?;
    match &current {
        Some((bytes, _)) => match seen.hash(&target.path) {
            None => {
                return Err(format!(
                    "`{shown}` exists and this run has not read it: `read` it first (a file \
                     is changed only when its current content has been read), then make the \
                     change"
                ));
            }
            Some(hash) if hash != hash_of(bytes) => {
                return Err(format!(
                    "`{shown}` has changed since this run read it (another agent or a person \
                     changed it): `read` it again, then make the change on what it holds now"
                ));
            }
            Some(_) => {}
        },
        None if if_missing == IfMissing::Refuse => {
            return Err(format!(
                "`{shown}` does not exist in the workspace; `write` creates a file"
            ));
        }
        None => {}
    }
    let (content, detail) = decide(current.as_ref().map(|(bytes, _)| bytes.as_slice()), &shown)?;
    if content.len() as u64 > WORKSPACE_CHANGE_BYTES {
        return Err(too_large(&shown, content.len() as u64, "would be"));
    }
    if cancel.is_cancelled() {
        return Err("the call was cancelled; the file was not changed".to_owned());
    }
    replace(
        &dir,
        &target.name,
        &content,
        current.as_ref().map(|(_, mode)| *mode),
    )
    .map_err(|e| format!("`{shown}` could not be written: {e}; it was not changed"))?;
    seen.remember(&target.path, hash_of(&content));
    Ok(Changed {
        shown,
        created: current.is_none(),
        detail,
    })
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
    not_in_git(root, &path)?;
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
                not_in_git(root, &target.path)?;
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

/// Refuses a path with a `.git` component: git's own files (objects, refs, hooks, config)
/// are never changed, whatever their case on a case-insensitive file system.
fn not_in_git(root: &WorkspaceRoot, path: &Path) -> Result<(), String> {
    let relative = path.strip_prefix(root.path()).unwrap_or(path);
    let in_git = relative
        .components()
        .any(|c| c.as_os_str().as_bytes().eq_ignore_ascii_case(b".git"));
    if in_git {
        return Err(format!(
            "`{}` is inside `.git/`: the workspace tools never change git's own files",
            root.display(path)
        ));
    }
    Ok(())
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

fn c_name(name: &OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes()).map_err(|_| io::Error::other("a name with a NUL byte"))
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

/// Takes the directory's exclusive lock, waiting at most [`WORKSPACE_CHANGE_LOCK_WAIT`] for
/// another workspace server's change to end. It is released when `dir` is closed. A file
/// system without locks changes nothing: the content check still refuses a stale change.
fn lock(dir: &File, shown: &str, cancel: &CancellationToken) -> Result<(), String> {
    let started = Instant::now();
    loop {
        // SAFETY: `dir` is open for the call; `flock` only takes a lock on it.
        if unsafe { libc::flock(dir.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return Ok(());
        }
        match io::Error::last_os_error().raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EWOULDBLOCK) => {}
            _ => return Ok(()),
        }
        if cancel.is_cancelled() {
            return Err("the call was cancelled; the file was not changed".to_owned());
        }
        if started.elapsed() >= WORKSPACE_CHANGE_LOCK_WAIT {
            return Err(format!(
                "`{shown}` was not changed: another agent has been changing a file in the same \
                 directory for {} s; try again",
                WORKSPACE_CHANGE_LOCK_WAIT.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
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

/// Replaces `name` in `dir` with `content` in one step: a new temporary file beside it,
/// synced, with the old file's permission bits (`mode`; a new file gets the usual ones),
/// renamed over the name. The temporary file is removed if anything fails.
fn replace(dir: &File, name: &OsStr, content: &[u8], mode: Option<u32>) -> io::Result<()> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let (temp, file) = loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let temp = c_name(OsStr::new(&format!(
            ".mcp-agents-{}-{n}.tmp",
            std::process::id()
        )))?;
        // SAFETY: `temp` is NUL-terminated and outlives the call; the descriptor returned is
        // owned by the `File` made from it.
        let fd = unsafe {
            libc::openat(
                dir.as_raw_fd(),
                temp.as_ptr(),
                libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                0o666 as libc::c_uint,
            )
        };
        if fd >= 0 {
            // SAFETY: the kernel just returned this descriptor, and nothing else owns it.
            break (temp, unsafe { File::from_raw_fd(fd) });
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EEXIST) || n > 1_000_000 {
            return Err(e);
        }
    };
    let written = fill(file, content, mode).and_then(|()| {
        let target = c_name(name)?;
        // SAFETY: both names are NUL-terminated and outlive the call, relative to `dir`.
        let renamed = unsafe {
            libc::renameat(
                dir.as_raw_fd(),
                temp.as_ptr(),
                dir.as_raw_fd(),
                target.as_ptr(),
            )
        };
        if renamed == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    });
    if written.is_err() {
        // SAFETY: `temp` is NUL-terminated and names the file this call created.
        unsafe { libc::unlinkat(dir.as_raw_fd(), temp.as_ptr(), 0) };
        return written;
    }
    // The rename itself reaches the disk with the directory; a failure here loses nothing
    // that is not already visible.
    let _ = dir.sync_all();
    Ok(())
}

fn fill(mut file: File, content: &[u8], mode: Option<u32>) -> io::Result<()> {
    if let Some(mode) = mode {
        file.set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    file.write_all(content)?;
    file.sync_all()
}
