//! The built-in workspace tools against ripgrep's `rg` on the same input (SPEC §8.6).
//!
//! - `grep_repo/*`: the regex `fn [a-z_]+\(` over this repository's own tree, honouring its
//!   `.gitignore` (so `target/` is left out), every match printed with its path and line
//!   number: `grep` with `limit: 10000` (more than the matches, so nothing is left out; the
//!   tree passed 2,000 of them in issue 29's round).
//! - `read_10k_lines/*`: a generated file of 10,000 lines of 80 characters, every line
//!   printed with its number: `read` with `limit: 10000`, and `rg -n '' FILE`.
//!
//! - `change/*`: what the read-before-edit rule costs and what a change costs, in process
//!   (`WorkspaceTools::call_now`, the server's own calls): `read` of the first 100 lines of
//!   a 16 MiB file without the run's memory (`read_file`, which stops after the lines) and
//!   with it (the server's `read`, which hashes the whole file for a later `edit`); one
//!   `edit` of a 1 MiB file (read it, check its hash, replace it atomically and synced), and
//!   one `write` of 1 MiB over it.
//!
//! Each group measures the tool in process (the work the child does for one call), the
//! tool through MCP (a call over stdio to a running `mcp-agents workspace-tools`, as a run
//! makes it), `rg` as a process (its start included, as a shell would run it), and `rg
//! --version` (the start alone). `rg` is taken from `$RG`, else from `PATH`; without it
//! the `rg` rows are skipped, with a note.
//!
//! Run: `cargo bench --bench workspace_tools`. Results go to docs/performance.md.
// Tests and benchmarks may unwrap: a failure there is the report. They are binaries, with no
// face for `pub` to mark (Cargo.toml's lints).
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_agents::workspace::WorkspaceRoot;
use mcp_agents::workspace::{GrepMode, GrepRequest, ReadRequest, grep_files, read_file};
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const PATTERN: &str = r"fn [a-z_]+\(";

#[derive(Clone)]
struct Client;
impl ClientHandler for Client {}

fn rg() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("RG") {
        return Some(PathBuf::from(path));
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join("rg"))
        .find(|path| path.is_file())
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A running `mcp-agents workspace-tools DIR` and a client of it.
fn serve(runtime: &tokio::runtime::Runtime, dir: &Path) -> RunningService<RoleClient, Client> {
    runtime.block_on(async {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp-agents"));
        command.arg("workspace-tools").arg(dir);
        let transport = TokioChildProcess::new(command).unwrap();
        Client
            .serve_with_lifecycle(
                transport,
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            )
            .await
            .unwrap()
    })
}

fn call(
    runtime: &tokio::runtime::Runtime,
    client: &RunningService<RoleClient, Client>,
    tool: &str,
    arguments: Value,
) -> usize {
    let params = CallToolRequestParams::new(tool.to_owned())
        .with_arguments(arguments.as_object().cloned().unwrap());
    let result = runtime.block_on(client.call_tool(params)).unwrap();
    assert_ne!(result.is_error, Some(true));
    result.content[0].as_text().unwrap().text.len()
}

fn rg_run(rg: &Path, args: &[&str], dir: &Path) {
    let status = Command::new(rg)
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
}

fn grep_repo(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let root = WorkspaceRoot::open(&repo()).unwrap();
    let request = GrepRequest {
        pattern: PATTERN.to_owned(),
        path: String::new(),
        glob: None,
        mode: GrepMode::Content,
        case_insensitive: false,
        literal: false,
        context: 0,
        limit: 10_000,
    };
    let answer = grep_files(&root, &request, &CancellationToken::new()).unwrap();
    let lines = answer.structured["total_matching_lines"].as_u64().unwrap();
    assert!(lines < 10_000, "every match is shown");
    eprintln!(
        "grep_repo: {lines} matching lines in {} files",
        answer.structured["total_matching_files"]
    );
    let mut group = c.benchmark_group("grep_repo");
    group.measurement_time(Duration::from_secs(10));
    group.bench_function("workspace_in_process", |b| {
        b.iter(|| grep_files(&root, &request, &CancellationToken::new()).unwrap())
    });
    let client = serve(&runtime, &repo());
    let arguments = json!({"pattern": PATTERN, "limit": 2000});
    group.bench_function("workspace_over_mcp", |b| {
        b.iter(|| call(&runtime, &client, "grep", arguments.clone()))
    });
    match rg() {
        Some(rg) => {
            group.bench_function("rg", |b| b.iter(|| rg_run(&rg, &["-n", PATTERN], &repo())));
            group.bench_function("rg_sorted", |b| {
                b.iter(|| rg_run(&rg, &["-n", "--sort", "path", PATTERN], &repo()))
            });
            group.bench_function("rg_start_only", |b| {
                b.iter(|| rg_run(&rg, &["--version"], &repo()))
            });
        }
        None => eprintln!("grep_repo: no `rg` on PATH or in $RG; its rows are skipped"),
    }
    group.finish();
    runtime.block_on(async {
        let _ = client.cancel().await;
    });
}

fn read_10k_lines(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let text: String = (0..10_000)
        .map(|i| {
            format!(
                "{i:>6} {}\n",
                "lorem ipsum dolor sit amet ".repeat(3).trim_end()
            )
        })
        .collect();
    std::fs::write(dir.path().join("big.txt"), text).unwrap();
    let root = WorkspaceRoot::open(dir.path()).unwrap();
    let request = ReadRequest::new("big.txt", Some(1), Some(10_000));
    let answer = read_file(&root, &request, &CancellationToken::new()).unwrap();
    assert_eq!(
        answer.structured["last_line"], 10_000,
        "every line is shown"
    );
    let mut group = c.benchmark_group("read_10k_lines");
    group.bench_function("workspace_in_process", |b| {
        b.iter(|| read_file(&root, &request, &CancellationToken::new()).unwrap())
    });
    let client = serve(&runtime, dir.path());
    let arguments = json!({"path": "big.txt", "limit": 10_000});
    group.bench_function("workspace_over_mcp", |b| {
        b.iter(|| call(&runtime, &client, "read", arguments.clone()))
    });
    match rg() {
        Some(rg) => {
            group.bench_function("rg", |b| {
                b.iter(|| rg_run(&rg, &["-n", "", "big.txt"], dir.path()))
            });
            group.bench_function("rg_start_only", |b| {
                b.iter(|| rg_run(&rg, &["--version"], dir.path()))
            });
        }
        None => eprintln!("read_10k_lines: no `rg` on PATH or in $RG; its rows are skipped"),
    }
    group.finish();
    runtime.block_on(async {
        let _ = client.cancel().await;
    });
}

fn change(c: &mut Criterion) {
    use mcp_agents::workspace::WorkspaceTools;
    let dir = tempfile::tempdir().unwrap();
    let line = format!("{}\n", "lorem ipsum dolor sit amet ".repeat(3).trim_end());
    let big: String = line.repeat(16 * 1024 * 1024 / line.len());
    std::fs::write(dir.path().join("big.txt"), &big).unwrap();
    let mib: String = line.repeat(1024 * 1024 / line.len());
    std::fs::write(dir.path().join("mib.txt"), format!("FIRST\n{mib}")).unwrap();
    let root = WorkspaceRoot::open(dir.path()).unwrap();
    let tools = WorkspaceTools::new(WorkspaceRoot::open(dir.path()).unwrap());
    let ok = |result: rmcp::model::CallToolResult| {
        assert_ne!(result.is_error, Some(true), "{result:?}");
    };
    let mut group = c.benchmark_group("change");
    group.sample_size(20);
    let request = ReadRequest::new("big.txt", Some(1), Some(100));
    group.bench_function("read_100_lines_of_16mib_without_memory", |b| {
        b.iter(|| read_file(&root, &request, &CancellationToken::new()).unwrap())
    });
    group.bench_function("read_100_lines_of_16mib_remembered", |b| {
        b.iter(|| ok(tools.call_now("read", json!({"path": "big.txt", "limit": 100}))))
    });
    ok(tools.call_now("read", json!({"path": "mib.txt", "limit": 1})));
    let mut first = true;
    group.bench_function("edit_1mib", |b| {
        b.iter(|| {
            let (old, new) = if first {
                ("FIRST", "SECOND")
            } else {
                ("SECOND", "FIRST")
            };
            first = !first;
            ok(tools.call_now(
                "edit",
                json!({"path": "mib.txt", "old_text": old, "new_text": new}),
            ))
        })
    });
    let content = format!("FIRST\n{mib}");
    group.bench_function("write_1mib", |b| {
        b.iter(|| ok(tools.call_now("write", json!({"path": "mib.txt", "content": content}))))
    });
    group.finish();
}

criterion_group!(benches, grep_repo, read_10k_lines, change);
criterion_main!(benches);
