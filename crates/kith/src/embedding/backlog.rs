//! Background embedding: `store()` acknowledges after the durable write
//! and the note's vector follows.
//!
//! The backlog is not kept anywhere: it *is* the notes without a vector of
//! the memory's model, which the store can list. So nothing is lost when
//! the process dies mid-backlog: the next worker (started when a memory is
//! opened with background embedding) finds the same notes and embeds them.
//! Until then those notes are found by the lexical, graph and neighbour
//! paths, never by the vector path.
//!
//! One worker thread per memory walks the notes without a vector in
//! creation order, a page at a time, keeping its place (new notes always
//! come after it). Writers wake it after each commit; it also looks again
//! every [`POLL`] when idle, for notes another process wrote. A failing
//! embedder (a model that does not load, an endpoint that is down) is
//! retried with a growing pause and reported by [`BacklogStatus`].

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use kith_embed::Embedder;
use kith_store::Store;
use serde::Serialize;

use super::notes;
use crate::error::Error;

/// How often an idle worker looks for notes no commit of this process told
/// it about.
const POLL: Duration = Duration::from_secs(2);
/// The longest pause between attempts while the embedder fails.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// What the background worker is doing, for `kith stats` and callers that
/// wait.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct BacklogStatus {
    /// Notes embedded by this worker since it started.
    pub embedded: u64,
    /// The last failure, cleared by the next success.
    pub last_error: Option<String>,
}

/// State shared by the worker and the memory that owns it.
#[derive(Default)]
struct State {
    /// A commit added notes since the worker last looked.
    dirty: bool,
    /// The next pass starts from the first note, not from where the last
    /// one stopped (see [`run`]).
    rescan: bool,
    /// The worker found nothing left and waits.
    idle: bool,
    /// The owner is going away.
    stop: bool,
    /// Failures so far (a waiter returns on a new one).
    failures: u64,
    status: BacklogStatus,
}

struct Shared {
    state: Mutex<State>,
    /// Wakes the worker (new notes, stop).
    wake: Condvar,
    /// Wakes waiters (idle, failure).
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding this lock leaves plain flags behind, still
        // meaningful: keep going rather than poison every later call.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The background embedding worker of one memory; stopped (after its
/// current batch) when dropped.
pub struct BackgroundEmbedder {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for BackgroundEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackgroundEmbedder")
            .field("status", &self.status())
            .finish()
    }
}

impl BackgroundEmbedder {
    /// Starts a worker that embeds every note of `store` without a vector
    /// of `embedder`'s model, beginning with those already there.
    pub fn start(
        store: Arc<dyn Store>,
        embedder: Arc<dyn Embedder>,
    ) -> Result<BackgroundEmbedder, Error> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                dirty: true,
                ..State::default()
            }),
            wake: Condvar::new(),
            changed: Condvar::new(),
        });
        let worker = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("kith-embed-backlog".into())
            .spawn(move || run(&worker, store.as_ref(), embedder.as_ref()))
            .map_err(|e| Error::embedding(format!("cannot start the embedding worker: {e}")))?;
        Ok(BackgroundEmbedder {
            shared,
            thread: Some(thread),
        })
    }

    /// Tells the worker that a commit added notes.
    pub fn notify(&self) {
        self.shared.lock().dirty = true;
        self.shared.wake.notify_one();
    }

    /// What the worker has done, and its last failure.
    pub fn status(&self) -> BacklogStatus {
        self.shared.lock().status.clone()
    }

    /// Blocks until the worker has found no note left without a vector
    /// (after every commit made before this call), or returns the error of
    /// a failure that happens meanwhile.
    pub fn wait_idle(&self) -> Result<(), Error> {
        let mut state = self.shared.lock();
        state.dirty = true;
        state.rescan = true;
        state.idle = false;
        self.shared.wake.notify_one();
        let failures = state.failures;
        loop {
            if state.failures != failures {
                let message = state.status.last_error.clone().unwrap_or_default();
                return Err(Error::embedding(format!(
                    "background embedding failed: {message}"
                )));
            }
            if state.idle && !state.dirty {
                return Ok(());
            }
            state = self
                .shared
                .changed
                .wait(state)
                .unwrap_or_else(|p| p.into_inner());
        }
    }
}

impl Drop for BackgroundEmbedder {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.wake.notify_one();
        if let Some(thread) = self.thread.take() {
            // A panicked worker has nothing left to clean up.
            let _ = thread.join();
        }
    }
}

/// The worker's loop: embed a page, or wait for news.
///
/// A pass continues from the last note it saw, since new notes come after
/// it. Not always: on PostgreSQL two transactions can commit their sequence
/// numbers out of order, so a note can appear behind the cursor. Passes
/// started by the idle poll or by a waiter therefore start from the
/// beginning; those woken by a commit do not.
fn run(shared: &Shared, store: &dyn Store, embedder: &dyn Embedder) {
    let mut after = 0i64;
    let mut backoff = Duration::from_millis(100);
    loop {
        {
            let mut state = shared.lock();
            if state.stop {
                return;
            }
            state.dirty = false;
            if std::mem::take(&mut state.rescan) {
                after = 0;
            }
        }
        match step(store, embedder, after) {
            Ok(Some((last, embedded))) => {
                after = last;
                backoff = Duration::from_millis(100);
                let mut state = shared.lock();
                state.status.embedded += embedded;
                state.status.last_error = None;
            }
            Ok(None) => {
                let mut state = shared.lock();
                if state.dirty || state.stop {
                    continue;
                }
                state.idle = true;
                shared.changed.notify_all();
                let (mut state, waited) = shared
                    .wake
                    .wait_timeout(state, POLL)
                    .unwrap_or_else(|p| p.into_inner());
                state.idle = false;
                if waited.timed_out() {
                    state.rescan = true;
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "background embedding failed; will retry");
                let mut state = shared.lock();
                state.failures += 1;
                state.status.last_error = Some(e.to_string());
                shared.changed.notify_all();
                let _ = shared
                    .wake
                    .wait_timeout_while(state, backoff, |s| !s.stop)
                    .unwrap_or_else(|p| p.into_inner());
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
}

/// Embeds the notes of the next page after `after`; `None` when no node
/// after it lacks a vector. Returns the page's last seq and the notes
/// embedded.
fn step(
    store: &dyn Store,
    embedder: &dyn Embedder,
    after: i64,
) -> Result<Option<(i64, u64)>, Error> {
    let (last, notes) = notes::missing_page(store, None, embedder.model_id(), after)?;
    let Some(last) = last else {
        return Ok(None);
    };
    let nodes: Vec<&kith_core::Node> = notes.iter().map(|s| &s.node).collect();
    notes::embed_and_save(store, embedder, &nodes)?;
    Ok(Some((last, notes.len() as u64)))
}
