//! Identity through `ingest`: who "I" is, and what repeats or replaces
//! what. Extraction replies are recorded and served over real HTTP by the
//! replay server; each test names the reference-notes scenario (§8) or the
//! rule it guards.

mod common;

use kith::identity::IdentityOptions;
use kith::{EdgeType, EventInput, IngestOptions, Memory, Node, NodeQuery, NodeType, OwnerId};
use kith_extract::replay::ReplayServer;
use serde_json::{json, Value};

fn fact(subject: &str, predicate: &str, object: &str, quote: &str) -> Value {
    json!({"subject": subject, "predicate": predicate, "object": object, "polarity": "positive",
           "evidence_quote": quote, "fact_type": "fact", "epistemic_type": "asserted",
           "temporal_intent": null, "replaces_object": null, "condition": null, "confidence": 0.9})
}

fn with(mut v: Value, key: &str, value: Value) -> Value {
    v[key] = value;
    v
}

fn person(name: &str) -> Value {
    json!({"name": name, "entity_type": "person"})
}

fn org(name: &str) -> Value {
    json!({"name": name, "entity_type": "organization"})
}

/// A memory whose LLM is the replay server answering `rules` (message
/// substring → extraction).
fn memory(
    rules: Vec<(&str, Value)>,
    options: IdentityOptions,
) -> (tempfile::TempDir, Memory, ReplayServer) {
    let (tmp, _dir, m) = common::pack();
    let (m, server) = common::with_recorded_replies(m, rules);
    (tmp, m.with_identity(options), server)
}

fn say(m: &Memory, text: &str, speaker: Option<&str>, time: &str) -> kith::IngestReceipt {
    let r = m
        .ingest(
            EventInput {
                owner_id: Some("owner".into()),
                speaker: speaker.map(Into::into),
                session_id: Some("s1".into()),
                event_time: Some(time.into()),
                ..EventInput::new("user", text)
            },
            IngestOptions::default(),
        )
        .unwrap();
    assert_eq!(
        r.status,
        kith::WorkStatus::Complete,
        "{text}: {:?}",
        r.error
    );
    r
}

fn all(m: &Memory) -> Vec<Node> {
    m.nodes(&NodeQuery {
        owner: Some(OwnerId::new("owner").unwrap()),
        ..NodeQuery::default()
    })
    .unwrap()
    .into_iter()
    .map(|s| s.node)
    .filter(|n| n.node_type != NodeType::Note)
    .collect()
}

fn claims(m: &Memory, predicate: &str) -> Vec<Node> {
    all(m)
        .into_iter()
        .filter(|n| n.node_type != NodeType::Entity)
        .filter(|n| {
            n.metadata
                .as_ref()
                .is_some_and(|md| md["predicate"] == predicate)
        })
        .collect()
}

fn entities(m: &Memory, content: &str) -> Vec<Node> {
    all(m)
        .into_iter()
        .filter(|n| n.node_type == NodeType::Entity && n.content == content)
        .collect()
}

fn has_fact_from(m: &Memory, claim: &Node) -> Vec<uuid::Uuid> {
    let mut tx = m.store_backend().begin(kith_store::TxMode::Read).unwrap();
    tx.edges_of(claim.id)
        .unwrap()
        .into_iter()
        .filter(|e| e.edge_type == EdgeType::HasFact && e.target_id == claim.id)
        .map(|e| e.source_id)
        .collect()
}

fn dana_rules() -> Vec<(&'static str, Value)> {
    vec![
        (
            "I work at Northwind.",
            json!({"entities": [org("Northwind")],
                   "facts": [with(fact("I", "works_at", "Northwind", "I work at Northwind."),
                                  "object_entity_type", json!("organization"))]}),
        ),
        (
            "I left Northwind",
            json!({"entities": [org("Northwind"), org("Brightpath")],
            "facts": [
                with(with(with(fact("I", "works_at", "Northwind",
                    "I left Northwind and now work at Brightpath."),
                    "polarity", json!("negative")), "temporal_intent", json!("update")),
                    "object_entity_type", json!("organization")),
                with(with(with(fact("I", "works_at", "Brightpath",
                    "I left Northwind and now work at Brightpath."),
                    "temporal_intent", json!("update")), "replaces_object", json!("Northwind")),
                    "object_entity_type", json!("organization"))
            ]}),
        ),
    ]
}

/// §8.9 with speaker references on: one Dana, the Northwind claim superseded.
#[test]
fn speaker_dana_changes_jobs() {
    let (_t, m, _s) = memory(dana_rules(), IdentityOptions::default());
    say(
        &m,
        "I work at Northwind.",
        Some("Dana"),
        "2025-01-01T09:00:00Z",
    );
    say(
        &m,
        "I left Northwind and now work at Brightpath.",
        Some("Dana"),
        "2025-03-01T09:00:00Z",
    );
    let dana = entities(&m, "Dana");
    assert_eq!(dana.len(), 1, "one person entity for the speaker");
    assert_eq!(dana[0].metadata.as_ref().unwrap()["entity_type"], "person");
    assert!(
        entities(&m, "I").is_empty(),
        "no event-local I when the speaker binds"
    );

    let works = claims(&m, "works_at");
    let first = works
        .iter()
        .find(|c| c.content == "I work at Northwind.")
        .expect("first claim");
    assert_eq!(first.lifecycle, kith::Lifecycle::Superseded);
    assert!(first.superseded_by.is_some());
    let by = first.superseded_by.unwrap();
    assert!(works.iter().any(|c| c.id == by && c.lifecycle.is_active()));
    // The claim keeps the literal pronoun; metadata says who bound it.
    let m0 = first.metadata.as_ref().unwrap();
    assert_eq!(m0["subject"], "I");
    assert_eq!(m0["speaker_reference"]["speaker"], "Dana");
    assert_eq!(m0["speaker_reference"]["fields"], json!(["subject"]));
    assert_eq!(m0["speaker_reference"]["basis"], "speaker");
    // HAS_FACT from Dana to every claim.
    for c in &works {
        assert_eq!(has_fact_from(&m, c), vec![dana[0].id]);
    }
}

/// §8.9 with speaker references off: two event-local I's, nothing superseded.
#[test]
fn speaker_references_off_keeps_i_local() {
    let off = IdentityOptions {
        speaker_references: false,
        ..IdentityOptions::default()
    };
    let (_t, m, _s) = memory(dana_rules(), off);
    say(
        &m,
        "I work at Northwind.",
        Some("Dana"),
        "2025-01-01T09:00:00Z",
    );
    say(
        &m,
        "I left Northwind and now work at Brightpath.",
        Some("Dana"),
        "2025-03-01T09:00:00Z",
    );
    assert_eq!(entities(&m, "I").len(), 2);
    assert!(entities(&m, "Dana").is_empty());
    assert!(claims(&m, "works_at")
        .iter()
        .all(|c| c.lifecycle.is_active()));
}

/// §8.10: "We" stays local; "Sam called me." binds the object to the speaker.
#[test]
fn plural_stays_local_and_objects_bind() {
    let rules = vec![
        (
            "We went camping.",
            json!({"facts": [fact("We", "went", "camping", "We went camping.")]}),
        ),
        (
            "Sam called me.",
            json!({"entities": [person("Sam")],
                   "facts": [with(fact("Sam", "called", "me", "Sam called me."), "subject_entity_type", json!("person"))]}),
        ),
    ];
    let (_t, m, _s) = memory(rules, IdentityOptions::default());
    say(&m, "We went camping.", Some("Dana"), "2025-01-01T09:00:00Z");
    say(&m, "Sam called me.", Some("Dana"), "2025-01-02T09:00:00Z");
    let we = entities(&m, "we");
    assert_eq!(we.len(), 1);
    assert_eq!(
        we[0].metadata.as_ref().unwrap()["identity_status"],
        "unresolved_reference"
    );
    let called = &claims(&m, "called")[0];
    let md = called.metadata.as_ref().unwrap();
    assert_eq!(md["speaker_reference"]["fields"], json!(["object"]));
    let dana = entities(&m, "Dana")[0].id;
    let mut tx = m.store_backend().begin(kith_store::TxMode::Read).unwrap();
    let edges = tx.edges_of(called.id).unwrap();
    assert!(edges
        .iter()
        .any(|e| e.edge_type == EdgeType::Mentions && e.target_id == dana));
}

/// §8.11: the same preference twice merges: the earlier is superseded and
/// the later carries both events as evidence.
#[test]
fn repeated_claims_merge() {
    let x = json!({"facts": [with(fact("I", "prefers", "Python", "I prefer Python."), "fact_type", json!("preference"))]});
    let (_t, m, _s) = memory(vec![("I prefer Python.", x)], IdentityOptions::default());
    let a = say(&m, "I prefer Python.", Some("Dana"), "2025-01-01T09:00:00Z");
    let b = say(&m, "I prefer Python.", Some("Dana"), "2025-02-01T09:00:00Z");
    let prefs = claims(&m, "prefers");
    assert_eq!(prefs.len(), 2);
    let old = prefs
        .iter()
        .find(|c| c.evidence_refs == vec![a.event_id])
        .unwrap();
    let new = prefs.iter().find(|c| c.evidence_refs.len() == 2).unwrap();
    assert_eq!(old.lifecycle, kith::Lifecycle::Superseded);
    assert_eq!(old.superseded_by, Some(new.id));
    assert_eq!(new.evidence_refs, vec![a.event_id, b.event_id]);
    assert_eq!(
        new.metadata.as_ref().unwrap()["merged_claim_ids"],
        json!([old.id.to_string()])
    );
    // With merging off, both stay current.
    let x = json!({"facts": [with(fact("I", "prefers", "Python", "I prefer Python."), "fact_type", json!("preference"))]});
    let off = IdentityOptions {
        claim_merge: false,
        ..IdentityOptions::default()
    };
    let (_t2, m2, _s2) = memory(vec![("I prefer Python.", x)], off);
    say(
        &m2,
        "I prefer Python.",
        Some("Dana"),
        "2025-01-01T09:00:00Z",
    );
    say(
        &m2,
        "I prefer Python.",
        Some("Dana"),
        "2025-02-01T09:00:00Z",
    );
    assert!(claims(&m2, "prefers")
        .iter()
        .all(|c| c.lifecycle.is_active()));
}

/// §8.6: without a speaker, each event keeps its own I, linked to both of
/// its facts, and nothing merges across events.
#[test]
fn speakerless_i_is_event_local() {
    let quote = "I prefer tea and I drink tea.";
    let x = json!({"facts": [
        with(fact("I", "prefers", "tea", quote), "fact_type", json!("preference")),
        fact("I", "drinks", "tea", quote)
    ]});
    let (_t, m, _s) = memory(vec![(quote, x)], IdentityOptions::default());
    let a = say(&m, quote, None, "2025-01-01T09:00:00Z");
    let b = say(&m, quote, None, "2025-01-02T09:00:00Z");
    let is = entities(&m, "I");
    assert_eq!(is.len(), 2);
    assert_ne!(is[0].id, is[1].id);
    for (i, r) in is.iter().zip([a.event_id, b.event_id]) {
        assert_eq!(
            i.metadata.as_ref().unwrap()["reference_event_id"],
            r.to_string()
        );
    }
    for c in claims(&m, "prefers")
        .iter()
        .chain(claims(&m, "drinks").iter())
    {
        assert!(c.lifecycle.is_active());
        let from = has_fact_from(&m, c);
        assert_eq!(from.len(), 1);
        assert!(is.iter().any(|i| i.id == from[0]));
    }
}

/// §8.5: US/country and IT/technology are names: one entity across events.
#[test]
fn named_readings_of_pronoun_words() {
    let quote = "IT runs the US office.";
    let x = json!({"entities": [{"name": "US", "entity_type": "country"}, {"name": "IT", "entity_type": "technology"}],
                   "facts": [with(with(fact("IT", "runs_office_in", "US", quote), "subject_entity_type", json!("technology")),
                                  "object_entity_type", json!("country"))]});
    let (_t, m, _s) = memory(vec![(quote, x)], IdentityOptions::default());
    say(&m, quote, None, "2025-01-01T09:00:00Z");
    say(&m, quote, None, "2025-01-02T09:00:00Z");
    assert_eq!(entities(&m, "US").len(), 1);
    assert_eq!(entities(&m, "IT").len(), 1);
    assert!(entities(&m, "I").is_empty() && entities(&m, "it").is_empty());
}

/// Self-introductions bind a speakerless user turn's I to the listed person.
#[test]
fn self_introduction_binds_i() {
    let text = "Hi, I am Alex Rivera. I like tea.";
    let x = json!({"entities": [person("Alex Rivera")],
                   "facts": [with(fact("I", "likes", "tea", "I like tea."), "fact_type", json!("preference"))]});
    let (_t, m, _s) = memory(vec![(text, x)], IdentityOptions::default());
    say(&m, text, None, "2025-01-01T09:00:00Z");
    let alex = entities(&m, "Alex Rivera");
    assert_eq!(alex.len(), 1);
    let like = &claims(&m, "likes")[0];
    assert_eq!(has_fact_from(&m, like), vec![alex[0].id]);
    assert_eq!(
        like.metadata.as_ref().unwrap()["speaker_reference"]["basis"],
        "self_introduction"
    );
    assert!(entities(&m, "I").is_empty());
}

/// A possessive is no introduction, and a pasted quote in the first person
/// never becomes the owner's claim: it is the claim of the person the
/// quote is given to (`kith_ingest_v9`).
#[test]
fn possessives_bind_nobody_and_a_quote_binds_its_writer() {
    let text = "I am Jordan's partner. Jordan wrote: 'I hate sushi'.";
    let x = json!({"entities": [person("Jordan")],
                   "facts": [with(fact("I", "likes", "sushi", "Jordan wrote: 'I hate sushi'."), "polarity", json!("negative"))]});
    let (_t, m, _s) = memory(vec![(text, x)], IdentityOptions::default());
    say(&m, text, None, "2025-01-01T09:00:00Z");
    let hate = &claims(&m, "likes")[0];
    let jordan = persons(&m, "Jordan");
    assert_eq!(jordan.len(), 1);
    assert_eq!(has_fact_from(&m, hate), vec![jordan[0].id]);
    assert!(entities(&m, "I").is_empty(), "no I entity is made");
    assert_eq!(
        hate.metadata.as_ref().unwrap()["speaker_reference"],
        json!({"speaker": "Jordan", "fields": ["subject"], "basis": "quoted_speaker"})
    );
}

/// first_person_owner binds a user turn's I to the owner's reference
/// entity, and is refused with a speaker or on another role.
#[test]
fn first_person_owner() {
    let text = "I prefer trains to flights.";
    let x = json!({"facts": [with(fact("I", "prefers", "trains", text), "fact_type", json!("preference"))]});
    let (_t, m, _s) = memory(vec![(text, x)], IdentityOptions::default());
    let fpo = IngestOptions {
        first_person_owner: true,
        ..IngestOptions::default()
    };
    let input = |role: &str, speaker: Option<&str>, source: &str| EventInput {
        owner_id: Some("owner".into()),
        speaker: speaker.map(Into::into),
        source_id: Some(source.into()),
        ..EventInput::new(role, text)
    };
    m.ingest(input("user", None, "a"), fpo).unwrap();
    m.ingest(input("user", None, "b"), fpo).unwrap();
    let me = entities(&m, "I");
    assert_eq!(me.len(), 1, "one owner reference per owner and scope");
    assert_eq!(
        me[0].metadata.as_ref().unwrap()["identity_status"],
        "owner_reference"
    );
    // The repeat merged onto the owner.
    assert_eq!(
        claims(&m, "prefers")
            .iter()
            .filter(|c| c.lifecycle.is_active())
            .count(),
        1
    );
    let before = common::snapshot(&m, "owner");
    for (role, speaker, source) in [("user", Some("Dana"), "c"), ("assistant", None, "d")] {
        let err = m.ingest(input(role, speaker, source), fpo).unwrap_err();
        assert_eq!(err.kind(), kith::ErrorKind::InvalidInput, "{err}");
        assert!(
            err.to_string()
                .starts_with("first_person_owner is set on a turn with"),
            "{err}"
        );
    }
    // A batch is checked whole: one bad turn refuses all of it.
    let batch = vec![input("user", None, "e"), input("user", Some("Dana"), "f")];
    let err = m.ingest_batch(batch, fpo).unwrap_err();
    assert_eq!(err.kind(), kith::ErrorKind::InvalidInput, "{err}");
    assert_eq!(common::snapshot(&m, "owner"), before);
}

fn say_in(
    m: &Memory,
    text: &str,
    speaker: Option<&str>,
    role: &str,
    scope: &str,
) -> kith::IngestReceipt {
    let r = m
        .ingest(
            EventInput {
                owner_id: Some("owner".into()),
                speaker: speaker.map(Into::into),
                scope: Some(scope.into()),
                ..EventInput::new(role, text)
            },
            IngestOptions::default(),
        )
        .unwrap();
    assert_eq!(
        r.status,
        kith::WorkStatus::Complete,
        "{text}: {:?}",
        r.error
    );
    r
}

fn carry_rules() -> Vec<(&'static str, Value)> {
    vec![
        (
            "I work at Northwind.",
            json!({"entities": [org("Northwind")],
                   "facts": [with(fact("I", "works_at", "Northwind", "I work at Northwind."),
                                  "object_entity_type", json!("organization"))]}),
        ),
        (
            "I prefer trains to flights.",
            json!({"facts": [with(fact("I", "prefers", "trains", "I prefer trains to flights."),
                                  "fact_type", json!("preference"))]}),
        ),
        (
            "Jordan wrote: 'I hate sushi'.",
            json!({"entities": [person("Jordan")],
                   "facts": [with(fact("I", "likes", "sushi", "Jordan wrote: 'I hate sushi'."),
                                  "polarity", json!("negative"))]}),
        ),
    ]
}

/// Owner name carry: a user turn that names nobody binds to the newest
/// person a user turn created under the owner's name.
#[test]
fn owner_name_is_carried_to_later_user_turns() {
    let (_t, m, _s) = memory(carry_rules(), IdentityOptions::default());
    say_in(
        &m,
        "I work at Northwind.",
        Some("Maya Okafor"),
        "user",
        "personal",
    );
    let maya = &entities(&m, "Maya Okafor")[0];
    assert_eq!(maya.metadata.as_ref().unwrap()["owner_name"], true);

    say_in(&m, "I prefer trains to flights.", None, "user", "personal");
    let trains = &claims(&m, "prefers")[0];
    assert_eq!(has_fact_from(&m, trains), vec![maya.id]);
    let md = trains.metadata.as_ref().unwrap();
    assert_eq!(md["speaker_reference"]["basis"], "owner_name");
    assert_eq!(md["subject"], "I", "the claim keeps its wording");
    assert!(entities(&m, "I").is_empty());

    // A quoted first person in a turn that names someone is not the owner's.
    say_in(
        &m,
        "Jordan wrote: 'I hate sushi'.",
        None,
        "user",
        "personal",
    );
    let sushi = &claims(&m, "likes")[0];
    assert_eq!(has_fact_from(&m, sushi), vec![persons(&m, "Jordan")[0].id]);
    assert!(entities(&m, "I").is_empty());
}

#[test]
fn owner_name_carry_has_limits() {
    let (_t, m, _s) = memory(carry_rules(), IdentityOptions::default());
    say_in(
        &m,
        "I work at Northwind.",
        Some("Maya Okafor"),
        "user",
        "personal",
    );
    // Not for a participant's turn, and not across scopes.
    say_in(
        &m,
        "I prefer trains to flights.",
        None,
        "participant",
        "personal",
    );
    say_in(&m, "I prefer trains to flights.", None, "user", "work");
    assert_eq!(entities(&m, "I").len(), 2);
    // A participant's named turn never marks the owner's name.
    say_in(
        &m,
        "I work at Northwind.",
        Some("Jordan Lee"),
        "participant",
        "personal",
    );
    assert!(entities(&m, "Jordan Lee")[0]
        .metadata
        .as_ref()
        .unwrap()
        .get("owner_name")
        .is_none());
    // Off: the I stays local.
    let off = IdentityOptions {
        owner_name_carry: false,
        ..IdentityOptions::default()
    };
    let (_t2, m2, _s2) = memory(carry_rules(), off);
    say_in(
        &m2,
        "I work at Northwind.",
        Some("Maya Okafor"),
        "user",
        "personal",
    );
    say_in(&m2, "I prefer trains to flights.", None, "user", "personal");
    assert!(entities(&m2, "Maya Okafor")[0]
        .metadata
        .as_ref()
        .unwrap()
        .get("owner_name")
        .is_none());
    assert_eq!(entities(&m2, "I").len(), 1);
}

/// A, then B, then A again keeps B: A's entity is not marked a second time.
#[test]
fn later_names_replace_earlier_ones() {
    let (_t, m, _s) = memory(carry_rules(), IdentityOptions::default());
    say_in(&m, "I work at Northwind.", Some("Ann"), "user", "personal");
    say_in(&m, "I work at Northwind.", Some("Bea"), "user", "personal");
    say_in(&m, "I work at Northwind.", Some("Ann"), "user", "personal");
    say_in(&m, "I prefer trains to flights.", None, "user", "personal");
    let bea = &entities(&m, "Bea")[0];
    assert_eq!(has_fact_from(&m, &claims(&m, "prefers")[0]), vec![bea.id]);
}

fn ingest_as(m: &Memory, owner: &str, scope: &str, text: &str) -> kith::IngestReceipt {
    let r = m
        .ingest(
            EventInput {
                owner_id: Some(owner.into()),
                scope: Some(scope.into()),
                ..EventInput::new("user", text)
            },
            IngestOptions::default(),
        )
        .unwrap();
    assert_eq!(
        r.status,
        kith::WorkStatus::Complete,
        "{text}: {:?}",
        r.error
    );
    r
}

fn entity_ids(m: &Memory, owner: &str, name_lower: &str) -> Vec<uuid::Uuid> {
    m.nodes(&NodeQuery {
        owner: Some(OwnerId::new(owner).unwrap()),
        node_types: vec![NodeType::Entity],
        ..NodeQuery::default()
    })
    .unwrap()
    .into_iter()
    .map(|s| s.node)
    .filter(|n| n.content.trim().to_lowercase() == name_lower)
    .map(|n| n.id)
    .collect()
}

/// §8.1: "  Aster  "/organization behind 260 other entities; a later
/// "aster"/organization is the same node, and no new one is made.
#[test]
fn named_entities_are_reused_by_trimmed_lower_case_name_and_type() {
    let mut rules = vec![
        (
            "Aster opened.",
            json!({"entities": [{"name": "  Aster  ", "entity_type": "organization"}]}),
        ),
        (
            "aster again.",
            json!({"entities": [{"name": "aster", "entity_type": "organization"}]}),
        ),
    ];
    let many: Vec<Value> = (0..260)
        .map(|i| json!({"name": format!("Company {i}"), "entity_type": "organization"}))
        .collect();
    rules.push(("Many companies.", json!({"entities": many})));
    let (_t, m, _s) = memory(rules, IdentityOptions::default());
    ingest_as(&m, "owner", "personal", "Aster opened.");
    ingest_as(&m, "owner", "personal", "Many companies.");
    let before = entity_ids(&m, "owner", "aster");
    assert_eq!(before.len(), 1);
    let count = m.stats(None).unwrap().nodes();
    let r = ingest_as(&m, "owner", "personal", "aster again.");
    assert_eq!(entity_ids(&m, "owner", "aster"), before);
    let d = r.derivation.unwrap();
    assert_eq!((d.entities_created, d.entities_reused), (0, 1));
    // Only the new note was added.
    assert_eq!(m.stats(None).unwrap().nodes(), count + 1);
}

/// §8.2: another owner, scope or type, or an archived entity: a new node.
#[test]
fn entities_are_never_reused_across_owner_scope_type_or_when_archived() {
    let rules = vec![
        (
            "Aster opened.",
            json!({"entities": [{"name": "Aster", "entity_type": "organization"}]}),
        ),
        (
            "Aster bloomed.",
            json!({"entities": [{"name": "Aster", "entity_type": "plant"}]}),
        ),
    ];
    let (_t, m, _s) = memory(rules, IdentityOptions::default());
    ingest_as(&m, "owner", "personal", "Aster opened.");
    ingest_as(&m, "other", "personal", "Aster opened.");
    ingest_as(&m, "owner", "work", "Aster opened.");
    ingest_as(&m, "owner", "personal", "Aster bloomed.");
    let ours = entity_ids(&m, "owner", "aster");
    assert_eq!(
        ours.len(),
        3,
        "personal/organization, work/organization, personal/plant"
    );
    assert_eq!(entity_ids(&m, "other", "aster").len(), 1);
    assert!(!ours.contains(&entity_ids(&m, "other", "aster")[0]));
    // Archive the personal organization: the next mention makes a new one.
    let org_id = ours[0];
    {
        let mut tx = m.store_backend().begin(kith_store::TxMode::Write).unwrap();
        let mut n = tx.get_node(org_id).unwrap().unwrap();
        n.lifecycle = kith::Lifecycle::Archived;
        tx.update_node(&n).unwrap();
        tx.commit().unwrap();
    }
    ingest_as(&m, "owner", "personal", "Aster opened.");
    let after = entity_ids(&m, "owner", "aster");
    assert_eq!(after.len(), 4);
}

/// §8.4: an old global "I" node is never bound: each event gets its own.
#[test]
fn a_legacy_global_i_is_never_reused() {
    let x = json!({"facts": [with(fact("I", "likes", "tea", "I like tea."), "fact_type", json!("preference"))]});
    let (_t, m, _s) = memory(vec![("I like tea.", x)], IdentityOptions::default());
    // A pronoun node as an older system might have kept it: global, named "I".
    let legacy = {
        let r = ingest_as(&m, "owner", "personal", "I like tea.");
        let mut tx = m.store_backend().begin(kith_store::TxMode::Write).unwrap();
        let e = tx.get_event(r.event_id).unwrap().unwrap().event;
        let mut legacy = kith::Node::note_for(&e, NodeType::Entity);
        legacy.id = uuid::Uuid::new_v4();
        legacy.content = "I".into();
        legacy.evidence_refs = Vec::new();
        legacy.metadata = Some(json!({"entity_type": "person"}));
        tx.insert_node(&legacy).unwrap();
        tx.commit().unwrap();
        legacy.id
    };
    ingest_as(&m, "owner", "personal", "I like tea.");
    ingest_as(&m, "owner", "personal", "I like tea.");
    let is: Vec<uuid::Uuid> = entities(&m, "I").into_iter().map(|n| n.id).collect();
    assert_eq!(is.len(), 4, "three event-local I's and the legacy node");
    for c in claims(&m, "likes") {
        assert_ne!(has_fact_from(&m, &c), vec![legacy]);
    }
}

/// §8.7: Jordan the person and Jordan the place: a typed fact links each
/// end to the right one; an untyped one is ambiguous and dropped.
#[test]
fn namesakes_are_told_apart_by_type() {
    let quote = "Jordan lives in Jordan.";
    let typed = json!({"entities": [person("Jordan"), {"name": "Jordan", "entity_type": "location"}],
        "facts": [with(with(fact("Jordan", "lives_in", "Jordan", quote), "subject_entity_type", json!("person")),
                       "object_entity_type", json!("location"))]});
    let untyped = json!({"entities": [person("Jordan"), {"name": "Jordan", "entity_type": "location"}],
        "facts": [fact("Jordan", "lives_in", "Jordan", "Jordan still lives in Jordan.")]});
    let (_t, m, _s) = memory(
        vec![(quote, typed), ("Jordan still lives in Jordan.", untyped)],
        IdentityOptions::default(),
    );
    ingest_as(&m, "owner", "personal", quote);
    let r = ingest_as(&m, "owner", "personal", "Jordan still lives in Jordan.");
    let jordans = entities(&m, "Jordan");
    assert_eq!(jordans.len(), 2);
    let person_id = jordans
        .iter()
        .find(|n| n.metadata.as_ref().unwrap()["entity_type"] == "person")
        .unwrap()
        .id;
    let place_id = jordans
        .iter()
        .find(|n| n.metadata.as_ref().unwrap()["entity_type"] == "location")
        .unwrap()
        .id;
    let lives = claims(&m, "lives_in");
    assert_eq!(lives.len(), 1, "the untyped claim is dropped");
    assert_eq!(has_fact_from(&m, &lives[0]), vec![person_id]);
    let mut tx = m.store_backend().begin(kith_store::TxMode::Read).unwrap();
    assert!(tx
        .edges_of(lives[0].id)
        .unwrap()
        .iter()
        .any(|e| e.edge_type == EdgeType::Mentions && e.target_id == place_id));
    let status = m
        .work_status(&OwnerId::new("owner").unwrap(), r.event_id)
        .unwrap();
    assert!(matches!(
        status.dropped[0].reason,
        kith_extract::grounding::DropReason::AmbiguousEntity { .. }
    ));
}

/// §8.8: a subject the quote does not mention is rejected while its grounded
/// sibling stays; curly quotes in the message map to the exact span.
#[test]
fn ungrounded_subjects_are_rejected_and_curly_quotes_map_back() {
    let text = "Alice likes tea. I said \u{201c}fine\u{201d} to coffee.";
    let x = json!({"entities": [person("Alice")],
    "facts": [
        fact("I", "likes", "tea", "Alice likes tea."),
        fact("I", "said", "fine", "I said \"fine\" to coffee.")
    ]});
    let (_t, m, _s) = memory(vec![("Alice likes tea.", x)], IdentityOptions::default());
    let r = ingest_as(&m, "owner", "personal", text);
    assert!(claims(&m, "likes").is_empty());
    let said = &claims(&m, "said")[0];
    let md = said.metadata.as_ref().unwrap();
    assert_eq!(
        md["evidence_quote"],
        "I said \u{201c}fine\u{201d} to coffee."
    );
    let span: Vec<usize> = serde_json::from_value(md["evidence_span"].clone()).unwrap();
    assert_eq!(
        &text[span[0]..span[1]],
        "I said \u{201c}fine\u{201d} to coffee."
    );
    let status = m
        .work_status(&OwnerId::new("owner").unwrap(), r.event_id)
        .unwrap();
    assert_eq!(status.dropped.len(), 1);
    assert!(matches!(
        status.dropped[0].reason,
        kith_extract::grounding::DropReason::NotMentioned { .. }
    ));
}

/// Speaker grounding (off by default): a claim written about the speaker by
/// name is grounded by the speaker's own "I" only when the option is on.
#[test]
fn speaker_grounding_accepts_the_speakers_first_person() {
    let text = "I moved to Lisbon.";
    let x = || {
        json!({"entities": [person("Dana"), {"name": "Lisbon", "entity_type": "place"}],
               "facts": [with(with(fact("Dana", "lives_in", "Lisbon", text), "subject_entity_type", json!("person")),
                              "object_entity_type", json!("place"))]})
    };
    let (_t, m, _s) = memory(vec![(text, x())], IdentityOptions::default());
    say(&m, text, Some("Dana"), "2025-01-01T09:00:00Z");
    assert!(
        claims(&m, "lives_in").is_empty(),
        "off: Dana is not written in the sentence"
    );

    let on = IdentityOptions {
        speaker_grounding: true,
        ..IdentityOptions::default()
    };
    let (_t2, m2, _s2) = memory(vec![(text, x())], on);
    say(&m2, text, Some("Dana"), "2025-01-01T09:00:00Z");
    let lives = claims(&m2, "lives_in");
    assert_eq!(lives.len(), 1);
    assert_eq!(
        has_fact_from(&m2, &lives[0]),
        vec![entities(&m2, "Dana")[0].id]
    );
}

fn group_rules() -> Vec<(&'static str, Value)> {
    vec![
        (
            "Jordan and I went hiking.",
            json!({"entities": [person("Jordan")]}),
        ),
        ("Sam and I cooked.", json!({"entities": [person("Sam")]})),
        (
            "We decided to sell the car.",
            json!({"facts": [with(fact("We", "decided", "sell the car", "We decided to sell the car."),
                                  "fact_type", json!("decision"))]}),
        ),
    ]
}

fn say_session(
    m: &Memory,
    text: &str,
    role: &str,
    speaker: Option<&str>,
    session: &str,
) -> kith::IngestReceipt {
    let r = m
        .ingest(
            EventInput {
                owner_id: Some("owner".into()),
                speaker: speaker.map(Into::into),
                session_id: Some(session.into()),
                ..EventInput::new(role, text)
            },
            IngestOptions::default(),
        )
        .unwrap();
    assert_eq!(
        r.status,
        kith::WorkStatus::Complete,
        "{text}: {:?}",
        r.error
    );
    r
}

/// Group links as (target content, metadata) for a claim.
fn group_links(m: &Memory, claim: &Node) -> Vec<(String, Value)> {
    let mut tx = m.store_backend().begin(kith_store::TxMode::Read).unwrap();
    let mut out: Vec<(String, Value)> = tx
        .edges_of(claim.id)
        .unwrap()
        .into_iter()
        .filter(|e| e.edge_type == EdgeType::Mentions && e.source_id == claim.id)
        .filter(|e| {
            e.metadata
                .as_ref()
                .is_some_and(|md| md["basis"] == "group_member")
        })
        .map(|e| {
            let target = tx.get_node(e.target_id).unwrap().unwrap();
            (target.content, e.metadata.unwrap())
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Owner group links: we-claims link to the owner, and to the one group the
/// session named, recording where it was named.
#[test]
fn we_claims_link_the_owner_and_the_named_group() {
    let (_t, m, _s) = memory(group_rules(), IdentityOptions::default());
    let named = say_session(&m, "Jordan and I went hiking.", "user", Some("Maya"), "s1");
    say_session(
        &m,
        "We decided to sell the car.",
        "user",
        Some("Maya"),
        "s1",
    );
    let sold = &claims(&m, "decided")[0];
    // The subject stays the event-local we.
    let we = entities(&m, "we");
    assert_eq!(has_fact_from(&m, sold), vec![we[0].id]);
    let links = group_links(&m, sold);
    assert_eq!(links.len(), 2, "{links:?}");
    assert_eq!(links[0].0, "Jordan");
    assert_eq!(links[0].1["named_in"], named.event_id.to_string());
    assert_eq!(links[1].0, "Maya");
    assert_eq!(links[1].1["role"], "speaker");
}

#[test]
fn two_groups_or_other_roles_link_less() {
    let (_t, m, _s) = memory(group_rules(), IdentityOptions::default());
    say_session(&m, "Jordan and I went hiking.", "user", Some("Maya"), "s1");
    say_session(&m, "Sam and I cooked.", "user", Some("Maya"), "s1");
    say_session(
        &m,
        "We decided to sell the car.",
        "user",
        Some("Maya"),
        "s1",
    );
    let sold = &claims(&m, "decided")[0];
    let links: Vec<String> = group_links(&m, sold).into_iter().map(|l| l.0).collect();
    assert_eq!(
        links,
        vec!["Maya".to_string()],
        "two groups: the owner only"
    );

    // A participant's we is theirs: no links at all.
    say_session(
        &m,
        "We decided to sell the car.",
        "participant",
        Some("Jordan"),
        "s2",
    );
    let theirs: Vec<Node> = claims(&m, "decided")
        .into_iter()
        .filter(|c| c.id != sold.id)
        .collect();
    assert!(group_links(&m, &theirs[0]).is_empty());

    // Off: no links.
    let off = IdentityOptions {
        owner_group_links: false,
        ..IdentityOptions::default()
    };
    let (_t2, m2, _s2) = memory(group_rules(), off);
    say_session(&m2, "Jordan and I went hiking.", "user", Some("Maya"), "s1");
    say_session(
        &m2,
        "We decided to sell the car.",
        "user",
        Some("Maya"),
        "s1",
    );
    assert!(group_links(&m2, &claims(&m2, "decided")[0]).is_empty());
}

/// The same we-claim twice in one session merges; in another session it
/// stays separate.
#[test]
fn repeated_we_claims_merge_within_a_session_only() {
    let (_t, m, _s) = memory(group_rules(), IdentityOptions::default());
    let a = say_session(
        &m,
        "We decided to sell the car.",
        "user",
        Some("Maya"),
        "s1",
    );
    let b = say_session(
        &m,
        "We decided to sell the car.",
        "user",
        Some("Maya"),
        "s1",
    );
    say_session(
        &m,
        "We decided to sell the car.",
        "user",
        Some("Maya"),
        "s2",
    );
    let all = claims(&m, "decided");
    assert_eq!(all.len(), 3);
    let current: Vec<&Node> = all.iter().filter(|c| c.lifecycle.is_active()).collect();
    assert_eq!(current.len(), 2, "s1's copies merged, s2's stays");
    let merged = current
        .iter()
        .find(|c| c.evidence_refs.len() == 2)
        .expect("merged claim");
    assert_eq!(merged.evidence_refs, vec![a.event_id, b.event_id]);
    let old = all
        .iter()
        .find(|c| c.evidence_refs == vec![a.event_id])
        .unwrap();
    assert_eq!(old.lifecycle, kith::Lifecycle::Superseded);
    assert_eq!(old.superseded_by, Some(merged.id));
}

/// The id of the event whose content is `text`.
fn claims_event(m: &Memory, text: &str) -> uuid::Uuid {
    m.events(&kith_store::EventQuery {
        owner: Some(OwnerId::new("owner").unwrap()),
        ..kith_store::EventQuery::default()
    })
    .unwrap()
    .into_iter()
    .find(|e| e.event.content == text)
    .unwrap()
    .event
    .id
}

fn repair_rules(names: &[&str]) -> Vec<(&'static str, Value)> {
    vec![
        (
            "PRONOUN-REPAIR",
            json!({"answers": [{"index": 0, "field": "subject", "names": names}]}),
        ),
        (
            "Jordan got a new bike.",
            json!({"entities": [person("Jordan")]}),
        ),
        (
            "He loves his new bike.",
            json!({"facts": [with(fact("He", "loves", "his new bike", "He loves his new bike."),
                                  "fact_type", json!("preference"))]}),
        ),
    ]
}

/// Pronoun repair: one extra question for a third-person pronoun subject;
/// a single name written in what was shown rebinds it.
#[test]
fn pronoun_repair_rebinds_to_a_name_shown() {
    let (_t, m, server) = memory(repair_rules(&["Jordan"]), IdentityOptions::default());
    say_session(&m, "Jordan got a new bike.", "user", Some("Maya"), "s1");
    let before = server.requests().len();
    say_session(&m, "He loves his new bike.", "user", Some("Maya"), "s1");
    assert_eq!(
        server.requests().len() - before,
        2,
        "extraction + one repair question"
    );
    let loves = &claims(&m, "loves")[0];
    let jordan = entities(&m, "Jordan")[0].id;
    assert_eq!(has_fact_from(&m, loves), vec![jordan]);
    let md = loves.metadata.as_ref().unwrap();
    let named_in = claims_event(&m, "Jordan got a new bike.");
    assert_eq!(
        md["resolved_from_context"],
        json!({"event_ids": [named_in.to_string()],
               "fields": {"subject": {"pronoun": "He", "names": ["Jordan"]}}})
    );
    assert_eq!(md["resolution"]["sentence"], "He loves his new bike.");
    assert_eq!(
        md["resolution"]["replacements"][0]["found"][0]["found_in"],
        format!("memory:{named_in}")
    );
    assert_eq!(md["grounding_method"], "pronoun_repair_v1");
    assert_eq!(
        loves.content, "Jordan loves his new bike.",
        "the text names him"
    );
    assert_eq!(md["subject"], "He", "the claim keeps its extracted fields");
    assert_eq!(
        md["evidence_quote"], "He loves his new bike.",
        "and its quote"
    );
}

/// The repair question carries only the claim's own sentence (and the
/// window of earlier memories), not the rest of the message.
#[test]
fn pronoun_repair_sends_only_the_claims_sentence() {
    let mut rules = repair_rules(&["Jordan"]);
    rules.push((
        "What a long day.",
        json!({"facts": [with(fact("He", "loves", "his new bike", "He loves his new bike."),
                              "fact_type", json!("preference"))]}),
    ));
    let (_t, m, server) = memory(rules, IdentityOptions::default());
    say_session(&m, "Jordan got a new bike.", "user", Some("Maya"), "s1");
    say_session(
        &m,
        "What a long day. He loves his new bike.",
        "user",
        Some("Maya"),
        "s1",
    );
    let question = server
        .requests()
        .into_iter()
        .rfind(|r| r.contains("PRONOUN-REPAIR"))
        .expect("a repair question");
    assert!(question.contains("He loves his new bike."), "{question}");
    assert!(question.contains("Jordan got a new bike."), "the window");
    assert!(!question.contains("What a long day"), "{question}");
    let loves = &claims(&m, "loves")[0];
    assert_eq!(has_fact_from(&m, loves), vec![entities(&m, "Jordan")[0].id]);
}

/// A name nobody wrote is thrown away; several names keep the pronoun
/// entity and are listed; with the option off nothing is asked.
#[test]
fn pronoun_repair_never_invents_and_keeps_ambiguity() {
    let (_t, m, _s) = memory(repair_rules(&["Bob"]), IdentityOptions::default());
    say_session(&m, "Jordan got a new bike.", "user", Some("Maya"), "s1");
    say_session(&m, "He loves his new bike.", "user", Some("Maya"), "s1");
    let loves = &claims(&m, "loves")[0];
    assert_eq!(has_fact_from(&m, loves), vec![entities(&m, "he")[0].id]);
    assert!(loves.metadata.as_ref().unwrap().get("resolution").is_none());

    let (_t2, m2, _s2) = memory(
        repair_rules(&["Jordan", "Maya"]),
        IdentityOptions::default(),
    );
    say_session(&m2, "Jordan got a new bike.", "user", Some("Maya"), "s1");
    say_session(&m2, "He loves his new bike.", "user", Some("Maya"), "s1");
    let loves = &claims(&m2, "loves")[0];
    assert_eq!(has_fact_from(&m2, loves), vec![entities(&m2, "he")[0].id]);
    let md = loves.metadata.as_ref().unwrap();
    let replacement = &md["resolution"]["replacements"][0];
    assert_eq!(replacement["names"], json!(["Jordan", "Maya"]));
    assert_eq!(replacement["rebound"], false);
    assert_eq!(loves.content, "Jordan and Maya loves his new bike.");
    // Each name is an entity the claim mentions.
    let mut tx = m2.store_backend().begin(kith_store::TxMode::Read).unwrap();
    let mut mentioned: Vec<String> = tx
        .edges_of(loves.id)
        .unwrap()
        .into_iter()
        .filter(|e| e.edge_type == EdgeType::Mentions && e.source_id == loves.id)
        .map(|e| tx.get_node(e.target_id).unwrap().unwrap().content)
        .collect();
    mentioned.sort();
    assert_eq!(mentioned, ["Jordan", "Maya"]);
    drop(tx);

    // One name that fails the check fails the answer: the field stays.
    let (_t4, m4, _s4) = memory(repair_rules(&["Jordan", "Bob"]), IdentityOptions::default());
    say_session(&m4, "Jordan got a new bike.", "user", Some("Maya"), "s1");
    say_session(&m4, "He loves his new bike.", "user", Some("Maya"), "s1");
    let loves = &claims(&m4, "loves")[0];
    assert_eq!(has_fact_from(&m4, loves), vec![entities(&m4, "he")[0].id]);
    assert!(loves.metadata.as_ref().unwrap().get("resolution").is_none());
    assert_eq!(loves.content, "He loves his new bike.");

    let off = IdentityOptions {
        pronoun_repair: false,
        ..IdentityOptions::default()
    };
    let (_t3, m3, server) = memory(repair_rules(&["Jordan"]), off);
    say_session(&m3, "Jordan got a new bike.", "user", Some("Maya"), "s1");
    let before = server.requests().len();
    say_session(&m3, "He loves his new bike.", "user", Some("Maya"), "s1");
    assert_eq!(server.requests().len() - before, 1, "no repair question");
}

/// Member names match after a weekday, month or title; a full name that no
/// person entity has ("Jordan Lee" when only "Lee"... is stored) links
/// nobody; another speaker's identical we-claim never retires the owner's.
#[test]
fn group_member_names_and_other_speakers() {
    let rules = vec![
        (
            "Sunday Jordan and I went hiking.",
            json!({"entities": [person("Jordan")]}),
        ),
        (
            "Jordan Lee and I cooked.",
            json!({"entities": [person("Lee")]}),
        ),
        (
            "We decided to sell the car.",
            json!({"facts": [with(fact("We", "decided", "sell the car", "We decided to sell the car."),
                                  "fact_type", json!("decision"))]}),
        ),
    ];
    let (_t, m, _s) = memory(rules.clone(), IdentityOptions::default());
    say_session(
        &m,
        "Sunday Jordan and I went hiking.",
        "user",
        Some("Maya"),
        "s1",
    );
    say_session(
        &m,
        "We decided to sell the car.",
        "user",
        Some("Maya"),
        "s1",
    );
    let links: Vec<String> = group_links(&m, &claims(&m, "decided")[0])
        .into_iter()
        .map(|l| l.0)
        .collect();
    assert_eq!(links, vec!["Jordan".to_string(), "Maya".to_string()]);

    let (_t2, m2, _s2) = memory(rules.clone(), IdentityOptions::default());
    say_session(&m2, "Jordan Lee and I cooked.", "user", Some("Maya"), "s1");
    say_session(
        &m2,
        "We decided to sell the car.",
        "user",
        Some("Maya"),
        "s1",
    );
    let links: Vec<String> = group_links(&m2, &claims(&m2, "decided")[0])
        .into_iter()
        .map(|l| l.0)
        .collect();
    assert_eq!(
        links,
        vec!["Maya".to_string()],
        "a stored Lee is not Jordan Lee"
    );

    // Sam's identical we-claim (Sam's own group) does not retire Maya's.
    let (_t3, m3, _s3) = memory(rules, IdentityOptions::default());
    say_session(
        &m3,
        "We decided to sell the car.",
        "user",
        Some("Maya"),
        "s1",
    );
    say_session(
        &m3,
        "We decided to sell the car.",
        "user",
        Some("Sam"),
        "s1",
    );
    assert!(claims(&m3, "decided")
        .iter()
        .all(|c| c.lifecycle.is_active()));
}

/// `reingest` after an identity option changed re-derives from the saved
/// extraction (no new LLM call) and commits a new plan revision.
#[test]
fn reingest_rederives_under_new_options() {
    let off = IdentityOptions {
        speaker_references: false,
        ..IdentityOptions::default()
    };
    let (_t, m, server) = memory(dana_rules(), off);
    let r = say(
        &m,
        "I work at Northwind.",
        Some("Dana"),
        "2025-01-01T09:00:00Z",
    );
    assert!(entities(&m, "Dana").is_empty());
    let calls = server.requests().len();
    let m = m.with_identity(IdentityOptions::default());
    let owner = OwnerId::new("owner").unwrap();
    let outcome = m.reingest_event(&owner, r.event_id).unwrap();
    assert_eq!(outcome.outcome, "rederived");
    assert_eq!(outcome.revision, Some(2));
    assert_eq!(server.requests().len(), calls, "no new LLM call");
    let dana = entities(&m, "Dana");
    assert_eq!(dana.len(), 1);
    let works = claims(&m, "works_at");
    assert_eq!(works.len(), 1, "the claim keeps its id");
    assert!(has_fact_from(&m, &works[0]).contains(&dana[0].id));
    // A second reingest under the same options changes nothing.
    assert_eq!(
        m.reingest_event(&owner, r.event_id).unwrap().outcome,
        "unchanged"
    );
    assert!(m.doctor().unwrap().healthy());
}

// ---------------------------------------------------------------------------
// Issue 13: identity you can trust on every path. Each body runs twice: on
// the default heuristic extractor (no model, what a new user gets) and on
// recorded LLM replies served over real HTTP.
// ---------------------------------------------------------------------------

/// Which extractor a test body runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Path {
    /// The default offline extractor.
    Heuristic,
    /// An OpenAI-compatible LLM whose replies are recorded.
    Recorded,
}

/// A memory on `path`; `rules` (message substring → reply) are the recorded
/// replies, unused by the heuristic.
fn memory_on(
    path: Path,
    rules: Vec<(&str, Value)>,
) -> (tempfile::TempDir, Memory, Option<ReplayServer>) {
    match path {
        Path::Heuristic => {
            let (tmp, _dir, m) = common::pack();
            (tmp, m.with_identity(IdentityOptions::default()), None)
        }
        Path::Recorded => {
            let (tmp, m, server) = memory(rules, IdentityOptions::default());
            (tmp, m, Some(server))
        }
    }
}

/// A memory on `path` that has been told every sentence of `rules`, in
/// order, as user turns of `speaker`.
fn said_on(
    path: Path,
    rules: Vec<(&str, Value)>,
    speaker: Option<&str>,
) -> (tempfile::TempDir, Memory, Option<ReplayServer>) {
    let texts: Vec<String> = rules.iter().map(|(t, _)| t.to_string()).collect();
    let (t, m, s) = memory_on(path, rules);
    for text in &texts {
        say_in(&m, text, speaker, "user", "personal");
    }
    (t, m, s)
}

/// Runs one test body on both paths, as two tests.
macro_rules! on_both_paths {
    ($name:ident, $body:ident) => {
        mod $name {
            #[test]
            fn heuristic() {
                super::$body(super::Path::Heuristic);
            }
            #[test]
            fn recorded() {
                super::$body(super::Path::Recorded);
            }
        }
    };
}

/// The person entities named `name`.
fn persons(m: &Memory, name: &str) -> Vec<Node> {
    entities(m, name)
        .into_iter()
        .filter(|n| n.metadata.as_ref().unwrap()["entity_type"] == "person")
        .collect()
}

/// Claims whose subject is `entity`.
/// The (predicate, object) of each claim of `entity`.
fn predicates_and_objects(m: &Memory, entity: &Node) -> Vec<(String, String)> {
    claims_of(m, entity)
        .iter()
        .map(|c| {
            let md = c.metadata.as_ref().unwrap();
            (
                md["predicate"].as_str().unwrap().to_string(),
                md["object"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn claims_of(m: &Memory, entity: &Node) -> Vec<Node> {
    all(m)
        .into_iter()
        .filter(|n| n.node_type != NodeType::Entity)
        .filter(|c| has_fact_from(m, c).contains(&entity.id))
        .collect()
}

fn predicate_of(claim: &Node) -> String {
    claim.metadata.as_ref().unwrap()["predicate"]
        .as_str()
        .unwrap()
        .to_string()
}

fn owner_named(m: &Memory) -> Vec<Node> {
    all(m)
        .into_iter()
        .filter(|n| n.node_type == NodeType::Entity)
        .filter(|n| n.metadata.as_ref().unwrap().get("owner_name").is_some())
        .collect()
}

fn negative(v: Value) -> Value {
    with(v, "polarity", json!("negative"))
}

fn quoted_rules() -> Vec<(&'static str, Value)> {
    vec![
        (
            "Hi, I'm Maya Okafor.",
            json!({"entities": [person("Maya Okafor")],
                   "facts": [fact("I", "name", "Maya Okafor", "Hi, I'm Maya Okafor.")]}),
        ),
        (
            "I work at Northwind Analytics.",
            json!({"entities": [org("Northwind Analytics")],
                   "facts": [with(fact("I", "works_at", "Northwind Analytics",
                                       "I work at Northwind Analytics."),
                                  "object_entity_type", json!("organization"))]}),
        ),
        (
            "Jordan wrote: 'I hate sushi'.",
            json!({"entities": [person("Jordan")],
                   "facts": [negative(fact("I", "likes", "sushi", "Jordan wrote: 'I hate sushi'."))]}),
        ),
        // The model lists nobody: the claim is about I, and Jordan is only
        // the messenger.
        (
            "Jordan texted me: I love cilantro.",
            json!({"facts": [fact("I", "likes", "cilantro", "Jordan texted me: I love cilantro.")]}),
        ),
        (
            "My sister said \"I quit my job\" yesterday.",
            json!({"facts": [negative(fact("I", "works_at", "my job",
                                           "My sister said \"I quit my job\" yesterday."))]}),
        ),
    ]
}

/// Issue 13 item 1: quoted or pasted first person is never the owner's,
/// with owner name carry on and no speaker.
fn quoted_first_person_is_never_the_owners(path: Path) {
    let (_t, m, _s) = memory_on(path, quoted_rules());
    say_in(&m, "Hi, I'm Maya Okafor.", None, "user", "personal");
    say_in(
        &m,
        "I work at Northwind Analytics.",
        None,
        "user",
        "personal",
    );
    let maya = persons(&m, "Maya Okafor");
    assert_eq!(maya.len(), 1);
    let works = &claims(&m, "works_at")[0];
    assert_eq!(
        has_fact_from(&m, works),
        vec![maya[0].id],
        "the owner's own turn carries"
    );

    say_in(
        &m,
        "Jordan wrote: 'I hate sushi'.",
        None,
        "user",
        "personal",
    );
    say_in(
        &m,
        "Jordan texted me: I love cilantro.",
        None,
        "user",
        "personal",
    );
    // Each quoted I is the named writer's (`kith_ingest_v9`), never Maya's.
    let jordan = persons(&m, "Jordan");
    assert_eq!(jordan.len(), 1, "one Jordan");
    for claim in claims(&m, "likes") {
        assert_eq!(
            has_fact_from(&m, &claim),
            vec![jordan[0].id],
            "{:?} is Jordan's",
            claim.content
        );
        let md = claim.metadata.as_ref().unwrap();
        assert_eq!(md["speaker_reference"]["basis"], "quoted_speaker");
        assert_eq!(md["speaker_reference"]["speaker"], "Jordan");
    }
    assert_eq!(claims(&m, "likes").len(), 2);
    assert!(entities(&m, "I").is_empty());
    if path == Path::Recorded {
        // A quote given to someone no name says stays local to its message.
        say_in(
            &m,
            "My sister said \"I quit my job\" yesterday.",
            None,
            "user",
            "personal",
        );
        assert_eq!(entities(&m, "I").len(), 1);
    }
    let mine: Vec<String> = claims_of(&m, &maya[0]).iter().map(predicate_of).collect();
    assert!(!mine.iter().any(|p| p == "likes"), "{mine:?}");
    assert!(m.doctor().unwrap().healthy());
}
on_both_paths!(
    quoted_first_person_is_never_the_owners_on,
    quoted_first_person_is_never_the_owners
);

fn adjective_rules() -> Vec<(&'static str, Value)> {
    vec![
        // A sloppy reply that lists what one is as a person.
        (
            "I'm Brazilian, by the way.",
            json!({"entities": [person("Brazilian")],
                   "facts": [fact("I", "nationality", "Brazilian", "I'm Brazilian, by the way.")]}),
        ),
        (
            "I'm Vegan.",
            json!({"entities": [person("Vegan")], "facts": [fact("I", "diet", "Vegan", "I'm Vegan.")]}),
        ),
        (
            "I'm Tired.",
            json!({"entities": [person("Tired")], "facts": [fact("I", "feels", "Tired", "I'm Tired.")]}),
        ),
        (
            "I prefer trains to flights.",
            json!({"facts": [with(fact("I", "prefers", "trains", "I prefer trains to flights."),
                                  "fact_type", json!("preference"))]}),
        ),
        (
            "Hi, I'm Maya.",
            json!({"entities": [person("Maya")], "facts": [fact("I", "name", "Maya", "Hi, I'm Maya.")]}),
        ),
    ]
}

/// Issue 13 item 2: a demonym or adjective is not a name.
fn demonyms_and_adjectives_are_not_names(path: Path) {
    let (_t, m, _s) = memory_on(path, adjective_rules());
    for text in ["I'm Brazilian, by the way.", "I'm Vegan.", "I'm Tired."] {
        say_in(&m, text, None, "user", "personal");
    }
    if path == Path::Heuristic {
        // The heuristic never lists what one is as a person; a model may,
        // but its word still names nobody.
        for word in ["Brazilian", "Vegan", "Tired"] {
            assert!(persons(&m, word).is_empty(), "{word} became a person");
        }
    }
    assert!(owner_named(&m).is_empty(), "no owner name was given");
    assert!(all(&m).iter().all(|n| n
        .metadata
        .as_ref()
        .is_none_or(|md| md.get("speaker_reference").is_none())));
    // So nothing is carried either: the next turn's I stays local.
    say_in(&m, "I prefer trains to flights.", None, "user", "personal");
    let trains = &claims(&m, "prefers")[0];
    assert!(trains
        .metadata
        .as_ref()
        .unwrap()
        .get("speaker_reference")
        .is_none());
    // A real name introduces, and an adjective after it names nobody, so
    // the owner's name carries to it.
    say_in(&m, "Hi, I'm Maya.", None, "user", "personal");
    let maya = &persons(&m, "Maya")[0];
    assert_eq!(owner_named(&m).len(), 1);
    say_in(&m, "I'm Vegan.", None, "user", "personal");
    assert_eq!(owner_named(&m).len(), 1);
    let hers: Vec<String> = claims_of(&m, maya).iter().map(predicate_of).collect();
    assert!(
        hers.contains(&"diet".to_string()),
        "the owner's later turn is hers: {hers:?}"
    );
}
on_both_paths!(
    demonyms_and_adjectives_are_not_names_on,
    demonyms_and_adjectives_are_not_names
);

fn group_member_rules() -> Vec<(&'static str, Value)> {
    vec![
        // The model lists the partner it makes a claim about, not Sam.
        (
            "My partner Jordan, Sam and I went hiking.",
            json!({"entities": [person("Jordan")],
                   "facts": [with(fact("I", "has_partner", "Jordan",
                                       "My partner Jordan, Sam and I went hiking."),
                                  "object_entity_type", json!("person"))]}),
        ),
        (
            "Jordan is my partner.",
            json!({"entities": [person("Jordan")],
                   "facts": [with(fact("I", "has_partner", "Jordan", "Jordan is my partner."),
                                  "object_entity_type", json!("person"))]}),
        ),
        (
            "Later Jordan and I went hiking.",
            json!({"entities": [person("Jordan")]}),
        ),
        (
            "Tonight Jordan and I are cooking.",
            json!({"entities": [person("Jordan")]}),
        ),
        (
            "On Friday Jordan and I cooked.",
            json!({"entities": [person("Jordan")]}),
        ),
        (
            "Jordan and I went hiking.",
            json!({"entities": [person("Jordan")]}),
        ),
        (
            "We prefer trains to flights.",
            json!({"facts": [with(fact("We", "prefers", "trains", "We prefer trains to flights."),
                                  "fact_type", json!("preference"))]}),
        ),
    ]
}

/// The contents of the entities a we-claim is group-linked to.
fn linked(m: &Memory, claim: &Node) -> Vec<String> {
    group_links(m, claim).into_iter().map(|l| l.0).collect()
}

/// Issue 13 item 4: group links are all or nothing (spec ¶6) — if any
/// named member has no single person entity, the we-claim is linked to the
/// owner only.
fn group_links_are_all_or_nothing(path: Path) {
    let (_t, m, _s) = memory_on(path, group_member_rules());
    let say = |text: &str| say_session(&m, text, "user", Some("Maya"), "s1");
    say("My partner Jordan, Sam and I went hiking.");
    assert_eq!(persons(&m, "Jordan").len(), 1);
    assert!(persons(&m, "Sam").is_empty(), "Sam has no person entity");
    say("We prefer trains to flights.");
    let trains = &claims(&m, "prefers")[0];
    assert_eq!(linked(&m, trains), vec!["Maya".to_string()]);
}
on_both_paths!(
    group_links_are_all_or_nothing_on,
    group_links_are_all_or_nothing
);

/// Issue 13 item 4: sentence openers before a group neither hide it nor
/// make a second one.
fn openers_neither_hide_nor_make_a_group(path: Path) {
    for (session, opener) in [
        ("later", "Later Jordan and I went hiking."),
        ("tonight", "Tonight Jordan and I are cooking."),
    ] {
        let (_t, m, _s) = memory_on(path, group_member_rules());
        let say = |text: &str| say_session(&m, text, "user", Some("Maya"), session);
        say("Jordan is my partner.");
        let named = say(opener);
        say("We prefer trains to flights.");
        let trains = &claims(&m, "prefers")[0];
        let links = group_links(&m, trains);
        assert_eq!(
            links.iter().map(|l| l.0.as_str()).collect::<Vec<_>>(),
            ["Jordan", "Maya"],
            "{opener}"
        );
        assert_eq!(links[0].1["named_in"], named.event_id.to_string());
    }
    // "On Friday Jordan and I" is the same group as "Jordan and I", not a
    // second one that would leave the owner alone.
    let (_t, m, _s) = memory_on(path, group_member_rules());
    let say = |text: &str| say_session(&m, text, "user", Some("Maya"), "s1");
    say("Jordan is my partner.");
    say("Jordan and I went hiking.");
    say("On Friday Jordan and I cooked.");
    say("We prefer trains to flights.");
    let trains = &claims(&m, "prefers")[0];
    assert_eq!(linked(&m, trains), ["Jordan", "Maya"]);
}
on_both_paths!(
    openers_neither_hide_nor_make_a_group_on,
    openers_neither_hide_nor_make_a_group
);

fn title_rules() -> Vec<(&'static str, Value)> {
    let clinic = "My sister Ana just moved to Denver for a job with Dr. Patel's clinic.";
    vec![
        (
            "Patel's clinic",
            json!({"entities": [{"name": "Ana", "entity_type": "person"},
                                {"name": "Denver", "entity_type": "place"},
                                {"name": "Patel", "entity_type": "person"}],
                   "facts": [fact("Ana", "lives_in", "Denver", clinic)]}),
        ),
        (
            "doing great",
            json!({"entities": [{"name": "Patel", "entity_type": "person"}]}),
        ),
    ]
}

/// A title's full stop ("Dr. Patel", "Mr. Okoye") ends no sentence and
/// names nobody on its own: no "Dr" or "Mr" entity, Patel is one node
/// however the turn writes the title, and the claim's quote is the whole
/// sentence, not "…a job with Dr.".
fn a_titles_stop_ends_no_sentence(path: Path) {
    let (_t, m, _s) = memory_on(path, title_rules());
    let clinic = "My sister Ana just moved to Denver for a job with Dr. Patel's clinic.";
    say_session(&m, clinic, "user", Some("Daniel"), "s1");
    say_session(
        &m,
        "Dr. Patel says Ana is doing great.",
        "user",
        Some("Daniel"),
        "s1",
    );
    for title in ["Dr", "Dr.", "Mr"] {
        assert!(entities(&m, title).is_empty(), "an entity {title:?}");
    }
    assert_eq!(entities(&m, "Patel").len(), 1, "Patel is one node");
    let moved = claims(&m, "lives_in");
    assert_eq!(moved.len(), 1);
    assert_eq!(
        moved[0].metadata.as_ref().unwrap()["evidence_quote"],
        clinic
    );
}
on_both_paths!(
    a_titles_stop_ends_no_sentence_on,
    a_titles_stop_ends_no_sentence
);

fn one_node_rules() -> Vec<(&'static str, Value)> {
    vec![
        (
            "I love cilantro.",
            json!({"facts": [fact("I", "likes", "cilantro", "I love cilantro.")]}),
        ),
        // A model that cannot tell from the turn what Jordan is.
        (
            "I like Jordan.",
            json!({"entities": [{"name": "Jordan", "entity_type": "other"}],
                   "facts": [fact("I", "likes", "Jordan", "I like Jordan.")]}),
        ),
        (
            "Maya Okafor here, checking in.",
            json!({"entities": [{"name": "Maya Okafor", "entity_type": "other"}]}),
        ),
    ]
}

/// Issue 13 item 5: one person, one node. A speaker's person entity is the
/// node other mentions of the name use (spec ¶3), even where the turn's
/// extraction typed the name `other`.
fn one_person_one_node(path: Path) {
    let (_t, m, _s) = memory_on(path, one_node_rules());
    say_session(&m, "I love cilantro.", "participant", Some("Jordan"), "s1");
    let jordan = persons(&m, "Jordan");
    assert_eq!(jordan.len(), 1, "the speaker's person entity");
    say_session(&m, "I like Jordan.", "user", Some("Maya Okafor"), "s1");
    assert_eq!(entities(&m, "Jordan").len(), 1, "Jordan is one node");
    let likes_jordan = claims(&m, "likes")
        .into_iter()
        .find(|c| c.content == "I like Jordan.")
        .unwrap();
    let mut tx = m.store_backend().begin(kith_store::TxMode::Read).unwrap();
    let mentioned: Vec<uuid::Uuid> = tx
        .edges_of(likes_jordan.id)
        .unwrap()
        .into_iter()
        .filter(|e| e.edge_type == EdgeType::Mentions && e.source_id == likes_jordan.id)
        .map(|e| e.target_id)
        .collect();
    drop(tx);
    assert_eq!(mentioned, vec![jordan[0].id]);
    // A speaker's own name in a turn that never says I is still them.
    say_session(
        &m,
        "Maya Okafor here, checking in.",
        "user",
        Some("Maya Okafor"),
        "s1",
    );
    assert_eq!(entities(&m, "Maya Okafor").len(), 1, "Maya is one node");
    assert_eq!(persons(&m, "Maya Okafor").len(), 1);
}
on_both_paths!(one_person_one_node_on, one_person_one_node);

fn either_order_rules() -> Vec<(&'static str, Value)> {
    let mut rules = one_node_rules();
    rules.extend([
        (
            "Jordan and I went hiking.",
            json!({"entities": [person("Jordan")]}),
        ),
        (
            "We prefer trains to flights.",
            json!({"facts": [with(fact("We", "prefers", "trains", "We prefer trains to flights."),
                                  "fact_type", json!("preference"))]}),
        ),
        (
            "I moved to Jordan.",
            json!({"entities": [{"name": "Jordan", "entity_type": "place"}],
                   "facts": [with(fact("I", "moved_to", "Jordan", "I moved to Jordan."),
                                  "object_entity_type", json!("place"))]}),
        ),
        // A model that types the name a person in a later turn.
        (
            "Jordan is my partner.",
            json!({"entities": [person("Jordan")],
                   "facts": [with(fact("I", "has_partner", "Jordan", "Jordan is my partner."),
                                  "object_entity_type", json!("person"))]}),
        ),
    ]);
    rules
}

/// The claim whose sentence is `text`.
fn claim_said(m: &Memory, text: &str) -> Node {
    all(m)
        .into_iter()
        .find(|n| n.node_type != NodeType::Entity && n.content == text)
        .unwrap_or_else(|| panic!("no claim {text:?}"))
}

/// The targets of a claim's plan MENTIONS edges (group links left out).
fn mentioned(m: &Memory, claim: &Node) -> Vec<uuid::Uuid> {
    let mut tx = m.store_backend().begin(kith_store::TxMode::Read).unwrap();
    tx.edges_of(claim.id)
        .unwrap()
        .into_iter()
        .filter(|e| e.edge_type == EdgeType::Mentions && e.source_id == claim.id)
        .filter(|e| e.metadata.is_none())
        .map(|e| e.target_id)
        .collect()
}

/// Issue 13 item 5, the other order (`kith_ingest_v4`): a name first stored
/// as an untyped mention ("I like Jordan.") that later turns out to be a
/// person — Jordan speaks, or a model types the name `person` — stays one
/// node: the person adopts it, and it is typed `person` from then on, so
/// group links find it. A namesake of a real different type (a place)
/// stays apart.
fn one_person_one_node_in_either_order(path: Path) {
    let (_t, m, _s) = memory_on(path, either_order_rules());
    let likes = say_session(&m, "I like Jordan.", "user", Some("Maya Okafor"), "s1");
    let first = entities(&m, "Jordan");
    assert_eq!(first.len(), 1, "the mention's node");
    assert_eq!(first[0].metadata.as_ref().unwrap()["entity_type"], "other");

    let spoke = say_session(&m, "I love cilantro.", "participant", Some("Jordan"), "s1");
    let jordan = entities(&m, "Jordan");
    assert_eq!(jordan.len(), 1, "Jordan is one node: {jordan:#?}");
    assert_eq!(jordan[0].id, first[0].id, "the person adopted the mention");
    let md = jordan[0].metadata.as_ref().unwrap();
    assert_eq!(md["entity_type"], "person");
    assert_eq!(md["typed_person_by"], json!(spoke.event_id.to_string()));
    assert!(
        md.get("owner_name").is_none(),
        "a name named before is not the owner's"
    );
    let cilantro = claim_said(&m, "I love cilantro.");
    assert_eq!(has_fact_from(&m, &cilantro), vec![jordan[0].id]);
    let md = cilantro.metadata.as_ref().unwrap();
    assert_eq!(md["speaker_reference"]["basis"], "speaker");
    assert_eq!(md["speaker_reference"]["speaker"], "Jordan");
    assert_eq!(
        mentioned(&m, &claim_said(&m, "I like Jordan.")),
        vec![jordan[0].id]
    );
    assert_eq!(likes.status, kith::WorkStatus::Complete);

    // A later mention, whatever the turn typed it, is the same node, and
    // the adopted node is a person the group rules can find.
    say_session(
        &m,
        "Jordan is my partner.",
        "user",
        Some("Maya Okafor"),
        "s1",
    );
    say_session(
        &m,
        "Jordan and I went hiking.",
        "user",
        Some("Maya Okafor"),
        "s1",
    );
    assert_eq!(entities(&m, "Jordan").len(), 1);
    say_session(
        &m,
        "We prefer trains to flights.",
        "user",
        Some("Maya Okafor"),
        "s1",
    );
    let trains = &claims(&m, "prefers")[0];
    assert_eq!(linked(&m, trains), ["Jordan", "Maya Okafor"]);
    let partner = claim_said(&m, "Jordan is my partner.");
    assert!(
        mentioned(&m, &partner).contains(&jordan[0].id)
            || has_fact_from(&m, &partner).contains(&jordan[0].id)
    );

    // A namesake of a real different type stays apart.
    say_session(&m, "I moved to Jordan.", "user", Some("Maya Okafor"), "s1");
    let both = entities(&m, "Jordan");
    assert_eq!(both.len(), 2, "the country is not the person: {both:#?}");
    assert_eq!(persons(&m, "Jordan").len(), 1);
    assert!(m.doctor().unwrap().healthy());
}
on_both_paths!(
    one_person_one_node_in_either_order_on,
    one_person_one_node_in_either_order
);

/// `kith_ingest_v4` is a new policy: a speaking turn whose extraction was
/// saved under `kith_ingest_v3` still makes a second node, as it did.
fn either_order_replays_under_v3(path: Path) {
    let (_t, m, _s) = memory_on(path, either_order_rules());
    say_session(&m, "I like Jordan.", "user", Some("Maya Okafor"), "s1");
    let r = m
        .ingest(
            EventInput {
                owner_id: Some("owner".into()),
                speaker: Some("Jordan".into()),
                session_id: Some("s1".into()),
                ..EventInput::new("participant", "I love cilantro.")
            },
            IngestOptions {
                defer: true,
                ..IngestOptions::default()
            },
        )
        .unwrap();
    let event = m
        .event(&OwnerId::new("owner").unwrap(), r.event_id)
        .unwrap()
        .event;
    let extraction = json!({
        "entities": [person("Jordan")],
        "facts": [fact("I", "likes", "cilantro", "I love cilantro.")],
    });
    save_old_extraction(&m, &event, &extraction, Some("kith_ingest_v3"));
    assert_eq!(
        m.process_event(event.id).unwrap(),
        kith::WorkStatus::Complete
    );
    assert_eq!(plan_policy(&m, event.id), "kith_ingest_v3");
    assert_eq!(entities(&m, "Jordan").len(), 2, "v3 made a second node");
    assert_eq!(persons(&m, "Jordan").len(), 1);
    assert!(m.doctor().unwrap().healthy());
}
on_both_paths!(
    either_order_replays_under_v3_on,
    either_order_replays_under_v3
);

fn intention_rules() -> Vec<(&'static str, Value)> {
    vec![
        // Each reply states the attempt or intention twice: once as a done
        // fact (which must be dropped) and once with a non-actual predicate.
        (
            "I'm trying to quit coffee.",
            json!({"facts": [fact("I", "quit", "coffee", "I'm trying to quit coffee."),
                             fact("I", "trying_to_quit", "coffee", "I'm trying to quit coffee.")]}),
        ),
        (
            "I plan to move.",
            json!({"facts": [fact("I", "relocated", "move", "I plan to move."),
                             fact("I", "plans_to", "move", "I plan to move.")]}),
        ),
        (
            "I want to learn Go.",
            json!({"entities": [{"name": "Go", "entity_type": "programming_language"}],
                   "facts": [with(fact("I", "knows", "Go", "I want to learn Go."),
                                  "object_entity_type", json!("programming_language")),
                             with(fact("I", "wants_to_learn", "Go", "I want to learn Go."),
                                  "object_entity_type", json!("programming_language"))]}),
        ),
    ]
}

/// Issue 13 item 9 (spec ¶8, reference notes §3): attempts and intentions
/// keep a non-actual predicate and are never stored as done facts.
fn attempts_and_intentions_are_never_done_facts(path: Path) {
    let (_t, m, _s) = memory_on(path, intention_rules());
    let texts = [
        "I'm trying to quit coffee.",
        "I plan to move.",
        "I want to learn Go.",
    ];
    let owner = OwnerId::new("owner").unwrap();
    for text in texts {
        let r = say_in(&m, text, Some("Maya"), "user", "personal");
        let stored: Vec<String> = all(&m)
            .into_iter()
            .filter(|c| c.node_type != NodeType::Entity && c.content == text)
            .map(|c| predicate_of(&c))
            .collect();
        assert!(!stored.is_empty(), "{text}: the intention is kept");
        for p in &stored {
            assert!(
                kith::extract::grounding::is_non_actual_predicate(p),
                "{text}: stored as a done fact ({p})"
            );
        }
        if path == Path::Recorded {
            let dropped = m.work_status(&owner, r.event_id).unwrap().dropped;
            assert_eq!(dropped.len(), 1, "{text}: {dropped:?}");
            assert!(matches!(
                dropped[0].reason,
                kith::extract::grounding::DropReason::IntentionAsFact { .. }
            ));
        }
    }
}
on_both_paths!(
    attempts_and_intentions_are_never_done_facts_on,
    attempts_and_intentions_are_never_done_facts
);

/// Saves `extraction` as the event's EXTRACTION_VALIDATED record the way a
/// build of `policy` did: `None` is a record from before policies were
/// recorded (`kith_ingest_v2`).
fn save_old_extraction(m: &Memory, event: &kith::Event, extraction: &Value, policy: Option<&str>) {
    let mut payload = json!({
        "event_id": event.id.to_string(),
        "content_sha256": event.content_sha256,
        "provider": "heuristic",
        "model": "kith-heuristic-v1",
        "calls": 0,
        "raw": extraction.to_string(),
        "extraction": extraction,
        "pronoun_repair": null,
    });
    if let Some(p) = policy {
        payload["policy"] = json!(p);
    }
    let mut tx = m.store_backend().begin(kith_store::TxMode::Write).unwrap();
    tx.append_operation(&kith::Operation::new(
        kith::ingest::plan::extraction_op_id(event.id),
        kith::OperationKind::ExtractionValidated,
        event.owner_id.clone(),
        event.scope.clone(),
        Some(event.id),
        payload,
        kith::Timestamp::now(),
    ))
    .unwrap();
    tx.commit().unwrap();
}

fn deferred(m: &Memory, text: &str) -> kith::Event {
    let r = m
        .ingest(
            EventInput {
                owner_id: Some("owner".into()),
                scope: Some("personal".into()),
                ..EventInput::new("user", text)
            },
            IngestOptions {
                defer: true,
                ..IngestOptions::default()
            },
        )
        .unwrap();
    m.event(&OwnerId::new("owner").unwrap(), r.event_id)
        .unwrap()
        .event
}

/// The policy of the plan committed for an event.
fn plan_policy(m: &Memory, event_id: uuid::Uuid) -> String {
    let mut tx = m.store_backend().begin(kith_store::TxMode::Read).unwrap();
    let op = tx
        .get_operation(kith::ingest::plan::receipt_op_id(event_id, 1))
        .unwrap()
        .expect("a committed plan");
    op.payload["policy"].as_str().unwrap().to_string()
}

/// Issue 13 item 6 (spec ¶13): a record saved under the previous policy is
/// planned under that policy's rules; a fresh one under the current one;
/// a policy this build does not have is refused, clearly.
fn records_replay_under_their_policy(path: Path) {
    let (_t, m, _s) = memory_on(path, quoted_rules());
    say_in(&m, "Hi, I'm Maya Okafor.", None, "user", "personal");
    let maya = persons(&m, "Maya Okafor");
    assert_eq!(maya.len(), 1);
    let text = "Jordan texted me: I love cilantro.";
    // What the extractor of each path gave for this turn under
    // kith_ingest_v2: Jordan listed but not typed a person.
    let extraction = json!({
        "entities": [{"name": "Jordan", "entity_type": "other"}],
        "facts": [fact("I", "likes", "cilantro", text)],
    });

    let old = deferred(&m, text);
    save_old_extraction(&m, &old, &extraction, None);
    assert_eq!(m.process_event(old.id).unwrap(), kith::WorkStatus::Complete);
    assert_eq!(plan_policy(&m, old.id), "kith_ingest_v2");
    let old_claim = all(&m)
        .into_iter()
        .find(|n| n.evidence_refs.contains(&old.id) && n.node_type != NodeType::Entity)
        .unwrap();
    // The old rules: the turn named no listed person, so the owner's name
    // carried. (That is the bug kith_ingest_v3 fixes; the record keeps the
    // rules it was saved under.)
    assert_eq!(has_fact_from(&m, &old_claim), vec![maya[0].id]);

    // The same turn ingested now is planned under the current policy.
    let fresh = say_in(&m, text, None, "user", "personal");
    assert_eq!(plan_policy(&m, fresh.event_id), kith::ingest::plan::POLICY);
    assert_eq!(kith::ingest::plan::POLICY, "kith_ingest_v9");
    let claim_of = |event_id| {
        all(&m)
            .into_iter()
            .find(|n| n.evidence_refs == vec![event_id] && n.node_type != NodeType::Entity)
            .unwrap()
    };
    let fresh_claim = claim_of(fresh.event_id);
    assert!(!has_fact_from(&m, &fresh_claim).contains(&maya[0].id));
    // kith_ingest_v9: the relayed I is Jordan's.
    let jordan = persons(&m, "Jordan");
    assert_eq!(has_fact_from(&m, &fresh_claim), vec![jordan[0].id]);

    // A record saved under kith_ingest_v8 keeps its I local.
    let v8 = deferred(&m, text);
    save_old_extraction(&m, &v8, &extraction, Some("kith_ingest_v8"));
    assert_eq!(m.process_event(v8.id).unwrap(), kith::WorkStatus::Complete);
    assert_eq!(plan_policy(&m, v8.id), "kith_ingest_v8");
    let local = entities(&m, "I");
    assert_eq!(local.len(), 1);
    assert_eq!(has_fact_from(&m, &claim_of(v8.id)), vec![local[0].id]);
    let mut tx = m.store_backend().begin(kith_store::TxMode::Read).unwrap();
    let saved = tx
        .get_operation(kith::ingest::plan::extraction_op_id(fresh.event_id))
        .unwrap()
        .unwrap();
    assert_eq!(saved.payload["policy"], kith::ingest::plan::POLICY);
    drop(tx);

    // A policy from a newer kith: refused, nothing derived, the reason said.
    let newer = deferred(&m, text);
    save_old_extraction(&m, &newer, &extraction, Some("kith_ingest_v10"));
    let before = all(&m).len();
    assert_eq!(m.process_event(newer.id).unwrap(), kith::WorkStatus::Failed);
    let owner = OwnerId::new("owner").unwrap();
    let item = m.work_status(&owner, newer.id).unwrap().item;
    assert_eq!(item.reason_code.as_deref(), Some("unknown_policy"));
    assert!(
        item.last_error
            .as_deref()
            .is_some_and(|e| e.contains("\"kith_ingest_v10\" is not built into this kith")),
        "{:?}",
        item.last_error
    );
    assert_eq!(all(&m).len(), before);
    let err = m.reingest_event(&owner, newer.id).unwrap_err();
    assert_eq!(err.kind(), kith::ErrorKind::Unsupported);
    assert!(m.doctor().unwrap().healthy());
}
on_both_paths!(
    records_replay_under_their_policy_on,
    records_replay_under_their_policy
);

fn chat_rules() -> Vec<(&'static str, Value)> {
    vec![
        (
            "Hey Caroline! I'm swamped with the kids & work.",
            json!({"entities": [person("Caroline")],
                   "facts": [fact("I", "is", "swamped with the kids & work",
                                  "I'm swamped with the kids & work.")]}),
        ),
        (
            "Thanks, Mel! I went to a LGBTQ support group yesterday.",
            json!({"entities": [json!({"name": "Mel", "entity_type": "other"})],
                   "facts": [fact("I", "went_to", "a LGBTQ support group",
                                  "I went to a LGBTQ support group yesterday.")]}),
        ),
        (
            "Caroline said, \"I painted a lake sunrise.\"",
            json!({"entities": [person("Caroline")],
                   "facts": [fact("I", "painted", "a lake sunrise",
                                  "Caroline said, \"I painted a lake sunrise.\"")]}),
        ),
        (
            "Gonna go swimming with the kids. Painting is fun.",
            json!({}),
        ),
        (
            "Yeah, I painted that lake sunrise last year!",
            json!({"facts": [fact("I", "painted", "that lake sunrise",
                                  "Yeah, I painted that lake sunrise last year!")]}),
        ),
    ]
}

/// Issue 14: what people write in chat (greetings, nicknames, quoted
/// speech, sentence openers) through the clause reader and a model alike:
/// each speaker is one person, a nickname is never a new person, a quoted
/// I never lands on the speaker, and sentence openers are no entities.
fn chat_lands_on_the_right_person(path: Path) {
    let (_t, m, _s) = memory_on(path, chat_rules());
    let turns = [
        ("Melanie", "Hey Caroline! I'm swamped with the kids & work."),
        (
            "Caroline",
            "Thanks, Mel! I went to a LGBTQ support group yesterday.",
        ),
        ("Melanie", "Caroline said, \"I painted a lake sunrise.\""),
        (
            "Melanie",
            "Gonna go swimming with the kids. Painting is fun.",
        ),
        ("Melanie", "Yeah, I painted that lake sunrise last year!"),
    ];
    for (speaker, text) in turns {
        say_in(&m, text, Some(speaker), "user", "personal");
    }
    let melanie = persons(&m, "Melanie");
    let caroline = persons(&m, "Caroline");
    assert_eq!((melanie.len(), caroline.len()), (1, 1), "one node each");
    assert!(persons(&m, "Mel").is_empty(), "a nickname is no new person");
    for opener in ["Gonna", "Painting", "Hey", "Yeah", "Thanks"] {
        assert!(entities(&m, opener).is_empty(), "{opener} became an entity");
    }
    let of = |p: &Node| predicates_and_objects(&m, p);
    let mel = of(&melanie[0]);
    assert!(
        mel.contains(&("is".into(), "swamped with the kids & work".into())),
        "{mel:?}"
    );
    assert!(
        mel.contains(&("painted".into(), "that lake sunrise".into())),
        "{mel:?}"
    );
    assert!(
        !mel.iter()
            .any(|(_, o)| o == "a lake sunrise" || o == "a LGBTQ support group"),
        "Caroline's words landed on Melanie: {mel:?}"
    );
    let caro = of(&caroline[0]);
    assert!(
        caro.contains(&("went_to".into(), "a LGBTQ support group".into())),
        "{caro:?}"
    );
    // The quoted claim exists, and is not the speaker's.
    let quoted: Vec<Node> = claims(&m, "painted")
        .into_iter()
        .filter(|c| c.metadata.as_ref().unwrap()["object"] == "a lake sunrise")
        .collect();
    assert_eq!(quoted.len(), 1);
    assert!(!has_fact_from(&m, &quoted[0]).contains(&melanie[0].id));

    // The nickname becomes an alias proposal for Melanie, never a merge
    // and never a second person; "Caroline" is no short form of anyone.
    let names = organized_proposals(&m);
    assert_eq!(
        names,
        vec![("Mel".to_string(), "Melanie".to_string())],
        "{names:?}"
    );
    assert_eq!(persons(&m, "Melanie").len(), 1);
    assert_eq!(entities(&m, "Mel").len(), 1, "proposed, not merged");
    assert!(m.doctor().unwrap().healthy());
}
on_both_paths!(
    chat_lands_on_the_right_person_on,
    chat_lands_on_the_right_person
);

/// The names of each alias proposal in the owner's inbox, each pair sorted.
/// Runs the duplicate and alias passes for "owner", then lists the alias
/// proposals' names ([`proposed_pairs`]).
fn organized_proposals(m: &Memory) -> Vec<(String, String)> {
    let owner = kith::OwnerId::new("owner").unwrap();
    m.organize(
        &owner,
        &[kith::Job::Deduplicate, kith::Job::AliasResolve],
        0,
    )
    .unwrap();
    proposed_pairs(m, &owner)
}

fn proposed_pairs(m: &Memory, owner: &kith::OwnerId) -> Vec<(String, String)> {
    m.alias_proposals(owner)
        .unwrap()
        .iter()
        .map(|p| {
            let mut pair = [p.a_name.clone(), p.b_name.clone()];
            pair.sort();
            (pair[0].clone(), pair[1].clone())
        })
        .collect()
}

fn full_name_rules() -> Vec<(&'static str, Value)> {
    vec![(
        "Hey, I'm Daniel Reyes.",
        json!({"entities": [person("Daniel Reyes")],
               "facts": [fact("I", "name", "Daniel Reyes", "Hey, I'm Daniel Reyes.")]}),
    )]
}

/// A speaker who gives their full name ("Daniel", then "Hey, I'm Daniel
/// Reyes."): the full name's node is proposed as an alias of the
/// speaker's person — a proposal in the inbox, never a merge, and never
/// refused because only the speaker's node carries the owner's mark
/// (before, `organize` refused the pair as `different_metadata` and
/// nothing tied the two nodes).
fn a_full_name_is_proposed_for_the_speaker(path: Path) {
    let (_t, m, _s) = memory_on(path, full_name_rules());
    say_in(
        &m,
        "Hey, I'm Daniel Reyes.",
        Some("Daniel"),
        "user",
        "personal",
    );
    assert_eq!(persons(&m, "Daniel").len(), 1);
    assert_eq!(persons(&m, "Daniel Reyes").len(), 1);
    let names = organized_proposals(&m);
    assert_eq!(names, [("Daniel".to_string(), "Daniel Reyes".to_string())]);
    assert_eq!(persons(&m, "Daniel").len(), 1, "proposed, not merged");
    assert_eq!(persons(&m, "Daniel Reyes").len(), 1, "proposed, not merged");
    assert!(m.doctor().unwrap().healthy());
}
on_both_paths!(
    a_full_name_is_proposed_for_the_speaker_on,
    a_full_name_is_proposed_for_the_speaker
);

fn first_name_rules() -> Vec<(&'static str, Value)> {
    vec![
        (
            "Hey Jake! Did you hear? Mike got engaged to Priya last weekend!",
            json!({"entities": [person("Jake"), person("Mike"), person("Priya")],
                   "facts": [fact("Mike", "engaged_to", "Priya",
                                  "Mike got engaged to Priya last weekend!")]}),
        ),
        (
            "No way!! I'm cooking for the engagement dinner then.",
            json!({"facts": [fact("I", "cooking_for", "the engagement dinner",
                                  "I'm cooking for the engagement dinner then.")]}),
        ),
    ]
}

/// A first name said to a speaker before he speaks ("Hey Jake!" from
/// Samantha, then Jake Miller's reply) is proposed as that speaker, never
/// merged: a model types "Jake" a person, the heuristic (which cannot
/// tell) `other`, and before, only two people were compared by first
/// name, so the heuristic's pair was never even a candidate.
fn a_first_name_is_proposed_for_the_speaker_it_names(path: Path) {
    let (_t, m, _s) = memory_on(path, first_name_rules());
    say_in(
        &m,
        "Hey Jake! Did you hear? Mike got engaged to Priya last weekend!",
        Some("Samantha Cole"),
        "user",
        "personal",
    );
    say_in(
        &m,
        "No way!! I'm cooking for the engagement dinner then.",
        Some("Jake Miller"),
        "user",
        "personal",
    );
    assert_eq!(entities(&m, "Jake").len(), 1);
    assert_eq!(persons(&m, "Jake Miller").len(), 1);
    let names = organized_proposals(&m);
    assert!(
        names.contains(&("Jake".to_string(), "Jake Miller".to_string())),
        "{names:?}"
    );
    assert!(
        !names.iter().any(|(a, b)| a == "Mike" || b == "Mike"),
        "nobody else is proposed: {names:?}"
    );
    assert_eq!(entities(&m, "Jake").len(), 1, "proposed, not merged");
    assert_eq!(persons(&m, "Jake Miller").len(), 1, "proposed, not merged");
    assert!(m.doctor().unwrap().healthy());
}
on_both_paths!(
    a_first_name_is_proposed_for_the_speaker_it_names_on,
    a_first_name_is_proposed_for_the_speaker_it_names
);

fn reported_rules() -> Vec<(&'static str, Value)> {
    vec![
        // The model quotes only the reported words: the rule reads the
        // whole sentence they stand in.
        (
            "Dev says: I'm allergic to peanuts.",
            json!({"entities": [person("Dev")],
                   "facts": [fact("I", "allergic_to", "peanuts", "I'm allergic to peanuts.")]}),
        ),
        (
            "Jordan texted me: I love cilantro.",
            json!({"facts": [fact("I", "likes", "cilantro", "Jordan texted me: I love cilantro.")]}),
        ),
        // A line pasted from a chat.
        (
            "Dev: I hate cilantro",
            json!({"entities": [person("Dev")],
                   "facts": [negative(fact("I", "likes", "cilantro", "Dev: I hate cilantro"))]}),
        ),
        (
            "I told Dev: I work at Figma now.",
            json!({"entities": [person("Dev"), org("Figma")],
                   "facts": [with(fact("I", "works_at", "Figma", "I told Dev: I work at Figma now."),
                                  "object_entity_type", json!("organization"))]}),
        ),
        (
            "Honestly, I love sushi.",
            json!({"facts": [fact("I", "likes", "sushi", "Honestly, I love sushi.")]}),
        ),
    ]
}

/// `kith_ingest_v6`: someone else's words reported after a colon, without
/// quotation marks, or on a line pasted from a chat (`Dev: I hate
/// cilantro`), are theirs even when the turn names its speaker; the
/// speaker quoting themselves ("I told Dev: …") and the speaker's own
/// turns still bind, through the heuristic extractor and a model alike.
fn reported_first_person_is_never_the_speakers(path: Path) {
    let (_t, m, _s) = said_on(path, reported_rules(), Some("Priya Nair"));
    let priya = persons(&m, "Priya Nair");
    assert_eq!(priya.len(), 1, "one node for the speaker");
    let hers = predicates_and_objects(&m, &priya[0]);
    assert!(
        !hers.iter().any(|(_, o)| o == "peanuts" || o == "cilantro"),
        "reported words landed on the speaker: {hers:?}"
    );
    assert!(
        hers.contains(&("works_at".into(), "Figma".into())),
        "the speaker quoting herself is hers: {hers:?}"
    );
    assert!(
        hers.contains(&("likes".into(), "sushi".into())),
        "her own turn is hers: {hers:?}"
    );
    // The reported claims exist, each on the person whose words they are
    // (`kith_ingest_v9`): the one a reporting word names, or the label of
    // a line pasted from a chat.
    let (dev, jordan) = (persons(&m, "Dev"), persons(&m, "Jordan"));
    assert_eq!((dev.len(), jordan.len()), (1, 1), "one node each");
    let mut bound: Vec<(String, uuid::Uuid)> = Vec::new();
    for claim in all(&m)
        .into_iter()
        .filter(|n| n.node_type != NodeType::Entity)
    {
        let md = claim.metadata.clone().unwrap_or_default();
        let object = md["object"].as_str().unwrap_or("").to_string();
        if object != "peanuts" && object != "cilantro" {
            continue;
        }
        let from = has_fact_from(&m, &claim);
        assert!(!from.contains(&priya[0].id));
        assert_eq!(md["speaker_reference"]["basis"], "quoted_speaker");
        bound.extend(from.into_iter().map(|id| (object.clone(), id)));
    }
    bound.sort();
    let mut want = vec![
        ("cilantro".to_string(), dev[0].id),
        ("cilantro".to_string(), jordan[0].id),
        ("peanuts".to_string(), dev[0].id),
    ];
    want.sort();
    assert_eq!(bound, want);
    assert!(entities(&m, "I").is_empty(), "no I entity is made");
    assert!(m.doctor().unwrap().healthy());
}
on_both_paths!(
    reported_first_person_is_never_the_speakers_on,
    reported_first_person_is_never_the_speakers
);

fn authors_rules() -> Vec<(&'static str, Value)> {
    vec![
        (
            "My boss Karen said \"I am quitting in June\" during standup.",
            json!({"entities": [person("Karen")],
                   "facts": [fact("I", "has_boss", "Karen",
                                  "My boss Karen said \"I am quitting in June\" during standup."),
                             fact("I", "quitting_in", "June", "I am quitting in June")]}),
        ),
        (
            "\u{201C}I hate sushi,\u{201D} my sister Ana said.",
            json!({"entities": [person("Ana")],
                   "facts": [fact("I", "has_sister", "Ana",
                                  "\u{201C}I hate sushi,\u{201D} my sister Ana said."),
                             negative(fact("I", "likes", "sushi", "I hate sushi"))]}),
        ),
        (
            "My brother Tom texted me: I got the job at Google.",
            json!({"entities": [person("Tom"), org("Google")],
                   "facts": [fact("I", "has_brother", "Tom",
                                  "My brother Tom texted me: I got the job at Google."),
                             with(fact("I", "works_at", "Google", "I got the job at Google."),
                                  "object_entity_type", json!("organization"))]}),
        ),
    ]
}

/// `kith_ingest_v7`: a sentence that relays someone's first person can
/// still carry the author's own — `My boss Karen said "I am quitting…"`
/// says the speaker has a boss. A claim whose first person and other
/// endpoint both stand outside the quote (and before a reporting colon) is
/// the speaker's; the relayed words stay off her (before v7 the whole
/// sentence stayed local, and the speaker lost her boss, sister and
/// brother).
fn the_authors_own_words_beside_a_quote_are_hers(path: Path) {
    let (_t, m, _s) = said_on(path, authors_rules(), Some("Priya Nair"));
    let priya = persons(&m, "Priya Nair");
    assert_eq!(priya.len(), 1, "one node for the speaker");
    let hers = predicates_and_objects(&m, &priya[0]);
    for (predicate, object) in [
        ("has_boss", "Karen"),
        ("has_sister", "Ana"),
        ("has_brother", "Tom"),
    ] {
        assert!(
            hers.contains(&(predicate.into(), object.into())),
            "{predicate} {object} is the speaker's: {hers:?}"
        );
    }
    assert!(
        !hers
            .iter()
            .any(|(_, o)| ["June", "sushi", "Google"].iter().any(|r| o.contains(r))),
        "relayed words landed on the speaker: {hers:?}"
    );
    // The relayed claims exist, off the speaker.
    let relayed: Vec<Node> = all(&m)
        .into_iter()
        .filter(|n| {
            n.node_type != NodeType::Entity
                && n.metadata.as_ref().is_some_and(|md| {
                    let o = md["object"].as_str().unwrap_or("");
                    ["June", "sushi", "Google"].iter().any(|r| o.contains(r))
                })
        })
        .collect();
    assert_eq!(relayed.len(), 3, "{relayed:?}");
    for claim in &relayed {
        assert!(!has_fact_from(&m, claim).contains(&priya[0].id));
    }
    assert!(m.doctor().unwrap().healthy());
}
on_both_paths!(
    the_authors_own_words_beside_a_quote_are_hers_on,
    the_authors_own_words_beside_a_quote_are_hers
);

fn named_rules() -> Vec<(&'static str, Value)> {
    let place = |name: &str| json!({"name": name, "entity_type": "place"});
    vec![
        (
            "My sister Ana is allergic to cats.",
            json!({"entities": [person("Ana")],
                   "facts": [fact("I", "has_sister", "Ana", "My sister Ana is allergic to cats."),
                             fact("Ana", "allergic_to", "cats", "My sister Ana is allergic to cats.")]}),
        ),
        (
            "Honestly, Sam loves hiking.",
            json!({"entities": [person("Sam")],
                   "facts": [fact("Sam", "likes", "hiking", "Honestly, Sam loves hiking.")]}),
        ),
        (
            "My cousin Raj works at Skyport.",
            json!({"entities": [person("Raj"), org("Skyport")],
                   "facts": [fact("I", "has_cousin", "Raj", "My cousin Raj works at Skyport."),
                             with(fact("Raj", "works_at", "Skyport", "My cousin Raj works at Skyport."),
                                  "object_entity_type", json!("organization"))]}),
        ),
        (
            "Raj just moved to Berlin.",
            json!({"entities": [person("Raj"), place("Berlin")],
                   "facts": [with(fact("Raj", "lives_in", "Berlin", "Raj just moved to Berlin."),
                                  "temporal_intent", json!("update"))]}),
        ),
        (
            "I love sushi.",
            json!({"facts": [fact("I", "likes", "sushi", "I love sushi.")]}),
        ),
    ]
}

/// What the author says about someone she names in the third person is
/// that person's, on one node per person, and never the author's; her own
/// claims of the same turns stay hers. The heuristic reads these sentences
/// since `kith-heuristic-v5` (its `named_*` rows); before, "Sam loves
/// hiking." gave nothing at all.
fn a_named_persons_facts_are_theirs(path: Path) {
    let (_t, m, _s) = said_on(path, named_rules(), Some("Priya Nair"));
    // One node a name: a person's, or (on the heuristic, which cannot tell
    // "Sam loves hiking" of a person from one of a dog) untyped.
    let facts = |name: &str| -> Vec<(String, String)> {
        let people = entities(&m, name);
        assert_eq!(people.len(), 1, "one node for {name}");
        predicates_and_objects(&m, &people[0])
    };
    let pair = |p: &str, o: &str| (p.to_string(), o.to_string());
    assert_eq!(persons(&m, "Priya Nair").len(), 1);
    let hers = facts("Priya Nair");
    for own in [
        pair("has_sister", "Ana"),
        pair("has_cousin", "Raj"),
        pair("likes", "sushi"),
    ] {
        assert!(hers.contains(&own), "{own:?} is the speaker's: {hers:?}");
    }
    for theirs in ["cats", "hiking", "Skyport", "Berlin"] {
        assert!(
            !hers.iter().any(|(_, o)| o == theirs),
            "{theirs} landed on the speaker: {hers:?}"
        );
    }
    assert!(facts("Ana").contains(&pair("allergic_to", "cats")));
    assert!(facts("Sam").contains(&pair("likes", "hiking")));
    let raj = facts("Raj");
    assert!(raj.contains(&pair("works_at", "Skyport")), "{raj:?}");
    assert!(raj.contains(&pair("lives_in", "Berlin")), "{raj:?}");
    assert!(m.doctor().unwrap().healthy());
}
on_both_paths!(
    a_named_persons_facts_are_theirs_on,
    a_named_persons_facts_are_theirs
);

fn pasted_rules() -> Vec<(&'static str, Value)> {
    vec![
        (
            "Hi, I'm Maya Okafor.",
            json!({"entities": [person("Maya Okafor")],
                   "facts": [fact("I", "name", "Maya Okafor", "Hi, I'm Maya Okafor.")]}),
        ),
        (
            "Alex: Hi, I'm Alex Rivera.",
            json!({"entities": [person("Alex Rivera")],
                   "facts": [fact("I", "name", "Alex Rivera", "Alex: Hi, I'm Alex Rivera.")]}),
        ),
        (
            "I love hiking.",
            json!({"facts": [fact("I", "likes", "hiking", "I love hiking.")]}),
        ),
    ]
}

/// `kith_ingest_v6`: an introduction on a line pasted from a chat is the
/// labelled speaker's. It never becomes the owner's name, so the owner's
/// next turn stays the owner's (before, "I love hiking." landed on Alex).
fn a_pasted_introduction_never_becomes_the_owner(path: Path) {
    let (_t, m, _s) = said_on(path, pasted_rules(), None);
    let maya = persons(&m, "Maya Okafor");
    assert_eq!(maya.len(), 1);
    let likes = claims(&m, "likes");
    assert_eq!(likes.len(), 1);
    assert_eq!(
        has_fact_from(&m, &likes[0]),
        vec![maya[0].id],
        "the owner's turn after the pasted line is the owner's"
    );
    for alex in entities(&m, "Alex Rivera") {
        let md = alex.metadata.as_ref().unwrap();
        assert!(md.get("owner_name").is_none(), "{md}");
    }
    assert!(m.doctor().unwrap().healthy());
}
on_both_paths!(
    a_pasted_introduction_never_becomes_the_owner_on,
    a_pasted_introduction_never_becomes_the_owner
);

fn hearsay_rules() -> Vec<(&'static str, Value)> {
    vec![
        // The model takes each sentence at its word: asserted.
        (
            "Dev says Ana loves sushi.",
            json!({"entities": [person("Dev"), person("Ana")],
                   "facts": [fact("Ana", "likes", "sushi", "Dev says Ana loves sushi.")]}),
        ),
        (
            "According to Ana, Dev works at Google.",
            json!({"entities": [person("Ana"), person("Dev"), org("Google")],
                   "facts": [with(fact("Dev", "works_at", "Google",
                                       "According to Ana, Dev works at Google."),
                                  "object_entity_type", json!("organization"))]}),
        ),
        (
            "I heard that Tom moved to Berlin.",
            json!({"entities": [person("Tom")],
                   "facts": [fact("Tom", "lives_in", "Berlin", "I heard that Tom moved to Berlin.")]}),
        ),
        (
            "I told Dev that I love ramen.",
            json!({"entities": [person("Dev")],
                   "facts": [fact("I", "likes", "ramen", "I told Dev that I love ramen.")]}),
        ),
        (
            "Ana loves tea.",
            json!({"entities": [person("Ana")],
                   "facts": [fact("Ana", "likes", "tea", "Ana loves tea.")]}),
        ),
    ]
}

/// The one claim whose object is `object`.
fn claim_with_object(m: &Memory, object: &str) -> Node {
    let found: Vec<Node> = all(m)
        .into_iter()
        .filter(|n| {
            n.node_type != NodeType::Entity
                && n.metadata.as_ref().is_some_and(|md| md["object"] == object)
        })
        .collect();
    assert_eq!(found.len(), 1, "{object}: {found:?}");
    found.into_iter().next().unwrap()
}

/// `kith_ingest_v8`: what the author reports someone else saying is
/// unverified and names who said it, on the person it is about; the
/// author's own words — reporting themselves included — stay plain, through
/// the heuristic extractor and a model that calls everything asserted.
fn reported_claims_are_unverified(path: Path) {
    let (_t, m, _s) = said_on(path, hearsay_rules(), Some("Priya Nair"));
    for (object, about, by) in [
        ("sushi", "Ana", json!("Dev")),
        ("Google", "Dev", json!("Ana")),
        ("Berlin", "Tom", Value::Null),
    ] {
        let claim = claim_with_object(&m, object);
        assert_eq!(
            claim.epistemic_type,
            kith::EpistemicType::Unverified,
            "{object}"
        );
        let md = claim.metadata.as_ref().unwrap();
        assert_eq!(md["reported"], json!({ "by": by }), "{object}");
        let subject = entities(&m, about);
        assert!(
            subject
                .iter()
                .any(|e| has_fact_from(&m, &claim).contains(&e.id)),
            "{object} is about {about}"
        );
    }
    let priya = persons(&m, "Priya Nair");
    assert_eq!(priya.len(), 1);
    for (object, owner) in [("ramen", Some(priya[0].id)), ("tea", None)] {
        let claim = claim_with_object(&m, object);
        assert_eq!(
            claim.epistemic_type,
            kith::EpistemicType::Asserted,
            "{object}"
        );
        let md = claim.metadata.as_ref().unwrap();
        assert!(md.get("reported").is_none(), "{object}: {md}");
        if let Some(id) = owner {
            assert_eq!(has_fact_from(&m, &claim), vec![id], "{object} is hers");
        }
    }
    assert!(m.doctor().unwrap().healthy());
}
on_both_paths!(
    reported_claims_are_unverified_on,
    reported_claims_are_unverified
);

/// `kith_ingest_v8`: a reported update retires nothing — Tom's own job
/// stays current when Dev says he left — while the same update in the
/// author's own words does (the contrast shows which rule holds it back).
#[test]
fn a_reported_update_supersedes_nothing() {
    let left = |quote: &str| {
        json!({"entities": [person("Tom"), org("Acme")],
               "facts": [with(with(negative(fact("Tom", "works_at", "Acme", quote)),
                                   "temporal_intent", json!("update")),
                              "object_entity_type", json!("organization"))]})
    };
    let rules = vec![
        (
            "Tom works at Acme.",
            json!({"entities": [person("Tom"), org("Acme")],
                   "facts": [with(fact("Tom", "works_at", "Acme", "Tom works at Acme."),
                                  "object_entity_type", json!("organization"))]}),
        ),
        (
            "Dev says Tom no longer works at Acme.",
            left("Dev says Tom no longer works at Acme."),
        ),
        (
            "Tom no longer works at Acme.",
            left("Tom no longer works at Acme."),
        ),
    ];
    let (_t, m, _s) = memory(rules, IdentityOptions::default());
    let t0 = "2025-01-01T09:00:00Z";
    say(&m, "Tom works at Acme.", None, t0);
    say(
        &m,
        "Dev says Tom no longer works at Acme.",
        None,
        "2025-02-01T09:00:00Z",
    );
    let works = |m: &Memory| -> Vec<Node> {
        claims(m, "works_at")
            .into_iter()
            .filter(|c| c.metadata.as_ref().unwrap()["polarity"] == "positive")
            .collect()
    };
    assert_eq!(works(&m).len(), 1);
    assert_eq!(
        works(&m)[0].lifecycle,
        kith::Lifecycle::Tentative,
        "hearsay retires nothing"
    );
    say(
        &m,
        "Tom no longer works at Acme.",
        None,
        "2025-03-01T09:00:00Z",
    );
    assert_eq!(
        works(&m)[0].lifecycle,
        kith::Lifecycle::Superseded,
        "the author's own update does"
    );
    assert!(m.doctor().unwrap().healthy());
}

/// `kith_ingest_v8` for relationships: a model's relationship read from
/// reported words is unverified and names the reporter; the same
/// relationship in the author's own words stays as the model said.
#[test]
fn a_reported_relationship_names_its_reporter() {
    let married = |quote: &str| {
        json!({"entities": [person("Ana"), person("Tom")],
               "relationships": [{"source_entity": "Ana", "target_entity": "Tom",
                                  "relationship_type": "married_to", "polarity": "positive",
                                  "evidence_quote": quote, "epistemic_type": "asserted",
                                  "confidence": 0.9}]})
    };
    let rules = vec![
        (
            "Dev says Ana is married to Tom.",
            married("Dev says Ana is married to Tom."),
        ),
        ("Ana is married to Tom.", married("Ana is married to Tom.")),
    ];
    let (_t, m, _s) = memory(rules, IdentityOptions::default());
    say(
        &m,
        "Dev says Ana is married to Tom.",
        None,
        "2025-01-01T09:00:00Z",
    );
    say(&m, "Ana is married to Tom.", None, "2025-01-02T09:00:00Z");
    let rels = claims(&m, "married_to");
    assert_eq!(rels.len(), 2, "{rels:?}");
    for r in &rels {
        let md = r.metadata.as_ref().unwrap();
        if md["evidence_quote"] == "Dev says Ana is married to Tom." {
            assert_eq!(r.epistemic_type, kith::EpistemicType::Unverified);
            assert_eq!(md["reported"], json!({"by": "Dev"}));
        } else {
            assert_eq!(r.epistemic_type, kith::EpistemicType::Asserted);
            assert!(md.get("reported").is_none(), "{md}");
        }
    }
}

fn quoted_speaker_rules() -> Vec<(&'static str, Value)> {
    vec![
        // The model lists the quoted person but keeps the quote's "I".
        (
            "Dev says \"I love sushi\".",
            json!({"entities": [person("Dev")],
                   "facts": [fact("I", "likes", "sushi", "Dev says \"I love sushi\".")]}),
        ),
        (
            "Oh nice! Yeah, Arjun told me \"I hate the winters\" last week.",
            json!({"entities": [person("Arjun")],
                   "facts": [negative(fact("I", "likes", "the winters",
                                           "Yeah, Arjun told me \"I hate the winters\" last week."))]}),
        ),
        // Curly quotes, the quote before its frame, the model listing
        // nobody.
        (
            "\u{201C}I love hiking,\u{201D} Ana said.",
            json!({"facts": [fact("I", "likes", "hiking", "\u{201C}I love hiking,\u{201D} Ana said.")]}),
        ),
        // Single marks quote too.
        (
            "Tom says 'I love jazz'.",
            json!({"entities": [person("Tom")],
                   "facts": [fact("I", "likes", "jazz", "Tom says 'I love jazz'.")]}),
        ),
        // Nobody named: a relation word reports.
        (
            "My mom always says \"I love gardening\".",
            json!({"facts": [fact("I", "likes", "gardening",
                                  "My mom always says \"I love gardening\".")]}),
        ),
        (
            "Honestly, I love ramen.",
            json!({"facts": [fact("I", "likes", "ramen", "Honestly, I love ramen.")]}),
        ),
    ]
}

/// `kith_ingest_v9`: a quoted first person that a reporting word gives to a
/// named person is that person's — one node for them, no `I` entity, the
/// binding recorded — on the heuristic extractor and a model alike; a quote
/// given to nobody named stays local, and the speaker keeps only her own
/// words.
fn a_quoted_first_person_is_the_named_speakers(path: Path) {
    let (_t, m, _s) = said_on(path, quoted_speaker_rules(), Some("Priya Nair"));
    for (object, name) in [
        ("sushi", "Dev"),
        ("the winters", "Arjun"),
        ("hiking", "Ana"),
        ("jazz", "Tom"),
    ] {
        let claim = claim_with_object(&m, object);
        let them = persons(&m, name);
        assert_eq!(them.len(), 1, "one {name}");
        assert_eq!(has_fact_from(&m, &claim), vec![them[0].id], "{object}");
        assert_eq!(claim.epistemic_type, kith::EpistemicType::Asserted);
        let md = claim.metadata.as_ref().unwrap();
        assert_eq!(
            md["speaker_reference"],
            json!({"speaker": name, "fields": ["subject"], "basis": "quoted_speaker"}),
            "{object}"
        );
        assert!(md.get("reported").is_none(), "{object}: first-hand");
    }
    let gardening = claim_with_object(&m, "gardening");
    let local = entities(&m, "I");
    assert_eq!(local.len(), 1, "only mom's I stays local");
    assert_eq!(has_fact_from(&m, &gardening), vec![local[0].id]);
    let priya = persons(&m, "Priya Nair");
    assert_eq!(priya.len(), 1);
    let hers: Vec<String> = predicates_and_objects(&m, &priya[0])
        .into_iter()
        .map(|(_, o)| o)
        .collect();
    assert_eq!(
        hers,
        vec!["ramen".to_string()],
        "only her own words are hers"
    );
    assert!(m.doctor().unwrap().healthy());
}
on_both_paths!(
    a_quoted_first_person_is_the_named_speakers_on,
    a_quoted_first_person_is_the_named_speakers
);

fn kinds_rules() -> Vec<(&'static str, Value)> {
    let other = |name: &str| json!({"name": name, "entity_type": "other"});
    vec![
        (
            "I work at Figma and I live in Lisbon.",
            json!({"entities": [org("Figma"), {"name": "Lisbon", "entity_type": "place"}],
                   "facts": [with(fact("I", "works_at", "Figma", "I work at Figma and I live in Lisbon."),
                                  "object_entity_type", json!("organization")),
                             with(fact("I", "lives_in", "Lisbon", "I work at Figma and I live in Lisbon."),
                                  "object_entity_type", json!("place"))]}),
        ),
        // A question states nothing; the model cannot tell what the names are.
        (
            "Wait, so you work at Figma now? Lisbon is lovely.",
            json!({"entities": [other("Figma"), other("Lisbon")]}),
        ),
        (
            "So you work at Brightpath now?",
            json!({"entities": [other("Brightpath")]}),
        ),
        (
            "I work at Brightpath.",
            json!({"entities": [org("Brightpath")],
                   "facts": [with(fact("I", "works_at", "Brightpath", "I work at Brightpath."),
                                  "object_entity_type", json!("organization"))]}),
        ),
    ]
}

/// `kith_ingest_v9`: one thing, one node, whatever its kind and in either
/// order — an untyped mention of a name the scope has as an organization or
/// a place is that node, and an organization named where the scope has an
/// untyped mention adopts it (typed, `typed_by` its turn) — on the
/// heuristic extractor and a model alike.
fn one_thing_one_node_whatever_its_kind(path: Path) {
    let (_t, m, _s) = memory_on(path, kinds_rules());
    say_session(
        &m,
        "I work at Figma and I live in Lisbon.",
        "user",
        Some("Priya"),
        "s1",
    );
    say_session(
        &m,
        "Wait, so you work at Figma now? Lisbon is lovely.",
        "participant",
        Some("Sam"),
        "s1",
    );
    for (name, kind) in [("Figma", "organization"), ("Lisbon", "place")] {
        let nodes = entities(&m, name);
        assert_eq!(nodes.len(), 1, "one {name}: {nodes:?}");
        assert_eq!(nodes[0].metadata.as_ref().unwrap()["entity_type"], kind);
    }
    say_session(
        &m,
        "So you work at Brightpath now?",
        "participant",
        Some("Sam"),
        "s1",
    );
    let mention = entities(&m, "Brightpath");
    assert_eq!(mention.len(), 1);
    let adopted_by = say_session(&m, "I work at Brightpath.", "user", Some("Priya"), "s1");
    let nodes = entities(&m, "Brightpath");
    assert_eq!(nodes.len(), 1, "one Brightpath: {nodes:?}");
    assert_eq!(nodes[0].id, mention[0].id, "the mention's node is kept");
    let md = nodes[0].metadata.as_ref().unwrap();
    assert_eq!(md["entity_type"], "organization");
    assert_eq!(md["typed_by"], adopted_by.event_id.to_string());
    let priya = persons(&m, "Priya");
    let works = predicates_and_objects(&m, &priya[0]);
    assert!(
        works.contains(&("works_at".into(), "Brightpath".into())),
        "{works:?}"
    );
    let works_at = claims(&m, "works_at")
        .into_iter()
        .find(|c| c.metadata.as_ref().unwrap()["object"] == "Brightpath")
        .unwrap();
    let edges = m
        .store_backend()
        .begin(kith_store::TxMode::Read)
        .unwrap()
        .edges_of(works_at.id)
        .unwrap();
    assert!(
        edges
            .iter()
            .any(|e| e.target_id == nodes[0].id || e.source_id == nodes[0].id),
        "the claim links the one Brightpath"
    );
    assert!(m.doctor().unwrap().healthy());
}
on_both_paths!(
    one_thing_one_node_whatever_its_kind_on,
    one_thing_one_node_whatever_its_kind
);

/// `kith_ingest_v9` is a new policy: a mention whose extraction was saved
/// under `kith_ingest_v8` still makes a second node, as it did.
fn kinds_replay_under_v8(path: Path) {
    let (_t, m, _s) = memory_on(path, kinds_rules());
    say_session(
        &m,
        "I work at Figma and I live in Lisbon.",
        "user",
        Some("Priya"),
        "s1",
    );
    let text = "Wait, so you work at Figma now? Lisbon is lovely.";
    let event = deferred(&m, text);
    let extraction = json!({"entities": [{"name": "Figma", "entity_type": "other"}]});
    save_old_extraction(&m, &event, &extraction, Some("kith_ingest_v8"));
    assert_eq!(
        m.process_event(event.id).unwrap(),
        kith::WorkStatus::Complete
    );
    assert_eq!(plan_policy(&m, event.id), "kith_ingest_v8");
    assert_eq!(entities(&m, "Figma").len(), 2, "v8 made a second node");
    assert!(m.doctor().unwrap().healthy());
}
on_both_paths!(kinds_replay_under_v8_on, kinds_replay_under_v8);

fn short_name_rules() -> Vec<(&'static str, Value)> {
    vec![
        (
            "Hi, I'm Priya. I work at Stripe.",
            json!({"entities": [person("Priya"), org("Stripe")],
                   "facts": [fact("I", "name", "Priya", "Hi, I'm Priya."),
                             with(fact("I", "works_at", "Stripe", "I work at Stripe."),
                                  "object_entity_type", json!("organization"))]}),
        ),
        (
            "Hey, I'm Dana.",
            json!({"entities": [person("Dana")],
                   "facts": [fact("I", "name", "Dana", "Hey, I'm Dana.")]}),
        ),
    ]
}

/// `kith_ingest_v9`: a named speaker who introduces themselves by part of
/// their name ("Hi, I'm Priya." from "Priya Natarajan") is one person — the
/// short name is no second node — on the heuristic extractor and a model
/// alike; a name that is not theirs is left as it was.
fn a_speakers_short_name_is_the_speaker(path: Path) {
    let (_t, m, _s) = memory_on(path, short_name_rules());
    say_session(
        &m,
        "Hi, I'm Priya. I work at Stripe.",
        "user",
        Some("Priya Natarajan"),
        "s1",
    );
    let priya = persons(&m, "Priya Natarajan");
    assert_eq!(priya.len(), 1);
    assert!(entities(&m, "Priya").is_empty(), "no second Priya");
    let hers = predicates_and_objects(&m, &priya[0]);
    for claim in [("name", "Priya"), ("works_at", "Stripe")] {
        assert!(
            hers.contains(&(claim.0.into(), claim.1.into())),
            "{claim:?} in {hers:?}"
        );
    }
    // Dana is no part of Sam's name: her entity stays (as before).
    say_session(&m, "Hey, I'm Dana.", "participant", Some("Sam"), "s1");
    assert_eq!(entities(&m, "Dana").len(), 1);
    assert!(m.doctor().unwrap().healthy());
}
on_both_paths!(
    a_speakers_short_name_is_the_speaker_on,
    a_speakers_short_name_is_the_speaker
);
