//! Names as people say them: whether a question names a person.
//!
//! People rarely use a full name. A question about "Maya Okafor" says
//! "Maya", "Ms Okafor" or "Okafor"; one about "Melanie" may say "Mel". A
//! name matches a question ([`QueryWords::mentions`]) by, strongest first:
//!
//! | how | rule | example |
//! |---|---|---|
//! | [`NameMatch::Full`] | every word of the name, in order, as whole words (any case) | "maya okafor" |
//! | [`NameMatch::FirstName`] | the name's first word (3+ letters), any case | "Maya" |
//! | [`NameMatch::Surname`] | a multi-word person name's last word (3+ letters), capitalised and not the question's first word, or after a title (Mr, Ms, Mrs, Dr, …) | "Ms Okafor", "Okafor's" |
//! | [`NameMatch::Nickname`] | a capitalised word of 3+ letters, not the question's first word, that the first name begins with, or the first name or such a short form of it with a pet ending ("-y", "-ie", its last letter doubled or not) | "Mel" for "Melanie", "Tommy" for "Tom", "Sammy" for "Samantha" |
//!
//! Surnames and nicknames are only read from capitalised words away from
//! the start of the question, never from month or weekday names: "green
//! tea" never names Ms Green, "Can you…" never names Candace, and "in May"
//! never names Maya. Partial matches are for people only: the
//! caller says whether a name is a person's (a speaker, or an entity typed
//! `person`); "Northwind" does not name "Northwind Analytics" here.

/// Courtesy titles that make the next capitalised word a surname.
pub(super) const TITLES: &[&str] = &[
    "mr",
    "mrs",
    "ms",
    "miss",
    "mx",
    "dr",
    "prof",
    "professor",
    "sir",
    "madam",
    "aunt",
    "uncle",
];

/// Capitalised words that are not names (with the months, and the
/// weekdays' short forms): "in May" never names Maya.
const WEEKDAYS: &[&str] = &[
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// The shortest first name, surname or nickname read on its own.
const MIN_PART: usize = 3;

/// How a question names someone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum NameMatch {
    /// A short form the first name begins with ("Mel" for "Melanie").
    Nickname,
    /// The last word of a multi-word name ("Okafor", "Ms Okafor").
    Surname,
    /// The first word ("Maya" for "Maya Okafor").
    FirstName,
    /// Every word of the name.
    Full,
}

impl NameMatch {
    /// A few words for traces.
    pub fn describe(self) -> &'static str {
        match self {
            NameMatch::Full => "by full name",
            NameMatch::FirstName => "by first name",
            NameMatch::Surname => "by surname",
            NameMatch::Nickname => "by a short form or pet form of the first name",
        }
    }
}

/// One word of the question.
#[derive(Debug, Clone)]
struct Word {
    lower: String,
    /// Starts with an upper-case letter.
    capitalised: bool,
}

/// A question split into words once, to test many names against.
#[derive(Debug, Clone)]
pub struct QueryWords {
    words: Vec<Word>,
}

impl QueryWords {
    /// Splits `query` into words of letters and digits ("Okafor's" gives
    /// "Okafor" and "s").
    pub fn new(query: &str) -> Self {
        let words = query
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(|w| Word {
                lower: w.to_lowercase(),
                capitalised: w.chars().next().is_some_and(char::is_uppercase),
            })
            .collect();
        QueryWords { words }
    }

    /// How the question names `name`, if it does. `person`: whether the
    /// name is a person's (partial matches are only read for people).
    pub fn mentions(&self, name: &str, person: bool) -> Option<NameMatch> {
        let parts: Vec<String> = name
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        if parts.is_empty() {
            return None;
        }
        let lower: Vec<&str> = self.words.iter().map(|w| w.lower.as_str()).collect();
        if lower.windows(parts.len()).any(|w| w == parts.as_slice()) {
            return Some(NameMatch::Full);
        }
        if !person {
            return None;
        }
        let first = &parts[0];
        if first.chars().count() >= MIN_PART && lower.contains(&first.as_str()) {
            return Some(NameMatch::FirstName);
        }
        let last = &parts[parts.len() - 1];
        if parts.len() > 1
            && last.chars().count() >= MIN_PART
            && self
                .proper_word_positions()
                .any(|i| self.words[i].lower == *last)
        {
            return Some(NameMatch::Surname);
        }
        let nickname = self
            .proper_word_positions()
            .any(|i| is_short_or_pet_form(&self.words[i].lower, first));
        nickname.then_some(NameMatch::Nickname)
    }

    /// Positions of words that read as names: capitalised and not the first
    /// word, or right after a title.
    fn proper_word_positions(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.words.len()).filter(|&i| {
            let w = &self.words[i];
            let calendar = is_calendar_word(&w.lower);
            let after_title = i > 0 && TITLES.contains(&self.words[i - 1].lower.as_str());
            !calendar && (after_title || (i > 0 && w.capitalised))
        })
    }
}

/// Whether `word` (3+ letters) is a short form of the first name `first`
/// ("mel" for "melanie") or a pet form of it ("tommy" for "tom"): the
/// nickname rule, for the speaker boost and BM25's query alike. Both
/// lower case.
pub(super) fn is_short_or_pet_form(word: &str, first: &str) -> bool {
    let short = word.len() < first.len() && first.starts_with(word);
    word.chars().count() >= MIN_PART && (short || is_pet_form(word, first))
}

/// Whether `word` is `first`, or a short form of it (3+ letters), with a
/// pet ending: "-y" or "-ie", after its last letter doubled or not
/// ("Tommy" for "Tom", "Robbie" for "Rob", "Jessie" for "Jess", "Sammy"
/// for "Samantha", "Jenny" for "Jennifer"). Both lower case.
fn is_pet_form(word: &str, first: &str) -> bool {
    let mut stems = first
        .char_indices()
        .map(|(i, c)| &first[..i + c.len_utf8()])
        .filter(|stem| stem.chars().count() >= MIN_PART);
    stems.any(|stem| {
        let Some(rest) = word.strip_prefix(stem) else {
            return false;
        };
        let last = stem.chars().last().map(String::from).unwrap_or_default();
        let ending = rest.strip_prefix(last.as_str()).unwrap_or(rest);
        matches!(ending, "y" | "ie")
    })
}

/// Whether a lower-cased word names a month or a weekday (or a short form
/// of one): capitalised, it is still no one's name.
pub(super) fn is_calendar_word(lower: &str) -> bool {
    super::month_number(lower).is_some()
        || (lower.len() >= MIN_PART && WEEKDAYS.iter().any(|d| d.starts_with(lower)))
}

/// The names among `names` (each with whether it is a person's) that the
/// question names, with how. A short form that is plainly another matched
/// name's first name is not read as a short form too: "Jon" names the
/// speaker Jon, not also Jonathan.
pub fn best_named<'a>(
    query: &QueryWords,
    names: impl IntoIterator<Item = (&'a str, bool)>,
) -> Vec<(&'a str, NameMatch)> {
    let found: Vec<(&str, NameMatch)> = names
        .into_iter()
        .filter_map(|(name, person)| query.mentions(name, person).map(|m| (name, m)))
        .collect();
    let first = |name: &str| name.split_whitespace().next().unwrap_or("").to_lowercase();
    let plain: Vec<String> = found
        .iter()
        .filter(|(_, m)| *m >= NameMatch::FirstName)
        .map(|(n, _)| first(n))
        .collect();
    found
        .into_iter()
        .filter(|(name, m)| {
            *m != NameMatch::Nickname || !plain.iter().any(|p| first(name).starts_with(p.as_str()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(query: &str, name: &str, person: bool) -> Option<NameMatch> {
        QueryWords::new(query).mentions(name, person)
    }

    #[test]
    fn names_match_as_people_say_them() {
        use NameMatch::*;
        let table: &[(&str, &str, bool, Option<NameMatch>)] = &[
            (
                "Where does Maya Okafor work now?",
                "Maya Okafor",
                true,
                Some(Full),
            ),
            (
                "where does maya okafor work now?",
                "Maya Okafor",
                true,
                Some(Full),
            ),
            (
                "Where does Maya work now?",
                "Maya Okafor",
                true,
                Some(FirstName),
            ),
            (
                "Where does Ms Okafor work now?",
                "Maya Okafor",
                true,
                Some(Surname),
            ),
            ("What is Okafor's job?", "Maya Okafor", true, Some(Surname)),
            ("What did Mel paint?", "Melanie", true, Some(Nickname)),
            ("What did Caro say?", "Caroline", true, Some(Nickname)),
            // A pet form of the first name.
            ("Did Tommy pay the rent?", "Tom", true, Some(Nickname)),
            ("What did Robbie cook?", "Rob Stone", true, Some(Nickname)),
            ("Is Jessie allergic?", "Jess", true, Some(Nickname)),
            // A pet form of a short form of it.
            ("What does Sammy do?", "Samantha Cole", true, Some(Nickname)),
            ("Did Jenny call?", "Jennifer", true, Some(Nickname)),
            ("Did Samuel call?", "Samantha", true, None),
            ("Did Salty call?", "Samantha", true, None),
            ("Did Tomas pay?", "Tom", true, None),
            ("Did Joy pay?", "Jo", true, None),
            ("Did tommy pay?", "Tom", true, None),
            // Not names: lower case, the first word, too short, not a prefix.
            ("what did mel paint?", "Melanie", true, None),
            ("Mel painted what?", "Melanie", true, None),
            ("What did Me paint?", "Melanie", true, None),
            // A prefix is a short form, even one that is a name of its own.
            ("What did Carol say?", "Caroline", true, Some(Nickname)),
            ("Who drinks green tea?", "Anna Green", true, None),
            ("Green tea: who drinks it?", "Anna Green", true, None),
            ("Can you recall the trip?", "Candace", true, None),
            ("What did Jon do in May?", "Maya Okafor", true, None),
            ("What did Jon do on Sat?", "Saturnina", true, None),
            // A title makes even the first word a surname.
            ("Dr Okafor said what?", "Maya Okafor", true, Some(Surname)),
            // Non-people match only in full.
            (
                "Who works at Northwind?",
                "Northwind Analytics",
                false,
                None,
            ),
            (
                "Who works at Northwind Analytics?",
                "Northwind Analytics",
                false,
                Some(Full),
            ),
            ("Anything about Melanie?", "Melanie", true, Some(Full)),
            ("", "Melanie", true, None),
            ("What did Mel paint?", "", true, None),
        ];
        for (query, name, person, want) in table {
            assert_eq!(
                check(query, name, *person),
                *want,
                "{query:?} naming {name:?}"
            );
        }
    }

    #[test]
    fn a_plain_name_wins_over_a_short_form_of_another() {
        let q = QueryWords::new("What did Jon buy?");
        let named = best_named(&q, [("Jon", true), ("Jonathan", true)]);
        assert_eq!(named, vec![("Jon", NameMatch::Full)]);
        let q = QueryWords::new("What did Jon and Ms Okafor discuss?");
        let named = best_named(
            &q,
            [("Jon", true), ("Jonathan", true), ("Maya Okafor", true)],
        );
        assert_eq!(
            named,
            vec![
                ("Jon", NameMatch::Full),
                ("Maya Okafor", NameMatch::Surname)
            ]
        );
        let q = QueryWords::new("What did Jon and Mel discuss?");
        let named = best_named(&q, [("Jon", true), ("Melanie", true), ("Caroline", true)]);
        assert_eq!(
            named,
            vec![("Jon", NameMatch::Full), ("Melanie", NameMatch::Nickname)]
        );
    }
}
