//! A small WebDriver client (W3C protocol over HTTP, with ureq and
//! serde_json) driving Debian's headless Chromium through `chromedriver`.
//!
//! `KITH_TEST_CHROMEDRIVER` and `KITH_TEST_CHROMIUM` name the programs
//! (default: `chromedriver` on the PATH and `/usr/bin/chromium`; Debian:
//! `apt-get install chromium chromium-driver`).
#![allow(dead_code)]

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The key W3C WebDriver names an element reference by.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A running chromedriver with one browser session; both end on drop.
pub struct Browser {
    driver: Child,
    base: String,
    agent: ureq::Agent,
    profile: tempfile::TempDir,
}

/// An element on the current page.
#[derive(Debug, Clone)]
pub struct Element(String);

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

impl Browser {
    /// Starts chromedriver and a headless Chromium of `width`×`height`.
    pub fn start(width: u32, height: u32) -> Browser {
        let driver_bin =
            std::env::var("KITH_TEST_CHROMEDRIVER").unwrap_or_else(|_| "chromedriver".into());
        let chromium =
            std::env::var("KITH_TEST_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
        let port = free_port();
        let driver = Command::new(&driver_bin)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start {driver_bin}: {e}; the console's browser tests need Chromium \
                     and its WebDriver (Debian: apt-get install chromium chromium-driver), or \
                     KITH_TEST_CHROMEDRIVER and KITH_TEST_CHROMIUM naming them"
                )
            });
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .proxy(None)
            .timeout_global(Some(Duration::from_secs(120)))
            .build()
            .new_agent();
        let mut browser = Browser {
            driver,
            base: format!("http://127.0.0.1:{port}"),
            agent,
            profile: tempfile::tempdir().expect("a profile directory"),
        };
        browser.wait_ready();
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--no-first-run",
                         format!("--window-size={width},{height}"),
                         format!("--user-data-dir={}", browser.profile.path().display())]
            }
        }}});
        let session = browser.call("POST", "/session", Some(caps));
        let id = session["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("chromedriver opened no session: {session}"))
            .to_string();
        browser.base = format!("{}/session/{id}", browser.base);
        browser
    }

    /// Waits (a liveness bound, not a speed check) until chromedriver answers.
    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(mut r) = self.agent.get(format!("{}/status", self.base)).call() {
                let v: Value = read_json(r.body_mut()).unwrap_or(Value::Null);
                if v["value"]["ready"] == true {
                    return;
                }
            }
            if let Ok(Some(status)) = self.driver.try_wait() {
                panic!("chromedriver exited at start-up: {status}");
            }
            assert!(Instant::now() < deadline, "chromedriver never became ready");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// One WebDriver command; its `value`. An error answer panics with it.
    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let url = format!("{}{path}", self.base);
        let req = ureq::http::Request::builder()
            .method(method)
            .uri(&url)
            .header("content-type", "application/json");
        let bytes = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
        let mut resp = self
            .agent
            .run(req.body(bytes).expect("a request"))
            .unwrap_or_else(|e| panic!("{method} {url}: {e}"));
        let status = resp.status().as_u16();
        let v: Value = read_json(resp.body_mut()).unwrap_or(Value::Null);
        assert!(status == 200, "{method} {path}: {status} {v}");
        v["value"].clone()
    }

    /// Opens `url` and waits for it to load.
    pub fn goto(&self, url: &str) {
        self.call("POST", "/url", Some(json!({ "url": url })));
    }

    /// The current page's URL.
    pub fn url(&self) -> String {
        self.call("GET", "/url", None)
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// The current page's HTML as the browser has it.
    pub fn source(&self) -> String {
        self.call("GET", "/source", None)
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// The first element matching `css`; panics (with the page) if none.
    pub fn find(&self, css: &str) -> Element {
        self.try_find(css)
            .unwrap_or_else(|| panic!("no element {css:?} on {}:\n{}", self.url(), self.source()))
    }

    /// The first element matching `css`, if any.
    pub fn try_find(&self, css: &str) -> Option<Element> {
        let url = format!("{}/element", self.base);
        let body = json!({"using": "css selector", "value": css}).to_string();
        let req = ureq::http::Request::builder()
            .method("POST")
            .uri(&url)
            .header("content-type", "application/json");
        let mut resp = self
            .agent
            .run(req.body(body.into_bytes()).expect("a request"))
            .unwrap_or_else(|e| panic!("POST {url}: {e}"));
        let status = resp.status().as_u16();
        let v = read_json(resp.body_mut()).unwrap_or(Value::Null);
        match status {
            200 => v["value"][ELEMENT].as_str().map(|s| Element(s.to_string())),
            404 if v["value"]["error"] == "no such element" => None,
            _ => panic!("POST {url}: {status} {v}"),
        }
    }

    /// Every element matching `css`.
    pub fn find_all(&self, css: &str) -> Vec<Element> {
        let v = self.call(
            "POST",
            "/elements",
            Some(json!({"using": "css selector", "value": css})),
        );
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|e| e[ELEMENT].as_str().map(|s| Element(s.to_string())))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Clicks `element`, a link or button that leads to another page, and
    /// waits until that page has replaced this one (a click can return
    /// before the navigation starts, on a busy machine).
    pub fn click(&self, element: &Element) {
        self.script("window.kithOldPage = true; return null;");
        self.click_only(element);
        let deadline = Instant::now() + Duration::from_secs(60);
        let loaded =
            "return window.kithOldPage === undefined && document.readyState === 'complete';";
        while self.script(loaded) != Value::Bool(true) {
            assert!(
                Instant::now() < deadline,
                "no new page after a click on {}",
                self.url()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Clicks `element` and returns at once (for a click that opens a
    /// dialog rather than a page).
    pub fn click_only(&self, element: &Element) {
        self.call(
            "POST",
            &format!("/element/{}/click", element.0),
            Some(json!({})),
        );
    }

    /// Types `text` into `element`.
    pub fn type_into(&self, element: &Element, text: &str) {
        self.call(
            "POST",
            &format!("/element/{}/value", element.0),
            Some(json!({ "text": text })),
        );
    }

    /// Clears a text field.
    pub fn clear(&self, element: &Element) {
        self.call(
            "POST",
            &format!("/element/{}/clear", element.0),
            Some(json!({})),
        );
    }

    /// An element's visible text.
    pub fn text(&self, element: &Element) -> String {
        self.call("GET", &format!("/element/{}/text", element.0), None)
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// An element's attribute.
    pub fn attr(&self, element: &Element, name: &str) -> Option<String> {
        self.call(
            "GET",
            &format!("/element/{}/attribute/{name}", element.0),
            None,
        )
        .as_str()
        .map(String::from)
    }

    /// Accepts the open `confirm()` dialog.
    pub fn accept_alert(&self) {
        self.call("POST", "/alert/accept", Some(json!({})));
    }

    /// Runs `script` in the page; its result.
    pub fn script(&self, script: &str) -> Value {
        self.call(
            "POST",
            "/execute/sync",
            Some(json!({"script": script, "args": []})),
        )
    }

    /// The browser's cookies as the page's scripts see them
    /// (`document.cookie`: an `HttpOnly` cookie is not among them).
    pub fn script_cookies(&self) -> String {
        self.script("return document.cookie;")
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// Every cookie the browser holds for the current page, with flags.
    pub fn cookies(&self) -> Vec<Value> {
        self.call("GET", "/cookie", None)
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// A PNG of the viewport.
    pub fn screenshot(&self) -> Vec<u8> {
        let b64 = self.call("GET", "/screenshot", None);
        decode_base64(b64.as_str().expect("base64 text"))
    }

    /// Waits until `css` matches (for pages a script changes); a liveness
    /// bound, not a speed check.
    pub fn wait_for(&self, css: &str) -> Element {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(e) = self.try_find(css) {
                return e;
            }
            assert!(
                Instant::now() < deadline,
                "{css:?} never appeared on {}",
                self.url()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.agent.run(
            ureq::http::Request::builder()
                .method("DELETE")
                .uri(&self.base)
                .body(Vec::new())
                .expect("a request"),
        );
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// A body as JSON (ureq is built here without its `json` feature).
fn read_json(body: &mut ureq::Body) -> Option<Value> {
    let text = body.read_to_string().ok()?;
    serde_json::from_str(&text).ok()
}

/// Standard base64 (WebDriver's screenshots).
fn decode_base64(text: &str) -> Vec<u8> {
    let value = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => (c - b'A') as u32,
            b'a'..=b'z' => (c - b'a' + 26) as u32,
            b'0'..=b'9' => (c - b'0' + 52) as u32,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("not base64: {c}"),
        }
    };
    let bytes: Vec<u8> = text.bytes().filter(|c| !c.is_ascii_whitespace()).collect();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let data: Vec<u8> = chunk.iter().copied().filter(|&c| c != b'=').collect();
        let mut n = 0u32;
        for (i, &c) in data.iter().enumerate() {
            n |= value(c) << (18 - 6 * i);
        }
        let produced = data.len().saturating_sub(1);
        for i in 0..produced {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    out
}

#[test]
fn base64_decodes() {
    assert_eq!(decode_base64("aGVsbG8="), b"hello");
    assert_eq!(decode_base64("aGk="), b"hi");
    assert_eq!(decode_base64("YWJj"), b"abc");
}
