//! A run's secrets in the fields of a record that are not prose (issue 34 item 4), through
//! the real binary: a key the model puts in a file name is hidden in `files_changed`, in
//! the structured record and its text copy; a provider body without `error.message`,
//! quoted raw, hides a key written with JSON escapes (`\u0073\u006b…`, `\/`). Not claimed,
//! and not tested: keys encoded otherwise (base64, URL encoding), reversed or split.

use crate::support;

use mcp_agents::testkit::{MockProvider, Step};
use serde_json::{Value, json};
use support::binary::{self, BIN, Connection, Generation};
use support::children::{agent, write};
use support::run_kit::KEY;

/// A child server's token, with the slashes a JSON writer may escape as `\/`.
const CHILD_TOKEN: &str = "ghp_child/token/abcdefghijklmnop";
const CHILD_TOKEN_VAR: &str = "MCP_AGENTS_TEST_CHILD_TOKEN";

/// Every run of 8 characters of a secret that `text` shows.
fn pieces_shown(text: &str) -> Vec<String> {
    [KEY, CHILD_TOKEN]
        .iter()
        .flat_map(|secret| {
            let chars: Vec<char> = secret.chars().collect();
            chars
                .windows(8)
                .map(|w| w.iter().collect::<String>())
                .filter(|piece| text.contains(piece.as_str()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// An agent with the built-in workspace server and a child whose environment holds
/// [`CHILD_TOKEN`] (so the token is one of the run's secrets).
async fn start(mock: &MockProvider) -> (tempfile::TempDir, Connection) {
    let ws = tempfile::tempdir().unwrap();
    let servers = format!(
        "    fx:\n      command: {BIN}\n      args: [fixture-server]\n      env: {{ FIXTURE_TOKEN: \"${{{CHILD_TOKEN_VAR}}}\" }}\n    workspace: {{ builtin: workspace }}\n"
    );
    write(
        ws.path(),
        ".agents/agents/writer.md",
        &agent(
            mock,
            "writer",
            &servers,
            "tools: [workspace__write, workspace__read, fx__echo]",
        ),
    );
    let c = binary::stdio(
        ws.path(),
        Generation::Modern,
        &[(CHILD_TOKEN_VAR, CHILD_TOKEN)],
    )
    .await;
    (ws, c)
}

/// `wait_agent` on `id` until it ends: the structured record and the text block whole.
async fn record_and_text(c: &Connection, id: &str) -> (Value, String) {
    let result = c
        .call("wait_agent", json!({"targets": [id], "timeout_ms": 60_000}))
        .await;
    let text = result.content[0].as_text().unwrap().text.clone();
    let structured = result.structured_content.unwrap();
    (structured["agents"][0].clone(), text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_in_a_file_name_is_hidden_in_files_changed() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let (ws, c) = start(&mock).await;
    let name = format!("notes-{KEY}.txt");
    let nested = format!("{CHILD_TOKEN}.txt");
    std::fs::create_dir_all(ws.path().join("ghp_child/token")).unwrap();
    mock.push([
        Step::tool_calls(vec![
            (
                "workspace__write",
                json!({"path": name, "content": "one\n"}),
            ),
            (
                "workspace__write",
                json!({"path": nested, "content": "two\n"}),
            ),
            (
                "workspace__write",
                json!({"path": "plain.txt", "content": "three\n"}),
            ),
        ]),
        Step::text("Wrote them."),
    ]);
    let id = c.spawn("writer", "Write the notes.").await;
    let (record, text) = record_and_text(&c, &id).await;
    assert_eq!(record["status"], "completed", "{record}");
    // The files are there, under the names the model gave.
    assert!(ws.path().join(&name).exists());
    assert!(ws.path().join(&nested).exists());
    // The three calls ran at once: the order they were first changed in is theirs.
    let mut paths: Vec<&str> = record["files_changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    paths.sort_unstable();
    assert_eq!(
        paths,
        ["[redacted].txt", "notes-[redacted].txt", "plain.txt"],
        "{record}"
    );
    assert!(pieces_shown(&record.to_string()).is_empty(), "{record}");
    assert!(pieces_shown(&text).is_empty(), "the text copy: {text}");
    c.close().await;
}

/// A body in which every character of `secret` is a `\uXXXX` escape.
fn unicode_escaped(secret: &str) -> String {
    secret
        .chars()
        .map(|c| format!("\\u{:04x}", c as u32))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_escaped_in_a_raw_provider_body_is_hidden() {
    let mock = MockProvider::start(KEY).await.unwrap();
    let (_ws, c) = start(&mock).await;
    let bodies = [
        format!(
            r#"{{"detail": "the key {} is not valid for this project"}}"#,
            unicode_escaped(KEY)
        ),
        format!(
            r#"{{"detail": "the token {} was refused"}}"#,
            CHILD_TOKEN.replace('/', r"\/")
        ),
        // Both, and the key escaped only in part.
        format!(
            r#"{{"errors": ["{}{}", "{}"]}}"#,
            &KEY[..3],
            unicode_escaped(&KEY[3..]),
            CHILD_TOKEN.replace('/', r"\u002f")
        ),
    ];
    for body in bodies {
        mock.push([Step::Raw {
            status: 400,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.clone(),
        }]);
        let id = c.spawn("writer", "Go.").await;
        let (record, text) = record_and_text(&c, &id).await;
        assert_eq!(record["status"], "failed", "{record}");
        let message = record["error"]["message"].as_str().unwrap();
        assert!(message.contains("[redacted]"), "{body}: {message}");
        assert!(
            pieces_shown(&record.to_string()).is_empty(),
            "{body}: {record}"
        );
        assert!(pieces_shown(&text).is_empty(), "{body}: {text}");
    }
    c.close().await;
}
