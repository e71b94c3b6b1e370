// The banner of tasks waiting for the person (a login, a code, an answer): Resume runs the
// suspended call again through the scheduler (reviewed and audited), +30 min gives more time,
// Cancel ends it. It polls, so a task resumed or cancelled from the CLI disappears here too; a
// task that went on by itself (the person logged in) says what it did.
import { useEffect, useState } from "preact/hooks";
import { api, on, type Suspension, type ToolCallView } from "./api";
import { formatDate, t } from "./i18n";

/** The open suspensions, listed again as calls end and tasks go on; `note` says what an action
 * or a task that went on by itself did, for a while. */
function useSuspensions() {
  const [open, setOpen] = useState<Suspension[]>([]);
  const [note, setNote] = useState("");
  const refresh = () =>
    api
      .listSuspensions()
      .then(setOpen)
      .catch(() => {});
  const say = (said: string) => {
    setNote(said);
    setTimeout(() => setNote((now) => (now === said ? "" : now)), 15000);
  };
  const outcome = (r: ToolCallView) => (r.ok ? `${t("resumed")}: ${r.text.split("\n")[0]}` : r.text);
  useEffect(() => {
    refresh();
    // A call that stops for the person ends with a tool event; one that goes on by itself says so.
    const unTools = on("tool-event", (e) => {
      if (e.type === "completed" || e.type === "failed") refresh();
    });
    const un = on("task-resumed", (e) => {
      say(outcome(e.call));
      refresh();
    });
    return () => {
      unTools.then((f) => f());
      un.then((f) => f());
    };
  }, []);
  const act = async (f: () => Promise<string | undefined>) => {
    try {
      const said = await f();
      if (said) say(said);
    } catch (e) {
      say(String(e));
    }
    refresh();
  };
  return { open, note, act };
}

export function SuspendedBar() {
  const { open, note, act } = useSuspensions();
  if (open.length === 0)
    return note ? (
      <div class="suspended-bar" role="status" data-testid="resumed-note">
        {note}
      </div>
    ) : null;
  return (
    <div class="suspended-bar" role="status" data-testid="suspended-bar">
      {open.map((s) => (
        <SuspensionRow key={s.id} s={s} act={act} />
      ))}
      {note && <div class="row">{note}</div>}
    </div>
  );
}

/** A task waiting: why and until when, and resume, more time, or cancel. */
function SuspensionRow({ s, act }: { s: Suspension; act: (f: () => Promise<string | undefined>) => void }) {
  return (
    <div class="row" data-id={s.id}>
      <span>
        <strong>{t("waitingForYou")}</strong> {s.reason}{" "}
        <span class="muted">
          ({s.tool} · {t("until")} {formatDate(s.deadline, "time")})
        </span>
      </span>
      <button
        type="button"
        class="primary"
        data-testid="resume-task"
        onClick={() =>
          act(async () => {
            await api.resumeSuspension(s.id);
          })
        }
      >
        {t("resume")}
      </button>
      <button
        type="button"
        onClick={() =>
          act(async () => {
            await api.extendSuspension(s.id, 30);
          })
        }
      >
        +30 min
      </button>
      <button
        type="button"
        onClick={() =>
          act(async () => {
            await api.cancelSuspension(s.id);
          })
        }
      >
        {t("cancelTask")}
      </button>
    </div>
  );
}
