//! What a store sends to its server: a count of round trips, and (when a
//! test asks) the text of every statement.
//!
//! PostgreSQL answers each statement over the network, so the number of
//! round trips an operation makes is part of its latency; retrieval keeps
//! it small and a test holds it under a bound. The recorded texts let a
//! test check that every statement names an owner (docs/deploy.md, Citus).
//! SQLite has no round trips but counts the statements its transactions
//! run while recording (`sqlite/counting.rs`): each is a VM run, and a
//! retrieve's number is held under a bound too. A benchmark may also ask
//! SQLite for each statement's time ([`StatementLog::start_profiling`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Counts a store's round trips and records statement texts on demand.
/// Shared by all of the store's transactions (on any thread).
#[derive(Debug, Default)]
pub struct StatementLog {
    trips: AtomicU64,
    recording: AtomicBool,
    texts: Mutex<Vec<String>>,
    profiling: AtomicBool,
    times: Mutex<HashMap<String, StatementTime>>,
}

/// What one statement text cost while a store was profiling
/// ([`StatementLog::take_profile`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatementTime {
    /// The statement as prepared (parameters unexpanded).
    pub sql: String,
    /// How many times it ran.
    pub runs: u64,
    /// Its summed wall time, as SQLite measured each run (from its first
    /// step to its reset, so the caller's work between rows is included).
    pub total: Duration,
}

impl StatementLog {
    /// Round trips to the server so far: every statement, every statement
    /// prepared on a connection for the first time, every `BEGIN`,
    /// `COMMIT` and `ROLLBACK`. Background work on a connection of its own
    /// (the vector copy's loader) is not counted. On SQLite: the
    /// statements its transactions ran while recording.
    pub fn round_trips(&self) -> u64 {
        self.trips.load(Ordering::Relaxed)
    }

    /// Starts recording statement texts (clearing earlier ones).
    pub fn start_recording(&self) {
        if let Ok(mut t) = self.texts.lock() {
            t.clear();
        }
        self.recording.store(true, Ordering::SeqCst);
    }

    /// Stops recording and returns the texts recorded, in the order sent.
    pub fn take_recorded(&self) -> Vec<String> {
        self.recording.store(false, Ordering::SeqCst);
        self.texts
            .lock()
            .map(|mut t| std::mem::take(&mut *t))
            .unwrap_or_default()
    }

    /// Whether statement texts are being recorded.
    pub(crate) fn is_recording(&self) -> bool {
        self.recording.load(Ordering::Relaxed)
    }

    /// Starts summing each statement's time (clearing earlier sums). Only
    /// SQLite measures them; statements SQLite runs inside another (FTS5's
    /// reads of its own tables) are summed too, so their time also counts
    /// in the outer statement's.
    pub fn start_profiling(&self) {
        if let Ok(mut t) = self.times.lock() {
            t.clear();
        }
        self.profiling.store(true, Ordering::SeqCst);
    }

    /// Stops profiling and returns each statement's runs and time, the
    /// costliest first.
    pub fn take_profile(&self) -> Vec<StatementTime> {
        self.profiling.store(false, Ordering::SeqCst);
        let mut out: Vec<StatementTime> = self
            .times
            .lock()
            .map(|mut t| std::mem::take(&mut *t).into_values().collect())
            .unwrap_or_default();
        out.sort_by(|a, b| b.total.cmp(&a.total).then_with(|| a.sql.cmp(&b.sql)));
        out
    }

    /// Whether statement times are being summed.
    pub(crate) fn is_profiling(&self) -> bool {
        self.profiling.load(Ordering::Relaxed)
    }

    /// Adds statement times measured in-process (SQLite).
    pub(crate) fn timed(&self, times: HashMap<String, (u64, Duration)>) {
        if times.is_empty() || !self.is_profiling() {
            return;
        }
        if let Ok(mut t) = self.times.lock() {
            for (sql, (runs, total)) in times {
                let e = t.entry(sql.clone()).or_insert_with(|| StatementTime {
                    sql,
                    ..StatementTime::default()
                });
                e.runs += runs;
                e.total += total;
            }
        }
    }

    /// Notes `count` statements run in-process (SQLite), with their texts.
    pub(crate) fn ran(&self, count: u64, texts: Vec<String>) {
        self.trips.fetch_add(count, Ordering::Relaxed);
        if self.is_recording() {
            if let Ok(mut t) = self.texts.lock() {
                t.extend(texts);
            }
        }
    }

    /// Notes one round trip carrying `sql`.
    pub(crate) fn sent(&self, sql: &str) {
        self.trips.fetch_add(1, Ordering::Relaxed);
        // The flag keeps the common case (not recording) off the mutex.
        if self.recording.load(Ordering::Relaxed) {
            if let Ok(mut t) = self.texts.lock() {
                t.push(sql.to_string());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_always_and_records_only_between_start_and_take() {
        let log = StatementLog::default();
        log.sent("SELECT 1");
        log.start_recording();
        log.sent("SELECT 2");
        log.sent("SELECT 3");
        assert_eq!(log.take_recorded(), vec!["SELECT 2", "SELECT 3"]);
        log.sent("SELECT 4");
        assert_eq!(log.round_trips(), 4);
        assert!(log.take_recorded().is_empty());
    }

    #[test]
    fn profiles_sum_per_statement_only_while_profiling() {
        let log = StatementLog::default();
        let one =
            |sql: &str, ms: u64| HashMap::from([(sql.to_string(), (1, Duration::from_millis(ms)))]);
        log.timed(one("SELECT 0", 9));
        log.start_profiling();
        log.timed(one("SELECT 1", 2));
        log.timed(one("SELECT 2", 5));
        log.timed(one("SELECT 1", 4));
        let p = log.take_profile();
        let got: Vec<(&str, u64, u128)> = p
            .iter()
            .map(|t| (t.sql.as_str(), t.runs, t.total.as_millis()))
            .collect();
        assert_eq!(got, vec![("SELECT 1", 2, 6), ("SELECT 2", 1, 5)]);
        log.timed(one("SELECT 3", 1));
        assert!(log.take_profile().is_empty());
    }
}
