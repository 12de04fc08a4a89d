//! The embedding set-ups `kith bench ingest --embeddings` compares side by
//! side: `none`, `hashing-N`, and MiniLM as `minilm[:f32|:int8][:tN][:bg]`
//! (precision, embedding threads, background embedding), e.g.
//! `minilm:f32:t1,minilm:f32:t2,minilm:int8,minilm:int8:bg`.

use std::sync::Arc;

use anyhow::{bail, Context, Result};
use kith::embed::{MiniLm, Precision};
use kith::embedding::EmbeddingSpec;
use kith::Embedder;

/// One embedding set-up of a benchmark run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variant {
    /// As given on the command line (the row's label).
    pub label: String,
    kind: Kind,
    /// Acknowledge stores before their vectors exist.
    pub background: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    Spec(EmbeddingSpec),
    MiniLm {
        precision: Precision,
        threads: Option<usize>,
    },
}

impl Variant {
    /// Parses one variant (see the module docs).
    pub fn parse(text: &str) -> Result<Variant> {
        let label = text.trim().to_string();
        let mut parts = label.split(':');
        let head = parts.next().unwrap_or_default();
        let mut background = false;
        let kind = if head.eq_ignore_ascii_case("minilm") {
            let (mut precision, mut threads) = (Precision::F32, None);
            for p in parts {
                if let Some(n) = p.strip_prefix('t') {
                    let n: usize = n
                        .parse()
                        .ok()
                        .filter(|n| *n > 0)
                        .with_context(|| format!("{label:?}: threads as t1, t2, …"))?;
                    threads = Some(n);
                } else if p == "bg" {
                    background = true;
                } else if let Some(pr) = Precision::parse(p) {
                    precision = pr;
                } else {
                    bail!("{label:?}: unknown part {p:?} (f32, int8, tN, bg)");
                }
            }
            Kind::MiniLm { precision, threads }
        } else {
            for p in parts {
                match p {
                    "bg" => background = true,
                    _ => bail!("{label:?}: only MiniLM takes {p:?}"),
                }
            }
            Kind::Spec(EmbeddingSpec::parse(head)?)
        };
        Ok(Variant {
            label,
            kind,
            background,
        })
    }

    /// Loads the embedder (`None` for `none`).
    pub fn load(&self) -> Result<Option<Arc<dyn Embedder>>> {
        Ok(match &self.kind {
            Kind::Spec(spec) => spec.load()?,
            Kind::MiniLm { precision, threads } => {
                crate::retrieve::ensure_minilm()?;
                let mut m = MiniLm::load(&MiniLm::locate(None)?)?.with_precision(*precision);
                if let Some(n) = threads {
                    m = m.with_threads(*n);
                }
                Some(Arc::new(m))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_parse_and_bad_ones_are_refused() {
        let v = Variant::parse("minilm:int8:t1:bg").unwrap();
        assert_eq!(
            v.kind,
            Kind::MiniLm {
                precision: Precision::Int8,
                threads: Some(1)
            }
        );
        assert!(v.background);
        let v = Variant::parse("minilm").unwrap();
        assert_eq!(
            v.kind,
            Kind::MiniLm {
                precision: Precision::F32,
                threads: None
            }
        );
        assert!(!v.background);
        assert_eq!(
            Variant::parse("hashing-64:bg").unwrap().kind,
            Kind::Spec(EmbeddingSpec::Hashing(64))
        );
        assert_eq!(
            Variant::parse("none").unwrap().kind,
            Kind::Spec(EmbeddingSpec::None)
        );
        for bad in ["minilm:t0", "minilm:fp16", "none:int8", "bert"] {
            assert!(Variant::parse(bad).is_err(), "{bad}");
        }
    }
}
