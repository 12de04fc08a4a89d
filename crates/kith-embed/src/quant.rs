//! Dense layers in 8-bit integers: the int8 forward pass's matrix products.
//!
//! Weights are quantised once, at load, symmetrically per output row
//! (`w ≈ sw[j] · q[j][k]`, `q` in −127..=127). Activations are quantised
//! as each layer runs, per input row (per token), so one token with large
//! values does not flatten every other token's, and *asymmetrically*
//! (`x ≈ sx[r] · (u[r][k] − z[r])`, `u` in 0..=255, `z` the row's zero
//! point): the inputs of the last dense layer come out of GELU, almost all
//! above −0.17, and a symmetric range would waste half its levels there.
//! The product `x Wᵀ` is then an integer dot product rescaled by
//! `sx[r] · sw[j]`, after taking out `z[r] · Σ_k q[j][k]`.
//!
//! The CPU instruction that makes this fast (`VPDPBUSD`, AVX-512 VNNI)
//! multiplies *unsigned* by signed bytes: exactly `u` by `q`.
//!
//! Weights are packed for that instruction: for each group of 16 outputs,
//! for each run of 4 inputs, 16 × 4 bytes (64 bytes, one register), so one
//! instruction adds 4 products to each of 16 outputs.

/// Whether int8 products run on the fast kernel here (else one product
/// at a time).
pub(crate) fn fast_on_this_cpu() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        vnni::available()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Outputs per packed group (one 512-bit register of `i32` sums).
const GROUP: usize = 16;
/// Inputs per packed step (bytes one `i32` lane multiplies at a time).
const STEP: usize = 4;

/// A dense layer `y = x Wᵀ + b` with int8 weights.
pub(crate) struct QuantLinear {
    /// `outputs/16 × inputs/4 × 16 × 4` bytes (see the module docs).
    packed: Vec<i8>,
    /// Per output: the weight scale.
    scale: Vec<f32>,
    /// Per output: `Σ_k q[j][k]`, times a row's zero point the part of
    /// the integer product to take back out.
    wsum: Vec<i32>,
    bias: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

/// Working memory for quantised activations, reused between calls.
#[derive(Default)]
pub(crate) struct QuantScratch {
    x: Vec<u8>,
    scale: Vec<f32>,
    zero: Vec<i32>,
}

impl QuantLinear {
    /// Whether a layer of this shape can be quantised (the packing needs
    /// whole groups and steps).
    pub fn fits(inputs: usize, outputs: usize) -> bool {
        inputs > 0 && outputs > 0 && inputs.is_multiple_of(STEP) && outputs.is_multiple_of(GROUP)
    }

    /// Quantises `weight` (`outputs × inputs`, row-major, as PyTorch stores
    /// it). Callers check [`QuantLinear::fits`] first.
    pub fn new(weight: &[f32], bias: &[f32], inputs: usize, outputs: usize) -> Self {
        assert!(Self::fits(inputs, outputs) && weight.len() == inputs * outputs);
        let mut q = vec![0i8; inputs * outputs];
        let mut scale = vec![0.0f32; outputs];
        let mut wsum = vec![0i32; outputs];
        for j in 0..outputs {
            let row = &weight[j * inputs..(j + 1) * inputs];
            let s = quantise_row(row, &mut q[j * inputs..(j + 1) * inputs]);
            scale[j] = s;
            wsum[j] = q[j * inputs..(j + 1) * inputs]
                .iter()
                .map(|&v| v as i32)
                .sum::<i32>();
        }
        let steps = inputs / STEP;
        let mut packed = vec![0i8; inputs * outputs];
        for j in 0..outputs {
            let (g, o) = (j / GROUP, j % GROUP);
            for k in 0..inputs {
                let (c, t) = (k / STEP, k % STEP);
                packed[((g * steps + c) * GROUP + o) * STEP + t] = q[j * inputs + k];
            }
        }
        QuantLinear {
            packed,
            scale,
            wsum,
            bias: bias.to_vec(),
            inputs,
            outputs,
        }
    }

    /// `y[rows × outputs] = x[rows × inputs] Wᵀ + b`, approximately.
    pub fn forward(&self, x: &[f32], rows: usize, y: &mut [f32], s: &mut QuantScratch) {
        let (k, n) = (self.inputs, self.outputs);
        assert!(
            x.len() >= rows * k && y.len() >= rows * n,
            "int8 dense layer called with slices shorter than its shape"
        );
        if s.x.len() < rows * k {
            s.x.resize(rows * k, 0);
        }
        s.scale.clear();
        s.zero.clear();
        for (r, row) in x[..rows * k].chunks_exact(k).enumerate() {
            let out = &mut s.x[r * k..(r + 1) * k];
            let (scale, zero) = quantise_activations(row, out);
            s.scale.push(scale);
            s.zero.push(zero);
        }
        let y = &mut y[..rows * n];
        #[cfg(target_arch = "x86_64")]
        {
            if vnni::available() {
                // SAFETY: the CPU features were detected just above; the
                // kernel reads rows×k activation bytes, the packed weights
                // (k×n bytes) and writes rows×n outputs, every length
                // checked at the top of this function or by construction.
                unsafe { vnni::matmul(self, &s.x[..rows * k], &s.scale, &s.zero, rows, y) };
                return;
            }
        }
        self.matmul_portable(&s.x[..rows * k], &s.scale, &s.zero, rows, y);
    }

    /// The same arithmetic as the VNNI kernel, one product at a time: for
    /// CPUs without it (and to check it in tests).
    fn matmul_portable(&self, xq: &[u8], xs: &[f32], xz: &[i32], rows: usize, y: &mut [f32]) {
        let (k, n, steps) = (self.inputs, self.outputs, self.inputs / STEP);
        for r in 0..rows {
            let xr = &xq[r * k..(r + 1) * k];
            for j in 0..n {
                let (g, o) = (j / GROUP, j % GROUP);
                let mut acc = 0i32;
                for c in 0..steps {
                    let w = &self.packed[((g * steps + c) * GROUP + o) * STEP..][..STEP];
                    for t in 0..STEP {
                        acc += xr[c * STEP + t] as i32 * w[t] as i32;
                    }
                }
                y[r * n + j] =
                    (acc - xz[r] * self.wsum[j]) as f32 * xs[r] * self.scale[j] + self.bias[j];
            }
        }
    }
}

/// Quantises one weight row symmetrically; returns its scale.
fn quantise_row(row: &[f32], out: &mut [i8]) -> f32 {
    let max = row.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    if max == 0.0 {
        out.fill(0);
        return 0.0;
    }
    let inv = 127.0 / max;
    for (o, v) in out.iter_mut().zip(row) {
        *o = (v * inv).round().clamp(-127.0, 127.0) as i8;
    }
    max / 127.0
}

/// The scale and zero point of one activation row: its range widened to
/// hold 0, in 255 steps (a zero range quantises to all zeros).
fn range_params(lo: f32, hi: f32) -> Option<(f32, f32)> {
    let (lo, hi) = (lo.min(0.0), hi.max(0.0));
    let scale = (hi - lo) / 255.0;
    if scale > 0.0 && scale.is_finite() {
        Some((scale, (-lo / scale).round()))
    } else {
        None
    }
}

/// Quantises one activation row (see the module docs); returns its scale
/// and zero point.
fn quantise_activations(row: &[f32], out: &mut [u8]) -> (f32, i32) {
    #[cfg(target_arch = "x86_64")]
    {
        if vnni::available() {
            // SAFETY: AVX-512 F was detected (with VNNI).
            return unsafe { vnni::quantise_activations(row, out) };
        }
    }
    quantise_activations_plain(row, out)
}

fn quantise_activations_plain(row: &[f32], out: &mut [u8]) -> (f32, i32) {
    let lo = row.iter().fold(0.0f32, |m, v| m.min(*v));
    let hi = row.iter().fold(0.0f32, |m, v| m.max(*v));
    let Some((scale, zero)) = range_params(lo, hi) else {
        out[..row.len()].fill(0);
        return (0.0, 0);
    };
    let inv = 1.0 / scale;
    for (o, v) in out.iter_mut().zip(row) {
        *o = (v * inv + zero).round().clamp(0.0, 255.0) as u8;
    }
    (scale, zero as i32)
}

#[cfg(target_arch = "x86_64")]
mod vnni {
    use super::{QuantLinear, GROUP, STEP};
    use std::arch::x86_64::*;

    /// Rows per block: each row's four bytes are broadcast once per step
    /// and reused for every group of the block.
    const ROWS: usize = 4;
    /// Groups per block: 4 rows × 4 groups = 16 accumulators, half the
    /// registers, and each step loads 4 weight registers for 16 products.
    const GROUPS: usize = 4;

    /// Whether this CPU has what the kernel uses (checked once; the answer
    /// does not change while the process runs).
    pub(super) fn available() -> bool {
        static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *HAS.get_or_init(|| {
            is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx512bw")
                && is_x86_feature_detected!("avx512vnni")
        })
    }

    /// [`super::quantise_activations`] 16 values at a time (the plain loop
    /// does not vectorise well: a rounding call and a cast per value).
    ///
    /// # Safety
    /// The CPU must have AVX-512 F; `out` is at least as long as `row`.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn quantise_activations(row: &[f32], out: &mut [u8]) -> (f32, i32) {
        assert!(out.len() >= row.len());
        let n = row.len() / 16 * 16;
        let p = row.as_ptr();
        let (mut lo, mut hi) = (_mm512_setzero_ps(), _mm512_setzero_ps());
        for i in (0..n).step_by(16) {
            let v = _mm512_loadu_ps(p.add(i));
            lo = _mm512_min_ps(lo, v);
            hi = _mm512_max_ps(hi, v);
        }
        let lo = row[n..]
            .iter()
            .fold(_mm512_reduce_min_ps(lo), |m, v| m.min(*v));
        let hi = row[n..]
            .iter()
            .fold(_mm512_reduce_max_ps(hi), |m, v| m.max(*v));
        let Some((scale, zero)) = super::range_params(lo, hi) else {
            out[..row.len()].fill(0);
            return (0.0, 0);
        };
        let inv = _mm512_set1_ps(1.0 / scale);
        let z = _mm512_set1_ps(zero);
        let (floor, o) = (_mm512_setzero_si512(), out.as_mut_ptr());
        for i in (0..n).step_by(16) {
            // Rounds to nearest (the default rounding mode), keeps at
            // least 0, then narrows with unsigned saturation (at most 255).
            let v = _mm512_cvtps_epi32(_mm512_fmadd_ps(_mm512_loadu_ps(p.add(i)), inv, z));
            let bytes = _mm512_cvtusepi32_epi8(_mm512_max_epi32(v, floor));
            _mm_storeu_si128(o.add(i) as *mut __m128i, bytes);
        }
        let inv = 1.0 / scale;
        for (o, v) in out[n..row.len()].iter_mut().zip(&row[n..]) {
            *o = (v * inv + zero).round().clamp(0.0, 255.0) as u8;
        }
        (scale, zero as i32)
    }

    /// `y = dequantise(xq · Wqᵀ) + b` over every block of rows and groups.
    ///
    /// # Safety
    /// The CPU must have AVX-512 F, BW and VNNI; `xq` holds `rows × inputs`
    /// bytes, `xs` `rows` scales and `y` `rows × outputs` values.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub(super) unsafe fn matmul(
        l: &QuantLinear,
        xq: &[u8],
        xs: &[f32],
        xz: &[i32],
        rows: usize,
        y: &mut [f32],
    ) {
        let groups = l.outputs / GROUP;
        let mut g = 0;
        while g < groups {
            let gn = GROUPS.min(groups - g);
            let mut r = 0;
            while r < rows {
                let rn = ROWS.min(rows - r);
                // The common case (full blocks) gets fully unrolled loops.
                match (rn, gn) {
                    (4, 4) => block::<4, 4>(l, xq, xs, xz, y, r, g),
                    (3, 4) => block::<3, 4>(l, xq, xs, xz, y, r, g),
                    (2, 4) => block::<2, 4>(l, xq, xs, xz, y, r, g),
                    (1, 4) => block::<1, 4>(l, xq, xs, xz, y, r, g),
                    (rn, gn) => {
                        for rr in r..r + rn {
                            for gg in g..g + gn {
                                block::<1, 1>(l, xq, xs, xz, y, rr, gg);
                            }
                        }
                    }
                }
                r += rn;
            }
            g += gn;
        }
    }

    /// `R` rows from `r0` × `G` groups from `g0`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    unsafe fn block<const R: usize, const G: usize>(
        l: &QuantLinear,
        xq: &[u8],
        xs: &[f32],
        xz: &[i32],
        y: &mut [f32],
        r0: usize,
        g0: usize,
    ) {
        let (k, n) = (l.inputs, l.outputs);
        let steps = k / STEP;
        let mut acc = [[_mm512_setzero_si512(); G]; R];
        let xp = xq.as_ptr();
        let wp = l.packed.as_ptr();
        for c in 0..steps {
            let mut w = [_mm512_setzero_si512(); G];
            for (gi, wv) in w.iter_mut().enumerate() {
                *wv = _mm512_loadu_si512(
                    wp.add(((g0 + gi) * steps + c) * GROUP * STEP) as *const __m512i
                );
            }
            for (ri, a) in acc.iter_mut().enumerate() {
                let four = (xp.add((r0 + ri) * k + c * STEP) as *const i32).read_unaligned();
                let xb = _mm512_set1_epi32(four);
                for gi in 0..G {
                    a[gi] = _mm512_dpbusd_epi32(a[gi], xb, w[gi]);
                }
            }
        }
        for (ri, a) in acc.iter().enumerate() {
            let r = r0 + ri;
            let sx = _mm512_set1_ps(xs[r]);
            let zero = _mm512_set1_epi32(xz[r]);
            for (gi, sum) in a.iter().enumerate() {
                let j = (g0 + gi) * GROUP;
                let wsum = _mm512_loadu_si512(l.wsum.as_ptr().add(j) as *const __m512i);
                let shift = _mm512_mullo_epi32(zero, wsum);
                let sw = _mm512_loadu_ps(l.scale.as_ptr().add(j));
                let b = _mm512_loadu_ps(l.bias.as_ptr().add(j));
                let v = _mm512_cvtepi32_ps(_mm512_sub_epi32(*sum, shift));
                let out = _mm512_fmadd_ps(v, _mm512_mul_ps(sx, sw), b);
                _mm512_storeu_ps(y.as_mut_ptr().add(r * n + j), out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn activation_quantisation_round_trips_within_half_a_step() {
        // A GELU-like row (mostly positive) and a symmetric one, of a
        // length with a tail past the 16-lane loop.
        for row in [
            (0..37)
                .map(|i| (i as f32 * 0.37).sin().max(-0.17) * 3.0)
                .collect::<Vec<_>>(),
            (0..37).map(|i| (i as f32 - 18.0) / 7.0).collect(),
        ] {
            let (mut fast, mut plain) = (vec![0u8; row.len()], vec![0u8; row.len()]);
            let (s, z) = quantise_activations(&row, &mut fast);
            assert_eq!((s, z), quantise_activations_plain(&row, &mut plain));
            for ((v, f), p) in row.iter().zip(&fast).zip(&plain) {
                assert!(
                    (*f as i32 - *p as i32).abs() <= 1,
                    "the kernels round alike"
                );
                let back = s * (*f as i32 - z) as f32;
                assert!((back - v).abs() <= s * 0.51, "{v} came back as {back}");
            }
        }
        let mut out = [7u8; 3];
        assert_eq!(quantise_activations(&[0.0; 3], &mut out), (0.0, 0));
        assert_eq!(out, [0; 3]);
    }

    fn layer(k: usize, n: usize) -> (Vec<f32>, Vec<f32>) {
        let w = (0..n * k)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 70.0)
            .collect();
        let b = (0..n).map(|i| i as f32 * 0.01 - 0.1).collect();
        (w, b)
    }

    fn exact(w: &[f32], b: &[f32], x: &[f32], rows: usize, k: usize, n: usize) -> Vec<f32> {
        let mut y = vec![0.0; rows * n];
        for r in 0..rows {
            for j in 0..n {
                y[r * n + j] = b[j] + (0..k).map(|i| x[r * k + i] * w[j * k + i]).sum::<f32>();
            }
        }
        y
    }

    #[test]
    fn int8_layer_is_close_to_f32_and_kernels_agree() {
        let (k, n) = (64, 80);
        let (w, b) = layer(k, n);
        let q = QuantLinear::new(&w, &b, k, n);
        // Row counts around the kernel's 4-row blocks; 80 outputs are 5
        // groups, so one block of 4 groups and a lone one.
        for rows in [1, 3, 4, 7, 9] {
            let x: Vec<f32> = (0..rows * k)
                .map(|i| ((i * 53 % 89) as f32 - 44.0) / 30.0)
                .collect();
            let want = exact(&w, &b, &x, rows, k, n);
            let mut fast = vec![0.0; rows * n];
            q.forward(&x, rows, &mut fast, &mut QuantScratch::default());
            // The portable kernel does the same integer arithmetic.
            let mut s = QuantScratch {
                x: vec![0; rows * k],
                ..QuantScratch::default()
            };
            for (r, row) in x.chunks_exact(k).enumerate() {
                let (scale, zero) = quantise_activations_plain(row, &mut s.x[r * k..(r + 1) * k]);
                s.scale.push(scale);
                s.zero.push(zero);
            }
            let mut slow = vec![0.0; rows * n];
            q.matmul_portable(&s.x, &s.scale, &s.zero, rows, &mut slow);
            let scale = want.iter().fold(0.0f32, |m, v| m.max(v.abs()));
            for i in 0..rows * n {
                assert!(
                    (fast[i] - slow[i]).abs() <= 1e-4 * scale,
                    "kernels differ at {i}"
                );
                assert!(
                    (fast[i] - want[i]).abs() <= 0.02 * scale,
                    "rows {rows} at {i}: {} vs {}",
                    fast[i],
                    want[i]
                );
            }
        }
    }

    #[test]
    fn zero_rows_and_weights_stay_exact() {
        let (k, n) = (8, 16);
        let w = vec![0.0; k * n];
        let b: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let q = QuantLinear::new(&w, &b, k, n);
        let x = vec![0.0; 2 * k];
        let mut y = vec![f32::NAN; 2 * n];
        q.forward(&x, 2, &mut y, &mut QuantScratch::default());
        assert_eq!(&y[..n], &b[..]);
        assert_eq!(&y[n..], &b[..]);
    }

    #[test]
    fn shapes_that_do_not_pack_are_refused() {
        assert!(QuantLinear::fits(384, 1152));
        assert!(!QuantLinear::fits(6, 16));
        assert!(!QuantLinear::fits(8, 12));
        assert!(!QuantLinear::fits(0, 16));
    }
}
