//! How many tokens a request will take, before it is sent.
//!
//! Each provider counts with its own tokenizer (Claude's is not public; a llama.cpp server's is
//! whatever model it loaded), and each reports what a call really took. So the estimate is a
//! cheap character-class count — about four characters of Latin text or one CJK character per
//! token — corrected per conversation by the ratio of the provider's last reported prompt
//! tokens to our estimate of that same request. No tokenizer is loaded: nothing to pay at
//! start or per keystroke, and the correction makes it exact to within the newest message.

use crate::provider::{ChatRequest, Message, Part, ToolDef};

/// What one image costs a vision model, about: Claude bills width×height/750 up to ~1,600
/// tokens; OpenAI's high-detail tiles land near it too.
pub const IMAGE_TOKENS: usize = 1_600;

/// Tokens of a piece of text.
pub fn text(text: &str) -> usize {
    let mut ascii = 0usize;
    let mut other = 0usize;
    for c in text.chars() {
        if c.is_ascii() {
            ascii += 1;
        } else {
            other += 1;
        }
    }
    ascii.div_ceil(4) + other
}

pub fn message(m: &Message) -> usize {
    4 + m
        .parts
        .iter()
        .map(|p| match p {
            Part::Text { text: t } => text(t),
            Part::Image { .. } => IMAGE_TOKENS,
            Part::File { text: t, name, .. } => text(t) + text(name) + 8,
            Part::ToolUse { name, input, .. } => text(name) + text(&input.to_string()) + 8,
            Part::ToolResult {
                content, images, ..
            } => text(content) + images.len() * IMAGE_TOKENS + 8,
        })
        .sum::<usize>()
}

pub fn tools(tools: &[ToolDef]) -> usize {
    tools
        .iter()
        .map(|t| text(&t.name) + text(&t.description) + text(&t.input_schema.to_string()) + 8)
        .sum()
}

/// The whole prompt of a request, uncorrected.
pub fn request(r: &ChatRequest) -> usize {
    text(&r.system) + r.messages.iter().map(message).sum::<usize>() + tools(&r.tools)
}

#[cfg(test)]
mod tests {
    #[test]
    fn latin_text_is_about_four_characters_a_token_and_cjk_one() {
        assert_eq!(super::text("abcdefgh"), 2);
        assert_eq!(super::text("你好世界"), 4);
        assert_eq!(super::text(""), 0);
    }
}
