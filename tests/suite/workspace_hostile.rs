//! A hostile workspace and hostile arguments against the real `mcp-agents workspace-tools`
//! server (issue 23): ignore files that are links to devices or to the server's own input,
//! FIFOs, rules planted above the workspace, patterns built to exhaust memory, a file
//! swapped for a FIFO mid-call, an 8 GiB file, answers that would pass 1 MiB as JSON, links
//! out of the workspace, and names that read backwards. Every call must answer, in time,
//! within the cap, and say only what the workspace holds.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rmcp::model::CallToolResult;
use serde_json::{Value, json};

use crate::support::TempWorkspace;
use crate::support::workspace::{Tools, serve, workspace_children, write};

/// Longer than any of these calls takes now; a call that blocks never ends.
const ANSWER_BOUND: Duration = Duration::from_secs(30);

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "{path:?}");
}

/// A call that must answer within [`ANSWER_BOUND`].
async fn answered(tools: &Tools, tool: &str, arguments: Value) -> CallToolResult {
    tokio::time::timeout(ANSWER_BOUND, tools.call(tool, arguments.clone()))
        .await
        .unwrap_or_else(|_| panic!("{tool} {arguments}: no answer in {ANSWER_BOUND:?}"))
}

fn text_of(result: &CallToolResult) -> &str {
    &result.content[0].as_text().unwrap().text
}

/// The files a `glob` of everything finds, sorted, and the notes of its answer.
async fn everything(tools: &Tools) -> (Vec<String>, Vec<String>) {
    let result = answered(tools, "glob", json!({"pattern": "*"})).await;
    assert_ne!(result.is_error, Some(true), "{}", text_of(&result));
    let (notes, mut files): (Vec<String>, Vec<String>) = text_of(&result)
        .lines()
        .map(str::to_owned)
        .partition(|line| line.starts_with('['));
    files.sort();
    (files, notes)
}

/// Peak resident memory of the workspace server of `ws`, in MiB.
fn peak_mib(ws: &Path) -> u64 {
    let pids = workspace_children(ws);
    assert_eq!(pids.len(), 1, "{pids:?}");
    let status = std::fs::read_to_string(format!("/proc/{}/status", pids[0])).unwrap();
    let kib: u64 = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap();
    kib / 1024
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ignore_file_linked_to_a_device_or_to_stdin_is_not_read() {
    let ws = TempWorkspace::new();
    let dir = ws.path();
    write(dir, "a.rs", "fn a() {}\n");
    write(dir, "zero/b.rs", "fn b() {}\n");
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero/.gitignore")).unwrap();
    write(dir, "stdin/c.rs", "fn c() {}\n");
    std::os::unix::fs::symlink("/dev/stdin", dir.join("stdin/.ignore")).unwrap();
    write(dir, "stdin/.gitignore", "*.tmp\n");
    write(dir, "stdin/d.tmp", "x\n");
    let tools = serve(dir).await;
    let (files, notes) = everything(&tools).await;
    assert_eq!(files, ["a.rs", "stdin/c.rs", "zero/b.rs"], "{notes:?}");
    assert_eq!(
        notes,
        [
            "[`stdin/.ignore` is a symbolic link: ignore files are read only as regular files \
             inside the workspace, so its rules were not applied]",
            "[`zero/.gitignore` is a symbolic link: ignore files are read only as regular files \
             inside the workspace, so its rules were not applied]",
        ]
    );
    // Nothing was read from the server's own input: the next calls are answered.
    let result = answered(&tools, "grep", json!({"pattern": "fn "})).await;
    assert_eq!(
        text_of(&result)
            .lines()
            .filter(|l| l.contains(":1:fn"))
            .count(),
        3
    );
    assert!(peak_mib(dir) < 200, "{} MiB", peak_mib(dir));
    let _ = tools.client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_named_gitignore_in_the_workspace_or_above_it_blocks_nothing() {
    for fifo_above in [false, true] {
        let top = tempfile::tempdir().unwrap();
        let ws = top.path().join("project");
        write(&ws, "src/a.rs", "fn a() {}\n");
        if fifo_above {
            mkfifo(&top.path().join(".gitignore"));
            mkfifo(&top.path().join(".ignore"));
        } else {
            mkfifo(&ws.join(".gitignore"));
            mkfifo(&ws.join("src/.ignore"));
        }
        let tools = serve(&ws).await;
        for _ in 0..2 {
            let (files, notes) = everything(&tools).await;
            assert_eq!(files, ["src/a.rs"]);
            if fifo_above {
                assert!(notes.is_empty(), "{notes:?}");
            } else {
                assert_eq!(notes.len(), 2, "{notes:?}");
                assert!(notes[0].starts_with("[`.gitignore` is a FIFO, not a regular file"));
            }
            let result = answered(&tools, "grep", json!({"pattern": "fn a"})).await;
            assert!(text_of(&result).starts_with("src/a.rs:1:fn a() {}\n"));
        }
        let _ = tools.client.cancel().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ignore_files_above_the_workspace_are_not_applied() {
    // A shared directory three levels up (as the system's temporary directory is) with
    // rules that would hide files, and a workspace that is a git repository of its own.
    let top = tempfile::tempdir().unwrap();
    write(top.path(), ".gitignore", "*.rs\n");
    write(top.path(), "a/.ignore", "*.md\n");
    write(top.path(), "a/b/.gitignore", "notes/\n");
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "rules", "*.txt\n");
    let ws = top.path().join("a/b/ws");
    write(&ws, ".git/HEAD", "ref: refs/heads/main\n");
    write(&ws, "src/main.rs", "fn main() {}\n");
    write(&ws, "README.md", "# ws\n");
    write(&ws, "notes/n.txt", "note\n");
    write(&ws, "target/out.o", "x\n");
    write(&ws, ".gitignore", "target/\n");
    // A link to rules outside the workspace is not read either.
    std::os::unix::fs::symlink(outside.path().join("rules"), ws.join("notes/.ignore")).unwrap();
    let tools = serve(&ws).await;
    let (files, notes) = everything(&tools).await;
    assert_eq!(files, ["README.md", "notes/n.txt", "src/main.rs"]);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].starts_with("[`notes/.ignore` is a symbolic link"));
    let _ = tools.client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_patterns_are_refused_at_once_in_little_memory() {
    let ws = TempWorkspace::new();
    ws.write("a.txt", "alpha\n");
    let tools = serve(ws.path()).await;
    let stars = "*".repeat(1_000_000);
    let started = Instant::now();
    for (tool, arguments, why) in [
        (
            "glob",
            json!({"pattern": stars}),
            "the glob is 1000000 bytes long; a glob is at most 1024 bytes",
        ),
        (
            "grep",
            json!({"pattern": "alpha", "glob": stars}),
            "the glob is 1000000 bytes long; a glob is at most 1024 bytes",
        ),
        (
            "grep",
            json!({"pattern": r"(?:\w{50}){100}"}),
            "exceeds size limit",
        ),
        (
            "grep",
            json!({"pattern": "(".repeat(1_000_000)}),
            "the pattern is 1000000 bytes long; a pattern is at most 4096 bytes",
        ),
        (
            "grep",
            json!({"pattern": format!("{}(", "a".repeat(4000))}),
            "error: unclosed group",
        ),
    ] {
        let result = answered(&tools, tool, arguments).await;
        let text = text_of(&result);
        assert_eq!(
            result.is_error,
            Some(true),
            "{tool}: {}",
            &text[..200.min(text.len())]
        );
        assert!(text.contains(why), "{tool}: {text}");
        assert!(text.len() < 1024, "{tool}: a {}-byte error", text.len());
    }
    // Eight such calls at once, as one model reply could make them.
    let calls = (0..8).map(|_| answered(&tools, "glob", json!({"pattern": stars})));
    for result in futures_util::future::join_all(calls).await {
        assert_eq!(result.is_error, Some(true));
    }
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert!(peak_mib(ws.path()) < 200, "{} MiB", peak_mib(ws.path()));
    // And the server still answers.
    let result = answered(&tools, "grep", json!({"pattern": "alp.a"})).await;
    assert_eq!(text_of(&result), "a.txt:1:alpha\n");
    let _ = tools.client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_swapped_for_fifos_never_block_read_or_grep() {
    const FILES: usize = 20;
    let ws = TempWorkspace::new();
    let dir = ws.path().canonicalize().unwrap();
    let name = |i: usize| format!("f{i:02}.txt");
    for i in 0..FILES {
        write(&dir, &name(i), "needle\n");
    }
    let tools = serve(&dir).await;
    // Every file turns into a FIFO, then every one back into a regular file, over and over,
    // each swap atomic (a rename): what a directory listing or a check said a file is, the
    // open that follows often finds otherwise.
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = std::thread::spawn({
        let stop = Arc::clone(&stop);
        let dir = dir.clone();
        move || {
            let mut rounds = 0u64;
            while !stop.load(Ordering::Relaxed) {
                for i in 0..FILES {
                    mkfifo(&dir.join("swap.fifo"));
                    std::fs::rename(dir.join("swap.fifo"), dir.join(name(i))).unwrap();
                }
                for i in 0..FILES {
                    std::fs::write(dir.join("swap.new"), "needle\n").unwrap();
                    std::fs::rename(dir.join("swap.new"), dir.join(name(i))).unwrap();
                }
                rounds += 1;
            }
            rounds
        }
    });
    let until = Instant::now() + Duration::from_secs(2);
    let (mut calls, mut shown) = (0, 0);
    while Instant::now() < until {
        for (tool, arguments) in [
            ("grep", json!({"pattern": "needle"})),
            ("read", json!({"path": "f00.txt"})),
            ("grep", json!({"pattern": "needle", "path": "f01.txt"})),
        ] {
            let answer = tokio::time::timeout(Duration::from_secs(10), tools.call(tool, arguments));
            let Ok(result) = answer.await else {
                stop.store(true, Ordering::Relaxed);
                panic!("{tool} blocked on a FIFO after {calls} calls");
            };
            calls += 1;
            let text = text_of(&result);
            if text.contains("needle") {
                shown += 1;
            } else if result.is_error == Some(true) {
                assert!(text.contains("not a regular file"), "{tool}: {text}");
            } else {
                // The walk met only FIFOs, and left them out.
                assert!(text.starts_with("[no matches"), "{tool}: {text}");
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    let rounds = swapper.join().unwrap();
    assert!(
        rounds > 10 && shown > 0,
        "{rounds} rounds, {calls} calls, {shown} shown"
    );
    let _ = tools.client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_lines_of_an_8_gib_file_are_read_without_reading_the_rest() {
    let ws = TempWorkspace::new();
    // Text past the binary sniff, then a hole to 8 GiB (NUL bytes if anything read them).
    let text: String = (1..=1000).map(|i| format!("line {i:>4}\n")).collect();
    ws.write("huge.log", &text);
    std::fs::File::options()
        .write(true)
        .open(ws.path().join("huge.log"))
        .unwrap()
        .set_len(8 << 30)
        .unwrap();
    let tools = serve(ws.path()).await;
    let started = Instant::now();
    let (text, structured) = tools
        .text("read", json!({"path": "huge.log", "limit": 10}))
        .await;
    assert!(
        text.ends_with(
            "    10\tline   10\n[lines 1-10 shown; more lines follow; continue with offset 11]\n"
        ),
        "{text}"
    );
    assert_eq!(structured["total_lines"], Value::Null);
    assert_eq!(structured["next_offset"], 11);
    assert!(started.elapsed() < ANSWER_BOUND, "{:?}", started.elapsed());
    let _ = tools.client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_stays_within_one_mebibyte_as_json() {
    let ws = TempWorkspace::new();
    // 1 MiB of control bytes (six bytes each in JSON), in lines of 1,000.
    let line = format!("{}\n", "\u{1}".repeat(1000));
    ws.write("controls.txt", line.repeat(1048));
    write(
        ws.path(),
        "quotes.txt",
        format!("{}\n", "\"\\".repeat(500)).repeat(1048),
    );
    let tools = serve(ws.path()).await;
    let bad_regex = format!("({}", "a".repeat(1_000_000));
    let long_path = "a/".repeat(500_000);
    for (tool, arguments) in [
        ("read", json!({"path": "controls.txt"})),
        ("read", json!({"path": "quotes.txt"})),
        ("grep", json!({"pattern": ".", "limit": 2000})),
        (
            "grep",
            json!({"pattern": ".", "limit": 2000, "output_mode": "count"}),
        ),
        ("grep", json!({"pattern": bad_regex})),
        ("read", json!({"path": long_path})),
        ("glob", json!({"pattern": "*", "path": long_path})),
    ] {
        let result = answered(&tools, tool, arguments).await;
        let wire = serde_json::to_string(&result).unwrap().len();
        assert!(wire <= 1024 * 1024, "{tool}: {wire} bytes as JSON");
    }
    let (text, structured) = tools
        .text("grep", json!({"pattern": ".", "limit": 2000}))
        .await;
    assert!(text.contains("[output cut at 1 MiB, the most a tool may answer]"));
    assert_eq!(structured["total_matching_lines"], 2 * 1048);
    let _ = tools.client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_out_of_the_workspace_say_nothing_of_what_is_out_there() {
    let ws = TempWorkspace::new();
    let outside = tempfile::tempdir().unwrap();
    let dir = ws.path();
    write(outside.path(), "exists.txt", "secret\n");
    let link = |target: &Path, name: &str| std::os::unix::fs::symlink(target, dir.join(name));
    link(&outside.path().join("exists.txt"), "to-existing").unwrap();
    link(&outside.path().join("missing.txt"), "to-missing").unwrap();
    link(&outside.path().join("no-dir/x"), "to-missing-dir").unwrap();
    link(Path::new("to-missing"), "via-inside-link").unwrap();
    link(Path::new("gone"), "dangling").unwrap();
    let tools = serve(dir).await;
    let (text, _) = tools.text("list", json!({})).await;
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(
        rows,
        [
            "symlink            -  dangling -> nothing (a broken link)",
            "symlink            -  to-existing -> outside the workspace",
            "symlink            -  to-missing -> outside the workspace",
            "symlink            -  to-missing-dir -> outside the workspace",
            "symlink            -  via-inside-link -> outside the workspace",
        ]
    );
    // `read` answers the same whether the target exists or not.
    for name in [
        "to-existing",
        "to-missing",
        "to-missing-dir",
        "via-inside-link",
    ] {
        assert_eq!(
            tools.refusal("read", json!({"path": name})).await,
            format!(
                "`{name}` leads outside the workspace through a symbolic link: the workspace \
                 tools reach only files inside the workspace; name paths relative to the \
                 workspace root"
            )
        );
    }
    let _ = tools.client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_with_bidi_and_invisible_characters_reach_the_model_escaped() {
    let ws = TempWorkspace::new();
    // Reads as "invoice_exe.pdf" where bidi is honoured; it is an .exe file.
    ws.write("invoice_\u{202E}fdp.exe", "needle\n");
    ws.write("zero\u{200B}width.txt", "needle\n");
    let tools = serve(ws.path()).await;
    let escaped = ["invoice_\\u{202e}fdp.exe", "zero\\u{200b}width.txt"];
    for (tool, arguments) in [
        ("list", json!({})),
        ("glob", json!({"pattern": "*"})),
        ("grep", json!({"pattern": "needle"})),
        (
            "grep",
            json!({"pattern": "needle", "output_mode": "files_with_matches"}),
        ),
    ] {
        let (text, structured) = tools.text(tool, arguments).await;
        for name in escaped {
            assert!(text.contains(name), "{tool}: {text}");
        }
        let everything = format!("{text}{structured}");
        assert!(
            !everything.contains('\u{202E}') && !everything.contains('\u{200B}'),
            "{tool}: {everything}"
        );
    }
    let _ = tools.client.cancel().await;
}

/// The tools of a small hostile workspace (the fuzz target's), served in process.
fn hostile_tools() -> &'static mcp_agents::workspace::WorkspaceTools {
    use std::sync::OnceLock;
    static TOOLS: OnceLock<(tempfile::TempDir, mcp_agents::workspace::WorkspaceTools)> =
        OnceLock::new();
    let (_, tools) = TOOLS.get_or_init(|| {
        let ws = tempfile::tempdir().unwrap();
        let dir = ws.path();
        write(dir, "src/main.rs", "fn main() {\n    let limit = 8;\n}\n");
        write(dir, ".gitignore", "target/\n*.log\n!keep.log\n");
        write(dir, "target/out.rs", "fn built() {}\n");
        write(dir, "keep.log", "kept\n");
        write(dir, "controls.txt", "\u{1}".repeat(4096));
        write(dir, "bin.dat", b"\x7fELF\x00\x01");
        write(dir, "invoice_\u{202E}fdp.exe", "payload\n");
        write(dir, "sub/a.txt", "a\n");
        mkfifo(&dir.join("sub/.ignore"));
        mkfifo(&dir.join("pipe"));
        std::os::unix::fs::symlink("/dev/zero", dir.join("src/.gitignore")).unwrap();
        std::os::unix::fs::symlink("/etc", dir.join("escape")).unwrap();
        std::os::unix::fs::symlink("loop", dir.join("loop")).unwrap();
        let tools = mcp_agents::workspace::WorkspaceTools::new(
            mcp_agents::workspace::WorkspaceRoot::open(dir).unwrap(),
        );
        (ws, tools)
    });
    tools
}

/// Text the model might send: ordinary paths and patterns, ways out, globs and regexes
/// near and past their caps, hidden characters, and anything else.
fn awkward_text() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    prop_oneof![
        Just(String::new()),
        Just("..".to_owned()),
        Just("escape/passwd".to_owned()),
        Just("/etc/passwd".to_owned()),
        Just("pipe".to_owned()),
        Just("loop".to_owned()),
        Just("sub".to_owned()),
        Just("*".repeat(1025)),
        Just("*".repeat(1024)),
        Just("a/".repeat(2049)),
        Just(r"(?:\w{50}){100}".to_owned()),
        Just(format!("({}", "a".repeat(4096))),
        Just("invoice_\u{202E}fdp.exe".to_owned()),
        "[a-z*?./{},\\[\\]!()|\\\\^$+-]{0,40}",
        any::<String>(),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Whatever the arguments, every tool answers (never a panic, never a block), within
    /// 1 MiB as JSON, and its text shows no right-to-left override unescaped; `edit` and
    /// `write` included, which never write through the links out (`escape` → /etc).
    #[test]
    fn any_arguments_get_a_bounded_answer(
        tool in 0..7usize,
        path in awkward_text(),
        pattern in awkward_text(),
        glob in awkward_text(),
        offset in proptest::prelude::any::<u64>(),
        limit in proptest::prelude::any::<u64>(),
        context in 0..30u64,
        mode in 0..3usize,
    ) {
        let tool = ["read", "list", "glob", "grep", "grep", "edit", "write"][tool];
        let mode = ["content", "files_with_matches", "count"][mode];
        let arguments = json!({
            "read": {"path": path, "offset": offset.max(1), "limit": limit.max(1)},
            "list": {"path": path},
            "glob": {"pattern": pattern, "path": path},
            "grep": {
                "pattern": pattern, "path": path, "glob": glob, "context": context,
                "limit": limit.clamp(1, 2000),
                "output_mode": mode,
            },
            // Changes land in the hostile workspace's temporary folder, or are refused. The
            // text written has no override (file contents are shown as they are).
            "edit": {"path": path, "old_text": pattern,
                     "new_text": glob.replace('\u{202E}', ""),
                     "replace_all": mode == "content"},
            "write": {"path": path, "content": pattern.replace('\u{202E}', "")},
        })[tool]
            .clone();
        let result = hostile_tools().call_now(tool, arguments);
        let answer = serde_json::to_value(&result).unwrap();
        let size = answer.to_string().len();
        proptest::prop_assert!(size <= 1024 * 1024, "{} bytes", size);
        let text = answer["content"][0]["text"].as_str().unwrap();
        proptest::prop_assert!(!text.contains('\u{202E}'), "{}", text);
    }
}
