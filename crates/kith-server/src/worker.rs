//! The background worker of `kith serve`: extraction work nobody is doing.
//!
//! `ingest` with `defer: true` only admits a message; an LLM that timed out
//! or answered 5xx leaves a failed work item; a crashed process leaves a
//! running one whose lease ran out. Without a worker someone had to run
//! `kith process`. The worker polls the store's work queue, and runs each
//! item it may take through the engine (`Memory::process_event`, which
//! leases the item, so a worker never takes work another process holds):
//!
//! - a pending item, once it has waited [`PENDING_GRACE`] (a request that
//!   ingests without `defer` is processing its own item right then);
//! - a running item whose lease ran out;
//! - a failed item whose failure may pass (timeout, connection, HTTP
//!   status, empty reply), after a backoff that doubles per attempt, up to
//!   `max_attempts` attempts. Other failures (a malformed reply, an
//!   unknown policy) wait for a person: `kith process --retry-failed`.
//!
//! At most `concurrency` items run at once, each on the blocking pool. The
//! counts are in `GET /v1/health` and `/metrics`; on shutdown the worker
//! takes nothing new and waits for the items it runs.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kith::{Memory, WorkItem, WorkStatus};
use schemars::JsonSchema;
use serde::Serialize;
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use utoipa::ToSchema;
use uuid::Uuid;

/// How long a pending item waits before the worker takes it.
pub const PENDING_GRACE: Duration = Duration::from_secs(1);

/// Most work items one scan reads.
const SCAN_LIMIT: usize = 10_000;

/// Failure codes that another attempt may cure.
const RETRYABLE: &[&str] = &["timeout", "connect", "http_status", "empty_reply"];

/// How the worker runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerConfig {
    /// Items processed at once (`KITH_WORKER_CONCURRENCY`, default 2).
    pub concurrency: usize,
    /// Time between scans of the queue (`KITH_WORKER_POLL_MS`, default 1000).
    pub poll: Duration,
    /// Wait before the first retry of a failed item; doubles per attempt
    /// (`KITH_WORKER_BACKOFF_MS`, default 5000).
    pub backoff: Duration,
    /// Longest wait between retries (`KITH_WORKER_MAX_BACKOFF_MS`, default
    /// 300000).
    pub max_backoff: Duration,
    /// Attempts after which a failed item is left for a person
    /// (`KITH_WORKER_MAX_ATTEMPTS`, default 5).
    pub max_attempts: u32,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        WorkerConfig {
            concurrency: 2,
            poll: Duration::from_millis(1000),
            backoff: Duration::from_millis(5000),
            max_backoff: Duration::from_millis(300_000),
            max_attempts: 5,
        }
    }
}

impl WorkerConfig {
    /// The defaults, overridden by the `KITH_WORKER_*` variables `lookup`
    /// finds. A value that is not a positive whole number is refused with
    /// the variable's name.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        let number = |name: &str, default: u64| -> Result<u64, String> {
            match lookup(name) {
                None => Ok(default),
                Some(text) if text.trim().is_empty() => Ok(default),
                Some(text) => match text.trim().parse::<u64>() {
                    Ok(n) if n > 0 => Ok(n),
                    _ => Err(format!("{name}={text:?} is not a positive whole number")),
                },
            }
        };
        let d = WorkerConfig::default();
        Ok(WorkerConfig {
            concurrency: number("KITH_WORKER_CONCURRENCY", d.concurrency as u64)? as usize,
            poll: Duration::from_millis(number("KITH_WORKER_POLL_MS", d.poll.as_millis() as u64)?),
            backoff: Duration::from_millis(number(
                "KITH_WORKER_BACKOFF_MS",
                d.backoff.as_millis() as u64,
            )?),
            max_backoff: Duration::from_millis(number(
                "KITH_WORKER_MAX_BACKOFF_MS",
                d.max_backoff.as_millis() as u64,
            )?),
            max_attempts: number("KITH_WORKER_MAX_ATTEMPTS", u64::from(d.max_attempts))?
                .min(u64::from(u32::MAX)) as u32,
        })
    }

    /// The wait after `attempts` failed attempts.
    pub fn backoff_after(&self, attempts: u32) -> Duration {
        let doublings = attempts.saturating_sub(1).min(20);
        self.backoff
            .saturating_mul(1u32 << doublings)
            .min(self.max_backoff)
    }
}

/// What the worker makes of one work item now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Take it.
    Take,
    /// Not yet: a pending item in its grace, a failure in its backoff, a
    /// live lease.
    Wait,
    /// Never on its own: done, or a failure for a person.
    Leave,
}

/// Whether the worker takes `item` at `now_ms` (ms since the epoch).
pub fn verdict(item: &WorkItem, now_ms: i64, config: &WorkerConfig) -> Verdict {
    let since_update = now_ms - item.updated_at.unix_millis();
    match item.status {
        WorkStatus::Complete => Verdict::Leave,
        WorkStatus::Pending if since_update >= PENDING_GRACE.as_millis() as i64 => Verdict::Take,
        WorkStatus::Pending => Verdict::Wait,
        WorkStatus::Running if item.lease_until_ms.unwrap_or(0) < now_ms => Verdict::Take,
        WorkStatus::Running => Verdict::Wait,
        WorkStatus::Failed => {
            let retryable = item
                .reason_code
                .as_deref()
                .is_some_and(|code| RETRYABLE.contains(&code));
            if !retryable || item.attempts >= config.max_attempts {
                Verdict::Leave
            } else if since_update >= config.backoff_after(item.attempts).as_millis() as i64 {
                Verdict::Take
            } else {
                Verdict::Wait
            }
        }
    }
}

/// The worker's counters, shared with `/v1/health` and `/metrics`.
#[derive(Debug, Default)]
pub struct WorkerStats {
    concurrency: AtomicU64,
    in_flight: AtomicU64,
    taken: AtomicU64,
    completed: AtomicU64,
    failed: AtomicU64,
    errors: AtomicU64,
    queue: Mutex<QueueCounts>,
}

/// The queue as the last scan saw it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, ToSchema, JsonSchema)]
pub struct QueueCounts {
    /// Admitted, not yet extracted (deferred, or just admitted).
    pub pending: u64,
    /// Being extracted (by this or another process).
    pub running: u64,
    /// Failed, to be retried after a backoff.
    pub retrying: u64,
    /// Failed for good (not retryable, or out of attempts):
    /// `kith process --retry-failed` runs them again.
    pub failed: u64,
}

/// The worker as `GET /v1/health` shows it.
#[derive(Debug, Clone, Serialize, ToSchema, JsonSchema)]
pub struct WorkerHealth {
    /// Items processed at once, at most.
    pub concurrency: u64,
    /// Items being processed now.
    pub in_flight: u64,
    /// Items taken since start.
    pub taken: u64,
    /// Of those, completed.
    pub completed: u64,
    /// Of those, failed (again).
    pub failed: u64,
    /// Engine errors while scanning or processing (the store, not the
    /// extraction).
    pub errors: u64,
    /// The queue at the last scan.
    pub queue: QueueCounts,
}

impl WorkerStats {
    /// A snapshot for health and metrics.
    pub fn health(&self) -> WorkerHealth {
        WorkerHealth {
            concurrency: self.concurrency.load(Ordering::Relaxed),
            in_flight: self.in_flight.load(Ordering::Relaxed),
            taken: self.taken.load(Ordering::Relaxed),
            completed: self.completed.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
            errors: self.errors.load(Ordering::Relaxed),
            queue: *self.queue.lock().unwrap_or_else(|p| p.into_inner()),
        }
    }
}

/// A running worker: its counters, and how to stop it.
pub struct Worker {
    stats: Arc<WorkerStats>,
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Worker {
    /// Starts the worker on the current runtime.
    pub fn start(memory: Arc<Memory>, config: WorkerConfig) -> Worker {
        let stats = Arc::new(WorkerStats::default());
        stats
            .concurrency
            .store(config.concurrency as u64, Ordering::Relaxed);
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(run(memory, config, Arc::clone(&stats), stopped));
        Worker { stats, stop, task }
    }

    /// The counters.
    pub fn stats(&self) -> Arc<WorkerStats> {
        Arc::clone(&self.stats)
    }

    /// Takes nothing new and waits for the items in flight.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

async fn run(
    memory: Arc<Memory>,
    config: WorkerConfig,
    stats: Arc<WorkerStats>,
    mut stopped: watch::Receiver<bool>,
) {
    let permits = Arc::new(Semaphore::new(config.concurrency.max(1)));
    let in_flight: Arc<Mutex<HashSet<Uuid>>> = Arc::default();
    let mut running = tokio::task::JoinSet::new();
    loop {
        if *stopped.borrow() {
            break;
        }
        let scan = {
            let memory = Arc::clone(&memory);
            tokio::task::spawn_blocking(move || {
                memory.work_items(
                    &[WorkStatus::Pending, WorkStatus::Running, WorkStatus::Failed],
                    SCAN_LIMIT,
                )
            })
            .await
        };
        match scan {
            Ok(Ok(items)) => {
                let (counts, take) = sort_scan(&items, now_ms(), &config);
                *stats.queue.lock().unwrap_or_else(|p| p.into_inner()) = counts;
                for event_id in take {
                    if *stopped.borrow() {
                        break;
                    }
                    if !in_flight
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(event_id)
                    {
                        continue;
                    }
                    // Waits here while `concurrency` items run.
                    let Ok(permit) = Arc::clone(&permits).acquire_owned().await else {
                        break;
                    };
                    stats.taken.fetch_add(1, Ordering::Relaxed);
                    stats.in_flight.fetch_add(1, Ordering::Relaxed);
                    let (memory, stats, in_flight) = (
                        Arc::clone(&memory),
                        Arc::clone(&stats),
                        Arc::clone(&in_flight),
                    );
                    running.spawn(process(memory, stats, in_flight, event_id, permit));
                }
            }
            Ok(Err(e)) => {
                stats.errors.fetch_add(1, Ordering::Relaxed);
                tracing::warn!("worker: cannot read the work queue: {e}");
            }
            Err(e) => {
                stats.errors.fetch_add(1, Ordering::Relaxed);
                tracing::warn!("worker: the scan failed: {e}");
            }
        }
        // Reap finished items so the set does not grow.
        while running.try_join_next().is_some() {}
        tokio::select! {
            () = tokio::time::sleep(config.poll) => {}
            _ = stopped.changed() => {}
        }
    }
    // Shutdown: the items in flight finish their writes.
    while running.join_next().await.is_some() {}
}

/// Counts a scan's items by queue state, and lists those to take now,
/// in scan order.
fn sort_scan(items: &[WorkItem], now: i64, config: &WorkerConfig) -> (QueueCounts, Vec<Uuid>) {
    let mut counts = QueueCounts::default();
    let mut take = Vec::new();
    for item in items {
        let v = verdict(item, now, config);
        match item.status {
            WorkStatus::Pending => counts.pending += 1,
            WorkStatus::Running => counts.running += 1,
            WorkStatus::Failed if v == Verdict::Leave => counts.failed += 1,
            WorkStatus::Failed => counts.retrying += 1,
            WorkStatus::Complete => {}
        }
        if v == Verdict::Take {
            take.push(item.event_id);
        }
    }
    (counts, take)
}

/// Processes one taken item, counts its outcome, then releases its
/// in-flight mark and its permit.
async fn process(
    memory: Arc<Memory>,
    stats: Arc<WorkerStats>,
    in_flight: Arc<Mutex<HashSet<Uuid>>>,
    event_id: Uuid,
    permit: OwnedSemaphorePermit,
) {
    let m = Arc::clone(&memory);
    let outcome = tokio::task::spawn_blocking(move || m.process_event(event_id)).await;
    match outcome {
        Ok(Ok(WorkStatus::Complete)) => {
            stats.completed.fetch_add(1, Ordering::Relaxed);
        }
        Ok(Ok(WorkStatus::Failed)) => {
            stats.failed.fetch_add(1, Ordering::Relaxed);
        }
        // Someone else holds it, or it was done meanwhile.
        Ok(Ok(_)) => {}
        Ok(Err(e)) => {
            stats.errors.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(%event_id, "worker: {e}");
        }
        Err(e) => {
            stats.errors.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(%event_id, "worker: the task failed: {e}");
        }
    }
    stats.in_flight.fetch_sub(1, Ordering::Relaxed);
    in_flight
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(&event_id);
    // Held to here so `concurrency` bounds the items in flight.
    drop(permit);
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kith::{OwnerId, ScopeId, Timestamp};

    fn item(status: WorkStatus, attempts: u32, code: Option<&str>, updated_ms: i64) -> WorkItem {
        let at = Timestamp::from_unix_millis(updated_ms).expect("a valid time");
        WorkItem {
            event_id: Uuid::nil(),
            owner_id: OwnerId::new("alice").expect("valid"),
            scope: ScopeId::new("personal").expect("valid"),
            status,
            attempts,
            reason_code: code.map(str::to_string),
            last_error: None,
            lease_until_ms: None,
            options: serde_json::json!({}),
            created_at: at,
            updated_at: at,
        }
    }

    #[test]
    fn what_the_worker_takes() {
        let c = WorkerConfig {
            backoff: Duration::from_secs(10),
            max_backoff: Duration::from_secs(60),
            max_attempts: 3,
            ..WorkerConfig::default()
        };
        let t0 = 1_700_000_000_000;
        let cases = [
            // Pending: after its grace.
            (
                item(WorkStatus::Pending, 0, None, t0),
                t0 + 10,
                Verdict::Wait,
            ),
            (
                item(WorkStatus::Pending, 0, None, t0),
                t0 + 1_000,
                Verdict::Take,
            ),
            // A retryable failure: after 10 s, then 20 s.
            (
                item(WorkStatus::Failed, 1, Some("timeout"), t0),
                t0 + 9_999,
                Verdict::Wait,
            ),
            (
                item(WorkStatus::Failed, 1, Some("timeout"), t0),
                t0 + 10_000,
                Verdict::Take,
            ),
            (
                item(WorkStatus::Failed, 2, Some("http_status"), t0),
                t0 + 15_000,
                Verdict::Wait,
            ),
            (
                item(WorkStatus::Failed, 2, Some("http_status"), t0),
                t0 + 20_000,
                Verdict::Take,
            ),
            // Out of attempts, or not retryable: left for a person.
            (
                item(WorkStatus::Failed, 3, Some("timeout"), t0),
                t0 + 999_999,
                Verdict::Leave,
            ),
            (
                item(WorkStatus::Failed, 1, Some("schema"), t0),
                t0 + 999_999,
                Verdict::Leave,
            ),
            (
                item(WorkStatus::Failed, 1, None, t0),
                t0 + 999_999,
                Verdict::Leave,
            ),
            (
                item(WorkStatus::Complete, 1, None, t0),
                t0 + 999_999,
                Verdict::Leave,
            ),
        ];
        for (i, (it, now, want)) in cases.into_iter().enumerate() {
            assert_eq!(verdict(&it, now, &c), want, "case {i}");
        }
        // A running item: only once its lease ran out.
        let mut running = item(WorkStatus::Running, 1, None, t0);
        running.lease_until_ms = Some(t0 + 5_000);
        assert_eq!(verdict(&running, t0 + 4_999, &c), Verdict::Wait);
        assert_eq!(verdict(&running, t0 + 5_001, &c), Verdict::Take);
    }

    #[test]
    fn backoff_doubles_up_to_its_cap() {
        let c = WorkerConfig {
            backoff: Duration::from_secs(5),
            max_backoff: Duration::from_secs(30),
            ..WorkerConfig::default()
        };
        let waits: Vec<u64> = (1..=5).map(|a| c.backoff_after(a).as_secs()).collect();
        assert_eq!(waits, [5, 10, 20, 30, 30]);
    }

    #[test]
    fn settings_come_from_the_environment_or_are_refused() {
        let c = WorkerConfig::from_lookup(|name| match name {
            "KITH_WORKER_CONCURRENCY" => Some("4".into()),
            "KITH_WORKER_BACKOFF_MS" => Some("250".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(c.concurrency, 4);
        assert_eq!(c.backoff, Duration::from_millis(250));
        assert_eq!(c.max_attempts, 5);
        let err = WorkerConfig::from_lookup(|name| {
            (name == "KITH_WORKER_CONCURRENCY").then(|| "0".to_string())
        })
        .unwrap_err();
        assert_eq!(
            err,
            "KITH_WORKER_CONCURRENCY=\"0\" is not a positive whole number"
        );
    }
}
