//! Entity linking (spec 004): the same surface, mentioned repeatedly,
//! becomes a node.
//!
//! A memory that says "we met at Cafe Milano" and another that says "Cafe
//! Milano again" are two episodes about one thing. [`link_entities`] mints
//! that thing as an entity node (a semantic memory of the scope), writes a
//! `MENTIONS` edge from each memory that names it to the entity, and a
//! `MENTIONS` link between two entities named in the same memory, so a later
//! retrieval reaches one memory through the other.
//!
//! Three refusals shape the output (each listed in
//! [`LinkingResult::dropped`]):
//!
//! - **Budget** ([`DropReason::OverBudget`]): more memories than
//!   `max_records` refuse the whole pass; linking runs inside a
//!   consolidation cycle that has to end.
//! - **Threshold** ([`DropReason::BelowThreshold`]): a mention whose
//!   confidence is under `confidence_threshold`. The heuristic extractor
//!   reports every surface at [`HEURISTIC_CONFIDENCE`] (0.4), under the 0.5
//!   default, so with the defaults nothing is minted: the shipped behaviour,
//!   kept on purpose. A deployment lowers the bar deliberately.
//! - **Mention floor** ([`DropReason::BelowMentionFloor`]): a surface named
//!   in fewer than `min_mention_count` memories is not an entity.
//!
//! Ids are slugs of the surface ([`slug`]), never the raw surface. This
//! module is pure (data in, decisions out); the organizer job that reads
//! the store and writes the result lives in the engine
//! (`kith::organize::link_job`).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use kith_core::{
    canon, ids, model::base_confidence, Edge, EdgeType, EpistemicType, Lifecycle, Node, NodeType,
    OwnerId, ScopeId, SourceType,
};
use kith_extract::heuristic::{HeuristicExtractor, DEFAULT_STOPLIST};
use serde::Serialize;
use serde_json::json;
use uuid::Uuid;

use crate::admission::{is_personal_reference, Refusal, DEFAULT_ALIAS_THRESHOLD};
use crate::aliases::name_match;

/// The confidence the heuristic extractor gives every mention: under the
/// default threshold on purpose (spec 004; design §16.0 Q2).
pub const HEURISTIC_CONFIDENCE: f64 = 0.4;
/// The default mention floor: a single mention is not an entity.
pub const DEFAULT_MIN_MENTION_COUNT: usize = 2;
/// The default confidence a mention needs to count.
pub const DEFAULT_CONFIDENCE_THRESHOLD: f64 = 0.5;
/// The default read budget: memories one pass may read.
pub const DEFAULT_MAX_RECORDS: usize = 200;
/// The weight (edge confidence) of every link the pass writes.
pub const LINK_WEIGHT: f64 = 0.5;
/// The linking policy this build applies (reported and journaled).
pub const LINKING_POLICY: &str = "heuristic_linking_v1";
/// `metadata.basis` of every edge the pass writes. Retrieval's graph path
/// follows MENTIONS edges only when they carry this basis, so ingestion's
/// claim → entity MENTIONS edges keep their old meaning.
pub const LINK_BASIS: &str = "entity_linking";
/// `metadata.linked_by` of every entity the pass mints.
pub const LINKED_BY: &str = "link_entities";
/// The entity type of a mention whose extractor does not know better.
pub const OTHER_KIND: &str = "other";
/// The longest slug before the hash suffix; longer surfaces are cut and
/// told apart by the suffix.
pub const MAX_SLUG_CHARS: usize = 64;
/// Hex digits of SHA-256 in a slug's disambiguating suffix.
const SUFFIX_HEX: usize = 12;

// ---------------------------------------------------------------------------
// Extraction
// ---------------------------------------------------------------------------

/// One surface form found in one memory.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EntityMention {
    /// The text as written.
    pub surface: String,
    /// The entity type the extractor believes (`other` when it cannot tell).
    pub kind: String,
    /// How sure the extractor is, in [0, 1].
    pub confidence: f64,
}

impl EntityMention {
    /// A mention of `surface` with kind `other` and the heuristic's
    /// confidence.
    pub fn heuristic(surface: impl Into<String>) -> Self {
        EntityMention {
            surface: surface.into(),
            kind: OTHER_KIND.into(),
            confidence: HEURISTIC_CONFIDENCE,
        }
    }
}

/// Finds entity mentions in a memory's text. Implement it to plug a better
/// extractor (a model, a gazetteer) into the linking pass; its confidences
/// then decide, against the threshold, what counts.
pub trait EntityExtractor {
    /// Every surface in `text`, each at most once.
    fn extract(&self, text: &str) -> Vec<EntityMention>;
}

/// Capitalised-token extraction with a stoplist: the zero-dependency
/// default.
///
/// Runs of capitalised words on one line; stopwords are stripped from both
/// ends of a run, and a run of stopwords only is no surface; each surface
/// once per text. The runs are found by kith-extract's
/// [`HeuristicExtractor::capitalised_surfaces`], the same reader ingestion
/// uses, so a linked surface and an ingested entity name agree on where a
/// name starts and ends. Every mention has kind `other` and confidence
/// [`HEURISTIC_CONFIDENCE`].
///
/// The default stoplist is kith-extract's [`DEFAULT_STOPLIST`] (documented
/// there and in `docs/extraction.md`): pronouns and determiners, sentence
/// starters, greetings and interjections, capitalised function words and
/// auxiliaries, common imperatives, weekdays, months, and nationality or
/// language adjectives. Compared case-insensitively. Replace it with
/// [`HeuristicEntityExtractor::with_stoplist`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HeuristicEntityExtractor {
    reader: HeuristicExtractor,
}

impl HeuristicEntityExtractor {
    /// The extractor with the default stoplist.
    pub fn new() -> Self {
        Self::default()
    }

    /// The extractor with `words` as its whole stoplist (case-insensitive).
    /// To extend the default:
    /// `with_stoplist(HeuristicEntityExtractor::default_stoplist().iter().copied().chain(["Acme"]))`.
    pub fn with_stoplist<I, W>(words: I) -> Self
    where
        I: IntoIterator<Item = W>,
        W: AsRef<str>,
    {
        HeuristicEntityExtractor {
            reader: HeuristicExtractor::with_stoplist(words),
        }
    }

    /// The default stoplist.
    pub fn default_stoplist() -> &'static [&'static str] {
        DEFAULT_STOPLIST
    }

    /// Whether `word` is on this extractor's stoplist.
    pub fn is_stopword(&self, word: &str) -> bool {
        self.reader.is_stopword(word)
    }
}

impl EntityExtractor for HeuristicEntityExtractor {
    fn extract(&self, text: &str) -> Vec<EntityMention> {
        // `capitalised_surfaces` already strips stopwords from both ends
        // and lists each surface once; the exact-surface check below keeps
        // the "once per text" promise whatever that reader does later.
        let mut seen = BTreeSet::new();
        self.reader
            .capitalised_surfaces(text)
            .into_iter()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty() && !self.reader.is_stopword(s) && seen.insert(s.clone()))
            .map(EntityMention::heuristic)
            .collect()
    }
}

// ---------------------------------------------------------------------------
// Slugs
// ---------------------------------------------------------------------------

/// Characters NFKD does not decompose into a Latin letter and a mark.
fn fold_special(c: char) -> Option<&'static str> {
    Some(match c {
        'ß' => "ss",
        'æ' | 'Æ' => "ae",
        'œ' | 'Œ' => "oe",
        'ø' | 'Ø' => "o",
        'ł' | 'Ł' => "l",
        'đ' | 'Đ' | 'ð' | 'Ð' => "d",
        'þ' | 'Þ' => "th",
        'ı' => "i",
        _ => return None,
    })
}

/// The SHA-256 suffix that tells a surface apart from others with the same
/// slug.
fn suffix(surface: &str) -> String {
    canon::sha256_hex(surface.as_bytes())[..SUFFIX_HEX].to_string()
}

/// A surface's base slug: `[a-z0-9]` words joined by `-`.
///
/// Accents are removed (NFKD, combining marks dropped, a few letters
/// folded: `ß` → `ss`, `ø` → `o`, …), everything that is not an ASCII
/// letter or digit separates words, so no delimiter (`/`, `:`, `#`, …) can
/// reach an id. A letter or digit with no ASCII form (`東京`), or a slug cut
/// at [`MAX_SLUG_CHARS`], makes the slug lossy: it then ends with
/// `-{first 12 hex of SHA-256(surface)}`, so two such surfaces never share
/// a slug. An empty slug becomes `entity-{hash}`.
pub fn slug(surface: &str) -> String {
    use unicode_normalization::char::is_combining_mark;
    use unicode_normalization::UnicodeNormalization;

    let mut out = String::new();
    let mut lossy = false;
    let mut gap = false;
    let push = |out: &mut String, piece: &str, gap: &mut bool| {
        if *gap && !out.is_empty() {
            out.push('-');
        }
        *gap = false;
        out.push_str(piece);
    };
    for c in surface.chars() {
        if let Some(folded) = fold_special(c) {
            push(&mut out, folded, &mut gap);
            continue;
        }
        for d in c.nfkd() {
            if d.is_ascii_alphanumeric() {
                let lower = d.to_ascii_lowercase().to_string();
                push(&mut out, &lower, &mut gap);
            } else if is_combining_mark(d) {
                // An accent: dropped, the letter it sat on stays.
            } else {
                if d.is_alphanumeric() {
                    lossy = true;
                }
                gap = true;
            }
        }
    }
    if out.chars().count() > MAX_SLUG_CHARS {
        out = out.chars().take(MAX_SLUG_CHARS).collect();
        out = out.trim_end_matches('-').to_string();
        lossy = true;
    }
    if out.is_empty() {
        return format!("entity-{}", suffix(surface));
    }
    if lossy {
        out = format!("{out}-{}", suffix(surface));
    }
    out
}

/// The slug with the disambiguating suffix, for a surface whose base slug
/// another surface already holds.
pub fn disambiguated_slug(surface: &str) -> String {
    let base = slug(surface);
    let tail = suffix(surface);
    if base.ends_with(&tail) {
        // Already suffixed (lossy); a second suffix would add nothing.
        base
    } else {
        format!("{base}-{tail}")
    }
}

/// Assigns each surface its slug. A base slug belongs to the surface that
/// holds it already (`taken`: slugs minted by earlier passes, with their
/// surfaces), else to the smallest surface (by bytes) of this pass that
/// wants it; every other surface with that base slug gets
/// [`disambiguated_slug`]. Deterministic: it depends only on the surfaces
/// and what earlier passes minted.
pub fn assign_slugs<'a>(
    surfaces: impl IntoIterator<Item = &'a str>,
    taken: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut wanted: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    for s in surfaces {
        wanted.entry(slug(s)).or_default().insert(s);
    }
    let mut out = BTreeMap::new();
    for (base, group) in wanted {
        let holder = match taken.get(&base) {
            Some(owner) => Some(owner.as_str()),
            // BTreeSet iterates in byte order: the smallest surface first.
            None => group.iter().next().copied(),
        };
        for s in group {
            let slug = if Some(s) == holder {
                base.clone()
            } else {
                disambiguated_slug(s)
            };
            out.insert(s.to_string(), slug);
        }
    }
    out
}

/// `uuid5(KITH_NS, "entity:linked:v1:{len(owner)}:{owner}:{len(scope)}:{scope}:{slug}")`:
/// a minted entity's id. The slug's charset (`[a-z0-9-]`) holds no `:`.
pub fn linked_entity_id(owner: &OwnerId, scope: &ScopeId, slug: &str) -> Uuid {
    let (o, s) = (owner.as_str(), scope.as_str());
    ids::v5_name(&format!(
        "entity:linked:v1:{}:{o}:{}:{s}:{slug}",
        o.len(),
        s.len()
    ))
}

/// `uuid5(KITH_NS, "edge:linked-mention:v1:{memory}:{entity}")`: the
/// MENTIONS edge from a memory to an entity it names.
pub fn mention_edge_id(memory: Uuid, entity: Uuid) -> Uuid {
    ids::v5_name(&format!("edge:linked-mention:v1:{memory}:{entity}"))
}

/// `uuid5(KITH_NS, "edge:linked-co-mention:v1:{subject}:{object}")`: the
/// MENTIONS link between two entities named in one memory.
pub fn co_mention_edge_id(subject: Uuid, object: Uuid) -> Uuid {
    ids::v5_name(&format!("edge:linked-co-mention:v1:{subject}:{object}"))
}

// ---------------------------------------------------------------------------
// The pass
// ---------------------------------------------------------------------------

/// The knobs of one linking pass (spec 004's defaults).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LinkParams {
    /// Memories a surface must be named in to become an entity (default 2).
    pub min_mention_count: usize,
    /// Confidence a mention needs to count (default 0.5, above the
    /// heuristic's 0.4).
    pub confidence_threshold: f64,
    /// Memories one pass may read; more refuse the pass (default 200).
    pub max_records: usize,
}

impl Default for LinkParams {
    fn default() -> Self {
        LinkParams {
            min_mention_count: DEFAULT_MIN_MENTION_COUNT,
            confidence_threshold: DEFAULT_CONFIDENCE_THRESHOLD,
            max_records: DEFAULT_MAX_RECORDS,
        }
    }
}

/// Why the pass refused something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DropReason {
    /// More memories than the read budget: the whole pass was refused.
    OverBudget,
    /// A mention's confidence is under the threshold.
    BelowThreshold,
    /// A surface was named in fewer memories than the floor.
    BelowMentionFloor,
}

impl DropReason {
    /// The stable code.
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::OverBudget => "over_budget",
            DropReason::BelowThreshold => "below_threshold",
            DropReason::BelowMentionFloor => "below_mention_floor",
        }
    }
}

/// One refusal: the surface (empty for the whole pass) and why, in spec
/// 004's words.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Dropped {
    /// The surface refused; empty when the whole pass was.
    pub surface: String,
    /// Which refusal.
    pub reason: DropReason,
    /// The sentence spec 004 gives.
    pub detail: String,
}

/// Where a surface's links point instead of a newly minted entity: an
/// entity that already exists and that admission agreed to reuse.
#[derive(Debug, Clone, PartialEq)]
pub struct ReuseTarget {
    /// The existing entity.
    pub id: Uuid,
}

/// What the organizer job knows from the store before a pass.
#[derive(Debug, Clone, Default)]
pub struct LinkContext {
    /// Slugs earlier passes minted in this scope, with their surfaces.
    pub taken_slugs: BTreeMap<String, String>,
    /// Surfaces whose links go to an existing entity instead.
    pub reuse: HashMap<String, ReuseTarget>,
}

/// The entities one pass minted, the links it writes, and its refusals.
///
/// In kith's terms spec 004's `EntityLink(subject, object, MENTIONS, 0.5)`
/// is an [`Edge`]: `source_id` the subject, `target_id` the object,
/// `edge_type` MENTIONS, `confidence` the weight.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LinkingResult {
    /// Minted entities (semantic memories of the scope), by surface.
    pub entities: Vec<Node>,
    /// Two entities named in the same memory: one link per pair, subject
    /// the entity whose surface sorts first.
    pub links: Vec<Edge>,
    /// Each memory → each entity it names (the edges retrieval follows).
    pub mentions: Vec<Edge>,
    /// Surfaces mentioned often enough, with the entity their links use
    /// (minted or reused), by surface.
    pub surfaces: BTreeMap<String, Uuid>,
    /// What the pass refused.
    pub dropped: Vec<Dropped>,
}

/// Whether `node` is a memory a pass reads: an active message node (the
/// node `store()` or ingestion wrote for an event), not a derived entity or
/// claim, so one message counts once whatever was derived from it.
pub fn is_linkable_memory(node: &Node) -> bool {
    node.node_type != NodeType::Entity
        && node.lifecycle.is_active()
        && node
            .evidence_refs
            .first()
            .is_some_and(|e| ids::note_node_id(*e) == node.id)
}

/// Mints entities for surfaces mentioned often enough, and links
/// co-mentions (spec 004's `link_entities`). `records` are memories of
/// `owner` and `scope`; `extractor` defaults to [`HeuristicEntityExtractor`].
pub fn link_entities(
    records: &[Node],
    owner: &OwnerId,
    scope: &ScopeId,
    extractor: Option<&dyn EntityExtractor>,
    params: &LinkParams,
) -> LinkingResult {
    link_entities_in(
        records,
        owner,
        scope,
        extractor,
        params,
        &LinkContext::default(),
    )
}

/// The refusal of a pass over its read budget: `total` memories against
/// `budget`.
pub fn over_budget(total: usize, budget: usize) -> Dropped {
    Dropped {
        surface: String::new(),
        reason: DropReason::OverBudget,
        detail: format!(
            "{total} memories exceed the {budget}-memory read budget for one linking pass"
        ),
    }
}

/// [`link_entities`] with what the store already holds: slugs taken by
/// earlier passes and surfaces to link to existing entities.
pub fn link_entities_in(
    records: &[Node],
    owner: &OwnerId,
    scope: &ScopeId,
    extractor: Option<&dyn EntityExtractor>,
    params: &LinkParams,
    ctx: &LinkContext,
) -> LinkingResult {
    if records.len() > params.max_records {
        return LinkingResult {
            dropped: vec![over_budget(records.len(), params.max_records)],
            ..LinkingResult::default()
        };
    }
    let default_reader = HeuristicEntityExtractor::new();
    let reader: &dyn EntityExtractor = extractor.unwrap_or(&default_reader);
    let mut read = read_mentions(records, reader, params);
    let (surfaces, entities) = mint(records, &mut read, owner, scope, params, ctx);
    let (mentions, links) = link(records, &read.per_record, &surfaces, owner, scope);
    LinkingResult {
        entities,
        links,
        mentions,
        surfaces,
        dropped: read.dropped,
    }
}

/// The surfaces a linking pass read, before any entity is minted.
struct Read {
    /// Memories naming each surface that cleared the confidence bar.
    counts: BTreeMap<String, usize>,
    /// Each surface's kind, as first read.
    kinds: HashMap<String, String>,
    /// The surfaces each memory names, in the records' order.
    per_record: Vec<Vec<String>>,
    /// What was left out, and why.
    dropped: Vec<Dropped>,
}

/// Reads every record's mentions with `reader`, keeping those at or above
/// the confidence bar (one count per memory).
fn read_mentions(records: &[Node], reader: &dyn EntityExtractor, params: &LinkParams) -> Read {
    let mut read = Read {
        counts: BTreeMap::new(),
        kinds: HashMap::new(),
        per_record: Vec::new(),
        dropped: Vec::new(),
    };
    for record in records {
        let mut kept: Vec<String> = Vec::new();
        for mention in reader.extract(&record.content) {
            // A custom extractor may repeat a surface; one memory counts once.
            if kept.contains(&mention.surface) {
                continue;
            }
            // A NaN confidence is refused too: it is not at or above the bar.
            let clears =
                mention.confidence.is_finite() && mention.confidence >= params.confidence_threshold;
            if !clears {
                read.dropped.push(Dropped {
                    detail: format!(
                        "confidence {} is below the {} threshold",
                        mention.confidence, params.confidence_threshold
                    ),
                    surface: mention.surface,
                    reason: DropReason::BelowThreshold,
                });
                continue;
            }
            *read.counts.entry(mention.surface.clone()).or_default() += 1;
            read.kinds
                .entry(mention.surface.clone())
                .or_insert_with(|| mention.kind.clone());
            kept.push(mention.surface);
        }
        read.per_record.push(kept);
    }
    read
}

/// The surfaces named often enough, each bound to an entity: an existing
/// one the context reuses, or one minted now. Surfaces below the mention
/// floor join `read.dropped`.
fn mint(
    records: &[Node],
    read: &mut Read,
    owner: &OwnerId,
    scope: &ScopeId,
    params: &LinkParams,
    ctx: &LinkContext,
) -> (BTreeMap<String, Uuid>, Vec<Node>) {
    let minted: BTreeSet<&str> = read
        .counts
        .iter()
        .filter(|(_, &n)| n >= params.min_mention_count)
        .map(|(s, _)| s.as_str())
        .collect();
    for (surface, &count) in &read.counts {
        if !minted.contains(surface.as_str()) {
            read.dropped.push(Dropped {
                surface: surface.clone(),
                reason: DropReason::BelowMentionFloor,
                detail: format!(
                    "mentioned {count} time(s), below the {} floor",
                    params.min_mention_count
                ),
            });
        }
    }

    // Only surfaces that mint take a slug: a reused surface links to an
    // existing entity and must not claim a slug it never uses.
    let slugs = assign_slugs(
        minted
            .iter()
            .copied()
            .filter(|s| !ctx.reuse.contains_key(*s)),
        &ctx.taken_slugs,
    );
    let mut surfaces: BTreeMap<String, Uuid> = BTreeMap::new();
    let mut entities = Vec::new();
    for &surface in &minted {
        if let Some(target) = ctx.reuse.get(surface) {
            surfaces.insert(surface.to_string(), target.id);
            continue;
        }
        let slug = &slugs[surface];
        let mentioning: Vec<&Node> = records
            .iter()
            .zip(&read.per_record)
            .filter(|(_, kept)| kept.iter().any(|s| s == surface))
            .map(|(r, _)| r)
            .collect();
        let entity = entity_node(
            owner,
            scope,
            surface,
            slug,
            read.kinds.get(surface).map_or(OTHER_KIND, String::as_str),
            read.counts[surface],
            &mentioning,
        );
        surfaces.insert(surface.to_string(), entity.id);
        entities.push(entity);
    }
    (surfaces, entities)
}

/// The MENTIONS edge from each memory to each entity it names, and one
/// co-mention link per pair of entities named together (dated by the
/// first memory that names both).
fn link(
    records: &[Node],
    per_record: &[Vec<String>],
    surfaces: &BTreeMap<String, Uuid>,
    owner: &OwnerId,
    scope: &ScopeId,
) -> (Vec<Edge>, Vec<Edge>) {
    let mut mentions = Vec::new();
    let mut links: BTreeMap<(Uuid, Uuid), Edge> = BTreeMap::new();
    for (record, kept) in records.iter().zip(per_record) {
        let named: Vec<(&str, Uuid)> = kept
            .iter()
            .filter_map(|s| surfaces.get(s).map(|id| (s.as_str(), *id)))
            .collect();
        for (surface, entity) in &named {
            mentions.push(edge(
                mention_edge_id(record.id, *entity),
                owner,
                scope,
                record,
                record.id,
                *entity,
                json!({"basis": LINK_BASIS, "surface": surface}),
            ));
        }
        let mut sorted = named.clone();
        sorted.sort();
        for (i, (sa, a)) in sorted.iter().enumerate() {
            for (sb, b) in &sorted[i + 1..] {
                if a == b {
                    // Two surfaces reused onto one entity: no self-loop.
                    continue;
                }
                links.entry((*a, *b)).or_insert_with(|| {
                    edge(
                        co_mention_edge_id(*a, *b),
                        owner,
                        scope,
                        record,
                        *a,
                        *b,
                        json!({"basis": LINK_BASIS, "co_mention": [sa, sb]}),
                    )
                });
            }
        }
    }
    (mentions, links.into_values().collect())
}

/// A minted entity: a tentative, inferred semantic memory of the scope.
/// Its times and evidence come from the memories that name it (never from
/// the clock), so the same memories always mint the same node.
fn entity_node(
    owner: &OwnerId,
    scope: &ScopeId,
    surface: &str,
    slug: &str,
    kind: &str,
    count: usize,
    mentioning: &[&Node],
) -> Node {
    let mut evidence: Vec<Uuid> = Vec::new();
    for r in mentioning {
        for e in &r.evidence_refs {
            if !evidence.contains(e) {
                evidence.push(*e);
            }
        }
    }
    // A surface is minted from the records that kept it, so `mentioning`
    // is never empty; the times come from those records, never the clock.
    let valid_from = mentioning
        .iter()
        .map(|r| r.valid_from)
        .min_by_key(|t| t.unix_millis())
        .expect("a minted surface is mentioned by at least one record");
    let created_at = mentioning
        .iter()
        .map(|r| r.created_at)
        .max_by_key(|t| t.unix_millis())
        .unwrap_or(valid_from);
    let epistemic_type = EpistemicType::Inferred;
    let source_type = SourceType::SystemInferred;
    Node {
        id: linked_entity_id(owner, scope, slug),
        owner_id: owner.clone(),
        scope: scope.clone(),
        session_id: None,
        node_type: NodeType::Entity,
        content: surface.to_string(),
        metadata: Some(json!({
            "entity_type": kind,
            "slug": slug,
            "linked_by": LINKED_BY,
            "policy": LINKING_POLICY,
            "mention_count": count,
        })),
        confidence: base_confidence(epistemic_type, source_type),
        lifecycle: Lifecycle::Tentative,
        epistemic_type,
        source_type,
        valid_from,
        valid_to: None,
        event_time: None,
        superseded_by: None,
        evidence_refs: evidence,
        created_at,
        updated_at: created_at,
    }
}

/// A MENTIONS edge of weight [`LINK_WEIGHT`], dated by the memory `from`.
fn edge(
    id: Uuid,
    owner: &OwnerId,
    scope: &ScopeId,
    from: &Node,
    source: Uuid,
    target: Uuid,
    metadata: serde_json::Value,
) -> Edge {
    Edge {
        id,
        owner_id: owner.clone(),
        scope: scope.clone(),
        source_id: source,
        target_id: target,
        edge_type: EdgeType::Mentions,
        confidence: LINK_WEIGHT,
        valid_from: from.valid_from,
        valid_to: None,
        provenance_event_id: from.evidence_refs.first().copied(),
        metadata: Some(metadata),
        created_at: from.created_at,
    }
}

/// Whether an existing identity entity may take the links of `surface`
/// (entity type `kind`) instead of a minted entity: the organizer's alias
/// admission rules on names (a match scoring at least the alias threshold)
/// and an equal entity type; never a personal reference or an inactive node.
pub fn admit_reuse(existing: &Node, surface: &str, kind: &str) -> Result<(), Refusal> {
    if existing.node_type != NodeType::Entity {
        return Err(Refusal::new("not_entities", "links go to entities only"));
    }
    if !existing.lifecycle.is_active() {
        return Err(Refusal::new(
            "inactive",
            format!("entity {} is {}", existing.id, existing.lifecycle),
        ));
    }
    if is_personal_reference(existing) {
        return Err(Refusal::new(
            "personal_reference",
            "personal references and the owner's reference entity are never merged or aliased",
        ));
    }
    // Linking reuses an identity only on a name match that could merge; a
    // given name alone ("Jordan" for "Jordan Lee") is never enough.
    match name_match(&existing.content, surface, false) {
        Some(m) if m.may_merge() && m.score() >= DEFAULT_ALIAS_THRESHOLD => {}
        _ => {
            return Err(Refusal::new(
                "different_name",
                format!("names {:?} and {surface:?} differ", existing.content),
            ))
        }
    }
    let existing_kind = existing
        .metadata
        .as_ref()
        .and_then(|m| m.get("entity_type"))
        .and_then(serde_json::Value::as_str)
        .unwrap_or(OTHER_KIND);
    if existing_kind != kind {
        return Err(Refusal::new(
            "different_entity_type",
            format!("entity type {existing_kind} ≠ {kind}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn surfaces(text: &str) -> Vec<String> {
        HeuristicEntityExtractor::new()
            .extract(text)
            .into_iter()
            .map(|m| m.surface)
            .collect()
    }

    #[test]
    fn heuristic_mentions_are_capitalised_runs_at_0_4() {
        let m = HeuristicEntityExtractor::new().extract("We met at Cafe Milano on Monday.");
        assert_eq!(m, vec![EntityMention::heuristic("Cafe Milano")]);
        assert_eq!(m[0].confidence, 0.4);
        assert_eq!(m[0].kind, "other");
        // Each surface once per text; sentence starters and weekdays are
        // stopwords; stopwords are stripped from a run's ends.
        assert_eq!(
            surfaces("Cafe Milano again. Then Cafe Milano! The Berlin office"),
            vec!["Cafe Milano", "Berlin"]
        );
    }

    #[test]
    fn the_stoplist_is_configurable() {
        let x = HeuristicEntityExtractor::with_stoplist(
            HeuristicEntityExtractor::default_stoplist()
                .iter()
                .copied()
                .chain(["Cafe"]),
        );
        assert!(x.is_stopword("cafe"));
        let got: Vec<String> = x
            .extract("Lunch at Cafe with Dana.")
            .into_iter()
            .map(|m| m.surface)
            .collect();
        assert_eq!(got, vec!["Lunch", "Dana"]);
        // An empty stoplist keeps sentence starters.
        let bare = HeuristicEntityExtractor::with_stoplist(Vec::<&str>::new());
        assert!(bare
            .extract("The plan is fine.")
            .iter()
            .any(|m| m.surface == "The"));
    }

    #[test]
    fn slugs_never_carry_a_delimiter_and_fold_accents() {
        assert_eq!(slug("Cafe Milano"), "cafe-milano");
        assert_eq!(slug("Cafe Milano/Berlin"), "cafe-milano-berlin");
        assert_eq!(slug("Café Zürich"), "cafe-zurich");
        assert_eq!(slug("Straße"), "strasse");
        assert_eq!(slug("  :: "), format!("entity-{}", suffix("  :: ")));
        let tokyo = slug("東京");
        assert!(tokyo.starts_with("entity-"));
        assert_ne!(tokyo, slug("大阪"));
        assert!(slug("Ünïcødé 東京").starts_with("unicode-"));
        for s in [
            "Cafe Milano/Berlin",
            "a:b#c?d",
            "Café",
            "東京",
            &"Long".repeat(40),
        ] {
            let got = slug(s);
            assert!(
                got.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{got}"
            );
            assert!(!got.starts_with('-') && !got.ends_with('-') && !got.contains("--"));
        }
    }

    #[test]
    fn colliding_slugs_are_told_apart_deterministically() {
        let none = BTreeMap::new();
        let a = assign_slugs(["Cafe Milano/Berlin", "Cafe Milano Berlin"], &none);
        let b = assign_slugs(["Cafe Milano Berlin", "Cafe Milano/Berlin"], &none);
        assert_eq!(a, b);
        // The byte-smaller surface (space < '/') keeps the plain slug.
        assert_eq!(a["Cafe Milano Berlin"], "cafe-milano-berlin");
        assert_eq!(
            a["Cafe Milano/Berlin"],
            format!("cafe-milano-berlin-{}", suffix("Cafe Milano/Berlin"))
        );
        // A slug an earlier pass minted stays with its surface.
        let taken = BTreeMap::from([(
            "cafe-milano-berlin".to_string(),
            "Cafe Milano/Berlin".to_string(),
        )]);
        let c = assign_slugs(["Cafe Milano Berlin", "Cafe Milano/Berlin"], &taken);
        assert_eq!(c["Cafe Milano/Berlin"], "cafe-milano-berlin");
        assert_ne!(c["Cafe Milano Berlin"], "cafe-milano-berlin");
    }
}
