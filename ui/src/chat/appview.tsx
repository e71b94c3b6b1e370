// An MCP App under a tool's result: the toolpack's own page in a frame with no origin of its own
// (sandboxed without same-origin, served with a CSP of its own by the shell), talking to the
// window only through the bridge. What it asks is the toolpack's, never the person's: its calls
// are reviewed as its own (the approval names the view), a message it wants sent waits in the
// composer as the toolpack's words, and a link opens only after the person says so here.
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { type AppView, api } from "../api";
import { fill, getLang, t } from "../i18n";
import type { ViewHost } from "./appbridge";
import type { ToolCard } from "./items";

/// How tall a view may grow before it scrolls inside its frame.
const MAX_HEIGHT = 640;
/// How long Open waits before it can be clicked.
const ARM_MS = 800;

type Pending = { url: string; answer: (open: boolean) => void };

/// What the conversation does for its views: read a page (as the window showing it), and take
/// a message a view asks to add.
export interface Views {
  open: (server: string, resource: string) => Promise<string>;
  message: (server: string, text: string) => Promise<void>;
}

export function AppFrame({ card, view, views }: { card: ToolCard; view: AppView; views: Views }) {
  const frame = useRef<HTMLIFrameElement>(null);
  const [loaded, setLoaded] = useState<{ src: string; connect: typeof import("./appbridge").connectView } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [height, setHeight] = useState(240);
  const links = useLinkQuestion();
  // The page is read only when the person asks to see it: their click, on record.
  const [shown, setShown] = useState(false);
  useEffect(() => {
    if (!shown) return;
    // The bridge's code first: it must listen before the page can speak.
    Promise.all([import("./appbridge"), views.open(view.server, view.resource)]).then(
      ([bridge, src]) => setLoaded({ src, connect: bridge.connectView }),
      (e) => setError(String(e)),
    );
  }, [shown, view.server, view.resource]);
  useLayoutEffect(() => {
    const target = frame.current?.contentWindow;
    if (!loaded || !target) return;
    const host: ViewHost = {
      callTool: (name, args) => api.callAppTool(view.server, name, args as never),
      message: (text) => views.message(view.server, text),
      openLink: links.ask,
      resize: (h) => setHeight(Math.min(Math.max(h, 48), MAX_HEIGHT)),
      input: (card.input ?? {}) as Record<string, unknown>,
      result: { text: card.result ?? "", structured: card.structured },
      theme: document.documentElement.dataset.theme === "dark" ? "dark" : "light",
      locale: getLang(),
    };
    const bridge = loaded.connect(target, host);
    bridge.catch((e) => setError(String(e)));
    return () => {
      bridge.then((b) => b.close()).catch(() => {});
    };
  }, [loaded]);
  if (!shown)
    return (
      <div class="app-view">
        <button type="button" class="app-view-show" data-testid="app-view-show" onClick={() => setShown(true)}>
          {fill("appViewShow", { server: view.server })}
        </button>
      </div>
    );
  return (
    <div class="app-view" data-testid="app-view">
      <p class="app-view-source">{fill("appViewFrom", { server: view.server })}</p>
      {error && (
        <p class="card-result refused" data-testid="app-view-error">
          {error}
        </p>
      )}
      {loaded && (
        <iframe
          ref={frame}
          src={loaded.src}
          title={fill("appViewFrom", { server: view.server })}
          sandbox="allow-scripts"
          referrerpolicy="no-referrer"
          style={{ height: `${height}px` }}
          data-testid="app-view-frame"
        />
      )}
      {links.link && <OpenLink server={view.server} pending={links.link} done={links.clear} />}
    </div>
  );
}

/// The view's requests to open an address, one question at a time: a view cannot swap the
/// address under the person's pointer (a second request while one waits is refused).
function useLinkQuestion() {
  const [link, setLink] = useState<Pending | null>(null);
  const waiting = useRef(false);
  const ask = (url: string) => {
    if (waiting.current) return Promise.resolve(false);
    waiting.current = true;
    return new Promise<boolean>((answer) =>
      setLink({
        url,
        answer: (open) => {
          waiting.current = false;
          answer(open);
        },
      }),
    );
  };
  return { link, ask, clear: () => setLink(null) };
}

/// The view asked to open an address: it opens in the browser only when the person says so.
function OpenLink({ server, pending, done }: { server: string; pending: Pending; done: () => void }) {
  const box = useRef<HTMLDivElement>(null);
  // Under a tall view the question could sit below the fold: it is brought into sight, and
  // Open waits a moment (as the approval does) so a click meant for the view cannot land on it.
  const [armed, setArmed] = useState(false);
  useEffect(() => {
    box.current?.scrollIntoView({ block: "nearest" });
    const timer = setTimeout(() => setArmed(true), ARM_MS);
    return () => clearTimeout(timer);
  }, []);
  const answer = (open: boolean) => {
    const opened = open
      ? api.openLink(pending.url).then(
          () => true,
          () => false,
        )
      : Promise.resolve(false);
    opened.then(pending.answer);
    done();
  };
  return (
    <div
      ref={box}
      class="app-view-link"
      role="alertdialog"
      aria-label={t("appViewLinkTitle")}
      data-testid="app-view-link"
    >
      <p>{fill("appViewLink", { server })}</p>
      <code class="app-view-url">{pending.url}</code>
      <div class="row">
        <button
          type="button"
          class="primary"
          data-testid="app-view-link-open"
          disabled={!armed}
          onClick={() => answer(true)}
        >
          {t("appViewLinkOpen")}
        </button>
        <button type="button" data-testid="app-view-link-cancel" onClick={() => answer(false)}>
          {t("cancel")}
        </button>
      </div>
    </div>
  );
}
