use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use arc_swap::ArcSwap;
use arc_swap::cache::Cache;

/// A fast, DoS-resistant (randomly seeded) hasher: the map is read on every call.
type Hasher = foldhash::fast::RandomState;

/// The entries of a [`CowMap`] in the order they were added, and an index by key. Entries are
/// never removed, so an entry keeps its position in every later copy of the map.
pub(crate) struct Map<V> {
    index: HashMap<Arc<str>, usize, Hasher>,
    entries: Vec<(Arc<str>, V)>,
}

impl<V> Default for Map<V> {
    fn default() -> Self {
        Map {
            index: HashMap::default(),
            entries: Vec::new(),
        }
    }
}

impl<V: Clone> Clone for Map<V> {
    fn clone(&self) -> Self {
        Map {
            index: self.index.clone(),
            entries: self.entries.clone(),
        }
    }
}

impl<V> Map<V> {
    /// The position of `key`'s entry.
    fn position(&self, key: &str) -> Option<usize> {
        self.index.get(key).copied()
    }

    fn get(&self, key: &str) -> Option<&V> {
        self.position(key)
            .and_then(|i| self.entries.get(i))
            .map(|(_, value)| value)
    }
}

/// A map read on every call and written rarely: reads are lock-free and allocation-free (one
/// `arc-swap` load, one lookup), a write copies the map. Bounded: past `cap` keys, new keys are
/// not stored, so callers that invent names cannot grow it without bound.
pub(crate) struct CowMap<V> {
    map: ArcSwap<Map<V>>,
    cap: usize,
}

impl<V: Clone> CowMap<V> {
    pub(crate) fn with_cap(cap: usize) -> Self {
        CowMap {
            map: ArcSwap::from_pointee(Map::default()),
            cap,
        }
    }

    /// Runs `f` on the value for `key`, if present.
    pub(crate) fn with<R>(&self, key: &str, f: impl FnOnce(&V) -> R) -> Option<R> {
        self.map.load().get(key).map(f)
    }

    /// The value for `key`, inserting `make()` first if absent and there is room. Returns `None`
    /// only when the key is absent and the map is full.
    pub(crate) fn get_or_insert_with(&self, key: &Arc<str>, make: impl FnOnce() -> V) -> Option<V> {
        if let Some(value) = self.map.load().get(key) {
            return Some(value.clone());
        }
        let value = make();
        let mut stored = None;
        self.map.rcu(|map| {
            let mut map = Map::clone(map);
            if let Some(existing) = map.get(key) {
                stored = Some(existing.clone());
            } else if map.entries.len() < self.cap {
                map.index.insert(key.clone(), map.entries.len());
                map.entries.push((key.clone(), value.clone()));
                stored = Some(value.clone());
            } else {
                stored = None;
            }
            map
        });
        stored
    }

    /// The map's storage, for a [`CowMapView`] over it.
    pub(crate) fn storage(&self) -> &ArcSwap<Map<V>> {
        &self.map
    }

    /// Runs `f` on every value.
    pub(crate) fn for_each(&self, mut f: impl FnMut(&V)) {
        self.map
            .load()
            .entries
            .iter()
            .for_each(|(_, value)| f(value));
    }
}

/// One holder's view of a [`CowMap`] (`A` leads to the map's [`CowMap::storage`]): it keeps the
/// map it read last and re-reads only when the map was replaced, so a read costs one atomic
/// load instead of an `arc-swap` load; and it remembers where the key it read last is, so reading
/// that key again (the same name, or the same text) skips the lookup. A holder that is not read for
/// a while keeps the map it last read alive until its next read.
#[derive(Clone)]
pub(crate) struct CowMapView<A, V> {
    cache: Cache<A, Arc<Map<V>>>,
    last: usize,
}

impl<A: Deref<Target = ArcSwap<Map<V>>>, V> CowMapView<A, V> {
    pub(crate) fn new(storage: A) -> Self {
        CowMapView {
            cache: Cache::new(storage),
            last: 0,
        }
    }

    /// Runs `f` on the value for `key`, if present: [`CowMap::with`] through the cached map.
    #[inline]
    pub(crate) fn with<R>(&mut self, key: &Arc<str>, f: impl FnOnce(&V) -> R) -> Option<R> {
        let last = self.last;
        let map = self.cache.load();
        let position = match map.entries.get(last) {
            Some((name, _)) if Arc::ptr_eq(name, key) || **name == **key => last,
            _ => map.position(key)?,
        };
        let found = map.entries.get(position).map(|(_, value)| f(value));
        self.last = position;
        found
    }
}

impl<V> fmt::Debug for CowMap<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CowMap")
            .field("len", &self.map.load().entries.len())
            .field("cap", &self.cap)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_finds_every_key_and_sees_keys_added_after_it_was_made() {
        let map: Arc<CowMap<u32>> = Arc::new(CowMap::with_cap(3));
        struct Storage(Arc<CowMap<u32>>);
        impl Deref for Storage {
            type Target = ArcSwap<Map<u32>>;
            fn deref(&self) -> &Self::Target {
                self.0.storage()
            }
        }
        let mut view = CowMapView::new(Storage(map.clone()));
        let (a, b): (Arc<str>, Arc<str>) = (Arc::from("a"), Arc::from("b"));
        assert_eq!(view.with(&a, |v| *v), None);
        assert_eq!(map.get_or_insert_with(&a, || 1), Some(1));
        assert_eq!(map.get_or_insert_with(&b, || 2), Some(2));
        // The same name, the same text in another allocation, and the other key in turn.
        assert_eq!(view.with(&a, |v| *v), Some(1));
        assert_eq!(view.with(&a, |v| *v), Some(1));
        assert_eq!(view.with(&Arc::from("a"), |v| *v), Some(1));
        assert_eq!(view.with(&b, |v| *v), Some(2));
        assert_eq!(view.with(&a, |v| *v), Some(1));
        assert_eq!(view.with(&Arc::from("c"), |v| *v), None);
        assert_eq!(view.with(&b, |v| *v), Some(2));
        // An existing key keeps its value; past the cap nothing is stored.
        assert_eq!(map.get_or_insert_with(&a, || 9), Some(1));
        assert_eq!(map.get_or_insert_with(&Arc::from("c"), || 3), Some(3));
        assert_eq!(map.get_or_insert_with(&Arc::from("d"), || 4), None);
        assert_eq!(view.with(&Arc::from("c"), |v| *v), Some(3));
        assert_eq!(view.with(&Arc::from("d"), |v| *v), None);
        let mut all = Vec::new();
        map.for_each(|v| all.push(*v));
        assert_eq!(all, [1, 2, 3]);
    }
}
