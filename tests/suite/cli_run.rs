//! `mcp-agents run` and `mcp-agents demo` through the real binary: live activity on stderr,
//! the result on stdout, exit statuses, `--json`, and Ctrl-C stopping the agent and its
//! children.

use crate::support;

use std::process::Stdio;
use std::time::Duration;

use mcp_agents::testkit::{MockProvider, Step};
use serde_json::{Value, json};
use support::binary::{self, BIN};
use support::builders::FixtureAgent;
use support::children::{self, agent, assert_no_process_left};
use support::run_kit::KEY;
use support::{MockWorkspace, TestWorkspace};

async fn run(args: &[&str], dir: &std::path::Path) -> std::process::Output {
    tokio::process::Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env(binary::KEY_VAR, KEY)
        .env_remove("RUST_LOG")
        .output()
        .await
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_runs_offline_and_shows_its_activity() {
    let dir = tempfile::tempdir().unwrap();
    // No `mcp-agents` on PATH: the demo ran from a clone, and its closing hint begins with
    // the install line (issue 28).
    let out = tokio::process::Command::new(BIN)
        .arg("demo")
        .current_dir(dir.path())
        .env("PATH", "/nonexistent")
        .env_remove("RUST_LOG")
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!("{}\n", mcp_agents::cli::DEMO_RESULT)
    );
    let stderr = text(&out.stderr);
    for expected in [
        "child_mcp_startup · Starting MCP server workspace",
        "provider_request · Waiting for claude-sonnet-5-5 (turn 1 of 12)",
        "tool_call · Calling workspace.glob",
        // The second reply asks for two tools, which run at once (SPEC §6 step 3).
        "tool_call · Calling 2 tools at once: workspace.grep, workspace.read",
        "provider_request · Waiting for claude-sonnet-5-5 (turn 3 of 12)",
        "mcp-agents: reviewer completed in",
        "3 turns, 3 tool calls",
        // The next step: where to go from the demo, after installing.
        "First, `cargo install --locked --path .` in this clone puts mcp-agents on your PATH",
        "Next: in a repository with agent files",
        "`claude mcp add --scope project agents -e \
         MCP_AGENTS_DEFAULT_MODEL=anthropic/claude-sonnet-5-5 -- mcp-agents`",
        "docs/clients.md",
    ] {
        assert!(
            stderr.contains(expected),
            "missing {expected:?} in:\n{stderr}"
        );
    }
    // The model was given the real file of the bundled example workspace, read by the
    // workspace server: numbered lines, and grep's paths and line numbers.
    let file = mcp_agents::cli::EXAMPLE_WORKSPACE
        .iter()
        .find(|(path, _)| *path == "src/retry.py")
        .unwrap()
        .1;
    let line_8 = file.lines().nth(7).unwrap();
    assert_eq!(line_8, "    return min(cap, base * 2 ** attempt)");
    assert!(
        stderr.contains(&format!("         8\t{line_8}\n")),
        "{stderr}"
    );
    assert!(stderr.contains("    src/retry.py:6:def backoff(attempt, base=0.5, cap=8.0):\n"));
    // With `mcp-agents` on PATH (installed), no install line.
    let bin_dir = std::path::Path::new(BIN).parent().unwrap();
    let installed = tokio::process::Command::new(BIN)
        .arg("demo")
        .current_dir(dir.path())
        .env("PATH", bin_dir)
        .env_remove("RUST_LOG")
        .output()
        .await
        .unwrap();
    let installed = text(&installed.stderr);
    assert!(installed.contains("Next: in a repository"), "{installed}");
    assert!(!installed.contains("cargo install"), "{installed}");
    assert!(stderr.contains(
        "  workspace__glob {\"pattern\":\"*.py\",\"path\":\"src\"} (1 line):\n    src/retry.py\n"
    ));

    let out = run(&["demo", "--json"], dir.path()).await;
    let record: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(record["status"], "completed");
    assert_eq!(record["usage"]["tool_calls"], 3);
}

#[test]
fn the_bundled_example_workspace_is_the_one_in_examples() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/workspace");
    let mut on_disk = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                on_disk.push(path);
            }
        }
    }
    on_disk.sort();
    let bundled: Vec<_> = mcp_agents::cli::EXAMPLE_WORKSPACE
        .iter()
        .map(|(rel, text)| {
            let path = root.join(rel);
            assert_eq!(std::fs::read_to_string(&path).unwrap(), *text, "{rel}");
            path
        })
        .collect();
    assert_eq!(
        bundled, on_disk,
        "every file of examples/workspace is bundled, in order"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_prints_the_result_or_the_error_code() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = binary::workspace(&mock);
    let dir = ws.path().to_str().unwrap();

    mock.push([Step::text("All good.")]);
    let out = run(&["run", "--workspace", dir, "worker", "Do it."], ws.path()).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "All good.\n");
    assert!(
        text(&out.stderr).contains("[worker "),
        "plain activity lines when not a terminal"
    );

    mock.push([Step::openai_error(
        400,
        "invalid_request_error",
        None,
        "Bad model.",
    )]);
    let out = run(&["run", "--workspace", dir, "worker", "Do it."], ws.path()).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(
        text(&out.stderr).contains(
            "error: provider_error: 127.0.0.1 answered HTTP 400 invalid_request_error: Bad model."
        ),
        "{}",
        text(&out.stderr)
    );

    mock.push([Step::text("As JSON.")]);
    let out = run(&["run", "worker", "Do it.", "--json"], ws.path()).await;
    let record: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (record["status"].as_str(), record["result"].as_str()),
        (Some("completed"), Some("As JSON."))
    );

    let out = run(&["run", "nobody", "Do it."], ws.path()).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("error: unknown_agent: there is no agent named `nobody`"));

    // A refusal prints the tool's error shape with --json; `run` holds to the tool's rules.
    let out = run(&["run", "nobody", "Do it.", "--json"], ws.path()).await;
    let refusal: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(refusal["error"]["code"], "unknown_agent", "{refusal}");
    let out = run(&["run", "worker", " \n\t", "--json"], ws.path()).await;
    assert_eq!(out.status.code(), Some(1));
    let refusal: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(refusal["error"]["code"], "invalid_input", "{refusal}");
    assert_eq!(mock.requests().len(), 3, "the refused runs asked no model");

    // A workspace whose only definition was rejected says so instead of listing nothing.
    let broken = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(broken.path().join(".claude/agents")).unwrap();
    std::fs::write(broken.path().join(".claude/agents/a.md"), "no frontmatter").unwrap();
    let out = run(&["run", "a", "Do it."], broken.path()).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains(
            "there is no agent named `a`; this workspace has no usable agents; 1 definition \
             file was rejected (`mcp-agents check` says why)"
        ),
        "{}",
        text(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_stops_the_agent_and_its_children_and_prints_its_partial_result() {
    let sleeper = FixtureAgent::named("sleeper").args(&["--say", "child log line"]);
    let MockWorkspace { mock, marker, ws } = TestWorkspace::new()
        .marked("ctrlc")
        .with(sleeper)
        .written()
        .await;
    mock.push([Step::tool_call("fx__sleep", json!({"ms": 60_000})).with_text("Half way there.")]);
    let mut child = tokio::process::Command::new(BIN)
        .args(["run", "sleeper", "Sleep."])
        .current_dir(ws.path())
        .env(binary::KEY_VAR, KEY)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    for _ in 0..200 {
        if !children::processes_with(&marker).is_empty() && mock.requests().len() == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(
        !children::processes_with(&marker).is_empty() && mock.requests().len() == 1,
        "the agent's child runs and the model was asked before Ctrl-C"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(child.id().unwrap() as i32, libc::SIGINT) };
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(130));
    assert_no_process_left(&marker, 6).await;
    // SPEC §8.3: a child's stderr reaches ours, prefixed with its server name; never stdout.
    let (mut stdout, mut stderr) = (String::new(), String::new());
    use tokio::io::AsyncReadExt;
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .await
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .await
        .unwrap();
    assert!(stderr.contains("[fx] child log line\n"), "{stderr}");
    assert!(!stdout.contains("child log line"), "{stdout}");
    // SPEC §4.2: Ctrl-C stops the run as the parent's `stop` does, and its work so far is
    // printed where a result would be.
    assert_eq!(stdout, "Half way there.\n");
    assert!(
        stderr.contains("error: cancelled: interrupted from the terminal (Ctrl-C)\n"),
        "{stderr}"
    );
}

/// Runs the binary with `args` in `dir` and fails unless it exits with 1; its stderr.
async fn run_failed(args: &[&str], dir: &std::path::Path) -> String {
    let out = run(args, dir).await;
    assert_eq!(out.status.code(), Some(1));
    text(&out.stderr)
}

async fn run_with_stdin(args: &[&str], dir: &std::path::Path, stdin: &str) -> std::process::Output {
    use tokio::io::AsyncWriteExt;
    let mut child = tokio::process::Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env(binary::KEY_VAR, KEY)
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.as_bytes()).await.unwrap();
    drop(input);
    child.wait_with_output().await.unwrap()
}

/// SPEC §2 (issue 16): a rejected name says which file and why; a typo gets "did you mean";
/// `run` shows only the warnings about the agent it runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_explains_names_it_cannot_run_and_shows_only_its_agents_warnings() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = binary::workspace(&mock);
    let write = |rel: &str, text: &str| children::write(ws.path(), rel, text);
    write(
        ".claude/agents/a.md",
        "---\nname: a-model\ndescription: d\nmodel: sonnet\nhooks:\n  Stop: []\n---\nDo.\n",
    );
    write(".claude/agents/broken.md", "no frontmatter at all");
    write(
        ".claude/agents/noisy.md",
        &format!(
            "---\nname: noisy\ndescription: d\nmodel: m\nmodel_provider: custom\nbase_url: {}\n\
             env_key: {}\nwire_api: responses\nmemory: user\n---\nDo.\n",
            mock.responses_base_url(),
            binary::KEY_VAR
        ),
    );

    let stderr = run_failed(&["run", "a-model", "Do it."], ws.path()).await;
    assert_eq!(
        stderr.lines().collect::<Vec<_>>(),
        [
            "error: unknown_agent: the agent `a-model` is defined in .claude/agents/a.md, which \
          was rejected: `hooks` is not supported: hooks enforce policy that this runtime does \
          not run, so the agent would act without it"
        ],
        "one line, naming the file and the reason"
    );

    let out = run(&["run", "wroker", "Do it."], ws.path()).await;
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with(
            "error: unknown_agent: there is no agent named `wroker`; did you mean `worker`?"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("2 definition files were rejected"),
        "{stderr}"
    );
    assert!(!stderr.contains("warning:"), "{stderr}");

    mock.push([Step::text("Fine."), Step::text("Also fine.")]);
    let out = run(&["run", "worker", "Do it."], ws.path()).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        !text(&out.stderr).contains("warning:"),
        "other files' warnings are check's: {}",
        text(&out.stderr)
    );
    let out = run(&["run", "noisy", "Do it."], ws.path()).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("warning:"))
        .collect();
    assert_eq!(
        warnings,
        ["warning: .claude/agents/noisy.md: `memory` is ignored: this runtime has no equivalent"]
    );
}

/// SPEC §2: `TASK` of `-` reads the task from standard input.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dash_reads_the_task_from_standard_input() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = binary::workspace(&mock);
    mock.push([Step::text("Read it.")]);
    let task = "Summarize this:\nline one\nline two\n";
    let out = run_with_stdin(&["run", "worker", "-"], ws.path(), task).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let body = mock.requests()[0].body.to_string();
    assert!(
        body.contains("Summarize this:\\nline one\\nline two"),
        "the task sent is stdin's: {body}"
    );
    assert!(!body.contains("\"-\""), "{body}");
}

/// In a terminal the advice is about the shell, not an MCP client or a server restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_says_what_to_do_in_the_shell() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let ws = binary::workspace(&mock);
    children::write(
        ws.path(),
        ".agents/agents/keyless.md",
        &format!(
            "---\nname: keyless\ndescription: d\nmodel: m\nmodel_provider: custom\nbase_url: {}\n\
             env_key: MCP_AGENTS_TEST_UNSET_KEY\nwire_api: responses\n---\nDo.\n",
            mock.responses_base_url()
        ),
    );
    children::write(
        ws.path(),
        ".agents/agents/unskilled.md",
        &format!(
            "---\nname: unskilled\ndescription: d\nmodel: m\nmodel_provider: custom\nbase_url: {}\n\
             env_key: {}\nwire_api: responses\nskills: [styel]\n---\nDo.\n",
            mock.responses_base_url(),
            binary::KEY_VAR
        ),
    );
    let stderr = run_failed(&["run", "keyless", "Do it."], ws.path()).await;
    assert!(
        stderr.contains(
            "error: missing_credential: the environment variable MCP_AGENTS_TEST_UNSET_KEY \
             (this agent's key) is not set; set it in this shell \
             (export MCP_AGENTS_TEST_UNSET_KEY=…) and run the command again"
        ),
        "{stderr}"
    );
    let out = run(&["run", "unskilled", "Do it."], ws.path()).await;
    let stderr = text(&out.stderr);
    assert!(stderr.contains("error: skill_not_found:"), "{stderr}");
    assert!(stderr.contains("did you mean `style`?"), "{stderr}");
    assert!(stderr.contains("run the command again"), "{stderr}");
    for wording in ["restart", "spawn or resume", "MCP client"] {
        assert!(!stderr.contains(wording), "{wording}: {stderr}");
    }

    // Issue 28, point 6: a child server's unset `${VAR}` is said before the run, for this
    // shell (the server says it for each client; suite::child_startup).
    children::write(
        ws.path(),
        ".agents/agents/childless.md",
        &agent(
            &mock,
            "childless",
            "    remote:\n      url: http://127.0.0.1:9/mcp\n      headers:\n        \
             Authorization: \"Bearer ${MCP_AGENTS_TEST_NEVER_SET}\"\n",
            "",
        ),
    );
    let stderr = run_failed(&["run", "childless", "Do it."], ws.path()).await;
    assert!(
        stderr.contains(
            "error: child_mcp_startup_error: agent `childless` (.agents/agents/childless.md) \
             needs the environment variable MCP_AGENTS_TEST_NEVER_SET (mcp_servers.remote \
             header Authorization), which is not set; set it in this shell \
             (export MCP_AGENTS_TEST_NEVER_SET=…) and run the command again"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("MCP client"), "{stderr}");
    assert!(mock.requests().is_empty());
}
