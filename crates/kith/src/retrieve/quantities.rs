//! Questions that ask for a figure ("How many plants did I get?", "How
//! much did I spend on the bike in total?") are answered by turns that
//! state one: "I picked up three succulents", "the helmet was $75". Such a
//! turn often shares few words with the question, and a turn that talks
//! about the same thing without a figure ("I love my plants") ranks as well
//! or better. For these questions, turns that state a quantity are
//! multiplied by `1 + weights.quantity` ([`boost_stated_quantities`]) —
//! the same idea as the boost for turns that state a time when the question
//! asks when (`when.rs`), smaller, as most turns state some number.

use super::fusion::PathWeights;
use super::paths::words;
use super::pool::Pool;

/// Words that spell a number. "one" is left out: it is a pronoun far more
/// often than a count ("the blue one").
const NUMBER_WORDS: &[&str] = &[
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
    "thirty",
    "forty",
    "fifty",
    "sixty",
    "seventy",
    "eighty",
    "ninety",
    "hundred",
    "thousand",
    "million",
    "dozen",
    "twice",
    "thrice",
    "half",
    "couple",
];

/// Whether `query` asks for a count or an amount: "how many", "how much",
/// or a total ("in total", "altogether", "combined", "the number of").
pub fn asks_for_quantity(query: &str) -> bool {
    let w = words(query);
    let pair = |a: &str, b: &str| w.windows(2).any(|p| p[0] == a && p[1] == b);
    pair("how", "many")
        || pair("how", "much")
        || pair("number", "of")
        || pair("in", "all")
        || w.iter()
            .any(|x| matches!(x.as_str(), "total" | "altogether" | "combined" | "sum"))
}

/// The first figure `text` states: a word holding a digit, or a number
/// word ([`NUMBER_WORDS`]).
pub fn stated_quantity(text: &str) -> Option<String> {
    words(text)
        .into_iter()
        .find(|w| w.chars().any(|c| c.is_ascii_digit()) || NUMBER_WORDS.contains(&w.as_str()))
}

/// For a query that asks for a quantity ([`asks_for_quantity`]): boosts
/// every candidate that states one by `1 + weights.quantity`, the reason
/// naming the figure. Does nothing when the weight is 0.
pub fn boost_stated_quantities(query: &str, weights: &PathWeights, pool: &mut Pool) {
    if weights.quantity <= 0.0 || !asks_for_quantity(query) {
        return;
    }
    pool.boost_each("states_a_quantity", 1.0 + weights.quantity, |c| {
        let figure = stated_quantity(&c.hit.content)?;
        Some(format!(
            "the query asks for a quantity; this says \"{figure}\""
        ))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_amounts_and_totals_ask_for_a_quantity() {
        for q in [
            "How many plants did I buy?",
            "How much did I spend on the bike?",
            "What is the total I raised for charity?",
            "How many hours did I practise in all?",
            "What was the number of guests at the wedding?",
        ] {
            assert!(asks_for_quantity(q), "{q}");
        }
        for q in [
            "Where does Maya work now?",
            "What did I buy for my mother?",
            "How did the trip go?",
            "Which allotment did I pick?",
        ] {
            assert!(!asks_for_quantity(q), "{q}");
        }
    }

    #[test]
    fn digits_and_number_words_are_figures_and_one_is_not() {
        assert_eq!(
            stated_quantity("the helmet was $75, a steal").as_deref(),
            Some("75")
        );
        assert_eq!(
            stated_quantity("I picked up three succulents").as_deref(),
            Some("three")
        );
        assert_eq!(
            stated_quantity("We went twice last year").as_deref(),
            Some("twice")
        );
        assert_eq!(stated_quantity("I love the blue one"), None);
        assert_eq!(stated_quantity("Someone said it was fine"), None);
    }
}
