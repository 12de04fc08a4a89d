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
    screenshot(&browser, "overview");

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
