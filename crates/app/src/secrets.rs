//! Secrets in the OS keyring only (Secret Service on Linux, via the `keyring` crate). Values
//! never pass through tracing, settings files or the database.

const SERVICE: &str = "app.cowork.desktop";

fn entry(account: &str) -> Result<keyring::Entry, String> {
    keyring::Entry::new(SERVICE, account).map_err(unavailable)
}

fn unavailable(e: keyring::Error) -> String {
    format!(
        "the OS keyring is unavailable ({e}) — is a Secret Service running (GNOME Keyring, KWallet)? Start one and try again (a model's key can instead come from an environment variable named in Settings → Model)"
    )
}

pub fn set(account: &str, secret: &str) -> Result<(), String> {
    if secret.trim().is_empty() {
        return Err("the key is empty".into());
    }
    entry(account)?
        .set_password(secret.trim())
        .map_err(unavailable)
}

pub fn get(account: &str) -> Result<Option<String>, String> {
    match entry(account)?.get_password() {
        Ok(secret) => Ok(Some(secret)),
        Err(keyring::Error::NoEntry) => Ok(None),
        Err(e) => Err(unavailable(e)),
    }
}

pub fn delete(account: &str) -> Result<bool, String> {
    match entry(account)?.delete_credential() {
        Ok(()) => Ok(true),
        Err(keyring::Error::NoEntry) => Ok(false),
        Err(e) => Err(unavailable(e)),
    }
}

/// The keyring as the families' secret source (CalDAV and mail passwords).
pub struct Keyring;

impl cowork_contract::SecretSource for Keyring {
    fn get(&self, name: &str) -> Result<Option<String>, String> {
        get(name)
    }
    fn set(&self, name: &str, value: &str) -> Result<(), String> {
        set(name, value)
    }
    fn delete(&self, name: &str) -> Result<bool, String> {
        delete(name)
    }
}
