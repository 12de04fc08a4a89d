//! The two halves of each recall dev file: one to tune retrieval on, one
//! to report on untouched (`kith bench recall --split tune|report`).
//!
//! - LoCoMo: the tune half is conversations conv-26, conv-30 and conv-41;
//!   every other conversation (conv-42 and conv-43 in `locomo_dev.json`) is
//!   the report half.
//! - LongMemEval: a question is in the tune half when the FNV-1a hash of
//!   its `question_id` is even, else in the report half. The hash is fixed
//!   (no seed, no platform dependence), so the halves never move.

use std::fmt;

/// LoCoMo conversations tuned on.
pub const LOCOMO_TUNE: [&str; 3] = ["conv-26", "conv-30", "conv-41"];

/// Which half of a dev file to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Split {
    /// The half settings may be tuned on.
    Tune,
    /// The half only ever reported.
    Report,
}

impl fmt::Display for Split {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Split::Tune => "tune",
            Split::Report => "report",
        })
    }
}

/// The half a LoCoMo conversation belongs to.
pub fn locomo_half(sample_id: &str) -> Split {
    if LOCOMO_TUNE.contains(&sample_id) {
        Split::Tune
    } else {
        Split::Report
    }
}

/// The half a LongMemEval question belongs to.
pub fn longmemeval_half(question_id: &str) -> Split {
    if fnv1a(question_id.as_bytes()).is_multiple_of(2) {
        Split::Tune
    } else {
        Split::Report
    }
}

/// Whether an item of `half` runs under `--split` (`None`: everything).
pub fn runs(split: Option<Split>, half: Split) -> bool {
    split.is_none_or(|s| s == half)
}

/// 64-bit FNV-1a: a stable hash that needs no dependency.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_the_reference_vectors() {
        // From the FNV reference test suite.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn locomo_halves_are_the_named_conversations() {
        for id in LOCOMO_TUNE {
            assert_eq!(locomo_half(id), Split::Tune);
        }
        assert_eq!(locomo_half("conv-42"), Split::Report);
        assert_eq!(locomo_half("conv-43"), Split::Report);
        assert_eq!(locomo_half("conv-2"), Split::Report);
    }

    #[test]
    fn longmemeval_halves_split_ids_about_evenly_and_stay_put() {
        let ids: Vec<String> = (0..1000).map(|i| format!("q{i:05x}")).collect();
        let tune = ids
            .iter()
            .filter(|id| longmemeval_half(id) == Split::Tune)
            .count();
        assert!(
            (400..=600).contains(&tune),
            "{tune} of 1000 in the tune half"
        );
        assert_eq!(longmemeval_half("a"), Split::Tune);
        assert_eq!(longmemeval_half("foobar"), Split::Tune);
        assert!(runs(None, Split::Report));
        assert!(runs(Some(Split::Tune), Split::Tune));
        assert!(!runs(Some(Split::Tune), Split::Report));
    }
}
