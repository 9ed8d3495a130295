//! The server's model allow-list (SPEC §5.1 `--allow-models PATTERN,…`): globs on
//! `provider/model`, `*` matching any characters (`/` included), set by the person who runs
//! the server and never by a definition.

use std::fmt;

/// The models this server may run. A model is allowed when one pattern matches
/// `provider/model` (the provider's name and the model id as sent); a gateway's model
/// (provider `custom`) is also matched as written, since its name is the gateway's own and
/// often reads `vendor/model` already (`anthropic/claude-sonnet-4.5` on OpenRouter).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelAllowList {
    patterns: Vec<String>,
}

impl ModelAllowList {
    /// Whether `model` on `provider` (`openai`, `anthropic`, `gemini`, `custom`) is allowed.
    pub fn allows(&self, provider: &str, model: &str) -> bool {
        let qualified = format!("{provider}/{model}");
        self.patterns.iter().any(|pattern| {
            glob_matches(pattern, &qualified)
                || provider == "custom" && glob_matches(pattern, model)
        })
    }

    /// Why `model` on `provider` is refused, for a rejection or a warning.
    pub fn refusal(&self, provider: &str, model: &str) -> String {
        format!(
            "`{provider}/{model}` is not among the models this server allows (--allow-models \
             or MCP_AGENTS_ALLOW_MODELS: {self}); name an allowed model, or ask whoever runs \
             the server to allow this one"
        )
    }
}

impl fmt::Display for ModelAllowList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.patterns.join(","))
    }
}

impl std::str::FromStr for ModelAllowList {
    type Err = String;

    /// `PATTERN,…`: each `provider/model` glob, or a pattern that begins with `*`; blanks
    /// around the commas are dropped, an empty list or entry is an error.
    fn from_str(s: &str) -> Result<Self, String> {
        let patterns: Vec<String> = s.split(',').map(|p| p.trim().to_owned()).collect();
        if let Some(bad) = patterns
            .iter()
            .find(|p| p.is_empty() || !p.contains('/') && !p.starts_with('*'))
        {
            return Err(format!(
                "{bad:?} is not a model pattern: write PROVIDER/MODEL globs separated by \
                 commas, `*` matching any characters (for example \
                 openai/gpt-5*,anthropic/claude-haiku-*)"
            ));
        }
        Ok(ModelAllowList { patterns })
    }
}

/// Whether `text` matches `pattern`, where `*` matches any run of characters (none
/// included) and every other character only itself.
fn glob_matches(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    // `split` yields at least one part, so the first is always there.
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let middle: Vec<&str> = parts.collect();
    let Some((last, between)) = middle.split_last() else {
        // No `*`: the whole text must be the pattern.
        return rest.is_empty();
    };
    for part in between {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(s: &str) -> ModelAllowList {
        s.parse().unwrap()
    }

    #[test]
    fn stars_match_any_characters_and_the_rest_only_itself() {
        assert!(glob_matches("openai/gpt-5*", "openai/gpt-5-mini"));
        assert!(glob_matches("openai/gpt-5*", "openai/gpt-5"));
        assert!(!glob_matches("openai/gpt-5*", "openai/gpt-4o"));
        assert!(glob_matches("*/claude-*-4-5", "anthropic/claude-haiku-4-5"));
        assert!(!glob_matches(
            "*/claude-*-4-5",
            "anthropic/claude-haiku-4-5x"
        ));
        assert!(glob_matches("openai/gpt-5", "openai/gpt-5"));
        assert!(!glob_matches("openai/gpt-5", "openai/gpt-5-mini"));
        assert!(glob_matches("a*b*a", "aba"));
        assert!(!glob_matches("a*b*a", "ab"));
        assert!(glob_matches("*", "custom/anything/at/all"));
    }

    #[test]
    fn a_gateway_model_is_matched_as_written_too() {
        let allowed = list("anthropic/claude-*");
        assert!(allowed.allows("anthropic", "claude-haiku-4-5"));
        assert!(allowed.allows("custom", "anthropic/claude-sonnet-4.5"));
        assert!(!allowed.allows("openai", "anthropic/claude-sonnet-4.5"));
        assert!(!allowed.allows("custom", "claude-sonnet-4.5"));
        assert!(list("custom/claude-*").allows("custom", "claude-sonnet-4.5"));
    }

    #[test]
    fn patterns_must_name_a_provider_or_begin_with_a_star() {
        assert!("gpt-5*".parse::<ModelAllowList>().is_err());
        assert!("openai/gpt-5*,".parse::<ModelAllowList>().is_err());
        assert!("".parse::<ModelAllowList>().is_err());
        let parsed = list(" openai/gpt-5* , *mini ");
        assert_eq!(parsed.to_string(), "openai/gpt-5*,*mini");
        assert!(parsed.allows("gemini", "gemini-3-flash-mini"));
    }
}
