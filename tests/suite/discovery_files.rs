//! Reading files: size limit, UTF-8, frontmatter shape, YAML and TOML errors with their
//! line and column, the lenient retry for unquoted colons (SPEC §3, FORMATS.md).

use crate::support;

use mcp_agents::definition::Effect;
use mcp_agents::discovery::LoadOptions;

#[test]
fn every_malformed_file_is_one_warning_and_the_rest_loads() {
    let catalog = support::check_fixture("files");
    assert_eq!(
        catalog.get("bom-crlf").unwrap().instructions,
        "Body with CRLF.",
        "the body keeps no fence and no trailing whitespace"
    );
}

const DEFINITION_HEAD: &str =
    "---\nname: big\ndescription: Size limit.\nmodel: gpt-5.4\nmodel_provider: openai\n---\n";

fn definition_of_size(size: usize) -> Vec<u8> {
    let mut text = DEFINITION_HEAD.as_bytes().to_vec();
    text.resize(size, b'x');
    text
}

#[test]
fn a_file_of_exactly_one_mebibyte_loads() {
    let ws = support::TempWorkspace::new();
    ws.write(".agents/agents/big.md", definition_of_size(1024 * 1024));
    let catalog = ws.load(&LoadOptions::default());
    assert!(catalog.get("big").is_some(), "{:?}", catalog.warnings());
    assert!(catalog.warnings().is_empty());
}

#[test]
fn one_byte_more_is_rejected_with_its_size() {
    let ws = support::TempWorkspace::new();
    ws.write(".agents/agents/big.md", definition_of_size(1024 * 1024 + 1));
    let catalog = ws.load(&LoadOptions::default());
    assert!(catalog.get("big").is_none());
    let warning = &catalog.warnings()[0];
    assert_eq!(warning.effect, Effect::Rejected);
    assert_eq!(warning.file, std::path::Path::new(".agents/agents/big.md"));
    assert!(
        warning.reason.contains("larger than 1 MiB (1048577 bytes"),
        "{}",
        warning.reason
    );
}

#[test]
fn deeply_nested_documents_are_refused_without_a_crash() {
    let ws = support::TempWorkspace::new();
    let deep = 100_000;
    ws.write(
        ".codex/agents/arrays.toml",
        format!("a = {}{}\n", "[".repeat(deep), "]".repeat(deep)),
    );
    ws.write(
        ".codex/agents/tables.toml",
        format!("a = {}1{}\n", "{b = ".repeat(deep), "}".repeat(deep)),
    );
    ws.write(
        ".claude/agents/flow.md",
        format!(
            "---\na: {}1{}\n---\nBody.\n",
            "{b: ".repeat(deep),
            "}".repeat(deep)
        ),
    );
    ws.write(
        ".mcp.json",
        format!(
            "{{\"mcpServers\": {}{}}}",
            "[".repeat(deep),
            "]".repeat(deep)
        ),
    );
    ws.write(
        ".claude/agents/uses-mcp-json.md",
        "---\nname: uses\ndescription: d\nmodel: sonnet\nmcpServers: [x]\n---\nBody.\n",
    );
    let catalog = ws.load(&LoadOptions::default());
    assert!(catalog.agents().is_empty());
    let reasons: Vec<&str> = catalog
        .warnings()
        .iter()
        .map(|w| w.reason.as_str())
        .collect();
    assert_eq!(reasons.len(), 4, "{reasons:?}");
    assert!(reasons.iter().all(|r| r.contains("recursion")
        || r.contains("brackets nest more than 256")
        || r.contains(".mcp.json")));
    assert!(
        reasons
            .iter()
            .any(|r| r.contains(".mcp.json is invalid JSON")),
        "{reasons:?}"
    );
}

/// Makes a FIFO at `rel` below `root`, creating its folder.
#[cfg(unix)]
fn mkfifo(root: &std::path::Path, rel: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c_path` is a valid NUL-terminated path that outlives the call.
    let rc = unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) };
    assert_eq!(rc, 0, "mkfifo {}", path.display());
}

#[cfg(unix)]
#[test]
fn fifos_are_skipped_with_a_warning_instead_of_blocking_the_load() {
    let ws = support::TempWorkspace::new();
    ws.write(
        ".agents/agents/fine.md",
        "---\nname: fine\ndescription: d\nmodel: gpt-5.4\nmodel_provider: openai\n---\nBody.\n",
    );
    mkfifo(ws.path(), ".claude/agents/pipe.md");
    std::os::unix::fs::symlink("pipe.md", ws.path().join(".claude/agents/link.md")).unwrap();
    mkfifo(ws.path(), ".agents/skills/piped/SKILL.md");
    // Shared files read on behalf of definitions.
    mkfifo(ws.path(), ".mcp.json");
    ws.write(
        ".claude/agents/uses-mcp-json.md",
        "---\nname: uses\ndescription: d\nmodel: sonnet\nmcpServers: [github]\n---\nBody.\n",
    );
    mkfifo(ws.path(), ".codex/config.toml");
    ws.write(
        ".codex/agents/unnamed.toml",
        "description = \"d\"\nmodel = \"gpt-5.4\"\ndeveloper_instructions = \"Work.\"\n",
    );

    // Without the fix the load blocks forever in `open`; fail instead of hanging.
    let root = ws.path().to_owned();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(support::load_at(&root, &LoadOptions::default()));
    });
    let catalog = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("loading must not block on a FIFO");

    assert!(catalog.get("fine").is_some(), "{:?}", catalog.warnings());
    let warning = |file: &str| {
        catalog
            .warnings()
            .iter()
            .find(|w| w.file == std::path::Path::new(file))
            .unwrap_or_else(|| panic!("no warning for {file}: {:?}", catalog.warnings()))
    };
    for file in [
        ".claude/agents/pipe.md",
        ".claude/agents/link.md",
        ".agents/skills/piped/SKILL.md",
    ] {
        let w = warning(file);
        assert_eq!(w.effect, Effect::Skipped, "{file}");
        assert!(w.reason.contains("is not a regular file"), "{}", w.reason);
    }
    let w = warning(".claude/agents/uses-mcp-json.md");
    assert_eq!(w.effect, Effect::Rejected);
    assert!(
        w.reason.contains(".mcp.json is not a regular file"),
        "{}",
        w.reason
    );
    let w = warning(".codex/agents/unnamed.toml");
    assert_eq!(w.effect, Effect::Rejected);
    assert!(w.reason.contains("is not a regular file"), "{}", w.reason);
    assert_eq!(catalog.warnings().len(), 5, "{:?}", catalog.warnings());
}
