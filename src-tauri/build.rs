/// Every command the webview may call; each becomes an `allow-<name>` permission that the
/// capability file must grant explicitly.
const COMMANDS: &[&str] = &[
    "first_run",
    "send_message",
    "stop_run",
    "list_conversations",
    "get_messages",
    "rename_conversation",
    "delete_conversation",
    "list_tools",
    "call_tool",
    "answer_approval",
    "answer_elicitation",
    "get_agent_settings",
    "save_agent_settings",
    "list_rules",
    "add_rule",
    "policy_problems",
    "workspace_reviews",
    "trust_workspace",
    "remove_rule",
    "set_mode",
    "audit_list",
    "audit_verify",
    "ui_ready",
    "set_api_key",
    "has_api_key",
    "list_toolpacks",
    "stage_toolpack",
    "install_toolpack",
    "discard_toolpack",
    "set_toolpack_enabled",
    "remove_toolpack",
    "reload_toolpacks",
    "toolpack_log",
    "list_accounts",
    "add_account",
    "remove_account",
    "test_account",
    "outbox",
    "vault_recent",
    "vault_entry",
    "vault_status",
    "vault_reindex",
    "get_vault_settings",
    "save_vault_settings",
    "list_suspensions",
    "resume_suspension",
    "cancel_suspension",
    "extend_suspension",
    "voice_devices",
    "get_voice_settings",
    "save_voice_settings",
    "voice_stop",
    "get_web_settings",
    "save_web_settings",
    "set_web_key",
    "has_web_key",
    "open_link",
];

fn main() {
    // The config sits at the repository root (the product layout); plain cargo builds it.
    println!("cargo:rerun-if-changed=../tauri.conf.json");
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .config_path("../tauri.conf.json")
            .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS)),
    )
    .expect("tauri build step");
}
