//! `kith bench http`: a bounded load run against `kith serve` over
//! loopback. The server is a second process (this binary's `serve`), so
//! the figures include the real HTTP stack, auth, JSON and the blocking
//! pool, and the client's work does not share the server's process.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use kith::{EventInput, Memory};
use serde::Serialize;

use kith_core::percentile::percentile;

/// What to run.
pub struct HttpOptions {
    /// Requests per endpoint.
    pub requests: usize,
    /// Client threads, each with its own connection.
    pub concurrency: usize,
    /// Notes stored before timing.
    pub notes: usize,
    /// Time cap per phase.
    pub max_secs: u64,
}

/// One endpoint's figures.
#[derive(Debug, Serialize)]
struct Phase {
    endpoint: &'static str,
    requests: usize,
    errors: usize,
    seconds: f64,
    requests_per_sec: f64,
    p50_ms: f64,
    p95_ms: f64,
    p99_ms: f64,
}

/// The whole run.
#[derive(Debug, Serialize)]
struct Report {
    notes: usize,
    concurrency: usize,
    phases: Vec<Phase>,
}

const KEY: &str = "bench-key-0123456789abcdef";
const WORDS: &[&str] = &[
    "Lisbon", "garden", "violin", "marathon", "Berlin", "sister", "recipe", "kayak", "novel",
    "pottery", "Tokyo", "chess", "harbour", "bakery", "museum", "hiking", "Maya", "Jordan",
    "concert", "puppy",
];
const QUESTIONS: &[&str] = &[
    "Where did Maya move?",
    "What does Jordan play?",
    "When was the marathon?",
    "Who has a puppy?",
    "What did they bake at the bakery?",
];

fn sentence(i: usize) -> String {
    let w = |k: usize| WORDS[(i * 7 + k * 13) % WORDS.len()];
    format!(
        "Message {i}: we talked about the {} and the {} near {}, then {} came up.",
        w(0),
        w(1),
        w(2),
        w(3)
    )
}

/// The server child; killed with SIGTERM (graceful) when dropped.
struct Server {
    child: Child,
    base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        #[cfg(unix)]
        {
            // SAFETY: signalling our own child by its pid.
            unsafe {
                libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
            }
        }
        #[cfg(not(unix))]
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_server(pack: &Path) -> Result<Server> {
    let exe = std::env::current_exe().context("cannot find the kith binary")?;
    let mut child = Command::new(exe)
        .arg("--pack")
        .arg(pack)
        .args(["serve", "--bind", "127.0.0.1:0"])
        .env("KITH_API_KEYS", format!("{KEY}:bench"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("cannot start kith serve")?;
    let stdout = child.stdout.take().context("no stdout from kith serve")?;
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .context("cannot read kith serve's address")?;
    let Some(url) = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .map(str::to_string)
    else {
        let _ = child.kill();
        bail!("kith serve did not report its address (got {line:?})");
    };
    Ok(Server { child, base: url })
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .new_agent()
}

/// Runs `total` requests from `threads` threads; `body(i)` is request i's JSON.
fn phase(
    endpoint: &'static str,
    url: &str,
    total: usize,
    threads: usize,
    max: Duration,
    body: impl Fn(usize) -> String + Send + Sync + 'static,
) -> Result<Phase> {
    let next = Arc::new(AtomicUsize::new(0));
    let body = Arc::new(body);
    let started = Instant::now();
    let mut handles = Vec::new();
    for _ in 0..threads.max(1) {
        let next = Arc::clone(&next);
        let body = Arc::clone(&body);
        let url = url.to_string();
        handles.push(std::thread::spawn(move || {
            let agent = agent();
            let mut times = Vec::new();
            let mut errors = 0usize;
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= total || started.elapsed() > max {
                    break;
                }
                let payload = body(i);
                let t = Instant::now();
                let ok = match agent
                    .post(&url)
                    .header("Authorization", format!("Bearer {KEY}"))
                    .header("Content-Type", "application/json")
                    .send(payload.as_bytes())
                {
                    Ok(mut r) => {
                        let status = r.status().as_u16();
                        // Read the whole reply: a latency without it is not one.
                        let read = r.body_mut().with_config().limit(16 << 20).read_to_vec();
                        (200..300).contains(&status) && read.is_ok()
                    }
                    Err(_) => false,
                };
                times.push(t.elapsed().as_secs_f64() * 1000.0);
                if !ok {
                    errors += 1;
                }
            }
            (times, errors)
        }));
    }
    let mut times = Vec::new();
    let mut errors = 0;
    for h in handles {
        let (t, e) = h
            .join()
            .map_err(|_| anyhow::anyhow!("a client thread panicked"))?;
        times.extend(t);
        errors += e;
    }
    let seconds = started.elapsed().as_secs_f64();
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| percentile(&times, p);
    Ok(Phase {
        endpoint,
        requests: times.len(),
        errors,
        seconds,
        requests_per_sec: times.len() as f64 / seconds,
        p50_ms: pct(0.50),
        p95_ms: pct(0.95),
        p99_ms: pct(0.99),
    })
}

/// Runs the benchmark and prints its figures.
pub fn run(o: &HttpOptions, json: bool) -> Result<()> {
    let tmp = tempfile::tempdir().context("cannot create a temporary directory")?;
    let pack = tmp.path().join("bench.kith");
    {
        let memory = Memory::init(&pack)?;
        let mut batch = Vec::new();
        for i in 0..o.notes {
            batch.push(EventInput {
                owner_id: Some("bench".into()),
                session_id: Some(format!("s{}", i / 20)),
                speaker: Some(if i % 2 == 0 { "Maya" } else { "Jordan" }.into()),
                ..EventInput::new("user", &sentence(i))
            });
            if batch.len() == 1000 {
                memory.store_batch(std::mem::take(&mut batch))?;
            }
        }
        if !batch.is_empty() {
            memory.store_batch(batch)?;
        }
    }
    let server = start_server(&pack)?;
    let max = Duration::from_secs(o.max_secs);
    let base = server.base.clone();
    // Warm-up: connections, page cache, the tokenizer's tables.
    phase("warmup", &format!("{base}/v1/retrieve"), 20, 1, max, |i| {
        serde_json::json!({"query": QUESTIONS[i % QUESTIONS.len()]}).to_string()
    })?;
    let store = phase(
        "POST /v1/events",
        &format!("{base}/v1/events"),
        o.requests,
        o.concurrency,
        max,
        |i| {
            serde_json::json!({
                "content": sentence(1_000_000 + i),
                "session_id": format!("load{}", i / 50),
                "speaker": "Maya",
            })
            .to_string()
        },
    )?;
    let retrieve = phase(
        "POST /v1/retrieve",
        &format!("{base}/v1/retrieve"),
        o.requests,
        o.concurrency,
        max,
        |i| serde_json::json!({"query": QUESTIONS[i % QUESTIONS.len()]}).to_string(),
    )?;
    drop(server);
    let report = Report {
        notes: o.notes,
        concurrency: o.concurrency,
        phases: vec![store, retrieve],
    };
    if json {
        return crate::render::json(&report);
    }
    println!(
        "kith serve over loopback: {} notes, {} client connections",
        report.notes, report.concurrency
    );
    println!(
        "{:<20} {:>8} {:>7} {:>9} {:>8} {:>8} {:>8}",
        "endpoint", "requests", "errors", "req/s", "p50 ms", "p95 ms", "p99 ms"
    );
    for p in &report.phases {
        println!(
            "{:<20} {:>8} {:>7} {:>9.1} {:>8.2} {:>8.2} {:>8.2}",
            p.endpoint, p.requests, p.errors, p.requests_per_sec, p.p50_ms, p.p95_ms, p.p99_ms
        );
    }
    if report.phases.iter().any(|p| p.errors > 0) {
        bail!("some requests failed");
    }
    Ok(())
}
