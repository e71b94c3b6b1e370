// An MCP server's form (elicitation), over the window like an approval.
import type { RefObject } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, type ElicitationAnswer, type ElicitationRequest, type Value } from "./api";
import { t } from "./i18n";

/// The part of an elicitation's JSON Schema the form renders (MCP allows flat objects only).
interface FormSchema {
  properties?: Record<string, FieldSchema>;
  required?: string[];
}
type FieldSchema = {
  type?: string;
  title?: string;
  description?: string;
  enum?: string[];
  items?: { enum?: string[] };
};
type Values = Record<string, unknown>;

/// An MCP server's form (elicitation). Nothing is sent unless the person presses Send; Escape
/// declines. Values are typed per the schema (numbers, booleans, enums).
/// The form's answer: sent once; the form empties and its first field takes the focus for each
/// request; Escape declines.
function useFormAnswer(request: ElicitationRequest, onDone: () => void) {
  const [values, setValues] = useState<Values>({});
  const [busy, setBusy] = useState(false);
  const first = useRef<HTMLInputElement>(null);
  const reply = async (answer: ElicitationAnswer) => {
    if (busy) return;
    setBusy(true);
    try {
      await api.answerElicitation(request.id, answer);
    } catch {
      /* timed out meanwhile: declined */
    }
    onDone();
  };
  useEffect(() => {
    setValues({});
    setBusy(false);
    first.current?.focus();
    const keys = (e: KeyboardEvent) => {
      if (e.key === "Escape") {
        e.preventDefault();
        reply({ action: "decline" });
      }
    };
    window.addEventListener("keydown", keys);
    return () => window.removeEventListener("keydown", keys);
  }, [request.id]);
  return { values, setValues, busy, first, reply };
}

/// An MCP server's form (elicitation). Nothing is sent unless the person presses Send; Escape
/// declines. Values are typed per the schema (numbers, booleans, enums).
export function ElicitationModal({ request, onDone }: { request: ElicitationRequest; onDone: () => void }) {
  const schema = (request.schema ?? {}) as FormSchema;
  const fields = Object.entries(schema.properties ?? {});
  const required = new Set(schema.required ?? []);
  const { values, setValues, busy, first, reply } = useFormAnswer(request, onDone);
  const missing = [...required].some((k) => values[k] === undefined || values[k] === "");
  return (
    <div class="modal-backdrop">
      <div class="modal" role="dialog" aria-modal="true" aria-labelledby="form-title" data-testid="elicitation-modal">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (!missing) reply({ action: "accept", content: values as { [key: string]: Value } });
          }}
        >
          <h2 id="form-title">{t("formTitle")}</h2>
          <blockquote class="quoted" data-testid="form-words">
            <span class="caller">
              {t("formFrom")} {request.from}:
            </span>{" "}
            {request.message}
          </blockquote>
          {fields.map(([key, f], i) => (
            // biome-ignore lint/a11y/noLabelWithoutControl: the control is inside, behind a condition the linter cannot follow
            <label class="field" key={key}>
              {f.title ?? key}
              {required.has(key) ? " *" : ""}
              {f.description && <span class="desc"> — {f.description}</span>}
              <FieldControl
                name={key}
                f={f}
                group={`${request.id}-${key}`}
                values={values}
                setValues={setValues}
                inputRef={i === 0 ? first : undefined}
              />
            </label>
          ))}
          <FormChoices busy={busy} missing={missing} reply={reply} />
        </form>
      </div>
    </div>
  );
}

/// A field's control as its schema says: checkboxes for a list of choices, radio buttons for a
/// few, a list for more, a checkbox for a yes/no, a number or a text.
function FieldControl({
  name,
  f,
  group,
  values,
  setValues,
  inputRef,
}: {
  name: string;
  f: FieldSchema;
  /** The radio buttons' group (one per request and field). */
  group: string;
  values: Values;
  setValues: (v: Values) => void;
  inputRef?: RefObject<HTMLInputElement | null>;
}) {
  const set = (v: unknown) => setValues({ ...values, [name]: v });
  if (f.type === "array" && f.items?.enum)
    return <MultiChoice name={name} choices={f.items.enum} values={values} set={set} />;
  if (f.enum && f.enum.length <= 4)
    return (
      <span class="options" data-field={name}>
        {f.enum.map((o) => (
          <label class="check" key={o}>
            <input type="radio" name={group} value={o} onChange={() => set(o)} /> {o}
          </label>
        ))}
      </span>
    );
  if (f.enum)
    return (
      <select onChange={(e) => set(e.currentTarget.value)}>
        <option value="" />
        {f.enum.map((o) => (
          <option value={o}>{o}</option>
        ))}
      </select>
    );
  if (f.type === "boolean") return <input type="checkbox" onChange={(e) => set(e.currentTarget.checked)} />;
  if (f.type === "number" || f.type === "integer")
    return (
      <input
        ref={inputRef}
        type="number"
        data-field={name}
        onInput={(e) => {
          const v = e.currentTarget.value;
          set(v === "" ? "" : Number(v));
        }}
      />
    );
  return <input ref={inputRef} type="text" data-field={name} onInput={(e) => set(e.currentTarget.value)} />;
}

/// Several of a list of choices, kept in the schema's order.
function MultiChoice({
  name,
  choices,
  values,
  set,
}: {
  name: string;
  choices: string[];
  values: Values;
  set: (v: unknown) => void;
}) {
  return (
    <span class="options" data-field={name}>
      {choices.map((o) => (
        <label class="check" key={o}>
          <input
            type="checkbox"
            value={o}
            onChange={(e) => {
              const picked = new Set((values[name] as string[] | undefined) ?? []);
              if (e.currentTarget.checked) picked.add(o);
              else picked.delete(o);
              set(choices.filter((x) => picked.has(x)));
            }}
          />{" "}
          {o}
        </label>
      ))}
    </span>
  );
}

function FormChoices({
  busy,
  missing,
  reply,
}: {
  busy: boolean;
  missing: boolean;
  reply: (answer: ElicitationAnswer) => void;
}) {
  return (
    <div class="choices">
      <button type="submit" class="allow" disabled={busy || missing} data-choice="accept">
        {t("submit")}
      </button>
      <button type="button" disabled={busy} onClick={() => reply({ action: "cancel" })} data-choice="cancel">
        {t("cancel")}
      </button>
      <button
        type="button"
        class="deny"
        disabled={busy}
        onClick={() => reply({ action: "decline" })}
        data-choice="decline"
      >
        {t("decline")} <kbd>Esc</kbd>
      </button>
    </div>
  );
}
