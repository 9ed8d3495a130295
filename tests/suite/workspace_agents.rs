//! Subagents reading the code they work on (SPEC §8.6), through the real binary driven as
//! Claude Code drives it: a Claude-format reviewer with `tools: Read, Grep, Glob` reads,
//! greps and globs a real workspace through the built-in `workspace` server, started as a
//! child of its run like any other; ignored files stay out; every escape is refused; each
//! format gets the tools its file asks for; no workspace child outlives its run.

use crate::support;

use std::time::Duration;

use mcp_agents::testkit::{MockProvider, Step};
use serde_json::{Value, json};
use support::binary::{self, Connection, Generation, KEY_VAR};
use support::children::offered_tools;
use support::run_kit::KEY;
use support::workspace::{assert_no_workspace_child, project, workspace_children, write};
use support::{MockWorkspace, ServerUnderTest, TestWorkspace};

/// The custom-provider lines that point a file of any format at the mock.
fn provider(mock: &MockProvider) -> String {
    format!(
        "model_provider: custom\nbase_url: {}\nenv_key: {KEY_VAR}\nwire_api: responses\n",
        mock.responses_base_url()
    )
}

/// The names of the tools the provider was offered in request `n`, sorted.
fn offered(mock: &MockProvider, n: usize) -> Vec<String> {
    let mut names = offered_tools(mock, n);
    names.sort();
    names
}

/// Request `n`'s tool outputs, by the name of the call they answer.
fn outputs(mock: &MockProvider, n: usize) -> Vec<(String, Value, String)> {
    let input = mock.requests()[n].body["input"].as_array().unwrap().clone();
    input
        .iter()
        .filter(|i| i["type"] == "function_call_output")
        .map(|out| {
            let call = input
                .iter()
                .find(|i| i["type"] == "function_call" && i["call_id"] == out["call_id"])
                .unwrap();
            (
                call["name"].as_str().unwrap().to_owned(),
                serde_json::from_str(call["arguments"].as_str().unwrap()).unwrap(),
                out["output"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claude_reviewer_reads_greps_and_globs_a_real_workspace() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let (ws, outside) = project();
    let dir = ws.path();
    write(
        dir,
        ".claude/agents/reviewer.md",
        format!(
            "---\nname: reviewer\ndescription: Reviews code.\nmodel: mock-model\n{}\
             tools: Read, Grep, Glob\n---\nReview the code.\n",
            provider(&mock)
        ),
    );
    let secret = outside.path().join("secret.txt");
    mock.push([
        Step::tool_calls(vec![
            (
                "workspace__read",
                json!({"path": "src/main.rs", "offset": 2, "limit": 2}),
            ),
            (
                "workspace__grep",
                json!({"pattern": "limit", "glob": "*.rs"}),
            ),
            ("workspace__glob", json!({"pattern": "**/*.rs"})),
        ]),
        Step::tool_calls(vec![
            ("workspace__read", json!({"path": "../secret.txt"})),
            ("workspace__read", json!({"path": secret.to_str().unwrap()})),
            ("workspace__read", json!({"path": "escape/secret.txt"})),
            (
                "workspace__grep",
                json!({"pattern": "secret", "path": "escape"}),
            ),
            ("workspace__glob", json!({"pattern": "*", "path": ".."})),
            ("workspace__grep", json!({"pattern": "outside-secret"})),
        ]),
        // Held until the test has seen the run's workspace child, then interrupted.
        Step::Hang,
        Step::text("Reviewed."),
    ]);
    let c = binary::stdio(dir, Generation::Modern, &[]).await;
    let id = c.spawn("reviewer", "Review src/.").await;
    for _ in 0..400 {
        if mock.requests().len() == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(mock.requests().len(), 3, "the run reached its third turn");
    assert_eq!(
        workspace_children(dir).len(),
        1,
        "one workspace child, started for this run"
    );

    // Only the tools the file names, under the workspace server's names.
    assert_eq!(
        offered(&mock, 0),
        ["workspace__glob", "workspace__grep", "workspace__read"]
    );
    let first = outputs(&mock, 1);
    assert_eq!(
        first[0].2,
        "     2\t    let limit = 8;\n     3\t    run(limit);\n[lines 2-3 shown; more lines follow; continue with offset 4]\n"
    );
    assert_eq!(
        first[1].2,
        "src/main.rs:2:    let limit = 8;\nsrc/main.rs:3:    run(limit);\n\
         src/run.rs:1:pub fn run(limit: u32) {\nsrc/run.rs:2:    // TODO: use the limit\n",
        "paths and line numbers; target/ is ignored"
    );
    let mut globbed: Vec<&str> = first[2].2.lines().collect();
    globbed.sort();
    assert_eq!(globbed, ["src/main.rs", "src/run.rs"]);

    // The history holds the first turn's three outputs, then these.
    let escapes = outputs(&mock, 2).split_off(3);
    assert_eq!(escapes.len(), 6);
    for (tool, arguments, output) in &escapes[..5] {
        assert!(
            output.contains("the workspace tools reach only files inside the workspace"),
            "{tool} {arguments}: {output}"
        );
    }
    for (_, _, output) in &escapes {
        assert!(!output.contains("outside-secret limit"), "{output}");
    }
    assert_eq!(
        escapes[5].2, "[no matches for `outside-secret` in `.`]\n",
        "a walk never follows the link out"
    );

    c.interrupt(&id, "Wrap up.").await;
    let done = c.wait(&[&id], 60_000).await;
    assert_eq!(done["agents"][0]["status"], "completed", "{done}");
    assert_eq!(done["agents"][0]["result"], "Reviewed.");
    assert_no_workspace_child(dir).await;
    c.close().await;
}

async fn run_once(c: &Connection, name: &str) -> Value {
    let id = c.spawn(name, "Look around.").await;
    c.wait(&[&id], 60_000).await["agents"][0].clone()
}

/// An agent of each format asking for its workspace tools in its own words: its name, its
/// file, the file's text, and the workspace tools it must be offered.
type FormatAgent = (&'static str, &'static str, String, Vec<&'static str>);

/// Every workspace tool, sorted.
const ALL: [&str; 6] = [
    "workspace__edit",
    "workspace__glob",
    "workspace__grep",
    "workspace__list",
    "workspace__read",
    "workspace__write",
];

/// The workspace tools that only read, sorted.
const READS: [&str; 4] = [
    "workspace__glob",
    "workspace__grep",
    "workspace__list",
    "workspace__read",
];

/// [`FormatAgent`]s of every format, pointing at `mock`: those that take what their format
/// gives by default, then those whose lists or sandbox narrow it.
fn agents_of_every_format(mock: &MockProvider) -> Vec<FormatAgent> {
    let mut agents = agents_by_default(mock);
    agents.extend(agents_narrowed(mock));
    agents
}

fn agents_by_default(mock: &MockProvider) -> Vec<FormatAgent> {
    let p = provider(mock);
    vec![
        (
            "claude-all",
            ".claude/agents/all.md",
            format!("---\nname: claude-all\ndescription: d\nmodel: m\n{p}---\nWork.\n"),
            ALL.to_vec(),
        ),
        (
            "codex-agent",
            ".codex/agents/codex.toml",
            format!(
                "name = \"codex-agent\"\ndescription = \"d\"\nmodel = \"m\"\n\
                 model_provider = \"custom\"\nbase_url = \"{}\"\nenv_key = \"{KEY_VAR}\"\n\
                 wire_api = \"responses\"\nsandbox_mode = \"read-only\"\n\
                 developer_instructions = \"Work.\"\n",
                mock.responses_base_url()
            ),
            READS.to_vec(),
        ),
        (
            "opencode-all",
            ".opencode/agents/opencode-all.md",
            format!("---\ndescription: d\nmodel: mock/m\n{}---\nWork.\n", {
                let mut lines = p.clone();
                lines = lines.replace("model_provider: custom\n", "");
                lines
            }),
            ALL.to_vec(),
        ),
        (
            "opencode-no-read",
            ".opencode/agents/opencode-no-read.md",
            format!(
                "---\ndescription: d\nmodel: mock/m\n{}tools:\n  read: false\n---\nWork.\n",
                p.replace("model_provider: custom\n", "")
            ),
            vec![
                "workspace__edit",
                "workspace__glob",
                "workspace__grep",
                "workspace__list",
                "workspace__write",
            ],
        ),
        (
            "canonical-plain",
            ".agents/agents/plain.md",
            format!("---\nname: canonical-plain\ndescription: d\nmodel: m\n{p}---\nWork.\n"),
            vec![],
        ),
    ]
}

fn agents_narrowed(mock: &MockProvider) -> Vec<FormatAgent> {
    let p = provider(mock);
    vec![
        (
            "canonical-named",
            ".agents/agents/named.md",
            format!(
                "---\nname: canonical-named\ndescription: d\nmodel: m\n{p}\
                 mcp_servers:\n  workspace: {{builtin: workspace}}\n---\nWork.\n"
            ),
            READS.to_vec(),
        ),
        (
            "canonical-editor",
            ".agents/agents/editor.md",
            format!(
                "---\nname: canonical-editor\ndescription: d\nmodel: m\n{p}\
                 mcp_servers:\n  workspace: {{builtin: workspace}}\n\
                 tools: [workspace__read, workspace__edit]\n---\nWork.\n"
            ),
            vec!["workspace__edit", "workspace__read"],
        ),
        (
            "claude-no-edit",
            ".claude/agents/no-edit.md",
            format!(
                "---\nname: claude-no-edit\ndescription: d\nmodel: m\n{p}\
                 disallowedTools: Edit, Write\n---\nWork.\n"
            ),
            READS.to_vec(),
        ),
        (
            "claude-read-only",
            ".claude/agents/read-only.md",
            format!(
                "---\nname: claude-read-only\ndescription: d\nmodel: m\n{p}\
                 tools: Read, Edit, Write\nsandbox: read-only\n---\nWork.\n"
            ),
            vec!["workspace__read"],
        ),
        (
            "codex-writer",
            ".codex/agents/writer.toml",
            format!(
                "name = \"codex-writer\"\ndescription = \"d\"\nmodel = \"m\"\n\
                 model_provider = \"custom\"\nbase_url = \"{}\"\nenv_key = \"{KEY_VAR}\"\n\
                 wire_api = \"responses\"\ndeveloper_instructions = \"Work.\"\n",
                mock.responses_base_url()
            ),
            ALL.to_vec(),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_format_is_offered_the_workspace_tools_its_file_asks_for() {
    let MockWorkspace { mock, ws, .. } = TestWorkspace::new().written().await;
    let agents = agents_of_every_format(&mock);
    for (_, rel, text, _) in &agents {
        write(ws.path(), rel, text);
    }
    let c = binary::stdio(ws.path(), Generation::Modern, &[]).await;
    for (name, _, _, expected) in &agents {
        mock.push([Step::text("ok")]);
        let before = mock.requests().len();
        let record = run_once(&c, name).await;
        assert_eq!(record["status"], "completed", "{name}: {record}");
        assert_eq!(offered(&mock, before), *expected, "{name}");
        assert_no_workspace_child(ws.path()).await;
    }
    c.close().await;
}

/// A small project with a failing test (`add` subtracts), for a fixer to fix.
fn failing_project<'a>() -> TestWorkspace<'a> {
    TestWorkspace::new()
        .file(
            "calc.py",
            "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n",
        )
        .file(
            "test_calc.py",
            "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
        )
}

/// The model's side of a fix: read the test and the code, edit the code, add a test.
fn fix_steps() -> Vec<Step> {
    vec![
        Step::tool_calls(vec![
            ("workspace__read", json!({"path": "test_calc.py"})),
            ("workspace__read", json!({"path": "calc.py"})),
        ]),
        Step::tool_call(
            "workspace__edit",
            json!({"path": "calc.py",
                   "old_text": "def add(a, b):\n    return a - b",
                   "new_text": "def add(a, b):\n    return a + b"}),
        ),
        Step::tool_call(
            "workspace__write",
            json!({"path": "tests/test_add_more.py",
                   "content": "from calc import add\n\n\ndef test_negative():\n    assert add(-1, 1) == 0\n"}),
        ),
        Step::text("Fixed `add` in calc.py (it subtracted) and added a test for negatives."),
    ]
}

const FIXED_CALC: &str = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claude_fixer_changes_the_workspace_and_its_record_says_which_files() {
    let ServerUnderTest { mock, c, ws, .. } = failing_project()
        .agent(".claude/agents/fixer.md", |mock, _| {
            format!(
                "---\nname: fixer\ndescription: Fixes failing tests.\nmodel: mock-model\n{}\
                 tools: Read, Edit, Write, Bash\n---\nFix the failing test.\n",
                provider(mock)
            )
        })
        .stdio()
        .await;
    let dir = ws.path();
    mock.push(fix_steps());
    let id = c.spawn("fixer", "Make test_calc.py pass.").await;
    let done = c.wait(&[&id], 60_000).await;
    let record = &done["agents"][0];
    assert_eq!(record["status"], "completed", "{record}");
    assert_eq!(
        offered(&mock, 0),
        ["workspace__edit", "workspace__read", "workspace__write"],
        "Bash stays out"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("calc.py")).unwrap(),
        FIXED_CALC
    );
    assert!(dir.join("tests/test_add_more.py").exists());
    assert_eq!(
        record["files_changed"],
        json!([
            {"path": "calc.py", "created": false, "changes": 1},
            {"path": "tests/test_add_more.py", "created": true, "changes": 1},
        ])
    );
    // The edit's answer, as the model saw it: the changed lines with their numbers.
    let edit = &outputs(&mock, 2)[2];
    assert_eq!(edit.0, "workspace__edit");
    assert!(
        edit.2
            .contains("     1\tdef add(a, b):\n     2\t    return a + b\n"),
        "{}",
        edit.2
    );
    // The human line that opens the answer, in the text and as `summary`, names the files
    // changed.
    let answer = c
        .call("wait_agent", json!({"targets": [id], "timeout_ms": 0}))
        .await;
    let text = answer.content[0].as_text().unwrap().text.clone();
    let first = text.lines().next().unwrap();
    assert!(
        first.contains(": completed in ")
            && first.contains(" s (changed 2 files: calc.py, tests/test_add_more.py): Fixed `add`"),
        "{first}"
    );
    assert_eq!(answer.structured_content.unwrap()["summary"], first);
    assert_no_workspace_child(dir).await;
    c.close().await;
}

/// A published fixer from the corpus (noodlefrenzy/vteam-hybrid's `sato`, "Tara writes the
/// failing tests, and you make them pass"), unedited, fixing a failing test through
/// `mcp-agents run`: the files it changed are listed after the summary and in `--json`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_published_fixer_makes_a_failing_test_pass_through_mcp_agents_run() {
    let published =
        std::fs::read_to_string(support::fixture_path("corpus").join(".claude/agents/sato.md"))
            .unwrap();
    let MockWorkspace { mock, ws, .. } = failing_project()
        .file(".claude/agents/sato.md", published)
        .written()
        .await;
    let dir = ws.path();
    mock.push(fix_steps());
    let (stdout, stderr) = binary::run_to_success(
        tokio::process::Command::new(binary::BIN)
            .args(["run", "--json", "sato", "Make test_calc.py pass."])
            .current_dir(dir)
            .env("MCP_AGENTS_DEFAULT_MODEL", "anthropic/claude-sonnet-5-5")
            .env("ANTHROPIC_BASE_URL", mock.messages_base_url())
            .env("ANTHROPIC_API_KEY", KEY)
            .env_remove("ANTHROPIC_AUTH_TOKEN"),
    )
    .await;
    let record: Value = serde_json::from_slice(&stdout).unwrap();
    assert_eq!(record["status"], "completed", "{record}");
    assert_eq!(
        std::fs::read_to_string(dir.join("calc.py")).unwrap(),
        FIXED_CALC
    );
    assert_eq!(record["files_changed"][0]["path"], "calc.py");
    assert_eq!(record["files_changed"][1]["created"], true);
    assert!(
        stderr.contains(
            "mcp-agents: sato changed 2 files: calc.py, tests/test_add_more.py (created)\n"
        ),
        "{stderr}"
    );
    let tools = offered_tools(&mock, 0);
    for tool in ["workspace__read", "workspace__edit", "workspace__write"] {
        assert!(tools.iter().any(|t| t == tool), "{tools:?}");
    }
}
