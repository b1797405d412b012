//! The engine of one UR context: its DAG, a default pool per (device, USM
//! kind), the user pools, and finding the pool that owns a pointer.

use super::backend::{MemorySource, UsmKind};
use super::clock::Stamp;
use super::config::PoolConfig;
use super::dag::Dag;
use super::lane::Lane;
use super::pool::{FreeOutcome, Pool};
use crate::abi::*;
use crate::UrResult;
use std::collections::HashMap;
use crate::lock_order::{Mutex, Rank};
use std::sync::{Arc, Weak};

/// Identifies a device within a context; adapters pick the values (for
/// example the device handle's address or its index).
pub type DeviceKey = usize;

pub struct Engine {
    dag: Arc<Dag>,
    defaults: Mutex<HashMap<(DeviceKey, UsmKind), Arc<Pool>>>,
    user_pools: Mutex<Vec<Weak<Pool>>>,
}

impl Default for Engine {
    fn default() -> Self {
        Engine {
            dag: Dag::new(),
            defaults: Mutex::new(Rank::EnginePools, HashMap::new()),
            user_pools: Mutex::new(Rank::EnginePools, Vec::new()),
        }
    }
}

impl Engine {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn dag(&self) -> &Arc<Dag> {
        &self.dag
    }

    /// The default pool of `(device, kind)`, made on first use by `make`.
    pub fn default_pool(
        &self,
        device: DeviceKey,
        kind: UsmKind,
        make: impl FnOnce() -> (Arc<dyn MemorySource>, PoolConfig),
    ) -> Arc<Pool> {
        let mut defaults = self.defaults.lock();
        defaults
            .entry((device, kind))
            .or_insert_with(|| {
                let (source, config) = make();
                Arc::new(Pool::new(self.dag.clone(), source, config))
            })
            .clone()
    }

    /// [`default_pool`](Self::default_pool) for a memory source that names
    /// its pool (a slab map's owner, say): `make` is given the pool's `Weak`.
    pub fn default_pool_named(
        &self,
        device: DeviceKey,
        kind: UsmKind,
        make: impl FnOnce(&Weak<Pool>) -> (Arc<dyn MemorySource>, PoolConfig),
    ) -> Arc<Pool> {
        let mut defaults = self.defaults.lock();
        defaults
            .entry((device, kind))
            .or_insert_with(|| self.named_pool(make))
            .clone()
    }

    fn named_pool(&self, make: impl FnOnce(&Weak<Pool>) -> (Arc<dyn MemorySource>, PoolConfig)) -> Arc<Pool> {
        Arc::new_cyclic(|me| {
            let (source, config) = make(me);
            Pool::new(self.dag.clone(), source, config)
        })
    }

    /// A user pool (`urUSMPoolCreateExp`). The caller keeps the `Arc`; the
    /// engine only remembers it for [`pool_of`](Self::pool_of).
    pub fn create_pool(&self, source: Arc<dyn MemorySource>, config: PoolConfig) -> Arc<Pool> {
        self.create_pool_named(|_| (source, config))
    }

    /// [`create_pool`](Self::create_pool) for a memory source that names its
    /// pool: `make` is given the pool's `Weak`.
    pub fn create_pool_named(
        &self,
        make: impl FnOnce(&Weak<Pool>) -> (Arc<dyn MemorySource>, PoolConfig),
    ) -> Arc<Pool> {
        let pool = self.named_pool(make);
        let mut pools = self.user_pools.lock();
        pools.retain(|p| p.strong_count() > 0);
        pools.push(Arc::downgrade(&pool));
        pool
    }

    /// The default pools made so far, taken out of their lock (pool calls
    /// must not run under it: see LOCKING.md).
    fn default_pools(&self) -> Vec<Arc<Pool>> {
        self.defaults.lock().values().cloned().collect()
    }

    /// The pool holding a live allocation based at `ptr`: default pools first.
    pub fn pool_of(&self, ptr: *const u8) -> Option<Arc<Pool>> {
        if let Some(p) = self.default_pools().into_iter().find(|p| p.owns(ptr)) {
            return Some(p);
        }
        let users: Vec<Weak<Pool>> = self
            .user_pools
            .lock()
            .clone();
        users.iter().filter_map(Weak::upgrade).find(|p| p.owns(ptr))
    }

    /// `urEnqueueUSMFreeExp`: frees through `pool` when given, else through
    /// whichever pool of this context owns `ptr`.
    pub fn free(
        &self,
        pool: Option<&Pool>,
        lane: &Arc<Lane>,
        wait: &[Stamp],
        ptr: *const u8,
        want_event: bool,
    ) -> UrResult<FreeOutcome> {
        match pool {
            Some(p) => p.free(lane, wait, ptr, want_event),
            None => self
                .pool_of(ptr)
                .ok_or(UR_RESULT_ERROR_INVALID_VALUE)?
                .free(lane, wait, ptr, want_event),
        }
    }

    /// A host synchronisation point for every pool of the context: see
    /// [`Pool::collect`].
    pub fn collect_all(&self) {
        let mut pools = self.default_pools();
        let users: Vec<Weak<Pool>> = self
            .user_pools
            .lock()
            .clone();
        pools.extend(users.iter().filter_map(Weak::upgrade));
        for p in pools {
            p.collect();
        }
    }

    /// Drops the default pools (context release). Their memory goes back
    /// once no recorded command can still touch it.
    pub fn release_default_pools(&self) {
        let pools = std::mem::take(&mut *self.defaults.lock());
        // Dropped after the lock: a pool's drop gives memory back to the backend.
        drop(pools);
    }
}
