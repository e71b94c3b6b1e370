//! The mail tools. Reading is IMAP (`imap.rs`) and open-world (its output taints); sending
//! builds the message with `lettre`, reviews it as `mail.send(account → recipients)` (always an
//! ask unless a rule allows those recipients) and commits it to the outbox.

use crate::account::{self, MailAccount};
use crate::imap::{self, Criteria};
use crate::outbox::{self, NewMessage, OutboxRow, Queued};
use crate::parse::{Message, ReplyBasis, Summary};
use crate::{MailTools, Shared, db_error};
use cowork_contract::{CallPlan, Effect, EffectEnv, ToolContext, ToolError, ToolResult, tools};
use lettre::message::header::ContentType;
use lettre::message::{Attachment, Mailbox, MultiPart, SinglePart};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

fn account_name(shared: &Shared, wanted: Option<&str>) -> Result<String, ToolError> {
    account::resolve_name(&shared.db.lock().unwrap(), wanted)
}

/// The account a call uses, signed in: a call that needs the person to sign in first waits for
/// it (suspended) when `ctx` can.
async fn load(
    shared: &Shared,
    wanted: Option<&str>,
    ctx: &ToolContext,
) -> Result<MailAccount, ToolError> {
    let name = account_name(shared, wanted)?;
    account::load(shared, &name)
        .await
        .map_err(|e| e.into_tool_error(Some(ctx)))
}

/// The largest file `email_send` attaches (most servers refuse bigger messages).
const MAX_ATTACHMENT: u64 = 25 * 1024 * 1024;

// ---------------------------------------------------------------- email_check

#[derive(Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct CheckInput {
    /// Default `INBOX`.
    pub folder: Option<String>,
    #[serde(default)]
    pub unread_only: bool,
    /// Sender address or name contains this.
    pub from: Option<String>,
    pub subject: Option<String>,
    /// Anywhere in the message.
    pub text: Option<String>,
    /// `YYYY-MM-DD`: only mail from this day on.
    pub since: Option<String>,
    /// At most this many, newest first (default 20, max 1000).
    pub limit: Option<usize>,
    pub account: Option<String>,
}

#[derive(Serialize, JsonSchema)]
pub struct CheckOutput {
    pub account: String,
    pub folder: String,
    /// How many matched in all (the list holds the newest `limit`).
    pub total: usize,
    pub messages: Vec<Summary>,
}

fn check_text(out: &CheckOutput) -> String {
    if out.messages.is_empty() {
        return format!("No matching mail in {} ({}).", out.folder, out.account);
    }
    let mut lines = vec![format!(
        "{} of {} in {} ({}):",
        out.messages.len(),
        out.total,
        out.folder,
        out.account
    )];
    lines.extend(out.messages.iter().map(|m| {
        format!(
            "#{} {}{} — {} ({})",
            m.uid,
            if m.unread { "● " } else { "" },
            m.subject,
            m.from,
            m.date.as_deref().unwrap_or("no date")
        )
    }));
    lines.join("\n")
}

// ---------------------------------------------------------------- email_read

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadInput {
    /// The message's uid from email_check.
    pub uid: u32,
    pub folder: Option<String>,
    /// Mark it read on the server (default false: reading for the person is not them reading).
    #[serde(default)]
    pub mark_read: bool,
    pub account: Option<String>,
}

fn read_text(m: &Message) -> String {
    let mut text = format!(
        "From: {}\nTo: {}\nSubject: {}\nDate: {}\n\n{}",
        m.from,
        m.to.join(", "),
        m.subject,
        m.date.as_deref().unwrap_or(""),
        m.text
    );
    if m.truncated {
        text.push_str("\n[… cut at 100 kB]");
    }
    for a in &m.attachments {
        text.push_str(&format!(
            "\n[attachment: {} ({}, {} bytes)]",
            a.name, a.content_type, a.size
        ));
    }
    text
}

// ---------------------------------------------------------------- sending

fn mailbox(text: &str) -> Result<Mailbox, ToolError> {
    text.trim()
        .parse::<Mailbox>()
        .map_err(|e| ToolError::invalid(format!("{text:?} is not an email address ({e})")))
}

fn addresses(list: &[String]) -> Result<Vec<Mailbox>, ToolError> {
    list.iter().map(|a| mailbox(a)).collect()
}

/// Every envelope recipient (To, Cc, Bcc), lower-cased: what the review and rules see.
fn recipients(lists: &[&[String]]) -> Result<Vec<String>, ToolError> {
    let mut out = Vec::new();
    for list in lists {
        for m in addresses(list)? {
            let address = m.email.to_string().to_lowercase();
            if !out.contains(&address) {
                out.push(address);
            }
        }
    }
    if out.is_empty() {
        return Err(ToolError::invalid(
            "no recipients: give at least one address in `to`",
        ));
    }
    Ok(out)
}

fn content_type_of(path: &std::path::Path) -> ContentType {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let mime = match ext.as_str() {
        "pdf" => "application/pdf",
        "txt" | "md" => "text/plain; charset=utf-8",
        "html" | "htm" => "text/html; charset=utf-8",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "csv" => "text/csv; charset=utf-8",
        "ics" => "text/calendar; charset=utf-8",
        "zip" => "application/zip",
        "json" => "application/json",
        "docx" => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xlsx" => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        _ => "application/octet-stream",
    };
    ContentType::parse(mime).unwrap_or(ContentType::TEXT_PLAIN)
}

/// What sending is reviewed as: the account and its recipients, and reading each attachment.
fn send_plan(
    account: String,
    recipients: Vec<String>,
    env: &EffectEnv,
    attachments: &[String],
) -> CallPlan {
    let mut effects = vec![Effect::MailSend {
        account,
        recipients,
    }];
    effects.extend(attachments.iter().map(|p| Effect::FsRead {
        path: env.resolve_path(p).to_string_lossy().into_owned(),
    }));
    CallPlan::new(effects)
}

struct Draft<'a> {
    to: &'a [String],
    cc: &'a [String],
    bcc: &'a [String],
    subject: &'a str,
    text: &'a str,
    html: Option<&'a str>,
    attachments: &'a [String],
    in_reply_to: Option<&'a str>,
    references: Vec<String>,
}

/// Builds the message once, exactly as it will leave, and queues it.
async fn queue(
    shared: &Shared,
    account: &MailAccount,
    draft: Draft<'_>,
    ctx: &ToolContext,
) -> Result<Queued, ToolError> {
    let domain = account.email.rsplit('@').next().unwrap_or("cowork.local");
    let message_id = format!("{}@{domain}", uuid::Uuid::new_v4().simple());
    let builder = headers(account, &draft, &message_id)?;
    let message = body(builder, &draft, ctx)?;
    let envelope = message.envelope();
    let sender = envelope
        .from()
        .map(|a| a.to_string())
        .unwrap_or_else(|| account.email.clone());
    let to: Vec<String> = envelope.to().iter().map(|a| a.to_string()).collect();
    let new = NewMessage {
        account: account.name.clone(),
        message_id,
        sender,
        recipients: to,
        subject: draft.subject.into(),
        raw: message.formatted(),
        conversation: ctx.conversation_id.clone(),
    };
    let queued =
        outbox::enqueue(&shared.db.lock().unwrap(), new, shared.undo_delay).map_err(db_error)?;
    shared.queued_here.lock().unwrap().push(queued.id);
    shared.wake.notify_one();
    Ok(queued)
}

/// The message's headers: sender, recipients, subject, and the thread it answers.
fn headers(
    account: &MailAccount,
    draft: &Draft<'_>,
    message_id: &str,
) -> Result<lettre::message::MessageBuilder, ToolError> {
    let from = Mailbox::new(
        account.display_name.clone(),
        account.email.parse().map_err(|e| {
            ToolError::failed(format!(
                "account {:?}: its address {:?} is invalid ({e})",
                account.name, account.email
            ))
        })?,
    );
    let mut builder = lettre::Message::builder()
        .from(from)
        .subject(draft.subject)
        .message_id(Some(format!("<{message_id}>")))
        .date_now()
        .user_agent("Cowork".into());
    for m in addresses(draft.to)? {
        builder = builder.to(m);
    }
    for m in addresses(draft.cc)? {
        builder = builder.cc(m);
    }
    for m in addresses(draft.bcc)? {
        builder = builder.bcc(m);
    }
    if let Some(parent) = draft.in_reply_to {
        builder = builder.in_reply_to(format!("<{parent}>"));
        builder = builder.references(
            draft
                .references
                .iter()
                .map(|r| format!("<{r}>"))
                .collect::<Vec<_>>()
                .join(" "),
        );
    }
    Ok(builder)
}

/// The message with its body: plain text alone, or parts for the HTML version and the
/// attachments.
fn body(
    builder: lettre::message::MessageBuilder,
    draft: &Draft<'_>,
    ctx: &ToolContext,
) -> Result<lettre::Message, ToolError> {
    let body = match draft.html {
        Some(html) => MultiPart::alternative_plain_html(draft.text.to_string(), html.to_string()),
        None => MultiPart::mixed().singlepart(SinglePart::plain(draft.text.to_string())),
    };
    if draft.attachments.is_empty() && draft.html.is_none() {
        builder.singlepart(SinglePart::plain(draft.text.to_string()))
    } else {
        let mut mixed = MultiPart::mixed().multipart(body);
        for raw in draft.attachments {
            mixed = mixed.singlepart(attachment(raw, ctx)?);
        }
        builder.multipart(mixed)
    }
    .map_err(|e| ToolError::invalid(format!("the message cannot be built: {e}")))
}

/// One file of the workspace as an attachment.
fn attachment(raw: &str, ctx: &ToolContext) -> Result<SinglePart, ToolError> {
    // Resolved as the review resolved it, and opened only if it is still what was
    // reviewed: a file swapped for a symlink after the approval is refused, not mailed.
    let path = ctx.env.resolve_path(raw);
    let file = ctx.env.open_reviewed(&path)?;
    let meta = file
        .metadata()
        .map_err(|e| ToolError::invalid(format!("attachment {}: {e}", path.display())))?;
    if meta.len() > MAX_ATTACHMENT {
        return Err(ToolError::invalid(format!(
            "attachment {} is {} MB; the limit is 25 MB",
            path.display(),
            meta.len() / 1_000_000
        )));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    std::io::Read::read_to_end(
        &mut std::io::Read::take(&file, MAX_ATTACHMENT + 1),
        &mut bytes,
    )
    .map_err(|e| ToolError::invalid(format!("attachment {}: {e}", path.display())))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "attachment".into());
    Ok(Attachment::new(name).body(bytes, content_type_of(&path)))
}

fn queued_text(q: &Queued) -> String {
    format!(
        "Queued \"{}\" to {} — it leaves at {} (undo with email_undo id {}).",
        q.subject,
        q.recipients.join(", "),
        q.send_at,
        q.id
    )
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendInput {
    pub to: Vec<String>,
    #[serde(default)]
    pub cc: Vec<String>,
    #[serde(default)]
    pub bcc: Vec<String>,
    pub subject: String,
    /// Plain text body.
    pub body: String,
    /// An HTML version of the body (sent alongside the plain text).
    pub html: Option<String>,
    /// Files from the workspace to attach.
    #[serde(default)]
    pub attachments: Vec<String>,
    pub account: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplyInput {
    /// The uid of the message replied to (read it first with email_read).
    pub uid: u32,
    pub folder: Option<String>,
    pub body: String,
    pub html: Option<String>,
    /// Also reply to everyone in To and Cc (default: only the sender).
    #[serde(default)]
    pub reply_all: bool,
    #[serde(default)]
    pub attachments: Vec<String>,
    pub account: Option<String>,
}

/// Who a reply goes to: Reply-To (else From), plus for reply-all the other To/Cc minus ourselves.
fn reply_recipients(basis: &ReplyBasis, me: &str, all: bool) -> (Vec<String>, Vec<String>) {
    let me = me.to_lowercase();
    let to: Vec<String> = if basis.reply_to.is_empty() {
        basis.from.clone()
    } else {
        basis.reply_to.clone()
    };
    let cc: Vec<String> = if all {
        basis
            .to
            .iter()
            .chain(&basis.cc)
            .filter(|a| **a != me && !to.contains(a))
            .cloned()
            .collect()
    } else {
        Vec::new()
    };
    (to, cc)
}

/// The headers of the message replied to, as `email_read` kept them.
fn reply_basis(
    shared: &Shared,
    account: &str,
    input: &ReplyInput,
) -> Result<ReplyBasis, ToolError> {
    let folder = input.folder.clone().unwrap_or_else(|| "INBOX".into());
    shared
        .read
        .lock()
        .unwrap()
        .get(&(account.to_string(), folder.clone(), input.uid))
        .cloned()
        .ok_or_else(|| ToolError::invalid(format!("read message {} in {folder:?} with email_read first, so the reply's recipients can be reviewed", input.uid)))
}

fn my_address(shared: &Shared, account: &str) -> String {
    match cowork_store::accounts::get(&shared.db.lock().unwrap(), account) {
        Ok(Some(cowork_store::accounts::Account {
            config: cowork_store::accounts::AccountConfig::Mail { email, .. },
            ..
        })) => email,
        _ => String::new(),
    }
}

// ---------------------------------------------------------------- undo / outbox

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UndoInput {
    /// The outbox id email_send or email_reply returned.
    pub id: i64,
}

#[derive(Serialize, JsonSchema)]
pub struct UndoOutput {
    pub id: i64,
    pub state: String,
}

fn undo_text(out: &UndoOutput) -> String {
    format!("Message {} {}: it will not be sent.", out.id, out.state)
}

#[derive(Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct OutboxInput {
    pub limit: Option<usize>,
}

#[derive(Serialize, JsonSchema)]
pub struct OutboxOutput {
    pub messages: Vec<OutboxRow>,
}

fn outbox_text(out: &OutboxOutput) -> String {
    if out.messages.is_empty() {
        return "The outbox is empty.".into();
    }
    out.messages
        .iter()
        .map(|m| {
            format!(
                "{} [{}] \"{}\" → {}{}",
                m.id,
                m.state,
                m.subject,
                m.recipients.join(", "),
                m.error
                    .as_ref()
                    .map(|e| format!(" — {e}"))
                    .unwrap_or_default()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tools(list = mail_tools)]
impl MailTools {
    #[tool(name = "email_check", title = "Check mail", category = "mail", effects = [MailRead],
           read_only, idempotent, open_world, plan = Self::plan_check, text = check_text,
           description = "List or search mail (unread, from, subject, text, since, folder): newest first, with summaries.")]
    async fn check(&self, input: &CheckInput, ctx: &ToolContext) -> ToolResult<CheckOutput> {
        let since = input
            .since
            .as_deref()
            .map(|s| {
                chrono::NaiveDate::parse_from_str(s.trim(), "%Y-%m-%d")
                    .map_err(|_| ToolError::invalid(format!("`since` {s:?}: use YYYY-MM-DD")))
            })
            .transpose()?;
        let account = load(&self.shared, input.account.as_deref(), ctx).await?;
        let folder = input.folder.clone().unwrap_or_else(|| "INBOX".into());
        let criteria = Criteria {
            unread_only: input.unread_only,
            from: input.from.as_deref(),
            subject: input.subject.as_deref(),
            text: input.text.as_deref(),
            since,
        };
        let mut session = imap::connect(&account).await?;
        let result = imap::check(
            &mut session,
            &account,
            &folder,
            &criteria,
            input.limit.unwrap_or(20).clamp(1, 1000),
        )
        .await;
        let _ = session.logout().await;
        let (messages, total) = result?;
        Ok(CheckOutput {
            account: account.name,
            folder,
            total,
            messages,
        })
    }

    fn plan_check(&self, input: &CheckInput, _: &EffectEnv) -> Result<CallPlan, ToolError> {
        self.account_read_plan(input.account.as_deref())
    }

    #[tool(name = "email_read", title = "Read mail", category = "mail", effects = [MailRead, SensitiveRead],
           read_only, idempotent, open_world, plan = Self::plan_read, text = read_text,
           description = "Read one message: headers, plain text (HTML converted), attachment list.")]
    async fn read(&self, input: &ReadInput, ctx: &ToolContext) -> ToolResult<Message> {
        let account = load(&self.shared, input.account.as_deref(), ctx).await?;
        let folder = input.folder.clone().unwrap_or_else(|| "INBOX".into());
        let mut session = imap::connect(&account).await?;
        let result = imap::read(&mut session, &account, &folder, input.uid, input.mark_read).await;
        let _ = session.logout().await;
        let (message, basis) = result?;
        self.shared
            .read
            .lock()
            .unwrap()
            .insert((account.name, folder, input.uid), basis);
        Ok(message)
    }

    /// A message's body is someone's private message to the person: read as such (asked until
    /// the person allows this account's mail, `email_read(<account>)`). Headers are not.
    fn plan_read(&self, input: &ReadInput, _: &EffectEnv) -> Result<CallPlan, ToolError> {
        let account = account_name(&self.shared, input.account.as_deref())?;
        Ok(CallPlan::new(vec![
            Effect::MailRead {
                account: account.clone(),
            },
            Effect::SensitiveRead {
                category: cowork_contract::Sensitive::PrivateMessages,
                subject: account,
            },
        ]))
    }

    /// Reading one account's mail headers: what `email_check` is reviewed as (`email_read`
    /// adds the body, a private message).
    fn account_read_plan(&self, account: Option<&str>) -> Result<CallPlan, ToolError> {
        Ok(CallPlan::new(vec![Effect::MailRead {
            account: account_name(&self.shared, account)?,
        }]))
    }

    #[tool(name = "email_send", title = "Send email", category = "mail", effects = [MailSend, FsRead],
           plan = Self::plan_send, text = queued_text,
           description = "Send an email (plain text, optional HTML, attachments from the workspace). It waits in the outbox for the undo delay before it leaves.")]
    async fn send(&self, input: &SendInput, ctx: &ToolContext) -> ToolResult<Queued> {
        let account = load(&self.shared, input.account.as_deref(), ctx).await?;
        let draft = Draft {
            to: &input.to,
            cc: &input.cc,
            bcc: &input.bcc,
            subject: &input.subject,
            text: &input.body,
            html: input.html.as_deref(),
            attachments: &input.attachments,
            in_reply_to: None,
            references: Vec::new(),
        };
        queue(&self.shared, &account, draft, ctx).await
    }

    fn plan_send(&self, input: &SendInput, env: &EffectEnv) -> Result<CallPlan, ToolError> {
        let account = account_name(&self.shared, input.account.as_deref())?;
        let recipients = recipients(&[&input.to, &input.cc, &input.bcc])?;
        Ok(send_plan(account, recipients, env, &input.attachments))
    }

    #[tool(name = "email_reply", title = "Reply to email", category = "mail",
           effects = [MailSend, FsRead], plan = Self::plan_reply, text = queued_text,
           description = "Reply to a message (read it first with email_read), keeping the thread; optionally reply to all.")]
    async fn reply(&self, input: &ReplyInput, ctx: &ToolContext) -> ToolResult<Queued> {
        let account = load(&self.shared, input.account.as_deref(), ctx).await?;
        let basis = reply_basis(&self.shared, &account.name, input)?;
        let (to, cc) = reply_recipients(&basis, &account.email, input.reply_all);
        let subject = if basis.subject.to_lowercase().starts_with("re:") {
            basis.subject.clone()
        } else {
            format!("Re: {}", basis.subject)
        };
        let mut references = basis.references.clone();
        references.extend(basis.message_id.clone());
        let draft = Draft {
            to: &to,
            cc: &cc,
            bcc: &[],
            subject: &subject,
            text: &input.body,
            html: input.html.as_deref(),
            attachments: &input.attachments,
            in_reply_to: basis.message_id.as_deref(),
            references,
        };
        queue(&self.shared, &account, draft, ctx).await
    }

    fn plan_reply(&self, input: &ReplyInput, env: &EffectEnv) -> Result<CallPlan, ToolError> {
        let account = account_name(&self.shared, input.account.as_deref())?;
        let basis = reply_basis(&self.shared, &account, input)?;
        let me = my_address(&self.shared, &account);
        let (to, cc) = reply_recipients(&basis, &me, input.reply_all);
        let recipients = recipients(&[&to, &cc])?;
        Ok(send_plan(account, recipients, env, &input.attachments))
    }

    #[tool(name = "email_undo", title = "Undo send", category = "mail", idempotent,
           text = undo_text,
           description = "Take back a message still waiting in the outbox (within the undo delay).")]
    async fn undo(&self, input: &UndoInput) -> ToolResult<UndoOutput> {
        let state = outbox::cancel(&self.shared.db.lock().unwrap(), input.id)?;
        Ok(UndoOutput {
            id: input.id,
            state,
        })
    }

    #[tool(name = "email_outbox", title = "Outbox", category = "mail", effects = [MailRead], read_only,
           idempotent, plan = Self::plan_list_outbox, text = outbox_text,
           description = "Messages recently sent or waiting: state (queued, sent, failed, cancelled, uncertain) and errors.")]
    async fn list_outbox(&self, input: &OutboxInput) -> ToolResult<OutboxOutput> {
        Ok(OutboxOutput {
            messages: outbox::list(
                &self.shared.db.lock().unwrap(),
                input.limit.unwrap_or(20).clamp(1, 500),
            )
            .map_err(db_error)?,
        })
    }

    fn plan_list_outbox(&self, _input: &OutboxInput, _: &EffectEnv) -> Result<CallPlan, ToolError> {
        Ok(CallPlan::new(vec![Effect::MailRead {
            account: "outbox".into(),
        }]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reply_all_leaves_out_ourselves_and_prefers_reply_to() {
        let basis = ReplyBasis {
            from: vec!["bob@x.test".into()],
            reply_to: vec!["list@x.test".into()],
            to: vec!["me@x.test".into(), "carol@x.test".into()],
            cc: vec!["dave@x.test".into()],
            ..Default::default()
        };
        assert_eq!(
            reply_recipients(&basis, "Me@x.test", false),
            (vec!["list@x.test".to_string()], vec![])
        );
        assert_eq!(
            reply_recipients(&basis, "me@x.test", true).1,
            ["carol@x.test", "dave@x.test"]
        );
    }
}
