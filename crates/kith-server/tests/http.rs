//! The real server on a loopback port, driven over HTTP: every endpoint,
//! every error class, and cross-owner attempts.

use std::collections::HashSet;
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use kith::{Memory, OwnerId};
use kith_server::{ApiKeys, Auth};
use serde_json::{json, Value};

const ALICE_KEY: &str = "alice-key-0123456789abcdef";
const BOB_KEY: &str = "bob-key-0123456789abcdef00";

/// A server on 127.0.0.1:0 in this process, stopped (gracefully) on drop.
struct TestServer {
    base: String,
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
    _dir: tempfile::TempDir,
}

impl TestServer {
    fn start(auth: Auth) -> TestServer {
        TestServer::start_with(auth, |m| m)
    }

    /// [`TestServer::start`] on a memory `configure` adjusts first.
    fn start_with(auth: Auth, configure: impl FnOnce(Memory) -> Memory) -> TestServer {
        let dir = tempfile::tempdir().unwrap();
        let memory = Arc::new(configure(Memory::init(&dir.path().join("p.kith")).unwrap()));
        let (addr_tx, addr_rx) = mpsc::channel();
        let (stop_tx, stop_rx) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                addr_tx.send(listener.local_addr().unwrap()).unwrap();
                let stop = async move {
                    let _ = tokio::task::spawn_blocking(move || stop_rx.recv()).await;
                };
                kith_server::serve(listener, memory, auth, stop)
                    .await
                    .unwrap();
            });
        });
        let addr = addr_rx.recv_timeout(Duration::from_secs(30)).unwrap();
        TestServer {
            base: format!("http://{addr}"),
            stop: Some(stop_tx),
            thread: Some(thread),
            _dir: dir,
        }
    }

    fn keyed() -> TestServer {
        let keys =
            ApiKeys::parse_env(&format!("{ALICE_KEY}:alice,{BOB_KEY}:bob")).expect("test keys");
        TestServer::start(Auth::Keys(keys))
    }

    fn stop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A reply: status, headers we look at, and the JSON body (Null if none).
struct Reply {
    status: u16,
    body: Value,
    www_authenticate: Option<String>,
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .new_agent()
}

fn send(
    base: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<Vec<u8>>,
) -> Reply {
    let mut req = ureq::http::Request::builder()
        .method(method)
        .uri(format!("{base}{path}"));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let req = req.body(body.unwrap_or_default()).unwrap();
    let mut resp = agent().run(req).unwrap();
    let status = resp.status().as_u16();
    let www_authenticate = resp
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_string());
    let text = resp.body_mut().read_to_string().unwrap_or_default();
    let body = serde_json::from_str(&text).unwrap_or(Value::Null);
    Reply {
        status,
        body,
        www_authenticate,
    }
}

/// A POST /v1/events that declares `content_length` bytes of JSON but sends
/// only its head, then reads the answer over a raw socket.
fn send_oversized_head(base: &str, key: &str, content_length: usize) -> Reply {
    use std::io::Write;
    let addr = base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    write!(
        stream,
        "POST /v1/events HTTP/1.1\r\nhost: {addr}\r\nauthorization: Bearer {key}\r\n\
         content-type: application/json\r\ncontent-length: {content_length}\r\n\
         connection: close\r\n\r\n"
    )
    .unwrap();
    read_reply(&mut stream)
}

/// Parses a whole HTTP/1.1 answer with a content-length, or None if incomplete.
fn parse_reply(raw: &[u8]) -> Option<Reply> {
    let text = std::str::from_utf8(raw).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    let mut lines = head.lines();
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let mut length = None;
    let mut www_authenticate = None;
    for line in lines {
        let (name, value) = line.split_once(':')?;
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => length = value.trim().parse::<usize>().ok(),
            "www-authenticate" => www_authenticate = Some(value.trim().to_string()),
            _ => {}
        }
    }
    if body.len() < length? {
        return None;
    }
    Some(Reply {
        status,
        body: serde_json::from_str(body).unwrap_or(Value::Null),
        www_authenticate,
    })
}

/// A JSON call with a key.
fn call(s: &TestServer, key: &str, method: &str, path: &str, body: Option<Value>) -> Reply {
    let auth = format!("Bearer {key}");
    let mut headers = vec![("authorization", auth.as_str())];
    if body.is_some() {
        headers.push(("content-type", "application/json"));
    }
    send(
        &s.base,
        method,
        path,
        &headers,
        body.map(|b| b.to_string().into_bytes()),
    )
}

fn error_code(r: &Reply) -> &str {
    r.body["error"]["code"]
        .as_str()
        .unwrap_or("<no typed error>")
}

/// Issue 15 item 6: a receipt that expired under the retention answers 404
/// `not_found` with a message that says it expired; the kept one answers.
#[test]
fn an_expired_receipt_answers_not_found_saying_it_expired() {
    let keys = ApiKeys::parse_env(&format!("{ALICE_KEY}:alice,{BOB_KEY}:bob")).expect("test keys");
    let s = TestServer::start_with(Auth::Keys(keys), |m| {
        m.with_receipt_retention(kith::retrieve::retention::ReceiptRetention {
            keep: Some(1),
            max_age: None,
        })
    });
    let a = ALICE_KEY;
    let msg = json!({"content": "I moved to Lisbon in September.", "source_id": "m1"});
    assert_eq!(call(&s, a, "POST", "/v1/events", Some(msg)).status, 201);
    let ask = || {
        let r = call(
            &s,
            a,
            "POST",
            "/v1/retrieve",
            Some(json!({"query": "Where do I live?"})),
        );
        assert_eq!(r.status, 200, "{}", r.body);
        r.body["request_id"].as_str().unwrap().to_string()
    };
    let first = ask();
    let second = ask();
    let r = call(&s, a, "GET", &format!("/v1/retrievals/{first}"), None);
    assert_eq!(r.status, 404, "{}", r.body);
    assert_eq!(error_code(&r), "not_found");
    assert!(r.body.to_string().contains("has expired"), "{}", r.body);
    let r = call(&s, a, "GET", &format!("/v1/retrievals/{second}"), None);
    assert_eq!(r.status, 200, "{}", r.body);
    // Bob has expired nothing: alice's expired id is plainly not found.
    let r = call(&s, BOB_KEY, "GET", &format!("/v1/retrievals/{first}"), None);
    assert_eq!(r.status, 404);
    assert!(!r.body.to_string().contains("has expired"), "{}", r.body);
}

#[test]
fn every_endpoint_answers() {
    let s = TestServer::keyed();
    let a = ALICE_KEY;

    let r = send(&s.base, "GET", "/v1/health", &[], None);
    assert_eq!(r.status, 200);
    assert_eq!(r.body["status"], "ok");

    // Store: 201, then 200 for the same source_id.
    let msg = json!({"content": "I moved to Lisbon in September.", "speaker": "Alice",
                     "session_id": "s1", "source_id": "m1",
                     "event_time": "2025-03-04T19:02:00+00:00"});
    let r = call(&s, a, "POST", "/v1/events", Some(msg.clone()));
    assert_eq!(r.status, 201, "{}", r.body);
    let event_id = r.body["event_id"].as_str().unwrap().to_string();
    assert_eq!(r.body["created"], true);
    let r = call(&s, a, "POST", "/v1/events", Some(msg));
    assert_eq!(r.status, 200);
    assert_eq!(r.body["created"], false);
    assert_eq!(r.body["event_id"], event_id.as_str());

    // A body owner equal to the key's owner is accepted.
    let r = call(
        &s,
        a,
        "POST",
        "/v1/events",
        Some(json!({"content": "Tea, not coffee.", "owner_id": "alice", "session_id": "s1"})),
    );
    assert_eq!(r.status, 201, "{}", r.body);

    // Batch.
    let r = call(
        &s,
        a,
        "POST",
        "/v1/events/batch",
        Some(json!({"events": [
            {"content": "We hiked the Sintra trail.", "session_id": "s2"},
            {"content": "The violin lessons start Monday.", "session_id": "s2", "role": "assistant"}
        ]})),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["receipts"].as_array().unwrap().len(), 2);

    // Ingest: entities and claims.
    let r = call(
        &s,
        a,
        "POST",
        "/v1/ingest",
        Some(
            json!({"content": "My sister Maya lives in Berlin.", "speaker": "Alice",
                    "session_id": "s1"}),
        ),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["status"], "complete");
    let ingested = r.body["event_id"].as_str().unwrap().to_string();

    // Events: list, show, status.
    let r = call(&s, a, "GET", "/v1/events?limit=2", None);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["events"].as_array().unwrap().len(), 2);
    let after = r.body["next_after"].as_i64().unwrap();
    let r = call(&s, a, "GET", &format!("/v1/events?after={after}"), None);
    assert_eq!(r.body["events"].as_array().unwrap().len(), 3);
    assert!(r.body["next_after"].is_null());
    let r = call(&s, a, "GET", "/v1/events?session_id=s2", None);
    assert_eq!(r.body["events"].as_array().unwrap().len(), 2);
    let r = call(&s, a, "GET", &format!("/v1/events/{event_id}"), None);
    assert_eq!(r.status, 200);
    assert_eq!(r.body["content"], "I moved to Lisbon in September.");
    let r = call(&s, a, "GET", &format!("/v1/events/{ingested}/status"), None);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["item"]["status"], "complete");
    // A stored (not ingested) event has no extraction work.
    let r = call(&s, a, "GET", &format!("/v1/events/{event_id}/status"), None);
    assert_eq!(r.status, 404);

    // Nodes: list; a claim with its provenance and its entities as neighbours.
    let r = call(&s, a, "GET", "/v1/nodes?type=entity", None);
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n["content"] == "Maya"));
    let r = call(&s, a, "GET", "/v1/nodes?type=fact", None);
    let fact = r.body["nodes"][0]["id"]
        .as_str()
        .expect("a fact")
        .to_string();
    let r = call(&s, a, "GET", &format!("/v1/nodes/{fact}"), None);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["node"]["content"], "My sister Maya lives in Berlin.");
    assert_eq!(r.body["provenance"][0]["id"], ingested.as_str());
    assert!(!r.body["edges"].as_array().unwrap().is_empty());
    let entity = r.body["neighbours"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["node_type"] == "entity")
        .expect("an entity next to the claim")["id"]
        .as_str()
        .unwrap()
        .to_string();
    // And from the entity's side, the claim is a neighbour.
    let r = call(&s, a, "GET", &format!("/v1/nodes/{entity}"), None);
    assert!(r.body["neighbours"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n["id"] == fact.as_str()));

    // Search and retrieve, then the retrieval's receipt.
    let r = call(
        &s,
        a,
        "POST",
        "/v1/search",
        Some(json!({"query": "Lisbon", "filters": {"roles": ["user"]}})),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body[0]["provenance"]["event_id"], event_id.as_str());
    let r = call(
        &s,
        a,
        "POST",
        "/v1/retrieve",
        Some(
            json!({"query": "Where does Maya live?", "token_budget": 200,
                    "without": ["recency", "dated"], "weights": {"lexical": 1.0}}),
        ),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body["tokens"].as_u64().unwrap() <= 200);
    assert!(r.body["context"].as_str().unwrap().contains("Berlin"));
    let request_id = r.body["request_id"].as_str().unwrap().to_string();
    let r = call(&s, a, "GET", &format!("/v1/retrievals/{request_id}"), None);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["payload"]["query"], "Where does Maya live?");

    // Stats: the owner's counts.
    let r = call(&s, a, "GET", "/v1/stats", None);
    assert_eq!(r.status, 200);
    assert_eq!(r.body["events"], 5);
}

#[test]
fn every_error_class_has_a_typed_body() {
    let s = TestServer::keyed();
    let a = ALICE_KEY;
    let check = |r: Reply, status: u16, code: &str| {
        assert_eq!(r.status, status, "{}", r.body);
        assert_eq!(error_code(&r), code, "{}", r.body);
        assert!(!r.body["error"]["message"].as_str().unwrap().is_empty());
    };

    // 422: unknown field, missing field, wrong type, invalid value.
    check(
        call(
            &s,
            a,
            "POST",
            "/v1/events",
            Some(json!({"content": "x", "bogus": 1})),
        ),
        422,
        "invalid_input",
    );
    check(
        call(&s, a, "POST", "/v1/events", Some(json!({"role": "user"}))),
        422,
        "invalid_input",
    );
    check(
        call(
            &s,
            a,
            "POST",
            "/v1/retrieve",
            Some(json!({"query": "x", "filters": {"rolez": []}})),
        ),
        422,
        "invalid_input",
    );
    check(
        call(
            &s,
            a,
            "POST",
            "/v1/events",
            Some(json!({"content": "x", "role": "wizard"})),
        ),
        422,
        "invalid_input",
    );
    check(
        call(
            &s,
            a,
            "POST",
            "/v1/retrieve",
            Some(json!({"query": "x", "token_budget": 0})),
        ),
        422,
        "invalid_input",
    );
    check(
        call(
            &s,
            a,
            "POST",
            "/v1/retrieve",
            Some(json!({"query": "x", "without": ["magic"]})),
        ),
        422,
        "invalid_input",
    );
    check(
        call(
            &s,
            a,
            "POST",
            "/v1/events/batch",
            Some(json!({"events": []})),
        ),
        422,
        "invalid_input",
    );
    check(
        call(&s, a, "GET", "/v1/events?limit=0", None),
        422,
        "invalid_input",
    );
    check(
        call(&s, a, "GET", "/v1/events?colour=red", None),
        422,
        "invalid_input",
    );

    // 400: not JSON; 415: not declared as JSON.
    let auth = format!("Bearer {a}");
    check(
        send(
            &s.base,
            "POST",
            "/v1/events",
            &[
                ("authorization", &auth),
                ("content-type", "application/json"),
            ],
            Some(b"{not json".to_vec()),
        ),
        400,
        "invalid_json",
    );
    check(
        send(
            &s.base,
            "POST",
            "/v1/events",
            &[("authorization", &auth)],
            Some(br#"{"content":"x"}"#.to_vec()),
        ),
        415,
        "unsupported_media_type",
    );

    // 413: a body declared over 1 MiB is refused before it is read. (Sending the
    // whole body would race the server's early answer: a client still writing
    // when the server closes may see a broken pipe instead of the 413.)
    check(
        send_oversized_head(&s.base, a, 2 * 1024 * 1024),
        413,
        "payload_too_large",
    );

    // 401: no key, a wrong key, a malformed header.
    let r = send(&s.base, "GET", "/v1/stats", &[], None);
    assert_eq!(r.www_authenticate.as_deref(), Some("Bearer"));
    check(r, 401, "unauthorized");
    check(
        call(&s, "not-a-key-0123456789abcdef", "GET", "/v1/stats", None),
        401,
        "unauthorized",
    );
    check(
        send(
            &s.base,
            "GET",
            "/v1/stats",
            &[("authorization", ALICE_KEY)],
            None,
        ),
        401,
        "unauthorized",
    );

    // 403: a body naming another owner.
    check(
        call(
            &s,
            a,
            "POST",
            "/v1/events",
            Some(json!({"content": "x", "owner_id": "bob"})),
        ),
        403,
        "forbidden",
    );

    // 404: unknown route, unknown id, malformed id; 405: wrong method.
    check(call(&s, a, "GET", "/v1/nothing", None), 404, "not_found");
    check(
        call(
            &s,
            a,
            "GET",
            &format!("/v1/events/{}", uuid::Uuid::new_v4()),
            None,
        ),
        404,
        "not_found",
    );
    check(
        call(&s, a, "GET", "/v1/nodes/not-a-uuid", None),
        404,
        "not_found",
    );
    check(
        call(&s, a, "DELETE", "/v1/events", None),
        405,
        "method_not_allowed",
    );
    check(
        call(&s, a, "GET", "/v1/retrieve", None),
        405,
        "method_not_allowed",
    );
}

/// Two owners store identical texts; every way bob can ask for alice's data
/// answers 404 or leaves it out.
#[test]
fn owners_never_see_each_other() {
    let s = TestServer::keyed();
    let texts = [
        "My sister Maya lives in Berlin.",
        "I moved to Lisbon in September.",
        "Jordan plays the violin on Tuesdays.",
        "Yesterday Alice met Alicia in Porto.",
    ];
    let mut ids: [HashSet<String>; 2] = [HashSet::new(), HashSet::new()];
    let mut receipts: [Vec<String>; 2] = [Vec::new(), Vec::new()];
    // Organizer records (proposals, reviews, merges, receipts) and the
    // entities a hint names.
    let mut ops: [HashSet<String>; 2] = [HashSet::new(), HashSet::new()];
    let mut hinted: [Vec<String>; 2] = [Vec::new(), Vec::new()];
    for (i, key) in [ALICE_KEY, BOB_KEY].into_iter().enumerate() {
        for (n, t) in texts.iter().enumerate() {
            // Same text, same session, same source_id for both owners.
            let r = call(
                &s,
                key,
                "POST",
                "/v1/ingest",
                Some(
                    json!({"content": t, "session_id": "s", "source_id": format!("m{n}"),
                            "speaker": "Sam"}),
                ),
            );
            assert_eq!(r.status, 200, "{}", r.body);
            ids[i].insert(r.body["event_id"].as_str().unwrap().to_string());
            ids[i].insert(r.body["node_id"].as_str().unwrap().to_string());
        }
        let r = call(&s, key, "GET", "/v1/nodes?limit=1000", None);
        for n in r.body["nodes"].as_array().unwrap() {
            ids[i].insert(n["id"].as_str().unwrap().to_string());
        }
        let r = call(
            &s,
            key,
            "POST",
            "/v1/retrieve",
            Some(json!({"query": "Where does Maya live?"})),
        );
        receipts[i].push(r.body["request_id"].as_str().unwrap().to_string());
        // An alias proposal, accepted; a second, left pending.
        let names = entities(&s, key);
        let proposal = propose(&s, key, &names["Alice"], &names["Alicia"]);
        propose(&s, key, &names["Alicia"], &names["Porto"]);
        let r = call(
            &s,
            key,
            "POST",
            &format!("/v1/aliases/{proposal}/review"),
            Some(json!({"decision": "accept"})),
        );
        assert_eq!(r.status, 200, "{}", r.body);
        hinted[i] = vec![names["Alice"].clone(), names["Porto"].clone()];
        let r = call(&s, key, "GET", "/v1/journal?limit=1000", None);
        for op in r.body["records"].as_array().unwrap() {
            ops[i].insert(op["id"].as_str().unwrap().to_string());
        }
        assert!(ops[i].len() >= 4, "{}", r.body);
        ids[i].extend(ops[i].iter().cloned());
    }
    assert!(ids[0].is_disjoint(&ids[1]), "ids are per owner");

    let mut leaks = 0;
    let mut probes = 0;
    for (me, key) in [(0usize, ALICE_KEY), (1, BOB_KEY)] {
        let other = 1 - me;
        // Direct reads of the other owner's ids: 404 with nothing of theirs.
        for id in &ids[other] {
            for path in [
                format!("/v1/events/{id}"),
                format!("/v1/events/{id}/status"),
                format!("/v1/nodes/{id}"),
            ] {
                let r = call(&s, key, "GET", &path, None);
                probes += 1;
                // A 404 with nothing but the typed error (its message
                // echoes only the id that was asked for).
                let only_error = r.body.as_object().is_some_and(|o| o.len() == 1)
                    && error_code(&r) == "not_found";
                if r.status != 404 || !only_error {
                    leaks += 1;
                }
            }
        }
        // The organizer's records of the other owner: never reviewed,
        // undone or used as a cursor.
        for op in &ops[other] {
            for (method, path, body) in [
                (
                    "POST",
                    format!("/v1/aliases/{op}/review"),
                    Some(json!({"decision": "reject", "reason": "probe"})),
                ),
                (
                    "POST",
                    format!("/v1/aliases/{op}/review"),
                    Some(json!({"decision": "accept"})),
                ),
                ("POST", format!("/v1/undo/{op}"), None),
                ("GET", format!("/v1/aliases?after={op}"), None),
                ("GET", format!("/v1/journal?after={op}"), None),
            ] {
                let r = call(&s, key, method, &path, body);
                probes += 1;
                let only_error = r.body.as_object().is_some_and(|o| o.len() == 1)
                    && error_code(&r) == "not_found";
                if r.status != 404 || !only_error {
                    leaks += 1;
                }
            }
        }
        // Hints naming the other owner's nodes: 404 before anything runs.
        let mine = &hinted[me][0];
        for theirs in &hinted[other] {
            let r = call(
                &s,
                key,
                "POST",
                "/v1/organize",
                Some(json!({"candidates": [{"a": mine, "b": theirs, "score": 0.99}]})),
            );
            probes += 1;
            if r.status != 404 || error_code(&r) != "not_found" {
                leaks += 1;
            }
        }
        for id in &receipts[other] {
            let r = call(&s, key, "GET", &format!("/v1/retrievals/{id}"), None);
            probes += 1;
            if r.status != 404 || error_code(&r) != "not_found" {
                leaks += 1;
            }
        }
        // Everything listed or found is one's own.
        let listed = [
            call(&s, key, "GET", "/v1/events?limit=1000", None).body,
            call(&s, key, "GET", "/v1/nodes?limit=1000", None).body,
            call(
                &s,
                key,
                "POST",
                "/v1/search",
                Some(json!({"query": "Maya Berlin Lisbon violin", "limit": 100})),
            )
            .body,
            call(
                &s,
                key,
                "POST",
                "/v1/retrieve",
                Some(
                    json!({"query": "Where does Maya live? Who plays the violin?",
                            "limit": 100, "record": false}),
                ),
            )
            .body,
            call(&s, key, "GET", "/v1/aliases?limit=1000", None).body,
            call(&s, key, "GET", "/v1/journal?limit=1000", None).body,
            call(&s, key, "POST", "/v1/organize", Some(json!({}))).body,
        ];
        for id in &ids[other] {
            let r = call(&s, key, "GET", &format!("/v1/journal?node={id}"), None);
            probes += 1;
            if r.status != 200 || !r.body["records"].as_array().unwrap().is_empty() {
                leaks += 1;
            }
        }
        for body in &listed {
            let text = body.to_string();
            probes += 1;
            if ids[other].iter().any(|id| text.contains(id.as_str())) {
                leaks += 1;
            }
        }
        // A node view of one's own entity lists only one's own neighbours.
        for id in &ids[me] {
            let r = call(&s, key, "GET", &format!("/v1/nodes/{id}"), None);
            if r.status == 200 {
                probes += 1;
                let text = r.body.to_string();
                if ids[other].iter().any(|o| text.contains(o.as_str())) {
                    leaks += 1;
                }
            }
        }
        let r = call(&s, key, "GET", "/v1/stats", None);
        assert_eq!(r.body["events"], 4, "stats count one owner");
    }
    eprintln!("cross-owner: {probes} probes, {leaks} leaks");
    assert!(probes > 50, "probed {probes} times");
    assert_eq!(leaks, 0, "{leaks} of {probes} probes leaked");
}

#[test]
fn openapi_documents_every_route() {
    let s = TestServer::keyed();
    let r = send(&s.base, "GET", "/openapi.json", &[], None);
    assert_eq!(r.status, 200);
    let paths = r.body["paths"].as_object().expect("paths");
    let table = kith_server::route_table();
    assert!(table.len() >= 21, "{table:?}");
    for (method, path) in [
        ("POST", "/v1/aliases"),
        ("GET", "/v1/path"),
        ("GET", "/v1/claims"),
        ("POST", "/v1/claims/{id}/retract"),
        ("POST", "/v1/claims/{id}/correct"),
    ] {
        assert!(
            table
                .iter()
                .any(|(m, p)| m.as_str() == method && *p == path),
            "{method} {path} is served"
        );
    }
    for (method, path) in &table {
        let ops = paths
            .get(*path)
            .unwrap_or_else(|| panic!("{path} is not in /openapi.json"));
        let m = method.as_str().to_lowercase();
        assert!(
            ops.get(&m).is_some(),
            "{method} {path} is not in /openapi.json"
        );
    }
    // And nothing documented that is not served.
    let served: HashSet<(String, String)> = table
        .iter()
        .map(|(m, p)| (m.as_str().to_lowercase(), p.to_string()))
        .collect();
    for (path, ops) in paths {
        for m in ops.as_object().unwrap().keys() {
            if ["get", "post", "put", "patch", "delete"].contains(&m.as_str()) {
                assert!(
                    served.contains(&(m.clone(), path.clone())),
                    "{m} {path} is documented but not served"
                );
            }
        }
    }
    // Request bodies carry their schemas.
    let schemas = r.body["components"]["schemas"].as_object().unwrap();
    for name in [
        "MessageBody",
        "RetrieveBody",
        "ErrorBody",
        "IngestBody",
        "OrganizeBody",
        "ReviewBody",
        "ProposeBody",
        "AssessmentBody",
        "RetractClaimBody",
        "CorrectClaimBody",
    ] {
        assert!(schemas.contains_key(name), "{name} schema missing");
    }
}

#[test]
fn without_keys_the_owner_comes_from_the_header() {
    let s = TestServer::start(Auth::Open {
        default_owner: OwnerId::new("default").unwrap(),
    });
    let post = |owner: Option<&str>, content: &str| {
        let mut headers = vec![("content-type", "application/json")];
        if let Some(o) = owner {
            headers.push(("x-kith-owner", o));
        }
        send(
            &s.base,
            "POST",
            "/v1/events",
            &headers,
            Some(json!({"content": content}).to_string().into_bytes()),
        )
    };
    assert_eq!(post(None, "default's note").status, 201);
    let r = post(Some("carol"), "carol's note");
    assert_eq!(r.status, 201);
    let carol_event = r.body["event_id"].as_str().unwrap().to_string();
    let r = send(
        &s.base,
        "GET",
        &format!("/v1/events/{carol_event}"),
        &[],
        None,
    );
    assert_eq!(r.status, 404, "the default owner cannot read carol's event");
    let r = send(
        &s.base,
        "GET",
        &format!("/v1/events/{carol_event}"),
        &[("x-kith-owner", "carol")],
        None,
    );
    assert_eq!(r.status, 200);
    let r = send(&s.base, "GET", "/v1/stats", &[("x-kith-owner", "")], None);
    assert_eq!(r.status, 422);
}

#[test]
fn shutdown_lets_requests_in_flight_finish() {
    use std::io::Write;
    let mut s = TestServer::keyed();
    let addr = s.base.trim_start_matches("http://").to_string();
    // One raw connection, known to be accepted (it has answered a request)
    // before the batch is written on it: nothing here waits on the scheduler
    // to connect a client thread in time.
    let mut stream = std::net::TcpStream::connect(&addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    write!(stream, "GET /v1/health HTTP/1.1\r\nhost: {addr}\r\n\r\n").unwrap();
    assert_eq!(read_reply(&mut stream).status, 200);

    let events: Vec<Value> = (0..1000)
        .map(|i| json!({"content": format!("Message number {i} about the harbour.")}))
        .collect();
    let body = json!({ "events": events }).to_string();
    write!(
        stream,
        "POST /v1/events/batch HTTP/1.1\r\nhost: {addr}\r\nauthorization: Bearer {ALICE_KEY}\r\n\
         content-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    // The answer is read on its own thread: the server must be able to write
    // it while `stop` waits for the server to finish.
    let client = std::thread::spawn(move || read_reply(&mut stream));
    std::thread::sleep(Duration::from_millis(50));
    s.stop();
    let r = client.join().unwrap();
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["receipts"].as_array().unwrap().len(), 1000);
}

/// Reads one whole HTTP answer from a raw connection.
fn read_reply(stream: &mut std::net::TcpStream) -> Reply {
    use std::io::Read;
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        if let Some(reply) = parse_reply(&raw) {
            return reply;
        }
        match stream.read(&mut buf) {
            Ok(0) => panic!("connection closed before a whole answer"),
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) => panic!("reading the answer: {e}"),
        }
    }
}

/// The ids of `owner`'s entities, by name.
fn entities(s: &TestServer, key: &str) -> std::collections::HashMap<String, String> {
    let r = call(s, key, "GET", "/v1/nodes?type=entity&limit=1000", None);
    assert_eq!(r.status, 200, "{}", r.body);
    r.body["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["content"].as_str().unwrap().to_string(),
                n["id"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Organizes with one hinted alias pair and returns the proposal's op id.
fn propose(s: &TestServer, key: &str, a: &str, b: &str) -> String {
    let r = call(
        s,
        key,
        "POST",
        "/v1/organize",
        Some(json!({"jobs": ["alias_resolve"],
                    "candidates": [{"a": a, "b": b, "kind": "alias", "score": 0.97}]})),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let proposals = r.body["jobs"][0]["proposals"].as_array().unwrap();
    assert_eq!(proposals.len(), 1, "{}", r.body);
    proposals[0]["op_id"].as_str().unwrap().to_string()
}

#[test]
fn organizer_endpoints_answer_and_refuse() {
    let s = TestServer::keyed();
    let a = ALICE_KEY;
    let check = |r: &Reply, status: u16, code: &str| {
        assert_eq!(r.status, status, "{}", r.body);
        assert_eq!(error_code(r), code, "{}", r.body);
    };

    // Two copies of one note (same text, session and time): a duplicate.
    for source in ["c1", "c2"] {
        let r = call(
            &s,
            a,
            "POST",
            "/v1/events",
            Some(
                json!({"content": "The harbour opens at nine.", "session_id": "h",
                        "event_time": "2025-03-04T09:00:00+00:00", "source_id": source}),
            ),
        );
        assert_eq!(r.status, 201, "{}", r.body);
    }
    let r = call(
        &s,
        a,
        "POST",
        "/v1/ingest",
        Some(
            json!({"content": "Yesterday Alice met Alicia and Bob at the Postgres meetup.",
                    "session_id": "s1"}),
        ),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let names = entities(&s, a);
    let id = |n: &str| {
        names
            .get(n)
            .unwrap_or_else(|| panic!("{n} in {names:?}"))
            .clone()
    };

    // Organize with the defaults: the duplicate merges; nothing proposed.
    let r = call(&s, a, "POST", "/v1/organize", Some(json!({})));
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["owner"], "alice");
    assert_eq!(r.body["jobs"][0]["job"], "deduplicate");
    assert_eq!(r.body["jobs"][1]["job"], "alias_resolve");
    let merges = r.body["jobs"][0]["merges"].as_array().unwrap();
    assert_eq!(merges.len(), 1, "{}", r.body);
    let merge_op = merges[0]["op_id"].as_str().unwrap().to_string();
    // Again: nothing new.
    let r = call(
        &s,
        a,
        "POST",
        "/v1/organize",
        Some(json!({"jobs": ["deduplicate"], "budget": 10})),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body["jobs"][0]["merges"].as_array().unwrap().is_empty());

    // Hinted pairs become proposals.
    let p_accept = propose(&s, a, &id("Alice"), &id("Alicia"));
    let p_reject = propose(&s, a, &id("Alice"), &id("Bob"));
    let p_stale = propose(&s, a, &id("Bob"), &id("Postgres"));
    let r = call(&s, a, "GET", "/v1/aliases", None);
    assert_eq!(r.status, 200, "{}", r.body);
    let listed = r.body["proposals"].as_array().unwrap();
    assert_eq!(listed.len(), 3, "{}", r.body);
    assert!(listed.iter().all(|p| p["status"] == "pending"));
    assert_eq!(listed[0]["op_id"], p_accept.as_str());
    assert!(r.body["next_after"].is_null());
    // Paging.
    let r = call(&s, a, "GET", "/v1/aliases?limit=2", None);
    assert_eq!(r.body["proposals"].as_array().unwrap().len(), 2);
    let after = r.body["next_after"].as_str().unwrap().to_string();
    let r = call(&s, a, "GET", &format!("/v1/aliases?after={after}"), None);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["proposals"][0]["op_id"], p_stale.as_str());
    assert!(r.body["next_after"].is_null());

    // A pending proposal is listed among the node's edges but not
    // traversed, unless asked for.
    let neighbours = |query: &str| -> Vec<String> {
        let r = call(
            &s,
            a,
            "GET",
            &format!("/v1/nodes/{}{query}", id("Alicia")),
            None,
        );
        assert_eq!(r.status, 200, "{}", r.body);
        r.body["neighbours"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["id"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(!neighbours("").contains(&id("Alice")));
    assert!(neighbours("?include_unverified_aliases=true").contains(&id("Alice")));
    let r = call(
        &s,
        a,
        "GET",
        &format!(
            "/v1/nodes/{}?include_unverified_aliases=maybe",
            id("Alicia")
        ),
        None,
    );
    assert_eq!(r.status, 422, "{}", r.body);

    // Review: accept, replay, a conflicting decision.
    let path = format!("/v1/aliases/{p_accept}/review");
    let r = call(
        &s,
        a,
        "POST",
        &path,
        Some(json!({"decision": "accept", "reviewer": "alice"})),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["decision"], "accept");
    assert_eq!(r.body["replayed"], false);
    assert!(r.body["edge_id"].is_string());
    let review_op = r.body["review_op_id"].as_str().unwrap().to_string();
    let r = call(
        &s,
        a,
        "POST",
        &path,
        Some(json!({"decision": "accept", "reviewer": "alice"})),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["replayed"], true);
    assert_eq!(r.body["review_op_id"], review_op.as_str());
    check(
        &call(
            &s,
            a,
            "POST",
            &path,
            Some(json!({"decision": "reject", "reason": "changed my mind"})),
        ),
        409,
        "review_conflict",
    );

    // Reject needs a reason.
    let path = format!("/v1/aliases/{p_reject}/review");
    check(
        &call(&s, a, "POST", &path, Some(json!({"decision": "reject"}))),
        422,
        "reason_required",
    );
    let r = call(
        &s,
        a,
        "POST",
        &path,
        Some(json!({"decision": "reject", "reason": "two people"})),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body["edge_id"].is_null());

    // A proposed node that changed since (merged away as a name variant
    // of a later entity): accepting is refused.
    let r = call(
        &s,
        a,
        "POST",
        "/v1/ingest",
        Some(json!({"content": "The database of Berlin is PostgreSQL.", "session_id": "s1"})),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let names = entities(&s, a);
    let id = |n: &str| {
        names
            .get(n)
            .unwrap_or_else(|| panic!("{n} in {names:?}"))
            .clone()
    };
    let r = call(
        &s,
        a,
        "POST",
        "/v1/organize",
        Some(json!({"jobs": ["alias_resolve"]})),
    );
    let merges = r.body["jobs"][0]["merges"].as_array().unwrap();
    assert_eq!(merges.len(), 1, "{}", r.body);
    assert_eq!(
        merges[0]["retired_id"],
        id("Postgres").as_str(),
        "{}",
        r.body
    );
    check(
        &call(
            &s,
            a,
            "POST",
            &format!("/v1/aliases/{p_stale}/review"),
            Some(json!({"decision": "accept"})),
        ),
        409,
        "stale_proposal",
    );

    // The status filter.
    let r = call(&s, a, "GET", "/v1/aliases?status=accepted", None);
    let listed = r.body["proposals"].as_array().unwrap();
    assert_eq!(listed.len(), 1, "{}", r.body);
    assert_eq!(listed[0]["review_op_id"], review_op.as_str());
    let r = call(&s, a, "GET", "/v1/aliases?status=pending", None);
    assert_eq!(r.body["proposals"].as_array().unwrap().len(), 1);

    // Journal: by kind (any case), by node, paged.
    let r = call(&s, a, "GET", "/v1/journal?kind=organizer_merged", None);
    assert_eq!(r.status, 200, "{}", r.body);
    let records = r.body["records"].as_array().unwrap();
    assert_eq!(records.len(), 2, "{}", r.body);
    assert_eq!(records[0]["id"], merge_op.as_str());
    let r = call(
        &s,
        a,
        "GET",
        &format!("/v1/journal?node={}", id("Alicia")),
        None,
    );
    let kinds: Vec<&str> = r.body["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|op| op["kind"].as_str().unwrap())
        .collect();
    // The derivation that created it, then its proposal and decision.
    assert_eq!(
        kinds,
        [
            "DERIVATION_PREPARED",
            "DERIVATION_COMMITTED",
            "ALIAS_PROPOSED",
            "ALIAS_PROPOSAL_ACCEPTED"
        ],
        "{}",
        r.body
    );
    let r = call(&s, a, "GET", "/v1/journal?limit=1000", None);
    let total = r.body["records"].as_array().unwrap().len();
    assert!(total >= 6, "{}", r.body);
    let r = call(&s, a, "GET", "/v1/journal?limit=2", None);
    assert_eq!(r.body["records"].as_array().unwrap().len(), 2);
    let after = r.body["next_after"].as_str().unwrap().to_string();
    let r = call(
        &s,
        a,
        "GET",
        &format!("/v1/journal?after={after}&limit=1000"),
        None,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["records"].as_array().unwrap().len(), total - 2);
    assert!(r.body["next_after"].is_null());

    // Undo: the merge, again (replayed), the accepted alias; a proposal
    // record cannot be undone.
    let r = call(&s, a, "POST", &format!("/v1/undo/{merge_op}"), None);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["undone_kind"], "ORGANIZER_MERGED");
    assert_eq!(r.body["restored_nodes"].as_array().unwrap().len(), 2);
    assert_eq!(r.body["replayed"], false);
    let r = call(&s, a, "POST", &format!("/v1/undo/{merge_op}"), None);
    assert_eq!(r.body["replayed"], true, "{}", r.body);
    let r = call(&s, a, "POST", &format!("/v1/undo/{review_op}"), None);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["removed_edges"].as_array().unwrap().len(), 1);
    check(
        &call(&s, a, "POST", &format!("/v1/undo/{p_reject}"), None),
        409,
        "undo_refused",
    );
    let r = call(&s, a, "GET", "/v1/journal?kind=UNDO", None);
    assert_eq!(r.body["records"].as_array().unwrap().len(), 2);

    // Request-shape and value errors.
    let unknown = uuid::Uuid::new_v4();
    for (method, path, body, status, code) in [
        (
            "POST",
            "/v1/organize".to_string(),
            Some(json!({"jobz": []})),
            422,
            "invalid_input",
        ),
        (
            "POST",
            "/v1/organize".to_string(),
            Some(json!({"jobs": ["tidy"]})),
            422,
            "invalid_input",
        ),
        (
            "POST",
            "/v1/organize".to_string(),
            Some(json!({"jobs": []})),
            422,
            "invalid_input",
        ),
        (
            "POST",
            "/v1/organize".to_string(),
            Some(json!({"budget": 0})),
            422,
            "invalid_input",
        ),
        (
            "POST",
            "/v1/organize".to_string(),
            Some(json!({"alias_threshold": 1.5})),
            422,
            "invalid_input",
        ),
        (
            "POST",
            "/v1/organize".to_string(),
            Some(json!({"candidates": [{"a": "x", "b": id("Bob")}]})),
            422,
            "invalid_input",
        ),
        (
            "POST",
            "/v1/organize".to_string(),
            Some(json!({"candidates": [{"a": id("Alice"), "b": id("Bob"), "score": 2.0}]})),
            422,
            "invalid_input",
        ),
        (
            "POST",
            "/v1/organize".to_string(),
            Some(json!({"candidates": [{"a": id("Alice"), "b": unknown.to_string()}]})),
            404,
            "not_found",
        ),
        (
            "GET",
            "/v1/aliases?status=maybe".to_string(),
            None,
            422,
            "invalid_input",
        ),
        (
            "GET",
            "/v1/aliases?limit=0".to_string(),
            None,
            422,
            "invalid_input",
        ),
        (
            "GET",
            "/v1/aliases?after=nope".to_string(),
            None,
            422,
            "invalid_input",
        ),
        (
            "GET",
            format!("/v1/aliases?after={unknown}"),
            None,
            404,
            "not_found",
        ),
        (
            "GET",
            "/v1/aliases?colour=red".to_string(),
            None,
            422,
            "invalid_input",
        ),
        (
            "POST",
            format!("/v1/aliases/{p_accept}/review"),
            Some(json!({"decision": "maybe"})),
            422,
            "invalid_input",
        ),
        (
            "POST",
            format!("/v1/aliases/{p_accept}/review"),
            Some(json!({"decision": "accept", "why": "x"})),
            422,
            "invalid_input",
        ),
        (
            "POST",
            format!("/v1/aliases/{unknown}/review"),
            Some(json!({"decision": "accept"})),
            404,
            "not_found",
        ),
        (
            "POST",
            format!("/v1/aliases/{merge_op}/review"),
            Some(json!({"decision": "accept"})),
            404,
            "not_found",
        ),
        (
            "POST",
            "/v1/aliases/not-a-uuid/review".to_string(),
            Some(json!({"decision": "accept"})),
            404,
            "not_found",
        ),
        (
            "POST",
            format!("/v1/undo/{unknown}"),
            None,
            404,
            "not_found",
        ),
        (
            "GET",
            "/v1/journal?kind=NOPE".to_string(),
            None,
            422,
            "invalid_input",
        ),
        (
            "GET",
            "/v1/journal?node=nope".to_string(),
            None,
            422,
            "invalid_input",
        ),
        (
            "GET",
            format!("/v1/journal?after={unknown}"),
            None,
            404,
            "not_found",
        ),
        (
            "GET",
            "/v1/undo/x".to_string(),
            None,
            405,
            "method_not_allowed",
        ),
    ] {
        let r = call(&s, a, method, &path, body);
        assert_eq!(r.status, status, "{method} {path}: {}", r.body);
        assert_eq!(error_code(&r), code, "{method} {path}: {}", r.body);
    }
}

/// Issue 13 items 14 and 15 over HTTP: `POST /v1/aliases` records a
/// version-2 proposal with an assessment (a repeat answers the first one;
/// an incomplete assessment is 422 and writes nothing; another owner's
/// node is 404), and `GET /v1/path` does not cross the proposal unless
/// asked.
#[test]
fn proposals_with_assessments_and_paths() {
    let s = TestServer::keyed();
    let a = ALICE_KEY;
    let r = call(
        &s,
        a,
        "POST",
        "/v1/ingest",
        Some(
            json!({"content": "Yesterday Alice met Alicia and Bob at the Postgres meetup.",
                    "session_id": "s1"}),
        ),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let names = entities(&s, a);
    let (alice, alicia) = (names["Alice"].clone(), names["Alicia"].clone());
    let assessment = |verdict: &str, reasons: Value| {
        json!({"assessor_kind": "model", "assessor_id": "judge-7",
               "verdict": verdict, "reasons": reasons})
    };
    let journal = |s: &TestServer| {
        call(s, a, "GET", "/v1/journal?limit=1000", None).body["records"]
            .as_array()
            .unwrap()
            .len()
    };

    let before = journal(&s);
    let r = call(
        &s,
        a,
        "POST",
        "/v1/aliases",
        Some(json!({"a": alice, "b": alicia, "score": 0.9,
                    "assessment": assessment("same", json!([]))})),
    );
    assert_eq!(
        (r.status, error_code(&r)),
        (422, "invalid_assessment"),
        "{}",
        r.body
    );
    assert_eq!(journal(&s), before, "nothing written");
    let r = call(
        &s,
        BOB_KEY,
        "POST",
        "/v1/aliases",
        Some(json!({"a": alice, "b": alicia, "score": 0.9})),
    );
    assert_eq!(r.status, 404, "{}", r.body);

    let r = call(
        &s,
        a,
        "POST",
        "/v1/aliases",
        Some(json!({"a": alice, "b": alicia, "score": 0.9,
                    "assessment": assessment("same", json!(["Alicia is Alice's full name"]))})),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["created"], true);
    assert_eq!(r.body["format"], "kith.alias_proposal.v2");
    let first = r.body.clone();
    let r = call(
        &s,
        a,
        "POST",
        "/v1/aliases",
        Some(json!({"a": alicia, "b": alice, "score": 0.2,
                    "assessment": assessment("different", json!(["no"]))})),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["created"], false);
    assert_eq!(r.body["assessment"], first["assessment"]);
    assert_eq!(r.body["op_id"], first["op_id"]);
    let listed = call(&s, a, "GET", "/v1/aliases", None);
    assert_eq!(listed.body["proposals"][0]["assessment"]["verdict"], "same");

    let path = |q: &str| {
        call(
            &s,
            a,
            "GET",
            &format!("/v1/path?from={alice}&to={alicia}{q}"),
            None,
        )
    };
    let r = path("");
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["found"], false, "{}", r.body);
    assert_eq!(r.body["skipped_proposals"], 1);
    let r = path("&include_unverified_aliases=true");
    assert_eq!(r.body["found"], true, "{}", r.body);
    assert_eq!(r.body["steps"][0]["node"]["id"], alicia.as_str());
    assert_eq!(
        r.body["steps"][0]["edge"]["metadata"]["identity_verified"],
        false
    );
    let r = path("&max_hops=99");
    assert_eq!(
        (r.status, error_code(&r)),
        (422, "invalid_input"),
        "{}",
        r.body
    );
    let r = call(&s, a, "GET", "/v1/path?from=nope&to=x", None);
    assert_eq!(r.status, 422, "{}", r.body);
    let r = call(
        &s,
        BOB_KEY,
        "GET",
        &format!("/v1/path?from={alice}&to={alicia}"),
        None,
    );
    assert_eq!(r.status, 404, "{}", r.body);
}

/// `POST /v1/corrections` (issue 13 item 13): a split by event to a new
/// person; typed refusals that write nothing; another owner's entity is
/// 404; the record undoes through `POST /v1/undo/{op}`.
#[test]
fn corrections_split_refuse_and_undo() {
    let s = TestServer::keyed();
    let a = ALICE_KEY;
    let mut events = Vec::new();
    for (text, session) in [("I live in Lisbon.", "s1"), ("I live in Oslo.", "s2")] {
        let r = call(
            &s,
            a,
            "POST",
            "/v1/ingest",
            Some(json!({"content": text, "speaker": "Jordan", "session_id": session})),
        );
        assert_eq!(r.status, 200, "{}", r.body);
        events.push(r.body["event_id"].as_str().unwrap().to_string());
    }
    let jordan = entities(&s, a)["Jordan"].clone();
    let journal = |s: &TestServer| {
        call(s, a, "GET", "/v1/journal?limit=1000", None).body["records"]
            .as_array()
            .unwrap()
            .len()
    };
    let before = journal(&s);
    for (body, status, code) in [
        (
            json!({"entity": jordan, "events": [events[1]], "new_person": "Jordan Berg"}),
            422,
            "invalid_input",
        ),
        (
            json!({"entity": jordan, "events": [events[1]], "reason": "two Jordans"}),
            422,
            "invalid_input",
        ),
        (
            json!({"entity": "not-a-uuid", "events": [events[1]], "new_person": "J",
                   "reason": "x"}),
            422,
            "invalid_input",
        ),
        (
            json!({"entity": jordan, "new_person": "J", "reason": "x"}),
            422,
            "invalid_input",
        ),
    ] {
        let r = call(&s, a, "POST", "/v1/corrections", Some(body.clone()));
        assert_eq!(
            (r.status, error_code(&r)),
            (status, code),
            "{body}: {}",
            r.body
        );
    }
    let r = call(
        &s,
        BOB_KEY,
        "POST",
        "/v1/corrections",
        Some(
            json!({"entity": jordan, "events": [events[1]], "new_person": "J",
                    "reason": "x"}),
        ),
    );
    assert_eq!(r.status, 404, "{}", r.body);
    assert_eq!(journal(&s), before, "nothing written");

    let body = json!({"entity": jordan, "events": [events[1]], "new_person": "Jordan Berg",
                      "reason": "the Oslo Jordan is a colleague"});
    let r = call(&s, a, "POST", "/v1/corrections", Some(body.clone()));
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["created_target"], true);
    assert_eq!(r.body["moved_claims"].as_array().unwrap().len(), 1);
    let op = r.body["op_id"].as_str().unwrap().to_string();
    assert!(entities(&s, a).contains_key("Jordan Berg"));
    let again = call(&s, a, "POST", "/v1/corrections", Some(body));
    assert_eq!(again.body["replayed"], true, "{}", again.body);
    assert_eq!(again.body["op_id"], op.as_str());

    let r = call(&s, a, "POST", &format!("/v1/undo/{op}"), None);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["undone_kind"], "IDENTITY_CORRECTED", "{}", r.body);
}

/// Correcting a fact over HTTP (issue 15 item 4): the facts view, a
/// correction that retrieval follows at once, typed refusals that write
/// nothing, another owner's claim 404, undo through `POST /v1/undo/{op}`.
#[test]
fn claims_list_correct_retract_refuse_and_undo() {
    let s = TestServer::keyed();
    let a = ALICE_KEY;
    let r = call(
        &s,
        a,
        "POST",
        "/v1/ingest",
        Some(json!({"content": "I work at Northwind.", "speaker": "Maya"})),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let listed = call(&s, a, "GET", "/v1/claims?subject=maya", None);
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert_eq!(listed.body.as_array().unwrap().len(), 1, "{}", listed.body);
    assert_eq!(listed.body[0]["object"], "Northwind");
    let claim = listed.body[0]["id"].as_str().unwrap().to_string();
    let maya = listed.body[0]["subject_id"].as_str().unwrap().to_string();
    let journal = |s: &TestServer| {
        call(s, a, "GET", "/v1/journal?limit=1000", None).body["records"]
            .as_array()
            .unwrap()
            .len()
    };
    let before = journal(&s);
    for (key, path, body, status, code) in [
        (
            a,
            format!("/v1/claims/{claim}/retract"),
            json!({"reason": ""}),
            422,
            "invalid_input",
        ),
        (
            a,
            format!("/v1/claims/{claim}/retract"),
            json!({}),
            422,
            "invalid_input",
        ),
        (
            a,
            format!("/v1/claims/{maya}/retract"),
            json!({"reason": "x"}),
            422,
            "invalid_input",
        ),
        (
            a,
            format!("/v1/claims/{claim}/correct"),
            json!({"object": " ", "reason": "x"}),
            422,
            "invalid_input",
        ),
        (
            a,
            "/v1/claims/not-an-id/correct".into(),
            json!({"object": "X", "reason": "x"}),
            404,
            "not_found",
        ),
        (
            BOB_KEY,
            format!("/v1/claims/{claim}/retract"),
            json!({"reason": "x"}),
            404,
            "not_found",
        ),
    ] {
        let r = call(&s, key, "POST", &path, Some(body.clone()));
        assert_eq!(
            (r.status, error_code(&r)),
            (status, code),
            "{path} {body}: {}",
            r.body
        );
    }
    let r = call(&s, BOB_KEY, "GET", "/v1/claims?subject=maya", None);
    assert_eq!(r.body, json!([]), "bob sees none of alice's claims");
    let r = call(&s, a, "GET", "/v1/claims", None);
    assert_eq!(r.status, 422, "{}", r.body);
    assert_eq!(journal(&s), before, "nothing written");

    let body = json!({"object": "Contoso", "reason": "she works at Contoso"});
    let r = call(
        &s,
        a,
        "POST",
        &format!("/v1/claims/{claim}/correct"),
        Some(body.clone()),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["kind"], "CLAIM_CORRECTED");
    let new = r.body["replacement"].as_str().unwrap().to_string();
    let op = r.body["op_id"].as_str().unwrap().to_string();
    let again = call(
        &s,
        a,
        "POST",
        &format!("/v1/claims/{claim}/correct"),
        Some(body),
    );
    assert_eq!(
        (again.body["replayed"].clone(), again.body["op_id"].clone()),
        (json!(true), json!(op))
    );
    let listed = call(&s, a, "GET", "/v1/claims?subject=Maya", None);
    assert_eq!(listed.body.as_array().unwrap().len(), 1, "{}", listed.body);
    assert_eq!(listed.body[0]["id"], new.as_str());
    let all = call(&s, a, "GET", "/v1/claims?subject=Maya&all=true", None);
    assert_eq!(all.body.as_array().unwrap().len(), 2, "{}", all.body);
    let got = call(
        &s,
        a,
        "POST",
        "/v1/retrieve",
        Some(json!({"query": "Where does Maya work? Contoso Northwind"})),
    );
    assert_eq!(got.status, 200, "{}", got.body);
    let text = got.body["results"].to_string();
    assert!(text.contains(&new) && !text.contains(&claim), "{text}");

    let r = call(&s, a, "POST", &format!("/v1/undo/{op}"), None);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["undone_kind"], "CLAIM_CORRECTED", "{}", r.body);
    let listed = call(&s, a, "GET", "/v1/claims?subject=Maya", None);
    assert_eq!(listed.body[0]["id"], claim.as_str(), "{}", listed.body);

    let r = call(
        &s,
        a,
        "POST",
        &format!("/v1/claims/{claim}/retract"),
        Some(json!({"reason": "wrong"})),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        call(&s, a, "GET", "/v1/claims?subject=Maya", None).body,
        json!([])
    );
}

/// Forgetting over HTTP (issue 15): one event, a session, the key's own
/// owner; dry runs write nothing; another owner's ids are 404; bad requests
/// are 422 and change nothing.
#[test]
fn forget_endpoints_erase_refuse_and_stay_within_the_owner() {
    let s = TestServer::keyed();
    let (a, b) = (ALICE_KEY, BOB_KEY);
    let mut ids = Vec::new();
    for (i, (session, text)) in [
        ("secret", "Zorvexquill told me the vault code."),
        ("secret", "I met Zorvexquill at the harbour."),
        ("kept", "I like green tea."),
    ]
    .iter()
    .enumerate()
    {
        let r = call(
            &s,
            a,
            "POST",
            "/v1/ingest",
            Some(json!({"content": text, "session_id": session, "source_id": format!("m{i}")})),
        );
        assert_eq!(r.status, 200, "{}", r.body);
        ids.push(r.body["event_id"].as_str().unwrap().to_string());
    }
    let r = call(
        &s,
        b,
        "POST",
        "/v1/events",
        Some(json!({"content": "bob's own message", "session_id": "secret"})),
    );
    assert_eq!(r.status, 201);
    let bob_event = r.body["event_id"].as_str().unwrap().to_string();

    // Refusals first: nothing changes.
    for (key, method, path, status, code) in [
        (
            a,
            "DELETE",
            format!("/v1/events/{}", ids[0]),
            422,
            "invalid_input",
        ),
        (
            a,
            "DELETE",
            format!("/v1/events/{}?reason=%20", ids[0]),
            422,
            "invalid_input",
        ),
        (
            a,
            "DELETE",
            format!("/v1/events/{}?reason=x&force=1", ids[0]),
            422,
            "invalid_input",
        ),
        (
            a,
            "DELETE",
            format!("/v1/events/{bob_event}?reason=x"),
            404,
            "not_found",
        ),
        (
            a,
            "DELETE",
            "/v1/events/not-an-id?reason=x".to_string(),
            404,
            "not_found",
        ),
        (
            a,
            "DELETE",
            "/v1/sessions/nope?reason=x".to_string(),
            404,
            "not_found",
        ),
        (
            b,
            "DELETE",
            format!("/v1/events/{}?reason=x", ids[0]),
            404,
            "not_found",
        ),
    ] {
        let r = call(&s, key, method, &path, None);
        assert_eq!(r.status, status, "{method} {path}: {}", r.body);
        assert_eq!(error_code(&r), code, "{method} {path}: {}", r.body);
    }
    let r = call(&s, a, "GET", &format!("/v1/events/{}", ids[0]), None);
    assert!(r.body["content"].as_str().unwrap().contains("Zorvexquill"));

    // A dry run lists and writes nothing.
    let r = call(
        &s,
        a,
        "DELETE",
        "/v1/sessions/secret?reason=asked&dry_run=true",
        None,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["dry_run"], true);
    assert_eq!(r.body["events"].as_array().unwrap().len(), 2);
    assert!(r.body["operation_id"].is_null());
    let r = call(&s, a, "GET", &format!("/v1/events/{}", ids[1]), None);
    assert!(r.body.get("tombstone").is_none());

    // One event, then the rest of the session.
    let r = call(
        &s,
        a,
        "DELETE",
        &format!("/v1/events/{}?reason=the%20user%20asked", ids[0]),
        None,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["events"], json!([ids[0]]));
    assert!(r.body["operation_id"].is_string());
    assert_eq!(r.body["verification"]["texts_found_in_pack"], 0);
    let r = call(&s, a, "GET", &format!("/v1/events/{}", ids[0]), None);
    assert_eq!(r.status, 200);
    assert_eq!(r.body["content"], "");
    assert_eq!(r.body["tombstone"]["reason"], "the user asked");
    let r = call(&s, a, "DELETE", "/v1/sessions/secret?reason=asked", None);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["events"], json!([ids[1]]));
    assert_eq!(r.body["already_forgotten"], json!([ids[0]]));
    let r = call(
        &s,
        a,
        "POST",
        "/v1/retrieve",
        Some(json!({"query": "Zorvexquill vault harbour"})),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(!r.body["results"].to_string().contains("Zorvexquill"));
    // Bob's message in his own session of the same name is untouched.
    let r = call(&s, b, "GET", &format!("/v1/events/{bob_event}"), None);
    assert_eq!(r.body["content"], "bob's own message");

    // The whole owner: the key's own, nobody else's.
    let r = call(
        &s,
        a,
        "DELETE",
        "/v1/owner?reason=close%20my%20account",
        None,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["events"], json!([ids[2]]));
    let r = call(&s, b, "GET", &format!("/v1/events/{bob_event}"), None);
    assert_eq!(r.body["content"], "bob's own message");
    let r = call(&s, a, "GET", "/v1/events", None);
    assert!(r.body["events"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["content"] == "" && e["tombstone"].is_object()));
}

/// `asked_at` is when the question is asked: "a month ago" is read
/// against it, not against the newest turn; a bad time is refused.
#[test]
fn retrieve_reads_relative_dates_against_asked_at() {
    let s = TestServer::keyed();
    let a = ALICE_KEY;
    for (when, text) in [
        (
            "2023-02-14T10:00:00Z",
            "I rode in the bike charity event today.",
        ),
        (
            "2023-03-19T10:00:00Z",
            "I walked in the hunger charity event today.",
        ),
    ] {
        let r = call(
            &s,
            a,
            "POST",
            "/v1/events",
            Some(json!({"content": text, "speaker": "Alice", "event_time": when})),
        );
        assert!(r.status < 300, "{}", r.body);
    }
    let first = |asked_at: Option<&str>| {
        let mut body =
            json!({"query": "What charity event did I do a month ago?", "record": false});
        if let Some(t) = asked_at {
            body["asked_at"] = json!(t);
        }
        let r = call(&s, a, "POST", "/v1/retrieve", Some(body));
        assert_eq!(r.status, 200, "{}", r.body);
        r.body["results"][0]["content"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // A month before 18 April is the walk; a month before the newest turn
    // (19 March) is the ride.
    assert!(first(Some("2023-04-18T18:00:00Z")).contains("hunger"));
    assert!(first(None).contains("bike"));
    let bad = call(
        &s,
        a,
        "POST",
        "/v1/retrieve",
        Some(json!({"query": "x", "asked_at": "yesterday"})),
    );
    assert_eq!(bad.status, 422, "{}", bad.body);
    assert_eq!(error_code(&bad), "invalid_input");
    assert!(
        bad.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("asked_at"),
        "{}",
        bad.body
    );
}
