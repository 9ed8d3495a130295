//! `${ENV_NAME}` placeholders (SPEC §8.1), allowed only in child stdio `env` values and HTTP
//! header values. Their syntax is checked when a definition is loaded; their values are read
//! from the environment when a run starts.
//!
//! Neither the parser's errors nor `Debug` ever show literal text: a value may be a secret.

use std::fmt;

/// One piece of a parsed value.
#[derive(Clone, PartialEq, Eq)]
pub enum Segment {
    Literal(String),
    Var(String),
}

/// A value with zero or more `${NAME}` placeholders.
#[derive(Clone, PartialEq, Eq)]
pub struct Template {
    segments: Vec<Segment>,
}

/// Why a template could not be parsed or rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error("has a `${{` without a closing `}}`")]
    Unclosed,
    #[error("has an empty placeholder `${{}}`")]
    Empty,
    #[error(
        "has the placeholder `${{{0}}}`, which is not a variable name \
         (use letters, digits and `_`, not starting with a digit)"
    )]
    BadName(String),
    #[error("uses `${{{0}:-…}}`; default values are not supported, only `${{NAME}}`")]
    DefaultValue(String),
    #[error("needs the environment variable {0}, which is not set")]
    Unset(String),
}

impl Template {
    /// Parses `raw`. A `$` not followed by `{` is literal text.
    pub fn parse(raw: &str) -> Result<Template, TemplateError> {
        let mut segments = Vec::new();
        let mut rest = raw;
        while let Some(start) = rest.find("${") {
            if start > 0 {
                segments.push(Segment::Literal(rest[..start].to_owned()));
            }
            let after = &rest[start + 2..];
            let end = after.find('}').ok_or(TemplateError::Unclosed)?;
            let name = &after[..end];
            check_var_name(name)?;
            segments.push(Segment::Var(name.to_owned()));
            rest = &after[end + 1..];
        }
        if !rest.is_empty() {
            segments.push(Segment::Literal(rest.to_owned()));
        }
        Ok(Template { segments })
    }

    /// The names of the variables this template reads, in order.
    pub fn vars(&self) -> impl Iterator<Item = &str> {
        self.segments.iter().filter_map(|s| match s {
            Segment::Var(name) => Some(name.as_str()),
            Segment::Literal(_) => None,
        })
    }

    /// Whether the value has at least one placeholder.
    pub fn has_vars(&self) -> bool {
        self.vars().next().is_some()
    }

    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// Builds the value, reading each variable through `lookup`. An unset variable is an
    /// error naming it; an empty one is used as empty.
    pub fn render(&self, lookup: impl Fn(&str) -> Option<String>) -> Result<String, TemplateError> {
        let mut out = String::new();
        for segment in &self.segments {
            match segment {
                Segment::Literal(text) => out.push_str(text),
                Segment::Var(name) => {
                    out.push_str(&lookup(name).ok_or_else(|| TemplateError::Unset(name.clone()))?)
                }
            }
        }
        Ok(out)
    }
}

/// Whether `name` is a portable environment variable name: `[A-Za-z_][A-Za-z0-9_]*`.
pub fn is_env_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether a variable name can be repeated in a message. A credential pasted where a
/// variable's name belongs can be a valid name too (hex tokens are), so a name that does
/// not look like the usual `UPPER_CASE` one, or carries many digits, is not shown.
pub fn is_showable_var_name(name: &str) -> bool {
    name.len() <= 40
        && !name.chars().any(|c| c.is_ascii_lowercase())
        && name.chars().filter(char::is_ascii_digit).count() <= 6
}

fn check_var_name(name: &str) -> Result<(), TemplateError> {
    if name.is_empty() {
        return Err(TemplateError::Empty);
    }
    if let Some((var, _)) = name.split_once(":-")
        && is_env_var_name(var)
    {
        return Err(TemplateError::DefaultValue(var.to_owned()));
    }
    if !is_env_var_name(name) {
        // The name may be something odd but is never a secret value: it sits inside `${…}`.
        return Err(TemplateError::BadName(name.chars().take(64).collect()));
    }
    Ok(())
}

impl fmt::Debug for Segment {
    /// Like [`Template`]'s: the length of literal text, never the text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Segment::Literal(text) => write!(f, "Literal(<{} chars>)", text.chars().count()),
            Segment::Var(name) => write!(f, "Var({name})"),
        }
    }
}

impl fmt::Debug for Template {
    /// Shows placeholders and the length of literal text, never the text itself.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Template(")?;
        for segment in &self.segments {
            match segment {
                Segment::Literal(text) => write!(f, "<{} chars>", text.chars().count())?,
                Segment::Var(name) => write!(f, "${{{name}}}")?,
            }
        }
        f.write_str(")")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_literals_and_placeholders() {
        let t = Template::parse("Bearer ${TOKEN}").unwrap();
        assert_eq!(
            t.segments(),
            &[
                Segment::Literal("Bearer ".into()),
                Segment::Var("TOKEN".into())
            ]
        );
        let t = Template::parse("${A}${_b1}x$y").unwrap();
        assert_eq!(t.vars().collect::<Vec<_>>(), ["A", "_b1"]);
        assert!(!Template::parse("plain $HOME").unwrap().has_vars());
    }

    #[test]
    fn rejects_malformed_placeholders() {
        assert_eq!(Template::parse("${"), Err(TemplateError::Unclosed));
        assert_eq!(Template::parse("a ${B"), Err(TemplateError::Unclosed));
        assert_eq!(Template::parse("${}"), Err(TemplateError::Empty));
        assert_eq!(
            Template::parse("${1X}"),
            Err(TemplateError::BadName("1X".into()))
        );
        assert_eq!(
            Template::parse("${A-B}"),
            Err(TemplateError::BadName("A-B".into()))
        );
        assert_eq!(
            Template::parse("${HOME:-/tmp}"),
            Err(TemplateError::DefaultValue("HOME".into()))
        );
    }

    #[test]
    fn renders_and_names_unset_variables() {
        let t = Template::parse("Bearer ${TOKEN}").unwrap();
        assert_eq!(t.render(|_| Some("abc".into())).unwrap(), "Bearer abc");
        assert_eq!(
            t.render(|_| None),
            Err(TemplateError::Unset("TOKEN".into()))
        );
    }

    #[test]
    fn debug_hides_literal_text() {
        let t = Template::parse("sk-live-secret${X}").unwrap();
        let shown = format!("{t:?}");
        assert!(!shown.contains("secret"), "{shown}");
        assert!(shown.contains("${X}"));
    }
}
