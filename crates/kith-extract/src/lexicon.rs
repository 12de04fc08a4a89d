//! Words that look like names when capitalised but name nobody: what one
//! *is* rather than who ("I'm Brazilian", "I'm Vegan", "I'm Tired").
//!
//! One list serves both layers: the heuristic never reads such a word as a
//! self-introduced person, and the identity rules (`kith-identity`) never
//! accept one as the name of a self-introduction or count it as a name that
//! could be a person, whatever an extraction typed it.

/// Nationalities, regions and peoples, lower case ("I'm Brazilian").
pub const DEMONYMS: &[&str] = &[
    "afghan",
    "african",
    "albanian",
    "algerian",
    "american",
    "andorran",
    "angolan",
    "argentine",
    "argentinian",
    "armenian",
    "asian",
    "australian",
    "austrian",
    "azerbaijani",
    "bangladeshi",
    "basque",
    "belarusian",
    "belgian",
    "bolivian",
    "bosnian",
    "brazilian",
    "british",
    "bulgarian",
    "cambodian",
    "cameroonian",
    "canadian",
    "catalan",
    "chilean",
    "chinese",
    "colombian",
    "congolese",
    "croatian",
    "cuban",
    "cypriot",
    "czech",
    "danish",
    "dominican",
    "dutch",
    "ecuadorian",
    "egyptian",
    "english",
    "eritrean",
    "estonian",
    "ethiopian",
    "european",
    "filipino",
    "filipina",
    "finnish",
    "flemish",
    "french",
    "georgian",
    "german",
    "ghanaian",
    "greek",
    "guatemalan",
    "haitian",
    "hispanic",
    "honduran",
    "hungarian",
    "icelandic",
    "indian",
    "indonesian",
    "iranian",
    "iraqi",
    "irish",
    "israeli",
    "italian",
    "ivorian",
    "jamaican",
    "japanese",
    "jordanian",
    "kazakh",
    "kenyan",
    "korean",
    "kosovar",
    "kurdish",
    "kuwaiti",
    "latin",
    "latino",
    "latina",
    "latvian",
    "lebanese",
    "libyan",
    "lithuanian",
    "luxembourgish",
    "malagasy",
    "malaysian",
    "maltese",
    "maori",
    "mexican",
    "moldovan",
    "mongolian",
    "montenegrin",
    "moroccan",
    "mozambican",
    "nepali",
    "nepalese",
    "nicaraguan",
    "nigerian",
    "norwegian",
    "pakistani",
    "palestinian",
    "panamanian",
    "paraguayan",
    "persian",
    "peruvian",
    "polish",
    "portuguese",
    "qatari",
    "romanian",
    "russian",
    "rwandan",
    "salvadoran",
    "saudi",
    "scandinavian",
    "scottish",
    "senegalese",
    "serbian",
    "singaporean",
    "slovak",
    "slovenian",
    "somali",
    "spanish",
    "sudanese",
    "swedish",
    "swiss",
    "syrian",
    "taiwanese",
    "tanzanian",
    "thai",
    "tibetan",
    "tunisian",
    "turkish",
    "ugandan",
    "ukrainian",
    "uruguayan",
    "uzbek",
    "venezuelan",
    "vietnamese",
    "welsh",
    "yemeni",
    "zambian",
    "zimbabwean",
];

/// Diets ("I'm Vegan"); the heuristic's `diet` pattern reads these too.
pub const DIETS: &[&str] = &[
    "vegetarian",
    "vegan",
    "pescatarian",
    "pescetarian",
    "flexitarian",
    "teetotal",
    "kosher",
    "halal",
    "gluten-free",
    "dairy-free",
];

/// Moods, states and other predicative adjectives and nouns that follow
/// "I'm" ("I'm Tired", "I'm Back", "I'm Single"). Words that are also
/// common given names (Joy, Hope, Grace, Faith) are not listed: "I'm Joy"
/// stays an introduction.
pub const PREDICATIVES: &[&str] = &[
    "afraid",
    "alive",
    "allergic",
    "alone",
    "angry",
    "annoyed",
    "anxious",
    "ashamed",
    "asleep",
    "available",
    "awake",
    "away",
    "back",
    "bored",
    "broke",
    "busy",
    "calm",
    "certain",
    "cold",
    "confused",
    "content",
    "curious",
    "dead",
    "depressed",
    "disabled",
    "divorced",
    "done",
    "drunk",
    "early",
    "embarrassed",
    "engaged",
    "excited",
    "exhausted",
    "fine",
    "free",
    "frustrated",
    "full",
    "furious",
    "glad",
    "good",
    "grateful",
    "great",
    "happy",
    "here",
    "home",
    "hot",
    "hungry",
    "hurt",
    "ill",
    "in",
    "jealous",
    "late",
    "lonely",
    "lost",
    "married",
    "new",
    "nervous",
    "offline",
    "ok",
    "okay",
    "old",
    "online",
    "out",
    "pregnant",
    "proud",
    "ready",
    "relieved",
    "retired",
    "right",
    "sad",
    "safe",
    "scared",
    "self-employed",
    "sick",
    "single",
    "sleepy",
    "sorry",
    "stressed",
    "stuck",
    "sure",
    "thankful",
    "there",
    "thirsty",
    "tired",
    "unemployed",
    "unwell",
    "upset",
    "well",
    "widowed",
    "worried",
    "wrong",
    "young",
    // Beliefs and identities one *is* ("I'm Catholic"). Christian, also a
    // given name, is left out.
    "agnostic",
    "atheist",
    "buddhist",
    "catholic",
    "hindu",
    "jewish",
    "lutheran",
    "methodist",
    "mormon",
    "muslim",
    "orthodox",
    "protestant",
    "sikh",
    // Orientations and generations.
    "bi",
    "bisexual",
    "gay",
    "lesbian",
    "queer",
    "straight",
    "trans",
    "boomer",
    "millennial",
];

/// Courtesy and rank titles people write with a full stop before a name
/// ("Dr. Patel", "Mr. Okoye", "St. David's"), lower case, without the stop.
/// The stop never ends a sentence ([`crate::grounding::sentence_spans`]),
/// and the heuristic reads the name across it. "st" and "mt" are also
/// "Street" and "Mount": after a capitalised word ("Main St.") they are
/// read as [`SHORT_FORMS`] are.
pub const TITLES_WITH_STOP: &[&str] = &[
    "mr", "mrs", "ms", "mx", "dr", "prof", "rev", "fr", "sgt", "capt", "lt", "col", "gen", "gov",
    "sen", "hon", "st", "mt",
];

/// Other words people shorten with a full stop, lower case, without the
/// last stop. One ends a sentence only when a capitalised word follows:
/// "on Telegraph Ave. and he's…" is one sentence, "on Oak Ave. It's
/// loud." two. "vs", "e.g" and "i.e" never end one.
pub const SHORT_FORMS: &[&str] = &[
    "ave", "rd", "blvd", "etc", "approx", "inc", "ltd", "co", "corp", "jr", "sr", "vs", "e.g",
    "i.e",
];

/// Names and name words spelled like a verb's "-ed" or "-ing" form, lower
/// case: [`looks_like_verb_form`] is false for them.
pub const NAMES_LIKE_VERB_FORMS: &[&str] = &[
    "ahmed",
    "alfred",
    "boxing",
    "beijing",
    "browning",
    "channing",
    "chongqing",
    "darling",
    "ealing",
    "epping",
    "evening",
    "ewing",
    "fielding",
    "fleming",
    "golding",
    "hamed",
    "harding",
    "irving",
    "jared",
    "javed",
    "kettering",
    "majed",
    "manfred",
    "manning",
    "mildred",
    "mohamed",
    "mohammed",
    "morning",
    "nanjing",
    "pickering",
    "rashed",
    "reading",
    "redding",
    "saeed",
    "siegfried",
    "spring",
    "sterling",
    "thanksgiving",
    "viking",
    "wilfred",
    "winifred",
    "woking",
    "wyoming",
];

/// Whether a capitalised word that opens a sentence reads as a verb's past
/// or "-ing" form ("Loved", "Visiting", "Leaving"), not a name: five
/// letters or more ending in "ed", six or more ending in "ing", and not
/// one of [`NAMES_LIKE_VERB_FORMS`] ("Jared", "Sterling"). Without a
/// dictionary this is a guess; it is used only where a name follows.
pub fn looks_like_verb_form(word: &str) -> bool {
    let lower = word.to_lowercase();
    let chars = lower.chars().count();
    ((chars >= 5 && lower.ends_with("ed")) || (chars >= 6 && lower.ends_with("ing")))
        && lower.chars().all(char::is_alphabetic)
        && !NAMES_LIKE_VERB_FORMS.contains(&lower.as_str())
}

/// Verbs whose subject is a person, lower case: after a capitalised word
/// that opens a sentence they make it a name ("Rosa called", "Mike moved
/// to Leeds"), where "Painting is fun" and "Dinner was great" name
/// nothing. Verbs as often said of things ("started", "left", "made")
/// are left out.
pub const PERSON_VERBS: &[&str] = &[
    "asked",
    "asks",
    "bought",
    "called",
    "calls",
    "cooked",
    "graduated",
    "hated",
    "hates",
    "helped",
    "invited",
    "joined",
    "knew",
    "knows",
    "landed",
    "lived",
    "lives",
    "loved",
    "loves",
    "married",
    "moved",
    "moves",
    "proposed",
    "quit",
    "quits",
    "thinks",
    "thought",
    "visited",
    "visits",
    "wanted",
    "wants",
    "worked",
    "works",
];

/// What "got" says of a person, lower case: "Mike got engaged".
pub const GOT_STATES: &[&str] = &[
    "accepted", "divorced", "engaged", "fired", "hired", "into", "married", "promoted",
];

/// Adverbs that may stand between a subject and its verb ("Priya just
/// told me", "Lena still works there"), lower case.
pub const SUBJECT_ADVERBS: &[&str] = &[
    "actually",
    "already",
    "also",
    "always",
    "currently",
    "finally",
    "just",
    "mostly",
    "never",
    "now",
    "often",
    "really",
    "recently",
    "sometimes",
    "still",
    "usually",
];

/// Whether `word` (one word, any case, curly apostrophes allowed) is a
/// demonym, a diet or a predicative adjective: something one is, not a name.
pub fn is_not_a_name(word: &str) -> bool {
    let lower: String = word
        .trim()
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    !lower.is_empty()
        && (DEMONYMS.contains(&lower.as_str())
            || DIETS.contains(&lower.as_str())
            || PREDICATIVES.contains(&lower.as_str()))
}

/// Whether `name` could be a personal name: it has a word, and not every
/// word of it is [`is_not_a_name`] ("Brazilian" and "Very Tired" could
/// not; "Alex Rivera" and "Joy" could).
pub fn is_name_like(name: &str) -> bool {
    let words: Vec<&str> = name.split_whitespace().collect();
    !words.is_empty() && !words.iter().all(|w| is_not_a_name(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_one_is_is_not_a_name() {
        for word in [
            "Brazilian",
            "Vegan",
            "Tired",
            "tired.",
            "CATHOLIC",
            "Gluten-free",
        ] {
            assert!(is_not_a_name(word), "{word}");
            assert!(!is_name_like(word), "{word}");
        }
        for name in [
            "Alex",
            "Alex Rivera",
            "Joy",
            "Christian",
            "Brazilian Jordan",
        ] {
            assert!(!is_not_a_name(name) || name.contains(' '), "{name}");
            assert!(is_name_like(name), "{name}");
        }
        assert!(!is_name_like("   "));
    }

    #[test]
    fn lists_are_lower_case_and_unique() {
        let mut all: Vec<&str> = DEMONYMS
            .iter()
            .chain(DIETS)
            .chain(PREDICATIVES)
            .chain(TITLES_WITH_STOP)
            .chain(SHORT_FORMS)
            .copied()
            .collect();
        for w in &all {
            assert_eq!(*w, w.to_lowercase(), "{w}");
        }
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n, "a word is listed twice");
    }
}
