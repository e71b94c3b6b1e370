// Attachments: picked (the desktop's chooser), dropped (paths), pasted (bytes); shown as chips.
import { type Dispatch, useEffect } from "preact/hooks";
import { api, type Part } from "../api";
import { t } from "../i18n";
import { Icon } from "./icon";
import type { Action } from "./state";

/// Raster images only, as data URLs (no SVG: it can carry script and links).
export const SHOWN_IMAGES = ["image/png", "image/jpeg", "image/webp", "image/gif"];

/// An attachment as a chip: its name (a thumbnail for an image) and, before sending, a remove button.
/// A file's tooltip: its name and the start of what will be sent (and whether it was cut).
function fileTitle(name: string, text: string, cut: number | null | undefined) {
  const start = text.length > 300 ? `${text.slice(0, 300)}…` : text;
  return [name, start, cut ? t("attachmentCut") : ""].filter(Boolean).join("\n\n");
}

export function AttachmentChip({ part, onRemove }: { part: Part; onRemove?: () => void }) {
  const name = part.type === "file" ? part.name : part.type === "image" ? (part.name ?? t("pastedImage")) : "";
  return (
    <span
      class="attachment"
      data-testid="attachment"
      title={part.type === "file" ? fileTitle(part.name, part.text, part.truncated_from) : name}
    >
      {part.type === "image" && SHOWN_IMAGES.includes(part.media_type) && (
        <img alt="" src={`data:${part.media_type};base64,${part.data_base64}`} />
      )}
      {part.type === "file" && <Icon name="file" />}
      {name}
      {part.type === "file" && part.truncated_from ? " ✂" : ""}
      {onRemove && (
        <button type="button" class="icon" aria-label={t("remove")} onClick={onRemove}>
          ×
        </button>
      )}
    </span>
  );
}

/// What goes with the next message, each removable.
export function PendingAttachments({ parts, dispatch }: { parts: Part[]; dispatch: Dispatch<Action> }) {
  if (parts.length === 0) return null;
  return (
    <div class="attachments pending" data-testid="pending-attachments">
      {parts.map((p, n) => (
        <AttachmentChip key={n} part={p} onRemove={() => dispatch({ type: "detach", index: n })} />
      ))}
    </div>
  );
}

/// A file's bytes, base64 (a data URL without its head).
function readBase64(file: File): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ""));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

/// Attaching by path (the chooser, a drop on the window: the shell reads the file for the
/// conversation, which gets its id here) and by bytes (a paste, the file input).
export function useAttachments(ensureId: () => string, dispatch: Dispatch<Action>, setError: (e: string) => void) {
  const addParts = (parts: Part[]) => dispatch({ type: "attach", parts });
  const attachPaths = async (paths: string[]) => {
    const id = ensureId();
    for (const path of paths) {
      try {
        addParts([await api.attachPath(id, path)]);
      } catch (e) {
        setError(String(e));
      }
    }
  };
  const attachBlobs = async (files: File[]) => {
    for (const file of files) {
      const data = await readBase64(file);
      const name = file.name || `pasted-${Date.now()}.${(file.type.split("/")[1] ?? "png").replace("jpeg", "jpg")}`;
      try {
        addParts([await api.attachPasted(name, data)]);
      } catch (e) {
        setError(String(e));
      }
    }
  };
  useDroppedPaths(attachPaths);
  return { attachPaths, attachBlobs };
}

/// Files dropped on the window, as paths (the webview's drag-and-drop event).
function useDroppedPaths(attachPaths: (paths: string[]) => void) {
  useEffect(() => {
    let unlisten: (() => void) | undefined;
    import("@tauri-apps/api/webview")
      .then(({ getCurrentWebview }) =>
        getCurrentWebview().onDragDropEvent((e) => {
          if (e.payload.type === "drop" && e.payload.paths.length) attachPaths(e.payload.paths);
        }),
      )
      .then((f) => {
        unlisten = f;
      })
      .catch(() => {});
    return () => unlisten?.();
  }, []);
}
