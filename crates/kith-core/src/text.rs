//! Text keys that claims are compared by: the one definition that the
//! identity rules and both store backends use.
//!
//! The stores cannot compute these keys in SQL exactly (SQLite's `lower()`
//! knows only ASCII, neither `trim()` collapses runs of whitespace), so they
//! select a superset with SQL ([`PREDICATE_SQL_EXACT_CHARS`]) and keep the
//! rows whose key, computed here, matches.

/// Lower case (Unicode), whitespace runs collapsed to one space, trimmed.
pub fn normalize_text(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// [`normalize_text`], with spaces and hyphens read as `_`: `"Works at"`,
/// `"works-at"` and `"works_at"` are one predicate.
pub fn normalize_predicate(predicate: &str) -> String {
    normalize_text(predicate).replace([' ', '-'], "_")
}

/// The characters for which SQL's `replace(replace(lower(trim(p)), ' ',
/// '_'), '-', '_')` gives the same key as [`normalize_predicate`], as long
/// as no two spaces follow each other: ASCII letters and digits, `_`, space
/// and `-`. A predicate with any other character (non-ASCII, a tab) or a
/// double space must be judged by [`normalize_predicate`] itself.
pub const PREDICATE_SQL_EXACT_CHARS: &str = "A-Za-z0-9_ -";

/// Whether SQL's approximation of [`normalize_predicate`] is exact for
/// `predicate` (see [`PREDICATE_SQL_EXACT_CHARS`]).
pub fn predicate_sql_exact(predicate: &str) -> bool {
    predicate
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ' ' | '-'))
        && !predicate.contains("  ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The SQL approximation itself, in Rust: what both backends compute
    /// for a predicate with only [`PREDICATE_SQL_EXACT_CHARS`].
    fn predicate_sql_key(predicate: &str) -> String {
        predicate
            .trim_matches(' ')
            .to_ascii_lowercase()
            .replace([' ', '-'], "_")
    }

    #[test]
    fn predicates_read_case_spaces_and_hyphens_alike() {
        for p in [
            "works_at",
            "Works at",
            " works-AT ",
            "works\tat",
            "works  at",
        ] {
            assert_eq!(normalize_predicate(p), "works_at", "{p:?}");
        }
        assert_eq!(normalize_predicate("ÉTUDIE À"), "étudie_à");
        assert_ne!(normalize_predicate("worksat"), "works_at");
    }

    #[test]
    fn sql_is_not_exact_where_it_differs() {
        // Each differs between SQL and Rust, so each must be flagged.
        for p in ["works  at", "works\tat", "ÉTUDIE", "\u{212a}nows"] {
            assert!(!predicate_sql_exact(p), "{p:?}");
            assert_ne!(predicate_sql_key(p), normalize_predicate(p), "{p:?}");
        }
        assert!(predicate_sql_exact(" Works-at "));
    }

    proptest! {
        /// Wherever the stores trust SQL, SQL's key is the rule's key.
        #[test]
        fn sql_key_is_exact_where_flagged_exact(
            p in "[A-Za-z0-9_ \\-\t\u{e9}\u{c9}\u{212a}\u{130}]{0,12}"
        ) {
            if predicate_sql_exact(&p) {
                prop_assert_eq!(predicate_sql_key(&p), normalize_predicate(&p));
            }
        }
    }
}
