//! Fixture workspaces and what must happen to each of their files.
//!
//! Fixture workspaces under `tests/fixtures/` state what must happen to each of their files,
//! either inline (a `# expect: …` line anywhere in the file) or in an `expect.toml` at the
//! fixture's root (for files that must stay unedited, symbolic links and directories):
//!
//! ```text
//! # expect: loaded                      the file is loaded (as an agent or a skill)
//! # expect: loaded as NAME              … under that name
//! # expect: caveat: TEXT                … with a warning containing TEXT
//! # expect: rejected: TEXT              a rejection warning containing TEXT
//! # expect: shadowed: TEXT              a "name already defined" warning containing TEXT
//! # expect: skipped: TEXT               a "not searched / not followed" warning
//! # expect: ignored                     neither loaded nor warned about
//! # expect: workspace: read, grep       the agent gets exactly these workspace tools
//! # expect: workspace: none             … and none of them
//! # expect: asks: 600                   the agent may ask its parent; a question waits 600 s
//! # expect: asks: none                  … it may not ask
//! ```
//!
//! [`check_fixture`] loads the workspace and fails on any file whose outcome differs, on any
//! definition-like file without an expectation, and on any warning nobody expected.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use mcp_agents::definition::{Catalog, Effect, SkillRoot};
use mcp_agents::discovery::{DefaultModel, LoadOptions, Workspace, agent_roots, load_catalog};

pub fn fixture_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// What must happen to one file.
#[derive(Debug, Clone, PartialEq)]
pub enum Expect {
    Loaded(Option<String>),
    Caveat(String),
    Rejected(String),
    Shadowed(String),
    Skipped(String),
    Ignored,
    /// The workspace tools the agent gets, in the server's order.
    Workspace(Vec<String>),
    /// Whether the agent may ask its parent, and how long a question waits, in seconds.
    Asks(Option<u64>),
}

impl Expect {
    fn parse(text: &str) -> Result<Expect, String> {
        let text = text.trim();
        let (word, rest) = text
            .split_once(':')
            .map_or((text, ""), |(w, r)| (w, r.trim()));
        Ok(match word.trim() {
            "loaded" => Expect::Loaded(None),
            w if w.starts_with("loaded as ") => {
                Expect::Loaded(Some(w["loaded as ".len()..].trim().to_owned()))
            }
            "caveat" => Expect::Caveat(rest.to_owned()),
            "rejected" => Expect::Rejected(rest.to_owned()),
            "shadowed" => Expect::Shadowed(rest.to_owned()),
            "skipped" => Expect::Skipped(rest.to_owned()),
            "ignored" => Expect::Ignored,
            "workspace" if rest == "none" => Expect::Workspace(Vec::new()),
            "workspace" => {
                Expect::Workspace(rest.split(',').map(|t| t.trim().to_owned()).collect())
            }
            "asks" if rest == "none" => Expect::Asks(None),
            "asks" => Expect::Asks(Some(
                rest.parse()
                    .map_err(|_| format!("asks: {rest:?} is not seconds"))?,
            )),
            other => return Err(format!("unknown expectation {other:?}")),
        })
    }

    fn effect(&self) -> Option<Effect> {
        match self {
            Expect::Caveat(_) => Some(Effect::Loaded),
            Expect::Rejected(_) => Some(Effect::Rejected),
            Expect::Shadowed(_) => Some(Effect::Shadowed),
            Expect::Skipped(_) => Some(Effect::Skipped),
            Expect::Loaded(_) | Expect::Ignored | Expect::Workspace(_) | Expect::Asks(_) => None,
        }
    }

    fn text(&self) -> &str {
        match self {
            Expect::Caveat(t) | Expect::Rejected(t) | Expect::Shadowed(t) | Expect::Skipped(t) => t,
            _ => "",
        }
    }
}

/// The fixture's `expect.toml`, if any.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ExpectFile {
    default_model: Option<String>,
    #[serde(default)]
    env: HashMap<String, String>,
    /// The server's budget defaults (`--max-tool-calls` …).
    #[serde(default)]
    budget: BudgetDefaults,
    #[serde(default)]
    file: Vec<FileExpectation>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct BudgetDefaults {
    max_tool_calls: Option<u32>,
    max_run_tokens: Option<u32>,
    max_run_seconds: Option<u32>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FileExpectation {
    path: String,
    expect: Vec<String>,
}

/// The options a fixture asks for (default model, environment).
pub fn fixture_options(root: &Path) -> LoadOptions {
    let spec = read_expect_file(root);
    LoadOptions {
        default_model: spec.default_model.map(|m| {
            m.parse::<DefaultModel>()
                .expect("default_model in expect.toml")
        }),
        budget: mcp_agents::definition::RunBudget {
            max_tool_calls: spec.budget.max_tool_calls,
            max_run_tokens: spec.budget.max_run_tokens,
            max_run_seconds: spec.budget.max_run_seconds,
        },
        env: spec.env,
        ..LoadOptions::default()
    }
}

fn read_expect_file(root: &Path) -> ExpectFile {
    match fs::read_to_string(root.join("expect.toml")) {
        Ok(text) => toml::from_str(&text).expect("expect.toml must parse"),
        Err(_) => ExpectFile::default(),
    }
}

/// Loads a fixture workspace with its options.
pub fn load_fixture(name: &str) -> Catalog {
    let root = fixture_path(name);
    load_at(&root, &fixture_options(&root))
}

pub fn load_at(root: &Path, options: &LoadOptions) -> Catalog {
    load_catalog(&Workspace::open(root).expect("fixture workspace"), options)
}

/// Checks every expectation of the fixture `name`; panics with every mismatch listed.
pub fn check_fixture(name: &str) -> Catalog {
    let root = fixture_path(name);
    let spec = read_expect_file(&root);
    let catalog = load_at(&root, &fixture_options(&root));
    let root = root.canonicalize().expect("fixture root");
    let (expectations, unannotated) = expectations_of(&root, spec.file);

    let mut problems = Vec::new();
    if !unannotated.is_empty() {
        problems.push(format!("files without an expectation: {unannotated:?}"));
    }
    let mut claimed = vec![false; catalog.warnings().len()];
    for (path, expect) in &expectations {
        problems.extend(check_one(&catalog, path, expect, &mut claimed));
    }
    for (i, warning) in catalog.warnings().iter().enumerate() {
        if !claimed[i] {
            problems.push(format!(
                "unexpected warning: {} ({})",
                warning,
                warning.effect.as_str()
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "fixture {name}:\n  {}",
        problems.join("\n  ")
    );
    catalog
}

/// Every expectation of the fixture at `root`: those of its `expect.toml` (`listed`), then
/// the inline ones of each definition-like file; and the files that have none.
fn expectations_of(
    root: &Path,
    listed: Vec<FileExpectation>,
) -> (Vec<(PathBuf, Expect)>, Vec<String>) {
    let mut expectations: Vec<(PathBuf, Expect)> = Vec::new();
    for entry in listed {
        for e in entry.expect {
            expectations.push((PathBuf::from(&entry.path), Expect::parse(&e).unwrap()));
        }
    }
    let mut unannotated = Vec::new();
    for file in definition_like_files(root) {
        let rel = file.strip_prefix(root).unwrap().to_owned();
        let bytes = fs::read(&file).unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes);
        let inline: Vec<Expect> = text
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix("# expect:"))
            .map(|e| Expect::parse(e).unwrap_or_else(|err| panic!("{}: {err}", rel.display())))
            .collect();
        if inline.is_empty() && !expectations.iter().any(|(p, _)| *p == rel) {
            unannotated.push(rel.display().to_string());
        }
        expectations.extend(inline.into_iter().map(|e| (rel.clone(), e)));
    }
    (expectations, unannotated)
}

/// What the catalog did with one file, as [`check_one`] compares it with an expectation.
struct Outcome<'a> {
    path: &'a Path,
    agent: Option<&'a mcp_agents::definition::AgentDefinition>,
    /// The name it was loaded under, as an agent or a skill.
    loaded_name: Option<String>,
    /// The warnings about the file, with their index in the catalog's.
    warnings: Vec<(usize, &'a mcp_agents::definition::Warning)>,
}

impl Outcome<'_> {
    fn reasons(&self) -> Vec<&String> {
        self.warnings.iter().map(|(_, w)| &w.reason).collect()
    }
}

/// The problems of one expectation about `path`; a warning it expects is marked `claimed`.
fn check_one(catalog: &Catalog, path: &Path, expect: &Expect, claimed: &mut [bool]) -> Vec<String> {
    let agent = catalog.agents().iter().find(|a| a.source.path == *path);
    let skill = catalog.skills().iter().find(|s| s.path == *path);
    let outcome = Outcome {
        path,
        agent: agent.map(|a| &**a),
        loaded_name: agent
            .map(|a| a.name.clone())
            .or(skill.map(|s| s.name.clone())),
        warnings: catalog
            .warnings()
            .iter()
            .enumerate()
            .filter(|(_, w)| w.file == *path)
            .collect(),
    };
    match expect {
        Expect::Loaded(name) => check_loaded(&outcome, name.as_deref()),
        Expect::Workspace(tools) => check_workspace_tools(&outcome, tools),
        Expect::Asks(timeout) => check_asks(&outcome, *timeout),
        Expect::Ignored => check_ignored(&outcome),
        other => check_warned(&outcome, other, claimed),
    }
}

fn check_loaded(outcome: &Outcome, name: Option<&str>) -> Vec<String> {
    let path = outcome.path.display();
    match (&outcome.loaded_name, name) {
        (None, _) => vec![format!(
            "{path}: expected to load; warnings: {:?}",
            outcome.reasons()
        )],
        (Some(got), Some(want)) if got != want => {
            vec![format!("{path}: loaded as {got}, expected {want}")]
        }
        _ => Vec::new(),
    }
}

fn check_workspace_tools(outcome: &Outcome, tools: &[String]) -> Vec<String> {
    let path = outcome.path.display();
    match outcome.agent {
        None => vec![format!(
            "{path}: expected an agent with workspace tools {tools:?}; not loaded"
        )],
        Some(agent) if agent.workspace_tools() != *tools => vec![format!(
            "{path}: expected workspace tools {tools:?}, got {:?}",
            agent.workspace_tools()
        )],
        Some(_) => Vec::new(),
    }
}

fn check_asks(outcome: &Outcome, timeout: Option<u64>) -> Vec<String> {
    let path = outcome.path.display();
    let Some(agent) = outcome.agent else {
        return vec![format!(
            "{path}: expected an agent (asks: {timeout:?}); not loaded"
        )];
    };
    let got = agent.ask_parent.map(|ask| ask.timeout.as_secs());
    if got == timeout {
        Vec::new()
    } else {
        vec![format!(
            "{path}: expected asks {timeout:?} (seconds), got {got:?}"
        )]
    }
}

fn check_ignored(outcome: &Outcome) -> Vec<String> {
    if outcome.loaded_name.is_none() && outcome.warnings.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "{}: expected to be ignored silently; loaded: {:?}, warnings: {:?}",
        outcome.path.display(),
        outcome.loaded_name,
        outcome.reasons()
    )]
}

/// A warning of the expectation's effect containing its text; the file loads only with a
/// caveat.
fn check_warned(outcome: &Outcome, expect: &Expect, claimed: &mut [bool]) -> Vec<String> {
    let path = outcome.path.display();
    let effect = expect.effect().unwrap();
    let mut problems = Vec::new();
    let found = outcome
        .warnings
        .iter()
        .find(|(_, w)| w.effect == effect && w.reason.contains(expect.text()));
    match found {
        Some((i, _)) => claimed[*i] = true,
        None => problems.push(format!(
            "{path}: expected a {} warning containing {:?}; got {:?}",
            effect.as_str(),
            expect.text(),
            outcome
                .warnings
                .iter()
                .map(|(_, w)| format!("{}: {}", w.effect.as_str(), w.reason))
                .collect::<Vec<_>>()
        )),
    }
    if effect != Effect::Loaded && outcome.loaded_name.is_some() {
        problems.push(format!("{path}: expected not to load, but it did"));
    }
    problems
}

/// Files discovery would consider (`.md`/`.toml` in agent roots, `SKILL.md` in skill roots),
/// found without following links, hidden names included so a fixture cannot hide one.
fn definition_like_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in agent_roots() {
        collect(&root.join(dir), &mut out, &|n| {
            n.ends_with(".md") || n.ends_with(".toml")
        });
    }
    for dir in SkillRoot::ALL.map(SkillRoot::path) {
        collect(&root.join(dir), &mut out, &|n| n == "SKILL.md");
    }
    out.sort();
    out.dedup();
    out
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>, wanted: &dyn Fn(&str) -> bool) {
    let Ok(meta) = fs::symlink_metadata(dir) else {
        return;
    };
    if meta.file_type().is_symlink() {
        return;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        let name = entry.file_name().to_string_lossy().into_owned();
        if file_type.is_dir() {
            collect(&path, out, wanted);
        } else if file_type.is_file() && wanted(&name) {
            out.push(path);
        }
    }
}

/// Fails if any warning of `catalog` quotes `secret`.
pub fn assert_no_warning_quotes(catalog: &Catalog, secret: &str) {
    let quoting: Vec<&str> = catalog
        .warnings()
        .iter()
        .map(|w| w.reason.as_str())
        .filter(|reason| reason.contains(secret))
        .collect();
    assert!(quoting.is_empty(), "{quoting:?}");
}

/// The reasons of `check --json`'s warnings about loading (readiness's, a key not set
/// here, left out: `needs` shows them).
pub fn loading_reasons(report: &serde_json::Value) -> Vec<&str> {
    report["warnings"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter(|w| w["effect"] != "will_fail_at_spawn")
        .filter_map(|w| w["reason"].as_str())
        .collect()
}

/// The agent named `name` in a `check --json` report.
pub fn agent_named<'a>(report: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    report["agents"]
        .as_array()
        .expect("agents")
        .iter()
        .find(|a| a["name"] == name)
        .unwrap_or_else(|| panic!("no agent {name} in {report}"))
}
