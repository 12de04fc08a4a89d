//! The BERT WordPiece tokenizer (uncased), written to give the same ids as
//! HuggingFace's `BertTokenizer` for all-MiniLM-L6-v2.
//!
//! The steps, in BERT's order:
//! 1. clean the text: drop NUL, U+FFFD and control characters (general
//!    category Cc, Cf, Co, except tab, newline and carriage return), turn
//!    every whitespace character (those three, space, and category Zs) into
//!    a space;
//! 2. put spaces around CJK ideographs, so each is a word of its own;
//! 3. split on whitespace; lower-case each word and strip its accents (NFD,
//!    then drop non-spacing marks, category Mn);
//! 4. split each word on punctuation: every character of category P*, and
//!    every ASCII symbol (`!`–`/`, `:`–`@`, `[`–`` ` ``, `{`–`~`), is a
//!    token of its own;
//! 5. WordPiece: greedy longest-match-first against the vocabulary, with
//!    `##` marking a piece that continues a word; a word longer than 100
//!    characters, or one that cannot be covered by pieces, becomes `[UNK]`;
//! 6. `[CLS]` … `[SEP]` around it, truncated to the maximum length.
//!
//! Before all that, special tokens written literally in the text (`[CLS]`,
//! `[SEP]`, `[UNK]`, `[PAD]`, `[MASK]`, exactly so cased) are cut out and
//! kept as their own ids, as HuggingFace does with its added tokens.
//!
//! The general categories come from a table generated from Python's
//! `unicodedata` (`tools/gen_unicode_tables.py`), so they agree with the
//! reference implementation. Unassigned code points (Cn) are kept as
//! ordinary characters (they end up as `[UNK]`) rather than dropped.

use std::collections::HashMap;
use std::fs;
use std::path::Path;

use unicode_normalization::UnicodeNormalization;

use crate::EmbedError;

mod unicode_tables;

/// A word longer than this many characters becomes `[UNK]` (BERT's rule).
const MAX_CHARS_PER_WORD: usize = 100;

/// The general-category classes the tokenizer cares about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CharClass {
    /// P*: punctuation.
    Punctuation,
    /// Mn: a non-spacing mark (accents after NFD).
    Mark,
    /// Cc, Cf, Co: control, format and private-use characters.
    Control,
    /// Zs: a space separator.
    Space,
}

fn class_of(c: char) -> Option<CharClass> {
    let cp = c as u32;
    // ASCII is by far the most common case: answer it without a search.
    if cp < 0x80 {
        return match cp {
            0x20 => Some(CharClass::Space),
            0..=0x1F | 0x7F => Some(CharClass::Control),
            _ => None,
        };
    }
    let table = &unicode_tables::RANGES;
    let i = table.partition_point(|&(_, end, _)| end < cp);
    match table.get(i) {
        Some(&(start, _, class)) if start <= cp => Some(class),
        _ => None,
    }
}

fn is_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r') || class_of(c) == Some(CharClass::Space)
}

fn is_control(c: char) -> bool {
    !matches!(c, '\t' | '\n' | '\r') && class_of(c) == Some(CharClass::Control)
}

fn is_punctuation(c: char) -> bool {
    // BERT treats every ASCII non-alphanumeric symbol as punctuation, even
    // those Unicode files as symbols (`$`, `+`, `^`, ...).
    matches!(c as u32, 33..=47 | 58..=64 | 91..=96 | 123..=126)
        || class_of(c) == Some(CharClass::Punctuation)
}

/// The CJK Unified Ideographs blocks, as BERT defines them (not Hangul,
/// Hiragana or Katakana, which are written with spaces).
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF
        | 0x3400..=0x4DBF
        | 0x20000..=0x2A6DF
        | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F
        | 0x2B820..=0x2CEAF
        | 0xF900..=0xFAFF
        | 0x2F800..=0x2FA1F)
}

/// A BERT WordPiece tokenizer with its vocabulary.
#[derive(Debug, Clone)]
pub struct WordPieceTokenizer {
    /// Pieces that start a word.
    starts: HashMap<String, u32>,
    /// Pieces that continue a word, keyed without their `##`, so a lookup
    /// needs no allocation.
    continuations: HashMap<String, u32>,
    /// Every token by id, for [`WordPieceTokenizer::id_to_token`].
    tokens: Vec<String>,
    lowercase: bool,
    strip_accents: bool,
    chinese_chars: bool,
    cls: u32,
    sep: u32,
    unk: u32,
    max_len: usize,
    /// Special tokens matched literally in the input, longest first.
    specials: Vec<(String, u32)>,
}

/// The special tokens BERT's vocabulary has and HuggingFace matches
/// literally in input text.
const SPECIAL_TOKENS: [&str; 5] = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];

impl WordPieceTokenizer {
    /// The default maximum sequence length, `[CLS]` and `[SEP]` included:
    /// sentence-transformers' `max_seq_length` for all-MiniLM-L6-v2.
    pub const DEFAULT_MAX_LEN: usize = 256;

    /// Builds an uncased tokenizer from the text of a `vocab.txt` (one token
    /// per line, the line number being its id).
    ///
    /// Fails if `[CLS]`, `[SEP]` or `[UNK]` is missing.
    pub fn from_vocab(vocab_text: &str) -> Result<Self, String> {
        let mut starts = HashMap::new();
        let mut continuations = HashMap::new();
        let mut tokens = Vec::new();
        for (id, line) in vocab_text.lines().enumerate() {
            let token = line.trim_end_matches('\r').to_string();
            let id = u32::try_from(id).map_err(|_| "more than 2^32 tokens".to_string())?;
            match token.strip_prefix("##") {
                Some(rest) if !rest.is_empty() => {
                    continuations.entry(rest.to_string()).or_insert(id);
                }
                _ => {
                    starts.entry(token.clone()).or_insert(id);
                }
            }
            tokens.push(token);
        }
        let special = |name: &str| {
            starts
                .get(name)
                .copied()
                .ok_or_else(|| format!("the vocabulary has no {name} token"))
        };
        let specials = SPECIAL_TOKENS
            .iter()
            .filter_map(|t| starts.get(*t).map(|&id| (t.to_string(), id)))
            .collect();
        Ok(WordPieceTokenizer {
            specials,
            cls: special("[CLS]")?,
            sep: special("[SEP]")?,
            unk: special("[UNK]")?,
            starts,
            continuations,
            tokens,
            lowercase: true,
            strip_accents: true,
            chinese_chars: true,
            max_len: Self::DEFAULT_MAX_LEN,
        })
    }

    /// Loads `vocab.txt` from a model directory and, when the directory has a
    /// `tokenizer.json`, takes its normaliser settings (lower-casing, accent
    /// stripping, CJK handling) from it.
    pub fn from_dir(dir: &Path) -> Result<Self, EmbedError> {
        let vocab_path = dir.join("vocab.txt");
        let text = fs::read_to_string(&vocab_path)
            .map_err(|e| EmbedError::io("cannot read", &vocab_path, e))?;
        let mut tokenizer =
            Self::from_vocab(&text).map_err(|r| EmbedError::bad_file(&vocab_path, r))?;
        let json_path = dir.join("tokenizer.json");
        if json_path.is_file() {
            let text = fs::read_to_string(&json_path)
                .map_err(|e| EmbedError::io("cannot read", &json_path, e))?;
            let json: serde_json::Value = serde_json::from_str(&text)
                .map_err(|e| EmbedError::bad_file(&json_path, format!("not JSON: {e}")))?;
            let norm = &json["normalizer"];
            if norm["type"] == "BertNormalizer" {
                if let Some(b) = norm["lowercase"].as_bool() {
                    tokenizer.lowercase = b;
                }
                if let Some(b) = norm["handle_chinese_chars"].as_bool() {
                    tokenizer.chinese_chars = b;
                }
                // null means "do what lowercase does", as in BERT.
                tokenizer.strip_accents = norm["strip_accents"]
                    .as_bool()
                    .unwrap_or(tokenizer.lowercase);
            }
        }
        Ok(tokenizer)
    }

    /// Sets the maximum sequence length, `[CLS]` and `[SEP]` included
    /// (at least 2).
    pub fn with_max_len(mut self, max_len: usize) -> Self {
        self.max_len = max_len.max(2);
        self
    }

    /// The maximum sequence length, `[CLS]` and `[SEP]` included.
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// The number of tokens in the vocabulary.
    pub fn vocab_size(&self) -> usize {
        self.tokens.len()
    }

    /// The text of token `id`, if there is one.
    pub fn id_to_token(&self, id: u32) -> Option<&str> {
        self.tokens.get(id as usize).map(String::as_str)
    }

    /// The id of a token as written in `vocab.txt` (`"##ing"` for a
    /// continuation piece).
    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        match token.strip_prefix("##") {
            Some(rest) if !rest.is_empty() => self.continuations.get(rest).copied(),
            _ => self.starts.get(token).copied(),
        }
    }

    /// The ids of `text`: `[CLS]`, its word pieces (at most
    /// `max_len - 2` of them), `[SEP]`.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let budget = self.max_len - 2;
        let mut ids = Vec::with_capacity(16);
        ids.push(self.cls);
        for (segment, special) in self.split_specials(text) {
            if ids.len() > budget {
                break;
            }
            match special {
                Some(id) => ids.push(id),
                None => self.for_each_word(segment, |word| {
                    if ids.len() > budget {
                        return false;
                    }
                    self.word_pieces(word, &mut ids);
                    true
                }),
            }
        }
        ids.truncate(budget + 1);
        ids.push(self.sep);
        ids
    }

    /// The token texts of `text`, without `[CLS]`/`[SEP]` and without
    /// truncation: for tests and debugging.
    pub fn tokenize(&self, text: &str) -> Vec<String> {
        let mut ids = Vec::new();
        for (segment, special) in self.split_specials(text) {
            match special {
                Some(id) => ids.push(id),
                None => self.for_each_word(segment, |word| {
                    self.word_pieces(word, &mut ids);
                    true
                }),
            }
        }
        ids.iter()
            .map(|&id| self.tokens[id as usize].clone())
            .collect()
    }

    /// Cuts `text` into plain segments and literal special tokens (with
    /// their id), in order.
    fn split_specials<'t>(&self, text: &'t str) -> Vec<(&'t str, Option<u32>)> {
        let mut out = Vec::new();
        let mut rest = text;
        // Fast path: every special token starts with '['.
        while let Some(open) = rest.find('[') {
            let found = self
                .specials
                .iter()
                .find(|(token, _)| rest[open..].starts_with(token.as_str()));
            match found {
                Some((token, id)) => {
                    out.push((&rest[..open], None));
                    out.push(("", Some(*id)));
                    rest = &rest[open + token.len()..];
                }
                None => {
                    // Not a special token: keep this '[' in the plain text.
                    let plain_end = open + 1;
                    match rest[plain_end..].find('[') {
                        Some(next) => {
                            let (head, tail) = rest.split_at(plain_end + next);
                            out.push((head, None));
                            rest = tail;
                        }
                        None => break,
                    }
                }
            }
        }
        out.push((rest, None));
        out
    }

    /// Runs BERT's basic tokenizer (steps 1–4) and calls `f` with each
    /// resulting word, until `f` returns false.
    fn for_each_word(&self, text: &str, mut f: impl FnMut(&str) -> bool) {
        // Steps 1 and 2 make one cleaned string; the words are slices of it.
        let mut cleaned = String::with_capacity(text.len() + 8);
        for c in text.chars() {
            if c == '\0' || c == '\u{FFFD}' || is_control(c) {
                continue;
            }
            if is_whitespace(c) {
                cleaned.push(' ');
            } else if self.chinese_chars && is_cjk(c) {
                cleaned.push(' ');
                cleaned.push(c);
                cleaned.push(' ');
            } else {
                cleaned.push(c);
            }
        }
        let mut normalised = String::new();
        for word in cleaned.split_whitespace() {
            let word: &str = if self.lowercase || self.strip_accents {
                normalised.clear();
                let lowered;
                let base = if self.lowercase {
                    // Character by character, like HuggingFace: no
                    // context-dependent rules (a word-final Σ becomes σ,
                    // not the ς that str::to_lowercase would give).
                    lowered = word
                        .chars()
                        .flat_map(char::to_lowercase)
                        .collect::<String>();
                    lowered.as_str()
                } else {
                    word
                };
                if self.strip_accents {
                    normalised.extend(base.nfd().filter(|&c| class_of(c) != Some(CharClass::Mark)));
                } else {
                    normalised.push_str(base);
                }
                &normalised
            } else {
                word
            };
            // Step 4: each punctuation character is a word of its own.
            let mut start = 0;
            for (i, c) in word.char_indices() {
                if is_punctuation(c) {
                    if start < i && !f(&word[start..i]) {
                        return;
                    }
                    let end = i + c.len_utf8();
                    if !f(&word[i..end]) {
                        return;
                    }
                    start = end;
                }
            }
            if start < word.len() && !f(&word[start..]) {
                return;
            }
        }
    }

    /// Step 5: appends the WordPiece ids of one word to `out`.
    fn word_pieces(&self, word: &str, out: &mut Vec<u32>) {
        if word.chars().count() > MAX_CHARS_PER_WORD {
            out.push(self.unk);
            return;
        }
        let mark = out.len();
        let mut start = 0;
        while start < word.len() {
            let map = if start == 0 {
                &self.starts
            } else {
                &self.continuations
            };
            // Longest match first: shrink the end one character at a time.
            let mut end = word.len();
            let mut found = None;
            while end > start {
                if let Some(&id) = map.get(&word[start..end]) {
                    found = Some(id);
                    break;
                }
                end = word[..end]
                    .char_indices()
                    .next_back()
                    .map(|(i, _)| i)
                    .unwrap_or(start);
            }
            match found {
                Some(id) => {
                    out.push(id);
                    start = end;
                }
                None => {
                    // One unmatched piece makes the whole word unknown.
                    out.truncate(mark);
                    out.push(self.unk);
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> WordPieceTokenizer {
        let vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n,\nworld\n!\nun\n##aff\n##able\ncafe\n##s\n中\n国\na\n";
        WordPieceTokenizer::from_vocab(vocab).unwrap()
    }

    #[test]
    fn classes_follow_unicode() {
        assert!(is_punctuation('!'));
        assert!(is_punctuation('$'), "ASCII symbols count as punctuation");
        assert!(is_punctuation('«'));
        assert!(is_punctuation('—'));
        assert!(!is_punctuation('a'));
        assert!(is_whitespace('\u{3000}'));
        assert!(is_whitespace('\u{A0}'));
        assert!(is_control('\u{200B}') || !is_whitespace('\u{200B}'));
        assert!(is_control('\u{7}'));
        assert!(!is_control('\n'));
        assert_eq!(class_of('\u{301}'), Some(CharClass::Mark));
    }

    #[test]
    fn pieces_unk_and_specials() {
        let t = tiny();
        assert_eq!(t.encode("Hello, WORLD!"), vec![2, 4, 5, 6, 7, 3]);
        assert_eq!(t.encode("unaffable"), vec![2, 8, 9, 10, 3]);
        // "unaffablex": the tail "x" matches nothing, so the whole word is [UNK].
        assert_eq!(t.encode("unaffablex hello"), vec![2, 1, 4, 3]);
        assert_eq!(t.tokenize("Cafés"), vec!["cafe", "##s"]);
        assert_eq!(t.tokenize("中国"), vec!["中", "国"]);
        assert_eq!(
            t.tokenize("a\u{0}\u{7}a"),
            vec!["[UNK]"],
            "controls are dropped, joining the word"
        );
        let long = "a".repeat(101);
        assert_eq!(t.encode(&long), vec![2, 1, 3]);
    }

    #[test]
    fn literal_special_tokens_are_kept() {
        let t = tiny();
        assert_eq!(t.encode("[CLS]hello [SEP]"), vec![2, 2, 4, 3, 3]);
        assert_eq!(
            t.tokenize("[x] [cls]"),
            vec!["[UNK]", "[UNK]", "[UNK]", "[UNK]", "[UNK]", "[UNK]"]
        );
        assert_eq!(t.tokenize("a [ [UNK]"), vec!["a", "[UNK]", "[UNK]"]);
    }

    #[test]
    fn truncation_keeps_sep() {
        let t = tiny().with_max_len(5);
        assert_eq!(
            t.encode("hello hello hello hello hello"),
            vec![2, 4, 4, 4, 3]
        );
        assert_eq!(t.encode(""), vec![2, 3]);
    }
}
