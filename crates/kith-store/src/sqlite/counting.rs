//! Counting the statements a SQLite transaction runs, for tests and
//! benchmarks that hold retrieval to a bound ([`crate::StatementLog`]).
//!
//! SQLite has no round trips, but every statement still costs a VM run
//! (and a parse, unless cached), so the number a retrieve issues is worth
//! bounding as PostgreSQL's is. SQLite reports each statement it starts to
//! a trace callback; the callback is a plain function (no state of ours),
//! so it counts in a thread-local, and a transaction adds what its thread
//! ran between its `BEGIN` and its end to its store's log. A transaction
//! lives on one thread, so that is exactly its statements.
//!
//! Only while the store's log is recording: the trace is installed at
//! `BEGIN` then, and not otherwise, because SQLite formats a string for
//! every statement run *inside* another one (FTS5 reads a row's length
//! that way for each match it ranks), which a retrieve should not pay for
//! nothing. Those nested statements (their text starts with `--`) are not
//! counted: they are SQLite's own work for one of ours.
//!
//! While the log profiles ([`StatementLog::start_profiling`]), the same
//! mark also asks SQLite for each statement's time (its profile event) and
//! sums it per statement text, nested ones included.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::time::Duration;

use rusqlite::trace::{TraceEvent, TraceEventCodes};
use rusqlite::Connection;

use crate::StatementLog;

thread_local! {
    /// Statements this thread's counted transactions ran so far.
    static RUN: Cell<u64> = const { Cell::new(0) };
    /// Their texts.
    static TEXTS: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    /// Counted transactions open on this thread: one opened inside another
    /// (rare) is left to the outer one, so nothing is counted twice.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// Runs and summed time per statement text, while profiling.
    static TIMES: RefCell<HashMap<String, (u64, Duration)>> = RefCell::new(HashMap::new());
}

/// Where a counted transaction started; [`Mark::settle`] adds what ran
/// since to the store's log.
pub(super) struct Mark {
    start: u64,
}

/// Starts counting `conn`'s statements when `log` records or profiles (see
/// the module documentation); `None` when it does neither.
pub(super) fn mark(conn: &Connection, log: &StatementLog) -> Option<Mark> {
    let mut codes = TraceEventCodes::empty();
    if log.is_recording() {
        codes |= TraceEventCodes::SQLITE_TRACE_STMT;
    }
    if log.is_profiling() {
        codes |= TraceEventCodes::SQLITE_TRACE_PROFILE;
    }
    if codes.is_empty() {
        return None;
    }
    conn.trace_v2(codes, Some(on_statement));
    DEPTH.with(|d| d.set(d.get() + 1));
    Some(Mark {
        start: RUN.with(Cell::get),
    })
}

impl Mark {
    /// Adds the statements run on this thread since the mark to `log` and
    /// stops tracing `conn` (a pooled connection serves uncounted
    /// transactions next).
    pub(super) fn settle(self, conn: &Connection, log: &StatementLog) {
        conn.trace_v2(TraceEventCodes::empty(), None);
        let depth = DEPTH.with(|d| {
            d.set(d.get().saturating_sub(1));
            d.get()
        });
        if depth > 0 {
            return;
        }
        let ran = RUN.with(Cell::get) - self.start;
        let texts = TEXTS.with(|t| std::mem::take(&mut *t.borrow_mut()));
        log.ran(ran, texts);
        log.timed(TIMES.with(|t| std::mem::take(&mut *t.borrow_mut())));
    }
}

/// The trace callback: one of kith's statements started, or a statement
/// (nested ones too) finished a run that took `took`.
fn on_statement(event: TraceEvent<'_>) {
    match event {
        TraceEvent::Stmt(_, sql) => {
            if sql.starts_with("--") {
                return;
            }
            RUN.with(|r| r.set(r.get() + 1));
            TEXTS.with(|t| t.borrow_mut().push(sql.to_string()));
        }
        TraceEvent::Profile(stmt, took) => {
            let sql = stmt.sql();
            TIMES.with(|t| {
                let mut t = t.borrow_mut();
                let e = t.entry(sql.into_owned()).or_default();
                e.0 += 1;
                e.1 += took;
            });
        }
        _ => {}
    }
}
