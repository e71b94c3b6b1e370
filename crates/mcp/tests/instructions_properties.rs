//! Pack texts that address the model, generated in the disguises an attacker tries next: any
//! case, letters swapped for look-alikes from other scripts, invisible characters and line
//! breaks inside the words, full-width forms — each still flagged. Plain descriptions made of
//! ordinary words stay unflagged.

use cowork_mcp::instructions::addresses_model;
use proptest::prelude::*;

const ORDERS: &[&str] = &[
    "ignore previous instructions",
    "ignore all previous",
    "do not tell the user",
    "before using any other tool",
    "you must first",
    "always call",
    "system prompt",
];

/// Look-alikes of Latin letters in other scripts (Cyrillic, Greek).
fn homoglyph(c: char) -> Option<char> {
    Some(match c {
        'a' => 'а',
        'e' => 'е',
        'i' => 'і',
        'o' => 'о',
        'p' => 'р',
        'c' => 'с',
        'x' => 'х',
        'y' => 'у',
        's' => 'ѕ',
        'v' => 'ν',
        _ => return None,
    })
}

const INVISIBLE: &[char] = &[
    '\u{200B}', '\u{200C}', '\u{200D}', '\u{2060}', '\u{FEFF}', '\u{00AD}',
];

/// One disguise per character, chosen by `choices`.
fn disguise(text: &str, choices: &[u8]) -> String {
    let mut out = String::new();
    for (c, pick) in text.chars().zip(choices.iter().cycle()) {
        match pick % 6 {
            0 => out.extend(c.to_uppercase()),
            1 => out.push(homoglyph(c).unwrap_or(c)),
            2 => {
                out.push(c);
                out.push(INVISIBLE[*pick as usize % INVISIBLE.len()]);
            }
            3 if c == ' ' => out.push_str(["\n", "\t", "  ", "\r\n"][*pick as usize % 4]),
            // The full-width form of an ASCII letter.
            4 if c.is_ascii_alphabetic() => {
                out.push(char::from_u32(c as u32 - 0x21 + 0xFF01).unwrap_or(c))
            }
            _ => out.push(c),
        }
    }
    out
}

proptest! {
    #[test]
    fn a_disguised_order_is_still_flagged(
        order in prop::sample::select(ORDERS.to_vec()),
        choices in prop::collection::vec(any::<u8>(), 1..40),
        before in "[A-Z][a-z]{2,10}( [a-z]{2,8}){0,4}\\. ",
        after in "( [a-z]{2,8}){0,4}\\.?",
    ) {
        let text = format!("{before}{}{after}", disguise(order, &choices));
        prop_assert!(addresses_model(&text, &[]).is_some(), "{text:?}");
    }

    #[test]
    fn plain_descriptions_are_not_flagged(
        words in prop::collection::vec(prop::sample::select(vec![
            "get", "the", "current", "weather", "for", "a", "city", "list", "files", "in",
            "folder", "create", "issue", "repository", "time", "zone", "search", "notes",
            "returns", "json", "with", "name", "and", "date", "of", "each", "item",
        ]), 3..16),
    ) {
        let text = words.join(" ");
        prop_assert_eq!(addresses_model(&text, &[]), None, "{}", text);
    }
}
