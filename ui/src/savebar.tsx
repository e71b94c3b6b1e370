// One way to save settings, on every Settings page: what the person edits is a draft, compared
// with what was last loaded or saved; while they differ, one bar at the foot of the page says so
// and saves (Ctrl+S too) or discards them. Each panel keeps its own load and save calls.
import { createContext } from "preact";
import { useContext, useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { t } from "./i18n";

/** JSON with every object's keys in order: the same settings built in another order are equal. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_, v) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

export interface Draft<T> {
  /** The value as edited (null until loaded). */
  value: T | null;
  set: (value: T) => void;
  /** Loaded (or reloaded): both the edited value and the one compared with. */
  load: (value: T) => void;
  /** Saved: the value now compared with, leaving edits made meanwhile in place. */
  saved: (value: T) => void;
  discard: () => void;
  dirty: boolean;
}

export function useDraft<T>(): Draft<T> {
  const [base, setBase] = useState<T | null>(null);
  const [value, setValue] = useState<T | null>(null);
  return {
    value,
    set: (v) => setValue(() => v),
    load: (v) => {
      setBase(() => v);
      setValue(() => v);
    },
    saved: (v) => setBase(() => v),
    discard: () => setValue(() => base),
    dirty: value !== null && base !== null && canonical(value) !== canonical(base),
  };
}

/** A page's unsaved changes, as Settings needs them to ask before leaving: save them, or none. */
export type Unsaved = (() => Promise<boolean>) | null;
/** Where the page's save bar reports its unsaved changes (Settings provides it). */
export const SaveSlot = createContext<(save: Unsaved) => void>(() => {});

type Phase = "idle" | "saving" | "saved" | "error";

/**
 * Saving the draft with the panel's call: once at a time, "saved" for a moment after, the error
 * kept while the edits are. The page's unsaved changes are reported to Settings (to ask before
 * leaving), and Ctrl+S saves.
 */
function useSave<T>(draft: Draft<T>, save: (value: T) => Promise<unknown>, reset?: (saved: T) => T) {
  const [phase, setPhase] = useState<Phase>("idle");
  const [error, setError] = useState("");
  const latest = useRef({ draft, save, reset });
  latest.current = { draft, save, reset };
  const timer = useRef<number | undefined>(undefined);
  const busy = useRef(false);
  const run = async (): Promise<boolean> => {
    const { draft: d, save: s, reset: r } = latest.current;
    if (busy.current) return false;
    if (d.value === null || !d.dirty) return true;
    const value = d.value;
    busy.current = true;
    setPhase("saving");
    setError("");
    try {
      await s(value);
      if (r) d.load(r(value));
      else d.saved(value);
      setPhase("saved");
      clearTimeout(timer.current);
      timer.current = window.setTimeout(() => setPhase("idle"), 2000);
      return true;
    } catch (e) {
      setPhase("error");
      setError(e instanceof Error ? e.message : String(e));
      return false;
    } finally {
      busy.current = false;
    }
  };
  useUnsavedReport(draft.dirty, run, timer);
  const discard = () => {
    draft.discard();
    setPhase("idle");
    setError("");
  };
  return { phase, error, run, discard };
}

/** Reports the page's unsaved changes to Settings, and saves them on Ctrl+S. */
function useUnsavedReport(dirty: boolean, run: () => Promise<boolean>, timer: { current: number | undefined }) {
  const report = useContext(SaveSlot);
  // Reported as the page renders (a layout effect), so a click that sees the bar gone never
  // meets a stale "unsaved" (a plain effect runs after paint: the leave question came up after
  // a save).
  useLayoutEffect(() => {
    report(dirty ? run : null);
  }, [dirty]);
  useEffect(() => {
    // Ctrl+S saves the page shown (only one page, so one bar, is mounted at a time).
    const keys = (e: KeyboardEvent) => {
      if (!(e.ctrlKey || e.metaKey) || e.shiftKey || e.altKey || e.key.toLowerCase() !== "s") return;
      // A dialog on top (an approval) has the keyboard: Settings under it is not what is saved.
      if (document.querySelector("[aria-modal=true]")) return;
      e.preventDefault();
      run();
    };
    window.addEventListener("keydown", keys);
    return () => {
      window.removeEventListener("keydown", keys);
      clearTimeout(timer.current);
      report(null);
    };
  }, []);
}

/** What the bar shows: nothing when there is nothing to save and nothing just saved. */
function barState(phase: Phase, dirty: boolean): "saving" | "error" | "dirty" | "saved" | null {
  if (phase === "saving") return "saving";
  if (dirty) return phase === "error" ? "error" : "dirty";
  return phase === "saved" ? "saved" : null;
}

/**
 * The page's save bar: shown only while the draft differs from what was saved ("Unsaved
 * changes · Discard · Save"), then "Saved" for a moment; a failed save says why in the bar and
 * keeps the edits. `save` is the panel's own call; `reset` gives what the form holds after a
 * save when that is not simply what was saved (a typed key is stored, then the field is empty).
 */
export function SaveBar<T>({
  draft,
  save,
  reset,
}: {
  draft: Draft<T>;
  save: (value: T) => Promise<unknown>;
  reset?: (saved: T) => T;
}) {
  const { phase, error, run, discard } = useSave(draft, save, reset);
  const state = barState(phase, draft.dirty);
  if (!state) return null;
  return (
    <div class={`save-bar ${state}`} data-testid="save-bar" data-state={state}>
      <span class="save-note" role="status">
        {state === "saved" ? `✓ ${t("saved")}` : state === "saving" ? t("saving") : t("unsavedChanges")}
      </span>
      {state === "error" && (
        <span class="error" role="alert">
          {t("notSaved")} {error}
        </span>
      )}
      {state !== "saved" && (
        <span class="save-actions">
          <button type="button" data-testid="discard-settings" disabled={state === "saving"} onClick={discard}>
            {t("discard")}
          </button>
          <button
            type="button"
            class="primary"
            data-testid="save-settings"
            disabled={state === "saving"}
            title="Ctrl+S"
            onClick={run}
          >
            {t("save")}
          </button>
        </span>
      )}
    </div>
  );
}

// Leaving a page with unsaved changes asks first. Settings installs the guard while it is shown;
// the window's navigation goes through `leaveThen`.
let guard: ((proceed: () => void) => boolean) | null = null;

/** Installs the guard (true: it took `proceed` and will run it once answered); returns the removal. */
export function guardLeaving(g: (proceed: () => void) => boolean): () => void {
  guard = g;
  return () => {
    if (guard === g) guard = null;
  };
}

/** Runs `act` now, or once the person has answered the unsaved-changes question (never if they stay). */
export function leaveThen(act: () => void) {
  if (!guard?.(act)) act();
}

/** "Leave without saving?": Keep editing (focused, and Escape), Discard, or Save and leave. */
export function LeaveConfirm({
  onStay,
  onDiscard,
  onSave,
}: {
  onStay: () => void;
  onDiscard: () => void;
  onSave: () => void;
}) {
  const dialog = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    dialog.current?.querySelector("button")?.focus();
    return () => {
      if (before?.isConnected) before.focus();
    };
  }, []);
  // Focus stays in the dialog: Tab cycles its three buttons.
  const keys = (e: KeyboardEvent) => {
    if (e.key === "Escape") {
      e.preventDefault();
      e.stopPropagation();
      onStay();
      return;
    }
    if (e.key !== "Tab") return;
    const buttons = [...(dialog.current?.querySelectorAll("button") ?? [])];
    const i = buttons.indexOf(document.activeElement as HTMLButtonElement);
    const next = (i + (e.shiftKey ? -1 : 1) + buttons.length) % buttons.length;
    e.preventDefault();
    buttons[next]?.focus();
  };
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions lint/a11y/useKeyWithClickEvents: a click beside the dialog closes it; Esc does the same from the keyboard
    <div class="modal-backdrop" onClick={onStay}>
      <div
        class="modal leave-confirm"
        ref={dialog}
        role="alertdialog"
        aria-modal="true"
        aria-labelledby="leave-title"
        aria-describedby="leave-text"
        data-testid="leave-confirm"
        onClick={(e) => e.stopPropagation()}
        onKeyDown={keys}
      >
        <h2 id="leave-title">{t("leaveTitle")}</h2>
        <p id="leave-text">{t("leaveText")}</p>
        <div class="choices">
          <button type="button" data-testid="leave-stay" onClick={onStay}>
            {t("keepEditing")}
          </button>
          <button type="button" class="danger" data-testid="leave-discard" onClick={onDiscard}>
            {t("discard")}
          </button>
          <button type="button" class="primary" data-testid="leave-save" onClick={onSave}>
            {t("saveAndLeave")}
          </button>
        </div>
      </div>
    </div>
  );
}
