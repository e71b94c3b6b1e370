// The host side of an MCP App's frame: the SDK's AppBridge over postMessage to the frame only.
// Loaded when a view is first shown (its own chunk), so a window without one never pays for it.
// Every request the view makes is handed to `ViewHost`, which goes through the shell's commands:
// nothing here calls a server or opens anything itself.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

/// What the window does for a view (each reviewed or confirmed by the person beyond this file).
export interface ViewHost {
  callTool: (name: string, args: Record<string, unknown>) => Promise<unknown>;
  message: (text: string) => Promise<void>;
  openLink: (url: string) => Promise<boolean>;
  resize: (height: number) => void;
  /// What the call that made the view was given and returned: the view is told once it is ready.
  input: Record<string, unknown>;
  result: { text: string; structured: unknown };
  theme: "light" | "dark";
  locale: string;
}

/// An attachment's text cap (the shell's `ATTACH_TEXT_MAX`).
const MESSAGE_MAX = 200_000;

export async function connectView(frame: Window, host: ViewHost): Promise<AppBridge> {
  const bridge = new AppBridge(
    null,
    { name: "Cowork", version: "0.1.0" },
    { serverTools: {}, openLinks: {}, logging: {}, message: { text: {} } },
    { hostContext: { theme: host.theme, locale: host.locale, displayMode: "inline" } },
  );
  // biome-ignore lint/suspicious/noExplicitAny: the SDK's CallToolResult is a zod-derived type; the shell returns it as MCP JSON.
  bridge.oncalltool = async (params) => (await host.callTool(params.name, params.arguments ?? {})) as any;
  bridge.onmessage = async (params) => {
    const text = params.content
      .map((c) => (c.type === "text" ? c.text : ""))
      .filter(Boolean)
      .join("\n");
    if (!text) return { isError: true };
    // The composer's cap: more would be cut there anyway, after crossing to the shell whole.
    await host.message(text.slice(0, MESSAGE_MAX));
    return {};
  };
  bridge.onopenlink = async ({ url }) => ((await host.openLink(url)) ? {} : { isError: true });
  bridge.onsizechange = ({ height }) => {
    if (typeof height === "number") host.resize(height);
  };
  // A view's log lines are its own business: kept out of the person's way.
  bridge.onloggingmessage = () => {};
  bridge.oninitialized = () => {
    bridge.sendToolInput({ arguments: host.input });
    const structured = host.result.structured;
    bridge.sendToolResult({
      content: [{ type: "text", text: host.result.text }],
      ...(structured && typeof structured === "object"
        ? { structuredContent: structured as Record<string, unknown> }
        : {}),
    });
  };
  await bridge.connect(new PostMessageTransport(frame, frame));
  return bridge;
}
