//! The USM pool object, written once for every backend: the handle header,
//! the [`PoolBase`] (context, device, descriptor, engine pools) and the
//! pool's own weak reference, beside `raw`, what the backend keeps for it
//! (a native memory pool, a host allocator), behind [`RawPool`].

use crate::abi::*;
use crate::device::Device;
use crate::context::Context;
use crate::engine::{self, PoolConfig, UsmKind};
use crate::hal::Backend;
use crate::handle::{HandleHeader, ObjectKind};
use crate::usm_pool::PoolBase;
use crate::UrResult;
use std::sync::{Arc, Weak};

/// The backend's side of a pool. Each function gets the whole pool.
pub trait RawPool<B: Backend>: Send + Sync + Sized + 'static {
    /// The least slab an engine pool takes from the driver, unless the
    /// pool's descriptor names one; `None`: the engine's default.
    const MIN_SLAB_SIZE: Option<usize> = None;
    /// A new engine pool for the pool's `kind` memory, from `context` (the
    /// pool's), with `config` (its least slab [`Self::MIN_SLAB_SIZE`]),
    /// serving `device` (none for host memory, or for shared memory of a
    /// pool of every device).
    fn make_engine_pool(
        pool: &UsmPool<B>,
        kind: UsmKind,
        context: Arc<Context<B>>,
        config: PoolConfig,
        device: Option<&B::DeviceRef>,
    ) -> UrResult<Arc<engine::Pool>>;
    /// `RESERVED`/`USED` current and high, threshold, maximum size: the
    /// engine pools' figures; a backend with memory of its own beside them
    /// (CUDA's native pools) adds its own.
    fn info(pool: &UsmPool<B>, prop: ur_usm_pool_info_t) -> UrResult<usize> {
        pool.base.engine.info(prop)
    }
    fn set_info(pool: &UsmPool<B>, prop: ur_usm_pool_info_t, value: usize) -> UrResult {
        pool.base.engine.set_info(prop, value)
    }
    fn trim_to(pool: &UsmPool<B>, keep: usize) {
        pool.base.engine.trim_to(keep)
    }
    /// Runs when the user's last reference goes (see
    /// `UrObject::last_user_release`); internal holders may keep the pool.
    fn last_user_release(_pool: &UsmPool<B>) {}
    /// Runs once as the pool goes, before its fields drop. By default the
    /// engine pools with blocks still live stay with the context until
    /// those are freed.
    fn release(pool: &mut UsmPool<B>) {
        if let Some(context) = pool.base.context() {
            context.pools.keep_until_freed(&pool.base.engine);
        }
    }
}

/// A UR USM pool: `urUSMPoolCreate`, `urUSMPoolCreateExp`, or a device's
/// default pool.
#[repr(C)]
pub struct UsmPool<B: Backend> {
    /// First: the handle protocol reads it at offset 0.
    header: HandleHeader,
    pub base: PoolBase<Context<B>, B::DeviceRef>,
    /// The pool itself, for the owners of its slabs (weak: slabs must not
    /// keep their pool).
    pub me: Weak<Self>,
    pub raw: B::RawPool,
}

crate::core_object!(UsmPool, UsmPool, ur_usm_pool_handle_t_, {
    fn last_user_release(&self) {
        B::RawPool::last_user_release(self)
    }
});

impl<B: Backend> UsmPool<B> {
    pub fn new(base: PoolBase<Context<B>, B::DeviceRef>, raw: B::RawPool) -> Arc<Self> {
        Arc::new_cyclic(|me| UsmPool { header: HandleHeader::new(B::ddi(), ObjectKind::UsmPool), base, me: me.clone(), raw })
    }


    /// The pool's context, as a handle the caller does not own.
    pub fn context_handle(&self) -> ur_context_handle_t {
        self.base.context_handle()
    }

    pub fn belongs_to(&self, context: &Context<B>) -> bool {
        self.base.belongs_to(context)
    }

    /// Whether the pool may serve allocations of `device` in `context`.
    pub fn serves(&self, context: &Context<B>, device: &Device<B>) -> bool {
        self.base.serves(context, device)
    }

    /// A context's default pool: the user's retain and release leave it be.
    pub fn is_default(&self) -> bool {
        self.base.is_default
    }

    pub fn info(&self, prop: ur_usm_pool_info_t) -> UrResult<usize> {
        B::RawPool::info(self, prop)
    }

    pub fn set_info(&self, prop: ur_usm_pool_info_t, value: usize) -> UrResult {
        B::RawPool::set_info(self, prop, value)
    }

    pub fn trim_to(&self, keep: usize) {
        B::RawPool::trim_to(self, keep)
    }

    /// The engine pool serving `kind` memory of `device`, made on first use
    /// (see `PoolBase::engine_pool`).
    #[inline]
    pub fn engine_pool(&self, kind: UsmKind, device: Option<&Device<B>>) -> UrResult<&Arc<engine::Pool>> {
        self.base.engine_pool(kind, device, |context, mut config, serving| {
            if let Some(least) = B::RawPool::MIN_SLAB_SIZE.filter(|_| config.min_slab_size == engine::config::DEFAULT_SLAB_SIZE) {
                config.min_slab_size = least;
            }
            B::RawPool::make_engine_pool(self, kind, context, config, serving)
        })
    }
}

impl<B: Backend> Drop for UsmPool<B> {
    fn drop(&mut self) {
        B::RawPool::release(self);
    }
}
