//! Per-thread sharding: a value that many threads write (a counter) or take a reference to (an
//! `Arc`) on every call is split into a few cells, each alone on its cache line, and each thread
//! uses its own. Two cores then do not fight over one line, and the second core adds throughput.

use std::ops::Deref;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

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
pub(crate) fn shard() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static SHARD: usize = NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS;
    }
    SHARD.with(|shard| *shard)
}

/// [`SHARDS`] clones of a value, each behind its own `Arc`: [`ShardedArc::get`] bumps the
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

    /// A reference to this thread's copy.
    pub(crate) fn get(&self) -> Arc<Padded<T>> {
        self.copies[shard()].clone()
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
        assert_eq!(**sharded.get(), 7);
        let lines: std::collections::HashSet<usize> = sharded
            .copies
            .iter()
            .map(|copy| (&***copy as *const u8 as usize) / 64)
            .collect();
        assert_eq!(lines.len(), SHARDS);
    }

    #[test]
    fn a_thread_keeps_its_shard_and_always_takes_the_same_copy() {
        assert_eq!(shard(), shard());
        let other = std::thread::spawn(shard).join().unwrap();
        assert!(other < SHARDS);
        let sharded = ShardedArc::new(1u8);
        assert!(Arc::ptr_eq(&sharded.get(), &sharded.get()));
        assert!(Arc::ptr_eq(&sharded.get(), &sharded.copies[shard()]));
        // A clone shares the copies, so a thread's reference count stays its own.
        assert!(Arc::ptr_eq(&sharded.clone().get(), &sharded.get()));
    }
}
