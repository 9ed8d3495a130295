//! Starting a stdio child (SPEC §8.3): its streams piped, in a process group of its own,
//! guarded from the moment it exists. A child with a shim ([`super::shim`], Linux) is
//! started through it: the shim is spawned in the child's directory with an empty
//! environment and a socket of its own as descriptor 3, is told the command, arguments and
//! environment over it, and answers whether the child started. A child without one (a
//! built-in server, or elsewhere than Linux) is started directly, told to die with the
//! server.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;

use process_wrap::tokio::{ChildWrapper, CommandWrap, ProcessGroup};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;

use super::descriptors::{KeepDescriptorsBelow, STANDARD_STREAMS};
use super::launch::SelfCommand;
use super::process::{DieWithParent, GroupGuard, spawn_group};
use super::shim::{ChildSpec, FAILED, SPEC_FD, STARTED};
use crate::limits::SHIM_STATUS_BYTES;

/// The child's command line and where and how it runs.
pub(super) struct StdioCommand<'a> {
    pub command: &'a str,
    pub args: &'a [String],
    pub env: &'a BTreeMap<String, String>,
    pub cwd: &'a Path,
}

/// Starts `child` (under `shim` when there is one) before `deadline`; the process and its
/// group's guard. The error says why, naming the command.
pub(super) async fn start(
    child: &StdioCommand<'_>,
    shim: Option<&SelfCommand>,
    deadline: Instant,
) -> Result<(Box<dyn ChildWrapper>, GroupGuard), String> {
    let cannot = |why: &dyn std::fmt::Display| format!("cannot start `{}`: {why}", child.command);
    let Some(shim) = shim else {
        let mut process = tokio::process::Command::new(child.command);
        process
            .args(child.args)
            .env_clear()
            .envs(child.env)
            .current_dir(child.cwd);
        let mut wrapped = CommandWrap::from(process);
        wrapped.wrap(DieWithParent);
        wrapped.wrap(KeepDescriptorsBelow(STANDARD_STREAMS));
        return spawn(wrapped).map_err(|e| cannot(&e));
    };
    #[cfg(unix)]
    {
        let (program, args) = shim.shim(std::process::id()).map_err(|e| cannot(&e))?;
        let (ours, theirs) = std::os::unix::net::UnixStream::pair().map_err(|e| cannot(&e))?;
        let mut process = tokio::process::Command::new(program);
        process.args(args).env_clear().current_dir(child.cwd);
        let mut wrapped = CommandWrap::from(process);
        wrapped.wrap(AsDescriptor3(std::os::fd::AsRawFd::as_raw_fd(&theirs)));
        // After descriptor 3 is in place: the shim keeps it and its standard streams only.
        wrapped.wrap(KeepDescriptorsBelow(SPEC_FD + 1));
        let spawned = spawn(wrapped);
        // The shim holds its end now; ours alone must be left here, so its end-of-file
        // comes when the shim closes it.
        drop(theirs);
        let (process, guard) = spawned.map_err(|e| cannot(&e))?;
        // From here on, a failure drops the guard, which kills the shim's group.
        tell_shim(ours, child, deadline)
            .await
            .map_err(|why| cannot(&why))?;
        Ok((process, guard))
    }
    #[cfg(not(unix))]
    {
        let _ = (shim, deadline);
        Err(cannot(&"shims are for Linux"))
    }
}

/// Spawns `wrapped` with piped streams as the leader of its own group, recorded.
fn spawn(mut wrapped: CommandWrap) -> std::io::Result<(Box<dyn ChildWrapper>, GroupGuard)> {
    // Its own process group, so that stopping it reaches what it started (npx, uvx).
    wrapped.wrap(ProcessGroup::leader());
    wrapped
        .command_mut()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    spawn_group(|| wrapped.spawn(), |process| process.id())
}

/// Sends the shim what to start over `channel`, and reads its answer.
#[cfg(unix)]
async fn tell_shim(
    channel: std::os::unix::net::UnixStream,
    child: &StdioCommand<'_>,
    deadline: Instant,
) -> Result<(), String> {
    let spec = serde_json::to_vec(&ChildSpec {
        command: child.command.to_owned(),
        args: child.args.to_vec(),
        env: child.env.clone(),
    })
    .map_err(|e| e.to_string())?;
    let exchange = async {
        channel.set_nonblocking(true)?;
        let mut channel = tokio::net::UnixStream::from_std(channel)?;
        channel.write_all(&spec).await?;
        channel.shutdown().await?;
        let mut answer = Vec::new();
        channel
            .take(SHIM_STATUS_BYTES as u64)
            .read_to_end(&mut answer)
            .await?;
        Ok::<_, std::io::Error>(answer)
    };
    let answer = match tokio::time::timeout_at(deadline, exchange).await {
        Err(_) => return Err("its shim did not start it in time".to_owned()),
        Ok(Err(e)) => return Err(format!("cannot reach its shim: {e}")),
        Ok(Ok(answer)) => String::from_utf8_lossy(&answer).into_owned(),
    };
    if answer == STARTED {
        return Ok(());
    }
    match answer.strip_prefix(FAILED) {
        Some(why) => Err(why.trim_end().to_owned()),
        None => Err("its shim ended before starting it".to_owned()),
    }
}

/// A `process-wrap` wrapper that gives the child the descriptor it holds as its
/// descriptor 3 (the shim's channel), between fork and exec.
#[cfg(unix)]
#[derive(Debug)]
struct AsDescriptor3(i32);

#[cfg(unix)]
impl process_wrap::tokio::CommandWrapper for AsDescriptor3 {
    fn pre_spawn(
        &mut self,
        command: &mut tokio::process::Command,
        _core: &CommandWrap,
    ) -> std::io::Result<()> {
        let fd = self.0;
        // SAFETY: the closure runs between fork and exec and only makes the
        // async-signal-safe calls dup2 and fcntl; it allocates nothing.
        unsafe {
            command.pre_exec(move || {
                if fd == SPEC_FD {
                    // dup2 onto itself would keep close-on-exec.
                    if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                } else if libc::dup2(fd, SPEC_FD) != SPEC_FD {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        Ok(())
    }
}
