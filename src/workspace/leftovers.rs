//! The temporary files a change writes its new content to (`.mcp-agents-<pid>-<n>.tmp`,
//! beside the file it replaces), and what a server killed during a change leaves of them
//! (issue 34).
//!
//! Before a server first writes a temporary file in a directory, it notes the directory in
//! its journal, a file of the private directory named after the workspace and the server's
//! process id. A server that starts reads the journals of its workspace whose process is
//! gone, removes from each directory they name the temporary files of that process (and
//! only those, in directories opened beneath the workspace through no link), then the
//! journal. No tool shows a temporary file, this server's or another's ([`is_temporary`]).

use std::collections::HashSet;
use std::ffi::{CString, OsStr};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::open::open_dir;
use super::private::{PrivateDir, key_of};
use super::root::WorkspaceRoot;
use crate::limits::WORKSPACE_JOURNAL_BYTES;

const PREFIX: &str = ".mcp-agents-";
const SUFFIX: &str = ".tmp";

/// The name of this process's `n`th temporary file.
pub(super) fn temporary_name(n: u64) -> String {
    format!("{PREFIX}{}-{n}{SUFFIX}", std::process::id())
}

/// Whether `name` is a workspace server's temporary file: `.mcp-agents-<pid>-<n>.tmp`.
pub(super) fn is_temporary(name: &OsStr) -> bool {
    temporary_of(name).is_some()
}

/// The process whose temporary file `name` is.
fn temporary_of(name: &OsStr) -> Option<u32> {
    let name = name.to_str()?;
    let middle = name.strip_prefix(PREFIX)?.strip_suffix(SUFFIX)?;
    let (pid, n) = middle.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(pid) && digits(n)).then(|| pid.parse().ok())?
}

/// This server's journal: the directories it has written temporary files in.
#[derive(Debug)]
pub(super) struct Journal {
    /// The journal's name in the private directory.
    name: String,
    noted: Mutex<(Option<File>, HashSet<PathBuf>)>,
}

impl Journal {
    pub(super) fn new(root: &WorkspaceRoot) -> Journal {
        Journal {
            name: journal_name(root, std::process::id()),
            noted: Mutex::new((None, HashSet::new())),
        }
    }

    /// Notes `dir` (canonical, inside the workspace) before a temporary file is written in
    /// it. Without a private directory nothing is noted (and nothing can be cleaned).
    pub(super) fn note(&self, private: Option<&PrivateDir>, root: &WorkspaceRoot, dir: &Path) {
        let Some(private) = private else {
            return;
        };
        let mut noted = self.noted.lock().unwrap_or_else(|p| p.into_inner());
        let (file, dirs) = &mut *noted;
        if dirs.contains(dir) {
            return;
        }
        if file.is_none() {
            *file = private
                .open_file(&self.name, libc::O_WRONLY | libc::O_APPEND)
                .ok();
        }
        let relative = match dir.strip_prefix(root.path()) {
            Ok(relative) if !relative.as_os_str().is_empty() => relative,
            _ => Path::new("."),
        };
        let mut entry = relative.as_os_str().as_bytes().to_vec();
        entry.push(0);
        if let Some(file) = file
            && file.write_all(&entry).is_ok()
        {
            dirs.insert(dir.to_owned());
        }
    }
}

fn journal_name(root: &WorkspaceRoot, pid: u32) -> String {
    format!("temps-{}-{pid}", key_of(root.path()))
}

/// Removes the temporary files that servers of this workspace, now gone, left behind: at
/// start, before the first call. A journal of this very process id is a former process's.
pub(super) fn clean_stale(private: Option<&PrivateDir>, root: &WorkspaceRoot) {
    let Some(private) = private else {
        return;
    };
    let prefix = format!("temps-{}-", key_of(root.path()));
    for name in private.names() {
        let Some(pid) = name.strip_prefix(&prefix).and_then(|p| p.parse().ok()) else {
            continue;
        };
        if pid != std::process::id() && alive(pid) {
            continue;
        }
        let Ok(file) = private.open_file(&name, libc::O_RDONLY) else {
            continue;
        };
        let mut journal = Vec::new();
        if file
            .take(WORKSPACE_JOURNAL_BYTES)
            .read_to_end(&mut journal)
            .is_err()
        {
            continue;
        }
        for relative in journal.split(|b| *b == 0).filter(|d| !d.is_empty()) {
            let dir = root.path().join(OsStr::from_bytes(relative));
            remove_temporaries_of(root, &dir, pid);
        }
        private.remove(&name);
    }
}

/// Whether process `pid` exists (it may be another process by now: then its journal waits).
fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only asks whether the process exists.
    let exists = unsafe { libc::kill(pid, 0) } == 0;
    exists || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Removes the temporary files of process `pid` in `dir`, opened beneath the workspace.
fn remove_temporaries_of(root: &WorkspaceRoot, dir: &Path, pid: u32) {
    let Ok(opened) = open_dir(root.anchor(), root.path(), dir) else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if temporary_of(&name) != Some(pid) {
            continue;
        }
        if let Ok(c) = CString::new(name.as_bytes()) {
            // SAFETY: `c` is NUL-terminated and outlives the call; the name is removed from
            // the directory opened beneath the workspace, whatever its path leads to now.
            unsafe { libc::unlinkat(opened.as_raw_fd(), c.as_ptr(), 0) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_made_like_ours_are_temporaries() {
        assert_eq!(temporary_of(OsStr::new(".mcp-agents-12-0.tmp")), Some(12));
        assert!(is_temporary(OsStr::new(&temporary_name(7))));
        for name in [
            ".mcp-agents-12.tmp",
            ".mcp-agents--0.tmp",
            ".mcp-agents-a-0.tmp",
            "mcp-agents-12-0.tmp",
            ".mcp-agents-12-0.tmp~",
        ] {
            assert!(!is_temporary(OsStr::new(name)), "{name}");
        }
    }
}
