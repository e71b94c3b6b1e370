//! Signing in with OAuth against a real OpenID provider on loopback (npm `oidc-provider`,
//! certified): discovery, the authorization code with PKCE through the loopback redirect — the
//! browser's part driven here, its login page answered as a person would — refresh and
//! revocation; and what is refused: metadata naming another issuer (mix-up), an answer with
//! another sign-in's state, a token shown in a `Debug` print.

use cowork_oauth::{
    Keeper, OAuthError, Server, TokenStore, Tokens, begin, discover, refresh, revoke,
};
use cowork_tests::peers::OidcProvider;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use url::Url;

const CLIENT: &str = "cowork-test";

fn scopes() -> Vec<String> {
    ["openid", "offline_access", "email", "mail"]
        .map(String::from)
        .to_vec()
}

/// A client for the token requests: redirects are never followed (RFC 6749 §10.12's advice).
fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

async fn sign_in(provider: &OidcProvider) -> (Server, Tokens) {
    let http = http();
    let server = discover(&http, &provider.issuer().parse().unwrap())
        .await
        .unwrap();
    let pending = begin(&server, CLIENT, &scopes()).await.unwrap();
    let url = pending.url().clone();
    let redirect = url
        .query_pairs()
        .find(|(k, _)| k == "redirect_uri")
        .map(|(_, v)| v.to_string())
        .unwrap();
    assert!(
        redirect.starts_with("http://127.0.0.1:") && redirect.ends_with("/callback"),
        "a loopback redirect (RFC 8252): {redirect}"
    );
    let pkce = url
        .query_pairs()
        .any(|(k, v)| k == "code_challenge_method" && v == "S256");
    assert!(pkce, "{url}");
    let waiting = tokio::spawn({
        let http = http.clone();
        async move { pending.finish(&http, Duration::from_secs(60)).await }
    });
    OidcProvider::person_signs_in(&url, "alice@example.test").await;
    let tokens = waiting.await.unwrap().unwrap();
    (server, tokens)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_gets_tokens_that_refresh_and_are_revoked_on_sign_out() {
    let provider =
        tokio::task::spawn_blocking(|| OidcProvider::start(&[("OIDC_ACCESS_TTL", "30")]))
            .await
            .unwrap();
    let (server, tokens) = sign_in(&provider).await;
    assert!(!tokens.access_token.is_empty());
    assert!(
        tokens.refresh_token.is_some(),
        "offline access gives a refresh token"
    );
    assert!(
        tokens.scopes.iter().all(|s| scopes().contains(s)),
        "no wider than asked: {:?}",
        tokens.scopes
    );
    // A 30-second token is refreshed before use.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    assert!(tokens.expires_soon(now));
    let shown = format!("{tokens:?}");
    assert!(
        !shown.contains(&tokens.access_token)
            && !shown.contains(tokens.refresh_token.as_deref().unwrap()),
        "{shown}"
    );

    let http = http();
    let renewed = refresh(&http, &server, CLIENT, &tokens).await.unwrap();
    assert_ne!(renewed.access_token, tokens.access_token);
    assert!(renewed.refresh_token.is_some());

    // Signing out revokes the refresh token: it no longer works.
    revoke(&http, &server, CLIENT, &renewed).await.unwrap();
    let after = refresh(&http, &server, CLIENT, &renewed).await;
    assert!(matches!(after, Err(OAuthError::Refused(_))), "{after:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_for_another_issuer_and_an_answer_to_another_sign_in_are_refused() {
    let provider = tokio::task::spawn_blocking(|| OidcProvider::start(&[]))
        .await
        .unwrap();
    let http = http();
    // A server whose metadata speaks for another issuer (mix-up, RFC 8414 §3.3): it names the
    // provider's issuer, not its own address.
    let impostor = {
        let said = provider.issuer();
        let app = axum::Router::new().route(
            "/.well-known/oauth-authorization-server",
            axum::routing::get(move || {
                let said = said.clone();
                async move {
                    axum::Json(serde_json::json!({"issuer": said,
                        "authorization_endpoint": format!("{said}/auth"), "token_endpoint": format!("{said}/token")}))
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let at = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        tokio::spawn(async move { axum::serve(listener, app).await });
        at
    };
    let mixed = discover(&http, &impostor.parse().unwrap()).await;
    assert!(
        matches!(mixed, Err(OAuthError::IssuerMismatch { .. })),
        "{mixed:?}"
    );
    // Metadata fetched in clear from anywhere but this machine's loopback address is refused
    // before it is asked for (it could be rewritten on the way): `localhost` is a name.
    let clear: Url = format!("http://localhost:{}", provider.port)
        .parse()
        .unwrap();
    let refused = discover(&http, &clear).await;
    assert!(
        matches!(refused, Err(OAuthError::Invalid(ref why)) if why.contains("not HTTPS")),
        "{refused:?}"
    );

    // A redirect that does not carry this sign-in's state is refused, whatever its code.
    let server = discover(&http, &provider.issuer().parse().unwrap())
        .await
        .unwrap();
    let pending = begin(&server, CLIENT, &scopes()).await.unwrap();
    let url_of_sign_in = pending.url().clone();
    let redirect = pending
        .url()
        .query_pairs()
        .find(|(k, _)| k == "redirect_uri")
        .map(|(_, v)| v.to_string())
        .unwrap();
    let waiting = tokio::spawn({
        let http = http.clone();
        async move { pending.finish(&http, Duration::from_secs(60)).await }
    });
    let forged = format!(
        "{redirect}?code=stolen&state=not-this-one&iss={}",
        provider.issuer()
    );
    // Refused at the door, and it does not end the sign-in: the person's own answer, after it,
    // still signs in (a page probing the port cannot cancel a sign-in either).
    let refused = reqwest::get(forged).await.unwrap();
    assert_eq!(refused.status().as_u16(), 400);
    assert!(!waiting.is_finished());
    OidcProvider::person_signs_in(&url_of_sign_in, "alice@example.test").await;
    let answer = waiting.await.unwrap();
    assert!(answer.is_ok(), "{answer:?}");
}

/// The keyring's stand-in: tokens by account, and how many times they were saved.
#[derive(Default)]
struct Kept(Mutex<(Option<Tokens>, usize)>);

impl TokenStore for Kept {
    fn load(&self, _: &str) -> Result<Option<Tokens>, String> {
        Ok(self.0.lock().unwrap().0.clone())
    }
    fn save(&self, _: &str, tokens: &Tokens) -> Result<(), String> {
        let mut kept = self.0.lock().unwrap();
        *kept = (Some(tokens.clone()), kept.1 + 1);
        Ok(())
    }
    fn delete(&self, _: &str) -> Result<bool, String> {
        Ok(self.0.lock().unwrap().0.take().is_some())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_lasts_its_tokens_renewed_one_refresh_at_a_time_until_revoked() {
    let short = tokio::task::spawn_blocking(|| OidcProvider::start(&[("OIDC_ACCESS_TTL", "30")]))
        .await
        .unwrap();
    let (server, tokens) = sign_in(&short).await;
    let kept = Arc::new(Kept::default());
    kept.0.lock().unwrap().0 = Some(tokens.clone());
    let keeper = Arc::new(Keeper::new(kept.clone(), http()));
    // Two calls at once on a token about to expire: both get a token (the provider rotates
    // refresh tokens, so two refreshes at once would lose one and ask for a sign-in).
    let call = || {
        let (keeper, server) = (keeper.clone(), server.clone());
        tokio::spawn(async move { keeper.access_token("work", &server, CLIENT).await })
    };
    let (a, b) = (call(), call());
    let (a, b) = (a.await.unwrap().unwrap(), b.await.unwrap().unwrap());
    assert_ne!(a, tokens.access_token, "renewed before use");
    assert_ne!(b, tokens.access_token);
    assert!(
        kept.0.lock().unwrap().1 >= 1,
        "the renewed tokens were kept"
    );

    // The server out of reach is not a sign-out: the tokens stay, and the error says so.
    let mut gone_away = server.clone();
    gone_away.token_endpoint = "http://127.0.0.1:9/token".parse().unwrap();
    let offline = keeper.access_token("work", &gone_away, CLIENT).await;
    assert!(
        matches!(offline, Err(OAuthError::Unreachable(..))),
        "{offline:?}"
    );

    // Signed out elsewhere (the grant revoked): the next renewal asks for a sign-in, by name.
    let current = kept.0.lock().unwrap().0.clone().unwrap();
    revoke(&http(), &server, CLIENT, &current).await.unwrap();
    let gone = keeper.access_token("work", &server, CLIENT).await;
    assert!(
        matches!(gone, Err(OAuthError::NeedsSignIn(ref a)) if a == "work"),
        "{gone:?}"
    );
    assert!(
        kept.0.lock().unwrap().0.is_none(),
        "a refused grant's tokens are not kept to look like a sign-in"
    );

    // A token far from expiry is handed out as it is.
    let long = tokio::task::spawn_blocking(|| OidcProvider::start(&[]))
        .await
        .unwrap();
    let (server, tokens) = sign_in(&long).await;
    let kept = Arc::new(Kept::default());
    kept.0.lock().unwrap().0 = Some(tokens.clone());
    let keeper = Keeper::new(kept.clone(), http());
    let token = keeper.access_token("home", &server, CLIENT).await.unwrap();
    assert_eq!(token, tokens.access_token);
    assert_eq!(kept.0.lock().unwrap().1, 0, "nothing refreshed");
}

/// A hostile authorization server on loopback: its metadata is honest about itself, but its
/// token endpoint grants more than was asked (`admin`). Counts the revocations it receives.
fn greedy_server(revoked: Arc<std::sync::atomic::AtomicUsize>) -> String {
    use axum::routing::{get, post};
    let base = Arc::new(Mutex::new(String::new()));
    let metadata = {
        let base = base.clone();
        move || {
            let base = base.lock().unwrap().clone();
            async move {
                axum::Json(serde_json::json!({
                    "issuer": base,
                    "authorization_endpoint": format!("{base}/authorize"),
                    "token_endpoint": format!("{base}/token"),
                    "revocation_endpoint": format!("{base}/revoke"),
                    "code_challenge_methods_supported": ["S256"],
                }))
            }
        }
    };
    let app = axum::Router::new()
        .route("/.well-known/oauth-authorization-server", get(metadata))
        .route(
            "/revoke",
            post(move || {
                revoked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                async {}
            }),
        )
        .route(
            "/token",
            post(|| async {
                axum::Json(serde_json::json!({
                    "access_token": "granted-too-much",
                    "token_type": "Bearer",
                    "expires_in": 3600,
                    "scope": "openid mail admin",
                }))
            }),
        );
    let url = cowork_tests::serve(app);
    *base.lock().unwrap() = url.clone();
    url
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grant_wider_than_what_was_asked_is_refused() {
    let revoked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let issuer = greedy_server(revoked.clone());
    let http = http();
    let server = discover(&http, &issuer.parse().unwrap()).await.unwrap();
    let asked = ["openid", "mail"].map(String::from).to_vec();
    let pending = begin(&server, CLIENT, &asked).await.unwrap();
    let param = |name: &str| {
        pending
            .url()
            .query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.to_string())
            .unwrap()
    };
    // The server's "browser" step: straight back with a code and this sign-in's own state.
    let redirect = param("redirect_uri");
    let back = format!("{redirect}?code=c&state={}", param("state"));
    let waiting = tokio::spawn({
        let http = http.clone();
        async move { pending.finish(&http, Duration::from_secs(60)).await }
    });
    // Another program connects first and says nothing: the browser behind it still gets through.
    let port: u16 = redirect
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/callback")
        .parse()
        .unwrap();
    let _silent = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    reqwest::get(back).await.unwrap();
    let answer = waiting.await.unwrap();
    assert!(
        matches!(answer, Err(OAuthError::Refused(ref why)) if why.contains("admin")),
        "{answer:?}"
    );
    assert_eq!(
        revoked.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "the grant nobody agreed to is given back"
    );
}

/// Everything logged, at every level, into one buffer.
#[derive(Clone, Default)]
struct Logged(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Logged {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn no_token_or_code_reaches_a_log_even_at_trace() {
    let logged = Logged::default();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer({
            let logged = logged.clone();
            move || logged.clone()
        })
        .finish();
    let _logging = tracing::subscriber::set_default(subscriber);
    // One thread: every task of the sign-in (and of the HTTP client) logs into the buffer.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let provider = OidcProvider::start(&[("OIDC_ACCESS_TTL", "30")]);
    let (tokens, renewed) = runtime.block_on(async {
        let (server, tokens) = sign_in(&provider).await;
        let renewed = refresh(&http(), &server, CLIENT, &tokens).await.unwrap();
        revoke(&http(), &server, CLIENT, &renewed).await.unwrap();
        let refused = refresh(&http(), &server, CLIENT, &renewed).await;
        assert!(refused.is_err());
        (tokens, renewed)
    });
    let text = String::from_utf8_lossy(&logged.0.lock().unwrap()).to_string();
    assert!(!text.is_empty(), "the subscriber saw the requests");
    for secret in [
        &tokens.access_token,
        tokens.refresh_token.as_ref().unwrap(),
        &renewed.access_token,
        renewed.refresh_token.as_ref().unwrap(),
    ] {
        assert!(
            !text.contains(secret.as_str()),
            "a token in the log:\n{text}"
        );
    }
    assert!(
        !text.contains("code="),
        "an authorization code in the log:\n{text}"
    );
}

/// A mail account that signs in with OAuth, in-process: the call made while it is signed out
/// waits for the sign-in (suspended) and goes on by itself once the person has signed in; a
/// token about to expire is refreshed between two calls; and a token revoked at the provider is
/// refused by Dovecot itself (its `oauth2` passdb introspects every login).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mail_account_waits_for_its_sign_in_refreshes_and_a_revoked_token_is_refused() {
    use cowork_contract::{SecretSource, ToolError};
    use cowork_core::{CallRequest, Caller};
    use cowork_store::accounts::{self, AccountConfig, Auth};
    use serde_json::json;

    let (provider, _mail, h, account) = oauth_mail_account().await;
    let check = || {
        CallRequest::new(
            "email_check",
            json!({"account": "alice"}),
            Caller::Chat,
            "conv",
        )
    };

    // Signed out: the call waits for the person, saying how to sign in.
    let waiting = match h.scheduler.call(check()).await.result {
        Err(ToolError::Suspended { id, reason }) => {
            assert!(reason.contains("cowork account signin alice"), "{reason}");
            id
        }
        other => panic!("not suspended: {other:?}"),
    };
    assert!(h.scheduler.resume_ready(Caller::Chat).await.is_empty());

    // The person signs in; the waiting call goes on by itself.
    let sign_in = h.app.begin_sign_in("alice").await.unwrap();
    let url = sign_in.url().clone();
    let person = tokio::spawn(async move { OidcProvider::person_signs_in(&url, "alice").await });
    h.app.finish_sign_in(sign_in).await.unwrap();
    person.await.unwrap();
    let done = h.scheduler.resume_ready(Caller::Chat).await;
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].0, waiting);
    assert!(done[0].1.result.is_ok(), "{:?}", done[0].1.result);

    // Past the margin: the next call refreshes first, and Dovecot takes the new token.
    // Kept bound to the issuer and client they came from.
    let kept = || -> serde_json::Value {
        serde_json::from_str(
            &h.secrets
                .get(&accounts::oauth_secret_name("alice"))
                .unwrap()
                .unwrap(),
        )
        .unwrap()
    };
    let stored = || -> Tokens { serde_json::from_value(kept()["tokens"].clone()).unwrap() };
    assert_eq!(kept()["issuer"], provider.issuer());
    let first = stored();
    tokio::time::sleep(Duration::from_secs(3)).await;
    h.ok("email_check", json!({"account": "alice"})).await;
    let renewed = stored();
    assert_ne!(renewed.access_token, first.access_token, "refreshed");

    // Revoked at the provider while a copy is still kept here: Dovecot refuses it.
    let server = discover(&http(), &provider.issuer().parse().unwrap())
        .await
        .unwrap();
    let access_only = Tokens {
        refresh_token: None,
        ..renewed.clone()
    };
    revoke(&http(), &server, CLIENT, &access_only)
        .await
        .unwrap();
    let stale = Tokens {
        expires_at: Some(i64::MAX / 2),
        ..renewed
    };
    let mut bound = kept();
    bound["tokens"] = serde_json::to_value(&stale).unwrap();
    h.secrets
        .set(&accounts::oauth_secret_name("alice"), &bound.to_string());
    let refused = h.call("email_check", json!({"account": "alice"})).await;
    let text = refused.result.unwrap_err().to_string();
    assert!(
        text.contains("refused the login") && text.contains("sign in to the account again"),
        "{text}"
    );

    // The account now signs in somewhere else under the same name: the tokens kept are the
    // other provider's, and are not handed out (the call waits for a sign-in instead).
    let mut moved = account.clone();
    if let AccountConfig::Mail { auth, .. } = &mut moved.config {
        *auth = Auth::Oauth {
            issuer: "https://login.example.net".into(),
            client_id: CLIENT.into(),
            scopes: scopes(),
            endpoints: Some(accounts::OauthEndpoints {
                authorization: "https://login.example.net/auth".into(),
                token: "https://login.example.net/token".into(),
                revocation: None,
            }),
        };
    }
    accounts::put(&h.store.connect().unwrap(), &moved).unwrap();
    let moved_call = h.scheduler.call(check()).await;
    assert!(
        matches!(moved_call.result, Err(ToolError::Suspended { .. })),
        "{:?}",
        moved_call.result
    );
}

/// Saves calendar account `name` signing in at `provider`; a sync before the sign-in names the
/// sign-in; then alice signs in.
async fn calendar_signed_in(
    h: &cowork_tests::Harness,
    provider: &OidcProvider,
    name: &str,
    config: impl FnOnce(cowork_store::accounts::Auth) -> cowork_store::accounts::AccountConfig,
) {
    use cowork_store::accounts;
    let auth = accounts::Auth::Oauth {
        issuer: provider.issuer(),
        client_id: CLIENT.into(),
        scopes: scopes(),
        endpoints: None,
    };
    let account = accounts::Account {
        name: name.into(),
        config: config(auth),
    };
    accounts::put(&h.store.connect().unwrap(), &account).unwrap();
    let signed_out = h
        .call("calendar_sync", serde_json::json!({"account": name}))
        .await;
    let why = signed_out.result.unwrap_err().to_string();
    assert!(
        why.contains(&format!("cowork account signin {name}")),
        "{why}"
    );
    let sign_in = h.app.begin_sign_in(name).await.unwrap();
    let url = sign_in.url().clone();
    let person = tokio::spawn(async move { OidcProvider::person_signs_in(&url, "alice").await });
    h.app.finish_sign_in(sign_in).await.unwrap();
    person.await.unwrap();
}

/// A CalDAV account that signs in with OAuth, found from the server's root (RFC 6764's
/// `/.well-known/caldav`): a Radicale that takes bearer tokens (introspected at the provider)
/// syncs and takes a new event with the person's token; signed out, the sync says how to sign in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caldav_account_syncs_with_a_bearer_token_from_the_server_root() {
    use cowork_store::accounts::AccountConfig;
    use cowork_tests::peers::Radicale;
    use cowork_tests::{Harness, Recorder};
    use serde_json::json;

    let provider = tokio::task::spawn_blocking(|| OidcProvider::start(&[]))
        .await
        .unwrap();
    let introspection = provider.introspection_url();
    let dav = tokio::task::spawn_blocking(move || {
        Radicale::start_bearer(&[("alice", "alice-dav-pw")], introspection)
    })
    .await
    .unwrap();
    let http = reqwest::Client::new();
    let made = http
        .request(
            reqwest::Method::from_bytes(b"MKCALENDAR").unwrap(),
            format!("{}alice/personal/", dav.url()),
        )
        .basic_auth("alice", Some("alice-dav-pw"))
        .send()
        .await
        .unwrap();
    assert_eq!(made.status().as_u16(), 201);
    let h = Harness::new(Arc::new(Recorder::default()));
    let url = dav.url();
    calendar_signed_in(&h, &provider, "dav", |auth| AccountConfig::Caldav {
        url,
        username: "alice".into(),
        auth,
    })
    .await;

    let synced = h.ok("calendar_sync", json!({"account": "dav"})).await;
    assert_eq!(synced["reports"][0]["calendar"], "dav/personal", "{synced}");
    h.ok(
        "calendar_create",
        json!({"title": "Lunch with a token", "start": "2026-12-01T12:00", "end": "2026-12-01T13:00",
               "timezone": "UTC", "calendar": "dav/personal"}),
    )
    .await;
    let on_server = http
        .get(format!("{}alice/personal/", dav.url()))
        .basic_auth("alice", Some("alice-dav-pw"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(on_server.contains("Lunch with a token"), "{on_server}");
}

/// A Microsoft 365 calendar through Microsoft Graph (on the loopback stand-in that replays
/// Graph's documented shapes): signed in, its events come in placed in the zone they were made in
/// (a weekly 09:00 in Berlin stays 09:00 across the end of summer time); a new event gets the
/// server's id and is not doubled by the next sync; an edit is conditional on the ETag, so an edit
/// made meanwhile in Outlook is kept and ours becomes a copy; a delete reaches the server; a
/// repeat rule Graph cannot hold is kept here and said so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_microsoft_365_calendar_syncs_through_graph_both_ways() {
    use cowork_store::accounts::AccountConfig;
    use cowork_tests::peers::GraphCalendar;
    use cowork_tests::{Harness, Recorder};
    use serde_json::json;

    let provider = tokio::task::spawn_blocking(|| OidcProvider::start(&[]))
        .await
        .unwrap();
    let introspection = provider.introspection_url();
    let graph = tokio::task::spawn_blocking(move || GraphCalendar::start(introspection))
        .await
        .unwrap();
    let recorder = Arc::new(Recorder::default());
    let h = Harness::new(recorder.clone());
    let url = graph.url();
    calendar_signed_in(&h, &provider, "m365", |auth| {
        AccountConfig::MicrosoftGraph {
            url,
            username: "alice@contoso.test".into(),
            auth,
        }
    })
    .await;

    let synced = h.ok("calendar_sync", json!({"account": "m365"})).await;
    let report = &synced["reports"][0];
    assert_eq!(report["pulled"], 2, "{synced}");
    let calendar = report["calendar"].as_str().unwrap().to_string();
    assert!(calendar.starts_with("m365/m365-"), "{calendar}");
    let standups = |from: &str, to: &str| json!({"start": from, "end": to, "timezone": "Europe/Berlin", "query": "standup"});
    let october = h
        .ok("calendar_check", standups("2026-10-05", "2026-10-06"))
        .await;
    assert_eq!(
        october["events"][0]["start"], "2026-10-05T09:00:00+02:00",
        "{october}"
    );
    let december = h
        .ok("calendar_check", standups("2026-12-07", "2026-12-10"))
        .await;
    let starts: Vec<&str> = december["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["start"].as_str().unwrap())
        .collect();
    assert_eq!(
        starts,
        ["2026-12-07T09:00:00+01:00", "2026-12-09T09:00:00+01:00"],
        "{december}"
    );
    let offsite = h
        .ok(
            "calendar_check",
            json!({"start": "2026-12-10", "end": "2026-12-13", "query": "offsite"}),
        )
        .await;
    assert_eq!(offsite["events"][0]["all_day"], true, "{offsite}");
    assert_eq!(offsite["events"][0]["end"], "2026-12-11", "{offsite}");

    // A new event: Graph names it (and gives it its own UID); the next sync finds it once,
    // under the UID the create answered.
    let created = h
        .ok(
            "calendar_create",
            json!({"title": "Budget review", "start": "2026-12-02T14:00",
        "end": "2026-12-02T15:00", "timezone": "Europe/Berlin", "calendar": calendar,
        "attendees": ["bo@contoso.test"]}),
        )
        .await;
    let on_server = graph.events().await;
    let made = on_server
        .iter()
        .find(|e| e["subject"] == "Budget review")
        .expect("created there");
    assert_eq!(
        made["start"]["dateTime"], "2026-12-02T13:00:00.0000000",
        "{made}"
    );
    h.ok("calendar_sync", json!({"account": "m365"})).await;
    let budget = h
        .ok(
            "calendar_check",
            json!({"start": "2026-12-02", "end": "2026-12-03", "query": "budget"}),
        )
        .await;
    assert_eq!(budget["events"].as_array().unwrap().len(), 1, "{budget}");
    assert_eq!(
        budget["events"][0]["uid"], created["uid"],
        "{budget} {created}"
    );
    let uid = budget["events"][0]["uid"].as_str().unwrap().to_string();

    // Changed in Outlook meanwhile: the server's version stays, ours becomes a conflict copy.
    graph
        .change(
            made["id"].as_str().unwrap(),
            json!({"subject": "Budget review (moved room)"}),
        )
        .await;
    let edit = h
        .ok(
            "calendar_update",
            json!({"uid": uid, "calendar": calendar, "title": "Budget review (agenda)"}),
        )
        .await;
    assert!(
        edit["note"]
            .as_str()
            .unwrap_or_default()
            .contains("conflict copy"),
        "{edit}"
    );
    let subjects: Vec<String> = graph
        .events()
        .await
        .iter()
        .map(|e| e["subject"].as_str().unwrap().to_string())
        .collect();
    assert!(
        subjects.contains(&"Budget review (moved room)".to_string()),
        "{subjects:?}"
    );
    assert!(
        subjects.contains(&"Budget review (agenda) (conflict copy)".to_string()),
        "{subjects:?}"
    );
    // The copy the sync made invites nobody: only the person's own approved write does.
    let on_server = graph.events().await;
    let invited = |subject: &str| {
        let event = on_server.iter().find(|e| e["subject"] == subject).unwrap();
        event["attendees"].as_array().map_or(0, Vec::len)
    };
    assert_eq!(invited("Budget review (moved room)"), 1, "{on_server:?}");
    assert_eq!(
        invited("Budget review (agenda) (conflict copy)"),
        0,
        "{on_server:?}"
    );

    let moved = h
        .ok(
            "calendar_check",
            json!({"start": "2026-12-02", "end": "2026-12-03", "query": "moved room"}),
        )
        .await;
    assert_eq!(
        moved["events"][0]["uid"], created["uid"],
        "the server's version keeps our UID: {moved}"
    );

    // A delete reaches the server.
    h.ok("calendar_delete", json!({"uid": uid, "calendar": calendar}))
        .await;
    let left: Vec<String> = graph
        .events()
        .await
        .iter()
        .map(|e| e["subject"].as_str().unwrap().to_string())
        .collect();
    assert!(
        !left.contains(&"Budget review (moved room)".to_string()),
        "{left:?}"
    );

    // A weekly series keeps its zone there, so Outlook shows it at 10:00 after the clocks change.
    h.ok(
        "calendar_create",
        json!({"title": "Planning", "start": "2026-12-03T10:00", "end": "2026-12-03T11:00",
               "timezone": "Europe/Berlin", "calendar": calendar, "recurrence": "FREQ=WEEKLY;BYDAY=TH;COUNT=4"}),
    )
    .await;
    let on_server = graph.events().await;
    let planning = on_server
        .iter()
        .find(|e| e["subject"] == "Planning")
        .expect("created there");
    assert_eq!(
        planning["originalStartTimeZone"], "Europe/Berlin",
        "{planning}"
    );
    assert_eq!(
        planning["recurrence"]["pattern"]["daysOfWeek"],
        json!(["thursday"]),
        "{planning}"
    );
    assert_eq!(
        planning["recurrence"]["range"]["numberOfOccurrences"], 4,
        "{planning}"
    );

    // A new title is all an update sends: the series' rule (and with it Outlook's changed
    // occurrences) and its formatted body are left alone.
    let planning_uid = h
        .ok(
            "calendar_check",
            json!({"start": "2026-12-03", "end": "2026-12-04", "query": "planning"}),
        )
        .await["events"][0]["uid"]
        .clone();
    h.ok(
        "calendar_update",
        json!({"uid": planning_uid, "calendar": calendar, "title": "Planning (Q1)"}),
    )
    .await;
    let patch = graph.last_patch().await;
    let fields: Vec<&String> = patch.as_object().unwrap().keys().collect();
    assert_eq!(fields, ["subject"], "{patch}");

    // A create whose answer is lost is sent again at the next sync, and Graph (by the
    // transactionId) answers with the event the first one made: no second meeting.
    graph.lose_next_answer().await;
    h.ok(
        "calendar_create",
        json!({"title": "Offsite prep", "start": "2026-12-04T09:00", "end": "2026-12-04T10:00",
               "timezone": "Europe/Berlin", "calendar": calendar}),
    )
    .await;
    h.ok("calendar_sync", json!({"account": "m365"})).await;
    let preps = graph
        .events()
        .await
        .iter()
        .filter(|e| e["subject"] == "Offsite prep")
        .count();
    assert_eq!(preps, 1);

    // An imported file's attendees are in what the person approves: Graph would invite them.
    std::fs::write(
        h.workspace.join("invite.ics"),
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//x//x\r\nBEGIN:VEVENT\r\nUID:imp-1\r\n\
         DTSTAMP:20261101T000000Z\r\nDTSTART:20261205T090000Z\r\nDTEND:20261205T100000Z\r\n\
         SUMMARY:Imported\r\nATTENDEE;CN=Everyone:mailto:all@contoso.test\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
    )
    .unwrap();
    h.ok(
        "calendar_import",
        json!({"path": "invite.ics", "calendar": calendar}),
    )
    .await;
    let asked = recorder.asked.lock().unwrap().clone();
    let import = asked
        .iter()
        .rev()
        .find(|(tool, _)| tool == "calendar_import")
        .expect("asked");
    assert!(
        format!("{:?}", import.1).contains("all@contoso.test"),
        "{import:?}"
    );

    // Hourly repeats: no Graph pattern holds them; kept here, and the sync says so.
    h.ok(
        "calendar_create",
        json!({"title": "Stretch", "start": "2026-12-03T10:00",
        "end": "2026-12-03T10:05", "timezone": "Europe/Berlin", "calendar": calendar,
        "recurrence": "FREQ=HOURLY;COUNT=3"}),
    )
    .await;
    let again = h.ok("calendar_sync", json!({"account": "m365"})).await;
    let skipped = again["reports"][0]["skipped"].to_string();
    assert!(
        skipped.contains("Microsoft 365 cannot hold") && skipped.contains("Stretch"),
        "{again}"
    );
    let kept = h
        .ok(
            "calendar_check",
            json!({"start": "2026-12-03", "end": "2026-12-04", "query": "stretch"}),
        )
        .await;
    assert_eq!(kept["events"].as_array().unwrap().len(), 3, "{kept}");
}

/// Two processes sharing one keyring (the window and a command line) refresh the same expiring
/// token at the same moment: the provider rotates refresh tokens, so without a lock across them
/// the second refresh spends a used refresh token and the sign-in is lost. With it, one refreshes
/// and the other reads what it saved; both calls read mail, and the account stays signed in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_refreshing_one_account_do_not_sign_it_out() {
    use cowork_core::{CallRequest, Caller};
    use cowork_tests::Recorder;
    use serde_json::json;

    let (_provider, _mail, h, _) = oauth_mail_account().await;
    // The second "process": another app on the same data dir and keyring.
    let other = cowork_app::App::builder(cowork_app::AppOptions {
        home: Some(h.store.dir().root().to_path_buf()),
        workspace_roots: vec![h.workspace.clone()],
        approver: Arc::new(Recorder::default()),
        scheduler: Default::default(),
    })
    .secrets(h.secrets.clone())
    .without_logging()
    .open()
    .unwrap();
    let sign_in = h.app.begin_sign_in("alice").await.unwrap();
    let url = sign_in.url().clone();
    let person = tokio::spawn(async move { OidcProvider::person_signs_in(&url, "alice").await });
    h.app.finish_sign_in(sign_in).await.unwrap();
    person.await.unwrap();

    // Past the margin, both at once.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let check = || CallRequest::new("email_check", json!({"account": "alice"}), Caller::Cli, "c");
    let (here, there) = tokio::join!(h.scheduler.call(check()), other.scheduler().call(check()));
    assert!(here.result.is_ok(), "{:?}", here.result);
    assert!(there.result.is_ok(), "{:?}", there.result);
    assert!(
        h.app.signed_in("alice"),
        "still signed in after both refreshed"
    );
}

/// A provider issuing 62-s tokens (within the keeper's minute of margin two seconds after they
/// are issued), Dovecot taking them, and an app whose mail account `alice` signs in there (not
/// signed in yet).
async fn oauth_mail_account() -> (
    OidcProvider,
    cowork_tests::peers::MailServer,
    cowork_tests::Harness,
    cowork_store::accounts::Account,
) {
    use cowork_store::accounts::{self, AccountConfig, Auth};
    let provider =
        tokio::task::spawn_blocking(|| OidcProvider::start(&[("OIDC_ACCESS_TTL", "62")]))
            .await
            .unwrap();
    let introspection = provider.introspection_url();
    let mail = tokio::task::spawn_blocking(move || {
        cowork_tests::peers::MailServer::start_oauth_at(&[("alice", "unused")], introspection)
    })
    .await
    .unwrap();
    let h = cowork_tests::Harness::new(Arc::new(cowork_tests::Recorder::default()));
    let mut config = mail.account("alice");
    if let AccountConfig::Mail { auth, .. } = &mut config {
        *auth = Auth::Oauth {
            issuer: provider.issuer(),
            client_id: CLIENT.into(),
            scopes: scopes(),
            endpoints: None,
        };
    }
    let account = accounts::Account {
        name: "alice".into(),
        config,
    };
    accounts::put(&h.store.connect().unwrap(), &account).unwrap();
    (provider, mail, h, account)
}
