//! Bounds on what one message's extraction may write (issue 20 item 6).
//!
//! An LLM reply is untrusted input: the attack run had one reply create
//! 10,000 entities the message never mentions, 3,000 copies of one claim
//! (3,000 facts, 6,000 edges), and names of 100 KB or holding NUL, newlines
//! or a right-to-left override. Grounding applies these bounds, all pure:
//!
//! - an entity's name is checked like a user-supplied speaker name
//!   ([`kith_core::validate::check_input_label`]: not blank, at most
//!   [`MAX_ENTITY_NAME_CHARS`] characters, no control characters, no
//!   bidirectional overrides); an entity that fails is left out;
//! - a claim identical to an earlier one of its list is dropped
//!   ([`DropReason::Duplicate`]), and past [`MAX_CLAIMS_PER_LIST`] distinct
//!   claims a list's rest is dropped ([`DropReason::OverLimit`]);
//! - an entity is kept ([`keep_grounded_entities`]) only when the message
//!   mentions it (whole word, case-insensitive, as grounding checks
//!   claims), when it is the turn's speaker under speaker grounding, or
//!   when a grounded claim names it; at most [`MAX_ENTITIES_PER_MESSAGE`]
//!   are kept, those claims name first.

use std::collections::HashMap;

use serde::Serialize;

use crate::grounding::{mentions, DropReason, EndpointRef, Grounded};
use crate::schema::ExtractedEntity;

/// Longest entity name kept, in characters (a speaker name's limit).
pub const MAX_ENTITY_NAME_CHARS: usize = kith_core::validate::MAX_SPEAKER_LEN;
/// Most distinct claims grounded per list (facts, relationships) of one
/// message; far above what one message states.
pub const MAX_CLAIMS_PER_LIST: usize = 64;
/// Most entities one message keeps. Claims name at most
/// `2 × 2 × MAX_CLAIMS_PER_LIST` entities, so a named entity is never cut.
pub const MAX_ENTITIES_PER_MESSAGE: usize = 4 * MAX_CLAIMS_PER_LIST;

/// Whether `name` may name an entity (the rules of a speaker name).
pub fn valid_entity_name(name: &str) -> bool {
    kith_core::validate::check_input_label("entity name", name, MAX_ENTITY_NAME_CHARS).is_ok()
}

/// The listed entities whose names are valid, in order; the number left out.
pub(crate) fn valid_entities(entities: Vec<ExtractedEntity>) -> (Vec<ExtractedEntity>, usize) {
    let before = entities.len();
    let kept: Vec<ExtractedEntity> = entities
        .into_iter()
        .filter(|e| valid_entity_name(&e.name))
        .collect();
    let left_out = before - kept.len();
    (kept, left_out)
}

/// Admits the claims of one list: each distinct claim once, at most
/// [`MAX_CLAIMS_PER_LIST`] of them.
#[derive(Default)]
pub(crate) struct ClaimGate {
    seen: HashMap<String, usize>,
}

impl ClaimGate {
    /// `Ok` to ground claim `index`, or why it is dropped unread.
    pub(crate) fn admit<T: Serialize>(
        &mut self,
        index: usize,
        claim: &T,
    ) -> Result<(), DropReason> {
        // Identical means every field equal: the claim's JSON is the key.
        // Serialising plain schema data cannot fail; if it ever did, the
        // claim is simply not deduplicated.
        let key = serde_json::to_string(claim).unwrap_or_default();
        if let Some(&of) = self.seen.get(&key) {
            return Err(DropReason::Duplicate { of });
        }
        if self.seen.len() >= MAX_CLAIMS_PER_LIST {
            return Err(DropReason::OverLimit {
                limit: MAX_CLAIMS_PER_LIST,
            });
        }
        self.seen.insert(key, index);
        Ok(())
    }
}

/// Keeps the entities of `grounded` that are grounded (see the module
/// documentation), renumbering the claims' entity references to match.
/// The engine calls it on every grounded extraction before planning;
/// [`crate::grounding::ground`] itself leaves the listed entities (less
/// invalid names) in place, so its entity indices follow the reply.
pub fn keep_grounded_entities(content: &str, speaker: Option<&str>, grounded: &mut Grounded) {
    let named: Vec<bool> = {
        let mut named = vec![false; grounded.entities.len()];
        let mut mark = |r: &EndpointRef| {
            if let EndpointRef::Entity { index } = r {
                if let Some(n) = named.get_mut(*index) {
                    *n = true;
                }
            }
        };
        for f in &grounded.facts {
            mark(&f.subject);
            mark(&f.object);
        }
        for r in &grounded.relationships {
            mark(&r.source);
            mark(&r.target);
        }
        named
    };
    let speaker = speaker.map(|s| s.trim().to_lowercase());
    let in_message = |e: &ExtractedEntity| {
        mentions(content, e.name.trim())
            || speaker
                .as_deref()
                .is_some_and(|s| e.name.trim().to_lowercase() == s)
    };
    // Named entities first, then mentioned ones in list order, up to the cap.
    let mut keep = named.clone();
    let mut kept = named.iter().filter(|n| **n).count();
    for (i, e) in grounded.entities.iter().enumerate() {
        if kept >= MAX_ENTITIES_PER_MESSAGE {
            break;
        }
        if !keep[i] && in_message(e) {
            keep[i] = true;
            kept += 1;
        }
    }
    let mut new_index = vec![None; grounded.entities.len()];
    let mut entities = Vec::with_capacity(kept);
    for (i, e) in std::mem::take(&mut grounded.entities)
        .into_iter()
        .enumerate()
    {
        if keep[i] {
            new_index[i] = Some(entities.len());
            entities.push(e);
        } else {
            grounded.entities_dropped += 1;
        }
    }
    let renumber = |r: &mut EndpointRef| {
        if let EndpointRef::Entity { index } = r {
            // Every named entity is kept, so the lookup always succeeds.
            if let Some(Some(n)) = new_index.get(*index) {
                *index = *n;
            }
        }
    };
    for f in &mut grounded.facts {
        renumber(&mut f.subject);
        renumber(&mut f.object);
    }
    for r in &mut grounded.relationships {
        renumber(&mut r.source);
        renumber(&mut r.target);
    }
    grounded.entities = entities;
}

#[cfg(test)]
mod tests {
    use kith_core::EpistemicType;

    use crate::grounding::{ClaimKind, DropReason, EndpointRef};
    use crate::schema::{ExtractedEntity, ExtractedFact, Extraction, FactType, Polarity};

    use super::*;

    fn entity(name: &str) -> ExtractedEntity {
        ExtractedEntity {
            name: name.into(),
            entity_type: "person".into(),
            description: None,
        }
    }

    fn fact(subject: &str, object: &str, quote: &str) -> ExtractedFact {
        ExtractedFact {
            subject: subject.into(),
            subject_entity_type: None,
            predicate: "lives_in".into(),
            object: object.into(),
            object_entity_type: None,
            polarity: Polarity::Positive,
            evidence_quote: quote.into(),
            fact_type: FactType::Fact,
            epistemic_type: EpistemicType::Asserted,
            temporal_intent: None,
            replaces_object: None,
            condition: None,
            confidence: 0.9,
        }
    }

    const MESSAGE: &str = "Maya lives in Lisbon with Tom.";

    /// Grounding, then the engine's entity bound.
    fn ground(content: &str, x: &Extraction) -> crate::grounding::Grounded {
        let mut g = crate::grounding::ground(content, x);
        keep_grounded_entities(content, None, &mut g);
        g
    }

    #[test]
    fn entities_the_message_never_mentions_are_left_out() {
        let mut entities: Vec<ExtractedEntity> = (0..10_000)
            .map(|i| entity(&format!("Stranger{i}")))
            .collect();
        entities.push(entity("Maya"));
        let x = Extraction {
            entities,
            facts: vec![],
            relationships: vec![],
        };
        let g = ground(MESSAGE, &x);
        assert_eq!(g.entities, vec![entity("Maya")]);
        assert_eq!(g.entities_dropped, 10_000);
    }

    #[test]
    fn identical_claims_ground_once_and_lists_are_capped() {
        let same = fact("Maya", "Lisbon", "Maya lives in Lisbon");
        let x = Extraction {
            entities: vec![entity("Maya")],
            facts: vec![same; 3_000],
            relationships: vec![],
        };
        let g = ground(MESSAGE, &x);
        assert_eq!(g.facts.len(), 1);
        assert_eq!(g.dropped.len(), 2_999);
        assert!(g
            .dropped
            .iter()
            .all(|d| d.kind == ClaimKind::Fact && d.reason == DropReason::Duplicate { of: 0 }));

        // Distinct claims: the first MAX_CLAIMS_PER_LIST are read, the rest
        // dropped unread.
        let many: Vec<ExtractedFact> = (0..MAX_CLAIMS_PER_LIST + 5)
            .map(|i| {
                let mut f = fact("Maya", "Lisbon", "Maya lives in Lisbon");
                f.confidence = i as f64 / 1000.0;
                f
            })
            .collect();
        let x = Extraction {
            entities: vec![entity("Maya")],
            facts: many,
            relationships: vec![],
        };
        let g = ground(MESSAGE, &x);
        assert_eq!(g.facts.len(), MAX_CLAIMS_PER_LIST);
        let over: Vec<usize> = g
            .dropped
            .iter()
            .filter(|d| {
                d.reason
                    == DropReason::OverLimit {
                        limit: MAX_CLAIMS_PER_LIST,
                    }
            })
            .map(|d| d.index)
            .collect();
        assert_eq!(
            over,
            (MAX_CLAIMS_PER_LIST..MAX_CLAIMS_PER_LIST + 5).collect::<Vec<_>>()
        );
    }

    #[test]
    fn names_are_checked_like_speaker_names() {
        let long = "M".repeat(100 * 1024);
        for bad in [
            "Ma\u{0}ya",
            "Maya\nTom",
            "Maya\u{202e}",
            "\u{2066}Tom",
            "  ",
            long.as_str(),
        ] {
            assert!(!valid_entity_name(bad), "{bad:?}");
            let x = Extraction {
                entities: vec![entity(bad)],
                facts: vec![],
                relationships: vec![],
            };
            let g = ground(&format!("{bad} lives in Lisbon."), &x);
            assert!(g.entities.is_empty(), "{bad:?} was kept");
        }
        assert!(valid_entity_name("Maya Okafor"));
        assert!(valid_entity_name(&"M".repeat(MAX_ENTITY_NAME_CHARS)));
    }

    #[test]
    fn entity_references_follow_the_kept_entities() {
        // The unmentioned entity before Tom is left out, so Tom's index moves.
        let x = Extraction {
            entities: vec![entity("Ghost"), entity("Maya"), entity("Tom")],
            facts: vec![fact("Tom", "Maya", "Maya lives in Lisbon with Tom")],
            relationships: vec![],
        };
        let g = ground(MESSAGE, &x);
        assert_eq!(g.entities, vec![entity("Maya"), entity("Tom")]);
        assert_eq!(g.facts[0].subject, EndpointRef::Entity { index: 1 });
        assert_eq!(g.facts[0].object, EndpointRef::Entity { index: 0 });
    }
}
