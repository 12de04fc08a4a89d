//! What a store sends to its server: a count of round trips, and (when a
//! test asks) the text of every statement.
//!
//! PostgreSQL answers each statement over the network, so the number of
//! round trips an operation makes is part of its latency; retrieval keeps
//! it small and a test holds it under a bound. The recorded texts let a
//! test check that every statement names an owner (docs/deploy.md, Citus).
//! SQLite has no round trips but counts the statements its transactions
//! run while recording (`sqlite/counting.rs`): each is a VM run, and a
//! retrieve's number is held under a bound too.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// Counts a store's round trips and records statement texts on demand.
/// Shared by all of the store's transactions (on any thread).
#[derive(Debug, Default)]
pub struct StatementLog {
    trips: AtomicU64,
    recording: AtomicBool,
    texts: Mutex<Vec<String>>,
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
}
