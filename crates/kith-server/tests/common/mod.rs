//! A real server on a loopback port for the tests, and a small HTTP client.
#![allow(dead_code)]

use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use kith::Memory;
use kith_server::{Auth, ServeOptions};
use serde_json::Value;

/// A keyless server (owner `alice`) on 127.0.0.1:0 in this process,
/// stopped gracefully on drop.
pub struct TestServer {
    pub base: String,
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
    pub dir: tempfile::TempDir,
}

impl TestServer {
    /// A keyless server (owner `alice`) on a fresh pack that `configure`
    /// adjusts first.
    pub fn start(options: ServeOptions, configure: impl FnOnce(Memory) -> Memory) -> TestServer {
        let auth = Auth::Open {
            default_owner: kith::OwnerId::new("alice").unwrap(),
        };
        TestServer::start_with(auth, options, configure)
    }

    /// A server with `auth` on a fresh pack that `configure` adjusts first.
    pub fn start_with(
        auth: Auth,
        options: ServeOptions,
        configure: impl FnOnce(Memory) -> Memory,
    ) -> TestServer {
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
            dir,
        }
    }

    /// One request; the status and the body as JSON (Null if it is not).
    pub fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let (status, _, text) = self.raw(method, path, body);
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// One request; the status, content type and body text.
    pub fn raw(&self, method: &str, path: &str, body: Option<Value>) -> (u16, String, String) {
        self.send(method, path, &[], body)
    }

    /// One request with extra headers; the status, content type and body.
    pub fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<Value>,
    ) -> (u16, String, String) {
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
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        let bytes = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
        let mut resp = agent.run(req.body(bytes).unwrap()).unwrap();
        let status = resp.status().as_u16();
        let ctype = resp
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap_or_default().to_string())
            .unwrap_or_default();
        let text = resp.body_mut().read_to_string().unwrap_or_default();
        (status, ctype, text)
    }

    /// One request with a raw text body; the status, content type and body.
    pub fn send_text(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, String, String) {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .proxy(None)
            .build()
            .new_agent();
        let mut req = ureq::http::Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base));
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        let mut resp = agent
            .run(req.body(body.as_bytes().to_vec()).unwrap())
            .unwrap();
        let status = resp.status().as_u16();
        let ctype = resp
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap_or_default().to_string())
            .unwrap_or_default();
        (
            status,
            ctype,
            resp.body_mut().read_to_string().unwrap_or_default(),
        )
    }

    /// Polls `GET path` until `done` holds of its body; panics after a
    /// minute (a liveness bound, not a speed check).
    pub fn wait_for(&self, path: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
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

    /// Stops the server gracefully and waits until it has returned.
    pub fn stop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop();
    }
}
