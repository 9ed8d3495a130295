//! No input makes a parser panic (issue: "no panics on any input"). Random bytes and random
//! frontmatter built from the fields and values the formats know go through every format's
//! parser, the skill parser, the frontmatter splitter and the `${VAR}` parser; whatever
//! they accept must still satisfy the rules.

use std::path::Path;

use mcp_agents::definition::SkillRegistry;
use mcp_agents::definition::check_name;
use mcp_agents::definition::is_loopback;
use mcp_agents::definition::{Format, Template};
use mcp_agents::discovery::parse_skill;
use mcp_agents::discovery::{DefaultModel, LoadOptions, ParseOutcome, parse_definition};
use mcp_agents::discovery::{parse_frontmatter, parse_toml, split_frontmatter};
use mcp_agents::limits::MAX_TURNS_RANGE;
use proptest::prelude::*;

const FORMATS: [(Format, &str); 8] = [
    (Format::CanonicalMarkdown, ".agents/agents/a.md"),
    (Format::CanonicalToml, ".agents/agents/a.toml"),
    (Format::Claude, ".claude/agents/a.md"),
    (Format::Codex, ".codex/agents/a.toml"),
    (Format::OpenCode, ".opencode/agents/team/a.md"),
    (Format::Copilot, ".github/agents/team/a.agent.md"),
    (Format::Cursor, ".cursor/agents/a.md"),
    (Format::Gemini, ".gemini/agents/a.md"),
];

/// Parses `text` in every format and checks what was accepted; returns how many formats
/// accepted it.
fn parse_everywhere(text: &str) -> usize {
    let mut accepted = 0;
    let workspace = Path::new("/nonexistent-mcp-agents-fuzz-workspace");
    let options = LoadOptions {
        default_model: Some(
            "anthropic/claude-sonnet-5-5"
                .parse::<DefaultModel>()
                .unwrap(),
        ),
        ..Default::default()
    };
    let skills = SkillRegistry::default();
    for (format, path) in FORMATS {
        if let Ok(ParseOutcome::Agent(d, _)) =
            parse_definition(text, format, Path::new(path), workspace, &skills, &options)
        {
            accepted += 1;
            assert!(
                check_name(&d.name).is_ok(),
                "{format}: accepted name {:?}",
                d.name
            );
            assert!(!d.description.trim().is_empty());
            assert!(!d.instructions.trim().is_empty());
            assert!(!d.model.id.is_empty());
            assert!(MAX_TURNS_RANGE.contains(&d.max_turns));
            let url = &d.provider.base_url;
            assert!(
                url.scheme() == "https"
                    || (url.scheme() == "http" && url.host().is_some_and(|h| is_loopback(&h))),
                "{format}: accepted endpoint {url}"
            );
        }
    }
    let _ = parse_skill(text, "a", "a/SKILL.md".into(), &mut Vec::new());
    if let Ok(split) = split_frontmatter(text) {
        let _ = parse_frontmatter(split.yaml);
    }
    let _ = parse_toml(text);
    accepted
}

const KEYS: &[&str] = &[
    "name",
    "description",
    "model",
    "model_provider",
    "modelProvider",
    "base_url",
    "env_key",
    "wire_api",
    "auth",
    "max_turns",
    "maxTurns",
    "disalowedTools",
    "Model",
    "steps",
    "maxSteps",
    "mcp_servers",
    "mcpServers",
    "tools",
    "disallowedTools",
    "disallowed_tools",
    "permission",
    "permissionMode",
    "mode",
    "disable",
    "skills",
    "sandbox",
    "sandbox_mode",
    "isolation",
    "hooks",
    "effort",
    "reasoning_effort",
    "temperature",
    "api_key",
    "prompt",
    "instructions",
    "developer_instructions",
    "model_providers",
    "memory",
    "color",
    "models",
    "modelPolicy",
    "disable-model-invocation",
    "infer",
    "mcp-servers",
    "readonly",
    "kind",
    "timeout_mins",
    "include-custom-instructions",
];

const YAML_VALUES: &[&str] = &[
    "a",
    "research",
    "\"\"",
    "Use when: asked",
    "inherit",
    "sonnet",
    "opus",
    "openai/gpt-5",
    "kilo/x/y",
    "anthropic/claude#high",
    "custom",
    "openai",
    "anthropic",
    "responses",
    "chat",
    "https://x.example/v1",
    "http://localhost:1",
    "http://10.0.0.1",
    "OPENAI_API_KEY",
    "sk-abc",
    "0",
    "1",
    "1000",
    "1001",
    "-5",
    "2.5",
    "1e308",
    ".nan",
    "true",
    "false",
    "null",
    "~",
    "[]",
    "{}",
    "[a, b]",
    "[Read, mcp__x__y]",
    "{docs: {command: x}}",
    "{docs: {url: \"https://d.example/mcp\", headers: {Authorization: \"Bearer ${T}\"}}}",
    "{docs: {command: x, env: {A: \"${\"}}}",
    "[github, {x: {type: sse, url: u}}]",
    "{\"*\": false, x_y: true}",
    "deny",
    "{x: ask, bash: {\"*\": deny}}",
    "primary",
    "plan",
    "read-only",
    "worktree",
    "&a [*a]",
    "!!binary aGk=",
    "|\n  block\n  text",
    ">\n  folded",
    "'quoted: colon'",
    "\"\\u0000\"",
    "é ü 日本",
    "\u{202e}rtl",
    "[[[[x]]]]",
    "Claude Sonnet 4.5 (copilot)",
    "claude-4.5-sonnet",
    "[GPT-4o, {name: composer-1, reasoning-effort: low}]",
    "gemini-2.5-flash",
    "fast",
    "remote",
    "[read, search, docs/*, mcp_docs_*, read_file]",
    "{docs: {type: local, command: x, env: {A: \"${{ secrets.A }}\", B: $B}, tools: [\"*\"]}}",
    "{docs: {http_url: \"https://d.example/mcp\", tcp: x, include_tools: [a], timeout: 5}}",
    "{docs: {url: \"https://d.example/mcp\", auth: {type: oauth}}}",
];

const TOML_VALUES: &[&str] = &[
    "\"a\"",
    "\"research\"",
    "\"\"",
    "1",
    "0",
    "1001",
    "2.5",
    "true",
    "[]",
    "[\"a\", 1]",
    "{ command = \"x\" }",
    "{ url = \"http://10.0.0.1\" }",
    "\"\"\"multi\nline\"\"\"",
    "'literal'",
    "1979-05-27T07:32:00Z",
    "inf",
    "nan",
    "\"sk-abc\"",
    "\"chat\"",
];

/// Fields that make a definition valid on their own; a generated document starts with them
/// half of the time (the random fields then leave them alone), so the generators reach the
/// checks on accepted definitions and not only the refusals.
const YAML_BASE: &str = "name: a\ndescription: research\nmodel: openai/gpt-5\n";
const TOML_BASES: &[&str] = &[
    "",
    "name = \"a\"\ndescription = \"research\"\nmodel = \"openai/gpt-5\"\ninstructions = \"Work.\"\n",
    "name = \"a\"\ndescription = \"research\"\nmodel = \"openai/gpt-5\"\ndeveloper_instructions = \"Work.\"\n",
];

fn in_base(base: &str, key: &str) -> bool {
    base.lines()
        .any(|line| line.split([':', ' ']).next() == Some(key))
}

fn yaml_document() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(
            (
                prop::sample::select(KEYS),
                prop::sample::select(YAML_VALUES),
            ),
            0..12,
        ),
        prop::sample::select(&["", "Body.", "  \n", "---", "# heading\ntext"][..]),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(fields, body, closed, based)| {
            let base = if based { YAML_BASE } else { "" };
            let mut doc = format!("---\n{base}");
            for (k, v) in fields.into_iter().filter(|(k, _)| !in_base(base, k)) {
                doc.push_str(&format!("{k}: {v}\n"));
            }
            if closed {
                doc.push_str("---\n");
            }
            doc.push_str(body);
            doc
        })
}

fn toml_document() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(
            (
                prop::sample::select(KEYS),
                prop::sample::select(TOML_VALUES),
            ),
            0..12,
        ),
        prop::sample::select(TOML_BASES),
    )
        .prop_map(|(fields, base)| {
            let mut doc = base.to_owned();
            for (k, v) in fields.into_iter().filter(|(k, _)| !in_base(base, k)) {
                doc.push_str(&format!("{k} = {v}\n"));
            }
            doc
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = parse_everywhere(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn random_text_after_a_fence_never_panics(text in "\\PC{0,256}") {
        let _ = parse_everywhere(&format!("---\n{text}"));
        let _ = parse_everywhere(&format!("---\n{text}\n---\nBody."));
    }

    #[test]
    fn random_frontmatter_never_panics(doc in yaml_document()) {
        let _ = parse_everywhere(&doc);
    }

    #[test]
    fn random_toml_never_panics(doc in toml_document()) {
        let _ = parse_everywhere(&doc);
    }

    #[test]
    fn templates_parse_or_refuse_and_render_what_they_parse(text in "[a-z${}:_1 -]{0,40}") {
        if let Ok(template) = Template::parse(&text) {
            // Rendering with every variable set to its own name gives the text back minus
            // the `${}` wrappers; with none set it names the first variable.
            let rendered = template.render(|name| Some(name.to_owned())).unwrap();
            prop_assert!(rendered.len() <= text.len());
            if let Some(first) = template.vars().next() {
                let err = template.render(|_| None).unwrap_err();
                prop_assert!(err.to_string().contains(first));
            }
        }
    }
}

/// Guards the property tests above against generators that can only produce rejects:
/// the generated documents must sometimes be accepted, so the checks in `parse_everywhere`
/// on accepted definitions really run.
#[test]
fn generated_documents_are_sometimes_accepted_so_the_checks_run() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let mut accepted = (0, 0);
    for _ in 0..512 {
        let yaml = yaml_document().new_tree(&mut runner).unwrap().current();
        accepted.0 += parse_everywhere(&yaml);
        let toml = toml_document().new_tree(&mut runner).unwrap().current();
        accepted.1 += parse_everywhere(&toml);
    }
    assert!(
        accepted.0 > 0 && accepted.1 > 0,
        "accepted (yaml, toml): {accepted:?}"
    );
}

/// Values a provider (or a gateway in front of it) might put where an object, a list, a
/// string or an index is expected.
fn odd_json() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::json;
    let leaf = prop_oneof![
        Just(json!(null)),
        Just(json!("oops")),
        Just(json!(5)),
        Just(json!(-1)),
        Just(json!(u64::MAX)),
        Just(json!(1u64 << 61)),
        Just(json!(1_000_000_000u64)),
        Just(json!(0)),
        Just(json!(1)),
        Just(json!(true)),
        Just(json!([])),
        Just(json!({})),
        Just(json!({"type": "text", "text": "hi"})),
        Just(json!({"type": "tool_use", "id": "t", "name": "n", "input": {}})),
        Just(json!({"type": "message", "role": "assistant", "content": []})),
        Just(json!({"type": "function_call", "call_id": "c", "name": "n", "arguments": "{}"})),
        Just(json!({"status": "completed", "output": []})),
        Just(json!({"input_tokens": 3})),
    ];
    leaf.prop_recursive(2, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(serde_json::Value::Array),
            prop::collection::btree_map(
                prop::sample::select(vec![
                    "type",
                    "index",
                    "message",
                    "content",
                    "content_block",
                    "delta",
                    "usage",
                    "text",
                    "partial_json",
                    "output",
                    "item",
                    "output_index",
                    "response",
                    "status",
                    "stop_reason",
                    "error",
                    "choices",
                    "tool_calls",
                    "function",
                    "arguments",
                    "name",
                    "id",
                    "finish_reason",
                    "reasoning_content",
                    "extra_content",
                    "refusal",
                ]),
                inner,
                0..4,
            )
            .prop_map(|m| serde_json::Value::Object(
                m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
            )),
        ]
    })
}

const STREAM_EVENTS: &[&str] = &[
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
    "ping",
    "error",
    "response.output_item.done",
    "response.completed",
    "response.incomplete",
    "response.failed",
    "response.output_text.delta",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Whatever a streamed reply holds, reading it gives a reply or an error, never a panic
    /// or an allocation sized by the provider (a Messages block index is one).
    #[test]
    fn odd_stream_events_never_panic(
        events in prop::collection::vec(
            (prop::sample::select(STREAM_EVENTS), odd_json(), any::<bool>()),
            0..8,
        ),
    ) {
        use mcp_agents::definition::WireApi;
        for api in WireApi::ALL {
            let mut stream = mcp_agents::providers::format(api).stream("p", &mcp_agents::redact::Secrets::default());
            for (event, data, typed) in &events {
                let mut data = data.clone();
                if *typed && let serde_json::Value::Object(map) = &mut data {
                    map.insert("type".into(), serde_json::Value::String((*event).into()));
                }
                if stream.event(event, &data.to_string()).is_err() {
                    break;
                }
            }
        }
    }
}

/// Odd Chat Completions chunks: choices, deltas and call fragments holding anything where an
/// object, a string or an index is expected, then `[DONE]`; and odd whole completions. A reply
/// or an error, never a panic.
fn odd_chunk() -> impl Strategy<Value = serde_json::Value> {
    (odd_json(), odd_json(), odd_json(), odd_json(), odd_json()).prop_map(
        |(index, id, arguments, finish, usage)| {
            serde_json::json!({"choices": [{"index": 0, "delta": {"content": "x",
                "tool_calls": [{"index": index, "id": id, "function": {"name": "t",
                "arguments": arguments}}]}, "finish_reason": finish}], "usage": usage})
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn odd_chat_chunks_never_panic(
        chunks in prop::collection::vec(prop_oneof![odd_chunk(), odd_json()], 0..8),
        whole in odd_json(),
    ) {
        use mcp_agents::definition::WireApi;
        let format = mcp_agents::providers::format(WireApi::ChatCompletions);
        let secrets = mcp_agents::redact::Secrets::default();
        let mut stream = format.stream("p", &secrets);
        for chunk in &chunks {
            if stream.event("message", &chunk.to_string()).is_err() {
                break;
            }
        }
        let _ = stream.event("message", "[DONE]");
        let _ = format.parse("p", &secrets, whole);
        let _ = format.parse("p", &secrets, serde_json::json!({"choices": chunks}));
    }
}

/// The cases that crashed the Messages reader before: a block index past the next one (as
/// an allocation size or an overflow), and objects that are not objects.
#[test]
fn messages_stream_events_that_once_panicked_are_errors() {
    use mcp_agents::definition::WireApi;
    use serde_json::json;
    let start = json!({"type": "message_start", "message": {"type": "message", "role": "assistant",
                       "content": [], "usage": {"input_tokens": 1}}});
    let cases = [
        vec![
            start.clone(),
            json!({"type": "content_block_start", "index": u64::MAX, "content_block": {"type": "text", "text": ""}}),
        ],
        vec![
            start.clone(),
            json!({"type": "content_block_start", "index": 1u64 << 61, "content_block": {"type": "text", "text": ""}}),
        ],
        vec![
            start.clone(),
            json!({"type": "content_block_start", "index": 1_000_000_000u64, "content_block": {"type": "text", "text": ""}}),
        ],
        vec![
            json!({"type": "message_start", "message": "oops"}),
            json!({"type": "message_stop"}),
        ],
        vec![
            json!({"type": "message_start", "message": {"type": "message", "content": [], "usage": 5}}),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}}),
            json!({"type": "message_stop"}),
        ],
        vec![
            start.clone(),
            json!({"type": "content_block_start", "index": 0, "content_block": "x"}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "a"}}),
        ],
    ];
    for (i, events) in cases.iter().enumerate() {
        let mut stream = mcp_agents::providers::format(WireApi::AnthropicMessages)
            .stream("p", &mcp_agents::redact::Secrets::default());
        let mut ended = None;
        for event in events {
            let kind = event["type"].as_str().unwrap();
            match stream.event(kind, &event.to_string()) {
                Ok(Some(reply)) => ended = Some(Ok(reply)),
                Ok(None) => {}
                Err(e) => {
                    ended = Some(Err(e));
                    break;
                }
            }
        }
        match i {
            // A `usage` that is not an object is replaced; the reply is read.
            4 => assert!(matches!(ended, Some(Ok(_))), "case {i}"),
            _ => assert!(matches!(ended, Some(Err(_))), "case {i}: {ended:?}"),
        }
    }
}

/// Every event `parser` has completed, after `chunks`, and after the end of the stream.
fn sse_events(chunks: &[&[u8]]) -> Vec<(String, String)> {
    let mut parser = mcp_agents::providers::SseParser::new(1 << 20);
    let mut events = Vec::new();
    for chunk in chunks {
        parser.feed(chunk).unwrap();
        while let Some(e) = parser.next_event() {
            events.push((e.event, e.data));
        }
    }
    parser.finish();
    while let Some(e) = parser.next_event() {
        events.push((e.event, e.data));
    }
    events
}

proptest! {
    /// Any bytes, cut anywhere: the event stream parser never panics, and where the stream
    /// is cut into pieces never changes what it reads.
    #[test]
    fn event_streams_read_the_same_however_they_are_cut(
        lines in prop::collection::vec(
            prop_oneof![
                Just(b"".to_vec()),
                Just(b": keep-alive \xff".to_vec()),
                Just(b"event: message_stop".to_vec()),
                Just(b"data: {\"a\": 1}".to_vec()),
                Just(b"data".to_vec()),
                Just(b"id: 3".to_vec()),
                prop::collection::vec(any::<u8>(), 0..12),
            ],
            0..12,
        ),
        ends in prop::collection::vec(prop::sample::select(vec!["\n", "\r", "\r\n"]), 12),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..4),
    ) {
        let mut stream = Vec::new();
        for (line, end) in lines.iter().zip(&ends) {
            stream.extend_from_slice(line);
            stream.extend_from_slice(end.as_bytes());
        }
        let whole = sse_events(&[&stream]);
        let mut at: Vec<usize> = cuts.iter().map(|i| i.index(stream.len() + 1)).collect();
        at.sort_unstable();
        let mut pieces: Vec<&[u8]> = Vec::new();
        let mut from = 0;
        for cut in at {
            pieces.push(&stream[from..cut]);
            from = cut;
        }
        pieces.push(&stream[from..]);
        prop_assert_eq!(sse_events(&pieces), whole);
    }

    /// A secret anywhere in a text, the text quoted at any length: no run of 8 or more of
    /// its characters survives, whole, at the cut, or anywhere else.
    #[test]
    fn a_quoted_text_never_shows_a_secret_or_a_long_piece_of_it(
        before in "[a-z ]{0,40}",
        after in "[a-z ]{0,40}",
        secret in "[A-Za-z0-9_-]{8,40}",
        max in 1usize..120,
    ) {
        let secrets = mcp_agents::redact::Secrets::new([secret.as_str()]);
        let text = format!("{before}{secret}{after}");
        let quoted = secrets.quote(&text, max).unwrap_or_default();
        let chars: Vec<char> = secret.chars().collect();
        for window in chars.windows(8) {
            let piece: String = window.iter().collect();
            // The letters around the secret cannot rebuild 8 of its characters: they are
            // lowercase and spaces, and a window holds more than they could supply alone
            // only when it is the secret's own.
            if !piece.chars().all(|c| c.is_ascii_lowercase() || c == ' ') {
                prop_assert!(!quoted.contains(&piece), "{:?} in {:?}", piece, quoted);
            }
        }
        let cut = secrets.cut(&text, max);
        prop_assert!(cut.len() <= max);
        prop_assert!(!cut.contains(&secret));
    }
}
