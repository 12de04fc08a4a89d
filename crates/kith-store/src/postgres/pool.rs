//! The store's pooled connections, and the end of a read transaction sent
//! with the connection's next statement instead of on its own.
//!
//! A read transaction changes nothing, so ending it (`ROLLBACK`) can wait:
//! its connection goes back to the pool marked [`Conn::end_due`], and the
//! next user of that connection puts `ROLLBACK; ` before its first
//! statement when that statement travels in the simple protocol (a
//! transaction's `BEGIN`, a receipt: [`Conn::end_prefix`]), or sends it on
//! its own first ([`Conn::settle`]). Retrieval's read transaction is
//! followed at once by its receipt on the same connection (the pool hands
//! out the connection released last), so the two share one round trip.
//!
//! Until it is sent the transaction holds its snapshot, which keeps
//! `VACUUM` from removing rows deleted since. That wait is bounded: a
//! background thread, running only while some connection waits, sends the
//! `ROLLBACK` of any connection left waiting longer than
//! [`super::PgOptions::read_end_wait`] ([`DEFAULT_END_WAIT`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use super::Conn;
use crate::StatementLog;

/// Connections kept for reuse; more are opened when needed and closed after.
pub(super) const POOL_SIZE: usize = 8;

/// How long a read transaction's end may wait for its connection's next
/// statement before the background thread sends it, by default
/// ([`super::PgOptions::read_end_wait`]): longer than retrieval takes
/// between its read transaction and its receipt (ranking and packing, a
/// few milliseconds), short enough that the snapshot held meanwhile keeps
/// nothing from `VACUUM` for long.
pub const DEFAULT_END_WAIT: Duration = Duration::from_millis(100);

/// How long the background thread stays without a waiting end before it
/// exits (the next deferred end starts it again).
const IDLE_EXIT: Duration = Duration::from_millis(500);

impl Conn {
    /// Sends a deferred `ROLLBACK` on its own, if one is due; the
    /// connection is then outside any transaction.
    pub(super) fn settle(&mut self, log: &StatementLog) -> Result<(), postgres::Error> {
        if self.end_due.take().is_some() {
            log.sent("ROLLBACK");
            self.client.batch_execute("ROLLBACK")?;
        }
        Ok(())
    }

    /// `"ROLLBACK; "` when a deferred end is due (to put before the next
    /// simple-protocol text, which then ends the old transaction first),
    /// else nothing; either way none is due afterwards.
    pub(super) fn end_prefix(&mut self) -> &'static str {
        match self.end_due.take() {
            Some(_) => "ROLLBACK; ",
            None => "",
        }
    }
}

/// Idle connections, shared with the thread that ends waiting read
/// transactions.
pub(super) struct Pool {
    idle: Arc<Mutex<Vec<Conn>>>,
    log: Arc<StatementLog>,
    /// How long a deferred end may wait.
    end_wait: Duration,
    /// Whether the ending thread runs.
    ending: Arc<AtomicBool>,
}

impl Pool {
    /// An empty pool whose deferred ends wait at most `end_wait` and are
    /// logged in `log`.
    pub(super) fn new(log: Arc<StatementLog>, end_wait: Duration) -> Pool {
        Pool {
            idle: Arc::new(Mutex::new(Vec::new())),
            log,
            end_wait,
            ending: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The connection released last, if any, with its deferred end still
    /// due (for callers that send it with their first statement).
    pub(super) fn take_unsettled(&self) -> Option<Conn> {
        let pooled = self.idle.lock().map(|mut p| p.pop()).unwrap_or(None);
        pooled.filter(|c| !c.client.is_closed())
    }

    /// Returns `conn` to the pool (a closed one, or one past
    /// [`POOL_SIZE`], is dropped: closing a connection ends its
    /// transaction on the server).
    pub(super) fn release(&self, conn: Conn) {
        if conn.client.is_closed() {
            return;
        }
        let due = conn.end_due.is_some();
        if let Ok(mut pool) = self.idle.lock() {
            if pool.len() < POOL_SIZE {
                pool.push(conn);
            }
        }
        if due {
            self.start_ending();
        }
    }

    /// Starts the ending thread unless it runs.
    fn start_ending(&self) {
        if self.ending.swap(true, Ordering::AcqRel) {
            return;
        }
        let idle = Arc::downgrade(&self.idle);
        let log = Arc::clone(&self.log);
        let ending = Arc::clone(&self.ending);
        let wait = self.end_wait;
        let spawned = std::thread::Builder::new()
            .name("kith-pg-end".into())
            .spawn(move || end_waiting(&idle, &log, &ending, wait));
        if spawned.is_err() {
            // No thread: the ends wait for their connections' next use.
            self.ending.store(false, Ordering::Release);
        }
    }
}

/// The ending thread: every `wait` (at most [`IDLE_EXIT`]), sends the
/// `ROLLBACK` of each idle connection whose read transaction has waited
/// `wait`; exits when the store is gone or nothing has waited for
/// [`IDLE_EXIT`].
fn end_waiting(
    idle: &Weak<Mutex<Vec<Conn>>>,
    log: &StatementLog,
    ending: &AtomicBool,
    wait: Duration,
) {
    let mut quiet_since = Instant::now();
    loop {
        std::thread::sleep(wait.min(IDLE_EXIT));
        let Some(pool) = idle.upgrade() else {
            ending.store(false, Ordering::Release);
            return;
        };
        // Taken out of the pool while their ROLLBACK travels, so no
        // transaction uses them meanwhile.
        let mut overdue = Vec::new();
        let mut waiting = false;
        if let Ok(mut p) = pool.lock() {
            let mut i = 0;
            while i < p.len() {
                match p[i].end_due {
                    Some(at) if at.elapsed() >= wait => overdue.push(p.swap_remove(i)),
                    Some(_) => {
                        waiting = true;
                        i += 1;
                    }
                    None => i += 1,
                }
            }
        }
        let ended = !overdue.is_empty();
        for mut conn in overdue {
            // A connection whose ROLLBACK fails is in an unknown state:
            // dropped (which ends its session).
            if conn.settle(log).is_ok() {
                if let Ok(mut p) = pool.lock() {
                    if p.len() < POOL_SIZE {
                        p.push(conn);
                    }
                }
            }
        }
        if waiting || ended {
            quiet_since = Instant::now();
            continue;
        }
        if quiet_since.elapsed() < IDLE_EXIT {
            continue;
        }
        // Exit, unless an end was deferred after the check above (its
        // release saw this thread running and started none).
        ending.store(false, Ordering::Release);
        let due = pool
            .lock()
            .map(|p| p.iter().any(|c| c.end_due.is_some()))
            .unwrap_or(false);
        if !due || ending.swap(true, Ordering::AcqRel) {
            return;
        }
    }
}
