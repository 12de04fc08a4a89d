//! A real local HTTP server that replays recorded chat-completions replies,
//! so tests exercise the real HTTP client, retries and parsing.
//!
//! [`ReplayServer`] listens on `127.0.0.1` on a port the OS picks, speaks
//! enough HTTP/1.1 for any chat-completions client (one request per
//! connection, `Content-Length` or chunked request bodies,
//! `Expect: 100-continue`), and stops when dropped. It is written with the
//! standard library only.
//!
//! # Choosing a reply
//!
//! `POST …/chat/completions` requests are matched against the rules in
//! order; the first rule whose `when` text occurs in the request matches.
//! "Occurs in the request" means: in the text of one of its `user` messages
//! (decoded from JSON), or, when the body is not a chat-completions request,
//! anywhere in the raw body. An empty `when` matches every request. A rule
//! serves its responses in order to successive matching requests, and
//! repeats its last one once they run out. A request no rule matches gets
//! HTTP 404 with a JSON error that quotes the request's user message; any
//! other method or path gets 404 too. Every request body received is
//! recorded ([`ReplayServer::requests`]).
//!
//! # Fixture files
//!
//! [`ReplayServer::from_dir`] loads every `*.json` file of a directory, in
//! file name order. A file holds one rule or a list of rules:
//!
//! ```json
//! {
//!   "description": "optional, for people; ignored",
//!   "when": "I moved to Lisbon",
//!   "responses": [
//!     {"status": 500, "body": "{\"error\": \"overloaded\"}"},
//!     {"extraction": {"entities": [{"name": "Lisbon", "entity_type": "place", "description": null}],
//!                     "facts": [], "relationships": []}},
//!     {"content": "```json\n{\"entities\": []}\n```", "delay_ms": 50},
//!     {"status": 200, "json": {"choices": []}}
//!   ]
//! }
//! ```
//!
//! Each response has exactly one of:
//! - `extraction`: a JSON value, served as a chat completion whose message
//!   content is that value's JSON text ([`ReplayResponse::chat`]);
//! - `content`: a string, served as a chat completion with that content;
//! - `json`: a JSON value, served as the whole response body;
//! - `body`: a string, served as the whole response body;
//!
//! and optionally `status` (default 200) and `delay_ms` (default 0: how long
//! to wait before answering). Unknown fields are refused, so a typo in a
//! fixture fails loudly.

use std::fmt;
use std::fs;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};

/// The most of a request's head (request line and headers) read (64 KiB).
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// The largest request body accepted (16 MiB).
const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;
/// The most connections handled at once; more get 503 at once.
const MAX_CONNECTIONS: usize = 64;
/// How long a connection may take to send its request.
const READ_TIMEOUT: Duration = Duration::from_secs(5);
/// How often a delayed reply checks whether the server is stopping.
const DELAY_SLICE: Duration = Duration::from_millis(10);

/// Why a replay server could not start.
#[derive(Debug)]
#[non_exhaustive]
pub enum ReplayError {
    /// The listening socket could not be set up.
    Bind(io::Error),
    /// A fixture file or directory could not be read.
    Read {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// A fixture file is not in the fixture format.
    Fixture {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplayError::Bind(e) => write!(f, "the replay server cannot listen on 127.0.0.1: {e}"),
            ReplayError::Read { path, source } => {
                write!(
                    f,
                    "cannot read replay fixtures at {}: {source}",
                    path.display()
                )
            }
            ReplayError::Fixture { path, reason } => write!(
                f,
                "{} is not a replay fixture: {reason} (the format is documented in \
                 kith_extract::replay)",
                path.display()
            ),
        }
    }
}

impl std::error::Error for ReplayError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReplayError::Bind(e) | ReplayError::Read { source: e, .. } => Some(e),
            ReplayError::Fixture { .. } => None,
        }
    }
}

/// One recorded answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayResponse {
    /// The HTTP status.
    pub status: u16,
    /// The response body, sent as `application/json`.
    pub body: String,
    /// How long to wait before answering, in milliseconds.
    pub delay_ms: u64,
}

impl ReplayResponse {
    /// A 200 chat completion whose first choice's message content is
    /// `content` (for an extraction, its JSON text).
    pub fn chat(content: &str) -> Self {
        Self::json(200, &chat_completion(content))
    }

    /// A 200 chat completion whose content is the JSON text of `extraction`.
    pub fn extraction(extraction: &Value) -> Self {
        Self::chat(&extraction.to_string())
    }

    /// An answer with this status and JSON body.
    pub fn json(status: u16, body: &Value) -> Self {
        Self::status(status, body.to_string())
    }

    /// An answer with this status and body text.
    pub fn status(status: u16, body: impl Into<String>) -> Self {
        ReplayResponse {
            status,
            body: body.into(),
            delay_ms: 0,
        }
    }

    /// The same answer, sent after `delay_ms` milliseconds.
    pub fn with_delay(mut self, delay_ms: u64) -> Self {
        self.delay_ms = delay_ms;
        self
    }
}

/// The body of a chat completion with one choice whose message content is
/// `content`, as OpenAI-compatible servers send it.
pub fn chat_completion(content: &str) -> Value {
    json!({
        "id": "chatcmpl-replay",
        "object": "chat.completion",
        "created": 0,
        "model": "replay",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": "stop",
        }],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    })
}

/// Which requests get which answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayRule {
    /// Text that must occur in the request's user message (empty: any
    /// request).
    pub when: String,
    /// Answers for successive matching requests; the last one repeats.
    pub responses: Vec<ReplayResponse>,
}

impl ReplayRule {
    /// A rule serving `responses` in order to requests containing `when`.
    pub fn new(when: impl Into<String>, responses: Vec<ReplayResponse>) -> Self {
        ReplayRule {
            when: when.into(),
            responses,
        }
    }
}

/// A request the server received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedRequest {
    /// `POST`, `GET`, …
    pub method: String,
    /// The request target (`/v1/chat/completions`).
    pub path: String,
    /// The headers in arrival order, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The body (invalid UTF-8 replaced).
    pub body: String,
}

impl RecordedRequest {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body parsed as JSON, when it is JSON.
    pub fn json(&self) -> Option<Value> {
        serde_json::from_str(&self.body).ok()
    }
}

/// What the server shares with its threads.
struct Shared {
    rules: Vec<ReplayRule>,
    /// How many requests each rule has answered.
    served: Mutex<Vec<usize>>,
    requests: Mutex<Vec<RecordedRequest>>,
    stopping: AtomicBool,
    active: AtomicUsize,
}

/// A local HTTP server replaying recorded replies; see the module
/// documentation. Stops (and joins its threads) when dropped.
pub struct ReplayServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

impl fmt::Debug for ReplayServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReplayServer")
            .field("addr", &self.addr)
            .field("rules", &self.shared.rules.len())
            .finish()
    }
}

impl ReplayServer {
    /// Starts a server on `127.0.0.1` with an OS-assigned port.
    pub fn start(rules: Vec<ReplayRule>) -> Result<ReplayServer, ReplayError> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(ReplayError::Bind)?;
        let addr = listener.local_addr().map_err(ReplayError::Bind)?;
        let shared = Arc::new(Shared {
            served: Mutex::new(vec![0; rules.len()]),
            rules,
            requests: Mutex::new(Vec::new()),
            stopping: AtomicBool::new(false),
            active: AtomicUsize::new(0),
        });
        let for_thread = Arc::clone(&shared);
        let acceptor = std::thread::Builder::new()
            .name(format!("kith-replay-{}", addr.port()))
            .spawn(move || accept_loop(listener, for_thread))
            .map_err(ReplayError::Bind)?;
        Ok(ReplayServer {
            addr,
            shared,
            acceptor: Some(acceptor),
        })
    }

    /// Starts a server with the rules of every `*.json` fixture file in
    /// `dir`, in file name order (format in the module documentation).
    pub fn from_dir(dir: impl AsRef<Path>) -> Result<ReplayServer, ReplayError> {
        Self::start(load_rules(dir.as_ref())?)
    }

    /// `http://127.0.0.1:PORT/v1`, the base URL for a client.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request body received so far, in arrival order.
    pub fn requests(&self) -> Vec<String> {
        lock(&self.shared.requests)
            .iter()
            .map(|r| r.body.clone())
            .collect()
    }

    /// Every request received so far (method, path, headers, body), in
    /// arrival order.
    pub fn recorded(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }
}

impl Drop for ReplayServer {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        // Wake the acceptor; if the connection fails it is already gone.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(handle) = self.acceptor.take() {
            let _ = handle.join();
        }
    }
}

/// Loads the rules of every `*.json` file in `dir`, sorted by file name.
pub fn load_rules(dir: &Path) -> Result<Vec<ReplayRule>, ReplayError> {
    let read_err = |path: &Path, source| ReplayError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| read_err(dir, e))? {
        let path = entry.map_err(|e| read_err(dir, e))?.path();
        if path.extension().is_some_and(|x| x == "json") && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    let mut rules = Vec::new();
    for path in files {
        let text = fs::read_to_string(&path).map_err(|e| read_err(&path, e))?;
        rules.extend(parse_fixture(&text).map_err(|reason| ReplayError::Fixture {
            path: path.clone(),
            reason,
        })?);
    }
    Ok(rules)
}

/// Parses one fixture file's text: one rule or a list of rules.
pub fn parse_fixture(text: &str) -> Result<Vec<ReplayRule>, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let files = match value {
        Value::Array(_) => serde_json::from_value::<Vec<RuleFile>>(value),
        _ => serde_json::from_value::<RuleFile>(value).map(|r| vec![r]),
    }
    .map_err(|e| e.to_string())?;
    files.into_iter().map(RuleFile::into_rule).collect()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    /// For people reading the fixture; not used.
    #[serde(default, rename = "description")]
    _description: Option<String>,
    #[serde(default)]
    when: String,
    responses: Vec<ResponseFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ResponseFile {
    #[serde(default = "ok")]
    status: u16,
    #[serde(default)]
    delay_ms: u64,
    extraction: Option<Value>,
    content: Option<String>,
    json: Option<Value>,
    body: Option<String>,
}

fn ok() -> u16 {
    200
}

impl RuleFile {
    fn into_rule(self) -> Result<ReplayRule, String> {
        if self.responses.is_empty() {
            return Err(format!("the rule for {:?} has no responses", self.when));
        }
        let responses = self
            .responses
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                r.into_response()
                    .map_err(|e| format!("responses[{i}]: {e}"))
            })
            .collect::<Result<_, _>>()?;
        Ok(ReplayRule::new(self.when, responses))
    }
}

impl ResponseFile {
    fn into_response(self) -> Result<ReplayResponse, String> {
        if !(100..=999).contains(&self.status) {
            return Err(format!("status {} is not an HTTP status", self.status));
        }
        let body = match (self.extraction, self.content, self.json, self.body) {
            (Some(e), None, None, None) => chat_completion(&e.to_string()).to_string(),
            (None, Some(c), None, None) => chat_completion(&c).to_string(),
            (None, None, Some(j), None) => j.to_string(),
            (None, None, None, Some(b)) => b,
            _ => return Err("give exactly one of extraction, content, json, body".into()),
        };
        Ok(ReplayResponse {
            status: self.status,
            body,
            delay_ms: self.delay_ms,
        })
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking handler thread cannot leave these values half-updated.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let mut workers: Vec<JoinHandle<()>> = Vec::new();
    for stream in listener.incoming() {
        if shared.stopping.load(Ordering::SeqCst) {
            break;
        }
        let Ok(mut stream) = stream else { continue };
        workers.retain(|w| !w.is_finished());
        if shared.active.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
            let _ = write_response(
                &mut stream,
                503,
                &error_body("replay: too many connections"),
            );
            continue;
        }
        shared.active.fetch_add(1, Ordering::SeqCst);
        let for_worker = Arc::clone(&shared);
        let spawned = std::thread::Builder::new()
            .name("kith-replay-conn".into())
            .spawn(move || {
                handle(stream, &for_worker);
                for_worker.active.fetch_sub(1, Ordering::SeqCst);
            });
        match spawned {
            Ok(w) => workers.push(w),
            Err(_) => {
                shared.active.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }
    for w in workers {
        let _ = w.join();
    }
}

/// Why a request could not be read.
enum BadRequest {
    /// The client went away or was too slow: nothing to answer.
    Gone,
    /// Answer with this status and message.
    Answer(u16, String),
}

fn handle(stream: TcpStream, shared: &Shared) {
    let _ = stream.set_read_timeout(Some(READ_TIMEOUT));
    let _ = stream.set_write_timeout(Some(READ_TIMEOUT));
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    let request = match read_request(&mut reader, &mut writer) {
        Ok(r) => r,
        Err(BadRequest::Gone) => return,
        Err(BadRequest::Answer(status, message)) => {
            let _ = write_response(&mut writer, status, &error_body(&message));
            return;
        }
    };
    let response = respond(&request, shared);
    lock(&shared.requests).push(request);
    if response.delay_ms > 0 && !sleep_unless_stopping(response.delay_ms, shared) {
        return;
    }
    let _ = write_response(&mut writer, response.status, &response.body);
}

/// Sleeps `ms` in slices; false when the server started stopping meanwhile.
fn sleep_unless_stopping(ms: u64, shared: &Shared) -> bool {
    let mut left = Duration::from_millis(ms);
    while !left.is_zero() {
        if shared.stopping.load(Ordering::SeqCst) {
            return false;
        }
        let step = left.min(DELAY_SLICE);
        std::thread::sleep(step);
        left -= step;
    }
    !shared.stopping.load(Ordering::SeqCst)
}

/// Picks the answer for a request.
fn respond(request: &RecordedRequest, shared: &Shared) -> ReplayResponse {
    if request.method != "POST" || !request.path.ends_with("/chat/completions") {
        return ReplayResponse::status(
            404,
            error_body(&format!(
                "replay: no route for {} {}",
                request.method, request.path
            )),
        );
    }
    let haystacks = user_texts(&request.body);
    let matched = shared.rules.iter().position(|rule| {
        rule.when.is_empty() || haystacks.iter().any(|h| h.contains(rule.when.as_str()))
    });
    let Some(index) = matched else {
        let shown: String = haystacks.join("\n").chars().take(300).collect();
        return ReplayResponse::status(
            404,
            error_body(&format!("replay: no rule matches the request {shown:?}")),
        );
    };
    let rule = &shared.rules[index];
    let served = {
        let mut served = lock(&shared.served);
        let n = served[index];
        served[index] = n.saturating_add(1);
        n
    };
    match rule.responses.get(served).or_else(|| rule.responses.last()) {
        Some(r) => r.clone(),
        None => ReplayResponse::status(
            500,
            error_body(&format!(
                "replay: the rule for {:?} has no responses",
                rule.when
            )),
        ),
    }
}

/// The texts a rule's `when` is looked for in: the user messages of a chat
/// request, or the raw body of anything else.
fn user_texts(body: &str) -> Vec<String> {
    let messages = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.get("messages").and_then(Value::as_array).cloned());
    match messages {
        Some(messages) => messages
            .iter()
            .filter(|m| m.get("role").and_then(Value::as_str) == Some("user"))
            .filter_map(|m| m.get("content").and_then(Value::as_str))
            .map(str::to_string)
            .collect(),
        None => vec![body.to_string()],
    }
}

fn error_body(message: &str) -> String {
    json!({"error": {"message": message, "type": "replay_error"}}).to_string()
}

/// Reads one request: request line, headers, body.
fn read_request(
    reader: &mut BufReader<TcpStream>,
    writer: &mut TcpStream,
) -> Result<RecordedRequest, BadRequest> {
    let mut head_bytes = 0usize;
    let mut next_line = |reader: &mut BufReader<TcpStream>| -> Result<String, BadRequest> {
        let mut line = Vec::new();
        let limit = (MAX_HEAD_BYTES - head_bytes.min(MAX_HEAD_BYTES)) as u64;
        let n = reader
            .by_ref()
            .take(limit + 1)
            .read_until(b'\n', &mut line)
            .map_err(|_| BadRequest::Gone)?;
        if n == 0 {
            return Err(BadRequest::Gone);
        }
        head_bytes += n;
        if head_bytes > MAX_HEAD_BYTES {
            return Err(BadRequest::Answer(
                431,
                "replay: request head too large".into(),
            ));
        }
        Ok(String::from_utf8_lossy(&line).trim_end().to_string())
    };

    let request_line = next_line(reader)?;
    let mut parts = request_line.split_whitespace();
    let (Some(method), Some(path), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(BadRequest::Answer(
            400,
            format!("replay: bad request line {request_line:?}"),
        ));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(BadRequest::Answer(
            505,
            format!("replay: {version} is not HTTP/1.x"),
        ));
    }
    let (method, path) = (method.to_string(), path.to_string());

    let mut content_length: Option<usize> = None;
    let mut chunked = false;
    let mut expect_continue = false;
    let mut headers = Vec::new();
    loop {
        let line = next_line(reader)?;
        if line.is_empty() {
            break;
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err(BadRequest::Answer(
                400,
                format!("replay: bad header line {line:?}"),
            ));
        };
        let (name, value) = (name.trim().to_ascii_lowercase(), value.trim());
        match name.as_str() {
            "content-length" => match value.parse::<usize>() {
                Ok(n) => content_length = Some(n),
                Err(_) => {
                    return Err(BadRequest::Answer(
                        400,
                        format!("replay: bad Content-Length {value:?}"),
                    ))
                }
            },
            "transfer-encoding" => chunked = value.to_ascii_lowercase().contains("chunked"),
            "expect" => expect_continue = value.eq_ignore_ascii_case("100-continue"),
            _ => {}
        }
        headers.push((name, value.to_string()));
    }
    if expect_continue {
        writer
            .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
            .map_err(|_| BadRequest::Gone)?;
    }
    let body = if chunked {
        read_chunked(reader)?
    } else {
        let n = content_length.unwrap_or(0);
        if n > MAX_BODY_BYTES {
            return Err(BadRequest::Answer(
                413,
                "replay: request body too large".into(),
            ));
        }
        let mut body = vec![0; n];
        reader.read_exact(&mut body).map_err(|_| BadRequest::Gone)?;
        body
    };
    Ok(RecordedRequest {
        method,
        path,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

/// Reads a chunked request body (extensions and trailers ignored).
fn read_chunked(reader: &mut BufReader<TcpStream>) -> Result<Vec<u8>, BadRequest> {
    let mut body = Vec::new();
    loop {
        let mut size_line = String::new();
        reader
            .by_ref()
            .take(1024)
            .read_line(&mut size_line)
            .map_err(|_| BadRequest::Gone)?;
        let size_text = size_line.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16).map_err(|_| {
            BadRequest::Answer(400, format!("replay: bad chunk size {size_text:?}"))
        })?;
        if body.len().saturating_add(size) > MAX_BODY_BYTES {
            return Err(BadRequest::Answer(
                413,
                "replay: request body too large".into(),
            ));
        }
        if size == 0 {
            // Trailers, up to the blank line.
            loop {
                let mut line = String::new();
                let n = reader
                    .by_ref()
                    .take(8 * 1024)
                    .read_line(&mut line)
                    .map_err(|_| BadRequest::Gone)?;
                if n == 0 || line.trim().is_empty() {
                    return Ok(body);
                }
            }
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader
            .read_exact(&mut body[start..])
            .map_err(|_| BadRequest::Gone)?;
        let mut crlf = [0u8; 2];
        reader.read_exact(&mut crlf).map_err(|_| BadRequest::Gone)?;
    }
}

fn write_response(stream: &mut TcpStream, status: u16, body: &str) -> io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        reason_phrase(status),
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body.as_bytes())?;
    stream.flush()
}

fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        413 => "Payload Too Large",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "Status",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sends raw bytes and returns the raw answer.
    fn raw(server: &ReplayServer, request: &[u8]) -> String {
        let mut s = TcpStream::connect(server.addr()).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.write_all(request).unwrap();
        let _ = s.shutdown(std::net::Shutdown::Write);
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out
    }

    fn post(body: &str) -> Vec<u8> {
        format!(
            "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes()
    }

    fn chat_request(user: &str) -> String {
        json!({"messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": user}]})
            .to_string()
    }

    #[test]
    fn rules_match_user_text_and_serve_in_order() {
        let server = ReplayServer::start(vec![
            ReplayRule::new(
                "Lisbon \"now\"",
                vec![
                    ReplayResponse::status(500, "{}"),
                    ReplayResponse::chat("{}"),
                ],
            ),
            ReplayRule::new("sys", vec![ReplayResponse::chat("never")]),
        ])
        .unwrap();
        let req = chat_request("I live in Lisbon \"now\".");
        assert!(raw(&server, &post(&req)).starts_with("HTTP/1.1 500"));
        for _ in 0..2 {
            let answer = raw(&server, &post(&req));
            assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
            assert!(answer.contains("Connection: close\r\n"));
        }
        // `when` is looked for in user messages only, not the system prompt.
        let answer = raw(&server, &post(&chat_request("other")));
        assert!(answer.starts_with("HTTP/1.1 404"), "{answer}");
        assert!(
            answer.contains("no rule matches the request \\\"other\\\""),
            "{answer}"
        );
        assert_eq!(server.requests().len(), 4);
    }

    #[test]
    fn odd_requests_get_answers_not_panics() {
        let server =
            ReplayServer::start(vec![ReplayRule::new("", vec![ReplayResponse::chat("{}")])])
                .unwrap();
        let cases: &[(&[u8], &str)] = &[
            (b"GET /v1/models HTTP/1.1\r\n\r\n", "HTTP/1.1 404"),
            (b"nonsense\r\n\r\n", "HTTP/1.1 400"),
            (b"POST /v1/chat/completions SPDY/3\r\n\r\n", "HTTP/1.1 505"),
            (b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: x\r\n\r\n", "HTTP/1.1 400"),
            (b"POST /v1/chat/completions HTTP/1.1\r\nno colon\r\n\r\n", "HTTP/1.1 400"),
            (
                b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n",
                "HTTP/1.1 413",
            ),
            (
                b"POST /v1/chat/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
                "HTTP/1.1 200",
            ),
            (
                b"POST /v1/chat/completions HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n{}",
                "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200",
            ),
            (b"", ""),
            (b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc", ""),
        ];
        for (request, want) in cases {
            let answer = raw(&server, request);
            assert!(
                answer.starts_with(want),
                "{:?} → {answer:?}",
                String::from_utf8_lossy(request)
            );
        }
        let huge = vec![b'a'; MAX_HEAD_BYTES + 10];
        assert!(raw(&server, &huge).starts_with("HTTP/1.1 431"));
        // Still serving.
        assert!(raw(&server, &post("{}")).starts_with("HTTP/1.1 200"));
        assert!(server.requests().contains(&"abc".to_string()));
    }

    #[test]
    fn fixtures_parse_and_refuse_mistakes() {
        let rules = parse_fixture(
            r#"[{"when": "a", "responses": [{"extraction": {"facts": []}}, {"status": 503, "body": "x", "delay_ms": 5}]},
                {"responses": [{"content": "c"}, {"json": {"choices": []}}]}]"#,
        )
        .unwrap();
        assert_eq!(rules.len(), 2);
        assert_eq!(
            rules[0].responses[1],
            ReplayResponse::status(503, "x").with_delay(5)
        );
        let content: Value = serde_json::from_str(&rules[0].responses[0].body).unwrap();
        assert_eq!(
            content["choices"][0]["message"]["content"],
            "{\"facts\":[]}"
        );
        assert_eq!(rules[1].when, "");
        assert_eq!(rules[1].responses[1].body, "{\"choices\":[]}");

        for bad in [
            "not json",
            r#"{"when": "a"}"#,
            r#"{"when": "a", "responses": []}"#,
            r#"{"when": "a", "responses": [{}]}"#,
            r#"{"when": "a", "responses": [{"content": "c", "body": "b"}]}"#,
            r#"{"when": "a", "responses": [{"content": "c", "stauts": 200}]}"#,
            r#"{"when": "a", "responses": [{"content": "c", "status": 42}]}"#,
        ] {
            assert!(parse_fixture(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn dropping_stops_the_server_even_mid_delay() {
        let server = ReplayServer::start(vec![ReplayRule::new(
            "",
            vec![ReplayResponse::chat("{}").with_delay(60_000)],
        )])
        .unwrap();
        let addr = server.addr();
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(&post("{}")).unwrap();
        while server.requests().is_empty() {
            std::thread::sleep(Duration::from_millis(5));
        }
        drop(server); // returns without waiting the minute out
        assert!(
            TcpStream::connect(addr).is_err(),
            "nothing listens any more"
        );
    }
}
