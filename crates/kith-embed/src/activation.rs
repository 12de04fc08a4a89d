//! GELU and softmax over whole slices, written so the compiler vectorises
//! them: no calls into libm (whose `expf` runs one value at a time), no
//! branches in the loop bodies. With the dense layers in int8, these
//! element-wise passes are a large share of what is left.

/// `exp(x)` to about 2 ulp for `x` in f32's range (Cephes' `expf`: split
/// `x = n·ln2 + r`, a degree-5 polynomial for `e^r`, then scale by `2^n`
/// through the exponent bits). Below −87 it returns ~0, above 88 ~e^88.
#[inline(always)]
fn exp(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // Adding and taking away 1.5·2^23 rounds to the nearest integer with
    // plain additions (f32 has no fraction bits left at that size).
    const ROUND: f32 = 12_582_912.0;
    let x = x.clamp(-87.0, 88.0);
    let n = (x * LOG2E + ROUND) - ROUND;
    let r = x - n * LN2_HI - n * LN2_LO;
    let mut p = 1.987_569_2e-4;
    p = p * r + 1.398_199_9e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 1.666_666_5e-1;
    p = p * r + 0.5;
    let e = p * r * r + r + 1.0;
    // n is in −126..=127 after the clamp: a valid biased exponent.
    let scale = f32::from_bits(((n as i32 + 127) as u32) << 23);
    e * scale
}

/// GELU in its exact erf form (HuggingFace's "gelu"), erf by Abramowitz &
/// Stegun 7.1.26 (absolute error below 1.5e-7).
#[inline(always)]
fn gelu(x: f32) -> f32 {
    const P: f32 = 0.327_591_1;
    const A: [f32; 5] = [
        0.254_829_6,
        -0.284_496_74,
        1.421_413_8,
        -1.453_152_1,
        1.061_405_4,
    ];
    let z = x * std::f32::consts::FRAC_1_SQRT_2;
    let a = z.abs();
    let t = 1.0 / (1.0 + P * a);
    let poly = t * (A[0] + t * (A[1] + t * (A[2] + t * (A[3] + t * A[4]))));
    let erf_abs = 1.0 - poly * exp(-a * a);
    let erf = if z < 0.0 { -erf_abs } else { erf_abs };
    0.5 * x * (1.0 + erf)
}

/// Applies GELU to every value.
pub(crate) fn gelu_in_place(xs: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if avx512::available() {
            // SAFETY: the features were detected.
            unsafe { avx512::gelu(xs) };
            return;
        }
        if wide() {
            // SAFETY: the features were detected.
            unsafe { gelu_avx2(xs) };
            return;
        }
    }
    xs.iter_mut().for_each(|v| *v = gelu(*v));
}

/// Softmax of one row, in place.
pub(crate) fn softmax_in_place(row: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if wide() {
            // SAFETY: the features were detected.
            unsafe { softmax_avx2(row) };
            return;
        }
    }
    softmax(row);
}

#[inline(always)]
fn softmax(row: &mut [f32]) {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    row.iter_mut().for_each(|v| *v = exp(*v - max));
    let sum: f32 = row.iter().sum();
    let inv = 1.0 / sum;
    row.iter_mut().for_each(|v| *v *= inv);
}

#[cfg(target_arch = "x86_64")]
fn wide() -> bool {
    static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HAS.get_or_init(|| {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    })
}

/// The same loop, compiled for 8 lanes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn gelu_avx2(xs: &mut [f32]) {
    xs.iter_mut().for_each(|v| *v = gelu(*v));
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn softmax_avx2(row: &mut [f32]) {
    softmax(row);
}

/// GELU over 16 lanes at a time: the same formulas with AVX-512's exact
/// helpers (`roundscale` to round, `scalef` to multiply by 2^n), which the
/// compiler does not find on its own from the plain loop.
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512 {
    use std::arch::x86_64::*;

    /// Whether this CPU has AVX-512 F (checked once).
    pub(crate) fn available() -> bool {
        static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *HAS.get_or_init(|| is_x86_feature_detected!("avx512f"))
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    fn exp(x: __m512) -> __m512 {
        let x = _mm512_max_ps(
            _mm512_min_ps(x, _mm512_set1_ps(88.0)),
            _mm512_set1_ps(-87.0),
        );
        let n = _mm512_roundscale_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(
            _mm512_mul_ps(x, _mm512_set1_ps(std::f32::consts::LOG2_E)),
        );
        let r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693_359_4), x);
        let r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.121_944_4e-4), r);
        let mut p = _mm512_set1_ps(1.987_569_2e-4);
        for c in [
            1.398_199_9e-3,
            8.333_452e-3,
            4.166_579_6e-2,
            1.666_666_5e-1,
            0.5,
        ] {
            p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(c));
        }
        let e = _mm512_fmadd_ps(
            p,
            _mm512_mul_ps(r, r),
            _mm512_add_ps(r, _mm512_set1_ps(1.0)),
        );
        _mm512_scalef_ps(e, n)
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    fn gelu16(x: __m512) -> __m512 {
        let z = _mm512_mul_ps(x, _mm512_set1_ps(std::f32::consts::FRAC_1_SQRT_2));
        let a = _mm512_abs_ps(z);
        let one = _mm512_set1_ps(1.0);
        let t = _mm512_div_ps(one, _mm512_fmadd_ps(_mm512_set1_ps(0.327_591_1), a, one));
        let mut poly = _mm512_set1_ps(1.061_405_4);
        for c in [-1.453_152_1, 1.421_413_8, -0.284_496_74, 0.254_829_6] {
            poly = _mm512_fmadd_ps(poly, t, _mm512_set1_ps(c));
        }
        poly = _mm512_mul_ps(poly, t);
        let minus_a2 = _mm512_sub_ps(_mm512_setzero_ps(), _mm512_mul_ps(a, a));
        let erf_abs = _mm512_fnmadd_ps(poly, exp(minus_a2), one);
        // erf takes z's sign.
        let sign = _mm512_and_si512(_mm512_castps_si512(z), _mm512_set1_epi32(i32::MIN));
        let erf = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(erf_abs), sign));
        _mm512_mul_ps(
            _mm512_mul_ps(_mm512_set1_ps(0.5), x),
            _mm512_add_ps(one, erf),
        )
    }

    /// GELU of every value.
    ///
    /// # Safety
    /// The CPU must have AVX-512 F.
    #[target_feature(enable = "avx512f")]
    pub(crate) unsafe fn gelu(xs: &mut [f32]) {
        let mut chunks = xs.chunks_exact_mut(16);
        for c in &mut chunks {
            // SAFETY: c holds 16 values.
            unsafe {
                let v = _mm512_loadu_ps(c.as_ptr());
                _mm512_storeu_ps(c.as_mut_ptr(), gelu16(v));
            }
        }
        for v in chunks.into_remainder() {
            *v = super::gelu(*v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// erf by its Taylor series in f64 (exact enough for |x| ≤ 3).
    fn erf_f64(x: f64) -> f64 {
        let mut sum = 0.0;
        let mut term = x;
        for n in 0..80 {
            sum += term / (2 * n + 1) as f64;
            term *= -x * x / (n + 1) as f64;
        }
        sum * 2.0 / std::f64::consts::PI.sqrt()
    }

    #[test]
    fn exp_is_accurate_over_the_range_softmax_and_gelu_use() {
        let mut x = -87.0f32;
        while x < 88.0 {
            let want = (x as f64).exp();
            let got = exp(x) as f64;
            assert!(
                ((got - want) / want).abs() < 5e-7,
                "exp({x}) = {got}, want {want}"
            );
            x += 0.173;
        }
        assert_eq!(exp(0.0), 1.0);
        assert!(exp(-1000.0) < 1e-37 && exp(-1000.0) >= 0.0);
        assert!(exp(1000.0).is_finite());
    }

    #[test]
    fn gelu_matches_the_erf_form() {
        let mut xs: Vec<f32> = (-3000..=3000).map(|i| i as f32 / 500.0).collect();
        let want: Vec<f64> = xs
            .iter()
            .map(|&x| 0.5 * x as f64 * (1.0 + erf_f64(x as f64 / 2f64.sqrt())))
            .collect();
        gelu_in_place(&mut xs);
        for (g, w) in xs.iter().zip(&want) {
            assert!((*g as f64 - w).abs() < 1e-6, "{g} vs {w}");
        }
        // Far out GELU is the identity or zero.
        let mut far = [20.0f32, -20.0];
        gelu_in_place(&mut far);
        assert_eq!(far, [20.0, 0.0]);
    }

    #[test]
    fn softmax_sums_to_one_and_keeps_order() {
        let mut row = [1.0, 2.0, 3.0, 1000.0, -1000.0];
        softmax_in_place(&mut row);
        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(row[3] > 0.999 && row[4] >= 0.0);
        let mut row = [0.5f32, 0.25, 0.0];
        softmax_in_place(&mut row);
        let want: Vec<f32> = {
            let e: Vec<f64> = [0.5f64, 0.25, 0.0].iter().map(|v| v.exp()).collect();
            let s: f64 = e.iter().sum();
            e.iter().map(|v| (v / s) as f32).collect()
        };
        for (g, w) in row.iter().zip(&want) {
            assert!((g - w).abs() < 1e-6);
        }
    }
}
