//! What the console tests share: a keyed server with two owners and some
//! memory, and a small cookie-keeping HTTP client for the pages.
#![allow(dead_code)]

use std::time::Duration;

use kith_server::{ApiKeys, Auth, ServeOptions};
use serde_json::{json, Value};

use super::common::TestServer;

pub const ALICE_KEY: &str = "alice-console-key-0123456789";
pub const BOB_KEY: &str = "bob-console-key-012345678901";

/// Text no page may show unescaped.
pub const HOSTILE: &str =
    r#"<script>alert("pwned")</script><img src=x onerror=alert(1)> & 'quotes'"#;

/// A server with keys for `alice` and `bob`.
pub fn keyed_server() -> TestServer {
    let keys = ApiKeys::parse_env(&format!("{ALICE_KEY}:alice,{BOB_KEY}:bob")).expect("test keys");
    TestServer::start_with(Auth::Keys(keys), ServeOptions::default(), |m| m)
}

/// One API call with `key`; the status and the JSON answer.
pub fn api(
    server: &TestServer,
    key: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let auth = format!("Bearer {key}");
    let (status, _, text) = server.send(method, path, &[("authorization", &auth)], body);
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// Ingests one message for `key`'s owner; its event id.
pub fn ingest(
    server: &TestServer,
    key: &str,
    speaker: &str,
    session: &str,
    content: &str,
) -> String {
    let (status, body) = api(
        server,
        key,
        "POST",
        "/v1/ingest",
        Some(
            json!({"content": content, "speaker": speaker, "session_id": session, "role": "user",
                    "event_time": "2025-03-04T19:02:00+00:00"}),
        ),
    );
    assert!(status == 200 || status == 201, "{status} {body}");
    body["event_id"].as_str().expect("an event id").to_string()
}

/// An answer: status, headers (lower-case names), body.
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    /// Every value of header `name`.
    pub fn header_all(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// The first value of header `name`.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.header_all(name).into_iter().next()
    }

    /// The value of the first `name="csrf"` field on the page.
    pub fn csrf(&self) -> String {
        let marker = r#"name="csrf" value=""#;
        let at = self.body.find(marker).expect("a page with a CSRF field") + marker.len();
        self.body[at..]
            .split('"')
            .next()
            .expect("a value")
            .to_string()
    }
}

/// A browser without a browser: keeps the console cookie, follows no
/// redirect (so a test sees each 303).
pub struct Client {
    pub base: String,
    pub cookie: Option<String>,
    agent: ureq::Agent,
}

impl Client {
    pub fn new(server: &TestServer) -> Client {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .proxy(None)
            .max_redirects(0)
            .timeout_global(Some(Duration::from_secs(60)))
            .build()
            .new_agent();
        Client {
            base: server.base.clone(),
            cookie: None,
            agent,
        }
    }

    fn send(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<String>,
    ) -> Answer {
        let mut req = ureq::http::Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base));
        if let Some(c) = &self.cookie {
            req = req.header("cookie", c.as_str());
        }
        if body.is_some() {
            req = req.header("content-type", "application/x-www-form-urlencoded");
        }
        for (n, v) in headers {
            req = req.header(*n, *v);
        }
        let mut resp = self
            .agent
            .run(
                req.body(body.unwrap_or_default().into_bytes())
                    .expect("a request"),
            )
            .expect("an answer");
        let headers: Vec<(String, String)> = resp
            .headers()
            .iter()
            .map(|(n, v)| {
                (
                    n.as_str().to_string(),
                    v.to_str().unwrap_or_default().to_string(),
                )
            })
            .collect();
        for (n, v) in &headers {
            if n == "set-cookie" {
                let pair = v.split(';').next().unwrap_or_default().to_string();
                self.cookie = if pair.ends_with('=') {
                    None
                } else {
                    Some(pair)
                };
            }
        }
        Answer {
            status: resp.status().as_u16(),
            headers,
            body: resp.body_mut().read_to_string().unwrap_or_default(),
        }
    }

    pub fn get(&mut self, path: &str) -> Answer {
        self.send("GET", path, &[], None)
    }

    /// Posts `fields` as a form.
    pub fn post(&mut self, path: &str, fields: &[(&str, &str)]) -> Answer {
        self.post_with(path, fields, &[])
    }

    /// Posts `fields` as a form with extra headers.
    pub fn post_with(
        &mut self,
        path: &str,
        fields: &[(&str, &str)],
        headers: &[(&str, &str)],
    ) -> Answer {
        let body = fields
            .iter()
            .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
            .collect::<Vec<_>>()
            .join("&");
        self.send("POST", path, headers, Some(body))
    }

    /// Logs in with `key`; panics unless it worked.
    pub fn login(&mut self, key: &str) {
        let a = self.post("/ui/login", &[("key", key)]);
        assert_eq!(a.status, 303, "{}", a.body);
        assert!(self.cookie.is_some(), "no cookie after login");
    }
}

/// Form encoding of one value.
pub fn encode(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The owner's entities by name.
pub fn entity_ids(server: &TestServer, key: &str) -> std::collections::HashMap<String, String> {
    let (status, body) = api(server, key, "GET", "/v1/nodes?type=entity&limit=1000", None);
    assert_eq!(status, 200, "{body}");
    body["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .map(|n| {
            (
                n["content"].as_str().unwrap_or_default().to_string(),
                n["id"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// What [`seed_review`] made.
pub struct Review {
    /// Proposals Alice = Alicia and Alice = Bob, pending.
    pub alicia_proposal: String,
    pub bob_proposal: String,
    /// The merge of Postgres into PostgreSQL.
    pub merge_op: String,
}

/// Memory with two pending alias proposals and one organizer merge.
pub fn seed_review(server: &TestServer, key: &str) -> Review {
    ingest(
        server,
        key,
        "Maya",
        "s1",
        "Yesterday Alice met Alicia and Bob at the Postgres meetup.",
    );
    ingest(
        server,
        key,
        "Maya",
        "s1",
        "The database of Berlin is PostgreSQL.",
    );
    let ids = entity_ids(server, key);
    let id = |n: &str| {
        ids.get(n)
            .unwrap_or_else(|| panic!("{n} in {ids:?}"))
            .clone()
    };
    let propose = |a: &str, b: &str| {
        let (status, body) = api(
            server,
            key,
            "POST",
            "/v1/aliases",
            Some(json!({"a": id(a), "b": id(b), "score": 0.9})),
        );
        assert_eq!(status, 200, "{body}");
        body["op_id"].as_str().expect("an op id").to_string()
    };
    let alicia_proposal = propose("Alice", "Alicia");
    let bob_proposal = propose("Alice", "Bob");
    let (status, body) = api(
        server,
        key,
        "POST",
        "/v1/organize",
        Some(json!({"jobs": ["alias_resolve"]})),
    );
    assert_eq!(status, 200, "{body}");
    let merges = body["jobs"][0]["merges"].as_array().expect("merges");
    assert_eq!(merges.len(), 1, "{body}");
    Review {
        alicia_proposal,
        bob_proposal,
        merge_op: merges[0]["op_id"].as_str().expect("an op id").to_string(),
    }
}
