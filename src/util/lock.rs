//! The one way this crate takes a `std::sync` lock.
//!
//! Every lock here guards a short, synchronous update (a map insert, a counter, a state swap) and
//! is never held across an `.await` (clippy's `await_holding_lock`, named in the workspace lints,
//! refuses that). A panic while one is held leaves data that is still consistent for these uses
//! (the worst case is one lost update), so a poisoned lock is taken as it is instead of turning
//! one panic into a panic on every later call: the exporter keeps answering scrapes and the layer
//! keeps answering calls. In use: `use crate::util::MutexExt as _;`, then
//! `counts.lock_unpoisoned()` (and `read_unpoisoned` / `write_unpoisoned` with `RwLockExt`).

use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// `Mutex::lock`, whether or not an earlier holder panicked.
pub(crate) trait MutexExt<T: ?Sized> {
    /// The guard, poison or not.
    fn lock_unpoisoned(&self) -> MutexGuard<'_, T>;
}

impl<T: ?Sized> MutexExt<T> for Mutex<T> {
    #[inline]
    fn lock_unpoisoned(&self) -> MutexGuard<'_, T> {
        self.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// `RwLock::read` and `RwLock::write`, whether or not an earlier writer panicked.
pub(crate) trait RwLockExt<T: ?Sized> {
    /// The read guard, poison or not.
    fn read_unpoisoned(&self) -> RwLockReadGuard<'_, T>;
    /// The write guard, poison or not.
    fn write_unpoisoned(&self) -> RwLockWriteGuard<'_, T>;
}

impl<T: ?Sized> RwLockExt<T> for RwLock<T> {
    #[inline]
    fn read_unpoisoned(&self) -> RwLockReadGuard<'_, T> {
        self.read().unwrap_or_else(PoisonError::into_inner)
    }

    #[inline]
    fn write_unpoisoned(&self) -> RwLockWriteGuard<'_, T> {
        self.write().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_lock_whose_holder_panicked_is_still_taken() {
        let counts = Arc::new(Mutex::new(1));
        let rows = Arc::new(RwLock::new(vec![1]));
        let (c, r) = (counts.clone(), rows.clone());
        let _ = std::thread::spawn(move || {
            let _held = c.lock_unpoisoned();
            let _written = r.write_unpoisoned();
            panic!("a holder panics");
        })
        .join();
        assert!(counts.is_poisoned() && rows.is_poisoned());
        *counts.lock_unpoisoned() += 1;
        rows.write_unpoisoned().push(2);
        assert_eq!(*counts.lock_unpoisoned(), 2);
        assert_eq!(*rows.read_unpoisoned(), [1, 2]);
    }
}
