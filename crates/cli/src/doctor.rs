//! `cowork doctor`: what works on this computer and what is missing. It opens nothing of the
//! app's: it must answer where the app cannot start.

use super::*;

pub(crate) async fn doctor(cli: &Cli) -> Result<ExitCode, String> {
    let findings =
        cowork_app::doctor::examine(cli.home.clone(), &cowork_app::doctor::Place::here())
            .await
            .map_err(|e| e.to_string())?;
    print::doctor(&findings, cli.json);
    Ok(success_if(!findings.iter().any(|f| f.fails())))
}
