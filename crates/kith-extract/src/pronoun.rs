//! Pronoun repair: the one extra question kith asks an LLM, and only for a
//! message whose grounded claims have a third-person pronoun (he, she, they
//! and their forms) as subject or object.
//!
//! The question shows only each claim's own sentence, the speaker line and a
//! window of the owner's preceding memories (not the rest of the message),
//! and asks who each pronoun refers to. Every returned name must be a proper
//! name written in the claim's sentence, the message, the speaker line or a
//! shown memory ([`check_names`]); when any name fails, the whole answer is
//! thrown away and the field stays as it was. One valid name rebinds the
//! field; several keep the pronoun entity, and the engine lists each name as
//! an entity the claim mentions. First person is never asked about.

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
using only names written in the quoted sentences, the speaker line or the earlier memories shown. \
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

/// The whole request: only the claims' own sentences (in the questions),
/// the speaker line and the window of earlier memories are sent.
#[derive(Debug, Clone)]
pub struct PronounRequest<'a> {
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
    /// The names the model gave (after [`check_names`]: the names kept).
    pub names: Vec<String>,
    /// Where each kept name was found, parallel to `names`: `sentence`,
    /// `message`, `speaker` or `memory:{event_id}`. Written by the engine
    /// when it checks the answer (never read from the model).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub found_in: Vec<String>,
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
    out.push_str("Questions:\n");
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
    let mut answers: Vec<PronounAnswer> =
        serde_json::from_value(answers).map_err(|e| ExtractError::Malformed {
            path: "answers".into(),
            reason: e.to_string(),
        })?;
    // Where a name was found is the engine's finding, not the model's.
    for a in &mut answers {
        a.found_in.clear();
    }
    Ok(answers)
}

/// Checks an answer's names: each must be a proper name (capitalised, not a
/// pronoun) written, whole word, in one of `sources`. Returns every name
/// (duplicates removed, order kept) with the index of the first source that
/// writes it, or `None` when any name fails or there is none: a field
/// resolved to several people is repaired only if every one of them passes.
pub fn check_names(names: &[String], sources: &[&str]) -> Option<Vec<(String, usize)>> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for name in names {
        let name = name.trim();
        let proper = !name.is_empty()
            && name
                .split_whitespace()
                .all(|w| w.chars().next().is_some_and(char::is_uppercase))
            && crate::grounding::personal_family(name).is_none();
        if !proper {
            return None;
        }
        if out.iter().any(|(o, _)| o.eq_ignore_ascii_case(name)) {
            continue;
        }
        let found = sources.iter().position(|s| written_in(s, name))?;
        out.push((name.to_string(), found));
    }
    (!out.is_empty()).then_some(out)
}

/// `sentence` with the first whole-word `pronoun` replaced by the names
/// ("Jordan", "Jordan and Sam", "Jordan, Sam and Alex"); `None` when the
/// pronoun is not written there.
pub fn replace_pronoun(sentence: &str, pronoun: &str, names: &[String]) -> Option<String> {
    let at = whole_word_at(sentence, pronoun)?;
    let joined = match names {
        [] => return None,
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    };
    Some(format!(
        "{}{joined}{}",
        &sentence[..at],
        &sentence[at + pronoun.len()..]
    ))
}

/// Whole-word, case-sensitive occurrence (names count as written).
fn written_in(text: &str, name: &str) -> bool {
    whole_word_at(text, name).is_some()
}

/// The byte offset of the first whole-word, case-sensitive `word` in `text`.
fn whole_word_at(text: &str, word: &str) -> Option<usize> {
    if word.is_empty() {
        return None;
    }
    let mut from = 0;
    while let Some(pos) = text[from..].find(word) {
        let at = from + pos;
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        let boundary = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric());
        if boundary(before) && boundary(after) {
            return Some(at);
        }
        from = at + word.len();
    }
    None
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

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn every_name_must_be_written_somewhere_shown() {
        let sources = ["He said so.", "Yesterday Jordan called.", "Alex Rivera"];
        assert_eq!(
            check_names(&names(&["Jordan", "Alex Rivera", "Jordan"]), &sources),
            Some(vec![
                ("Jordan".to_string(), 1),
                ("Alex Rivera".to_string(), 2)
            ])
        );
        // One bad name (not written anywhere, lower case, a pronoun) fails
        // the whole answer: the field stays as it was.
        for bad in ["Sam", "jordan", "He"] {
            assert_eq!(
                check_names(&names(&["Jordan", bad]), &sources),
                None,
                "{bad}"
            );
        }
        assert_eq!(
            check_names(&names(&["Jord"]), &["Jordan"]),
            None,
            "whole words only"
        );
        assert_eq!(check_names(&[], &sources), None, "no name, no repair");
    }

    #[test]
    fn the_pronoun_is_replaced_by_the_names() {
        assert_eq!(
            replace_pronoun("They chose Tokyo.", "They", &names(&["Alex", "Jordan"])).as_deref(),
            Some("Alex and Jordan chose Tokyo.")
        );
        assert_eq!(
            replace_pronoun("Then he left, theirs too.", "he", &names(&["Sam"])).as_deref(),
            Some("Then Sam left, theirs too.")
        );
        assert_eq!(
            replace_pronoun("Sam saw them.", "them", &names(&["A", "B", "C"])).as_deref(),
            Some("Sam saw A, B and C.")
        );
        assert_eq!(replace_pronoun("The theme.", "he", &names(&["Sam"])), None);
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
            speaker: Some("Maya"),
            memories: &memories,
            questions: &questions,
        });
        assert!(text.starts_with("PRONOUN-REPAIR"));
        assert!(text.contains("Speaker: Maya") && text.contains("Jordan got a new bike."));
        assert!(text.contains("who is \"He\" (the subject)"));
        assert!(
            !text.contains("<message>"),
            "only the claim's sentence is sent"
        );
    }
}
