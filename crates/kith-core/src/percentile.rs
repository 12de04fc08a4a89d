//! The one percentile rule every benchmark reports its latencies with (the
//! CLI's `kith bench` and the store's examples), so two figures of one
//! name are always the same statistic.

/// The `p` quantile (`0 ≤ p ≤ 1`) of `sorted`, which is in ascending order:
/// the sample at rank `round((n − 1) · p)` (p50 of 1‥100 is 51, p95 is 95),
/// never an interpolation between two samples; 0 for an empty sample.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((sorted.len() - 1) as f64 * p.clamp(0.0, 1.0)).round() as usize;
    sorted[rank]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_round_to_the_nearest_sample() {
        let sample: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&sample, 0.0), 1.0);
        assert_eq!(percentile(&sample, 0.5), 51.0);
        assert_eq!(percentile(&sample, 0.95), 95.0);
        assert_eq!(percentile(&sample, 0.99), 99.0);
        assert_eq!(percentile(&sample, 1.0), 100.0);
        assert_eq!(percentile(&[3.0, 7.0], 0.5), 7.0);
        assert_eq!(percentile(&[3.0, 7.0], 0.49), 3.0);
    }

    #[test]
    fn an_empty_sample_or_a_stray_p_is_no_panic() {
        assert_eq!(percentile(&[], 0.5), 0.0);
        assert_eq!(percentile(&[2.0], 0.95), 2.0);
        assert_eq!(percentile(&[1.0, 2.0], 1.5), 2.0);
        assert_eq!(percentile(&[1.0, 2.0], -1.0), 1.0);
    }
}
