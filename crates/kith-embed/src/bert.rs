//! The BERT encoder forward pass on CPU, for inference only.
//!
//! A batch is *packed*: the tokens of all its sequences are stacked into one
//! `tokens × hidden` matrix with no padding. The dense layers (which are
//! almost all of the work) run as one `sgemm` over every token of the batch,
//! and attention runs per sequence over that sequence's own rows. This gives
//! exactly what BERT with padding and an attention mask gives (a masked key
//! gets softmax weight 0 there), without spending work on padding.

use std::path::Path;

use matrixmultiply::sgemm;

use crate::activation;
use crate::quant::{QuantLinear, QuantScratch};
use crate::safetensors::SafeTensors;
use crate::EmbedError;

/// The hyper-parameters of a BERT model, from its `config.json`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BertConfig {
    pub vocab_size: usize,
    pub hidden: usize,
    pub layers: usize,
    pub heads: usize,
    pub intermediate: usize,
    pub max_positions: usize,
    pub type_vocab_size: usize,
    pub layer_norm_eps: f32,
}

impl BertConfig {
    /// Parses a HuggingFace BERT `config.json`.
    pub fn from_json(path: &Path, text: &str) -> Result<Self, EmbedError> {
        let bad = |reason: String| EmbedError::bad_file(path, reason);
        let json: serde_json::Value =
            serde_json::from_str(text).map_err(|e| bad(format!("not JSON: {e}")))?;
        let int = |key: &str| {
            json[key].as_u64().map(|v| v as usize).ok_or_else(|| {
                bad(format!(
                    "has no integer \"{key}\" (is it a BERT config.json? a flattened \
                     install may have overwritten it with 1_Pooling/config.json)"
                ))
            })
        };
        if let Some(act) = json["hidden_act"].as_str() {
            if act != "gelu" {
                return Err(bad(format!(
                    "hidden_act is \"{act}\", only \"gelu\" is supported"
                )));
            }
        }
        if let Some(kind) = json["position_embedding_type"].as_str() {
            if kind != "absolute" {
                return Err(bad(format!(
                    "position_embedding_type is \"{kind}\", only \"absolute\" is supported"
                )));
            }
        }
        let config = BertConfig {
            vocab_size: int("vocab_size")?,
            hidden: int("hidden_size")?,
            layers: int("num_hidden_layers")?,
            heads: int("num_attention_heads")?,
            intermediate: int("intermediate_size")?,
            max_positions: int("max_position_embeddings")?,
            type_vocab_size: int("type_vocab_size")?,
            layer_norm_eps: json["layer_norm_eps"].as_f64().unwrap_or(1e-12) as f32,
        };
        if config.heads == 0 || !config.hidden.is_multiple_of(config.heads) {
            return Err(bad(format!(
                "hidden_size {} is not a multiple of num_attention_heads {}",
                config.hidden, config.heads
            )));
        }
        Ok(config)
    }
}

/// A dense layer `y = x Wᵀ + b`, with `W` stored `out × in` as PyTorch does.
struct Linear {
    weight: Vec<f32>,
    bias: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

impl Linear {
    fn load(
        st: &SafeTensors,
        prefix: &str,
        outputs: usize,
        inputs: usize,
    ) -> Result<Self, EmbedError> {
        Ok(Linear {
            weight: st
                .tensor(&format!("{prefix}.weight"), &[outputs, inputs])?
                .data,
            bias: st.tensor(&format!("{prefix}.bias"), &[outputs])?.data,
            inputs,
            outputs,
        })
    }

    /// Stacks several layers with the same input into one, so one `sgemm`
    /// computes them all (query, key and value).
    fn concat(parts: Vec<Linear>) -> Linear {
        let inputs = parts[0].inputs;
        let mut out = Linear {
            weight: Vec::new(),
            bias: Vec::new(),
            inputs,
            outputs: 0,
        };
        for p in parts {
            assert_eq!(p.inputs, inputs, "stacked layers must share their input");
            out.weight.extend_from_slice(&p.weight);
            out.bias.extend_from_slice(&p.bias);
            out.outputs += p.outputs;
        }
        out
    }

    /// `y[rows × outputs] = x[rows × inputs] Wᵀ + b`.
    fn forward(&self, x: &[f32], rows: usize, y: &mut [f32]) {
        // The unsafe sgemm below relies on these lengths: checked always
        // (three comparisons per layer call, nothing beside the product).
        assert!(
            x.len() >= rows * self.inputs
                && y.len() >= rows * self.outputs
                && self.weight.len() >= self.inputs * self.outputs
                && self.bias.len() == self.outputs,
            "dense layer called with slices shorter than its shape"
        );
        // Start from the bias and accumulate into it (beta = 1).
        for row in y[..rows * self.outputs].chunks_exact_mut(self.outputs) {
            row.copy_from_slice(&self.bias);
        }
        let (k, n) = (self.inputs, self.outputs);
        if rows <= SMALL_ROWS && small::linear(x, rows, k, &self.weight, n, y) {
            return;
        }
        // SAFETY: x holds rows×k values with row stride k; W is n×k so Wᵀ is
        // read with row stride 1 and column stride k; y holds rows×n values
        // with row stride n. The assert at the top checked every length.
        unsafe {
            sgemm(
                rows,
                k,
                n,
                1.0,
                x.as_ptr(),
                k as isize,
                1,
                self.weight.as_ptr(),
                1,
                k as isize,
                1.0,
                y.as_mut_ptr(),
                n as isize,
                1,
            );
        }
    }
}

/// Up to this many rows (tokens), a dense layer uses [`small::linear`]
/// instead of `sgemm`: with so few rows, `sgemm`'s copying ("packing") of
/// the whole weight matrix costs as much as the arithmetic.
const SMALL_ROWS: usize = 24;

/// A dense-layer kernel for few rows that reads the weights in place.
mod small {
    /// Adds `x Wᵀ` to `y` (which holds the bias) for `rows` rows, if this
    /// CPU has AVX2 and FMA and the sizes suit the kernel; returns whether
    /// it did.
    pub(super) fn linear(
        x: &[f32],
        rows: usize,
        k: usize,
        w: &[f32],
        n: usize,
        y: &mut [f32],
    ) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            if k.is_multiple_of(8)
                && n.is_multiple_of(4)
                && x.len() >= rows * k
                && w.len() >= n * k
                && y.len() >= rows * n
                && std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                // SAFETY: the features were detected just above and the
                // slice lengths checked.
                unsafe { avx::linear(x, rows, k, w, n, y) };
                return true;
            }
        }
        let _ = (x, rows, k, w, n, y);
        false
    }

    #[cfg(target_arch = "x86_64")]
    mod avx {
        use std::arch::x86_64::*;

        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn hsum(v: __m256) -> f32 {
            let s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
            let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
            let s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
            _mm_cvtss_f32(s)
        }

        /// Blocks of 4 weight rows (outputs) × 2 input rows: 8 running
        /// sums, 6 loads per 8 multiply-adds. The 4 weight rows stay in L1
        /// while every input row passes over them, so each weight is read
        /// from memory once per call.
        #[target_feature(enable = "avx2,fma")]
        pub(super) unsafe fn linear(
            x: &[f32],
            rows: usize,
            k: usize,
            w: &[f32],
            n: usize,
            y: &mut [f32],
        ) {
            let (xp, wp, yp) = (x.as_ptr(), w.as_ptr(), y.as_mut_ptr());
            for j in (0..n).step_by(4) {
                let wr = [
                    wp.add(j * k),
                    wp.add((j + 1) * k),
                    wp.add((j + 2) * k),
                    wp.add((j + 3) * k),
                ];
                let mut r = 0;
                while r < rows {
                    let pair = r + 1 < rows;
                    let xa = xp.add(r * k);
                    // A lone last row reads itself twice and keeps one result.
                    let xb = if pair { xp.add((r + 1) * k) } else { xa };
                    let mut acc = [_mm256_setzero_ps(); 8];
                    let mut kk = 0;
                    while kk < k {
                        let a = _mm256_loadu_ps(xa.add(kk));
                        let b = _mm256_loadu_ps(xb.add(kk));
                        for c in 0..4 {
                            let wv = _mm256_loadu_ps(wr[c].add(kk));
                            acc[c] = _mm256_fmadd_ps(a, wv, acc[c]);
                            acc[4 + c] = _mm256_fmadd_ps(b, wv, acc[4 + c]);
                        }
                        kk += 8;
                    }
                    for c in 0..4 {
                        *yp.add(r * n + j + c) += hsum(acc[c]);
                        if pair {
                            *yp.add((r + 1) * n + j + c) += hsum(acc[4 + c]);
                        }
                    }
                    r += 2;
                }
            }
        }
    }
}

/// A dense layer in either precision.
enum Dense {
    F32(Linear),
    Int8(QuantLinear),
}

impl Dense {
    fn forward(&self, x: &[f32], rows: usize, y: &mut [f32], q: &mut QuantScratch) {
        match self {
            Dense::F32(l) => l.forward(x, rows, y),
            Dense::Int8(l) => l.forward(x, rows, y, q),
        }
    }

    /// The int8 version of an f32 layer (a layer whose shape does not pack
    /// stays f32).
    fn quantised(self) -> Dense {
        match self {
            Dense::F32(l) if QuantLinear::fits(l.inputs, l.outputs) => {
                Dense::Int8(QuantLinear::new(&l.weight, &l.bias, l.inputs, l.outputs))
            }
            other => other,
        }
    }
}

struct LayerNorm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
    eps: f32,
}

impl LayerNorm {
    fn load(st: &SafeTensors, prefix: &str, size: usize, eps: f32) -> Result<Self, EmbedError> {
        Ok(LayerNorm {
            gamma: st.tensor(&format!("{prefix}.weight"), &[size])?.data,
            beta: st.tensor(&format!("{prefix}.bias"), &[size])?.data,
            eps,
        })
    }

    /// Normalises every row of `x` in place.
    fn apply(&self, x: &mut [f32]) {
        let n = self.gamma.len();
        for row in x.chunks_exact_mut(n) {
            let mean = row.iter().sum::<f32>() / n as f32;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n as f32;
            let inv = 1.0 / (var + self.eps).sqrt();
            for ((v, g), b) in row.iter_mut().zip(&self.gamma).zip(&self.beta) {
                *v = (*v - mean) * inv * g + b;
            }
        }
    }
}

struct EncoderLayer {
    qkv: Dense,
    attention_out: Dense,
    attention_norm: LayerNorm,
    intermediate: Dense,
    output: Dense,
    output_norm: LayerNorm,
}

/// A BERT encoder with its weights.
pub(crate) struct Bert {
    config: BertConfig,
    word: Vec<f32>,
    position: Vec<f32>,
    token_type: Vec<f32>,
    embedding_norm: LayerNorm,
    layers: Vec<EncoderLayer>,
}

/// Working memory for one batch, kept between batches so the hot loop does
/// not allocate.
#[derive(Default)]
pub(crate) struct Scratch {
    x: Vec<f32>,
    qkv: Vec<f32>,
    context: Vec<f32>,
    tmp: Vec<f32>,
    inner: Vec<f32>,
    scores: Vec<f32>,
    quant: QuantScratch,
}

impl Bert {
    /// Loads the weights from safetensors (names with or without a `bert.`
    /// prefix) for the given config.
    pub fn load(config: BertConfig, st: &SafeTensors) -> Result<Self, EmbedError> {
        let p = if st.names().iter().any(|n| n.starts_with("bert.")) {
            "bert."
        } else {
            ""
        };
        let (h, i, eps) = (config.hidden, config.intermediate, config.layer_norm_eps);
        let mut layers = Vec::with_capacity(config.layers);
        for l in 0..config.layers {
            let lp = format!("{p}encoder.layer.{l}");
            layers.push(EncoderLayer {
                qkv: Dense::F32(Linear::concat(vec![
                    Linear::load(st, &format!("{lp}.attention.self.query"), h, h)?,
                    Linear::load(st, &format!("{lp}.attention.self.key"), h, h)?,
                    Linear::load(st, &format!("{lp}.attention.self.value"), h, h)?,
                ])),
                attention_out: Dense::F32(Linear::load(
                    st,
                    &format!("{lp}.attention.output.dense"),
                    h,
                    h,
                )?),
                attention_norm: LayerNorm::load(
                    st,
                    &format!("{lp}.attention.output.LayerNorm"),
                    h,
                    eps,
                )?,
                intermediate: Dense::F32(Linear::load(
                    st,
                    &format!("{lp}.intermediate.dense"),
                    i,
                    h,
                )?),
                output: Dense::F32(Linear::load(st, &format!("{lp}.output.dense"), h, i)?),
                output_norm: LayerNorm::load(st, &format!("{lp}.output.LayerNorm"), h, eps)?,
            });
        }
        Ok(Bert {
            word: st
                .tensor(
                    &format!("{p}embeddings.word_embeddings.weight"),
                    &[config.vocab_size, h],
                )?
                .data,
            position: st
                .tensor(
                    &format!("{p}embeddings.position_embeddings.weight"),
                    &[config.max_positions, h],
                )?
                .data,
            token_type: st
                .tensor(
                    &format!("{p}embeddings.token_type_embeddings.weight"),
                    &[config.type_vocab_size, h],
                )?
                .data,
            embedding_norm: LayerNorm::load(st, &format!("{p}embeddings.LayerNorm"), h, eps)?,
            layers,
            config,
        })
    }

    /// Replaces every dense layer of the encoder by its int8 version
    /// (embeddings, layer norms and attention stay f32).
    pub fn quantise(&mut self) {
        for layer in &mut self.layers {
            for dense in [
                &mut layer.qkv,
                &mut layer.attention_out,
                &mut layer.intermediate,
                &mut layer.output,
            ] {
                let f32_layer = std::mem::replace(
                    dense,
                    Dense::F32(Linear {
                        weight: Vec::new(),
                        bias: Vec::new(),
                        inputs: 0,
                        outputs: 0,
                    }),
                );
                *dense = f32_layer.quantised();
            }
        }
    }

    /// The hidden size (the dimension of the pooled vectors).
    pub fn hidden(&self) -> usize {
        self.config.hidden
    }

    /// The longest sequence the position embeddings allow.
    pub fn max_positions(&self) -> usize {
        self.config.max_positions
    }

    /// Runs the encoder over `sequences` (token ids, `[CLS]`/`[SEP]`
    /// included, each at most `max_positions` long and not empty) and
    /// writes the mean of each sequence's last hidden states into `pooled`
    /// (`sequences.len() × hidden`), not normalised.
    pub fn forward_mean_pooled(
        &self,
        sequences: &[Vec<u32>],
        scratch: &mut Scratch,
        pooled: &mut [f32],
    ) {
        let h = self.config.hidden;
        let total: usize = sequences.iter().map(Vec::len).sum();
        let longest = sequences.iter().map(Vec::len).max().unwrap_or(0);
        debug_assert!(longest <= self.config.max_positions);
        let resize = |v: &mut Vec<f32>, n: usize| {
            if v.len() < n {
                v.resize(n, 0.0);
            }
        };
        resize(&mut scratch.x, total * h);
        resize(&mut scratch.qkv, total * 3 * h);
        resize(&mut scratch.context, total * h);
        resize(&mut scratch.tmp, total * h);
        resize(&mut scratch.inner, total * self.config.intermediate);
        resize(&mut scratch.scores, longest * longest);

        // Embeddings: word + position + token type 0, then LayerNorm.
        let x = &mut scratch.x[..total * h];
        let mut row = 0;
        for seq in sequences {
            for (pos, &id) in seq.iter().enumerate() {
                let id = (id as usize).min(self.config.vocab_size - 1);
                let out = &mut x[row * h..(row + 1) * h];
                let w = &self.word[id * h..(id + 1) * h];
                let p = &self.position[pos * h..(pos + 1) * h];
                let t = &self.token_type[..h];
                for j in 0..h {
                    out[j] = w[j] + p[j] + t[j];
                }
                row += 1;
            }
        }
        self.embedding_norm.apply(x);

        for layer in &self.layers {
            self.layer_forward(layer, sequences, total, scratch);
        }

        // Mean pooling over each sequence's tokens (all are real tokens).
        let mut row = 0;
        for (s, seq) in sequences.iter().enumerate() {
            let out = &mut pooled[s * h..(s + 1) * h];
            out.fill(0.0);
            for r in row..row + seq.len() {
                for (o, v) in out.iter_mut().zip(&scratch.x[r * h..(r + 1) * h]) {
                    *o += v;
                }
            }
            let inv = 1.0 / seq.len() as f32;
            out.iter_mut().for_each(|o| *o *= inv);
            row += seq.len();
        }
    }

    fn layer_forward(
        &self,
        layer: &EncoderLayer,
        sequences: &[Vec<u32>],
        total: usize,
        s: &mut Scratch,
    ) {
        let h = self.config.hidden;
        let heads = self.config.heads;
        let dh = h / heads;
        let scale = 1.0 / (dh as f32).sqrt();
        // The attention's unsafe sgemm calls below read and write whole
        // sequences through raw pointers: the buffers must hold them all.
        let longest = sequences.iter().map(Vec::len).max().unwrap_or(0);
        assert!(
            s.qkv.len() >= total * 3 * h
                && s.context.len() >= total * h
                && s.scores.len() >= longest * longest
                && sequences.iter().map(Vec::len).sum::<usize>() == total,
            "attention scratch smaller than the batch"
        );
        layer.qkv.forward(&s.x, total, &mut s.qkv, &mut s.quant);

        let mut r0 = 0;
        for seq in sequences {
            let len = seq.len();
            let scores = &mut s.scores[..len * len];
            for head in 0..heads {
                let q = s.qkv[r0 * 3 * h + head * dh..].as_ptr();
                let k = s.qkv[r0 * 3 * h + h + head * dh..].as_ptr();
                let v = s.qkv[r0 * 3 * h + 2 * h + head * dh..].as_ptr();
                // SAFETY: rows r0..r0+len of qkv exist (3h values each), and
                // each head reads dh columns inside its own third; scores is
                // len×len; context rows r0..r0+len exist (h values each).
                unsafe {
                    // scores = scale · Q Kᵀ
                    sgemm(
                        len,
                        dh,
                        len,
                        scale,
                        q,
                        (3 * h) as isize,
                        1,
                        k,
                        1,
                        (3 * h) as isize,
                        0.0,
                        scores.as_mut_ptr(),
                        len as isize,
                        1,
                    );
                }
                for row in scores.chunks_exact_mut(len) {
                    activation::softmax_in_place(row);
                }
                unsafe {
                    // context = softmax(scores) V
                    sgemm(
                        len,
                        len,
                        dh,
                        1.0,
                        scores.as_ptr(),
                        len as isize,
                        1,
                        v,
                        (3 * h) as isize,
                        1,
                        0.0,
                        s.context[r0 * h + head * dh..].as_mut_ptr(),
                        h as isize,
                        1,
                    );
                }
            }
            r0 += len;
        }

        layer
            .attention_out
            .forward(&s.context, total, &mut s.tmp, &mut s.quant);
        add_assign(&mut s.x[..total * h], &s.tmp[..total * h]);
        layer.attention_norm.apply(&mut s.x[..total * h]);

        let inner = &mut s.inner[..total * self.config.intermediate];
        layer.intermediate.forward(&s.x, total, inner, &mut s.quant);
        activation::gelu_in_place(inner);
        layer.output.forward(inner, total, &mut s.tmp, &mut s.quant);
        add_assign(&mut s.x[..total * h], &s.tmp[..total * h]);
        layer.output_norm.apply(&mut s.x[..total * h]);
    }
}

fn add_assign(x: &mut [f32], y: &[f32]) {
    for (a, b) in x.iter_mut().zip(y) {
        *a += b;
    }
}

/// The plain softmax, kept as the reference for [`activation`]'s.
#[cfg(test)]
fn softmax(row: &mut [f32]) {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for v in row.iter_mut() {
        *v = (*v - max).exp();
        sum += *v;
    }
    let inv = 1.0 / sum;
    row.iter_mut().for_each(|v| *v *= inv);
}

/// GELU in its exact erf form, as HuggingFace's "gelu": the reference for
/// [`activation`]'s vectorised one.
#[cfg(test)]
fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// erf by Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7, under
/// f32's resolution near 1), since std has no erf.
#[cfg(test)]
fn erf(x: f32) -> f32 {
    const P: f32 = 0.327_591_1;
    const A: [f32; 5] = [
        0.254_829_6,
        -0.284_496_74,
        1.421_413_8,
        -1.453_152_1,
        1.061_405_4,
    ];
    let sign = x.signum();
    let x = x.abs();
    let t = 1.0 / (1.0 + P * x);
    let poly = t * (A[0] + t * (A[1] + t * (A[2] + t * (A[3] + t * A[4]))));
    sign * (1.0 - poly * (-x * x).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_matches_known_values() {
        // Values from tables of erf.
        for (x, want) in [
            (0.0f32, 0.0f32),
            (0.5, 0.520_499_9),
            (1.0, 0.842_700_8),
            (2.0, 0.995_322_3),
            (-1.0, -0.842_700_8),
            (4.0, 0.999_999_98),
        ] {
            assert!(
                (erf(x) - want).abs() < 3e-7,
                "erf({x}) = {} not {want}",
                erf(x)
            );
        }
        assert!((gelu(1.0) - 0.841_344_7).abs() < 1e-6);
    }

    #[test]
    fn vectorised_activations_match_the_plain_ones() {
        let mut xs: Vec<f32> = (-800..=800).map(|i| i as f32 / 100.0).collect();
        let want: Vec<f32> = xs.iter().map(|&x| gelu(x)).collect();
        activation::gelu_in_place(&mut xs);
        for (g, w) in xs.iter().zip(&want) {
            assert!((g - w).abs() < 1e-6, "{g} vs {w}");
        }
        let mut a = [0.1f32, -3.0, 2.5, 0.0, 7.0];
        let mut b = a;
        softmax(&mut a);
        activation::softmax_in_place(&mut b);
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() < 1e-6);
        }
    }

    #[test]
    fn softmax_sums_to_one() {
        let mut row = [1.0, 2.0, 3.0, 1000.0];
        softmax(&mut row);
        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(row[3] > 0.999);
    }

    #[test]
    fn small_kernel_agrees_with_sgemm() {
        let (k, n) = (24, 12);
        let lin = Linear {
            weight: (0..n * k)
                .map(|i| ((i * 37 % 101) as f32 - 50.0) / 50.0)
                .collect(),
            bias: (0..n).map(|i| i as f32 * 0.1).collect(),
            inputs: k,
            outputs: n,
        };
        // Odd and even row counts, and one past the small-kernel limit.
        for rows in [1, 2, 5, SMALL_ROWS + 1] {
            let x: Vec<f32> = (0..rows * k)
                .map(|i| ((i * 53 % 89) as f32 - 44.0) / 44.0)
                .collect();
            let mut fast = vec![0.0; rows * n];
            lin.forward(&x, rows, &mut fast);
            for r in 0..rows {
                for j in 0..n {
                    let want: f32 = lin.bias[j]
                        + (0..k)
                            .map(|i| x[r * k + i] * lin.weight[j * k + i])
                            .sum::<f32>();
                    assert!(
                        (fast[r * n + j] - want).abs() < 1e-4,
                        "rows {rows} r {r} j {j}"
                    );
                }
            }
        }
    }

    #[test]
    fn linear_is_x_w_transpose_plus_b() {
        // W is 2×3 (out × in), x is 2×3.
        let lin = Linear {
            weight: vec![1.0, 0.0, 2.0, 0.0, 1.0, -1.0],
            bias: vec![0.5, -0.5],
            inputs: 3,
            outputs: 2,
        };
        let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let mut y = [0.0; 4];
        lin.forward(&x, 2, &mut y);
        assert_eq!(y, [7.5, -1.5, 16.5, -1.5]);
    }
}
