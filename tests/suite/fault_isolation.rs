//! Faults that must stay in their session, through the real binary: a provider that resets,
//! talks garbage or hangs; children that are killed, flood stdout or never list their
//! tools; a workspace of hostile files; a huge error message; a result past the transport's
//! limit. Each ends with a clear error code (or a cut result) for that session and the
//! server still serving the others.

use crate::support;

use std::time::{Duration, Instant};

use mcp_agents::testkit::{MockProvider, Step};
use serde_json::json;
use support::binary::{self, Generation};
use support::children::{
    self, agent, assert_no_process_left, processes_with, stdio_child, tagged_marker,
};
use support::run_kit::KEY;
use support::{ServerUnderTest, TestWorkspace};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_faults_fail_only_their_session() {
    // Separate mocks, so each session gets exactly its own faults.
    let resets = MockProvider::start(KEY).await.unwrap();
    let garbage = MockProvider::start(KEY).await.unwrap();
    let hangs = MockProvider::start(KEY).await.unwrap();
    let healthy = MockProvider::start(KEY).await.unwrap();
    resets.push(vec![Step::Drop; 5]);
    garbage.push(vec![
        Step::Raw {
            status: 200,
            headers: vec![],
            body: "\u{0}garbage{".into()
        };
        5
    ]);
    hangs.push([Step::Hang]);
    let ws = tempfile::tempdir().unwrap();
    for (name, mock) in [
        ("resets", &resets),
        ("garbage", &garbage),
        ("hangs", &hangs),
        ("healthy", &healthy),
    ] {
        let text = agent(mock, name, "", "").replace("mcp_servers:\n\n", "");
        children::write(ws.path(), &format!(".agents/agents/{name}.md"), &text);
    }
    let c = binary::stdio(ws.path(), Generation::Modern, &[]).await;
    let resets_id = c.spawn("resets", "t").await;
    let garbage_id = c.spawn("garbage", "t").await;
    let hangs_id = c.spawn("hangs", "t").await;
    for n in 0..5 {
        healthy.push([Step::text(&format!("fine {n}"))]);
        let id = c.spawn("healthy", "t").await;
        assert_eq!(
            c.wait(&[&id], 20_000).await["agents"][0]["result"],
            format!("fine {n}"),
            "the server keeps serving"
        );
    }
    let failed = c.wait(&[&resets_id, &garbage_id], 30_000).await;
    assert_eq!(failed["timed_out"], false, "{failed}");
    for (record, expected) in failed["agents"]
        .as_array()
        .unwrap()
        .iter()
        // The origin tried is named (issue 28, point 5).
        .zip([
            "the connection to 127.0.0.1 at http://127.0.0.1:",
            "not JSON",
        ])
    {
        assert_eq!(record["error"]["code"], "provider_error", "{record}");
        let message = record["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(expected) && message.contains("after 5 attempts"),
            "{message}"
        );
    }
    let hanging = c.wait(&[&hangs_id], 0).await["agents"][0].clone();
    assert_eq!(hanging["status"], "running");
    assert_eq!(hanging["activity"]["phase"], "provider_request");
    let remaining = hanging["activity"]["operation_timeout_remaining_ms"]
        .as_u64()
        .unwrap();
    assert!(
        remaining < 120_000 && remaining > 60_000,
        "the 120 s bound is counting down: {remaining}"
    );
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn child_faults_fail_or_inform_only_their_session() {
    let (killed_m, flood_m, silent_m) = (
        tagged_marker("killed"),
        tagged_marker("flood"),
        tagged_marker("silent"),
    );
    let s = TestWorkspace::new()
        .agent(".agents/agents/killed.md", |mock, _| {
            agent(mock, "killed", &stdio_child("fx", &[], &killed_m, ""), "")
        })
        // Skipping the 1 MiB of noise takes well under a second alone, but the debug build
        // under a loaded machine's full suite took over 3 s once.
        .agent(".agents/agents/flood.md", |mock, _| {
            let timeout = "      startup_timeout_sec: 10\n";
            let child = stdio_child("fx", &["--garbage"], &flood_m, timeout);
            agent(mock, "flood", &child, "")
        })
        .agent(".agents/agents/silent.md", |mock, _| {
            let timeout = "      startup_timeout_sec: 1\n";
            let child = stdio_child("fx", &["--hang-list"], &silent_m, timeout);
            agent(mock, "silent", &child, "")
        })
        .stdio()
        .await;
    a_child_killed_mid_call_is_heard_of(&s, &killed_m).await;
    noise_before_a_child_speaks_is_skipped(&s).await;
    a_child_that_never_lists_its_tools_fails_its_run(&s).await;
    for m in [&killed_m, &flood_m, &silent_m] {
        assert_no_process_left(m, 6).await;
    }
    s.close().await;
}

/// A child killed from outside in the middle of a call: the model hears of it.
async fn a_child_killed_mid_call_is_heard_of(s: &ServerUnderTest, marker: &str) {
    s.mock.push([
        Step::tool_call("fx__sleep", json!({"ms": 60_000})),
        Step::text("noticed"),
    ]);
    let id = s.spawn("killed", "t").await;
    s.wait_for_phase(&id, "tool_call").await;
    let pids = processes_with(marker);
    assert!(!pids.is_empty(), "the child runs during the call");
    for pid in &pids {
        // SAFETY: signalling a test child process.
        unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
    }
    let record = s.wait_one(&id, 30_000).await;
    assert_eq!(record["result"], "noticed", "{record}");
    let body = s.mock.requests().last().unwrap().body.to_string();
    assert!(
        body.contains("closed the connection during the call"),
        "{body}"
    );
}

/// 1 MiB of non-protocol bytes on stdout before the server speaks: skipped, and it works.
async fn noise_before_a_child_speaks_is_skipped(s: &ServerUnderTest) {
    s.mock.push([
        Step::tool_call("fx__echo", json!({"text": "through the noise"})),
        Step::text("heard"),
    ]);
    let id = s.spawn("flood", "t").await;
    let record = s.wait_one(&id, 30_000).await;
    assert_eq!(record["result"], "heard", "{record}");
    assert!(
        s.mock
            .requests()
            .last()
            .unwrap()
            .body
            .to_string()
            .contains("echo: through the noise")
    );
}

async fn a_child_that_never_lists_its_tools_fails_its_run(s: &ServerUnderTest) {
    for (name, expected) in [("silent", "MCP server fx did not list its tools within 1 s")] {
        let started = Instant::now();
        let id = s.spawn(name, "t").await;
        let record = s.wait_one(&id, 30_000).await;
        assert_eq!(record["status"], "failed", "{name}: {record}");
        assert_eq!(
            record["error"]["code"], "child_mcp_startup_error",
            "{name}: {record}"
        );
        assert!(
            record["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with(expected),
            "{name}: {record}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{name} took {:?}",
            started.elapsed()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspace_of_hostile_files_still_serves_its_valid_agent() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    children::write(
        root,
        ".agents/agents/valid.md",
        &agent(&mock, "valid", "", "").replace("mcp_servers:\n\n", ""),
    );
    let mut huge = String::from("---\nname: huge\ndescription: d\n---\n");
    huge.push_str(&"x".repeat(2 * 1024 * 1024));
    children::write(root, ".agents/agents/huge.md", &huge);
    children::write(
        root,
        ".agents/agents/nested.md",
        &format!(
            "---\nname: nested\ndescription: {}x{}\n---\nb\n",
            "[".repeat(200_000),
            "]".repeat(200_000)
        ),
    );
    let mut laughs = String::from("---\na: &a [x,x,x,x,x,x,x,x,x]\n");
    for (prev, name) in ('a'..='h').zip('b'..='i') {
        laughs.push_str(&format!(
            "{name}: &{name} [{}]\n",
            vec![format!("*{prev}"); 9].join(",")
        ));
    }
    laughs.push_str("name: laughs\ndescription: d\n---\nb\n");
    children::write(root, ".agents/agents/laughs.md", &laughs);
    children::write(
        root,
        ".claude/agents/binary.md",
        b"\xff\xfe\x00\x01"
            .iter()
            .map(|b| *b as char)
            .collect::<String>()
            .as_str(),
    );
    std::os::unix::fs::symlink("loop-a.md", root.join(".claude/agents/loop-b.md")).unwrap();
    std::os::unix::fs::symlink("loop-b.md", root.join(".claude/agents/loop-a.md")).unwrap();
    std::os::unix::fs::symlink("..", root.join(".claude/agents/up")).unwrap();
    std::os::unix::fs::symlink("/", root.join(".claude/agents/rootfs")).unwrap();

    let started = Instant::now();
    let c = binary::stdio(root, Generation::Modern, &[]).await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "startup took {:?}",
        started.elapsed()
    );
    let tools = c.tools().await;
    assert_eq!(
        tools[0].input_schema["properties"]["name"]["enum"],
        json!(["valid"])
    );
    mock.push([Step::text("still fine")]);
    let id = c.spawn("valid", "t").await;
    assert_eq!(c.wait_one(&id, 20_000).await["result"], "still fine");
    c.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_failed_response_message_is_quoted_in_1000_characters() {
    let s = ServerUnderTest::stdio().await;
    s.mock.push([Step::json(
        200,
        json!({"id": "resp_1", "object": "response", "status": "failed", "output": [],
               "error": {"code": "invalid_prompt", "message": "m".repeat(20 * 1024 * 1024)}}),
    )]);
    let id = s.spawn("worker", "t").await;
    // A 20 MiB message would make the record too large for the client to read at all.
    let record = tokio::time::timeout(Duration::from_secs(60), s.wait(&[&id], 30_000))
        .await
        .expect("the record is answered")["agents"][0]
        .clone();
    assert_eq!(record["error"]["code"], "provider_error");
    let message = record["error"]["message"].as_str().unwrap();
    assert!(
        message.chars().count() < 1200 && message.contains("mmmm"),
        "{} characters",
        message.chars().count()
    );
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_results_past_the_transport_limit_reach_the_model_cut_not_as_failures() {
    let (_http_child, http_url) = children::http_fixture(&[]).await;
    let ServerUnderTest {
        mock, c, ws: _ws, ..
    } = TestWorkspace::new()
        .marked("huge")
        .agent(".agents/agents/big.md", |mock, m| {
            let local = stdio_child("local", &[], m, "");
            let servers = format!("{local}{}", children::http_child("remote", &http_url));
            agent(mock, "big", &servers, "")
        })
        .stdio()
        .await;
    for (tool, bytes) in [
        ("local__huge", 20usize << 20),
        ("local__huge", 100 << 20),
        ("remote__huge", 40 << 20),
    ] {
        mock.push([
            Step::tool_call(tool, json!({"bytes": bytes})),
            Step::text("read it"),
        ]);
        let started = Instant::now();
        let id = c.spawn("big", "t").await;
        let record = c.wait_one(&id, 60_000).await;
        assert_eq!(record["result"], "read it", "{tool} {bytes}: {record}");
        assert!(
            started.elapsed() < Duration::from_secs(45),
            "{tool} {bytes}: took {:?}, as long as a timed-out call",
            started.elapsed()
        );
        let output = children::call_outputs(&mock).remove(0);
        assert_cut_not_failed(&output, &format!("{tool} {bytes}"));
    }
    c.close().await;
}

/// Fails unless `output` is a result cut to 1 MiB (and a marker) that keeps the start of its
/// text, not a failure (`what` says which).
fn assert_cut_not_failed(output: &str, what: &str) {
    let end = &output[output.len().saturating_sub(300)..];
    assert!(output.contains("[output truncated"), "{what}: {end}");
    assert!(
        output.len() <= 1024 * 1024 + 1024,
        "{what}: {} bytes reached the model",
        output.len()
    );
    assert!(
        !output.contains("timed out") && !output.contains("closed the connection"),
        "{what}: {end}"
    );
    assert!(
        output.starts_with("xxxxxxxx"),
        "{what}: the start of the text is kept"
    );
}

/// A 20 MiB result from an HTTP child, in an event stream or a JSON body, reaches the model
/// as a stdio child's does: the first 1 MiB of its text and a marker. Ordinary answers and
/// refusals, read the same way, reach it as they are.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_childs_oversized_result_shows_the_start_of_its_text() {
    let (_sse_child, sse_url) = children::http_fixture(&[]).await;
    let (_json_child, json_url) = children::http_fixture(&["--json-response"]).await;
    let servers = format!(
        "{}{}",
        children::http_child("sse", &sse_url),
        children::http_child("json", &json_url)
    );
    let ServerUnderTest {
        mock, c, ws: _ws, ..
    } = TestWorkspace::new()
        .agent(".agents/agents/big.md", |mock, _| {
            agent(mock, "big", &servers, "")
        })
        .stdio()
        .await;
    for server in ["sse", "json"] {
        mock.push([
            Step::tool_call(&format!("{server}__echo"), json!({"text": "hi"})),
            Step::tool_call(&format!("{server}__refuse"), json!({"bytes": 12})),
            Step::text("heard"),
        ]);
        let id = c.spawn("big", "t").await;
        let record = c.wait_one(&id, 60_000).await;
        assert_eq!(record["result"], "heard", "{server}: {record}");
        let requests = mock.requests();
        let outputs = |n: usize| requests[requests.len() - n].body.to_string();
        assert!(outputs(2).contains("echo: hi"), "{server}: {}", outputs(2));
        assert!(
            outputs(1).contains("refused the call: rrrrrrrrrrrr"),
            "{server}: {}",
            outputs(1)
        );
    }
    for tool in ["sse__huge", "json__huge"] {
        mock.push([
            Step::tool_call(tool, json!({"bytes": 20 << 20})),
            Step::text("read it"),
        ]);
        let id = c.spawn("big", "t").await;
        let record = c.wait_one(&id, 60_000).await;
        assert_eq!(record["result"], "read it", "{tool}: {record}");
        let output = children::call_outputs(&mock).pop().unwrap();
        let text = output.split("\n[output truncated").next().unwrap();
        assert!(
            text.len() > 1000 * 1024 && text.bytes().all(|b| b == b'x'),
            "{tool}: {} bytes of its text reached the model: {}",
            text.len(),
            &output[output.len().saturating_sub(300)..]
        );
        assert!(
            output.len() <= 1024 * 1024 && output.ends_with("the start of its text is shown]"),
            "{tool}: {}",
            &output[output.len().saturating_sub(300)..]
        );
    }
    c.close().await;
}
