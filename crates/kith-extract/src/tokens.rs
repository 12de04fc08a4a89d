//! Words of a sentence, as the heuristic reads them: a token is a word
//! (contractions split into their words: "I'm" is "I" + "am"), a clause
//! break or another symbol, with byte offsets into the sentence so that
//! every value the heuristic cuts out is verbatim text.

use crate::grounding::normalize_quote_mark;
use crate::heuristic::CLAUSE_STOPS;
use crate::lexicon::TITLES_WITH_STOP;

/// What kind of token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Letters and digits (with inner apostrophes and hyphens).
    Word,
    /// Punctuation that ends a clause.
    Break,
    /// Any other symbol (quote marks, `+`, `&`, …).
    Symbol,
}

/// A token of a sentence: a word (contractions split into their words), a
/// clause break or a symbol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tok {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) kind: Kind,
    /// The word in lower case, quote marks normalised; for a contraction's
    /// second half, the word it stands for ("am", "not", "'s").
    pub(crate) lower: String,
    /// A capitalised word that may be (part of) a name.
    pub(crate) capital: bool,
    /// The first half of a contraction other than "'s" ("I" of "I'm").
    pub(crate) contracted: bool,
    /// The first half of a "'s" word ("Jordan" of "Jordan's").
    pub(crate) possessive_head: bool,
    /// The second half of a contraction.
    pub(crate) tail: bool,
}

impl Tok {
    pub(crate) fn nameable(&self) -> bool {
        self.kind == Kind::Word && self.capital && !self.contracted && !self.tail
    }
}

pub(crate) fn normalize_word(word: &str) -> String {
    word.chars()
        .map(normalize_quote_mark)
        .collect::<String>()
        .to_lowercase()
}

fn word(start: usize, end: usize, text: &str) -> Tok {
    Tok {
        start,
        end,
        kind: Kind::Word,
        lower: normalize_word(text),
        capital: text.chars().next().is_some_and(char::is_uppercase),
        contracted: false,
        possessive_head: false,
        tail: false,
    }
}

fn tail(start: usize, end: usize, stands_for: &str) -> Tok {
    Tok {
        start,
        end,
        kind: Kind::Word,
        lower: stands_for.to_string(),
        capital: false,
        contracted: false,
        possessive_head: false,
        tail: true,
    }
}

/// Splits a sentence into tokens (see [`Tok`]).
pub(crate) fn tokenize(sentence: &str) -> Vec<Tok> {
    let chars: Vec<(usize, char)> = sentence.char_indices().collect();
    let end_of = |k: usize| chars.get(k).map_or(sentence.len(), |&(b, _)| b);
    let mut toks = Vec::new();
    let mut k = 0;
    while k < chars.len() {
        let (start, c) = chars[k];
        if c.is_whitespace() {
            k += 1;
            continue;
        }
        if c.is_alphanumeric() {
            let mut j = k + 1;
            while j < chars.len() {
                let d = chars[j].1;
                let joiner = matches!(normalize_quote_mark(d), '\'' | '-');
                let next = chars.get(j + 1).map(|&(_, n)| n);
                if d.is_alphanumeric()
                    || (joiner && next.is_some_and(char::is_alphanumeric))
                    || within_number(chars[j - 1].1, d, next)
                {
                    j += 1;
                } else {
                    break;
                }
            }
            push_word(&mut toks, sentence, start, end_of(j));
            k = j;
            continue;
        }
        let kind = match c {
            '.' if title_stop(&toks, &chars, k) => Kind::Symbol,
            ',' | ';' | ':' | '.' | '!' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '\u{2014}'
            | '\u{2013}' | '\u{2026}' => Kind::Break,
            '-' if chars.get(k + 1).is_none_or(|&(_, n)| n.is_whitespace()) => Kind::Break,
            _ => Kind::Symbol,
        };
        toks.push(Tok {
            start,
            end: end_of(k + 1),
            kind,
            lower: normalize_quote_mark(c).to_string(),
            capital: false,
            contracted: false,
            possessive_head: false,
            tail: false,
        });
        k += 1;
    }
    toks
}

/// Whether the full stop at `chars[k]` closes a title written before a
/// name ("Dr. Patel", "St. David's"): right after a word of
/// [`TITLES_WITH_STOP`], before whitespace and a capital letter. Such a
/// stop is a symbol, not a clause break, so a name and a value read past it.
fn title_stop(toks: &[Tok], chars: &[(usize, char)], k: usize) -> bool {
    let after_word = toks.last().is_some_and(|t| {
        t.kind == Kind::Word && t.end == chars[k].0 && TITLES_WITH_STOP.contains(&t.lower.as_str())
    });
    let mut rest = chars[k + 1..].iter().map(|&(_, c)| c);
    after_word
        && rest.next().is_some_and(char::is_whitespace)
        && rest
            .find(|c| !c.is_whitespace())
            .is_some_and(char::is_uppercase)
}

/// Pushes one word, split when it is a contraction.
/// Whether `mark` between `before` and `after` is inside a number: a time
/// ("3:41"), thousands ("1,000") or a decimal ("3.5") is one word, not
/// two words and a clause break.
pub(crate) fn within_number(before: char, mark: char, after: Option<char>) -> bool {
    matches!(mark, ':' | ',' | '.')
        && before.is_ascii_digit()
        && after.is_some_and(|c| c.is_ascii_digit())
}

fn push_word(toks: &mut Vec<Tok>, sentence: &str, start: usize, end: usize) {
    let text = &sentence[start..end];
    let lower = normalize_word(text);
    if lower == "cannot" && text.is_ascii() {
        toks.push(Tok {
            lower: "can".into(),
            ..word(start, start + 3, &text[..3])
        });
        toks.push(tail(start + 3, end, "not"));
        return;
    }
    // The last apostrophe splits a contraction.
    let Some(apostrophe) = text
        .char_indices()
        .rev()
        .find(|&(_, c)| normalize_quote_mark(c) == '\'')
        .map(|(i, _)| i)
    else {
        toks.push(word(start, end, text));
        return;
    };
    let suffix = normalize_word(&text[apostrophe..])
        .trim_start_matches('\'')
        .to_string();
    let head = &text[..apostrophe];
    let head_lower = normalize_word(head);
    let (head_end, head_word, stands_for) = match suffix.as_str() {
        "s" => (apostrophe, head_lower.clone(), "'s"),
        "m" => (apostrophe, head_lower.clone(), "am"),
        "re" => (apostrophe, head_lower.clone(), "are"),
        "ve" => (apostrophe, head_lower.clone(), "have"),
        "ll" => (apostrophe, head_lower.clone(), "will"),
        "d" => (apostrophe, head_lower.clone(), "would"),
        "t" if head.len() > 1 && head.ends_with(['n', 'N']) => {
            let stem = &head_lower[..head_lower.len() - 1];
            let stem = match stem {
                "ca" => "can".to_string(),
                "wo" => "will".to_string(),
                "sha" => "shall".to_string(),
                other => other.to_string(),
            };
            (apostrophe - 1, stem, "not")
        }
        _ => {
            // O'Brien, rock'n'roll: one word.
            toks.push(word(start, end, text));
            return;
        }
    };
    let mut first = word(start, start + head_end, &text[..head_end]);
    first.lower = head_word;
    if stands_for == "'s" {
        first.possessive_head = true;
    } else {
        first.contracted = true;
    }
    toks.push(first);
    toks.push(tail(start + head_end, end, stands_for));
}

/// Whether token `i` continues a capitalised run begun before it.
pub(crate) fn continues_run(toks: &[Tok], sentence: &str, i: usize) -> bool {
    let (Some(before), Some(here)) = (i.checked_sub(1).and_then(|b| toks.get(b)), toks.get(i))
    else {
        return false;
    };
    before.nameable()
        && !before.possessive_head
        && here.nameable()
        && only_spaces(&sentence[before.end..here.start])
}

pub(crate) fn only_spaces(gap: &str) -> bool {
    !gap.is_empty() && gap.chars().all(|c| c == ' ' || c == '\t')
}

/// The word at token `i`, or `None` at the end or at a non-word token.
pub(crate) fn word_at(toks: &[Tok], i: usize) -> Option<&str> {
    toks.get(i)
        .filter(|t| t.kind == Kind::Word)
        .map(|t| t.lower.as_str())
}

/// Whether a clause ends at token `i`: punctuation, the end of the
/// sentence, or a [`CLAUSE_STOPS`] word.
pub(crate) fn clause_ends_at(toks: &[Tok], i: usize) -> bool {
    match toks.get(i) {
        None => true,
        Some(t) if t.kind == Kind::Break => true,
        Some(t) => t.kind == Kind::Word && CLAUSE_STOPS.contains(&t.lower.as_str()),
    }
}
