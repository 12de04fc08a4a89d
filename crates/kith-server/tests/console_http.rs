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
        "<i>Eve</i>",
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
        for raw in ["<script>alert", "<img src=x", "<b>Northwind", "<i>Eve"] {
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
    assert!(a.body.contains("&lt;i&gt;Eve&lt;/i&gt;"), "{}", a.body);
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

#[test]
fn the_inbox_reviews_with_the_same_records_as_the_api() {
    let server = keyed_server();
    let seeded = console::seed_review(&server, ALICE_KEY);
    let mut c = Client::new(&server);
    c.login(ALICE_KEY);
    let inbox = c.get("/ui/inbox");
    assert_eq!(inbox.status, 200);
    for op in [&seeded.alicia_proposal, &seeded.bob_proposal] {
        assert!(
            inbox.body.contains(&format!(r#"id="proposal-{op}""#)),
            "{}",
            inbox.body
        );
    }
    assert!(
        inbox.body.contains("Alicia") && inbox.body.contains("met Alicia"),
        "evidence side by side"
    );
    let csrf = inbox.csrf();

    // A reject without a reason is refused and writes nothing.
    let path = format!("/ui/inbox/{}/review", seeded.bob_proposal);
    let a = c.post(
        &path,
        &[("csrf", &csrf), ("decision", "reject"), ("reason", " ")],
    );
    assert_eq!(a.status, 422, "{}", a.body);
    let (_, pending) = api(
        &server,
        ALICE_KEY,
        "GET",
        "/v1/aliases?status=pending",
        None,
    );
    assert_eq!(pending["proposals"].as_array().map(Vec::len), Some(2));

    let a = c.post(
        &path,
        &[
            ("csrf", &csrf),
            ("decision", "reject"),
            ("reason", "two different people"),
            ("reviewer", "alice"),
        ],
    );
    assert_eq!(a.status, 303, "{}", a.body);
    assert_eq!(a.header("location"), Some("/ui/inbox?notice=reject"));
    let path = format!("/ui/inbox/{}/review", seeded.alicia_proposal);
    let a = c.post(
        &path,
        &[
            ("csrf", &csrf),
            ("decision", "accept"),
            ("reason", ""),
            ("reviewer", "alice"),
        ],
    );
    assert_eq!(a.status, 303, "{}", a.body);

    // The API sees the console's decisions, as it would the CLI's.
    let (_, accepted) = api(
        &server,
        ALICE_KEY,
        "GET",
        "/v1/aliases?status=accepted",
        None,
    );
    assert_eq!(
        accepted["proposals"][0]["op_id"],
        seeded.alicia_proposal.as_str()
    );
    let (_, rejected) = api(
        &server,
        ALICE_KEY,
        "GET",
        "/v1/aliases?status=rejected",
        None,
    );
    assert_eq!(
        rejected["proposals"][0]["op_id"],
        seeded.bob_proposal.as_str()
    );
    let (_, journal) = api(
        &server,
        ALICE_KEY,
        "GET",
        "/v1/journal?kind=ALIAS_PROPOSAL_REJECTED",
        None,
    );
    let record = &journal["records"][0]["payload"]["record"];
    assert_eq!(record["reason"], "two different people", "{journal}");
    assert_eq!(record["reviewer_id"], "alice");
    // Deciding again otherwise is refused (409) and changes nothing.
    let a = c.post(
        &path,
        &[
            ("csrf", &csrf),
            ("decision", "reject"),
            ("reason", "changed my mind"),
        ],
    );
    assert_eq!(a.status, 409, "{}", a.body);
    assert!(c.get("/ui/inbox").body.contains(r#"id="empty""#));
    let journal = c.get("/ui/journal").body;
    assert!(
        journal.contains("reject “Alice” = “Bob”: two different people (by alice)"),
        "{journal}"
    );
    assert!(journal.contains("accept “Alice” = “Alicia”"), "{journal}");
    assert!(journal.contains("proposed “Alice” = “Alicia”"), "{journal}");
    assert!(c.get("/ui/inbox?status=all").body.contains("rejected"));
}

#[test]
fn the_journal_undoes_a_merge_and_refuses_what_cannot_be_undone() {
    let server = keyed_server();
    let seeded = console::seed_review(&server, ALICE_KEY);
    let mut c = Client::new(&server);
    c.login(ALICE_KEY);
    let page = c.get("/ui/journal");
    assert_eq!(page.status, 200);
    let row = format!(r#"id="op-{}""#, seeded.merge_op);
    assert!(page.body.contains(&row), "{}", page.body);
    assert!(
        page.body.contains("merged “Postgres” into “PostgreSQL”"),
        "{}",
        page.body
    );
    let undo = format!("/ui/journal/{}/undo", seeded.merge_op);
    assert!(page.body.contains(&format!(r#"action="{undo}""#)));
    // A proposal is not something to undo: no button, and a post is refused.
    let refused = c.post(
        &format!("/ui/journal/{}/undo", seeded.bob_proposal),
        &[("csrf", &page.csrf())],
    );
    assert_eq!(refused.status, 409, "{}", refused.body);
    let (_, undos) = api(&server, ALICE_KEY, "GET", "/v1/journal?kind=UNDO", None);
    assert_eq!(undos["records"].as_array().map(Vec::len), Some(0));

    let a = c.post(&undo, &[("csrf", &page.csrf())]);
    assert_eq!(a.status, 303, "{}", a.body);
    let (_, undos) = api(&server, ALICE_KEY, "GET", "/v1/journal?kind=UNDO", None);
    let records = undos["records"].as_array().expect("records");
    assert_eq!(records.len(), 1);
    assert_eq!(
        records[0]["payload"]["record"]["undone_operation_id"],
        seeded.merge_op.as_str()
    );
    let page = c.get("/ui/journal?notice=undone");
    assert!(page.body.contains(r#"id="notice""#));
    assert!(
        page.body.contains("undid ORGANIZER_MERGED"),
        "{}",
        page.body
    );
    // Both entities are back.
    let ids = console::entity_ids(&server, ALICE_KEY);
    assert!(
        ids.contains_key("Postgres") && ids.contains_key("PostgreSQL"),
        "{ids:?}"
    );
    // Filtered by kind, and a kind that does not exist is a readable 422.
    assert!(c.get("/ui/journal?kind=undo").body.contains("UNDO"));
    assert_eq!(c.get("/ui/journal?kind=NOPE").status, 422);
}

#[test]
fn ask_shows_what_retrieve_answers() {
    let server = keyed_server();
    ingest(
        &server,
        ALICE_KEY,
        "Maya",
        "s1",
        "I moved to Lisbon in September.",
    );
    ingest(
        &server,
        ALICE_KEY,
        "Maya",
        "s1",
        "My sister lives in Berlin.",
    );
    ingest(
        &server,
        ALICE_KEY,
        "Jordan",
        "s2",
        "Maya loves the trams of Lisbon.",
    );
    let mut c = Client::new(&server);
    c.login(ALICE_KEY);
    let form = c.get("/ui/ask");
    let a = c.post(
        "/ui/ask",
        &[
            ("csrf", &form.csrf()),
            ("q", "Where does Maya live? Lisbon"),
            ("budget", "256"),
            ("limit", "5"),
        ],
    );
    assert_eq!(a.status, 200, "{}", a.body);
    let (_, api_answer) = api(
        &server,
        ALICE_KEY,
        "POST",
        "/v1/retrieve",
        Some(
            serde_json::json!({"query": "Where does Maya live? Lisbon", "token_budget": 256, "limit": 5, "record": false}),
        ),
    );
    let results = api_answer["results"].as_array().expect("results");
    assert!(!results.is_empty());
    // The same evidence in the same order, each with its trace.
    let mut at = 0;
    for r in results {
        let event = r["provenance"]["event_id"].as_str().expect("an event");
        let found = a.body[at..]
            .find(&format!("/ui/turns/{event}"))
            .unwrap_or_else(|| panic!("{event} out of order"));
        at += found;
    }
    assert!(a.body.contains(r#"<pre id="context">"#));
    assert!(a.body.contains("lexical #"), "{}", a.body);
    let context = api_answer["context"].as_str().expect("a context");
    let first_line = context.lines().next().expect("a line");
    assert!(a.body.contains(&html_escape(first_line)), "{first_line}");
    // Recorded, like any retrieval: its receipt is in the journal.
    let (_, receipts) = api(
        &server,
        ALICE_KEY,
        "GET",
        "/v1/journal?kind=RETRIEVAL_RECORDED",
        None,
    );
    assert_eq!(receipts["records"].as_array().map(Vec::len), Some(1));
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

#[test]
fn forgetting_a_turn_shows_what_goes_then_erases_it() {
    let server = keyed_server();
    let event = ingest(&server, ALICE_KEY, "Maya", "s1", "My door code is 4711.");
    ingest(&server, ALICE_KEY, "Maya", "s1", "I like tea.");
    let mut c = Client::new(&server);
    c.login(ALICE_KEY);
    let turn = c.get(&format!("/ui/turns/{event}"));
    let csrf = turn.csrf();
    let dry = c.post(
        "/ui/forget",
        &[("csrf", &csrf), ("event", &event), ("reason", "a secret")],
    );
    assert_eq!(dry.status, 200, "{}", dry.body);
    assert!(
        dry.body.contains("would erase <b>1</b> message"),
        "{}",
        dry.body
    );
    let (_, body) = api(
        &server,
        ALICE_KEY,
        "GET",
        &format!("/v1/events/{event}"),
        None,
    );
    assert_eq!(
        body["content"], "My door code is 4711.",
        "a dry run changes nothing"
    );
    let done = c.post(
        "/ui/forget",
        &[
            ("csrf", &csrf),
            ("event", &event),
            ("reason", "a secret"),
            ("confirm", "yes"),
        ],
    );
    assert_eq!(done.status, 200, "{}", done.body);
    assert!(
        done.body.contains(r#"id="forgotten""#) && done.body.contains("Clean."),
        "{}",
        done.body
    );
    let (_, body) = api(
        &server,
        ALICE_KEY,
        "GET",
        &format!("/v1/events/{event}"),
        None,
    );
    assert_eq!(body["content"], "");
    let turn = c.get(&format!("/ui/turns/{event}"));
    assert!(turn.body.contains("Forgotten: a secret") && !turn.body.contains("4711"));
    assert!(c
        .get("/ui/journal")
        .body
        .contains("forgot 1 message(s): a secret"));
    // Another owner cannot forget it (404), even with their own valid token.
    let other = ingest(&server, ALICE_KEY, "Maya", "s9", "Still here.");
    let mut bob = Client::new(&server);
    bob.login(BOB_KEY);
    let bob_csrf = bob.get("/ui").csrf();
    let a = bob.post(
        "/ui/forget",
        &[
            ("csrf", &bob_csrf),
            ("event", &other),
            ("reason", "x"),
            ("confirm", "yes"),
        ],
    );
    assert_eq!(a.status, 404, "{}", a.body);
    let a = bob.post(
        "/ui/forget",
        &[
            ("csrf", &bob_csrf),
            ("session", "s9"),
            ("reason", "x"),
            ("confirm", "yes"),
        ],
    );
    assert_eq!(a.status, 404, "{}", a.body);
    let (_, body) = api(
        &server,
        ALICE_KEY,
        "GET",
        &format!("/v1/events/{other}"),
        None,
    );
    assert_eq!(body["content"], "Still here.");
}

#[test]
fn a_claim_is_corrected_and_retracted_from_its_page_and_undone_from_the_journal() {
    let server = keyed_server();
    ingest(&server, ALICE_KEY, "Maya", "s1", "I work at Northwind.");
    let (_, claims) = api(&server, ALICE_KEY, "GET", "/v1/claims?subject=maya", None);
    let claim = claims[0]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("a claim: {claims}"))
        .to_string();
    let mut c = Client::new(&server);
    c.login(ALICE_KEY);
    let page = c.get(&format!("/ui/nodes/{claim}"));
    assert_eq!(page.status, 200);
    assert!(page.body.contains("I work at Northwind."), "{}", page.body);
    let csrf = page.csrf();
    let a = c.post(
        &format!("/ui/claims/{claim}/correct"),
        &[("csrf", &csrf), ("object", ""), ("reason", "x")],
    );
    assert_eq!(a.status, 422, "an empty value is refused: {}", a.body);
    let a = c.post(
        &format!("/ui/claims/{claim}/correct"),
        &[
            ("csrf", &csrf),
            ("object", "Contoso"),
            ("reason", "she moved jobs"),
        ],
    );
    assert_eq!(a.status, 303, "{}", a.body);
    let replacement = a.header("location").expect("to the new claim").to_string();
    let page = c.get(&replacement);
    assert!(
        page.body.contains("Contoso") && page.body.contains(r#"id="notice""#),
        "{}",
        page.body
    );
    let (_, claims) = api(&server, ALICE_KEY, "GET", "/v1/claims?subject=maya", None);
    assert_eq!(claims[0]["object"], "Contoso", "{claims}");
    // The entity page shows the old value among the superseded.
    let ids = console::entity_ids(&server, ALICE_KEY);
    let maya = c.get(&format!("/ui/nodes/{}", ids["Maya"]));
    let past = &maya.body[maya.body.find(r#"id="past-claims""#).expect("past claims")..];
    assert!(past.contains("Northwind"), "{}", maya.body);
    assert!(maya.body.contains(r#"<svg class="graph""#));
    // Undo the correction from the journal: Northwind is current again.
    let journal = c.get("/ui/journal?kind=CLAIM_CORRECTED");
    let op = journal
        .body
        .split(r#"action="/ui/journal/"#)
        .nth(1)
        .expect("an undo form")
        .split('/')
        .next()
        .expect("an id")
        .to_string();
    assert_eq!(
        c.post(&format!("/ui/journal/{op}/undo"), &[("csrf", &csrf)])
            .status,
        303
    );
    let (_, claims) = api(&server, ALICE_KEY, "GET", "/v1/claims?subject=maya", None);
    assert_eq!(claims[0]["object"], "Northwind", "{claims}");
    // Retract it.
    let a = c.post(
        &format!("/ui/claims/{claim}/retract"),
        &[("csrf", &csrf), ("reason", "never worked there")],
    );
    assert_eq!(a.status, 303, "{}", a.body);
    let (_, claims) = api(&server, ALICE_KEY, "GET", "/v1/claims?subject=maya", None);
    assert_eq!(claims.as_array().map(Vec::len), Some(0), "{claims}");
    assert!(c
        .get(&format!("/ui/nodes/{claim}"))
        .body
        .contains("Retracted: never worked there"));
}

#[test]
fn hostile_entity_names_are_escaped_in_lists_graphs_and_the_inbox() {
    let server = keyed_server();
    let (status, body) = api(
        &server,
        ALICE_KEY,
        "POST",
        "/v1/events",
        Some(serde_json::json!({"content": HOSTILE, "node_type": "entity"})),
    );
    assert_eq!(status, 201, "{body}");
    let hostile = body["node_id"].as_str().expect("a node").to_string();
    let (status, body) = api(
        &server,
        ALICE_KEY,
        "POST",
        "/v1/events",
        Some(serde_json::json!({"content": "Mallory", "node_type": "entity"})),
    );
    assert_eq!(status, 201, "{body}");
    let mallory = body["node_id"].as_str().expect("a node").to_string();
    let (status, body) = api(
        &server,
        ALICE_KEY,
        "POST",
        "/v1/aliases",
        Some(serde_json::json!({"a": hostile, "b": mallory, "score": 0.9})),
    );
    let mut c = Client::new(&server);
    c.login(ALICE_KEY);
    let mut pages = vec![
        "/ui/entities".to_string(),
        "/ui/entities?q=script".to_string(),
        format!("/ui/nodes/{hostile}"),
        format!("/ui/nodes/{mallory}"),
        "/ui/journal".to_string(),
    ];
    if status == 200 {
        pages.push("/ui/inbox".to_string());
    } else {
        assert_eq!(status, 409, "{body}");
    }
    for page in &pages {
        let a = c.get(page);
        assert_eq!(a.status, 200, "{page}: {}", a.body);
        for raw in ["<script>alert", "<img src=x"] {
            assert!(!a.body.contains(raw), "{page} shows {raw:?} unescaped");
        }
    }
    assert!(c.get("/ui/entities").body.contains("&lt;script&gt;"));
}

#[test]
fn bad_ids_and_parameters_answer_readable_errors() {
    let server = keyed_server();
    let mut c = Client::new(&server);
    c.login(ALICE_KEY);
    for (path, status) in [
        ("/ui/turns/not-an-id", 404),
        ("/ui/nodes/00000000-0000-0000-0000-000000000000", 404),
        ("/ui/conversation?session=nope", 404),
        ("/ui/conversation?after=x&session=s", 422),
        ("/ui/inbox?status=maybe", 422),
        ("/ui/entities?bogus=1", 422),
        ("/ui/no/such/page", 404),
    ] {
        let a = c.get(path);
        assert_eq!(a.status, status, "{path}: {}", a.body);
        assert!(a.body.contains(r#"class="error""#), "{path}: {}", a.body);
    }
}

#[test]
fn a_claim_about_the_wrong_person_moves_to_the_right_one_and_back() {
    let server = keyed_server();
    ingest(&server, ALICE_KEY, "Maya", "s1", "I work at Northwind.");
    ingest(&server, ALICE_KEY, "Jordan", "s1", "I live in Porto.");
    let (_, claims) = api(&server, ALICE_KEY, "GET", "/v1/claims?subject=maya", None);
    let claim = claims[0]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("a claim: {claims}"))
        .to_string();
    let maya = claims[0]["subject_id"]
        .as_str()
        .expect("a subject")
        .to_string();
    let mut c = Client::new(&server);
    c.login(ALICE_KEY);
    let page = c.get(&format!("/ui/nodes/{claim}"));
    assert!(
        page.body
            .contains(&format!(r#"action="/ui/claims/{claim}/rebind""#)),
        "{}",
        page.body
    );
    let csrf = page.csrf();
    let rebind = format!("/ui/claims/{claim}/rebind");
    // Nobody of that name: refused, nothing moves.
    let a = c.post(
        &rebind,
        &[
            ("csrf", &csrf),
            ("entity", &maya),
            ("to", "Nobody Here"),
            ("reason", "x"),
        ],
    );
    assert_eq!(a.status, 422, "{}", a.body);
    assert!(a.body.contains("No entity is named"), "{}", a.body);
    let a = c.post(
        &rebind,
        &[
            ("csrf", &csrf),
            ("entity", &maya),
            ("to", "jordan"),
            ("reason", "Jordan said it"),
        ],
    );
    assert_eq!(a.status, 303, "{}", a.body);
    let (_, jordan) = api(&server, ALICE_KEY, "GET", "/v1/claims?subject=jordan", None);
    assert!(
        jordan
            .as_array()
            .expect("claims")
            .iter()
            .any(|c| c["id"] == claim.as_str()),
        "{jordan}"
    );
    let (_, maya_claims) = api(&server, ALICE_KEY, "GET", "/v1/claims?subject=maya", None);
    assert!(maya_claims
        .as_array()
        .expect("claims")
        .iter()
        .all(|c| c["id"] != claim.as_str()));
    // Undo from the journal: back to Maya.
    let journal = c.get("/ui/journal?kind=IDENTITY_CORRECTED");
    let op = journal
        .body
        .split(r#"action="/ui/journal/"#)
        .nth(1)
        .expect("an undo form")
        .split('/')
        .next()
        .expect("an id")
        .to_string();
    assert_eq!(
        c.post(&format!("/ui/journal/{op}/undo"), &[("csrf", &csrf)])
            .status,
        303
    );
    let (_, maya_claims) = api(&server, ALICE_KEY, "GET", "/v1/claims?subject=maya", None);
    assert!(maya_claims
        .as_array()
        .expect("claims")
        .iter()
        .any(|c| c["id"] == claim.as_str()));
    // Or a new person.
    let a = c.post(
        &rebind,
        &[
            ("csrf", &csrf),
            ("entity", &maya),
            ("to", "Maya Berg"),
            ("new_person", "yes"),
            ("reason", "two Mayas"),
        ],
    );
    assert_eq!(a.status, 303, "{}", a.body);
    let (_, berg) = api(
        &server,
        ALICE_KEY,
        "GET",
        "/v1/claims?subject=maya%20berg",
        None,
    );
    assert_eq!(berg[0]["id"], claim.as_str(), "{berg}");
    let target = a.header("location").expect("to the new person").to_string();
    assert!(c.get(&target).body.contains("Maya Berg"));
}

/// The claim row of an entity page that mentions `needle`.
fn claim_row(body: &str, needle: &str) -> String {
    body.split(r#"<tr class="claim">"#)
        .find(|r| r.contains(needle))
        .unwrap_or_else(|| panic!("no row for {needle}: {body}"))
        .to_string()
}

/// What was said under a condition is marked on its entity's page, and the
/// API's facts view carries the condition.
#[test]
fn a_conditional_claim_is_marked_on_its_entitys_page() {
    let server = keyed_server();
    ingest(
        &server,
        ALICE_KEY,
        "Maya",
        "s1",
        "If I get the job at Stripe, I'll move to Dublin.",
    );
    ingest(&server, ALICE_KEY, "Maya", "s1", "I live in Leeds.");
    ingest(
        &server,
        ALICE_KEY,
        "Maya",
        "s1",
        "Maybe I'll move to Porto.",
    );
    let (_, claims) = api(&server, ALICE_KEY, "GET", "/v1/claims?subject=maya", None);
    let facts = claims.as_array().expect("claims");
    let dublin = facts
        .iter()
        .find(|f| f["object"] == "Dublin")
        .unwrap_or_else(|| panic!("{claims}"));
    assert_eq!(dublin["epistemic_type"], "conditional");
    assert_eq!(dublin["condition"], "If I get the job at Stripe");
    let maya = dublin["subject_id"]
        .as_str()
        .expect("a subject")
        .to_string();
    let mut c = Client::new(&server);
    c.login(ALICE_KEY);
    let page = c.get(&format!("/ui/nodes/{maya}"));
    let row = |needle: &str| claim_row(&page.body, needle);
    assert!(row("Dublin").contains(r#"class="muted epistemic">conditional<"#));
    assert!(!row("Leeds").contains("epistemic"));
    // A possibility too, as `kith claims list` marks it.
    assert!(row("Porto").contains(r#"class="muted epistemic">hypothetical<"#));
}

/// What the owner reports someone else saying (`kith_ingest_v8`) is marked
/// with who said it on the page of the person it is about, and the API's
/// facts view carries the reporter.
#[test]
fn a_reported_claim_names_its_reporter() {
    let server = keyed_server();
    ingest(
        &server,
        ALICE_KEY,
        "Maya",
        "s1",
        "Dev says Ana loves sushi.",
    );
    ingest(&server, ALICE_KEY, "Maya", "s1", "Ana loves tea.");
    let (_, claims) = api(&server, ALICE_KEY, "GET", "/v1/claims?subject=ana", None);
    let facts = claims.as_array().expect("claims");
    let find = |object: &str| {
        facts
            .iter()
            .find(|f| f["object"] == object)
            .unwrap_or_else(|| panic!("{claims}"))
    };
    assert_eq!(find("sushi")["epistemic_type"], "unverified");
    assert_eq!(find("sushi")["reported"]["by"], "Dev");
    assert_eq!(find("tea")["epistemic_type"], "asserted");
    assert!(find("tea")["reported"].is_null());
    let ana = find("sushi")["subject_id"].as_str().expect("a subject");
    let mut c = Client::new(&server);
    c.login(ALICE_KEY);
    let page = c.get(&format!("/ui/nodes/{ana}"));
    let row = |needle: &str| claim_row(&page.body, needle);
    assert!(row("sushi").contains(r#"class="muted reported">reported by Dev<"#));
    assert!(!row("tea").contains("reported"));
}
