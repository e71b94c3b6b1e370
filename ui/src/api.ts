// Typed access to the shell's commands and events. Every tool call the UI causes goes through
// the core's Scheduler (chat → agent, palette → call_tool): the UI never runs anything itself.
import { invoke } from "@tauri-apps/api/core";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";

export type Action = "allow" | "ask" | "deny";
export type Mode = "normal" | "plan" | "accept-edits";
export type Choice = "once" | "conversation" | "always" | "always_workspace" | "deny";
export type RuleScope = "user" | "workspace";

export interface Reason { points: number; text: string }
export interface Review {
  decision: Action; score: number; reasons: Reason[]; why: string; mode: Mode;
  matched: { rule: string; action: Action; source: string } | null;
  tainted_by: string | null; can_grant: boolean;
}
export interface Effect { kind: string; [k: string]: unknown }
export interface ApprovalRequest {
  call_id: string; conversation: string; caller: string; tool: string; title: string;
  args: unknown; effects: Effect[]; review: Review; choices: Choice[];
}
export type Part =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: unknown }
  | { type: "tool_result"; tool_use_id: string; content: string; is_error: boolean; suspended?: string };
export interface Message { role: "user" | "assistant"; parts: Part[] }
export interface ConversationSummary { id: string; title: string; updated_at: string; messages: number }
export interface ToolSpec {
  name: string; title: string; description: string; category: string; effects: string[];
  input_schema: unknown; aliases?: string[]; annotations: { read_only: boolean; destructive: boolean };
}
export interface ToolInfo { spec: ToolSpec; layer: "stub" | "builtin" | "mcp"; overrides: string[] }
export type AgentEvent =
  | { type: "text_delta"; text: string }
  | { type: "tool_call_requested"; id: string; name: string; input: unknown }
  | { type: "tool_call_finished"; id: string; name: string; call_id: string; ok: boolean; suspended?: string; result: string; images: ImageBlock[]; duration_ms: number }
  | { type: "recalled"; call_id: string; memories: { id: string; title: string; kind: string; snippet: string }[] }
  | { type: "resumed"; suspension: string; tool: string }
  | { type: "finished"; steps: number };
export interface Progress { progress: number; total?: number | null; message?: string | null }
export type ToolEvent =
  | { type: "started"; call_id: string; tool: string; conversation: string; caller_ref: string | null }
  | { type: "progress"; call_id: string; progress: Progress }
  | { type: "completed"; call_id: string; tool: string; duration_us: number }
  | { type: "failed"; call_id: string; tool: string; error_kind: string; message: string; duration_us: number };
export interface AgentSettings {
  provider: "anthropic" | "openai"; baseUrl: string; model: string; apiKeyEnv: string;
  allowedTools?: string[] | null; maxSteps?: number; recall?: { enabled: boolean; k: number };
}
export interface RuleEntry { action: Action; rule: string; source: string; file?: string; broad?: string }
export interface AuditEntry {
  seq: number; ts: string; call_id: string; phase: string; tool: string; layer: string | null;
  caller: string; conversation: string; args: string; effects: string; decision: string;
  score: number | null; rule: string | null; approved_by: string | null; outcome: string | null;
  error: string | null; duration_us: number | null; hash: string;
}
export interface VerifyReport { rows: number; head_seq: number; head_hash: string; problems: { seq: number; message: string }[] }
/** An image a tool returned (a screenshot). */
export interface ImageBlock { type: "image"; mime_type: string; data_base64: string }
export interface ToolCallView { call_id: string; tool: string; ok: boolean; suspended: string | null; text: string; structured: unknown; images: ImageBlock[]; decision: Action | null; score: number | null; duration_ms: number }
export type TrustState = "trusted" | "untrusted" | "changed";
export interface WorkspaceReview {
  root: string; settings: string; state: TrustState; digest: string;
  allow: string[]; ask: string[]; deny: string[]; mode: Mode | null; broad: string[];
  repository_programs: string[];
}
export interface PolicyProblem { file: string; message: string }
export interface FirstRun { provider_configured: boolean; provider_error: string | null; ollama_detected: boolean; mode: Mode; workspace: boolean }

export interface ElicitationRequest { id: string; from: string; message: string; schema: { properties?: Record<string, { type?: string; title?: string; description?: string; enum?: string[] }>; required?: string[] } }
export type ElicitationAnswer = { action: "accept"; content: Record<string, unknown> } | { action: "decline" } | { action: "cancel" };
export interface ToolpackRecord {
  source: string; ref?: string | null; commit?: string | null; sha256: string; enabled: boolean;
  lastUsed?: string | null; config: Record<string, unknown>; version: string; installedAt: string;
}
export type ServerState = "configured" | "starting" | "running" | "restarting" | "stopped" | "failed";
export interface ServerStatus { name: string; state: ServerState; restarts: number; tools: number; pid: number | null; last_error: string | null; log_file: string }
export interface ToolpackReview {
  name: string; display_name: string; version: string; description: string; source: string; commit: string | null; sha256: string;
  command: string; tools: { name: string; description: string; effects: string[] | null; withheld?: string }[]; overrides: Record<string, string>; sandbox: string[];
  user_config: { key: string; title: string; required: boolean; sensitive: boolean; has_default: boolean }[]; changes: string[];
}

export type ChangeStatus = "staged" | "applied" | "rejected" | "rolled_back";
export interface Change { id: number; conversation: string; path: string; kind: "created" | "modified" | "deleted"; status: ChangeStatus; added: number; removed: number; binary: boolean; created_at: string; updated_at: string }
export interface Hunk { number: number; header: string; text: string }
export interface ChangeDiff { change: Change; conflict: boolean; hunks: Hunk[]; summary: string | null }

export type Security = "tls" | "starttls" | "plain";
export type Account =
  | { name: string; kind: "caldav"; url: string; username: string }
  | { name: string; kind: "mail"; email: string; display_name?: string | null; username: string; imap_host: string; imap_port: number; imap_security: Security; smtp_host: string; smtp_port: number; smtp_security: Security };
export interface OutboxRow { id: number; account: string; recipients: string[]; subject: string; state: string; send_after: string; error?: string | null }

export interface VaultSource { conversation?: string; tool?: string; call?: string; promoted_from?: string }
export interface VaultEntry { id: string; path: string; kind: string; scope: string; title: string; tags: string[]; source?: VaultSource; body: string; created: string; updated: string }
export interface VaultHit { id: string; path: string; title: string; kind: string; scope: string; tags: string[]; snippet: string; score: number; similarity?: number; source?: VaultSource; updated: string }
export interface VaultStatus {
  stats: { folder: string; entries: number; by_kind: [string, number][]; vectors: [string, number][]; model: string | null; semantic_off: string | null; cached_vectors: number; cache_bytes: number; problems: [string, string][] };
  progress: { phase: "idle" | "scanning" | "indexing" | "embedding"; done: number; total: number };
}

export type Embedder = { kind: "e5"; dir?: string } | { kind: "openai"; baseUrl: string; model: string; apiKeyEnv?: string } | { kind: "none" };
export interface VaultSettings { folder?: string | null; embedder: Embedder }

export interface Suspension { id: string; call_id: string; conversation: string; tool: string; reason: string; state: string; created_at: string; deadline: string }

export const api = {
  firstRun: () => invoke<FirstRun>("first_run"),
  send: (conversation: string | null, text: string) => invoke<string>("send_message", { conversation, text }),
  stop: (conversation: string) => invoke<void>("stop_run", { conversation }),
  conversations: (search: string) => invoke<ConversationSummary[]>("list_conversations", { search }),
  messages: (conversation: string) => invoke<Message[]>("get_messages", { conversation }),
  rename: (conversation: string, title: string) => invoke<boolean>("rename_conversation", { conversation, title }),
  remove: (conversation: string) => invoke<boolean>("delete_conversation", { conversation }),
  tools: () => invoke<ToolInfo[]>("list_tools"),
  callTool: (name: string, args: unknown, conversation: string, card: string) => invoke<ToolCallView>("call_tool", { name, args, conversation, card }),
  answer: (callId: string, choice: Choice) => invoke<void>("answer_approval", { callId, choice }),
  answerElicitation: (id: string, answer: ElicitationAnswer) => invoke<void>("answer_elicitation", { id, answer }),
  agentSettings: () => invoke<AgentSettings | null>("get_agent_settings"),
  saveAgentSettings: (settings: AgentSettings) => invoke<void>("save_agent_settings", { settings }),
  rules: (conversation: string | null) => invoke<RuleEntry[]>("list_rules", { conversation }),
  addRule: (action: Action, rule: string, source: RuleScope, force = false) => invoke<string | null>("add_rule", { action, rule, source, force }),
  policyProblems: () => invoke<PolicyProblem[]>("policy_problems"),
  workspaceReviews: () => invoke<WorkspaceReview[]>("workspace_reviews"),
  trustWorkspace: (root: string, digest: string) => invoke<void>("trust_workspace", { root, digest }),
  removeRule: (rule: string, conversation: string | null) => invoke<number>("remove_rule", { rule, conversation }),
  setMode: (mode: Mode) => invoke<void>("set_mode", { mode }),
  audit: (filter: { tool?: string; decision?: string; limit?: number }) => invoke<AuditEntry[]>("audit_list", { filter }),
  verify: () => invoke<VerifyReport>("audit_verify"),
  ready: () => invoke<void>("ui_ready"),
  setApiKey: (key: string) => invoke<void>("set_api_key", { key }),
  hasApiKey: () => invoke<boolean>("has_api_key"),
  toolpacks: () => invoke<{ records: Record<string, ToolpackRecord>; servers: ServerStatus[] }>("list_toolpacks"),
  stageToolpack: (source: string) => invoke<{ token: string; review: ToolpackReview }>("stage_toolpack", { source }),
  installToolpack: (token: string, config: Record<string, unknown>) => invoke<ToolpackRecord>("install_toolpack", { token, config }),
  discardToolpack: (token: string) => invoke<void>("discard_toolpack", { token }),
  setToolpackEnabled: (name: string, enabled: boolean) => invoke<void>("set_toolpack_enabled", { name, enabled }),
  removeToolpack: (name: string) => invoke<void>("remove_toolpack", { name }),
  reloadToolpacks: () => invoke<{ name: string; error: string | null }[]>("reload_toolpacks"),
  toolpackLog: (server: string) => invoke<string>("toolpack_log", { server }),
  accounts: () => invoke<Account[]>("list_accounts"),
  addAccount: (account: Account, password: string) => invoke<void>("add_account", { account, password }),
  removeAccount: (name: string) => invoke<boolean>("remove_account", { name }),
  testAccount: (name: string) => invoke<ToolCallView>("test_account", { name }),
  outbox: () => invoke<OutboxRow[]>("outbox"),
  vaultRecent: (filter: { kinds?: string[] }, limit: number) => invoke<VaultEntry[]>("vault_recent", { filter, limit }),
  vaultEntry: (id: string) => invoke<VaultEntry | null>("vault_entry", { id }),
  vaultStatus: () => invoke<VaultStatus>("vault_status"),
  vaultReindex: () => invoke<unknown>("vault_reindex"),
  suspensions: () => invoke<Suspension[]>("list_suspensions"),
  resumeSuspension: (id: string) => invoke<ToolCallView>("resume_suspension", { id }),
  cancelSuspension: (id: string) => invoke<unknown>("cancel_suspension", { id }),
  extendSuspension: (id: string, minutes: number) => invoke<unknown>("extend_suspension", { id, minutes }),
  vaultSettings: () => invoke<VaultSettings>("get_vault_settings"),
  saveVaultSettings: (settings: VaultSettings) => invoke<void>("save_vault_settings", { settings }),
};

export function on<T>(event: string, handler: (payload: T) => void): Promise<UnlistenFn> {
  return listen<T>(event, (e) => handler(e.payload));
}
