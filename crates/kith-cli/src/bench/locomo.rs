//! LoCoMo data as the benchmarks read it: one definition of how a
//! conversation becomes kith events, shared by `kith bench recall` and
//! `kith bench extract`, so both measure the same memory.
//!
//! A LoCoMo file is a list of conversations. Each has `conversation` with
//! `speaker_a`, `speaker_b`, `session_N_date_time` ("1:56 pm on 8 May, 2023")
//! and `session_N` (a list of turns `{speaker, dia_id, text, blip_caption?}`),
//! plus `qa` (questions) and `observation` (per session, per speaker, a list
//! of `[fact text, evidence dia_id(s)]`).
//!
//! Every turn is stored as its speaker's turn: role `user`, `speaker` the
//! turn's speaker, session `session_N`, event time the session's date (UTC),
//! source id the turn's `dia_id`, and an image's caption appended to the
//! text as ` [image: …]`. Turns without a speaker or id, or with no text,
//! are skipped.

use std::fmt;
use std::path::{Path, PathBuf};

use kith::EventInput;
use serde_json::Value;

/// Why a LoCoMo file cannot be used. Every variant names the file.
#[derive(Debug)]
pub enum LocomoError {
    /// The file could not be read (missing, unreadable).
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not JSON.
    NotJson {
        /// The file.
        path: PathBuf,
        /// The parser's complaint (with line and column).
        source: serde_json::Error,
    },
    /// The file is JSON but not in LoCoMo's shape.
    Shape {
        /// The file.
        path: PathBuf,
        /// What is missing or wrong, and where.
        what: String,
    },
}

impl fmt::Display for LocomoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LocomoError::Read { path, source } => {
                write!(f, "cannot read LoCoMo data {}: {source}", path.display())
            }
            LocomoError::NotJson { path, source } => write!(
                f,
                "{} is not JSON ({source}); LoCoMo data is a JSON list of conversations",
                path.display()
            ),
            LocomoError::Shape { path, what } => write!(
                f,
                "{} is not LoCoMo data: {what} (each conversation needs `conversation` with \
                 `speaker_a`, `speaker_b` and `session_N` turn lists; see BENCHMARKS.md)",
                path.display()
            ),
        }
    }
}

impl std::error::Error for LocomoError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LocomoError::Read { source, .. } => Some(source),
            LocomoError::NotJson { source, .. } => Some(source),
            LocomoError::Shape { .. } => None,
        }
    }
}

/// One turn as kith stores it.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    /// LoCoMo's turn id (`D8:6`), kept as the event's source id.
    pub dia_id: String,
    /// The session number N of `session_N`.
    pub session: u32,
    /// Who said it.
    pub speaker: String,
    /// The text as stored (an image caption appended).
    pub text: String,
    /// The session's date as RFC 3339 (UTC), when it parses.
    pub event_time: Option<String>,
}

/// One annotated observation: a fact about `speaker`, with the turns that
/// support it.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    /// The person the observation is about.
    pub speaker: String,
    /// The annotator's sentence.
    pub text: String,
    /// Its evidence turns (normalised ids; ids naming no turn dropped).
    pub turns: Vec<String>,
}

/// One conversation of a LoCoMo file.
#[derive(Debug, Clone)]
pub struct Conversation {
    /// `sample_id` (`conv-26`), or `conv{index}` when the file has none.
    pub sample_id: String,
    /// `speaker_a` and `speaker_b`.
    pub speakers: [String; 2],
    /// Every stored turn, in session order.
    pub turns: Vec<Turn>,
    /// The conversation's JSON, for `qa` and `observation`.
    pub raw: Value,
}

/// A LoCoMo file, read and checked.
#[derive(Debug)]
pub struct LocomoFile {
    /// Where it was read from (for error messages).
    pub path: PathBuf,
    /// Its conversations in file order.
    pub conversations: Vec<Conversation>,
}

impl LocomoFile {
    /// Reads and checks `path`.
    pub fn load(path: &Path) -> Result<LocomoFile, LocomoError> {
        let text = std::fs::read_to_string(path).map_err(|source| LocomoError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let data: Value = serde_json::from_str(&text).map_err(|source| LocomoError::NotJson {
            path: path.to_path_buf(),
            source,
        })?;
        let shape = |what: String| LocomoError::Shape {
            path: path.to_path_buf(),
            what,
        };
        let list = data
            .as_array()
            .ok_or_else(|| shape("the top level is not a list of conversations".into()))?;
        if list.is_empty() {
            return Err(shape("the list of conversations is empty".into()));
        }
        let conversations = list
            .iter()
            .enumerate()
            .map(|(i, c)| Conversation::parse(i, c).map_err(shape))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(LocomoFile {
            path: path.to_path_buf(),
            conversations,
        })
    }
}

impl Conversation {
    /// Reads conversation `index` of the file; the error says what is wrong.
    fn parse(index: usize, raw: &Value) -> Result<Conversation, String> {
        let sample_id = raw["sample_id"]
            .as_str()
            .map(String::from)
            .unwrap_or_else(|| format!("conv{index}"));
        let at = format!("conversation {index} ({sample_id})");
        let c = raw["conversation"]
            .as_object()
            .ok_or_else(|| format!("{at} has no `conversation` object"))?;
        let speaker = |key: &str| {
            c.get(key)
                .and_then(Value::as_str)
                .map(String::from)
                .ok_or_else(|| format!("{at} has no `{key}` name"))
        };
        let speakers = [speaker("speaker_a")?, speaker("speaker_b")?];
        let mut sessions: Vec<(u32, &Vec<Value>)> = Vec::new();
        for (key, value) in c {
            let Some(n) = key
                .strip_prefix("session_")
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let turns = value
                .as_array()
                .ok_or_else(|| format!("{at}: `{key}` is not a list of turns"))?;
            sessions.push((n, turns));
        }
        if sessions.is_empty() {
            return Err(format!("{at} has no `session_N` turn lists"));
        }
        sessions.sort_by_key(|(n, _)| *n);
        let mut turns = Vec::new();
        for (n, list) in sessions {
            let event_time = c
                .get(&format!("session_{n}_date_time"))
                .and_then(Value::as_str)
                .and_then(locomo_time);
            for turn in list {
                let (Some(speaker), Some(id)) = (turn["speaker"].as_str(), turn["dia_id"].as_str())
                else {
                    continue;
                };
                let mut text = turn["text"].as_str().unwrap_or("").to_string();
                if let Some(cap) = turn["blip_caption"].as_str() {
                    text.push_str(&format!(" [image: {cap}]"));
                }
                if text.trim().is_empty() {
                    continue;
                }
                turns.push(Turn {
                    dia_id: id.to_string(),
                    session: n,
                    speaker: speaker.to_string(),
                    text,
                    event_time: event_time.clone(),
                });
            }
        }
        Ok(Conversation {
            sample_id,
            speakers,
            turns,
            raw: raw.clone(),
        })
    }

    /// The events kith stores for this conversation, in `owner`'s memory.
    pub fn inputs(&self, owner: &str) -> Vec<EventInput> {
        self.turns
            .iter()
            .map(|t| EventInput {
                owner_id: Some(owner.to_string()),
                session_id: Some(format!("session_{}", t.session)),
                speaker: Some(t.speaker.clone()),
                event_time: t.event_time.clone(),
                source_id: Some(t.dia_id.clone()),
                ..EventInput::new("user", &t.text)
            })
            .collect()
    }

    /// The `observation` annotations: per session, per speaker, `[text,
    /// evidence]` with evidence a turn id or a list of them. Evidence ids
    /// are normalised as for questions and those naming no stored turn
    /// dropped; an observation left without evidence is skipped. The error
    /// says what is wrong (the caller names the file).
    pub fn observations(&self) -> Result<Vec<Observation>, String> {
        let at = format!("conversation {}", self.sample_id);
        let sessions = self.raw["observation"]
            .as_object()
            .ok_or_else(|| format!("{at} has no `observation` object"))?;
        let known: std::collections::HashSet<&str> =
            self.turns.iter().map(|t| t.dia_id.as_str()).collect();
        // Sessions in numeric order, so output does not depend on key order.
        let mut keys: Vec<(u32, &String)> = sessions
            .keys()
            .map(|k| {
                let n = k
                    .strip_prefix("session_")
                    .and_then(|r| r.split('_').next())
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(u32::MAX);
                (n, k)
            })
            .collect();
        keys.sort();
        let mut out = Vec::new();
        for (_, key) in keys {
            let by_speaker = sessions[key]
                .as_object()
                .ok_or_else(|| format!("{at}: observation `{key}` is not an object of speakers"))?;
            for (speaker, list) in by_speaker {
                let items = list.as_array().ok_or_else(|| {
                    format!("{at}: observation `{key}`.`{speaker}` is not a list")
                })?;
                for (i, item) in items.iter().enumerate() {
                    let bad = || {
                        format!(
                            "{at}: observation `{key}`.`{speaker}`[{i}] is not [text, evidence]"
                        )
                    };
                    let pair = item.as_array().filter(|p| p.len() == 2).ok_or_else(bad)?;
                    let text = pair[0].as_str().ok_or_else(bad)?;
                    let evidence = match &pair[1] {
                        Value::String(_) => Value::Array(vec![pair[1].clone()]),
                        Value::Array(_) => pair[1].clone(),
                        _ => return Err(bad()),
                    };
                    let mut turns: Vec<String> = evidence_ids(&evidence)
                        .into_iter()
                        .filter(|id| known.contains(id.as_str()))
                        .collect();
                    turns.dedup();
                    if turns.is_empty() {
                        continue;
                    }
                    out.push(Observation {
                        speaker: speaker.clone(),
                        text: text.to_string(),
                        turns,
                    });
                }
            }
        }
        Ok(out)
    }
}

/// Parses LoCoMo's "1:56 pm on 8 May, 2023" as RFC 3339 (UTC).
pub fn locomo_time(text: &str) -> Option<String> {
    let (clock, date) = text.split_once(" on ")?;
    let (hm, ampm) = clock.trim().split_once(' ')?;
    let (h, m) = hm.split_once(':')?;
    let mut h: u32 = h.parse().ok()?;
    let m: u32 = m.parse().ok()?;
    match ampm.to_ascii_lowercase().as_str() {
        "pm" if h < 12 => h += 12,
        "am" if h == 12 => h = 0,
        _ => {}
    }
    let parts: Vec<&str> = date
        .trim()
        .split([' ', ','])
        .filter(|s| !s.is_empty())
        .collect();
    let [day, month, year] = parts.as_slice() else {
        return None;
    };
    let mi = kith::retrieve::month_number(month)?;
    Some(format!(
        "{year}-{mi:02}-{:02}T{h:02}:{m:02}:00Z",
        day.parse::<u32>().ok()?
    ))
}

/// Normalises LoCoMo evidence ids ("D8:6", "D:8:6", "D8:6; D9:1").
pub fn evidence_ids(list: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for e in list.as_array().into_iter().flatten() {
        let text = e.as_str().unwrap_or("");
        let chars: Vec<char> = text.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            if chars[i] == 'D' {
                let mut j = i + 1;
                if j < chars.len() && chars[j] == ':' {
                    j += 1;
                }
                let a: String = chars[j..]
                    .iter()
                    .take_while(|c| c.is_ascii_digit())
                    .collect();
                let k = j + a.len();
                if !a.is_empty() && k < chars.len() && chars[k] == ':' {
                    let b: String = chars[k + 1..]
                        .iter()
                        .take_while(|c| c.is_ascii_digit())
                        .collect();
                    if !b.is_empty() {
                        out.push(format!("D{a}:{b}"));
                        i = k + 1 + b.len();
                        continue;
                    }
                }
            }
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn locomo_times_and_evidence_ids_parse() {
        assert_eq!(
            locomo_time("1:56 pm on 8 May, 2023").as_deref(),
            Some("2023-05-08T13:56:00Z")
        );
        assert_eq!(
            locomo_time("12:05 am on 1 January, 2024").as_deref(),
            Some("2024-01-01T00:05:00Z")
        );
        let ids = evidence_ids(&json!(["D8:6", "D:9:1", "D10:2; D10:3", "x"]));
        assert_eq!(ids, vec!["D8:6", "D9:1", "D10:2", "D10:3"]);
    }

    fn conversation(raw: Value) -> Result<Conversation, String> {
        Conversation::parse(0, &raw)
    }

    #[test]
    fn turns_become_speaker_turns_in_session_order_with_captions() {
        let c = conversation(json!({
            "sample_id": "conv-x",
            "conversation": {
                "speaker_a": "Ana", "speaker_b": "Ben",
                "session_10_date_time": "9:00 am on 2 May, 2023",
                "session_10": [{"speaker": "Ben", "dia_id": "D10:1", "text": "Later."}],
                "session_2_date_time": "1:56 pm on 8 May, 2023",
                "session_2": [
                    {"speaker": "Ana", "dia_id": "D2:1", "text": "Look!", "blip_caption": "a dog"},
                    {"speaker": "Ben", "dia_id": "D2:2", "text": "  "},
                    {"dia_id": "D2:3", "text": "no speaker"}
                ]
            }
        }))
        .unwrap();
        assert_eq!(c.sample_id, "conv-x");
        assert_eq!(c.speakers, ["Ana".to_string(), "Ben".to_string()]);
        let ids: Vec<&str> = c.turns.iter().map(|t| t.dia_id.as_str()).collect();
        // Session 2 before session 10 (numeric, not text order); blank and
        // speakerless turns skipped.
        assert_eq!(ids, ["D2:1", "D10:1"]);
        let inputs = c.inputs("o");
        assert_eq!(inputs[0].content, "Look! [image: a dog]");
        assert_eq!(inputs[0].role, "user");
        assert_eq!(inputs[0].speaker.as_deref(), Some("Ana"));
        assert_eq!(inputs[0].session_id.as_deref(), Some("session_2"));
        assert_eq!(
            inputs[0].event_time.as_deref(),
            Some("2023-05-08T13:56:00Z")
        );
        assert_eq!(inputs[1].source_id.as_deref(), Some("D10:1"));
    }

    #[test]
    fn observations_normalise_evidence_and_skip_unknown_turns() {
        let c = conversation(json!({
            "conversation": {
                "speaker_a": "Ana", "speaker_b": "Ben",
                "session_1": [
                    {"speaker": "Ana", "dia_id": "D1:1", "text": "I paint."},
                    {"speaker": "Ben", "dia_id": "D1:2", "text": "I swim."}
                ]
            },
            "observation": {"session_1_observation": {
                "Ana": [["Ana paints.", "D1:1"], ["Ana is ghostly.", "D9:9"]],
                "Ben": [["Ben swims, Ana watches.", ["D:1:2", "D1:1"]]]
            }}
        }))
        .unwrap();
        assert_eq!(c.sample_id, "conv0");
        let obs = c.observations().unwrap();
        assert_eq!(obs.len(), 2, "{obs:?}");
        assert_eq!(obs[0].turns, ["D1:1"]);
        assert_eq!(obs[1].speaker, "Ben");
        assert_eq!(obs[1].turns, ["D1:2", "D1:1"]);
    }

    #[test]
    fn shape_errors_say_where() {
        let e = conversation(json!({"conversation": {"speaker_a": "A"}})).unwrap_err();
        assert!(e.contains("no `speaker_b`"), "{e}");
        let e = conversation(json!({"conversation": {"speaker_a": "A", "speaker_b": "B"}}))
            .unwrap_err();
        assert!(e.contains("no `session_N`"), "{e}");
        let c = conversation(json!({"sample_id": "c1", "conversation": {
            "speaker_a": "A", "speaker_b": "B", "session_1": []}}))
        .unwrap();
        let e = c.observations().unwrap_err();
        assert_eq!(e, "conversation c1 has no `observation` object");
    }
}
