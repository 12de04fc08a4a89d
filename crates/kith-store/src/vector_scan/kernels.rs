//! The arithmetic of the vector scan: dot products (f32 and int8 rows),
//! int8 quantisation, and a small top-k buffer.

/// Symmetric int8 quantisation of one row: `x ≈ q × scale`.
pub(crate) fn quantise(row: &[f32], out: &mut [i8]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the feature this function was compiled for was
            // detected on this CPU just above.
            return unsafe { quantise_avx2(row, out) };
        }
    }
    quantise_portable(row, out)
}

/// The same loop built for AVX2 (which implies SSE4.1): there `round`
/// is a few vector instructions, where the portable build calls libm's
/// `roundf` once per component (a first search of a big owner quantises
/// every row it loads). Same results: the lowering is exact.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn quantise_avx2(row: &[f32], out: &mut [i8]) -> f32 {
    quantise_portable(row, out)
}

#[inline(always)]
fn quantise_portable(row: &[f32], out: &mut [i8]) -> f32 {
    let max = row.iter().fold(0f32, |m, x| m.max(x.abs()));
    if max == 0.0 {
        out.fill(0);
        return 0.0;
    }
    let scale = max / 127.0;
    for (o, x) in out.iter_mut().zip(row) {
        *o = (x / scale).round().clamp(-127.0, 127.0) as i8;
    }
    scale
}

/// Keeps the `k` largest scores seen (a small sorted buffer: k is tens to
/// hundreds, and most offers lose to the current minimum at once).
pub(crate) struct TopK {
    k: usize,
    items: Vec<(f32, usize)>,
    floor: f32,
}

impl TopK {
    pub(crate) fn new(k: usize) -> Self {
        TopK {
            k,
            items: Vec::with_capacity(k + 1),
            floor: f32::NEG_INFINITY,
        }
    }

    pub(crate) fn offer(&mut self, score: f32, index: usize) {
        if self.k == 0 || (self.items.len() == self.k && score <= self.floor) {
            return;
        }
        let at = self.items.partition_point(|(s, _)| *s >= score);
        self.items.insert(at, (score, index));
        if self.items.len() > self.k {
            self.items.pop();
        }
        if self.items.len() == self.k {
            self.floor = self.items[self.k - 1].0;
        }
    }

    /// True when [`TopK::offer`] would keep `score` (so callers can skip
    /// work for the scores it would drop at once).
    pub(crate) fn takes(&self, score: f32) -> bool {
        self.k > 0 && (self.items.len() < self.k || score > self.floor)
    }

    /// True once `k` scores are kept.
    pub(crate) fn is_full(&self) -> bool {
        self.items.len() >= self.k
    }

    pub(crate) fn into_sorted(self) -> Vec<(f32, usize)> {
        self.items
    }
}

/// Dot product, dispatched to an AVX2+FMA build of the same loop when the
/// CPU has them (the portable build only gets SSE2).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    dot_dispatch(a, b)
}

/// Dot product of an f32 query with an i8 row, dispatched like [`dot`].
pub fn dot_i8(a: &[f32], b: &[i8]) -> f32 {
    dot_dispatch(a, b)
}

/// One dispatch for both row types (each monomorphised on its own).
#[inline(always)]
fn dot_dispatch<T: Copy + Into<f32>>(a: &[f32], b: &[T]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            // SAFETY: the features this function was compiled for were
            // detected on this CPU just above.
            return unsafe { dot_avx2(a, b) };
        }
    }
    dot_portable(a, b)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn dot_avx2<T: Copy + Into<f32>>(a: &[f32], b: &[T]) -> f32 {
    dot_portable(a, b)
}

/// Eight independent accumulators so the compiler can keep a vector
/// register's worth of partial sums without reassociating floats itself.
#[inline(always)]
fn dot_portable<T: Copy + Into<f32>>(a: &[f32], b: &[T]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0f32; 8];
    let chunks = n / 8;
    for c in 0..chunks {
        let x = &a[c * 8..c * 8 + 8];
        let y = &b[c * 8..c * 8 + 8];
        for j in 0..8 {
            acc[j] = x[j].mul_add(y[j].into(), acc[j]);
        }
    }
    let mut sum: f32 = acc.iter().sum();
    for i in chunks * 8..n {
        sum += a[i] * b[i].into();
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_matches_a_plain_sum_at_every_tail_length() {
        for n in [0usize, 1, 7, 8, 9, 384, 385] {
            let a: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..n).map(|i| (i as f32 * 0.11).cos()).collect();
            let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot(&a, &b) - plain).abs() < 1e-4, "n = {n}");
        }
    }

    #[test]
    fn int8_rows_approximate_the_f32_dot_product() {
        let row: Vec<f32> = (0..384).map(|i| ((i as f32) * 0.7).sin() * 0.1).collect();
        let query: Vec<f32> = (0..384).map(|i| ((i as f32) * 0.3).cos() * 0.05).collect();
        let mut q = vec![0i8; 384];
        let scale = quantise(&row, &mut q);
        let exact = dot(&query, &row);
        let approx = dot_i8(&query, &q) * scale;
        // The error is bounded by half a step per component: scale / 2 × Σ|q|.
        let bound = scale / 2.0 * query.iter().map(|x| x.abs()).sum::<f32>();
        assert!(
            (exact - approx).abs() <= bound,
            "{exact} vs {approx} (bound {bound})"
        );
        let mut z = vec![1i8; 4];
        assert_eq!(quantise(&[0.0; 4], &mut z), 0.0);
        assert_eq!(z, vec![0; 4]);
    }

    /// The dispatched build quantises exactly like the portable one,
    /// halves (ties) and both signs included.
    #[test]
    fn quantise_builds_agree_bit_for_bit() {
        let mut rng = kith_core::rng::Rng::new(0x9a17);
        for n in [1usize, 7, 16, 384, 385] {
            for _ in 0..50 {
                let mut row: Vec<f32> = (0..n).map(|_| rng.signed_unit()).collect();
                // Components landing exactly on half a step.
                if n > 3 {
                    row[0] = 1.0;
                    row[1] = 0.5 / 127.0;
                    row[2] = -2.5 / 127.0;
                }
                let (mut a, mut b) = (vec![0i8; n], vec![0i8; n]);
                let sa = quantise(&row, &mut a);
                let sb = quantise_portable(&row, &mut b);
                assert_eq!((sa.to_bits(), &a), (sb.to_bits(), &b));
            }
        }
    }

    #[test]
    fn top_k_keeps_the_largest_in_order() {
        let mut t = TopK::new(3);
        for (i, s) in [0.1f32, 0.9, 0.5, 0.7, 0.2, 0.95].iter().enumerate() {
            t.offer(*s, i);
        }
        assert!(t.takes(0.75) && !t.takes(0.7) && !t.takes(0.1));
        assert_eq!(t.into_sorted(), vec![(0.95, 5), (0.9, 1), (0.7, 3)]);
        assert!(!TopK::new(0).takes(1.0));
    }
}
