//! Materialisation policies: which version of the rules a saved extraction
//! or plan was prepared under.
//!
//! Every rule change that changes what a message derives gets a new policy
//! name. An extraction record and a plan record name their policy; a record
//! prepared under an older policy is planned again under that policy's rules,
//! never silently under newer ones, and a record naming a policy this build
//! does not know is refused with [`UnknownPolicy`].

use std::fmt;

/// A materialisation policy. Ordered: a later variant is a later policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Policy {
    /// `kith_ingest_v1`: entities, claims, event-local references.
    V1,
    /// `kith_ingest_v2`: first-person binding (speaker, self-introduction,
    /// first-person owner, owner name carry), claim merge, supersedence,
    /// owner group links.
    V2,
    /// `kith_ingest_v3`: quoted or reported speech and any name that could
    /// be a person keep a turn's "I" off the owner; a self-introduction
    /// needs a name-like word; group links are all or nothing and read past
    /// sentence openers; a speaker's or stored person's name is typed
    /// `person` wherever it appears; an attempt or intention needs a
    /// non-actual predicate.
    V3,
    /// `kith_ingest_v4`: one person, one node in both orders — a person
    /// named where the owner's scope already has an untyped (`other` or
    /// blank) entity of that name adopts that node instead of making a
    /// second one ([`crate::persons::person_node`]).
    V4,
    /// `kith_ingest_v5`: a first person inside quotation marks is the
    /// quoted person's, not the speaker's — a claim whose sentence quotes a
    /// first person ([`crate::persons::quotes_first_person`]) keeps its I
    /// local even when the turn names its speaker.
    V5,
    /// `kith_ingest_v6`: a first person reported after a reporting word and
    /// a colon, without quotation marks (`Dev says: I'm allergic to
    /// peanuts.`), or on a line pasted from a chat (`Dev: I hate sushi`),
    /// is the reported person's too
    /// ([`crate::persons::reports_first_person`]).
    V6,
    /// `kith_ingest_v7`: in a sentence that relays someone's first person,
    /// a claim whose first person and other endpoint both stand in the
    /// author's own words, outside the quote and before the reporting colon
    /// (`My boss Karen said "I'm quitting".` → `I has_boss Karen`), is the
    /// author's again: it binds like any first person of the turn
    /// ([`crate::persons::authors_first_person`]).
    V7,
    /// `kith_ingest_v8`: a plain claim that stands in someone else's
    /// reported words (`Dev says Ana loves sushi.`, `According to Ana, …`,
    /// `I heard …`) is `unverified`, names its reporter
    /// (`metadata.reported.by`) and supersedes nothing
    /// ([`kith_extract::reported`]).
    V8,
    /// `kith_ingest_v9`: a quoted first person that a reporting frame gives
    /// to a named person (`Dev says "I love sushi".`) is that person's — it
    /// binds to their entity, not to a local reference, and so does a
    /// chat line's (`Dev: I hate sushi`; [`crate::persons::relayed_speaker`]);
    /// reported speech reads
    /// quotations in single marks as the identity rules do
    /// ([`kith_extract::quotes`]); one thing, one
    /// node whatever its kind: an entity of any type adopts the untyped
    /// node of its name, and an untyped mention of a name with one typed
    /// node is that node ([`crate::kinds`]); a named speaker introducing
    /// themselves by part of their name is the speaker
    /// ([`crate::first_person::speakers_short_name`]).
    V9,
}

impl Policy {
    /// The policy new extractions and plans are prepared under.
    pub const CURRENT: Policy = Policy::V9;

    /// The policy of an extraction record that names none: records saved
    /// before `kith_ingest_v3` did not record one, and were prepared under
    /// `kith_ingest_v2`.
    pub const OMITTED: Policy = Policy::V2;

    /// Every policy this build can prepare plans under, oldest first.
    pub const ALL: [Policy; 9] = [
        Policy::V1,
        Policy::V2,
        Policy::V3,
        Policy::V4,
        Policy::V5,
        Policy::V6,
        Policy::V7,
        Policy::V8,
        Policy::V9,
    ];

    /// The recorded name (`kith_ingest_v3`).
    pub const fn name(self) -> &'static str {
        match self {
            Policy::V1 => "kith_ingest_v1",
            Policy::V2 => "kith_ingest_v2",
            Policy::V3 => "kith_ingest_v3",
            Policy::V4 => "kith_ingest_v4",
            Policy::V5 => "kith_ingest_v5",
            Policy::V6 => "kith_ingest_v6",
            Policy::V7 => "kith_ingest_v7",
            Policy::V8 => "kith_ingest_v8",
            Policy::V9 => "kith_ingest_v9",
        }
    }

    /// The policy a record names; `None` (no name recorded) is
    /// [`Policy::OMITTED`].
    pub fn from_record(name: Option<&str>) -> Result<Policy, UnknownPolicy> {
        match name {
            None => Ok(Policy::OMITTED),
            Some(name) => Policy::ALL
                .into_iter()
                .find(|p| p.name() == name)
                .ok_or_else(|| UnknownPolicy {
                    name: name.to_string(),
                }),
        }
    }

    /// Whether this policy has the `kith_ingest_v3` identity rules.
    pub fn has_v3_rules(self) -> bool {
        self >= Policy::V3
    }

    /// Whether this policy has the `kith_ingest_v4` rule: a person adopts
    /// the untyped entity of their name.
    pub fn has_v4_rules(self) -> bool {
        self >= Policy::V4
    }

    /// Whether this policy has the `kith_ingest_v5` rule: a quoted first
    /// person is never the speaker's.
    pub fn has_v5_rules(self) -> bool {
        self >= Policy::V5
    }

    /// Whether this policy has the `kith_ingest_v6` rule: a first person
    /// reported after a colon is never the speaker's.
    pub fn has_v6_rules(self) -> bool {
        self >= Policy::V6
    }

    /// Whether this policy has the `kith_ingest_v7` rule: the author's own
    /// first person beside relayed words is the author's.
    pub fn has_v7_rules(self) -> bool {
        self >= Policy::V7
    }

    /// Whether this policy has the `kith_ingest_v8` rule: a claim in
    /// someone else's reported words is unverified and names its reporter.
    pub fn has_v8_rules(self) -> bool {
        self >= Policy::V8
    }

    /// Whether this policy has the `kith_ingest_v9` rules: a quoted first
    /// person binds to the named person the quotation is given to, and one
    /// thing has one node whatever its kind.
    pub fn has_v9_rules(self) -> bool {
        self >= Policy::V9
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A record names a policy this build does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownPolicy {
    /// The name as recorded.
    pub name: String,
}

impl fmt::Display for UnknownPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "policy {:?} is not built into this kith (it knows {}); \
             open the pack with the kith that saved the record",
            self.name,
            Policy::ALL.map(Policy::name).join(", ")
        )
    }
}

impl std::error::Error for UnknownPolicy {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_refused() {
        for p in Policy::ALL {
            assert_eq!(Policy::from_record(Some(p.name())), Ok(p));
        }
        assert_eq!(Policy::from_record(None), Ok(Policy::V2));
        let err = Policy::from_record(Some("kith_ingest_v99")).unwrap_err();
        assert_eq!(err.name, "kith_ingest_v99");
        assert_eq!(
            err.to_string(),
            "policy \"kith_ingest_v99\" is not built into this kith (it knows kith_ingest_v1, \
             kith_ingest_v2, kith_ingest_v3, kith_ingest_v4, kith_ingest_v5, kith_ingest_v6, kith_ingest_v7, kith_ingest_v8, kith_ingest_v9); open the pack with the kith that saved the record"
        );
        assert!(Policy::CURRENT.has_v3_rules());
        assert!(!Policy::V2.has_v3_rules());
        assert!(Policy::CURRENT.has_v4_rules());
        assert!(!Policy::V3.has_v4_rules());
        assert!(Policy::CURRENT.has_v5_rules());
        assert!(!Policy::V4.has_v5_rules());
        assert!(Policy::CURRENT.has_v6_rules());
        assert!(!Policy::V5.has_v6_rules());
        assert!(Policy::CURRENT.has_v7_rules());
        assert!(!Policy::V6.has_v7_rules());
        assert!(Policy::CURRENT.has_v8_rules());
        assert!(!Policy::V7.has_v8_rules());
        assert!(Policy::CURRENT.has_v9_rules());
        assert!(!Policy::V8.has_v9_rules());
    }
}
