//! References the ready path recycles instead of counting.
//!
//! A call's recorder holds a reference to its tool's handles (the response future is `'static`,
//! so it cannot borrow them from the service), and taking and dropping one is two atomic
//! read-modify-writes: on the slower machine measured, a fifth of what the whole ready path
//! adds (`docs/benchmarks.md`). So a thread keeps the last few references its finished calls held,
//! and a call on that thread to one of those tools takes one back instead of cloning: in steady
//! state a call touches no reference count. At most [`SPARES`] references per thread are kept
//! (the oldest goes first), so the handles of a layer dropped long ago are not kept for long.
//!
//! The handles are the layer's (`layer/handles.rs`); they name their thread's spares through
//! [`Recycled`], so this file does not know what they hold.

use std::cell::RefCell;
use std::sync::Arc;
use std::thread::LocalKey;

use super::per_thread::{Padded, ShardedArc};

/// How many references a thread keeps.
const SPARES: usize = 4;

/// A thread's spare references, and the slot the next one replaces when all are taken.
pub(crate) struct Spares<T> {
    slots: [Option<Arc<Padded<T>>>; SPARES],
    next: usize,
}

impl<T> Spares<T> {
    /// None kept yet (for a `thread_local!`'s `const` initializer).
    pub(crate) const fn new() -> Self {
        Spares {
            slots: [const { None }; SPARES],
            next: 0,
        }
    }
}

/// Handles whose references a thread recycles: they name this thread's [`Spares`] of them, a
/// `thread_local!` initialized with `const { RefCell::new(Spares::new()) }`.
pub(crate) trait Recycled: Clone + Sized + 'static {
    /// This thread's spares.
    fn spares() -> &'static LocalKey<RefCell<Spares<Self>>>;

    /// A reference to this thread's copy of `handles`: a spare this thread kept, or a new one.
    #[inline]
    fn take(handles: &ShardedArc<Self>) -> Arc<Padded<Self>> {
        let copy = handles.local();
        Self::spares()
            .try_with(|spares| {
                let mut spares = spares.try_borrow_mut().ok()?;
                spares
                    .slots
                    .iter_mut()
                    .find(|slot| slot.as_ref().is_some_and(|spare| Arc::ptr_eq(spare, copy)))?
                    .take()
            })
            .ok()
            .flatten()
            .unwrap_or_else(|| copy.clone())
    }

    /// Gives back the reference a finished call held: kept as a spare (in a free slot, or in
    /// place of the oldest spare).
    #[inline]
    fn give_back(handles: Arc<Padded<Self>>) {
        // Whatever is not kept is dropped after the borrow ends (dropping the last reference to a
        // tool's handles runs their destructors, which must not find the spares borrowed).
        let _dropped = Self::spares().try_with(|spares| {
            let Ok(mut spares) = spares.try_borrow_mut() else {
                return Some(handles);
            };
            if let Some(free) = spares.slots.iter_mut().find(|slot| slot.is_none()) {
                *free = Some(handles);
                return None;
            }
            let oldest = spares.next;
            spares.next = (oldest + 1) % SPARES;
            spares.slots.get_mut(oldest)?.replace(handles)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stands for a tool's handles.
    #[derive(Clone)]
    struct Handles;

    thread_local! {
        static SPARE: RefCell<Spares<Handles>> = const { RefCell::new(Spares::new()) };
    }

    impl Recycled for Handles {
        fn spares() -> &'static LocalKey<RefCell<Spares<Self>>> {
            &SPARE
        }
    }

    fn handles() -> ShardedArc<Handles> {
        ShardedArc::new(Handles)
    }

    #[test]
    fn a_reference_given_back_is_taken_again_without_counting() {
        let tool = handles();
        let first = Handles::take(&tool);
        let count = Arc::strong_count(&first);
        Handles::give_back(first);
        let again = Handles::take(&tool);
        assert!(Arc::ptr_eq(&again, tool.local()));
        assert_eq!(
            Arc::strong_count(&again),
            count,
            "no new reference was made"
        );
    }

    #[test]
    fn a_thread_keeps_at_most_four_spares_and_drops_the_oldest() {
        let tools: Vec<_> = (0..6).map(|_| handles()).collect();
        for tool in &tools {
            Handles::give_back(Handles::take(tool));
        }
        // Only the copies the map holds remain for the first two; the last four have a spare.
        let spares: Vec<usize> = tools
            .iter()
            .map(|t| Arc::strong_count(t.local()) - 1)
            .collect();
        assert_eq!(spares, [0, 0, 1, 1, 1, 1]);
        // Taken and given back on another thread, a reference is that thread's spare.
        let tool = handles();
        let reference = Handles::take(&tool);
        // Joined (unlike a scoped thread) only once the thread has exited, its spares dropped.
        std::thread::spawn(move || Handles::give_back(reference))
            .join()
            .expect("the thread gave its reference back");
        assert_eq!(
            Arc::strong_count(tool.local()),
            1,
            "the other thread's spares went with it"
        );
    }
}
