//! `kith bench latency --derived-vectors N`: realistic corpus vectors for
//! packs far bigger than the model can embed here (MiniLM does ~90 texts a
//! second on two cores: a million would take three hours).
//!
//! The first `N` messages are embedded by the model (or come from
//! `--embedding-cache`): they are the *basis*, real sentence embeddings
//! with the neighbourhood structure of real text. Each later message gets a
//! mix of basis vectors chosen by a generator seeded from its number:
//! `normalise(a + w·b + noise)` with `a`, `b` two basis vectors, `w` in
//! [0.15, 0.6) and Gaussian noise of norm ~0.15. So the big corpus is made
//! of paraphrase-like neighbourhoods around real sentences and blends
//! between them, not uniform random vectors (which have no neighbourhoods:
//! they make an index look both worse and better than on real text).
//! Queries are never derived: they are embedded live by the model.

use std::sync::{Arc, Mutex};

use kith::embed::EmbedError;
use kith::rng::Rng;
use kith::Embedder;

/// Embeds the first `base` messages with the model, derives the rest.
pub struct DerivedEmbedder {
    inner: Arc<dyn Embedder>,
    base: usize,
    basis: Mutex<Vec<Vec<f32>>>,
}

impl DerivedEmbedder {
    /// Messages numbered below `base` go to `inner`.
    pub fn new(inner: Arc<dyn Embedder>, base: usize) -> Self {
        DerivedEmbedder {
            inner,
            base: base.max(2),
            basis: Mutex::new(Vec::new()),
        }
    }
}

/// The message number of a `bench latency` text (`… (note N)`).
fn number(text: &str) -> Option<usize> {
    let start = text.rfind("(note ")? + "(note ".len();
    text[start..].strip_suffix(')')?.parse().ok()
}

/// A derived vector for message `i` from `basis`.
pub fn derive(basis: &[Vec<f32>], i: usize) -> Vec<f32> {
    let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15 ^ (i as u64).wrapping_mul(0x2545_f491));
    let a = &basis[rng.below(basis.len())];
    let b = &basis[rng.below(basis.len())];
    let w = 0.15 + 0.45 * (rng.signed_unit() * 0.5 + 0.5);
    let sigma = 0.15 / (a.len() as f32).sqrt();
    let mut v: Vec<f32> = a
        .iter()
        .zip(b)
        .map(|(x, y)| {
            // Sum of four uniforms: close enough to Gaussian for noise.
            let g: f32 = (0..4).map(|_| rng.signed_unit()).sum::<f32>() * 0.866;
            x + w * y + sigma * g
        })
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

impl Embedder for DerivedEmbedder {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn dimension(&self) -> usize {
        self.inner.dimension()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let numbers: Vec<Option<usize>> = texts.iter().map(|t| number(t)).collect();
        // Basis messages (and any text that is not a numbered message, like
        // a query) go to the model, in one call.
        let direct: Vec<&str> = texts
            .iter()
            .zip(&numbers)
            .filter(|(_, n)| n.is_none_or(|n| n < self.base))
            .map(|(t, _)| *t)
            .collect();
        let mut embedded = if direct.is_empty() {
            Vec::new()
        } else {
            self.inner.embed(&direct)?
        }
        .into_iter();
        let mut basis = self.basis.lock().expect("basis lock");
        let mut out = Vec::with_capacity(texts.len());
        for n in &numbers {
            match n {
                Some(n) if *n >= self.base && !basis.is_empty() => out.push(derive(&basis, *n)),
                Some(n) if *n >= self.base => {
                    return Err(EmbedError::Config(format!(
                        "message {n} is derived from the first {} messages' vectors, but none were embedded first",
                        self.base
                    )))
                }
                _ => {
                    let v = embedded.next().expect("one vector per direct text");
                    if n.is_some_and(|n| n < self.base) {
                        basis.push(v.clone());
                    }
                    out.push(v);
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_numbers_are_read_and_derived_vectors_are_unit_and_near_their_basis() {
        assert_eq!(number("So, I went hiking (note 1234)"), Some(1234));
        assert_eq!(number("When did Maya say they went hiking?"), None);
        let basis: Vec<Vec<f32>> = (0..50)
            .map(|i| {
                let mut v = vec![0f32; 64];
                v[i % 64] = 1.0;
                v
            })
            .collect();
        let v = derive(&basis, 77);
        assert!((v.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-4);
        assert_eq!(v, derive(&basis, 77));
        // Its nearest basis vector is close: a blend, not noise.
        let best = basis
            .iter()
            .map(|b| b.iter().zip(&v).map(|(x, y)| x * y).sum::<f32>())
            .fold(f32::MIN, f32::max);
        assert!(best > 0.8, "{best}");
    }
}
