//! all-MiniLM-L6-v2 on CPU: locate, load and run.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

use crate::bert::{Bert, BertConfig, Scratch};
use crate::safetensors::SafeTensors;
use crate::tokenizer::WordPieceTokenizer;
use crate::{l2_normalize, EmbedError, Embedder};

/// The model id recorded with every MiniLM vector.
pub const MINILM_MODEL_ID: &str = "sentence-transformers/all-MiniLM-L6-v2";

/// The dimension of MiniLM vectors.
pub const MINILM_DIMENSION: usize = 384;

/// Environment variable naming a model directory, searched after the
/// explicit one.
pub const MODEL_DIR_ENV: &str = "KITH_EMBEDDING_MODEL_DIR";

/// Environment variable choosing the precision [`MiniLm::open`] runs in.
pub const PRECISION_ENV: &str = "KITH_EMBEDDING_PRECISION";

/// Environment variable capping the threads [`MiniLm::open`] embeds with.
pub const THREADS_ENV: &str = "KITH_EMBEDDING_THREADS";

/// The name of the model's directory under `…/kith/models/`.
pub const MODEL_DIR_NAME: &str = "all-MiniLM-L6-v2";

/// The files a model directory must hold to count as installed.
pub const REQUIRED_FILES: [&str; 3] = ["model.safetensors", "config.json", "vocab.txt"];

/// How many texts go through the encoder together. Large enough that the
/// dense layers are efficient matrix products, small enough that the
/// working memory stays a few MB per thread.
pub const BATCH_SIZE: usize = 32;

/// The arithmetic of the encoder's dense layers (almost all of its work).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Precision {
    /// 32-bit floats: the model as published.
    #[default]
    F32,
    /// 8-bit integer weights (per output row) and activations (per token),
    /// rescaled to f32 after each product: about 3.5× the throughput on
    /// CPUs with AVX-512 VNNI, vectors within a cosine of 0.99 of f32's (attention,
    /// layer norms and pooling stay f32). The model id does not change:
    /// int8 and f32 vectors are close enough to be compared.
    Int8,
}

impl Precision {
    /// What [`MiniLm::open`] runs in unless told otherwise: int8 where the
    /// CPU has the instructions that make it fast (AVX-512 VNNI), f32
    /// elsewhere (int8's portable path is correct but slower than f32).
    /// int8 is the default because it keeps both of its bars: vectors
    /// within a cosine of 0.99 of f32's and LoCoMo recall within 0.005
    /// (BENCHMARKS.md).
    pub fn preferred() -> Precision {
        if crate::quant::fast_on_this_cpu() {
            Precision::Int8
        } else {
            Precision::F32
        }
    }

    /// Parses `f32` or `int8`.
    pub fn parse(text: &str) -> Option<Precision> {
        match text.trim().to_ascii_lowercase().as_str() {
            "f32" => Some(Precision::F32),
            "int8" => Some(Precision::Int8),
            _ => None,
        }
    }

    /// `f32` or `int8`.
    pub fn as_str(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::Int8 => "int8",
        }
    }
}

/// all-MiniLM-L6-v2, loaded and ready to embed.
///
/// Loading reads about 90 MB of weights; keep one `MiniLm` and share it
/// (it is `Send + Sync`, and `embed` takes `&self`).
pub struct MiniLm {
    dir: PathBuf,
    tokenizer: WordPieceTokenizer,
    bert: Bert,
    threads: usize,
    precision: Precision,
}

impl std::fmt::Debug for MiniLm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MiniLm")
            .field("dir", &self.dir)
            .field("threads", &self.threads)
            .field("precision", &self.precision)
            .finish_non_exhaustive()
    }
}

impl MiniLm {
    /// The default model directory: `models/all-MiniLM-L6-v2` in kith's
    /// cache ([`kith_fetch::cache_root`]: `$KITH_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/kith`, else `$HOME/.cache/kith`); `None` when none of
    /// those variables is set.
    pub fn default_dir() -> Option<PathBuf> {
        Some(
            kith_fetch::cache_root()?
                .join("models")
                .join(MODEL_DIR_NAME),
        )
    }

    /// Whether `dir` holds every file of [`REQUIRED_FILES`].
    pub fn is_installed(dir: &Path) -> bool {
        REQUIRED_FILES.iter().all(|f| dir.join(f).is_file())
    }

    /// Finds the model directory: `explicit`, then `$KITH_EMBEDDING_MODEL_DIR`,
    /// then [`MiniLm::default_dir`]; the first that [`MiniLm::is_installed`]
    /// wins. Otherwise [`EmbedError::ModelMissing`] lists the places searched
    /// and says how to install the model.
    pub fn locate(explicit: Option<&Path>) -> Result<PathBuf, EmbedError> {
        let mut searched = Vec::new();
        if let Some(dir) = explicit {
            searched.push(dir.to_path_buf());
        }
        if let Some(dir) = env::var_os(MODEL_DIR_ENV).filter(|v| !v.is_empty()) {
            searched.push(PathBuf::from(dir));
        }
        if let Some(dir) = Self::default_dir() {
            searched.push(dir);
        }
        match searched.iter().find(|d| Self::is_installed(d)) {
            Some(dir) => Ok(dir.clone()),
            None => Err(EmbedError::ModelMissing { searched }),
        }
    }

    /// [`MiniLm::locate`] then [`MiniLm::load`], with the precision and
    /// thread count the environment asks for: `$KITH_EMBEDDING_PRECISION`
    /// (`f32` or `int8`, see [`Precision`]; default
    /// [`Precision::preferred`]) and
    /// `$KITH_EMBEDDING_THREADS` (default: every core). A value that does
    /// not parse is an error, not a silent default.
    pub fn open(explicit: Option<&Path>) -> Result<Self, EmbedError> {
        let precision = match env::var(PRECISION_ENV) {
            Ok(v) if !v.trim().is_empty() => Precision::parse(&v).ok_or_else(|| {
                EmbedError::Config(format!("{PRECISION_ENV}={v:?}: use f32 or int8"))
            })?,
            _ => Precision::preferred(),
        };
        let threads = match env::var(THREADS_ENV) {
            Ok(v) if !v.trim().is_empty() => match v.trim().parse::<usize>() {
                Ok(n) if n > 0 => Some(n),
                _ => {
                    return Err(EmbedError::Config(format!(
                        "{THREADS_ENV}={v:?}: use a whole number of threads, at least 1"
                    )))
                }
            },
            _ => None,
        };
        let mut model = Self::load(&Self::locate(explicit)?)?.with_precision(precision);
        if let Some(n) = threads {
            model = model.with_threads(n);
        }
        Ok(model)
    }

    /// Loads the model from a directory holding `model.safetensors`,
    /// `config.json` and `vocab.txt` (and optionally `tokenizer.json`, whose
    /// normaliser settings are honoured).
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let started = std::time::Instant::now();
        let config_path = dir.join("config.json");
        let config_text = fs::read_to_string(&config_path)
            .map_err(|e| EmbedError::io("cannot read", &config_path, e))?;
        let config = BertConfig::from_json(&config_path, &config_text)?;
        let weights_path = dir.join("model.safetensors");
        let bert = Bert::load(config, &SafeTensors::read(&weights_path)?)?;
        if bert.hidden() != MINILM_DIMENSION {
            return Err(EmbedError::bad_file(
                &config_path,
                format!(
                    "hidden_size is {}, all-MiniLM-L6-v2 has {MINILM_DIMENSION}",
                    bert.hidden()
                ),
            ));
        }
        let max_len = WordPieceTokenizer::DEFAULT_MAX_LEN.min(bert.max_positions());
        let tokenizer = WordPieceTokenizer::from_dir(dir)?.with_max_len(max_len);
        let threads = thread::available_parallelism().map_or(1, |n| n.get());
        tracing::debug!(
            dir = %dir.display(),
            ms = started.elapsed().as_millis() as u64,
            "loaded MiniLM"
        );
        Ok(MiniLm {
            dir: dir.to_path_buf(),
            tokenizer,
            bert,
            threads,
            precision: Precision::F32,
        })
    }

    /// Switches the dense layers to `precision` (int8 quantises the loaded
    /// f32 weights, once; going back to f32 needs a fresh load).
    pub fn with_precision(mut self, precision: Precision) -> Self {
        if precision == Precision::Int8 && self.precision == Precision::F32 {
            self.bert.quantise();
            self.precision = Precision::Int8;
        }
        self
    }

    /// The precision the dense layers run in.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// Sets how many threads `embed` may use (at least 1; the default is
    /// the number of cores).
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    /// The directory the model was loaded from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The tokenizer, e.g. to count tokens.
    pub fn tokenizer(&self) -> &WordPieceTokenizer {
        &self.tokenizer
    }

    /// Embeds one batch of token sequences: one normalised vector each.
    fn run_batch(
        &self,
        batch: &[Vec<u32>],
        scratch: &mut Scratch,
        pooled: &mut Vec<f32>,
    ) -> Vec<Vec<f32>> {
        let h = self.bert.hidden();
        pooled.resize(batch.len() * h, 0.0);
        self.bert.forward_mean_pooled(batch, scratch, pooled);
        pooled
            .chunks_exact(h)
            .map(|v| {
                let mut v = v.to_vec();
                l2_normalize(&mut v);
                v
            })
            .collect()
    }
}

impl Embedder for MiniLm {
    fn model_id(&self) -> &str {
        MINILM_MODEL_ID
    }

    fn dimension(&self) -> usize {
        MINILM_DIMENSION
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<Vec<u32>> = texts.iter().map(|t| self.tokenizer.encode(t)).collect();
        // Batches are packed (no padding), so sorting is not about padding:
        // texts of similar length in one batch make batches cost about the
        // same, which keeps the threads evenly loaded.
        let mut order: Vec<usize> = (0..ids.len()).collect();
        order.sort_by_key(|&i| ids[i].len());
        let sorted: Vec<Vec<u32>> = order.iter().map(|&i| ids[i].clone()).collect();
        // With fewer texts than BATCH_SIZE per thread, smaller batches keep
        // every thread busy (a packed batch of 16 texts is still hundreds
        // of rows, enough for efficient products).
        let per_thread = sorted.len().div_ceil(self.threads);
        let batches: Vec<&[Vec<u32>]> = sorted.chunks(BATCH_SIZE.min(per_thread)).collect();

        let workers = self.threads.min(batches.len());
        let mut results: Vec<Vec<Vec<f32>>> = vec![Vec::new(); batches.len()];
        if workers <= 1 {
            let (mut scratch, mut pooled) = (Scratch::default(), Vec::new());
            for (slot, batch) in results.iter_mut().zip(&batches) {
                *slot = self.run_batch(batch, &mut scratch, &mut pooled);
            }
        } else {
            // Each worker takes the next batch until none is left, longest
            // first, so the batch that finishes last is a short one.
            let next = AtomicUsize::new(0);
            let done: Vec<Vec<(usize, Vec<Vec<f32>>)>> = thread::scope(|s| {
                let handles: Vec<_> = (0..workers)
                    .map(|_| {
                        s.spawn(|| {
                            let (mut scratch, mut pooled) = (Scratch::default(), Vec::new());
                            let mut mine = Vec::new();
                            loop {
                                let k = next.fetch_add(1, Ordering::Relaxed);
                                if k >= batches.len() {
                                    break mine;
                                }
                                let b = batches.len() - 1 - k;
                                let vectors = self.run_batch(batches[b], &mut scratch, &mut pooled);
                                mine.push((b, vectors));
                            }
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("an embedding worker panicked"))
                    .collect()
            });
            for (b, vectors) in done.into_iter().flatten() {
                results[b] = vectors;
            }
        }

        let mut out = vec![Vec::new(); texts.len()];
        for (&i, v) in order.iter().zip(results.into_iter().flatten()) {
            out[i] = v;
        }
        Ok(out)
    }
}
