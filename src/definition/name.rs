//! The agent and skill name rule of SPEC §3.1: 1–64 characters, lowercase letters and digits,
//! single `_` or `-` separators (`^[a-z0-9]+([_-][a-z0-9]+)*$`).

use crate::limits::NAME_CHARS;

/// Checks `name` against the rule; the error says what is wrong in a way a user can act on.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("the name is empty".to_owned());
    }
    let chars = name.chars().count();
    if chars > NAME_CHARS {
        return Err(format!(
            "the name is {chars} characters long; the limit is {NAME_CHARS}"
        ));
    }
    let rule = "use lowercase letters and digits with single `-` or `_` separators";
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-' || *c == '_'))
    {
        let what = if bad.is_uppercase() {
            format!("has the uppercase letter {bad:?}")
        } else {
            format!("has the character {bad:?}")
        };
        return Err(format!("the name {name:?} {what}; {rule}"));
    }
    let is_sep = |c: char| c == '-' || c == '_';
    if name.starts_with(is_sep) || name.ends_with(is_sep) {
        return Err(format!(
            "the name {name:?} starts or ends with a separator; {rule}"
        ));
    }
    if name
        .as_bytes()
        .windows(2)
        .any(|w| is_sep(w[0] as char) && is_sep(w[1] as char))
    {
        return Err(format!(
            "the name {name:?} has two separators in a row; {rule}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_name;

    #[test]
    fn accepts_the_rule() {
        for ok in [
            "a",
            "research",
            "docs_researcher",
            "a-b_c",
            "x1",
            "0",
            &"a".repeat(64),
        ] {
            assert!(check_name(ok).is_ok(), "{ok} should pass");
        }
    }

    #[test]
    fn rejects_every_broken_form() {
        for bad in [
            "",
            &"a".repeat(65),
            "a--b",
            "a__b",
            "a-_b",
            "-a",
            "a-",
            "_a",
            "Research",
            "re search",
            "a.b",
            "a:b",
            "é",
        ] {
            assert!(check_name(bad).is_err(), "{bad:?} should fail");
        }
    }

    #[test]
    fn messages_name_the_problem() {
        assert!(check_name("Abc").unwrap_err().contains("uppercase"));
        assert!(
            check_name(&"a".repeat(65))
                .unwrap_err()
                .contains("65 characters")
        );
        assert!(check_name("a--b").unwrap_err().contains("two separators"));
        assert!(check_name("-a").unwrap_err().contains("starts or ends"));
    }
}
