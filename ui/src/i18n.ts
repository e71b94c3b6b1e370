// English and Simplified Chinese. Keys are English sentences' ids; missing zh entries fall back.
const en = {
  newChat: "New chat", search: "Search conversations", searchTools: "Search tools", toolColumn: "Tool", auditTime: "Time", auditCaller: "Asked by", auditDecision: "Decision", auditScore: "Risk", auditApprovedBy: "Approved by", auditOutcome: "Outcome", groupPinned: "Pinned", groupToday: "Today", groupYesterday: "Yesterday", groupWeek: "Previous 7 days", groupMonth: "Previous 30 days", waiting: "waiting for you", chat: "Chat", tools: "Tools", audit: "Audit log", settings: "Settings",
  placeholder: "Message Cowork (Enter to send, Shift+Enter for a new line)",
  send: "Send", stop: "Stop", thinking: "Thinking…", running: "Running…",
  tokensIn: "in", tokensOut: "out", tokens: "tokens", previousBranch: "Previous version", nextBranch: "Next version", pastedImage: "pasted image",
  attachmentCut: "Cut at 200,000 characters", showEarlier: "Show earlier messages", copy: "Copy", copied: "Copied", editResend: "Edit and resend", regenerate: "Regenerate",
  compacted: "Earlier turns summarized", messagesSummarized: "messages", compacting: "Summarizing earlier turns…",
  defaultModel: "Default model", persona: "Persona", defaultPersona: "Default persona", allTools: "All tools", allToolsHint: "Send every tool's definition with each request (by default a small core set plus tool search)",
  compact: "Compact", compactHint: "Summarize the earlier turns now", export: "Export", copyMarkdown: "Copy as Markdown", attach: "Attach files (or paste, or drop them here)",
  pin: "Pin", unpin: "Unpin", rename: "Rename",
  chatSettings: "Conversations", contextWindow: "Context window (tokens)", vision: "The model sees images", personas: "Personas", personaName: "Name",
  systemPrompt: "System prompt", addPersona: "Add a persona", prices: "Prices", inputPrice: "Input $ per million tokens", outputPrice: "Output $ per million tokens",
  systemPromptHint: "This conversation's own system prompt (over the persona's and the default)",
  pricesHint: "Per model: dollars per million input and output tokens, for the cost shown under each answer.", addPrice: "Add a price",
  noProvider: "Cowork needs a model to answer. Use one running on this computer, or add a provider's key.",
  useLocal: "Use", testConnection: "Test connection", connected: "Connected", modelsOffered: "models offered",
  keysTitle: "Keyboard shortcuts", keyNewChat: "New chat", keySearch: "Search conversations", keySettings: "Settings", keyChanges: "File changes", keyMemory: "Memory", keyClose: "Close the window (Cowork stays in the tray)", keySend: "Send", keyNewLine: "New line", keyListen: "Hold to talk", keyAllow: "Allow once · in this conversation · always (in an approval)", keyDetails: "An approval's details", keyDeny: "Deny, or close", keySheet: "This sheet",
  addProvider: "Add a provider", grantCovers: "“This conversation” and “Always” allow from then on:", retry: "Try again", openSettings: "Open Settings",
  emptyTitle: "What can I help with?", tryCalendar: "What is on my calendar this week?", tryFolder: "Summarize what is in this folder", tryReminder: "Remind me to call the dentist tomorrow at 10",
  approvalTitle: "Allow this action?", effects: "Effects", risk: "Risk", arguments: "Arguments", rule: "Rule", noRule: "no rule matched",
  riskLow: "Low risk", riskMedium: "Medium risk", riskHigh: "High risk", details: "Details", assistantSays: "The assistant says why:",
  undo_nothing_changes: "Nothing is changed.", undo_undoable: "You can undo this in File changes.", undo_cannot_undo: "Cowork cannot undo this once it is done.", undo_changeable_later: "Cowork does not undo this, but you can change or remove it later.",
  once: "Allow once", conversation: "Allow in this conversation", always: "Always allow", alwaysWorkspace: "Always allow in this workspace", ruleScope: "Where the rule is saved", deny: "Deny",
  tainted: "This conversation contains untrusted content from",
  provider: "Provider", baseUrl: "Base URL", model: "Model", apiKeyEnv: "API key environment variable", save: "Save", saved: "Saved",
  keyNote: "Leave the variable empty to keep the key in the OS keyring. Keys never reach settings files, logs or the audit log.",
  storeKey: "Store in keyring", keyStored: "A key is stored in the OS keyring", noKey: "No key stored",
  mode: "Mode", normal: "Normal", plan: "Plan (read-only)", acceptEdits: "Accept edits",
  trustTitle: "Trust this folder's settings?", trustChangedTitle: "This folder's settings changed since you trusted it",
  trustExplain: "Its .cowork/settings.json came with the folder. Until you trust it, only its deny and ask rules apply. Below is exactly what it would allow — its own words, not Cowork's.",
  trustWouldAllow: "It would allow without asking", trustNoAllow: "No allow rules.", trustMode: "It asks for the mode (it can only lower yours):",
  trustPrograms: "Programs its git repository runs (until trusted: switched off, or asked first)", trustNarrowing: "Already in force (they only narrow)",
  trustKeep: "Keep untrusted", reviewTrust: "What this folder's settings would allow…", trustYes: "Trust this folder", addAnyway: "Add anyway",
  withheld: "its description addresses the assistant and is withheld from it",
  rules: "Permission rules", addRule: "Add rule", revoke: "Revoke", language: "Language", theme: "Theme", light: "Light", dark: "Dark", system: "System",
  verify: "Verify chain", chainOk: "Chain intact", tampered: "Tampered", filterTool: "Tool", filterDecision: "Decision", all: "All",
  layer: "Layer", overrides: "overrides", category: "Category", result: "Result", error: "Error",
  builtin: "built-in", user: "user settings", workspace: "workspace settings", thisConversation: "this conversation",
  toolpacks: "Toolpacks", install: "Install", installing: "Installing…", fetching: "Fetching…", sourcePlaceholder: "github:owner/repo[@ref], a folder, or a .mcpb file",
  reviewTitle: "Install this toolpack?", runs: "Runs", sandbox: "Sandbox", pinned: "Pinned to", undeclared: "undeclared — every call asks", noEffects: "no effects",
  otherTools: "Any other tool the server offers is undeclared and asks every time.", needs: "Settings", sensitiveNote: "kept in the OS keyring",
  changes: "Changes since the installed version", cancel: "Cancel", enable: "Enable", disable: "Disable", remove: "Remove", reload: "Reload all",
  formTitle: "A tool asks you", formFrom: "In the words of", packSays: "In its own words:", submit: "Send", decline: "Decline",
  logs: "Logs", state: "State", restarts: "restarts", noToolpacks: "No toolpacks yet. A toolpack adds tools from an MCP server: paste its address above (github:owner/repo, a folder or a .mcpb file) and Cowork shows what it would be allowed to do before anything runs.",
  reviewChanges: "File changes", changesHint: "The assistant's writes wait here until you apply them. Untick hunks to apply only part of a change; an applied change can be rolled back to its exact previous bytes.",
  created: "new file", modified: "modified", deleted: "deleted", staged: "Staged", applied: "Applied", rejected: "Rejected", rolled_back: "Rolled back",
  conflict: "The file changed on disk since this was staged: reject it and let the assistant stage it again.",
  applyAll: "Apply", applySelected: "Apply selected hunks", reject: "Reject", rollback: "Roll back",
  appliedNote: "Applied. You can roll it back under Applied.", rejectedNote: "Rejected: the file was not touched.", rolledBackNote: "Rolled back: the file has its previous bytes again.",
  noChanges: "No changes here. When the assistant writes or edits a file, the change waits here until you apply it.",
  mailPreview: "The message", mailFrom: "Account", mailTo: "To", mailSubject: "Subject", mailAttachments: "Attachments",
  accounts: "Accounts", accountsHint: "Calendars (CalDAV) and mail (IMAP/SMTP). Passwords go to the OS keyring only; use an app password where your provider offers one.",
  calendarAccount: "Calendar (CalDAV)", mailAccount: "Mail (IMAP + SMTP)", accountName: "Name", serverUrl: "Server URL", userName: "User name", password: "Password",
  emailAddress: "Email address", imapServer: "IMAP server (host:port)", smtpServer: "SMTP server (host:port)", security: "Security", addAccount: "Add account",
  testAccount: "Test", noAccounts: "No accounts yet: the calendar tools use the local calendar; mail needs an account.",
  mailQueued: "Sending", undo: "Undo", undone: "Taken back: it was not sent.", sendsIn: "leaves in",
  memory: "Memory", memorySearch: "Search memories and notes by meaning — Enter (empty: newest first)", recallInChat: "Recall memories in chat",
  entries: "entries", wordsOnly: "words only", reindex: "Re-index", unreadableFiles: "files could not be read (skipped)",
  phase_idle: "idle", phase_scanning: "scanning", phase_indexing: "indexing", phase_embedding: "embedding",
  nothingFound: "Nothing matches.", vaultEmpty: "The vault is empty. Ask the assistant to remember something, or put Markdown files in the folder.",
  edit: "Edit", forget: "Forget", movedToTrash: "Moved to the vault's trash", from: "from", conversationShort: "conversation", promotedFrom: "promoted from",
  editedByYou: "written outside Cowork", recalled: "Recalled from memory", wentOn: "went on after you were done",
  vaultFolder: "Vault folder (restart to apply)", vaultFolderDefault: "default: the data folder's vault/", embeddingModel: "Embedding model",
  onDevice: "on this device", openaiEmbeddings: "OpenAI-compatible /embeddings (Ollama, LM Studio…)",
  embedderHint: "A new model re-embeds every entry in the background (progress on the Memory page); until then those entries are found by words. Vectors of different models are never mixed.",
  reminder: "Reminder:", dismiss: "Dismiss",
  chain: "Chain", chainRunning: "running", chainDone: "done", chainStopped: "stopped", chainTry: "try",
  schedules: "Schedules", noSchedules: "No schedules yet. Ask the assistant something at a time you choose: a morning brief, a weekly review.", nextRun: "next", effectsGranted: "effect(s) allowed unattended",
  refresh: "Refresh", notAllowed: "Not done: it was not allowed, so it stopped before it ran (the reason is in its details).",
  newSchedule: "New schedule", scheduleWhat: "What should the assistant do?", schedulePromptHint: "e.g. Summarize my unread mail and today's calendar", scheduleRepeat: "Repeat",
  everyDay: "Every day", weekdays: "Weekdays", weekends: "Weekends", everyWeekOn: "Every week on", customCron: "Custom (cron)", scheduleAt: "at",
  scheduleName: "Name (optional)", runMissed: "If Cowork was closed at that time, run once when it opens", addSchedule: "Add schedule", nextRuns: "Next runs:",
  scheduleUnattended: "It runs with nobody there and is allowed nothing in advance: anything that needs your approval waits for you as a task.", scheduleAdded: "Schedule added",
  schedule: "Schedule", due: "Due", missed: "missed", run_running: "running", run_completed: "done", run_failed: "failed",
  run_waiting: "waiting for you", run_skipped: "skipped", run_interrupted: "interrupted",
  waitingForYou: "Waiting for you:", resume: "Resume", resumed: "Resumed", cancelTask: "Cancel", until: "until",
  web: "Web", searchProvider: "Web search", none: "None", address: "Address", apiKey: "API key", keyStoredReplace: "A key is stored (type to replace it)", newsFeeds: "News feeds (name | address | language, one a line)", units: "Units", byLocale: "By locale", proxy: "Proxy", proxyFromEnvironment: "From the environment (HTTPS_PROXY)", webHint: "Every site is still asked about the first time (Settings → Permissions remembers your answer). Keys stay in the OS keyring.", whichPlace: "Several places have this name — which one?", feelsLike: "feels", noResults: "No results", feedNotRead: "Not read", movedTo: "Moved to another site:", cut: "cut",
  quickPlaceholder: "Ask Cowork…", openInChat: "Open in chat", quickHint: "Enter asks · Esc closes", quickAskShortcut: "Quick ask shortcut (empty: none; takes effect at the next start)",
  noFolder: "No folder", openFolder: "Open folder…", recentFolders: "Recent folders", closeFolder: "Close the folder",
  desktop: "Desktop", closeToTray: "Closing the window keeps Cowork in the tray", notifications: "Notify me when something waits while the window is away", doNotDisturb: "Do not disturb (asks wait for the window)", autostart: "Start Cowork in the tray when I log in", longRunSecs: "Notify when a task that took longer than (seconds) finishes", desktopHint: "Notifications say only what waits — never a mail, an argument or a secret. An ask nobody could see waits for you; it is never denied unseen.", pauseTools: "Pause tools", resumeTools: "Resume tools", toolsPaused: "All tools are paused: nothing runs until you resume.",
  voice: "Voice", micOn: "Microphone on", listening: "Listening…", micButton: "Speak (hold Ctrl+Space)", stopListening: "Stop listening (keeps what you said)",
  noSpeech: "No speech heard.", microphone: "Microphone", speaker: "Speaker", systemDefault: "System default", speechModel: "Speech model (ggml Whisper file)",
  speechModelDefault: "default: Whisper tiny.en (English only)", spokenLanguage: "Spoken language", autoDetect: "Detect", english: "English", chinese: "Chinese",
  autoSend: "Send what I said at once", readAloud: "Read replies aloud (Esc stops)", speaking: "Speaking… (Esc stops)",
  voiceHint: "Speech stays on this device. The model that comes with Cowork hears English only; for Chinese, give a multilingual ggml Whisper model file (ggml-base.bin, ggml-small.bin) — its language is detected.",
  // Settings: its pages, each with one line on what it is for, and the one save bar.
  settingsPages: "Settings pages", pageModel: "Model", pagePermissions: "Permissions", pageAppearance: "Appearance",
  pageModelHint: "Which model answers, how Cowork reaches it, and how conversations use it.",
  pagePermissionsHint: "What the assistant may do without asking you first.",
  pageAccountsHint: "Your calendars and mail, so the assistant can read and send for you.",
  pageMemoryHint: "Where memories are kept, and how they are found by meaning.",
  pageVoiceHint: "The microphone, speaker and speech recognition for talking with Cowork.",
  pageWebHint: "Web search, news feeds, weather units and the proxy.",
  pageDesktopHint: "The tray, notifications, starting at login and the quick-ask shortcut.",
  pageSchedulesHint: "Things the assistant does on its own at the times you set, and how each run went.",
  pageAppearanceHint: "The language and colours of this window.",
  unsavedChanges: "Unsaved changes", discard: "Discard", saving: "Saving…", notSaved: "Not saved:",
  leaveTitle: "Leave without saving?", leaveText: "This page has changes that are not saved yet.", keepEditing: "Keep editing", saveAndLeave: "Save and leave", keySave: "Save the settings page",
  kind_memory: "memories", kind_note: "note", kind_fact: "fact", kind_preference: "preference", kind_decision: "decision", kind_learning: "learning",
};
type Dict = typeof en;
const zh: Partial<Dict> = {
  tokensIn: "输入", tokensOut: "输出", tokens: "词元", previousBranch: "上一版本", nextBranch: "下一版本", pastedImage: "粘贴的图片",
  attachmentCut: "已截断为 200,000 字符", showEarlier: "显示更早的消息", copy: "复制", copied: "已复制", editResend: "编辑并重新发送", regenerate: "重新生成",
  compacted: "较早的对话已摘要", messagesSummarized: "条消息", compacting: "正在摘要较早的对话…",
  defaultModel: "默认模型", persona: "角色", defaultPersona: "默认角色", allTools: "全部工具", allToolsHint: "每次请求都发送所有工具的定义（默认只发送核心工具和工具搜索）",
  compact: "压缩", compactHint: "立即摘要较早的对话", export: "导出", copyMarkdown: "复制为 Markdown", attach: "附加文件（也可粘贴或拖放到这里）",
  pin: "置顶", unpin: "取消置顶", rename: "重命名",
  chatSettings: "对话", contextWindow: "上下文窗口（词元）", vision: "模型能看图片", personas: "角色", personaName: "名称",
  systemPrompt: "系统提示词", addPersona: "添加角色", prices: "价格", inputPrice: "输入：每百万词元美元", outputPrice: "输出：每百万词元美元",
  systemPromptHint: "本对话自己的系统提示词（优先于角色和默认设置）",
  pricesHint: "按模型设置每百万输入和输出词元的美元价格，用于显示每次回答的费用。", addPrice: "添加价格",
  trustTitle: "信任此文件夹的设置吗?", trustChangedTitle: "此文件夹的设置在你信任后已更改",
  trustExplain: "它的 .cowork/settings.json 随文件夹而来。在你信任之前,只有其中的拒绝和询问规则生效。下面列出的正是它将允许的内容——这是文件夹自己的话,不是 Cowork 的。",
  trustWouldAllow: "它将无需询问地允许", trustNoAllow: "没有允许规则。", trustMode: "它要求的模式(只能降低你的模式):",
  trustPrograms: "其 git 仓库会运行的程序(信任前:已关闭或先询问)", trustNarrowing: "已经生效(只会收紧)",
  trustKeep: "保持不信任", reviewTrust: "此文件夹的设置将允许什么…", trustYes: "信任此文件夹", addAnyway: "仍然添加",
  withheld: "其描述在对助手下指令,已对助手隐藏",
  newChat: "新对话", search: "搜索对话", searchTools: "搜索工具", toolColumn: "工具", auditTime: "时间", auditCaller: "发起方", auditDecision: "决定", auditScore: "风险", auditApprovedBy: "批准人", auditOutcome: "结果", groupPinned: "已置顶", groupToday: "今天", groupYesterday: "昨天", groupWeek: "过去 7 天", groupMonth: "过去 30 天", waiting: "等待你处理", chat: "对话", tools: "工具", audit: "审计日志", settings: "设置",
  placeholder: "给 Cowork 发消息（Enter 发送，Shift+Enter 换行）",
  send: "发送", stop: "停止", thinking: "思考中…", running: "运行中…",
  noProvider: "Cowork 需要一个模型来回答。可以使用这台电脑上运行的模型，或添加模型服务的密钥。",
  useLocal: "使用", testConnection: "测试连接", connected: "已连接", modelsOffered: "个可用模型",
  keysTitle: "键盘快捷键", keyNewChat: "新对话", keySearch: "搜索对话", keySettings: "设置", keyChanges: "文件更改", keyMemory: "记忆", keyClose: "关闭窗口（Cowork 留在托盘）", keySend: "发送", keyNewLine: "换行", keyListen: "按住说话", keyAllow: "允许一次 · 本对话 · 始终（审批中）", keyDetails: "审批详情", keyDeny: "拒绝或关闭", keySheet: "本页",
  addProvider: "添加模型服务", grantCovers: "“本对话”和“始终”此后将允许：", retry: "重试", openSettings: "打开设置",
  emptyTitle: "需要我帮你做什么？", tryCalendar: "我这周的日程有哪些？", tryFolder: "总结一下这个文件夹里有什么", tryReminder: "提醒我明天上午 10 点给牙医打电话",
  approvalTitle: "允许此操作吗？", effects: "影响", risk: "风险", arguments: "参数", rule: "规则", noRule: "无匹配规则",
  riskLow: "低风险", riskMedium: "中等风险", riskHigh: "高风险", details: "详情", assistantSays: "助手说明的理由：",
  undo_nothing_changes: "不会改动任何东西。", undo_undoable: "可以在“文件更改”中撤销。", undo_cannot_undo: "一旦执行，Cowork 无法撤销。", undo_changeable_later: "Cowork 不会自动撤销，但你之后可以修改或删除它。",
  once: "仅允许一次", conversation: "本对话内允许", always: "始终允许", alwaysWorkspace: "在此工作区始终允许", ruleScope: "规则保存位置", deny: "拒绝",
  tainted: "本对话包含来自以下来源的不可信内容：",
  provider: "模型服务", baseUrl: "服务地址", model: "模型", apiKeyEnv: "API 密钥环境变量", save: "保存", saved: "已保存",
  keyNote: "变量留空则密钥保存在系统钥匙串中。密钥绝不会写入设置文件、日志或审计日志。",
  storeKey: "存入钥匙串", keyStored: "系统钥匙串中已保存密钥", noKey: "尚未保存密钥",
  mode: "模式", normal: "普通", plan: "计划（只读）", acceptEdits: "自动接受编辑",
  rules: "权限规则", addRule: "添加规则", revoke: "撤销", language: "语言", theme: "主题", light: "浅色", dark: "深色", system: "跟随系统",
  verify: "校验哈希链", chainOk: "链完整", tampered: "已被篡改", filterTool: "工具", filterDecision: "决定", all: "全部",
  layer: "层", overrides: "覆盖", category: "类别", result: "结果", error: "错误",
  builtin: "内置", user: "用户设置", workspace: "工作区设置", thisConversation: "本对话",
  toolpacks: "工具包", install: "安装", installing: "安装中…", fetching: "获取中…", sourcePlaceholder: "github:所有者/仓库[@引用]、文件夹或 .mcpb 文件",
  reviewTitle: "安装此工具包吗？", runs: "运行命令", sandbox: "沙箱", pinned: "固定到", undeclared: "未声明 — 每次调用都会询问", noEffects: "无影响",
  otherTools: "服务器提供的其他工具均未声明，每次调用都会询问。", needs: "配置项", sensitiveNote: "保存在系统钥匙串中",
  changes: "与已安装版本相比的变化", cancel: "取消", enable: "启用", disable: "停用", remove: "移除", reload: "全部重新加载",
  formTitle: "工具请求你填写", formFrom: "原话来自", packSays: "工具包自述：", submit: "发送", decline: "拒绝",
  logs: "日志", state: "状态", restarts: "次重启", noToolpacks: "还没有工具包。工具包通过 MCP 服务器添加工具：在上方粘贴它的地址（github:owner/repo、文件夹或 .mcpb 文件），在任何东西运行之前，Cowork 会先告诉你它将被允许做什么。",
  reviewChanges: "文件更改", changesHint: "助手写入的内容会先在这里等待你应用。取消勾选某些片段即可只应用部分更改；已应用的更改可以回滚到原来的字节。",
  created: "新文件", modified: "已修改", deleted: "已删除", staged: "待审", applied: "已应用", rejected: "已拒绝", rolled_back: "已回滚",
  conflict: "暂存之后磁盘上的文件已被改动：请拒绝此更改，让助手重新暂存。",
  applyAll: "应用", applySelected: "应用所选片段", reject: "拒绝", rollback: "回滚",
  appliedNote: "已应用。可在“已应用”中回滚。", rejectedNote: "已拒绝：文件未被改动。", rolledBackNote: "已回滚：文件已恢复为原来的内容。",
  noChanges: "这里没有更改。助手写入或编辑文件时，更改会先在这里等你应用。",
  mailPreview: "邮件内容", mailFrom: "账户", mailTo: "收件人", mailSubject: "主题", mailAttachments: "附件",
  accounts: "账户", accountsHint: "日历（CalDAV）与邮件（IMAP/SMTP）。密码只保存在系统钥匙串中；服务商提供应用专用密码时请使用它。",
  calendarAccount: "日历（CalDAV）", mailAccount: "邮件（IMAP + SMTP）", accountName: "名称", serverUrl: "服务器地址", userName: "用户名", password: "密码",
  emailAddress: "邮箱地址", imapServer: "IMAP 服务器（主机:端口）", smtpServer: "SMTP 服务器（主机:端口）", security: "加密方式", addAccount: "添加账户",
  testAccount: "测试", noAccounts: "还没有账户：日历工具使用本地日历；邮件需要先添加账户。",
  mailQueued: "即将发送", undo: "撤销", undone: "已撤回：邮件没有发出。", sendsIn: "后发出",
  memory: "记忆", memorySearch: "按含义搜索记忆和笔记 — 回车（留空：最新的在前）", recallInChat: "聊天时回忆相关记忆",
  entries: "条", wordsOnly: "仅关键词", reindex: "重建索引", unreadableFiles: "个文件无法读取（已跳过）",
  phase_idle: "空闲", phase_scanning: "扫描中", phase_indexing: "索引中", phase_embedding: "向量化中",
  nothingFound: "没有匹配的内容。", vaultEmpty: "记忆库是空的。让助手记住一些事，或者把 Markdown 文件放进文件夹。",
  edit: "编辑", forget: "忘记", movedToTrash: "已移到记忆库回收站", from: "来自", conversationShort: "对话", promotedFrom: "提升自",
  editedByYou: "在 Cowork 之外编写", recalled: "从记忆中回忆", wentOn: "你处理完后继续",
  vaultFolder: "记忆库文件夹（重启后生效）", vaultFolderDefault: "默认：数据目录下的 vault/", embeddingModel: "向量模型",
  onDevice: "在本机运行", openaiEmbeddings: "OpenAI 兼容的 /embeddings（Ollama、LM Studio…）",
  embedderHint: "换用新模型后，所有条目会在后台重新向量化（进度见记忆页面）；完成前这些条目按关键词查找。不同模型的向量从不混用。",
  reminder: "提醒：", dismiss: "关闭",
  chain: "工作流", chainRunning: "运行中", chainDone: "已完成", chainStopped: "已停止", chainTry: "尝试",
  schedules: "定时任务", noSchedules: "还没有定时任务。可以让助手在你选定的时间做事：比如每天早上的简报、每周的回顾。", nextRun: "下次", effectsGranted: "项操作可无人值守执行",
  refresh: "刷新", notAllowed: "未执行：它未被允许，在运行前就停止了（原因见详情）。",
  newSchedule: "新建定时任务", scheduleWhat: "让助手做什么？", schedulePromptHint: "例如：总结我的未读邮件和今天的日程", scheduleRepeat: "重复",
  everyDay: "每天", weekdays: "工作日", weekends: "周末", everyWeekOn: "每周", customCron: "自定义（cron）", scheduleAt: "时间",
  scheduleName: "名称（可选）", runMissed: "如果那时 Cowork 没有运行，打开后补运行一次", addSchedule: "添加定时任务", nextRuns: "接下来运行：",
  scheduleUnattended: "它在无人值守时运行，事先不授予任何权限：凡是需要你批准的操作，都会作为任务等你处理。", scheduleAdded: "已添加定时任务",
  schedule: "定时任务", due: "计划时间", missed: "错过", run_running: "运行中", run_completed: "已完成", run_failed: "失败",
  run_waiting: "等待你处理", run_skipped: "已跳过", run_interrupted: "已中断",
  waitingForYou: "等待你处理：", resume: "继续", resumed: "已继续", cancelTask: "取消", until: "截止",
  web: "网络", searchProvider: "网页搜索", none: "无", address: "地址", apiKey: "API 密钥", keyStoredReplace: "已保存密钥（输入以替换）", newsFeeds: "新闻源（名称 | 地址 | 语言，每行一个）", units: "单位", byLocale: "按地区", proxy: "代理", proxyFromEnvironment: "使用环境变量（HTTPS_PROXY）", webHint: "每个网站第一次访问时仍会询问（设置 → 权限会记住你的选择）。密钥保存在系统钥匙串中。", whichPlace: "有多个同名地点——是哪一个？", feelsLike: "体感", noResults: "没有结果", feedNotRead: "未能读取", movedTo: "已移到另一个网站：", cut: "已截断",
  quickPlaceholder: "问 Cowork…", openInChat: "在对话中打开", quickHint: "Enter 提问 · Esc 关闭", quickAskShortcut: "快速提问快捷键（留空则不用；下次启动生效）",
  noFolder: "未打开文件夹", openFolder: "打开文件夹…", recentFolders: "最近的文件夹", closeFolder: "关闭文件夹",
  desktop: "桌面", closeToTray: "关闭窗口时让 Cowork 留在托盘", notifications: "窗口不在前台时，有事等我就通知我", doNotDisturb: "勿扰（询问会等窗口打开）", autostart: "登录时在托盘中启动 Cowork", longRunSecs: "任务耗时超过（秒）时，完成后通知", desktopHint: "通知只说明有什么在等——绝不包含邮件、参数或密钥。没人看到的询问会一直等你，绝不会在你看不到时被拒绝。", pauseTools: "暂停工具", resumeTools: "恢复工具", toolsPaused: "所有工具已暂停：恢复之前什么都不会运行。",
  voice: "语音", micOn: "麦克风已打开", listening: "正在听…", micButton: "说话（按住 Ctrl+空格）", stopListening: "停止收音（保留已说的内容）",
  noSpeech: "没有听到说话。", microphone: "麦克风", speaker: "扬声器", systemDefault: "系统默认", speechModel: "语音识别模型（ggml Whisper 文件）",
  speechModelDefault: "默认：Whisper tiny.en（仅英语）", spokenLanguage: "说话语言", autoDetect: "自动识别", english: "英语", chinese: "中文",
  autoSend: "说完立即发送", readAloud: "朗读回复（Esc 停止）", speaking: "正在朗读…（Esc 停止）",
  voiceHint: "语音只在本机处理。Cowork 自带的模型只能听懂英语；要说中文，请指定一个多语言的 ggml Whisper 模型文件（ggml-base.bin、ggml-small.bin），会自动识别语言。",
  settingsPages: "设置页面", pageModel: "模型", pagePermissions: "权限", pageAppearance: "外观",
  pageModelHint: "由哪个模型回答、Cowork 如何连接它，以及对话如何使用它。",
  pagePermissionsHint: "助手不必先问你就可以做哪些事。",
  pageAccountsHint: "你的日历和邮箱，让助手可以替你查看和发送。",
  pageMemoryHint: "记忆保存在哪里，以及如何按含义找到它们。",
  pageVoiceHint: "与 Cowork 说话时用的麦克风、扬声器和语音识别。",
  pageWebHint: "网页搜索、新闻源、天气单位和代理。",
  pageDesktopHint: "托盘、通知、登录时启动和快速提问快捷键。",
  pageSchedulesHint: "助手在你设定的时间自己做的事，以及每次运行的结果。",
  pageAppearanceHint: "此窗口的语言和配色。",
  unsavedChanges: "有未保存的更改", discard: "放弃更改", saving: "正在保存…", notSaved: "未保存：",
  leaveTitle: "不保存就离开吗？", leaveText: "此页面有尚未保存的更改。", keepEditing: "继续编辑", saveAndLeave: "保存并离开", keySave: "保存当前设置页面",
  kind_memory: "记忆", kind_note: "笔记", kind_fact: "事实", kind_preference: "偏好", kind_decision: "决定", kind_learning: "经验",
};
export type Lang = "en" | "zh-CN";
let lang: Lang = (localStorage.getItem("lang") as Lang) || (navigator.language.startsWith("zh") ? "zh-CN" : "en");
export function t(key: keyof Dict): string {
  return (lang === "zh-CN" ? zh[key] : undefined) ?? en[key];
}
export function getLang(): Lang { return lang; }

/** A time from Rust (RFC 3339) in the person's language: dates never in another locale's order. */
export function formatDate(iso: string, style: "datetime" | "date" | "time" | "weekdayTime" = "datetime"): string {
  const d = new Date(iso);
  if (isNaN(d.getTime())) return iso;
  const options: Record<typeof style, Intl.DateTimeFormatOptions> = {
    datetime: { dateStyle: "medium", timeStyle: "short" },
    date: { dateStyle: "medium" },
    time: { timeStyle: "short" },
    weekdayTime: { weekday: "short", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" },
  };
  return new Intl.DateTimeFormat(lang, options[style]).format(d);
}

/** A day of the week by cron's number (0 and 7 are Sunday), in the person's language. */
export function weekdayName(n: number): string {
  return new Intl.DateTimeFormat(lang, { weekday: "long" }).format(new Date(2024, 0, 7 + (n % 7)));
}

/** A cron pattern of the shapes the schedule form makes ("M H * * days") in the person's
 * language; any other pattern keeps Rust's English words (`fallback`). */
export function describeCron(cron: string, fallback: string): string {
  const [minute, hour, day, month, days, ...rest] = cron.trim().split(/\s+/);
  if (rest.length || day !== "*" || month !== "*" || !/^\d+$/.test(minute ?? "") || !/^\d+$/.test(hour ?? "")) return fallback;
  const at = new Intl.DateTimeFormat(lang, { hour: "2-digit", minute: "2-digit" }).format(new Date(2024, 0, 1, Number(hour), Number(minute)));
  const zhCN = lang === "zh-CN";
  let when: string;
  if (days === "*") when = t("everyDay");
  else if (days === "1-5") when = t("weekdays");
  else if (days === "0,6" || days === "6,0") when = t("weekends");
  else if (/^[0-7](,[0-7])*$/.test(days ?? "")) when = `${zhCN ? "每" : "Every "}${days!.split(",").map((n) => weekdayName(Number(n))).join(zhCN ? "、" : ", ")}`;
  else return fallback;
  return zhCN ? `${when} ${at}` : `${when} at ${at}`;
}
export function setLang(next: Lang) { lang = next; localStorage.setItem("lang", next); document.documentElement.lang = next; }

/** An approval's phrases in Chinese, by the key Rust gives each (`core/src/plain.rs`); a key
 * missing here falls back to Rust's English text. */
const zhPlain: Record<string, string> = {
  "fs.read": "读取 {paths}", "fs.write": "写入 {paths}", "fs.delete": "删除 {paths}",
  "exec.unknown": "运行一条 Cowork 无法完全读懂的命令", "exec.piped": "运行边下载或边生成的代码（{programs}）",
  "exec.delete": "删除 {paths}", "exec.delete_all": "删除 {paths} 及其中的全部内容", "exec.admin": "以管理员权限运行 {programs}",
  "exec.network": "运行 {programs}，它会访问互联网", "exec.read": "用 {programs} 查看文件（不做任何改动）", "exec.run": "运行 {programs}",
  "net.fetch": "访问 {origin}", "browser.navigate": "在浏览器中打开 {origin}", "browser.act": "在 {origin} 上点击或输入",
  "mail.read": "读取 {account} 的邮件", "mail.send": "从 {account} 发送邮件给 {recipients}",
  "calendar.read": "读取日历 {calendar}", "calendar.write": "修改日历 {calendar}", "calendar.invite": "修改日历 {calendar} 并邀请 {recipients}",
  "vault.read": "读取你的记忆", "vault.write": "修改你的记忆", "tasks.read": "读取你的任务", "tasks.write": "修改你的任务", "notes.write": "写一条笔记",
  "audio.capture": "通过麦克风收听", "audio.play": "播放声音", "secrets.read": "使用已保存的密钥 {name}", "system.read": "读取这台电脑的信息", "ui.ask": "问你一个问题",
  "service.read": "读取你在 {service} 的数据", "service.write": "修改 {service} 上的 {what}", "service.delete": "删除 {service} 上的 {what}",
  "message.send": "在 {service} 上给 {recipients} 发消息", "data.share": "在 {service} 上与 {recipients} 共享", "money.pay": "向 {payee} 支付 {amount}",
  "account.change": "修改你的 {service} 账户的 {what}", "mcp.call": "使用工具包 {server} 的 {tool}（它没有说明会做什么）",
  "mcp.unconfined": "在沙箱之外运行工具包 {server}（{why}）", "place.folder": "在文件夹 {folder}（{path}）中",
  // Why an allow rule is broad (`core/src/policy/rules.rs` `breadth`).
  "broad.every_tool": "`{rule}` 匹配所有工具", "broad.every_tool_prefix": "`{rule}` 匹配该前缀下的所有工具",
  "broad.every_file": "`{rule}` 覆盖这台电脑上的所有文件", "broad.every_call": "`{rule}` 允许每一次调用，无论它做什么（{effects}）",
  "broad.files_root": "`{rule}` 覆盖从根目录起的所有文件", "broad.files_home": "`{rule}` 覆盖你主文件夹中的所有文件",
  "broad.files_above_home": "`{rule}` 覆盖 {path} 起的所有文件（你的主文件夹以及更多）", "broad.files_above_workspace": "`{rule}` 覆盖 {path} 起的所有文件（在工作区之上）",
  "broad.every_command": "`{rule}` 允许所有命令", "broad.command_runner": "`{rule}` 通过 `{program}` 允许所有命令（它会运行参数中指定的程序）",
  "broad.command_find": "`{rule}` 通过 `find -exec` 允许所有命令", "broad.command_git_options": "`{rule}` 通过 git 的选项允许所有命令（`git -c …` 可设置 git 运行的程序）",
  "broad.command_git_subcommand": "`{rule}` 通过 `git {sub}` 允许所有命令（它的选项可以指定要运行的程序）",
  // Risk reasons (`core/src/policy/score.rs`).
  "risk.none": "没有任何影响", "risk.destructive": "该工具被标记为具有破坏性",
  "risk.tainted": "对话中含有不可信的内容，而这次调用会向外发送数据或修改你的记录", "risk.capped": "上限为 10",
  "risk.fs.reads.secret": "读取一个存有凭据的文件（{path}）", "risk.fs.writes.secret": "写入一个存有凭据的文件（{path}）", "risk.fs.deletes.secret": "删除一个存有凭据的文件（{path}）",
  "risk.fs.reads.inside": "读取工作区内的文件", "risk.fs.reads.outside": "读取工作区之外的文件（{path}）", "risk.fs.reads.outside_link": "读取工作区之外的内容：{why}",
  "risk.fs.writes.config": "写入一个配置 {what} 的文件（{path}）", "risk.fs.deletes.config": "删除一个配置 {what} 的文件（{path}）",
  "risk.fs.writes.inside": "写入工作区内的文件", "risk.fs.writes.outside": "写入工作区之外的文件（{path}）",
  "risk.fs.deletes.inside": "删除工作区内的文件", "risk.fs.deletes.outside": "删除工作区之外的文件（{path}）",
  "risk.exec.workspace_code": "运行程序，且工作区自带的配置会让它运行代码（{code}）",
  "risk.exec.unconfined": "以你的全部权限运行程序：此处无法用 bubblewrap 隔离（安装：apt install bubblewrap）",
  "risk.exec.unread": "运行一条 Cowork 无法完全读懂的命令", "risk.exec.piped_code": "运行边下载或边生成的代码",
  "risk.exec.privileged": "请求管理员权限（{how}）", "risk.exec.deletes": "删除 {paths}", "risk.exec.deletes_all": "删除 {paths} 及其中的全部内容",
  "risk.exec.network": "运行 {programs}，它会访问网络", "risk.exec.reads": "运行 {programs}，只读取，且限制在工作区内", "risk.exec.runs": "在这台电脑上运行 {programs}",
  "risk.net.inside": "向 {what} 发送请求（{origin}）", "risk.net.fetch": "向 {origin} 发送请求",
  "risk.browser.navigate": "在浏览器中打开 {origin}", "risk.browser.act": "在 {origin} 的页面上操作",
  "risk.mail.read": "读取邮件", "risk.mail.send": "给 {recipients} 发送邮件", "risk.calendar.read": "读取日历", "risk.calendar.write": "修改日历",
  "risk.calendar.invite": "邀请 {recipients} 参加活动", "risk.vault.read": "读取记忆", "risk.vault.write": "写入记忆", "risk.tasks.read": "读取任务",
  "risk.tasks.write": "修改任务", "risk.notes.write": "写一条笔记", "risk.audio.capture": "通过麦克风录音", "risk.audio.play": "播放声音",
  "risk.secrets.read": "读取密钥 {name}", "risk.system.read": "读取系统信息", "risk.ui.ask": "向你提问",
  "risk.service.read": "读取你在 {service} 的数据", "risk.service.write": "修改 {service} 上的 {what}", "risk.service.delete": "删除 {service} 上的 {what}",
  "risk.message.send": "在 {service} 上给 {recipients} 发消息", "risk.data.share": "在 {service} 上授予 {recipients} 访问权限",
  "risk.money.pay_amount": "向 {payee} 支付 {amount}", "risk.money.pay": "向 {payee} 付款", "risk.account.change": "修改你在 {service} 的账户：{what}",
  "risk.mcp.undeclared": "{server}/{tool} 没有声明任何影响：未知", "risk.mcp.unconfined": "{server} 在沙箱之外运行（{why}）：没有任何限制",
};

/** Tool titles in Chinese, by tool name; a tool missing here (a toolpack's) keeps its own title. */
const zhToolTitles: Record<string, string> = {
  ask_user: "问你", attach_file: "附加文件", batch_check_quality: "检查代码质量（文件夹）", browser_click: "点击", browser_evaluate: "在页面中运行 JavaScript",
  browser_navigate: "打开网页", browser_screenshot: "截图", browser_snapshot: "读取页面", browser_tabs: "浏览器标签页", browser_type: "输入", browser_wait_for: "等待页面",
  calendar_check: "查看日程", calendar_create: "新建日程", calendar_delete: "删除日程", calendar_export: "导出 .ics", calendar_find_free_time: "查找空闲时间",
  calendar_import: "导入 .ics", calendar_list: "列出日历", calendar_sync: "同步日历", calendar_update: "修改日程",
  changes_apply: "应用文件更改", changes_diff: "查看文件更改", changes_list: "列出文件更改", changes_reject: "拒绝文件更改", changes_rollback: "回滚文件更改",
  check_code_quality: "检查代码质量", command_output: "后台输出", command_stop: "停止后台进程", confirm: "向你确认", create_directory: "新建文件夹",
  create_task: "新建任务", delete_vault_entry: "忘记", edit_file: "编辑文件", email_check: "查收邮件", email_outbox: "发件箱", email_read: "阅读邮件",
  email_reply: "回复邮件", email_send: "发送邮件", email_undo: "撤销发送", enter_plan_mode: "先做计划", exit_plan_mode: "提交计划", get_news: "新闻",
  get_system_info: "系统信息", get_weather: "天气", git: "Git", glob: "查找文件", list_directory: "列出文件夹", list_tasks: "列出任务", listen: "收听",
  move_file: "移动文件", promote_memory: "提升记忆", quick_note: "速记", read_file: "读取文件", reload_tools: "重新载入工具", request_input: "请你填写",
  restore_vault_entry: "恢复记忆", run_command: "运行命令", save_to_vault: "记住", search_code: "搜索代码", search_vault: "搜索记忆", speak: "朗读",
  todo_write: "计划（待办清单）", tool_search: "搜索工具", transcribe: "转写音频", update_task: "修改任务", update_vault_entry: "编辑记忆",
  web_fetch: "获取网页", web_search: "搜索网页", write_file: "写入文件",
};

/** The argument names tools share, in Chinese, for an approval's short values ("命令 ls -la"). */
const zhArgLabels: Record<string, string> = {
  command: "命令", path: "路径", url: "网址", title: "标题", due: "截止", content: "内容", start: "开始", end: "结束",
  subject: "主题", to: "收件人", query: "查询", name: "名称", cwd: "工作目录", location: "地点", from: "从", account: "账户",
  calendar: "日历", message: "消息", text: "文字", body: "正文", kind: "类型", id: "编号", action: "操作", branch: "分支",
  remote: "远程仓库", pattern: "模式", selector: "选择器", description: "说明", notes: "备注", priority: "优先级", status: "状态",
};

/** An argument's name as the person reads it: in their language where tools share it. */
export function argLabel(name: string): string {
  const zhLabel = lang === "zh-CN" ? zhArgLabels[name] : undefined;
  return zhLabel ?? name.replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase());
}

/** Every tool's own title (its spec's), set once the window has the list. */
let toolTitles: Record<string, string> = {};
export function setToolTitles(titles: Record<string, string>) { toolTitles = titles; }

/** A tool as the person reads it: its title in their language, never its id. A toolpack's tool
 * with no title reads as its words and its pack (`mcp__github__create_issue` → "create issue · github"). */
export function toolTitle(name: string): string {
  const zhTitle = lang === "zh-CN" ? zhToolTitles[name] : undefined;
  if (zhTitle) return zhTitle;
  if (toolTitles[name]) return toolTitles[name];
  const [, server, tool] = name.match(/^mcp__(.+?)__(.+)$/) ?? [];
  return server ? `${tool.replace(/_/g, " ")} · ${server}` : name.replace(/_/g, " ");
}

/** How long a call took, when it is long enough to matter to a person (a second or more). */
export function tookTime(ms: number | undefined): string {
  if (ms === undefined || ms < 1000) return "";
  return `${new Intl.NumberFormat(lang, { maximumFractionDigits: 1 }).format(ms / 1000)} s`;
}

/** One phrase of an approval in the person's language (values are shown as text, never markup). */
export function phrase(words: { key: string; values: Partial<Record<string, string>>; text: string }): string {
  const template = lang === "zh-CN" ? zhPlain[words.key] : undefined;
  if (!template) return words.text;
  return template.replace(/\{(\w+)\}/g, (_, name: string) => words.values[name] ?? "");
}

/** Where a rule came from, as the person reads it. */
export function sourceLabel(source: string): string {
  const keys: Record<string, keyof Dict> = { builtin: "builtin", user: "user", workspace: "workspace", conversation: "thisConversation" };
  return keys[source] ? t(keys[source]) : source;
}
