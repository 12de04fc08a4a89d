//! Retrieval of what was said about a time: relative dates in turns read
//! against when they were said, relative dates in questions read against
//! when they are asked, and turns that say when for questions that ask
//! when. Vectors come from the hashing embedder.

use kith::embedding::EmbeddingSpec;
use kith::retrieve::fusion::PathKind;
use kith::{EventInput, Memory, RetrieveRequest};

fn memory() -> (tempfile::TempDir, Memory) {
    let dir = tempfile::tempdir().unwrap();
    let e = EmbeddingSpec::parse("hashing-256")
        .unwrap()
        .load()
        .unwrap()
        .unwrap();
    let m = Memory::init_with_embedder(&dir.path().join("p.kith"), e).unwrap();
    (dir, m)
}

fn said(session: &str, source: &str, when: &str, text: &str) -> EventInput {
    EventInput {
        owner_id: Some("ana".into()),
        session_id: Some(session.into()),
        speaker: Some("Ana".into()),
        source_id: Some(source.into()),
        event_time: Some(format!("{when}T13:00:00+00:00")),
        ..EventInput::new("user", text)
    }
}

/// Two runs told on different days: "last week" on Monday 12 June 2023
/// (5–11 June), and a plain one in March; plus filler after both.
fn runs() -> Vec<EventInput> {
    vec![
        said("s1", "1", "2023-03-20", "I ran a marathon by the sea."),
        said("s1", "2", "2023-03-20", "The weather was cold and grey."),
        said(
            "s2",
            "3",
            "2023-06-12",
            "Last week I ran a marathon by the river!",
        ),
        said("s2", "4", "2023-06-12", "My legs still hurt a bit."),
        said(
            "s3",
            "5",
            "2023-10-02",
            "Autumn is here, the trees are turning.",
        ),
        said("s3", "6", "2023-10-02", "We cooked soup with the kids."),
    ]
}

#[test]
fn a_turn_that_says_last_week_is_found_for_the_week_it_means() {
    let (_d, m) = memory();
    let r = m.store_batch(runs()).unwrap();
    let got = m
        .retrieve(&RetrieveRequest::new("ana", "Which marathon did I run on 7 June 2023?").unwrap())
        .unwrap();
    let top = &got.results[0];
    assert_eq!(top.provenance.event_id, r[2].event_id);
    let dated = top
        .trace
        .paths
        .iter()
        .find(|p| p.path == PathKind::Dated)
        .expect("found by the dated path");
    let via = dated.via.as_deref().unwrap_or("");
    assert!(
        via.contains("last week") && via.contains("2023-06-05"),
        "{via}"
    );
    // The March run was not said about that day.
    let march = got
        .results
        .iter()
        .find(|i| i.provenance.event_id == r[0].event_id);
    assert!(march.is_none_or(|i| !i.trace.has(PathKind::Dated)));
}

#[test]
fn a_month_in_the_question_is_the_latest_one_before_it_is_asked() {
    let (_d, m) = memory();
    let r = m.store_batch(runs()).unwrap();
    // Asked after the October session: "in March" is March 2023, and of
    // the two marathons only the one told then is about it.
    let got = m
        .retrieve(&RetrieveRequest::new("ana", "Which marathon did I run in March?").unwrap())
        .unwrap();
    let top = &got.results[0];
    assert_eq!(top.provenance.event_id, r[0].event_id);
    assert!(top.trace.has(PathKind::Dated));
    let june = got
        .results
        .iter()
        .find(|i| i.provenance.event_id == r[2].event_id)
        .expect("the June marathon matches the words");
    assert!(!june.trace.has(PathKind::Dated));
}

#[test]
fn last_week_in_the_question_is_read_against_the_newest_turn() {
    let (_d, m) = memory();
    let mut turns = runs();
    // The newest turn is on 12 June: "last week" asks about 5–11 June.
    turns.truncate(4);
    turns.push(said(
        "s2",
        "7",
        "2023-06-06",
        "We went to the river by bike.",
    ));
    turns.push(said("s3", "8", "2023-06-12", "Nothing else happened."));
    let r = m.store_batch(turns).unwrap();
    let got = m
        .retrieve(&RetrieveRequest::new("ana", "What did I do by the river last week?").unwrap())
        .unwrap();
    let dated: Vec<_> = got
        .results
        .iter()
        .filter(|i| i.trace.has(PathKind::Dated))
        .map(|i| i.provenance.event_id)
        .collect();
    // The bike ride (said on 6 June) and the marathon (said on 12 June
    // about last week) are about that week; the March run is not.
    assert!(dated.contains(&r[4].event_id), "{dated:?}");
    assert!(dated.contains(&r[2].event_id), "{dated:?}");
    assert!(!dated.contains(&r[0].event_id));
}

#[test]
fn a_question_that_asks_when_favours_the_turn_that_says_when() {
    let (_d, m) = memory();
    let r = m
        .store_batch(vec![
            said(
                "s1",
                "1",
                "2023-06-12",
                "The pottery class was so much fun.",
            ),
            said(
                "s1",
                "2",
                "2023-06-12",
                "I joined a pottery class yesterday.",
            ),
        ])
        .unwrap();
    let got = m
        .retrieve(&RetrieveRequest::new("ana", "When did I join the pottery class?").unwrap())
        .unwrap();
    let top = &got.results[0];
    assert_eq!(top.provenance.event_id, r[1].event_id);
    let b = top
        .trace
        .boosts
        .iter()
        .find(|b| b.name == "states_a_time")
        .expect("boosted for saying when");
    assert!(b.reason.contains("yesterday") && b.reason.contains("2023-06-11"));
    // The other turn says no time: no boost.
    let other = got
        .results
        .iter()
        .find(|i| i.provenance.event_id == r[0].event_id)
        .unwrap();
    assert!(other.trace.boosts.iter().all(|b| b.name != "states_a_time"));
}

/// The time a question is asked, when the caller knows it (`asked_at`),
/// is what its relative dates are read against: "a month ago", asked on
/// 18 April, is the charity walk of 19 March, not the bike ride of
/// 14 February that a month before the newest turn (19 March) would mean.
/// Turns go in through `ingest_batch` (the default heuristic extractor).
#[test]
fn relative_dates_in_the_question_are_read_against_when_it_is_asked() {
    let (_d, m) = memory();
    let turns = vec![
        said(
            "s1",
            "bike",
            "2023-02-14",
            "Just got back from the 24-Hour Bike Ride charity event today, four hours on the bike!",
        ),
        said("s1", "f1", "2023-02-14", "Can you suggest a recovery meal?"),
        said(
            "s2",
            "walk",
            "2023-03-19",
            "I did the Walk for Hunger charity event today with my colleagues, five kilometres.",
        ),
        said("s2", "f2", "2023-03-19", "What snacks are easy to prepare?"),
    ];
    let r = m
        .ingest_batch(turns, kith::IngestOptions::default())
        .unwrap();
    let (bike, walk) = (r[0].event_id, r[2].event_id);
    let q = "What charity event did I participate in a month ago?";
    let rank = |got: &kith::Retrieval, id| {
        got.results
            .iter()
            .position(|i| i.provenance.event_id == id)
            .map(|p| p + 1)
    };
    let mut req = RetrieveRequest::new("ana", q).unwrap();
    req.record = false;
    req.asked_at = Some(kith::Timestamp::parse("asked_at", "2023-04-18T18:34:00Z").unwrap());
    let asked = m.retrieve(&req).unwrap();
    assert_eq!(
        rank(&asked, walk),
        Some(1),
        "{:?}",
        asked.results[0].content
    );
    let dated = &asked.results[0].trace;
    assert!(dated.has(PathKind::Dated), "{dated:?}");
    assert!(!asked
        .results
        .iter()
        .any(|i| i.provenance.event_id == bike && i.trace.has(PathKind::Dated)));
    // Without it, "now" is the newest turn's time, and a month before
    // that is the bike ride's.
    req.asked_at = None;
    let newest = m.retrieve(&req).unwrap();
    assert_eq!(rank(&newest, bike), Some(1));
}

/// Days people write without a year ("on 2/8", "on February 15th") are
/// the nearest such day to when the turn was said, so a question about the
/// month finds them; a museum visit of another time does not count, nor
/// does half a cup.
#[test]
fn a_day_written_without_its_year_is_found_for_its_month() {
    let (_d, m) = memory();
    let r = m
        .store_batch(vec![
            said(
                "s1",
                "1",
                "2023-03-10",
                "I took my niece to the Natural History Museum on 2/8 and she loved the dinosaurs.",
            ),
            said(
                "s1",
                "2",
                "2023-03-10",
                "I also went to the Art Cube museum on February 15th.",
            ),
            said(
                "s1",
                "3",
                "2023-03-10",
                "We went to the Science Museum last summer.",
            ),
            said(
                "s1",
                "4",
                "2023-03-10",
                "Add 1/2 cup of sugar to the museum cake.",
            ),
            said(
                "s2",
                "5",
                "2023-10-02",
                "Autumn is here, the trees are turning.",
            ),
        ])
        .unwrap();
    let got = m
        .retrieve(&RetrieveRequest::new("ana", "Which museums did I visit in February?").unwrap())
        .unwrap();
    let dated = |i: usize| {
        got.results
            .iter()
            .find(|h| h.provenance.event_id == r[i].event_id)
            .is_some_and(|h| h.trace.has(PathKind::Dated))
    };
    assert!(dated(0), "on 2/8");
    assert!(dated(1), "on February 15th");
    assert!(!dated(2), "last summer is not February");
    assert!(!dated(3), "half a cup is no date");
    let top: Vec<_> = got.results[..2]
        .iter()
        .map(|h| h.provenance.event_id)
        .collect();
    assert!(
        top.contains(&r[0].event_id) && top.contains(&r[1].event_id),
        "{top:?}"
    );
}
