//! Where the status sockets live and what they are called (SPEC §7.1): one private
//! directory per user, `$XDG_RUNTIME_DIR/mcp-agents/` or `mcp-agents-<uid>/` under the temp
//! directory (`TMPDIR` honoured), mode `0700` and refused when another uid owns it; in it,
//! one socket per server, `<workspace key>-<pid>.sock`, where the key is a hash of the
//! canonical workspace. A socket whose server is dead, or that refuses connections, is
//! stale: readers remove it.

use std::ffi::OsString;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The directory's mode: its owner only.
const DIR_MODE: u32 = 0o700;
/// The socket's mode: its owner only.
pub(super) const SOCKET_MODE: u32 = 0o600;
/// Hex digits of the workspace's hash in a socket's name.
const KEY_DIGITS: usize = 16;

/// This process's effective uid.
pub(super) fn own_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The directory of this user's status sockets, from the environment (not created).
pub(super) fn socket_dir() -> PathBuf {
    dir_from(std::env::var_os("XDG_RUNTIME_DIR"), std::env::temp_dir())
}

/// Every directory a server of this user may have put its socket in: the one this
/// environment names, and the temp directory's (this `TMPDIR`'s and `/tmp`'s), since a
/// client may start its server with less of the environment than a shell has (Codex passes
/// no `XDG_RUNTIME_DIR`).
pub(super) fn socket_dirs() -> Vec<PathBuf> {
    let mut dirs = vec![socket_dir()];
    for temp in [std::env::temp_dir(), PathBuf::from("/tmp")] {
        let dir = dir_from(None, temp);
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    dirs
}

/// `$XDG_RUNTIME_DIR/mcp-agents` when it is set to an absolute path, else
/// `<temp>/mcp-agents-<uid>`.
fn dir_from(runtime_dir: Option<OsString>, temp: PathBuf) -> PathBuf {
    match runtime_dir.map(PathBuf::from) {
        Some(runtime) if runtime.is_absolute() => runtime.join("mcp-agents"),
        _ => temp.join(format!("mcp-agents-{}", own_uid())),
    }
}

/// Creates `dir` private to this user, or checks the one there: it must be a directory (not
/// a link) of this uid; one of ours open to others is made private again.
pub(super) fn make_private_dir(dir: &Path) -> Result<(), String> {
    match std::fs::DirBuilder::new().mode(DIR_MODE).create(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            check_dir(dir)?;
            let mode = std::fs::symlink_metadata(dir)
                .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
                .mode();
            if mode & 0o077 != 0 {
                std::fs::set_permissions(dir, std::fs::Permissions::from_mode(DIR_MODE))
                    .map_err(|e| format!("cannot make {} private: {e}", dir.display()))?;
            }
            Ok(())
        }
        Err(e) => Err(format!("cannot create {}: {e}", dir.display())),
    }
}

/// Whether `dir` may hold this user's sockets: a directory, not a link, of this uid.
pub(super) fn check_dir(dir: &Path) -> Result<(), String> {
    let meta = std::fs::symlink_metadata(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    if !meta.file_type().is_dir() {
        return Err(format!(
            "{} is not a directory; refusing to use it for status sockets",
            dir.display()
        ));
    }
    if meta.uid() != own_uid() {
        return Err(format!(
            "{} belongs to uid {}, not to this user (uid {}); refusing to use it for status \
             sockets",
            dir.display(),
            meta.uid(),
            own_uid()
        ));
    }
    Ok(())
}

/// The part of a socket's name that ties it to the canonical `workspace`.
fn workspace_key(workspace: &Path) -> String {
    let digest = Sha256::digest(workspace.as_os_str().as_encoded_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    hex[..KEY_DIGITS].to_owned()
}

/// The socket of the server `pid` for `workspace`, in `dir`.
pub(super) fn socket_path(dir: &Path, workspace: &Path, pid: u32) -> PathBuf {
    dir.join(format!("{}-{pid}.sock", workspace_key(workspace)))
}

/// A socket in the directory for a workspace, with its server's pid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SocketEntry {
    pub path: PathBuf,
    pub pid: u32,
}

/// The sockets in `dir` named for `workspace`, by pid; none when `dir` does not exist.
pub(super) fn sockets_for(dir: &Path, workspace: &Path) -> Result<Vec<SocketEntry>, String> {
    if std::fs::symlink_metadata(dir).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
        return Ok(Vec::new());
    }
    check_dir(dir)?;
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let prefix = format!("{}-", workspace_key(workspace));
    let mut found: Vec<SocketEntry> = entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name();
            let pid = name
                .to_str()?
                .strip_prefix(&prefix)?
                .strip_suffix(".sock")?
                .parse()
                .ok()?;
            Some(SocketEntry {
                path: entry.path(),
                pid,
            })
        })
        .collect();
    found.sort_by_key(|s| s.pid);
    Ok(found)
}

/// Whether process `pid` is gone (a socket it left is stale).
pub(super) fn is_dead(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return true;
    };
    // SAFETY: signal 0 only checks that the process exists; nothing is sent.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    !alive && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runtime_dir_wins_when_absolute_else_the_temp_dir_with_the_uid() {
        let temp = PathBuf::from("/var/tmp");
        assert_eq!(
            dir_from(Some("/run/user/7".into()), temp.clone()),
            PathBuf::from("/run/user/7/mcp-agents")
        );
        let fallback = temp.join(format!("mcp-agents-{}", own_uid()));
        assert_eq!(dir_from(Some("relative".into()), temp.clone()), fallback);
        assert_eq!(dir_from(Some("".into()), temp.clone()), fallback);
        assert_eq!(dir_from(None, temp), fallback);
    }

    #[test]
    fn a_socket_is_named_for_its_workspace_and_pid() {
        let dir = Path::new("/d");
        let a = socket_path(dir, Path::new("/w/a"), 42);
        let name = a.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        assert_eq!(name.len(), KEY_DIGITS + "-42.sock".len());
        assert!(name.ends_with("-42.sock"));
        assert_ne!(a, socket_path(dir, Path::new("/w/b"), 42));
        assert!(!is_dead(std::process::id()));
    }
}
