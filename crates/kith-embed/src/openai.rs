//! Embeddings from any OpenAI-compatible `POST /v1/embeddings` endpoint
//! (OpenAI, Ollama, llama.cpp's server, vLLM, LM Studio, ...).
//!
//! The request is `{"model": …, "input": [texts]}`; the answer's
//! `data[i].embedding` arrays are put back in input order by their `index`.
//! Every failure is a typed [`EmbedError`]: transport problems (including the
//! timeout), a non-2xx status with the start of the body, an answer that is
//! not the expected JSON, or one with the wrong number of vectors or a
//! dimension other than the expected one. Vectors are L2-normalised here,
//! whatever the server does.

use std::env;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde::Deserialize;

use crate::{l2_normalize, EmbedError, Embedder};

/// Environment variable: the server's base URL, e.g. `http://127.0.0.1:11434`.
pub const BASE_URL_ENV: &str = "KITH_EMBEDDING_BASE_URL";
/// Environment variable: the model name sent to the server.
pub const MODEL_ENV: &str = "KITH_EMBEDDING_MODEL";
/// Environment variable: the API key, sent as a bearer token (optional).
pub const API_KEY_ENV: &str = "KITH_EMBEDDING_API_KEY";

/// The most texts sent in one request; longer inputs are split, since
/// servers cap the batch (OpenAI at 2048).
pub const MAX_INPUTS_PER_REQUEST: usize = 256;

/// The largest answer read (64 MiB: 256 vectors of 3072 floats as JSON is
/// about 16 MiB).
const MAX_REPLY_BYTES: u64 = 64 * 1024 * 1024;
/// How much of an error body is quoted in [`EmbedError::Http`].
const MAX_ERROR_CHARS: usize = 500;

/// How to reach an embeddings endpoint.
#[derive(Clone)]
pub struct OpenAiConfig {
    /// The base URL; `/v1/embeddings` is appended (just `/embeddings` when
    /// it already ends in `/v1`).
    pub base_url: String,
    /// The model name sent to the server; also the embedder's model id.
    pub model: String,
    /// Sent as `Authorization: Bearer …` when present.
    pub api_key: Option<String>,
    /// The timeout of one whole request.
    pub timeout: Duration,
    /// The expected dimension; when `None` it is learned from the first
    /// answer and then enforced.
    pub dimension: Option<usize>,
}

impl std::fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the key.
        f.debug_struct("OpenAiConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("timeout", &self.timeout)
            .field("dimension", &self.dimension)
            .finish()
    }
}

impl OpenAiConfig {
    /// A configuration with a 60 s timeout, no key and a learned dimension.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        OpenAiConfig {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            timeout: Duration::from_secs(60),
            dimension: None,
        }
    }

    /// Sets the API key.
    pub fn with_api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// Sets the timeout of one request.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets the expected dimension.
    pub fn with_dimension(mut self, dimension: usize) -> Self {
        self.dimension = Some(dimension);
        self
    }
}

/// An [`Embedder`] over an OpenAI-compatible HTTP endpoint.
pub struct OpenAiEmbedder {
    agent: ureq::Agent,
    endpoint: String,
    config: OpenAiConfig,
    /// The dimension: configured, or learned from the first answer; 0 while
    /// unknown.
    dimension: AtomicUsize,
}

impl std::fmt::Debug for OpenAiEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiEmbedder")
            .field("endpoint", &self.endpoint)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
struct Reply {
    data: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    index: Option<usize>,
    embedding: Vec<f32>,
}

impl OpenAiEmbedder {
    /// An embedder for `config`; fails on an empty base URL or model or a
    /// zero timeout.
    pub fn new(config: OpenAiConfig) -> Result<Self, EmbedError> {
        let base = config.base_url.trim().trim_end_matches('/').to_string();
        if base.is_empty() {
            return Err(EmbedError::Config("the base URL is empty".into()));
        }
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(EmbedError::Config(format!(
                "the base URL {base} must start with http:// or https://"
            )));
        }
        if config.model.trim().is_empty() {
            return Err(EmbedError::Config("the model name is empty".into()));
        }
        if config.timeout.is_zero() {
            return Err(EmbedError::Config(
                "the timeout must be more than zero".into(),
            ));
        }
        let endpoint = if base.ends_with("/v1") {
            format!("{base}/embeddings")
        } else {
            format!("{base}/v1/embeddings")
        };
        let mut builder = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(config.timeout))
            // A POST is never silently turned into a GET by a redirect.
            .max_redirects(0)
            .user_agent(concat!("kith/", env!("CARGO_PKG_VERSION")))
            .tls_config(kith_fetch::tls_config());
        if is_loopback(&base) {
            // A local server is never behind the environment's proxy.
            builder = builder.proxy(None);
        }
        Ok(OpenAiEmbedder {
            agent: builder.build().new_agent(),
            endpoint,
            dimension: AtomicUsize::new(config.dimension.unwrap_or(0)),
            config,
        })
    }

    /// An embedder configured from `KITH_EMBEDDING_BASE_URL`,
    /// `KITH_EMBEDDING_MODEL` (both required) and `KITH_EMBEDDING_API_KEY`
    /// (optional).
    pub fn from_env() -> Result<Self, EmbedError> {
        let var = |name: &str| env::var(name).ok().filter(|v| !v.trim().is_empty());
        let base = var(BASE_URL_ENV)
            .ok_or_else(|| EmbedError::Config(format!("{BASE_URL_ENV} is not set")))?;
        let model =
            var(MODEL_ENV).ok_or_else(|| EmbedError::Config(format!("{MODEL_ENV} is not set")))?;
        let mut config = OpenAiConfig::new(base, model);
        config.api_key = var(API_KEY_ENV);
        Self::new(config)
    }

    /// The full URL requests go to.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    fn embed_chunk(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let bad = |reason: String| EmbedError::BadResponse {
            url: self.endpoint.clone(),
            reason,
        };
        let body = serde_json::json!({ "model": self.config.model, "input": texts }).to_string();
        let mut request = self
            .agent
            .post(&self.endpoint)
            .header("Content-Type", "application/json");
        if let Some(key) = &self.config.api_key {
            request = request.header("Authorization", format!("Bearer {key}"));
        }
        let mut response = request
            .send(body.as_bytes())
            .map_err(|e| self.transport_error(e))?;
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            // The body only explains the status; failing to read it changes nothing.
            let text = response
                .body_mut()
                .with_config()
                .limit(64 * 1024)
                .lossy_utf8(true)
                .read_to_string()
                .unwrap_or_default();
            return Err(EmbedError::Http {
                url: self.endpoint.clone(),
                status,
                body: text.chars().take(MAX_ERROR_CHARS).collect(),
            });
        }
        let text = response
            .body_mut()
            .with_config()
            .limit(MAX_REPLY_BYTES)
            .read_to_string()
            .map_err(|e| self.transport_error(e))?;
        let reply: Reply = serde_json::from_str(&text)
            .map_err(|e| bad(format!("not an embeddings reply ({e})")))?;
        if reply.data.len() != texts.len() {
            return Err(bad(format!(
                "{} embeddings for {} inputs",
                reply.data.len(),
                texts.len()
            )));
        }
        let mut slots: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        for (position, item) in reply.data.into_iter().enumerate() {
            // Servers that omit `index` answer in input order.
            let i = item.index.unwrap_or(position);
            let slot = slots
                .get_mut(i)
                .ok_or_else(|| bad(format!("index {i} is out of range")))?;
            if slot.is_some() {
                return Err(bad(format!("index {i} appears twice")));
            }
            *slot = Some(item.embedding);
        }
        let mut out = Vec::with_capacity(texts.len());
        for mut v in slots.into_iter().flatten() {
            if v.is_empty() {
                return Err(bad("an embedding is empty".into()));
            }
            // The first answer fixes the dimension when none was configured.
            let expected = match self.dimension.compare_exchange(
                0,
                v.len(),
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => v.len(),
                Err(d) => d,
            };
            if v.len() != expected {
                return Err(bad(format!(
                    "an embedding has dimension {}, expected {expected}",
                    v.len()
                )));
            }
            if v.iter().any(|x| !x.is_finite()) {
                return Err(bad("an embedding holds a non-finite number".into()));
            }
            l2_normalize(&mut v);
            out.push(v);
        }
        Ok(out)
    }

    /// Maps a ureq error to ours: the only place ureq errors are seen.
    fn transport_error(&self, e: ureq::Error) -> EmbedError {
        let reason = match e {
            ureq::Error::Timeout(_) => format!(
                "no complete answer within {} ms (timeout)",
                self.config.timeout.as_millis()
            ),
            other => other.to_string(),
        };
        EmbedError::Transport {
            url: self.endpoint.clone(),
            reason,
        }
    }
}

fn is_loopback(base: &str) -> bool {
    let rest = base
        .strip_prefix("http://")
        .or_else(|| base.strip_prefix("https://"))
        .unwrap_or(base);
    rest.starts_with("127.") || rest.starts_with("localhost") || rest.starts_with("[::1]")
}

impl Embedder for OpenAiEmbedder {
    fn model_id(&self) -> &str {
        &self.config.model
    }

    /// The configured dimension, or the one learned from the first answer;
    /// 0 before any answer when none was configured.
    fn dimension(&self) -> usize {
        self.dimension.load(Ordering::Relaxed)
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(MAX_INPUTS_PER_REQUEST) {
            out.extend(self.embed_chunk(chunk)?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_and_config_checks() {
        let e = OpenAiEmbedder::new(OpenAiConfig::new("http://127.0.0.1:9/", "m")).unwrap();
        assert_eq!(e.endpoint(), "http://127.0.0.1:9/v1/embeddings");
        let e = OpenAiEmbedder::new(OpenAiConfig::new("https://api.example.com/v1", "m")).unwrap();
        assert_eq!(e.endpoint(), "https://api.example.com/v1/embeddings");
        assert!(OpenAiEmbedder::new(OpenAiConfig::new("", "m")).is_err());
        assert!(OpenAiEmbedder::new(OpenAiConfig::new("ftp://x", "m")).is_err());
        assert!(OpenAiEmbedder::new(OpenAiConfig::new("http://x", " ")).is_err());
        let c = OpenAiConfig::new("http://x", "m").with_api_key("sk-secret");
        assert!(!format!("{c:?}").contains("sk-secret"));
    }
}
