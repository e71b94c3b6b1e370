//! Settings → Accounts: CalDAV and mail accounts, and the outbox's Undo bar.

use super::Res;
use super::tools::{ToolCallView, call_view};
use crate::Shell;
use cowork_core::Caller;
use tauri::State;

/// CalDAV and mail accounts: settings only (passwords never come back to the webview).
#[tauri::command]
#[specta::specta]
pub fn list_accounts(shell: State<'_, Shell>) -> Res<Vec<cowork_app::AccountSettings>> {
    shell.app.accounts()
}

/// Saves an account; its password goes to the OS keyring (an OAuth account has none: empty).
#[tauri::command]
#[specta::specta]
pub fn add_account(
    shell: State<'_, Shell>,
    account: cowork_app::AccountSettings,
    password: String,
) -> Res<()> {
    let password = (!password.is_empty()).then_some(password.as_str());
    shell.app.add_account(&account, password)
}

/// The settings found for an address, shown to the person before anything is saved.
#[derive(serde::Serialize, specta::Type)]
pub struct FoundMailSetup {
    pub provider: String,
    /// Where they came from (a URL, or Cowork's built-in settings).
    pub found_by: String,
    pub account: cowork_app::AccountKind,
    /// For a password account: what kind of password (an app password…) and where to make it.
    pub password_note: Option<String>,
    pub password_page: Option<String>,
    /// What was looked at, in order.
    pub steps: Vec<String>,
    /// The provider's calendars, as an account of their own (a second sign-in), when known.
    pub calendar: Option<cowork_app::AccountKind>,
}

/// Finds a mail account's settings from its address (built-in, autoconfig, ISP database, a
/// guess); nothing is saved.
#[tauri::command]
#[specta::specta]
pub async fn find_mail_setup(shell: State<'_, Shell>, email: String) -> Res<FoundMailSetup> {
    let mut steps = Vec::new();
    let found = shell
        .app
        .find_mail_setup(&email, &mut |step| steps.push(step))
        .await?;
    let (password_note, password_page) = found.password_note.unzip();
    Ok(FoundMailSetup {
        provider: found.provider,
        found_by: found.found_by,
        account: found.config,
        password_note,
        password_page: password_page.flatten(),
        steps,
        calendar: found.calendar,
    })
}

/// Opens a sign-in page (an HTTPS or loopback address the sign-in built) in the person's
/// browser; when none opens, the window shows the address instead.
pub(super) fn open_sign_in_page<R: tauri::Runtime>(app: &tauri::AppHandle<R>, url: &str) {
    use tauri_plugin_opener::OpenerExt;
    if let Err(e) = app.opener().open_url(url, None::<&str>) {
        tracing::info!("sign-in: no browser opened ({e}); the window shows the address");
    }
}

/// Starts signing in to an OAuth account: the person's browser opens at the provider's page
/// (the address is returned too, for the window to show when no browser opened).
#[tauri::command]
#[specta::specta]
pub async fn begin_sign_in<R: tauri::Runtime>(
    app: tauri::AppHandle<R>,
    shell: State<'_, Shell>,
    name: String,
) -> Res<String> {
    let sign_in = shell.app.begin_sign_in(&name).await?;
    let url = sign_in.url().to_string();
    open_sign_in_page(&app, &url);
    shell.sign_ins.lock().unwrap().insert(name, sign_in);
    Ok(url)
}

/// Waits for the browser to come back from the sign-in begun for `name`; the tokens go to the
/// OS keyring. Tasks waiting for this sign-in go on by themselves.
#[tauri::command]
#[specta::specta]
pub async fn finish_sign_in(shell: State<'_, Shell>, name: String) -> Res<()> {
    let sign_in = shell
        .sign_ins
        .lock()
        .unwrap()
        .remove(&name)
        .ok_or_else(|| format!("no sign-in to {name} is under way: start it again"))?;
    shell.app.finish_sign_in(sign_in).await
}

/// Signs out: the tokens leave the keyring and the provider is asked to revoke Cowork's access;
/// why it did not, when it did not.
#[tauri::command]
#[specta::specta]
pub async fn sign_out(shell: State<'_, Shell>, name: String) -> Res<Option<String>> {
    // What the person should know: nothing when the server revoked (or there was nothing to
    // sign out of), else why the grant may live on at the provider.
    Ok(match shell.app.sign_out(&name).await? {
        cowork_app::SignedOut::NotRevoked(why) => Some(why),
        _ => None,
    })
}

/// Which of the OAuth accounts have tokens now.
#[tauri::command]
#[specta::specta]
pub fn signed_in_accounts(shell: State<'_, Shell>) -> Res<Vec<String>> {
    Ok(shell
        .app
        .accounts()?
        .into_iter()
        .filter(|a| shell.app.signed_in(&a.name))
        .map(|a| a.name)
        .collect())
}

#[tauri::command]
#[specta::specta]
pub fn remove_account(shell: State<'_, Shell>, name: String) -> Res<bool> {
    shell.app.remove_account(&name)
}

/// Recent outbox messages: the Undo bar shows those still queued. Undo itself is the
/// `email_undo` tool, reviewed and audited.
#[tauri::command]
#[specta::specta]
pub fn outbox(shell: State<'_, Shell>) -> Res<Vec<cowork_app::OutboxRow>> {
    shell.app.outbox(20)
}

/// Logs in and reads a little, as an audited call.
#[tauri::command]
#[specta::specta]
pub async fn test_account(shell: State<'_, Shell>, name: String) -> Res<ToolCallView> {
    Ok(call_view(
        &shell
            .app
            .test_account(&name, Caller::Palette, "settings")
            .await?,
    ))
}
