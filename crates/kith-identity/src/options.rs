//! The identity rules' switches.
//!
//! | option | env | default |
//! |---|---|---|
//! | `speaker_references` | `KITH_ENABLE_SPEAKER_REFERENCES` | on |
//! | `self_introductions` | `KITH_ENABLE_INGEST_CLAIM_FIXES` | on |
//! | `claim_merge` | `KITH_ENABLE_CLAIM_MERGE` | on |
//! | `supersedence` | `KITH_ENABLE_SUPERSEDENCE` | on |
//! | `owner_name_carry` | `KITH_ENABLE_OWNER_NAME_CARRY` | on (needs `speaker_references`) |
//! | `speaker_grounding` | `KITH_ENABLE_SPEAKER_GROUNDING` | off |
//! | `owner_group_links` | `KITH_ENABLE_OWNER_GROUP_LINKS` | on (needs `owner_name_carry`) |
//! | `pronoun_repair` | `KITH_ENABLE_PRONOUN_REPAIR` | on (acts only with an LLM provider) |
//!
//! Boolean values: `1`, `true`, `yes`, `on` and `0`, `false`, `no`, `off`
//! (any case); anything else is refused with the variable named.

use serde::{Deserialize, Serialize};

/// Which identity rules run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdentityOptions {
    /// A named speaker's singular first person binds to the speaker's person entity.
    pub speaker_references: bool,
    /// "Hi, I am Alex Rivera" binds the turn's I to Alex Rivera when the
    /// extraction lists that person.
    pub self_introductions: bool,
    /// A repeated claim merges into one current record.
    pub claim_merge: bool,
    /// A grounded update supersedes the claim it replaces.
    pub supersedence: bool,
    /// A user turn that names nobody binds its I to the newest person a user
    /// turn created under the owner's name.
    #[serde(default = "on")]
    pub owner_name_carry: bool,
    /// Grounding counts the speaker's own first person as a mention of the
    /// speaker's name.
    #[serde(default)]
    pub speaker_grounding: bool,
    /// A user turn's we-claims are linked to the owner, and to the other
    /// members of the one group the session names.
    #[serde(default = "on")]
    pub owner_group_links: bool,
    /// One more LLM question for third-person pronoun subjects and objects.
    #[serde(default = "on")]
    pub pronoun_repair: bool,
}

fn on() -> bool {
    true
}

impl Default for IdentityOptions {
    fn default() -> Self {
        IdentityOptions {
            speaker_references: true,
            self_introductions: true,
            claim_merge: true,
            supersedence: true,
            owner_name_carry: true,
            speaker_grounding: false,
            owner_group_links: true,
            pronoun_repair: true,
        }
    }
}

/// Every option with its environment variable, for `config show`.
pub const VARIABLES: &[(&str, &str)] = &[
    ("speaker_references", "KITH_ENABLE_SPEAKER_REFERENCES"),
    ("self_introductions", "KITH_ENABLE_INGEST_CLAIM_FIXES"),
    ("claim_merge", "KITH_ENABLE_CLAIM_MERGE"),
    ("supersedence", "KITH_ENABLE_SUPERSEDENCE"),
    ("owner_name_carry", "KITH_ENABLE_OWNER_NAME_CARRY"),
    ("speaker_grounding", "KITH_ENABLE_SPEAKER_GROUNDING"),
    ("owner_group_links", "KITH_ENABLE_OWNER_GROUP_LINKS"),
    ("pronoun_repair", "KITH_ENABLE_PRONOUN_REPAIR"),
];

impl IdentityOptions {
    /// The defaults, overridden by whichever variables `lookup` returns.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        let mut o = IdentityOptions::default();
        for (name, var) in VARIABLES {
            let Some(text) = lookup(var) else { continue };
            let value = parse_bool(&text)
                .ok_or_else(|| format!("{var}={text:?} is not a boolean (use true or false)"))?;
            match *name {
                "speaker_references" => o.speaker_references = value,
                "self_introductions" => o.self_introductions = value,
                "claim_merge" => o.claim_merge = value,
                "supersedence" => o.supersedence = value,
                "owner_name_carry" => o.owner_name_carry = value,
                "speaker_grounding" => o.speaker_grounding = value,
                "owner_group_links" => o.owner_group_links = value,
                _ => o.pronoun_repair = value,
            }
        }
        Ok(o)
    }

    /// Sets one option by name (`speaker_references=false`), as the `kith
    /// --identity` flag does.
    pub fn set(&mut self, assignment: &str) -> Result<(), String> {
        let (name, text) = assignment
            .split_once('=')
            .ok_or_else(|| format!("{assignment:?} is not NAME=BOOL (e.g. claim_merge=false)"))?;
        let value = parse_bool(text)
            .ok_or_else(|| format!("{text:?} is not a boolean (use true or false)"))?;
        let slot = match name.trim() {
            "speaker_references" => &mut self.speaker_references,
            "self_introductions" => &mut self.self_introductions,
            "claim_merge" => &mut self.claim_merge,
            "supersedence" => &mut self.supersedence,
            "owner_name_carry" => &mut self.owner_name_carry,
            "speaker_grounding" => &mut self.speaker_grounding,
            "owner_group_links" => &mut self.owner_group_links,
            "pronoun_repair" => &mut self.pronoun_repair,
            other => {
                let names: Vec<&str> = VARIABLES.iter().map(|(n, _)| *n).collect();
                return Err(format!(
                    "unknown identity option {other:?}; options are {}",
                    names.join(", ")
                ));
            }
        };
        *slot = value;
        Ok(())
    }

    /// The defaults, overridden by the process environment.
    pub fn from_env() -> Result<Self, String> {
        Self::from_lookup(|v| std::env::var(v).ok())
    }

    /// `(option, env variable, value)` for every option.
    pub fn effective(&self) -> Vec<(&'static str, &'static str, bool)> {
        VARIABLES
            .iter()
            .map(|(name, var)| {
                let value = match *name {
                    "speaker_references" => self.speaker_references,
                    "self_introductions" => self.self_introductions,
                    "claim_merge" => self.claim_merge,
                    "supersedence" => self.supersedence,
                    "owner_name_carry" => self.owner_name_carry,
                    "speaker_grounding" => self.speaker_grounding,
                    "owner_group_links" => self.owner_group_links,
                    _ => self.pronoun_repair,
                };
                (*name, *var, value)
            })
            .collect()
    }
}

fn parse_bool(text: &str) -> Option<bool> {
    match text.trim().to_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_overrides() {
        assert_eq!(
            IdentityOptions::from_lookup(|_| None).unwrap(),
            IdentityOptions::default()
        );
        let o = IdentityOptions::from_lookup(|v| {
            (v == "KITH_ENABLE_SPEAKER_REFERENCES").then(|| "false".to_string())
        })
        .unwrap();
        assert!(!o.speaker_references && o.self_introductions);
        let err = IdentityOptions::from_lookup(|v| {
            (v == "KITH_ENABLE_CLAIM_MERGE").then(|| "maybe".to_string())
        })
        .unwrap_err();
        assert!(err.contains("KITH_ENABLE_CLAIM_MERGE"), "{err}");
        assert_eq!(IdentityOptions::default().effective().len(), 8);
        let mut o = IdentityOptions::default();
        o.set("claim_merge=off").unwrap();
        assert!(!o.claim_merge);
        assert!(o.set("claim_merge").unwrap_err().contains("NAME=BOOL"));
        assert!(o
            .set("merging=false")
            .unwrap_err()
            .contains("unknown identity option"));
        assert!(o
            .set("claim_merge=2")
            .unwrap_err()
            .contains("not a boolean"));
    }
}
