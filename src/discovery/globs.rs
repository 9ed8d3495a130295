//! Load-time arithmetic on the `*` globs of tool lists, so that two allow lists can be
//! combined as an intersection (a tool must pass both) with the filters the definition
//! already has: the agent's allow list and each server's own `enabled_tools`.
//!
//! A glob here is text in which `*` matches any run of characters and every other character
//! matches itself (as in `definition::tool_filter`). Both operations give their result as a
//! union of such globs, which is exact: the glob languages are closed under both.

use std::collections::BTreeSet;

/// Largest `len(a) × len(b)` [`intersect`] works on; longer patterns are refused rather than
/// given a large table.
const MAX_PRODUCT: usize = 64 * 1024;

/// A bound on the steps one file's combination may take, so that no file, however written,
/// makes loading slow. Running out means "too intricate"; the caller refuses the file.
#[derive(Debug)]
pub struct Budget {
    steps: usize,
}

impl Budget {
    pub fn new(steps: usize) -> Self {
        Budget { steps }
    }

    fn spend(&mut self, steps: usize) -> Option<()> {
        self.steps = self.steps.checked_sub(steps)?;
        Some(())
    }
}

/// The globs matching the rest of a name after `prefix`: a name `prefix + rest` matches
/// `glob` exactly when `rest` matches one of the returned globs. Globs that match only the
/// empty rest are left out (names are never empty). The result is at most one glob per
/// position of `glob`. `None`: the budget ran out.
pub fn after_prefix(glob: &str, prefix: &str, budget: &mut Budget) -> Option<Vec<String>> {
    budget.spend(glob.len())?;
    let g = collapse_stars(glob);
    // The positions of `g` the text read so far can have reached, closed under "a `*`
    // matches nothing".
    let close = |states: &mut BTreeSet<usize>| {
        let mut stack: Vec<usize> = states.iter().copied().collect();
        while let Some(i) = stack.pop() {
            if g.get(i) == Some(&'*') && states.insert(i + 1) {
                stack.push(i + 1);
            }
        }
    };
    let mut states = BTreeSet::from([0]);
    close(&mut states);
    for c in prefix.chars() {
        budget.spend(states.len())?;
        let mut next = BTreeSet::new();
        for &i in &states {
            match g.get(i) {
                Some('*') => {
                    next.insert(i);
                }
                Some(&gc) if gc == c => {
                    next.insert(i + 1);
                }
                _ => {}
            }
        }
        close(&mut next);
        states = next;
        if states.is_empty() {
            return Some(Vec::new());
        }
    }
    budget.spend(states.len() * g.len())?;
    Some(
        states
            .iter()
            // `g[i..]` after a `*` that is itself reached adds nothing to `*g[i..]`.
            .filter(|&&i| i < g.len() && !(i > 0 && g[i - 1] == '*' && states.contains(&(i - 1))))
            .map(|&i| g[i..].iter().collect())
            .collect(),
    )
}

/// The names both `a` and `b` match, as a union of globs; `None` when that would take more
/// than `limit` globs, the patterns are too long to combine, or the budget ran out.
pub fn intersect(a: &str, b: &str, limit: usize, budget: &mut Budget) -> Option<Vec<String>> {
    let a = collapse_stars(a);
    let b = collapse_stars(b);
    let (n, m) = (a.len(), b.len());
    let cells = (n + 1).saturating_mul(m + 1);
    if cells > MAX_PRODUCT {
        return None;
    }
    budget.spend(cells)?;
    // table[i][j]: the globs for `a[i..]` ∩ `b[j..]`, filled from the ends backwards (every
    // step reads or skips at least one position of either pattern).
    let mut table: Vec<Vec<BTreeSet<String>>> = vec![vec![BTreeSet::new(); m + 1]; n + 1];
    for i in (0..=n).rev() {
        for j in (0..=m).rev() {
            let mut out: BTreeSet<String> = BTreeSet::new();
            if i == n && j == m {
                out.insert(String::new());
            }
            let a_star = a.get(i) == Some(&'*');
            let b_star = b.get(j) == Some(&'*');
            // A `*` that matches nothing.
            if a_star {
                out.extend(table[i + 1][j].iter().cloned());
            }
            if b_star {
                out.extend(table[i][j + 1].iter().cloned());
            }
            // One character read by both.
            let mut read = |c: char, rest: &BTreeSet<String>| {
                out.extend(rest.iter().map(|g| format!("{c}{g}")));
            };
            match (a.get(i), b.get(j)) {
                (Some('*'), Some('*')) => {} // both stars: the `*` prefix below
                (Some('*'), Some(&c)) => read(c, &table[i][j + 1]),
                (Some(&c), Some('*')) => read(c, &table[i + 1][j]),
                (Some(&c), Some(&d)) if c == d => read(c, &table[i + 1][j + 1]),
                _ => {}
            }
            if a_star && b_star {
                // Both stars can read anything here, for as long as they like.
                out = out
                    .into_iter()
                    .map(|g| {
                        if g.starts_with('*') {
                            g
                        } else {
                            format!("*{g}")
                        }
                    })
                    .collect();
            }
            if out.len() > limit {
                return None;
            }
            budget.spend(out.len())?;
            table[i][j] = out;
        }
    }
    Some(
        std::mem::take(&mut table[0][0])
            .into_iter()
            .filter(|g| !g.is_empty())
            .collect(),
    )
}

fn collapse_stars(glob: &str) -> Vec<char> {
    let mut out: Vec<char> = Vec::with_capacity(glob.len());
    for c in glob.chars() {
        if !(c == '*' && out.last() == Some(&'*')) {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::tool_filter::glob_matches;

    fn big() -> Budget {
        Budget::new(usize::MAX)
    }

    fn any_matches(globs: &[String], text: &str) -> bool {
        globs.iter().any(|g| glob_matches(g, text))
    }

    const NAMES: &[&str] = &[
        "",
        "a",
        "b",
        "ab",
        "ba",
        "aa",
        "abc",
        "aXc",
        "docs_read",
        "docs__read",
        "docs_x_read",
        "read",
        "x_read",
        "delete_issue",
        "tracker__delete_issue",
        "a_b",
        "a__b",
        "a___b",
        "abab",
        "aabb",
        "ca",
        "cab",
        "xyz",
    ];

    #[test]
    fn after_prefix_is_exact() {
        let globs = [
            "docs_*",
            "*",
            "docs__read",
            "*_read",
            "d*s_*",
            "*a*",
            "a*b",
            "docs",
            "*__*",
            "x",
        ];
        for glob in globs {
            for prefix in ["", "docs_", "docs__", "a", "d", "x_", "zz"] {
                let rests = after_prefix(glob, prefix, &mut big()).unwrap();
                for rest in NAMES.iter().filter(|r| !r.is_empty()) {
                    assert_eq!(
                        any_matches(&rests, rest),
                        glob_matches(glob, &format!("{prefix}{rest}")),
                        "glob {glob:?} after {prefix:?} on {rest:?}: {rests:?}"
                    );
                }
            }
        }
        assert_eq!(after_prefix("docs_*", "docs_", &mut big()).unwrap(), ["*"]);
        assert!(
            after_prefix("docs_*", "tracker_", &mut big())
                .unwrap()
                .is_empty()
        );
        assert!(
            after_prefix("docs", "docs", &mut big()).unwrap().is_empty(),
            "only the empty rest"
        );
    }

    #[test]
    fn intersect_is_exact() {
        let globs = [
            "*", "a*", "*b", "*a*", "*b*", "a*b", "ab", "*_read", "docs_*", "d*", "*__*", "a*a",
            "**", "", "ca*", "*ab*", "*ba*",
        ];
        for a in globs {
            for b in globs {
                let both = intersect(a, b, 64, &mut big()).expect("small patterns combine");
                for name in NAMES.iter().filter(|n| !n.is_empty()) {
                    assert_eq!(
                        any_matches(&both, name),
                        glob_matches(a, name) && glob_matches(b, name),
                        "{a:?} ∩ {b:?} on {name:?}: {both:?}"
                    );
                }
            }
        }
        assert_eq!(
            intersect("docs_*", "*_read", 8, &mut big()).unwrap().len(),
            2
        );
        assert!(intersect("a*", "b*", 8, &mut big()).unwrap().is_empty());
    }

    proptest::proptest! {
        #[test]
        fn both_operations_agree_with_matching(
            a in "[ab_*]{0,7}",
            b in "[ab_*]{0,7}",
            prefix in "[ab_]{0,3}",
            names in proptest::collection::vec("[ab_]{1,8}", 16),
        ) {
            let both = intersect(&a, &b, 4096, &mut big()).expect("short patterns combine");
            let rests = after_prefix(&a, &prefix, &mut big()).expect("short patterns");
            for name in &names {
                proptest::prop_assert_eq!(
                    any_matches(&both, name),
                    glob_matches(&a, name) && glob_matches(&b, name),
                    "{:?} ∩ {:?} on {:?}: {:?}", a, b, name, both
                );
                proptest::prop_assert_eq!(
                    any_matches(&rests, name),
                    glob_matches(&a, &format!("{prefix}{name}")),
                    "{:?} after {:?} on {:?}: {:?}", a, prefix, name, rests
                );
            }
        }
    }

    #[test]
    fn intersect_refuses_blow_up_and_huge_patterns() {
        let many = "*a*a*a*a*a*a*a*a*";
        let other = "*b*b*b*b*b*b*b*b*";
        assert!(intersect(many, other, 16, &mut big()).is_none());
        let long = "a".repeat(100_000);
        assert!(intersect(&long, "*", 16, &mut big()).is_none());
        let mut small = Budget::new(100);
        assert!(after_prefix(&"*a".repeat(200), "aaaa", &mut small).is_none());
        assert!(intersect("*a*", "*b*", 64, &mut Budget::new(3)).is_none());
    }
}
