//! Calendar dates named in a query ("on 31 July, 2023", "October 13, 2023",
//! "2023-07-31"), so retrieval can look at what was said around them.

use kith_core::Timestamp;

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// The month (1–12) a word names: a full English month name or a
/// three-letter abbreviation ("sept" too), any case.
pub fn month_number(word: &str) -> Option<u8> {
    let w = word.to_lowercase();
    if w.len() < 3 {
        return None;
    }
    MONTHS
        .iter()
        .position(|m| {
            *m == w || (w.len() == 3 && m.starts_with(&w)) || (w == "sept" && *m == "september")
        })
        .map(|i| i as u8 + 1)
}

fn day(word: &str) -> Option<u8> {
    let digits = word.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &word[digits.len()..];
    if !suffix.is_empty() && !["st", "nd", "rd", "th"].contains(&suffix.to_lowercase().as_str()) {
        return None;
    }
    digits.parse::<u8>().ok().filter(|d| (1..=31).contains(d))
}

fn year(word: &str) -> Option<i32> {
    (word.len() == 4)
        .then(|| word.parse::<i32>().ok())
        .flatten()
        .filter(|y| (1900..=2200).contains(y))
}

/// Midnight UTC of a calendar date, if it exists.
fn midnight(y: i32, m: u8, d: u8) -> Option<Timestamp> {
    let month = time::Month::try_from(m).ok()?;
    let date = time::Date::from_calendar_date(y, month, d).ok()?;
    let ms = date.midnight().assume_utc().unix_timestamp() * 1000;
    Timestamp::from_unix_millis(ms)
}

/// The dates `query` names, in order, without repeats: `D Month[,] YYYY`,
/// `Month D[st|nd|rd|th][,] YYYY` and `YYYY-MM-DD`. A date without a year is
/// not taken (it would guess).
pub fn mentioned_dates(query: &str) -> Vec<Timestamp> {
    let words: Vec<&str> = query
        .split(|c: char| c.is_whitespace() || c == ',' || c == '?' || c == '.')
        .filter(|w| !w.is_empty())
        .collect();
    let mut out: Vec<Timestamp> = Vec::new();
    let mut push = |t: Option<Timestamp>| {
        if let Some(t) = t {
            if !out.contains(&t) {
                out.push(t);
            }
        }
    };
    for i in 0..words.len() {
        let w = words[i];
        if let [y, m, d] = w.split('-').collect::<Vec<_>>().as_slice() {
            if let (Some(y), Ok(m), Ok(d)) = (year(y), m.parse::<u8>(), d.parse::<u8>()) {
                push(midnight(y, m, d));
                continue;
            }
        }
        let next = |k: usize| words.get(i + k).copied();
        if let (Some(d), Some(m), Some(y)) = (
            day(w),
            next(1).and_then(month_number),
            next(2).and_then(year),
        ) {
            push(midnight(y, m, d));
        } else if let (Some(m), Some(d), Some(y)) = (
            month_number(w),
            next(1).and_then(day),
            next(2).and_then(year),
        ) {
            push(midnight(y, m, d));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ymd(t: &Timestamp) -> String {
        t.to_rfc3339()[..10].to_string()
    }

    #[test]
    fn dates_in_questions() {
        let got = |q: &str| mentioned_dates(q).iter().map(ymd).collect::<Vec<_>>();
        assert_eq!(
            got("What did Maria do on 31 July, 2023?"),
            vec!["2023-07-31"]
        );
        assert_eq!(got("the week before August 3, 2023"), vec!["2023-08-03"]);
        assert_eq!(
            got("on October 13th, 2023 and 2024-02-29"),
            vec!["2023-10-13", "2024-02-29"]
        );
        assert_eq!(got("as mentioned on 3 June 2023"), vec!["2023-06-03"]);
        assert!(got("in May, when 31 people came").is_empty());
        assert!(got("on 31 February, 2023").is_empty());
        assert!(got("I may go on 3 may").is_empty());
    }
}
