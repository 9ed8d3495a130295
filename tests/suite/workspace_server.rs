//! `mcp-agents workspace-tools DIR` through the real binary, driven with the `rmcp` client
//! as a run drives it (2026-07-28 through `server/discover`): the six tools, their schemas
//! and annotations, what each of the four that read answers (`suite::workspace_changes` has
//! `edit` and `write`) (structured content checked against its output
//! schema), ignore rules, confinement, and the 1 MiB cap.

use std::path::Path;

use serde_json::json;

use crate::support::binary::BIN;
use crate::support::workspace::{Tools, project, serve, write};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn six_tools_with_their_hints_and_both_schemas_over_2026_07_28() {
    let (ws, _outside) = project();
    let tools = serve(ws.path()).await;
    let mut names: Vec<&str> = tools.listed.iter().map(|t| t.name.as_ref()).collect();
    names.sort();
    assert_eq!(names, ["edit", "glob", "grep", "list", "read", "write"]);
    assert_eq!(
        names,
        {
            let mut known = BuiltinServer::Workspace.tools().to_vec();
            known.sort();
            known
        },
        "definitions decide what agents get from the same list the server serves"
    );
    for tool in &tools.listed {
        let hints = tool.annotations.as_ref().expect("annotations");
        let changes = matches!(tool.name.as_ref(), "edit" | "write");
        assert_eq!(hints.read_only_hint, Some(!changes), "{}", tool.name);
        assert_eq!(hints.destructive_hint, Some(changes), "{}", tool.name);
        let known = BuiltinServer::Workspace.tool_hints(&tool.name);
        assert_eq!(
            (known.read_only, known.destructive),
            (hints.read_only_hint, hints.destructive_hint),
            "definitions decide what read-only agents get from the hints the server lists"
        );
        assert!(tool.output_schema.is_some(), "{}", tool.name);
        assert_eq!(tool.input_schema["type"], "object");
        assert!(
            tool.description.as_deref().unwrap_or("").len() > 150,
            "{} is described for a model",
            tool.name
        );
    }
    let read = tools.listed.iter().find(|t| t.name == "read").unwrap();
    assert_eq!(read.input_schema["required"], json!(["path"]));
    assert_eq!(
        read.input_schema["properties"]["offset"]["minimum"],
        json!(1)
    );
    let _ = tools.client.cancel().await;
}

use mcp_agents::definition::BuiltinServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_tool_answers_as_its_description_says() {
    let (ws, _outside) = project();
    let tools = serve(ws.path()).await;
    read_answers_a_range_of_lines(&tools).await;
    list_answers_kinds_sizes_and_links(&tools, ws.path()).await;
    grep_and_glob_answer_matches(&tools).await;
    bad_arguments_are_refused_with_what_to_do(&tools).await;
    let _ = tools.client.cancel().await;
}

async fn read_answers_a_range_of_lines(tools: &Tools) {
    let (text, structured) = tools
        .text(
            "read",
            json!({"path": "src/main.rs", "offset": 2, "limit": 2}),
        )
        .await;
    assert_eq!(
        text,
        "     2\t    let limit = 8;\n     3\t    run(limit);\n[lines 2-3 shown; more lines follow; continue with offset 4]\n"
    );
    assert_eq!(structured["next_offset"], 4);
}

/// Every entry, with its size or its link's target (hidden and ignored ones too).
async fn list_answers_kinds_sizes_and_links(tools: &Tools, dir: &Path) {
    let size = |rel: &str| std::fs::metadata(dir.join(rel)).unwrap().len().to_string();
    let (text, _) = tools.text("list", json!({"path": "src"})).await;
    let rows: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows,
        [
            vec!["file", size("src/main.rs").as_str(), "main.rs"],
            vec!["file", size("src/run.rs").as_str(), "run.rs"],
        ]
    );
    let (text, structured) = tools.text("list", json!({})).await;
    let rows: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    for entry in [
        vec!["file", size(".env").as_str(), ".env"],
        vec!["dir", "-", "src/"],
        vec!["dir", "-", "target/"],
        vec![
            "symlink",
            "-",
            "escape",
            "->",
            "outside",
            "the",
            "workspace",
        ],
        vec![
            "symlink",
            "-",
            "secret-link",
            "->",
            "outside",
            "the",
            "workspace",
        ],
    ] {
        assert!(rows.contains(&entry), "{entry:?} in\n{text}");
    }
    assert_eq!(
        structured["total"], 8,
        "hidden and ignored entries are listed: {text}"
    );
}

async fn grep_and_glob_answer_matches(tools: &Tools) {
    let (text, structured) = tools
        .text("grep", json!({"pattern": "limit", "glob": "*.rs"}))
        .await;
    assert_eq!(
        text,
        "src/main.rs:2:    let limit = 8;\nsrc/main.rs:3:    run(limit);\n\
         src/run.rs:1:pub fn run(limit: u32) {\nsrc/run.rs:2:    // TODO: use the limit\n"
    );
    assert_eq!(structured["total_matching_files"], 2);
    let (text, _) = tools
        .text(
            "grep",
            json!({"pattern": "todo", "case_insensitive": true, "context": 1, "path": "src/run.rs"}),
        )
        .await;
    assert_eq!(
        text,
        "src/run.rs-1-pub fn run(limit: u32) {\nsrc/run.rs:2:    // TODO: use the limit\nsrc/run.rs-3-}\n"
    );
    let (text, _) = tools
        .text("grep", json!({"pattern": "limit", "output_mode": "count"}))
        .await;
    assert_eq!(text, "README.md:1\nsrc/main.rs:2\nsrc/run.rs:2\n");

    let (text, _) = tools.text("glob", json!({"pattern": "**/*.rs"})).await;
    let mut found: Vec<&str> = text.lines().collect();
    found.sort();
    assert_eq!(found, ["src/main.rs", "src/run.rs"]);
}

async fn bad_arguments_are_refused_with_what_to_do(tools: &Tools) {
    let refusal = tools
        .refusal("grep", json!({"pattern": "run(", "path": "src"}))
        .await;
    assert!(
        refusal.contains("is not a valid regular expression"),
        "{refusal}"
    );
    let refusal = tools.refusal("read", json!({"path": "src"})).await;
    assert!(refusal.contains("is a directory; use `list`"), "{refusal}");
    // Arguments the schema does not allow are refused as a tool error naming them.
    let refusal = tools
        .refusal("read", json!({"file_path": "src/main.rs"}))
        .await;
    assert!(
        refusal.contains("unknown field `file_path`, expected one of `path`"),
        "{refusal}"
    );
    let refusal = tools.refusal("grep", json!({"path": "src"})).await;
    assert!(refusal.contains("missing field `pattern`"), "{refusal}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ignored_hidden_and_linked_files_stay_out_of_glob_and_grep() {
    let (ws, _outside) = project();
    let tools = serve(ws.path()).await;
    let (text, structured) = tools.text("grep", json!({"pattern": "limit"})).await;
    for absent in [
        "target/",
        "run.log",
        ".env",
        "outside-secret",
        "escape",
        "secret-link",
    ] {
        assert!(!text.contains(absent), "{absent} in\n{text}");
    }
    assert_eq!(structured["total_matching_files"], 3);
    let (text, _) = tools.text("glob", json!({"pattern": "*"})).await;
    let mut found: Vec<&str> = text.lines().collect();
    found.sort();
    assert_eq!(found, ["README.md", "src/main.rs", "src/run.rs"]);
    // Named by `path`, an ignored directory is searched, as ripgrep does.
    let (text, _) = tools
        .text("grep", json!({"pattern": "limit", "path": "target"}))
        .await;
    assert_eq!(text, "target/debug/gen.rs:1:fn generated_limit() {}\n");
    let _ = tools.client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_escape_is_refused_with_the_rule() {
    let (ws, outside) = project();
    let tools = serve(ws.path()).await;
    let secret = outside.path().join("secret.txt");
    let secret = secret.to_str().unwrap();
    // (tool, arguments, why, whether the refusal is about a path and ends with the rule)
    let attempts = [
        (
            "read",
            json!({"path": "../secret.txt"}),
            "climbs out of the workspace with `..`",
            true,
        ),
        (
            "read",
            json!({"path": "src/../../x"}),
            "climbs out of the workspace with `..`",
            true,
        ),
        (
            "read",
            json!({"path": secret}),
            "is outside the workspace",
            true,
        ),
        (
            "read",
            json!({"path": "/etc/passwd"}),
            "is outside the workspace",
            true,
        ),
        (
            "read",
            json!({"path": "escape/secret.txt"}),
            "through a symbolic link",
            true,
        ),
        (
            "read",
            json!({"path": "secret-link"}),
            "through a symbolic link",
            true,
        ),
        (
            "list",
            json!({"path": ".."}),
            "climbs out of the workspace",
            true,
        ),
        (
            "list",
            json!({"path": "escape"}),
            "through a symbolic link",
            true,
        ),
        (
            "glob",
            json!({"pattern": "*", "path": "escape"}),
            "through a symbolic link",
            true,
        ),
        (
            "grep",
            json!({"pattern": "secret", "path": "escape"}),
            "through a symbolic link",
            true,
        ),
        (
            "grep",
            json!({"pattern": "secret", "path": "/"}),
            "is outside the workspace",
            true,
        ),
        (
            "glob",
            json!({"pattern": "../*"}),
            "climbs out with `..`",
            false,
        ),
        (
            "grep",
            json!({"pattern": "x", "glob": "../**"}),
            "climbs out with `..`",
            false,
        ),
    ];
    for (tool, arguments, why, rule) in attempts {
        let refusal = tools.refusal(tool, arguments.clone()).await;
        assert!(refusal.contains(why), "{tool} {arguments}: {refusal}");
        assert!(!refusal.contains("outside-secret"), "{refusal}");
        if rule {
            assert!(
                refusal.ends_with(
                    "the workspace tools reach only files inside the workspace; name paths \
                     relative to the workspace root"
                ),
                "{refusal}"
            );
        }
    }
    let _ = tools.client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_is_capped_at_one_mebibyte_with_the_marker() {
    let ws = tempfile::tempdir().unwrap();
    let line = format!("{}\n", "x".repeat(1500));
    write(ws.path(), "big.txt", line.repeat(2000));
    let tools = serve(ws.path()).await;
    let (text, structured) = tools
        .text("read", json!({"path": "big.txt", "limit": 2000}))
        .await;
    assert!(text.len() <= 1024 * 1024, "{}", text.len());
    assert!(
        text.contains("[output cut at 1 MiB, the most a tool may answer]\n"),
        "{}",
        &text[text.len() - 300..]
    );
    let shown = structured["last_line"].as_u64().unwrap();
    assert!(shown > 600 && shown < 2000, "{shown}");
    assert!(text.ends_with(&format!(
        "[lines 1-{shown} shown; more lines follow; continue with offset {}]\n",
        shown + 1
    )));
    assert_eq!(structured["output_cut"], true);
    let (text, structured) = tools
        .text("grep", json!({"pattern": "x", "limit": 2000}))
        .await;
    assert!(text.len() <= 1024 * 1024);
    assert!(text.contains("[output cut at 1 MiB"));
    assert_eq!(structured["total_matching_lines"], 2000);
    let _ = tools.client.cancel().await;
}

#[test]
fn a_missing_workspace_is_one_line_and_a_failure() {
    let out = std::process::Command::new(BIN)
        .args(["workspace-tools", "/no/such/dir"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("workspace /no/such/dir cannot be opened"),
        "{stderr}"
    );
}
