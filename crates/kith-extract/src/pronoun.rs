//! Pronoun repair: the one extra question kith asks an LLM, and only for a
//! message whose grounded claims have a third-person pronoun (he, she, they
//! and their forms) as subject or object.
//!
//! The question shows the message, its speaker and a window of the owner's
//! preceding memories, and asks who each pronoun refers to. Every returned
//! name must be a proper name written in the sentence, the message, the
//! speaker line or a shown memory ([`valid_names`]); anything else is thrown
//! away and the field stays as it was. One valid name rebinds the field;
//! several keep the pronoun entity and are listed as candidates. First
//! person is never asked about.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ExtractError;

/// Whether a word is a third-person personal pronoun (he, she, they and
/// their forms, per [`crate::grounding::PERSONAL_FAMILIES`]): the ones
/// repair asks about.
pub fn is_third_person(word: &str) -> bool {
    crate::grounding::personal_family(word)
        .is_some_and(|family| matches!(family.first(), Some(&"he") | Some(&"she") | Some(&"they")))
}

/// The reply schema's name.
pub const SCHEMA_NAME: &str = "kith_pronoun_repair";

/// The system prompt of the question.
pub const SYSTEM_PROMPT: &str = "You resolve pronouns for a memory system. For each numbered \
question, say which named person (or people) the pronoun in the quoted sentence refers to, \
using only names written in the message, the speaker line or the earlier memories shown. \
If you cannot tell, return an empty list. Reply with JSON only: \
{\"answers\": [{\"index\": 0, \"field\": \"subject\", \"names\": [\"...\"]}]}.";

/// One pronoun to resolve.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PronounQuestion {
    /// The claim's index in the grounded facts.
    pub index: usize,
    /// `subject` or `object`.
    pub field: String,
    /// The pronoun as written.
    pub pronoun: String,
    /// The claim's sentence.
    pub sentence: String,
}

/// The whole request.
#[derive(Debug, Clone)]
pub struct PronounRequest<'a> {
    /// The message text.
    pub message: &'a str,
    /// Its speaker, when known.
    pub speaker: Option<&'a str>,
    /// The owner's preceding memories, oldest first.
    pub memories: &'a [String],
    /// The pronouns to resolve.
    pub questions: &'a [PronounQuestion],
}

/// One answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PronounAnswer {
    /// The question's claim index.
    pub index: usize,
    /// `subject` or `object`.
    pub field: String,
    /// The names the model gave.
    pub names: Vec<String>,
}

/// What the provider returned.
#[derive(Debug, Clone, PartialEq)]
pub struct PronounReply {
    /// The answers.
    pub answers: Vec<PronounAnswer>,
    /// The reply text (saved with the extraction).
    pub raw: String,
    /// HTTP requests made.
    pub calls: u32,
}

/// The user message of the question.
pub fn user_message(request: &PronounRequest<'_>) -> String {
    let mut out = String::from("PRONOUN-REPAIR\n");
    if let Some(s) = request.speaker {
        out.push_str(&format!("Speaker: {s}\n"));
    }
    if !request.memories.is_empty() {
        out.push_str("Earlier memories:\n");
        for m in request.memories {
            out.push_str(&format!("- {m}\n"));
        }
    }
    out.push_str(&format!(
        "<message>\n{}\n</message>\nQuestions:\n",
        request.message
    ));
    for q in request.questions {
        out.push_str(&format!(
            "{}. In \"{}\", who is \"{}\" (the {})?\n",
            q.index, q.sentence, q.pronoun, q.field
        ));
    }
    out
}

/// The reply's JSON Schema (strict).
pub fn json_schema_text() -> String {
    r#"{"type":"object","properties":{"answers":{"type":"array","items":{"type":"object","properties":{"index":{"type":"integer"},"field":{"type":"string","enum":["subject","object"]},"names":{"type":"array","items":{"type":"string"}}},"required":["index","field","names"],"additionalProperties":false}}},"required":["answers"],"additionalProperties":false}"#
        .to_string()
}

/// Parses the reply strictly.
pub fn parse_answers(text: &str) -> Result<Vec<PronounAnswer>, ExtractError> {
    let value: Value =
        serde_json::from_str(text.trim()).map_err(|e| ExtractError::InvalidJson {
            reason: e.to_string(),
        })?;
    let answers = value
        .get("answers")
        .cloned()
        .ok_or_else(|| ExtractError::Malformed {
            path: "answers".into(),
            reason: "missing".into(),
        })?;
    serde_json::from_value(answers).map_err(|e| ExtractError::Malformed {
        path: "answers".into(),
        reason: e.to_string(),
    })
}

/// The names that are proper names (capitalised, not a pronoun) written,
/// whole word, in one of `sources`; duplicates removed, order kept.
pub fn valid_names(names: &[String], sources: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for name in names {
        let name = name.trim();
        let proper = name
            .split_whitespace()
            .all(|w| w.chars().next().is_some_and(char::is_uppercase))
            && !name.is_empty()
            && crate::grounding::personal_family(name).is_none();
        if !proper || out.iter().any(|o| o.eq_ignore_ascii_case(name)) {
            continue;
        }
        if sources.iter().any(|s| written_in(s, name)) {
            out.push(name.to_string());
        }
    }
    out
}

/// Whole-word, case-sensitive occurrence (names count as written).
fn written_in(text: &str, name: &str) -> bool {
    let mut from = 0;
    while let Some(pos) = text[from..].find(name) {
        let at = from + pos;
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        let boundary = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric());
        if boundary(before) && boundary(after) {
            return true;
        }
        from = at + name.len();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn third_person_pronouns() {
        for w in ["He", "him", "her", "They", "theirs"] {
            assert!(is_third_person(w), "{w}");
        }
        for w in ["I", "we", "you", "it", "Jordan"] {
            assert!(!is_third_person(w), "{w}");
        }
    }

    #[test]
    fn names_must_be_written_somewhere_shown() {
        let names: Vec<String> = ["Jordan", "jordan", "Sam", "He", "Alex Rivera", "Jordan"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let got = valid_names(
            &names,
            &["He said so.", "Yesterday Jordan called.", "Alex Rivera"],
        );
        assert_eq!(got, vec!["Jordan".to_string(), "Alex Rivera".to_string()]);
        assert!(
            valid_names(&["Jord".into()], &["Jordan"]).is_empty(),
            "whole words only"
        );
    }

    #[test]
    fn answers_parse_strictly() {
        let a = parse_answers(r#"{"answers":[{"index":0,"field":"subject","names":["Jordan"]}]}"#)
            .unwrap();
        assert_eq!(a[0].names, vec!["Jordan".to_string()]);
        assert!(matches!(
            parse_answers("nope"),
            Err(ExtractError::InvalidJson { .. })
        ));
        assert!(matches!(
            parse_answers(r#"{"answers":[{"index":0}]}"#),
            Err(ExtractError::Malformed { .. })
        ));
    }

    #[test]
    fn the_question_names_everything_shown() {
        let memories = vec!["Jordan got a new bike.".to_string()];
        let questions = vec![PronounQuestion {
            index: 0,
            field: "subject".into(),
            pronoun: "He".into(),
            sentence: "He loves it.".into(),
        }];
        let text = user_message(&PronounRequest {
            message: "He loves it.",
            speaker: Some("Maya"),
            memories: &memories,
            questions: &questions,
        });
        assert!(text.starts_with("PRONOUN-REPAIR"));
        assert!(text.contains("Speaker: Maya") && text.contains("Jordan got a new bike."));
        assert!(text.contains("who is \"He\" (the subject)"));
    }
}
