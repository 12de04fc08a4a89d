//! The graph path: entities the query names, their active claims, and the
//! memories the linking pass linked to them.
//!
//! An entity is named as people say names ([`super::names`]): a person's
//! entity "Maya Okafor" by "Maya", "Ms Okafor" or a short form of her first
//! name, any other entity by its full name; an entity named like a speaker
//! the query names counts too ("Mel" names the speaker Melanie, so her
//! entity). From a named entity, accepted aliases (RELATES_TO with
//! `relation: "alias"` and `identity_verified: true`, open) lead to the
//! other name's entity: "Mel", accepted as Melanie's alias, reaches
//! Melanie's claims. Unverified alias proposals are never followed.
//!
//! On the way, claims that were superseded are noted with the claim in
//! force ([`super::current`]): the entity's own, and those that name it as
//! their object ("I started at Brightline", then "So I quit Brightline").

use std::collections::{HashMap, HashSet, VecDeque};

use kith_core::{Edge, EdgeType, Node, NodeType};
use kith_identity::claim_edits::predicate_of;
use kith_identity::claims::predicate_class;
use kith_store::{HitsWithEdges, LexicalHit, LexicalQuery, SearchFilters, StoredEvent, Tx};
use uuid::Uuid;

use super::by_id;
use super::current::SupersededEvidence;
use super::filters::admitted;
use super::fusion::PathKind;
use super::names::QueryWords;
use super::paths::words;
use super::pool::{hit_for, path, Pool};
use super::speakers::{says_name, NamedSpeaker};
use super::RetrieveRequest;
use crate::error::Error;

/// Entities reached at most per query (named ones and their aliases).
const MAX_ENTITIES: usize = 40;
/// Steps followed at most along a chain of superseded claims.
const MAX_SUPERSEDED_CHAIN: usize = 8;

/// What the graph path found besides its candidates.
#[derive(Debug, Default)]
pub struct GraphFindings {
    /// Turns whose claim was superseded, and what replaced it.
    pub superseded: SupersededEvidence,
    /// Names of the person entities reached through an accepted alias.
    pub people: Vec<String>,
    /// Names of the person entities the query names itself (not through a
    /// speaker it names): the people it asks about ([`super::mentioned`]).
    pub named_people: Vec<String>,
}

/// Whether `node` is an entity typed `person`.
fn is_person(node: &kith_core::Node) -> bool {
    node.metadata
        .as_ref()
        .and_then(|m| m.get("entity_type"))
        .and_then(|t| t.as_str())
        == Some("person")
}

/// Whether `edge` is an accepted (verified) alias link.
fn is_accepted_alias(edge: &Edge) -> bool {
    let meta = |key: &str| edge.metadata.as_ref().and_then(|m| m.get(key));
    edge.edge_type == EdgeType::RelatesTo
        && edge.is_open()
        && meta("relation").and_then(|r| r.as_str()) == Some("alias")
        && meta("identity_verified").and_then(|v| v.as_bool()) == Some(true)
}

/// An entity waiting to be walked: its id, its name, how it was reached
/// (the trace) and whether through an alias.
type Queued = (Uuid, String, String, bool);

/// A claim or linked memory reached: words shared with the query, minus
/// the time it was said (newest first on ties), the node and how.
type Reached = (usize, i64, kith_core::Node, String);

/// Adds the graph path's candidates to `pool`; `entities` is what
/// [`entity_search`] found for `named` with the entities' edges and the
/// nodes at their ends, when it was read with the lexical search (one
/// round trip on a server), else it is searched here.
pub fn candidates(
    tx: &mut dyn Tx,
    req: &RetrieveRequest,
    named: &[NamedSpeaker],
    entities: Option<HitsWithEdges>,
    pool: &mut Pool,
) -> Result<GraphFindings, Error> {
    let mut findings = GraphFindings::default();
    let mut around = Neighbourhood::default();
    let entities = match entities {
        Some((found, (mut edges, ends), turns)) => {
            for (e, _) in &found {
                around
                    .edges_of
                    .insert(e.node_id, edges.remove(&e.node_id).unwrap_or_default());
            }
            around.ends.extend(ends.into_iter().map(|n| (n.id, n)));
            around
                .turns
                .extend(turns.into_iter().map(|e| (e.event.id, e)));
            found
        }
        None => tx.search_lexical_nodes(&entity_search(req, named))?,
    };
    let queue = named_entities(req, named, &entities, &mut findings.named_people);
    if queue.is_empty() {
        return Ok(findings);
    }
    let mut reached = walk(tx, req, queue, &mut around, &mut findings)?;
    reached.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    reached.truncate(50);
    add_reached(tx, req, reached, around.turns, pool)?;
    Ok(findings)
}

/// The search for the entities the query may name: its words and the
/// full names of the speakers it names (a short form finds no entity by
/// its words: "Mel" is not a word of "Melanie"). The store probes for any
/// entity first ([`Tx::search_lexical_nodes`]): most memories of a
/// store()-only owner have none, and the probe saves a full-text search.
pub(super) fn entity_search(req: &RetrieveRequest, named: &[NamedSpeaker]) -> LexicalQuery {
    let mut text = req.query.clone();
    for n in named {
        text.push(' ');
        text.push_str(&n.name);
    }
    LexicalQuery {
        common_share: None,
        owner: req.owner.clone(),
        text,
        filters: SearchFilters {
            scope: req.filters.scope.clone(),
            node_types: vec![NodeType::Entity],
            ..SearchFilters::default()
        },
        limit: 20,
    }
}

/// The entities the query names (as people say names) or that are named
/// like a speaker the query names, each with how it was named, among the
/// `entities` [`entity_search`] found. The names of the people among them
/// that the query names itself go to `people`.
fn named_entities(
    req: &RetrieveRequest,
    named: &[NamedSpeaker],
    entities: &[(LexicalHit, Node)],
    people: &mut Vec<String>,
) -> VecDeque<Queued> {
    let said = QueryWords::new(&req.query);
    let mut queue = VecDeque::new();
    for (e, node) in entities {
        let person = is_person(node);
        let speaker = named
            .iter()
            .find(|n| n.name.to_lowercase() == e.content.to_lowercase());
        let via = match (said.mentions(&e.content, person), speaker) {
            (Some(m), _) => {
                if person && speaker.is_none() && !people.contains(&e.content) {
                    people.push(e.content.clone());
                }
                format!("entity {} ({})", e.content, m.describe())
            }
            (None, Some(n)) => format!("entity {} (the speaker named {})", e.content, n.how),
            (None, None) => continue,
        };
        queue.push_back((e.node_id, e.content.clone(), via, false));
    }
    queue
}

/// The entities' edges and the nodes at their other ends, read as the walk
/// needs them (those of the entities the search found come with it).
#[derive(Default)]
struct Neighbourhood {
    edges_of: HashMap<Uuid, Vec<Edge>>,
    ends: HashMap<Uuid, kith_core::Node>,
    /// The first turns of the ends read with the entity search, by id.
    turns: HashMap<Uuid, StoredEvent>,
}

impl Neighbourhood {
    /// Reads `entity_id`'s edges unless read already, with those of every
    /// entity still queued and the nodes at their ends: one read (one
    /// round trip on a server) rather than one per entity and node.
    fn read(
        &mut self,
        tx: &mut dyn Tx,
        req: &RetrieveRequest,
        entity_id: Uuid,
        queue: &VecDeque<Queued>,
        visited: &HashSet<Uuid>,
    ) -> Result<(), Error> {
        if self.edges_of.contains_key(&entity_id) {
            return Ok(());
        }
        let mut batch = vec![entity_id];
        batch.extend(
            queue
                .iter()
                .map(|q| q.0)
                .filter(|id| !visited.contains(id) && !self.edges_of.contains_key(id)),
        );
        let (mut found, ends) = tx.edges_of_nodes_with_ends(&req.owner, &batch)?;
        self.ends.extend(ends.into_iter().map(|n| (n.id, n)));
        for id in batch {
            self.edges_of
                .insert(id, found.remove(&id).unwrap_or_default());
        }
        Ok(())
    }
}

/// The end of `edge` that is not `id`.
fn other_end(edge: &Edge, id: Uuid) -> Uuid {
    if edge.source_id == id {
        edge.target_id
    } else {
        edge.source_id
    }
}

/// Walks from the named entities through accepted aliases, collecting each
/// entity's claims and linked memories; superseded claims and people
/// reached by alias go to `findings`.
fn walk(
    tx: &mut dyn Tx,
    req: &RetrieveRequest,
    mut queue: VecDeque<Queued>,
    around: &mut Neighbourhood,
    findings: &mut GraphFindings,
) -> Result<Vec<Reached>, Error> {
    let query_words: HashSet<String> = words(&req.query).iter().map(|w| stem(w)).collect();
    let names: Vec<&str> = queue.iter().map(|q| q.1.as_str()).collect();
    let asked = AskedOf::new(&req.query, &names);
    // Superseded claims only say what no longer holds when memory is read
    // as it stands now, with active nodes.
    let reads_now = req.filters.as_of.is_none() && req.filters.lifecycles.is_empty();
    let mut reached: Vec<Reached> = Vec::new();
    let mut seen = HashSet::new();
    // Object claims noted as superseded: kept apart from `seen`, which
    // decides what becomes a candidate, so that noting one here never
    // stops its subject's HAS_FACT edge from reaching it.
    let mut noted_objects = HashSet::new();
    let mut visited = HashSet::new();
    while let Some((entity_id, name, via, by_alias)) = queue.pop_front() {
        if !visited.insert(entity_id) {
            continue;
        }
        if by_alias {
            findings.people.push(name);
        }
        around.read(tx, req, entity_id, &queue, &visited)?;
        let edges: Vec<Edge> = around.edges_of[&entity_id]
            .iter()
            .filter(|e| e.is_open())
            .cloned()
            .collect();
        // This entity's claims: those superseded, and those in force.
        let mut superseded: Vec<kith_core::Node> = Vec::new();
        let mut in_force: Vec<kith_core::Node> = Vec::new();
        for edge in edges {
            if is_accepted_alias(&edge) {
                let other = other_end(&edge, entity_id);
                if visited.contains(&other) || visited.len() + queue.len() >= MAX_ENTITIES {
                    continue;
                }
                if let Some(alias) = around.ends.get(&other) {
                    if alias.owner_id == req.owner && alias.lifecycle.is_active() {
                        let next = format!("{via}, accepted alias of {}", alias.content);
                        let person = is_person(alias);
                        queue.push_back((other, alias.content.clone(), next, person));
                    }
                }
                continue;
            }
            let Some((id, is_claim)) = followed(&edge, entity_id) else {
                // A claim that names this entity as its object is not a
                // candidate, but when superseded it still says what no
                // longer holds: "Am I still at Brightline?" after "So I
                // quit Brightline" (`NOT works_at Brightline`).
                if reads_now {
                    if let Some(old) = superseded_object_claim(&edge, entity_id, around, req) {
                        if noted_objects.insert(old.id) {
                            superseded.push(old.clone());
                        }
                    }
                }
                continue;
            };
            if !seen.insert(id) {
                continue;
            }
            let Some(node) = around.ends.get(&id).cloned() else {
                continue;
            };
            if node.owner_id != req.owner {
                continue;
            }
            if reads_now && is_claim && node.superseded_by.is_some() {
                superseded.push(node.clone());
            } else if reads_now && is_claim && node.lifecycle.is_active() {
                in_force.push(node.clone());
            }
            // When it was said, not when the node was written: an import
            // or a batch writes a year of claims in one millisecond.
            let newest = -node.event_time.unwrap_or(node.created_at).unix_millis();
            let overlap = if is_claim {
                match asked.rank(&node) {
                    Some(shared) => shared,
                    None => continue,
                }
            } else {
                linked_words(&node)
                    .iter()
                    .filter(|w| query_words.contains(*w))
                    .count()
            };
            reached.push((overlap, newest, node, via.clone()));
        }
        for old in &superseded {
            note_superseded(tx, old, &mut findings.superseded)?;
            for claim in in_force.iter().filter(|c| same_kind_since(old, c)) {
                findings.superseded.also_in_force(
                    &old.evidence_refs,
                    claim.id,
                    &claim.evidence_refs,
                );
            }
        }
    }
    Ok(reached)
}

/// Whether `claim`, in force, says what holds now in place of `old`: a
/// positive claim of the same kind (its predicate's supersedence class,
/// `kith_identity::claims::predicate_class`, as ingestion reads it), said
/// after it. `NOT works_at Northwind Analytics` replaced `works_at
/// Northwind Analytics`; `works_at Brightpath Labs`, said since, is where
/// she works now.
fn same_kind_since(old: &kith_core::Node, claim: &kith_core::Node) -> bool {
    let (Some(old_p), Some(p)) = (predicate_of(old), predicate_of(claim)) else {
        return false;
    };
    let positive = claim
        .metadata
        .as_ref()
        .and_then(|m| m.get("polarity"))
        .and_then(|v| v.as_str())
        == Some("positive");
    claim.id != old.id
        && old.superseded_by != Some(claim.id)
        && positive
        && predicate_class(old_p) == predicate_class(p)
        && claim.valid_from > old.valid_from
}

/// The node an entity's edge leads to, and whether it is a claim: HAS_FACT
/// out of the entity reaches its claims; MENTIONS into the entity written
/// by the linking pass reaches the memories that name it, so one memory is
/// reached through another. Nothing else (unverified alias proposals, and
/// ingestion's claim → entity MENTIONS) is followed; of the latter, a
/// superseded claim is only noted ([`superseded_object_claim`]).
fn followed(edge: &Edge, entity_id: Uuid) -> Option<(Uuid, bool)> {
    let claim_edge = edge.edge_type == EdgeType::HasFact && edge.source_id == entity_id;
    let linked_mention = edge.edge_type == EdgeType::Mentions
        && edge.target_id == entity_id
        && edge
            .metadata
            .as_ref()
            .and_then(|m| m.get("basis"))
            .and_then(|b| b.as_str())
            == Some(crate::organize::linking::LINK_BASIS);
    if claim_edge {
        Some((edge.target_id, true))
    } else if linked_mention {
        Some((edge.source_id, false))
    } else {
        None
    }
}

/// The superseded claim of the owner's whose object `edge` links to
/// `entity_id` (ingestion's claim → entity MENTIONS), if that is what it
/// is.
fn superseded_object_claim<'a>(
    edge: &Edge,
    entity_id: Uuid,
    around: &'a Neighbourhood,
    req: &RetrieveRequest,
) -> Option<&'a kith_core::Node> {
    if edge.edge_type != EdgeType::Mentions || edge.target_id != entity_id {
        return None;
    }
    let claim = around.ends.get(&edge.source_id)?;
    (claim.owner_id == req.owner
        && claim.node_type != NodeType::Entity
        && predicate_of(claim).is_some()
        && claim.superseded_by.is_some())
    .then_some(claim)
}

/// Adds what the walk reached to `pool`, in rank order, each with its
/// source event and under the request's filters. The events come with the
/// entity search (`turns`); those of nodes reached further out are read
/// here, in one read for all.
fn add_reached(
    tx: &mut dyn Tx,
    req: &RetrieveRequest,
    reached: Vec<Reached>,
    mut events: HashMap<Uuid, StoredEvent>,
    pool: &mut Pool,
) -> Result<(), Error> {
    let missing: Vec<Uuid> = reached
        .iter()
        .filter_map(|c| c.2.evidence_refs.first().copied())
        .filter(|id| !events.contains_key(id))
        .collect();
    if !missing.is_empty() {
        events.extend(by_id::events(tx, &req.owner, &missing)?);
    }
    for (i, (_, _, claim, via)) in reached.into_iter().enumerate() {
        let event = claim
            .evidence_refs
            .first()
            .and_then(|id| events.get(id))
            .cloned();
        if !admitted(&req.filters, &claim, event.as_ref()) {
            continue;
        }
        let hit = hit_for(&claim, event.as_ref());
        pool.add(hit, path(PathKind::Graph, i, None, Some(via)));
    }
    Ok(())
}

/// A linked memory's words, stemmed, to rank it by the words it shares
/// with the question (claims are ranked by [`AskedOf`]).
fn linked_words(memory: &kith_core::Node) -> HashSet<String> {
    words(&memory.content).iter().map(|w| stem(w)).collect()
}

/// Words of a question that ask about someone at large rather than about
/// one thing they did: "What do you know about Alicia?", "Tell me about
/// Maya".
const AT_LARGE: &[&str] = &[
    "tell",
    "know",
    "remember",
    "say",
    "said",
    "mention",
    "mentioned",
    "talk",
    "talked",
    "up",
    "doing",
    "thing",
    "things",
    "anything",
    "something",
    "everything",
    "lately",
    "now",
];

/// What a question asks of the entities it names, read to rank their
/// claims: the question's words that are neither stop words nor the names'
/// words (nor a title said with one, "Ms Okafor"), stemmed.
///
/// A claim is offered when its predicate shares one of those words
/// ("Where does Maya work?" and `works_at`), ranked by how many. Its
/// sentence is not read: the lexical and vector paths already rank the
/// turn it quotes, and counting a sentence's words again — "the", "how",
/// "feel" — offered "I feel the same way!" for "How did Melanie feel after
/// the accident?". A question about someone at large ("What does Alicia
/// do?") has no such words left and takes every claim, newest first.
struct AskedOf {
    words: HashSet<String>,
}

impl AskedOf {
    fn new(query: &str, names: &[&str]) -> Self {
        let names: Vec<Vec<String>> = names.iter().map(|n| words(n)).collect();
        let of_a_name = |w: &str| names.iter().any(|parts| says_name(w, parts));
        let words = kith_store::words::query_words(query)
            .into_iter()
            .filter(|w| {
                !of_a_name(w)
                    && !AT_LARGE.contains(&w.as_str())
                    && !super::names::TITLES.contains(&w.as_str())
            })
            .map(|w| stem(&w))
            .collect();
        AskedOf { words }
    }

    /// How many of the asked words `claim`'s predicate says; `None` when
    /// the claim answers none of them.
    fn rank(&self, claim: &kith_core::Node) -> Option<usize> {
        if self.words.is_empty() {
            return Some(0);
        }
        let predicate = predicate_of(claim).unwrap_or("");
        let shared = kith_store::words::query_words(predicate)
            .iter()
            .filter(|w| self.words.contains(&stem(w)))
            .count();
        (shared > 0).then_some(shared)
    }
}

/// A light English suffix stemmer for matching words of a claim and a
/// question: "works", "worked" and "working" all give "work". Short words
/// stay as they are ("does", "was").
pub(super) fn stem(word: &str) -> String {
    let n = word.chars().count();
    for (suffix, min) in [("ing", 6), ("ed", 5), ("s", 5)] {
        if n >= min && word.ends_with(suffix) && !word.ends_with("ss") {
            return word[..word.len() - suffix.len()].to_string();
        }
    }
    word.to_string()
}

/// Follows `old`'s `superseded_by` chain to the claim in force and notes
/// the turns that ground only the old one.
fn note_superseded(
    tx: &mut dyn Tx,
    old: &kith_core::Node,
    out: &mut SupersededEvidence,
) -> Result<(), Error> {
    let mut next = old.superseded_by;
    for _ in 0..MAX_SUPERSEDED_CHAIN {
        let Some(id) = next else { return Ok(()) };
        let Some(node) = tx.get_owned_nodes(&old.owner_id, &[id])?.pop() else {
            return Ok(());
        };
        if node.owner_id != old.owner_id {
            return Ok(());
        }
        if node.lifecycle.is_active() {
            out.note(
                &old.evidence_refs,
                &old.content,
                node.id,
                &node.content,
                &node.evidence_refs,
            );
            return Ok(());
        }
        next = node.superseded_by;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_asked_leaves_out_names_stop_words_and_asking_at_large() {
        let asked = |q: &str, names: &[&str]| {
            let mut w: Vec<String> = AskedOf::new(q, names).words.into_iter().collect();
            w.sort();
            w
        };
        assert_eq!(
            asked("Where does Maya work now?", &["Maya Okafor"]),
            ["work"]
        );
        assert_eq!(
            asked("How did Mel feel after the accident?", &["Melanie"]),
            ["accident", "after", "feel"]
        );
        assert!(asked("What do you know about Maya?", &["Maya Okafor"]).is_empty());
        assert!(asked("Tell me about Ms Okafor.", &["Maya Okafor"]).is_empty());
    }

    #[test]
    fn stems_join_the_forms_of_a_verb() {
        for (w, s) in [
            ("works", "work"),
            ("worked", "work"),
            ("working", "work"),
            ("work", "work"),
            ("does", "does"),
            ("was", "was"),
            ("class", "class"),
            ("lives", "live"),
            ("runs", "runs"),
        ] {
            assert_eq!(stem(w), s, "{w}");
        }
    }
}
