//! Times lexical and vector search on PostgreSQL and SQLite over the same
//! synthetic notes.
//!
//! ```text
//! cargo run --release -p kith-store --features pg-testing --example pg_vs_sqlite [notes] [dim]
//! ```
//!
//! One owner gets `notes` (default 10 000) notes of twelve words drawn from
//! a 3 000-word vocabulary, each with a random unit vector of `dim` (default
//! 384) dimensions. Then 200 three-word lexical queries and 100 vector
//! queries (top 10) run on each backend. PostgreSQL is the throwaway test
//! server (or `KITH_TEST_DATABASE_URL`), so its figures include a loopback
//! round trip per query; it is `ANALYZE`d after the load, as autovacuum
//! would soon do. Each backend's first vector query also loads its
//! in-memory copy of the vectors, reported apart (`KITH_PG_VECTOR_CACHE=off`:
//! PostgreSQL answers with pgvector's exact scan instead).

use std::time::{Duration, Instant};

use kith_core::event::InputDefaults;
use kith_core::percentile::percentile;
use kith_core::rng::Rng;
use kith_core::{EventInput, Node, NodeType, OwnerId, ScopeId, Timestamp};
use kith_store::postgres::{testing, PgOptions, PgStore, VectorCacheMode};
use kith_store::sqlite::{OpenMode, SqliteStore};
use kith_store::{LexicalQuery, SearchFilters, Store, TxMode, VectorQuery};

/// A random unit vector of `dim` dimensions (kith's one deterministic
/// generator, so both backends get the same data).
fn unit(rng: &mut Rng, dim: usize) -> Vec<f32> {
    let v: Vec<f32> = (0..dim).map(|_| rng.signed_unit()).collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / norm).collect()
}

/// A pronounceable made-up word for index `i`.
fn word(i: usize) -> String {
    const SYLLABLES: [&str; 16] = [
        "ka", "lo", "mi", "ru", "ten", "sa", "vo", "nir", "pa", "del", "qu", "zan", "bo", "fe",
        "gil", "tor",
    ];
    let mut w = String::new();
    let mut n = i + 16;
    while n > 0 {
        w.push_str(SYLLABLES[n % 16]);
        n /= 16;
    }
    w
}

struct Data {
    notes: Vec<(kith_core::Event, Node, Vec<f32>)>,
    lexical: Vec<String>,
    vectors: Vec<Vec<f32>>,
}

fn data(n: usize, dim: usize) -> Data {
    let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
    let vocab: Vec<String> = (0..3000).map(word).collect();
    let defaults = InputDefaults {
        owner_id: None,
        scope: ScopeId::personal(),
        now: Timestamp::parse("now", "2025-01-01T00:00:00Z").unwrap(),
    };
    let notes = (0..n)
        .map(|i| {
            let text: Vec<&str> = (0..12)
                .map(|_| vocab[rng.below(vocab.len())].as_str())
                .collect();
            let e = EventInput {
                content: text.join(" "),
                role: "user".into(),
                owner_id: Some("bench".into()),
                source_id: Some(format!("m{i}")),
                ..EventInput::default()
            }
            .validate(&defaults)
            .unwrap()
            .event;
            let node = Node::note_for(&e, NodeType::Note);
            (e, node, unit(&mut rng, dim))
        })
        .collect();
    let lexical = (0..200)
        .map(|_| {
            (0..3)
                .map(|_| vocab[rng.below(vocab.len())].clone())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let vectors = (0..100).map(|_| unit(&mut rng, dim)).collect();
    Data {
        notes,
        lexical,
        vectors,
    }
}

fn load(store: &dyn Store, d: &Data) -> Duration {
    let started = Instant::now();
    for chunk in d.notes.chunks(500) {
        let mut tx = store.begin(TxMode::Write).unwrap();
        for (e, n, v) in chunk {
            tx.insert_event(e).unwrap();
            tx.insert_node(n).unwrap();
            tx.put_embedding(n.id, "bench/model", v).unwrap();
        }
        tx.commit().unwrap();
    }
    started.elapsed()
}

/// Median, mean and p95 of per-query times, in milliseconds (percentiles
/// by the benchmarks' one rule, [`percentile`]).
fn summary(times: Vec<Duration>) -> String {
    let mut ms: Vec<f64> = times.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
    ms.sort_by(f64::total_cmp);
    let mean = ms.iter().sum::<f64>() / ms.len() as f64;
    format!(
        "median {:.2} ms, mean {:.2} ms, p95 {:.2} ms",
        percentile(&ms, 0.5),
        mean,
        percentile(&ms, 0.95)
    )
}

fn run(name: &str, store: &dyn Store, d: &Data, after_load: impl FnOnce()) {
    let owner = OwnerId::new("bench").unwrap();
    println!(
        "{name}: load {} notes in {:.1?}",
        d.notes.len(),
        load(store, d)
    );
    after_load();
    let mut hits = 0;
    let mut times = Vec::new();
    for text in &d.lexical {
        let q = LexicalQuery {
            common_share: None,
            owner: owner.clone(),
            text: text.clone(),
            filters: SearchFilters::default(),
            limit: 10,
        };
        let started = Instant::now();
        let mut tx = store.begin(TxMode::Read).unwrap();
        hits += tx.search_lexical(&q).unwrap().len();
        drop(tx);
        times.push(started.elapsed());
    }
    println!(
        "{name}: lexical ({} queries, {hits} hits): {}",
        times.len(),
        summary(times)
    );
    let mut times = Vec::new();
    let mut first = None;
    for v in &d.vectors {
        let q = VectorQuery {
            owner: owner.clone(),
            model: "bench/model".into(),
            vector: v.clone(),
            filters: SearchFilters::default(),
            limit: 10,
        };
        let started = Instant::now();
        let mut tx = store.begin(TxMode::Read).unwrap();
        let got = tx.search_vector(&q).unwrap();
        drop(tx);
        assert_eq!(got.len(), 10);
        if first.is_none() {
            first = Some(started.elapsed());
        } else {
            times.push(started.elapsed());
        }
    }
    println!(
        "{name}: vector (first {:.1?}; then {} queries): {}",
        first.unwrap_or_default(),
        times.len(),
        summary(times)
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map(|a| a.parse().unwrap()).unwrap_or(10_000);
    let dim: usize = args.next().map(|a| a.parse().unwrap()).unwrap_or(384);
    let d = data(n, dim);

    let dir = std::env::temp_dir().join(format!("kith-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sqlite = SqliteStore::open(&dir.join("kith.sqlite"), OpenMode::CreateIfMissing).unwrap();
    run("sqlite", &sqlite, &d, || ());
    drop(sqlite);
    std::fs::remove_dir_all(&dir).unwrap();

    let db = testing::test_database();
    // Like SQLite, answer vectors from an in-process copy, made by the first
    // query; KITH_PG_VECTOR_CACHE=off times pgvector's exact scan instead.
    let options = PgOptions::from_env_or(VectorCacheMode::Eager).unwrap();
    let pg = PgStore::connect_with(db.url(), options).unwrap();
    run("postgres", &pg, &d, || {
        // What autovacuum would do soon after a bulk load: planner
        // statistics. Without them the first plans join row by row.
        let mut c = postgres::Client::connect(db.url(), postgres::NoTls).unwrap();
        c.batch_execute("ANALYZE").unwrap();
    });
    if std::env::var_os("KITH_BENCH_KEEP").is_some() {
        // Keep the database for EXPLAIN ANALYZE by hand.
        println!("kept database {}", db.name());
        std::mem::forget(db);
    }
}
