//! Reads messages from stdin, one a line, and prints what the offline
//! heuristic extracts from each: its claims and entities, before grounding.
//!
//! `cargo run -p kith-extract --example try_heuristic -- "Melanie" < lines.txt`
//! (the argument, optional, is the speaker's name).

use kith_extract::heuristic::HeuristicExtractor;

fn main() {
    let speaker = std::env::args().nth(1);
    let h = HeuristicExtractor::new();
    for line in std::io::stdin().lines() {
        let Ok(line) = line else { break };
        let e = h.extract_text(&line, speaker.as_deref());
        println!("{line}");
        for f in &e.facts {
            println!(
                "   {} | {} | {} | {:?}",
                f.subject, f.predicate, f.object, f.polarity
            );
        }
        let names: Vec<&str> = e.entities.iter().map(|x| x.name.as_str()).collect();
        println!("   entities: {names:?}");
    }
}
