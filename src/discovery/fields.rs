//! Typed reads of a parsed definition's fields, with aliases (`max_turns` / `maxTurns`) and
//! error messages that name the field as the file spells it. A `null` field is absent.

use serde_json::{Map, Value};

use super::source::describe_type;

/// A parsed document (or one nested table of it).
#[derive(Clone, Copy)]
pub(super) struct Doc<'a> {
    map: &'a Map<String, Value>,
}

impl<'a> Doc<'a> {
    pub(super) fn new(map: &'a Map<String, Value>) -> Self {
        Doc { map }
    }

    pub(super) fn map(&self) -> &'a Map<String, Value> {
        self.map
    }

    /// The first of `names` the document sets; setting two of them is an error.
    pub(super) fn find(
        &self,
        names: &[&'static str],
    ) -> Result<Option<(&'static str, &'a Value)>, String> {
        let mut found: Option<(&'static str, &'a Value)> = None;
        for &name in names {
            if let Some(value) = self.map.get(name).filter(|v| !v.is_null()) {
                if let Some((first, _)) = found {
                    return Err(format!(
                        "both `{first}` and `{name}` are set; they mean the same, keep one"
                    ));
                }
                found = Some((name, value));
            }
        }
        Ok(found)
    }

    pub(super) fn has(&self, name: &str) -> bool {
        self.map.get(name).is_some_and(|v| !v.is_null())
    }

    /// A string field, trimmed of nothing (callers decide).
    pub(super) fn str(
        &self,
        names: &[&'static str],
    ) -> Result<Option<(&'static str, &'a str)>, String> {
        match self.find(names)? {
            None => Ok(None),
            Some((name, Value::String(s))) => Ok(Some((name, s.as_str()))),
            Some((name, other)) => Err(wrong_type(name, "a string", other)),
        }
    }

    pub(super) fn string(&self, names: &[&'static str]) -> Result<Option<String>, String> {
        Ok(self.str(names)?.map(|(_, s)| s.to_owned()))
    }

    pub(super) fn bool(&self, names: &[&'static str]) -> Result<Option<bool>, String> {
        match self.find(names)? {
            None => Ok(None),
            Some((_, Value::Bool(b))) => Ok(Some(*b)),
            Some((name, other)) => Err(wrong_type(name, "true or false", other)),
        }
    }

    /// A whole number within `range`.
    pub(super) fn integer(
        &self,
        names: &[&'static str],
        range: std::ops::RangeInclusive<u32>,
    ) -> Result<Option<u32>, String> {
        match self.find(names)? {
            None => Ok(None),
            Some((name, value @ Value::Number(n))) => {
                if let Some(u) = n.as_u64() {
                    u32::try_from(u)
                        .ok()
                        .filter(|u| range.contains(u))
                        .map(Some)
                        .ok_or_else(|| out_of_range(name, value, &range))
                } else if n.is_i64() {
                    Err(out_of_range(name, value, &range))
                } else {
                    Err(format!("`{name}` must be a whole number"))
                }
            }
            Some((name, other)) => Err(wrong_type(name, "a whole number", other)),
        }
    }

    /// A finite number.
    pub(super) fn number(
        &self,
        names: &[&'static str],
    ) -> Result<Option<(&'static str, f64)>, String> {
        match self.find(names)? {
            None => Ok(None),
            Some((name, Value::Number(n))) => match n.as_f64() {
                Some(f) if f.is_finite() => Ok(Some((name, f))),
                _ => Err(format!("`{name}` must be a finite number")),
            },
            Some((name, other)) => Err(wrong_type(name, "a number", other)),
        }
    }

    /// A list of strings; when `comma_string` is set, a single string is split at commas
    /// (Claude's `tools: Read, Grep`). Blank entries are dropped.
    pub(super) fn string_list(
        &self,
        names: &[&'static str],
        comma_string: bool,
    ) -> Result<Option<(&'static str, Vec<String>)>, String> {
        match self.find(names)? {
            None => Ok(None),
            Some((name, value)) => Ok(Some((name, string_list(name, value, comma_string)?))),
        }
    }

    /// A nested mapping.
    pub(super) fn table(
        &self,
        names: &[&'static str],
    ) -> Result<Option<(&'static str, Doc<'a>)>, String> {
        match self.find(names)? {
            None => Ok(None),
            Some((name, Value::Object(map))) => Ok(Some((name, Doc::new(map)))),
            Some((name, other)) => Err(wrong_type(name, "a mapping", other)),
        }
    }
}

/// Reads `value` as a list of strings (see [`Doc::string_list`]).
pub(super) fn string_list(
    name: &str,
    value: &Value,
    comma_string: bool,
) -> Result<Vec<String>, String> {
    match value {
        Value::String(s) if comma_string => Ok(split_commas(s)),
        Value::Array(items) => items
            .iter()
            .map(|item| match item {
                Value::String(s) => Ok(s.trim().to_owned()),
                other => Err(format!(
                    "`{name}` must list strings; it has {}",
                    describe_type(other)
                )),
            })
            .filter(|r| !matches!(r, Ok(s) if s.is_empty()))
            .collect(),
        other => Err(wrong_type(
            name,
            if comma_string {
                "a list or a comma-separated string"
            } else {
                "a list of strings"
            },
            other,
        )),
    }
}

/// Splits at commas that are not inside parentheses (`Bash(git:*, ls)` stays one entry).
pub(super) fn split_commas(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    out.push(current);
    out.into_iter()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

pub(super) fn wrong_type(name: &str, expected: &str, got: &Value) -> String {
    match got.as_str().filter(|s| is_non_finite(s)) {
        // An infinity or NaN, which YAML and TOML readers turn into text.
        Some(number) => format!("`{name}` must be {expected}, not `{number}`"),
        None => format!("`{name}` must be {expected}, not {}", describe_type(got)),
    }
}

/// How YAML (`.inf`, `-.inf`, `.nan`) and TOML (`inf`, `-inf`, `nan`) write a number that is
/// not finite.
fn is_non_finite(text: &str) -> bool {
    let unsigned = text.trim_start_matches(['+', '-']);
    let bare = unsigned.strip_prefix('.').unwrap_or(unsigned);
    ["inf", "nan"].iter().any(|n| bare.eq_ignore_ascii_case(n))
}

fn out_of_range(name: &str, value: &Value, range: &std::ops::RangeInclusive<u32>) -> String {
    format!(
        "`{name}` is {value}; it must be from {} to {}",
        range.start(),
        range.end()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(v: &Value) -> Doc<'_> {
        Doc::new(v.as_object().unwrap())
    }

    #[test]
    fn aliases_conflict() {
        let v = json!({"max_turns": 3, "maxTurns": 4});
        assert!(
            doc(&v)
                .find(&["max_turns", "maxTurns"])
                .unwrap_err()
                .contains("both")
        );
        let v = json!({"maxTurns": 4, "max_turns": null});
        assert_eq!(
            doc(&v)
                .integer(&["max_turns", "maxTurns"], 1..=1000)
                .unwrap(),
            Some(4)
        );
    }

    #[test]
    fn integers_are_checked() {
        for (v, ok) in [
            (json!(1), true),
            (json!(1000), true),
            (json!(0), false),
            (json!(1001), false),
            (json!(-3), false),
            (json!(2.5), false),
            (json!("5"), false),
            (json!(u64::MAX), false),
        ] {
            let d = json!({ "n": v });
            assert_eq!(doc(&d).integer(&["n"], 1..=1000).is_ok(), ok, "{v}");
        }
    }

    #[test]
    fn lists_take_commas_and_keep_parentheses() {
        assert_eq!(
            split_commas("Read, Bash(git diff:*, ls), mcp__gh"),
            ["Read", "Bash(git diff:*, ls)", "mcp__gh"]
        );
        let d = json!({"tools": "A, B", "l": ["x", 1]});
        assert_eq!(
            doc(&d).string_list(&["tools"], true).unwrap().unwrap().1,
            ["A", "B"]
        );
        assert!(doc(&d).string_list(&["tools"], false).is_err());
        assert!(doc(&d).string_list(&["l"], false).is_err());
    }
}
