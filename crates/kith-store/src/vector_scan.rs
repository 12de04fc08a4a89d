//! Exact vector search over an in-process copy of one owner's vectors of
//! one model: the scan both backends answer `search_vector` with.
//!
//! A [`Matrix`] holds the rows contiguously, twice: f32 (exact) and int8
//! (symmetric, one scale per row). The scan reads the int8 rows (a quarter
//! of the bytes) to pick a shortlist, then re-scores the shortlist exactly
//! from the f32 rows. Vectors are L2-normalised, so the dot product is cosine
//! similarity. The loops are compiled for AVX2+FMA when the CPU has them.
//!
//! Each row carries the node attributes that never change after the node is
//! written (scope, session, role, type, times), so the scan filters without
//! asking the database; lifecycle can change, so callers re-check the best
//! candidates in their transaction.

use std::collections::HashMap;

use kith_core::{NodeType, Role};
use uuid::Uuid;

use crate::VectorQuery;

/// What the scan needs to know of a row's node.
#[derive(Debug, Clone)]
pub struct RowMeta {
    /// The node.
    pub node_id: Uuid,
    /// The embedding row's sequence number (a replacement gets a new one).
    pub seq: i64,
    /// The node's scope.
    pub scope: String,
    /// The node's session.
    pub session: Option<String>,
    /// The role of the node's source event.
    pub role: Option<Role>,
    /// The node's type.
    pub node_type: NodeType,
    /// Event time (or ingestion time), Unix milliseconds.
    pub effective_ms: Option<i64>,
    /// When the node was written, Unix milliseconds.
    pub created_ms: Option<i64>,
}

/// One owner's vectors of one model, row-major.
#[derive(Debug, Default)]
pub struct Matrix {
    dim: usize,
    data: Vec<f32>,
    /// The same rows quantised to i8 (symmetric, one scale per row): the
    /// scan reads these, a quarter of the bytes, and the best candidates
    /// are re-scored exactly from `data`.
    q8: Vec<i8>,
    scale: Vec<f32>,
    rows: Vec<RowMeta>,
    slot_of: HashMap<Uuid, usize>,
}

/// Symmetric int8 quantisation of one row: `x ≈ q × scale`.
fn quantise(row: &[f32], out: &mut [i8]) -> f32 {
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

impl Matrix {
    /// Rows held.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True when no row is held.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Bytes of vector data held (f32 and i8 copies), for cache budgets.
    pub fn bytes(&self) -> usize {
        self.data.len() * 4 + self.q8.len() + self.scale.len() * 4
    }

    /// Adds a row, or replaces the node's row if it has one. Refuses a
    /// vector of another dimension than the rows already held.
    pub fn upsert(&mut self, meta: RowMeta, vector: &[f32]) -> Result<(), String> {
        if self.rows.is_empty() {
            self.dim = vector.len();
        }
        if vector.len() != self.dim {
            return Err(format!(
                "node {}: dimension {} among vectors of dimension {}",
                meta.node_id,
                vector.len(),
                self.dim
            ));
        }
        let dim = self.dim;
        match self.slot_of.get(&meta.node_id) {
            Some(&slot) => {
                self.data[slot * dim..(slot + 1) * dim].copy_from_slice(vector);
                self.scale[slot] = quantise(vector, &mut self.q8[slot * dim..(slot + 1) * dim]);
                self.rows[slot] = meta;
            }
            None => {
                self.slot_of.insert(meta.node_id, self.rows.len());
                self.data.extend_from_slice(vector);
                let start = self.q8.len();
                self.q8.resize(start + dim, 0);
                let scale = quantise(vector, &mut self.q8[start..]);
                self.scale.push(scale);
                self.rows.push(meta);
            }
        }
        Ok(())
    }

    /// The best `k` rows that pass the unchanging
    /// filters and were visible at `max_seq`, best first.
    pub fn scan(&self, q: &VectorQuery, max_seq: i64, k: usize) -> Vec<(Uuid, f32)> {
        let m = self;
        if m.dim != q.vector.len() || k == 0 || q.vector.iter().any(|v| !v.is_finite()) {
            return Vec::new();
        }
        let f = &q.filters;
        let keep = |row: &RowMeta| -> bool {
            row.seq <= max_seq
                && f.scope.as_ref().is_none_or(|s| s.as_str() == row.scope)
                && f.session
                    .as_ref()
                    .is_none_or(|s| row.session.as_deref() == Some(s.as_str()))
                && (f.roles.is_empty() || row.role.is_some_and(|r| f.roles.contains(&r)))
                && (f.node_types.is_empty() || f.node_types.contains(&row.node_type))
                && f.time_from
                    .is_none_or(|t| row.effective_ms.is_some_and(|ms| ms >= t.unix_millis()))
                && f.time_to
                    .is_none_or(|t| row.effective_ms.is_some_and(|ms| ms < t.unix_millis()))
                && f.as_of
                    .is_none_or(|t| row.created_ms.is_some_and(|ms| ms <= t.unix_millis()))
        };
        // Approximate scores from the i8 rows pick a generous shortlist;
        // its members are re-scored exactly below, so the order returned is
        // the exact one unless a true top-k row falls outside the shortlist
        // (the quantisation error, ~1/254 of a row's largest component, is
        // far smaller than the shortlist's margin).
        let shortlist = k * 4 + 64;
        let scan = |range: std::ops::Range<usize>| {
            let mut best = TopK::new(shortlist);
            for i in range {
                if !keep(&m.rows[i]) {
                    continue;
                }
                let approx = dot_i8(&q.vector, &m.q8[i * m.dim..(i + 1) * m.dim]) * m.scale[i];
                // A damaged row (NaN or infinite components: writes refuse
                // them, so only corruption puts them here) scores NaN and
                // would rank first; it is left out. `doctor --deep` names it.
                if !approx.is_finite() {
                    continue;
                }
                best.offer(approx, i);
            }
            best.into_sorted()
        };
        // The scan is memory-bound; a second thread gets a second core's
        // share of bandwidth once the matrix is big enough to repay the
        // spawn (about 50 µs).
        let n = m.rows.len();
        let threads = if n >= PARALLEL_ROWS {
            std::thread::available_parallelism().map_or(1, |p| p.get().min(4))
        } else {
            1
        };
        let mut merged = if threads == 1 {
            scan(0..n)
        } else {
            let chunk = n.div_ceil(threads);
            std::thread::scope(|s| {
                let handles: Vec<_> = (0..threads)
                    .map(|t| {
                        let range = t * chunk..((t + 1) * chunk).min(n);
                        s.spawn(move || scan(range))
                    })
                    .collect();
                handles
                    .into_iter()
                    .flat_map(|h| h.join().expect("a scan thread does not panic"))
                    .collect::<Vec<_>>()
            })
        };
        for (score, i) in merged.iter_mut() {
            *score = dot(&q.vector, &m.data[*i * m.dim..(*i + 1) * m.dim]);
        }
        merged.retain(|(score, _)| score.is_finite());
        merged.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        merged.truncate(k);
        merged
            .into_iter()
            .map(|(score, i)| (m.rows[i].node_id, score))
            .collect()
    }
}

/// Matrices with at least this many rows are scanned by several threads.
const PARALLEL_ROWS: usize = 20_000;

/// Keeps the `k` largest scores seen (a small sorted buffer: k is tens to
/// hundreds, and most offers lose to the current minimum at once).
struct TopK {
    k: usize,
    items: Vec<(f32, usize)>,
    floor: f32,
}

impl TopK {
    fn new(k: usize) -> Self {
        TopK {
            k,
            items: Vec::with_capacity(k + 1),
            floor: f32::NEG_INFINITY,
        }
    }

    fn offer(&mut self, score: f32, index: usize) {
        if self.items.len() == self.k && score <= self.floor {
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

    fn into_sorted(self) -> Vec<(f32, usize)> {
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

    /// Above PARALLEL_ROWS the scan splits across threads; the result must be
    /// the single-threaded one.
    #[test]
    fn parallel_scan_equals_a_plain_ranking() {
        let dim = 8;
        let n = PARALLEL_ROWS + 5_001;
        let mut rng = kith_core::rng::Rng::new(0x1234_5678_9abc_def0);
        let mut next = || rng.signed_unit();
        let mut m = Matrix {
            dim,
            ..Matrix::default()
        };
        for i in 0..n {
            let id = Uuid::from_u128(i as u128 + 1);
            let row: Vec<f32> = (0..dim).map(|_| next()).collect();
            let mut q = vec![0i8; dim];
            m.scale.push(quantise(&row, &mut q));
            m.q8.extend(q);
            m.data.extend(row);
            m.rows.push(RowMeta {
                node_id: id,
                seq: i as i64 + 1,
                scope: "personal".into(),
                session: None,
                role: None,
                node_type: NodeType::Note,
                effective_ms: None,
                created_ms: None,
            });
            m.slot_of.insert(id, i);
        }
        let query: Vec<f32> = (0..dim).map(|_| next()).collect();
        let mut want: Vec<(f32, Uuid)> = (0..n)
            .map(|i| {
                (
                    dot(&query, &m.data[i * dim..(i + 1) * dim]),
                    m.rows[i].node_id,
                )
            })
            .collect();
        want.sort_by(|a, b| b.0.total_cmp(&a.0));
        let q = VectorQuery {
            owner: kith_core::OwnerId::new("o").unwrap(),
            model: "m".into(),
            vector: query,
            filters: crate::SearchFilters::default(),
            limit: 10,
        };
        let got = m.scan(&q, i64::MAX, 25);
        let got_ids: Vec<Uuid> = got.iter().map(|(id, _)| *id).collect();
        let want_ids: Vec<Uuid> = want.iter().take(25).map(|(_, id)| *id).collect();
        assert_eq!(got_ids, want_ids);
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

    /// Issue 20 item 3: a NaN in a stored vector ranked first with a null
    /// score; such rows (and a non-finite query) now rank nowhere.
    #[test]
    fn rows_with_non_finite_components_are_never_returned() {
        let mut m = Matrix::default();
        let row = |i: u128| RowMeta {
            node_id: Uuid::from_u128(i),
            seq: i as i64,
            scope: "personal".into(),
            session: None,
            role: None,
            node_type: NodeType::Note,
            effective_ms: None,
            created_ms: None,
        };
        m.upsert(row(1), &[0.6, 0.8]).unwrap();
        m.upsert(row(2), &[f32::NAN, 0.5]).unwrap();
        m.upsert(row(3), &[f32::INFINITY, 0.0]).unwrap();
        m.upsert(row(4), &[0.8, 0.6]).unwrap();
        let query = |v: Vec<f32>| VectorQuery {
            owner: kith_core::OwnerId::new("o").unwrap(),
            model: "m".into(),
            vector: v,
            filters: Default::default(),
            limit: 10,
        };
        let hits = m.scan(&query(vec![1.0, 0.0]), i64::MAX, 10);
        let ids: Vec<u128> = hits.iter().map(|(id, _)| id.as_u128()).collect();
        assert_eq!(ids, [4, 1]);
        assert!(hits.iter().all(|(_, s)| s.is_finite()));
        assert!(m.scan(&query(vec![f32::NAN, 0.0]), i64::MAX, 10).is_empty());
    }

    #[test]
    fn top_k_keeps_the_largest_in_order() {
        let mut t = TopK::new(3);
        for (i, s) in [0.1f32, 0.9, 0.5, 0.7, 0.2, 0.95].iter().enumerate() {
            t.offer(*s, i);
        }
        assert_eq!(t.into_sorted(), vec![(0.95, 5), (0.9, 1), (0.7, 3)]);
    }
}
