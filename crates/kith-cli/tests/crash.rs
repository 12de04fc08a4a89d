//! `kill -9` of a running `kith import` at random moments, repeated: every
//! event whose id was acknowledged is there and `kith doctor` reports a
//! healthy pack. Re-running the import then completes it without duplicates.

mod common;

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::TestPack;

const MESSAGES: usize = 20_000;

#[test]
fn kill_9_during_import_loses_nothing_acknowledged() {
    let t = TestPack::new();
    let file = t.path("big.jsonl");
    std::fs::write(&file, common::jsonl("crash", MESSAGES)).unwrap();
    let mut seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(7)
        | 1;
    let mut acknowledged: HashSet<String> = HashSet::new();
    let mut kills = 0;
    for round in 0..6 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let delay = Duration::from_millis(20 + seed % 400);
        let mut child = t
            .cmd(&[
                "--json",
                "import",
                file.to_str().unwrap(),
                "--batch-size",
                "50",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let acked = Arc::new(Mutex::new(Vec::<String>::new()));
        let sink = Arc::clone(&acked);
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else {
                    continue;
                };
                if let Some(ids) = v["committed"].as_array() {
                    let mut sink = sink.lock().unwrap();
                    sink.extend(ids.iter().filter_map(|i| i.as_str().map(String::from)));
                }
            }
        });
        std::thread::sleep(delay);
        let finished = child.try_wait().unwrap().is_some();
        if !finished {
            child.kill().unwrap(); // SIGKILL
            kills += 1;
        }
        child.wait().unwrap();
        reader.join().unwrap();
        acknowledged.extend(acked.lock().unwrap().drain(..));

        let present: HashSet<String> = common::exported_ids(&t).into_iter().collect();
        let missing: Vec<&String> = acknowledged.difference(&present).collect();
        assert!(
            missing.is_empty(),
            "round {round}: {} acknowledged events lost",
            missing.len()
        );
        let doctor = t.run(&["doctor"]);
        assert!(
            doctor.status.success(),
            "round {round}: {}",
            String::from_utf8_lossy(&doctor.stdout)
        );
    }
    assert!(
        kills > 0,
        "the import always finished before the kill; nothing was tested"
    );

    // Finishing the import completes the log exactly once.
    t.ok(&["import", file.to_str().unwrap()]);
    let ids = common::exported_ids(&t);
    assert_eq!(ids.len(), MESSAGES);
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), MESSAGES);
    assert!(t
        .ok(&["doctor"])
        .starts_with("healthy: 20000 events verified"));
}
