//! Loading a generated workspace of 1,000 definitions in mixed formats (250 per format,
//! each with a child server and realistic instructions), as `mcp-agents` does at startup;
//! and one of 750 GitHub Copilot, Cursor and Gemini CLI definitions (250 each), whose model
//! names go through the translation table and whose servers through their tools' spellings.
//!
//! Run: `cargo bench --bench catalog_load`. Results go to docs/performance.md.
// Tests and benchmarks may unwrap: a failure there is the report. They are binaries, with no
// face for `pub` to mark (Cargo.toml's lints).
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::fs;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_agents::discovery::{LoadOptions, Workspace, load_catalog};

const INSTRUCTIONS: &str = "You review one change at a time. Read the diff and the files it \
touches, report correctness bugs, security problems and missing tests, most severe first, \
each with the file and line and a concrete fix. Do not comment on formatting.\n";

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// Writes 250 definitions per format, spread over nested folders, plus 20 skills.
fn generate(root: &Path) {
    let body = INSTRUCTIONS.repeat(4);
    for i in 0..250 {
        let group = i % 10;
        write(
            root,
            &format!(".agents/agents/group{group}/canonical-{i}.md"),
            &format!(
                "---\nname: canonical-{i}\ndescription: Canonical agent {i}.\nmodel: gpt-5.4\n\
                 model_provider: openai\nmax_turns: 20\nskills: [skill-{}]\nmcp_servers:\n  \
                 docs:\n    command: npx\n    args: [\"-y\", \"@acme/docs-mcp\"]\n    env: \
                 {{ DOCS_TOKEN: \"${{DOCS_TOKEN}}\" }}\ntools: [\"docs__*\"]\n---\n{body}",
                i % 20
            ),
        );
        write(
            root,
            &format!(".claude/agents/group{group}/claude-{i}.md"),
            &format!(
                "---\nname: claude-{i}\ndescription: Use this agent when: reviewing change {i}.\n\
                 tools: Read, Grep, mcp__github__get_pull_request\nmodel: sonnet\nmaxTurns: 15\n\
                 mcpServers:\n  - github:\n      type: http\n      url: \
                 https://api.githubcopilot.com/mcp/\n      headers:\n        Authorization: \
                 \"Bearer ${{GITHUB_TOKEN}}\"\n---\n{body}"
            ),
        );
        write(
            root,
            &format!(".codex/agents/group{group}/codex-{i}.toml"),
            &format!(
                "name = \"codex-{i}\"\ndescription = \"Codex agent {i}.\"\nmodel = \
                 \"gpt-5.4-mini\"\nmodel_reasoning_effort = \"medium\"\nsandbox_mode = \
                 \"read-only\"\ndeveloper_instructions = \"\"\"\n{body}\"\"\"\n\n\
                 [mcp_servers.filesystem]\ncommand = \"npx\"\nargs = [\"-y\", \
                 \"@modelcontextprotocol/server-filesystem\", \"docs\"]\nenabled_tools = \
                 [\"read_text_file\"]\n"
            ),
        );
        write(
            root,
            &format!(".opencode/agents/group{group}/opencode-{i}.md"),
            &format!(
                "---\ndescription: OpenCode agent {i}.\nmode: subagent\nmodel: \
                 anthropic/claude-haiku-5-5\nsteps: 16\ntools:\n  \"*\": false\n  \
                 \"github_search_issues\": true\npermission:\n  edit: deny\n---\n{body}"
            ),
        );
    }
    for i in 0..20 {
        write(
            root,
            &format!(".agents/skills/skill-{i}/SKILL.md"),
            &format!("---\nname: skill-{i}\ndescription: Skill {i}.\n---\n{INSTRUCTIONS}"),
        );
    }
}

/// Writes 250 definitions each for Copilot, Cursor and Gemini CLI, written the way those
/// tools' users write them: display model names, tool aliases, `${{ secrets.X }}`.
fn generate_later_formats(root: &Path) {
    let body = INSTRUCTIONS.repeat(4);
    for i in 0..250 {
        let group = i % 10;
        write(
            root,
            &format!(".github/agents/group{group}/copilot-{i}.agent.md"),
            &format!(
                "---\nname: Copilot Reviewer {i}\ndescription: Reviews change {i}.\nmodel: \
                 ['Claude Sonnet 4.6 (copilot)', 'GPT-5 mini']\ntools: [read, search, edit, \
                 docs/search]\nmcp-servers:\n  docs:\n    type: local\n    command: npx\n    \
                 args: ['-y', '@acme/docs-mcp']\n    env:\n      DOCS_TOKEN: ${{{{ \
                 secrets.DOCS_TOKEN }}}}\n    tools: ['*']\n---\n{body}"
            ),
        );
        write(
            root,
            &format!(".cursor/agents/group{group}/cursor-{i}.md"),
            &format!(
                "---\nname: cursor-{i}\ndescription: Cursor agent {i}.\nmodel: \
                 claude-4.5-haiku\nreadonly: true\ntools: Read, Grep, Glob, Shell\n---\n{body}"
            ),
        );
        write(
            root,
            &format!(".gemini/agents/gemini-{i}.md"),
            &format!(
                "---\nname: gemini-{i}\ndescription: Gemini agent {i}.\nkind: local\nmodel: \
                 gpt-5.4\nmax_turns: 20\ntimeout_mins: 5\ntools: [read_file, grep_search, \
                 run_shell_command, mcp_docs_*]\nmcp_servers:\n  docs:\n    command: npx\n    \
                 args: ['-y', '@acme/docs-mcp']\n    include_tools: [search]\n---\n{body}"
            ),
        );
    }
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    generate(dir.path());
    let workspace = Workspace::open(dir.path()).unwrap();
    let options = LoadOptions::default();
    let catalog = load_catalog(&workspace, &options);
    // 1,000 agents; the Claude files' `: ` descriptions load through the lenient retry.
    assert_eq!(
        catalog.agents().len(),
        1000,
        "{:?}",
        &catalog.warnings()[..3]
    );
    assert_eq!(catalog.skills().len(), 20);
    c.bench_function("load_catalog/1000_definitions", |b| {
        b.iter(|| load_catalog(&workspace, &options))
    });

    let dir = tempfile::tempdir().unwrap();
    generate_later_formats(dir.path());
    let workspace = Workspace::open(dir.path()).unwrap();
    let catalog = load_catalog(&workspace, &options);
    assert_eq!(
        catalog.agents().len(),
        750,
        "{:?}",
        &catalog.warnings()[..3.min(catalog.warnings().len())]
    );
    c.bench_function("load_catalog/750_copilot_cursor_gemini", |b| {
        b.iter(|| load_catalog(&workspace, &options))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
