//! What a store sends to its server: a count of round trips, and (when a
//! test asks) the text of every statement.
//!
//! PostgreSQL answers each statement over the network, so the number of
//! round trips an operation makes is part of its latency; retrieval keeps
//! it small and a test holds it under a bound. The recorded texts let a
//! test check that every statement names an owner (docs/deploy.md, Citus).
//! An embedded backend has no round trips and keeps no log.

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
    /// (the vector copy's loader) is not counted.
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
