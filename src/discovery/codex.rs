//! Codex custom agents (FORMATS.md §3): `.codex/agents/**/*.toml`. A role file is a Codex
//! config layer, so most keys belong to Codex and are ignored; the ones that change what
//! the agent does are honoured or refused.

use super::field_names as fields;
use serde_json::Value;

use super::build::finalize;
use super::draft::{CANONICAL_SPELLINGS, Draft, ModelChoice, Spellings, read_common};
use super::fields::Doc;
use super::secrets::reject_secret_fields;
use super::source::parse_toml;
use super::spec::{AgentName, Ctx, FileSpec, FormatSpec, ModelNames, Parsed, Subfolders, Syntax};
use super::tool_lists::{grant_workspace, read_qualified_tool_lists};
use super::vocabulary::Tools;
use crate::definition::{Format, Model, ModelOrigin, ProviderKind, SourceFile};

pub(super) const SPEC: FormatSpec = FormatSpec {
    folders: &[".codex/agents"],
    subfolders: Subfolders::Searched,
    skipped_prefix: None,
    files: &[FileSpec {
        extension: "toml",
        format: Format::Codex,
        syntax: Syntax::Toml,
        // Else the `[agents.NAME]` declaration in `.codex/config.toml` that points at it.
        agent_name: AgentName::Field,
        fields: fields::CODEX,
        parse,
    }],
    // A role file names no Codex tools: it lists child tools by their qualified names. Codex's
    // own question tool, `request_user_input`, exists only in its interactive Plan mode
    // (developers.openai.com/codex; "request_user_input is unavailable in Default mode",
    // openai/codex#24750) and no role file can grant it, so a Codex agent asks its parent
    // only with `ask_parent: true` (SPEC §4.5).
    tools: Tools::Qualified,
    models: ModelNames::AsWritten,
};

const SPELLINGS: Spellings = Spellings {
    reasoning_effort: fields::CODEX_EFFORT,
    sandbox: fields::CODEX_SANDBOX,
    // Codex's own `[[skills.config]]` table enables skills by path; it is not a preload list.
    own_skills_table: Some(
        "`[skills]` (Codex skill enablement) is ignored; list skills to preload as \
         `skills = [\"name\"]`",
    ),
    ..CANONICAL_SPELLINGS
};

/// Parses a role file. Its canonical path finds a declaration in `.codex/config.toml` that
/// names it.
fn parse(text: &str, source: SourceFile, ctx: &mut Ctx<'_>) -> Result<Parsed, String> {
    let fields = parse_toml(text)?;
    let doc = Doc::new(&fields);

    if doc.has("model_instructions_file") {
        return Err(
            "`model_instructions_file` is not supported: put the instructions in \
                    `developer_instructions`"
                .to_owned(),
        );
    }
    let mut draft = Draft {
        name: doc.string(fields::NAME)?.map(|n| n.trim().to_owned()),
        description: doc.string(fields::DESCRIPTION)?,
        instructions: doc.string(fields::CODEX_INSTRUCTIONS)?,
        instructions_hint: "`developer_instructions` is required and must not be empty",
        default_provider: Some(ProviderKind::OpenAi),
        model: match doc.string(fields::MODEL)? {
            Some(id) if !id.trim().is_empty() => ModelChoice::Named(Model {
                id: id.trim().to_owned(),
                origin: ModelOrigin::Explicit,
            }),
            _ => ModelChoice::Parent,
        },
        ..Draft::default()
    };
    if draft.name.is_none() || draft.description.is_none() {
        fill_from_declaration(&mut draft, ctx)?;
    }

    read_common(doc, &mut draft, &SPELLINGS, ctx)?;
    resolve_provider(doc, &mut draft)?;
    // Codex's own `[tools]` table switches Codex features; only a list is our allow list.
    // The deny list is read whatever `tools` is: dropping it would offer denied tools.
    let allow: &[&str] = if matches!(doc.map().get("tools"), Some(Value::Object(_))) {
        &[]
    } else {
        &["tools"]
    };
    read_qualified_tool_lists(doc, &mut draft, allow, &["disallowed_tools"], false)?;
    // A Codex agent inherits Codex's own tools, reading files among them (SPEC §8.6).
    grant_workspace(&mut draft);
    finalize(draft, source, ctx)
}

/// Codex names a role file that lacks `name` after its `[agents.NAME]` declaration.
fn fill_from_declaration(draft: &mut Draft, ctx: &Ctx<'_>) -> Result<(), String> {
    match ctx.referenced.codex_role(ctx.canonical) {
        Ok(Some(role)) => {
            draft.name.get_or_insert_with(|| role.name.clone());
            if draft.description.is_none() {
                draft.description = role.description.clone();
            }
            Ok(())
        }
        Ok(None) if draft.name.is_none() => Err("`name` is required (no `[agents.NAME]` \
             declaration in .codex/config.toml points at this file either)"
            .to_owned()),
        Ok(None) => Ok(()),
        Err(e) if draft.name.is_none() => Err(format!(
            "`name` is required, and .codex/config.toml, which could name this file, \
             cannot be used: {e}"
        )),
        Err(_) => Ok(()),
    }
}

/// A provider id other than the built-ins must be defined in the same file, either as a
/// `[model_providers.ID]` table or as the top-level canonical fields.
fn resolve_provider(doc: Doc<'_>, draft: &mut Draft) -> Result<(), String> {
    let Some(id) = draft.provider.clone() else {
        return Ok(());
    };
    if ProviderKind::parse(&id).is_some() {
        return Ok(());
    }
    let table = doc
        .table(fields::MODEL_PROVIDERS)?
        .and_then(|(_, providers)| providers.map().get(&id));
    match table {
        Some(Value::Object(provider)) => {
            let provider = Doc::new(provider);
            let place = format!("model_providers.{id}: ");
            reject_secret_fields(
                provider,
                &place,
                "put the key in an environment variable and name it with `env_key`",
            )?;
            // Codex's own `auth` is a table (a command that prints a token); a string is
            // this runtime's header choice, as at the top level.
            match provider.find(&["auth"])? {
                None | Some((_, Value::String(_))) => {}
                Some(_) => {
                    return Err(format!(
                        "{place}`auth` as a table (a command that makes the token) is not \
                         supported by this runtime; name the key's variable with `env_key`, \
                         and set `auth = \"bearer\"` or `\"x-api-key\"` for its header"
                    ));
                }
            }
            for key in ["aws", "http_headers", "env_http_headers", "query_params"] {
                if provider.has(key) {
                    return Err(format!("{place}`{key}` is not supported by this runtime"));
                }
            }
            if provider.bool(&["requires_openai_auth"])? == Some(true) {
                return Err(format!(
                    "{place}`requires_openai_auth` needs a ChatGPT sign-in, which this \
                     runtime does not do; use `env_key`"
                ));
            }
            let err = |e: String| format!("{place}{e}");
            // Top-level canonical fields win over the table's.
            if draft.base_url.is_none() {
                draft.base_url = provider.string(&["base_url"]).map_err(err)?;
            }
            if draft.env_key.is_none() {
                draft.env_key = provider.string(&["env_key"]).map_err(err)?;
            }
            if draft.auth.is_none() {
                draft.auth = provider.string(&["auth"]).map_err(err)?;
            }
            if draft.wire_api.is_none() {
                draft.wire_api = Some(
                    provider
                        .string(&["wire_api"])
                        .map_err(err)?
                        .unwrap_or_else(|| "responses".to_owned()),
                );
            }
        }
        Some(_) => return Err(format!("`model_providers.{id}` must be a table")),
        None if draft.base_url.is_some() || draft.env_key.is_some() || draft.wire_api.is_some() => {
        }
        None => {
            return Err(format!(
                "`model_provider` is {id:?}, which is not built in (openai, anthropic, gemini) and \
                 not defined here: add [model_providers.{id}] with base_url, env_key and \
                 wire_api"
            ));
        }
    }
    draft.provider = Some("custom".to_owned());
    Ok(())
}
