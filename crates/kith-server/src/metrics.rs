//! `GET /metrics`: the server's numbers in Prometheus' text format (0.0.4),
//! written by hand (a few counters do not need a metrics library).
//!
//! - `kith_http_requests_total{method, route, status}` and
//!   `kith_http_request_duration_seconds{method, route}` (a histogram): per
//!   route template (`/v1/events/{id}`), never a raw path, so ids never
//!   become labels;
//! - `kith_store_*`: events, nodes, edges, journal records and owners of
//!   the whole store (no owner label: the numbers say nothing of anyone);
//! - `kith_work_queue{status}`, `kith_worker_*`: the extraction queue and
//!   the background worker;
//! - `kith_extraction_failures_total{source}`: extractions that failed in a
//!   request (`request`) or in the worker (`worker`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;

use crate::routes::AppState;

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: [f64; 12] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// One route's numbers.
#[derive(Debug, Default, Clone)]
struct RouteStats {
    by_status: BTreeMap<u16, u64>,
    /// Requests at or under each bucket's bound (not cumulative here).
    buckets: [u64; BUCKETS.len()],
    sum_seconds: f64,
    count: u64,
}

/// The server's request counters.
#[derive(Debug, Default)]
pub struct Metrics {
    routes: Mutex<BTreeMap<(String, String), RouteStats>>,
    extraction_failures: AtomicU64,
}

impl Metrics {
    /// Counts one request.
    pub fn observe(&self, method: &str, route: &str, status: u16, seconds: f64) {
        let mut routes = self.routes.lock().unwrap_or_else(|p| p.into_inner());
        let stats = routes
            .entry((method.to_string(), route.to_string()))
            .or_default();
        *stats.by_status.entry(status).or_default() += 1;
        if let Some(i) = BUCKETS.iter().position(|bound| seconds <= *bound) {
            stats.buckets[i] += 1;
        }
        stats.sum_seconds += seconds;
        stats.count += 1;
    }

    /// Counts an extraction that failed while a request waited for it.
    pub fn extraction_failed(&self) {
        self.extraction_failures.fetch_add(1, Ordering::Relaxed);
    }

    /// The request counters, in Prometheus text.
    fn write_requests(&self, out: &mut String) {
        let routes = self
            .routes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        help(
            out,
            "kith_http_requests_total",
            "counter",
            "HTTP requests by route template and status.",
        );
        for ((method, route), stats) in &routes {
            for (status, n) in &stats.by_status {
                let _ = writeln!(
                    out,
                    "kith_http_requests_total{{method=\"{method}\",route=\"{}\",status=\"{status}\"}} {n}",
                    escape(route)
                );
            }
        }
        help(
            out,
            "kith_http_request_duration_seconds",
            "histogram",
            "Time from request to response, by route template.",
        );
        for ((method, route), stats) in &routes {
            let labels = format!("method=\"{method}\",route=\"{}\"", escape(route));
            let mut cumulative = 0;
            for (bound, n) in BUCKETS.iter().zip(stats.buckets) {
                cumulative += n;
                let _ = writeln!(
                    out,
                    "kith_http_request_duration_seconds_bucket{{{labels},le=\"{bound}\"}} {cumulative}"
                );
            }
            let _ = writeln!(
                out,
                "kith_http_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {}",
                stats.count
            );
            let _ = writeln!(
                out,
                "kith_http_request_duration_seconds_sum{{{labels}}} {}",
                stats.sum_seconds
            );
            let _ = writeln!(
                out,
                "kith_http_request_duration_seconds_count{{{labels}}} {}",
                stats.count
            );
        }
    }
}

fn help(out: &mut String, name: &str, kind: &str, text: &str) {
    let _ = writeln!(out, "# HELP {name} {text}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// A label value with `\`, `"` and newlines escaped.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Middleware: counts each request under its route template.
pub async fn record(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = req.method().to_string();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
        // Unknown paths share one label, so probes cannot grow the set.
        .unwrap_or_else(|| "unmatched".to_string());
    let response = next.run(req).await;
    state.metrics.observe(
        &method,
        &route,
        response.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    response
}

/// The whole `/metrics` page: requests, store (its counts and the
/// embedding backlog), queue and worker.
pub fn render(state: &AppState, store: Option<(&kith::Stats, u64)>) -> String {
    let mut out = String::new();
    state.metrics.write_requests(&mut out);
    if let Some((stats, backlog)) = store {
        let gauges: [(&str, &str, u64); 6] = [
            (
                "kith_store_events",
                "Events in the store (every owner).",
                stats.events,
            ),
            (
                "kith_store_nodes",
                "Nodes in the store (every owner).",
                stats.nodes(),
            ),
            (
                "kith_store_edges",
                "Edges in the store (every owner).",
                stats.edges,
            ),
            (
                "kith_store_journal_records",
                "Journal records (every owner).",
                stats.operations,
            ),
            (
                "kith_store_owners",
                "Owners with at least one event.",
                stats.owners,
            ),
            (
                "kith_embedding_backlog",
                "Notes without a vector of the memory's model yet (every owner).",
                backlog,
            ),
        ];
        for (name, text, value) in gauges {
            help(&mut out, name, "gauge", text);
            let _ = writeln!(out, "{name} {value}");
        }
    }
    let worker_failures = match &state.worker {
        Some(worker) => {
            let h = worker.health();
            help(
                &mut out,
                "kith_work_queue",
                "gauge",
                "Extraction work items by state, at the worker's last look.",
            );
            for (status, n) in [
                ("pending", h.queue.pending),
                ("running", h.queue.running),
                ("retrying", h.queue.retrying),
                ("failed", h.queue.failed),
            ] {
                let _ = writeln!(out, "kith_work_queue{{status=\"{status}\"}} {n}");
            }
            help(
                &mut out,
                "kith_worker_in_flight",
                "gauge",
                "Items the worker is extracting now.",
            );
            let _ = writeln!(out, "kith_worker_in_flight {}", h.in_flight);
            help(
                &mut out,
                "kith_worker_items_total",
                "counter",
                "Items the worker finished, by outcome.",
            );
            let _ = writeln!(
                out,
                "kith_worker_items_total{{outcome=\"completed\"}} {}",
                h.completed
            );
            let _ = writeln!(
                out,
                "kith_worker_items_total{{outcome=\"failed\"}} {}",
                h.failed
            );
            help(
                &mut out,
                "kith_worker_errors_total",
                "counter",
                "Store errors while the worker scanned or ran items.",
            );
            let _ = writeln!(out, "kith_worker_errors_total {}", h.errors);
            h.failed
        }
        None => 0,
    };
    help(
        &mut out,
        "kith_extraction_failures_total",
        "counter",
        "Extractions that failed, in a request or in the background worker.",
    );
    let _ = writeln!(
        out,
        "kith_extraction_failures_total{{source=\"request\"}} {}",
        state.metrics.extraction_failures.load(Ordering::Relaxed)
    );
    let _ = writeln!(
        out,
        "kith_extraction_failures_total{{source=\"worker\"}} {worker_failures}"
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_histogram_is_cumulative_and_ends_at_the_count() {
        let m = Metrics::default();
        for seconds in [0.001, 0.02, 0.02, 3.0, 100.0] {
            m.observe("GET", "/v1/events/{id}", 200, seconds);
        }
        m.observe("GET", "/v1/events/{id}", 404, 0.001);
        let mut out = String::new();
        m.write_requests(&mut out);
        for line in [
            "kith_http_requests_total{method=\"GET\",route=\"/v1/events/{id}\",status=\"200\"} 5",
            "kith_http_requests_total{method=\"GET\",route=\"/v1/events/{id}\",status=\"404\"} 1",
            "kith_http_request_duration_seconds_bucket{method=\"GET\",route=\"/v1/events/{id}\",le=\"0.005\"} 2",
            "kith_http_request_duration_seconds_bucket{method=\"GET\",route=\"/v1/events/{id}\",le=\"0.025\"} 4",
            "kith_http_request_duration_seconds_bucket{method=\"GET\",route=\"/v1/events/{id}\",le=\"5\"} 5",
            "kith_http_request_duration_seconds_bucket{method=\"GET\",route=\"/v1/events/{id}\",le=\"30\"} 5",
            "kith_http_request_duration_seconds_bucket{method=\"GET\",route=\"/v1/events/{id}\",le=\"+Inf\"} 6",
            "kith_http_request_duration_seconds_count{method=\"GET\",route=\"/v1/events/{id}\"} 6",
        ] {
            assert!(out.lines().any(|l| l == line), "{line} missing from\n{out}");
        }
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
