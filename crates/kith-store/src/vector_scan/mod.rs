//! Vector search over an in-process copy of one owner's vectors of one
//! model: the scan both backends answer `search_vector` with.
//!
//! A [`Matrix`] holds the rows twice: f32 (exact) and int8 (symmetric, one
//! scale per row). A scan reads the int8 rows (a quarter of the bytes) to
//! pick a shortlist, then re-scores the shortlist exactly from the f32 rows.
//! Vectors are L2-normalised, so the dot product is cosine similarity.
//!
//! **Snapshots.** Searches never scan the [`Matrix`] a writer updates: they
//! scan a [`MatrixView`], an immutable snapshot taken with
//! [`Matrix::view`]. Rows live in fixed-size segments behind `Arc`s, so a
//! view costs a pointer per segment, and a write copies only the segments it
//! touches while older views keep theirs (copy on write). A search holds its
//! view for its whole scan and takes no lock while scanning.
//!
//! **Index.** Big matrices also carry an inverted-file index ([`ivf`]):
//! k-means centroids and, per centroid, the rows nearest to it. A search
//! then scans the lists of the centroids nearest the query instead of every
//! row; small matrices (below [`ivf::MIN_ROWS`]) are scanned whole.
//! With [`IndexBuild::Background`] the index is trained on another thread
//! from a snapshot while searches keep scanning every row (or the previous
//! index); the writer installs it once ready ([`Matrix::install_ready`]),
//! replaying the rows written meanwhile. Removed rows' zeroed slots are
//! reclaimed (the rows renumbered) before each build and whenever they
//! make up a quarter of the slots.
//!
//! Each row carries the node attributes that never change after the node is
//! written (scope, session, role, type, times), so the scan filters without
//! asking the database; lifecycle can change, so callers re-check the best
//! candidates in their transaction.

pub mod ivf;
mod kernels;

use std::collections::HashMap;
use std::sync::Arc;
use std::thread::JoinHandle;

use kith_core::{NodeType, Role};
use uuid::Uuid;

pub use kernels::{dot, dot_i8};
use kernels::{quantise, TopK};

use crate::VectorQuery;

/// What the scan needs to know of a row's node.
#[derive(Debug, Clone, PartialEq)]
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

/// Rows per segment: the unit a write copies when a reader still holds the
/// old version (about 2 MB at 384 dimensions).
const SEGMENT_ROWS: usize = 1024;

/// A run of consecutive slots.
#[derive(Debug, Clone, Default)]
struct Segment {
    data: Vec<f32>,
    /// The same rows quantised to i8 (one scale per row).
    q8: Vec<i8>,
    scale: Vec<f32>,
    rows: Vec<RowMeta>,
    /// False for a removed row (its numbers are zeroed).
    alive: Vec<bool>,
}

impl Segment {
    /// An empty segment with room for [`SEGMENT_ROWS`] rows of `dim`.
    fn with_room(dim: usize) -> Self {
        Segment {
            data: Vec::with_capacity(SEGMENT_ROWS * dim),
            q8: Vec::with_capacity(SEGMENT_ROWS * dim),
            scale: Vec::with_capacity(SEGMENT_ROWS),
            rows: Vec::with_capacity(SEGMENT_ROWS),
            alive: Vec::with_capacity(SEGMENT_ROWS),
        }
    }
}

/// An immutable snapshot of a [`Matrix`]: what searches scan.
#[derive(Debug, Clone, Default)]
pub struct MatrixView {
    dim: usize,
    segments: Vec<Arc<Segment>>,
    /// Slots used (alive or removed).
    slots: usize,
    /// Rows alive.
    live: usize,
    index: Option<Arc<ivf::Ivf>>,
}

/// One owner's vectors of one model: the writer's copy, from which
/// [`MatrixView`]s are taken.
#[derive(Debug, Default)]
pub struct Matrix {
    view: MatrixView,
    slot_of: HashMap<Uuid, usize>,
    /// The index's list of each slot (with an index).
    list_of: Vec<u32>,
    /// An index being trained on another thread.
    pending: Option<PendingBuild>,
}

/// How [`Matrix::maintain_index`] builds an index it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexBuild {
    /// On the caller's thread, before returning.
    Now,
    /// On another thread; searches scan without it until
    /// [`Matrix::install_ready`] installs it.
    Background,
}

/// A build running on another thread from a snapshot of the slots.
#[derive(Debug)]
struct PendingBuild {
    handle: JoinHandle<(ivf::Ivf, Vec<u32>)>,
    /// Slots written or removed since the snapshot: replayed at install.
    touched: Vec<usize>,
}

impl MatrixView {
    /// Rows held (removed ones left out).
    pub fn len(&self) -> usize {
        self.live
    }

    /// True when no row is held.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// The vectors' dimension (0 before the first row).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// True when searches go through the index rather than every row.
    pub fn is_indexed(&self) -> bool {
        self.index.is_some()
    }

    /// Every live row with its vector, in slot order (for tests that
    /// compare a loaded copy with what was stored).
    #[cfg(test)]
    pub(crate) fn live_rows(&self) -> Vec<(&RowMeta, &[f32])> {
        (0..self.slots)
            .filter(|&slot| self.alive(slot))
            .map(|slot| {
                let (s, j) = self.segment(slot);
                (&s.rows[j], self.row(slot))
            })
            .collect()
    }

    fn segment(&self, slot: usize) -> (&Segment, usize) {
        (&self.segments[slot / SEGMENT_ROWS], slot % SEGMENT_ROWS)
    }

    fn row(&self, slot: usize) -> &[f32] {
        let (s, j) = self.segment(slot);
        &s.data[j * self.dim..(j + 1) * self.dim]
    }

    fn alive(&self, slot: usize) -> bool {
        let (s, j) = self.segment(slot);
        s.alive[j]
    }

    /// Slots held, removed ones included (what reclaiming shrinks).
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The best `k` rows that pass the unchanging filters and were visible
    /// at `max_seq`, best first: through the index when there is one.
    pub fn scan(&self, q: &VectorQuery, max_seq: i64, k: usize) -> Vec<(Uuid, f32)> {
        match &self.index {
            Some(index) => self.scan_with(q, max_seq, k, Some(index)),
            None => self.scan_with(q, max_seq, k, None),
        }
    }

    /// The exact scan of every row, whatever the index (the baseline the
    /// index's recall is measured against).
    pub fn scan_exact(&self, q: &VectorQuery, max_seq: i64, k: usize) -> Vec<(Uuid, f32)> {
        self.scan_with(q, max_seq, k, None)
    }

    fn scan_with(
        &self,
        q: &VectorQuery,
        max_seq: i64,
        k: usize,
        index: Option<&Arc<ivf::Ivf>>,
    ) -> Vec<(Uuid, f32)> {
        if self.dim != q.vector.len() || k == 0 || q.vector.iter().any(|v| !v.is_finite()) {
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
        let offer = |best: &mut TopK, slot: usize| {
            let (s, j) = self.segment(slot);
            if !s.alive[j] {
                return;
            }
            let approx = dot_i8(&q.vector, &s.q8[j * self.dim..(j + 1) * self.dim]) * s.scale[j];
            // The filters are checked only for a row that would enter the
            // shortlist: most rows lose to its floor, and comparing their
            // attributes cost as much as scoring them. A damaged row (NaN
            // or infinite components: writes refuse them, so only
            // corruption puts them here) scores NaN and would rank first;
            // it is left out. `doctor --deep` names it.
            if approx.is_finite() && best.takes(approx) && keep(&s.rows[j]) {
                best.offer(approx, slot);
            }
        };
        let mut merged = match index {
            Some(index) => index.search(&q.vector, shortlist, &offer),
            None => self.scan_all(shortlist, &offer),
        };
        for (score, slot) in merged.iter_mut() {
            *score = dot(&q.vector, self.row(*slot));
        }
        merged.retain(|(score, _)| score.is_finite());
        merged.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        merged.truncate(k);
        merged
            .into_iter()
            .map(|(score, slot)| {
                let (s, j) = self.segment(slot);
                (s.rows[j].node_id, score)
            })
            .collect()
    }

    /// Offers every slot, split across threads for big matrices.
    fn scan_all(
        &self,
        shortlist: usize,
        offer: &(dyn Fn(&mut TopK, usize) + Sync),
    ) -> Vec<(f32, usize)> {
        let scan = |range: std::ops::Range<usize>| {
            let mut best = TopK::new(shortlist);
            for slot in range {
                offer(&mut best, slot);
            }
            best.into_sorted()
        };
        let n = self.slots;
        let threads = scan_threads(n);
        if threads == 1 {
            return scan(0..n);
        }
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
                .collect()
        })
    }
}

impl Matrix {
    /// Rows held.
    pub fn len(&self) -> usize {
        self.view.live
    }

    /// True when no row is held.
    pub fn is_empty(&self) -> bool {
        self.view.live == 0
    }

    /// Bytes of vector data held (f32 and i8 copies, and the index), for
    /// cache budgets.
    pub fn bytes(&self) -> usize {
        self.view.slots * (self.view.dim * 5 + 4)
            + self.view.index.as_ref().map_or(0, |i| i.bytes())
    }

    /// An immutable snapshot of the rows now held, for searches.
    pub fn view(&self) -> Arc<MatrixView> {
        Arc::new(self.view.clone())
    }

    /// Searches the rows now held (see [`MatrixView::scan`]).
    pub fn scan(&self, q: &VectorQuery, max_seq: i64, k: usize) -> Vec<(Uuid, f32)> {
        self.view.scan(q, max_seq, k)
    }

    /// Adds a row, or replaces the node's row if it has one. Refuses a
    /// vector of another dimension than the rows already held.
    pub fn upsert(&mut self, meta: RowMeta, vector: &[f32]) -> Result<(), String> {
        if self.view.live == 0 && self.view.dim != vector.len() {
            // Nothing alive to compare with: start over at this dimension
            // (a build still running is left to finish unseen).
            *self = Matrix::default();
            self.view.dim = vector.len();
        }
        let dim = self.view.dim;
        if vector.len() != dim {
            return Err(format!(
                "node {}: dimension {} among vectors of dimension {dim}",
                meta.node_id,
                vector.len(),
            ));
        }
        let slot = match self.slot_of.get(&meta.node_id) {
            Some(&slot) => {
                let s = Arc::make_mut(&mut self.view.segments[slot / SEGMENT_ROWS]);
                s.rows[slot % SEGMENT_ROWS] = meta;
                slot
            }
            None => {
                let slot = self.view.slots;
                if slot == 0 {
                    // Small owners are the many: their one segment grows
                    // with its rows.
                    self.view.segments.push(Arc::new(Segment::default()));
                } else if slot.is_multiple_of(SEGMENT_ROWS) {
                    // A full segment before this one: room for a whole one
                    // up front (a first search of a big owner appends a
                    // million rows here; doubling would copy each segment's
                    // data several times).
                    self.view.segments.push(Arc::new(Segment::with_room(dim)));
                }
                let s = Arc::make_mut(self.view.segments.last_mut().expect("pushed above"));
                s.data.resize(s.data.len() + dim, 0.0);
                s.q8.resize(s.q8.len() + dim, 0);
                s.scale.push(0.0);
                self.slot_of.insert(meta.node_id, slot);
                s.rows.push(meta);
                s.alive.push(false);
                self.view.slots += 1;
                slot
            }
        };
        let s = Arc::make_mut(&mut self.view.segments[slot / SEGMENT_ROWS]);
        let j = slot % SEGMENT_ROWS;
        s.data[j * dim..(j + 1) * dim].copy_from_slice(vector);
        s.scale[j] = quantise(vector, &mut s.q8[j * dim..(j + 1) * dim]);
        if !s.alive[j] {
            s.alive[j] = true;
            self.view.live += 1;
        }
        self.place(slot, vector);
        if let Some(p) = self.pending.as_mut() {
            p.touched.push(slot);
        }
        Ok(())
    }

    /// Removes the node's row: its numbers are zeroed and it is never
    /// returned again. Returns whether it was held.
    pub fn remove(&mut self, node_id: Uuid) -> bool {
        let Some(slot) = self.slot_of.remove(&node_id) else {
            return false;
        };
        let dim = self.view.dim;
        let s = Arc::make_mut(&mut self.view.segments[slot / SEGMENT_ROWS]);
        let j = slot % SEGMENT_ROWS;
        s.data[j * dim..(j + 1) * dim].fill(0.0);
        s.q8[j * dim..(j + 1) * dim].fill(0);
        s.scale[j] = 0.0;
        s.rows[j].session = None;
        s.alive[j] = false;
        self.view.live -= 1;
        if let Some(index) = self.view.index.as_mut() {
            Arc::make_mut(index).unlist(self.list_of[slot], slot);
        }
        if let Some(p) = self.pending.as_mut() {
            p.touched.push(slot);
        }
        true
    }

    /// Removes every row whose `seq` fails `live` (rows deleted from the
    /// table behind the copy's back); returns how many went.
    pub fn retain_seqs(&mut self, live: impl Fn(i64) -> bool) -> usize {
        let gone: Vec<Uuid> = self
            .view
            .segments
            .iter()
            .flat_map(|s| s.rows.iter().zip(&s.alive))
            .filter(|(row, alive)| **alive && !live(row.seq))
            .map(|(row, _)| row.node_id)
            .collect();
        for id in &gone {
            self.remove(*id);
        }
        gone.len()
    }

    /// Puts `slot` in its nearest list when there is an index (without
    /// one, `maintain_index` builds it once a batch is absorbed).
    fn place(&mut self, slot: usize, vector: &[f32]) {
        let Some(index) = self.view.index.as_mut() else {
            return;
        };
        let index = Arc::make_mut(index);
        let to = index.nearest(vector);
        if slot < self.list_of.len() {
            let from = self.list_of[slot];
            if from != to {
                index.unlist(from, slot);
                index.list(to, slot);
            } else if !index.contains(to, slot) {
                index.list(to, slot);
            }
            self.list_of[slot] = to;
        } else {
            index.list(to, slot);
            self.list_of.push(to);
        }
    }

    /// Builds the index once the matrix is big enough, retrains it when the
    /// matrix has grown to four times the rows it was trained on (so the
    /// lists keep their size and the build cost stays a fixed share of the
    /// writes), and drops it when the matrix shrinks well below the size
    /// that needs one; reclaims removed rows' slots before a build and when
    /// they are a quarter of the slots. Callers run it after absorbing a
    /// batch of rows. With [`IndexBuild::Background`], a build already
    /// running is installed when ready and none other starts meanwhile.
    pub fn maintain_index(&mut self, how: IndexBuild) {
        self.install_ready();
        if self.pending.is_some() {
            return;
        }
        let live = self.view.live;
        let build = match &self.view.index {
            None => live >= ivf::MIN_ROWS && ivf::enabled(),
            Some(index) => live >= index.trained_on() * 4,
        };
        if self.view.index.is_some() && live < ivf::MIN_ROWS / 2 {
            self.view.index = None;
            self.list_of.clear();
        }
        let dead = self.view.slots - live;
        if (build && dead > 0) || (dead >= SEGMENT_ROWS && dead * 4 >= self.view.slots) {
            self.reclaim();
        }
        if build {
            match how {
                IndexBuild::Now => self.build_index(),
                IndexBuild::Background => self.start_build(),
            }
        }
    }

    /// Trains the index on the rows held and lists every row in it.
    pub fn build_index(&mut self) {
        self.wait_for_index();
        let view = &self.view;
        let alive: Vec<usize> = (0..view.slots).filter(|&s| view.alive(s)).collect();
        if alive.is_empty() {
            self.view.index = None;
            self.list_of.clear();
            return;
        }
        let (index, list_of) = ivf::Ivf::build(view.dim, view.slots, &alive, |slot| view.row(slot));
        self.list_of = list_of;
        self.view.index = Some(Arc::new(index));
        self.cluster_by_list();
    }

    /// Starts training an index on another thread from a snapshot of the
    /// rows now held (or trains it here if no thread can be had).
    fn start_build(&mut self) {
        let view = self.view();
        let spawned = std::thread::Builder::new()
            .name("kith-vector-index".into())
            .spawn(move || {
                let alive: Vec<usize> = (0..view.slots).filter(|&s| view.alive(s)).collect();
                ivf::Ivf::build(view.dim, view.slots, &alive, |slot| view.row(slot))
            });
        match spawned {
            Ok(handle) => {
                self.pending = Some(PendingBuild {
                    handle,
                    touched: Vec::new(),
                })
            }
            Err(_) => self.build_index(),
        }
    }

    /// True while an index is being trained on another thread.
    pub fn is_building(&self) -> bool {
        self.pending.is_some()
    }

    /// Installs an index trained on another thread once it is ready;
    /// returns whether one was installed (views taken from now on use it).
    pub fn install_ready(&mut self) -> bool {
        if !self
            .pending
            .as_ref()
            .is_some_and(|p| p.handle.is_finished())
        {
            return false;
        }
        self.wait_for_index()
    }

    /// Waits for an index being trained on another thread and installs it;
    /// returns whether one was installed.
    pub fn wait_for_index(&mut self) -> bool {
        let Some(p) = self.pending.take() else {
            return false;
        };
        let Ok((mut index, mut list_of)) = p.handle.join() else {
            // A build that panicked leaves the matrix as it was; the next
            // maintenance tries again.
            return false;
        };
        if index.dim() != self.view.dim || list_of.len() > self.view.slots {
            // The matrix started over meanwhile: the build is of rows gone.
            return false;
        }
        list_of.resize(self.view.slots, u32::MAX);
        let mut touched = p.touched;
        touched.sort_unstable();
        touched.dedup();
        // The rows written or removed since the build's snapshot: each
        // leaves the list the build gave it and, if alive, joins its
        // nearest list now.
        for slot in touched {
            if list_of[slot] != u32::MAX {
                index.unlist(list_of[slot], slot);
                list_of[slot] = u32::MAX;
            }
            if self.view.alive(slot) {
                let to = index.nearest(self.view.row(slot));
                index.list(to, slot);
                list_of[slot] = to;
            }
        }
        self.list_of = list_of;
        self.view.index = Some(Arc::new(index));
        self.cluster_by_list();
        true
    }

    /// Renumbers the live rows into consecutive slots, dropping removed
    /// rows' zeroed slots (never while a build holds slot numbers).
    fn reclaim(&mut self) {
        if self.pending.is_some() || self.view.live == self.view.slots {
            return;
        }
        let order: Vec<usize> = (0..self.view.slots)
            .filter(|&slot| self.view.alive(slot))
            .collect();
        self.renumber(&order);
    }

    /// Lays the rows out list by list once an index is installed, so that
    /// a probe reads each list's rows from consecutive memory. Listed in
    /// slot order, a list's rows lie scattered across the whole matrix,
    /// and at a million rows those scattered reads (a cache and TLB miss a
    /// row) cost more than the arithmetic: a probe of 1/16 of the rows
    /// took 0.44 of the exact scan's time instead of a sixteenth. Rows
    /// written later are appended and placed in lists as before, until
    /// the next build lays them out again. Costs one copy of the rows.
    fn cluster_by_list(&mut self) {
        let Some(index) = &self.view.index else {
            return;
        };
        if self.pending.is_some() {
            return;
        }
        let order: Vec<usize> = index
            .slots_by_list()
            .flatten()
            .map(|&slot| slot as usize)
            .collect();
        // Every live row is listed once; anything else would drop rows.
        if order.len() == self.view.live {
            self.renumber(&order);
        }
    }

    /// Moves the rows at `order`'s slots to slots 0, 1, … in that order
    /// (slots not in it are dropped: only removed rows may be left out).
    fn renumber(&mut self, order: &[usize]) {
        let dim = self.view.dim;
        let mut segments: Vec<Arc<Segment>> = Vec::new();
        let mut new_of = vec![u32::MAX; self.view.slots];
        let mut next = 0usize;
        for &old in order {
            let (s, j) = self.view.segment(old);
            if next.is_multiple_of(SEGMENT_ROWS) {
                segments.push(Arc::new(Segment::with_room(dim)));
            }
            let t = Arc::get_mut(segments.last_mut().expect("pushed above"))
                .expect("a segment made here is not shared yet");
            t.data.extend_from_slice(&s.data[j * dim..(j + 1) * dim]);
            t.q8.extend_from_slice(&s.q8[j * dim..(j + 1) * dim]);
            t.scale.push(s.scale[j]);
            t.rows.push(s.rows[j].clone());
            t.alive.push(s.alive[j]);
            new_of[old] = next as u32;
            next += 1;
        }
        for slot in self.slot_of.values_mut() {
            *slot = new_of[*slot] as usize;
        }
        if let Some(index) = self.view.index.as_mut() {
            Arc::make_mut(index).renumber(&new_of);
            let mut list_of = vec![u32::MAX; next];
            for (old, &new) in new_of.iter().enumerate() {
                if new != u32::MAX {
                    list_of[new as usize] = self.list_of[old];
                }
            }
            self.list_of = list_of;
        }
        self.view.segments = segments;
        self.view.slots = next;
    }
}

impl Matrix {
    /// The index, for tests and benchmarks that set its probe count.
    pub fn index_mut(&mut self) -> Option<&mut ivf::Ivf> {
        self.view.index.as_mut().map(Arc::make_mut)
    }
}

/// Scans of at least this many rows are split between threads.
const PARALLEL_ROWS: usize = 20_000;

/// Threads for a scan of `rows` rows. The scan is memory-bound; a second
/// thread gets a second core's share of bandwidth once the scan is big
/// enough to repay the spawn (about 50 µs).
fn scan_threads(rows: usize) -> usize {
    if rows >= PARALLEL_ROWS {
        std::thread::available_parallelism().map_or(1, |p| p.get().min(4))
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(i: usize) -> RowMeta {
        RowMeta {
            node_id: Uuid::from_u128(i as u128 + 1),
            seq: i as i64 + 1,
            scope: "personal".into(),
            session: None,
            role: None,
            node_type: NodeType::Note,
            effective_ms: None,
            created_ms: None,
        }
    }

    fn query(v: Vec<f32>) -> VectorQuery {
        VectorQuery {
            owner: kith_core::OwnerId::new("o").unwrap(),
            model: "m".into(),
            vector: v,
            filters: crate::SearchFilters::default(),
            limit: 10,
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
        let mut m = Matrix::default();
        let mut rows = Vec::new();
        for i in 0..n {
            let row: Vec<f32> = (0..dim).map(|_| next()).collect();
            m.upsert(meta(i), &row).unwrap();
            rows.push(row);
        }
        // The exact baseline, whatever index the size brought.
        m.view.index = None;
        let q: Vec<f32> = (0..dim).map(|_| next()).collect();
        let mut want: Vec<(f32, Uuid)> = (0..n)
            .map(|i| (dot(&q, &rows[i]), meta(i).node_id))
            .collect();
        want.sort_by(|a, b| b.0.total_cmp(&a.0));
        let got = m.scan(&query(q), i64::MAX, 25);
        let got_ids: Vec<Uuid> = got.iter().map(|(id, _)| *id).collect();
        let want_ids: Vec<Uuid> = want.iter().take(25).map(|(_, id)| *id).collect();
        assert_eq!(got_ids, want_ids);
    }

    /// Issue 20 item 3: a NaN in a stored vector ranked first with a null
    /// score; such rows (and a non-finite query) now rank nowhere.
    #[test]
    fn rows_with_non_finite_components_are_never_returned() {
        let mut m = Matrix::default();
        m.upsert(meta(0), &[0.6, 0.8]).unwrap();
        m.upsert(meta(1), &[f32::NAN, 0.5]).unwrap();
        m.upsert(meta(2), &[f32::INFINITY, 0.0]).unwrap();
        m.upsert(meta(3), &[0.8, 0.6]).unwrap();
        let hits = m.scan(&query(vec![1.0, 0.0]), i64::MAX, 10);
        let ids: Vec<u128> = hits.iter().map(|(id, _)| id.as_u128()).collect();
        assert_eq!(ids, [4, 1]);
        assert!(hits.iter().all(|(_, s)| s.is_finite()));
        assert!(m.scan(&query(vec![f32::NAN, 0.0]), i64::MAX, 10).is_empty());
    }

    /// A view keeps what it saw while the matrix moves on, and a removed
    /// row is zeroed in the matrix (older views drop it when released).
    #[test]
    fn views_are_unchanged_by_later_writes_and_removals_zero_rows() {
        let mut m = Matrix::default();
        for i in 0..(SEGMENT_ROWS + 3) {
            m.upsert(meta(i), &[1.0, i as f32 / 10_000.0]).unwrap();
        }
        let before = m.view();
        m.upsert(meta(7), &[-1.0, 0.0]).unwrap();
        assert!(m.remove(meta(SEGMENT_ROWS + 1).node_id));
        assert!(!m.remove(meta(SEGMENT_ROWS + 1).node_id));
        m.upsert(meta(SEGMENT_ROWS + 10), &[0.0, 1.0]).unwrap();
        assert_eq!(before.len(), SEGMENT_ROWS + 3);
        assert_eq!(m.len(), SEGMENT_ROWS + 3);
        let q = query(vec![1.0, 0.0]);
        let old: Vec<Uuid> = before
            .scan(&q, i64::MAX, 2000)
            .into_iter()
            .map(|h| h.0)
            .collect();
        assert!(old.contains(&meta(7).node_id));
        assert!(old.contains(&meta(SEGMENT_ROWS + 1).node_id));
        let new: Vec<Uuid> = m
            .scan(&q, i64::MAX, 2000)
            .into_iter()
            .map(|h| h.0)
            .collect();
        assert!(!new.contains(&meta(SEGMENT_ROWS + 1).node_id));
        assert_eq!(new.last(), Some(&meta(7).node_id));
        let slot = SEGMENT_ROWS + 1;
        assert!(m.view.row(slot).iter().all(|x| *x == 0.0));
        assert_eq!(m.retain_seqs(|seq| seq != 1), 1);
        assert_eq!(m.len(), SEGMENT_ROWS + 2);
    }

    /// Clustered rows (the shape real embeddings have): `clusters` random
    /// directions and rows scattered around them.
    fn clustered(rng: &mut kith_core::rng::Rng, n: usize, dim: usize) -> Vec<Vec<f32>> {
        let centres: Vec<Vec<f32>> = (0..12)
            .map(|_| (0..dim).map(|_| rng.signed_unit()).collect())
            .collect();
        (0..n)
            .map(|_| {
                let c = &centres[rng.below(centres.len())];
                let mut v: Vec<f32> = c.iter().map(|x| x + 0.35 * rng.signed_unit()).collect();
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                v.iter_mut().for_each(|x| *x /= norm);
                v
            })
            .collect()
    }

    /// The nodes an index lists, as row numbers, sorted (each once).
    fn listed(m: &Matrix) -> Vec<usize> {
        let index = m.view.index.as_ref().expect("an index");
        let mut out: Vec<usize> = index
            .slots_by_list()
            .flatten()
            .map(|&slot| {
                let (seg, j) = m.view.segment(slot as usize);
                assert!(seg.alive[j], "removed slot {slot} still listed");
                (seg.rows[j].node_id.as_u128() - 1) as usize
            })
            .collect();
        out.sort_unstable();
        out
    }

    /// Probing every list gives the exact scan's answer.
    fn assert_probe_all_is_exact(m: &mut Matrix, q: &VectorQuery) {
        let exact = m.view.scan_exact(q, i64::MAX, 10);
        let all = m.index_mut().map(|i| i.lists()).expect("an index");
        m.index_mut().unwrap().set_probe(all);
        assert_eq!(m.scan(q, i64::MAX, 10), exact);
    }

    /// A background build returns at once; while it runs, searches answer
    /// exactly from every row, writes and removals go on, and the index it
    /// installs lists every live row (those written meanwhile included)
    /// and no removed one.
    #[test]
    fn a_background_build_never_blocks_and_replays_what_was_written_meanwhile() {
        let dim = 4;
        let n = ivf::MIN_ROWS + 500;
        let mut rng = kith_core::rng::Rng::new(0x5eed_0001);
        let mut rows = clustered(&mut rng, n + 2_000, dim);
        let mut m = Matrix::default();
        for (i, row) in rows.iter().enumerate().take(n) {
            m.upsert(meta(i), row).unwrap();
        }
        m.maintain_index(IndexBuild::Background);
        assert!(m.is_building());
        assert!(!m.view().is_indexed(), "the index is not installed yet");
        let mut live = vec![true; n + 1_000];
        // Writes while it trains: new rows, replacements, removals.
        for (i, row) in rows.iter().enumerate().skip(n).take(1_000) {
            m.upsert(meta(i), row).unwrap();
        }
        for r in 0..300 {
            let i = rng.below(n);
            let v = rows[n + 1_000 + r].clone();
            m.upsert(meta(i), &v).unwrap();
            rows[i] = v;
            live[i] = true;
        }
        for _ in 0..300 {
            let i = rng.below(n + 1_000);
            m.remove(meta(i).node_id);
            live[i] = false;
        }
        let q = query(rows[7].clone());
        assert_eq!(
            m.view().scan(&q, i64::MAX, 10),
            m.view.scan_exact(&q, i64::MAX, 10)
        );
        assert!(m.wait_for_index());
        assert!(!m.is_building() && m.view().is_indexed());
        let want: Vec<usize> = (0..live.len()).filter(|&i| live[i]).collect();
        assert_eq!(listed(&m), want);
        // Installed, the rows are laid out list by list (removed ones gone).
        let laid: Vec<u32> = m
            .view
            .index
            .as_ref()
            .unwrap()
            .slots_by_list()
            .flatten()
            .copied()
            .collect();
        assert_eq!(laid, (0..want.len() as u32).collect::<Vec<_>>());
        assert_eq!(m.view.slots(), want.len());
        assert_probe_all_is_exact(&mut m, &q);
        // Maintenance installs a finished build rather than starting one.
        m.maintain_index(IndexBuild::Background);
        assert!(!m.is_building());
    }

    /// Reclaiming removed rows' slots renumbers the live rows: every live
    /// row stays findable by its own vector and listed once in the index,
    /// views taken before keep answering, and the slots shrink to the rows.
    #[test]
    fn reclaiming_slots_keeps_every_live_vector() {
        let dim = 6;
        let n = 3 * SEGMENT_ROWS + 100;
        let mut rng = kith_core::rng::Rng::new(0x5eed_0002);
        let rows = clustered(&mut rng, n, dim);
        let mut m = Matrix::default();
        for (i, row) in rows.iter().enumerate() {
            m.upsert(meta(i), row).unwrap();
        }
        m.build_index();
        let mut live = vec![true; n];
        for i in (0..n).filter(|i| i % 3 != 0) {
            assert!(m.remove(meta(i).node_id));
            live[i] = false;
        }
        let before = m.view();
        m.reclaim();
        assert_eq!(m.view.slots(), m.len());
        assert_eq!(m.len(), live.iter().filter(|l| **l).count());
        let want: Vec<usize> = (0..n).filter(|&i| live[i]).collect();
        assert_eq!(listed(&m), want);
        m.index_mut().unwrap().set_probe(1);
        for i in want.iter().copied().step_by(7) {
            let hits = m.scan(&query(rows[i].clone()), i64::MAX, 1);
            assert!((hits[0].1 - 1.0).abs() < 1e-5, "row {i} lost");
        }
        // Writes after the renumbering land in their own slots.
        m.upsert(meta(1), &rows[1]).unwrap();
        m.upsert(meta(0), &rows[1]).unwrap();
        assert_eq!(m.scan(&query(rows[1].clone()), i64::MAX, 2).len(), 2);
        assert!(m.remove(meta(3).node_id) && !m.remove(meta(3).node_id));
        let q = query(rows[0].clone());
        assert_probe_all_is_exact(&mut m, &q);
        assert_eq!(before.len(), want.len());
        assert!(before
            .scan(&q, i64::MAX, 5)
            .iter()
            .all(|(id, _)| { live[(id.as_u128() - 1) as usize] }));
        // Maintenance reclaims once a quarter of the slots are dead (this
        // matrix is too small for an index: maintenance drops it).
        for i in n..n + 2 * SEGMENT_ROWS {
            m.upsert(meta(i), &rows[i % n]).unwrap();
        }
        for i in n..n + 2 * SEGMENT_ROWS {
            assert!(m.remove(meta(i).node_id));
        }
        assert!(m.view.slots() > m.len());
        m.maintain_index(IndexBuild::Now);
        assert_eq!(m.view.slots(), m.len());
        assert!(!m.view().is_indexed());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

        /// The index against the exact scan, after writes and removals made
        /// once it was built: it lists every live row once and no removed
        /// one; probing every list is the exact scan; a stored vector used
        /// as the query finds its own row first; a filter that leaves fewer
        /// rows than the shortlist gives the exact answer.
        #[test]
        fn the_index_agrees_with_the_exact_scan(
            seed in proptest::prelude::any::<u64>(),
            n in 400usize..1200,
            removals in 0usize..200,
            replacements in 0usize..200,
        ) {
            let dim = 8;
            let mut rng = kith_core::rng::Rng::new(seed | 1);
            let mut rows = clustered(&mut rng, n + replacements, dim);
            let mut m = Matrix::default();
            let session = |i: usize| RowMeta {
                session: Some(format!("s{}", i % 40)),
                ..meta(i)
            };
            for (i, row) in rows.iter().enumerate().take(n) {
                m.upsert(session(i), row).unwrap();
            }
            m.build_index();
            // Laid out list by list: the lists, one after another, are the
            // slots 0, 1, … in order.
            let laid: Vec<u32> = m.view.index.as_ref().expect("built")
                .slots_by_list().flatten().copied().collect();
            proptest::prop_assert_eq!(laid, (0..n as u32).collect::<Vec<_>>());
            let mut live: Vec<bool> = vec![true; n];
            for _ in 0..removals {
                let i = rng.below(n);
                m.remove(meta(i).node_id);
                live[i] = false;
            }
            for r in 0..replacements {
                let i = rng.below(n);
                let v = rows[n + r].clone();
                m.upsert(session(i), &v).unwrap();
                rows[i] = v;
                live[i] = true;
            }
            let index = m.view.index.as_ref().expect("built");
            // Each listed slot is alive; the listed rows are the live nodes,
            // each once (a node removed and added again has a new slot).
            let mut listed: Vec<usize> = Vec::new();
            for &slot in index.slots_by_list().flatten() {
                let (seg, j) = m.view.segment(slot as usize);
                proptest::prop_assert!(seg.alive[j], "removed slot {} still listed", slot);
                listed.push((seg.rows[j].node_id.as_u128() - 1) as usize);
            }
            listed.sort();
            let want: Vec<usize> = (0..n).filter(|&i| live[i]).collect();
            proptest::prop_assert_eq!(listed, want);

            let q = query(rows[rng.below(n)].clone());
            let all = m.index_mut().map(|i| i.lists()).unwrap();
            let exact = m.view.scan_exact(&q, i64::MAX, 10);
            let first = m.scan(&q, i64::MAX, 10);
            for (id, score) in &first {
                let i = (id.as_u128() - 1) as usize;
                proptest::prop_assert!(live[i]);
                proptest::prop_assert!((dot(&q.vector, &rows[i]) - score).abs() < 1e-5);
            }
            proptest::prop_assert!(first.windows(2).all(|w| w[0].1 >= w[1].1));
            m.index_mut().unwrap().set_probe(all);
            proptest::prop_assert_eq!(m.scan(&q, i64::MAX, 10), exact);
            m.index_mut().unwrap().set_probe(1);
            for i in (0..n).filter(|&i| live[i]).take(20) {
                let hits = m.scan(&query(rows[i].clone()), i64::MAX, 1);
                proptest::prop_assert!((hits[0].1 - 1.0).abs() < 1e-5, "row {} not found first", i);
            }
            let mut narrow = query(rows[0].clone());
            narrow.filters.session = Some(kith_core::SessionId::new("s3").unwrap());
            proptest::prop_assert_eq!(
                m.scan(&narrow, i64::MAX, 5),
                m.view.scan_exact(&narrow, i64::MAX, 5)
            );
        }
    }
}
