//! A feature-hashing embedder, for tests only.

use crate::{l2_normalize, EmbedError, Embedder};

/// Embeds text by hashing lower-cased word unigrams and character trigrams
/// (of each word, with `^`/`$` marking its ends) into `dim` signed buckets,
/// then L2-normalising.
///
/// **For tests only.** It captures spelling overlap, not meaning, so it is
/// never used as a silent fallback when a real model is missing: callers
/// must choose it explicitly. Its output is deterministic across runs and
/// platforms (FNV-1a hashing, no random seed). A text with no words embeds
/// to the zero vector. Model id: `kith/hashing-v1-{dim}`.
#[derive(Debug, Clone)]
pub struct HashingEmbedder {
    dim: usize,
    model_id: String,
}

impl HashingEmbedder {
    /// A hashing embedder with `dim` buckets (at least 1).
    pub fn new(dim: usize) -> Self {
        let dim = dim.max(1);
        HashingEmbedder {
            dim,
            model_id: format!("kith/hashing-v1-{dim}"),
        }
    }

    /// The (normalised) vector of one text.
    pub fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0.0f32; self.dim];
        let lower = text.to_lowercase();
        let mut chars = Vec::new();
        for word in lower
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            self.add(&mut v, b'w', word.as_bytes(), 1.0);
            chars.clear();
            chars.push('^');
            chars.extend(word.chars());
            chars.push('$');
            let mut buf = [0u8; 12];
            for tri in chars.windows(3) {
                let mut n = 0;
                for c in tri {
                    n += c.encode_utf8(&mut buf[n..]).len();
                }
                self.add(&mut v, b'c', &buf[..n], 0.5);
            }
        }
        l2_normalize(&mut v);
        v
    }

    fn add(&self, v: &mut [f32], kind: u8, feature: &[u8], weight: f32) {
        let h = fnv1a(kind, feature);
        let bucket = (h % self.dim as u64) as usize;
        // The top bit picks the sign, so collisions tend to cancel out
        // instead of piling up.
        let sign = if h >> 63 == 0 { 1.0 } else { -1.0 };
        v[bucket] += sign * weight;
    }
}

/// 64-bit FNV-1a of `kind` followed by `bytes`; the kind byte keeps words
/// and trigrams in separate hash spaces.
fn fnv1a(kind: u8, bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in std::iter::once(&kind).chain(bytes) {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

impl Embedder for HashingEmbedder {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dimension(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|t| self.embed_one(t)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cosine;

    #[test]
    fn deterministic_and_normalised() {
        let e = HashingEmbedder::new(256);
        assert_eq!(e.model_id(), "kith/hashing-v1-256");
        assert_eq!(e.dimension(), 256);
        let a = e
            .embed(&["Alice moved to Lisbon", "Alice moved to Lisbon"])
            .unwrap();
        assert_eq!(a[0], a[1]);
        assert_eq!(
            a[0],
            HashingEmbedder::new(256).embed_one("alice MOVED to lisbon!")
        );
        let norm: f32 = a[0].iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5);
        assert!(e.embed_one("  ...  ").iter().all(|&x| x == 0.0));
        // The hash is FNV-1a (published test vectors): it must never change,
        // or vectors stored by tests would silently stop matching.
        assert_eq!(fnv1a(b'a', b""), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b'f', b"oobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn similar_texts_are_closer() {
        let e = HashingEmbedder::new(512);
        let v = e
            .embed(&[
                "Alice moved to Lisbon in 2020",
                "Alice moved to Lisbon last year",
                "The quarterly revenue report is late",
            ])
            .unwrap();
        assert!(cosine(&v[0], &v[1]) > cosine(&v[0], &v[2]) + 0.3);
    }
}
