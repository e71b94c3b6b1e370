// English and Simplified Chinese. Keys are English sentences' ids; missing zh entries fall back.
const en = {
  newChat: "New chat", search: "Search conversations", chat: "Chat", tools: "Tools", audit: "Audit log", settings: "Settings",
  placeholder: "Message Cowork — or /tool_name key=value (Enter to send, Shift+Enter for a new line)",
  send: "Send", stop: "Stop", thinking: "Thinking…", running: "Running…",
  noProvider: "No model provider is configured. You can still call tools: type / and a tool name (e.g. /create_task title=\"Buy milk\").",
  ollamaFound: "A local Ollama server answers on 127.0.0.1:11434 — use it in Settings → Provider.",
  addProvider: "Add a provider",
  approvalTitle: "Allow this action?", effects: "Effects", risk: "Risk", arguments: "Arguments", rule: "Rule", noRule: "no rule matched",
  once: "Allow once", conversation: "Allow in this conversation", always: "Always allow", alwaysWorkspace: "Always allow in this workspace", ruleScope: "Where the rule is saved", deny: "Deny",
  tainted: "This conversation contains untrusted content from",
  provider: "Provider", baseUrl: "Base URL", model: "Model", apiKeyEnv: "API key environment variable", save: "Save", saved: "Saved",
  keyNote: "Leave the variable empty to keep the key in the OS keyring. Keys never reach settings files, logs or the audit log.",
  apiKey: "API key", storeKey: "Store in keyring", keyStored: "A key is stored in the OS keyring", noKey: "No key stored",
  mode: "Mode", normal: "Normal", plan: "Plan (read-only)", acceptEdits: "Accept edits",
  rules: "Permission rules", addRule: "Add rule", revoke: "Revoke", language: "Language", theme: "Theme", light: "Light", dark: "Dark", system: "System",
  verify: "Verify chain", chainOk: "Chain intact", tampered: "Tampered", filterTool: "Tool", filterDecision: "Decision", all: "All",
  layer: "Layer", overrides: "overrides", category: "Category", result: "Result", error: "Error",
  builtin: "built-in", user: "user settings", workspace: "workspace settings", thisConversation: "this conversation",
  toolpacks: "Toolpacks", install: "Install", installing: "Installing…", fetching: "Fetching…", sourcePlaceholder: "github:owner/repo[@ref], a folder, or a .mcpb file",
  reviewTitle: "Install this toolpack?", runs: "Runs", pinned: "Pinned to", undeclared: "undeclared — every call asks", noEffects: "no effects",
  otherTools: "Any other tool the server offers is undeclared and asks every time.", needs: "Settings", sensitiveNote: "kept in the OS keyring",
  changes: "Changes since the installed version", cancel: "Cancel", enable: "Enable", disable: "Disable", remove: "Remove", reload: "Reload all",
  formTitle: "A tool asks you", formFrom: "from", submit: "Send", decline: "Decline",
  logs: "Logs", state: "State", restarts: "restarts", noToolpacks: "No toolpacks installed. Try ./toolpacks/time from the Cowork folder.",
  reviewChanges: "File changes", changesHint: "The assistant's writes wait here until you apply them. Untick hunks to apply only part of a change; an applied change can be rolled back to its exact previous bytes.",
  created: "new file", modified: "modified", deleted: "deleted", staged: "Staged", applied: "Applied", rejected: "Rejected", rolled_back: "Rolled back",
  conflict: "The file changed on disk since this was staged: reject it and let the assistant stage it again.",
  applyAll: "Apply", applySelected: "Apply selected hunks", reject: "Reject", rollback: "Roll back",
  appliedNote: "Applied. You can roll it back under Applied.", rejectedNote: "Rejected: the file was not touched.", rolledBackNote: "Rolled back: the file has its previous bytes again.",
  noChanges: "Nothing here.",
  mailPreview: "The message", mailFrom: "Account", mailTo: "To", mailSubject: "Subject", mailAttachments: "Attachments",
  accounts: "Accounts", accountsHint: "Calendars (CalDAV) and mail (IMAP/SMTP). Passwords go to the OS keyring only; use an app password where your provider offers one.",
  calendarAccount: "Calendar (CalDAV)", mailAccount: "Mail (IMAP + SMTP)", accountName: "Name", serverUrl: "Server URL", userName: "User name", password: "Password",
  emailAddress: "Email address", imapServer: "IMAP server (host:port)", smtpServer: "SMTP server (host:port)", security: "Security", addAccount: "Add account",
  testAccount: "Test", noAccounts: "No accounts yet: the calendar tools use the local calendar; mail needs an account.",
  mailQueued: "Sending", undo: "Undo", undone: "Taken back: it was not sent.", sendsIn: "leaves in",
};
type Dict = typeof en;
const zh: Partial<Dict> = {
  newChat: "新对话", search: "搜索对话", chat: "对话", tools: "工具", audit: "审计日志", settings: "设置",
  placeholder: "给 Cowork 发消息 — 或输入 /工具名 参数=值（Enter 发送，Shift+Enter 换行）",
  send: "发送", stop: "停止", thinking: "思考中…", running: "运行中…",
  noProvider: "尚未配置模型服务。你仍可直接调用工具：输入 / 加工具名（例如 /create_task title=\"买牛奶\"）。",
  ollamaFound: "检测到本机 Ollama（127.0.0.1:11434）— 可在 设置 → 模型服务 中使用。",
  addProvider: "添加模型服务",
  approvalTitle: "允许此操作吗？", effects: "影响", risk: "风险", arguments: "参数", rule: "规则", noRule: "无匹配规则",
  once: "仅允许一次", conversation: "本对话内允许", always: "始终允许", alwaysWorkspace: "在此工作区始终允许", ruleScope: "规则保存位置", deny: "拒绝",
  tainted: "本对话包含来自以下来源的不可信内容：",
  provider: "模型服务", baseUrl: "服务地址", model: "模型", apiKeyEnv: "API 密钥环境变量", save: "保存", saved: "已保存",
  keyNote: "变量留空则密钥保存在系统钥匙串中。密钥绝不会写入设置文件、日志或审计日志。",
  apiKey: "API 密钥", storeKey: "存入钥匙串", keyStored: "系统钥匙串中已保存密钥", noKey: "尚未保存密钥",
  mode: "模式", normal: "普通", plan: "计划（只读）", acceptEdits: "自动接受编辑",
  rules: "权限规则", addRule: "添加规则", revoke: "撤销", language: "语言", theme: "主题", light: "浅色", dark: "深色", system: "跟随系统",
  verify: "校验哈希链", chainOk: "链完整", tampered: "已被篡改", filterTool: "工具", filterDecision: "决定", all: "全部",
  layer: "层", overrides: "覆盖", category: "类别", result: "结果", error: "错误",
  builtin: "内置", user: "用户设置", workspace: "工作区设置", thisConversation: "本对话",
  toolpacks: "工具包", install: "安装", installing: "安装中…", fetching: "获取中…", sourcePlaceholder: "github:所有者/仓库[@引用]、文件夹或 .mcpb 文件",
  reviewTitle: "安装此工具包吗？", runs: "运行命令", pinned: "固定到", undeclared: "未声明 — 每次调用都会询问", noEffects: "无影响",
  otherTools: "服务器提供的其他工具均未声明，每次调用都会询问。", needs: "配置项", sensitiveNote: "保存在系统钥匙串中",
  changes: "与已安装版本相比的变化", cancel: "取消", enable: "启用", disable: "停用", remove: "移除", reload: "全部重新加载",
  formTitle: "工具请求你填写", formFrom: "来自", submit: "发送", decline: "拒绝",
  logs: "日志", state: "状态", restarts: "次重启", noToolpacks: "尚未安装工具包。可试试 Cowork 目录中的 ./toolpacks/time。",
  reviewChanges: "文件更改", changesHint: "助手写入的内容会先在这里等待你应用。取消勾选某些片段即可只应用部分更改；已应用的更改可以回滚到原来的字节。",
  created: "新文件", modified: "已修改", deleted: "已删除", staged: "待审", applied: "已应用", rejected: "已拒绝", rolled_back: "已回滚",
  conflict: "暂存之后磁盘上的文件已被改动：请拒绝此更改，让助手重新暂存。",
  applyAll: "应用", applySelected: "应用所选片段", reject: "拒绝", rollback: "回滚",
  appliedNote: "已应用。可在“已应用”中回滚。", rejectedNote: "已拒绝：文件未被改动。", rolledBackNote: "已回滚：文件已恢复为原来的内容。",
  noChanges: "这里没有内容。",
  mailPreview: "邮件内容", mailFrom: "账户", mailTo: "收件人", mailSubject: "主题", mailAttachments: "附件",
  accounts: "账户", accountsHint: "日历（CalDAV）与邮件（IMAP/SMTP）。密码只保存在系统钥匙串中；服务商提供应用专用密码时请使用它。",
  calendarAccount: "日历（CalDAV）", mailAccount: "邮件（IMAP + SMTP）", accountName: "名称", serverUrl: "服务器地址", userName: "用户名", password: "密码",
  emailAddress: "邮箱地址", imapServer: "IMAP 服务器（主机:端口）", smtpServer: "SMTP 服务器（主机:端口）", security: "加密方式", addAccount: "添加账户",
  testAccount: "测试", noAccounts: "还没有账户：日历工具使用本地日历；邮件需要先添加账户。",
  mailQueued: "即将发送", undo: "撤销", undone: "已撤回：邮件没有发出。", sendsIn: "后发出",
};
export type Lang = "en" | "zh-CN";
let lang: Lang = (localStorage.getItem("lang") as Lang) || (navigator.language.startsWith("zh") ? "zh-CN" : "en");
export function t(key: keyof Dict): string {
  return (lang === "zh-CN" ? zh[key] : undefined) ?? en[key];
}
export function getLang(): Lang { return lang; }
export function setLang(next: Lang) { lang = next; localStorage.setItem("lang", next); document.documentElement.lang = next; }

/** Where a rule came from, as the person reads it. */
export function sourceLabel(source: string): string {
  const keys: Record<string, keyof Dict> = { builtin: "builtin", user: "user", workspace: "workspace", conversation: "thisConversation" };
  return keys[source] ? t(keys[source]) : source;
}
