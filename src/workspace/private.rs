//! The server user's private directory (issue 34): a directory of the system's temporary
//! directory that only the user the workspace server runs as can open, where it keeps what
//! no one else may touch: the locks that make two agents' changes of one directory take
//! turns (`lock`), and the journal of where it writes temporary files (`leftovers`).
//!
//! It is `mcp-agents-<uid>` in `TMPDIR` (or `/tmp`), made with mode 0700. One that exists
//! is used only if it is a directory (not a link) owned by this user and closed to everyone
//! else; if another user took the name first, the next one in a fixed sequence is tried
//! (`mcp-agents-<uid>-1`, …), so every server of the user settles on the same one. Files in
//! it are opened relative to the directory held open, never through a link.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::limits::WORKSPACE_PRIVATE_DIR_TRIES;

/// The private directory, held open.
#[derive(Debug)]
pub(super) struct PrivateDir {
    dir: File,
    path: PathBuf,
}

impl PrivateDir {
    /// Finds or makes the directory in the system's temporary directory; `None` when no
    /// name in the sequence can be had (a read-only or hostile temporary directory).
    pub(super) fn open() -> Option<PrivateDir> {
        // SAFETY: `geteuid` only reads the process's user id.
        let uid = unsafe { libc::geteuid() };
        let base = std::env::temp_dir();
        (0..WORKSPACE_PRIVATE_DIR_TRIES).find_map(|n| {
            let name = match n {
                0 => format!("mcp-agents-{uid}"),
                n => format!("mcp-agents-{uid}-{n}"),
            };
            let path = base.join(name);
            let made = std::fs::DirBuilder::new().mode(0o700).create(&path);
            if made.is_err_and(|e| e.kind() != io::ErrorKind::AlreadyExists) {
                return None;
            }
            let dir = open_own_dir(&path, uid)?;
            Some(PrivateDir { dir, path })
        })
    }

    /// Opens (creating it with mode 0600) the file `name` of the directory, never through a
    /// link, with `flags` besides.
    pub(super) fn open_file(&self, name: &str, flags: libc::c_int) -> io::Result<File> {
        let c = CString::new(name).map_err(|_| io::Error::other("a name with a NUL byte"))?;
        // SAFETY: `c` is NUL-terminated and outlives the call; the descriptor returned is
        // owned by the `File` made from it.
        let fd = unsafe {
            libc::openat(
                self.dir.as_raw_fd(),
                c.as_ptr(),
                flags | libc::O_CREAT | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                0o600 as libc::c_uint,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the kernel just returned this descriptor, and nothing else owns it.
        Ok(unsafe { File::from_raw_fd(fd) })
    }

    /// Removes the file `name` of the directory.
    pub(super) fn remove(&self, name: &str) {
        if let Ok(c) = CString::new(name) {
            // SAFETY: `c` is NUL-terminated and outlives the call.
            unsafe { libc::unlinkat(self.dir.as_raw_fd(), c.as_ptr(), 0) };
        }
    }

    /// The names of the directory's files.
    pub(super) fn names(&self) -> Vec<String> {
        std::fs::read_dir(&self.path)
            .map(|entries| {
                entries
                    .flatten()
                    .filter_map(|e| e.file_name().to_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Opens `path` if it is a directory (not a link) owned by `uid` that no one else may open.
fn open_own_dir(path: &Path, uid: libc::uid_t) -> Option<File> {
    let c = CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: `c` is NUL-terminated and outlives the call; the descriptor returned is owned
    // by the `File` made from it.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return None;
    }
    // SAFETY: the kernel just returned this descriptor, and nothing else owns it.
    let dir = unsafe { File::from_raw_fd(fd) };
    let meta = dir.metadata().ok()?;
    (meta.uid() == uid && meta.mode() & 0o077 == 0).then_some(dir)
}

/// A short, stable name for `path`: the start of its SHA-256, in hex.
pub(super) fn key_of(path: &Path) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(path.as_os_str().as_bytes());
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_another_user_could_open_is_not_used() {
        let base = tempfile::tempdir().unwrap();
        let uid = unsafe { libc::geteuid() };
        let open = base.path().join("open");
        std::fs::DirBuilder::new()
            .mode(0o777)
            .create(&open)
            .unwrap();
        std::fs::set_permissions(&open, std::os::unix::fs::PermissionsExt::from_mode(0o777))
            .unwrap();
        assert!(open_own_dir(&open, uid).is_none());
        let own = base.path().join("own");
        std::fs::DirBuilder::new().mode(0o700).create(&own).unwrap();
        assert!(open_own_dir(&own, uid).is_some());
        assert!(open_own_dir(&own, uid + 1).is_none(), "someone else's");
        std::os::unix::fs::symlink(&own, base.path().join("link")).unwrap();
        assert!(open_own_dir(&base.path().join("link"), uid).is_none());
        assert_eq!(key_of(Path::new("/a")).len(), 32);
        assert_ne!(key_of(Path::new("/a")), key_of(Path::new("/b")));
    }
}
