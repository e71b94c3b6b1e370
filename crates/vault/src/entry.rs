//! One vault entry = one Markdown file with YAML front matter, readable and editable in
//! Obsidian. Keys we don't know (Obsidian's `aliases`, `cssclasses`, a plugin's) are kept as
//! they are when we rewrite a file; the body is never touched except by an explicit edit, so
//! `[[links]]` and `#tags` survive.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What an entry is. Memories are the four kinds the assistant keeps about the person; a note
/// is anything written down.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename = "VaultKind")] // the TypeScript name (JSON does not carry it)
#[schemars(rename = "Kind")] // the tool schemas' name, unchanged
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Note,
    Preference,
    Fact,
    Decision,
    Learning,
}

impl Kind {
    pub const ALL: [Kind; 5] = [
        Kind::Note,
        Kind::Preference,
        Kind::Fact,
        Kind::Decision,
        Kind::Learning,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Note => "note",
            Kind::Preference => "preference",
            Kind::Fact => "fact",
            Kind::Decision => "decision",
            Kind::Learning => "learning",
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL
            .into_iter()
            .find(|k| k.as_str().eq_ignore_ascii_case(s.trim()))
    }

    pub fn is_memory(self) -> bool {
        self != Kind::Note
    }

    /// The vault subfolder new entries of this kind go to.
    pub fn folder(self) -> &'static str {
        if self.is_memory() {
            "memories"
        } else {
            "notes"
        }
    }
}

/// Where an entry came from, so the person can see why the assistant knows it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename = "VaultSource")] // the TypeScript name (JSON does not carry it)
#[schemars(rename = "Source")] // the tool schemas' name, unchanged
pub struct Source {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
    /// The entry this one was promoted from (`promote_memory`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub promoted_from: Option<String>,
}

impl Source {
    pub fn is_empty(&self) -> bool {
        *self == Source::default()
    }
}

/// The front matter we read and write. `rest` holds every other key, in order.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FrontMatter {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "one_or_many"
    )]
    pub tags: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated: Option<String>,
    #[serde(flatten)]
    pub rest: serde_yaml_ng::Mapping,
}

/// Obsidian accepts `tags: a` as well as a list.
fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
        Nothing(()),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::One(s) => s
            .split([',', ' '])
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(String::from)
            .collect(),
        OneOrMany::Many(v) => v,
        OneOrMany::Nothing(()) => vec![],
    })
}

/// A parsed file: its front matter and its Markdown body.
#[derive(Clone, Debug, Default)]
pub struct Document {
    pub front: FrontMatter,
    pub body: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    #[error("the file is not UTF-8 text (byte {0}) — save it as UTF-8")]
    NotUtf8(usize),
    #[error("its YAML front matter is invalid: {0} — fix the block between the `---` lines")]
    Yaml(String),
}

impl Document {
    pub fn parse(bytes: &[u8]) -> Result<Document, ParseError> {
        let text = std::str::from_utf8(bytes).map_err(|e| ParseError::NotUtf8(e.valid_up_to()))?;
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let Some((yaml, body)) = split_front_matter(text) else {
            return Ok(Document {
                front: FrontMatter::default(),
                body: text.to_string(),
            });
        };
        let front: FrontMatter = if yaml.trim().is_empty() {
            FrontMatter::default()
        } else {
            serde_yaml_ng::from_str(yaml).map_err(|e| ParseError::Yaml(e.to_string()))?
        };
        Ok(Document {
            front,
            body: body.to_string(),
        })
    }

    pub fn render(&self) -> String {
        let yaml = serde_yaml_ng::to_string(&self.front).unwrap_or_default();
        let body = self.body.trim_start_matches('\n');
        format!(
            "---\n{yaml}---\n\n{body}{}",
            if body.ends_with('\n') { "" } else { "\n" }
        )
    }

    /// The title: front matter, else the first `# heading`, else the file name.
    pub fn title(&self, file_stem: &str) -> String {
        if let Some(t) = self.front.title.as_deref().filter(|t| !t.trim().is_empty()) {
            return t.trim().to_string();
        }
        self.body
            .lines()
            .find_map(|l| l.strip_prefix("# ").map(|t| t.trim().to_string()))
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| file_stem.to_string())
    }

    /// Front-matter tags plus inline `#tags` of the body (Obsidian counts both).
    pub fn tags(&self) -> Vec<String> {
        let mut tags: Vec<String> = self
            .front
            .tags
            .iter()
            .map(|t| normalize_tag(t))
            .filter(|t| !t.is_empty())
            .collect();
        for tag in inline_tags(&self.body) {
            if !tags.contains(&tag) {
                tags.push(tag);
            }
        }
        tags
    }
}

pub fn normalize_tag(tag: &str) -> String {
    tag.trim().trim_start_matches('#').to_string()
}

/// `---\n<yaml>\n---\n<body>`; None when the file has no front matter.
fn split_front_matter(text: &str) -> Option<(&str, &str)> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    if let Some(body) = rest
        .strip_prefix("---\n")
        .or_else(|| rest.strip_prefix("---\r\n"))
    {
        return Some(("", body));
    }
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Some((&rest[..offset], &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    None
}

/// `#tag` words of a Markdown body, outside code. A `#` must start a word and be followed by a
/// letter (so `# Heading`, `C#` and `#1` are not tags). Hand-written: a Markdown parser would
/// be a large dependency for this one rule.
fn inline_tags(body: &str) -> Vec<String> {
    let mut tags = Vec::new();
    let mut in_fence = false;
    for line in body.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let mut prev: Option<char> = None;
        let mut chars = line.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c == '#'
                && prev.is_none_or(char::is_whitespace)
                && chars.peek().is_some_and(|(_, n)| n.is_alphabetic())
            {
                let tag: String = line[i + 1..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '/'))
                    .collect();
                if !tags.contains(&tag) {
                    tags.push(tag);
                }
            }
            prev = Some(c);
        }
    }
    tags
}

/// File-name-safe slug that keeps letters of any script (Chinese titles stay readable).
pub fn slug(title: &str) -> String {
    let mut out = String::new();
    for c in title.trim().chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
        if out.chars().count() >= 60 {
            break;
        }
    }
    let out = out.trim_matches('-').to_string();
    if out.is_empty() { "note".into() } else { out }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn obsidian_files_round_trip_keeping_unknown_keys_links_and_tags() {
        let text = "---\ntitle: Trip\naliases: [Japan trip]\ntags: travel\ncssclasses:\n  - wide\n---\n\n# Trip\nSee [[Packing list]] #todo and `#notatag`? C# is not one, nor #1.\n";
        let doc = Document::parse(text.as_bytes()).unwrap();
        assert_eq!(doc.title("x"), "Trip");
        assert_eq!(
            doc.tags(),
            vec!["travel", "todo"],
            "a #word in `code` is not a tag"
        );
        let again = Document::parse(doc.render().as_bytes()).unwrap();
        assert_eq!(again.body, doc.body);
        assert!(doc.render().contains("aliases:"), "{}", doc.render());
        assert!(doc.render().contains("[[Packing list]]"));
        assert_eq!(again.front.rest.len(), 2);
    }

    #[test]
    fn files_without_front_matter_and_bad_files_are_told_apart() {
        let doc = Document::parse("just text\n".as_bytes()).unwrap();
        assert_eq!(doc.title("stem"), "stem");
        assert!(matches!(
            Document::parse(b"\xff\xfe bad"),
            Err(ParseError::NotUtf8(0))
        ));
        let err = Document::parse(b"---\ntitle: [unclosed\n---\nbody").unwrap_err();
        assert!(err.to_string().contains("front matter"), "{err}");
    }

    #[test]
    fn slugs_keep_any_script_and_drop_punctuation() {
        assert_eq!(slug("Meeting: Q3 plan!"), "meeting-q3-plan");
        assert_eq!(slug("周会 纪要"), "周会-纪要");
        assert_eq!(slug("???"), "note");
    }
}
