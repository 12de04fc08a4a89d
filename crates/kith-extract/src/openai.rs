//! A provider for any OpenAI-compatible chat completions endpoint: OpenAI,
//! vLLM, llama.cpp's `llama-server`, Ollama.
//!
//! One extraction is one `POST {base_url}/chat/completions` with kith's
//! prompt ([`crate::prompt`]) at temperature 0 and
//! `response_format: {"type": "json_schema", …}` (strict), which servers with
//! constrained decoding turn into a grammar. A server that refuses
//! `json_schema` (HTTP 400 or 422 naming `response_format` or `json_schema`)
//! is asked again with `{"type": "json_object"}`, and every later call goes
//! straight to `json_object`.
//!
//! Failures:
//! - timeouts, refused connections, HTTP 429 and 5xx are retried, at most
//!   [`OpenAiConfig::max_retries`] times, after a backoff that starts at
//!   [`OpenAiConfig::initial_backoff`] and doubles up to
//!   [`OpenAiConfig::max_backoff`] (a `Retry-After` in seconds is honoured up
//!   to that cap);
//! - a reply that is not JSON or breaks the schema is returned at once as
//!   [`ExtractError::InvalidJson`] or [`ExtractError::Malformed`]: at
//!   temperature 0 asking again would give the same answer.
//!
//! ureq's errors are mapped to [`ExtractError`] here and nowhere else.
//!
//! ```no_run
//! use kith_extract::openai::{OpenAiCompatible, OpenAiConfig};
//!
//! let config = OpenAiConfig::new("http://127.0.0.1:8080/v1", "SmolLM2-135M-Instruct");
//! let provider = OpenAiCompatible::new(config)?;
//! # Ok::<(), kith_extract::ExtractError>(())
//! ```

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{json, Value};

use crate::error::ExtractError;
use crate::prompt;
use crate::pronoun::{self, PronounReply, PronounRequest};
use crate::provider::{ExtractionInput, Provider, ProviderReply};
use crate::schema::Extraction;

/// The provider name recorded with every extraction this provider makes.
pub const PROVIDER_NAME: &str = "openai-compatible";

/// Environment variable: the endpoint's base URL (`http://127.0.0.1:8080/v1`).
pub const ENV_BASE_URL: &str = "KITH_LLM_BASE_URL";
/// Environment variable: the model name sent with every request.
pub const ENV_MODEL: &str = "KITH_LLM_MODEL";
/// Environment variable: the API key, sent as `Authorization: Bearer …`.
pub const ENV_API_KEY: &str = "KITH_LLM_API_KEY";
/// Environment variable: the timeout of one HTTP request, in whole seconds.
pub const ENV_TIMEOUT_SECS: &str = "KITH_LLM_TIMEOUT_SECS";

/// The most of a response body read as a reply (8 MiB).
const MAX_REPLY_BYTES: u64 = 8 * 1024 * 1024;
/// The most of an error response body read (64 KiB).
const MAX_ERROR_BYTES: u64 = 64 * 1024;
/// The most of an error body kept in [`ExtractError::Http`].
const ERROR_BODY_CHARS: usize = 500;

/// How to reach an OpenAI-compatible endpoint, and how hard to try.
#[derive(Clone, PartialEq, Eq)]
pub struct OpenAiConfig {
    /// The API root, e.g. `http://127.0.0.1:8080/v1` or
    /// `https://api.openai.com/v1`; requests go to
    /// `{base_url}/chat/completions`.
    pub base_url: String,
    /// The model name sent with every request, and recorded with every
    /// extraction.
    pub model: String,
    /// Sent as `Authorization: Bearer {api_key}` when set.
    pub api_key: Option<String>,
    /// The longest one HTTP request may take, connection to last byte
    /// (default 60 s).
    pub timeout: Duration,
    /// How many times a retryable failure is retried (default 3), so one
    /// extraction makes at most `max_retries + 1` requests (plus one if the
    /// server refuses `json_schema`).
    pub max_retries: u32,
    /// The wait before the first retry (default 500 ms); it doubles for each
    /// further retry.
    pub initial_backoff: Duration,
    /// The longest wait between two tries (default 8 s).
    pub max_backoff: Duration,
}

impl OpenAiConfig {
    /// A configuration with the default timeout, retries and backoff, and no
    /// API key.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        OpenAiConfig {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            timeout: Duration::from_secs(60),
            max_retries: 3,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
        }
    }

    /// Sets the API key.
    pub fn with_api_key(mut self, api_key: impl Into<String>) -> Self {
        self.api_key = Some(api_key.into());
        self
    }

    /// Sets the timeout of one HTTP request.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets how many times a retryable failure is retried.
    pub fn with_max_retries(mut self, max_retries: u32) -> Self {
        self.max_retries = max_retries;
        self
    }

    /// Sets the first backoff and its cap.
    pub fn with_backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.initial_backoff = initial;
        self.max_backoff = max;
        self
    }
}

impl fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .field("initial_backoff", &self.initial_backoff)
            .field("max_backoff", &self.max_backoff)
            .finish()
    }
}

/// Which `response_format` a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseFormat {
    /// `{"type": "json_schema", …}` with [`prompt::json_schema`], strict:
    /// constrained decoding where the server supports it.
    JsonSchema,
    /// `{"type": "json_object"}`: any JSON object, for servers that refuse
    /// `json_schema`.
    JsonObject,
}

impl ResponseFormat {
    /// The `response_format` value of a request (object keys sorted; the
    /// request itself carries [`ResponseFormat::to_json_text`]).
    pub fn to_json(self) -> Value {
        serde_json::from_str(&self.to_json_text()).unwrap_or(Value::Null)
    }

    /// The `response_format` value as JSON text, the schema's properties in
    /// declaration order ([`prompt::json_schema_text`]).
    pub fn to_json_text(self) -> String {
        self.text_for(prompt::SCHEMA_NAME, &prompt::json_schema_text())
    }

    /// The `response_format` value for any schema.
    fn text_for(self, name: &str, schema_text: &str) -> String {
        match self {
            ResponseFormat::JsonSchema => format!(
                r#"{{"type":"json_schema","json_schema":{{"name":{},"strict":true,"schema":{}}}}}"#,
                Value::from(name),
                schema_text
            ),
            ResponseFormat::JsonObject => r#"{"type":"json_object"}"#.to_string(),
        }
    }
}

/// An OpenAI-compatible chat completions endpoint as an extraction
/// [`Provider`]. Cheap to share between threads; the connection pool and
/// the `json_schema` fallback are shared by every call.
pub struct OpenAiCompatible {
    config: OpenAiConfig,
    endpoint: String,
    agent: ureq::Agent,
    /// Set once the server has refused `json_schema`.
    json_object_only: AtomicBool,
}

impl fmt::Debug for OpenAiCompatible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiCompatible")
            .field("endpoint", &self.endpoint)
            .field("config", &self.config)
            .field("response_format", &self.response_format())
            .finish()
    }
}

impl OpenAiCompatible {
    /// A provider for `config`. Fails with [`ExtractError::Config`] when the
    /// base URL is not `http(s)://…`, the model is blank or the API key cannot
    /// be sent in a header.
    pub fn new(mut config: OpenAiConfig) -> Result<Self, ExtractError> {
        config.base_url = normalise_base_url(&config.base_url)?;
        config.model = config.model.trim().to_string();
        if config.model.is_empty() {
            return Err(config_error(format!(
                "no model is set for {}; set {ENV_MODEL} (e.g. gpt-4o-mini, or the model a \
                 llama.cpp/vLLM/Ollama server serves)",
                config.base_url
            )));
        }
        if let Some(key) = &config.api_key {
            if key.chars().any(|c| c.is_control()) {
                return Err(config_error(format!(
                    "the API key contains a control character (a stray newline?); check {ENV_API_KEY}"
                )));
            }
        }
        if config.timeout.is_zero() {
            return Err(config_error(
                "the timeout must be more than zero".to_string(),
            ));
        }
        let endpoint = format!("{}/chat/completions", config.base_url);
        let mut agent_config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(config.timeout))
            // A POST is never silently turned into a GET: a 3xx comes back as
            // an HTTP error naming the endpoint.
            .max_redirects(0)
            .max_redirects_will_error(false)
            .user_agent(concat!("kith/", env!("CARGO_PKG_VERSION")));
        if is_loopback(&config.base_url) {
            // A local model server is never behind the environment's proxy.
            agent_config = agent_config.proxy(None);
        }
        Ok(OpenAiCompatible {
            agent: agent_config.build().new_agent(),
            endpoint,
            config,
            json_object_only: AtomicBool::new(false),
        })
    }

    /// A provider configured from the environment: [`ENV_BASE_URL`],
    /// [`ENV_MODEL`], [`ENV_API_KEY`] (optional) and [`ENV_TIMEOUT_SECS`]
    /// (optional). `Ok(None)` when `KITH_LLM_BASE_URL` is unset or blank (no
    /// LLM configured); [`ExtractError::Config`] when it is set but the rest
    /// is missing or wrong.
    pub fn from_env() -> Result<Option<Self>, ExtractError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Like [`OpenAiCompatible::from_env`], reading variables through
    /// `lookup` (for callers with their own settings, and for tests).
    pub fn from_lookup(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, ExtractError> {
        let get = |name: &str| {
            lookup(name)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let Some(base_url) = get(ENV_BASE_URL) else {
            return Ok(None);
        };
        let Some(model) = get(ENV_MODEL) else {
            return Err(config_error(format!(
                "{ENV_BASE_URL} is set ({base_url}) but {ENV_MODEL} is not; set {ENV_MODEL} to \
                 the model to call (e.g. gpt-4o-mini, or the model a llama.cpp/vLLM/Ollama \
                 server serves), or unset {ENV_BASE_URL} to use the offline extractor"
            )));
        };
        let mut config = OpenAiConfig::new(base_url, model);
        config.api_key = get(ENV_API_KEY);
        if let Some(secs) = get(ENV_TIMEOUT_SECS) {
            match secs.parse::<u64>() {
                Ok(s) if s > 0 => config.timeout = Duration::from_secs(s),
                _ => {
                    return Err(config_error(format!(
                        "{ENV_TIMEOUT_SECS} is {secs:?}; it must be a whole number of seconds \
                         above zero (e.g. 60)"
                    )))
                }
            }
        }
        Self::new(config).map(Some)
    }

    /// The URL every request is POSTed to.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The configuration in use (base URL normalised).
    pub fn config(&self) -> &OpenAiConfig {
        &self.config
    }

    /// The `response_format` the next request will ask for.
    pub fn response_format(&self) -> ResponseFormat {
        if self.json_object_only.load(Ordering::Relaxed) {
            ResponseFormat::JsonObject
        } else {
            ResponseFormat::JsonSchema
        }
    }

    /// The request body for one input. Written as text so that the schema
    /// keeps its property order (a [`Value`] would sort it).
    fn request_body(&self, q: &Question<'_>, format: ResponseFormat) -> String {
        let messages = json!([
            {"role": "system", "content": q.system},
            {"role": "user", "content": q.user},
        ]);
        format!(
            r#"{{"model":{},"temperature":0,"stream":false,"messages":{},"response_format":{}}}"#,
            Value::from(self.config.model.as_str()),
            messages,
            format.text_for(q.schema_name, &q.schema_text)
        )
    }

    /// One HTTP request: the success body, or why it failed.
    fn post(&self, body: &str) -> Result<String, Failure> {
        let mut request = self
            .agent
            .post(&self.endpoint)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json");
        if let Some(key) = &self.config.api_key {
            request = request.header("Authorization", format!("Bearer {key}"));
        }
        let mut response = request
            .send(body.as_bytes())
            .map_err(|e| Failure::Transport(self.transport_error(e)))?;
        let status = response.status().as_u16();
        if (200..300).contains(&status) {
            return response
                .body_mut()
                .with_config()
                .limit(MAX_REPLY_BYTES)
                .read_to_string()
                .map_err(|e| Failure::Transport(self.transport_error(e)));
        }
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        // The body only explains the status; failing to read it changes nothing.
        let text = response
            .body_mut()
            .with_config()
            .limit(MAX_ERROR_BYTES)
            .lossy_utf8(true)
            .read_to_string()
            .unwrap_or_default();
        Err(Failure::Status {
            status,
            body: text,
            retry_after,
        })
    }

    /// Maps a ureq error to kith's: the only place ureq errors are seen.
    fn transport_error(&self, e: ureq::Error) -> ExtractError {
        let endpoint = self.endpoint.clone();
        let connect = |reason: String| ExtractError::Connect {
            endpoint: self.endpoint.clone(),
            reason,
        };
        match e {
            ureq::Error::Timeout(_) => ExtractError::Timeout {
                endpoint,
                seconds: whole_seconds(self.config.timeout),
            },
            ureq::Error::Io(io)
                if matches!(
                    io.kind(),
                    std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
                ) =>
            {
                ExtractError::Timeout {
                    endpoint,
                    seconds: whole_seconds(self.config.timeout),
                }
            }
            ureq::Error::StatusCode(status) => ExtractError::Http {
                endpoint,
                status,
                body: String::new(),
            },
            ureq::Error::BadUri(uri) => config_error(format!(
                "{uri} is not a usable URL; check {ENV_BASE_URL} (e.g. http://127.0.0.1:8080/v1)"
            )),
            ureq::Error::Http(http) => {
                config_error(format!("cannot build a request to {endpoint}: {http}"))
            }
            // Deterministic at temperature 0 (a runaway reply): not retried.
            ureq::Error::BodyExceedsLimit(limit) => ExtractError::InvalidJson {
                reason: format!("the reply from {endpoint} is larger than {limit} bytes"),
            },
            ureq::Error::HostNotFound => connect("host not found".to_string()),
            other => connect(other.to_string()),
        }
    }

    /// Parses a success body: the first choice's message content, one
    /// surrounding code fence stripped, as an [`Extraction`].
    /// The message content of a chat completion (fence stripped) and
    /// whether the model stopped at its token limit.
    fn content_of(&self, body: &str) -> Result<(String, bool), ExtractError> {
        let empty = |why: &str| {
            tracing::warn!(endpoint = %self.endpoint, why, "the chat completion has no content");
            ExtractError::EmptyReply {
                endpoint: self.endpoint.clone(),
            }
        };
        let envelope: Value = match serde_json::from_str(body) {
            Ok(v) => v,
            Err(_) => return Err(empty("the response body is not JSON")),
        };
        let choice = envelope.pointer("/choices/0");
        let Some(content) = choice
            .and_then(|c| c.pointer("/message/content"))
            .and_then(Value::as_str)
        else {
            return Err(empty("no choices[0].message.content string"));
        };
        let text = strip_fence(content);
        if text.is_empty() {
            return Err(empty("the content is blank"));
        }
        let truncated = choice.and_then(|c| c.get("finish_reason")) == Some(&json!("length"));
        Ok((text.to_string(), truncated))
    }

    /// Asks one question: bounded retries with backoff on retryable
    /// failures, and the json_object fallback when the server refuses
    /// json_schema. Returns the content, whether it was cut at the token
    /// limit, and the requests made.
    fn ask(&self, q: &Question<'_>) -> Result<(String, bool, u32), ExtractError> {
        let mut calls: u32 = 0;
        let mut retries: u32 = 0;
        let mut backoff = self.config.initial_backoff;
        loop {
            let format = self.response_format();
            let body = self.request_body(q, format);
            calls += 1;
            let failure = match self.post(&body) {
                Ok(text) => {
                    let (content, truncated) = self.content_of(&text)?;
                    return Ok((content, truncated, calls));
                }
                Err(failure) => failure,
            };
            let error = match failure {
                Failure::Status { status, body, .. }
                    if format == ResponseFormat::JsonSchema
                        && refuses_json_schema(status, &body) =>
                {
                    tracing::warn!(
                        endpoint = %self.endpoint,
                        status,
                        body = %truncate(&body, ERROR_BODY_CHARS),
                        "the server refuses response_format json_schema; using json_object from now on"
                    );
                    self.json_object_only.store(true, Ordering::Relaxed);
                    continue;
                }
                Failure::Status {
                    status,
                    body,
                    retry_after,
                } => {
                    let error = ExtractError::Http {
                        endpoint: self.endpoint.clone(),
                        status,
                        body: truncate(&body, ERROR_BODY_CHARS),
                    };
                    if let Some(wait) = retry_after {
                        backoff = backoff.max(wait);
                    }
                    error
                }
                Failure::Transport(error) => error,
            };
            if !error.is_retryable() || retries >= self.config.max_retries {
                tracing::warn!(endpoint = %self.endpoint, calls, %error, "request failed");
                return Err(error);
            }
            let wait = backoff.min(self.config.max_backoff);
            tracing::debug!(endpoint = %self.endpoint, calls, ?wait, %error, "retrying");
            std::thread::sleep(wait);
            retries += 1;
            backoff = backoff.saturating_mul(2).min(self.config.max_backoff);
        }
    }
}

/// One chat question: prompts and the reply's schema.
struct Question<'a> {
    system: &'a str,
    user: String,
    schema_name: &'a str,
    schema_text: String,
}

/// Adds the token-limit note to an invalid-JSON error.
fn note_truncation(error: ExtractError, truncated: bool) -> ExtractError {
    match error {
        ExtractError::InvalidJson { reason } if truncated => ExtractError::InvalidJson {
            reason: format!(
                "{reason} (the model stopped at its token limit: finish_reason length)"
            ),
        },
        other => other,
    }
}

impl OpenAiConfig {
    /// The longest one question can take: every request timing out (the
    /// retries, plus the one request a `json_schema` refusal adds), and
    /// every backoff at its cap (a `Retry-After` is capped there too).
    pub fn worst_case(&self) -> Duration {
        let requests = self.max_retries.saturating_add(2);
        // Each wait before a retry is at most the backoff cap.
        let waits = self.max_backoff.saturating_mul(self.max_retries);
        self.timeout.saturating_mul(requests).saturating_add(waits)
    }
}

impl Provider for OpenAiCompatible {
    fn name(&self) -> &str {
        PROVIDER_NAME
    }

    fn worst_case(&self) -> Option<Duration> {
        Some(self.config.worst_case())
    }

    fn model(&self) -> &str {
        &self.config.model
    }

    fn extract(&self, input: &ExtractionInput<'_>) -> Result<ProviderReply, ExtractError> {
        let question = Question {
            system: prompt::SYSTEM_PROMPT,
            user: prompt::user_message(input),
            schema_name: prompt::SCHEMA_NAME,
            schema_text: prompt::json_schema_text(),
        };
        let (text, truncated, calls) = self.ask(&question)?;
        let extraction = Extraction::parse(&text).map_err(|e| note_truncation(e, truncated))?;
        Ok(ProviderReply {
            extraction,
            raw: text,
            provider: PROVIDER_NAME.to_string(),
            model: self.config.model.clone(),
            calls,
        })
    }

    fn resolve_pronouns(
        &self,
        request: &PronounRequest<'_>,
    ) -> Result<Option<PronounReply>, ExtractError> {
        let question = Question {
            system: pronoun::SYSTEM_PROMPT,
            user: pronoun::user_message(request),
            schema_name: pronoun::SCHEMA_NAME,
            schema_text: pronoun::json_schema_text(),
        };
        let (text, truncated, calls) = self.ask(&question)?;
        let answers = pronoun::parse_answers(&text).map_err(|e| note_truncation(e, truncated))?;
        Ok(Some(PronounReply {
            answers,
            raw: text,
            calls,
        }))
    }
}

/// Why one HTTP request failed.
enum Failure {
    /// The server answered with a non-success status.
    Status {
        status: u16,
        body: String,
        retry_after: Option<Duration>,
    },
    /// No usable answer (timeout, connection, protocol).
    Transport(ExtractError),
}

/// Whether an error answer says the server does not take `json_schema`.
fn refuses_json_schema(status: u16, body: &str) -> bool {
    if status != 400 && status != 422 {
        return false;
    }
    let body = body.to_ascii_lowercase();
    body.contains("response_format") || body.contains("json_schema")
}

/// Removes one code fence around `text` (```` ```json … ``` ````), if any.
fn strip_fence(text: &str) -> &str {
    let trimmed = text.trim();
    let Some(rest) = trimmed.strip_prefix("```") else {
        return trimmed;
    };
    let Some(inner) = rest.strip_suffix("```") else {
        return trimmed;
    };
    // Drop the info string (`json`) on the opening line.
    match inner.split_once('\n') {
        Some((info, body)) if !info.contains('{') && !info.contains('[') => body.trim(),
        _ => inner.trim(),
    }
}

/// Checks and normalises a base URL: `http(s)://host…`, without a trailing
/// slash or a trailing `/chat/completions`.
fn normalise_base_url(url: &str) -> Result<String, ExtractError> {
    let mut url = url.trim().trim_end_matches('/').to_string();
    if let Some(stripped) = url.strip_suffix("/chat/completions") {
        url = stripped.to_string();
    }
    let host = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"));
    match host {
        Some(rest) if !rest.is_empty() && !rest.starts_with('/') => Ok(url),
        _ => Err(config_error(format!(
            "the base URL {url:?} must start with http:// or https:// and name a host; set \
             {ENV_BASE_URL} to e.g. http://127.0.0.1:8080/v1 or https://api.openai.com/v1"
        ))),
    }
}

/// Whether a (normalised) base URL names the loopback interface.
fn is_loopback(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split('/').next().unwrap_or_default();
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split(']').next().unwrap_or_default()
    } else {
        authority.split(':').next().unwrap_or_default()
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn config_error(reason: String) -> ExtractError {
    ExtractError::Config { reason }
}

/// The timeout in whole seconds for [`ExtractError::Timeout`], rounded up
/// (a 200 ms timeout reads "1 s").
fn whole_seconds(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

/// The first `max` characters of `text`, with `…` when cut.
fn truncate(text: &str, max: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_are_stripped_once() {
        let cases = [
            ("{\"a\": 1}", "{\"a\": 1}"),
            ("```json\n{\"a\": 1}\n```", "{\"a\": 1}"),
            ("  ```\n{\"a\": 1}\n```  ", "{\"a\": 1}"),
            ("```{\"a\": 1}```", "{\"a\": 1}"),
            ("```json\n{}", "```json\n{}"),
            ("```json\n```json\n{}\n```\n```", "```json\n{}\n```"),
        ];
        for (input, want) in cases {
            assert_eq!(strip_fence(input), want, "{input:?}");
        }
    }

    #[test]
    fn base_urls_are_checked_and_normalised() {
        let ok = [
            ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
            (" https://api.openai.com/v1/ ", "https://api.openai.com/v1"),
            (
                "http://localhost:11434/v1/chat/completions",
                "http://localhost:11434/v1",
            ),
        ];
        for (input, want) in ok {
            assert_eq!(normalise_base_url(input).unwrap(), want);
        }
        for bad in [
            "127.0.0.1:8080/v1",
            "ftp://x/v1",
            "http://",
            "https:///v1",
            "",
        ] {
            let err = normalise_base_url(bad).unwrap_err();
            assert_eq!(err.reason_code(), "config", "{bad}");
        }
    }

    #[test]
    fn loopback_hosts_are_recognised() {
        for url in [
            "http://127.0.0.1:8080/v1",
            "http://localhost/v1",
            "http://[::1]:8080/v1",
            "http://user:pw@127.0.0.2:1/v1",
        ] {
            assert!(is_loopback(url), "{url}");
        }
        for url in ["https://api.openai.com/v1", "http://10.0.0.1:8080/v1"] {
            assert!(!is_loopback(url), "{url}");
        }
    }

    #[test]
    fn json_schema_refusals_are_recognised() {
        assert!(refuses_json_schema(
            400,
            r#"{"error": {"message": "response_format type json_schema is not supported"}}"#
        ));
        assert!(refuses_json_schema(422, "unknown variant `json_schema`"));
        assert!(!refuses_json_schema(400, "context length exceeded"));
        assert!(!refuses_json_schema(500, "response_format"));
    }

    #[test]
    fn env_configuration() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert!(OpenAiCompatible::from_lookup(env(&[])).unwrap().is_none());
        assert!(OpenAiCompatible::from_lookup(env(&[(ENV_BASE_URL, " ")]))
            .unwrap()
            .is_none());

        let err = OpenAiCompatible::from_lookup(env(&[(ENV_BASE_URL, "http://127.0.0.1:8080/v1")]))
            .unwrap_err();
        assert!(
            matches!(&err, ExtractError::Config { reason } if reason.contains(ENV_MODEL)),
            "{err}"
        );

        let err = OpenAiCompatible::from_lookup(env(&[
            (ENV_BASE_URL, "http://127.0.0.1:8080/v1"),
            (ENV_MODEL, "m"),
            (ENV_TIMEOUT_SECS, "soon"),
        ]))
        .unwrap_err();
        assert!(err.to_string().contains(ENV_TIMEOUT_SECS), "{err}");

        let p = OpenAiCompatible::from_lookup(env(&[
            (ENV_BASE_URL, "https://api.openai.com/v1/"),
            (ENV_MODEL, "gpt-4o-mini"),
            (ENV_API_KEY, "sk-test"),
            (ENV_TIMEOUT_SECS, "5"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(p.endpoint(), "https://api.openai.com/v1/chat/completions");
        assert_eq!(p.model(), "gpt-4o-mini");
        assert_eq!(p.config().timeout, Duration::from_secs(5));
        assert_eq!(p.config().api_key.as_deref(), Some("sk-test"));
        assert!(!format!("{p:?}").contains("sk-test"), "the key is redacted");
    }

    /// Issue 20 item 8: the default configuration can take 5 requests of
    /// 60 s and 3 waits of at most 8 s: 324 s, longer than the old 120 s lease.
    #[test]
    fn the_worst_case_counts_every_request_and_wait() {
        let config = OpenAiConfig::new("http://127.0.0.1:1/v1", "m");
        assert_eq!(config.worst_case(), Duration::from_secs(324));
        let quick = config
            .with_timeout(Duration::from_secs(5))
            .with_max_retries(0);
        assert_eq!(quick.worst_case(), Duration::from_secs(10));
    }

    #[test]
    fn timeouts_read_in_whole_seconds() {
        assert_eq!(whole_seconds(Duration::from_millis(200)), 1);
        assert_eq!(whole_seconds(Duration::from_secs(60)), 60);
    }
}
