//! Children that try to outlive their run, through the real binary: a real daemon (forked
//! twice, `setsid`, every descriptor closed) gone at its run's end, at the server's exit and
//! after a SIGKILL of the server; the server's helper processes killed first, then the
//! server; a child writing forged "forget me" and "kill that group" lines into the server's
//! pipes through `/proc/<server>/fd/N`; and the helper commands run by hand, which must
//! never kill their caller.

use crate::support;

use std::time::Duration;

use mcp_agents::testkit::Step;
use serde_json::json;
use support::binary::BIN;
use support::children::{
    assert_grandchild_ends_with_its_run, assert_no_process_left, live_processes, processes_with,
    two_grandchildren_mid_call,
};
use support::{ServerUnderTest, TestWorkspace};

/// Whether `pid` is a live (not zombie) process.
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
}

/// The live processes whose parent is `parent`.
fn children_of(parent: u32) -> Vec<u32> {
    live_processes(|pid| {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            stat[stat.rfind(')').unwrap() + 1..]
                .split_whitespace()
                .nth(1)
                .and_then(|p| p.parse::<u32>().ok())
                == Some(parent)
        })
    })
}

/// The second argument of `pid`'s command line (its subcommand).
fn subcommand(pid: u32) -> String {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    cmdline
        .split(|b| *b == 0)
        .nth(1)
        .map(|arg| String::from_utf8_lossy(arg).into_owned())
        .unwrap_or_default()
}

/// Waits until `count` processes carry `marker` (the child and what it started).
async fn wait_for(marker: &str, count: usize) {
    for _ in 0..400 {
        if processes_with(marker).len() >= count {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!(
        "expected {count} processes marked {marker}, found {:?}",
        processes_with(marker)
    );
}

/// A server whose agent `daemonizer` has one child that starts a daemon, with the child in
/// a 60 s call.
async fn daemon_mid_call() -> ServerUnderTest {
    mid_call("daemon", "daemonizer", &["--grandchild", "daemon"]).await
}

/// A server whose one agent `name` has one fixture child started with `args`, marked with a
/// marker tagged `tag`, in a 60 s call; the child and its grandchild are running.
async fn mid_call(tag: &str, name: &str, args: &[&str]) -> ServerUnderTest {
    let s = TestWorkspace::new()
        .marked(tag)
        .fixture_agent(name, args)
        .stdio()
        .await;
    s.mock
        .push([Step::tool_call("fx__sleep", json!({"ms": 60_000}))]);
    let id = s.spawn(name, "t").await;
    s.wait_for_phase(&id, "tool_call").await;
    wait_for(&s.marker, 2).await;
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_a_child_started_ends_with_its_run() {
    // The run is over and the server still serves: its daemon is gone too.
    assert_grandchild_ends_with_its_run("daemon-run", "daemonizer", "daemon").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_a_child_started_ends_with_the_server() {
    let s = daemon_mid_call().await;
    let m = s.marker.clone();
    s.close().await; // stdin EOF: the server stops its runs and exits
    assert_no_process_left(&m, 6).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_a_child_started_ends_with_a_server_killed_with_sigkill() {
    let s = daemon_mid_call().await;
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(s.pid.unwrap() as i32, libc::SIGKILL) };
    assert_no_process_left(&s.marker, 4).await;
    s.close().await;
}

/// The server's helper processes (every child of it that is not a child server itself):
/// the reaper, or the children's shims.
fn helpers_of(server: u32) -> Vec<u32> {
    children_of(server)
        .into_iter()
        .filter(|pid| subcommand(*pid) != "fixture-server")
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_servers_helpers_first_and_then_the_server_leaves_nothing() {
    // One grandchild stays in its parent's group (no death signal reaches it), one is a
    // daemon.
    let s = two_grandchildren_mid_call("helpers", "daemon").await;
    wait_for(&s.marker, 4).await;
    let server = s.pid.unwrap();
    let helpers = helpers_of(server);
    assert!(!helpers.is_empty(), "the server has helper processes");
    for pid in &helpers {
        // SAFETY: signalling a process of this test.
        unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
    }
    for _ in 0..200 {
        if helpers.iter().all(|pid| !alive(*pid)) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // The server has had time to notice.
    tokio::time::sleep(Duration::from_millis(500)).await;
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(server as i32, libc::SIGKILL) };
    assert_no_process_left(&s.marker, 4).await;
    s.close().await;
}

/// A process in a group of its own, started by this test and nothing to do with the
/// server: a `sleep`.
fn bystander() -> std::process::Child {
    use std::os::unix::process::CommandExt;
    std::process::Command::new("sleep")
        .arg("60")
        .process_group(0)
        .spawn()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_lines_in_the_servers_pipes_neither_spare_the_child_nor_kill_a_bystander() {
    let mut victim = bystander();
    let victim_pid = victim.id();
    let victim_arg = victim_pid.to_string();
    let args = ["--grandchild", "group", "--forge-reaper-lines", &victim_arg];
    let s = mid_call("forger", "forger", &args).await;
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(s.pid.unwrap() as i32, libc::SIGKILL) };
    tokio::time::sleep(Duration::from_secs(1)).await;
    let spared = alive(victim_pid);
    let _ = victim.kill();
    victim.wait().unwrap();
    assert!(spared, "the bystander's group was killed on a forged line");
    assert_no_process_left(&s.marker, 4).await;
    s.close().await;
}

/// Runs `script` under `sh` in a process group of its own and returns its output and
/// whether it ended on a signal.
fn in_own_group(script: &str) -> (String, Option<i32>) {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    let output = std::process::Command::new("sh")
        .args(["-c", script])
        .env("BIN", BIN)
        .process_group(0)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        output.status.signal(),
    )
}

#[test]
fn the_helper_commands_run_by_hand_never_kill_their_caller() {
    for script in [
        // The old reaper's "kill group 0": the caller's own group.
        r#"echo +0 | "$BIN" reaper; echo alive"#,
        r#"printf '+0\n+1\n-0\n' | "$BIN" reaper; echo alive"#,
        // The shim, with the caller as its "server", with init, with no server at all,
        // and with forged lines where its instructions would be.
        r#""$BIN" child-shim $$ 3</dev/null; echo alive"#,
        r#"echo +0 | "$BIN" child-shim $$ 3<&0; echo alive"#,
        r#""$BIN" child-shim 1; "$BIN" child-shim 0; "$BIN" child-shim; echo alive"#,
    ] {
        let (output, signal) = in_own_group(script);
        assert_eq!(signal, None, "{script}: the caller was killed");
        assert!(output.ends_with("alive\n"), "{script}: {output}");
    }
}
