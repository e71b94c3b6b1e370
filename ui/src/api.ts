// Typed access to the shell's commands and events. Every command and every type that crosses
// the IPC is generated from the Rust definitions into `bindings.ts` (src-tauri's `ipc()`; a test
// fails when it is stale): change the Rust, regenerate, never edit those types here. Every tool
// call the UI causes goes through the core's Scheduler (chat → agent, palette → call_tool): the
// UI never runs anything itself.
import type { UnlistenFn } from "@tauri-apps/api/event";
import {
  type ApprovalChoice,
  type Content,
  commands,
  type EmbedderSettings,
  events,
  type RuleSource,
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

// What the shell pushes, generated with its payload types from src-tauri/src/events.rs: bindings.ts
// keys each event in camelCase (`agentEvent`), the views name it as Rust sends it (`agent-event`).
// Both come from the generated list, so an event renamed or dropped in Rust fails to compile here.
type ShellEvents = typeof events;
type EventKey = keyof ShellEvents;

/** An event's name as Rust sends it: `agentEvent` → `agent-event`. */
type WireName<K extends string> = K extends `${infer Head}${infer Rest}`
  ? `${Head extends Lowercase<Head> ? Head : `-${Lowercase<Head>}`}${WireName<Rest>}`
  : K;

/** The payload an event carries. */
type PayloadOf<K extends EventKey> = Parameters<Parameters<ShellEvents[K]["listen"]>[0]>[0]["payload"];

type Listen<T> = (callback: (e: { payload: T }) => void) => Promise<UnlistenFn>;

/** What the shell pushes, by event name, with the Rust payload types. */
export type Events = { [K in EventKey as WireName<K>]: PayloadOf<K> };

export function on<K extends keyof Events>(event: K, handler: (payload: Events[K]) => void): Promise<UnlistenFn> {
  const key = event.replace(/-(.)/g, (_, letter: string) => letter.toUpperCase()) as EventKey;
  // `events[key]` is the one event named `event`, whose payload is `Events[K]`.
  const listen = events[key].listen as Listen<unknown> as Listen<Events[K]>;
  return listen((e) => handler(e.payload));
}
