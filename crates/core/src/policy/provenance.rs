//! Where a call's risky values came from: the person's own words, or anywhere else.
//!
//! Conversation-wide taint asks about every risky call once untrusted content (a page, a mail,
//! a service's data) is in the conversation — also a message to the very person the person
//! named. Provenance narrows that: a risky effect whose values the person wrote themselves
//! (the recipient, the payee and amount, the site, the command — [`Effect::aim`]) was chosen by
//! the person, so taint does not make it ask. Everything else stays as it was.
//!
//! The design closes laundering by what counts, not by spotting tricks: a value is the
//! person's only when it is found, as a whole token, in what the person wrote in this
//! conversation (or in what a trusted tool read before any untrusted content arrived). A value
//! the model paraphrased, split, encoded, re-cased into another script or copied from a page is
//! not found, so it is untrusted — unknown provenance is untrusted provenance. The model cannot
//! add to the person's words: only the person's turns are recorded (`PolicyBridge::person_said`).

use cowork_contract::Effect;
use serde_json::Value;
use std::collections::HashSet;

/// What the person gave in one conversation, indexed for the lookups [`Said::has`] makes.
#[derive(Clone, Debug, Default)]
pub struct Said {
    /// Every text, lowercased, one per line.
    text: String,
    /// The hosts of the addresses written (`example.com`, `https://a.example.com/x` → `a.example.com`).
    hosts: HashSet<String>,
    /// The numbers written (`$1,250.50` → 1250.5).
    numbers: Vec<f64>,
}

/// Characters that may stand right before a value the person wrote: the start of a word.
fn opens(c: char) -> bool {
    c.is_whitespace() || "([{<\"'“‘«`".contains(c)
}

/// Characters that may stand right after it: the end of a word.
fn closes(c: char) -> bool {
    c.is_whitespace() || ")]}>\"'”’»`".contains(c)
}

/// Sentence punctuation after a value ("send it to bob@x.com.") ends it only when the
/// sentence goes on or stops there: `bob@x.com.evil` is another address.
fn ends_sentence(c: char) -> bool {
    ".,;:!?".contains(c)
}

/// Trims what surrounds a word (quotes, brackets, sentence punctuation) from a token.
fn bare(token: &str) -> &str {
    token.trim_matches(|c: char| opens(c) || closes(c) || ends_sentence(c))
}

fn host_of(token: &str) -> Option<String> {
    let token = bare(token);
    if token.contains('@') || !token.contains('.') {
        return None;
    }
    let url = if token.contains("://") {
        url::Url::parse(token).ok()?
    } else {
        url::Url::parse(&format!("https://{token}")).ok()?
    };
    let host = url.host_str()?.to_lowercase();
    // A bare word with a dot ("e.g.", "v1.2") is not a site: a host needs a letter-only end.
    let tld = host.rsplit('.').next()?;
    (tld.len() >= 2 && tld.chars().all(|c| c.is_ascii_alphabetic())).then_some(host)
}

fn number_of(token: &str) -> Option<f64> {
    let token = bare(token).trim_start_matches(['$', '€', '£', '¥', '+']);
    let token = token.trim_end_matches(['$', '€', '£', '¥', '%']);
    // "1,250.50": commas group thousands; "12,5" with no dot is a decimal comma.
    let plain = if token.contains('.') {
        token.replace(',', "")
    } else if token.matches(',').count() == 1 && token.split(',').nth(1)?.len() != 3 {
        token.replace(',', ".")
    } else {
        token.replace(',', "")
    };
    plain.parse::<f64>().ok().filter(|n| n.is_finite())
}

impl Said {
    pub fn new<'a>(texts: impl IntoIterator<Item = &'a str>) -> Said {
        let mut said = Said::default();
        for text in texts {
            said.add(text);
        }
        said
    }

    pub fn add(&mut self, text: &str) {
        let lower = text.to_lowercase();
        for token in lower.split_whitespace() {
            self.hosts.extend(host_of(token));
            self.numbers.extend(number_of(token));
        }
        self.text.push_str(&lower);
        self.text.push('\n');
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Whether the person wrote `value`: as a whole token or phrase of their words, as a number
    /// they wrote, or as the host of a site they named.
    pub fn has(&self, value: &str) -> bool {
        let value = value.to_lowercase();
        if value.trim().is_empty() {
            return false;
        }
        if let Some(n) = number_of(&value).filter(|_| value == bare(&value))
            && self
                .numbers
                .iter()
                .any(|m| (m - n).abs() <= 1e-9 * n.abs().max(1.0))
        {
            return true;
        }
        if value.contains("://")
            && let Some(host) = host_of(&value)
            && self.has_host(&host)
        {
            return true;
        }
        self.has_phrase(&value)
    }

    /// A site is the one named when the hosts are equal, or differ only by a leading `www.`.
    pub fn has_host(&self, host: &str) -> bool {
        let plain = host.strip_prefix("www.").unwrap_or(host);
        self.hosts.contains(host)
            || self.hosts.contains(plain)
            || self.hosts.contains(&format!("www.{plain}"))
    }

    fn has_phrase(&self, value: &str) -> bool {
        let text = &self.text;
        text.match_indices(value).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let mut after = text[at + value.len()..].chars();
            let starts = before.is_none_or(opens);
            let ends = match after.next() {
                None => true,
                Some(c) if closes(c) => true,
                Some(c) if ends_sentence(c) => after.next().is_none_or(closes),
                Some(_) => false,
            };
            starts && ends
        })
    }
}

/// Every value a call's arguments carry (strings, numbers, booleans), depth first.
fn leaves(args: &Value, out: &mut Vec<String>) {
    match args {
        Value::String(s) => out.push(s.clone()),
        Value::Number(n) => out.push(n.to_string()),
        Value::Bool(b) => out.push(b.to_string()),
        Value::Array(items) => items.iter().for_each(|v| leaves(v, out)),
        Value::Object(map) => map.values().for_each(|v| leaves(v, out)),
        Value::Null => {}
    }
}

/// What in a text points somewhere a reader could go or write to: a site's host or a mail
/// address. Found by what the token is (it parses as one), not by a list of phrases.
fn references(text: &str) -> Vec<String> {
    text.split_whitespace()
        .filter_map(|token| {
            let token = bare(token);
            match token.split_once('@') {
                Some((user, domain)) if !user.is_empty() && host_of(domain).is_some() => {
                    Some(token.to_lowercase())
                }
                Some(_) => None,
                None => host_of(token),
            }
        })
        .collect()
}

/// The first value steering one of `effects` that the person did not give, for the effects
/// `steerable` picks. An effect with an aim ([`Effect::aim`]) is the person's when its aim is
/// — written in their words, or named by the allow rule that matched (`chosen`: the person
/// picked that destination in a rule) — and no other argument points somewhere else (a link
/// or an address the person did not give: a message to the right person can still carry an
/// attacker's link). Any other effect needs every argument of the call to be the person's.
/// `None`: the person chose all of it.
pub fn unsaid(
    effects: &[Effect],
    args: &Value,
    said: &Said,
    chosen: &[&str],
    steerable: impl Fn(&Effect) -> bool,
) -> Option<String> {
    let mut arguments = Vec::new();
    leaves(args, &mut arguments);
    let given = |v: &str| chosen.iter().any(|c| c.eq_ignore_ascii_case(v)) || said.has(v);
    for effect in effects.iter().filter(|e| steerable(e)) {
        let aim = match effect.aim() {
            // It reaches nobody (a mail's empty cc): nothing of it to steer.
            Some(aim) if aim.is_empty() => continue,
            aim => aim,
        };
        let Some(aim) = aim else {
            if let Some(value) = arguments.iter().find(|v| !given(v)) {
                return Some(value.clone());
            }
            continue;
        };
        if let Some(value) = aim.iter().find(|v| !given(v)) {
            return Some(value.to_string());
        }
        let aimed: Vec<String> = aim.iter().flat_map(|v| references(v)).collect();
        let pointer = arguments
            .iter()
            .flat_map(|v| references(v))
            .find(|r| !aimed.contains(r) && !given(r) && !said.has_host(r));
        if pointer.is_some() {
            return pointer;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn said(text: &str) -> Said {
        Said::new([text])
    }

    #[test]
    fn a_value_counts_only_as_a_whole_token_of_the_persons_words() {
        let s = said("Send the summary to Bob.Smith@corp.com. Then pay (US122000) 1,250.50 €.");
        assert!(s.has("bob.smith@corp.com"));
        assert!(
            s.has("Bob.Smith@Corp.com"),
            "case does not change an address"
        );
        assert!(s.has("US122000"));
        assert!(s.has("1250.5"));
        assert!(s.has("1250.50"));
        assert!(
            !s.has("smith@corp.com"),
            "a part of an address is another mailbox"
        );
        assert!(!s.has("bob.smith@corp.com.evil.io"));
        assert!(!s.has("corp"));
        assert!(!s.has("1250"));
        assert!(!s.has(""));
        assert!(!s.has(" "));
    }

    #[test]
    fn a_site_is_the_one_named_by_its_host() {
        let s = said("summarize www.informations.com/news and tell alice");
        assert!(s.has("https://www.informations.com"));
        assert!(s.has("https://informations.com"));
        assert!(!s.has("https://informations.com.evil.io"));
        assert!(!s.has("https://evil-informations.com"));
        assert!(!said("see e.g. v1.2").has("https://e.g"));
    }

    #[test]
    fn a_payment_is_the_persons_only_when_payee_and_amount_both_are() {
        let pay = |payee: &str, amount: &str| Effect::MoneyPay {
            payee: payee.into(),
            amount: Some(amount.into()),
        };
        let s = said("Pay 100 to GB29NWBK60161331926819 for the rent");
        let any = |_: &Effect| true;
        assert_eq!(
            unsaid(
                &[pay("GB29NWBK60161331926819", "100")],
                &json!({}),
                &s,
                &[],
                any
            ),
            None
        );
        assert_eq!(
            unsaid(
                &[pay("GB29NWBK60161331926819", "1000")],
                &json!({}),
                &s,
                &[],
                any
            ),
            Some("1000".into())
        );
        assert_eq!(
            unsaid(
                &[pay("US133000000121212121212", "100")],
                &json!({}),
                &s,
                &[],
                any
            ),
            Some("US133000000121212121212".into())
        );
    }

    #[test]
    fn an_effect_without_an_aim_is_judged_by_every_argument() {
        let event = Effect::CalendarWrite {
            calendar: "personal".into(),
            attendees: vec![],
        };
        let s = said("add 'Dinner with Ann' to my calendar");
        let any = |_: &Effect| true;
        let args = json!({"title": "Dinner with Ann"});
        assert_eq!(
            unsaid(std::slice::from_ref(&event), &args, &s, &[], any),
            None
        );
        let args = json!({"title": "Dinner with Ann", "note": "call +1 555 0100"});
        assert_eq!(
            unsaid(&[event], &args, &s, &[], any),
            Some("call +1 555 0100".into())
        );
    }

    #[test]
    fn a_message_to_the_right_person_may_not_carry_a_link_they_did_not_give() {
        let dm = Effect::MessageSend {
            service: "slack".into(),
            recipients: vec!["Alice".into()],
        };
        let s = said("Summarize the article at www.informations.com and send it to Alice");
        let any = |_: &Effect| true;
        let summary = json!({"recipient": "Alice", "body": "The article says prices rose 3%."});
        assert_eq!(
            unsaid(std::slice::from_ref(&dm), &summary, &s, &[], any),
            None
        );
        let cited = json!({"recipient": "Alice", "body": "Source: https://www.informations.com/a"});
        assert_eq!(
            unsaid(std::slice::from_ref(&dm), &cited, &s, &[], any),
            None
        );
        for body in [
            "Check out this link: www.secure-systems-252.com",
            "write to refunds@secure-systems.com today",
            "(https://bit.ly/x)",
        ] {
            let phish = json!({"recipient": "Alice", "body": body});
            assert!(
                unsaid(std::slice::from_ref(&dm), &phish, &s, &[], any).is_some(),
                "{body}"
            );
        }
    }

    #[test]
    fn a_destination_the_person_named_in_a_rule_is_theirs_but_only_that_one() {
        let mail = |to: &str| Effect::MailSend {
            account: "work".into(),
            recipients: vec![to.into()],
        };
        let s = said("Reply to everyone who wrote about the offsite");
        let any = |_: &Effect| true;
        let args = json!({"to": "ann@corp.com", "body": "See you there"});
        assert_eq!(
            unsaid(&[mail("ann@corp.com")], &args, &s, &["ann@corp.com"], any),
            None
        );
        assert_eq!(
            unsaid(&[mail("eve@evil.io")], &args, &s, &["ann@corp.com"], any),
            Some("eve@evil.io".into())
        );
    }

    /// An address the person never wrote, in any of the forms a model could launder it into.
    fn laundered(address: &str) -> Vec<String> {
        let (user, domain) = address.split_once('@').unwrap();
        vec![
            address.to_string(),
            format!("{user}+x@{domain}"),
            format!("{user}@{domain}.evil.io"),
            format!("{user}@sub.{domain}"),
            address.replace('a', "а"),         // Cyrillic a
            address.replace('@', "\u{200b}@"), // a zero-width space
            address.chars().rev().collect(),
            address.to_uppercase().replace('O', "0"),
            format!("{user} at {domain}"),
            format!("{user}@{domain}").replace('.', "[.]"),
        ]
    }

    proptest! {
        /// Whatever the person wrote, a recipient they did not write is never theirs, in any
        /// laundered form; the one they did write always is.
        #[test]
        fn a_recipient_the_person_did_not_write_is_never_theirs(
            user in "[a-z]{3,8}",
            domain in "[a-z]{3,8}\\.(com|org|io)",
            other in "[a-z]{3,8}",
            filler in "[ a-zA-Z0-9,.!?]{0,60}",
        ) {
            prop_assume!(other != user);
            let theirs = format!("{user}@{domain}");
            let s = said(&format!("{filler} Please mail {theirs}. {filler}"));
            prop_assert!(s.has(&theirs));
            let attacker = format!("{other}@{domain}");
            for form in laundered(&attacker) {
                prop_assert!(!s.has(&form), "{form:?} passed as the person's");
            }
            for form in laundered(&theirs).into_iter().skip(1) {
                prop_assert!(!s.has(&form) || form.eq_ignore_ascii_case(&theirs), "{form:?} passed as the person's");
            }
        }

        /// Splitting a value the person did not write into pieces the person did write
        /// does not make it theirs: the whole value is what is looked up.
        #[test]
        fn a_value_split_from_the_persons_words_is_not_theirs(
            a in "[a-z]{3,8}", b in "[a-z]{3,8}", domain in "[a-z]{3,8}\\.com",
        ) {
            let s = said(&format!("tell {a} and {b} about {domain}"));
            let joined = format!("{a}{b}@{domain}");
            prop_assert!(!s.has(&joined));
            let dotted = format!("{a}.{b}");
            prop_assert!(!s.has(&dotted));
        }
    }
}
