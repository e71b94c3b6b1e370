/// `/create_task title="Buy milk" due=2026-11-23` or `/create_task {"title": "x"}`.
export function parseSlash(text: string): { name: string; args: Record<string, unknown> } | null {
  const m = text.trim().match(/^\/([\w.-]+)\s*(.*)$/s);
  if (!m) return null;
  const rest = m[2].trim();
  if (rest.startsWith("{")) return { name: m[1], args: JSON.parse(rest) };
  const args: Record<string, unknown> = {};
  for (const pair of rest.matchAll(/([\w-]+)=("(?:[^"\\]|\\.)*"|\S+)/g)) {
    const raw = pair[2];
    try {
      args[pair[1]] = JSON.parse(raw);
    } catch {
      args[pair[1]] = raw;
    }
  }
  return { name: m[1], args };
}
