//! The OpenAI-compatible provider against a real local HTTP server that
//! replays recorded replies (`tests/fixtures/*.json`, format in
//! `kith_extract::replay`): the real client, retries, fallback and parsing,
//! with only the model replaced by a recording.
//!
//! Timeouts and backoffs are a few milliseconds so the file runs in about a
//! second; nothing here asserts how long anything took.

use std::net::TcpListener;
use std::path::PathBuf;
use std::time::Duration;

use kith_core::{Role, Timestamp};
use kith_extract::openai::{OpenAiCompatible, OpenAiConfig, ResponseFormat};
use kith_extract::replay::{ReplayResponse, ReplayRule, ReplayServer};
use kith_extract::{ExtractError, ExtractionInput, Provider, TemporalIntent};
use serde_json::{json, Value};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn server() -> ReplayServer {
    ReplayServer::from_dir(fixtures()).expect("fixtures load")
}

/// Test settings: short timeout, millisecond backoff.
fn config(base_url: &str) -> OpenAiConfig {
    OpenAiConfig::new(base_url, "replay-model")
        .with_timeout(Duration::from_millis(300))
        .with_max_retries(3)
        .with_backoff(Duration::from_millis(2), Duration::from_millis(8))
}

fn client(server: &ReplayServer) -> OpenAiCompatible {
    OpenAiCompatible::new(config(&server.base_url())).expect("valid config")
}

fn input(content: &str) -> ExtractionInput<'_> {
    ExtractionInput {
        content,
        role: Role::User,
        speaker: None,
        event_time: None,
    }
}

fn bodies(server: &ReplayServer) -> Vec<Value> {
    server
        .requests()
        .iter()
        .map(|b| serde_json::from_str(b).expect("the client sends JSON"))
        .collect()
}

#[test]
fn a_good_reply_parses_and_the_request_is_well_formed() {
    let server = server();
    let provider =
        OpenAiCompatible::new(config(&server.base_url()).with_api_key("sk-test-123")).unwrap();
    let t = Timestamp::parse("t", "2023-05-08T13:56:00Z").unwrap();
    let reply = provider
        .extract(&ExtractionInput {
            content: "I moved from Leeds to Lisbon last spring.",
            role: Role::User,
            speaker: Some("Maya"),
            event_time: Some(t),
        })
        .unwrap();

    assert_eq!(reply.calls, 1);
    assert_eq!(reply.provider, "openai-compatible");
    assert_eq!(reply.model, "replay-model");
    assert_eq!(
        (provider.name(), provider.model()),
        ("openai-compatible", "replay-model")
    );
    assert_eq!(reply.extraction.entities.len(), 2);
    let fact = &reply.extraction.facts[0];
    assert_eq!(
        (fact.subject.as_str(), fact.object.as_str()),
        ("I", "Lisbon")
    );
    assert_eq!(fact.temporal_intent, Some(TemporalIntent::Update));
    assert_eq!(fact.replaces_object.as_deref(), Some("Leeds"));
    assert_eq!(
        kith_extract::Extraction::parse(&reply.raw).unwrap(),
        reply.extraction
    );

    let recorded = server.recorded();
    assert_eq!(recorded.len(), 1);
    let req = &recorded[0];
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(req.header("authorization"), Some("Bearer sk-test-123"));
    assert_eq!(req.header("content-type"), Some("application/json"));
    let body = req.json().unwrap();
    assert_eq!(body["model"], "replay-model");
    assert_eq!(body["temperature"], 0);
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(
        body["messages"][0]["content"],
        kith_extract::prompt::SYSTEM_PROMPT
    );
    assert_eq!(body["messages"][1]["role"], "user");
    let user = body["messages"][1]["content"].as_str().unwrap();
    assert!(user.contains("Speaker: Maya"), "{user}");
    assert!(user.contains("Event time: 2023-05-08T13:56:00Z"), "{user}");
    // Properties go out in the order a model should write them.
    assert!(
        req.body.contains(r#""properties":{"name":"#),
        "{}",
        req.body
    );
    let format = &body["response_format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["json_schema"]["name"], "kith_extraction");
    assert_eq!(format["json_schema"]["strict"], true);
    assert_eq!(
        format["json_schema"]["schema"],
        kith_extract::prompt::json_schema()
    );
}

#[test]
fn no_authorization_header_without_a_key() {
    let server = server();
    client(&server)
        .extract(&input("I moved from Leeds to Lisbon last spring."))
        .unwrap();
    assert_eq!(server.recorded()[0].header("authorization"), None);
}

#[test]
fn a_fenced_reply_parses() {
    let server = server();
    let reply = client(&server)
        .extract(&input("I prefer green tea."))
        .unwrap();
    assert_eq!(reply.extraction.facts[0].object, "green tea");
    assert!(
        reply.raw.starts_with('{') && reply.raw.ends_with('}'),
        "{}",
        reply.raw
    );
}

#[test]
fn two_server_errors_then_success_takes_three_calls() {
    let server = server();
    let reply = client(&server)
        .extract(&input("Flaky: Jordan works at Acme."))
        .unwrap();
    assert_eq!(reply.calls, 3);
    assert_eq!(reply.extraction.entities.len(), 2);
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn a_rate_limit_is_retried() {
    let server = server();
    let reply = client(&server)
        .extract(&input("Rate limited: hello."))
        .unwrap();
    assert_eq!(reply.calls, 2);
}

#[test]
fn a_server_that_always_fails_gives_http_500_after_every_retry() {
    let server = server();
    let provider = client(&server);
    let err = provider.extract(&input("Down: anything.")).unwrap_err();
    match &err {
        ExtractError::Http {
            status,
            endpoint,
            body,
        } => {
            assert_eq!(*status, 500);
            assert_eq!(endpoint, provider.endpoint());
            assert!(body.contains("internal error"), "{body}");
        }
        other => panic!("expected HTTP 500, got {other:?}"),
    }
    assert_eq!(server.requests().len(), 3 + 1, "max_retries + 1 calls");
}

#[test]
fn a_client_error_is_not_retried() {
    let server = server();
    let err = client(&server)
        .extract(&input("Unauthorized: anything."))
        .unwrap_err();
    assert!(
        matches!(err, ExtractError::Http { status: 401, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("Incorrect API key"), "{err}");
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn a_reply_slower_than_the_timeout_is_a_timeout() {
    let server = server();
    let provider = OpenAiCompatible::new(
        config(&server.base_url())
            .with_timeout(Duration::from_millis(100))
            .with_max_retries(1),
    )
    .unwrap();
    let err = provider.extract(&input("Slow: anything.")).unwrap_err();
    assert!(
        matches!(&err, ExtractError::Timeout { endpoint, .. } if endpoint == provider.endpoint()),
        "{err:?}"
    );
    assert!(err.is_retryable());
    assert_eq!(server.requests().len(), 2, "timeouts are retried");
}

#[test]
fn invalid_json_is_returned_after_exactly_one_call() {
    let server = server();
    let err = client(&server)
        .extract(&input("Invalid JSON: anything."))
        .unwrap_err();
    assert!(matches!(err, ExtractError::InvalidJson { .. }), "{err:?}");
    assert_eq!(server.requests().len(), 1, "not retried");
}

#[test]
fn a_reply_that_breaks_the_schema_is_malformed_with_a_path() {
    let server = server();
    let err = client(&server)
        .extract(&input("Wrong schema: anything."))
        .unwrap_err();
    match &err {
        ExtractError::Malformed { path, reason } => {
            assert_eq!(path, "facts[0]");
            assert!(reason.contains("maybe"), "{reason}");
        }
        other => panic!("expected Malformed, got {other:?}"),
    }
    assert_eq!(server.requests().len(), 1, "not retried");
}

#[test]
fn a_server_without_json_schema_gets_json_object_from_then_on() {
    let server = server();
    let provider = client(&server);
    assert_eq!(provider.response_format(), ResponseFormat::JsonSchema);

    let reply = provider
        .extract(&input("Old server: Maya lives in Porto."))
        .unwrap();
    assert_eq!(reply.calls, 2);
    assert_eq!(reply.extraction.entities[1].name, "Porto");
    assert_eq!(provider.response_format(), ResponseFormat::JsonObject);

    let again = provider
        .extract(&input("Old server: Maya lives in Porto."))
        .unwrap();
    assert_eq!(again.calls, 1, "straight to json_object");

    let formats: Vec<Value> = bodies(&server)
        .iter()
        .map(|b| b["response_format"]["type"].clone())
        .collect();
    assert_eq!(
        formats,
        [
            json!("json_schema"),
            json!("json_object"),
            json!("json_object")
        ]
    );
}

#[test]
fn a_closed_port_is_a_connection_error() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let provider = OpenAiCompatible::new(config(&format!("http://127.0.0.1:{port}/v1"))).unwrap();
    let err = provider.extract(&input("anything")).unwrap_err();
    assert!(
        matches!(&err, ExtractError::Connect { endpoint, .. } if endpoint == provider.endpoint()),
        "{err:?}"
    );
    assert_eq!(err.reason_code(), "connect");
}

#[test]
fn empty_choices_is_an_empty_reply() {
    let server = server();
    let err = client(&server)
        .extract(&input("Empty choices: anything."))
        .unwrap_err();
    assert!(matches!(err, ExtractError::EmptyReply { .. }), "{err:?}");
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn an_unmatched_request_is_a_404_naming_it() {
    let server = server();
    let err = client(&server)
        .extract(&input("Nobody recorded this."))
        .unwrap_err();
    match err {
        ExtractError::Http {
            status: 404, body, ..
        } => {
            assert!(body.contains("Nobody recorded this."), "{body}")
        }
        other => panic!("expected 404, got {other:?}"),
    }
}

#[test]
fn one_provider_serves_many_threads() {
    let server = ReplayServer::start(vec![ReplayRule::new(
        "",
        vec![ReplayResponse::extraction(
            &json!({"entities": [], "facts": [], "relationships": []}),
        )
        .with_delay(20)],
    )])
    .unwrap();
    let provider = client(&server);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|i| {
                let provider = &provider;
                s.spawn(move || {
                    provider
                        .extract(&input(&format!("message {i}")))
                        .map(|r| r.calls)
                })
            })
            .collect();
        for h in handles {
            assert_eq!(h.join().unwrap().unwrap(), 1);
        }
    });
    assert_eq!(server.requests().len(), 4);
}

#[test]
fn a_runaway_reply_is_refused_without_retrying() {
    let huge = "x".repeat(9 * 1024 * 1024);
    let server =
        ReplayServer::start(vec![ReplayRule::new("", vec![ReplayResponse::chat(&huge)])]).unwrap();
    let provider =
        OpenAiCompatible::new(config(&server.base_url()).with_timeout(Duration::from_secs(10)))
            .unwrap();
    let err = provider.extract(&input("anything")).unwrap_err();
    assert!(
        matches!(&err, ExtractError::InvalidJson { reason } if reason.contains("larger than")),
        "{err:?}"
    );
    assert_eq!(server.requests().len(), 1);
}
