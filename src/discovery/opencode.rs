//! OpenCode agents (FORMATS.md §4): `.opencode/agents/**/*.md` and `.opencode/agent/**/*.md`.

use super::field_names as fields;
use std::path::Path;

use serde_json::{Map, Value};

use super::build::finalize;
use super::draft::{CANONICAL_SPELLINGS, Draft, ModelChoice, Spellings, read_common};
use super::fields::Doc;
use super::source::{parse_frontmatter, split_frontmatter};
use super::spec::{AgentName, Ctx, FileSpec, FormatSpec, ModelNames, Parsed, Subfolders, Syntax};
use super::tool_lists::{grant_workspace, read_qualified_tool_lists};
use super::vocabulary::{ToolMeaning, ToolName, Tools, Vocabulary};
use crate::definition::{
    BuiltinServer, Format, Model, ModelOrigin, ProviderKind, SourceFile, ToolFilter, ToolNaming,
    ToolPattern,
};

pub(super) const SPEC: FormatSpec = FormatSpec {
    // OpenCode reads the singular spelling too, at the same precedence.
    folders: &[".opencode/agents", ".opencode/agent"],
    subfolders: Subfolders::Searched,
    skipped_prefix: None,
    files: &[FileSpec {
        extension: "md",
        format: Format::OpenCode,
        syntax: Syntax::Frontmatter,
        agent_name: AgentName::FieldElsePath(name_from_path),
        fields: fields::OPENCODE,
        parse,
    }],
    tools: Tools::Client(&TOOLS),
    models: ModelNames::ProviderPrefixed,
};

/// OpenCode's own tool and permission keys: its file tools, which the built-in workspace
/// server provides under the same names (SPEC §8.6), and its built-ins that do not exist
/// here. Any other key is a pattern over child tools (`github_*`).
const TOOLS: Vocabulary = Vocabulary {
    client: "OpenCode's tools",
    names: &[
        ToolName::own("read", &["read"]),
        ToolName::own("grep", &["grep"]),
        ToolName::own("glob", &["glob"]),
        ToolName::own("list", &["list"]),
        ToolName::own("edit", &["edit"]),
        ToolName::own("write", &["write"]),
        ToolName::missing("patch"),
        ToolName::missing("bash"),
        ToolName::missing("task"),
        ToolName::missing("external_directory"),
        ToolName::missing("lsp"),
        ToolName::missing("skill"),
        ToolName::missing("repo_clone"),
        ToolName::missing("repo_overview"),
        ToolName::missing("model_override"),
        ToolName::missing("todowrite"),
        ToolName::missing("todoread"),
        // OpenCode's tool that asks the user (opencode.ai/docs/tools, `question`): here
        // the question to the parent (SPEC §4.5).
        ToolName::asks(ASK_KEY),
        ToolName::missing("webfetch"),
        ToolName::missing("websearch"),
        ToolName::missing("codesearch"),
        ToolName::missing("doom_loop"),
    ],
    any_case: false,
    groups: false,
    own_servers_only: false,
};

const SPELLINGS: Spellings = Spellings {
    max_turns: fields::OPENCODE_MAX_TURNS,
    ..CANONICAL_SPELLINGS
};

/// Parses one file; its path below the agents folder gives the default name.
fn parse(text: &str, source: SourceFile, ctx: &mut Ctx<'_>) -> Result<Parsed, String> {
    let split = split_frontmatter(text)?;
    let frontmatter = parse_frontmatter(split.yaml)?;
    ctx.caveats.extend(frontmatter.lenient_note);
    let doc = Doc::new(&frontmatter.fields);

    match doc.str(fields::MODE)? {
        Some((_, "primary")) => {
            return Ok(Parsed::NotASubagent(
                "`mode: primary` makes it a primary agent, not a subagent".to_owned(),
            ));
        }
        Some((_, "subagent" | "all")) | None => {}
        Some((field, other)) => {
            return Err(format!(
                "`{field}` is {other:?}; use subagent, all or primary"
            ));
        }
    }
    if doc.bool(&["disable"])? == Some(true) || doc.bool(&["disabled"])? == Some(true) {
        return Ok(Parsed::NotASubagent("it is disabled".to_owned()));
    }

    let body = split.body.trim();
    let mut draft = Draft {
        name: Some(match doc.string(fields::NAME)? {
            Some(name) => name.trim().to_owned(),
            None => name_from_path(ctx.rel_in_root),
        }),
        description: doc.string(fields::DESCRIPTION)?,
        instructions: if body.is_empty() {
            doc.string(fields::PROMPT)?
        } else {
            Some(body.to_owned())
        },
        instructions_hint: "the instructions are empty: write the prompt after the frontmatter",
        ..Draft::default()
    };
    read_common(doc, &mut draft, &SPELLINGS, ctx)?;
    draft.model = model_choice(doc, &mut draft)?;

    let mut rules = Vec::new();
    let mut tools_list = false;
    match doc.find(fields::TOOLS)? {
        Some((field, Value::Object(tools))) => {
            rules.extend(tool_rules(field, tools, &mut draft.unknown_tools)?)
        }
        // A list is the canonical allow list (an extension every format accepts).
        Some((_, Value::Array(_))) => tools_list = true,
        Some((field, other)) => {
            return Err(super::fields::wrong_type(
                field,
                "a mapping of switches",
                other,
            ));
        }
        None => {}
    }
    if let Some((field, permission)) = doc.find(fields::PERMISSION)? {
        rules.extend(permission_rules(
            field,
            permission,
            &mut draft.unknown_tools,
            ctx,
        )?);
    }
    let (ask, rules) = ask_rules(rules);
    if let Some(allow) = ask {
        draft.ask.named(allow);
    }
    draft.tools = ordered_rules_to_filter(&rules);
    let allow: &[&str] = if tools_list { &["tools"] } else { &[] };
    read_qualified_tool_lists(doc, &mut draft, allow, fields::DISALLOWED_TOOLS, false)?;
    // OpenCode gives every agent its file tools unless `tools` or `permission` switch them
    // off; the rules above decide which of the workspace server's tools pass.
    grant_workspace(&mut draft);
    finalize(draft, source, ctx)
}

/// OpenCode names an agent after its path below the agents folder: `team/reviewer.md` is
/// `team-reviewer` here (`/` cannot be in a name).
fn name_from_path(rel_in_root: &Path) -> String {
    let stem = rel_in_root.with_extension("");
    stem.components()
        .map(|c| c.as_os_str().to_string_lossy().to_lowercase())
        .collect::<Vec<_>>()
        .join("-")
}

/// OpenCode's provider id for Gemini (models.dev `google`), and the variable its key is read
/// from there (`@ai-sdk/google`'s).
const OPENCODE_GOOGLE: &str = "google";
const OPENCODE_GOOGLE_KEY: &str = "GOOGLE_GENERATIVE_AI_API_KEY";

/// `provider/model-id`, split at the first `/`. A provider other than openai, anthropic or
/// gemini needs the canonical endpoint fields in the same file; OpenCode's `google` is the
/// built-in `gemini` (Gemini's OpenAI-compatible endpoint) with the key OpenCode's Google
/// provider reads, `GOOGLE_GENERATIVE_AI_API_KEY`, unless the file names another. An explicit
/// `model_provider` must agree with the prefix: a built-in one with the same prefix, `custom`
/// with a prefix that is not a built-in one (the name of the custom provider, as in
/// OpenCode). With `model_provider` a bare id needs no prefix.
fn model_choice(doc: Doc<'_>, draft: &mut Draft) -> Result<ModelChoice, String> {
    let Some((field, model)) = doc.str(fields::MODEL)? else {
        return Ok(ModelChoice::Parent);
    };
    let model = model.trim();
    if model.contains('#') {
        return Err(format!(
            "`{field}` has a `#variant` suffix, which this runtime does not support"
        ));
    }
    let named = |id: &str| {
        ModelChoice::Named(Model {
            id: id.to_owned(),
            origin: ModelOrigin::Explicit,
        })
    };
    let split = model
        .split_once('/')
        .filter(|(p, id)| !p.is_empty() && !id.is_empty());
    let google = split.is_some_and(|(p, _)| p == OPENCODE_GOOGLE);
    let split = split.map(|(p, id)| (if google { "gemini" } else { p }, id));
    if google {
        draft
            .env_key
            .get_or_insert_with(|| OPENCODE_GOOGLE_KEY.to_owned());
    }
    let built_in = |p: &str| ProviderKind::parse(p).is_some_and(|k| k != ProviderKind::Custom);
    let Some((prefix, id)) = split else {
        if draft.provider.is_some() {
            // `model_provider` says where to send it; there is nothing to split.
            return Ok(named(model));
        }
        return Err(format!(
            "`{field}` must be `provider/model-id` (for example openai/gpt-5)"
        ));
    };
    if let Some(explicit) = draft.provider.as_deref() {
        match ProviderKind::parse(explicit) {
            Some(ProviderKind::OpenAi | ProviderKind::Anthropic | ProviderKind::Gemini)
                if prefix != explicit =>
            {
                return Err(format!(
                    "`{field}` names the provider `{prefix}` but `model_provider` is \
                     `{explicit}`; in OpenCode files the part before the first `/` is the \
                     provider, so make them agree (or drop `model_provider`)"
                ));
            }
            Some(ProviderKind::Custom) if built_in(prefix) => {
                return Err(format!(
                    "`{field}` names the built-in provider `{prefix}` but `model_provider` is \
                     `custom`; in OpenCode files the part before the first `/` is the \
                     provider: write `{field}: PROVIDER/{model}` to send the id `{model}` \
                     to the custom endpoint, or use `model_provider: {prefix}` (its \
                     `base_url` may be overridden)"
                ));
            }
            // Agreeing, or an unknown `model_provider`, which `finalize` refuses.
            _ => {}
        }
        return Ok(named(id));
    }
    if built_in(prefix) {
        draft.provider = Some(prefix.to_owned());
    } else if draft.base_url.is_some() || draft.env_key.is_some() || draft.wire_api.is_some() {
        draft.provider = Some("custom".to_owned());
    } else {
        return Err(format!(
            "`{field}` uses the provider `{prefix}`, which is not built in (openai, \
             anthropic, google); add base_url, env_key and wire_api to this file to use it"
        ));
    }
    Ok(named(id))
}

/// One `pattern: allow|deny` rule, in the order written (OpenCode: the last match wins).
#[derive(Debug, Clone, PartialEq)]
struct Rule {
    pattern: String,
    allow: bool,
}

/// OpenCode's tool that asks the user, and the pattern of its rules.
const ASK_KEY: &str = "question";

/// What an OpenCode tool or permission key names.
enum Key<'a> {
    /// Workspace server tools: the patterns that name them (`workspace_read`).
    Workspace(Vec<String>),
    /// `question`: whether the agent may ask its parent (SPEC §4.5), as a rule of its own.
    Ask,
    /// An OpenCode built-in that does not exist here.
    Missing,
    /// A pattern over child tools (`github_*`, `*`).
    Child(&'a str),
}

/// Whether a key is read from `tools` (one tool each) or from `permission`, where OpenCode's
/// `edit` governs every change to a file: `edit` and `write` here.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Tools,
    Permission,
}

fn key(text: &str, place: Place) -> Key<'_> {
    let pattern = |tool: &str| format!("{}_{tool}", BuiltinServer::Workspace.name());
    if place == Place::Permission && text == "edit" {
        return Key::Workspace(vec![pattern("edit"), pattern("write")]);
    }
    match TOOLS.meaning(text) {
        Some(ToolMeaning::Workspace(tools)) => {
            Key::Workspace(tools.iter().map(|tool| pattern(tool)).collect())
        }
        Some(ToolMeaning::AskParent) => Key::Ask,
        Some(ToolMeaning::RunsWithout) => Key::Missing,
        None => Key::Child(text),
    }
}

/// `tools`: `name: true|false` switches, in order. A built-in switched on that does not
/// exist here goes to `missing`; switched off, it is honoured by its absence.
fn tool_rules(
    field: &str,
    tools: &Map<String, Value>,
    missing: &mut Vec<String>,
) -> Result<Vec<Rule>, String> {
    let mut rules = Vec::new();
    for (name, flag) in tools {
        let Value::Bool(allow) = flag else {
            return Err(format!("`{field}.{name}` must be true or false"));
        };
        let patterns = match key(name, Place::Tools) {
            Key::Workspace(patterns) => patterns,
            Key::Ask => vec![ASK_KEY.to_owned()],
            Key::Missing => {
                if *allow {
                    missing.push(name.clone());
                }
                continue;
            }
            Key::Child(pattern) => vec![pattern.to_owned()],
        };
        rules.extend(patterns.into_iter().map(|pattern| Rule {
            pattern,
            allow: *allow,
        }));
    }
    Ok(rules)
}

/// `permission`: a bare action means `{"*": action}`. `read`, `grep`, `glob` and `list`
/// govern the workspace server's tools; other keys for OpenCode built-ins name tools that do
/// not exist here (allowed or asked for, they are listed in the agent's one warning); other
/// keys are child-tool patterns. `ask` cannot be honoured (nobody is asked), so it denies.
fn permission_rules(
    field: &str,
    value: &Value,
    missing: &mut Vec<String>,
    ctx: &mut Ctx<'_>,
) -> Result<Vec<Rule>, String> {
    let single;
    let map = match value {
        Value::String(_) => {
            single = Map::from_iter([("*".to_owned(), value.clone())]);
            &single
        }
        Value::Object(map) => map,
        other => {
            return Err(super::fields::wrong_type(
                field,
                "an action or a mapping",
                other,
            ));
        }
    };
    let mut rules = Vec::new();
    for (name, action) in map {
        let named = key(name, Place::Permission);
        let action = match action {
            Value::String(a) => a.as_str(),
            Value::Object(per_argument) => {
                rules.extend(per_argument_rules(
                    field,
                    name,
                    named,
                    per_argument,
                    missing,
                    ctx,
                ));
                continue;
            }
            other => {
                return Err(super::fields::wrong_type(
                    &format!("{field}.{name}"),
                    "allow, ask or deny",
                    other,
                ));
            }
        };
        let allow = action_allows(field, name, action, &named, ctx)?;
        let patterns = match named {
            Key::Workspace(patterns) => patterns,
            Key::Ask => vec![ASK_KEY.to_owned()],
            Key::Missing => {
                if action != "deny" {
                    missing.push(name.clone());
                }
                continue;
            }
            Key::Child(pattern) => vec![pattern.to_owned()],
        };
        rules.extend(patterns.into_iter().map(|pattern| Rule { pattern, allow }));
    }
    Ok(rules)
}

/// Whether a `permission` action allows: `allow` does, `deny` does not, and `ask` cannot be
/// honoured (nobody is asked), so it denies, with a caveat.
fn action_allows(
    field: &str,
    name: &str,
    action: &str,
    named: &Key<'_>,
    ctx: &mut Ctx<'_>,
) -> Result<bool, String> {
    match action {
        "allow" => Ok(true),
        "deny" => Ok(false),
        "ask" => {
            match named {
                Key::Workspace(_) => ctx.caveats.push(format!(
                    "`{field}.{name}: ask` withholds `{name}`: this runtime never asks \
                     anyone"
                )),
                Key::Child(_) => ctx.caveats.push(format!(
                    "`{field}.{name}: ask` denies the matching child tools: this runtime \
                     never asks anyone"
                )),
                Key::Ask | Key::Missing => {}
            }
            Ok(false)
        }
        other => Err(format!(
            "`{field}.{name}` is {other:?}; use allow, ask or deny"
        )),
    }
}

/// A `permission` key with per-argument (per-path) rules. Only `allow` everywhere can be
/// honoured as written; anything less is honoured by withholding the tool, never by giving
/// more. A built-in that does not exist here and is allowed or asked for somewhere goes to
/// `missing`; child tools' per-argument rules are ignored.
fn per_argument_rules(
    field: &str,
    name: &String,
    named: Key<'_>,
    per_argument: &Map<String, Value>,
    missing: &mut Vec<String>,
    ctx: &mut Ctx<'_>,
) -> Vec<Rule> {
    let actions: Vec<&str> = per_argument.values().filter_map(Value::as_str).collect();
    let grants = |a: &&str| matches!(*a, "allow" | "ask");
    match named {
        Key::Missing => {
            if actions.iter().any(grants) {
                missing.push(name.clone());
            }
            Vec::new()
        }
        Key::Ask => {
            let allow = !actions.is_empty() && actions.iter().all(|a| *a == "allow");
            vec![Rule {
                pattern: ASK_KEY.to_owned(),
                allow,
            }]
        }
        Key::Workspace(patterns) => {
            let allow = !actions.is_empty()
                && actions.len() == per_argument.len()
                && actions.iter().all(|a| *a == "allow");
            if !allow && actions.iter().any(grants) {
                ctx.caveats.push(format!(
                    "`{field}.{name}` has per-path rules, which this runtime \
                     cannot apply; `{name}` is withheld"
                ));
            }
            patterns
                .into_iter()
                .map(|pattern| Rule { pattern, allow })
                .collect()
        }
        Key::Child(_) => {
            ctx.caveats.push(format!(
                "`{field}.{name}` has per-argument rules, which this runtime cannot \
                 apply to child tools; they are ignored"
            ));
            Vec::new()
        }
    }
}

/// The last word of the rules on `question` (OpenCode: the last match wins), and the rules
/// on tools. Only a file that names `question` decides: a later `"*"` then overrides it, but
/// `"*"` alone grants no question (OpenCode's default, every tool, is not a choice to ask).
fn ask_rules(rules: Vec<Rule>) -> (Option<bool>, Vec<Rule>) {
    let mut ask = None;
    let mut tools = Vec::with_capacity(rules.len());
    for rule in rules {
        match rule.pattern.as_str() {
            ASK_KEY => ask = Some(rule.allow),
            "*" if ask.is_some() => {
                ask = Some(rule.allow);
                tools.push(rule);
            }
            _ => tools.push(rule),
        }
    }
    (ask, tools)
}

/// Maps OpenCode's ordered, last-match-wins rules onto allow and deny lists: `"*": false`
/// starts an allow list (nothing is offered unless a later rule allows it), `"*": true`
/// drops the allow list (everything not denied), other `false` rules deny. Deny always wins
/// here: `"*"` rules change only the allow list and never remove a deny entry, and a later
/// `true` undoes only an identical earlier pattern.
fn ordered_rules_to_filter(rules: &[Rule]) -> ToolFilter {
    let mut allow: Option<Vec<String>> = None;
    let mut deny: Vec<String> = Vec::new();
    for rule in rules {
        match (rule.pattern.as_str(), rule.allow) {
            ("*", false) => allow = Some(Vec::new()),
            ("*", true) => allow = None,
            (pattern, true) => {
                deny.retain(|d| d != pattern);
                if let Some(allow) = allow.as_mut() {
                    allow.push(pattern.to_owned());
                }
            }
            (pattern, false) => {
                if let Some(allow) = allow.as_mut() {
                    allow.retain(|a| a != pattern);
                }
                deny.push(pattern.to_owned());
            }
        }
    }
    let pattern = |glob: String| ToolPattern::new(glob, ToolNaming::OpenCode);
    ToolFilter {
        allow: allow.map(|a| a.into_iter().map(pattern).collect()),
        also_allow: Vec::new(),
        deny: deny.into_iter().map(pattern).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(pairs: &[(&str, bool)]) -> Vec<Rule> {
        pairs
            .iter()
            .map(|(p, a)| Rule {
                pattern: (*p).to_owned(),
                allow: *a,
            })
            .collect()
    }

    #[test]
    fn star_false_then_allows_is_an_allow_list() {
        let f = ordered_rules_to_filter(&rules(&[("*", false), ("github_*", true)]));
        assert!(f.permits("github", "search"));
        assert!(!f.permits("docs", "read"));
    }

    #[test]
    fn later_rules_override_earlier_identical_ones() {
        let f = ordered_rules_to_filter(&rules(&[("docs_read", false), ("docs_read", true)]));
        assert!(f.permits("docs", "read"));
        let f = ordered_rules_to_filter(&rules(&[("docs_read", true), ("*", false)]));
        assert!(!f.permits("docs", "read"));
    }

    #[test]
    fn allow_all_never_removes_a_deny() {
        for star in [("*", true), ("*", false)] {
            let f = ordered_rules_to_filter(&rules(&[("docs_delete", false), star]));
            assert_eq!(f.deny.len(), 1, "after {star:?}");
            assert!(!f.permits("docs", "delete"), "after {star:?}");
        }
        let f = ordered_rules_to_filter(&rules(&[("docs_delete", false), ("*", true)]));
        assert!(f.permits("docs", "read") && f.allow.is_none());
    }

    #[test]
    fn builtin_switches_select_nothing() {
        let f = ordered_rules_to_filter(&rules(&[("write", false), ("bash", false)]));
        assert!(f.permits("docs", "write"), "`write` is not `docs_write`");
        assert!(f.allow.is_none());
    }

    #[test]
    fn names_come_from_the_path() {
        assert_eq!(
            name_from_path(Path::new("team/Reviewer.md")),
            "team-reviewer"
        );
        assert_eq!(name_from_path(Path::new("docs.md")), "docs");
    }
}
