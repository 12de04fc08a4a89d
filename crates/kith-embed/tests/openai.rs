//! OpenAiEmbedder over real HTTP against a loopback server started here.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use kith_embed::{EmbedError, Embedder, OpenAiConfig, OpenAiEmbedder};

/// A server that answers each of `replies` (status, body) to one
/// connection in turn, records the requests it got, then stops.
struct Server {
    base: String,
    requests: Arc<Mutex<Vec<(String, String)>>>,
    handle: Option<thread::JoinHandle<()>>,
}

impl Server {
    fn start(replies: Vec<(u16, String)>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&requests);
        let handle = thread::spawn(move || {
            for (status, body) in replies {
                let (stream, _) = listener.accept().unwrap();
                stream
                    .set_read_timeout(Some(Duration::from_secs(5)))
                    .unwrap();
                let mut reader = BufReader::new(stream);
                let mut head = String::new();
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    reader.read_line(&mut line).unwrap();
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap();
                    }
                    if line == "\r\n" || line.is_empty() {
                        break;
                    }
                    head.push_str(&line);
                }
                let mut request_body = vec![0; length];
                reader.read_exact(&mut request_body).unwrap();
                seen.lock()
                    .unwrap()
                    .push((head, String::from_utf8(request_body).unwrap()));
                let mut stream = reader.into_inner();
                write!(
                    stream,
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n\
                     Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                )
                .unwrap();
            }
        });
        Server {
            base,
            requests,
            handle: Some(handle),
        }
    }

    fn embedder(&self) -> OpenAiEmbedder {
        let config = OpenAiConfig::new(&self.base, "test-embed")
            .with_api_key("sk-test")
            .with_timeout(Duration::from_secs(5));
        OpenAiEmbedder::new(config).unwrap()
    }

    fn finish(mut self) -> Vec<(String, String)> {
        self.handle.take().unwrap().join().unwrap();
        self.requests.lock().unwrap().clone()
    }
}

#[test]
fn success_sorts_by_index_and_normalises() {
    let reply = r#"{"object":"list","data":[
        {"object":"embedding","index":1,"embedding":[0.0,2.0,0.0]},
        {"object":"embedding","index":0,"embedding":[3.0,0.0,4.0]}],
        "model":"test-embed","usage":{"prompt_tokens":4,"total_tokens":4}}"#;
    let server = Server::start(vec![(200, reply.to_string())]);
    let e = server.embedder();
    assert_eq!(e.dimension(), 0, "unknown before the first answer");
    let v = e.embed(&["first", "second"]).unwrap();
    assert_eq!(v, vec![vec![0.6, 0.0, 0.8], vec![0.0, 1.0, 0.0]]);
    assert_eq!(e.dimension(), 3);
    assert_eq!(e.model_id(), "test-embed");
    let requests = server.finish();
    let (head, body) = &requests[0];
    assert!(head.starts_with("POST /v1/embeddings "), "{head}");
    assert!(
        head.contains("Bearer sk-test") || head.contains("bearer sk-test"),
        "{head}"
    );
    let body: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(
        body,
        serde_json::json!({"model": "test-embed", "input": ["first", "second"]})
    );
}

#[test]
fn http_500_is_an_http_error_with_the_body() {
    let server = Server::start(vec![(500, r#"{"error":"overloaded"}"#.to_string())]);
    let err = server.embedder().embed(&["x"]).unwrap_err();
    match &err {
        EmbedError::Http { status, body, .. } => {
            assert_eq!(*status, 500);
            assert!(body.contains("overloaded"));
        }
        other => panic!("expected Http, got {other:?}"),
    }
    assert!(err.to_string().contains("HTTP 500"), "{err}");
    server.finish();
}

#[test]
fn malformed_json_is_a_bad_response() {
    let server = Server::start(vec![(200, "{\"data\": [oops".to_string())]);
    let err = server.embedder().embed(&["x"]).unwrap_err();
    assert!(matches!(err, EmbedError::BadResponse { .. }), "{err:?}");
    assert!(err.to_string().contains("not an embeddings reply"), "{err}");
    server.finish();
}

#[test]
fn wrong_count_and_wrong_dimension_are_refused() {
    let one = r#"{"data":[{"index":0,"embedding":[1.0,0.0]}]}"#.to_string();
    let three = r#"{"data":[{"index":0,"embedding":[1.0,0.0,0.0]}]}"#.to_string();
    let server = Server::start(vec![(200, one.clone()), (200, one), (200, three)]);
    let e = server.embedder();
    let err = e.embed(&["a", "b"]).unwrap_err();
    assert!(
        err.to_string().contains("1 embeddings for 2 inputs"),
        "{err}"
    );
    e.embed(&["a"]).unwrap();
    let err = e.embed(&["a"]).unwrap_err();
    assert!(err.to_string().contains("dimension 3, expected 2"), "{err}");
    server.finish();
}

#[test]
fn unreachable_server_is_a_transport_error() {
    // Bind then drop a listener: nothing listens on that port any more.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let e =
        OpenAiEmbedder::new(OpenAiConfig::new(format!("http://127.0.0.1:{port}"), "m")).unwrap();
    let err = e.embed(&["x"]).unwrap_err();
    assert!(matches!(err, EmbedError::Transport { .. }), "{err:?}");
}
