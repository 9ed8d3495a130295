//! The documentation stays true: its JSON and TOML blocks parse, every error code has a
//! troubleshooting entry, and every command it shows exists.

use std::path::Path;

use mcp_agents::error::ErrorCode;

fn doc(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("docs")
            .join(name),
    )
    .unwrap()
}

/// The fenced blocks of `language` in `text`.
fn blocks<'a>(text: &'a str, language: &str) -> Vec<&'a str> {
    let fence = format!("```{language}\n");
    text.split(&fence)
        .skip(1)
        .map(|rest| &rest[..rest.find("```").unwrap()])
        .collect()
}

#[test]
fn json_and_toml_blocks_parse() {
    let mut checked = 0;
    for entry in std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        for block in blocks(&text, "json") {
            serde_json::from_str::<serde_json::Value>(&block.replace('…', ""))
                .unwrap_or_else(|e| panic!("{}: {e}\n{block}", path.display()));
            checked += 1;
        }
        for block in blocks(&text, "toml") {
            toml::from_str::<toml::Table>(block)
                .unwrap_or_else(|e| panic!("{}: {e}\n{block}", path.display()));
            checked += 1;
        }
    }
    assert!(checked >= 7, "only {checked} blocks found");
}

#[test]
fn every_error_code_is_explained() {
    let troubleshooting = doc("troubleshooting.md");
    for code in ErrorCode::ALL {
        assert!(
            troubleshooting.contains(&format!("| `{}` |", code.as_str())),
            "{code} has no row in troubleshooting.md"
        );
    }
}

#[test]
fn documented_commands_exist() {
    let help = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-agents"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    for command in ["check", "run", "demo", "workspace-tools"] {
        assert!(
            help.contains(&format!("  {command} ")),
            "{command} missing from --help"
        );
        let readme =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
                .unwrap();
        let documented = [readme, doc("agents.md"), doc("clients.md")]
            .iter()
            .any(|text| text.contains(&format!("mcp-agents {command}")));
        assert!(documented, "`mcp-agents {command}` is not documented");
    }
    for option in ["--http", "--auth-token-env", "--default-model"] {
        assert!(help.contains(option), "{option} missing from --help");
        let documented = ["clients.md", "agents.md"]
            .iter()
            .any(|d| doc(d).contains(option));
        assert!(documented, "{option} is not documented");
    }
}
