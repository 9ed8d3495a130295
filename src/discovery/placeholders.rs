//! Other tools' placeholder spellings in a child server's `env` and header values, rewritten
//! as this runtime's `${NAME}` (SPEC §8.1) before the value is parsed: GitHub Copilot's
//! `${{ secrets.NAME }}` and `${{ vars.NAME }}`, and the shell form `$NAME` that Copilot and
//! the Gemini CLI both expand. The values still come from the server's environment when a
//! run starts; nothing here reads a variable.

use crate::definition::is_env_var_name;

/// `text` with `${{ secrets.NAME }}`, `${{ vars.NAME }}` and `$NAME` written as `${NAME}`;
/// `${NAME}` and any other text stay as they are. Any other `${{ … }}` expression is an
/// error: it needs GitHub Actions to evaluate it.
pub(super) fn rewrite_dollar_forms(text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(expression) = after.strip_prefix("{{") {
            let end = expression.find("}}").ok_or(
                "has a `${{` without a closing `}}`; only `${{ secrets.NAME }}` and \
                 `${{ vars.NAME }}` are read (as ${NAME})",
            )?;
            let inner = expression[..end].trim();
            let name = inner
                .strip_prefix("secrets.")
                .or_else(|| inner.strip_prefix("vars."))
                .filter(|name| is_env_var_name(name))
                .ok_or_else(|| {
                    format!(
                        "has the GitHub Actions expression `${{{{ {inner} }}}}`, which this \
                         runtime cannot evaluate; only `${{{{ secrets.NAME }}}}` and \
                         `${{{{ vars.NAME }}}}` are read (as ${{NAME}}, from the server's \
                         environment)"
                    )
                })?;
            out.push_str(&format!("${{{name}}}"));
            rest = &expression[end + 2..];
            continue;
        }
        let name_len = after
            .char_indices()
            .take_while(|(i, c)| {
                c.is_ascii_alphanumeric() && (*i > 0 || !c.is_ascii_digit()) || *c == '_'
            })
            .count();
        if name_len > 0 {
            out.push_str(&format!("${{{}}}", &after[..name_len]));
            rest = &after[name_len..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// Copilot's older form of an `env` value: the bare name of a `COPILOT_MCP_` secret
/// (`OPIK_API_KEY: COPILOT_MCP_OPIK_API_KEY`), which the cloud agent reads as that secret.
pub(super) fn copilot_secret_name(text: &str) -> Option<&str> {
    let name = text.trim();
    (name.starts_with("COPILOT_MCP_") && is_env_var_name(name)).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_and_shell_forms_become_placeholders() {
        for (written, read) in [
            ("${{ secrets.OCTOPUS_API_KEY }}", "${OCTOPUS_API_KEY}"),
            ("${{secrets.X}}", "${X}"),
            ("Bearer ${{ vars.TOKEN_2 }}", "Bearer ${TOKEN_2}"),
            ("$HOME/bin", "${HOME}/bin"),
            ("Bearer $TOKEN", "Bearer ${TOKEN}"),
            ("${ALREADY}", "${ALREADY}"),
            ("costs $5, or $ alone", "costs $5, or $ alone"),
            ("plain", "plain"),
            ("", ""),
        ] {
            assert_eq!(rewrite_dollar_forms(written).unwrap(), read, "{written}");
        }
    }

    #[test]
    fn other_actions_expressions_are_refused_by_name() {
        let err = rewrite_dollar_forms("${{ github.workspace }}/x").unwrap_err();
        assert!(err.contains("`${{ github.workspace }}`"), "{err}");
        assert!(err.contains("cannot evaluate"), "{err}");
        assert!(rewrite_dollar_forms("${{ secrets.A-B }}").is_err());
        assert!(
            rewrite_dollar_forms("${{ secrets.X")
                .unwrap_err()
                .contains("closing")
        );
    }

    #[test]
    fn only_whole_copilot_secret_names_are_read_as_secrets() {
        assert_eq!(
            copilot_secret_name("COPILOT_MCP_OPIK_API_KEY"),
            Some("COPILOT_MCP_OPIK_API_KEY")
        );
        assert_eq!(copilot_secret_name("OPIK_API_KEY"), None);
        assert_eq!(copilot_secret_name("COPILOT_MCP_X y"), None);
    }
}
