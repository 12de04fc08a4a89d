//! The provider trait: a message in, an extraction out.

use kith_core::{Role, Timestamp};

use crate::error::ExtractError;
use crate::schema::Extraction;

/// The message to extract from, with what a provider may use to read it.
#[derive(Debug, Clone, Copy)]
pub struct ExtractionInput<'a> {
    /// The message text, exactly as stored.
    pub content: &'a str,
    /// Who produced it.
    pub role: Role,
    /// The named speaker, when known.
    pub speaker: Option<&'a str>,
    /// When it was said, when known.
    pub event_time: Option<Timestamp>,
}

/// What a provider returns.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderReply {
    /// The parsed extraction.
    pub extraction: Extraction,
    /// The reply text the extraction was parsed from (saved with it).
    pub raw: String,
    /// The provider's name (`heuristic`, `openai-compatible`).
    pub provider: String,
    /// The model that answered (the heuristic's version for the heuristic).
    pub model: String,
    /// HTTP calls made (retries included); 0 for offline providers.
    pub calls: u32,
}

/// Something that reads a message and returns entities, facts and
/// relationships in the [`Extraction`] schema.
pub trait Provider: Send + Sync {
    /// The provider's name, as recorded with every extraction.
    fn name(&self) -> &str;

    /// The model (or rule set version) recorded with every extraction.
    fn model(&self) -> &str;

    /// Extracts from one message.
    fn extract(&self, input: &ExtractionInput<'_>) -> Result<ProviderReply, ExtractError>;

    /// True for a fast, offline provider that may run inside a store
    /// transaction (the heuristic). A remote provider is called outside any
    /// transaction, and its reply is saved before anything else happens.
    fn is_local(&self) -> bool {
        false
    }

    /// The longest one call of [`Provider::extract`] or
    /// [`Provider::resolve_pronouns`] can take, every timeout, retry and
    /// backoff included; `None` when it has no bound worth stating (a local
    /// provider). The engine sizes its work-item lease from it, so a second
    /// process never takes over an extraction that is still running.
    fn worst_case(&self) -> Option<std::time::Duration> {
        None
    }

    /// Pronoun repair: who the third-person pronouns of `request` refer to.
    /// `Ok(None)` when the provider cannot answer such questions (the
    /// heuristic); then nothing is repaired.
    fn resolve_pronouns(
        &self,
        request: &crate::pronoun::PronounRequest<'_>,
    ) -> Result<Option<crate::pronoun::PronounReply>, ExtractError> {
        let _ = request;
        Ok(None)
    }
}
