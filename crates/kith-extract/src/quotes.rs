//! Where a sentence quotes: the one reading of quotation marks that the
//! identity rules (whose first person a quote holds) and the reported-speech
//! rule (whose words a claim stands in) share.

use std::ops::Range;

use crate::grounding::normalize_quote_mark;

/// The byte ranges of `sentence` inside quotation marks: a double mark of
/// any style opens and closes a quote; a single one opens after a space, a
/// colon or the start, before a letter, and closes at the next single mark
/// not between two letters. An unclosed quote runs to the end.
pub fn quoted_spans(sentence: &str) -> Vec<Range<usize>> {
    // Each character's start and end offsets (a curly mark is three bytes,
    // its normalised form one) and its normalised form.
    let chars: Vec<(usize, usize, char)> = sentence
        .char_indices()
        .map(|(i, c)| (i, i + c.len_utf8(), normalize_quote_mark(c)))
        .collect();
    let alnum_at = |k: usize| chars.get(k).is_some_and(|&(_, _, c)| c.is_alphanumeric());
    let mut spans = Vec::new();
    let mut open: Option<(usize, char)> = None;
    for (k, &(i, after, c)) in chars.iter().enumerate() {
        match (open, c) {
            (None, '"') => open = Some((after, '"')),
            (None, '\'') => {
                let opens = k == 0
                    || chars[k - 1].2.is_whitespace()
                    || matches!(chars[k - 1].2, ':' | '(' | '[' | '-' | '\u{2014}');
                if opens && alnum_at(k + 1) {
                    open = Some((after, '\''));
                }
            }
            (Some((start, '"')), '"') => {
                spans.push(start..i);
                open = None;
            }
            // "I'm" inside a quote: an apostrophe between letters.
            (Some((start, '\'')), '\'') if !(k > 0 && alnum_at(k - 1) && alnum_at(k + 1)) => {
                spans.push(start..i);
                open = None;
            }
            _ => {}
        }
    }
    if let Some((start, _)) = open {
        spans.push(start..sentence.len());
    }
    spans
}

/// The byte ranges inside double quotation marks (any style) only, as
/// policy `kith_ingest_v8`'s reported-speech rule read them; an unclosed
/// quotation runs to the end.
pub fn double_quoted_spans(sentence: &str) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let mut open = None;
    for (i, c) in sentence.char_indices() {
        if normalize_quote_mark(c) == '"' {
            match open.take() {
                None => open = Some(i + c.len_utf8()),
                Some(start) => spans.push(start..i),
            }
        }
    }
    if let Some(start) = open {
        spans.push(start..sentence.len());
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quoted<'a>(sentence: &'a str, spans: &[Range<usize>]) -> Vec<&'a str> {
        spans.iter().map(|r| &sentence[r.clone()]).collect()
    }

    #[test]
    fn double_and_single_marks_open_quotes() {
        for (sentence, want) in [
            ("Dev says \"I love sushi\".", vec!["I love sushi"]),
            ("Dev says 'I love sushi'.", vec!["I love sushi"]),
            ("Jordan wrote: 'I'm done'.", vec!["I'm done"]),
            ("\u{201c}I hate it,\u{201d} Ana said.", vec!["I hate it,"]),
            // An apostrophe is no quote.
            ("I'm at Dev's place.", vec![]),
            ("Dev said \"I quit", vec!["I quit"]),
        ] {
            assert_eq!(
                quoted(sentence, &quoted_spans(sentence)),
                want,
                "{sentence}"
            );
        }
        let single = "Dev says 'I love sushi'.";
        assert!(double_quoted_spans(single).is_empty());
    }
}
