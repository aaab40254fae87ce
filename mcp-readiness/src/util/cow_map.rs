use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use arc_swap::ArcSwap;
use arc_swap::cache::Cache;

/// A fast, DoS-resistant (randomly seeded) hasher: the map is probed on every call.
type Hasher = foldhash::fast::RandomState;
pub(crate) type Map<V> = HashMap<Arc<str>, V, Hasher>;

/// A map read on every call and written rarely: reads are lock-free and allocation-free (one
/// `arc-swap` load, one probe), a write copies the map. Bounded: past `cap` keys, new keys are
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
        if let Some(value) = self.map.load().get(&**key) {
            return Some(value.clone());
        }
        let value = make();
        let mut stored = None;
        self.map.rcu(|map| {
            let mut map = HashMap::clone(map);
            if let Some(existing) = map.get(&**key) {
                stored = Some(existing.clone());
            } else if map.len() < self.cap {
                map.insert(key.clone(), value.clone());
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
        self.map.load().values().for_each(&mut f);
    }
}

/// One holder's view of a [`CowMap`] (`A` leads to the map's [`CowMap::storage`]): it keeps the
/// map it read last and re-reads only when the map was replaced, so a read costs one atomic
/// load and the probe instead of an `arc-swap` load. A holder that is not read for a while keeps
/// the map it last read alive until its next read.
#[derive(Clone)]
pub(crate) struct CowMapView<A, V> {
    cache: Cache<A, Arc<Map<V>>>,
}

impl<A: Deref<Target = ArcSwap<Map<V>>>, V> CowMapView<A, V> {
    pub(crate) fn new(storage: A) -> Self {
        CowMapView {
            cache: Cache::new(storage),
        }
    }

    /// Runs `f` on the value for `key`, if present: [`CowMap::with`] through the cached map.
    pub(crate) fn with<R>(&mut self, key: &str, f: impl FnOnce(&V) -> R) -> Option<R> {
        self.cache.load().get(key).map(f)
    }
}

impl<V> fmt::Debug for CowMap<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CowMap")
            .field("len", &self.map.load().len())
            .field("cap", &self.cap)
            .finish()
    }
}
