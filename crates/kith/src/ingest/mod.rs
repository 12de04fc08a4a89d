//! `ingest()`: admit a message durably, extract, ground, plan, commit.
//!
//! ```text
//! ingest ─► 1 tx: event + note + work item (pending)      ─► event id acknowledged
//!        ─► lease the work item (running, attempts + 1)
//!        ─► saved extraction? else call the provider once and save its reply
//!        ─► ground ─► plan (saved, checksummed) ─► 1 tx: verify + write + receipt + complete
//! ```
//!
//! Every step is restartable: the extraction is saved once and reused (a
//! retry or replan never calls the provider again), a saved plan replays
//! byte-for-byte, and a committed plan is never applied twice (its receipt
//! is checked inside the commit transaction).

mod commit;
mod groups;
pub mod plan;
mod reingest;
mod stage;

pub(crate) use stage::{lease as sized_lease, Ingest};

use commit::{
    complete_work, derive, extraction_input, lease, save_extraction, saved_extraction, Leased,
};

use std::time::Duration;

use kith_core::{EventInput, OperationKind, Timestamp};
use kith_extract::grounding;
use kith_extract::Extraction;
use kith_identity::Policy;
use kith_store::{OperationQuery, Tx, TxMode, WorkItem, WorkQuery, WorkStatus};
use serde::Serialize;
use serde_json::json;
use uuid::Uuid;

use crate::error::Error;

/// How to ingest.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IngestOptions {
    /// Only admit (event + work item); leave extraction to `process`.
    pub defer: bool,
    /// The caller declares that a user turn's singular first person is the
    /// owner (`kith_first_person_owner_v1`; applied by the identity rules).
    pub first_person_owner: bool,
}

/// What a derivation wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct DerivationSummary {
    /// The plan's revision.
    pub revision: u32,
    /// The plan's SHA-256.
    pub plan_checksum: String,
    /// Entities created.
    pub entities_created: usize,
    /// Entities reused.
    pub entities_reused: usize,
    /// Claims written.
    pub claims: usize,
    /// Edges written.
    pub edges: usize,
    /// Claims grounding dropped.
    pub dropped: usize,
    /// Earlier claims this derivation superseded (merged or replaced).
    #[serde(default)]
    pub superseded: usize,
}

/// What `ingest()` returns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IngestReceipt {
    /// The event (acknowledged: durable before extraction starts).
    pub event_id: Uuid,
    /// Its note node.
    pub node_id: Uuid,
    /// False when the `(owner, source_id)` was ingested before.
    pub created: bool,
    /// Where its work stands after this call.
    pub status: WorkStatus,
    /// What the derivation wrote, once complete.
    pub derivation: Option<DerivationSummary>,
    /// Why the last attempt failed, when it did.
    pub error: Option<String>,
}

/// The state of one event's work: the work item and its receipt.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkReport {
    /// The work item.
    pub item: WorkItem,
    /// The committed derivation, if any.
    pub derivation: Option<DerivationSummary>,
    /// Claims grounding dropped in the committed plan, with their reasons.
    pub dropped: Vec<grounding::Dropped>,
    /// Journal records about the event: kinds in order.
    pub journal: Vec<String>,
}

/// What `process` did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ProcessReport {
    /// Work items taken.
    pub taken: usize,
    /// Completed now.
    pub completed: usize,
    /// Failed now (the error is on the work item).
    pub failed: usize,
}

/// What `reingest` did to one event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReingestOutcome {
    /// The event.
    pub event_id: Uuid,
    /// `unchanged`, `rederived` or `no_extraction`.
    pub outcome: String,
    /// The committed revision afterwards.
    pub revision: Option<u32>,
}

/// Shortest lease on a running work item (and the lease of a local
/// provider); a remote provider's is sized from its worst case
/// ([`crate::Memory::lease`]).
pub const DEFAULT_LEASE: Duration = Duration::from_secs(120);
/// What a sized lease adds to the provider's worst case: the work around
/// the calls (saving, planning, committing).
pub const LEASE_MARGIN: Duration = Duration::from_secs(60);
/// Replans tried when a plan went stale before its commit.
const MAX_REPLANS: u32 = 3;

impl Ingest<'_> {
    /// Ingests one message: stores the event, its note and a work item in
    /// one transaction (the event id is acknowledged from then on), then,
    /// unless `defer`, extracts and derives inline.
    pub fn ingest(
        &self,
        input: EventInput,
        options: IngestOptions,
    ) -> Result<IngestReceipt, Error> {
        let mut receipts = self.ingest_batch(vec![input], options)?;
        Ok(receipts.remove(0))
    }

    /// Grounds an extraction against its event under `policy`'s rules, with
    /// speaker grounding when that option is on.
    fn ground(
        &self,
        event: &kith_core::Event,
        extraction: &Extraction,
        policy: Policy,
    ) -> grounding::Grounded {
        let options = grounding::GroundingOptions {
            speaker: self
                .identity_options()
                .speaker_grounding
                .then(|| event.speaker.as_ref().map(|s| s.as_str().to_string()))
                .flatten(),
            intentions: if policy.has_v3_rules() {
                grounding::IntentionRule::NeedsNonActualPredicate
            } else {
                grounding::IntentionRule::Unchecked
            },
            reports: if policy.has_v9_rules() {
                grounding::ReportRule::Unverified
            } else if policy.has_v8_rules() {
                grounding::ReportRule::UnverifiedDoubleMarks
            } else {
                grounding::ReportRule::Unchecked
            },
        };
        let mut grounded = grounding::ground_with(&event.content, extraction, &options);
        // An LLM's reply is bounded before anything is planned: entities
        // the message never mentions and no claim names are left out.
        kith_extract::bounds::keep_grounded_entities(
            &event.content,
            options.speaker.as_deref(),
            &mut grounded,
        );
        grounded
    }

    /// The identity decision for an event under `policy`: who its singular
    /// first person is. Reads (inside `tx`) the newest name a user turn gave
    /// the owner and, under `kith_ingest_v3`, which listed names are people
    /// the scope already has, typing those `person` in `grounded` (one
    /// person, one node).
    fn identity_for(
        &self,
        tx: &mut dyn Tx,
        event: &kith_core::Event,
        grounded: &mut grounding::Grounded,
        first_person_owner: bool,
        policy: Policy,
    ) -> Result<plan::Identity, Error> {
        let options = self.identity_options();
        let speaker = event.speaker.as_ref().map(|s| s.as_str());
        if policy.has_v3_rules() {
            let known = known_persons(tx, event, &grounded.entities, policy)?;
            grounded.entities =
                kith_identity::persons::person_types(&grounded.entities, speaker, &known);
        }
        let owner_name = if options.owner_name_carry {
            match newest_owner_name(tx, event) {
                Ok(name) => name,
                // Busy is retried as a whole; anything else leaves the old
                // behaviour (spec: "a failed lookup leaves the old
                // behavior"): no name is carried to this turn.
                Err(e) if e.kind() == crate::ErrorKind::Busy => return Err(e),
                Err(e) => {
                    tracing::warn!(event = %event.id, error = %e,
                        "owner name lookup failed; the turn carries no owner name");
                    None
                }
            }
        } else {
            None
        };
        let first_person =
            kith_identity::first_person::bind_first_person(&kith_identity::FirstPersonInput {
                role: event.role,
                speaker,
                first_person_owner,
                content: &event.content,
                entities: &grounded.entities,
                options: &options,
                owner_name: owner_name.as_deref(),
                policy,
            });
        let repairs = commit::saved_repairs(tx, event.id)?;
        Ok(plan::Identity {
            first_person,
            options,
            repairs,
            policy,
        })
    }

    /// Ingests several messages: validates all, admits them (events, notes,
    /// work items) in one transaction, then, unless `defer`, derives each in
    /// order. Returns one receipt per message.
    pub fn ingest_batch(
        &self,
        inputs: Vec<EventInput>,
        options: IngestOptions,
    ) -> Result<Vec<IngestReceipt>, Error> {
        let mut valid = crate::write::validate_all(inputs)?;
        for v in &mut valid {
            check_first_person_owner(&v.event, options)?;
            if options.first_person_owner {
                v.event.declare_first_person_owner();
            }
        }
        let admitted = self.admit(&valid, options)?;
        let mut out = Vec::with_capacity(admitted.len());
        for r in admitted {
            if !options.defer {
                self.process_event(r.event_id)?;
            }
            out.push(self.ingest_receipt(r.event_id, r.node_id, r.created)?);
        }
        Ok(out)
    }

    /// Admits validated events with their work items in one transaction.
    pub(crate) fn admit(
        &self,
        valid: &[kith_core::event::ValidEvent],
        options: IngestOptions,
    ) -> Result<Vec<crate::StoreReceipt>, Error> {
        let vectors = self.embed_events(valid)?;
        // Idempotent on retry: events are keyed by (owner, source_id) and a
        // work item by its event.
        let written = crate::retry::on_busy("admit", || {
            self.admit_once(valid, options, vectors.as_ref())
        })?;
        crate::write::embed_stale(&self.ctx, &written.stale);
        self.notes_committed();
        Ok(written.receipts)
    }

    fn admit_once(
        &self,
        valid: &[kith_core::event::ValidEvent],
        options: IngestOptions,
        vectors: Option<&crate::embedding::NoteVectors>,
    ) -> Result<crate::write::Written, Error> {
        let mut tx = self.store_backend().begin(TxMode::Write)?;
        let written = crate::write::write_events(&mut *tx, valid, vectors)?;
        let receipts = &written.receipts;
        // One read and one multi-row write, not two statements a message.
        let event_ids: Vec<Uuid> = receipts.iter().map(|r| r.event_id).collect();
        let mut have: std::collections::HashSet<Uuid> = tx
            .get_work_items(&event_ids)?
            .into_iter()
            .map(|w| w.event_id)
            .collect();
        let mut items = Vec::new();
        for (v, r) in valid.iter().zip(receipts) {
            // A message repeated in the batch gets one work item.
            if !have.insert(r.event_id) {
                continue;
            }
            let e = &v.event;
            items.push(WorkItem {
                event_id: r.event_id,
                owner_id: e.owner_id.clone(),
                scope: e.scope.clone(),
                status: WorkStatus::Pending,
                attempts: 0,
                reason_code: None,
                last_error: None,
                lease_until_ms: None,
                options: json!({"first_person_owner": options.first_person_owner}),
                created_at: e.ingested_at,
                updated_at: e.ingested_at,
            });
        }
        tx.insert_work_items(&items)?;
        tx.commit()?;
        Ok(written)
    }

    fn ingest_receipt(
        &self,
        event_id: Uuid,
        node_id: Uuid,
        created: bool,
    ) -> Result<IngestReceipt, Error> {
        let report = self.work_status_by_id(event_id)?;
        Ok(IngestReceipt {
            event_id,
            node_id,
            created,
            status: report.item.status,
            derivation: report.derivation,
            error: report.item.last_error,
        })
    }

    /// The work item, receipt and journal of one event.
    pub fn work_status(
        &self,
        owner: &kith_core::OwnerId,
        event_id: Uuid,
    ) -> Result<WorkReport, Error> {
        let report = self.work_status_by_id(event_id)?;
        if &report.item.owner_id != owner {
            return Err(Error::NotFound {
                what: format!("work of event {event_id} of owner {owner}"),
            });
        }
        Ok(report)
    }

    fn work_status_by_id(&self, event_id: Uuid) -> Result<WorkReport, Error> {
        let mut tx = self.store_backend().begin(TxMode::Read)?;
        let item = tx.get_work_item(event_id)?.ok_or_else(|| Error::NotFound {
            what: format!("work item of event {event_id} (stored with `store`, not `ingest`?)"),
        })?;
        let journal = tx.list_operations(&OperationQuery {
            owner: item.owner_id.clone(),
            kind: None,
            target_id: Some(event_id),
            limit: 0,
        })?;
        let derivation: Option<DerivationSummary> = journal
            .iter()
            .rev()
            .find(|op| op.kind == OperationKind::DerivationCommitted)
            .and_then(|op| serde_json::from_value(op.payload["summary"].clone()).ok());
        // The committed plan keeps what grounding dropped, with reasons.
        let dropped = match &derivation {
            Some(d) => tx
                .get_operation(plan::plan_op_id(event_id, d.revision))?
                .and_then(|op| serde_json::from_value(op.payload["plan"]["dropped"].clone()).ok())
                .unwrap_or_default(),
            None => Vec::new(),
        };
        Ok(WorkReport {
            item,
            derivation,
            dropped,
            journal: journal
                .iter()
                .map(|op| op.kind.as_str().to_string())
                .collect(),
        })
    }

    /// Runs pending work (and running work whose lease ended; with
    /// `reclaim`, running work whatever its lease, for when no other process
    /// works on this pack; with `retry_failed`, failed work too), oldest
    /// first, at most `limit` items (0: all).
    pub fn process_pending(
        &self,
        owner: Option<&kith_core::OwnerId>,
        limit: usize,
        reclaim: bool,
        retry_failed: bool,
        mut progress: impl FnMut(&ProcessReport),
    ) -> Result<ProcessReport, Error> {
        let mut statuses = vec![WorkStatus::Pending, WorkStatus::Running];
        if retry_failed {
            statuses.push(WorkStatus::Failed);
        }
        let items = {
            let mut tx = self.store_backend().begin(TxMode::Read)?;
            tx.list_work_items(&WorkQuery {
                owner: owner.cloned(),
                statuses,
                lease_expired_before_ms: if reclaim { None } else { Some(now_ms()) },
                limit,
            })?
        };
        let mut report = ProcessReport::default();
        for item in items {
            report.taken += 1;
            match self.run_work(item.event_id, reclaim || item.status != WorkStatus::Running)? {
                WorkStatus::Complete => report.completed += 1,
                WorkStatus::Failed => report.failed += 1,
                _ => {}
            }
            progress(&report);
        }
        Ok(report)
    }

    /// Resumes work a crashed process left behind: running items whose lease
    /// has ended (pending items are left alone: they may be deferred on
    /// purpose). Called by the CLI's ingest commands when they open a pack.
    pub fn resume_interrupted(
        &self,
        owner: Option<&kith_core::OwnerId>,
    ) -> Result<ProcessReport, Error> {
        let items = {
            let mut tx = self.store_backend().begin(TxMode::Read)?;
            tx.list_work_items(&WorkQuery {
                owner: owner.cloned(),
                statuses: vec![WorkStatus::Running],
                lease_expired_before_ms: Some(now_ms()),
                limit: 0,
            })?
        };
        let mut report = ProcessReport::default();
        for item in items {
            report.taken += 1;
            match self.run_work(item.event_id, false)? {
                WorkStatus::Complete => report.completed += 1,
                WorkStatus::Failed => report.failed += 1,
                _ => {}
            }
        }
        Ok(report)
    }

    /// Every owner's work items in these statuses (all statuses when
    /// empty), oldest first, at most `limit` (0: all). What a background
    /// worker reads to decide what to process; it changes nothing.
    pub fn work_items(
        &self,
        statuses: &[WorkStatus],
        limit: usize,
    ) -> Result<Vec<WorkItem>, Error> {
        let mut tx = self.store_backend().begin(TxMode::Read)?;
        Ok(tx.list_work_items(&WorkQuery {
            owner: None,
            statuses: statuses.to_vec(),
            lease_expired_before_ms: None,
            limit,
        })?)
    }

    /// Extracts and derives one admitted event now.
    pub fn process_event(&self, event_id: Uuid) -> Result<WorkStatus, Error> {
        self.run_work(event_id, false)
    }

    /// Leases the work item, extracts (or loads the saved extraction), plans
    /// and commits. Returns the status it leaves.
    ///
    /// A local provider (the heuristic) runs inside the one transaction that
    /// leases, saves the extraction, saves the plan and commits it. A remote
    /// one is called outside any transaction: the lease is committed first,
    /// and the reply is saved before planning, so a crash after the call
    /// never costs a second call.
    fn run_work(&self, event_id: Uuid, take_over: bool) -> Result<WorkStatus, Error> {
        if self.provider().is_local() {
            // One transaction from lease to commit: a busy one rolled back
            // whole, so running it again is the same work.
            crate::retry::on_busy("extract and derive", || {
                self.run_work_once(event_id, take_over)
            })
        } else {
            // Not retried here: the lease committed before the provider was
            // called, and a second run would find it held and call again.
            // The lease runs out and `process` resumes the item, reusing a
            // saved reply.
            self.run_work_once(event_id, take_over)
        }
    }

    fn run_work_once(&self, event_id: Uuid, take_over: bool) -> Result<WorkStatus, Error> {
        let local = self.provider().is_local();
        let mut tx = self.store_backend().begin(TxMode::Write)?;
        let (event, options) = match lease(&mut *tx, event_id, take_over, self.lease())? {
            Leased::Event(event, options) => (event, options),
            Leased::Status(status) => return Ok(status),
        };
        let saved = match saved_extraction(&mut *tx, &event) {
            Ok(saved) => saved,
            Err(Error::Policy(unknown)) => {
                // Refused, not re-read under rules it was not saved for.
                drop(tx);
                self.fail_work(event_id, "unknown_policy", &unknown.to_string())?;
                return Ok(WorkStatus::Failed);
            }
            Err(e) => return Err(e),
        };
        let (extraction, policy) = match saved {
            Some(x) => x,
            None if local => match self.provider().extract(&extraction_input(&event)) {
                Ok(reply) => save_extraction(&mut *tx, &event, reply, serde_json::Value::Null)?,
                Err(err) => {
                    drop(tx);
                    self.fail_work(event_id, err.reason_code(), &err.to_string())?;
                    return Ok(WorkStatus::Failed);
                }
            },
            None => {
                tx.commit()?;
                let reply = match self.provider().extract(&extraction_input(&event)) {
                    Ok(reply) => reply,
                    Err(err) => {
                        self.fail_work(event_id, err.reason_code(), &err.to_string())?;
                        return Ok(WorkStatus::Failed);
                    }
                };
                // The one extra question, asked before anything is saved so
                // that the reply is saved with the extraction, once.
                let repair = self.repair_pronouns(&event, &reply.extraction)?;
                tx = self.store_backend().begin(TxMode::Write)?;
                save_extraction(&mut *tx, &event, reply, repair)?
            }
        };
        let mut grounded = self.ground(&event, &extraction, policy);
        let identity = self.identity_for(
            &mut *tx,
            &event,
            &mut grounded,
            options.first_person_owner,
            policy,
        )?;
        match derive(&mut *tx, &event, &grounded, &identity)? {
            Some((_, plan)) => {
                // Outside the plan, inside its transaction.
                groups::link_groups(
                    &mut *tx,
                    &event,
                    &plan,
                    &identity.options,
                    options.first_person_owner,
                )?;
                complete_work(&mut *tx, event_id)?;
                tx.commit()?;
                Ok(WorkStatus::Complete)
            }
            None => {
                drop(tx);
                self.fail_work(
                    event_id,
                    "stale_plan",
                    "the saved plans went stale on every attempt; run `kith process --retry-failed`",
                )?;
                Ok(WorkStatus::Failed)
            }
        }
    }

    /// Pronoun repair for a freshly extracted message: asks the provider
    /// who each third-person pronoun subject or object refers to, keeps only
    /// names written in what it was shown, and returns the record to save
    /// (`null` when nothing was asked).
    fn repair_pronouns(
        &self,
        event: &kith_core::Event,
        extraction: &Extraction,
    ) -> Result<serde_json::Value, Error> {
        use kith_extract::grounding::EndpointRef;
        use kith_extract::pronoun::{self, PronounQuestion, PronounRequest};
        if !self.identity_options().pronoun_repair {
            return Ok(serde_json::Value::Null);
        }
        let grounded = self.ground(event, extraction, Policy::CURRENT);
        let third = |r: &EndpointRef| match r {
            EndpointRef::Personal { surface } => {
                pronoun::is_third_person(surface).then(|| surface.clone())
            }
            _ => None,
        };
        let mut questions = Vec::new();
        for (index, f) in grounded.facts.iter().enumerate() {
            for (field, r) in [("subject", &f.subject), ("object", &f.object)] {
                if let Some(p) = third(r) {
                    questions.push(PronounQuestion {
                        index,
                        field: field.into(),
                        pronoun: p,
                        sentence: f.evidence.sentence.clone(),
                    });
                }
            }
        }
        if questions.is_empty() {
            return Ok(serde_json::Value::Null);
        }
        let window = self.preceding_memories(event, REPAIR_WINDOW_TURNS)?;
        let memories: Vec<String> = window.iter().map(|(_, line)| line.clone()).collect();
        let speaker = event.speaker.as_ref().map(|s| s.as_str());
        let request = PronounRequest {
            speaker,
            memories: &memories,
            questions: &questions,
        };
        let reply = match self.provider().resolve_pronouns(&request) {
            Ok(Some(reply)) => reply,
            Ok(None) => return Ok(serde_json::Value::Null),
            // A failed repair leaves the claims as extracted.
            Err(err) => return Ok(json!({"error": err.to_string(), "answers": []})),
        };
        let speaker_line = speaker.map(|s| format!("Speaker: {s}")).unwrap_or_default();
        // Where a name may be written, in the order `found_in` names them.
        let mut answers: Vec<pronoun::PronounAnswer> = Vec::new();
        for a in reply.answers {
            let Some(q) = questions
                .iter()
                .find(|q| q.index == a.index && q.field == a.field)
            else {
                continue;
            };
            let mut sources: Vec<&str> = vec![&q.sentence, &event.content, &speaker_line];
            sources.extend(memories.iter().map(String::as_str));
            // Any name that fails leaves the field as extracted.
            let Some(checked) = pronoun::check_names(&a.names, &sources) else {
                continue;
            };
            let found_in = checked
                .iter()
                .map(|(_, at)| match at {
                    0 => "sentence".to_string(),
                    1 => "message".to_string(),
                    2 => "speaker".to_string(),
                    k => format!("memory:{}", window[k - 3].0),
                })
                .collect();
            answers.push(pronoun::PronounAnswer {
                names: checked.into_iter().map(|(n, _)| n).collect(),
                found_in,
                ..a
            });
        }
        Ok(
            json!({"raw": reply.raw, "calls": reply.calls, "questions": questions, "answers": answers}),
        )
    }

    /// The owner's memories stored before `event` in its session (or scope),
    /// newest `n`, oldest first: each event's id and its "Speaker: text" line.
    fn preceding_memories(
        &self,
        event: &kith_core::Event,
        n: usize,
    ) -> Result<Vec<(Uuid, String)>, Error> {
        let mut tx = self.store_backend().begin(TxMode::Read)?;
        let mut earlier = events_through(&mut *tx, event, n + 1)?;
        earlier.pop(); // `event` itself
        Ok(earlier
            .into_iter()
            .map(|e| {
                let who = e
                    .speaker
                    .as_ref()
                    .map_or(e.role.as_str(), |s| s.as_str())
                    .to_string();
                (e.id, format!("{who}: {}", e.content))
            })
            .collect())
    }

    fn fail_work(&self, event_id: Uuid, code: &str, message: &str) -> Result<(), Error> {
        crate::retry::on_busy("record the failure", || {
            self.fail_work_once(event_id, code, message)
        })
    }

    fn fail_work_once(&self, event_id: Uuid, code: &str, message: &str) -> Result<(), Error> {
        let mut tx = self.store_backend().begin(TxMode::Write)?;
        if let Some(mut item) = tx.get_work_item(event_id)? {
            if item.status != WorkStatus::Complete {
                item.status = WorkStatus::Failed;
                item.reason_code = Some(code.to_string());
                item.last_error = Some(message.to_string());
                item.lease_until_ms = None;
                item.updated_at = Timestamp::now();
                tx.update_work_item(&item)?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    fn saved_extraction(
        &self,
        event: &kith_core::Event,
    ) -> Result<Option<(Extraction, Policy)>, Error> {
        let mut tx = self.store_backend().begin(TxMode::Read)?;
        saved_extraction(&mut *tx, event)
    }
}

/// The newest `n` events of `event`'s owner, scope and session up to and
/// including `event` (in ingestion order), oldest first. Only those are read:
/// a long session costs one bounded query, not a scan of its history.
pub(super) fn events_through(
    tx: &mut dyn Tx,
    event: &kith_core::Event,
    n: usize,
) -> Result<Vec<kith_core::Event>, Error> {
    let Some(this) = tx.get_event(event.id)? else {
        return Ok(Vec::new());
    };
    let mut newest = tx.list_events(&kith_store::EventQuery {
        owner: Some(event.owner_id.clone()),
        scope: Some(event.scope.clone()),
        session: event.session_id.clone(),
        through_seq: Some(this.seq),
        newest_first: true,
        limit: n.max(1),
        ..kith_store::EventQuery::default()
    })?;
    newest.reverse();
    Ok(newest.into_iter().map(|s| s.event).collect())
}

/// The names among `entities` (typed `other` or nothing) that are active
/// person entities of the event's owner and scope (any generation; under
/// `kith_ingest_v4` also an untyped entity a person adopted).
fn known_persons(
    tx: &mut dyn Tx,
    event: &kith_core::Event,
    entities: &[kith_extract::ExtractedEntity],
    policy: Policy,
) -> Result<Vec<String>, Error> {
    let mut known = Vec::new();
    for e in entities {
        let ty = e.entity_type.trim();
        if !(ty.is_empty() || ty.eq_ignore_ascii_case("other")) {
            continue;
        }
        let key = e.name.trim().to_lowercase();
        if key.is_empty() {
            continue;
        }
        if plan::live_person(&mut *tx, event, &key, policy)?.is_ok() {
            known.push(e.name.clone());
        }
    }
    Ok(known)
}

/// The newest active person entity a user turn of the event's owner and
/// scope created under the owner's name, if any.
fn newest_owner_name(tx: &mut dyn Tx, event: &kith_core::Event) -> Result<Option<String>, Error> {
    Ok(newest_owner_entity(tx, event)?.map(|n| n.content))
}

/// The node behind [`newest_owner_name`]: the newest active entity marked
/// with the owner's name whose creating event was ingested before `event`.
/// A name given later never reaches back: re-deriving an earlier turn finds
/// the name that was in force when it was ingested (spec: "a later name
/// replaces an earlier one for the turns after it and earlier claims keep
/// theirs").
fn newest_owner_entity(
    tx: &mut dyn Tx,
    event: &kith_core::Event,
) -> Result<Option<kith_core::Node>, Error> {
    let marked = tx.list_nodes(&kith_store::NodeQuery {
        owner: Some(event.owner_id.clone()),
        scope: Some(event.scope.clone()),
        node_types: vec![kith_core::NodeType::Entity],
        metadata_key: Some("owner_name".into()),
        newest_first: true,
        limit: OWNER_NAMES_READ,
        ..kith_store::NodeQuery::default()
    })?;
    let Some(this_seq) = tx.get_event(event.id)?.map(|e| e.seq) else {
        return Ok(None);
    };
    let mut best: Option<(i64, kith_core::Node)> = None;
    for node in marked.into_iter().map(|s| s.node) {
        if !node.lifecycle.is_active() {
            continue;
        }
        let Some(&named_by) = node.evidence_refs.first() else {
            continue;
        };
        let Some(seq) = tx.get_event(named_by)?.map(|e| e.seq) else {
            continue;
        };
        if seq < this_seq && best.as_ref().is_none_or(|(b, _)| seq > *b) {
            best = Some((seq, node));
        }
    }
    Ok(best.map(|(_, node)| node))
}

/// How many preceding memories a pronoun-repair question shows (the spec's
/// `extraction_window_turns`).
const REPAIR_WINDOW_TURNS: usize = 8;

/// How many owner-name entities one lookup reads, newest first: an owner
/// gives few names, and the bound keeps a lookup cheap if a bug made many.
const OWNER_NAMES_READ: usize = 256;

/// Whether an event's first person was declared to be the owner: by the
/// event itself (its reserved metadata key, which export and import carry),
/// or, for events ingested before the key was written, by its work item's
/// options.
pub(crate) fn declared_first_person_owner(
    event: &kith_core::Event,
    work_options: &serde_json::Value,
) -> bool {
    event.declares_first_person_owner() || work_options["first_person_owner"] == json!(true)
}

/// `first_person_owner` declares a user turn's own first person: it is
/// refused together with a speaker and for any other role.
fn check_first_person_owner(event: &kith_core::Event, options: IngestOptions) -> Result<(), Error> {
    if !options.first_person_owner {
        return Ok(());
    }
    let conflict = if event.speaker.is_some() {
        Some("a speaker (one turn cannot be both the named speaker's and the owner's)")
    } else if event.role != kith_core::Role::User {
        Some("a non-user role (only the owner's own turns can declare it)")
    } else {
        None
    };
    match conflict {
        Some(what) => Err(kith_core::ValidationError::new(
            "first_person_owner",
            kith_core::ValidationErrorKind::Mismatch {
                expected: "a user turn without a speaker".into(),
                actual: format!("set on a turn with {what}"),
            },
        )
        .into()),
        None => Ok(()),
    }
}

fn now_ms() -> i64 {
    Timestamp::now().unix_millis()
}
