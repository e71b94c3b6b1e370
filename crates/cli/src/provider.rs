//! The chat's model provider: `cowork provider set | key | check`.

use super::*;
use cowork_app::{AgentSettings, ProviderKind};

#[derive(Subcommand)]
pub(crate) enum ProviderCmd {
    /// Choose the provider, e.g. `--provider openai --base-url http://127.0.0.1:11434/v1 --model qwen3`.
    Set {
        #[arg(long, value_enum)]
        provider: ProviderArg,
        #[arg(long)]
        base_url: String,
        #[arg(long)]
        model: String,
        /// Read the key from this environment variable instead of the keyring.
        #[arg(long, default_value = "")]
        api_key_env: String,
    },
    /// Store the API key in the OS keyring (read from standard input, never from arguments).
    Key,
    /// Send one short message to the provider and print the reply.
    Check,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum ProviderArg {
    Anthropic,
    Openai,
}

pub(crate) async fn provider(app: &App, cmd: ProviderCmd) -> Result<ExitCode, String> {
    let path = app.home().settings_path();
    match cmd {
        ProviderCmd::Set {
            provider,
            base_url,
            model,
            api_key_env,
        } => {
            let provider = match provider {
                ProviderArg::Anthropic => ProviderKind::Anthropic,
                ProviderArg::Openai => ProviderKind::Openai,
            };
            // What else was set (personas, prices, profile) stays.
            let settings = match AgentSettings::load(&path)? {
                Some(old) => AgentSettings {
                    provider,
                    base_url,
                    model,
                    api_key_env,
                    ..old
                },
                None => AgentSettings::new(provider, &base_url, &model, &api_key_env),
            };
            settings.save(&path)?;
            say!("provider saved to {}", path.display());
        }
        ProviderCmd::Key => store_key(&path)?,
        ProviderCmd::Check => check(app).await?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The API key, read from standard input, into the OS keyring.
fn store_key(settings_path: &std::path::Path) -> Result<(), String> {
    let settings = AgentSettings::load(settings_path)?
        .ok_or("set a provider first: `cowork provider set …`")?;
    let key = approve::read_line()?;
    cowork_app::secrets::set(&settings.keyring_account(), &key)?;
    say!(
        "key stored in the OS keyring ({})",
        settings.keyring_account()
    );
    Ok(())
}

/// Sends one short message to the provider and prints the reply.
async fn check(app: &App) -> Result<(), String> {
    let agent = app
        .agent()?
        .ok_or("set a provider first: `cowork provider set …`")?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let conversation = format!("provider-check-{}", std::process::id());
    agent
        .send(
            &conversation,
            "Reply with one word: pong.",
            &tx,
            Default::default(),
        )
        .await
        .map_err(|e| e.to_string())?;
    drop(tx);
    let mut reply = String::new();
    while let Some(event) = rx.recv().await {
        if let cowork_agent::AgentEvent::TextDelta { text } = event {
            reply.push_str(&text);
        }
    }
    say!("{}", reply.trim());
    Ok(())
}
