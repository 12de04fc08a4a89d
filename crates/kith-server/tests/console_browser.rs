//! The web console driven in real headless Chromium through WebDriver:
//! a person logs in with a key, finds a turn, asks a question, reviews the
//! alias inbox, undoes a merge, forgets a turn; another owner sees none of
//! it; a form from another origin changes nothing.
//!
//! Set `KITH_CONSOLE_SCREENSHOTS=DIR` to save each page's screenshot there
//! (`docs/console/*.png` are made this way).

mod common;
mod console;
#[path = "console/webdriver.rs"]
mod webdriver;

use console::{api, ingest, keyed_server, ALICE_KEY};
use webdriver::Browser;

/// Saves `name.png` when `KITH_CONSOLE_SCREENSHOTS` names a directory;
/// checks it is a PNG either way.
fn screenshot(browser: &Browser, name: &str) {
    let png = browser.screenshot();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    if let Ok(dir) = std::env::var("KITH_CONSOLE_SCREENSHOTS") {
        std::fs::create_dir_all(&dir).expect("the screenshot directory");
        std::fs::write(format!("{dir}/{name}.png"), png).expect("a screenshot written");
    }
}

fn login(browser: &Browser, base: &str, key: &str) {
    browser.goto(&format!("{base}/ui"));
    assert!(browser.url().ends_with("/ui/login"), "{}", browser.url());
    browser.type_into(&browser.find("#key"), key);
    browser.click(&browser.find("#login"));
    assert!(browser.url().ends_with("/ui"), "{}", browser.url());
}

#[test]
fn a_person_logs_in_and_finds_a_turn() {
    let server = keyed_server();
    ingest(
        &server,
        ALICE_KEY,
        "Maya",
        "2025-03-04",
        "I moved to Lisbon in September.",
    );
    let turn = ingest(
        &server,
        ALICE_KEY,
        "Maya",
        "2025-03-04",
        "I work at Northwind as a designer.",
    );
    let browser = Browser::start(1100, 760);
    login(&browser, &server.base, ALICE_KEY);
    assert_eq!(browser.text(&browser.find("#owner")), "alice");
    // The session cookie is there, but no script can read it.
    let cookies = browser.cookies();
    let session = cookies
        .iter()
        .find(|c| c["name"] == "kith_console")
        .expect("the session cookie");
    assert_eq!(session["httpOnly"], true);
    assert_eq!(session["sameSite"], "Strict");
    assert!(!browser.script_cookies().contains("kith_console"));

    browser.click(&browser.find(r#"nav a[href="/ui/conversation"]"#));
    screenshot(&browser, "sessions");
    let search = browser.find("#search");
    browser.type_into(&search, "Northwind");
    browser.click(&browser.find("#search-go"));
    let hit = browser.find("a.hit");
    assert!(browser.text(&hit).contains("Northwind"));
    browser.click(&hit);
    assert!(
        browser.url().ends_with(&format!("/ui/turns/{turn}")),
        "{}",
        browser.url()
    );
    let article = browser.find(&format!("#turn-{turn}"));
    let text = browser.text(&article);
    assert!(
        text.contains("Maya") && text.contains("user") && text.contains("2025-03-04 19:02"),
        "{text}"
    );
    // The session link leads to the timeline, with this turn in it.
    browser.click(&browser.find(r#"a[href="/ui/conversation?session=2025-03-04"]"#));
    assert_eq!(browser.find_all("article.turn").len(), 2);
    browser.find(&format!("#turn-{turn}"));
    screenshot(&browser, "conversation");

    // Logging out ends the session.
    browser.click(&browser.find(".logout button"));
    assert!(browser.url().ends_with("/ui/login"));
    browser.goto(&format!("{}/ui", server.base));
    assert!(browser.url().ends_with("/ui/login"));
    let (status, _) = api(
        &server,
        ALICE_KEY,
        "GET",
        &format!("/v1/events/{turn}"),
        None,
    );
    assert_eq!(status, 200);
}

#[test]
fn a_person_asks_reviews_the_inbox_undoes_a_merge_and_forgets_in_chromium() {
    let server = keyed_server();
    for (speaker, text) in [
        ("Maya", "I moved to Lisbon in September."),
        ("Maya", "I work at Northwind as a designer."),
        ("Jordan", "Maya loves the trams of Lisbon."),
    ] {
        ingest(&server, ALICE_KEY, speaker, "2025-03-04", text);
    }
    let secret = ingest(
        &server,
        ALICE_KEY,
        "Maya",
        "2025-03-05",
        "My door code is 4711.",
    );
    let seeded = console::seed_review(&server, ALICE_KEY);
    let browser = Browser::start(1100, 760);
    login(&browser, &server.base, ALICE_KEY);
    assert_eq!(browser.text(&browser.find("#count-events b")), "6");
    screenshot(&browser, "overview");

    // Ask: the packed context and the ranked evidence with traces.
    browser.click(&browser.find(r#"nav a[href="/ui/ask"]"#));
    browser.type_into(&browser.find("#question"), "Where does Maya live?");
    browser.click(&browser.find("#ask"));
    assert!(browser.text(&browser.find("#context")).contains("Lisbon"));
    let rows = browser.find_all("#results tr.result");
    assert!(!rows.is_empty());
    assert!(
        browser.text(&rows[0]).contains("#1"),
        "a trace names each path's rank"
    );
    screenshot(&browser, "ask");

    // People and things: an entity with its claims and neighbourhood.
    browser.click(&browser.find(r#"nav a[href="/ui/entities"]"#));
    browser.type_into(&browser.find("#entity-search"), "Maya");
    browser.click(&browser.find("#entity-go"));
    browser.click(&browser.find("a.entity"));
    browser.find("#graph");
    browser.find("#current-claims");
    screenshot(&browser, "entity");
    browser.script(r#"document.getElementById("graph").scrollIntoView(); return null;"#);
    screenshot(&browser, "neighbourhood");

    // The inbox: reject one proposal with a reason, accept the other.
    browser.click(&browser.find(r#"nav a[href="/ui/inbox"]"#));
    screenshot(&browser, "inbox");
    let bob = format!("#proposal-{}", seeded.bob_proposal);
    browser.type_into(
        &browser.find(&format!("{bob} .reject-reason")),
        "two different people",
    );
    browser.click(&browser.find(&format!("{bob} button.reject")));
    assert!(browser.text(&browser.find("#notice")).contains("Rejected"));
    let alicia = format!("#proposal-{}", seeded.alicia_proposal);
    browser.click(&browser.find(&format!("{alicia} button.accept")));
    assert!(browser.text(&browser.find("#notice")).contains("Accepted"));
    browser.find("#empty");
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

    // The journal: undo the merge.
    browser.click(&browser.find(r#"nav a[href="/ui/journal"]"#));
    screenshot(&browser, "journal");
    browser.click(&browser.find(&format!("#op-{} button.undo", seeded.merge_op)));
    assert!(browser.text(&browser.find("#notice")).contains("Undone"));
    let row = browser.find(&format!("#op-{}", seeded.merge_op));
    assert!(browser.text(&row).contains("undone"));
    let (_, undos) = api(&server, ALICE_KEY, "GET", "/v1/journal?kind=UNDO", None);
    assert_eq!(
        undos["records"][0]["payload"]["record"]["undone_operation_id"],
        seeded.merge_op.as_str()
    );

    // Forget a turn: first what would go, then, confirmed, for good.
    browser.goto(&format!("{}/ui/turns/{secret}", server.base));
    browser.type_into(&browser.find("#forget-reason"), "a secret");
    browser.click(&browser.find("#forget-turn"));
    assert!(browser
        .text(&browser.find("#dry-run"))
        .contains("would erase 1 message"));
    screenshot(&browser, "forget");
    browser.click_only(&browser.find("#forget-confirm"));
    browser.accept_alert();
    let done = browser.wait_for("#forgotten");
    assert!(browser.text(&done).contains("1 message(s) erased"));
    let (_, event) = api(
        &server,
        ALICE_KEY,
        "GET",
        &format!("/v1/events/{secret}"),
        None,
    );
    assert_eq!(event["content"], "");
}

/// A page on another origin (another port) that posts a forget to the
/// console as soon as it loads, with a guessed CSRF token.
fn attack_page(target: &str, event: &str) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let addr = listener.local_addr().expect("an address");
    let html = format!(
        r#"<!doctype html><form id="f" method="post" action="{target}/ui/forget"><input name="event" value="{event}"><input name="reason" value="x"><input name="confirm" value="yes"><input name="csrf" value="guessed"></form><script>document.getElementById("f").submit()</script>"#
    );
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for mut stream in listener.incoming().flatten() {
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{html}",
                html.len()
            );
        }
    });
    format!("http://{addr}/")
}

#[test]
fn owners_stay_apart_and_a_forged_form_changes_nothing_in_chromium() {
    let server = keyed_server();
    let secret = ingest(
        &server,
        ALICE_KEY,
        "Maya",
        "alice-only",
        "The vault code is 4711.",
    );
    ingest(
        &server,
        console::BOB_KEY,
        "Bob",
        "bob-session",
        "Bob likes tea.",
    );
    let browser = Browser::start(1000, 700);

    // Bob's console shows Bob's memory only; Alice's turn is 404 to him.
    login(&browser, &server.base, console::BOB_KEY);
    assert_eq!(browser.text(&browser.find("#owner")), "bob");
    assert!(!browser.source().contains("alice-only"));
    browser.goto(&format!("{}/ui/conversation", server.base));
    assert!(browser.source().contains("bob-session") && !browser.source().contains("alice-only"));
    browser.goto(&format!("{}/ui/turns/{secret}", server.base));
    browser.find("#error");
    assert_eq!(browser.text(&browser.find("h1")), "Not Found");
    assert!(!browser.source().contains("4711"));
    browser.goto(&format!("{}/ui", server.base));
    browser.click(&browser.find(".logout button"));

    // Alice, logged in, visits a page on another origin that posts a
    // forget of her turn: refused, nothing erased.
    login(&browser, &server.base, ALICE_KEY);
    browser.goto(&attack_page(&server.base, &secret));
    let error = browser.wait_for("#error");
    assert!(
        browser.text(&error).contains("another site"),
        "{}",
        browser.text(&error)
    );
    let (_, event) = api(
        &server,
        ALICE_KEY,
        "GET",
        &format!("/v1/events/{secret}"),
        None,
    );
    assert_eq!(event["content"], "The vault code is 4711.");
    // Her session is intact.
    browser.goto(&format!("{}/ui/turns/{secret}", server.base));
    assert!(browser
        .text(&browser.find(&format!("#turn-{secret}")))
        .contains("4711"));
}
