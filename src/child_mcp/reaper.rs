//! The reaper: a small process of this same binary (`mcp-agents reaper`, hidden) that
//! outlives a server killed with SIGKILL just long enough to kill its children's process
//! groups (SPEC §8.3).
//!
//! The death signal (set on each child between fork and exec) reaches only the server's direct
//! children; a grandchild in a child's group that does not read its stdin would live on.
//! So the server tells the reaper, over the reaper's stdin, which groups are alive and the
//! pipes their children hold (`+PGID INODE…` and `-PGID` lines). The reaper's stdin is a
//! pipe whose only writer is the server: when the server ends, however it ends, the reaper
//! reads end-of-file, kills every group still listed and every process that still holds one
//! of their pipes (a descendant that moved to a session of its own), and exits.

use std::io::{BufRead, Write};
use std::os::fd::AsRawFd;
use std::process::{ExitCode, Stdio};
use std::sync::{Mutex, MutexGuard};

/// The server's end of the reaper's stdin, and the reaper's pid.
struct Reaper {
    pipe: std::process::ChildStdin,
    pid: u32,
    /// Kept so the reaper is not reaped by anything else.
    _child: std::process::Child,
}

static REAPER: Mutex<Option<Reaper>> = Mutex::new(None);

fn reaper() -> MutexGuard<'static, Option<Reaper>> {
    REAPER.lock().unwrap_or_else(|p| p.into_inner())
}

/// Starts the reaper (unix; once). Without one, children still die with the server; only
/// grandchildren could be left.
pub fn start_reaper() {
    #[cfg(unix)]
    {
        let mut slot = reaper();
        if slot.is_some() {
            return;
        }
        let Ok(exe) = std::env::current_exe() else {
            return;
        };
        let spawned = std::process::Command::new(exe)
            .arg("reaper")
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let Ok(mut child) = spawned else {
            tracing::warn!(
                "cannot start the reaper process; grandchildren of child servers may outlive \
                 a server that is killed"
            );
            return;
        };
        let Some(pipe) = child.stdin.take() else {
            return;
        };
        // Never block a runtime worker on it: a message the pipe cannot take is lost.
        // SAFETY: fcntl on a pipe descriptor we own only changes its flags.
        unsafe {
            let fd = pipe.as_raw_fd();
            let flags = libc::fcntl(fd, libc::F_GETFL);
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
        *slot = Some(Reaper {
            pid: child.id(),
            pipe,
            _child: child,
        });
    }
}

/// Whether `pid` is the reaper (it is not an orphan to kill).
pub(super) fn is_reaper(pid: u32) -> bool {
    reaper().as_ref().is_some_and(|r| r.pid == pid)
}

/// Asks the reaper to kill `group`, and the holders of `pipes`, if the server dies.
pub(super) fn watch(group: u32, pipes: &[u64]) {
    let mut line = format!("+{group}");
    for inode in pipes {
        line.push_str(&format!(" {inode}"));
    }
    line.push('\n');
    tell(&line);
}

/// The group is gone; the reaper forgets it.
pub(super) fn forget(group: u32) {
    tell(&format!("-{group}\n"));
}

fn tell(line: &str) {
    if let Some(reaper) = reaper().as_mut() {
        let _ = reaper.pipe.write_all(line.as_bytes());
    }
}

/// The reaper process: reads `+PGID INODE…` / `-PGID` lines until end-of-file, then kills
/// every group still listed and every holder of their pipes.
pub fn run_reaper() -> ExitCode {
    #[cfg(unix)]
    // SAFETY: setting signal dispositions to "ignore" touches no memory of ours. A signal
    // sent to the server's whole process group (Ctrl-C on a terminal) must not end the
    // reaper before the server has gone.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGTERM, libc::SIG_IGN);
        libc::signal(libc::SIGHUP, libc::SIG_IGN);
    }
    let mut groups: Vec<(u32, Vec<u64>)> = Vec::new();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let (sign, rest) = line.split_at(line.len().min(1));
        let mut numbers = rest.split_whitespace();
        let Some(Ok(group)) = numbers.next().map(str::parse::<u32>) else {
            continue;
        };
        match sign {
            "+" => groups.push((group, numbers.filter_map(|n| n.parse().ok()).collect())),
            "-" => groups.retain(|(g, _)| *g != group),
            _ => {}
        }
    }
    let pipes: Vec<u64> = groups.iter().flat_map(|(_, p)| p.iter().copied()).collect();
    for (group, _) in &groups {
        super::kill::kill_group(*group);
    }
    super::kill::kill_holders(&pipes);
    ExitCode::SUCCESS
}
