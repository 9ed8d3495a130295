//! The canonical agent definition (SPEC §3.1) that every file format is parsed into, and the
//! rules shared by all formats.
//!
//! | file | what it holds |
//! | --- | --- |
//! | `agent` | the definition itself: model, limits, sandbox, tool lists, where it came from |
//! | `provider` | the provider, its endpoint, key variable and wire API |
//! | `wire` | the wire APIs and their table of rules (names, key header, temperature, effort levels, schema keywords refused, prompt cache key); the reasoning effort scale |
//! | `child` | child MCP server configurations, and the built-in servers |
//! | `catalog` | the loaded catalog, its warnings, and the roots skills are read from |
//! | `skill` | skills as the catalog holds them |
//! | `name` | the name rule for agents and skills |
//! | `near_miss` | whether a name is a slip of a known one ("did you mean …?") |
//! | `endpoint` | the https/loopback rule for provider and child-server URLs |
//! | `model_allow` | the server's model allow-list (`--allow-models`): globs on `provider/model` |
//! | `template` | `${VAR}` placeholders in child env and header values |
//! | `tool_filter` | allow and deny lists over child tools |
//! | `json_schema` | JSON Schema compiled once, and what a value gets wrong |
//!
//! A definition is immutable once loaded: sessions take a frozen copy at spawn.

mod agent;
mod catalog;
mod child;
mod endpoint;
mod json_schema;
mod model_allow;
mod name;
mod near_miss;
mod provider;
mod skill;
mod template;
mod tool_filter;
mod wire;

pub use agent::{
    AgentDefinition, AskParent, Format, Model, ModelOrigin, RunBudget, Sandbox, SourceFile,
};
pub use catalog::{Catalog, Effect, PARENT_MODEL_REJECTION, SkillRoot, Warning};
pub use child::{BuiltinServer, ChildServerConfig, ChildTransport, INHERITED_VARS, ValueSource};
pub use endpoint::{EndpointUse, check_endpoint, is_loopback};
pub use json_schema::{
    CompiledSchema, SchemaError, Violation, describe_violations, describe_violations_masked,
};
pub use model_allow::ModelAllowList;
pub use name::check_name;
pub use near_miss::closest;
pub use provider::{
    ANTHROPIC_AUTH_TOKEN, EndpointSource, GEMINI_BASE_URL, KeyChoice, ProviderConfig, ProviderKind,
};
pub use skill::{Skill, SkillRegistry};
pub use template::{Segment, Template, TemplateError, is_env_var_name, is_showable_var_name};
pub use tool_filter::{ToolFilter, ToolHints, ToolNames, ToolNaming, ToolPattern, provider_safe};
pub use wire::{AuthHeader, CacheKey, ReasoningEffort, WireApi, WireRules};
