// Typed access to the shell's commands and events. Every command and every type that crosses
// the IPC is generated from the Rust definitions into `bindings.ts` (src-tauri's `ipc()`; a test
// fails when it is stale): change the Rust, regenerate, never edit those types here. Every tool
// call the UI causes goes through the core's Scheduler (chat → agent, palette → call_tool): the
// UI never runs anything itself.
import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import {
  type AgentDone,
  type AgentEventPayload,
  type ApprovalChoice,
  type ApprovalRequest,
  type ChainEvent,
  type Content,
  commands,
  type ElicitationRequest,
  type EmbedderSettings,
  type FetchProgress,
  type MicState,
  type NoticeTarget,
  type RuleSource,
  type Status,
  type TaskResumed,
  type ToolEvent,
  type VaultSource,
} from "./bindings";

export * from "./bindings";
export const api = commands;

// Shorter names the views use for generated types.
export type Choice = ApprovalChoice;
export type RuleScope = RuleSource;
export type Embedder = EmbedderSettings;
/** An image a tool returned (a screenshot). */
export type ImageBlock = Extract<Content, { type: "image" }>;

// Tool outputs the views read from `structured` (a tool's output, not an IPC type: its schema
// is the tool's output schema).
export type ChangeStatus = "staged" | "applied" | "rejected" | "rolled_back";
export interface Change {
  id: number;
  conversation: string;
  path: string;
  kind: "created" | "modified" | "deleted";
  status: ChangeStatus;
  added: number;
  removed: number;
  binary: boolean;
  created_at: string;
  updated_at: string;
}
export interface Hunk {
  number: number;
  header: string;
  text: string;
}
export interface ChangeDiff {
  change: Change;
  conflict: boolean;
  hunks: Hunk[];
  summary: string | null;
}

export interface VaultHit {
  id: string;
  path: string;
  title: string;
  kind: string;
  scope: string;
  tags: string[];
  snippet: string;
  score: number;
  similarity?: number;
  source?: VaultSource;
  updated: string;
}

/** What the shell pushes, by event name, with the Rust payload types. */
export interface Events {
  "agent-event": AgentEventPayload;
  "agent-done": AgentDone;
  "tool-event": ToolEvent;
  "task-resumed": TaskResumed;
  "approval-request": ApprovalRequest;
  "elicitation-request": ElicitationRequest;
  "toolpacks-changed": null;
  "vault-changed": null;
  "mic-state": MicState;
  "desktop-status": Status;
  "desktop-request": null;
  "open-target": NoticeTarget;
  reminder: NoticeTarget;
  "chain-event": ChainEvent;
  "asset-progress": FetchProgress;
}

export function on<K extends keyof Events>(event: K, handler: (payload: Events[K]) => void): Promise<UnlistenFn> {
  return listen<Events[K]>(event, (e) => handler(e.payload));
}
