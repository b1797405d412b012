//! What adapters' USM pool objects share: [`PoolBase`], the part of a
//! pool handle that is not the backend's own (its context, the device it
//! serves, its descriptor and the engine pools behind it); [`ContextPools`],
//! a context's table of its pools; and [`SlabOwner`], what any address
//! inside an engine pool's memory finds.

use crate::abi::*;
use crate::engine::{Dag, MemorySource, Pool, PoolConfig, SlabMap, SlabOfPool, UsmKind};
use crate::handle::{handle_of_weak, UrObject};
use crate::usm_async::{PoolApi, PoolDesc, PoolSet};
use crate::UrResult;
use std::ops::Deref;
use std::sync::atomic::{AtomicBool, Ordering};
use crate::lock_order::{Mutex, Rank, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::sync::{Arc, OnceLock, Weak};

/// The part of a UR pool that is the same on every adapter. `C` is the
/// backend's context; `D` how the backend holds a device (`Arc<Device>`,
/// or `&'static Device` where devices live as long as the adapter).
pub struct PoolBase<C, D> {
    /// Weak: a context keeps its default pools, which must not keep it.
    context: Weak<C>,
    /// The device a pool of `urUSMPoolCreateExp` (or a default pool)
    /// serves; `None` for one of `urUSMPoolCreate`, which serves every
    /// device of its context.
    pub device: Option<D>,
    /// For a pool of `urUSMPoolCreate`: its context's devices, each of
    /// which has its device memory in an engine pool of its own (the
    /// engine set's device slots, in this order). Empty otherwise.
    devices: Vec<D>,
    /// A device's default pool: it lives as long as its context, keeps what
    /// it reserves until trimmed, and its handle carries no reference.
    pub is_default: bool,
    pub desc: PoolDesc,
    pub api: PoolApi,
    /// The engine pools (one per USM kind) that serve async allocations,
    /// with the handle's release threshold and maximum size.
    pub engine: PoolSet,
}

impl<C: UrObject, D: Deref> PoolBase<C, D> {
    /// A pool the user asked for, with `urUSMPoolCreate` (`api` Classic)
    /// or `urUSMPoolCreateExp` (Exp): of `device`, or, with none, of every
    /// one of `context_devices`.
    pub fn user(
        context: &Arc<C>,
        device: Option<D>,
        context_devices: impl IntoIterator<Item = D>,
        desc: PoolDesc,
        api: PoolApi,
    ) -> Self {
        // The threshold and maximum size do not depend on the kind.
        let config = desc.engine_config(UsmKind::Device, api);
        let devices: Vec<D> = match device {
            Some(_) => Vec::new(),
            None => context_devices.into_iter().collect(),
        };
        PoolBase {
            context: Arc::downgrade(context),
            device,
            engine: PoolSet::from_config(&config).with_device_slots(devices.len()),
            devices,
            is_default: false,
            desc,
            api,
        }
    }

    /// The default pool of `device` in `context`: the engine's own
    /// settings (threshold `SIZE_MAX`, no maximum size).
    pub fn device_default(context: &Arc<C>, device: D) -> Self {
        PoolBase {
            context: Arc::downgrade(context),
            device: Some(device),
            devices: Vec::new(),
            is_default: true,
            desc: PoolDesc::default(),
            api: PoolApi::Exp,
            engine: PoolSet::from_config(&PoolConfig::new(UsmKind::Device)),
        }
    }

    /// The pool's context, while it lives.
    pub fn context(&self) -> Option<Arc<C>> {
        self.context.upgrade()
    }

    /// The pool's context as a handle the caller does not own; null once
    /// the context is gone.
    pub fn context_handle(&self) -> *mut C::Handle {
        handle_of_weak(&self.context)
    }

    /// Compared by address: no reference count is touched.
    pub fn belongs_to(&self, context: &C) -> bool {
        std::ptr::eq(self.context.as_ptr(), context)
    }

    /// Whether allocations of `device` in `context` may come from this pool.
    pub fn serves(&self, context: &C, device: &D::Target) -> bool {
        self.belongs_to(context) && self.device.as_ref().is_none_or(|d| std::ptr::eq(&**d, device))
    }

    /// `UR_USM_POOL_FLAG_ZERO_INITIALIZE_BLOCK`.
    pub fn zero_init(&self) -> bool {
        self.desc.zero_init()
    }

    /// The engine configuration of the pool's `kind` memory: a default
    /// pool's is the engine's own, a user pool's its descriptor's.
    pub fn engine_config(&self, kind: UsmKind) -> PoolConfig {
        if self.is_default {
            PoolConfig::new(kind)
        } else {
            self.desc.engine_config(kind, self.api)
        }
    }

    /// The engine pool serving `kind` memory to `device` when it has been
    /// made (see [`engine_pool`](Self::engine_pool)); nothing is made.
    #[inline]
    pub fn made_engine_pool(&self, kind: UsmKind, device: Option<&D::Target>) -> Option<&Arc<Pool>> {
        self.engine.get_in(kind, self.slot(kind, device).ok()?)
    }

    /// `urEnqueueUSMFreeExp` of the engine block at `addr`, by `free`
    /// (the engine's free on the queue's lane), from this pool: the one
    /// the call names, or, named none, the queue's current pool for
    /// `device`. This pool's device memory is where the block most likely
    /// is, so it is tried first (see [`SlabMap::free_with`]); else the
    /// block goes back to the pool whose slab holds it, which must be this
    /// one when `scope` is [`FreeScope::Named`]. `None`: no slab of `slabs`
    /// holds `addr`.
    #[inline]
    pub fn free_async_block<O: SlabOfPool, R>(
        &self,
        slabs: &SlabMap<O>,
        device: Option<&D::Target>,
        scope: FreeScope,
        addr: usize,
        free: impl Fn(&Pool) -> UrResult<R>,
    ) -> Option<UrResult<R>> {
        let likely = self.made_engine_pool(UsmKind::Device, device);
        match scope {
            FreeScope::Named => slabs.free_with(addr, likely, |e, _| self.engine.holds(e), free),
            FreeScope::Any => slabs.free_with(addr, likely, |_, _| true, free),
        }
    }

    /// The device slot of `kind` memory for `device`: only device memory of
    /// a pool of several devices has one.
    #[inline]
    fn slot(&self, kind: UsmKind, device: Option<&D::Target>) -> UrResult<Option<usize>> {
        if kind == UsmKind::Device && self.engine.has_device_slots() {
            let slot = device.and_then(|device| self.devices.iter().position(|d| std::ptr::eq(&**d, device)));
            Ok(Some(slot.ok_or(UR_RESULT_ERROR_INVALID_VALUE)?))
        } else {
            Ok(None)
        }
    }

    /// The engine pool serving `kind` memory to `device`, made on first
    /// use by `make` from the pool's context, [`engine_config`](Self::engine_config)
    /// and the device whose pool it is: the pool's own device, or, for
    /// device memory of a pool of every device, `device` (none for host and
    /// shared memory of such a pool, which serve every device). Device
    /// memory of such a pool for no device, or a device outside the pool's
    /// context, is `INVALID_VALUE`.
    #[inline]
    pub fn engine_pool(
        &self,
        kind: UsmKind,
        device: Option<&D::Target>,
        make: impl FnOnce(Arc<C>, PoolConfig, Option<&D>) -> UrResult<Arc<Pool>>,
    ) -> UrResult<&Arc<Pool>> {
        let slot = self.slot(kind, device)?;
        if let Some(p) = self.engine.get_in(kind, slot) {
            return Ok(p);
        }
        let serving = match slot {
            Some(i) => self.devices.get(i),
            None => self.device.as_ref(),
        };
        self.engine.get_or_make_in(kind, slot, || {
            let context = self.context().ok_or(UR_RESULT_ERROR_INVALID_CONTEXT)?;
            make(context, self.engine_config(kind), serving)
        })
    }
}

/// Which pools an async free may give a block back to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FreeScope {
    /// Only the pool the call names: another's block is `INVALID_VALUE`.
    Named,
    /// Any pool of the context (none named: the queue's current pool is
    /// only the likeliest owner).
    Any,
}

impl FreeScope {
    /// The scope of a free that names `pool`, or none.
    pub fn of<P>(pool: Option<&P>) -> FreeScope {
        if pool.is_some() {
            FreeScope::Named
        } else {
            FreeScope::Any
        }
    }
}

/// A context's USM pools, by device (keyed by the device's address): the
/// devices' default pools, made on first use, which live as long as the
/// context; the pools `urUSMPoolSetDevicePoolExp` chose, held weakly so
/// that the default serves again once the user releases one; every user
/// pool, for synchronisation points; and the engine pools of released
/// pools whose blocks are still live.
pub struct ContextPools<P> {
    table: RwLock<PoolTable<P>>,
    /// Whether any device has a current pool set (`table.current` is not
    /// empty): while none has, a queue answers from its own copy of its
    /// device's default pool, touching no shared lock or count.
    any_current: AtomicBool,
    kept: Mutex<Vec<Arc<Pool>>>,
}

struct PoolTable<P> {
    defaults: Vec<(usize, Arc<P>)>,
    current: Vec<(usize, Weak<P>)>,
    users: Vec<Weak<P>>,
}

impl<P> Default for ContextPools<P> {
    fn default() -> Self {
        ContextPools {
            table: RwLock::new(Rank::PoolTable, PoolTable { defaults: Vec::new(), current: Vec::new(), users: Vec::new() }),
            any_current: AtomicBool::new(false),
            kept: Mutex::new(Rank::Leaf, Vec::new()),
        }
    }
}

fn device_key<D>(device: &D) -> usize {
    device as *const D as usize
}

impl<P> PoolTable<P> {
    fn default_of(&self, key: usize) -> Option<Arc<P>> {
        self.defaults.iter().find(|(k, _)| *k == key).map(|(_, p)| p.clone())
    }
}

impl<P> ContextPools<P> {
    fn table(&self) -> RwLockReadGuard<'_, PoolTable<P>> {
        self.table.read()
    }

    fn table_mut(&self) -> RwLockWriteGuard<'_, PoolTable<P>> {
        self.table.write()
    }

    /// The default pool of `device`, made by `make` on first use.
    pub fn default_pool<D>(&self, device: &D, make: impl FnOnce() -> UrResult<Arc<P>>) -> UrResult<Arc<P>> {
        let key = device_key(device);
        if let Some(p) = self.table().default_of(key) {
            return Ok(p);
        }
        let mut table = self.table_mut();
        if let Some(p) = table.default_of(key) {
            return Ok(p);
        }
        let pool = make()?;
        table.defaults.push((key, pool.clone()));
        Ok(pool)
    }

    /// The pool async allocations on `device` take when none is named: the
    /// one set for it while it lives, else its default pool (made by
    /// `make_default` on first use).
    pub fn current_pool<D>(&self, device: &D, make_default: impl FnOnce() -> UrResult<Arc<P>>) -> UrResult<Arc<P>> {
        let key = device_key(device);
        {
            let table = self.table();
            if let Some(p) = table.current.iter().find(|(k, _)| *k == key).and_then(|(_, p)| p.upgrade()) {
                return Ok(p);
            }
            if let Some(p) = table.default_of(key) {
                return Ok(p);
            }
        }
        self.default_pool(device, make_default)
    }

    /// A queue's own copy `cached` of its device's default pool, when that
    /// is the device's current pool and has been made: the hot path of an
    /// async allocation, which reads no lock and writes no count.
    #[inline]
    pub fn cached_default<'a>(&self, cached: &'a OnceLock<Arc<P>>) -> Option<&'a Arc<P>> {
        if self.any_current.load(Ordering::Acquire) {
            return None;
        }
        cached.get()
    }

    /// `f` of [`current_pool`](Self::current_pool); while no device has a
    /// current pool set, a queue's own copy `cached` of its device's
    /// default pool answers, so that queues on different threads do not
    /// meet on the table.
    #[inline]
    pub fn with_current<D, R>(
        &self,
        device: &D,
        cached: &OnceLock<Arc<P>>,
        make_default: impl FnOnce() -> UrResult<Arc<P>>,
        f: impl FnOnce(&P) -> R,
    ) -> UrResult<R> {
        if self.any_current.load(Ordering::Acquire) {
            return Ok(f(&*self.current_pool(device, make_default)?));
        }
        if let Some(p) = cached.get() {
            return Ok(f(p));
        }
        let made = self.default_pool(device, make_default)?;
        Ok(f(cached.get_or_init(|| made)))
    }

    /// `urUSMPoolSetDevicePoolExp`. Naming the device's default pool takes
    /// back an earlier choice, so that the hot path serves again.
    pub fn set_current<D>(&self, device: &D, pool: &Arc<P>) {
        let key = device_key(device);
        let mut table = self.table_mut();
        table.current.retain(|(k, _)| *k != key);
        let is_default = table.defaults.iter().any(|(k, p)| *k == key && Arc::ptr_eq(p, pool));
        if !is_default {
            table.current.push((key, Arc::downgrade(pool)));
        }
        self.any_current.store(!table.current.is_empty(), Ordering::Release);
    }

    /// A pool being destroyed stops being any device's current pool.
    pub fn forget(&self, pool: &P) {
        let mut table = self.table_mut();
        table.current.retain(|(_, p)| !std::ptr::eq(p.as_ptr(), pool));
        self.any_current.store(!table.current.is_empty(), Ordering::Release);
    }

    /// Lets every pool of the table go (the context is being destroyed:
    /// its pools give their memory back before its deleter runs).
    pub fn clear(&mut self) {
        // Dropped after the table's lock: a pool's drop gives memory back.
        let defaults = {
            let mut table = self.table_mut();
            table.current.clear();
            table.users.clear();
            std::mem::take(&mut table.defaults)
        };
        drop(defaults);
        self.kept.get_mut().clear();
    }

    /// A pool the user made, for synchronisation points.
    pub fn add_user(&self, pool: &Arc<P>) {
        let mut table = self.table_mut();
        table.users.retain(|p| p.strong_count() > 0);
        table.users.push(Arc::downgrade(pool));
    }

    /// Keeps the engine pools of a released pool (`engine`) while blocks of
    /// them live.
    pub fn keep_until_freed(&self, engine: &PoolSet) {
        // Counted before `kept` is taken: counting takes each pool's lock.
        let live: Vec<Arc<Pool>> = engine.made().filter(|p| p.live_blocks() > 0).cloned().collect();
        if !live.is_empty() {
            self.kept.lock().extend(live);
        }
    }

    /// A host synchronisation point: kept engine pools whose blocks are all
    /// freed go, and every pool (its engine pools `engine_of`) files the
    /// blocks whose frees have completed and gives back what is above its
    /// release threshold.
    pub fn collect(&self, engine_of: impl Fn(&P) -> &PoolSet) {
        // Counted with `kept` let go (counting takes each pool's lock), and
        // the pools that go are dropped after it (a drop gives memory back).
        // A concurrent synchronisation point finds the list empty meanwhile;
        // the pools are kept all the same.
        let kept = std::mem::take(&mut *self.kept.lock());
        let (live, freed): (Vec<_>, Vec<_>) = kept.into_iter().partition(|p| p.live_blocks() > 0);
        if !live.is_empty() {
            self.kept.lock().extend(live);
        }
        drop(freed);
        let pools: Vec<Arc<P>> = {
            let table = self.table();
            table.defaults.iter().map(|(_, p)| p.clone()).chain(table.users.iter().filter_map(Weak::upgrade)).collect()
        };
        pools.iter().for_each(|p| engine_of(p).collect());
    }
}

/// Whose an engine slab is, in the `SlabMap` of a context whose UR pools
/// (`P`) enter their engine pools' slabs there: any address inside pool
/// memory finds its engine pool, the UR pool that serves, and the kind
/// (`K`) and device (`D`) of the memory, with no entry per block.
pub struct SlabOwner<P, D, K = UsmKind> {
    /// The engine pool that sub-allocates the slab.
    pub pool: Weak<Pool>,
    /// The UR pool it serves (gone once that is destroyed).
    pub usm_pool: Weak<P>,
    pub kind: K,
    /// `None` for host memory.
    pub device: Option<D>,
}

impl<P, D: Clone, K: Copy> Clone for SlabOwner<P, D, K> {
    fn clone(&self) -> Self {
        SlabOwner { pool: self.pool.clone(), usm_pool: self.usm_pool.clone(), kind: self.kind, device: self.device.clone() }
    }
}

impl<P, D, K> SlabOfPool for SlabOwner<P, D, K> {
    fn engine_pool(&self) -> &Weak<Pool> {
        &self.pool
    }
}

impl<P, D: Clone> SlabOwner<P, D> {
    /// A new engine pool serving `kind` memory for the UR pool `usm_pool`,
    /// its slabs owned by that pool, `kind` and, but for host memory,
    /// `device`; `source` makes the pool's memory source around the owner
    /// (which enters each slab in the context's slab map).
    pub fn new_engine_pool(
        dag: Arc<Dag>,
        config: PoolConfig,
        usm_pool: &Weak<P>,
        kind: UsmKind,
        device: Option<&D>,
        source: impl FnOnce(Self) -> Arc<dyn MemorySource>,
    ) -> Arc<Pool> {
        let device = if kind == UsmKind::Host { None } else { device.cloned() };
        Arc::new_cyclic(|pool| {
            let owner = SlabOwner { pool: pool.clone(), usm_pool: usm_pool.clone(), kind, device };
            Pool::new(dag, source(owner), config)
        })
    }
}

impl<P: UrObject, D, K> SlabOwner<P, D, K> {
    /// The live block of the slab holding `addr`, as `(base, size)` (the
    /// block's size: the request rounded up to the pool's granule).
    pub fn live_block(&self, addr: usize) -> Option<(usize, usize)> {
        self.pool.upgrade()?.live_block_containing(addr)
    }

    /// The UR pool as a handle the caller does not own; null once it is
    /// destroyed.
    pub fn usm_pool_handle(&self) -> *mut P::Handle {
        handle_of_weak(&self.usm_pool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handle::{HandleHeader, ObjectKind};

    static DDI: ur_dditable_t = crate::ddi::UNSUPPORTED_DDI;

    #[repr(C)]
    struct Context {
        header: HandleHeader,
    }
    crate::ur_object!(Context, Context, ur_context_handle_t_);

    fn context() -> Arc<Context> {
        Arc::new(Context { header: HandleHeader::new(&DDI, ObjectKind::Context) })
    }

    #[test]
    fn a_pool_serves_its_device_of_its_context() {
        let (mine, other) = (context(), context());
        let devices = [0u8, 1u8];
        let exp = PoolBase::user(&mine, Some(&devices[0]), [], PoolDesc::default(), PoolApi::Exp);
        assert!(exp.serves(&mine, &devices[0]));
        assert!(!exp.serves(&mine, &devices[1]), "another device");
        assert!(!exp.serves(&other, &devices[0]), "another context");
        let classic = PoolBase::user(&mine, None, &devices, PoolDesc::default(), PoolApi::Classic);
        assert!(classic.serves(&mine, &devices[1]), "every device of its context");
        assert_eq!(classic.context_handle(), crate::handle::handle_of(&*mine));
        drop(mine);
        assert!(classic.context().is_none() && classic.context_handle().is_null());
    }

    #[test]
    fn a_default_pool_keeps_the_engine_settings() {
        let c = context();
        let default = PoolBase::device_default(&c, &0u8);
        assert!(default.is_default && !default.zero_init());
        assert_eq!(default.engine_config(UsmKind::Host).release_threshold, usize::MAX);
        let desc = PoolDesc { flags: UR_USM_POOL_FLAG_ZERO_INITIALIZE_BLOCK.0, limits: None };
        let user = PoolBase::user(&c, Some(&0u8), [], desc, PoolApi::Exp);
        assert!(!user.is_default && user.zero_init());
        assert_eq!(user.engine_config(UsmKind::Host).release_threshold, 0);
    }

    #[test]
    fn a_context_table_falls_back_to_the_default_pool() -> UrResult {
        let pools = ContextPools::<u32>::default();
        let devices = [0u8, 1u8];
        let default = pools.default_pool(&devices[0], || Ok(Arc::new(10)))?;
        assert!(Arc::ptr_eq(&default, &pools.default_pool(&devices[0], || unreachable!())?), "made once");
        let cached = OnceLock::new();
        assert_eq!(pools.cached_default(&cached), None, "nothing cached before the first use");
        assert_eq!(pools.with_current(&devices[0], &cached, || unreachable!(), |p| *p)?, 10);
        assert_eq!(cached.get().map(|p| **p), Some(10), "a queue's copy of the default");
        assert_eq!(pools.cached_default(&cached).map(|p| **p), Some(10));
        let chosen = Arc::new(20);
        pools.set_current(&devices[0], &chosen);
        assert_eq!(pools.cached_default(&cached), None, "the copy must not serve while a pool is chosen");
        assert_eq!(pools.with_current(&devices[0], &cached, || unreachable!(), |p| *p)?, 20);
        assert_eq!(*pools.current_pool(&devices[1], || Ok(Arc::new(11)))?, 11, "another device keeps its default");
        pools.forget(&chosen);
        assert_eq!(*pools.current_pool(&devices[0], || unreachable!())?, 10);
        pools.set_current(&devices[0], &chosen);
        drop(chosen);
        assert_eq!(*pools.current_pool(&devices[0], || unreachable!())?, 10, "a released pool is current no more");
        Ok(())
    }

    #[test]
    fn naming_the_default_pool_takes_a_choice_back() -> UrResult {
        let pools = ContextPools::<u32>::default();
        let device = 0u8;
        let default = pools.default_pool(&device, || Ok(Arc::new(10)))?;
        let cached = OnceLock::new();
        pools.with_current(&device, &cached, || unreachable!(), |_| ())?;
        let chosen = Arc::new(20);
        pools.set_current(&device, &chosen);
        pools.set_current(&device, &default);
        assert_eq!(pools.cached_default(&cached).map(|p| **p), Some(10), "the hot path serves again");
        assert_eq!(*pools.current_pool(&device, || unreachable!())?, 10);
        Ok(())
    }

    #[test]
    fn a_failed_default_is_not_kept() {
        let pools = ContextPools::<u32>::default();
        let cached = OnceLock::new();
        let refused = pools.with_current(&0u8, &cached, || Err(UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY), |p| *p);
        assert_eq!(refused, Err(UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY));
        assert!(cached.get().is_none());
        assert_eq!(*pools.default_pool(&0u8, || Ok(Arc::new(10))).unwrap(), 10, "a later call makes it");
    }

    #[test]
    fn a_pool_of_every_device_keeps_device_memory_by_device() {
        use crate::engine::{Dag, HostMemory};
        let c = context();
        let dag = Dag::new();
        let devices = [0u8, 1u8];
        let stranger = 2u8;
        let pool = PoolBase::user(&c, None, &devices, PoolDesc::default(), PoolApi::Classic);
        let made_for = std::cell::RefCell::new(Vec::new());
        let get = |kind, device: &u8| {
            pool.engine_pool(kind, Some(device), |_, config, serving: Option<&&u8>| {
                made_for.borrow_mut().push((kind, serving.map(|d| **d)));
                Ok(Arc::new(Pool::new(dag.clone(), Arc::new(HostMemory::new()), config)))
            })
            .map(|p| Arc::as_ptr(p))
        };
        let (d0, d1) = (get(UsmKind::Device, &devices[0]).unwrap(), get(UsmKind::Device, &devices[1]).unwrap());
        assert_ne!(d0, d1, "each device has its own device memory");
        assert_eq!(get(UsmKind::Device, &devices[0]), Ok(d0), "made once");
        assert_eq!(get(UsmKind::Shared, &devices[0]), get(UsmKind::Shared, &devices[1]), "shared memory serves both");
        assert_eq!(get(UsmKind::Device, &stranger), Err(UR_RESULT_ERROR_INVALID_VALUE));
        assert_eq!(
            *made_for.borrow(),
            [(UsmKind::Device, Some(0)), (UsmKind::Device, Some(1)), (UsmKind::Shared, None)]
        );
        assert_eq!(pool.engine.made().count(), 3);
        assert!(pool.engine.get(UsmKind::Device).is_none(), "no single device pool");
    }

    #[test]
    fn an_engine_block_is_found_inside_and_freed_only_at_its_base() {
        use crate::engine::{Dag, HostMemory, QueueOrder, SlabMap};
        let dag = Dag::new();
        let mut config = PoolConfig::new(UsmKind::Device);
        config.min_slab_size = 64 << 10;
        let pool = Arc::new(Pool::new(dag.clone(), Arc::new(HostMemory::new()), config));
        let lane = dag.create_lane(QueueOrder::InOrder);
        let block = pool.alloc(&lane, &[], 1000, 0, false).unwrap();
        let base = block.ptr.as_ptr() as usize;
        let slabs = SlabMap::<SlabOwner<Context, &u8>>::default();
        let owner = SlabOwner { pool: Arc::downgrade(&pool), usm_pool: Weak::new(), kind: UsmKind::Device, device: None };
        slabs.insert(base, block.size, owner);
        assert_eq!(slabs.live_block_containing(base + 8), Some((base, block.size)));
        let found = slabs.owner_of(base + 8).unwrap();
        assert_eq!(found.live_block(base + 8), Some((base, block.size)));
        assert!(found.usm_pool_handle().is_null(), "no UR pool");
        let settled = std::cell::Cell::new(0);
        let settle = || {
            settled.set(settled.get() + 1);
            Ok(())
        };
        for bad in [base + 8, base + block.size, 1] {
            assert_eq!(slabs.free_blocking(bad, settle, |_| {}), Err(UR_RESULT_ERROR_INVALID_MEM_OBJECT));
        }
        assert_eq!(settled.get(), 0, "nothing to settle for a pointer refused");
        assert_eq!(slabs.free_blocking(base, settle, |_| {}), Ok(()));
        assert_eq!(settled.get(), 1);
        assert_eq!(slabs.free_blocking(base, settle, |_| {}), Err(UR_RESULT_ERROR_INVALID_MEM_OBJECT), "freed twice");
        assert_eq!(slabs.live_block_containing(base), None);
    }

    #[test]
    fn an_async_free_tries_the_likely_pool_then_the_slab_map() {
        use crate::engine::{Dag, HostMemory, QueueOrder, SlabMap};
        let dag = Dag::new();
        let lane = dag.create_lane(QueueOrder::InOrder);
        let slabs = SlabMap::<SlabOwner<Context, &u8>>::default();
        let pools: Vec<_> = (0..2)
            .map(|_| Arc::new(Pool::new(dag.clone(), Arc::new(HostMemory::new()), PoolConfig::new(UsmKind::Device))))
            .collect();
        let bases: Vec<usize> = pools
            .iter()
            .map(|pool| {
                let block = pool.alloc(&lane, &[], 1000, 0, false).unwrap();
                let base = block.ptr.as_ptr() as usize;
                let owner =
                    SlabOwner { pool: Arc::downgrade(pool), usm_pool: Weak::new(), kind: UsmKind::Device, device: None };
                slabs.insert(base, block.size, owner);
                base
            })
            .collect();
        let asked = std::cell::Cell::new(0);
        let accept = |yes: bool| {
            let asked = &asked;
            move |_: &Arc<Pool>, _: &SlabOwner<Context, &u8>| {
                asked.set(asked.get() + 1);
                yes
            }
        };
        let lane = &lane;
        let free = |at: usize| move |p: &Pool| p.free(lane, &[], at as *const u8, false).map(|_| ());
        let (likely, other) = (Some(&pools[0]), bases[1]);
        // Refused by the likely pool, so the slab map decides.
        let refused = slabs.free_with(other, likely, accept(false), free(other));
        assert_eq!(refused, Some(Err(UR_RESULT_ERROR_INVALID_VALUE)));
        assert_eq!(asked.get(), 1);
        assert_eq!(slabs.free_with(other, likely, accept(true), free(other)), Some(Ok(())), "still live when refused");
        assert_eq!(asked.get(), 2);
        // Taken by the likely pool: no slab map lookup.
        assert_eq!(slabs.free_with(bases[0], likely, accept(false), free(bases[0])), Some(Ok(())));
        assert_eq!(asked.get(), 2, "accept is not asked");
        let twice = slabs.free_with(bases[0], likely, accept(true), free(bases[0]));
        assert!(twice.is_some_and(|r| r.is_err()), "freed twice");
        let interior = slabs.free_with(other + 8, None, accept(true), free(other + 8));
        assert!(interior.is_some_and(|r| r.is_err()), "an interior pointer");
        assert_eq!(slabs.free_with(8, likely, accept(true), free(8)), None, "no slab holds it");
    }
}
