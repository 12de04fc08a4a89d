//! Token-budget packing: ranked evidence in, one context block out that never
//! exceeds the budget, counted with the cl100k_base tokenizer on the rendered
//! text.
//!
//! Each line reads `[2025-08-09 21:33] Maya Okafor (user): text`, with a
//! bracketed mark before the text when there is something to say about it
//! (`[superseded by: …] `). Items of
//! one event are folded into one line (the note carries the whole turn; a
//! claim quoted from it adds nothing). Lines go in rank order; a line that
//! does not fit is skipped and smaller ones after it may still fit. When not
//! even the best item fits, its text is cut (with `…`) to what does. Line
//! costs are summed as an estimate, then the finished block is counted once
//! exactly and trimmed from the end until it fits, so the bound holds on the
//! real text whatever the tokenizer does at line joins.

use std::sync::OnceLock;

use kith_core::{Role, Timestamp};
use serde::Serialize;
use tiktoken_rs::CoreBPE;
use uuid::Uuid;

/// The tokenizer token budgets are counted in.
pub const TOKENIZER: &str = "cl100k_base";

fn bpe() -> &'static CoreBPE {
    static BPE: OnceLock<CoreBPE> = OnceLock::new();
    // The ranks are compiled into tiktoken-rs; building them cannot fail
    // unless the crate itself is broken.
    BPE.get_or_init(|| tiktoken_rs::cl100k_base().expect("cl100k_base ranks are built in"))
}

/// Tokens in `text` under [`TOKENIZER`].
pub fn count_tokens(text: &str) -> usize {
    bpe().encode_ordinary(text).len()
}

/// One ranked piece of evidence to pack.
#[derive(Debug, Clone)]
pub struct PackItem {
    /// The node.
    pub node_id: Uuid,
    /// Its source event (items of one event fold into one line).
    pub event_id: Option<Uuid>,
    /// When it was said.
    pub when: Option<Timestamp>,
    /// Who said it.
    pub speaker: Option<String>,
    /// In which role.
    pub role: Option<Role>,
    /// The text.
    pub text: String,
    /// A note shown before the text, in brackets (`superseded by: …` for
    /// evidence of a claim that no longer holds).
    pub mark: Option<String>,
}

/// One packed line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PackedLine {
    /// The node whose text the line shows.
    pub node_id: Uuid,
    /// Its event.
    pub event_id: Option<Uuid>,
    /// Other items of the same event folded into this line.
    pub folded: Vec<Uuid>,
    /// The line's tokens on its own.
    pub tokens: usize,
    /// Whether the text was cut to fit.
    pub truncated: bool,
    /// The rendered line.
    pub text: String,
}

/// What packing produced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Packed {
    /// The context block: the lines joined by newlines.
    pub context: String,
    /// Its tokens, counted on the block itself.
    pub tokens: usize,
    /// The lines, in order.
    pub lines: Vec<PackedLine>,
    /// Items left out for want of room.
    pub left_out: Vec<Uuid>,
}

/// The line prefix: `[date] speaker (role): `.
fn prefix(item: &PackItem) -> String {
    let mut p = String::new();
    if let Some(t) = item.when {
        p.push_str(&format!("[{}] ", t.short()));
    }
    match (&item.speaker, item.role) {
        (Some(s), Some(r)) => p.push_str(&format!("{s} ({}): ", r.as_str())),
        (Some(s), None) => p.push_str(&format!("{s}: ")),
        (None, Some(r)) => p.push_str(&format!("{}: ", r.as_str())),
        (None, None) => {}
    }
    if let Some(mark) = &item.mark {
        p.push_str(&format!("[{mark}] "));
    }
    p
}

/// One line of text: newlines inside a turn become spaces so that every
/// line of the block is one item.
fn render(item: &PackItem, text: &str) -> String {
    let flat: String = text
        .split(['\n', '\r'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    format!("{}{}", prefix(item), flat)
}

/// Cuts `item`'s line to at most `budget` tokens, or `None` if not even the
/// prefix and a few words fit.
fn cut_to_fit(item: &PackItem, budget: usize) -> Option<String> {
    let chars: Vec<char> = item.text.chars().collect();
    let (mut lo, mut hi) = (0usize, chars.len());
    let mut best = None;
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let text: String = chars[..mid].iter().collect::<String>() + "…";
        let line = render(item, &text);
        if count_tokens(&line) <= budget {
            best = Some(line);
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    // Keep a cut only if it still says something.
    best.filter(|_| lo >= 16.min(chars.len()))
}

/// Packs `items` (best first) into at most `budget` tokens.
pub fn pack(items: &[PackItem], budget: usize) -> Packed {
    // Fold: one line per event, at the rank of its best item, showing the
    // longest text among the event's items (the note holds the whole turn).
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let same = item.event_id.and_then(|e| {
            groups
                .iter_mut()
                .find(|(_, g)| items[g[0]].event_id == Some(e))
        });
        match same {
            Some((_, g)) => g.push(i),
            None => groups.push((i, vec![i])),
        }
    }
    let mut lines: Vec<PackedLine> = Vec::new();
    let mut left_out = Vec::new();
    let mut used = 0usize;
    for (_, group) in &groups {
        let shown = *group
            .iter()
            .max_by_key(|&&i| (items[i].text.len(), std::cmp::Reverse(i)))
            .expect("a group has an item");
        let item = &items[shown];
        let folded: Vec<Uuid> = group
            .iter()
            .filter(|&&i| i != shown)
            .map(|&i| items[i].node_id)
            .collect();
        let line = render(item, &item.text);
        // A newline joins this line to the previous one.
        let join = usize::from(!lines.is_empty());
        let tokens = count_tokens(&line);
        if used + join + tokens <= budget {
            used += join + tokens;
            lines.push(PackedLine {
                node_id: item.node_id,
                event_id: item.event_id,
                folded,
                tokens,
                truncated: false,
                text: line,
            });
        } else if lines.is_empty() {
            match cut_to_fit(item, budget) {
                Some(cut) => {
                    let tokens = count_tokens(&cut);
                    used = tokens;
                    lines.push(PackedLine {
                        node_id: item.node_id,
                        event_id: item.event_id,
                        folded,
                        tokens,
                        truncated: true,
                        text: cut,
                    });
                }
                None => left_out.extend(group.iter().map(|&i| items[i].node_id)),
            }
        } else {
            left_out.extend(group.iter().map(|&i| items[i].node_id));
        }
    }
    // The exact count on the finished block is what the budget bounds.
    loop {
        let context = lines
            .iter()
            .map(|l| l.text.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let tokens = count_tokens(&context);
        if tokens <= budget || lines.is_empty() {
            return Packed {
                context,
                tokens,
                lines,
                left_out,
            };
        }
        let dropped = lines.pop().expect("not empty");
        left_out.push(dropped.node_id);
        left_out.extend(dropped.folded);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(event: u128, text: &str) -> PackItem {
        PackItem {
            node_id: Uuid::from_u128(event * 1000 + text.len() as u128),
            event_id: Some(Uuid::from_u128(event)),
            when: Some(Timestamp::parse("t", "2023-05-08T13:56:00Z").unwrap()),
            speaker: Some("Caroline".into()),
            role: Some(Role::User),
            text: text.into(),
            mark: None,
        }
    }

    #[test]
    fn lines_show_date_speaker_role_and_text() {
        let p = pack(
            &[item(1, "I went to the support group.\nIt was great.")],
            100,
        );
        assert_eq!(
            p.context,
            "[2023-05-08 13:56] Caroline (user): I went to the support group. It was great."
        );
        assert_eq!(p.tokens, count_tokens(&p.context));
    }

    #[test]
    fn a_mark_shows_before_the_text() {
        let mut old = item(1, "I work at Northwind.");
        old.mark = Some("superseded by: Caroline left Northwind".into());
        let p = pack(&[old], 100);
        assert_eq!(
            p.context,
            "[2023-05-08 13:56] Caroline (user): [superseded by: Caroline left Northwind] I work at Northwind."
        );
    }

    #[test]
    fn items_of_one_event_fold_into_the_longest_text() {
        let note = item(1, "I adopted a puppy named Rex last week and he is lovely.");
        let claim = item(1, "I adopted a puppy named Rex");
        let other = item(2, "The market fell.");
        let p = pack(&[claim.clone(), other, note.clone()], 1000);
        assert_eq!(p.lines.len(), 2);
        assert_eq!(p.lines[0].node_id, note.node_id);
        assert_eq!(p.lines[0].folded, vec![claim.node_id]);
        assert!(p.context.starts_with(
            "[2023-05-08 13:56] Caroline (user): I adopted a puppy named Rex last week"
        ));
    }

    #[test]
    fn a_line_that_does_not_fit_is_skipped_and_smaller_ones_still_go_in() {
        let big = item(1, &"word ".repeat(200));
        let small = item(2, "short one");
        let first = item(3, "the best hit");
        let p = pack(&[first.clone(), big.clone(), small.clone()], 40);
        let ids: Vec<Uuid> = p.lines.iter().map(|l| l.node_id).collect();
        assert_eq!(ids, vec![first.node_id, small.node_id]);
        assert_eq!(p.left_out, vec![big.node_id]);
        assert!(p.tokens <= 40);
    }

    #[test]
    fn the_best_item_is_cut_when_nothing_else_fits() {
        let big = item(1, &"a fairly long sentence about many things ".repeat(40));
        let p = pack(&[big], 64);
        assert_eq!(p.lines.len(), 1);
        assert!(p.lines[0].truncated);
        assert!(p.context.ends_with('…'));
        assert!(p.tokens <= 64);
    }

    /// Property: for random items and every budget from 64 to 32,000 tokens
    /// (sampled), the packed block never exceeds the budget.
    #[test]
    fn packed_context_never_exceeds_any_budget() {
        let mut rng = kith_core::rng::Rng::new(0x9E37_79B9_7F4A_7C15);
        let mut next = move || rng.next_u64();
        let words = [
            "memory",
            "Caroline",
            "naïve",
            "café",
            "über",
            "東京",
            "🙂",
            "—",
            "1,024",
            "x",
            "support-group",
            "it's",
            "\n",
            "  ",
            "LGBTQ",
            "counselling",
            "a",
            "the",
            "!!!",
        ];
        for case in 0..120 {
            let n = 1 + (next() % 60) as usize;
            let items: Vec<PackItem> = (0..n)
                .map(|i| {
                    let len = 1 + (next() % 400) as usize;
                    let text: Vec<&str> = (0..len)
                        .map(|_| words[(next() % words.len() as u64) as usize])
                        .collect();
                    let mut it = item((next() % 40) as u128, &text.join(" "));
                    it.node_id = Uuid::from_u128(i as u128 + 1);
                    if next() % 3 == 0 {
                        it.speaker = None;
                    }
                    it
                })
                .collect();
            let budget = 64 + (next() % (32_000 - 64)) as usize;
            let budget = if case % 10 == 0 { 64 } else { budget };
            let p = pack(&items, budget);
            assert!(p.tokens <= budget, "case {case}: {} > {budget}", p.tokens);
            assert_eq!(p.tokens, count_tokens(&p.context));
        }
    }
}
