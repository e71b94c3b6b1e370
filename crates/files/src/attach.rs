//! `attach_file`: a file as a message attachment — text, Markdown and code as they are, PDF and
//! Word documents as their text, images as images. The window calls it for a file the person
//! picks or drops (their pick is the grant of its read); the model may call it too, reviewed
//! like any read.

use crate::FilesTools;
use crate::paths::{self, Target};
use cowork_contract::{Content, EffectEnv, ToolContext, ToolError, ToolResult, tools};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The most characters of text an attachment gives the model (about 50k tokens).
pub const ATTACH_TEXT_MAX: usize = 200_000;
/// The largest image a model accepts (Anthropic's per-image cap).
pub const ATTACH_IMAGE_MAX: u64 = 5 * 1024 * 1024;
/// The largest document read for its text.
pub const ATTACH_FILE_MAX: u64 = 50 * 1024 * 1024;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AttachFileInput {
    /// The file: absolute, `~/…`, or relative to the workspace.
    pub path: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AttachmentKind {
    Text,
    Image,
}

#[derive(Serialize, JsonSchema)]
pub struct Attachment {
    pub name: String,
    pub path: String,
    pub media_type: String,
    pub size_bytes: u64,
    pub kind: AttachmentKind,
    /// The text the model reads (text kinds), cut at the cap.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The text had this many characters and was cut.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated_from: Option<u64>,
    /// The image's bytes travel as image content, not in the structured output.
    #[serde(skip)]
    #[schemars(skip)]
    pub image: Option<Vec<u8>>,
}

/// The image types every vision API takes.
fn image_type(extension: &str) -> Option<&'static str> {
    Some(match extension {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "webp" => "image/webp",
        "gif" => "image/gif",
        _ => return None,
    })
}

fn too_big(what: &str, size: u64, max: u64) -> ToolError {
    ToolError::invalid(format!(
        "the {what} is {:.1} MB; attachments take at most {} MB — attach a smaller one (or an excerpt)",
        size as f64 / 1_048_576.0,
        max / 1_048_576
    ))
}

/// Reads a file for the model (see [`attachment_from_bytes`]).
pub fn read_attachment(path: &std::path::Path) -> Result<Attachment, ToolError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let size = std::fs::metadata(path)
        .map_err(|e| ToolError::invalid(format!("{}: {e}", path.display())))?
        .len();
    let is_image = image_type(&extension_of(&name)).is_some();
    let max = if is_image {
        ATTACH_IMAGE_MAX
    } else {
        ATTACH_FILE_MAX
    };
    if size > max {
        return Err(too_big(if is_image { "image" } else { "file" }, size, max));
    }
    let bytes =
        std::fs::read(path).map_err(|e| ToolError::failed(format!("{}: {e}", path.display())))?;
    let mut attachment = attachment_from_bytes(&name, bytes)?;
    attachment.path = path.display().to_string();
    Ok(attachment)
}

fn extension_of(name: &str) -> String {
    std::path::Path::new(name)
        .extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .unwrap_or_default()
}

/// Decides what a file is by its name and makes it an attachment: images as they are, PDF
/// and .docx as their text, anything else as UTF-8 text unless it is binary.
pub fn attachment_from_bytes(name: &str, bytes: Vec<u8>) -> Result<Attachment, ToolError> {
    let size = bytes.len() as u64;
    let extension = extension_of(name);
    let attachment = |media_type: &str, kind, text: Option<String>, image| {
        let (text, truncated_from) = match text {
            Some(text) => {
                let total = text.chars().count();
                if total > ATTACH_TEXT_MAX {
                    (
                        Some(text.chars().take(ATTACH_TEXT_MAX).collect()),
                        Some(total as u64),
                    )
                } else {
                    (Some(text), None)
                }
            }
            None => (None, None),
        };
        Attachment {
            name: name.to_string(),
            path: String::new(),
            media_type: media_type.into(),
            size_bytes: size,
            kind,
            text,
            truncated_from,
            image,
        }
    };
    if let Some(media_type) = image_type(&extension) {
        if size > ATTACH_IMAGE_MAX {
            return Err(too_big("image", size, ATTACH_IMAGE_MAX));
        }
        return Ok(attachment(
            media_type,
            AttachmentKind::Image,
            None,
            Some(bytes),
        ));
    }
    if size > ATTACH_FILE_MAX {
        return Err(too_big("file", size, ATTACH_FILE_MAX));
    }
    let document = |r: Result<cowork_documents::DocumentText, cowork_documents::DocumentError>| {
        r.map(|d| d.text)
            .map_err(|e| ToolError::invalid(format!("{name}: {e}")))
    };
    match extension.as_str() {
        "pdf" => Ok(attachment(
            "application/pdf",
            AttachmentKind::Text,
            Some(document(cowork_documents::pdf(&bytes))?),
            None,
        )),
        "docx" => Ok(attachment(
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            AttachmentKind::Text,
            Some(document(cowork_documents::docx(&bytes))?),
            None,
        )),
        _ => {
            if bytes[..bytes.len().min(8192)].contains(&0) {
                return Err(ToolError::invalid(format!(
                    "{name} is not a text file — attach text, Markdown, code, a PDF, a .docx or an image (PNG, JPEG, WebP, GIF)"
                )));
            }
            let media_type = match extension.as_str() {
                "md" | "markdown" => "text/markdown",
                _ => "text/plain",
            };
            Ok(attachment(
                media_type,
                AttachmentKind::Text,
                Some(String::from_utf8_lossy(&bytes).into_owned()),
                None,
            ))
        }
    }
}

impl Target for AttachFileInput {
    fn target(&self, _: &EffectEnv) -> String {
        self.path.clone()
    }
}

fn attachment_text(out: &Attachment) -> String {
    match (&out.text, out.kind) {
        (Some(text), _) => format!("{} ({}):\n{text}", out.name, out.media_type),
        (None, _) => format!(
            "{} ({}, {} bytes)",
            out.name, out.media_type, out.size_bytes
        ),
    }
}

fn attachment_content(out: &Attachment) -> Vec<Content> {
    use base64::Engine;
    let mut content = vec![Content::Text {
        text: attachment_text(out),
    }];
    if let Some(bytes) = &out.image {
        content.push(Content::Image {
            mime_type: out.media_type.clone(),
            data_base64: base64::engine::general_purpose::STANDARD.encode(bytes),
        });
    }
    content
}

#[tools(list = attach_tools)]
impl FilesTools {
    #[tool(name = "attach_file", title = "Attach file", category = "files", read_only, idempotent,
           effects = [FsRead], plan = Self::plan_read, text = attachment_text,
           content = attachment_content,
           description = "Read a whole file as an attachment: text, Markdown and code as they are, PDF and Word (.docx) documents as their text, images (PNG, JPEG, WebP, GIF) as images. Text over 200,000 characters is cut.")]
    async fn attach_file(
        &self,
        _: &AttachFileInput,
        plan: &PathBuf,
        ctx: &ToolContext,
    ) -> ToolResult<Attachment> {
        let path = paths::planned(&ctx.env, plan)?;
        tokio::task::spawn_blocking(move || read_attachment(&path))
            .await
            .map_err(|e| ToolError::failed(e.to_string()))?
    }
}
