// Model output is untrusted HTML: Markdown is rendered, then sanitized with DOMPurify before it
// touches the DOM (no scripts, no event handlers, no iframes, links open nothing by themselves).

import DOMPurify from "dompurify";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import json from "highlight.js/lib/languages/json";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import typescript from "highlight.js/lib/languages/typescript";
import { marked } from "marked";
import { t } from "./i18n";

hljs.registerLanguage("rust", rust);
hljs.registerLanguage("typescript", typescript);
hljs.registerLanguage("ts", typescript);
hljs.registerLanguage("python", python);
hljs.registerLanguage("bash", bash);
hljs.registerLanguage("sh", bash);
hljs.registerLanguage("json", json);

// A code block's Copy button copies exactly the code this renderer produced: the button carries
// a token made here, never text from the page, so a look-alike button in the model's own HTML
// (or a hidden element next to a real block) copies nothing.
const copyable = new Map<string, string>();
const COPYABLE_KEPT = 500;

function escapeText(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

marked.use({
  renderer: {
    code({ text, lang }) {
      const language = lang && hljs.getLanguage(lang) ? lang : undefined;
      const html = language ? hljs.highlight(text, { language }).value : hljs.highlightAuto(text).value;
      const token = crypto.randomUUID();
      copyable.set(token, text);
      if (copyable.size > COPYABLE_KEPT) copyable.delete(copyable.keys().next().value!);
      const label = (lang ?? "").split(/\s/)[0].slice(0, 24);
      return (
        `<div class="codeblock"><div class="code-head"><span class="code-lang">${escapeText(label)}</span>` +
        `<button type="button" class="code-copy" data-copy="${token}">${escapeText(t("copy"))}</button></div>` +
        `<pre><code class="hljs">${html}</code></pre></div>`
      );
    },
  },
});

document.addEventListener("click", (e) => {
  const button = (e.target as Element | null)?.closest?.("button[data-copy]");
  const text = button ? copyable.get(button.getAttribute("data-copy") ?? "") : undefined;
  if (!button || text === undefined) return;
  navigator.clipboard
    ?.writeText(text)
    .then(() => {
      button.textContent = t("copied");
      setTimeout(() => {
        button.textContent = t("copy");
      }, 1500);
    })
    .catch(() => {});
});

export function renderMarkdown(source: string): string {
  const html = marked.parse(source, { async: false }) as string;
  return DOMPurify.sanitize(html, { FORBID_TAGS: ["style", "iframe", "form", "input"], FORBID_ATTR: ["style"] });
}
