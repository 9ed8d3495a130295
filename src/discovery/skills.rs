//! The skills registry (SPEC §9): `SKILL.md` files in the four skill roots, each with YAML
//! frontmatter (`name`, `description`) and a body that is preloaded into the system context
//! of the agents that list the skill.

use super::fields::Doc;
use super::source::{parse_frontmatter, split_frontmatter};
use crate::definition::Skill;
use crate::definition::check_name;

/// Parses one `SKILL.md`. `folder` is the name of the folder that holds it; a different
/// `name` is accepted with a caveat.
pub fn parse_skill(
    text: &str,
    folder: &str,
    path: std::path::PathBuf,
    caveats: &mut Vec<String>,
) -> Result<Skill, String> {
    let split = split_frontmatter(text)?;
    let frontmatter = parse_frontmatter(split.yaml)?;
    caveats.extend(frontmatter.lenient_note);
    let doc = Doc::new(&frontmatter.fields);
    let hooks = doc.has("hooks");
    if hooks {
        // Claude Code runs a skill's hooks while it applies. Nothing here runs them, so an
        // agent that preloads the skill is refused (build::read_common); unused, the skill
        // changes nothing.
        caveats.push(
            "`hooks` in a skill are not run by this runtime; an agent that preloads this \
             skill is refused, since it would act without them"
                .to_owned(),
        );
    }
    let name = doc
        .string(&["name"])?
        .map(|n| n.trim().to_owned())
        .ok_or("`name` is required")?;
    check_name(&name).map_err(|e| format!("`name`: {e}"))?;
    let description = doc
        .string(&["description"])?
        .map(|d| d.trim().to_owned())
        .filter(|d| !d.is_empty())
        .ok_or("`description` is required and must not be empty")?;
    if name != folder {
        caveats.push(format!(
            "the skill is named `{name}` but its folder is `{folder}`; it is available as `{name}`"
        ));
    }
    Ok(Skill {
        name,
        description,
        body: split.body.trim().to_owned(),
        path,
        hooks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_name_description_and_body() {
        let mut caveats = vec![];
        let skill = parse_skill(
            "---\nname: cite\ndescription: Cite sources.\n---\n\nAlways cite.\n",
            "cite",
            "x".into(),
            &mut caveats,
        )
        .unwrap();
        assert_eq!(skill.name, "cite");
        assert_eq!(skill.body, "Always cite.");
        assert!(caveats.is_empty());
        assert_eq!(
            skill.preload_text(),
            "## Skill: cite\n\nCite sources.\n\nAlways cite."
        );
    }

    #[test]
    fn hooks_are_noted_and_kept_on_the_skill() {
        let mut caveats = vec![];
        let skill = parse_skill(
            "---\nname: a\ndescription: d\nhooks:\n  Stop: []\n---\nBody.\n",
            "a",
            "x".into(),
            &mut caveats,
        )
        .unwrap();
        assert!(skill.hooks);
        assert_eq!(caveats.len(), 1);
        assert!(
            caveats[0].contains("`hooks` in a skill are not run"),
            "{caveats:?}"
        );
    }

    #[test]
    fn folder_mismatch_is_a_caveat_and_missing_fields_are_errors() {
        let mut caveats = vec![];
        parse_skill(
            "---\nname: a\ndescription: d\n---\n",
            "b",
            "x".into(),
            &mut caveats,
        )
        .unwrap();
        assert_eq!(caveats.len(), 1);
        assert!(parse_skill("---\nname: a\n---\n", "a", "x".into(), &mut vec![]).is_err());
        assert!(parse_skill("---\ndescription: d\n---\n", "a", "x".into(), &mut vec![]).is_err());
        assert!(parse_skill("no frontmatter", "a", "x".into(), &mut vec![]).is_err());
    }
}
