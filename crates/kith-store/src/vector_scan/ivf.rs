//! An inverted-file (IVF) index over a [`super::Matrix`]: spherical k-means
//! centroids trained on the rows, and per centroid the slots of the rows
//! nearest to it.
//!
//! A search scores the query against every centroid, then offers the rows
//! of the nearest lists to the scan's shortlist, nearest list first, until
//! it has probed [`Ivf::probe`] lists *and* the shortlist is full: a query
//! whose filters reject most rows keeps probing, up to every list (then it
//! is the exact scan). The shortlist is re-scored exactly like the full
//! scan's, so the index only decides which rows are looked at.
//!
//! Why IVF rather than HNSW: at a million 384-dimension rows on two cores,
//! probing a few percent of the rows through the int8 kernel costs a few
//! milliseconds, reaches the recall asked for with a single knob, takes
//! seconds to build, stores 4 bytes a row, and deletes a row by taking it
//! out of one list; measurements in BENCHMARKS.md.
//!
//! Lists are `Arc`s so that a write copies only the list it changes while
//! snapshots keep theirs.

use std::sync::{Arc, OnceLock};

use kith_core::rng::Rng;

use super::kernels::{dot, TopK};

/// Matrices with fewer live rows are scanned whole: below this the exact
/// scan costs a few milliseconds and an index would only lose recall.
pub const MIN_ROWS: usize = 50_000;

/// k-means rounds over the training sample.
const ROUNDS: usize = 6;

/// Training rows per centroid (a sample; every row is then assigned).
const SAMPLE_PER_LIST: usize = 40;

/// False when `KITH_VECTOR_INDEX=off` (every search is the exact scan).
pub fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("KITH_VECTOR_INDEX").map_or(true, |v| v.trim() != "off"))
}

/// Lists probed at least (`KITH_VECTOR_PROBE`, default: a sixteenth of
/// the lists, at least 8).
fn probe_override() -> Option<usize> {
    static PROBE: OnceLock<Option<usize>> = OnceLock::new();
    *PROBE.get_or_init(|| {
        std::env::var("KITH_VECTOR_PROBE")
            .ok()
            .and_then(|v| v.trim().parse().ok())
    })
}

/// The index.
#[derive(Debug, Clone)]
pub struct Ivf {
    dim: usize,
    /// `lists.len()` unit vectors, row-major.
    centroids: Vec<f32>,
    lists: Vec<Arc<Vec<u32>>>,
    /// Live rows when it was trained (a matrix grown well past that is
    /// retrained).
    trained_on: usize,
    /// Lists probed at least, when set (tests probe every list).
    probe_lists: Option<usize>,
}

impl Ivf {
    /// Lists for `n` rows: about √n / 4, so a list holds ~4√n rows.
    fn lists_for(n: usize) -> usize {
        (((n as f64).sqrt() / 4.0) as usize).clamp(16, 4096)
    }

    /// Trains on the `alive` slots (rows given by `row`) and lists them;
    /// returns the index and each slot's list (`u32::MAX` for slots not
    /// alive), `slots` long.
    ///
    /// k-means on real text leaves some lists many times the mean (dense
    /// topics), and a query near a dense topic then scans far more rows
    /// than its share: every list holding more than [`MAX_LIST_SHARE`]
    /// times the mean is split by a k-means of its own rows into lists of
    /// about the mean size.
    pub(crate) fn build<'a>(
        dim: usize,
        slots: usize,
        alive: &[usize],
        row: impl Fn(usize) -> &'a [f32] + Sync,
    ) -> (Ivf, Vec<u32>) {
        let nlist = Self::lists_for(alive.len()).min(alive.len().max(1));
        let mut rng = Rng::new(0x1f_2e3d_4c5b ^ alive.len() as u64);
        let mut centroids = kmeans(dim, alive, nlist, &mut rng, &row);
        let assigned = assign(dim, &centroids, alive, &row);
        let mut lists: Vec<Vec<u32>> = vec![Vec::new(); nlist];
        for (&slot, &l) in alive.iter().zip(&assigned) {
            lists[l as usize].push(slot as u32);
        }
        let mean = alive.len().div_ceil(nlist).max(1);
        let mut split = false;
        for l in 0..nlist {
            if lists[l].len() <= mean * MAX_LIST_SHARE {
                continue;
            }
            let members: Vec<usize> = lists[l].iter().map(|&s| s as usize).collect();
            let parts = members.len().div_ceil(mean);
            let sub = kmeans(dim, &members, parts, &mut rng, &row);
            let within = assign(dim, &sub, &members, &row);
            let first = centroids.len() / dim;
            // The first part keeps list `l`; the others become new lists.
            centroids[l * dim..(l + 1) * dim].copy_from_slice(&sub[..dim]);
            centroids.extend_from_slice(&sub[dim..]);
            lists[l].clear();
            lists.resize(first + parts - 1, Vec::new());
            for (&slot, &p) in members.iter().zip(&within) {
                let to = if p == 0 { l } else { first + p as usize - 1 };
                lists[to].push(slot as u32);
            }
            split = true;
        }
        if split {
            // A split moves centroids: a part's row may now be nearer another
            // list, and another list's row nearer a new part. Every row goes
            // to its nearest centroid, as a row written later does, so a
            // query equal to a stored vector probes that row's list first.
            let assigned = assign(dim, &centroids, alive, &row);
            lists = vec![Vec::new(); centroids.len() / dim];
            for (&slot, &l) in alive.iter().zip(&assigned) {
                lists[l as usize].push(slot as u32);
            }
        }
        let mut list_of = vec![u32::MAX; slots];
        for (l, list) in lists.iter().enumerate() {
            for &slot in list {
                list_of[slot as usize] = l as u32;
            }
        }
        let index = Ivf {
            dim,
            centroids,
            lists: lists.into_iter().map(Arc::new).collect(),
            trained_on: alive.len(),
            probe_lists: None,
        };
        (index, list_of)
    }

    /// The vectors' dimension.
    pub(crate) fn dim(&self) -> usize {
        self.dim
    }

    /// Renames every listed slot `s` to `new_of[s]` (slots reclaimed).
    pub(crate) fn renumber(&mut self, new_of: &[u32]) {
        for list in &mut self.lists {
            for s in Arc::make_mut(list).iter_mut() {
                *s = new_of[*s as usize];
            }
        }
    }

    /// Live rows the centroids were trained on.
    pub(crate) fn trained_on(&self) -> usize {
        self.trained_on
    }

    /// Lists probed at least.
    pub(crate) fn probe(&self) -> usize {
        self.probe_lists
            .or_else(probe_override)
            .unwrap_or((self.lists.len() / 16).max(8))
            .clamp(1, self.lists.len())
    }

    /// Probes at least `lists` lists from now on.
    pub fn set_probe(&mut self, lists: usize) {
        self.probe_lists = Some(lists);
    }

    /// The number of lists.
    pub fn lists(&self) -> usize {
        self.lists.len()
    }

    /// Each list's slots (for invariant checks).
    pub fn slots_by_list(&self) -> impl Iterator<Item = &[u32]> {
        self.lists.iter().map(|l| l.as_slice())
    }

    /// Bytes held (centroids and lists).
    pub(crate) fn bytes(&self) -> usize {
        self.centroids.len() * 4 + self.lists.iter().map(|l| l.len() * 4).sum::<usize>()
    }

    /// The list whose centroid is nearest `v`.
    pub(crate) fn nearest(&self, v: &[f32]) -> u32 {
        nearest(self.dim, &self.centroids, v)
    }

    /// Adds `slot` to list `l`.
    pub(crate) fn list(&mut self, l: u32, slot: usize) {
        Arc::make_mut(&mut self.lists[l as usize]).push(slot as u32);
    }

    /// Takes `slot` out of list `l` (nothing when `l` is no list).
    pub(crate) fn unlist(&mut self, l: u32, slot: usize) {
        if let Some(list) = self.lists.get_mut(l as usize) {
            if let Some(at) = list.iter().position(|&s| s as usize == slot) {
                Arc::make_mut(list).swap_remove(at);
            }
        }
    }

    /// True when list `l` holds `slot`.
    pub(crate) fn contains(&self, l: u32, slot: usize) -> bool {
        self.lists
            .get(l as usize)
            .is_some_and(|list| list.iter().any(|&s| s as usize == slot))
    }

    /// The shortlist from the lists nearest `q` (see the module doc). When
    /// the lists probed hold many rows they are split between threads.
    pub(crate) fn search(
        &self,
        q: &[f32],
        shortlist: usize,
        offer: &(dyn Fn(&mut TopK, usize) + Sync),
    ) -> Vec<(f32, usize)> {
        let mut order: Vec<(f32, usize)> = (0..self.lists.len())
            .map(|l| (dot(q, &self.centroids[l * self.dim..(l + 1) * self.dim]), l))
            .collect();
        order.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let probe = self.probe();
        let first: Vec<usize> = order.iter().take(probe).map(|&(_, l)| l).collect();
        let rows: usize = first.iter().map(|&l| self.lists[l].len()).sum();
        let scan = |lists: &[usize]| {
            let mut best = TopK::new(shortlist);
            for &l in lists {
                for &slot in self.lists[l].iter() {
                    offer(&mut best, slot as usize);
                }
            }
            best
        };
        let threads = super::scan_threads(rows);
        let mut best = if threads == 1 {
            scan(&first)
        } else {
            // Lists dealt out in turn, so each thread gets near and far ones.
            let shares: Vec<Vec<usize>> = (0..threads)
                .map(|t| first.iter().skip(t).step_by(threads).copied().collect())
                .collect();
            let parts: Vec<TopK> = std::thread::scope(|s| {
                let handles: Vec<_> = shares
                    .iter()
                    .map(|share| s.spawn(move || scan(share)))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("a probe thread does not panic"))
                    .collect()
            });
            let mut best = TopK::new(shortlist);
            for part in parts {
                for (score, slot) in part.into_sorted() {
                    best.offer(score, slot);
                }
            }
            best
        };
        // A query whose filters reject most rows keeps probing, nearest
        // list first, until the shortlist is full (at worst every list).
        for &(_, l) in order.iter().skip(probe) {
            if best.is_full() {
                break;
            }
            for &slot in self.lists[l].iter() {
                offer(&mut best, slot as usize);
            }
        }
        best.into_sorted()
    }
}

/// Lists more than this many times the mean size are split at build.
const MAX_LIST_SHARE: usize = 2;

/// Spherical k-means: `k` unit centroids (row-major) trained on a seeded
/// sample of `slots` (about [`SAMPLE_PER_LIST`] rows a centroid).
fn kmeans<'a>(
    dim: usize,
    slots: &[usize],
    k: usize,
    rng: &mut Rng,
    row: &(impl Fn(usize) -> &'a [f32] + Sync),
) -> Vec<f32> {
    let k = k.clamp(1, slots.len().max(1));
    // Training sample: a seeded choice of rows (all of them when few).
    let want = (k * SAMPLE_PER_LIST).min(slots.len());
    let mut sample: Vec<usize> = slots.to_vec();
    for i in 0..want {
        let j = i + rng.below(sample.len() - i);
        sample.swap(i, j);
    }
    sample.truncate(want);
    let mut centroids: Vec<f32> = sample
        .iter()
        .take(k)
        .flat_map(|&s| row(s).iter().copied())
        .collect();
    for _ in 0..ROUNDS {
        let assigned = assign(dim, &centroids, &sample, row);
        let mut sums = vec![0f32; k * dim];
        let mut counts = vec![0usize; k];
        for (&slot, &l) in sample.iter().zip(&assigned) {
            let l = l as usize;
            counts[l] += 1;
            for (s, x) in sums[l * dim..(l + 1) * dim].iter_mut().zip(row(slot)) {
                *s += x;
            }
        }
        for l in 0..k {
            let c = &mut sums[l * dim..(l + 1) * dim];
            if counts[l] == 0 {
                // An empty list is re-seeded on a random sample row.
                c.copy_from_slice(row(sample[rng.below(sample.len())]));
            }
            normalise(c);
        }
        centroids = sums;
    }
    centroids
}

fn normalise(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

fn nearest(dim: usize, centroids: &[f32], v: &[f32]) -> u32 {
    let mut best = (f32::NEG_INFINITY, 0u32);
    for (l, c) in centroids.chunks_exact(dim).enumerate() {
        let s = dot(v, c);
        if s > best.0 {
            best = (s, l as u32);
        }
    }
    best.1
}

/// The nearest centroid of each of `slots`, on both cores.
fn assign<'a>(
    dim: usize,
    centroids: &[f32],
    slots: &[usize],
    row: &(impl Fn(usize) -> &'a [f32] + Sync),
) -> Vec<u32> {
    let threads = std::thread::available_parallelism().map_or(1, |p| p.get().min(4));
    let chunk = slots.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = slots
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .map(|&slot| nearest(dim, centroids, row(slot)))
                        .collect::<Vec<u32>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("an assignment thread does not panic"))
            .collect()
    })
}
