//! What keeps stdio children from outliving their run or the server (SPEC §8.3), on the
//! server's side:
//!
//! - each child leads its own process group (on Linux its shim does, with the child in it),
//!   so stopping it reaches what it started;
//! - on Linux each child runs under its shim ([`super::shim`]), which kills everything the
//!   child left when the child exits or the server dies, SIGKILL included; a child started
//!   directly (a built-in server, or elsewhere than Linux) is told to die with the server
//!   (`PR_SET_PDEATHSIG`, set between fork and exec);
//! - stopping a child kills its group, every process seen under it before it was asked to
//!   stop and every one under it now, each checked against what was seen (a recycled pid is
//!   never hit);
//! - a child holds nothing of the server's across `exec` but the pipes of its own standard
//!   streams (and a shim its channel, descriptor 3): see `descriptors`;
//! - the server is a child subreaper (`PR_SET_CHILD_SUBREAPER`). With every child under a
//!   shim, nothing legitimate is ever adopted: a process that comes to the server is
//!   something a killed shim left, so every such process (and what it started) is killed as
//!   soon as a SIGCHLD says something changed, when a child is stopped, and at exit.
//!
//! On other unix systems only the process groups and the death signal hold; elsewhere
//! nothing of this applies.

use std::collections::{BTreeSet, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::kill::{
    Seen, descendants, descendants_in, kill_group, kill_seen, process_info, process_table,
};
use crate::limits::CHILD_TREE_KILL_BOUND;

/// The stdio children's process groups: those alive now, and every leader started that may
/// still wait to be reaped by its owner.
#[derive(Default)]
struct Groups {
    /// Leaders of the groups alive now.
    alive: Vec<Seen>,
    /// Leaders started here: their owner (the runtime) reaps them, and they are never
    /// taken for escapees. Dropped once they are gone from the process table.
    started: BTreeSet<Seen>,
}

static GROUPS: Mutex<Groups> = Mutex::new(Groups {
    alive: Vec::new(),
    started: BTreeSet::new(),
});

/// Whether this process is a child subreaper: only then can something come to it that
/// it did not start.
static SUBREAPER: AtomicBool = AtomicBool::new(false);

fn groups() -> MutexGuard<'static, Groups> {
    GROUPS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Makes this process a child subreaper (Linux; elsewhere nothing). Called once, before any
/// child starts.
pub fn become_subreaper() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with these arguments only sets a flag of this process.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } == 0 {
        SUBREAPER.store(true, Ordering::Relaxed);
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

/// Runs `spawn` and records the group of what it started (`leader_of`) as alive, in one
/// step: a sweep for escapees in between would take the new leader for one, and reaping an
/// adopted orphan could reap a child that exited at once, before its owner waits for it.
pub(super) fn spawn_group<T>(
    spawn: impl FnOnce() -> std::io::Result<T>,
    leader_of: impl Fn(&T) -> Option<u32>,
) -> std::io::Result<(T, GroupGuard)> {
    let mut groups = groups();
    let spawned = spawn()?;
    let leader = leader_of(&spawned).map(|pid| Seen {
        pid,
        // Our child: not reaped yet, whatever it did, so `/proc` still shows it. One read of
        // a file the kernel writes on the spot, which waits on nothing, like the fork before.
        start_time: process_info(pid).map_or(0, |info| info.start_time),
    });
    if let Some(leader) = leader {
        groups.alive.push(leader);
        groups.started.insert(leader);
    }
    Ok((spawned, GroupGuard { leader }))
}

/// A stdio child's process group: dropping it kills the group and everything the child
/// started ([`Tree`]).
#[derive(Debug)]
pub(super) struct GroupGuard {
    leader: Option<Seen>,
}

impl GroupGuard {
    /// What the child has started so far, to kill after it is asked to stop (read from
    /// `/proc`, so off the async workers).
    pub(super) async fn tree(&mut self) -> Option<Tree> {
        let leader = self.leader.take()?;
        tokio::task::spawn_blocking(move || Tree::of(leader))
            .await
            .ok()
    }
}

impl Drop for GroupGuard {
    /// Kills the group and what it started, reading `/proc` on a blocking thread when a
    /// runtime is there (at exit, whatever is left is killed by the runtime's owner).
    fn drop(&mut self) {
        let Some(leader) = self.leader.take() else {
            return;
        };
        let kill = move || Tree::of(leader).kill();
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn_blocking(kill);
            }
            Err(_) => kill(),
        }
    }
}

/// What was known of a child's processes before it was asked to stop: they can move away
/// (a new session) or lose their parent while it stops.
#[derive(Debug)]
pub(super) struct Tree {
    leader: Seen,
    seen: Vec<Seen>,
}

impl Tree {
    /// The processes of `leader`'s group and its descendants now.
    fn of(leader: Seen) -> Tree {
        Tree {
            leader,
            seen: descendants(&[leader.pid]),
        }
    }

    /// Kills the group, every process seen before and every descendant now, forgets the
    /// group, and once the leader is gone kills whatever came to this process from it.
    pub(super) fn kill(self) {
        kill_group(self.leader);
        for process in self.seen.into_iter().chain(descendants(&[self.leader.pid])) {
            kill_seen(process);
        }
        groups().alive.retain(|g| *g != self.leader);
        wait_until_gone(self.leader, Duration::from_secs(1));
        kill_escapees();
    }
}

/// Waits (on this thread) until `process` has exited or `bound` has passed: only then have
/// the processes it leaves come to their new parent.
fn wait_until_gone(process: Seen, bound: Duration) {
    let deadline = Instant::now() + bound;
    while Instant::now() < deadline
        && process_info(process.pid)
            .is_some_and(|info| info.start_time == process.start_time && !info.zombie)
    {
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Kills the group of every child still alive (at exit, after the runs: a guard dropped at
/// the last moment may not have had its turn), and waits for their leaders to be gone.
pub fn kill_all_groups() {
    let alive = groups().alive.clone();
    for leader in &alive {
        kill_group(*leader);
    }
    for leader in alive {
        wait_until_gone(leader, Duration::from_secs(1));
    }
}

/// Kills every process that came to this process as a subreaper without being started by
/// it, with everything under it, and reaps them; at exit, when no run is left.
pub fn kill_adopted() {
    kill_escapees();
}

/// Kills the escapees whenever a child process of this one ends (SIGCHLD): a shim killed
/// from outside hands what it guarded to this process, which must end it before this
/// process is perhaps killed too. Runs until the runtime ends; only in a subreaper.
pub async fn kill_escapees_as_they_come() {
    #[cfg(unix)]
    {
        if !SUBREAPER.load(Ordering::Relaxed) {
            return;
        }
        use tokio::signal::unix::{SignalKind, signal};
        let Ok(mut child_ended) = signal(SignalKind::child()) else {
            return;
        };
        while child_ended.recv().await.is_some() {
            let _ = tokio::task::spawn_blocking(kill_escapees).await;
        }
    }
}

/// Kills every live process whose parent is this one but that this one did not start, and
/// everything under each, in rounds until none is left or the bound passes; reaps the
/// exited ones. Only in a subreaper: anywhere else every child is someone's own.
fn kill_escapees() {
    if !SUBREAPER.load(Ordering::Relaxed) {
        return;
    }
    let deadline = Instant::now() + CHILD_TREE_KILL_BOUND;
    loop {
        let (live, exited) = escapees();
        for pid in exited {
            reap(pid);
        }
        if live.is_empty() || Instant::now() > deadline {
            return;
        }
        for process in live {
            kill_seen(process);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// The escapees now: the live ones with everything under them, and the pids of those that
/// exited and wait to be reaped.
fn escapees() -> (Vec<Seen>, Vec<u32>) {
    let me = std::process::id();
    // Held while the table is read: see `spawn_group`.
    let mut groups = groups();
    let table = process_table();
    groups.started.retain(|leader| {
        table
            .get(&leader.pid)
            .is_some_and(|info| info.start_time == leader.start_time)
    });
    let started: HashSet<u32> = groups.started.iter().map(|leader| leader.pid).collect();
    drop(groups);
    let adopted: Vec<u32> = table
        .iter()
        .filter(|(pid, info)| info.parent == me && !started.contains(pid))
        .map(|(pid, _)| *pid)
        .collect();
    let exited = adopted
        .iter()
        .copied()
        .filter(|pid| table.get(pid).is_some_and(|info| info.zombie))
        .collect();
    let live = descendants_in(&table, &adopted)
        .into_iter()
        .chain(adopted.iter().filter_map(|pid| {
            table.get(pid).map(|info| Seen {
                pid: *pid,
                start_time: info.start_time,
            })
        }))
        .filter(|process| {
            table
                .get(&process.pid)
                .is_some_and(|info| !info.zombie && process.pid != me)
        })
        .collect();
    (live, exited)
}

/// Reaps `pid`, an exited child of this process that nothing else waits for.
fn reap(pid: u32) {
    #[cfg(unix)]
    if let Ok(raw) = libc::pid_t::try_from(pid) {
        let mut status = 0;
        // SAFETY: waitpid on one pid of ours with WNOHANG only reaps that zombie.
        unsafe {
            libc::waitpid(raw, &mut status, libc::WNOHANG);
        }
    }
    #[cfg(not(unix))]
    let _ = pid;
}
