//! Login-wall detection and the resume condition. Pure functions over what one `evaluate` reads
//! off the page (`PageFacts`), so the rules are unit-tested without a browser.

use serde::{Deserialize, Serialize};

/// What the page shows, read in one round trip (see `FACTS_JS`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PageFacts {
    pub url: String,
    #[serde(default)]
    pub title: String,
    /// A visible `<input type=password>`.
    #[serde(default)]
    pub password_field: bool,
    /// Headings and legends, joined: where a login page names itself.
    #[serde(default)]
    pub headings: String,
    /// The HTTP status of the navigation's main response (0 = unknown).
    #[serde(default)]
    pub status: u16,
}

/// Reads `PageFacts` (minus the status, which comes from the navigation's response).
pub const FACTS_JS: &str = r#"() => {
  const visible = el => !!(el.offsetWidth || el.offsetHeight || el.getClientRects().length);
  const password = [...document.querySelectorAll('input[type=password]')].some(visible);
  const headings = [...document.querySelectorAll('h1,h2,legend,[role=heading]')]
    .map(e => e.innerText || '').join(' | ').slice(0, 500);
  return { url: location.href, title: document.title || '', passwordField: password, headings };
}"#;

/// Identity providers whose pages are always a login step.
const SSO_HOSTS: &[&str] = &[
    "accounts.google.com",
    "login.microsoftonline.com",
    "login.live.com",
    "appleid.apple.com",
    "signin.aws.amazon.com",
    "auth0.com",
    "okta.com",
    "onelogin.com",
    "passport.baidu.com",
    "login.taobao.com",
    "passport.jd.com",
    "graph.qq.com",
    "xui.ptlogin2.qq.com",
    "open.weixin.qq.com",
    "passport.weibo.com",
];

/// Path segments that name a login step.
const LOGIN_PATHS: &[&str] = &[
    "login",
    "log-in",
    "signin",
    "sign-in",
    "sign_in",
    "logon",
    "sso",
    "oauth",
    "authorize",
    "auth",
    "session",
    "sessions",
    "passport",
];

/// Words a login page's title or headings use (en, zh-CN, zh-TW).
const LOGIN_WORDS: &[&str] = &[
    "log in",
    "login",
    "sign in",
    "signin",
    "log on",
    "登录",
    "登入",
    "请登录",
    "請登入",
    "账号登录",
    "帳號登入",
];

/// Why this page is a login wall, or None.
pub fn wall_reason(facts: &PageFacts, extra_sso_hosts: &[String]) -> Option<String> {
    let url = url::Url::parse(&facts.url).ok();
    if matches!(facts.status, 401 | 403) {
        return Some(format!("the site answered HTTP {}", facts.status));
    }
    if facts.password_field {
        return Some("the page asks for a password".into());
    }
    if let Some(host) = url.as_ref().and_then(|u| u.host_str()) {
        let is = |sso: &str| host == sso || host.ends_with(&format!(".{sso}"));
        if let Some(sso) = SSO_HOSTS
            .iter()
            .copied()
            .find(|s| is(s))
            .or_else(|| extra_sso_hosts.iter().map(String::as_str).find(|s| is(s)))
        {
            return Some(format!("{sso} is a sign-in service"));
        }
    }
    if let Some(segment) = url
        .as_ref()
        .and_then(|u| u.path_segments())
        .and_then(|mut s| s.find(|seg| LOGIN_PATHS.contains(&seg.to_ascii_lowercase().as_str())))
    {
        return Some(format!("the address is a login page (/{segment})"));
    }
    let named = format!("{} | {}", facts.title, facts.headings).to_lowercase();
    if let Some(word) = LOGIN_WORDS.iter().find(|w| named.contains(*w)) {
        return Some(format!("the page is titled as a login ({word:?})"));
    }
    None
}

/// What lets a login suspension go on: stored as the suspension's `resume_when`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct LoginCondition {
    /// Always "browser": the coordinator routes the check to this family by it.
    pub kind: String,
    /// The login page the person was shown.
    pub login_url: String,
    /// The page the call wanted (shown again after the login).
    pub target_url: String,
    /// Also enough: a cookie of this name exists for the origin…
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cookie: Option<String>,
    /// …or an element matching this selector shows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
}

/// Whether the person is past the login, judged from the page the headed browser shows now: it
/// left the login page (another address) and is no login wall itself.
pub fn left_login(condition: &LoginCondition, now: &PageFacts, extra_sso_hosts: &[String]) -> bool {
    let same_page = |a: &str, b: &str| match (url::Url::parse(a), url::Url::parse(b)) {
        (Ok(a), Ok(b)) => a.origin() == b.origin() && a.path() == b.path(),
        _ => a == b,
    };
    !now.url.is_empty()
        && !now.url.starts_with("about:")
        && !same_page(&now.url, &condition.login_url)
        && wall_reason(now, extra_sso_hosts).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(url: &str) -> PageFacts {
        PageFacts {
            url: url.into(),
            ..Default::default()
        }
    }

    #[test]
    fn login_walls_are_recognised_by_each_sign() {
        let none: &[String] = &[];
        assert!(wall_reason(&page("https://shop.example/orders"), none).is_none());
        assert!(
            wall_reason(
                &PageFacts {
                    status: 401,
                    ..page("https://shop.example/orders")
                },
                none
            )
            .unwrap()
            .contains("401")
        );
        assert!(
            wall_reason(
                &PageFacts {
                    password_field: true,
                    ..page("https://shop.example/x")
                },
                none
            )
            .unwrap()
            .contains("password")
        );
        assert!(
            wall_reason(&page("https://accounts.google.com/v3/signin"), none)
                .unwrap()
                .contains("google")
        );
        assert!(
            wall_reason(&page("https://x.okta.com/app"), none)
                .unwrap()
                .contains("okta")
        );
        assert!(
            wall_reason(
                &page("https://shop.example/account/Login?next=/orders"),
                none
            )
            .unwrap()
            .contains("/Login")
        );
        assert!(
            wall_reason(
                &PageFacts {
                    title: "请登录 - 商城".into(),
                    ..page("https://shop.example/u")
                },
                none
            )
            .unwrap()
            .contains("登录")
        );
        assert!(
            wall_reason(
                &PageFacts {
                    headings: "Sign in to continue".into(),
                    ..page("https://shop.example/u")
                },
                none
            )
            .is_some()
        );
        assert!(
            wall_reason(
                &page("https://id.corp.example/start"),
                &["id.corp.example".to_string()]
            )
            .is_some()
        );
        // A page that merely links to a login is not a wall; nor is a path that only contains the word.
        assert!(
            wall_reason(
                &PageFacts {
                    title: "Orders".into(),
                    headings: "Your orders".into(),
                    ..page("https://shop.example/blog/login-tips-2026")
                },
                none
            )
            .is_none()
        );
    }

    #[test]
    fn the_login_is_over_when_the_browser_left_the_login_page_for_a_page_that_is_no_wall() {
        let c = LoginCondition {
            kind: "browser".into(),
            login_url: "http://127.0.0.1:9/login?next=/orders".into(),
            target_url: "http://127.0.0.1:9/orders".into(),
            ..Default::default()
        };
        assert!(!left_login(
            &c,
            &page("http://127.0.0.1:9/login?error=1"),
            &[]
        ));
        assert!(!left_login(
            &c,
            &PageFacts {
                password_field: true,
                ..page("http://127.0.0.1:9/2fa")
            },
            &[]
        ));
        assert!(!left_login(&c, &page("about:blank"), &[]));
        assert!(left_login(&c, &page("http://127.0.0.1:9/orders"), &[]));
    }
}
