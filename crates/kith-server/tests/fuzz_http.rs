//! Fuzz-style property of the HTTP API (issue 20): arbitrary bodies and
//! query strings on every route, sent over a real socket with alice's key.
//! Every answer is a success or a typed client error (`{"error": {"code",
//! "message"}}`, status below 500 or 503), never a crash or an internal
//! error; an error answer leaves alice's memory unchanged; and bob's memory
//! is never touched, whatever alice sends. Bounded: a fixed number of
//! requests.

use std::cell::Cell;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use kith::{Memory, OwnerId};
use kith_server::{ApiKeys, Auth};
use proptest::prelude::*;
use serde_json::{json, Value};

const ALICE: &str = "alice-key-0123456789abcdef";
const BOB: &str = "bob-key-0123456789abcdef00";

/// Keys bodies are made of: real field names of the API and a few others.
const KEYS: &[&str] = &[
    "content",
    "role",
    "owner_id",
    "session_id",
    "speaker",
    "events",
    "query",
    "limit",
    "token_budget",
    "jobs",
    "budget",
    "reason",
    "score",
    "a",
    "b",
    "verdict",
    "accept",
    "node_id",
    "claim_id",
    "object",
    "entity",
    "to",
    "claims",
    "metadata",
    "source_id",
    "event_time",
    "filters",
    "node_types",
    "x",
];

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        ".{0,20}".prop_map(Value::from),
        prop::sample::select(&["user", "assistant", "maya", "bob", "deduplicate", "accept"][..])
            .prop_map(Value::from),
        Just(Value::from("00000000-0000-0000-0000-000000000000")),
    ]
}

fn body() -> impl Strategy<Value = Vec<u8>> {
    let value = scalar().prop_recursive(3, 24, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS), inner), 0..5).prop_map(|kv| {
                Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
            }),
        ]
    });
    prop_oneof![
        4 => value.prop_map(|v| v.to_string().into_bytes()),
        1 => prop::collection::vec(any::<u8>(), 0..64),
        1 => Just(Vec::new()),
        1 => Just(br#"{"content": "x", "role": "user", "metadata": {"a": NaN}}"#.to_vec()),
    ]
}

fn query() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("?limit=abc".to_string()),
        Just("?limit=3".to_string()),
        Just("?reason=test&dry_run=true".to_string()),
        Just("?subject=Maya".to_string()),
        Just("?a=00000000-0000-0000-0000-000000000000&b=x".to_string()),
        "\\?[a-z_]{1,8}=[a-zA-Z0-9%]{0,12}",
    ]
}

/// One request on its own connection; the status and the body.
fn send(addr: &str, method: &str, target: &str, key: &str, body: &[u8]) -> (u16, Vec<u8>) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let head = format!(
        "{method} {target} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {key}\r\n\
         content-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("an HTTP answer");
    let status = std::str::from_utf8(&raw[..split])
        .unwrap()
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    (status, raw[split + 4..].to_vec())
}

#[test]
fn any_request_is_answered_typed_and_errors_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let memory = Arc::new(Memory::init(&dir.path().join("p.kith")).unwrap());
    let keys = ApiKeys::parse_env(&format!("{ALICE}:alice,{BOB}:bob")).unwrap();
    let (addr_tx, addr_rx) = mpsc::channel();
    let (stop_tx, stop_rx) = mpsc::channel::<()>();
    let served = Arc::clone(&memory);
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
            kith_server::serve(listener, served, Auth::Keys(keys), stop)
                .await
                .unwrap();
        });
    });
    let addr = addr_rx
        .recv_timeout(Duration::from_secs(30))
        .unwrap()
        .to_string();
    for (key, text) in [
        (ALICE, "Maya moved to Lisbon."),
        (BOB, "Bob's secret plan."),
    ] {
        let body = json!({"content": text, "role": "user"}).to_string();
        let (status, _) = send(&addr, "POST", "/v1/ingest", key, body.as_bytes());
        assert!((200..300).contains(&status), "{status}");
    }
    let alice = OwnerId::new("alice").unwrap();
    let bob = OwnerId::new("bob").unwrap();
    let bob_before = memory.stats(Some(&bob)).unwrap();
    let routes = kith_server::route_table();

    let (ok, refused) = (Cell::new(0), Cell::new(0));
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 300,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    runner
        .run(
            &(0..routes.len(), body(), query(), any::<u128>()),
            |(route, body, query, id)| {
                let (method, path) = &routes[route];
                let id = uuid::Uuid::from_u128(id).to_string();
                let target = format!("{}{query}", path.replace("{id}", &id).replace("{op}", &id));
                let before = memory.stats(Some(&alice)).unwrap();
                let (status, answer) = send(&addr, method.as_str(), &target, ALICE, &body);
                prop_assert!(
                    status < 500 || status == 503,
                    "{method} {target}: {status} {}",
                    String::from_utf8_lossy(&answer)
                );
                if status >= 400 {
                    refused.set(refused.get() + 1);
                    let v: Value = serde_json::from_slice(&answer).unwrap_or(Value::Null);
                    prop_assert!(
                        v["error"]["code"].is_string() && v["error"]["message"].is_string(),
                        "{method} {target}: {status} untyped {}",
                        String::from_utf8_lossy(&answer)
                    );
                    prop_assert_eq!(
                        memory.stats(Some(&alice)).unwrap(),
                        before,
                        "{} {} answered {} but changed alice's memory",
                        method,
                        &target,
                        status
                    );
                } else {
                    ok.set(ok.get() + 1);
                }
                prop_assert_eq!(memory.stats(Some(&bob)).unwrap(), bob_before.clone());
                Ok(())
            },
        )
        .unwrap();
    let (ok, refused) = (ok.get(), refused.get());
    assert!(ok > 10 && refused > 10, "{ok} answered, {refused} refused");
    let _ = stop_tx.send(());
    thread.join().unwrap();
    assert!(memory.doctor().unwrap().healthy());
}
