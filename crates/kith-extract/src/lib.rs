//! kith's extraction layer: what a provider must return, the providers, and
//! the grounding rules that decide which extracted claims survive.
//!
//! - [`schema`]: the extraction response schema ([`Extraction`]) and its
//!   strict parser, with a typed error for each way a reply can be wrong.
//! - [`provider`]: the [`Provider`] trait and its input and reply types.
//! - [`heuristic`]: the offline extractor, the default when no LLM is set.
//! - [`openai`]: any OpenAI-compatible chat completions endpoint.
//! - `replay` (cargo feature `replay-server`, tests only): a real local HTTP server that replays recorded replies, for
//!   tests of the HTTP path.
//! - [`grounding`]: quote, mention and reference checks (pure functions).
//! - [`bounds`]: how much one reply may write (caps, duplicate claims,
//!   ungrounded entities, entity names).
//! - [`lexicon`]: words that look like names but name nobody (demonyms,
//!   diets, moods).
//!
//! Architecture invariant: nothing here touches the store. Providers take a
//! message and give an extraction; grounding takes both and gives decisions.

pub mod bounds;
pub mod clauses;
pub mod error;
pub mod grounding;
pub mod heuristic;
pub mod lexicon;
pub mod openai;
pub mod prompt;
pub mod pronoun;
pub mod provider;
pub mod quotes;
#[cfg(feature = "replay-server")]
pub mod replay;
pub mod reported;
pub mod schema;
mod tokens;

pub use error::ExtractError;
pub use provider::{ExtractionInput, Provider, ProviderReply};
pub use schema::{
    ExtractedEntity, ExtractedFact, ExtractedRelationship, Extraction, FactType, Polarity,
    TemporalIntent,
};
