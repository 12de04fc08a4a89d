//! Bounded retries of write transactions the store reports as busy.
//!
//! On PostgreSQL a transaction can fail with a serialization failure or a
//! deadlock (SQLSTATE 40001, 40P01) or a lock wait that timed out (55P03),
//! all of which the backend reports as [`StoreErrorKind::Busy`]: the server
//! rolled the transaction back, and running it again is expected to work.
//! kith's own writers queue on one lock and should not meet these, but a
//! server shared with other clients (a migration, an administrator's
//! `LOCK TABLE`, a Citus coordinator) can cause them. SQLite reports `Busy`
//! when its write lock stayed taken past its timeout.
//!
//! Every engine write that is one self-contained transaction runs through
//! [`on_busy`]: the whole transaction (reads included) is run again, at most
//! [`BUSY_ATTEMPTS`] times with a short growing pause, and if it is still
//! busy the error says so. Only whole transactions are retried, and only
//! ones whose effects are idempotent (stable ids, "exists already" checks),
//! so a retry after an acknowledgement was lost cannot write twice.

use std::time::Duration;

use kith_store::{StoreError, StoreErrorKind};

use crate::error::{Error, ErrorKind};

/// How many times a busy transaction is tried in all.
pub const BUSY_ATTEMPTS: u32 = 5;

/// The first pause between attempts; each next one is twice as long (plus
/// jitter, so that writers that collided do not collide again).
const FIRST_PAUSE: Duration = Duration::from_millis(20);

/// Runs `attempt` until it succeeds, fails with something other than
/// [`ErrorKind::Busy`], or was busy [`BUSY_ATTEMPTS`] times; the last error
/// then names `what` and the number of attempts.
pub(crate) fn on_busy<T>(
    what: &str,
    mut attempt: impl FnMut() -> Result<T, Error>,
) -> Result<T, Error> {
    let mut tries = 0;
    loop {
        tries += 1;
        match attempt() {
            Err(e) if e.kind() == ErrorKind::Busy => {
                if tries >= BUSY_ATTEMPTS {
                    return Err(Error::Store(StoreError::new(
                        StoreErrorKind::Busy,
                        format!("{what}: still busy after {tries} attempts, giving up: {e}"),
                    )));
                }
                let pause = FIRST_PAUSE * 2u32.pow(tries - 1) + jitter();
                tracing::warn!(%e, attempt = tries, ?pause, "{what}: busy, retrying");
                std::thread::sleep(pause);
            }
            other => return other,
        }
    }
}

/// 0–15 ms from the clock's low bits: enough to break lockstep.
fn jitter() -> Duration {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    Duration::from_millis(u64::from(nanos % 16))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn busy() -> Error {
        Error::Store(StoreError::new(
            StoreErrorKind::Busy,
            "deadlock detected [SQLSTATE 40P01]",
        ))
    }

    #[test]
    fn busy_is_retried_until_it_succeeds() {
        let mut calls = 0;
        let out = on_busy("test", || {
            calls += 1;
            if calls < 3 {
                Err(busy())
            } else {
                Ok(calls)
            }
        });
        assert_eq!(out.unwrap(), 3);
    }

    #[test]
    fn persistent_busy_is_reported_with_the_attempts() {
        let mut calls = 0;
        let err = on_busy("store", || -> Result<(), Error> {
            calls += 1;
            Err(busy())
        })
        .unwrap_err();
        assert_eq!(calls, BUSY_ATTEMPTS);
        assert_eq!(err.kind(), ErrorKind::Busy);
        let msg = err.to_string();
        assert!(msg.contains("store: still busy after 5 attempts"), "{msg}");
        assert!(msg.contains("40P01"), "{msg}");
    }

    #[test]
    fn other_errors_are_not_retried() {
        let mut calls = 0;
        let err = on_busy("store", || -> Result<(), Error> {
            calls += 1;
            Err(Error::Store(StoreError::new(
                StoreErrorKind::Conflict,
                "exists",
            )))
        })
        .unwrap_err();
        assert_eq!(calls, 1);
        assert_eq!(err.kind(), ErrorKind::Conflict);
    }
}
