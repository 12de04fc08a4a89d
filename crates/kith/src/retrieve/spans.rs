//! The stretches of time a text talks about, with relative dates resolved
//! against the time it was said.
//!
//! People date things relative to when they speak: "I went to a support
//! group yesterday", "last week", "the Sunday before", "two weeks ago", "in
//! May", "last summer". A question does the same relative to when it is
//! asked ("What did Maria do last weekend?"), or relative to a date it
//! names ("the week before August 3, 2023"). Read alone, none of these
//! words matches the other: "last week" said on 9 June and "in early June"
//! asked in October are the same days only once both are resolved, the
//! turn against its session's time and the question against the time it is
//! asked. [`spans`] does that for any text, given the time it was said;
//! [`Span::covers`] then says whether a turn (said at some time, stating
//! some spans) is about the time a question asks about.
//!
//! Calendar rules, all in UTC: a week starts on Monday; "last week" is the
//! Monday-to-Monday week before the one the text was said in; "last
//! Friday" the latest Friday before that day; "last weekend" the latest
//! Saturday and Sunday that ended before it; a month or season named alone
//! ("in May", "the summer") is the latest one that began by then ("last"
//! one: that ended before; "next": the first one after). Vague counts ("a
//! few days ago") stretch the span by the vagueness.

use kith_core::Timestamp;
use time::{Date, Duration, Month, Weekday};

use super::dates::month_number;

const DAY_MS: i64 = 86_400_000;

/// A stretch of time, `[from, to)` in Unix milliseconds, with the words
/// that named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// The first millisecond.
    pub from: i64,
    /// The millisecond after the last.
    pub to: i64,
    /// The words that named it ("last week", "in June").
    pub words: String,
}

impl Span {
    fn days(from: Date, to_exclusive: Date, words: String) -> Span {
        Span {
            from: midnight(from),
            to: midnight(to_exclusive),
            words,
        }
    }

    /// Whether this span overlaps `other`.
    pub fn overlaps(&self, other: &Span) -> bool {
        self.from < other.to && other.from < self.to
    }

    /// Whether a turn said at `said_at` that states `stated` is about this
    /// span: it was said in it (from a day before to a day after, as event
    /// times carry their speaker's offset and "on 3 June" may be told the
    /// day after), or it names a time in it.
    pub fn covers(&self, said_at: i64, stated: &[Span]) -> bool {
        (said_at >= self.from - DAY_MS && said_at < self.to + DAY_MS)
            || stated.iter().any(|s| s.overlaps(self))
    }

    /// How long after the span a turn about it may have been said: a
    /// week's or a day's events are told within a fortnight ("last
    /// week"), a month's within two months ("last month"), anything longer
    /// within the next year ("last year").
    pub fn told_within_ms(&self) -> i64 {
        let len = self.to - self.from;
        if len <= 8 * DAY_MS {
            15 * DAY_MS
        } else if len <= 32 * DAY_MS {
            62 * DAY_MS
        } else {
            400 * DAY_MS
        }
    }

    /// The span as dates, `2023-06-05..2023-06-12` (the end exclusive).
    pub fn short(&self) -> String {
        let day = |ms: i64| {
            Timestamp::from_unix_millis(ms)
                .map(|t| t.date())
                .unwrap_or_default()
        };
        format!("{}..{}", day(self.from), day(self.to))
    }
}

fn midnight(d: Date) -> i64 {
    d.midnight().assume_utc().unix_timestamp() * 1000
}

fn date_at(ms: i64) -> Option<Date> {
    time::OffsetDateTime::from_unix_timestamp(ms.div_euclid(1000))
        .ok()
        .map(|t| t.date())
}

fn month_start(year: i32, month: u8) -> Option<Date> {
    Date::from_calendar_date(year, Month::try_from(month).ok()?, 1).ok()
}

/// The first day of the month `n` months after (or before, `n < 0`) the
/// month of `d`.
fn months_from(d: Date, n: i32) -> Option<Date> {
    let index = d.year() * 12 + (d.month() as i32 - 1) + n;
    month_start(index.div_euclid(12), (index.rem_euclid(12) + 1) as u8)
}

fn month_span(start: Date, words: String) -> Option<Span> {
    Some(Span::days(start, months_from(start, 1)?, words))
}

fn year_span(year: i32, words: String) -> Option<Span> {
    Some(Span::days(
        month_start(year, 1)?,
        month_start(year + 1, 1)?,
        words,
    ))
}

fn monday_of(d: Date) -> Date {
    d - Duration::days(d.weekday().number_days_from_monday() as i64)
}

/// The latest `day` strictly before `d`.
fn weekday_before(d: Date, day: Weekday) -> Date {
    let back = (d.weekday().number_days_from_monday() as i64
        - day.number_days_from_monday() as i64)
        .rem_euclid(7);
    d - Duration::days(if back == 0 { 7 } else { back })
}

/// The first `day` strictly after `d`.
fn weekday_after(d: Date, day: Weekday) -> Date {
    let ahead = (day.number_days_from_monday() as i64
        - d.weekday().number_days_from_monday() as i64)
        .rem_euclid(7);
    d + Duration::days(if ahead == 0 { 7 } else { ahead })
}

fn weekday(word: &str) -> Option<Weekday> {
    Some(match word {
        "monday" => Weekday::Monday,
        "tuesday" => Weekday::Tuesday,
        "wednesday" => Weekday::Wednesday,
        "thursday" => Weekday::Thursday,
        "friday" => Weekday::Friday,
        "saturday" => Weekday::Saturday,
        "sunday" => Weekday::Sunday,
        _ => return None,
    })
}

/// The months a season spans (northern hemisphere): its first month and
/// how many.
fn season(word: &str) -> Option<(u8, i32)> {
    match word {
        "spring" => Some((3, 3)),
        "summer" => Some((6, 3)),
        "fall" | "autumn" => Some((9, 3)),
        "winter" => Some((12, 3)),
        _ => None,
    }
}

/// A count said in words or digits, and how vague it is (in units either
/// side).
fn count(word: &str) -> Option<(i64, i64)> {
    let exact = |n| Some((n, 0));
    match word {
        "a" | "an" | "one" => exact(1),
        "two" => exact(2),
        "three" => exact(3),
        "four" => exact(4),
        "five" => exact(5),
        "six" => exact(6),
        "seven" => exact(7),
        "eight" => exact(8),
        "nine" => exact(9),
        "ten" => exact(10),
        "couple" => Some((2, 1)),
        "few" => Some((3, 1)),
        "several" => Some((4, 2)),
        w => w
            .parse::<i64>()
            .ok()
            .filter(|n| (1..=100).contains(n))
            .map(|n| (n, 0)),
    }
}

fn day_number(word: &str) -> Option<u8> {
    let digits = word.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &word[digits.len()..];
    if !suffix.is_empty() && !["st", "nd", "rd", "th"].contains(&suffix) {
        return None;
    }
    digits.parse::<u8>().ok().filter(|d| (1..=31).contains(d))
}

fn year_number(word: &str) -> Option<i32> {
    (word.len() == 4)
        .then(|| word.parse::<i32>().ok())
        .flatten()
        .filter(|y| (1900..=2200).contains(y))
}

/// Words after which "may" is the month, not the verb.
const BEFORE_A_MONTH: &[&str] = &[
    "in", "of", "during", "since", "early", "late", "mid", "last", "next", "this", "until", "by",
    "through", "from",
];

/// Lower-cased words, apostrophes kept inside ("mother's"); a numeric date
/// ("2/15", "2/15/2023") stays one word, any other slash splits.
fn words_of(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-' || c == '/'))
        .flat_map(|w| {
            let numeric = w.split('/').count() > 1
                && w.split('/')
                    .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
            if numeric {
                vec![w]
            } else {
                w.split('/').collect()
            }
        })
        .map(|w| w.trim_matches(|c| c == '\'' || c == '-').to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

/// Words before a numeric date without a year ("on 2/15"): without one,
/// "1/2" is as likely half a cup.
const BEFORE_A_NUMERIC_DATE: &[&str] = &[
    "on", "by", "since", "until", "till", "from", "before", "after", "through", "to", "dated",
];

/// A day named without its year, starting at word `i`: "June 3rd", "3
/// June", "the 3rd of June" (after "the"), "on 2/15" (the readings month
/// first and day first, both when both are dates), "2/15/2023" (a year
/// given). A day without a year is the occurrence nearest `now`: people
/// name the coming appointment and the last outing alike. Returns the
/// dates and how many words they take.
fn yearless_date_at_word(w: &[String], i: usize, now: Date) -> Option<(Vec<Date>, usize)> {
    let at = |k: usize| w.get(i + k).map(String::as_str);
    let before = if i > 0 { w[i - 1].as_str() } else { "" };
    if w[i].contains('/') {
        let parts: Vec<&str> = w[i].split('/').collect();
        let (a, b) = (parts[0].parse::<u8>().ok()?, parts[1].parse::<u8>().ok()?);
        let year = match parts.as_slice() {
            [_, _] if BEFORE_A_NUMERIC_DATE.contains(&before) => None,
            [_, _, y] if y.len() == 4 => Some(year_number(y)?),
            [_, _, y] if y.len() == 2 => Some(2000 + y.parse::<i32>().ok()?),
            _ => return None,
        };
        let mut dates = Vec::new();
        for (m, d) in [(a, b), (b, a)] {
            let date = match year {
                Some(y) => Month::try_from(m)
                    .ok()
                    .and_then(|m| Date::from_calendar_date(y, m, d).ok()),
                None => nearest(m, d, now),
            };
            if let Some(date) = date.filter(|d| !dates.contains(d)) {
                dates.push(date);
            }
        }
        return (!dates.is_empty()).then_some((dates, 1));
    }
    // "may" is a month only where a month is expected.
    let month = |word: &str, prev: &str| {
        month_number(word)
            .filter(|_| word != "may" || BEFORE_A_MONTH.contains(&prev) || prev == "on")
    };
    if let (Some(m), Some(d)) = (month(&w[i], before), at(1).and_then(day_number)) {
        return Some((vec![nearest(m, d, now)?], 2));
    }
    if let (Some(d), Some(m)) = (day_number(&w[i]), at(1).and_then(|x| month(x, "in"))) {
        return Some((vec![nearest(m, d, now)?], 2));
    }
    if let (true, Some(d), Some("of"), Some(m)) = (
        before == "the",
        day_number(&w[i]),
        at(1),
        at(2).and_then(|x| month(x, "of")),
    ) {
        return Some((vec![nearest(m, d, now)?], 3));
    }
    None
}

/// Month `m`, day `d` in the year nearest `now`: this year's, last year's
/// or next year's, whichever is closest.
fn nearest(m: u8, d: u8, now: Date) -> Option<Date> {
    let month = Month::try_from(m).ok()?;
    (now.year() - 1..=now.year() + 1)
        .filter_map(|y| Date::from_calendar_date(y, month, d).ok())
        .min_by_key(|date| (*date - now).whole_days().abs())
}

/// A calendar date starting at word `i` ("3 June 2023", "June 3rd, 2023",
/// "2023-06-03"), and how many words it takes.
fn date_at_word(w: &[String], i: usize) -> Option<(Date, usize)> {
    let at = |k: usize| w.get(i + k).map(String::as_str);
    if let [y, m, d] = w[i].split('-').collect::<Vec<_>>().as_slice() {
        if let (Some(y), Ok(m), Ok(d)) = (year_number(y), m.parse::<u8>(), d.parse::<u8>()) {
            return Some((
                Date::from_calendar_date(y, Month::try_from(m).ok()?, d).ok()?,
                1,
            ));
        }
    }
    if let (Some(d), Some(m), Some(y)) = (
        at(0).and_then(day_number),
        at(1).and_then(month_number),
        at(2).and_then(year_number),
    ) {
        return Some((
            Date::from_calendar_date(y, Month::try_from(m).ok()?, d).ok()?,
            3,
        ));
    }
    if let (Some(m), Some(d), Some(y)) = (
        at(0).and_then(month_number),
        at(1).and_then(day_number),
        at(2).and_then(year_number),
    ) {
        return Some((
            Date::from_calendar_date(y, Month::try_from(m).ok()?, d).ok()?,
            3,
        ));
    }
    None
}

/// The stretches of time `text` names, resolved against `said_at` (Unix
/// milliseconds): calendar dates, months and years it names, and relative
/// dates (see the module doc). A relative phrase followed by "before" and
/// a calendar date ("the week before 9 June 2023") is resolved against
/// that date instead. In order, without repeats.
pub fn spans(text: &str, said_at: i64) -> Vec<Span> {
    let Some(now) = date_at(said_at) else {
        return Vec::new();
    };
    let w = words_of(text);
    let mut out: Vec<Span> = Vec::new();
    // Words read as part of a date (or of a phrase anchored to one), left
    // out of the relative reading below.
    let mut used = vec![false; w.len()];
    let mut i = 0;
    while i < w.len() {
        if let Some((date, len)) = date_at_word(&w, i) {
            let anchored = i > 0 && w[i - 1] == "before";
            let mut found = false;
            if anchored {
                // Up to four words before "before": "the week", "the
                // sunday", "the weekend"; "two weeks" before a date is
                // "two weeks ago" said on it.
                let start = (i - 1).saturating_sub(4);
                let mut phrase = w[start..i - 1].to_vec();
                let n = phrase.len();
                if n >= 2
                    && count(&phrase[n - 2]).is_some()
                    && ["day", "week", "month", "year"]
                        .contains(&phrase[n - 1].trim_end_matches('s'))
                {
                    phrase.push("ago".into());
                }
                for s in relative(&phrase, date, true, &vec![false; phrase.len()]) {
                    found = true;
                    push(&mut out, s);
                }
                if found {
                    used[start..i].iter_mut().for_each(|u| *u = true);
                }
            }
            used[i..i + len].iter_mut().for_each(|u| *u = true);
            if !found {
                push(
                    &mut out,
                    Span::days(date, date + Duration::days(1), w[i..i + len].join(" ")),
                );
            }
            i += len;
            continue;
        }
        if let Some((dates, len)) = yearless_date_at_word(&w, i, now) {
            for date in dates {
                push(
                    &mut out,
                    Span::days(date, date + Duration::days(1), w[i..i + len].join(" ")),
                );
            }
            used[i..i + len].iter_mut().for_each(|u| *u = true);
            i += len;
            continue;
        }
        // Month and year, no day: "June 2023", "June, 2023".
        if let (Some(m), Some(y)) = (
            month_number(&w[i]).filter(|_| i == 0 || day_number(&w[i - 1]).is_none()),
            w.get(i + 1).and_then(|x| year_number(x)),
        ) {
            if let Some(s) = month_start(y, m).and_then(|d| month_span(d, w[i..i + 2].join(" "))) {
                push(&mut out, s);
            }
            used[i] = true;
            used[i + 1] = true;
            i += 2;
            continue;
        }
        // A year alone: "in 2022", "the summer of 2022".
        if let Some(y) = year_number(&w[i]) {
            let before = if i > 0 { w[i - 1].as_str() } else { "" };
            let season_of = if before == "of" && i >= 2 {
                season(&w[i - 2])
            } else {
                season(before)
            };
            let s = match season_of {
                Some((first, months)) => {
                    let from = if before == "of" { i - 2 } else { i - 1 };
                    month_start(y, first).and_then(|d| {
                        Some(Span::days(
                            d,
                            months_from(d, months)?,
                            w[from..=i].join(" "),
                        ))
                    })
                }
                None => year_span(y, w[i].clone()),
            };
            if let Some(s) = s {
                push(&mut out, s);
            }
            let from = match season_of {
                Some(_) if before == "of" => i - 2,
                Some(_) => i - 1,
                None => i,
            };
            used[from..=i].iter_mut().for_each(|u| *u = true);
            i += 1;
            continue;
        }
        i += 1;
    }
    for s in relative(&w, now, false, &used) {
        push(&mut out, s);
    }
    out
}

fn push(out: &mut Vec<Span>, s: Span) {
    if s.from < s.to && !out.iter().any(|o| o.from == s.from && o.to == s.to) {
        out.push(s);
    }
}

/// Relative dates in `w`, resolved against `now`. `anchored`: the words
/// come before "before <date>", so "the week" means the week before.
/// `used`: words already read as (part of) a date.
fn relative(w: &[String], now: Date, anchored: bool, used: &[bool]) -> Vec<Span> {
    let mut out = Vec::new();
    for i in 0..w.len() {
        if used[i] {
            continue;
        }
        let word = w[i].as_str();
        let cue = Cue::at(w, i, anchored);
        let span = if let Some(s) = period(w, i, now, &cue) {
            Some(s)
        } else if let Some(d) = weekday(word) {
            named_weekday(word, d, now, &cue)
        } else if let Some((first, months)) = season(word) {
            named_season(w, i, first, months, now, &cue)
        } else if let Some(m) = month_number(word) {
            named_month(w, i, m, now, &cue)
        } else {
            None
        };
        if let Some(s) = span {
            out.push(s);
        }
    }
    out
}

/// The words around a relative date and which way they point.
struct Cue<'a> {
    prev: &'a str,
    next: &'a str,
    /// "last", "past" or "the … before": looks back.
    back: bool,
    /// "next": looks ahead.
    ahead: bool,
    /// "this".
    this: bool,
    /// The words come before "before <date>".
    anchored: bool,
}

impl<'a> Cue<'a> {
    fn at(w: &'a [String], i: usize, anchored: bool) -> Self {
        let prev = if i > 0 { w[i - 1].as_str() } else { "" };
        Cue {
            prev,
            next: w.get(i + 1).map(String::as_str).unwrap_or(""),
            back: matches!(prev, "last" | "past") || anchored,
            ahead: prev == "next" && !anchored,
            this: prev == "this" && !anchored,
            anchored,
        }
    }

    /// The phrase as said: the cue word and `word`.
    fn phrase(&self, word: &str) -> String {
        [self.prev, word].join(" ")
    }
}

/// Days, weeks, weekends, months and years named relative to `now`
/// ("yesterday", "last week", "this weekend", "next month", "two weeks
/// ago").
fn period(w: &[String], i: usize, now: Date, cue: &Cue<'_>) -> Option<Span> {
    let day = |n: i64| now + Duration::days(n);
    let word = w[i].as_str();
    let (prev, anchored) = (cue.prev, cue.anchored);
    let (back, ahead, this) = (cue.back, cue.ahead, cue.this);
    let weekend = |sat: Date| Span::days(sat, sat + Duration::days(2), cue.phrase(word));
    match word {
        "yesterday" => Some(Span::days(day(-1), now, word.into())),
        // "before today", "until today": everything up to now, no day.
        "today" | "tonight" if matches!(prev, "before" | "until" | "till") => None,
        "today" | "tonight" if !anchored => Some(Span::days(now, day(1), word.into())),
        "tomorrow" if !anchored => Some(Span::days(day(1), day(2), word.into())),
        "night" if prev == "last" => Some(Span::days(day(-1), now, "last night".into())),
        "day" if anchored && prev == "the" => Some(Span::days(day(-1), now, "the day".into())),
        "week" | "weekend" | "month" | "year" if cue.next == "ago" || cue.next == "before" => None,
        "week" if back => {
            let m = monday_of(now) - Duration::days(if anchored { 0 } else { 7 });
            // "the week before D": the seven days before D.
            let (from, to) = if anchored {
                (now - Duration::days(7), now)
            } else {
                (m, m + Duration::days(7))
            };
            Some(Span::days(from, to, cue.phrase(word)))
        }
        "week" if this => {
            let m = monday_of(now);
            Some(Span::days(m, m + Duration::days(7), cue.phrase(word)))
        }
        "week" if ahead => {
            let m = monday_of(now) + Duration::days(7);
            Some(Span::days(m, m + Duration::days(7), cue.phrase(word)))
        }
        "weekend" if back => Some(weekend(weekday_before(day(-1), Weekday::Saturday))),
        "weekend" if this || prev == "the" => Some(weekend(monday_of(now) + Duration::days(5))),
        "weekend" if ahead => Some(weekend(monday_of(now) + Duration::days(12))),
        "month" if back => months_from(now, -1).and_then(|d| month_span(d, cue.phrase(word))),
        "month" if this => months_from(now, 0).and_then(|d| month_span(d, cue.phrase(word))),
        "month" if ahead => months_from(now, 1).and_then(|d| month_span(d, cue.phrase(word))),
        "year" if back => year_span(now.year() - 1, cue.phrase(word)),
        "year" if this => year_span(now.year(), cue.phrase(word)),
        "year" if ahead => year_span(now.year() + 1, cue.phrase(word)),
        "ago" => ago(w, i, now),
        _ => None,
    }
}

/// "last Friday", "on Friday" (told after), "the Friday before D", "next
/// Friday"; a weekday without such a cue is no date.
fn named_weekday(word: &str, d: Weekday, now: Date, cue: &Cue<'_>) -> Option<Span> {
    let date = if cue.ahead {
        weekday_after(now, d)
    } else if cue.back || matches!(cue.prev, "on" | "the") {
        weekday_before(now, d)
    } else {
        return None;
    };
    Some(Span::days(date, date + Duration::days(1), cue.phrase(word)))
}

/// A season with a cue ("last summer", "in the spring"): the latest one
/// begun (or, looking back, ended; looking ahead, the next to begin). A
/// season followed by a year is read with the year.
fn named_season(
    w: &[String],
    i: usize,
    first: u8,
    months: i32,
    now: Date,
    cue: &Cue<'_>,
) -> Option<Span> {
    if w.get(i + 1).and_then(|x| year_number(x)).is_some() || cue.next == "of" {
        return None;
    }
    if !(cue.back || cue.ahead || cue.this || matches!(cue.prev, "the" | "in" | "during")) {
        return None;
    }
    let y = now.year();
    let starts: Vec<Date> = (y - 2..=y + 1)
        .filter_map(|y| month_start(y, first))
        .collect();
    let end = |d: Date| months_from(d, months);
    let chosen = if cue.ahead {
        starts.iter().copied().find(|d| *d > now)
    } else if cue.back {
        starts
            .iter()
            .copied()
            .rev()
            .find(|d| end(*d).is_some_and(|e| e <= now))
    } else {
        starts.iter().copied().rev().find(|d| *d <= now)
    };
    chosen.and_then(|d| Some(Span::days(d, end(d)?, cue.phrase(&w[i]))))
}

/// A month named alone: not "June 3", "3 June" or "June 2023" (read as
/// dates above), and "may" only as a month.
fn named_month(w: &[String], i: usize, m: u8, now: Date, cue: &Cue<'_>) -> Option<Span> {
    let word = w[i].as_str();
    let dated = w
        .get(i + 1)
        .is_some_and(|x| day_number(x).is_some() || year_number(x).is_some())
        || day_number(cue.prev).is_some();
    if dated || cue.anchored || (word == "may" && !BEFORE_A_MONTH.contains(&cue.prev)) {
        return None;
    }
    let y = now.year();
    let starts: Vec<Date> = (y - 1..=y + 1).filter_map(|y| month_start(y, m)).collect();
    let chosen = if cue.ahead {
        starts.iter().copied().find(|d| *d > now)
    } else if cue.prev == "last" {
        starts
            .iter()
            .copied()
            .rev()
            .find(|d| months_from(*d, 1).is_some_and(|e| e <= now))
    } else {
        starts.iter().copied().rev().find(|d| *d <= now)
    };
    chosen.and_then(|d| month_span(d, cue.phrase(word)))
}

/// "N units ago" ending at word `i` ("two weeks ago", "a few days ago",
/// "a couple of months ago").
fn ago(w: &[String], i: usize, now: Date) -> Option<Span> {
    let unit = w.get(i.checked_sub(1)?)?.trim_end_matches('s');
    let mut j = i.checked_sub(2)?;
    if w[j] == "of" {
        j = j.checked_sub(1)?;
    }
    let (n, vague) = count(&w[j])?;
    let said = w[j.saturating_sub(usize::from(j > 0 && w[j - 1] == "a"))..=i].join(" ");
    let around = |centre: Date, half: i64| {
        Span::days(
            centre - Duration::days(half),
            centre + Duration::days(half + 1),
            said.clone(),
        )
    };
    match unit {
        "day" => Some(around(now - Duration::days(n), vague.max(1))),
        "week" => Some(around(now - Duration::days(7 * n), 3 + 7 * vague)),
        "month" => {
            let from = months_from(now, -(n + vague) as i32)?;
            let to = months_from(now, -(n - vague) as i32 + 1)?;
            Some(Span::days(from, to, said))
        }
        "year" => {
            let from = month_start(now.year() - (n + vague) as i32, 1)?;
            let to = month_start(now.year() - (n - vague) as i32 + 1, 1)?;
            Some(Span::days(from, to, said))
        }
        _ => None,
    }
}

/// Whether the query asks when something happened ("When did…", "What
/// year…", "How long ago…"): its answer is a time, so evidence that states
/// one is what it needs.
pub fn asks_when(query: &str) -> bool {
    let w = words_of(query);
    let first = |a: &str, b: &str| w.windows(2).any(|p| p[0] == a && p[1] == b);
    w.iter().any(|x| x == "when")
        || first("what", "year")
        || first("what", "month")
        || first("what", "date")
        || first("which", "year")
        || first("which", "month")
        || (first("how", "long") && w.iter().any(|x| x == "ago"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(y: i32, m: u8, d: u8) -> i64 {
        midnight(Date::from_calendar_date(y, Month::try_from(m).unwrap(), d).unwrap())
            + 13 * 3_600_000
    }

    fn days(s: &Span) -> String {
        s.short()
    }

    fn got(text: &str, said: i64) -> Vec<String> {
        spans(text, said).iter().map(days).collect()
    }

    // 9 June 2023 was a Friday.
    const FRI_9_JUNE: (i32, u8, u8) = (2023, 6, 9);

    fn fri() -> i64 {
        at(FRI_9_JUNE.0, FRI_9_JUNE.1, FRI_9_JUNE.2)
    }

    #[test]
    fn relative_days_and_weeks_resolve_against_the_time_said() {
        assert_eq!(
            got("I went there yesterday", fri()),
            ["2023-06-08..2023-06-09"]
        );
        assert_eq!(
            got("We did that last week!", fri()),
            ["2023-05-29..2023-06-05"]
        );
        assert_eq!(
            got("last Friday was fun", fri()),
            ["2023-06-02..2023-06-03"]
        );
        assert_eq!(got("last weekend", fri()), ["2023-06-03..2023-06-05"]);
        assert_eq!(got("two days ago", fri()), ["2023-06-06..2023-06-09"]);
        assert_eq!(got("a few days ago", fri()), ["2023-06-05..2023-06-08"]);
        assert_eq!(got("next week", fri()), ["2023-06-12..2023-06-19"]);
    }

    #[test]
    fn months_years_and_seasons() {
        assert_eq!(got("last month", fri()), ["2023-05-01..2023-06-01"]);
        assert_eq!(got("last year", fri()), ["2022-01-01..2023-01-01"]);
        assert_eq!(got("in 2022", fri()), ["2022-01-01..2023-01-01"]);
        assert_eq!(got("in March 2023", fri()), ["2023-03-01..2023-04-01"]);
        // A month alone is the latest that began by then.
        assert_eq!(got("camping in June", fri()), ["2023-06-01..2023-07-01"]);
        assert_eq!(got("camping in July", fri()), ["2022-07-01..2022-08-01"]);
        assert_eq!(got("in May", fri()), ["2023-05-01..2023-06-01"]);
        assert!(got("I may go", fri()).is_empty());
        assert_eq!(got("last summer", fri()), ["2022-06-01..2022-09-01"]);
        assert_eq!(
            got("during the summer", at(2023, 10, 1)),
            ["2023-06-01..2023-09-01"]
        );
        assert_eq!(got("the summer of 2022", fri()), ["2022-06-01..2022-09-01"]);
        assert_eq!(got("10 years ago", fri()), ["2013-01-01..2014-01-01"]);
    }

    #[test]
    fn a_day_without_its_year_is_the_nearest_one() {
        // Said on Friday 9 June 2023.
        assert_eq!(
            got("I saw it on June 3rd", fri()),
            ["2023-06-03..2023-06-04"]
        );
        assert_eq!(
            got("my appointment on 3 July", fri()),
            ["2023-07-03..2023-07-04"]
        );
        assert_eq!(
            got("back on the 2nd of March", fri()),
            ["2023-03-02..2023-03-03"]
        );
        // The nearest: December 2023 is closer to June 2023 than December
        // 2022.
        assert_eq!(
            got("on the 2nd of December", fri()),
            ["2023-12-02..2023-12-03"]
        );
        assert_eq!(got("we met on May 30", fri()), ["2023-05-30..2023-05-31"]);
        // Numeric: month first and day first, both when both are dates.
        assert_eq!(got("the museum on 2/15", fri()), ["2023-02-15..2023-02-16"]);
        assert_eq!(
            got("the museum on 2/8", fri()),
            ["2023-02-08..2023-02-09", "2023-08-02..2023-08-03"]
        );
        assert_eq!(
            got("paid 6/1/2023", fri()),
            ["2023-06-01..2023-06-02", "2023-01-06..2023-01-07"]
        );
        // "before today" is everything up to now, not today.
        assert!(got("the airlines I flew before today", fri()).is_empty());
        assert!(got("until today", fri()).is_empty());
        assert_eq!(got("today I ran", fri()), ["2023-06-09..2023-06-10"]);
        // Half a cup, a score, "and/or": no date.
        assert!(got("add 1/2 cup of flour", fri()).is_empty());
        assert!(got("we won 3/1", fri()).is_empty());
        assert!(got("him and/or her", fri()).is_empty());
        assert!(got("I may 5 times", fri()).is_empty());
    }

    #[test]
    fn a_phrase_before_a_date_resolves_against_that_date() {
        let any = at(2024, 1, 1);
        assert_eq!(
            got("the week before 9 June 2023", any),
            ["2023-06-02..2023-06-09"]
        );
        // 15 July 2023 was a Saturday.
        assert_eq!(
            got("the Friday before 15 July 2023", any),
            ["2023-07-14..2023-07-15"]
        );
        assert_eq!(
            got("her puppy she got two weeks before August 11, 2023", any),
            ["2023-07-25..2023-08-01"]
        );
        assert_eq!(got("on 3 June, 2023", any), ["2023-06-03..2023-06-04"]);
        assert_eq!(got("on October 13, 2023", any), ["2023-10-13..2023-10-14"]);
    }

    #[test]
    fn a_turn_covers_a_question_span_by_when_it_was_said_or_what_it_states() {
        let q = &spans("What did Caroline do in early June 2023?", at(2023, 10, 1))[0];
        assert!(q.covers(at(2023, 6, 12), &[]));
        assert!(!q.covers(at(2023, 7, 12), &[]));
        // Said in July about "last month".
        assert!(q.covers(at(2023, 7, 12), &spans("last month I ran", at(2023, 7, 12))));
        assert!(!q.covers(at(2023, 7, 12), &spans("last week I ran", at(2023, 7, 12))));
    }

    #[test]
    fn questions_that_ask_when() {
        assert!(asks_when("When did Melanie run a charity race?"));
        assert!(asks_when("How long ago was Caroline's 18th birthday?"));
        assert!(asks_when("In what year did John get Max?"));
        assert!(!asks_when("What did Melanie paint?"));
        assert!(!asks_when("How long has Melanie been practicing art?"));
    }
}
