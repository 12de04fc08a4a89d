//! `kill -9` of a running `kith forget --whole-owner` at random moments
//! (issue 15): the forget is one transaction, so after every kill either no
//! event or every event is a tombstone, and `kith doctor` reports a healthy
//! pack. Running the forget again then finishes it.

mod common;

use common::{KillTimer, TestPack};

const MESSAGES: usize = 3_000;

/// (tombstones, events) in the pack, via `kith export`.
fn tombstones(t: &TestPack) -> (usize, usize) {
    let export = t.ok(&["export"]);
    let lines: Vec<&str> = export.lines().collect();
    let gone = lines.iter().filter(|l| l.contains("\"forgotten\"")).count();
    (gone, lines.len())
}

#[test]
fn kill_9_during_forget_erases_all_or_nothing() {
    let mut timer = KillTimer::new();
    let (mut kills, mut before_commit, mut after_commit) = (0, 0, 0);
    for round in 0..6 {
        let t = TestPack::new();
        let file = t.path("m.jsonl");
        std::fs::write(&file, common::jsonl("forget", MESSAGES)).unwrap();
        t.ok(&["import", file.to_str().unwrap()]);
        let args = ["forget", "--whole-owner", "--reason", "close the account"];
        let (_, killed) = common::run_and_kill(&t, &args, timer.next(5, 1800));
        kills += usize::from(killed);
        let (gone, all) = tombstones(&t);
        assert_eq!(all, MESSAGES, "round {round}: the log lost events");
        assert!(
            gone == 0 || gone == MESSAGES,
            "round {round}: {gone} of {MESSAGES} forgotten: a forget is all or nothing"
        );
        if killed {
            if gone == 0 {
                before_commit += 1;
            } else {
                after_commit += 1;
            }
        }
        let doctor = t.run(&["doctor"]);
        assert!(
            doctor.status.success(),
            "round {round}: {}",
            String::from_utf8_lossy(&doctor.stdout)
        );
        // Finishing it: everything forgotten, compacted and verified.
        let out = t.ok(&["forget", "--whole-owner", "--reason", "close the account"]);
        assert!(!out.contains("NOT "), "round {round}: {out}");
        assert_eq!(tombstones(&t), (MESSAGES, MESSAGES), "round {round}");
        assert!(t.ok(&["doctor"]).starts_with("healthy"));
    }
    assert!(
        kills > 0,
        "the forget always finished before the kill; nothing was tested"
    );
    eprintln!("{kills} kills: {before_commit} before the commit, {after_commit} after");
}
