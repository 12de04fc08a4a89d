//! Search v0: BM25 with provenance, always filtered by owner.

mod common;

use common::pack;
use kith::{EventInput, Memory, NodeType, Role, SearchRequest, Timestamp};

fn turn(session: &str, role: &str, speaker: Option<&str>, time: &str, text: &str) -> EventInput {
    EventInput {
        owner_id: Some("maya".into()),
        session_id: Some(session.into()),
        speaker: speaker.map(Into::into),
        event_time: Some(time.into()),
        ..EventInput::new(role, text)
    }
}

fn conversation() -> (tempfile::TempDir, Memory) {
    let (tmp, _dir, memory) = pack();
    memory
        .store_batch(vec![
            turn(
                "s1",
                "user",
                Some("Maya"),
                "2025-03-04T19:02:00Z",
                "I work at Northwind Analytics in Leeds.",
            ),
            turn(
                "s1",
                "participant",
                Some("Jordan"),
                "2025-03-04T19:04:00Z",
                "I am vegetarian and I hate cilantro.",
            ),
            turn(
                "s1",
                "assistant",
                None,
                "2025-03-04T19:05:00Z",
                "Noted: a vegetarian dinner without cilantro.",
            ),
            turn(
                "s2",
                "user",
                Some("Maya"),
                "2025-08-09T21:33:00+01:00",
                "I left Northwind and started working at Brightpath Labs.",
            ),
            turn(
                "s2",
                "user",
                Some("Maya"),
                "2025-08-09T21:39:00+01:00",
                "We are moving to Lisbon in September.",
            ),
            EventInput {
                owner_id: Some("jordan".into()),
                ..EventInput::new(
                    "user",
                    "I work at Northwind Analytics too, Northwind Northwind.",
                )
            },
        ])
        .unwrap();
    (tmp, memory)
}

fn search(memory: &Memory, f: impl FnOnce(&mut SearchRequest)) -> Vec<String> {
    let mut req = SearchRequest::new("maya", "Northwind vegetarian cilantro Lisbon work").unwrap();
    f(&mut req);
    memory
        .search(&req)
        .unwrap()
        .into_iter()
        .map(|h| h.content)
        .collect()
}

#[test]
fn hits_carry_provenance_and_rank_by_bm25() {
    let (_t, memory) = conversation();
    let hits = memory
        .search(&SearchRequest::new("maya", "Where does Maya work? Northwind").unwrap())
        .unwrap();
    assert_eq!(hits.len(), 2);
    // "work" and "Northwind" both match the first turn; the second matches
    // "Northwind" and, through porter stemming, "working".
    let first = &hits[0];
    assert_eq!(first.rank, 1);
    assert!(first.score >= hits[1].score);
    let p = &first.provenance;
    assert_eq!(p.role, Role::User);
    assert_eq!(p.speaker.as_deref(), Some("Maya"));
    assert!(p.session_id.is_some());
    assert!(p.event_time.is_some());
    let event = memory
        .event(&kith::OwnerId::new("maya").unwrap(), p.event_id)
        .unwrap();
    assert_eq!(event.event.content, first.content);
}

#[test]
fn never_crosses_owners() {
    let (_t, memory) = conversation();
    let all = search(&memory, |_| {});
    assert_eq!(all.len(), 5);
    assert!(all.iter().all(|c| !c.contains("too")), "{all:?}");
    let jordan = memory
        .search(&SearchRequest::new("jordan", "Lisbon vegetarian").unwrap())
        .unwrap();
    assert!(jordan.is_empty());
}

#[test]
fn filters_by_session_role_time_and_type() {
    let (_t, memory) = conversation();
    let s2 = search(&memory, |r| {
        r.filters.session = Some(kith::SessionId::new("s2").unwrap())
    });
    assert_eq!(s2.len(), 2);
    let assistant = search(&memory, |r| r.filters.roles = vec![Role::Assistant]);
    assert_eq!(
        assistant,
        vec!["Noted: a vegetarian dinner without cilantro.".to_string()]
    );
    let participants = search(&memory, |r| {
        r.filters.roles = vec![Role::Participant, Role::Assistant]
    });
    assert_eq!(participants.len(), 2);
    let march = search(&memory, |r| {
        r.filters.time_from = Some(Timestamp::parse("from", "2025-03-04T19:03:00Z").unwrap());
        r.filters.time_to = Some(Timestamp::parse("to", "2025-08-09T20:35:00Z").unwrap());
    });
    // 19:04 and 19:05 in March, and 21:33+01:00 = 20:33Z in August.
    assert_eq!(march.len(), 3, "{march:?}");
    let facts = search(&memory, |r| r.filters.node_types = vec![NodeType::Fact]);
    assert!(facts.is_empty());
    let scoped = search(&memory, |r| {
        r.filters.scope = Some(kith::ScopeId::new("work").unwrap())
    });
    assert!(scoped.is_empty());
    let limited = search(&memory, |r| r.limit = 2);
    assert_eq!(limited.len(), 2);
}

#[test]
fn stopword_only_and_syntax_queries_are_safe() {
    let (_t, memory) = conversation();
    for q in [
        "what is it?",
        "",
        "\"",
        "NEAR(a b)",
        "work*",
        "-Leeds",
        "col:umn",
        "a AND OR NOT",
    ] {
        memory
            .search(&SearchRequest::new("maya", q).unwrap())
            .unwrap_or_else(|e| panic!("{q:?}: {e}"));
    }
}
