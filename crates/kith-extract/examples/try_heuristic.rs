use kith_extract::heuristic::HeuristicExtractor;
fn main() {
    let h = HeuristicExtractor::new();
    for line in std::io::stdin().lines() {
        let line = line.unwrap();
        let e = h.extract_text(&line, Some("Maria"));
        println!("{line}");
        for f in &e.facts {
            println!(
                "   {} | {} | {} | {:?}",
                f.subject, f.predicate, f.object, f.polarity
            );
        }
        println!(
            "   entities: {:?}",
            e.entities
                .iter()
                .map(|x| x.name.as_str())
                .collect::<Vec<_>>()
        );
    }
}
