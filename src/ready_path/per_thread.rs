//! Per-thread sharding: a value that many threads write (a counter) or take a reference to (an
//! `Arc`) on every call is split into a few cells, each alone on its cache line, and each thread
//! uses its own. Two cores then do not fight over one line, and the second core adds throughput.

use std::cell::Cell;
use std::ops::Deref;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// How many cells a hot value is split into.
pub(crate) const SHARDS: usize = 4;

/// A value alone on its cache line, so neighbouring cells do not share one.
#[derive(Debug, Default)]
#[repr(align(64))]
pub(crate) struct Padded<T>(pub(crate) T);

impl<T> Deref for Padded<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

/// This thread's cell index (assigned round-robin on first use).
#[inline]
pub(crate) fn shard() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    // Const-initialized (no lazy-initialization state to check on every read); `SHARDS` means
    // "not assigned yet".
    thread_local! {
        static SHARD: Cell<usize> = const { Cell::new(SHARDS) };
    }
    SHARD.with(|shard| {
        let index = shard.get();
        if index < SHARDS {
            return index;
        }
        let index = NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS;
        shard.set(index);
        index
    })
}

/// One cache line of 64-bit cells.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Line([AtomicU64; CELLS_PER_LINE]);

const CELLS_PER_LINE: usize = 8;

/// `width` 64-bit cells per shard for [`SHARDS`] shards, in one allocation: each shard's cells
/// start on a cache line of their own and no two shards share a line (an array of cells per
/// shard, each allocated apart, could sit next to another shard's on one line).
#[derive(Debug)]
pub(crate) struct ShardedCells {
    lines: Box<[Line]>,
    lines_per_shard: usize,
    width: usize,
}

/// One shard's cells of a [`ShardedCells`].
#[derive(Clone, Copy)]
pub(crate) struct Cells<'a> {
    lines: &'a [Line],
    width: usize,
}

impl ShardedCells {
    /// `width` zeroed cells per shard.
    pub(crate) fn new(width: usize) -> ShardedCells {
        let lines_per_shard = width.div_ceil(CELLS_PER_LINE).max(1);
        ShardedCells {
            lines: (0..lines_per_shard * SHARDS)
                .map(|_| Line::default())
                .collect(),
            lines_per_shard,
            width,
        }
    }

    /// The cells of shard `index` (below [`SHARDS`]).
    pub(crate) fn shard(&self, index: usize) -> Cells<'_> {
        let start = index * self.lines_per_shard;
        Cells {
            lines: self
                .lines
                .get(start..start + self.lines_per_shard)
                .unwrap_or_default(),
            width: self.width,
        }
    }

    /// Cell `index` (below the width) of shard `shard` (below [`SHARDS`]), or `None`: the one
    /// lookup of the hot path.
    #[inline]
    pub(crate) fn cell(&self, shard: usize, index: usize) -> Option<&AtomicU64> {
        if index >= self.width {
            return None;
        }
        let flat = shard * self.lines_per_shard * CELLS_PER_LINE + index;
        self.lines
            .get(flat / CELLS_PER_LINE)
            .map(|line| &line.0[flat % CELLS_PER_LINE])
    }

    /// Every shard's cells.
    pub(crate) fn shards(&self) -> impl Iterator<Item = Cells<'_>> {
        (0..SHARDS).map(|index| self.shard(index))
    }
}

impl<'a> Cells<'a> {
    /// Cell `index` (below the width), or `None`.
    #[cfg(test)]
    pub(crate) fn get(self, index: usize) -> Option<&'a AtomicU64> {
        if index >= self.width {
            return None;
        }
        self.lines
            .get(index / CELLS_PER_LINE)
            .map(|line| &line.0[index % CELLS_PER_LINE])
    }

    /// The cells in order.
    pub(crate) fn iter(self) -> impl Iterator<Item = &'a AtomicU64> {
        self.lines
            .iter()
            .flat_map(|line| line.0.iter())
            .take(self.width)
    }
}

/// [`SHARDS`] clones of a value, each behind its own `Arc`: a clone of [`ShardedArc::local`] bumps the
/// reference count of this thread's copy only, so threads taking a reference on every call do not
/// bounce one count between cores.
pub(crate) struct ShardedArc<T> {
    copies: [Arc<Padded<T>>; SHARDS],
}

impl<T: Clone> ShardedArc<T> {
    pub(crate) fn new(value: T) -> Self {
        ShardedArc {
            copies: std::array::from_fn(|_| Arc::new(Padded(value.clone()))),
        }
    }

    /// This thread's copy (clone it for a reference that counts on this copy only).
    #[inline]
    pub(crate) fn local(&self) -> &Arc<Padded<T>> {
        &self.copies[shard()]
    }
}

impl<T> Clone for ShardedArc<T> {
    fn clone(&self) -> Self {
        ShardedArc {
            copies: self.copies.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_copy_is_the_value_and_on_its_own_line() {
        let sharded = ShardedArc::new(7u8);
        assert_eq!(***sharded.local(), 7);
        let lines: std::collections::HashSet<usize> = sharded
            .copies
            .iter()
            .map(|copy| (&***copy as *const u8 as usize) / 64)
            .collect();
        assert_eq!(lines.len(), SHARDS);
    }

    #[test]
    fn each_shards_cells_are_its_own_lines_in_one_allocation() {
        let cells = ShardedCells::new(20);
        let line_of = |cell: &AtomicU64| (cell as *const AtomicU64 as usize) / 64;
        let mut seen = std::collections::HashSet::new();
        for (index, shard) in cells.shards().enumerate() {
            let lines: std::collections::HashSet<usize> =
                (0..20).map(|i| line_of(shard.get(i).unwrap())).collect();
            assert_eq!(lines.len(), 3, "shard {index}");
            assert!(lines.iter().all(|line| seen.insert(*line)), "shard {index}");
            assert!(shard.get(20).is_none());
            assert_eq!(shard.iter().count(), 20);
            assert!(std::ptr::eq(
                shard.iter().nth(9).unwrap(),
                shard.get(9).unwrap()
            ));
        }
        cells
            .cell(shard(), 19)
            .unwrap()
            .fetch_add(1, Ordering::Relaxed);
        assert!(cells.cell(SHARDS - 1, 20).is_none());
        for s in 0..SHARDS {
            let by_shard = cells.shard(s).get(11).unwrap();
            assert!(std::ptr::eq(cells.cell(s, 11).unwrap(), by_shard));
        }
        let total: u64 = cells
            .shards()
            .map(|s| s.get(19).unwrap().load(Ordering::Relaxed))
            .sum();
        assert_eq!(total, 1);
    }

    #[test]
    fn a_thread_keeps_its_shard_and_always_takes_the_same_copy() {
        assert_eq!(shard(), shard());
        let other = std::thread::spawn(shard).join().unwrap();
        assert!(other < SHARDS);
        let sharded = ShardedArc::new(1u8);
        assert!(Arc::ptr_eq(sharded.local(), sharded.local()));
        assert!(Arc::ptr_eq(sharded.local(), &sharded.copies[shard()]));
        // A clone shares the copies, so a thread's reference count stays its own.
        assert!(Arc::ptr_eq(sharded.clone().local(), sharded.local()));
    }
}
