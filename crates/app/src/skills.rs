//! Agent Skills and Agent Plugins for the shells: staged (fetched and read, nothing installed),
//! then installed once the person accepted what the review showed. A plugin's MCP servers are
//! installed as toolpacks by the shells, each through the toolpack review.

use crate::App;
use cowork_mcp::PackError;
use cowork_mcp::skills::Skills;
pub use cowork_mcp::skills::{InstalledSkill, PluginInfo, SkillDoc, SkillReview, StagedSkills};
use std::collections::BTreeMap;

impl App {
    fn skill_store(&self) -> Skills {
        Skills::new(self.store.dir().root())
    }

    /// Fetches and reads a skill, a folder of skills or a plugin; nothing is installed.
    pub async fn stage_skills(&self, source: &str) -> Result<StagedSkills, PackError> {
        self.skill_store().stage(&self.toolpacks, source).await
    }

    /// The person accepted the review: its skills go into place and the model's index of
    /// skills is refreshed. Returns the names installed.
    pub fn install_skills(&self, staged: &StagedSkills) -> Result<Vec<String>, PackError> {
        let names = self.skill_store().commit(staged)?;
        self.scheduler.registry().reload();
        Ok(names)
    }

    /// The person declined: what was fetched goes.
    pub fn discard_skills(&self, staged: &StagedSkills) {
        self.skill_store().discard(staged);
    }

    pub fn skills(&self) -> Result<BTreeMap<String, InstalledSkill>, PackError> {
        self.skill_store().list()
    }

    pub fn remove_skill(&self, name: &str) -> Result<(), PackError> {
        self.skill_store().remove(name)?;
        self.scheduler.registry().reload();
        Ok(())
    }
}
