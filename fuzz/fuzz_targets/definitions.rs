//! Every definition format's parser, on any bytes.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use mcp_agents::definition::Format;
use mcp_agents::discovery::{LoadOptions, parse_definition};
use mcp_agents::definition::SkillRegistry;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let options = LoadOptions::default();
    let skills = SkillRegistry::default();
    for (format, path) in [
        (Format::CanonicalMarkdown, ".agents/agents/a.md"),
        (Format::CanonicalToml, ".agents/agents/a.toml"),
        (Format::Claude, ".claude/agents/a.md"),
        (Format::Codex, ".codex/agents/a.toml"),
        (Format::OpenCode, ".opencode/agents/x/a.md"),
        (Format::Copilot, ".github/agents/x/a.agent.md"),
        (Format::Cursor, ".cursor/agents/a.md"),
        (Format::Gemini, ".gemini/agents/a.md"),
    ] {
        let _ = parse_definition(
            &text,
            format,
            Path::new(path),
            Path::new("/nonexistent"),
            &skills,
            &options,
        );
    }
});
