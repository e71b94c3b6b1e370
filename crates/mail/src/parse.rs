//! Incoming messages, decoded with `mail-parser`: RFC 2047 headers and MIME bodies in any charset
//! it knows (GB2312/GBK/Big5/ISO-2022-JP included via `full_encoding`), quoted-printable and
//! base64, HTML turned into text.

use mail_parser::{Address, HeaderValue, MessageParser, MimeHeaders};
use schemars::JsonSchema;
use serde::Serialize;

/// What a listing shows of one message.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Summary {
    pub uid: u32,
    pub from: String,
    pub subject: String,
    /// RFC 3339.
    pub date: Option<String>,
    pub unread: bool,
    pub size: u32,
}

/// The headers a reply needs, kept from the last read so a reply's review can name its
/// recipients without asking the server again.
#[derive(Clone, Debug, Default)]
pub struct ReplyBasis {
    pub from: Vec<String>,
    pub reply_to: Vec<String>,
    pub to: Vec<String>,
    pub cc: Vec<String>,
    pub subject: String,
    pub message_id: Option<String>,
    pub references: Vec<String>,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Attachment {
    pub name: String,
    pub content_type: String,
    pub size: usize,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Message {
    pub uid: u32,
    pub folder: String,
    pub from: String,
    pub to: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cc: Vec<String>,
    pub subject: String,
    pub date: Option<String>,
    pub message_id: Option<String>,
    /// The message this one answers (its thread parent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_reply_to: Option<String>,
    /// The body as plain text (HTML converted), cut at 100 kB.
    pub text: String,
    pub truncated: bool,
    pub attachments: Vec<Attachment>,
}

const MAX_TEXT: usize = 100_000;

fn display(addr: &mail_parser::Addr<'_>) -> String {
    match (addr.name(), addr.address()) {
        (Some(name), Some(address)) => format!("{name} <{address}>"),
        (None, Some(address)) => address.to_string(),
        (Some(name), None) => name.to_string(),
        (None, None) => String::new(),
    }
}

fn shown(addresses: Option<&Address<'_>>) -> Vec<String> {
    addresses
        .map(|a| a.iter().map(display).filter(|s| !s.is_empty()).collect())
        .unwrap_or_default()
}

fn bare(addresses: Option<&Address<'_>>) -> Vec<String> {
    addresses
        .map(|a| {
            a.iter()
                .filter_map(|x| x.address().map(str::to_lowercase))
                .collect()
        })
        .unwrap_or_default()
}

fn ids(value: &HeaderValue<'_>) -> Vec<String> {
    match value {
        HeaderValue::Text(t) => vec![t.to_string()],
        HeaderValue::TextList(list) => list.iter().map(|t| t.to_string()).collect(),
        _ => Vec::new(),
    }
}

fn date_of(message: &mail_parser::Message<'_>) -> Option<String> {
    message.date().map(|d| d.to_rfc3339())
}

/// A listing row from the message's header block.
pub fn summary(uid: u32, header: &[u8], unread: bool, size: u32) -> Summary {
    let parsed = MessageParser::default().parse_headers(header);
    let (from, subject, date) = match &parsed {
        Some(m) => (
            shown(m.from()).join(", "),
            m.subject().unwrap_or("").to_string(),
            date_of(m),
        ),
        None => (String::new(), String::new(), None),
    };
    Summary {
        uid,
        from,
        subject,
        date,
        unread,
        size,
    }
}

/// The whole message, and what a reply to it needs.
pub fn message(uid: u32, folder: &str, raw: &[u8]) -> Result<(Message, ReplyBasis), String> {
    let m = MessageParser::default()
        .parse(raw)
        .ok_or("the message could not be parsed as RFC 5322")?;
    let mut text = m.body_text(0).map(|t| t.into_owned()).unwrap_or_default();
    let truncated = text.len() > MAX_TEXT;
    if truncated {
        let mut cut = MAX_TEXT;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
    let attachments = m
        .attachments()
        .map(|part| Attachment {
            name: part.attachment_name().unwrap_or("(unnamed)").to_string(),
            content_type: part
                .content_type()
                .map(|c| match c.subtype() {
                    Some(sub) => format!("{}/{sub}", c.ctype()),
                    None => c.ctype().to_string(),
                })
                .unwrap_or_else(|| "application/octet-stream".into()),
            size: part.len(),
        })
        .collect();
    let basis = ReplyBasis {
        from: bare(m.from()),
        reply_to: bare(m.reply_to()),
        to: bare(m.to()),
        cc: bare(m.cc()),
        subject: m.subject().unwrap_or("").to_string(),
        message_id: m.message_id().map(String::from),
        references: ids(m.references()),
    };
    let view = Message {
        uid,
        folder: folder.into(),
        from: shown(m.from()).join(", "),
        to: shown(m.to()),
        cc: shown(m.cc()),
        subject: basis.subject.clone(),
        date: date_of(&m),
        message_id: basis.message_id.clone(),
        in_reply_to: ids(m.in_reply_to()).into_iter().next(),
        text,
        truncated,
        attachments,
    };
    Ok((view, basis))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gb2312_subject_quoted_printable_body_and_an_attachment_decode() {
        // "会议议程" in GB2312, base64 encoded-word; body in quoted-printable GB2312.
        let raw = b"From: =?gb2312?B?1cW3qw==?= <zhang@example.test>\r\nTo: alice@example.test\r\n\
Subject: =?gb2312?B?u+HS6dLps8w=?=\r\nMessage-ID: <m1@example.test>\r\nReferences: <a@x> <b@x>\r\n\
MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b\"\r\n\r\n--b\r\n\
Content-Type: text/plain; charset=gb2312\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n=C4=E3=BA=C3\r\n\
--b\r\nContent-Type: application/pdf; name=\"agenda.pdf\"\r\nContent-Disposition: attachment; filename=\"agenda.pdf\"\r\n\
Content-Transfer-Encoding: base64\r\n\r\nJVBERi0xLjQK\r\n--b--\r\n";
        let (m, basis) = message(7, "INBOX", raw).unwrap();
        assert_eq!(m.subject, "会议议程");
        assert_eq!(m.from, "张帆 <zhang@example.test>");
        assert_eq!(m.text.trim(), "你好");
        assert_eq!(m.attachments.len(), 1);
        assert_eq!(
            (
                m.attachments[0].name.as_str(),
                m.attachments[0].content_type.as_str()
            ),
            ("agenda.pdf", "application/pdf")
        );
        assert_eq!(basis.references, ["a@x", "b@x"]);
        assert_eq!(basis.message_id.as_deref(), Some("m1@example.test"));
    }

    /// The `.eml` corpus shipped in the mail-parser crate's package (RFC examples, legacy
    /// mailers, third-party samples, 70 malformed messages), each with the library's reference
    /// parse as JSON. Our reading of each message — subject, from, date, body text, attachments —
    /// must match the fields of that reference parse, a listing (headers only) must agree with
    /// it, and no message may panic.
    #[test]
    fn the_mail_parser_corpus_reads_as_its_reference_parses() {
        let metadata = std::process::Command::new(env!("CARGO"))
            .args(["metadata", "--format-version", "1", "--locked"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("cargo metadata");
        let metadata: serde_json::Value = serde_json::from_slice(&metadata.stdout).unwrap();
        let manifest = metadata["packages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "mail-parser")
            .and_then(|p| p["manifest_path"].as_str())
            .expect("mail-parser is a dependency");
        let root = std::path::Path::new(manifest)
            .parent()
            .unwrap()
            .join("resources/eml");
        let (mut total, mut right, mut failures) = (0, 0, Vec::new());
        for suite in ["rfc", "legacy", "thirdparty", "malformed"] {
            let mut files: Vec<_> = std::fs::read_dir(root.join(suite))
                .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == "eml"))
                .collect();
            files.sort();
            for file in files {
                total += 1;
                // The reference was made from the message with its CRs removed.
                let raw: Vec<u8> = std::fs::read(&file)
                    .unwrap()
                    .into_iter()
                    .filter(|b| *b != b'\r')
                    .collect();
                let json = std::fs::read(file.with_extension("json")).unwrap();
                let reference: mail_parser::Message<'_> = serde_json::from_slice(&json).unwrap();
                let ours = std::panic::catch_unwind(|| message(1, "INBOX", &raw));
                let Ok(Ok((ours, _))) = ours else {
                    failures.push(format!(
                        "{suite}/{}: {:?}",
                        file.display(),
                        ours.map(|r| r.err())
                    ));
                    continue;
                };
                let expected = (
                    reference.subject().unwrap_or("").to_string(),
                    shown(reference.from()).join(", "),
                    date_of(&reference),
                    reference
                        .body_text(0)
                        .map(|t| t.into_owned())
                        .unwrap_or_default(),
                    reference
                        .attachments()
                        .map(|a| a.attachment_name().unwrap_or("(unnamed)").to_string())
                        .collect::<Vec<_>>(),
                );
                let mut text = expected.3.clone();
                if text.len() > MAX_TEXT {
                    let mut cut = MAX_TEXT;
                    while !text.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    text.truncate(cut);
                }
                let got = (
                    ours.subject,
                    ours.from,
                    ours.date,
                    ours.text,
                    ours.attachments
                        .into_iter()
                        .map(|a| a.name)
                        .collect::<Vec<_>>(),
                );
                // A listing reads the header block only: it must say the same.
                let head_end = raw
                    .windows(2)
                    .position(|w| w == b"\n\n")
                    .map_or(raw.len(), |i| i + 2);
                let listed = summary(1, &raw[..head_end], false, 0);
                let listing_agrees = (listed.subject.as_str(), listed.from.as_str(), &listed.date)
                    == (got.0.as_str(), got.1.as_str(), &got.2);
                if listing_agrees && got == (expected.0, expected.1, expected.2, text, expected.4) {
                    right += 1;
                } else {
                    failures.push(format!(
                        "{suite}/{}",
                        file.file_name().unwrap().to_string_lossy()
                    ));
                }
            }
        }
        println!("mail-parser corpus: {right} of {total} messages read as the reference parse");
        assert!(total >= 100, "the corpus is there: {total}");
        assert!(
            failures.is_empty(),
            "{} differ: {}",
            failures.len(),
            failures.join(", ")
        );
    }
}
