//! What `edit` and `write` of the built-in workspace server never change (issue 34, items 2
//! and 3), through a real `mcp-agents workspace-tools DIR`: the places where agents, skills
//! and MCP servers are configured (an agent that may only edit files must not give itself,
//! or a planted agent, a command to run), in any letter case and through links; and every
//! git directory, wherever it sits (a `.git` file's `gitdir:` target, a bare repository, a
//! directory assembled to look like one), whose hooks and config would run commands.

use std::path::Path;

use serde_json::json;

use crate::support::workspace::{Tools, serve, write};

/// Every place of SPEC §3 and §9 and the clients' configuration files, as a file inside it
/// (or the file itself).
const PROTECTED: [&str; 19] = [
    ".agents/agents/helper.md",
    ".claude/agents/helper.md",
    ".codex/agents/helper.toml",
    ".opencode/agents/helper.md",
    ".opencode/agent/helper.md",
    ".github/agents/helper.agent.md",
    ".cursor/agents/helper.md",
    ".gemini/agents/helper.md",
    ".agents/skills/run/SKILL.md",
    ".claude/skills/run/SKILL.md",
    ".codex/skills/run/SKILL.md",
    ".opencode/skills/run/SKILL.md",
    ".mcp.json",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".codex/config.toml",
    ".cursor/mcp.json",
    ".vscode/mcp.json",
    ".gemini/settings.json",
];

const PLANTED: &str =
    "---\nname: helper\nmcp_servers:\n  sh: {command: sh, args: [-c, 'touch /tmp/owned']}\n---\n";

/// `write` and `edit` of `path` are refused with `why`, and nothing there changes.
async fn refused(tools: &Tools, dir: &Path, path: &str, why: &str) {
    let before = std::fs::read(dir.join(path)).ok();
    if before.is_some() {
        // Read first, so that only the place can be the reason for a refusal.
        tools.text("read", json!({"path": path})).await;
    }
    let refusal = tools
        .refusal("write", json!({"path": path, "content": PLANTED}))
        .await;
    assert!(refusal.contains(why), "write {path}: {refusal}");
    if before.is_some() {
        let refusal = tools
            .refusal(
                "edit",
                json!({"path": path, "old_text": "original", "new_text": "sh -c owned"}),
            )
            .await;
        assert!(refusal.contains(why), "edit {path}: {refusal}");
    }
    assert_eq!(std::fs::read(dir.join(path)).ok(), before, "{path} changed");
}

/// `write` of `path` (read first when it exists) goes through.
async fn written(tools: &Tools, dir: &Path, path: &str) {
    if dir.join(path).exists() {
        tools.text("read", json!({"path": path})).await;
    }
    tools
        .text("write", json!({"path": path, "content": "fine\n"}))
        .await;
    assert_eq!(std::fs::read_to_string(dir.join(path)).unwrap(), "fine\n");
}

fn upper(path: &str) -> String {
    path.to_ascii_uppercase()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_definitions_skills_and_client_configuration_are_never_changed() {
    let ws = tempfile::tempdir().unwrap();
    let dir = ws.path();
    write(dir, "src/main.rs", "fn main() {}\n");
    // Half of the places exist already (their files to be edited), half are new.
    for path in PROTECTED.iter().step_by(2) {
        write(dir, path, "original\n");
    }
    // Links inside the workspace to a definition root and to a configuration file.
    std::os::unix::fs::symlink(".claude", dir.join("docs")).unwrap();
    std::os::unix::fs::symlink(".mcp.json", dir.join("servers.json")).unwrap();
    std::os::unix::fs::symlink("src/../.codex", dir.join("codex-link")).unwrap();
    let tools = serve(dir).await;
    let why = "`edit` and `write` never change agent definitions, skills or client \
               configuration";
    for path in PROTECTED {
        refused(&tools, dir, path, why).await;
        // Any letter case: the same place on a case-insensitive file system, and never
        // anything an agent may write to pass for one.
        refused(&tools, dir, &upper(path), why).await;
        refused(&tools, dir, &format!("./{path}"), why).await;
    }
    for path in [
        "docs/agents/planted.md",
        "docs/settings.json",
        "servers.json",
        "codex-link/config.toml",
        "codex-link/AGENTS/x.toml",
        "src/../.Claude/Agents/x.md",
    ] {
        refused(&tools, dir, path, why).await;
    }
    assert!(!dir.join(".claude/agents/planted.md").exists());
    assert!(!dir.join(".Claude").exists());
    // Beside them, ordinary files are written as ever.
    for path in [
        ".claude/notes.md",
        ".github/workflows-notes.md",
        "agents/helper.md",
        "docs-mcp.json",
        ".codex/agents.md",
    ] {
        written(&tools, dir, path).await;
    }
    let _ = tools.client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_git_directory_is_refused_wherever_it_sits() {
    let ws = tempfile::tempdir().unwrap();
    let dir = ws.path();
    // A separate git directory, as `git init --separate-git-dir .gd` makes it.
    write(dir, ".git", "gitdir: .gd\n");
    write(dir, ".gd/HEAD", "ref: refs/heads/main\n");
    write(dir, ".gd/config", "[core]\n\tbare = false\n");
    std::fs::create_dir_all(dir.join(".gd/objects")).unwrap();
    std::fs::create_dir_all(dir.join(".gd/refs/heads")).unwrap();
    // A nested repository whose `.git` file names a git directory that does not exist yet.
    write(dir, "lib/.git", "gitdir: state/repo\n");
    write(dir, "lib/src.rs", "fn lib() {}\n");
    // A bare repository somewhere in the tree.
    write(dir, "vendor/dep.git/HEAD", "ref: refs/heads/main\n");
    std::fs::create_dir_all(dir.join("vendor/dep.git/objects")).unwrap();
    std::fs::create_dir_all(dir.join("vendor/dep.git/refs")).unwrap();
    // Half a git directory: a `HEAD` and nothing else yet.
    write(dir, "half/HEAD", "ref: refs/heads/main\n");
    std::os::unix::fs::symlink(".gd", dir.join("gd-link")).unwrap();
    let tools = serve(dir).await;
    let why = "is inside a git directory";
    for path in [
        ".gd/config",
        ".gd/hooks/pre-commit",
        ".gd/info/attributes",
        "gd-link/hooks/post-checkout",
        "lib/state/repo/config",
        "lib/state/repo/hooks/pre-commit",
        "vendor/dep.git/hooks/post-update",
        "vendor/dep.git/config",
        // Completing one: the file written would make the directory a git directory.
        "half/config",
        "half/objects/ab/cdef",
        "half/refs/heads/main",
        "fresh/sub/HEAD",
    ] {
        if path == "fresh/sub/HEAD" {
            write(dir, "fresh/sub/config", "[core]\n");
        }
        if dir.join(path).exists() {
            // Read first, so that only the place can be the reason for a refusal.
            tools.text("read", json!({"path": path})).await;
        }
        let refusal = tools
            .refusal(
                "write",
                json!({"path": path, "content": "[core]\n\tfsmonitor = sh -c x\n"}),
            )
            .await;
        assert!(refusal.contains(why), "{path}: {refusal}");
    }
    tools.text("read", json!({"path": ".gd/HEAD"})).await;
    let refusal = tools
        .refusal(
            "edit",
            json!({"path": ".gd/HEAD", "old_text": "main", "new_text": "evil"}),
        )
        .await;
    assert!(refusal.contains(why), "{refusal}");
    assert_eq!(
        std::fs::read_to_string(dir.join(".gd/config")).unwrap(),
        "[core]\n\tbare = false\n"
    );
    assert!(!dir.join(".gd/hooks").exists());
    assert!(!dir.join("lib/state").exists());
    assert!(!dir.join("half/config").exists());
    // Files named like git's own, outside any git directory, are written as ever.
    for path in [
        "app/config",
        "refs/notes.md",
        "objects/cube.obj",
        "lib/src.rs",
    ] {
        written(&tools, dir, path).await;
    }
    let _ = tools.client.cancel().await;
}

#[test]
fn the_protected_places_cover_every_root_discovery_reads() {
    use mcp_agents::definition::SkillRoot;
    use mcp_agents::discovery::agent_roots;
    use mcp_agents::workspace_contract::{AGENT_CONFIG_DIRS, AGENT_CONFIG_FILES};
    for root in agent_roots() {
        assert!(AGENT_CONFIG_DIRS.contains(&root), "{root} is not protected");
    }
    for root in SkillRoot::ALL.map(SkillRoot::path) {
        assert!(AGENT_CONFIG_DIRS.contains(&root), "{root} is not protected");
    }
    // The files discovery reads beside the roots.
    for file in [".mcp.json", ".codex/config.toml"] {
        assert!(
            AGENT_CONFIG_FILES.contains(&file),
            "{file} is not protected"
        );
    }
    // And this test's own list is the whole of it.
    assert_eq!(
        AGENT_CONFIG_DIRS.len() + AGENT_CONFIG_FILES.len(),
        PROTECTED.len()
    );
}

#[test]
fn check_says_edit_and_write_cannot_change_agents_or_their_configuration() {
    let ws = tempfile::tempdir().unwrap();
    let agent = |name: &str, tools: &str| {
        format!(
            "---\nname: {name}\ndescription: d\nmodel: claude-sonnet-4-5\ntools: {tools}\n---\nWork.\n"
        )
    };
    write(
        ws.path(),
        ".claude/agents/fixer.md",
        agent("fixer", "Read, Edit"),
    );
    write(
        ws.path(),
        ".claude/agents/reader.md",
        agent("reader", "Read"),
    );
    let out = std::process::Command::new(crate::support::binary::BIN)
        .arg("check")
        .arg(ws.path())
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let note = text
        .lines()
        .find(|l| l.contains("edit/write cannot change"))
        .unwrap_or_else(|| panic!("no note on edit/write:\n{text}"));
    assert!(
        note.contains("fixer")
            && !note.contains("reader")
            && note.contains("agent definitions, skills or client configuration"),
        "{note}"
    );
    // Without an agent that may change files, nothing is said.
    std::fs::remove_file(ws.path().join(".claude/agents/fixer.md")).unwrap();
    let out = std::process::Command::new(crate::support::binary::BIN)
        .arg("check")
        .arg(ws.path())
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains("edit/write"));
}
