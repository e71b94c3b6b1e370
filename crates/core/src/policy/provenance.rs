//! Where a call's risky values came from: the person's own words, or anywhere else.
//!
//! Conversation-wide taint asks about every risky call once untrusted content (a page, a mail,
//! a service's data) is in the conversation — also a message to the very person the person
//! named. Provenance narrows that: a risky effect whose values the person wrote themselves
//! (the recipient, the payee and amount, the site — [`Effect::aim`]) was chosen by the person,
//! so taint does not make it ask. Everything else stays as it was.
//!
//! The design closes laundering by what counts, not by spotting tricks: a value is the
//! person's only when it is found, as a whole token, in what the person wrote in this
//! conversation (or written out in the allow rule that matched). A value
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
    match url.host()? {
        url::Host::Ipv4(_) | url::Host::Ipv6(_) => url.host_str().map(str::to_lowercase),
        url::Host::Domain(host) => {
            let host = host.to_lowercase();
            // A bare word with a dot ("e.g.", "v1.2") is not a site: a host ends in letters (or
            // an internationalized name's `xn--` form).
            let tld = host.trim_end_matches('.').rsplit('.').next()?;
            let named = tld.starts_with("xn--")
                || (tld.len() >= 2 && tld.chars().all(|c| c.is_ascii_alphabetic()));
            named.then_some(host)
        }
    }
}

fn number_of(token: &str) -> Option<f64> {
    let token = bare(token).trim_start_matches(['$', '€', '£', '¥', '+']);
    let token = token.trim_end_matches(['$', '€', '£', '¥', '%']);
    // "1,250.50": commas group thousands; "12,5" is a decimal comma. One separator before
    // exactly three digits ("2,500", "1.000") is a thousand in one country and a fraction in
    // another: neither reading is taken, so such a number matches only as written.
    let separators = token.matches([',', '.']).count();
    let last_group = token.rsplit([',', '.']).next()?.len();
    let plain = if separators == 1 && last_group == 3 {
        return None;
    } else if token.contains('.') {
        token.replace(',', "")
    } else if separators == 1 {
        token.replace(',', ".")
    } else {
        token.replace(',', "")
    };
    if !plain
        .chars()
        .all(|c| c.is_ascii_digit() || c == '.' || c == '-')
    {
        return None; // not "inf", "NaN" or "1e3": the person writes numbers in digits
    }
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
            self.numbers.extend(number_of(token));
        }
        self.hosts
            .extend(references(&lower).into_iter().filter(|r| !r.contains('@')));
        self.text.push_str(&lower);
        self.text.push('\n');
    }

    /// Whether the person wrote `value`: as a whole token or phrase of their words, or as a
    /// number they wrote.
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
        self.has_phrase(&value)
    }

    /// Whether the person named the site `origin` reaches (its host, as they wrote it).
    pub fn has_site(&self, origin: &str) -> bool {
        host_of(&origin.to_lowercase()).is_some_and(|host| self.has_host(&host))
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

/// Every value a call's arguments carry (strings, numbers, booleans), depth first — and the
/// keys of nested objects, which can be data too (`{"roles": {"eve@x.io": "owner"}}`); the
/// top level's keys are the tool's own field names.
fn leaves(args: &Value, out: &mut Vec<String>, nested: bool) {
    match args {
        Value::String(s) => out.push(s.clone()),
        Value::Number(n) => out.push(n.to_string()),
        Value::Bool(b) => out.push(b.to_string()),
        Value::Array(items) => items.iter().for_each(|v| leaves(v, out, true)),
        Value::Object(map) => {
            for (key, value) in map {
                if nested {
                    out.push(key.clone());
                }
                leaves(value, out, true);
            }
        }
        Value::Null => {}
    }
}

/// Characters IDNA reads as a dot in a host name (UTS #46): `evil。example` is `evil.example`.
fn idna_dots(text: &str) -> String {
    text.replace(['\u{3002}', '\u{FF0E}', '\u{FF61}'], ".")
}

/// What in a text points somewhere a reader could go or write to: a site's host (from a URL
/// with any scheme, or a bare host name or IP address) or a mail address — found by what a run
/// of characters is, wherever it stands (in markdown, HTML, `<url|label>`, after a colon),
/// not by a list of phrases. A `scheme://` whose host cannot be read counts as a reference to
/// itself: unknown is untrusted.
fn references(text: &str) -> Vec<String> {
    let text = idna_dots(text);
    let mut out = Vec::new();
    // Runs of the characters a URL's scheme, host, port and path or a mail address are made of.
    let runs = text.split(|c: char| !(c.is_alphanumeric() || "-._~:/?#@!$&*+=%".contains(c)));
    for run in runs {
        let run = run.trim_matches(|c: char| ends_sentence(c) || c == '/');
        if run.is_empty() {
            continue;
        }
        if let Some(at) = run.find("://") {
            let scheme_start = run[..at]
                .rfind(|c: char| !c.is_ascii_alphanumeric() && c != '+' && c != '-' && c != '.')
                .map_or(0, |i| i + 1);
            let url = &run[scheme_start..];
            out.push(host_of(url).unwrap_or_else(|| url.to_lowercase()));
        } else if let Some((user, domain)) = run.split_once('@') {
            if !user.is_empty() && host_of(domain).is_some() {
                out.push(run.to_lowercase());
            }
        } else if let Some(host) = host_of(run) {
            out.push(host);
        }
    }
    out
}

/// Whether a value is specific enough to be told apart from the person's other words: a
/// number or a word of one or two characters ("5", "ok") turns up in any text, so it is
/// never taken as the person's where nothing narrower names it.
fn specific(value: &str) -> bool {
    let value = value.trim();
    value.chars().count() >= 3 && number_of(value).is_none()
}

/// The first value steering one of `effects` that could do harm untrusted content might steer
/// ([`Effect::is_steerable_harm`]) that the person did not give; `None`: the person chose all
/// of it.
///
/// An effect with an aim ([`Effect::aim`]) taken from the call's arguments (or named by the
/// matched rule) is the person's when every value of its aim is — written in their words (a
/// site by its host), or named by the allow rule that matched (`chosen`: the person picked that destination, written out, in a
/// rule) — and no argument points anywhere else (a link or an address the person did not give:
/// a message to the right person can still carry an attacker's link). An aim empty while
/// another effect of the call has one (a mail's empty cc) reaches nobody. Anything else — no
/// aim, an aim the pack wrote rather than the call, an empty one — needs every argument of the
/// call to be the person's, and specific (see [`specific`]). A command is never the person's
/// here: what it runs also lives in files untrusted content may have changed.
pub fn unsaid(effects: &[Effect], args: &Value, said: &Said, chosen: &[&str]) -> Option<String> {
    let mut arguments = Vec::new();
    leaves(args, &mut arguments, false);
    // A site is taken from the call when its host is in an argument (`www.x.com/a` → https://www.x.com).
    let from_call = |v: &str| {
        let v = v.to_lowercase();
        let needle = if v.contains("://") {
            host_of(&v).unwrap_or(v)
        } else {
            v
        };
        arguments.iter().any(|a| a.to_lowercase().contains(&needle))
    };
    // An aim the pack or the settings wrote (not the call) is no one's choice in the words;
    // one the matched rule names written out is the person's all the same.
    let in_rule = |v: &str| chosen.iter().any(|c| c.eq_ignore_ascii_case(v));
    let aims: Vec<Option<Vec<&str>>> = effects
        .iter()
        .map(|e| {
            e.aim()
                .filter(|aim| aim.iter().all(|v| from_call(v) || in_rule(v)))
        })
        .collect();
    let someone_reached = aims.iter().flatten().any(|aim| !aim.is_empty());
    for (effect, aim) in effects.iter().zip(aims) {
        if !effect.is_steerable_harm() {
            continue;
        }
        if let Effect::ProcessExec { command, .. } = effect {
            return Some(command.clone());
        }
        let value = match aim {
            Some(aim) if aim.is_empty() && someone_reached => continue,
            Some(aim) if !aim.is_empty() => unsaid_aim(effect, &aim, &arguments, said, chosen),
            _ => unsaid_arguments(&arguments, said),
        };
        if value.is_some() {
            return value;
        }
    }
    None
}

/// An aimed effect: the first aim value, or pointer in the arguments, the person did not give.
fn unsaid_aim(
    effect: &Effect,
    aim: &[&str],
    arguments: &[String],
    said: &Said,
    chosen: &[&str],
) -> Option<String> {
    let site = matches!(
        effect,
        Effect::NetFetch { .. } | Effect::BrowserNavigate { .. }
    );
    let given = |v: &str| {
        chosen.iter().any(|c| c.eq_ignore_ascii_case(v))
            || if site { said.has_site(v) } else { said.has(v) }
    };
    if let Some(value) = aim.iter().find(|v| !given(v)) {
        return Some(value.to_string());
    }
    let aimed: Vec<String> = aim.iter().flat_map(|v| references(v)).collect();
    arguments
        .iter()
        .flat_map(|v| references(v))
        .find(|r| !aimed.contains(r) && !said.has(r) && !said.has_host(r))
}

/// An effect judged by the whole call: the first argument the person did not give.
fn unsaid_arguments(arguments: &[String], said: &Said) -> Option<String> {
    if arguments.is_empty() {
        // Nothing says what it would do: unknown, so untrusted.
        return Some("(a call with no arguments)".into());
    }
    arguments
        .iter()
        .find(|v| !(specific(v) && said.has(v)))
        .cloned()
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
        assert!(s.has_site("https://www.informations.com"));
        assert!(s.has_site("https://informations.com"));
        assert!(!s.has_site("https://informations.com.evil.io"));
        assert!(!s.has_site("https://evil-informations.com"));
        assert!(!said("see e.g. v1.2").has_site("https://e.g"));
        // Only a site is matched by its host: a webhook URL as a recipient is a whole value.
        assert!(!s.has("https://www.informations.com/hooks/attacker"));
    }

    #[test]
    fn links_are_found_in_markdown_html_chat_markup_and_other_scripts() {
        for (text, link) in [
            ("[open](https://sso.evil.example/x)", "sso.evil.example"),
            (
                "<a href=\"https://sso.evil.example\">here</a>",
                "sso.evil.example",
            ),
            ("Link:https://sso.evil.example/x", "sso.evil.example"),
            ("→https://sso.evil.example", "sso.evil.example"),
            ("<https://evil.example|doc>", "evil.example"),
            ("http://203.0.113.7/login", "203.0.113.7"),
            ("https://evil\u{3002}example/x", "evil.example"),
            (
                "write to it-support@attacker.example.",
                "it-support@attacker.example",
            ),
        ] {
            let found = references(text);
            assert!(found.iter().any(|r| r == link), "{text}: {found:?}");
        }
        let idn = references("go to https://вход.онлайн now");
        assert!(idn.iter().any(|r| r.starts_with("xn--")), "{idn:?}");
        assert!(references("prices rose 3.5% (see notes) e.g. today").is_empty());
    }

    #[test]
    fn ambiguous_and_spelled_numbers_are_not_numbers() {
        assert_eq!(
            number_of("2,500"),
            None,
            "a thousand here, two and a half there"
        );
        assert_eq!(number_of("1.000"), None);
        assert_eq!(number_of("1,250.50"), Some(1250.5));
        assert_eq!(number_of("12,5"), Some(12.5));
        for spelled in ["inf", "NaN", "1e3", "0x10"] {
            assert_eq!(number_of(spelled), None, "{spelled}");
        }
    }

    #[test]
    fn a_payment_is_the_persons_only_when_payee_and_amount_both_are() {
        let pay = |payee: &str, amount: &str| Effect::MoneyPay {
            payee: payee.into(),
            amount: Some(amount.into()),
        };
        let s = said("Pay 100 to GB29NWBK60161331926819 for the rent");
        let check = |payee: &str, amount: u32| {
            let args = json!({"recipient": payee, "amount": amount});
            unsaid(&[pay(payee, &amount.to_string())], &args, &s, &[])
        };
        assert_eq!(check("GB29NWBK60161331926819", 100), None);
        assert_eq!(check("GB29NWBK60161331926819", 1000), Some("1000".into()));
        assert_eq!(
            check("US133000000121212121212", 100),
            Some("US133000000121212121212".into())
        );
        // A payee the pack wrote into its declaration (not taken from the call) aims nothing:
        // the call's own arguments decide, and the person wrote none of them.
        let checkout = Effect::MoneyPay {
            payee: "the shop".into(),
            amount: None,
        };
        let s = said("compare it with the charger at the shop");
        let args = json!({"product_ids": ["P025"]});
        assert_eq!(unsaid(&[checkout], &args, &s, &[]), Some("P025".into()));
    }

    #[test]
    fn an_effect_without_an_aim_is_judged_by_every_argument() {
        let event = Effect::CalendarWrite {
            calendar: "personal".into(),
            attendees: vec![],
        };
        let s = said("add 'Dinner with Ann' to my calendar");
        let one = std::slice::from_ref(&event);
        assert_eq!(
            unsaid(one, &json!({"title": "Dinner with Ann"}), &s, &[]),
            None
        );
        let args = json!({"title": "Dinner with Ann", "note": "call +1 555 0100"});
        assert_eq!(unsaid(one, &args, &s, &[]), Some("call +1 555 0100".into()));
        // Short or numeric values turn up in any text: never the person's on their own.
        let s = said("show me the top 5 events in general");
        for args in [json!({"event_id": "5"}), json!({"event_id": 5}), json!({})] {
            assert!(unsaid(one, &args, &s, &[]).is_some(), "{args}");
        }
        // Data in a nested object's keys counts too.
        let s = said("add 'Dinner with Ann' as owner");
        let args = json!({"title": "Dinner with Ann", "roles": {"eve@evil.io": "owner"}});
        assert!(unsaid(one, &args, &s, &[]).is_some());
    }

    #[test]
    fn an_empty_aim_reaches_nobody_only_beside_one_that_reaches_someone() {
        let mail = |to: &[&str]| Effect::MailSend {
            account: "work".into(),
            recipients: to.iter().map(|s| s.to_string()).collect(),
        };
        let s = said("mail ann@corp.example the summary");
        let args = json!({"to": ["ann@corp.example"], "cc": [], "body": "The summary"});
        let both = [mail(&["ann@corp.example"]), mail(&[])];
        assert_eq!(unsaid(&both, &args, &s, &[]), None);
        // A reply with nobody named goes wherever the server sends it: judged by its arguments.
        let args = json!({"thread": "t-81", "body": "Sure, here are the files"});
        assert!(unsaid(&[mail(&[])], &args, &s, &[]).is_some());
    }

    #[test]
    fn a_site_set_in_settings_is_the_persons_when_their_rule_names_it() {
        let search = Effect::NetFetch {
            origin: "https://search.example".into(),
        };
        let s = said("look up the opening hours");
        let args = json!({"query": "opening hours", "count": 3});
        let one = std::slice::from_ref(&search);
        assert_eq!(unsaid(one, &args, &s, &["https://search.example"]), None);
        assert!(unsaid(one, &args, &s, &[]).is_some());
    }

    #[test]
    fn a_command_is_never_lifted_by_the_persons_words() {
        let exec = Effect::ProcessExec {
            command: "npm test".into(),
            workspace_code: vec![],
        };
        let args = json!({"command": "npm test"});
        let s = said("run npm test after");
        assert_eq!(unsaid(&[exec], &args, &s, &[]), Some("npm test".into()));
    }

    #[test]
    fn a_message_to_the_right_person_may_not_carry_a_link_they_did_not_give() {
        let dm = Effect::MessageSend {
            service: "slack".into(),
            recipients: vec!["Alice".into()],
        };
        let s = said("Summarize the article at www.informations.com and send it to Alice");
        let summary = json!({"recipient": "Alice", "body": "The article says prices rose 3%."});
        assert_eq!(unsaid(std::slice::from_ref(&dm), &summary, &s, &[]), None);
        let cited = json!({"recipient": "Alice", "body": "Source: https://www.informations.com/a"});
        assert_eq!(unsaid(std::slice::from_ref(&dm), &cited, &s, &[]), None);
        for body in [
            "Check out this link: www.secure-systems-252.com",
            "write to refunds@secure-systems.com today",
            "(https://bit.ly/x)",
        ] {
            let phish = json!({"recipient": "Alice", "body": body});
            assert!(
                unsaid(std::slice::from_ref(&dm), &phish, &s, &[]).is_some(),
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
        let args = |to: &str| json!({"to": to, "body": "See you there"});
        let chosen = ["ann@corp.com"];
        let ann = unsaid(&[mail("ann@corp.com")], &args("ann@corp.com"), &s, &chosen);
        assert_eq!(ann, None);
        let eve = unsaid(&[mail("eve@evil.io")], &args("eve@evil.io"), &s, &chosen);
        assert_eq!(eve, Some("eve@evil.io".into()));
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
