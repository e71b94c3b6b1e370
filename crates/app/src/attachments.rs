//! Attachments as the window hands them over: a file the person picked or dropped is read by
//! `attach_file` through the scheduler (reviewed and audited; the pick itself grants reading
//! that one file in that conversation, as a rule the person sees), pasted bytes are made into
//! the same parts, and what a message may carry from the window is checked before it reaches
//! the agent.

use cowork_agent::{ImageData, Part};
use cowork_contract::Effect;
use cowork_core::{CallRequest, Caller, Scheduler};
use cowork_files::attach::{Attachment, AttachmentKind, attachment_from_bytes};
use std::path::Path;
use std::sync::Arc;

/// The tool that reads an attachment.
const TOOL: &str = "attach_file";

/// How many attachments one message carries.
pub const ATTACHMENTS_MAX: usize = 10;

fn part_of(a: Attachment) -> Part {
    use base64::Engine;
    match (a.kind, a.image) {
        (AttachmentKind::Image, Some(bytes)) => Part::Image {
            name: Some(a.name),
            image: ImageData {
                media_type: a.media_type,
                data_base64: base64::engine::general_purpose::STANDARD.encode(bytes),
            },
        },
        _ => Part::File {
            name: a.name,
            media_type: a.media_type,
            text: a.text.unwrap_or_default(),
            truncated_from: a.truncated_from,
            untrusted_from: None,
        },
    }
}

/// Reads `path` as an attachment through the scheduler: the person chose this file, so the
/// call carries the grant of reading it (and nothing else); the review and the audit row are
/// as for any call.
pub async fn attach_file(
    scheduler: &Arc<Scheduler>,
    conversation: &str,
    path: &Path,
) -> Result<Part, String> {
    let path = path
        .canonicalize()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    // The pick is the person's grant: reading this one file with attach_file, in this
    // conversation (shown with its rules), whether or not it lies in the workspace.
    let effects = vec![Effect::FsRead {
        path: path.display().to_string(),
    }];
    let rules = cowork_core::policy::grant_rules_for(TOOL, &effects).ok_or_else(|| {
        format!(
            "{}: the name holds glob or shell characters — rename the file, or copy it into the workspace and attach the copy",
            path.display()
        )
    })?;
    scheduler
        .policy()
        .grant_for_conversation(conversation, &rules)
        .map_err(|e| e.to_string())?;
    let mut request = CallRequest::new(
        TOOL,
        serde_json::json!({"path": path}),
        Caller::Person,
        conversation,
    );
    request.granted = Some(Arc::from(effects));
    let output = scheduler
        .call(request)
        .await
        .result
        .map_err(|e| e.to_string())?;
    let structured = output
        .structured
        .ok_or("attach_file returned no attachment")?;
    let name = structured["name"].as_str().unwrap_or_default().to_string();
    let media_type = structured["media_type"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    Ok(
        match output.content.iter().find_map(|c| match c {
            cowork_contract::Content::Image {
                mime_type,
                data_base64,
            } => Some((mime_type, data_base64)),
            _ => None,
        }) {
            Some((mime_type, data)) => Part::Image {
                name: Some(name),
                image: ImageData {
                    media_type: mime_type.clone(),
                    data_base64: data.clone(),
                },
            },
            None => Part::File {
                name,
                media_type,
                text: structured["text"].as_str().unwrap_or_default().to_string(),
                truncated_from: structured["truncated_from"].as_u64(),
                untrusted_from: None,
            },
        },
    )
}

/// A resource of a toolpack's server the person picked in the window, read through the
/// scheduler (their own action, audited; the read taints the conversation like any server's
/// words) and attached as a file: its text parts joined, cut at the attachment cap.
pub async fn attach_resource(
    scheduler: &Arc<Scheduler>,
    conversation: &str,
    server: &str,
    uri: &str,
) -> Result<Part, String> {
    let request = CallRequest::new(
        "mcp_read_resource",
        serde_json::json!({"server": server, "uri": uri}),
        Caller::Person,
        conversation,
    );
    let output = scheduler
        .call(request)
        .await
        .result
        .map_err(|e| e.to_string())?;
    let contents = output
        .structured
        .as_ref()
        .and_then(|s| s["contents"].as_array().cloned())
        .unwrap_or_default();
    let texts: Vec<&str> = contents.iter().filter_map(|c| c["text"].as_str()).collect();
    if texts.is_empty() {
        return Err(format!("{uri} holds no text to attach"));
    }
    let text = texts.join("\n");
    let total = text.chars().count();
    let cap = cowork_files::attach::ATTACH_TEXT_MAX;
    Ok(Part::File {
        // The server's name first: a `file://` URI must not pass for the person's own file.
        name: format!("{server}: {uri}"),
        media_type: contents[0]["mimeType"]
            .as_str()
            .unwrap_or("text/plain")
            .to_string(),
        text: text.chars().take(cap).collect(),
        truncated_from: (total > cap).then_some(total as u64),
        untrusted_from: Some(format!("the toolpack {server}'s resource {uri}")),
    })
}

/// Bytes the person pasted or dropped into the window (no file is read).
pub fn attach_bytes(name: &str, data_base64: &str) -> Result<Part, String> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data_base64)
        .map_err(|e| format!("{name}: the pasted data is not base64 ({e})"))?;
    attachment_from_bytes(name, bytes)
        .map(part_of)
        .map_err(|e| e.to_string())
}

/// What a message from the window may hold: words and attachments, a bounded number — never
/// tool calls or results, which only the agent writes.
pub fn person_parts(text: &str, attachments: Vec<Part>) -> Result<Vec<Part>, String> {
    if attachments.len() > ATTACHMENTS_MAX {
        return Err(format!(
            "{} attachments; a message takes at most {ATTACHMENTS_MAX} — send the rest in another message",
            attachments.len()
        ));
    }
    let mut parts = Vec::with_capacity(attachments.len() + 1);
    if !text.trim().is_empty() || attachments.is_empty() {
        parts.push(Part::Text {
            text: text.to_string(),
        });
    }
    for part in attachments {
        match &part {
            Part::Image { image, .. } => {
                let limit = cowork_files::attach::ATTACH_IMAGE_MAX as usize * 4 / 3 + 4;
                if !["image/png", "image/jpeg", "image/webp", "image/gif"]
                    .contains(&image.media_type.as_str())
                    || image.data_base64.len() > limit
                {
                    return Err(format!(
                        "an image attachment must be PNG, JPEG, WebP or GIF of at most {} MB",
                        cowork_files::attach::ATTACH_IMAGE_MAX / 1_048_576
                    ));
                }
            }
            Part::File { text, .. } => {
                if text.chars().count() > cowork_files::attach::ATTACH_TEXT_MAX {
                    return Err("an attached file's text is over the cap — attach it again".into());
                }
            }
            _ => return Err("a message carries words and attachments only".into()),
        }
        parts.push(part);
    }
    Ok(parts)
}
