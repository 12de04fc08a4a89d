//! Expansion from the best hits (multi-hop): the turns a question does not
//! name but the evidence it finds does.
//!
//! "What did Melanie's friend paint?" finds Melanie's "my friend Jonah came
//! over"; the painting is in another session, in a turn that names Jonah and
//! not Melanie, her friend or painting. From the [`HOP_SOURCES`] best
//! candidates (fused, before boosts) three hops run:
//!
//! 1. **Entity**: the entities the linking pass linked to a source (MENTIONS
//!    with basis `entity_linking`), then the other memories linked to them.
//! 2. **Mention** (off unless `weights.mention` > 0): where there are no
//!    linked entities (a store()-only memory), the names a source mentions
//!    — capitalised words away from a sentence start, neither a speaker's
//!    nor the question's — looked up by BM25 in one query, kept where the
//!    whole name occurs; the share is scaled by `weights.mention`.
//! 3. **Reply**: for a turn reached by 1 or 2, the other speaker's turn
//!    right after it (its reply) and right before it (what it answers), in
//!    its session: a turn that names Jonah is often a question about him.
//!
//! A reached turn inherits a share of its source's fused score
//! ([`PathKind::Hop`], weighted like the neighbours): the full share from a
//! name that reaches one turn, less from a name many turns mention
//! ([`fan_out_share`]), so a hop never outranks its source on the hop
//! alone. Entities and names the question itself names are left to the
//! graph path and BM25. Each hop says in its trace how it got there.

use std::collections::{HashMap, HashSet};

use kith_core::{ids, EdgeType, NodeType, SessionId};
use kith_store::{LexicalHit, LexicalQuery, StoredEvent, Tx};
use uuid::Uuid;

use super::ahead::Links;
use super::by_id;
use super::filters::admitted;
use super::fusion::PathKind;
use super::names::QueryWords;
use super::neighbours::{another_voice, session_events};
use super::paths::words;
use super::pool::{hit_for, path, Pool};
use super::RetrieveRequest;
use crate::error::Error;

/// How many of the best candidates the hops start from.
pub const HOP_SOURCES: usize = 5;
/// Names taken from the sources at most (one BM25 query for all of them).
const MAX_NAMES: usize = 4;
/// Turns a name or an entity reaches at most; the BM25 query asks for a
/// few per name.
const MAX_REACHED: usize = 8;
/// How many of the best reached turns bring their replies (each costs its
/// session's events).
const REPLIES_OF: usize = 8;
/// The share a reply inherits of the turn it replies to (or that replies
/// to it): the neighbours' own rule, one turn either side.
const REPLY_SHARE: f64 = 1.0;
/// The longest excerpt of a source quoted in a trace, in characters.
const EXCERPT: usize = 48;

/// A strong candidate the hops start from.
#[derive(Debug, Clone)]
struct Source {
    node_id: Uuid,
    event_id: Option<Uuid>,
    content: String,
    score: f64,
}

/// A turn reached by a hop, before it joins the pool.
struct Reached {
    hit: LexicalHit,
    score: f64,
    via: String,
}

/// The share of its source's score a turn inherits when the name or entity
/// that led there reaches `fan_out` turns: `1/√n`. A name only one other
/// turn mentions is as good as a pointer; one that twenty turns mention
/// (a pet, a home town) says little about which of them is meant.
pub fn fan_out_share(fan_out: usize) -> f64 {
    if fan_out == 0 {
        return 0.0;
    }
    1.0 / (fan_out as f64).sqrt()
}

/// The names `text` mentions: runs of capitalised words ("Jonah
/// Whitfield", "Cafe Milano") that do not start a sentence, each word of
/// three letters or more and neither a month nor a weekday. A word at a
/// sentence's start (or a caption's or a quote's) is capitalised by grammar,
/// not because it names someone, so it is never read as a name;
/// punctuation and a possessive end a run.
pub fn names_in(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    let flush = |run: &mut Vec<&str>, out: &mut Vec<String>| {
        if !run.is_empty() {
            let name = run.join(" ");
            if !out.contains(&name) {
                out.push(name);
            }
            run.clear();
        }
    };
    let mut at_start = true;
    for token in text.split_whitespace() {
        let word = token.trim_matches(|c: char| !c.is_alphanumeric());
        let (word, possessive) = match word
            .strip_suffix("'s")
            .or_else(|| word.strip_suffix("\u{2019}s"))
        {
            Some(w) => (w, true),
            None => (word, false),
        };
        if token.starts_with(|c: char| !c.is_alphanumeric()) {
            flush(&mut run, &mut out);
        }
        let starts_sentence = at_start || token.starts_with(['[', '"', '\u{201c}']);
        if is_name_word(word) && !starts_sentence {
            run.push(word);
        } else {
            flush(&mut run, &mut out);
        }
        if possessive || token.ends_with(|c: char| !c.is_alphanumeric()) {
            flush(&mut run, &mut out);
        }
        let trailing = &token[token.trim_end_matches(|c: char| !c.is_alphanumeric()).len()..];
        at_start = trailing.contains(['.', '!', '?', ':']);
    }
    flush(&mut run, &mut out);
    out
}

/// A word that can be part of a name: capitalised, letters and digits only,
/// three or more of them, not a month or a weekday.
fn is_name_word(word: &str) -> bool {
    word.chars().next().is_some_and(char::is_uppercase)
        && word.chars().all(char::is_alphanumeric)
        && word.chars().count() >= 3
        && !super::names::is_calendar_word(&word.to_lowercase())
}

/// Whether `name` occurs in `text` as whole words, ignoring case.
pub fn mentions_name(text: &str, name: &str) -> bool {
    let text = words(text);
    let name = words(name);
    !name.is_empty() && text.windows(name.len()).any(|w| w == name.as_slice())
}

/// The first words of `text`, for a trace.
fn excerpt(text: &str) -> String {
    let t = text.trim();
    if t.chars().count() <= EXCERPT {
        return format!("\"{t}\"");
    }
    let cut: String = t.chars().take(EXCERPT).collect();
    format!("\"{}…\"", cut.trim_end())
}

/// The hops' sources: the [`HOP_SOURCES`] best candidates of `pool`.
fn sources(req: &RetrieveRequest, pool: &mut Pool) -> Vec<Source> {
    pool.ranked(&req.weights)
        .into_iter()
        .take(HOP_SOURCES)
        .map(|c| Source {
            node_id: c.hit.node_id,
            event_id: c.hit.event_id,
            content: c.hit.content.clone(),
            score: c.trace.rrf,
        })
        .collect()
}

/// The node ids of the hops' sources in `pool` as it stands.
pub(super) fn source_ids(req: &RetrieveRequest, pool: &mut Pool) -> Vec<Uuid> {
    sources(req, pool).iter().map(|s| s.node_id).collect()
}

/// Adds the hops' candidates to `pool` (see the module's documentation);
/// `links` are edges read ahead, used when they cover the sources.
pub fn candidates(
    tx: &mut dyn Tx,
    req: &RetrieveRequest,
    pool: &mut Pool,
    links: Option<&Links>,
) -> Result<(), Error> {
    let sources = sources(req, pool);
    if sources.is_empty() {
        return Ok(());
    }
    let said = QueryWords::new(&req.query);
    // Speakers' names are left out of both hops: greetings name them in
    // every other turn, so they lead anywhere.
    let speakers = pool.speaker_words();
    let skip = |name: &str| {
        said.mentions(name, true).is_some() || words(name).iter().all(|w| speakers.contains(w))
    };
    let (mut reached, followed) = by_entity(tx, req, &sources, &skip, links)?;
    if req.weights.mention > 0.0 {
        reached.extend(by_mention(tx, req, &sources, &skip, &followed)?);
    }
    reached.sort_by(|a, b| b.score.total_cmp(&a.score));
    let n = reached.len().min(REPLIES_OF);
    let replies = replies(tx, req, &reached[..n])?;
    reached.extend(replies);
    // Best first: a turn two hops reach keeps the stronger (a path keeps
    // its best rank).
    reached.sort_by(|a, b| b.score.total_cmp(&a.score));
    let source_ids: HashSet<Uuid> = sources.iter().map(|s| s.node_id).collect();
    for (i, r) in reached.into_iter().enumerate() {
        if !source_ids.contains(&r.hit.node_id) {
            pool.add(r.hit, path(PathKind::Hop, i, Some(r.score), Some(r.via)));
        }
    }
    Ok(())
}

/// Hop 1: the entities linked to each source, then the memories linked to
/// those entities; with the names of the entities followed (lower case).
fn by_entity(
    tx: &mut dyn Tx,
    req: &RetrieveRequest,
    sources: &[Source],
    skip: &dyn Fn(&str) -> bool,
    links: Option<&Links>,
) -> Result<(Vec<Reached>, HashSet<String>), Error> {
    let source_ids: Vec<Uuid> = sources.iter().map(|s| s.node_id).collect();
    let edges = match links.and_then(|l| l.covering(&source_ids)) {
        Some(edges) => edges,
        None => tx.edges_of_nodes(&req.owner, &source_ids)?,
    };
    // (source index, entity)
    let mut linked: Vec<(usize, Uuid)> = Vec::new();
    for (i, s) in sources.iter().enumerate() {
        for e in edges.get(&s.node_id).into_iter().flatten() {
            if e.source_id == s.node_id && is_link(e) && !linked.iter().any(|l| l.1 == e.target_id)
            {
                linked.push((i, e.target_id));
            }
        }
    }
    if linked.is_empty() {
        return Ok((Vec::new(), HashSet::new()));
    }
    let entity_ids: Vec<Uuid> = linked.iter().map(|l| l.1).collect();
    let entities: HashMap<Uuid, kith_core::Node> = tx
        .get_owned_nodes(&req.owner, &entity_ids)?
        .into_iter()
        .filter(|n| n.owner_id == req.owner && n.lifecycle.is_active())
        .map(|n| (n.id, n))
        .collect();
    let their_edges = tx.edges_of_nodes(&req.owner, &entity_ids)?;
    // (source index, entity name, memory, fan-out)
    let mut wanted: Vec<(usize, String, Uuid, usize)> = Vec::new();
    let mut followed = HashSet::new();
    for (i, entity_id) in linked {
        let Some(entity) = entities.get(&entity_id) else {
            continue;
        };
        // The graph path already follows what the question names.
        if skip(&entity.content) {
            continue;
        }
        let memories: Vec<Uuid> = their_edges
            .get(&entity_id)
            .into_iter()
            .flatten()
            .filter(|e| e.target_id == entity_id && is_link(e))
            .map(|e| e.source_id)
            .filter(|m| *m != sources[i].node_id)
            .collect();
        let fan_out = memories.len();
        followed.insert(entity.content.to_lowercase());
        for m in memories.into_iter().take(MAX_REACHED) {
            wanted.push((i, entity.content.clone(), m, fan_out));
        }
    }
    let memories: Vec<Uuid> = wanted.iter().map(|w| w.2).collect();
    let nodes = by_id::nodes(tx, &req.owner, &memories)?;
    let firsts: Vec<Uuid> = nodes
        .values()
        .filter_map(|n| n.evidence_refs.first().copied())
        .collect();
    let events = by_id::events(tx, &req.owner, &firsts)?;
    let mut out = Vec::new();
    for (i, name, memory, fan_out) in wanted {
        let Some(node) = nodes.get(&memory) else {
            continue;
        };
        let event = node.evidence_refs.first().and_then(|id| events.get(id));
        if node.owner_id != req.owner || !admissible(node, event, req) {
            continue;
        }
        out.push(Reached {
            hit: hit_for(node, event),
            score: sources[i].score * fan_out_share(fan_out),
            via: format!("entity {name} from {}", excerpt(&sources[i].content)),
        });
    }
    Ok((out, followed))
}

/// Hop 2: the names the sources mention, by BM25, where the whole name
/// occurs. Speakers' names (greetings name them in every other turn), the
/// question's own words, and names an entity hop already followed are
/// left out.
fn by_mention(
    tx: &mut dyn Tx,
    req: &RetrieveRequest,
    sources: &[Source],
    skip: &dyn Fn(&str) -> bool,
    followed: &HashSet<String>,
) -> Result<Vec<Reached>, Error> {
    // (source index, name)
    let mut names: Vec<(usize, String)> = Vec::new();
    for (i, s) in sources.iter().enumerate() {
        for name in names_in(&s.content) {
            let lower = name.to_lowercase();
            if skip(&name)
                || followed.contains(&lower)
                || names.iter().any(|n| n.1.to_lowercase() == lower)
            {
                continue;
            }
            names.push((i, name));
        }
    }
    names.truncate(MAX_NAMES);
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let text = names
        .iter()
        .map(|n| n.1.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let hits = tx.search_lexical(&LexicalQuery {
        common_share: None,
        owner: req.owner.clone(),
        text,
        filters: req.filters.clone(),
        limit: MAX_REACHED * names.len() + HOP_SOURCES,
    })?;
    let mut out = Vec::new();
    for (i, name) in &names {
        let source = &sources[*i];
        let found: Vec<&LexicalHit> = hits
            .iter()
            .filter(|h| h.node_id != source.node_id && h.event_id != source.event_id)
            .filter(|h| {
                req.filters.node_types.contains(&NodeType::Entity)
                    || h.node_type != NodeType::Entity
            })
            .filter(|h| mentions_name(&h.content, name))
            .take(MAX_REACHED)
            .collect();
        let share = fan_out_share(found.len());
        for h in found {
            out.push(Reached {
                hit: h.clone(),
                score: source.score * share * req.weights.mention,
                via: format!("mention of {name} from {}", excerpt(&source.content)),
            });
        }
    }
    Ok(out)
}

/// Hop 3: the other speaker's turns right after and right before each
/// reached turn, in its session.
fn replies(
    tx: &mut dyn Tx,
    req: &RetrieveRequest,
    reached: &[Reached],
) -> Result<Vec<Reached>, Error> {
    if !req.paths.neighbours {
        return Ok(Vec::new());
    }
    let mut names: Vec<SessionId> = Vec::new();
    for r in reached.iter().filter(|r| r.hit.event_id.is_some()) {
        if let Some(s) = &r.hit.session_id {
            if !names.contains(s) {
                names.push(s.clone());
            }
        }
    }
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let sessions = session_events(tx, req, &names)?;
    // (reached index, session, position)
    let mut wanted: Vec<(usize, SessionId, usize)> = Vec::new();
    for (i, r) in reached.iter().enumerate() {
        let (Some(event_id), Some(session)) = (r.hit.event_id, &r.hit.session_id) else {
            continue;
        };
        let events = &sessions[session];
        let Some(at) = events.iter().position(|e| e.event.id == event_id) else {
            continue;
        };
        for j in [at.checked_sub(1), Some(at + 1)].into_iter().flatten() {
            let Some(e) = events.get(j) else { continue };
            if another_voice(e, r.hit.speaker.as_deref(), r.hit.role) {
                wanted.push((i, session.clone(), j));
            }
        }
    }
    let note_ids: Vec<Uuid> = wanted
        .iter()
        .map(|(_, s, j)| ids::note_node_id(sessions[s][*j].event.id))
        .collect();
    let notes = by_id::nodes(tx, &req.owner, &note_ids)?;
    let mut out = Vec::new();
    for ((i, session, j), note_id) in wanted.into_iter().zip(note_ids) {
        let e = &sessions[&session][j];
        let Some(note) = notes.get(&note_id) else {
            continue;
        };
        if note.owner_id != req.owner || !admissible(note, Some(e), req) {
            continue;
        }
        let from = &reached[i];
        let relation = if j > 0
            && sessions[&session][j - 1].event.id == from.hit.event_id.unwrap_or_default()
        {
            "reply to"
        } else {
            "turn answered by"
        };
        out.push(Reached {
            hit: hit_for(note, Some(e)),
            score: from.score * REPLY_SHARE,
            via: format!(
                "{relation} {}, reached via {}",
                excerpt(&from.hit.content),
                from.via
            ),
        });
    }
    Ok(out)
}

/// Whether a node reached outside the store's search may be a result: the
/// request's filters, and no entity unless entities are asked for.
fn admissible(node: &kith_core::Node, event: Option<&StoredEvent>, req: &RetrieveRequest) -> bool {
    admitted(&req.filters, node, event)
        && (node.node_type != NodeType::Entity
            || req.filters.node_types.contains(&NodeType::Entity))
}

/// Whether `edge` is a MENTIONS link written by the linking pass.
fn is_link(edge: &kith_core::Edge) -> bool {
    edge.is_open()
        && edge.edge_type == EdgeType::Mentions
        && edge
            .metadata
            .as_ref()
            .and_then(|m| m.get("basis"))
            .and_then(|b| b.as_str())
            == Some(crate::organize::linking::LINK_BASIS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_capitalised_runs_away_from_a_sentence_start() {
        assert_eq!(
            names_in("My best friend Jonah Whitfield came over. Then we went to Cafe Milano!"),
            vec!["Jonah Whitfield", "Cafe Milano"]
        );
        // Sentence starts, weekdays, months and short words are not names.
        assert!(names_in("Yesterday was great. On Monday in May I saw Al.").is_empty());
        // A possessive is the name; a comma ends a run.
        assert_eq!(
            names_in("we met Jonah's sister, Priya"),
            vec!["Jonah", "Priya"]
        );
        // A caption's first word starts a sentence of its own.
        assert_eq!(
            names_in("Look! [image: Sunset over Lake Tahoe]"),
            vec!["Lake Tahoe"]
        );
    }

    #[test]
    fn a_name_is_mentioned_as_whole_words() {
        assert!(mentions_name(
            "Jonah Whitfield's new canvas",
            "Jonah Whitfield"
        ));
        assert!(mentions_name("JONAH WHITFIELD!", "jonah whitfield"));
        assert!(!mentions_name("Jonahs whitfield", "Jonah Whitfield"));
        assert!(!mentions_name("Whitfield Jonah", "Jonah Whitfield"));
        assert!(!mentions_name("anything", ""));
    }

    #[test]
    fn a_name_many_turns_mention_passes_less() {
        assert_eq!(fan_out_share(0), 0.0);
        assert_eq!(fan_out_share(1), 1.0);
        assert!((fan_out_share(4) - 0.5).abs() < 1e-12);
        for n in 1..50 {
            assert!(fan_out_share(n + 1) < fan_out_share(n));
            assert!(fan_out_share(n) <= 1.0);
        }
    }

    #[test]
    fn excerpts_are_short_and_quoted() {
        assert_eq!(excerpt(" hi "), "\"hi\"");
        let long = "word ".repeat(40);
        let e = excerpt(&long);
        assert!(e.chars().count() <= EXCERPT + 3, "{e}");
        assert!(e.ends_with("…\""));
    }
}
