//! The lock that makes changes of one directory take turns (SPEC §8.6): two agents' runs
//! are two workspace servers, and a change reads, checks and replaces a file in one step.
//!
//! The lock is an exclusive `flock` of a file named after the directory in the server
//! user's private directory (`private`), not of the directory itself: anyone who can read a
//! directory can open and lock it, and would then hold every change in it (issue 34). Only
//! this user's servers can open the lock file, so only they take turns on it. Without a
//! private directory, the changes of this server take turns in the process, and those of
//! other servers are kept apart by the content check alone (a change made since the read is
//! refused).

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::{Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::private::{PrivateDir, key_of};
use crate::limits::WORKSPACE_CHANGE_LOCK_WAIT;

/// A held lock, released when dropped.
#[derive(Debug)]
pub(super) enum Held {
    /// The lock file, locked: closing it releases the lock.
    File { _locked: File },
    /// This process's lock, for want of a private directory.
    Process { _guard: MutexGuard<'static, ()> },
}

/// The changes of this process, when there is no private directory to lock files in.
static IN_PROCESS: Mutex<()> = Mutex::new(());

/// Takes the lock of the directory `dir` (canonical), waiting at most
/// [`WORKSPACE_CHANGE_LOCK_WAIT`] for another change of it to end.
pub(super) fn lock(
    private: Option<&PrivateDir>,
    dir: &Path,
    shown: &str,
    cancel: &CancellationToken,
) -> Result<Held, String> {
    let mut file = private.and_then(|p| {
        p.open_file(&format!("lock-{}", key_of(dir)), libc::O_RDONLY)
            .ok()
    });
    let started = Instant::now();
    loop {
        if let Some(held) = try_lock(&mut file) {
            return Ok(held);
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

/// One try: the lock file's lock, or the process's when there is no lock file. A file
/// system without locks locks nothing: the content check still refuses a stale change.
fn try_lock(file: &mut Option<File>) -> Option<Held> {
    let Some(open) = file else {
        return match IN_PROCESS.try_lock() {
            Ok(guard) => Some(Held::Process { _guard: guard }),
            Err(TryLockError::Poisoned(p)) => Some(Held::Process {
                _guard: p.into_inner(),
            }),
            Err(TryLockError::WouldBlock) => None,
        };
    };
    loop {
        // SAFETY: `open` is an open file; `flock` only takes a lock on it.
        if unsafe { libc::flock(open.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            break;
        }
        match std::io::Error::last_os_error().raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EWOULDBLOCK) => return None,
            _ => break,
        }
    }
    file.take().map(|locked| Held::File { _locked: locked })
}
