//! Finding and killing processes (unix; Linux for `/proc` and pidfds): the process table,
//! the descendants of a process and the members of its group, and SIGKILL to a process or
//! a group, each checked first against the process that was meant (its start time), so a
//! recycled pid is never hit. Errors (a process already gone) are ignored.

use std::collections::{HashMap, HashSet};

/// One process of the table: its parent, its process group, whether it is a zombie, and
/// when it started (clock ticks after boot: with the pid, it names one process).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ProcessInfo {
    pub parent: u32,
    pub group: u32,
    pub zombie: bool,
    pub start_time: u64,
}

/// A process as it was seen: its pid and its start time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Seen {
    pub pid: u32,
    pub start_time: u64,
}

/// Every process visible in `/proc` (empty where there is no `/proc`).
pub(super) fn process_table() -> HashMap<u32, ProcessInfo> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return HashMap::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            Some((pid, process_info(pid)?))
        })
        .collect()
}

/// `pid` as `/proc` shows it now.
pub(super) fn process_info(pid: u32) -> Option<ProcessInfo> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// `/proc/PID/stat`: `pid (comm) state ppid pgrp …`, the start time 22nd; the command name
/// may hold spaces and parentheses, so the fields are read after its last `)`.
fn parse_stat(stat: &str) -> Option<ProcessInfo> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().take(20).collect();
    Some(ProcessInfo {
        zombie: *fields.first()? == "Z",
        parent: fields.get(1)?.parse().ok()?,
        group: fields.get(2)?.parse().ok()?,
        start_time: fields.get(19)?.parse().ok()?,
    })
}

/// Every process descended from one of `roots` or in one of their process groups, now.
pub(super) fn descendants(roots: &[u32]) -> Vec<Seen> {
    descendants_in(&process_table(), roots)
}

/// [`descendants`] in `table`, sorted by pid, the roots left out.
pub(super) fn descendants_in(table: &HashMap<u32, ProcessInfo>, roots: &[u32]) -> Vec<Seen> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for (pid, info) in table {
        children.entry(info.parent).or_default().push(*pid);
    }
    let roots: HashSet<u32> = roots.iter().copied().collect();
    let mut found: HashSet<u32> = table
        .iter()
        .filter(|(_, info)| roots.contains(&info.group))
        .map(|(pid, _)| *pid)
        .collect();
    let mut todo: Vec<u32> = roots.iter().copied().chain(found.iter().copied()).collect();
    while let Some(pid) = todo.pop() {
        for child in children.get(&pid).into_iter().flatten() {
            if found.insert(*child) {
                todo.push(*child);
            }
        }
    }
    let mut list: Vec<Seen> = found
        .into_iter()
        .filter(|pid| !roots.contains(pid))
        .filter_map(|pid| {
            table.get(&pid).map(|info| Seen {
                pid,
                start_time: info.start_time,
            })
        })
        .collect();
    list.sort_unstable();
    list
}

/// The processes descended from `root` through their parents alone, sorted by pid, `root`
/// left out: its process group does not count (a shim run by hand shares its caller's
/// group with processes that are not its own). Each link is checked as it is followed: a
/// child started no earlier than the parent it names, so a parent's pid reused by a newer
/// process never makes that process's children look like descendants.
pub(super) fn descent_in(table: &HashMap<u32, ProcessInfo>, root: u32) -> Vec<Seen> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for (pid, info) in table {
        children.entry(info.parent).or_default().push(*pid);
    }
    let mut found = Vec::new();
    let mut todo = vec![root];
    while let Some(parent) = todo.pop() {
        let Some(parent_start) = table.get(&parent).map(|info| info.start_time) else {
            continue;
        };
        for child in children.get(&parent).into_iter().flatten() {
            let Some(info) = table.get(child) else {
                continue;
            };
            if *child != root && info.start_time >= parent_start {
                found.push(Seen {
                    pid: *child,
                    start_time: info.start_time,
                });
                todo.push(*child);
            }
        }
    }
    found.sort_unstable();
    found.dedup();
    found
}

/// Kills `process` with SIGKILL if it is still the process that was seen: through a pidfd
/// opened before the check (so the signal cannot reach a process that took the pid after
/// it), or, where pidfds are missing, right after the check.
pub(super) fn kill_seen(process: Seen) {
    if process.pid == std::process::id() {
        return;
    }
    let pidfd = PidFd::open(process.pid);
    if process_info(process.pid).map(|info| info.start_time) != Some(process.start_time) {
        return;
    }
    match pidfd {
        Some(fd) => fd.kill(),
        None => kill_pid(process.pid),
    }
}

/// Ends the process group `leader` leads with SIGKILL, if `leader` is still the process
/// that was seen or is gone. A pid stays reserved while a group still bears its number, so
/// with the leader gone what is hit is what is left of its group.
pub(super) fn kill_group(leader: Seen) {
    if let Some(info) = process_info(leader.pid)
        && (info.start_time != leader.start_time || info.group != leader.pid)
    {
        return;
    }
    #[cfg(unix)]
    if let Ok(group) = libc::pid_t::try_from(leader.pid)
        && group > 1
    {
        // SAFETY: killpg only sends a signal; it touches no memory of ours.
        unsafe {
            libc::killpg(group, libc::SIGKILL);
        }
    }
}

fn kill_pid(pid: u32) {
    #[cfg(unix)]
    if let Ok(pid) = libc::pid_t::try_from(pid)
        && pid > 1
    {
        // SAFETY: kill only sends a signal.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = pid;
}

/// A pidfd (Linux 5.3 or later): a descriptor naming one process, never a later one with
/// the same pid. Closed on drop.
#[derive(Debug)]
pub(super) struct PidFd(i32);

impl PidFd {
    /// A pidfd of `pid`, or `None` (no such process, or no pidfds here).
    pub(super) fn open(pid: u32) -> Option<PidFd> {
        #[cfg(target_os = "linux")]
        {
            let pid = libc::pid_t::try_from(pid).ok()?;
            // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor.
            let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
            i32::try_from(fd).ok().filter(|fd| *fd >= 0).map(PidFd)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = pid;
            None
        }
    }

    /// The descriptor, to poll: it becomes readable when the process has exited.
    #[cfg(target_os = "linux")]
    pub(super) fn raw(&self) -> i32 {
        self.0
    }

    /// SIGKILL to the process, if it is still there.
    pub(super) fn kill(&self) {
        #[cfg(target_os = "linux")]
        // SAFETY: pidfd_send_signal only signals the process the descriptor names.
        unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                self.0,
                libc::SIGKILL,
                std::ptr::null::<libc::siginfo_t>(),
                0,
            );
        }
    }
}

impl Drop for PidFd {
    fn drop(&mut self) {
        #[cfg(unix)]
        // SAFETY: the descriptor is ours and closed once.
        unsafe {
            libc::close(self.0);
        }
        #[cfg(not(unix))]
        let _ = self.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_command_names_parse() {
        let tail = "0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 7777 1 2";
        let info = parse_stat(&format!("42 (a) b (c) S 7 42 42 {tail}")).unwrap();
        assert_eq!(
            info,
            ProcessInfo {
                parent: 7,
                group: 42,
                zombie: false,
                start_time: 7777
            }
        );
        assert!(parse_stat(&format!("9 (x) Z 1 9 9 {tail}")).unwrap().zombie);
        assert!(parse_stat("9 (x) Z 1 9 9").is_none(), "no start time");
        assert!(parse_stat("garbage").is_none());
    }

    #[test]
    fn descendants_follow_parents_and_groups() {
        let info = |parent, group| ProcessInfo {
            parent,
            group,
            zombie: false,
            start_time: 5,
        };
        let table = HashMap::from([
            (10, info(1, 10)),  // the child, its own group
            (11, info(10, 10)), // in its group
            (12, info(11, 12)), // left the group (setsid), still its descendant
            (13, info(12, 13)),
            (14, info(1, 10)), // reparented, still in the group
            (20, info(1, 20)), // unrelated
        ]);
        let pids: Vec<u32> = descendants_in(&table, &[10])
            .iter()
            .map(|s| s.pid)
            .collect();
        assert_eq!(pids, [11, 12, 13, 14]);
    }

    #[test]
    fn descent_follows_parents_only_and_never_a_reused_parent_pid() {
        let info = |parent, group, start_time| ProcessInfo {
            parent,
            group,
            zombie: false,
            start_time,
        };
        let table = HashMap::from([
            (5, info(1, 5, 10)),    // the caller of a shim run by hand, its group's leader
            (10, info(5, 5, 20)),   // the shim, in its caller's group
            (11, info(10, 5, 30)),  // its child
            (12, info(11, 12, 40)), // a grandchild in a session of its own
            (13, info(10, 13, 50)), // adopted by the shim (a subreaper)
            (6, info(5, 5, 25)),    // a neighbour in the same pipeline: same group, not below
            (7, info(1, 10, 35)),   // in a group numbered as the shim's pid: not below either
            (20, info(12, 20, 5)),  // names 12 as its parent but is older: 12 was reused
        ]);
        let pids: Vec<u32> = descent_in(&table, 10).iter().map(|s| s.pid).collect();
        assert_eq!(pids, [11, 12, 13]);
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_process_is_killed_only_while_it_is_the_one_seen() {
        let mut sleeper = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = sleeper.id();
        let seen = Seen {
            pid,
            start_time: process_info(pid).unwrap().start_time,
        };
        kill_seen(Seen {
            start_time: seen.start_time + 1,
            ..seen
        });
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(sleeper.try_wait().unwrap().is_none(), "another start time");
        kill_seen(seen);
        let status = sleeper.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGKILL));
    }
}
