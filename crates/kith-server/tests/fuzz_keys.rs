//! Fuzz-style property of the keys file and `KITH_API_KEYS` parsers
//! (issue 20): any text gives a typed error or keys that each resolve to
//! their owner, never a panic, and never an empty set of keys (an empty set
//! would start an open server). Bounded: a fixed number of cases.

use kith_server::ApiKeys;
use proptest::prelude::*;

/// Lines of a keys file: good entries, comments, blanks and broken ones.
fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        ("[a-zA-Z0-9_-]{16,40}", "[a-z][a-z0-9_-]{0,12}").prop_map(|(k, o)| format!("{k} {o}")),
        "#.{0,30}",
        Just(String::new()),
        "[ \t]{1,4}",
        ".{0,60}",
        ("[a-z]{1,15}", "[a-z]{1,5}").prop_map(|(k, o)| format!("{k} {o}")),
        ("[a-zA-Z0-9]{16,20}", ".{0,10}", ".{0,10}").prop_map(|(k, o, x)| format!("{k} {o} {x}")),
    ]
}

/// The key and owner of every line that looks like an entry.
fn entries(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let mut p = l.split_whitespace();
            Some((p.next()?.to_string(), p.next()?.to_string()))
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn any_keys_file_gives_keys_or_a_typed_error(lines in prop::collection::vec(line(), 0..8)) {
        let text = lines.join("\n");
        match ApiKeys::parse_file_text(&text) {
            Ok(keys) => {
                prop_assert!(!keys.is_empty(), "a keys file without a key was accepted");
                let listed = entries(&text);
                prop_assert_eq!(keys.len(), listed.len());
                for (key, owner) in listed {
                    prop_assert_eq!(keys.owner_of(&key).map(|o| o.as_str()), Some(owner.as_str()));
                }
                prop_assert!(keys.owner_of("not-a-listed-key-000000").is_none());
            }
            Err(e) => prop_assert!(!e.0.is_empty()),
        }
    }

    #[test]
    fn any_keys_variable_gives_keys_or_a_typed_error(text in ".{0,120}") {
        match ApiKeys::from_sources(Some(&text), None) {
            Ok(keys) => prop_assert!(!keys.is_empty()),
            Err(e) => prop_assert!(!e.0.is_empty()),
        }
    }
}
