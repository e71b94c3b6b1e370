// The keyboard sheet (Ctrl+/): every shortcut the window answers to, in one place. One table:
// what the sheet lists is what the handlers in main.tsx, chat.tsx, approval.tsx and savebar.tsx
// listen for.
import { useEffect, useState } from "preact/hooks";
import { t } from "./i18n";

const SHEET: [string, string][] = [
  ["Ctrl+N", "keyNewChat"],
  ["Ctrl+K", "keySearch"],
  ["Ctrl+,", "keySettings"],
  ["Ctrl+Shift+D", "keyChanges"],
  ["Ctrl+Shift+M", "keyMemory"],
  ["Ctrl+S", "keySave"],
  ["Ctrl+W", "keyClose"],
  ["Enter", "keySend"],
  ["Shift+Enter", "keyNewLine"],
  ["Ctrl+Space", "keyListen"],
  ["Alt+O · Alt+C · Alt+A", "keyAllow"],
  ["Alt+I", "keyDetails"],
  ["Esc", "keyDeny"],
  ["Ctrl+/", "keySheet"],
];

export function ShortcutSheet() {
  const [open, setOpen] = useState(false);
  useEffect(() => {
    const keys = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && e.key === "/") {
        e.preventDefault();
        setOpen((o) => !o);
      } else if (e.key === "Escape") setOpen(false);
    };
    window.addEventListener("keydown", keys);
    return () => window.removeEventListener("keydown", keys);
  }, []);
  if (!open) return null;
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions lint/a11y/useKeyWithClickEvents: a click beside the dialog closes it; Esc does the same from the keyboard
    <div class="modal-backdrop" onClick={() => setOpen(false)}>
      {/* biome-ignore lint/a11y/useKeyWithClickEvents: only stops a click inside from closing the dialog */}
      <div
        class="modal shortcuts"
        role="dialog"
        aria-modal="true"
        aria-labelledby="keys-title"
        data-testid="shortcut-sheet"
        onClick={(e) => e.stopPropagation()}
      >
        <h2 id="keys-title">{t("keysTitle")}</h2>
        <table>
          {SHEET.map(([keys, what]) => (
            <tr key={keys}>
              <td>
                <kbd>{keys}</kbd>
              </td>
              <td>{t(what as "keySend")}</td>
            </tr>
          ))}
        </table>
      </div>
    </div>
  );
}
