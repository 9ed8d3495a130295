//! What keeps stdio children from outliving the server (SPEC §8.3), on Linux:
//!
//! - each child leads its own process group, so stopping it reaches what it started;
//! - each child is told to die with the server (`PR_SET_PDEATHSIG`, set between fork and
//!   exec), which holds even when the server is killed with SIGKILL;
//! - the server is a child subreaper (`PR_SET_CHILD_SUBREAPER`): a descendant that leaves
//!   the group with `setsid()` and outlives its parent becomes the server's child instead of
//!   init's, so it can still be found, killed and reaped;
//! - when a child is stopped, its group and every process descended from it are killed, and
//!   at shutdown every adopted orphan too;
//! - the [`super::reaper`] process kills the groups of a server that died without stopping
//!   them (grandchildren in a child's group do not get the death signal).
//!
//! On other unix systems only the process groups hold; elsewhere nothing of this applies.

use std::collections::{BTreeSet, HashSet};
use std::sync::{Mutex, MutexGuard};

use super::kill::{descendants, descendants_in, holders_of, kill_group, kill_pid, process_table};

/// The stdio children's process groups: those alive now, and every leader started that may
/// still wait to be reaped by its owner.
#[derive(Default)]
struct Groups {
    /// Leaders' pids of the groups alive now.
    alive: Vec<u32>,
    /// Leaders started here: their owner (the runtime) reaps them, never [`reap_adopted`].
    /// Dropped once their pid is gone from the process table.
    started: BTreeSet<u32>,
}

static GROUPS: Mutex<Groups> = Mutex::new(Groups {
    alive: Vec::new(),
    started: BTreeSet::new(),
});

fn groups() -> MutexGuard<'static, Groups> {
    GROUPS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Makes this process a child subreaper (Linux; elsewhere nothing). Called once, before any
/// child starts.
pub fn become_subreaper() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with these arguments only sets a flag of this process.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

/// A `process-wrap` wrapper that makes the child die with this process: the death signal is
/// set in the child between fork and exec, then the child checks that its parent has not
/// already gone in between.
///
/// The kernel sends the signal when the *thread* that forked the child ends. Children are
/// started from the async runtime's worker threads, which live as long as the runtime.
#[derive(Debug)]
pub(super) struct DieWithParent;

impl process_wrap::tokio::CommandWrapper for DieWithParent {
    fn pre_spawn(
        &mut self,
        command: &mut tokio::process::Command,
        _core: &process_wrap::tokio::CommandWrap,
    ) -> std::io::Result<()> {
        #[cfg(target_os = "linux")]
        {
            let parent = std::process::id();
            // SAFETY: the closure runs between fork and exec and only makes the
            // async-signal-safe calls prctl and getppid; it allocates nothing.
            unsafe {
                command.pre_exec(move || {
                    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    if u32::try_from(libc::getppid()).ok() != Some(parent) {
                        // The server died before the signal was armed.
                        return Err(std::io::Error::other("the server is gone"));
                    }
                    Ok(())
                });
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = command;
        Ok(())
    }
}

/// Runs `spawn` and records the group of what it started (`group_of`) as alive, for
/// [`reap_adopted`] and the reaper, in one step: an adopted-orphan reaping in between could
/// otherwise reap a child that exited at once, before its owner waits for it.
pub(super) fn spawn_group<T>(
    spawn: impl FnOnce() -> std::io::Result<T>,
    group_of: impl Fn(&T) -> Option<(u32, Vec<u64>)>,
) -> std::io::Result<T> {
    let mut groups = groups();
    let spawned = spawn()?;
    if let Some((group, pipes)) = group_of(&spawned) {
        groups.alive.push(group);
        groups.started.insert(group);
        super::reaper::watch(group, &pipes);
    }
    Ok(spawned)
}

/// What was known of a child's processes before it was asked to stop: they can move away
/// (a new session) or lose their parent while it stops.
#[derive(Debug, Default)]
pub(super) struct Tree {
    group: u32,
    seen: Vec<u32>,
    /// Inodes of the child's stdio pipes: a process holding one is the child's, wherever
    /// it went.
    pipes: Vec<u64>,
}

impl Tree {
    /// The processes of `group` and its descendants now.
    pub(super) fn of(group: u32, pipes: &[u64]) -> Tree {
        Tree {
            group,
            seen: descendants(&[group]),
            pipes: pipes.to_vec(),
        }
    }

    /// Kills the group, every process seen before, every descendant now and every process
    /// that holds one of the child's pipes, then forgets the group. Errors (the processes
    /// are already gone) are ignored.
    pub(super) fn kill(self) {
        kill_group(self.group);
        let mut doomed = self.seen;
        doomed.extend(descendants(&[self.group]));
        doomed.extend(holders_of(&self.pipes));
        let me = std::process::id();
        for pid in doomed {
            if pid != me {
                kill_pid(pid);
            }
        }
        groups().alive.retain(|g| *g != self.group);
        super::reaper::forget(self.group);
        reap_adopted();
    }
}

/// Kills the group of every child still alive (at exit, after the runs: a guard dropped at
/// the last moment may not have had its turn).
pub fn kill_all_groups() {
    let alive = groups().alive.clone();
    for group in alive {
        kill_group(group);
    }
}

/// Kills every child this process adopted as a subreaper (descendants whose parent died),
/// with their descendants; at server shutdown, when no run is left to own them.
pub fn kill_adopted() {
    let table = process_table();
    let known: HashSet<u32> = groups().alive.iter().copied().collect();
    let me = std::process::id();
    let adopted: Vec<u32> = table
        .iter()
        .filter(|(pid, info)| {
            info.parent == me && !known.contains(&info.group) && !super::reaper::is_reaper(**pid)
        })
        .map(|(pid, _)| *pid)
        .collect();
    for pid in descendants_in(&table, &adopted)
        .into_iter()
        .chain(adopted.iter().copied())
    {
        kill_pid(pid);
    }
    reap_adopted();
}

/// Reaps adopted children that have exited (zombies), so they do not pile up. Children
/// the runtime started are left to it: their groups are registered.
pub(super) fn reap_adopted() {
    #[cfg(unix)]
    {
        let me = std::process::id();
        // Held throughout: see `spawn_group`.
        let mut groups = groups();
        let table = process_table();
        groups.started.retain(|pid| table.contains_key(pid));
        let known: HashSet<u32> = groups.alive.iter().copied().collect();
        for (pid, info) in table {
            if info.parent == me
                && info.zombie
                && !known.contains(&info.group)
                && !groups.started.contains(&pid)
                && !super::reaper::is_reaper(pid)
                && let Ok(raw) = libc::pid_t::try_from(pid)
            {
                let mut status = 0;
                // SAFETY: waitpid on one pid of ours with WNOHANG only reaps that zombie.
                unsafe {
                    libc::waitpid(raw, &mut status, libc::WNOHANG);
                }
            }
        }
    }
}
