//! The status socket through the real binary (SPEC §7.1): private (directory `0700`, socket
//! `0600`, named for the workspace and the pid) and removed on exit; another uid can neither
//! reach it nor, let in, get a word out of it; a stale socket is ignored and removed; two
//! servers for one workspace are both seen; a watcher's stop ends an agent as `send_input`
//! `stop` does; the lines never carry a task, tool arguments or a result past its first
//! line; and `GET /status` and `/status/events` over HTTP behind the token.

use crate::support;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::time::Duration;

use mcp_agents::testkit::{MockProvider, Step};
use serde_json::{Value, json};
use support::binary::{self, Connection, Generation};
use support::run_kit::KEY;
use support::status::{self as st, Watcher};

async fn serve(ws: &Path, runtime: &Path) -> Connection {
    binary::stdio(ws, Generation::Modern, &st::env(runtime)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_socket_is_private_named_for_the_server_and_removed_on_exit() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = st::workspace(&mock);
    let runtime = st::runtime_dir();
    let c = serve(ws.path(), runtime.path()).await;
    let pid = c.pid.unwrap();
    let socket = st::socket_of(runtime.path(), pid).await;
    let dir = std::fs::metadata(runtime.path().join("mcp-agents")).unwrap();
    assert_eq!(dir.mode() & 0o777, 0o700, "the directory is its owner's");
    let meta = std::fs::symlink_metadata(&socket).unwrap();
    assert!(std::os::unix::fs::FileTypeExt::is_socket(&meta.file_type()));
    assert_eq!(meta.mode() & 0o777, 0o600, "the socket is its owner's");
    let name = socket.file_name().unwrap().to_str().unwrap();
    assert!(
        name.ends_with(&format!("-{pid}.sock")) && name.len() > 20,
        "{name}"
    );
    let mut watcher = Watcher::connect(&socket).await;
    let snapshot = watcher.next().await;
    assert_eq!(snapshot["type"], "snapshot");
    assert_eq!(snapshot["server"]["pid"], pid);
    assert_eq!(snapshot["server"]["transport"], "stdio");
    let canonical = ws.path().canonicalize().unwrap();
    assert_eq!(snapshot["server"]["workspace"], canonical.to_str().unwrap());
    assert_eq!(snapshot["agents"], json!([]));

    // The client goes away (stdin ends): the server stops and takes its socket along.
    c.close().await;
    st::until_removed(&socket).await;

    // SIGTERM, the other way a server is stopped.
    let c = serve(ws.path(), runtime.path()).await;
    let pid = c.pid.unwrap();
    let socket = st::socket_of(runtime.path(), pid).await;
    // SAFETY: a signal to the server this test started.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGTERM) }, 0);
    st::until_removed(&socket).await;
    drop(c);
}

/// Runs `f` on a thread of its own whose effective uid is `uid` (the raw system call changes
/// this thread's ids only, not the whole test process's), then switches back.
fn as_uid<T: Send>(uid: u32, f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let keep = u32::MAX; // -1: leave that id as it is.
                // SAFETY: setresuid on this thread only; its arguments are plain ids.
                let switched = unsafe { libc::syscall(libc::SYS_setresuid, keep, uid, keep) };
                assert_eq!(switched, 0, "switching to uid {uid}");
                let out = f();
                // SAFETY: as above; the saved uid is still 0, so this is allowed.
                let back = unsafe { libc::syscall(libc::SYS_setresuid, keep, 0u32, keep) };
                assert_eq!(back, 0);
                out
            })
            .join()
            .unwrap()
    })
}

/// Whether this test process runs as root (the uid tests need it); says why not otherwise.
fn root_or_skip(test: &str) -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        eprintln!("{test}: skipped, it switches uid and needs to run as root");
    }
    root
}

/// Another user: a uid that is not the server's.
const OTHER_UID: u32 = 65534;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_uid_can_neither_reach_the_socket_nor_get_a_word_from_it() {
    if !root_or_skip("another_uid_can_neither_reach_the_socket_nor_get_a_word_from_it") {
        return;
    }
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.push([Step::tool_call("fx__sleep", json!({"ms": 60_000}))]);
    let ws = st::workspace(&mock);
    let runtime = st::runtime_dir();
    let c = serve(ws.path(), runtime.path()).await;
    let socket = st::socket_of(runtime.path(), c.pid.unwrap()).await;
    let id = c.spawn("worker", "Sleep.").await;
    c.wait_for_phase(&id, "tool_call").await;

    let path = socket.clone();
    let reached = as_uid(OTHER_UID, move || {
        std::os::unix::net::UnixStream::connect(&path)
    });
    let refused = reached.expect_err("the directory keeps another uid out");
    assert_eq!(refused.kind(), std::io::ErrorKind::PermissionDenied);

    // Were the directory and socket left open by mistake, the server itself refuses.
    for (path, mode) in [
        (runtime.path(), 0o755),
        (&runtime.path().join("mcp-agents"), 0o755),
        (socket.as_path(), 0o666),
    ] {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let path = socket.clone();
    let heard = as_uid(OTHER_UID, move || {
        use std::io::{Read, Write};
        let mut stream = std::os::unix::net::UnixStream::connect(&path).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let _ = stream.write_all(b"{\"stop\": \"x\"}\n");
        let mut heard = Vec::new();
        let _ = stream.read_to_end(&mut heard);
        heard
    });
    assert!(
        heard.is_empty(),
        "another uid heard: {}",
        String::from_utf8_lossy(&heard)
    );
    // A stop sent by another uid does nothing: the agent still runs.
    let path = socket.clone();
    let target = id.clone();
    as_uid(OTHER_UID, move || {
        use std::io::{Read, Write};
        let mut stream = std::os::unix::net::UnixStream::connect(&path).unwrap();
        let _ = stream.write_all(format!("{{\"stop\": \"{target}\"}}\n").as_bytes());
        let _ = stream.read_to_end(&mut Vec::new());
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let record = c.wait(&[&id], 0).await["agents"][0].clone();
    assert_eq!(record["status"], "running", "{record}");

    // The owner is still served.
    let mut watcher = Watcher::connect(&socket).await;
    assert_eq!(watcher.next().await["agents"][0]["agent_id"], id.as_str());
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_of_another_uid_is_refused_by_servers_and_readers() {
    if !root_or_skip("a_directory_of_another_uid_is_refused_by_servers_and_readers") {
        return;
    }
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = st::workspace(&mock);
    // No XDG_RUNTIME_DIR: the directory is `mcp-agents-0` under TMPDIR, planted by another
    // user before the server starts.
    let tmp = st::runtime_dir();
    let planted = tmp.path().join("mcp-agents-0");
    std::fs::create_dir(&planted).unwrap();
    std::os::unix::fs::chown(&planted, Some(OTHER_UID), Some(OTHER_UID)).unwrap();
    let tmpdir = tmp.path().to_str().unwrap();
    let (c, stderr) = binary::stdio_with_stderr(
        ws.path(),
        Generation::Modern,
        &[("TMPDIR", tmpdir), ("XDG_RUNTIME_DIR", "")],
        std::process::Stdio::piped(),
    )
    .await;
    c.close().await;
    let mut said = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut stderr.unwrap(), &mut said)
        .await
        .unwrap();
    assert!(
        said.contains("no status socket") && said.contains("belongs to uid 65534"),
        "{said}"
    );
    assert_eq!(std::fs::read_dir(&planted).unwrap().count(), 0);

    let out = tokio::process::Command::new(binary::BIN)
        .arg("status")
        .arg(ws.path())
        .env("TMPDIR", tmpdir)
        .env_remove("XDG_RUNTIME_DIR")
        .output()
        .await
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("belongs to uid 65534"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_socket_is_ignored_and_removed() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = st::workspace(&mock);
    let runtime = st::runtime_dir();
    // A server killed outright leaves its socket behind.
    let killed = serve(ws.path(), runtime.path()).await;
    let pid = killed.pid.unwrap();
    let dead = st::socket_of(runtime.path(), pid).await;
    // SAFETY: a signal to the server this test started.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGKILL) }, 0);
    // Until its descriptors are closed, its socket still takes connections.
    while std::os::unix::net::UnixStream::connect(&dead).is_ok() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(dead.exists(), "SIGKILL leaves the socket");
    // And a socket whose pid lives (this test's) but that refuses connections.
    let name = dead.file_name().unwrap().to_str().unwrap();
    let key = name.split('-').next().unwrap();
    let refusing = dead.with_file_name(format!("{key}-{}.sock", std::process::id()));
    drop(std::os::unix::net::UnixListener::bind(&refusing).unwrap());
    assert!(refusing.exists());

    assert_eq!(
        st::snapshots(ws.path(), runtime.path()).await,
        Vec::<Value>::new()
    );
    assert!(!dead.exists(), "the dead server's socket is removed");
    assert!(!refusing.exists(), "the refusing socket is removed");
    let human = st::status(ws.path(), runtime.path(), false).await;
    assert_eq!(human.code, Some(0));
    assert!(
        human
            .stdout
            .starts_with("no mcp-agents server is running for ")
    );
    killed.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_for_one_workspace_are_both_listed() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.push([Step::text("First done."), Step::text("Second done.")]);
    let ws = st::workspace(&mock);
    let runtime = st::runtime_dir();
    let one = serve(ws.path(), runtime.path()).await;
    let two = serve(ws.path(), runtime.path()).await;
    let first = one.run_to_end("plain", "One.").await;
    let second = two.run_to_end("plain", "Two.").await;
    let snapshots = st::snapshots(ws.path(), runtime.path()).await;
    assert_eq!(snapshots.len(), 2, "{snapshots:?}");
    let mut pids: Vec<u64> = snapshots
        .iter()
        .map(|s| s["server"]["pid"].as_u64().unwrap())
        .collect();
    pids.sort_unstable();
    let mut expected = vec![u64::from(one.pid.unwrap()), u64::from(two.pid.unwrap())];
    expected.sort_unstable();
    assert_eq!(pids, expected);
    for snapshot in &snapshots {
        let agents = snapshot["agents"].as_array().unwrap();
        assert_eq!(agents.len(), 1, "{snapshot}");
        let mine = if snapshot["server"]["pid"] == one.pid.unwrap() {
            &first
        } else {
            &second
        };
        assert_eq!(agents[0]["agent_id"], mine["agent_id"]);
        assert_eq!(agents[0]["result"], mine["result"]);
    }
    let human = st::status(ws.path(), runtime.path(), false).await.stdout;
    assert_eq!(human.matches("mcp-agents server ").count(), 2, "{human}");
    assert!(human.contains(": completed in ") && human.contains("First done."));
    one.close().await;
    two.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watcher_stops_an_agent_as_send_input_stop_does_and_hears_no_secrets() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.push([
        Step::tool_call("fx__echo", json!({"text": "ARGUMENT-MARKER"})),
        Step::tool_call("fx__sleep", json!({"ms": 60_000})),
    ]);
    let ws = st::workspace(&mock);
    let runtime = st::runtime_dir();
    let c = serve(ws.path(), runtime.path()).await;
    let socket = st::socket_of(runtime.path(), c.pid.unwrap()).await;
    let mut watcher = Watcher::connect(&socket).await;
    assert_eq!(watcher.next().await["agents"], json!([]));
    let id = c.spawn("worker", "TASK-MARKER: find the bug.").await;
    // Transitions as they happen, down to the 60 s call.
    let sleeping = watcher
        .until(|l| l["type"] == "agent" && l["agent"]["activity"]["summary"] == "Calling fx.sleep")
        .await;
    let agent = &sleeping["agent"];
    assert_eq!(agent["agent_id"], id.as_str());
    assert!(
        agent["line"].as_str().unwrap().contains("running"),
        "{agent}"
    );
    let calls = agent["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2, "{agent}");
    assert_eq!(calls[0]["call"], "fx.echo");
    assert!(
        calls[0]["took_ms"].is_u64(),
        "a finished call has its duration"
    );
    assert_eq!(calls[1]["call"], "fx.sleep");
    assert!(
        calls[1].get("took_ms").is_none(),
        "a running call has none yet"
    );

    watcher.send(&format!("{{\"stop\": \"{id}\"}}")).await;
    let stopped = watcher.until(|l| l["type"] == "stopped").await;
    assert_eq!(stopped["agent_id"], id.as_str());
    let error = &stopped["agent"]["error"];
    assert_eq!(error["code"], "cancelled");
    assert_eq!(error["message"], "stopped from mcp-agents watch");
    // The parent sees the same record.
    let record = c.wait(&[&id], 0).await["agents"][0].clone();
    assert_eq!(record["status"], "failed");
    assert_eq!(record["error"]["message"], "stopped from mcp-agents watch");
    // A second stop finds it terminal and leaves it so; a bad request is answered.
    watcher.send(&format!("{{\"stop\": \"{id}\"}}")).await;
    assert_eq!(
        watcher.until(|l| l["type"] == "stopped").await["agent"]["status"],
        "failed"
    );
    watcher.send("hello").await;
    let refused = watcher.until(|l| l["type"] == "error").await;
    assert_eq!(refused["error"]["code"], "invalid_input");

    let said = watcher.said.join("\n");
    for secret in ["TASK-MARKER", "ARGUMENT-MARKER"] {
        assert!(!said.contains(secret), "the socket said {secret}: {said}");
    }
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_is_said_by_its_first_line_only() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.push([Step::text(
        "Found two bugs.\nSECOND-LINE-MARKER: the details.",
    )]);
    let ws = st::workspace(&mock);
    let runtime = st::runtime_dir();
    let c = serve(ws.path(), runtime.path()).await;
    let record = c.run_to_end("plain", "Look.").await;
    assert!(
        record["result"]
            .as_str()
            .unwrap()
            .contains("SECOND-LINE-MARKER")
    );
    let snapshots = st::snapshots(ws.path(), runtime.path()).await;
    let agent = &snapshots[0]["agents"][0];
    assert_eq!(agent["result"], "Found two bugs.");
    assert!(!snapshots[0].to_string().contains("SECOND-LINE-MARKER"));
    c.close().await;
}

/// The bearer token of the HTTP tests.
const TOKEN_VAR: &str = "MCP_AGENTS_TEST_BEARER";
const TOKEN: &str = "status-test-token-7";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_status_over_http_needs_the_token_and_a_loopback_origin() {
    let mock = MockProvider::start(KEY).await.unwrap();
    mock.push([Step::text("Done over HTTP.")]);
    let ws = st::workspace(&mock);
    let runtime = st::runtime_dir();
    let runtime_dir = runtime.path().to_str().unwrap();
    let (server, url) = binary::start_http_server(
        ws.path(),
        &["--auth-token-env", TOKEN_VAR],
        &[(TOKEN_VAR, TOKEN), ("XDG_RUNTIME_DIR", runtime_dir)],
    )
    .await
    .unwrap();
    let base = url.trim_end_matches("/mcp").to_owned();
    let c = binary::connect_http(&url, Generation::Modern, Some(TOKEN)).await;
    c.run_to_end("plain", "Go.").await;
    let client = reqwest::Client::new();
    let get = |path: &str, token: Option<&str>, origin: Option<&str>| {
        let mut request = client.get(format!("{base}{path}"));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        request.send()
    };
    for path in ["/status", "/status/events"] {
        assert_eq!(get(path, None, None).await.unwrap().status(), 401, "{path}");
        assert_eq!(get(path, Some("wrong"), None).await.unwrap().status(), 401);
        let foreign = get(path, Some(TOKEN), Some("https://evil.example")).await;
        assert_eq!(foreign.unwrap().status(), 403, "{path}");
    }
    let snapshot: Value = get("/status", Some(TOKEN), None)
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(snapshot["type"], "snapshot");
    assert_eq!(snapshot["server"]["transport"], "http");
    assert_eq!(snapshot["server"]["url"], url.as_str());
    assert_eq!(snapshot["agents"][0]["result"], "Done over HTTP.");
    // The events begin with the same snapshot.
    let mut events = get("/status/events", Some(TOKEN), Some("http://localhost:3000"))
        .await
        .unwrap();
    assert_eq!(events.status(), 200);
    let mut text = String::new();
    while !text.contains("\n\n") {
        let chunk = tokio::time::timeout(Duration::from_secs(10), events.chunk())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(text.starts_with("event: snapshot\ndata: {"), "{text}");
    // The same snapshot on the socket: one server, two doors.
    assert_eq!(st::snapshots(ws.path(), runtime.path()).await.len(), 1);
    c.close().await;
    drop(server);
}
