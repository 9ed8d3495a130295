//! What a child process inherits (SPEC §8.3, §10; issue 34): its standard streams (and a
//! shim its channel, descriptor 3), nothing else of the server's. Every descriptor the
//! server opens is close-on-exec (a copy of stdout the stdio transport watches included);
//! between fork and exec every descriptor above the ones handed over is made close-on-exec
//! too, so the `exec` closes what the server inherited from its own parent and anything a
//! library left open. No child can write into the server's stdout or hold a socket of its
//! MCP transport.

use crate::limits::CHILD_DESCRIPTOR_SWEEP;

/// The descriptors a child gets as its own: 0, 1 and 2, its standard streams.
pub(super) const STANDARD_STREAMS: i32 = 3;

/// A `process-wrap` wrapper that keeps every descriptor from `.0` on out of the child:
/// between fork and exec (after the standard streams and any descriptor handed over on
/// purpose are in place) they are all made close-on-exec, so the `exec` closes them.
/// Every descriptor the server opens is close-on-exec already; this also keeps back what
/// the server inherited from its own parent, and whatever a library leaves open.
#[derive(Debug)]
pub(super) struct KeepDescriptorsBelow(pub i32);

impl process_wrap::tokio::CommandWrapper for KeepDescriptorsBelow {
    fn pre_spawn(
        &mut self,
        command: &mut tokio::process::Command,
        _core: &process_wrap::tokio::CommandWrap,
    ) -> std::io::Result<()> {
        #[cfg(unix)]
        {
            let first = self.0;
            // SAFETY: the closure runs between fork and exec and only makes the
            // async-signal-safe calls of `close_on_exec_from`; it allocates nothing.
            unsafe {
                command.pre_exec(move || {
                    close_on_exec_from(first);
                    Ok(())
                });
            }
        }
        #[cfg(not(unix))]
        let _ = command;
        Ok(())
    }
}

/// Marks every descriptor of this process from `first` on close-on-exec. Safe between
/// fork and exec: system calls only, nothing allocated. Linux 5.11's `close_range` does it
/// in one call; elsewhere each descriptor up to the process's limit (at most
/// [`CHILD_DESCRIPTOR_SWEEP`]) is marked on its own.
#[cfg(unix)]
pub(super) fn close_on_exec_from(first: i32) {
    #[cfg(target_os = "linux")]
    // SAFETY: close_range with CLOSE_RANGE_CLOEXEC only sets a flag on descriptors of this
    // process.
    if unsafe {
        libc::syscall(
            libc::SYS_close_range,
            first,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    } == 0
    {
        return;
    }
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes only the struct we pass.
    let top = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
        i32::try_from(limit.rlim_cur).unwrap_or(i32::MAX)
    } else {
        CHILD_DESCRIPTOR_SWEEP
    };
    for fd in first..top.min(CHILD_DESCRIPTOR_SWEEP) {
        // SAFETY: fcntl on a descriptor number only sets its flag, if it is open.
        unsafe {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
}
