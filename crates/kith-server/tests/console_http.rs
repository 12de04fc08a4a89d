//! The web console over plain HTTP (no browser): login and its cookie,
//! CSRF refusals that change nothing, owner isolation, and escaping of
//! hostile memory text on every page.

mod common;
mod console;

use console::{api, ingest, keyed_server, Client, ALICE_KEY, BOB_KEY, HOSTILE};

#[test]
fn login_sets_a_strict_http_only_cookie_and_bad_keys_open_nothing() {
    let server = keyed_server();
    let mut c = Client::new(&server);
    let a = c.get("/ui");
    assert_eq!(a.status, 303);
    assert_eq!(a.header("location"), Some("/ui/login"));
    let a = c.get("/ui/login");
    assert_eq!(a.status, 200);
    assert!(a.body.contains(r#"name="key""#), "{}", a.body);

    let a = c.post("/ui/login", &[("key", "not-a-key-of-this-server")]);
    assert_eq!(a.status, 401);
    assert!(a.header("set-cookie").is_none());
    assert!(a.body.contains("not one of this server"), "{}", a.body);
    assert_eq!(c.get("/ui").status, 303, "a failed login opens no session");

    let a = c.post("/ui/login", &[("key", ALICE_KEY)]);
    assert_eq!(a.status, 303);
    assert_eq!(a.header("location"), Some("/ui"));
    let cookie = a.header("set-cookie").expect("a cookie");
    for flag in ["kith_console=", "HttpOnly", "SameSite=Strict", "Path=/ui"] {
        assert!(cookie.contains(flag), "{flag} missing from {cookie}");
    }
    assert!(
        !cookie.contains(ALICE_KEY),
        "the cookie never holds the key"
    );

    let a = c.get("/ui");
    assert_eq!(a.status, 200);
    assert!(a.body.contains(r#"id="owner">alice<"#), "{}", a.body);
    let csp = a.header("content-security-policy").expect("a CSP");
    assert!(csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"));
    assert_eq!(a.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(a.header("cache-control"), Some("no-store"));

    // A made-up cookie is no session.
    let mut forged = Client::new(&server);
    forged.cookie = Some(format!("kith_console={}", "0".repeat(64)));
    assert_eq!(forged.get("/ui").status, 303);

    // Logging out ends the session on the server, not only in the browser.
    let old = c.cookie.clone();
    let token = a.csrf();
    let out = c.post("/ui/logout", &[("csrf", &token)]);
    assert_eq!(out.status, 303);
    assert!(out
        .header("set-cookie")
        .expect("cleared")
        .contains("Max-Age=0"));
    c.cookie = old;
    assert_eq!(c.get("/ui").status, 303);
}

#[test]
fn a_keyless_server_logs_in_by_owner_name() {
    let server = common::TestServer::start(Default::default(), |m| m);
    let mut c = Client::new(&server);
    let a = c.get("/ui/login");
    assert!(a.body.contains(r#"name="owner""#) && a.body.contains(r#"value="alice""#));
    assert_eq!(
        c.post("/ui/login", &[("owner", "no spaces allowed")])
            .status,
        401
    );
    assert_eq!(c.post("/ui/login", &[("owner", "carol")]).status, 303);
    assert!(c.get("/ui").body.contains(r#"id="owner">carol<"#));
}

#[test]
fn hostile_memory_text_is_escaped_on_every_page() {
    let server = keyed_server();
    let event = ingest(&server, ALICE_KEY, "Mallory", "s-1", HOSTILE);
    ingest(
        &server,
        ALICE_KEY,
        "Mallory",
        "s-1",
        "I work at <b>Northwind</b> & co.",
    );
    let mut c = Client::new(&server);
    c.login(ALICE_KEY);
    let pages = [
        "/ui".to_string(),
        "/ui/conversation".to_string(),
        "/ui/conversation?session=s-1".to_string(),
        format!("/ui/turns/{event}"),
        "/ui/conversation?q=script".to_string(),
        format!("/ui/conversation?q={}", console::encode(HOSTILE)),
    ];
    for page in &pages {
        let a = c.get(page);
        assert_eq!(a.status, 200, "{page}: {}", a.body);
        for raw in ["<script>alert", "<img src=x", "<b>Northwind"] {
            assert!(!a.body.contains(raw), "{page} shows {raw:?} unescaped");
        }
        assert!(!a.body.contains("onerror=alert(1)>"), "{page}");
    }
    let a = c.get(&format!("/ui/turns/{event}"));
    assert!(
        a.body
            .contains("&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;"),
        "{}",
        a.body
    );
    let a = c.get("/ui/conversation?session=s-1");
    assert!(
        a.body.contains("&lt;b&gt;Northwind&lt;/b&gt; &amp; co."),
        "{}",
        a.body
    );
}

#[test]
fn forms_without_the_session_csrf_token_change_nothing() {
    let server = keyed_server();
    let event = ingest(
        &server,
        ALICE_KEY,
        "Maya",
        "s-1",
        "I moved to Lisbon in September.",
    );
    let mut c = Client::new(&server);
    c.login(ALICE_KEY);
    let token = c.get("/ui").csrf();
    let fields = |csrf: &'static str| {
        vec![
            ("event", event.clone()),
            ("reason", "test".to_string()),
            ("confirm", "yes".to_string()),
            ("csrf", csrf.to_string()),
        ]
    };
    for csrf in ["", "0000", "x"] {
        let f = fields(csrf);
        let f: Vec<(&str, &str)> = f.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let a = c.post("/ui/forget", &f);
        assert_eq!(a.status, 403, "csrf {csrf:?}: {}", a.body);
        assert!(a.body.contains("security token"), "{}", a.body);
    }
    // The right token from another site's page: refused by its origin.
    let a = c.post_with(
        "/ui/forget",
        &[
            ("event", &event),
            ("reason", "test"),
            ("confirm", "yes"),
            ("csrf", &token),
        ],
        &[("origin", "http://evil.example")],
    );
    assert_eq!(a.status, 403, "{}", a.body);
    // Another owner's token is not this session's.
    let mut bob = Client::new(&server);
    bob.login(BOB_KEY);
    let bob_token = bob.get("/ui").csrf();
    assert_ne!(bob_token, token);
    let a = c.post(
        "/ui/forget",
        &[
            ("event", &event),
            ("reason", "test"),
            ("confirm", "yes"),
            ("csrf", &bob_token),
        ],
    );
    assert_eq!(a.status, 403);
    // Logout too needs the token.
    assert_eq!(c.post("/ui/logout", &[("csrf", "nope")]).status, 403);
    assert_eq!(c.get("/ui").status, 200, "still logged in");

    let (status, body) = api(
        &server,
        ALICE_KEY,
        "GET",
        &format!("/v1/events/{event}"),
        None,
    );
    assert_eq!(status, 200);
    assert_eq!(
        body["content"], "I moved to Lisbon in September.",
        "nothing was forgotten"
    );
}

#[test]
fn one_owner_never_sees_another_owners_memory() {
    let server = keyed_server();
    let event = ingest(
        &server,
        ALICE_KEY,
        "Maya",
        "alice-session",
        "Alice's secret: the vault code is 4711.",
    );
    ingest(&server, BOB_KEY, "Bob", "bob-session", "Bob likes tea.");
    let mut bob = Client::new(&server);
    bob.login(BOB_KEY);
    let pages = [
        "/ui".to_string(),
        "/ui/conversation".to_string(),
        "/ui/conversation?q=vault".to_string(),
    ];
    for page in &pages {
        let a = bob.get(page);
        assert_eq!(a.status, 200, "{page}");
        assert!(!a.body.contains("4711"), "{page}: {}", a.body);
        assert!(!a.body.contains("alice-session"), "{page}");
    }
    assert!(bob.get("/ui/conversation").body.contains("bob-session"));
    let a = bob.get(&format!("/ui/turns/{event}"));
    assert_eq!(a.status, 404);
    assert!(!a.body.contains("4711"));
    assert_eq!(
        bob.get("/ui/conversation?session=alice-session").status,
        404
    );
    let mut alice = Client::new(&server);
    alice.login(ALICE_KEY);
    assert!(alice
        .get(&format!("/ui/turns/{event}"))
        .body
        .contains("4711"));
}
