//! Prints MiniLM's throughput and single-query latency.
//!
//! `cargo run --release -p kith-embed --example embed_bench [THREADS] [f32|int8]`
//!
//! Embeds 1,000 generated sentences of realistic length (8–30 words, like
//! the facts and messages kith stores) in one call, and times one ~10-word
//! query 50 times. Installs the model into the default cache directory
//! first if it is missing.

use std::time::Instant;

/// CPU seconds used by this process so far (Linux; 0 elsewhere): on a
/// busy machine wall-clock times mostly measure the other processes.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the parenthesised command name; utime and stime are the
    // 14th and 15th fields of the line, in clock ticks (100 per second).
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: f64 =
        fields[11].parse::<f64>().unwrap_or(0.0) + fields[12].parse::<f64>().unwrap_or(0.0);
    ticks / 100.0
}

use kith_embed::{install, Embedder, MiniLm, Precision};

fn sentences(n: usize) -> Vec<String> {
    let subjects = [
        "Alice",
        "My brother Tom",
        "The new manager",
        "Priya",
        "Our neighbour",
        "Dr. Okafor",
        "The team",
        "Grandma",
    ];
    let verbs = [
        "moved to",
        "talked about",
        "is planning a trip to",
        "complained about",
        "started working at",
        "remembers",
        "bought a flat near",
        "wrote a long email about",
    ];
    let objects = [
        "Lisbon",
        "the quarterly budget review",
        "a small bakery on Rua Augusta",
        "the hospital in Porto",
        "her daughter's wedding next spring",
        "the broken dishwasher",
        "a startup that builds solar panels",
        "the conference in Berlin",
    ];
    let tails = [
        "",
        "last week",
        "because the rent went up again",
        "and said it was the best decision she ever made",
        "after a long discussion with everyone at dinner on Sunday evening",
        "(again!)",
        "in 2023, for about 3,500 euros a month",
        "although nobody really believed it would happen so quickly",
    ];
    (0..n)
        .map(|i| {
            format!(
                "{} {} {} {}",
                subjects[i % 8],
                verbs[(i / 8) % 8],
                objects[(i / 64) % 8],
                tails[(i * 7 + i / 3) % 8]
            )
            .trim()
            .to_string()
        })
        .collect()
}

fn main() {
    let threads: Option<usize> = std::env::args().nth(1).and_then(|a| a.parse().ok());
    let dir = MiniLm::locate(None).unwrap_or_else(|missing| {
        let dir = MiniLm::default_dir().expect("HOME is set");
        eprintln!("{missing}\ninstalling into {}", dir.display());
        install(&dir, &mut |done, total| eprint!("\r{done}/{total} bytes")).expect("install");
        eprintln!();
        dir
    });
    let started = Instant::now();
    let mut model = MiniLm::load(&dir).expect("load");
    println!("load: {:.0} ms", started.elapsed().as_secs_f64() * 1e3);
    if let Some(t) = threads {
        model = model.with_threads(t);
    }
    if let Some(p) = std::env::args().nth(2) {
        model = model.with_precision(Precision::parse(&p).expect("f32 or int8"));
    }
    println!("{model:?}");

    let texts = sentences(1000);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let tokens: usize = refs.iter().map(|t| model.tokenizer().encode(t).len()).sum();
    model.embed(&refs[..64]).expect("warm-up");
    let (started, cpu) = (Instant::now(), cpu_seconds());
    let vectors = model.embed(&refs).expect("embed");
    let secs = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu;
    assert_eq!(vectors.len(), refs.len());
    println!(
        "batch: {} sentences ({:.1} tokens each) in {:.2} s = {:.0} sentences/s \
         ({:.2} CPU-s = {:.0} sentences per CPU-second)",
        refs.len(),
        tokens as f64 / refs.len() as f64,
        secs,
        refs.len() as f64 / secs,
        cpu,
        refs.len() as f64 / cpu
    );

    let query = "where does my brother live now and what does he do";
    let cpu = cpu_seconds();
    let mut times: Vec<f64> = (0..50)
        .map(|_| {
            let started = Instant::now();
            model.embed(&[query]).expect("embed");
            started.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    let cpu_ms = (cpu_seconds() - cpu) * 1e3 / 50.0;
    times.sort_by(f64::total_cmp);
    println!(
        "single query ({} tokens): median {:.2} ms, p90 {:.2} ms, min {:.2} ms ({:.1} CPU-ms each)",
        model.tokenizer().encode(query).len(),
        times[25],
        times[45],
        times[0],
        cpu_ms
    );
}
