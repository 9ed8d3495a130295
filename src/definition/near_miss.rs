//! The near-miss rule (SPEC §3.1): whether a name someone wrote is a slip of a known one, so
//! a message can ask "did you mean `disallowedTools`?". Used for definition fields, agent
//! names and skill names alike.
//!
//! Two names are a near miss when they are the same once case, `_` and `-` are ignored
//! (`Model`, `max-turns`, `MaxTurns`), or when they are a few edits apart (Damerau-Levenshtein
//! through `strsim`, so a swapped pair counts once: `modle` is one edit from `model`): at
//! most 1 edit for names of 5 to 7 characters, at most 2 from 8 on, and below 5 only two
//! neighbours swapped (`Raed` for `Read`), where any other edit of a short name is as likely
//! a word of its own (OpenCode passes `topK` to the provider; it is not a slip of `top_p`).
//! Callers leave out names that are known elsewhere (`mode` is an OpenCode field, not a
//! misspelt `model`).

/// `name` lowercased, without `_` and `-`.
fn normalize(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// How many edits a slip of `known` (normalized) may have.
fn allowed_edits(known: &str) -> usize {
    match known.chars().count() {
        0..=4 => 0,
        5..=7 => 1,
        _ => 2,
    }
}

/// Whether `a` is `b` with two neighbouring characters swapped: the one slip a short name
/// may have.
fn one_swap(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len() != b.len() {
        return false;
    }
    let differ: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
    matches!(differ[..], [i, j] if j == i + 1 && a[i] == b[j] && a[j] == b[i])
}

/// The known name `name` is closest to, if it is a near miss of one and is not itself one of
/// them. Between spellings of one name (`disallowed_tools`, `disallowedTools`) the one
/// written most like `name` wins; remaining ties go to the first in `known`.
pub fn closest<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let wanted = normalize(name);
    let mut best: Option<((usize, usize), &'a str)> = None;
    for candidate in known {
        if candidate == name {
            return None;
        }
        let normalized = normalize(candidate);
        let distance = strsim::damerau_levenshtein(&wanted, &normalized);
        if distance > allowed_edits(&normalized) && !one_swap(&wanted, &normalized) {
            continue;
        }
        let rank = (distance, strsim::damerau_levenshtein(name, candidate));
        if best.is_none_or(|(r, _)| rank < r) {
            best = Some((rank, candidate));
        }
    }
    best.map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests {
    use super::closest;

    const FIELDS: &[&str] = &[
        "model",
        "mcp_servers",
        "mcpServers",
        "disallowedTools",
        "tools",
        "top_p",
        "skills",
    ];

    #[test]
    fn slips_are_found() {
        for (typo, meant) in [
            ("disalowedTools", "disallowedTools"),
            ("mcp_server", "mcp_servers"),
            ("mcpserver", "mcp_servers"),
            ("Model", "model"),
            ("MODEL", "model"),
            ("modle", "model"),
            ("tols", "tools"),
            ("skils", "skills"),
            ("disallowed-tools", "disallowedTools"),
            ("toosl", "tools"),
            ("mdoel", "model"),
        ] {
            assert_eq!(closest(typo, FIELDS.iter().copied()), Some(meant), "{typo}");
        }
    }

    #[test]
    fn a_short_name_may_have_two_neighbours_swapped_and_nothing_else() {
        let tools = ["Read", "Grep", "Glob", "LS", "env"];
        assert_eq!(closest("Raed", tools), Some("Read"));
        assert_eq!(closest("Gerp", tools), Some("Grep"));
        assert_eq!(closest("read", tools), Some("Read"), "case alone");
        assert_eq!(closest("nev", tools), Some("env"));
        for word in ["Reed", "Rea", "Glib", "Greps", "SL2"] {
            assert_eq!(closest(word, tools), None, "{word}");
        }
    }

    #[test]
    fn other_words_and_known_names_are_not_slips() {
        for word in ["topK", "color", "hooks", "timeout", "env", "model", "tools"] {
            assert_eq!(closest(word, FIELDS.iter().copied()), None, "{word}");
        }
    }

    #[test]
    fn agent_names_work_the_same_way() {
        let agents = ["a-model", "code-reviewer", "researcher"];
        assert_eq!(closest("a-modle", agents), Some("a-model"));
        assert_eq!(closest("code-reveiwer", agents), Some("code-reviewer"));
        assert_eq!(closest("reseacher", agents), Some("researcher"));
        assert_eq!(closest("writer", agents), None);
    }
}
