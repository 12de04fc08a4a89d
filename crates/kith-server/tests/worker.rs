//! Issue 18 items 3 and 4: the background worker of `kith serve`, the
//! batch ingest route, `/metrics` and shutdown with work in flight, over
//! real HTTP with a real pack. Deferred ingests are
//! extracted without `kith process`; an LLM failure that may pass (HTTP
//! 500 from a replaying server) is retried after a backoff; one that will
//! not (a reply that is not JSON) is left for a person. Nothing here
//! measures time: each wait is for a state, with a generous deadline.

use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use kith::extract::openai::{OpenAiCompatible, OpenAiConfig};
use kith::extract::replay::{ReplayResponse, ReplayRule, ReplayServer};
use kith::Memory;
use kith_server::worker::WorkerConfig;
use kith_server::{Auth, ServeOptions};
use serde_json::{json, Value};

/// A keyless server with a fast worker on 127.0.0.1:0, stopped on drop.
struct TestServer {
    base: String,
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
    _dir: tempfile::TempDir,
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

impl TestServer {
    fn start(configure: impl FnOnce(Memory) -> Memory) -> TestServer {
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
                let options = ServeOptions {
                    worker: Some(fast_worker()),
                    reload_keys: None,
                };
                let auth = Auth::Open {
                    default_owner: kith::OwnerId::new("alice").unwrap(),
                };
                kith_server::serve_with(listener, memory, auth, options, stop)
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

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .proxy(None)
            .timeout_global(Some(Duration::from_secs(60)))
            .build()
            .new_agent();
        let mut req = ureq::http::Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base));
        if body.is_some() {
            req = req.header("content-type", "application/json");
        }
        let bytes = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
        let mut resp = agent.run(req.body(bytes).unwrap()).unwrap();
        let status = resp.status().as_u16();
        let text = resp.body_mut().read_to_string().unwrap_or_default();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// Polls `GET path` until `done` holds of its body; panics after a
    /// minute (the worker polls every 50 ms: a minute means it is stuck).
    fn wait_for(&self, path: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let (status, body) = self.call("GET", path, None);
            if status == 200 && done(&body) {
                return body;
            }
            assert!(Instant::now() < deadline, "never {what}: {body}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl TestServer {
    /// Stops the server gracefully and waits until it has returned.
    fn stop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    fn text(&self, path: &str) -> (String, String) {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .proxy(None)
            .build()
            .new_agent();
        let mut resp = agent.get(format!("{}{path}", self.base)).call().unwrap();
        let ctype = resp
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_string())
            .unwrap_or_default();
        (ctype, resp.body_mut().read_to_string().unwrap())
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop();
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
    let s = TestServer::start(|m| m);
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
    let s = TestServer::start(|m| with_llm(m, &llm));
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
    let s = TestServer::start(|m| with_llm(m, &llm));
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
    let s = TestServer::start(|m| m);
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
    let s = TestServer::start(|m| with_llm(m, &llm));
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

    let (ctype, text) = s.text("/metrics");
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
    let mut s = TestServer::start(|m| with_llm(m, &llm));
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
    let memory = Memory::open(&s._dir.path().join("p.kith")).unwrap();
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
