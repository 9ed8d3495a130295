//! Claude Code subagents (FORMATS.md §2): `.claude/agents/**/*.md`.

use serde_json::Value;

use super::aliases::{is_claude_code_mode, resolve_alias};
use super::build::{
    CANONICAL_SPELLINGS, Ctx, Draft, ModelChoice, Parsed, Spellings, add_allow_list, finalize,
    note_ignored_tools, qualified_patterns, read_common,
};
use super::fields::{Doc, string_list};
use super::source::{parse_frontmatter, split_frontmatter};
use crate::definition::{Format, Model, ModelOrigin, ProviderKind, Sandbox, SourceFile};

const SPELLINGS: Spellings = Spellings {
    reasoning_effort: &["reasoning_effort", "reasoningEffort", "effort"],
    ..CANONICAL_SPELLINGS
};

pub fn parse(text: &str, source: SourceFile, ctx: &mut Ctx<'_>) -> Result<Parsed, String> {
    let split = split_frontmatter(text)?;
    let frontmatter = parse_frontmatter(split.yaml)?;
    ctx.caveats.extend(frontmatter.lenient_note);
    let doc = Doc::new(&frontmatter.fields);

    if doc.has("hooks") {
        return Err(
            "`hooks` is not supported: hooks enforce policy that this runtime does \
                    not run, so the agent would act without it"
                .to_owned(),
        );
    }
    let mut draft = Draft {
        name: doc.string(&["name"])?,
        description: doc.string(&["description"])?,
        instructions: Some(split.body.to_owned()),
        instructions_hint: "the instructions are empty: write the system prompt after the \
                            frontmatter",
        default_provider: Some(ProviderKind::Anthropic),
        model: model_choice(doc.string(&["model"])?, ctx)?,
        ..Draft::default()
    };
    read_common(doc, &mut draft, &SPELLINGS, Format::Claude, ctx)?;
    if let Some((field, mode)) = doc.str(&["permissionMode", "permission_mode"])? {
        match mode {
            "plan" => draft.sandbox = Sandbox::ReadOnly,
            "default" | "manual" | "acceptEdits" | "auto" | "dontAsk" | "bypassPermissions" => {}
            other => ctx.caveats.push(format!(
                "`{field}` {other:?} is unknown and ignored (this runtime never prompts)"
            )),
        }
    }
    for field in ["memory", "background", "initialPrompt"] {
        if doc.has(field) {
            ctx.caveats.push(format!(
                "`{field}` is ignored: this runtime has no equivalent"
            ));
        }
    }
    read_tools(doc, &mut draft, ctx)?;
    finalize(draft, source, ctx)
}

/// `inherit` or no model: the parent's; an alias: resolved; anything else: a model id.
fn model_choice(model: Option<String>, ctx: &Ctx<'_>) -> Result<ModelChoice, String> {
    let Some(model) = model.map(|m| m.trim().to_owned()) else {
        return Ok(ModelChoice::Parent);
    };
    if model.is_empty() || model == "inherit" {
        return Ok(ModelChoice::Parent);
    }
    if let Some(resolved) = resolve_alias(&model, &ctx.options.env) {
        let resolved = resolved?;
        return Ok(ModelChoice::Named(Model {
            id: resolved.id,
            origin: ModelOrigin::ClaudeAlias {
                alias: resolved.alias.to_owned(),
                env: resolved.env.map(str::to_owned),
            },
        }));
    }
    if is_claude_code_mode(&model) {
        return Err(format!(
            "`model: {model}` is a Claude Code setting this runtime cannot reproduce; name a \
             model id or one of sonnet, opus, haiku, fable"
        ));
    }
    Ok(ModelChoice::Named(Model {
        id: model,
        origin: ModelOrigin::Explicit,
    }))
}

/// `tools` / `disallowedTools`: a comma string, a list, or (seen in the wild) a
/// `{Name: true|false}` map.
fn read_tools(doc: Doc<'_>, draft: &mut Draft, ctx: &mut Ctx<'_>) -> Result<(), String> {
    let mut ignored = Vec::new();
    if let Some((field, value)) = doc.find(&["tools"])? {
        let (allowed, denied) = entries(field, value)?;
        // A list is an allow list; a map only switches tools off (OpenCode's meaning of
        // the map form, where everything not set to false stays available).
        if let Some(allowed) = allowed {
            let (patterns, unknown) = qualified_patterns(&allowed);
            add_allow_list(draft, patterns);
            ignored.extend(unknown);
        }
        let (patterns, unknown) = qualified_patterns(&denied);
        draft.tools.deny.extend(patterns);
        ignored.extend(unknown);
    }
    if let Some((field, value)) = doc.find(&["disallowedTools", "disallowed_tools"])? {
        let denied = deny_entries(field, value)?;
        let (patterns, unknown) = qualified_patterns(&denied);
        draft.tools.deny.extend(patterns);
        ignored.extend(unknown);
    }
    note_ignored_tools(draft, &ignored, ctx);
    Ok(())
}

/// The entries of a deny field. A list or comma string lists them; in a `{Name: true}` map
/// `true` means "disallowed", and `false` is refused: it reads both as "not disallowed" and,
/// copied from a `tools` map, as "switched off", and a deny list must not be guessed.
fn deny_entries(field: &str, value: &Value) -> Result<Vec<String>, String> {
    let Value::Object(map) = value else {
        return string_list(field, value, true);
    };
    let mut denied = Vec::new();
    for (name, flag) in map {
        match flag {
            Value::Bool(true) => denied.push(name.clone()),
            Value::Bool(false) => {
                return Err(format!(
                    "`{field}.{name}: false` is ambiguous in a deny list (denied, or not?); \
                     list the tools to deny, or set them to true"
                ));
            }
            _ => return Err(format!("`{field}.{name}` must be true or false")),
        }
    }
    Ok(denied)
}

/// The entries of a tools field: `(listed, switched off)`. A list or comma string gives
/// `listed`; a `{Name: true|false}` map gives the names set to false.
fn entries(field: &str, value: &Value) -> Result<(Option<Vec<String>>, Vec<String>), String> {
    match value {
        Value::Object(map) => {
            let mut off = Vec::new();
            for (name, flag) in map {
                match flag {
                    Value::Bool(true) => {}
                    Value::Bool(false) => off.push(name.clone()),
                    _ => return Err(format!("`{field}.{name}` must be true or false")),
                }
            }
            Ok((None, off))
        }
        other => Ok((Some(string_list(field, other, true)?), Vec::new())),
    }
}
