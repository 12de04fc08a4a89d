//! Gathering candidate pairs in one read snapshot: same text, alias keys,
//! first names, vector neighbours and caller hints.

use std::collections::{HashMap, HashSet};

use kith_core::{Node, OwnerId};
use kith_store::{NodeQuery, SearchFilters, Tx, VectorQuery};
use uuid::Uuid;

use super::{admission, ordered, PAGE, VECTOR_NEIGHBOURS};
use crate::error::Error;

/// A candidate pair and where it came from.
pub(super) struct Candidate {
    pub(super) a: Uuid,
    pub(super) b: Uuid,
    /// A semantic score (vector similarity or a caller's), if any.
    pub(super) semantic: Option<f64>,
    /// A caller's hint: checked only inside the transaction.
    pub(super) hinted: bool,
}

/// Unordered pairs in first-seen order.
#[derive(Default)]
pub(super) struct Pairs {
    pub(super) seen: HashMap<(Uuid, Uuid), usize>,
    pub(super) list: Vec<Candidate>,
}

impl Pairs {
    /// Puts caller-hinted pairs first, then pairs by their newer member,
    /// newest first (`order`: a node's position in creation order). A run
    /// that stops at its budget has then examined what changed since the
    /// last run, instead of the same oldest pairs (refused last time too)
    /// on every run.
    pub(super) fn newest_first(&mut self, order: &HashMap<Uuid, usize>) {
        let at = |id: &Uuid| order.get(id).copied().unwrap_or(usize::MAX);
        self.list.sort_by_key(|c| {
            let (x, y) = (at(&c.a), at(&c.b));
            // Among pairs of one newest node, the oldest partner first: copies
            // then fold into the oldest node, not into a chain.
            (
                std::cmp::Reverse(c.hinted),
                std::cmp::Reverse(x.max(y)),
                x.min(y),
            )
        });
        self.seen = self
            .list
            .iter()
            .enumerate()
            .map(|(i, c)| ((c.a, c.b), i))
            .collect();
    }

    pub(super) fn add(&mut self, x: Uuid, y: Uuid, semantic: Option<f64>, hinted: bool) {
        if x == y {
            return;
        }
        let key = ordered(x, y);
        match self.seen.get(&key) {
            Some(&i) => {
                let c = &mut self.list[i];
                c.hinted |= hinted;
                if let Some(s) = semantic {
                    c.semantic = Some(c.semantic.map_or(s, |t| t.max(s)));
                }
            }
            None => {
                self.seen.insert(key, self.list.len());
                self.list.push(Candidate {
                    a: key.0,
                    b: key.1,
                    semantic,
                    hinted,
                });
            }
        }
    }
}

/// The owner's active nodes in creation order.
pub(super) fn active_nodes(tx: &mut dyn Tx, owner: &OwnerId) -> Result<Vec<Node>, Error> {
    let mut out = Vec::new();
    let mut after = 0;
    loop {
        let page = tx.list_nodes(&NodeQuery {
            owner: Some(owner.clone()),
            after_seq: after,
            limit: PAGE,
            ..NodeQuery::default()
        })?;
        let Some(last) = page.last() else { break };
        after = last.seq;
        out.extend(
            page.into_iter()
                .map(|s| s.node)
                .filter(|n| n.lifecycle.is_active()),
        );
    }
    Ok(out)
}

/// Each node's position in `nodes` (which are in creation order).
pub(super) fn creation_order(nodes: &[Node]) -> HashMap<Uuid, usize> {
    nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect()
}

/// Pairs of `nodes` whose vectors are at least `threshold` similar, within
/// one scope; at most `budget` nodes are searched, in the order given
/// (callers give the newest first).
pub(super) fn vector_pairs(
    tx: &mut dyn Tx,
    owner: &OwnerId,
    nodes: &[&Node],
    threshold: f64,
    budget: usize,
    pairs: &mut Pairs,
) -> Result<bool, Error> {
    let allowed: HashSet<Uuid> = nodes.iter().map(|n| n.id).collect();
    let mut searched = 0;
    for node in nodes {
        let Some((model, vector)) = tx.get_embedding(node.id)? else {
            continue;
        };
        if searched == budget {
            return Ok(true);
        }
        searched += 1;
        let hits = tx.search_vector(&VectorQuery {
            owner: owner.clone(),
            model,
            vector,
            filters: SearchFilters {
                scope: Some(node.scope.clone()),
                ..SearchFilters::default()
            },
            limit: VECTOR_NEIGHBOURS,
        })?;
        for hit in hits {
            if hit.node_id != node.id && hit.score >= threshold && allowed.contains(&hit.node_id) {
                pairs.add(node.id, hit.node_id, Some(hit.score), false);
            }
        }
    }
    Ok(false)
}

/// Adds the pairs of entities whose names may be one entity's: the same
/// alias key in one scope, people with the same given name ("Jordan" and
/// "Jordan Lee"), and a nickname with the people whose first name it
/// begins ("Mel" and "Melanie"). Each is a candidate only: the name rules
/// decide.
pub(super) fn alias_name_pairs(entities: &[Node], pairs: &mut Pairs) {
    let mut groups: HashMap<(String, String), Vec<Uuid>> = HashMap::new();
    for n in entities {
        let mut keys = vec![admission::alias_key(&n.content)];
        // People also meet by first name: "Jordan" and "Jordan Lee"
        // (a proposal at most; the name rule decides).
        if admission::both_people(n, n) {
            keys.push(format!("given:{}", admission::given_name_key(&n.content)));
        }
        for key in keys {
            if key.is_empty() || key == "given:" {
                continue;
            }
            let group = groups.entry((n.scope.to_string(), key)).or_default();
            for &other in group.iter() {
                pairs.add(other, n.id, None, false);
            }
            group.push(n.id);
        }
    }
    // Nicknames meet the people whose first name they begin ("Mel"
    // and "Melanie"), and untyped first names the people they start
    // ("Jake" and "Jake Miller"); a proposal at most.
    let mut people: HashMap<(String, String), Vec<&Node>> = HashMap::new();
    for n in entities.iter().filter(|n| admission::both_people(n, n)) {
        let key = admission::short_form_key(&n.content);
        people
            .entry((n.scope.to_string(), key))
            .or_default()
            .push(n);
    }
    for n in entities {
        let key = (n.scope.to_string(), admission::short_form_key(&n.content));
        for p in people.get(&key).into_iter().flatten() {
            if p.id != n.id
                && (admission::is_short_form_of(&n.content, &p.content)
                    || admission::is_given_name_of(&n.content, &p.content))
            {
                pairs.add(p.id, n.id, None, false);
            }
        }
    }
}
