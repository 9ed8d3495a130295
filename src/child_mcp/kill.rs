//! Finding and killing processes (unix; Linux for `/proc`): the process table, the
//! descendants of a process and the members of its group, the holders of a pipe, and
//! SIGKILL to a group or a process. Errors (a process already gone) are ignored.

use std::collections::{HashMap, HashSet};

/// Kills every process (other than this one) that holds one of `pipes`.
pub(super) fn kill_holders(pipes: &[u64]) {
    for pid in holders_of(pipes) {
        kill_pid(pid);
    }
}

/// The inode of the pipe behind `fd` (unix), to find who else holds it.
pub(super) fn pipe_inode(fd: i32) -> Option<u64> {
    #[cfg(unix)]
    {
        // SAFETY: fstat writes only into the zeroed struct we pass.
        let mut stat: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstat(fd, &mut stat) } == 0 {
            return Some(stat.st_ino);
        }
    }
    let _ = fd;
    None
}

/// Processes (other than this one) with a descriptor open on one of `pipes` (Linux).
pub(super) fn holders_of(pipes: &[u64]) -> Vec<u32> {
    if pipes.is_empty() {
        return Vec::new();
    }
    let names: Vec<String> = pipes
        .iter()
        .map(|inode| format!("pipe:[{inode}]"))
        .collect();
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != me)
        .filter(|pid| {
            std::fs::read_dir(format!("/proc/{pid}/fd"))
                .into_iter()
                .flatten()
                .flatten()
                .any(|fd| {
                    std::fs::read_link(fd.path())
                        .is_ok_and(|target| names.iter().any(|n| target.as_os_str() == n.as_str()))
                })
        })
        .collect()
}

/// Ends a process group with SIGKILL.
pub(super) fn kill_group(group: u32) {
    #[cfg(unix)]
    if let Ok(pid) = libc::pid_t::try_from(group) {
        // SAFETY: killpg only sends a signal; it touches no memory of ours.
        unsafe {
            libc::killpg(pid, libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = group;
}

pub(super) fn kill_pid(pid: u32) {
    #[cfg(unix)]
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: kill only sends a signal.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = pid;
}

/// One process of the table: its parent, its process group, whether it is a zombie.
#[derive(Debug, Clone, Copy)]
pub(super) struct ProcessInfo {
    pub parent: u32,
    pub group: u32,
    pub zombie: bool,
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
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            Some((pid, parse_stat(&stat)?))
        })
        .collect()
}

/// `/proc/PID/stat`: `pid (comm) state ppid pgrp …`; the command name may hold spaces and
/// parentheses, so the fields are read after its last `)`.
fn parse_stat(stat: &str) -> Option<ProcessInfo> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?;
    let parent = fields.next()?.parse().ok()?;
    let group = fields.next()?.parse().ok()?;
    Some(ProcessInfo {
        parent,
        group,
        zombie: state == "Z",
    })
}

/// Every process descended from one of `roots` or in one of their process groups, now.
pub(super) fn descendants(roots: &[u32]) -> Vec<u32> {
    descendants_in(&process_table(), roots)
}

pub(super) fn descendants_in(table: &HashMap<u32, ProcessInfo>, roots: &[u32]) -> Vec<u32> {
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
    found.retain(|pid| !roots.contains(pid));
    let mut list: Vec<u32> = found.into_iter().collect();
    list.sort_unstable();
    list
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_command_names_parse() {
        let info = parse_stat("42 (a) b (c) S 7 42 42 0 -1").unwrap();
        assert_eq!((info.parent, info.group, info.zombie), (7, 42, false));
        assert!(parse_stat("9 (x) Z 1 9 9").unwrap().zombie);
        assert!(parse_stat("garbage").is_none());
    }

    #[test]
    fn descendants_follow_parents_and_groups() {
        let info = |parent, group| ProcessInfo {
            parent,
            group,
            zombie: false,
        };
        let table = HashMap::from([
            (10, info(1, 10)),  // the child, its own group
            (11, info(10, 10)), // in its group
            (12, info(11, 12)), // left the group (setsid), still its descendant
            (13, info(12, 13)),
            (14, info(1, 10)), // reparented, still in the group
            (20, info(1, 20)), // unrelated
        ]);
        assert_eq!(descendants_in(&table, &[10]), [11, 12, 13, 14]);
    }
}
