import { renderMarkdown } from "../markdown";

/// Markdown rendered block by block: a finished block (before a blank line outside a code
/// fence) is rendered once and kept; only the block being written is rendered again as text
/// streams in, so a long answer costs the same per chunk as a short one.
const blockCache = new Map<string, string>();
function renderBlock(block: string): string {
  let html = blockCache.get(block);
  if (html === undefined) {
    html = renderMarkdown(block);
    if (blockCache.size > 2000) blockCache.clear();
    blockCache.set(block, html);
  }
  return html;
}
export function splitBlocks(text: string): string[] {
  const blocks: string[] = [];
  let fence = false;
  let start = 0;
  const lines = text.split("\n");
  let offset = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    offset += line.length + 1;
    if (!fence && line.trim() === "" && i < lines.length - 1) {
      const block = text.slice(start, offset);
      if (block.trim()) blocks.push(block);
      start = offset;
    }
  }
  if (start < text.length) blocks.push(text.slice(start));
  return blocks;
}
export function MarkdownBlocks({ text }: { text: string }) {
  return (
    <>
      {splitBlocks(text).map((b, i) => (
        <div key={i} class="md-block" dangerouslySetInnerHTML={{ __html: renderBlock(b) }} />
      ))}
    </>
  );
}
