//! Command implementations: parse arguments into facade calls, render results.

use std::fs;
use std::io::{self, BufWriter, Read, Write};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use kith::embedding::EmbeddingSpec;
use kith::{
    EventInput, EventQuery, ImportOptions, IngestOptions, Memory, NodeQuery, NodeType, OwnerId,
    ProcessReport, Role, ScopeId, SearchFilters, SearchRequest, SessionId, Timestamp,
};
use uuid::Uuid;

use crate::args::{
    Cli, Command, ConfigAction, EventsAction, IngestArgs, ListShow, SearchArgs, StoreArgs,
};
use crate::render;
use kith::retrieve::retention::{self, ReceiptRetention};
use std::path::PathBuf;

/// Exit code of `ingest`, `import --extract` and `process` when the
/// messages were stored but extracting at least one of them failed (the
/// output is complete; `kith events status ID` says why, `kith process
/// --retry-failed` tries again). 1 stays "the command failed".
pub const EXIT_EXTRACTION_FAILED: u8 = 3;

/// The exit code after a command that ran `failed` extractions that
/// failed, with one line on stderr saying so.
fn extraction_exit(failed: usize) -> ExitCode {
    if failed == 0 {
        return ExitCode::SUCCESS;
    }
    eprintln!(
        "error: extraction failed for {failed} message(s); they are stored. \
         `kith events status ID` says why; `kith process --retry-failed` tries again"
    );
    ExitCode::from(EXIT_EXTRACTION_FAILED)
}

/// Runs one command; returns the process exit code.
pub fn run(cli: Cli) -> Result<ExitCode> {
    let json = cli.json;
    match cli.command {
        Command::Init {
            ref dir,
            ref embeddings,
        } => return init(&cli, dir, embeddings),
        Command::Organize { ref jobs, budget } => crate::organize::organize(&cli, jobs, budget)?,
        Command::Link(ref a) => crate::organize::link(&cli, a)?,
        Command::Aliases { ref action } => crate::organize::aliases(&cli, action)?,
        Command::Undo { ref op } => crate::organize::undo(&cli, op)?,
        Command::Correct(ref a) => crate::organize::correct(&cli, a)?,
        Command::Claims { ref action } => crate::claims::claims(&cli, action)?,
        Command::Forget(ref a) => {
            if !crate::forget::forget(&cli, a)? {
                return Ok(ExitCode::FAILURE);
            }
        }
        Command::Path {
            ref from,
            ref to,
            include_unverified_aliases,
            max_hops,
        } => crate::organize::path(&cli, from, to, include_unverified_aliases, max_hops)?,
        Command::Journal {
            ref kind,
            ref node,
            limit,
        } => crate::organize::journal(&cli, kind.as_deref(), node.as_deref(), limit)?,
        Command::Retrieve(ref a) => crate::retrieve::retrieve(&cli, a)?,
        Command::Retrievals { ref action } => crate::retrieve::retrievals(&cli, action)?,
        Command::Rebuild {
            embeddings: _,
            ref model,
            all,
        } => crate::retrieve::rebuild(&cli, model.as_deref(), all)?,
        Command::Model { ref action } => crate::retrieve::model(action)?,
        Command::Store(ref a) => return store(&cli, a),
        Command::Ingest(ref a) => return ingest(&cli, a),
        Command::Import(ref a) => return import(&cli, a),
        Command::Process {
            limit,
            reclaim,
            retry_failed,
        } => return process_pending(&cli, limit, reclaim, retry_failed),
        Command::Reingest {
            ref event,
            ref session,
        } => return reingest(&cli, event, session),
        Command::Search(ref a) => return search(&cli, a),
        Command::Events { ref action } => return events(&cli, action),
        Command::Nodes { ref action } => return nodes(&cli, action),
        Command::Stats { all_owners } => return stats(&cli, all_owners),
        Command::Doctor { deep } => return doctor(&cli, deep),
        Command::Export {
            ref out,
            all_owners,
        } => return export(&cli, out, all_owners),
        Command::Demo { ref keep } => crate::demo::run(keep.as_deref())?,
        Command::Config {
            action: ConfigAction::Show,
        } => return config(&cli),
        Command::Bench { ref which } => crate::bench::run(
            which,
            cli.database_url.as_deref(),
            identity_options(&cli)?,
            json,
        )?,
        Command::Serve(ref a) => crate::serve::serve(&cli, a)?,
        Command::Mcp => crate::serve::mcp(&cli)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `kith init`: a new pack (or PostgreSQL memory) with its embedding model.
fn init(cli: &Cli, dir: &Option<PathBuf>, embeddings: &str) -> Result<ExitCode> {
    // Load the model before creating anything, so a model that
    // cannot be had leaves no half-made pack behind. MiniLM, the
    // default, is fetched on first use, as `kith demo` does.
    let spec = EmbeddingSpec::parse(embeddings)?;
    if spec == EmbeddingSpec::MiniLm {
        crate::retrieve::ensure_minilm()?;
    }
    let embedder = spec.load()?;
    if let Some(url) = &cli.database_url {
        if let Some(dir) = dir {
            bail!(
                "give either a pack directory ({}) or --database-url, not both",
                dir.display()
            );
        }
        let what = match &embedder {
            Some(e) => format!("embeddings: {}", e.model_id()),
            None => "no embeddings: lexical and graph retrieval".into(),
        };
        let memory = Memory::init_database(url, embedder)?;
        println!(
            "created memory in PostgreSQL database {} ({what})",
            memory.database_url().unwrap_or("?")
        );
        return Ok(ExitCode::SUCCESS);
    }
    let dir = dir.clone().unwrap_or_else(|| cli.pack.clone());
    match embedder {
        Some(embedder) => {
            let model = embedder.model_id().to_string();
            Memory::init_with_embedder(&dir, embedder)?;
            println!(
                "created memory pack {} (embeddings: {model})",
                dir.display()
            );
        }
        None => {
            Memory::init(&dir)?;
            println!(
                "created memory pack {} (no embeddings: lexical and graph retrieval)",
                dir.display()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `kith store`: one message, stored without extraction.
fn store(cli: &Cli, a: &StoreArgs) -> Result<ExitCode> {
    let json = cli.json;
    let memory = open(cli)?;
    let receipt = memory.store(message_input(&cli.owner, a)?)?;
    if json {
        render::json(&receipt)?;
    } else {
        let state = if receipt.created {
            "stored"
        } else {
            "already stored"
        };
        println!(
            "{state}: event {} note {}",
            receipt.event_id, receipt.node_id
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `kith ingest`: one message, stored and (unless deferred) extracted.
fn ingest(cli: &Cli, a: &IngestArgs) -> Result<ExitCode> {
    let json = cli.json;
    let memory = open_for_ingest(cli)?;
    let receipt = memory.ingest(
        message_input(&cli.owner, &a.message)?,
        IngestOptions {
            defer: a.defer,
            first_person_owner: a.first_person_owner,
        },
    )?;
    if json {
        render::json(&receipt)?;
    } else {
        render::ingest_receipt(&receipt);
    }
    Ok(extraction_exit(usize::from(
        receipt.status == kith::WorkStatus::Failed,
    )))
}

/// `kith process`: the owner's pending extraction work.
fn process_pending(cli: &Cli, limit: usize, reclaim: bool, retry_failed: bool) -> Result<ExitCode> {
    let json = cli.json;
    let memory = open_for_ingest(cli)?;
    let owner = OwnerId::new(&cli.owner)?;
    let report = process(&memory, Some(&owner), limit, reclaim, retry_failed)?;
    if json {
        render::json(&report)?;
    } else {
        println!(
            "processed {} work items: {} complete, {} failed",
            report.taken, report.completed, report.failed
        );
    }
    Ok(extraction_exit(report.failed))
}

/// `kith reingest`: re-derive an event or a session from saved extractions.
fn reingest(cli: &Cli, event: &Option<String>, session: &Option<String>) -> Result<ExitCode> {
    let json = cli.json;
    let memory = open_for_ingest(cli)?;
    let owner = OwnerId::new(&cli.owner)?;
    let outcomes = match (event, session) {
        (Some(id), _) => vec![memory.reingest_event(&owner, parse_id(id)?)?],
        (None, Some(s)) => memory.reingest_session(&owner, &SessionId::new(s)?)?,
        (None, None) => bail!("give --event ID or --session ID"),
    };
    if json {
        render::json(&outcomes)?;
    } else {
        for o in &outcomes {
            println!("{} {}", o.event_id, o.outcome);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `kith search`: BM25 search over the owner's nodes.
fn search(cli: &Cli, a: &SearchArgs) -> Result<ExitCode> {
    let json = cli.json;
    let memory = open_read(cli)?;
    let filters = filters_from(&a.filters)?;
    let req = SearchRequest {
        filters,
        limit: a.limit,
        ..SearchRequest::new(&cli.owner, &a.query)?
    };
    let hits = memory.search(&req)?;
    if json {
        render::json(&hits)?;
    } else if hits.is_empty() {
        println!("no matches");
    } else {
        for hit in &hits {
            println!("{}", render::hit_line(hit));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `kith events`: list, show or check the work of stored events.
fn events(cli: &Cli, action: &EventsAction) -> Result<ExitCode> {
    let json = cli.json;
    let memory = open_read(cli)?;
    let owner = OwnerId::new(&cli.owner)?;
    match action {
        EventsAction::List {
            session,
            scope,
            limit,
            after,
        } => {
            let events = memory.events(&EventQuery {
                owner: Some(owner),
                scope: scope.clone().map(ScopeId::new).transpose()?,
                session: session.clone().map(SessionId::new).transpose()?,
                after_seq: *after,
                limit: *limit,
                ..EventQuery::default()
            })?;
            if json {
                render::json(&events)?;
            } else {
                for e in &events {
                    println!("{}", render::event_line(e));
                }
            }
        }
        EventsAction::Show { id } => {
            let event = memory.event(&owner, parse_id(id)?)?;
            if json {
                render::json(&event)?;
            } else {
                render::event_detail(&event);
            }
        }
        EventsAction::Status { id } => {
            let report = memory.work_status(&owner, parse_id(id)?)?;
            if json {
                render::json(&report)?;
            } else {
                render::work_report(&report);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `kith nodes`: list or show nodes.
fn nodes(cli: &Cli, action: &ListShow) -> Result<ExitCode> {
    let json = cli.json;
    let memory = open_read(cli)?;
    let owner = OwnerId::new(&cli.owner)?;
    match action {
        ListShow::List {
            scope,
            limit,
            after,
        } => {
            let nodes = memory.nodes(&NodeQuery {
                owner: Some(owner),
                scope: scope.clone().map(ScopeId::new).transpose()?,
                after_seq: *after,
                limit: *limit,
                ..NodeQuery::default()
            })?;
            if json {
                render::json(&nodes)?;
            } else {
                for n in &nodes {
                    println!("{}", render::node_line(n));
                }
            }
        }
        ListShow::Show { id } => {
            let node = memory.node(&owner, parse_id(id)?)?;
            let claims = if node.node_type == NodeType::Entity {
                memory.entity_claims(&owner, node.id)?
            } else {
                Vec::new()
            };
            if json {
                let claims: Vec<serde_json::Value> = claims
                    .iter()
                    .map(|(c, basis)| serde_json::json!({"claim": c, "basis": basis}))
                    .collect();
                // The node's own fields, plus its claims for an entity.
                let mut value = serde_json::to_value(&node)?;
                if node.node_type == NodeType::Entity {
                    value["claims"] = serde_json::Value::Array(claims);
                }
                render::json(&value)?;
            } else {
                render::node_detail(&node);
                if !claims.is_empty() {
                    println!("claims");
                    render::entity_claims(&claims);
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `kith stats`: counts for the owner or the whole store.
fn stats(cli: &Cli, all_owners: bool) -> Result<ExitCode> {
    let json = cli.json;
    let memory = open_read(cli)?;
    let owner = OwnerId::new(&cli.owner)?;
    let stats = memory.stats((!all_owners).then_some(&owner))?;
    // Notes stored with background embedding whose vector is not made yet
    // (found by every path but the vector path meanwhile).
    let backlog = memory.embedding_backlog((!all_owners).then_some(&owner))?;
    if json {
        let mut value = serde_json::to_value(&stats)?;
        value["embedding_backlog"] = backlog.into();
        render::json(&value)?;
    } else {
        let location = match (memory.database_url(), memory.pack_dir()) {
            (Some(url), _) => Some(format!("database    {url}")),
            (None, Some(dir)) => Some(format!("pack        {}", dir.display())),
            (None, None) => None,
        };
        render::stats(&stats, location.as_deref(), (!all_owners).then_some(&owner));
        println!("embedding backlog {backlog} notes without a vector");
    }
    Ok(ExitCode::SUCCESS)
}

/// `kith doctor`: integrity checks (with `--deep`, of derived rows too).
fn doctor(cli: &Cli, deep: bool) -> Result<ExitCode> {
    let json = cli.json;
    // Opened for writing, since SQLite issues its full-text check as
    // a write; a pack kith cannot write (read-only storage) is
    // checked read-only, without that check, rather than not at all.
    let memory = match open(cli) {
        Ok(m) => m,
        Err(e) => open_read(cli).map_err(|_| e)?,
    };
    let report = if deep {
        memory.doctor_deep()?
    } else {
        memory.doctor()?
    };
    if json {
        render::json(&report)?;
    } else if report.healthy() {
        for what in &report.not_checked {
            eprintln!("not checked: {what}");
        }
        println!(
            "healthy: {} events verified{}, {} journal records verified",
            report.events_checked,
            if report.tombstones_checked > 0 {
                format!(" ({} of them tombstones)", report.tombstones_checked)
            } else {
                String::new()
            },
            report.operations_checked
        );
    } else {
        println!(
            "DAMAGED: {} problem(s) after checking {} events",
            report.problems.len(),
            report.events_checked
        );
        for p in &report.problems {
            println!("  {p}");
        }
    }
    if !report.healthy() {
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// `kith export`: the owner's (or every owner's) events as JSON lines.
fn export(cli: &Cli, out: &Option<PathBuf>, all_owners: bool) -> Result<ExitCode> {
    let memory = open_read(cli)?;
    let owner = OwnerId::new(&cli.owner)?;
    let owner = (!all_owners).then_some(&owner);
    let lines = match out {
        Some(path) => {
            let file = fs::File::create(path)
                .with_context(|| format!("cannot create {}", path.display()))?;
            let mut w = BufWriter::new(file);
            let n = memory.export_jsonl(owner, &mut w)?;
            w.into_inner()
                .map_err(|e| e.into_error())
                .and_then(|f| f.sync_all())
                .with_context(|| format!("cannot write {}", path.display()))?;
            n
        }
        None => {
            let stdout = io::stdout();
            let mut w = BufWriter::new(stdout.lock());
            memory.export_jsonl(owner, &mut w)?
        }
    };
    if out.is_some() {
        eprintln!("exported {lines} events");
    }
    Ok(ExitCode::SUCCESS)
}

/// `kith config show`: the effective configuration and where each value comes from.
fn config(cli: &Cli) -> Result<ExitCode> {
    let json = cli.json;
    let identity = identity_options(cli)?;
    let llm = kith::extract::openai::OpenAiCompatible::from_env()?;
    let rows: Vec<serde_json::Value> = identity
        .effective()
        .into_iter()
        .map(|(name, var, value)| serde_json::json!({"option": name, "env": var, "value": value}))
        .collect();
    let provider = match &llm {
        Some(p) => format!("openai-compatible {} at {}", p.config().model, p.endpoint()),
        None => "heuristic (offline; set KITH_LLM_BASE_URL for an LLM)".to_string(),
    };
    let receipts = ReceiptRetention::from_env()?;
    let keep = receipts.keep.map_or("all".to_string(), |n| n.to_string());
    let max_age = receipts
        .max_age
        .map_or("forever".to_string(), kith::retrieve::retention::format_age);
    if json {
        render::json(&serde_json::json!({
            "provider": provider,
            "identity": rows,
            "receipts": {
                "keep": {"env": retention::KEEP_ENV, "value": keep},
                "max_age": {"env": retention::MAX_AGE_ENV, "value": max_age},
            },
        }))?;
    } else {
        println!("{:<22} {:<34} value", "option", "env");
        println!("{:<22} {:<34} {provider}", "provider", "KITH_LLM_BASE_URL");
        for (name, var, value) in identity.effective() {
            println!("{name:<22} {var:<34} {value}");
        }
        println!("{:<22} {:<34} {keep}", "receipts_keep", retention::KEEP_ENV);
        println!(
            "{:<22} {:<34} {max_age}",
            "receipts_max_age",
            retention::MAX_AGE_ENV
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The PostgreSQL store's options for this command. A long-running process
/// copies the vectors of the owners it searches into memory in the
/// background (the default); a one-shot command would start that copy only
/// to exit, and the organizer, which searches once per node, is better off
/// copying first. A `KITH_PG_VECTOR_CACHE` the user set wins.
fn pg_options(cli: &Cli) -> Result<kith::database::PgOptions> {
    use kith::database::{PgOptions, VectorCacheMode};
    let mode = match cli.command {
        Command::Serve(_) | Command::Mcp | Command::Bench { .. } => VectorCacheMode::Background,
        Command::Organize { .. } => VectorCacheMode::Eager,
        _ => VectorCacheMode::Off,
    };
    Ok(PgOptions::from_env_or(mode)?)
}

/// [`open`] for a command that only reads: a pack is opened read-only, so
/// it can be read on read-only storage and nothing in it changes.
pub fn open_read(cli: &Cli) -> Result<Memory> {
    let retention = ReceiptRetention::from_env()?;
    let memory = match &cli.database_url {
        Some(url) => Memory::connect_with(url, pg_options(cli)?)?,
        None => Memory::open_read_only(&cli.pack)?,
    };
    Ok(memory.with_receipt_retention(retention))
}

/// Opens the memory the command names: the PostgreSQL database of
/// `--database-url` / `KITH_DATABASE_URL` when set, else the pack.
///
/// Receipts are kept as `KITH_RECEIPTS_KEEP` / `KITH_RECEIPTS_MAX_AGE`
/// say (else the default retention).
pub fn open(cli: &Cli) -> Result<Memory> {
    let retention = ReceiptRetention::from_env()?;
    let memory = match &cli.database_url {
        Some(url) => Memory::connect_with(url, pg_options(cli)?)?,
        None => Memory::open(&cli.pack)?,
    };
    Ok(memory.with_receipt_retention(retention))
}

/// Opens the pack with the extraction provider the environment configures:
/// an OpenAI-compatible endpoint when `KITH_LLM_BASE_URL` is set, else the
/// offline heuristic extractor.
///
/// Work a crashed process left running (its lease ended) is resumed first.
fn open_for_ingest(cli: &Cli) -> Result<Memory> {
    let memory = configure(open(cli)?)?;
    let memory = memory.with_identity(identity_options(cli)?);
    let owner = OwnerId::new(&cli.owner)?;
    let resumed = memory.resume_interrupted(Some(&owner))?;
    if resumed.taken > 0 {
        eprintln!(
            "resumed {} interrupted extraction(s): {} complete, {} failed",
            resumed.taken, resumed.completed, resumed.failed
        );
    }
    Ok(memory)
}

/// The identity options: defaults, then `KITH_ENABLE_*`, then `--identity`.
pub fn identity_options(cli: &Cli) -> Result<kith::identity::IdentityOptions> {
    let mut options = kith::identity::IdentityOptions::from_env().map_err(anyhow::Error::msg)?;
    for assignment in &cli.identity {
        options
            .set(assignment)
            .map_err(|e| anyhow::anyhow!("--identity {e}"))?;
    }
    Ok(options)
}

/// Applies the environment's extraction and embedding settings to `memory`
/// (`KITH_LLM_*`, `KITH_EMBEDDING_BACKGROUND`, `KITH_LEASE_SECS`).
pub fn configure(mut memory: Memory) -> Result<Memory> {
    let identity = kith::identity::IdentityOptions::from_env().map_err(anyhow::Error::msg)?;
    memory = memory.with_identity(identity);
    if let Some(llm) = kith::extract::openai::OpenAiCompatible::from_env()? {
        memory = memory.with_provider(std::sync::Arc::new(llm));
    }
    memory = background_embedding(memory, false)?;
    if let Ok(secs) = std::env::var("KITH_LEASE_SECS") {
        let secs: u64 = secs.parse().with_context(|| {
            format!("KITH_LEASE_SECS={secs:?} is not a whole number of seconds")
        })?;
        memory = memory.with_lease(std::time::Duration::from_secs(secs));
    }
    Ok(memory)
}

/// Environment variable: acknowledge stores before their vectors exist.
pub const BACKGROUND_ENV: &str = "KITH_EMBEDDING_BACKGROUND";

/// Turns background embedding on when `flag` is set or
/// `KITH_EMBEDDING_BACKGROUND` is `1`/`true`/`on`/`yes` (`0`, `false`,
/// `off`, `no` or empty: off; anything else is an error). The worker starts
/// with the backlog a previous process left.
pub fn background_embedding(memory: Memory, flag: bool) -> Result<Memory> {
    let from_env = match std::env::var(BACKGROUND_ENV) {
        Ok(v) => match v.trim().to_ascii_lowercase().as_str() {
            "1" | "true" | "on" | "yes" => true,
            "" | "0" | "false" | "off" | "no" => false,
            _ => bail!("{BACKGROUND_ENV}={v:?}: use 1 or 0"),
        },
        Err(_) => false,
    };
    // A worker already running (`configure` started it from the
    // environment) is kept: starting another would stop it and re-read the
    // backlog.
    if (flag || from_env) && memory.background_embedding().is_none() {
        Ok(memory.with_background_embedding()?)
    } else {
        Ok(memory)
    }
}

/// The message a `store` or `ingest` command describes.
fn message_input(owner: &str, a: &StoreArgs) -> Result<EventInput> {
    let metadata = a
        .metadata
        .as_deref()
        .map(|m| kith_core::canon::parse_finite("metadata", m))
        .transpose()?;
    Ok(EventInput {
        owner_id: Some(owner.to_string()),
        scope: Some(a.scope.clone()),
        session_id: a.session.clone(),
        speaker: a.speaker.clone(),
        event_time: a.event_time.clone(),
        source_id: a.source_id.clone(),
        metadata,
        node_type: a.node_type.clone(),
        ..EventInput::new(&a.role, &a.content)
    })
}

/// Runs pending work of `owner` (of every owner: `None`) with a progress bar.
fn process(
    memory: &Memory,
    owner: Option<&OwnerId>,
    limit: usize,
    reclaim: bool,
    retry_failed: bool,
) -> Result<ProcessReport> {
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} extracting: {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    let report = memory.process_pending(owner, limit, reclaim, retry_failed, |r| {
        bar.set_message(format!("{} done, {} failed", r.completed, r.failed));
        bar.tick();
    })?;
    bar.finish_and_clear();
    Ok(report)
}

pub fn parse_id(text: &str) -> Result<Uuid> {
    Uuid::parse_str(text).with_context(|| format!("{text:?} is not a UUID"))
}

fn import(cli: &Cli, a: &crate::args::ImportArgs) -> Result<ExitCode> {
    let memory = if a.extract {
        open_for_ingest(cli)?
    } else {
        open(cli)?
    };
    let memory = background_embedding(memory, a.background_embeddings)?;
    let text = if a.file.as_os_str() == "-" {
        let mut s = String::new();
        io::stdin()
            .read_to_string(&mut s)
            .context("cannot read stdin")?;
        s
    } else {
        fs::read_to_string(&a.file).with_context(|| format!("cannot read {}", a.file.display()))?
    };
    let options = ImportOptions {
        owner: Some(OwnerId::new(&cli.owner)?),
        foreign_owners: if a.all_owners {
            kith::ForeignOwners::Allow
        } else {
            kith::ForeignOwners::Refuse
        },
        scope: ScopeId::new(&a.scope)?,
        batch_size: a.batch_size,
        extract: a.extract,
    };
    let total = text.lines().filter(|l| !l.trim().is_empty()).count() as u64;
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} importing [{bar:30}] {pos}/{len} {per_sec} eta {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    let json = cli.json;
    let stdout = io::stdout();
    let mut failure: Option<io::Error> = None;
    let report = memory.import_jsonl(&text, &options, |receipts| {
        bar.inc(receipts.len() as u64);
        if json {
            // Acknowledge each committed batch as it lands, so a caller that
            // is cut off knows exactly which events are durable.
            let ids: Vec<String> = receipts.iter().map(|r| r.event_id.to_string()).collect();
            let line = serde_json::json!({ "committed": ids });
            let mut out = stdout.lock();
            if let Err(e) = writeln!(out, "{line}").and_then(|()| out.flush()) {
                failure.get_or_insert(e);
            }
        }
    })?;
    bar.finish_and_clear();
    if let Some(e) = failure {
        return Err(e).context("cannot write acknowledgements");
    }
    if memory.background_embedding().is_some() {
        // Every message is durable and acknowledged; the vectors follow.
        // Waiting here finishes them; a process stopped meanwhile leaves
        // the rest to the next one opened with background embedding.
        let spinner = ProgressBar::new_spinner();
        spinner.set_message("embedding in the background");
        spinner.enable_steady_tick(std::time::Duration::from_millis(200));
        memory.wait_for_embeddings()?;
        spinner.finish_and_clear();
    }
    let owner = OwnerId::new(&cli.owner)?;
    let processed = if a.extract && !a.defer {
        // An import of every owner's lines admitted work for each of them.
        let only = (!a.all_owners).then_some(&owner);
        Some(process(&memory, only, 0, false, false)?)
    } else {
        None
    };
    if json {
        render::json(&serde_json::json!({ "report": report, "extraction": processed }))?;
    } else {
        println!(
            "imported {} messages: {} stored, {} already present",
            report.messages, report.created, report.existing
        );
        if let Some(p) = &processed {
            println!(
                "extracted {} messages: {} complete, {} failed (see `kith events status ID`)",
                p.taken, p.completed, p.failed
            );
        }
    }
    Ok(extraction_exit(processed.map_or(0, |p| p.failed)))
}

/// Search filters from the shared flags.
pub fn filters_from(a: &crate::args::FilterArgs) -> Result<SearchFilters> {
    Ok(SearchFilters {
        scope: a.scope.clone().map(ScopeId::new).transpose()?,
        session: a.session.clone().map(SessionId::new).transpose()?,
        roles: a
            .role
            .iter()
            .map(|r| Role::parse("--role", r))
            .collect::<Result<_, _>>()?,
        node_types: a
            .node_type
            .iter()
            .map(|t| NodeType::parse("--node-type", t))
            .collect::<Result<_, _>>()?,
        time_from: a
            .from
            .as_deref()
            .map(|t| Timestamp::parse("--from", t))
            .transpose()?,
        time_to: a
            .to
            .as_deref()
            .map(|t| Timestamp::parse("--to", t))
            .transpose()?,
        ..SearchFilters::default()
    })
}
