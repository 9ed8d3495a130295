//! A workspace's warnings as a person reads them (issue 39): the rejections that one default
//! model would fix said once for all of them, with their names, and on a terminal every
//! other warning grouped under its file and wrapped to the terminal's width.

use std::collections::BTreeMap;

use super::terminal::wrap_words;
use crate::definition::Warning;

/// What the line about the default-model rejections says after its count and before the
/// names.
const USE_THEIR_PARENTS_MODEL: &str = "use their parent's model (`model: inherit`, no model, or \
a name such as Cursor's `fast` that names none), which this server cannot see: start it with \
MCP_AGENTS_DEFAULT_MODEL=PROVIDER/MODEL in its environment (or --default-model), as the MCP \
client's configuration can set (docs/clients.md), or name a model in each file";

/// The warnings split for reading: those shown one by one, and the rejections a default
/// model alone fixes, said in one line when there are several.
pub(super) struct Readable<'a> {
    pub each: Vec<&'a Warning>,
    /// `rejected: 10 agents use their parent's model …: a, b, …`, when two or more files
    /// were rejected only for want of a default model.
    pub default_model: Option<String>,
}

impl<'a> Readable<'a> {
    pub(super) fn of(warnings: impl IntoIterator<Item = &'a Warning>) -> Self {
        let (wanting, mut each): (Vec<&Warning>, Vec<&Warning>) =
            warnings.into_iter().partition(|w| w.wants_default_model());
        if wanting.len() < 2 {
            each.extend(wanting);
            return Readable {
                each,
                default_model: None,
            };
        }
        let names: Vec<String> = wanting
            .iter()
            .map(|w| match &w.agent {
                Some(name) => name.clone(),
                None => w.file.display().to_string(),
            })
            .collect();
        Readable {
            each,
            default_model: Some(format!(
                "{} agents {USE_THEIR_PARENTS_MODEL}: {}",
                wanting.len(),
                names.join(", ")
            )),
        }
    }

    /// One line each, `warning: <file>: <reason>` (`rejected: …` for a rejected file), as
    /// logs and pipes take them.
    pub(super) fn lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .each
            .iter()
            .map(|w| format!("{}: {w}", w.label()))
            .collect();
        lines.extend(self.default_model.iter().map(|l| format!("rejected: {l}")));
        lines
    }

    /// For a terminal `width` columns wide: a heading, each file that has warnings with its
    /// warnings indented under it (`  warning: <reason>`), in the order of their first
    /// warning, then the default-model line; every line wrapped at spaces. Empty when there
    /// is nothing to say.
    pub(super) fn grouped(&self, width: usize) -> String {
        if self.each.is_empty() && self.default_model.is_none() {
            return String::new();
        }
        let mut order: Vec<&std::path::Path> = Vec::new();
        let mut by_file: BTreeMap<&std::path::Path, Vec<&Warning>> = BTreeMap::new();
        for warning in &self.each {
            let file = warning.file.as_path();
            if !by_file.contains_key(file) {
                order.push(file);
            }
            by_file.entry(file).or_default().push(warning);
        }
        let mut out = String::from("Warnings, by file:\n");
        let mut push = |text: &str, indent: usize| {
            for line in wrap_words(text, width, indent + 2) {
                out.push_str(&" ".repeat(if line.starts_with(' ') { 0 } else { indent }));
                out.push_str(&line);
                out.push('\n');
            }
        };
        for file in order {
            push(&file.display().to_string(), 0);
            for warning in &by_file[file] {
                push(&format!("{}: {}", warning.label(), warning.reason), 2);
            }
        }
        if let Some(line) = &self.default_model {
            push(&format!("rejected: {line}"), 0);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::Effect;

    fn rejected(file: &str, agent: &str, wants: bool) -> Warning {
        Warning::new(file.into(), "the reason".into(), Effect::Rejected)
            .about(Some(agent.to_owned()))
            .wanting_default_model(wants)
    }

    #[test]
    fn default_model_rejections_are_said_once_when_there_are_several() {
        let warnings = [
            rejected("a.md", "a", true),
            rejected("b.md", "b", false),
            rejected("c.md", "c", true),
        ];
        let readable = Readable::of(&warnings);
        let lines = readable.lines();
        assert_eq!(lines[0], "rejected: b.md: the reason");
        assert!(lines[1].starts_with("rejected: 2 agents use their parent's model"));
        assert!(
            lines[1].ends_with("name a model in each file: a, c"),
            "{}",
            lines[1]
        );
        assert_eq!(lines.len(), 2);
        let one = Readable::of(&warnings[..2]);
        assert_eq!(one.default_model, None, "one is said as itself");
        assert_eq!(one.lines().len(), 2);
    }

    #[test]
    fn on_a_terminal_warnings_sit_under_their_file_wrapped() {
        let long = Warning::new(
            "x.md".into(),
            "runs without Bash: this runtime has no such tools".into(),
            Effect::Loaded,
        );
        let other = Warning::new("y.md".into(), "second".into(), Effect::Loaded);
        let again = Warning::new("x.md".into(), "third".into(), Effect::Loaded);
        let warnings = [long, other, again];
        assert_eq!(
            Readable::of(&warnings).grouped(30),
            "Warnings, by file:\nx.md\n  warning: runs without\n    Bash: this runtime has no\n    such tools\n  \
             warning: third\ny.md\n  warning: second\n"
        );
        assert_eq!(Readable::of(&[]).grouped(30), "");
    }
}
