//! Placeholder while the real crate is built on its branch: the trait and
//! the hashing embedder only.

use thiserror::Error;

/// Why embedding failed.
#[derive(Debug, Error)]
pub enum EmbedError {
    /// Anything.
    #[error("{0}")]
    Other(String),
}

/// Turns texts into L2-normalised vectors.
pub trait Embedder: Send + Sync {
    /// Stable model id recorded with every vector.
    fn model_id(&self) -> &str;
    /// Vector length.
    fn dimension(&self) -> usize;
    /// One vector per text, in order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
}

/// Hashing embedder, for tests only.
pub mod hashing {
    use super::{EmbedError, Embedder};

    /// Feature hashing of words and character trigrams.
    pub struct HashingEmbedder {
        dim: usize,
        id: String,
    }

    impl HashingEmbedder {
        /// A hashing embedder of `dim` buckets.
        pub fn new(dim: usize) -> Self {
            HashingEmbedder {
                dim,
                id: format!("kith/hashing-v1-{dim}"),
            }
        }
    }

    fn fnv(s: &str) -> u64 {
        let mut h: u64 = 0xcbf29ce484222325;
        for b in s.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x100000001b3);
        }
        h
    }

    impl Embedder for HashingEmbedder {
        fn model_id(&self) -> &str {
            &self.id
        }
        fn dimension(&self) -> usize {
            self.dim
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            Ok(texts
                .iter()
                .map(|t| {
                    let mut v = vec![0f32; self.dim];
                    let lower = t.to_lowercase();
                    for w in lower.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
                        let h = fnv(w);
                        let sign = if h & 1 == 0 { 1.0 } else { -1.0 };
                        v[(h >> 1) as usize % self.dim] += sign;
                    }
                    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                    if n > 0.0 {
                        v.iter_mut().for_each(|x| *x /= n);
                    }
                    v
                })
                .collect())
        }
    }
}
