//! Agent Skills and Agent Plugins: `cowork skill install | list | remove`.

use super::*;
use cowork_app::skills::StagedSkills;
use cowork_contract::text::printable_field as field;

#[derive(Subcommand)]
pub(crate) enum SkillCmd {
    /// Install a skill (a folder with a SKILL.md), a folder of skills, or an Agent Plugin
    /// (.claude-plugin/plugin.json: its skills, and its MCP servers as toolpacks), from
    /// github:owner/repo[@ref], a folder, a .zip/.skill or a .tgz. Shows a review first.
    Install {
        source: String,
        /// Accept the review without asking (scripts).
        #[arg(long)]
        yes: bool,
    },
    /// Installed skills.
    List,
    Remove {
        name: String,
    },
}

pub(crate) async fn skill(app: &App, cmd: SkillCmd, json: bool) -> Result<ExitCode, String> {
    match cmd {
        SkillCmd::Install { source, yes } => install(app, &source, yes, json).await?,
        SkillCmd::List => {
            let installed = app.skills().map_err(|e| e.to_string())?;
            if json {
                println!("{}", print::json_text(&installed, true));
            } else if installed.is_empty() {
                say!("no skills installed: `cowork skill install SOURCE`");
            }
            for s in installed.values().filter(|_| !json) {
                say!("{}  {}", field(&s.name), field(&s.description));
                say!("    from {}", field(&s.source));
            }
        }
        SkillCmd::Remove { name } => {
            app.remove_skill(&name).map_err(|e| e.to_string())?;
            say!("removed {}", field(&name));
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn install(app: &App, source: &str, yes: bool, json: bool) -> Result<(), String> {
    let staged = app.stage_skills(source).await.map_err(|e| e.to_string())?;
    review(&staged, json);
    let accepted = yes || (approve::person_at_terminal() && approve::ask_yes("Install? [y/N] > ")?);
    if !accepted {
        app.discard_skills(&staged);
        return Err(match approve::person_at_terminal() || yes {
            true => "not installed".into(),
            false => {
                "not installed: no terminal to ask — review the above and pass --yes to accept"
                    .into()
            }
        });
    }
    for name in app.install_skills(&staged).map_err(|e| e.to_string())? {
        say!("installed skill {}", field(&name));
    }
    // Each MCP server of a plugin is a toolpack, with a review of its own.
    for dir in &staged.servers {
        let pack = app
            .stage_toolpack(&dir.display().to_string(), None)
            .await
            .map_err(|e| e.to_string())?;
        if toolpack::accept(&pack.review, yes, json)? {
            let name = pack.manifest.name.clone();
            app.install_toolpack(pack, Default::default(), false)
                .map_err(|e| e.to_string())?;
            say!("installed toolpack {}", field(&name));
        } else {
            app.discard_toolpack(pack);
        }
    }
    app.discard_skills(&staged);
    Ok(())
}

/// What the bundle would add, in its own words where they are its words.
fn review(staged: &StagedSkills, json: bool) {
    if json {
        println!("{}", print::json_text(staged, true));
        return;
    }
    say!(
        "┌ from {} (sha256 {})",
        field(&staged.source),
        &staged.sha256[..16]
    );
    if let Some(plugin) = &staged.plugin {
        say!(
            "│ an Agent Plugin: {} — {}",
            field(&plugin.name),
            field(plugin.description.as_deref().unwrap_or(""))
        );
    }
    for s in &staged.skills {
        let replaces = if s.replaces {
            " (replaces the installed one)"
        } else {
            ""
        };
        say!(
            "│ skill {}{replaces}: {}",
            field(&s.doc.name),
            field(&s.doc.description)
        );
        if let Some(tools) = &s.doc.allowed_tools {
            say!(
                "│   it asks to run unasked: {} — Cowork grants nothing from this: every call is reviewed",
                field(tools)
            );
        }
        say!(
            "│   its instructions, in its own words (the model reads them when it uses the skill):"
        );
        // All of them: what the model would read is what the person reads.
        for line in s.doc.instructions.lines() {
            say!("│   ┆ {}", field(line));
        }
        if !s.files.is_empty() {
            say!(
                "│   files it ships (scripts are code: they run only through reviewed, confined tools):"
            );
            for f in &s.files {
                say!("│     {}", field(f));
            }
        }
    }
    if !staged.server_names.is_empty() {
        say!(
            "│ its MCP servers become toolpacks, each reviewed next: {}",
            staged.server_names.join(", ")
        );
    }
    for part in &staged.not_used {
        say!("│ not taken: {}", field(part));
    }
    say!("└");
}
