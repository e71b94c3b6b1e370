//! The agent against the scripted LLM server, for both wire formats: streaming, tool calls
//! through the scheduler (reviewed and audited), parallel calls, denials reaching the model,
//! profiles, and every provider failure the issue names.

use cowork_agent::provider::{anthropic::Anthropic, openai::OpenAiCompatible};
use cowork_agent::{
    Agent, AgentConfig, AgentError, AgentEvent, Conversations, Provider, ProviderError,
};
use cowork_core::DenyApprover;
use cowork_tests::Harness;
use cowork_tests::llm_server::{ScriptedLlm, Turn};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

#[derive(Clone, Copy, Debug)]
enum Api {
    Anthropic,
    OpenAi,
}

const BOTH: [Api; 2] = [Api::Anthropic, Api::OpenAi];

fn provider(api: Api, server: &ScriptedLlm, key: &str) -> Arc<dyn Provider> {
    match api {
        Api::Anthropic => Arc::new(Anthropic::new(&server.anthropic_base(), key)),
        Api::OpenAi => Arc::new(OpenAiCompatible::new("openai", &server.openai_base(), key)),
    }
}

struct Setup {
    h: Harness,
    server: ScriptedLlm,
    agent: Agent,
}

async fn setup(api: Api, config: AgentConfig) -> Setup {
    setup_with(api, config, Arc::new(DenyApprover)).await
}

async fn setup_with(
    api: Api,
    config: AgentConfig,
    approver: Arc<dyn cowork_core::Approver>,
) -> Setup {
    let h = Harness::new(approver);
    let server = ScriptedLlm::start().await;
    let conversations = Conversations::open(&h.store).unwrap();
    let agent = Agent::new(
        h.scheduler.clone(),
        provider(api, &server, "test-key"),
        conversations,
        AgentConfig {
            model: "scripted".into(),
            ..config
        },
    );
    Setup { h, server, agent }
}

async fn send(
    agent: &Agent,
    conversation: &str,
    text: &str,
) -> (Result<u32, AgentError>, Vec<AgentEvent>) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let result = agent
        .send(conversation, text, &tx, CancellationToken::new())
        .await;
    drop(tx);
    let mut events = Vec::new();
    while let Some(e) = rx.recv().await {
        events.push(e);
    }
    (result, events)
}

#[tokio::test]
async fn a_chat_that_creates_a_task_streams_calls_audits_and_persists() {
    for api in BOTH {
        let s = setup(api, AgentConfig::default()).await;
        s.server.push(Turn::tools(
            "I'll add that. ",
            &[(
                "call_1",
                "create_task",
                json!({"title": "Buy milk", "due": "2026-11-23"}),
            )],
        ));
        s.server.push(Turn::text("Added task #1: Buy milk."));
        let (result, events) = send(&s.agent, "conv-a", "remind me to buy milk tomorrow").await;
        assert_eq!(result.unwrap(), 2, "{api:?}");

        let text: String = events
            .iter()
            .filter_map(|e| {
                if let AgentEvent::TextDelta { text } = e {
                    Some(text.as_str())
                } else {
                    None
                }
            })
            .collect();
        assert_eq!(text, "I'll add that. Added task #1: Buy milk.", "{api:?}");
        let finished = events
            .iter()
            .find_map(|e| {
                if let AgentEvent::ToolCallFinished {
                    ok,
                    result,
                    call_id,
                    ..
                } = e
                {
                    Some((*ok, result.clone(), call_id.clone()))
                } else {
                    None
                }
            })
            .unwrap();
        assert!(
            finished.0 && finished.1.contains("Created task #1"),
            "{api:?}: {finished:?}"
        );

        // Reviewed and audited as a chat call.
        let rows = s.h.audit_rows(&finished.2);
        assert_eq!(rows.last().unwrap().record.caller, "chat");
        assert_eq!(rows.last().unwrap().record.conversation, "conv-a");

        // The second request carried the tool result back, in that API's shape.
        let requests = s.server.requests();
        assert_eq!(requests.len(), 2);
        let second = &requests[1].2;
        match api {
            Api::Anthropic => {
                assert_eq!(requests[1].1["x-api-key"], "test-key");
                let last = second["messages"].as_array().unwrap().last().unwrap();
                assert_eq!(last["content"][0]["type"], "tool_result");
                assert_eq!(last["content"][0]["tool_use_id"], "call_1");
                // Tools are deferred: `tool_search` is defined, create_task is named in the
                // system prompt's index (and callable).
                assert!(
                    second["tools"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|t| t["name"] == "tool_search")
                );
                assert!(
                    second["system"][0]["text"]
                        .as_str()
                        .unwrap()
                        .contains("create_task")
                );
                // Prompt caching: breakpoints after the tools, the system prompt and the newest block.
                let ephemeral = json!({"type": "ephemeral"});
                assert_eq!(
                    second["tools"].as_array().unwrap().last().unwrap()["cache_control"],
                    ephemeral
                );
                assert_eq!(second["system"][0]["cache_control"], ephemeral);
                assert!(
                    second["system"][0]["text"]
                        .as_str()
                        .unwrap()
                        .contains("Cowork"),
                    "{}",
                    second["system"]
                );
                assert_eq!(
                    last["content"].as_array().unwrap().last().unwrap()["cache_control"],
                    ephemeral
                );
                let marked = second.to_string().matches("cache_control").count();
                assert!(
                    marked <= 4,
                    "the API allows at most 4 breakpoints, sent {marked}"
                );
            }
            Api::OpenAi => {
                assert_eq!(requests[1].1["authorization"], "Bearer test-key");
                let messages = second["messages"].as_array().unwrap();
                assert_eq!(messages[0]["role"], "system");
                let tool = messages.iter().find(|m| m["role"] == "tool").unwrap();
                assert_eq!(tool["tool_call_id"], "call_1");
                let assistant = messages.iter().find(|m| m["role"] == "assistant").unwrap();
                assert_eq!(
                    assistant["tool_calls"][0]["function"]["name"],
                    "create_task"
                );
            }
        }
        // Persisted: user, assistant (text + tool use), tool results, final answer.
        let messages = s.agent.conversations().messages("conv-a").unwrap();
        assert_eq!(messages.len(), 4);
        let listed = s.agent.conversations().list(Some("milk")).unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].messages, 4);
    }
}

#[tokio::test]
async fn parallel_calls_denials_and_profiles_reach_the_model_as_results() {
    for api in BOTH {
        let s = setup(api, AgentConfig::default()).await;
        s.server.push(Turn::tools(
            "",
            &[
                ("a", "list_tasks", json!({})),
                ("b", "get_system_info", json!({})),
                ("c", "exec_probe", json!({"target": "rm -rf ~"})),
            ],
        ));
        s.server.push(Turn::text("Here is what I found."));
        let (result, events) = send(&s.agent, "conv-p", "look around").await;
        assert!(result.is_ok(), "{api:?}: {result:?}");
        let finished: Vec<(String, bool, String)> = events
            .iter()
            .filter_map(|e| {
                if let AgentEvent::ToolCallFinished {
                    name, ok, result, ..
                } = e
                {
                    Some((name.clone(), *ok, result.clone()))
                } else {
                    None
                }
            })
            .collect();
        assert_eq!(
            finished.iter().map(|f| f.0.as_str()).collect::<Vec<_>>(),
            ["list_tasks", "get_system_info", "exec_probe"]
        );
        assert!(finished[0].1 && finished[1].1);
        assert!(
            !finished[2].1 && finished[2].2.contains("not allowed"),
            "{:?}",
            finished[2]
        );
        // All three results went back in one message, the denial marked as an error.
        let body = &s.server.requests()[1].2;
        let as_text = body.to_string();
        assert!(as_text.contains("not allowed"));
        if let Api::Anthropic = api {
            let results = body["messages"].as_array().unwrap().last().unwrap()["content"]
                .as_array()
                .unwrap()
                .clone();
            assert_eq!(results.len(), 3);
            assert_eq!(results[2]["is_error"], true);
        }

        // A profile limits what is offered and denies the rest, on record.
        let limited = setup(
            api,
            AgentConfig {
                profile: Some(cowork_core::ToolProfile {
                    name: "tasks only".into(),
                    tools: Some(vec!["list_tasks".into()]),
                    ..Default::default()
                }),
                ..Default::default()
            },
        )
        .await;
        limited.server.push(Turn::tools(
            "",
            &[("x", "create_task", json!({"title": "sneaky"}))],
        ));
        limited.server.push(Turn::text("ok"));
        let (_, events) = send(&limited.agent, "conv-l", "hi").await;
        let offered: Vec<String> = limited.server.requests()[0].2["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                t["name"]
                    .as_str()
                    .or(t["function"]["name"].as_str())
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(offered, ["list_tasks"]);
        let denial = events
            .iter()
            .find_map(|e| {
                if let AgentEvent::ToolCallFinished { result, .. } = e {
                    Some(result.clone())
                } else {
                    None
                }
            })
            .unwrap();
        assert!(
            denial.contains("is not in the tool profile «tasks only»"),
            "{denial}"
        );
    }
}

#[tokio::test]
async fn provider_failures_are_clear_and_lose_nothing() {
    for api in BOTH {
        // 429 with retry-after: waited for, then the turn succeeds.
        let s = setup(api, AgentConfig::default()).await;
        s.server.push(Turn::Error {
            status: 429,
            retry_after: Some("0.2".into()),
            body: "slow down".into(),
        });
        s.server.push(Turn::text("fine"));
        let (result, _) = send(&s.agent, "c429", "hi").await;
        assert!(result.is_ok(), "{api:?}: {result:?}");
        assert_eq!(s.server.requests().len(), 2);

        // 401: a clear error naming the fix.
        s.server.push(Turn::Error {
            status: 401,
            retry_after: None,
            body: "bad key".into(),
        });
        let (result, _) = send(&s.agent, "c401", "hi").await;
        let failed = result.unwrap_err();
        let err = failed.to_string();
        assert!(
            err.contains("API key was rejected") && err.contains("Settings → Model"),
            "{err}"
        );
        assert_eq!(failed.remedy(), Some(cowork_agent::Remedy::OpenSettings));

        // A server error: its own words (not its JSON), and a retry on offer.
        s.server.push(Turn::Error {
            status: 503,
            retry_after: None,
            body: r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
                .into(),
        });
        let (result, _) = send(&s.agent, "c503", "hi").await;
        let failed = result.unwrap_err();
        assert!(
            failed.to_string().contains("503: Overloaded") && !failed.to_string().contains('{'),
            "{failed}"
        );
        assert_eq!(failed.remedy(), Some(cowork_agent::Remedy::Retry));

        // Context overflow.
        s.server.push(Turn::Error {
            status: 400,
            retry_after: None,
            body: r#"{"error":{"message":"prompt is too long: 300000 tokens"}}"#.into(),
        });
        let (result, _) = send(&s.agent, "cctx", "hi").await;
        assert!(
            matches!(
                result,
                Err(AgentError::Provider(ProviderError::ContextOverflow { .. }))
            ),
            "{result:?}"
        );

        // Cut mid-stream: the error says so, and what was said is kept, marked.
        s.server.push(Turn::Disconnect {
            text: vec!["Partial ".into(), "answer".into()],
        });
        let (result, _) = send(&s.agent, "ccut", "hi").await;
        assert!(
            matches!(
                result,
                Err(AgentError::Provider(ProviderError::Stream { .. }))
            ),
            "{api:?}: {result:?}"
        );
        let messages = s.agent.conversations().messages("ccut").unwrap();
        assert_eq!(messages.len(), 2);
        assert!(
            serde_json::to_string(&messages[1])
                .unwrap()
                .contains("Partial answer\\n\\n[interrupted]")
        );

        s.server.push(Turn::Malformed);
        let (result, _) = send(&s.agent, "cbad", "hi").await;
        assert!(
            matches!(
                result,
                Err(AgentError::Provider(ProviderError::Malformed { .. }))
            ),
            "{api:?}: {result:?}"
        );

        // Nothing listening: a network error naming the base URL.
        let dead = Agent::new(
            s.h.scheduler.clone(),
            match api {
                Api::Anthropic => {
                    Arc::new(Anthropic::new("http://127.0.0.1:9", "k")) as Arc<dyn Provider>
                }
                Api::OpenAi => {
                    Arc::new(OpenAiCompatible::new("ollama", "http://127.0.0.1:9/v1", ""))
                }
            },
            Conversations::open(&s.h.store).unwrap(),
            AgentConfig::default(),
        );
        let (result, _) = send(&dead, "cdead", "hi").await;
        assert!(
            result.unwrap_err().to_string().contains("127.0.0.1:9"),
            "{api:?}"
        );
    }
}

#[tokio::test]
async fn stop_mid_stream_and_the_max_steps_guard() {
    for api in BOTH {
        let s = setup(
            api,
            AgentConfig {
                max_steps: 2,
                ..Default::default()
            },
        )
        .await;
        s.server.push(Turn::Reply {
            text: (0..50).map(|i| format!("word{i} ")).collect(),
            tool_calls: vec![],
            chunk_delay: Duration::from_millis(20),
        });
        let (tx, mut rx) = mpsc::unbounded_channel();
        let cancel = CancellationToken::new();
        let stopper = cancel.clone();
        tokio::spawn(async move {
            // Stop as soon as the first words arrive.
            if rx.recv().await.is_some() {
                stopper.cancel();
            }
        });
        let result = s.agent.send("cstop", "talk", &tx, cancel).await;
        assert!(
            matches!(result, Err(AgentError::Cancelled)),
            "{api:?}: {result:?}"
        );
        let saved =
            serde_json::to_string(&s.agent.conversations().messages("cstop").unwrap()).unwrap();
        assert!(
            saved.contains("[stopped]") && !saved.contains("word49"),
            "{saved}"
        );

        for i in 0..2 {
            s.server.push(Turn::tools(
                "",
                &[(&format!("t{i}"), "list_tasks", json!({}))],
            ));
        }
        let (result, _) = send(&s.agent, "cloop", "loop").await;
        let err = result.unwrap_err();
        assert!(
            matches!(err, AgentError::MaxSteps(2))
                && err.to_string().contains("ask again to continue"),
            "{err}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recall_gives_the_model_the_memories_a_turn_needs_and_shows_which() {
    for api in BOTH {
        let s = setup(
            api,
            AgentConfig {
                recall: Some(3),
                ..AgentConfig::default()
            },
        )
        .await;
        s.h.ok("save_to_vault", json!({"content": "Remember that my passport number is in the blue folder", "kind": "fact"})).await;
        s.h.ok(
            "save_to_vault",
            json!({"content": "周三下午三点和王经理开会讨论预算"}),
        )
        .await;
        s.server
            .push(Turn::text("在蓝色文件夹里 [memory: passport]."));
        let (result, events) = send(&s.agent, "c1", "护照在哪里?").await;
        assert_eq!(result.unwrap(), 1);
        let recalled = events.iter().find_map(|e| match e {
            AgentEvent::Recalled { memories, .. } => Some(memories.clone()),
            _ => None,
        });
        let recalled = recalled.expect("a Recalled event");
        assert!(recalled[0].title.contains("passport"), "{recalled:?}");
        let request = serde_json::to_string(&s.server.requests().last().unwrap().2).unwrap();
        assert!(
            request.contains("blue folder") && request.contains("[memory: title]"),
            "{api:?}: the memories reach the model: {request}"
        );
        // The recall is a reviewed, audited tool call like any other.
        let audited = s.h.audit_rows(&match &events[0] {
            AgentEvent::Recalled { call_id, .. } => call_id.clone(),
            other => panic!("recall comes first: {other:?}"),
        });
        assert_eq!(audited.last().unwrap().record.tool, "search_vault");
    }
    // Off by default: no search, no memories.
    let s = setup(Api::OpenAi, AgentConfig::default()).await;
    s.h.ok(
        "save_to_vault",
        json!({"content": "Remember that my passport number is in the blue folder"}),
    )
    .await;
    s.server.push(Turn::text("I don't know."));
    let (_, events) = send(&s.agent, "c1", "护照在哪里?").await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::Recalled { .. }))
    );
    assert!(
        !serde_json::to_string(&s.server.requests().last().unwrap().2)
            .unwrap()
            .contains("blue folder")
    );
}

/// A turn whose call waited for the person goes on once it ran again: the result reaches the
/// model as that tool's result (both wire formats pair it with a call), never as the person's
/// message; a suspension no call of this conversation waited on starts no turn.
#[tokio::test]
async fn a_turn_goes_on_after_its_suspended_call_ran_again() {
    use cowork_agent::{Message, Part, ResumedCall, Role};
    for api in BOTH {
        let s = setup(api, AgentConfig::default()).await;
        let conversations = s.agent.conversations();
        conversations.ensure("conv-r", "orders").unwrap();
        conversations
            .append("conv-r", &Message::user_text("check my order status"))
            .unwrap();
        let call = Part::ToolUse {
            id: "call_nav".into(),
            name: "browser_navigate".into(),
            input: json!({"url": "http://shop.test/orders"}),
        };
        conversations
            .append(
                "conv-r",
                &Message {
                    role: Role::Assistant,
                    parts: vec![call],
                },
            )
            .unwrap();
        let waited = Part::ToolResult {
            tool_use_id: "call_nav".into(),
            content: "suspended: login needed at http://shop.test — `cowork tasks resume s-42`"
                .into(),
            is_error: true,
            // As rows written before the suspension travelled as data: read from the text.
            suspended: None,
            structured: None,
            images: vec![],
            app: None,
        };
        conversations
            .append(
                "conv-r",
                &Message {
                    role: Role::User,
                    parts: vec![waited],
                },
            )
            .unwrap();
        conversations
            .append(
                "conv-r",
                &Message {
                    role: Role::Assistant,
                    parts: vec![Part::Text {
                        text: "Please log in.".into(),
                    }],
                },
            )
            .unwrap();

        let resumed = |id: &str| ResumedCall {
            suspension: id.into(),
            tool: "browser_navigate".into(),
            args: json!({"url": "http://shop.test/orders"}),
            ok: true,
            result: "Your orders — Order #1234: shipped".into(),
        };
        let (tx, _rx) = mpsc::unbounded_channel();
        assert_eq!(
            s.agent
                .continue_after_resume("conv-r", &resumed("s-other"), &tx, CancellationToken::new())
                .await
                .unwrap(),
            None,
            "{api:?}"
        );
        assert!(
            s.server.requests().is_empty(),
            "no turn for a suspension nobody here waited on"
        );

        s.server.push(Turn::text("Your order #1234 has shipped."));
        let (tx, mut rx) = mpsc::unbounded_channel();
        assert_eq!(
            s.agent
                .continue_after_resume("conv-r", &resumed("s-42"), &tx, CancellationToken::new())
                .await
                .unwrap(),
            Some(1),
            "{api:?}"
        );
        drop(tx);
        let mut events = Vec::new();
        while let Some(e) = rx.recv().await {
            events.push(e);
        }
        assert!(
            matches!(&events[0], AgentEvent::Resumed { suspension, tool } if suspension == "s-42" && tool == "browser_navigate"),
            "{api:?}: {events:?}"
        );
        let sent = s.server.requests()[0].2.to_string();
        assert!(
            sent.contains("resume-s-42") && sent.contains("Order #1234: shipped"),
            "{api:?}: {sent}"
        );
        let messages = conversations.messages("conv-r").unwrap();
        let user_texts: Vec<&str> = messages
            .iter()
            .filter(|m| m.role == Role::User)
            .flat_map(|m| &m.parts)
            .filter_map(|p| {
                if let Part::Text { text } = p {
                    Some(text.as_str())
                } else {
                    None
                }
            })
            .collect();
        assert_eq!(
            user_texts,
            ["check my order status"],
            "{api:?}: the page is not the person's words"
        );
        assert!(
            matches!(messages.last().unwrap().parts.as_slice(), [Part::Text { text }] if text.contains("#1234 has shipped")),
            "{api:?}"
        );
    }
}

/// A family that writes down, in order, when it hears a call of its tool is coming and when
/// the tool runs.
struct Warming {
    log: Arc<std::sync::Mutex<Vec<String>>>,
}

impl cowork_contract::ToolProvider for Warming {
    fn name(&self) -> &str {
        "warming"
    }
    fn tools(&self) -> Vec<Arc<dyn cowork_contract::DynTool>> {
        ["warm_probe", "hidden_probe"]
            .into_iter()
            .map(|name| {
                Arc::new(LoggedTool {
                    spec: cowork_contract::ToolSpec::from_meta(
                        cowork_contract::ToolMeta::new(name, name, "A probe.").category("system"),
                        json!({"type": "object", "properties": {"note": {"type": "string"}}}),
                    ),
                    log: self.log.clone(),
                }) as Arc<dyn cowork_contract::DynTool>
            })
            .collect()
    }
    fn warm_up(&self, tool: &str) {
        self.log.lock().unwrap().push(format!("warm {tool}"));
    }
}

struct LoggedTool {
    spec: cowork_contract::ToolSpec,
    log: Arc<std::sync::Mutex<Vec<String>>>,
}

impl cowork_contract::DynTool for LoggedTool {
    fn spec(&self) -> &cowork_contract::ToolSpec {
        &self.spec
    }
    fn prepare(
        &self,
        _args: serde_json::Value,
        _env: &cowork_contract::EffectEnv,
    ) -> Result<cowork_contract::PreparedCall, cowork_contract::ToolError> {
        let (log, name) = (self.log.clone(), self.spec.name.clone());
        Ok(cowork_contract::PreparedCall::new(
            vec![],
            Arc::new(move |_ctx| {
                log.lock().unwrap().push(format!("ran {name}"));
                Box::pin(async { Ok(cowork_contract::ToolOutput::text("done")) })
            }),
        ))
    }
}

#[tokio::test]
async fn a_family_hears_its_offered_tool_is_coming_while_the_model_still_writes_the_call() {
    for api in BOTH {
        let profile = cowork_core::ToolProfile {
            tools: Some(vec!["warm_probe".into()]),
            ..cowork_core::ToolProfile::any("probe only")
        };
        let s = setup(
            api,
            AgentConfig {
                profile: Some(profile),
                ..AgentConfig::default()
            },
        )
        .await;
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        s.h.scheduler.registry().add_provider(
            cowork_core::Layer::Builtin,
            Arc::new(Warming { log: log.clone() }),
        );
        let mut turn = Turn::tools(
            "",
            &[
                (
                    "a",
                    "warm_probe",
                    json!({"note": "a long argument ".repeat(20)}),
                ),
                ("b", "hidden_probe", json!({})),
            ],
        );
        if let Turn::Reply { chunk_delay, .. } = &mut turn {
            *chunk_delay = Duration::from_millis(20);
        }
        s.server.push(turn);
        s.server.push(Turn::text("Done."));
        let (result, _) = send(&s.agent, "conv-warm", "probe it").await;
        assert!(result.is_ok(), "{api:?}: {result:?}");
        // Heard once, before the call ran; the tool the profile does not offer is never
        // warmed (and never runs).
        assert_eq!(
            *log.lock().unwrap(),
            ["warm warm_probe", "ran warm_probe"],
            "{api:?}"
        );
    }
}

/// Approves every ask, remembering each review's reasons as the person read them.
#[derive(Default)]
struct ReadingPerson {
    reasons: std::sync::Mutex<Vec<(String, String)>>,
}

#[async_trait::async_trait]
impl cowork_core::Approver for ReadingPerson {
    fn name(&self) -> &str {
        "person"
    }
    async fn decide(&self, request: &cowork_core::ApprovalRequest) -> cowork_core::ApprovalChoice {
        let reasons: Vec<String> = request
            .review
            .reasons
            .iter()
            .map(|r| r.text.clone())
            .collect();
        self.reasons
            .lock()
            .unwrap()
            .push((request.tool.clone(), reasons.join("; ")));
        cowork_core::ApprovalChoice::Once
    }
}

/// A password manager's read: declared as a sensitive read of secrets.
struct PasswordItem(cowork_contract::ToolSpec);

const PASSWORD: &str = "correct-horse-battery-staple-42";
const TOKEN: &str = "ghp_R2d2C3poBb8Wookie0Falcon9Leia7Han";

impl cowork_contract::DynTool for PasswordItem {
    fn spec(&self) -> &cowork_contract::ToolSpec {
        &self.0
    }
    fn prepare(
        &self,
        args: serde_json::Value,
        _env: &cowork_contract::EffectEnv,
    ) -> Result<cowork_contract::PreparedCall, cowork_contract::ToolError> {
        let item = args["item"].as_str().unwrap_or_default().to_string();
        let read = cowork_contract::Effect::SensitiveRead {
            category: cowork_contract::Sensitive::Secrets,
            subject: item.clone(),
        };
        Ok(cowork_contract::PreparedCall::new(
            vec![read],
            Arc::new(move |_ctx| {
                let found = json!({"item": item, "username": "bob", "password": PASSWORD});
                Box::pin(async move { Ok(cowork_contract::ToolOutput::text(found.to_string())) })
            }),
        ))
    }
}

#[tokio::test]
async fn a_stored_password_and_a_pasted_token_reach_the_model_as_placeholders_and_the_call_gets_the_values()
 {
    for api in BOTH {
        let person = Arc::new(ReadingPerson::default());
        let s = setup_with(api, AgentConfig::default(), person.clone()).await;
        let spec = cowork_contract::ToolSpec::from_meta(
            cowork_contract::ToolMeta::new("password_item", "Password item", "Reads a login.")
                .category("secrets")
                .effects(&[cowork_contract::EffectKind::SensitiveRead]),
            json!({"type": "object", "properties": {"item": {"type": "string"}}}),
        );
        s.h.scheduler
            .registry()
            .register(cowork_core::Layer::Builtin, Arc::new(PasswordItem(spec)));
        s.server.push(Turn::tools(
            "",
            &[("r", "password_item", json!({"item": "github"}))],
        ));
        // The token the person pasted was kept first (their message went out first): «secret:1»;
        // then the read's values, in order: the user name, the password.
        let content = "user «secret:2», password «secret:3», key «secret:1»";
        s.server.push(Turn::tools(
            "",
            &[(
                "w",
                "write_file",
                json!({"path": "login.txt", "content": content}),
            )],
        ));
        s.server.push(Turn::text("Saved."));
        let said = format!("save my github login to login.txt with my key {TOKEN}");
        let (result, events) = send(&s.agent, "conv-secret", &said).await;
        assert!(result.is_ok(), "{api:?}: {result:?}");

        // The wire never carried either value; the model saw the placeholders.
        let requests = s.server.requests();
        assert_eq!(requests.len(), 3, "{api:?}");
        for (_, _, body) in &requests {
            let body = body.to_string();
            assert!(
                !body.contains(PASSWORD) && !body.contains(TOKEN),
                "{api:?}: {body}"
            );
        }
        let second = requests[1].2.to_string();
        assert!(
            ["«secret:1»", "«secret:2»", "«secret:3»"]
                .iter()
                .all(|p| second.contains(p)),
            "{api:?}: {second}"
        );
        // The call still worked: the file it staged (applied as the person would) holds the
        // real values.
        let shadow = cowork_files::shadow::Shadow::open(&s.h.store).unwrap();
        shadow.apply(1, None).unwrap();
        let written = std::fs::read_to_string(s.h.workspace.join("login.txt")).unwrap();
        assert_eq!(
            written,
            format!("user bob, password {PASSWORD}, key {TOKEN}"),
            "{api:?}"
        );
        // The audit log holds the placeholders, never the values; the person was told what
        // the call puts in.
        let write_id = events
            .iter()
            .find_map(|e| match e {
                AgentEvent::ToolCallFinished { name, call_id, .. } if name == "write_file" => {
                    Some(call_id.clone())
                }
                _ => None,
            })
            .unwrap();
        let logged = format!("{:?}", s.h.audit_rows(&write_id));
        assert!(
            logged.contains("«secret:3»") && !logged.contains(PASSWORD),
            "{api:?}: {logged}"
        );
        let asked = person.reasons.lock().unwrap().clone();
        assert!(
            asked.iter().any(|(tool, why)| tool == "write_file"
                && why.contains("a stored secret (github)")
                && why.contains("«secret:1», «secret:2», «secret:3»")),
            "{api:?}: {asked:?}"
        );
    }
}
