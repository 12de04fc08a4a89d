//! A small lexicon of common categories and their members, for questions
//! that name a category where the evidence names a member ("What European
//! countries has Maria been to?" — "We spent a week in Spain"): neither
//! BM25 nor a small sentence embedding bridges "countries" to "Spain".
//!
//! The members are general facts (countries by continent, US states, big
//! cities, sports, martial arts, instruments, pets, languages, desserts,
//! workouts, yoga and dance styles, outdoor activities; and the broad kinds
//! of [`super::kinds`]: pastimes, events, art forms, causes), not words from any
//! benchmark. A question names a category by a cue — a run of its words
//! ("european countries", "martial arts", "instruments") — and a more
//! specific category wins over a broader one it is part of ("European
//! countries" over "countries").

use super::kinds::{ART_FORMS, CAUSES, EVENTS, PASTIMES};
use super::paths::words;

/// A category a question can name.
#[derive(Debug)]
pub struct Category {
    /// What the trace calls it ("European countries").
    pub label: &'static str,
    /// Runs of lower-cased words that name it in a question.
    cues: &'static [&'static [&'static str]],
    /// Its members, as lists of lists (a broad category is the union of
    /// narrower ones), lower case.
    parts: &'static [&'static [&'static str]],
}

impl Category {
    /// Every member, lower case, in the lexicon's order.
    pub fn members(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.parts.iter().flat_map(|p| p.iter().copied())
    }

    /// Whether every member list of `self` is one of `other`'s (and
    /// `other` has more): `self` is the narrower category.
    fn narrower_than(&self, other: &Category) -> bool {
        other.parts.len() > self.parts.len()
            && self
                .parts
                .iter()
                .all(|p| other.parts.iter().any(|q| std::ptr::eq(*p, *q)))
    }
}

/// Question words that ask for the thing named right after them ("what
/// countries", "which cities", "how many pets", "where in Europe").
const ASKING: &[&str] = &["what", "which", "where", "many"];
/// How far after an asking word a cue may start: "what kinds of dance",
/// "what areas of the u s" (four words between).
const ASKED_WITHIN: usize = 4;

/// The categories `question` asks for, narrowest first-found (a category
/// another named one is part of is left out: "European countries" names
/// both "countries" and Europe's, and Europe's are meant). A category
/// counts when its cue comes right after a word that asks ("What European
/// countries…", "Which cities…"): the answer is a list of its members.
/// One named in passing ("Would John move to another country?") asks
/// about something else, and its members would only crowd the results.
pub fn categories_named(question: &str) -> Vec<&'static Category> {
    let said = words(question);
    let named: Vec<&'static Category> = CATEGORIES
        .iter()
        .filter(|c| c.cues.iter().any(|cue| asked_for(&said, cue)))
        .collect();
    named
        .iter()
        .copied()
        .filter(|c| !named.iter().any(|other| other.narrower_than(c)))
        .collect()
}

/// Whether `said` holds the words of `cue` in a row, starting at most
/// [`ASKED_WITHIN`] words after an [`ASKING`] word.
fn asked_for(said: &[String], cue: &[&str]) -> bool {
    if cue.is_empty() {
        return false;
    }
    said.windows(cue.len()).enumerate().any(|(at, w)| {
        w.iter().zip(cue).all(|(a, b)| a == b)
            && said[at.saturating_sub(ASKED_WITHIN + 1)..at]
                .iter()
                .any(|x| ASKING.contains(&x.as_str()))
    })
}

/// Whether `text` mentions `member` as whole words, any case, its last
/// word also in a plural form ("cookies" for "cookie", "puppies" for
/// "puppy").
pub fn mentions_member(text: &str, member: &str) -> bool {
    let text = words(text);
    let member = words(member);
    let Some((last, rest)) = member.split_last() else {
        return false;
    };
    let n = member.len();
    text.windows(n).any(|w| {
        w[..n - 1] == *rest && {
            let t = &w[n - 1];
            t == last
                || *t == format!("{last}s")
                || *t == format!("{last}es")
                || last
                    .strip_suffix('y')
                    .is_some_and(|stem| *t == format!("{stem}ies"))
        }
    })
}

const EUROPE: &[&str] = &[
    "albania",
    "andorra",
    "austria",
    "belarus",
    "belgium",
    "bosnia",
    "bulgaria",
    "croatia",
    "cyprus",
    "czech republic",
    "czechia",
    "denmark",
    "england",
    "estonia",
    "finland",
    "france",
    "germany",
    "greece",
    "hungary",
    "iceland",
    "ireland",
    "italy",
    "kosovo",
    "latvia",
    "liechtenstein",
    "lithuania",
    "luxembourg",
    "malta",
    "moldova",
    "monaco",
    "montenegro",
    "netherlands",
    "holland",
    "north macedonia",
    "norway",
    "poland",
    "portugal",
    "romania",
    "san marino",
    "scotland",
    "serbia",
    "slovakia",
    "slovenia",
    "spain",
    "sweden",
    "switzerland",
    "ukraine",
    "united kingdom",
    "wales",
    "vatican",
];

const ASIA: &[&str] = &[
    "afghanistan",
    "bangladesh",
    "bhutan",
    "brunei",
    "cambodia",
    "china",
    "india",
    "indonesia",
    "iran",
    "iraq",
    "israel",
    "japan",
    "kazakhstan",
    "korea",
    "south korea",
    "north korea",
    "kuwait",
    "kyrgyzstan",
    "laos",
    "lebanon",
    "malaysia",
    "maldives",
    "mongolia",
    "myanmar",
    "nepal",
    "oman",
    "pakistan",
    "philippines",
    "qatar",
    "saudi arabia",
    "singapore",
    "sri lanka",
    "syria",
    "taiwan",
    "tajikistan",
    "thailand",
    "turkey",
    "uae",
    "united arab emirates",
    "uzbekistan",
    "vietnam",
    "yemen",
];

const AFRICA: &[&str] = &[
    "algeria",
    "angola",
    "botswana",
    "cameroon",
    "congo",
    "egypt",
    "ethiopia",
    "ghana",
    "ivory coast",
    "kenya",
    "libya",
    "madagascar",
    "malawi",
    "mali",
    "morocco",
    "mozambique",
    "namibia",
    "niger",
    "nigeria",
    "rwanda",
    "senegal",
    "sierra leone",
    "somalia",
    "south africa",
    "sudan",
    "tanzania",
    "tunisia",
    "uganda",
    "zambia",
    "zimbabwe",
];

const AMERICAS: &[&str] = &[
    "argentina",
    "bahamas",
    "barbados",
    "belize",
    "bolivia",
    "brazil",
    "canada",
    "chile",
    "colombia",
    "costa rica",
    "cuba",
    "dominican republic",
    "ecuador",
    "el salvador",
    "guatemala",
    "haiti",
    "honduras",
    "jamaica",
    "mexico",
    "nicaragua",
    "panama",
    "paraguay",
    "peru",
    "puerto rico",
    "trinidad",
    "united states",
    "usa",
    "uruguay",
    "venezuela",
];

const OCEANIA: &[&str] = &[
    "australia",
    "fiji",
    "new zealand",
    "papua new guinea",
    "samoa",
    "tonga",
];

const US_STATES: &[&str] = &[
    "alabama",
    "alaska",
    "arizona",
    "arkansas",
    "california",
    "colorado",
    "connecticut",
    "delaware",
    "florida",
    "georgia",
    "hawaii",
    "idaho",
    "illinois",
    "indiana",
    "iowa",
    "kansas",
    "kentucky",
    "louisiana",
    "maine",
    "maryland",
    "massachusetts",
    "michigan",
    "minnesota",
    "mississippi",
    "missouri",
    "montana",
    "nebraska",
    "nevada",
    "new hampshire",
    "new jersey",
    "new mexico",
    "new york",
    "north carolina",
    "north dakota",
    "ohio",
    "oklahoma",
    "oregon",
    "pennsylvania",
    "rhode island",
    "south carolina",
    "south dakota",
    "tennessee",
    "texas",
    "utah",
    "vermont",
    "virginia",
    "washington",
    "west virginia",
    "wisconsin",
    "wyoming",
];

const US_REGIONS: &[&str] = &[
    "east coast",
    "west coast",
    "midwest",
    "new england",
    "pacific northwest",
    "the south",
    "southwest",
    "gulf coast",
    "great lakes",
    "rockies",
    "appalachia",
];

const CITIES: &[&str] = &[
    "amsterdam",
    "athens",
    "atlanta",
    "austin",
    "bangkok",
    "barcelona",
    "beijing",
    "berlin",
    "boston",
    "brussels",
    "budapest",
    "buenos aires",
    "cairo",
    "chicago",
    "copenhagen",
    "dallas",
    "delhi",
    "denver",
    "dubai",
    "dublin",
    "edinburgh",
    "florence",
    "hong kong",
    "honolulu",
    "houston",
    "istanbul",
    "jerusalem",
    "las vegas",
    "lisbon",
    "london",
    "los angeles",
    "madrid",
    "melbourne",
    "mexico city",
    "miami",
    "milan",
    "montreal",
    "moscow",
    "mumbai",
    "munich",
    "nashville",
    "new orleans",
    "new york",
    "orlando",
    "paris",
    "philadelphia",
    "phoenix",
    "portland",
    "prague",
    "rio de janeiro",
    "rome",
    "san diego",
    "san francisco",
    "seattle",
    "seoul",
    "shanghai",
    "singapore",
    "stockholm",
    "sydney",
    "tokyo",
    "toronto",
    "vancouver",
    "venice",
    "vienna",
    "warsaw",
];

const MARTIAL_ARTS: &[&str] = &[
    "aikido",
    "boxing",
    "brazilian jiu-jitsu",
    "capoeira",
    "jiu-jitsu",
    "jiu jitsu",
    "judo",
    "karate",
    "kendo",
    "kickboxing",
    "krav maga",
    "kung fu",
    "mma",
    "muay thai",
    "sambo",
    "taekwondo",
    "tae kwon do",
    "tai chi",
    "wing chun",
    "wrestling",
];

const SPORTS: &[&str] = &[
    "badminton",
    "baseball",
    "basketball",
    "cricket",
    "cycling",
    "football",
    "golf",
    "gymnastics",
    "hockey",
    "lacrosse",
    "rowing",
    "rugby",
    "running",
    "skateboarding",
    "skiing",
    "snowboarding",
    "soccer",
    "softball",
    "surfing",
    "swimming",
    "table tennis",
    "tennis",
    "track",
    "triathlon",
    "volleyball",
    "marathon",
    "climbing",
    "fencing",
    "archery",
    "bowling",
];

const INSTRUMENTS: &[&str] = &[
    "accordion",
    "bagpipes",
    "banjo",
    "bass",
    "bassoon",
    "cello",
    "clarinet",
    "drums",
    "drum",
    "flute",
    "french horn",
    "guitar",
    "harmonica",
    "harp",
    "keyboard",
    "mandolin",
    "oboe",
    "organ",
    "piano",
    "saxophone",
    "sax",
    "synthesizer",
    "trombone",
    "trumpet",
    "tuba",
    "ukulele",
    "viola",
    "violin",
    "xylophone",
];

const PETS: &[&str] = &[
    "dog",
    "puppy",
    "cat",
    "kitten",
    "hamster",
    "rabbit",
    "bunny",
    "guinea pig",
    "parrot",
    "bird",
    "budgie",
    "goldfish",
    "fish",
    "turtle",
    "tortoise",
    "snake",
    "lizard",
    "gecko",
    "horse",
    "pony",
    "ferret",
    "chinchilla",
    "gerbil",
    "mouse",
    "rat",
    "hedgehog",
];

const LANGUAGES: &[&str] = &[
    "arabic",
    "bengali",
    "cantonese",
    "chinese",
    "dutch",
    "english",
    "farsi",
    "french",
    "german",
    "greek",
    "hebrew",
    "hindi",
    "italian",
    "japanese",
    "korean",
    "latin",
    "mandarin",
    "polish",
    "portuguese",
    "russian",
    "sign language",
    "spanish",
    "swahili",
    "swedish",
    "tagalog",
    "thai",
    "turkish",
    "urdu",
    "vietnamese",
];

const DESSERTS: &[&str] = &[
    "brownie",
    "cake",
    "cheesecake",
    "cobbler",
    "cookie",
    "crumble",
    "cupcake",
    "custard",
    "donut",
    "doughnut",
    "eclair",
    "fudge",
    "gelato",
    "ice cream",
    "macaron",
    "meringue",
    "mousse",
    "muffin",
    "pastry",
    "pie",
    "pudding",
    "sorbet",
    "sundae",
    "tart",
    "tiramisu",
    "trifle",
    "waffle",
    "pancake",
    "cannoli",
    "baklava",
    "flan",
];

const WORKOUTS: &[&str] = &[
    "aerobics",
    "boxing",
    "cardio",
    "circuit training",
    "crossfit",
    "cycling",
    "hiit",
    "jogging",
    "kickboxing",
    "pilates",
    "push-ups",
    "rowing",
    "running",
    "spinning",
    "squats",
    "stretching",
    "swimming",
    "weight training",
    "weightlifting",
    "weights",
    "yoga",
    "zumba",
    "strength training",
    "treadmill",
    "hiking",
];

const YOGA_STYLES: &[&str] = &[
    "aerial",
    "ashtanga",
    "bikram",
    "hatha",
    "hot yoga",
    "iyengar",
    "kundalini",
    "power yoga",
    "restorative",
    "vinyasa",
    "yin",
    "prenatal",
];

const DANCES: &[&str] = &[
    "ballet",
    "ballroom",
    "bachata",
    "breakdancing",
    "cha-cha",
    "contemporary",
    "flamenco",
    "foxtrot",
    "hip hop",
    "hip-hop",
    "jazz",
    "line dancing",
    "lyrical",
    "salsa",
    "samba",
    "swing",
    "tango",
    "tap",
    "waltz",
    "zumba",
    "krump",
    "popping",
    "street dance",
];

const OUTDOORS: &[&str] = &[
    "camping",
    "canoeing",
    "climbing",
    "cycling",
    "biking",
    "fishing",
    "hiking",
    "hunting",
    "kayaking",
    "mountaineering",
    "mountain biking",
    "picnic",
    "rafting",
    "rock climbing",
    "sailing",
    "skiing",
    "snowboarding",
    "surfing",
    "swimming",
    "birdwatching",
    "gardening",
    "stargazing",
    "paddleboarding",
    "backpacking",
    "trekking",
];

/// The categories, each with the words that name it.
static CATEGORIES: &[Category] = &[
    Category {
        label: "European countries",
        cues: &[&["european"], &["europe"]],
        parts: &[EUROPE],
    },
    Category {
        label: "Asian countries",
        cues: &[&["asian", "countries"], &["asian", "country"], &["asia"]],
        parts: &[ASIA],
    },
    Category {
        label: "African countries",
        cues: &[
            &["african", "countries"],
            &["african", "country"],
            &["africa"],
        ],
        parts: &[AFRICA],
    },
    Category {
        label: "countries of the Americas",
        cues: &[
            &["south", "american", "countries"],
            &["latin", "american", "countries"],
            &["south", "america"],
            &["latin", "america"],
            &["central", "america"],
            &["caribbean"],
        ],
        parts: &[AMERICAS],
    },
    Category {
        label: "countries",
        cues: &[&["countries"], &["country"], &["abroad"], &["overseas"]],
        parts: &[EUROPE, ASIA, AFRICA, AMERICAS, OCEANIA],
    },
    Category {
        label: "US states",
        cues: &[
            &["states"],
            &["what", "state"],
            &["which", "state"],
            &["u", "s"],
            &["usa"],
            &["united", "states"],
        ],
        parts: &[US_STATES, US_REGIONS],
    },
    Category {
        label: "cities",
        cues: &[&["cities"], &["city"]],
        parts: &[CITIES],
    },
    Category {
        label: "martial arts",
        cues: &[
            &["martial", "arts"],
            &["martial", "art"],
            &["combat", "sports"],
        ],
        parts: &[MARTIAL_ARTS],
    },
    Category {
        label: "sports",
        cues: &[&["sports"], &["sport"]],
        parts: &[SPORTS],
    },
    Category {
        label: "musical instruments",
        cues: &[&["instruments"], &["instrument"]],
        parts: &[INSTRUMENTS],
    },
    Category {
        label: "pets",
        cues: &[&["pets"], &["pet"], &["animals"]],
        parts: &[PETS],
    },
    Category {
        label: "languages",
        cues: &[&["languages"], &["language"]],
        parts: &[LANGUAGES],
    },
    Category {
        label: "desserts",
        cues: &[
            &["desserts"],
            &["dessert"],
            &["sweets"],
            &["baked", "goods"],
        ],
        parts: &[DESSERTS],
    },
    Category {
        label: "workouts",
        cues: &[
            &["exercises"],
            &["exercise"],
            &["workouts"],
            &["workout"],
            &["fitness"],
        ],
        parts: &[WORKOUTS],
    },
    Category {
        label: "yoga styles",
        cues: &[
            &["types", "of", "yoga"],
            &["kinds", "of", "yoga"],
            &["yoga", "styles"],
        ],
        parts: &[YOGA_STYLES],
    },
    Category {
        label: "dance styles",
        cues: &[
            &["dance", "styles"],
            &["types", "of", "dance"],
            &["kinds", "of", "dance"],
            &["styles", "of", "dance"],
        ],
        parts: &[DANCES],
    },
    Category {
        label: "outdoor activities",
        cues: &[&["outdoor", "activities"], &["outdoors"], &["outdoor"]],
        parts: &[OUTDOORS],
    },
    Category {
        label: "activities",
        cues: &[&["activities"], &["hobbies"], &["pastimes"]],
        parts: &[PASTIMES, OUTDOORS],
    },
    Category {
        label: "events",
        cues: &[&["events"]],
        parts: &[EVENTS],
    },
    Category {
        label: "art",
        cues: &[
            &["kind", "of", "art"],
            &["kinds", "of", "art"],
            &["type", "of", "art"],
            &["types", "of", "art"],
            &["art", "forms"],
            &["artwork"],
            &["artworks"],
        ],
        parts: &[ART_FORMS],
    },
    Category {
        label: "causes",
        cues: &[&["causes"], &["charities"]],
        parts: &[CAUSES],
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(q: &str) -> Vec<&'static str> {
        categories_named(q).iter().map(|c| c.label).collect()
    }

    #[test]
    fn questions_name_categories_by_their_words() {
        assert_eq!(
            labels("What European countries has Maria been to?"),
            vec!["European countries"]
        );
        assert_eq!(labels("What countries has Jon visited?"), vec!["countries"]);
        assert_eq!(
            labels("What martial arts has John done?"),
            vec!["martial arts"]
        );
        assert_eq!(
            labels("What instruments does Melanie play?"),
            vec!["musical instruments"]
        );
        assert_eq!(
            labels("What states has Maria vacationed at?"),
            vec!["US states"]
        );
        assert!(labels("What did Caroline paint last week?").is_empty());
        assert_eq!(
            labels("What kinds of dance has Jon taught?"),
            vec!["dance styles"]
        );
        // The broad kinds, and a narrower one over them.
        assert_eq!(
            labels("What activities has Melanie done with her family?"),
            vec!["activities"]
        );
        assert_eq!(
            labels("What outdoor activities does Jon like?"),
            vec!["outdoor activities"]
        );
        assert_eq!(labels("What events has Caroline attended?"), vec!["events"]);
        assert_eq!(labels("What kind of art does Caroline make?"), vec!["art"]);
        assert_eq!(
            labels("What causes does John feel passionate about?"),
            vec!["causes"]
        );
        assert_eq!(
            labels("What martial art did he take up?"),
            vec!["martial arts"]
        );
        // One event, one cause: the question names it, it is not a list
        // ("What event did John volunteer at last weekend?").
        assert!(labels("What event did John volunteer at last weekend?").is_empty());
        assert!(labels("What cause did the charity run support?").is_empty());
        // Named in passing, not asked for.
        assert!(labels("Would John be open to moving to another country?").is_empty());
        assert!(labels("How does Maria plan to honor the memories of her pet?").is_empty());
        // A word inside another is not a cue ("arts" alone, "petal").
        assert!(labels("Which arts festival did she like, with petals?").is_empty());
    }

    #[test]
    fn a_narrower_category_wins_over_the_broader_one_it_is_part_of() {
        let named = categories_named("Which countries in Europe or which African countries?");
        let labels: Vec<_> = named.iter().map(|c| c.label).collect();
        assert_eq!(labels, vec!["European countries", "African countries"]);
        let countries = CATEGORIES.iter().find(|c| c.label == "countries").unwrap();
        let all: Vec<&str> = countries.members().collect();
        assert!(all.contains(&"spain") && all.contains(&"kenya") && all.contains(&"fiji"));
    }

    #[test]
    fn members_are_whole_words_plural_or_not() {
        assert!(mentions_member("We spent a week in Spain!", "spain"));
        assert!(mentions_member("I baked cookies", "cookie"));
        assert!(mentions_member("two puppies", "puppy"));
        assert!(mentions_member("Kung Fu class", "kung fu"));
        assert!(!mentions_member("Spanish food", "spain"));
        assert!(!mentions_member("a catalogue", "cat"));
        assert!(!mentions_member("fu kung", "kung fu"));
        assert!(!mentions_member("anything", ""));
    }
}
