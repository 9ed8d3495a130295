//! Skills (SPEC §9) as the catalog holds them: a name, a description and instructions that
//! preloading adds to an agent's system context. `discovery::skills` reads them.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// One skill, loaded at startup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    /// The instructions after the frontmatter, trimmed.
    pub body: String,
    /// Canonical path relative to the workspace.
    pub path: PathBuf,
    /// The frontmatter sets `hooks`, which this runtime does not run: an agent that preloads
    /// the skill would act without them, so such agents are refused.
    pub hooks: bool,
}

impl Skill {
    /// The text preloading adds to a system context (FORMATS.md §5): a heading with the
    /// skill's name and description, then its body.
    pub fn preload_text(&self) -> String {
        format!(
            "## Skill: {}\n\n{}\n\n{}",
            self.name, self.description, self.body
        )
    }
}

/// Skills by name; the first definition of a name wins.
#[derive(Debug, Default, Clone)]
pub struct SkillRegistry {
    skills: Vec<Arc<Skill>>,
    by_name: HashMap<String, usize>,
}

impl SkillRegistry {
    pub fn get(&self, name: &str) -> Option<&Arc<Skill>> {
        self.by_name.get(name).map(|&i| &self.skills[i])
    }

    pub fn iter(&self) -> impl Iterator<Item = &Arc<Skill>> {
        self.skills.iter()
    }

    pub fn len(&self) -> usize {
        self.skills.len()
    }

    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// The skill `name` is probably a slip of ("did you mean …?"), if any.
    pub fn closest(&self, name: &str) -> Option<&str> {
        super::near_miss::closest(name, self.skills.iter().map(|s| s.name.as_str()))
    }

    /// Adds a skill unless its name is taken; returns the holder's path when it is.
    pub fn insert(&mut self, skill: Skill) -> Result<(), PathBuf> {
        if let Some(&i) = self.by_name.get(&skill.name) {
            return Err(self.skills[i].path.clone());
        }
        self.by_name.insert(skill.name.clone(), self.skills.len());
        self.skills.push(Arc::new(skill));
        Ok(())
    }
}
