//! `kill -9` of a running `kith import` at random moments, repeated: every
//! event whose id was acknowledged is there and `kith doctor` reports a
//! healthy pack. Re-running the import then completes it without duplicates.

mod common;

use std::collections::HashSet;

use common::{KillTimer, TestPack};

const MESSAGES: usize = 20_000;

#[test]
fn kill_9_during_import_loses_nothing_acknowledged() {
    let t = TestPack::new();
    let file = t.path("big.jsonl");
    std::fs::write(&file, common::jsonl("crash", MESSAGES)).unwrap();
    let file = file.to_str().unwrap();
    let mut timer = KillTimer::new();
    let mut acknowledged: HashSet<String> = HashSet::new();
    let mut kills = 0;
    for round in 0..6 {
        let args = ["--json", "import", file, "--batch-size", "50"];
        let (acked, killed) = common::run_and_kill(&t, &args, timer.next(20, 400));
        acknowledged.extend(acked);
        kills += usize::from(killed);

        let present: HashSet<String> = common::exported_ids(&t).into_iter().collect();
        let missing = acknowledged.difference(&present).count();
        assert_eq!(missing, 0, "round {round}: acknowledged events lost");
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
    t.ok(&["import", file]);
    let ids = common::exported_ids(&t);
    assert_eq!(ids.len(), MESSAGES);
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), MESSAGES);
    assert!(t
        .ok(&["doctor"])
        .starts_with("healthy: 20000 events verified"));
}
