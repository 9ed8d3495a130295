//! Replacing one file in one step (SPEC §8.6): the new content goes to a new temporary file
//! in the same directory (`O_CREAT | O_EXCL`, so nothing found there is reused), takes the
//! old file's permission bits, is synced, and is renamed over the name. A reader sees the
//! old file or the new one, never a part of either.
//!
//! The rename is the change: it happens only if the call still stands when the content is
//! on disk. A call cancelled while its content was written (the run was stopped, or its
//! tool call abandoned) leaves the file as it was, so a change the caller no longer waits
//! for does not land unrecorded (issue 34).

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio_util::sync::CancellationToken;

use super::leftovers::temporary_name;
use super::open::c_name;

/// Why a file was not replaced.
#[derive(Debug)]
pub(super) enum NotReplaced {
    /// The call was cancelled before the rename: the file is as it was.
    Cancelled,
    Failed(io::Error),
}

impl From<io::Error> for NotReplaced {
    fn from(e: io::Error) -> Self {
        NotReplaced::Failed(e)
    }
}

/// Replaces `name` in `dir` with `content`, with the old file's permission bits (`mode`; a
/// new file gets the usual ones). The temporary file is removed if anything fails, and when
/// `cancel` is set once the content is written.
pub(super) fn replace(
    dir: &File,
    name: &OsStr,
    content: &[u8],
    mode: Option<u32>,
    cancel: &CancellationToken,
) -> Result<(), NotReplaced> {
    let (temp, file) = create_temporary(dir)?;
    let written = fill(file, content, mode)
        .map_err(NotReplaced::Failed)
        .and_then(|()| {
            // The last moment the change can still be left undone.
            if cancel.is_cancelled() {
                return Err(NotReplaced::Cancelled);
            }
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
                Err(io::Error::last_os_error().into())
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

/// A new temporary file in `dir`, with its name.
fn create_temporary(dir: &File) -> io::Result<(std::ffi::CString, File)> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let temp = c_name(OsStr::new(&temporary_name(n)))?;
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
            return Ok((temp, unsafe { File::from_raw_fd(fd) }));
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EEXIST) || n > 1_000_000 {
            return Err(e);
        }
    }
}

fn fill(mut file: File, content: &[u8], mode: Option<u32>) -> io::Result<()> {
    if let Some(mode) = mode {
        file.set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    file.write_all(content)?;
    file.sync_all()
}
