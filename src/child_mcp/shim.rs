//! A stdio child's shim (SPEC §8.3, Linux): this same binary, run as `mcp-agents
//! child-shim SERVER_PID` (hidden) between the server and each stdio child, which outlives
//! a server killed with SIGKILL just long enough to kill everything its child left.
//!
//! Nothing below a server killed with SIGKILL can find what its children abandoned: the
//! orphans go to init, and a daemon (forked twice, `setsid`, every descriptor closed) has no
//! tie left to anything. So each child gets an ancestor of its own that stays:
//!
//! - the shim is a child subreaper, so whatever its child starts and abandons, however it
//!   detaches, becomes the shim's child: the tree under the shim is the child's, whole;
//! - the child dies with the shim (`PR_SET_PDEATHSIG`, SIGKILL), and the shim watches the
//!   server through a pidfd instead of dying with it;
//! - when the child exits (the run's end) or the server dies, however it dies, the shim kills
//!   every process under it, each through a pidfd checked against what it saw (so a recycled
//!   pid is never hit), in rounds until none is left, and exits. "Under it" is descent
//!   through parents, each link proven by start times ([`descent_in`]), never membership of
//!   its process group: run by hand, the shim shares a group with its caller's processes.
//!
//! The server tells it what to start over descriptor 3, a socket of its own that nothing
//! else holds ([`ChildSpec`], JSON, then end-of-file), and hears back `ok` or `error: why`
//! on the same socket, which the shim then closes; the child never holds it. The shim itself
//! runs with an empty environment (the child's travels over the socket), leads the child's
//! process group, and hands the child its standard streams: its own are `/dev/null` from
//! then on, so the server sees the child's end of its pipes as before.
//!
//! It only ever kills its own descendants, so running it by hand can harm nothing but what
//! it started itself; it refuses to run unless `SERVER_PID` is its parent.

use std::collections::BTreeMap;
use std::process::ExitCode;
#[cfg(target_os = "linux")]
use std::{
    io::{Read, Write},
    os::fd::FromRawFd,
    os::unix::process::CommandExt,
    time::Instant,
};

#[cfg(target_os = "linux")]
use super::descriptors::{STANDARD_STREAMS, close_on_exec_from};
#[cfg(target_os = "linux")]
use super::kill::{PidFd, descent_in, kill_seen, process_table};
#[cfg(target_os = "linux")]
use crate::limits::{CHILD_TREE_KILL_BOUND, SHIM_PARENT_POLL, SHIM_SPEC_BYTES};

/// The hidden subcommand the server starts a shim with.
pub(super) const SUBCOMMAND: &str = "child-shim";

/// The descriptor a shim reads its [`ChildSpec`] from and answers on.
pub(super) const SPEC_FD: i32 = 3;

/// What the server tells a shim to start.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct ChildSpec {
    pub command: String,
    pub args: Vec<String>,
    /// The child's whole environment.
    pub env: BTreeMap<String, String>,
}

/// The shim's answer once the child started.
pub(super) const STARTED: &str = "ok\n";

/// The shim's answer when the child could not start: `error: ` and why.
pub(super) const FAILED: &str = "error: ";

/// The shim: starts the child it is told, and kills everything under it when the child
/// exits or the server dies. Exits with the child's status (128 + the signal that ended
/// it), 127 when it could not start, 2 on misuse.
pub fn run_child_shim(server: u32) -> ExitCode {
    #[cfg(target_os = "linux")]
    {
        run(server)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = server;
        eprintln!("mcp-agents child-shim: only on Linux");
        ExitCode::from(2)
    }
}

#[cfg(target_os = "linux")]
const MISUSE: u8 = 2;
#[cfg(target_os = "linux")]
const NOT_STARTED: u8 = 127;

#[cfg(target_os = "linux")]
fn run(server: u32) -> ExitCode {
    // SAFETY: prctl with these arguments only sets a flag of this process.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
    // Opened before the check: if the server died in between, the parent is already
    // someone else and the check fails, so the pidfd names the server.
    let server_fd = PidFd::open(server);
    if server <= 1 || parent() != server {
        eprintln!("mcp-agents {SUBCOMMAND}: {server} is not this process's parent");
        return ExitCode::from(MISUSE);
    }
    // SAFETY: fcntl on a descriptor number only changes its flags, if it is open.
    if unsafe { libc::fcntl(SPEC_FD, libc::F_SETFD, libc::FD_CLOEXEC) } != 0 {
        eprintln!("mcp-agents {SUBCOMMAND}: nothing to start (descriptor {SPEC_FD} is closed)");
        return ExitCode::from(MISUSE);
    }
    // SAFETY: descriptor 3 is open (checked above) and owned here from now on.
    let mut channel = unsafe { std::fs::File::from_raw_fd(SPEC_FD) };
    let spec = match read_spec(&mut channel) {
        Ok(spec) => spec,
        Err(why) => {
            let _ = channel.write_all(format!("{FAILED}{why}\n").as_bytes());
            return ExitCode::from(MISUSE);
        }
    };
    // Before the child exists, so that no exit goes unnoticed.
    let child_exits = ChildExits::watch();
    let child = match start(&spec) {
        Ok(child) => child,
        Err(e) => {
            let _ = channel.write_all(format!("{FAILED}{e}\n").as_bytes());
            return ExitCode::from(NOT_STARTED);
        }
    };
    let _ = channel.write_all(STARTED.as_bytes());
    drop(channel);
    hand_over_stdio();
    let status = watch(server, server_fd.as_ref(), child.id(), &child_exits);
    let status = kill_tree(child.id(), status);
    ExitCode::from(exit_code(status))
}

#[cfg(target_os = "linux")]
fn parent() -> u32 {
    // SAFETY: getppid has no preconditions.
    u32::try_from(unsafe { libc::getppid() }).unwrap_or(0)
}

#[cfg(target_os = "linux")]
fn read_spec(channel: &mut std::fs::File) -> Result<ChildSpec, String> {
    let mut bytes = Vec::new();
    channel
        .take(SHIM_SPEC_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read what to start: {e}"))?;
    if bytes.len() > SHIM_SPEC_BYTES {
        return Err(format!(
            "what to start is over {} MiB",
            SHIM_SPEC_BYTES / (1024 * 1024)
        ));
    }
    serde_json::from_slice(&bytes).map_err(|e| format!("cannot read what to start: {e}"))
}

/// Starts the child with this process's standard streams, dying with it.
#[cfg(target_os = "linux")]
fn start(spec: &ChildSpec) -> std::io::Result<std::process::Child> {
    let shim = std::process::id();
    let mut command = std::process::Command::new(&spec.command);
    command.args(&spec.args).env_clear().envs(&spec.env);
    // SAFETY: the closure runs between fork and exec and only makes async-signal-safe
    // calls (sigemptyset, sigprocmask, prctl, getppid, and those of `close_on_exec_from`);
    // it allocates nothing.
    unsafe {
        command.pre_exec(move || {
            // The child gets its standard streams and nothing else the shim holds.
            close_on_exec_from(STANDARD_STREAMS);
            // The child must not inherit the blocked SIGCHLD.
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if u32::try_from(libc::getppid()).ok() != Some(shim) {
                return Err(std::io::Error::other("its shim is gone"));
            }
            Ok(())
        });
    }
    command.spawn()
}

/// Points this process's stdin and stdout at `/dev/null`: the child holds the pipes
/// now, and the server must see them end (or break) when the child's end does.
#[cfg(target_os = "linux")]
fn hand_over_stdio() {
    // SAFETY: open and dup2 on descriptors of this process; the string is a literal.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
        if null >= 0 {
            libc::dup2(null, 0);
            libc::dup2(null, 1);
            libc::close(null);
        }
    }
}

/// SIGCHLD, blocked and read from a signalfd, so the watch wakes when a process under
/// the shim exits.
#[cfg(target_os = "linux")]
struct ChildExits(Option<i32>);

#[cfg(target_os = "linux")]
impl ChildExits {
    fn watch() -> ChildExits {
        // SAFETY: signal-mask calls on this single-threaded process, and a new
        // descriptor.
        unsafe {
            let mut mask: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut mask);
            libc::sigaddset(&mut mask, libc::SIGCHLD);
            libc::sigprocmask(libc::SIG_BLOCK, &mask, std::ptr::null_mut());
            let fd = libc::signalfd(-1, &mask, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK);
            ChildExits((fd >= 0).then_some(fd))
        }
    }

    fn drain(&self) {
        let Some(fd) = self.0 else { return };
        let mut info = [0u8; std::mem::size_of::<libc::signalfd_siginfo>()];
        // SAFETY: read into a buffer of the size the descriptor hands out.
        while unsafe { libc::read(fd, info.as_mut_ptr().cast(), info.len()) } > 0 {}
    }
}

/// Reaps every exited process under the shim; the child's status when it is among them.
#[cfg(target_os = "linux")]
fn reap(child: u32, status: &mut Option<i32>) {
    loop {
        let mut raw = 0;
        // SAFETY: waitpid writes only the status we pass.
        let pid = unsafe { libc::waitpid(-1, &mut raw, libc::WNOHANG) };
        if pid <= 0 {
            return;
        }
        if u32::try_from(pid).ok() == Some(child) {
            *status = Some(raw);
        }
    }
}

/// Waits until the child exits or the server dies; the child's status if it exited.
#[cfg(target_os = "linux")]
fn watch(server: u32, server_fd: Option<&PidFd>, child: u32, exits: &ChildExits) -> Option<i32> {
    let mut status = None;
    // Without a pidfd or a signalfd, poll at an interval instead.
    let timeout = match (server_fd, exits.0) {
        (Some(_), Some(_)) => -1,
        _ => i32::try_from(SHIM_PARENT_POLL.as_millis()).unwrap_or(250),
    };
    loop {
        reap(child, &mut status);
        if status.is_some() || parent() != server {
            return status;
        }
        let mut fds = [
            libc::pollfd {
                fd: exits.0.unwrap_or(-1),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: server_fd.map_or(-1, PidFd::raw),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: poll reads and writes only the array we pass, of the length given.
        unsafe {
            libc::poll(fds.as_mut_ptr(), 2, timeout);
        }
        exits.drain();
    }
}

/// Kills every process under the shim, in rounds until none is left (or the bound
/// passes: something that forks faster than it is killed), reaping as it goes; the
/// child's status.
#[cfg(target_os = "linux")]
fn kill_tree(child: u32, mut status: Option<i32>) -> Option<i32> {
    let me = std::process::id();
    let deadline = Instant::now() + CHILD_TREE_KILL_BOUND;
    loop {
        reap(child, &mut status);
        let table = process_table();
        // Descent through parents alone: the shim's group may hold processes that are not
        // its own (run by hand in a `set -m` pipeline, its caller's other commands).
        let left: Vec<_> = descent_in(&table, me)
            .into_iter()
            .filter(|p| table.get(&p.pid).is_some_and(|info| !info.zombie))
            .collect();
        if left.is_empty() || Instant::now() > deadline {
            return status;
        }
        for process in left {
            kill_seen(process);
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

/// The exit code standing for `status` (128 + the signal, as shells say it).
#[cfg(target_os = "linux")]
fn exit_code(status: Option<i32>) -> u8 {
    match status {
        Some(raw) if libc::WIFEXITED(raw) => u8::try_from(libc::WEXITSTATUS(raw)).unwrap_or(1),
        Some(raw) if libc::WIFSIGNALED(raw) => u8::try_from(128 + libc::WTERMSIG(raw)).unwrap_or(1),
        _ => 0,
    }
}
