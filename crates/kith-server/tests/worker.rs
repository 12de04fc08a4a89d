//! Issue 18 items 3 and 4: the background worker of `kith serve`, the
//! batch ingest route, `/metrics` and shutdown with work in flight, over
//! real HTTP with a real pack. Deferred ingests are
//! extracted without `kith process`; an LLM failure that may pass (HTTP
//! 500 from a replaying server) is retried after a backoff; one that will
//! not (a reply that is not JSON) is left for a person. Nothing here
//! measures time: each wait is for a state, with a generous deadline.

use std::sync::Arc;
use std::time::Duration;

use kith::extract::openai::{OpenAiCompatible, OpenAiConfig};
use kith::extract::replay::{ReplayResponse, ReplayRule, ReplayServer};
use kith::Memory;
use kith_server::worker::WorkerConfig;
use kith_server::ServeOptions;

use common::TestServer;
use serde_json::{json, Value};

mod common;

/// A keyless server (owner alice) with a fast worker.
fn start(configure: impl FnOnce(Memory) -> Memory) -> TestServer {
    TestServer::start(
        ServeOptions {
            worker: Some(fast_worker()),
            reload_keys: None,
            ..Default::default()
        },
        configure,
    )
}

fn fast_worker() -> WorkerConfig {
    WorkerConfig {
        concurrency: 2,
        poll: Duration::from_millis(50),
        backoff: Duration::from_millis(100),
        max_backoff: Duration::from_millis(400),
        max_attempts: 3,
    }
}

/// A memory whose extraction goes to `server`, with no retries inside one
/// attempt (so a 500 fails the attempt and the worker must retry it).
fn with_llm(memory: Memory, server: &ReplayServer) -> Memory {
    let config = OpenAiConfig::new(server.base_url(), "recorded")
        .with_timeout(Duration::from_secs(10))
        .with_max_retries(0);
    memory.with_provider(Arc::new(OpenAiCompatible::new(config).unwrap()))
}

fn lisbon() -> Value {
    json!({"entities": [{"name": "Lisbon", "entity_type": "place", "description": null}],
           "facts": [], "relationships": []})
}

#[test]
fn deferred_ingests_are_extracted_by_the_worker() {
    let s = start(|m| m);
    let (status, receipt) = s.call(
        "POST",
        "/v1/ingest",
        Some(json!({"content": "My sister Maya lives in Berlin.", "speaker": "Alice", "defer": true})),
    );
    assert_eq!(status, 200, "{receipt}");
    assert_eq!(receipt["status"], "pending", "{receipt}");
    let id = receipt["event_id"].as_str().unwrap().to_string();
    let report = s.wait_for(&format!("/v1/events/{id}/status"), "complete", |b| {
        b["item"]["status"] == "complete"
    });
    assert!(report["derivation"].is_object(), "{report}");
    let health = s.wait_for("/v1/health", "counted", |b| b["worker"]["completed"] == 1);
    assert_eq!(health["worker"]["failed"], 0, "{health}");
    assert_eq!(health["worker"]["concurrency"], 2, "{health}");
    let health = s.wait_for("/v1/health", "an empty queue", |b| {
        b["worker"]["queue"]["pending"] == 0 && b["worker"]["in_flight"] == 0
    });
    assert_eq!(health["worker"]["queue"]["failed"], 0, "{health}");
}

#[test]
fn a_failure_that_may_pass_is_retried_after_a_backoff() {
    let llm = ReplayServer::start(vec![ReplayRule::new(
        "",
        vec![
            ReplayResponse::status(500, "{\"error\": \"overloaded\"}"),
            ReplayResponse::extraction(&lisbon()),
        ],
    )])
    .unwrap();
    let s = start(|m| with_llm(m, &llm));
    let (status, receipt) = s.call(
        "POST",
        "/v1/ingest",
        Some(json!({"content": "I moved to Lisbon.", "speaker": "Alice"})),
    );
    assert_eq!(status, 200, "{receipt}");
    assert_eq!(receipt["status"], "failed", "{receipt}");
    let id = receipt["event_id"].as_str().unwrap().to_string();
    let report = s.wait_for(&format!("/v1/events/{id}/status"), "retried", |b| {
        b["item"]["status"] == "complete"
    });
    assert_eq!(report["item"]["attempts"], 2, "{report}");
    assert_eq!(llm.requests().len(), 2, "one failed call, one retry");
    let health = s.wait_for("/v1/health", "counted", |b| b["worker"]["completed"] == 1);
    assert_eq!(health["worker"]["taken"], 1, "{health}");
}

#[test]
fn a_failure_that_will_not_pass_is_left_for_a_person() {
    let llm = ReplayServer::start(vec![ReplayRule::new(
        "",
        vec![ReplayResponse::chat("this is not JSON")],
    )])
    .unwrap();
    let s = start(|m| with_llm(m, &llm));
    let (_, receipt) = s.call(
        "POST",
        "/v1/ingest",
        Some(json!({"content": "I moved to Lisbon.", "speaker": "Alice"})),
    );
    assert_eq!(receipt["status"], "failed", "{receipt}");
    // Once a scan has seen it, it is counted as failed for good, and the
    // worker has not taken it.
    let health = s.wait_for("/v1/health", "seen", |b| {
        b["worker"]["queue"]["failed"] == 1
    });
    assert_eq!(health["worker"]["taken"], 0, "{health}");
    assert_eq!(health["worker"]["queue"]["retrying"], 0, "{health}");
    let id = receipt["event_id"].as_str().unwrap();
    let (_, report) = s.call("GET", &format!("/v1/events/{id}/status"), None);
    assert_eq!(report["item"]["attempts"], 1, "{report}");
    assert_eq!(llm.requests().len(), 1);
}

#[test]
fn a_batch_is_admitted_whole_and_extracted_in_the_background() {
    let s = start(|m| m);
    let (status, body) = s.call(
        "POST",
        "/v1/ingest/batch",
        Some(json!({"defer": true, "events": [
            {"content": "I moved to Lisbon.", "speaker": "Alice", "session_id": "b"},
            {"content": "My sister Maya lives in Berlin.", "speaker": "Alice", "session_id": "b"},
            {"content": "Lovely!", "role": "assistant", "session_id": "b"}
        ]})),
    );
    assert_eq!(status, 200, "{body}");
    let receipts = body["receipts"].as_array().unwrap();
    assert_eq!(receipts.len(), 3);
    assert!(receipts.iter().all(|r| r["status"] == "pending"), "{body}");
    for r in receipts {
        let id = r["event_id"].as_str().unwrap();
        s.wait_for(&format!("/v1/events/{id}/status"), "complete", |b| {
            b["item"]["status"] == "complete"
        });
    }
    // Without defer the answer carries the extraction.
    let (status, body) = s.call(
        "POST",
        "/v1/ingest/batch",
        Some(json!({"events": [{"content": "Jordan works at Northwind.", "session_id": "c"}]})),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["receipts"][0]["status"], "complete", "{body}");

    // One bad message refuses the whole batch; nothing is written.
    let (_, before) = s.call("GET", "/v1/stats", None);
    for bad in [
        json!({"events": [{"content": "fine"}, {"content": "x", "role": "robot"}]}),
        json!({"events": []}),
        json!({"events": [{"content": "x", "node_type": "entity"}]}),
        json!({"events": [{"content": "x"}], "colour": "red"}),
    ] {
        let (status, body) = s.call("POST", "/v1/ingest/batch", Some(bad.clone()));
        assert_eq!(status, 422, "{bad}: {body}");
        assert_eq!(body["error"]["code"], "invalid_input", "{bad}: {body}");
    }
    let (_, after) = s.call("GET", "/v1/stats", None);
    assert_eq!(before["events"], after["events"]);
    assert_eq!(after["events"], 4);
}

/// The value of the sample `line_start` (the whole `name{labels}` part).
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[test]
fn metrics_count_requests_per_route_and_show_the_store_and_queue() {
    let llm = ReplayServer::start(vec![ReplayRule::new(
        "",
        vec![ReplayResponse::chat("this is not JSON")],
    )])
    .unwrap();
    let s = start(|m| with_llm(m, &llm));
    let (_, receipt) = s.call(
        "POST",
        "/v1/ingest",
        Some(json!({"content": "I moved to Lisbon.", "speaker": "Alice"})),
    );
    assert_eq!(receipt["status"], "failed", "{receipt}");
    let (_, stored) = s.call(
        "POST",
        "/v1/events",
        Some(json!({"content": "Hello there."})),
    );
    let id = stored["event_id"].as_str().unwrap();
    assert_eq!(s.call("GET", &format!("/v1/events/{id}"), None).0, 200);
    let missing = "00000000-0000-0000-0000-000000000000";
    assert_eq!(s.call("GET", &format!("/v1/events/{missing}"), None).0, 404);
    assert_eq!(s.call("GET", "/no/such/route", None).0, 404);
    s.wait_for("/v1/health", "seen", |b| {
        b["worker"]["queue"]["failed"] == 1
    });

    let (_, ctype, text) = s.raw("GET", "/metrics", None);
    assert!(ctype.starts_with("text/plain; version=0.0.4"), "{ctype}");
    let route = "method=\"GET\",route=\"/v1/events/{id}\"";
    assert_eq!(
        sample(
            &text,
            &format!("kith_http_requests_total{{{route},status=\"200\"}}")
        ),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        sample(
            &text,
            &format!("kith_http_requests_total{{{route},status=\"404\"}}")
        ),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        sample(
            &text,
            &format!("kith_http_request_duration_seconds_count{{{route}}}")
        ),
        Some(2.0),
        "{text}"
    );
    assert_eq!(
        sample(
            &text,
            &format!("kith_http_request_duration_seconds_bucket{{{route},le=\"+Inf\"}}")
        ),
        Some(2.0),
        "{text}"
    );
    // Ids never become labels; unknown paths share one.
    assert!(!text.contains(id) && !text.contains(missing), "{text}");
    assert_eq!(
        sample(
            &text,
            "kith_http_requests_total{method=\"GET\",route=\"unmatched\",status=\"404\"}"
        ),
        Some(1.0),
        "{text}"
    );
    assert_eq!(sample(&text, "kith_store_events"), Some(2.0), "{text}");
    assert_eq!(sample(&text, "kith_store_owners"), Some(1.0), "{text}");
    assert_eq!(
        sample(&text, "kith_work_queue{status=\"failed\"}"),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        sample(&text, "kith_work_queue{status=\"pending\"}"),
        Some(0.0),
        "{text}"
    );
    assert_eq!(
        sample(&text, "kith_extraction_failures_total{source=\"request\"}"),
        Some(1.0),
        "{text}"
    );
    // The exposition format: every family declared before its samples,
    // every sample `series value`.
    let mut declared = std::collections::HashSet::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            declared.insert(rest.split(' ').next().unwrap().to_string());
            continue;
        }
        if line.starts_with("# HELP ") {
            continue;
        }
        let (series, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("{line}"));
        assert!(value.parse::<f64>().is_ok(), "{line}");
        let name = series.split('{').next().unwrap();
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|suffix| name.strip_suffix(suffix).filter(|f| declared.contains(*f)))
            .unwrap_or(name);
        assert!(declared.contains(family), "{line} before its # TYPE");
    }
}

#[test]
fn shutdown_lets_the_worker_finish_what_it_runs() {
    // A slow LLM: the item is mid-call when the server is told to stop.
    let llm = ReplayServer::start(vec![ReplayRule::new(
        "",
        vec![ReplayResponse::extraction(&lisbon()).with_delay(1500)],
    )])
    .unwrap();
    let mut s = start(|m| with_llm(m, &llm));
    let (_, receipt) = s.call(
        "POST",
        "/v1/ingest",
        Some(json!({"content": "I moved to Lisbon.", "speaker": "Alice", "defer": true})),
    );
    let id: uuid::Uuid = receipt["event_id"].as_str().unwrap().parse().unwrap();
    s.wait_for("/v1/health", "taken", |b| b["worker"]["in_flight"] == 1);
    s.stop();
    // The server has returned; the pack shows the item finished, not left
    // running for the next start to resume.
    let memory = Memory::open(&s.dir.path().join("p.kith")).unwrap();
    let owner = kith::OwnerId::new("alice").unwrap();
    let report = memory.work_status(&owner, id).unwrap();
    assert_eq!(
        report.item.status,
        kith::WorkStatus::Complete,
        "{:?}",
        report.item
    );
    assert_eq!(llm.requests().len(), 1);
}

#[test]
fn stats_and_metrics_report_the_embedding_backlog() {
    // Three of alice's notes and one of bob's stored before the memory had
    // an embedder: notes without a vector, as background embedding leaves
    // them until its worker gets there.
    let s = start(|m| {
        for (owner, text) in [
            ("alice", "I moved to Lisbon."),
            ("alice", "Biscuit is my dog."),
            ("alice", "I work as a nurse."),
            ("bob", "I play the cello."),
        ] {
            m.store(kith::EventInput {
                owner_id: Some(owner.into()),
                ..kith::EventInput::new("user", text)
            })
            .unwrap();
        }
        let hashing = kith::embedding::EmbeddingSpec::parse("hashing-384")
            .unwrap()
            .load()
            .unwrap()
            .expect("hashing-384 is an embedder");
        m.with_embedder(hashing)
    });
    let (status, body) = s.call("GET", "/v1/stats", None);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["events"], 3, "{body}");
    assert_eq!(body["embedding_backlog"], 3, "{body}");
    let (_, _, text) = s.raw("GET", "/metrics", None);
    assert_eq!(sample(&text, "kith_embedding_backlog"), Some(4.0), "{text}");

    // A note stored now is embedded as it is stored: the backlog stays.
    let (status, _) = s.call(
        "POST",
        "/v1/events",
        Some(json!({"content": "I moved to Porto."})),
    );
    assert_eq!(status, 201);
    let (_, body) = s.call("GET", "/v1/stats", None);
    assert_eq!(body["events"], 4, "{body}");
    assert_eq!(body["embedding_backlog"], 3, "{body}");
}
