//! The USM pool object, written once for every backend: the handle header,
//! the [`PoolBase`] (context, device, descriptor, engine pools) and the
//! pool's own weak reference, beside `raw`, what the backend keeps for it
//! (a native memory pool, a host allocator), behind [`RawPool`].

use crate::abi::*;
use crate::engine::{self, PoolConfig, UsmKind};
use crate::hal::Backend;
use crate::handle::{handle_of, ArcObject, HandleHeader, ObjectKind, UrObject};
use crate::usm_pool::PoolBase;
use crate::UrResult;
use std::ops::Deref;
use std::sync::{Arc, Weak};

/// A backend whose pools are [`UsmPool`]s: its raw pool type, and how a
/// pool holds its device.
pub trait RawPools: Backend<Pool = UsmPool<Self>> {
    type RawPool: RawPool<Self>;
    /// How a pool holds its device (`Arc<Device>`, or `&'static Device`
    /// where devices live as long as the adapter).
    type DeviceRef: Deref<Target = Self::Device> + Clone + Send + Sync + 'static;
}

/// The backend's side of a pool. Each function gets the whole pool.
pub trait RawPool<B: RawPools>: Send + Sync + Sized + 'static {
    /// A new engine pool for the pool's `kind` memory, from `context` (the
    /// pool's), with `config`, serving `device` (none for host memory, or
    /// for shared memory of a pool of every device).
    fn make_engine_pool(
        pool: &UsmPool<B>,
        kind: UsmKind,
        context: Arc<B::Context>,
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
    /// Runs once as the pool goes, before its fields drop.
    fn release(_pool: &mut UsmPool<B>) {}
}

/// A UR USM pool: `urUSMPoolCreate`, `urUSMPoolCreateExp`, or a device's
/// default pool.
#[repr(C)]
pub struct UsmPool<B: RawPools> {
    /// First: the handle protocol reads it at offset 0.
    header: HandleHeader,
    pub base: PoolBase<B::Context, B::DeviceRef>,
    /// The pool itself, for the owners of its slabs (weak: slabs must not
    /// keep their pool).
    pub me: Weak<Self>,
    pub raw: B::RawPool,
}

// SAFETY: `#[repr(C)]` with the `HandleHeader` first.
unsafe impl<B: RawPools> UrObject for UsmPool<B> {
    const KIND: ObjectKind = ObjectKind::UsmPool;
    type Handle = ur_usm_pool_handle_t_;
    fn last_user_release(&self) {
        B::RawPool::last_user_release(self)
    }
}

// SAFETY: pools are made only by `UsmPool::new`, in an `Arc`.
unsafe impl<B: RawPools> ArcObject for UsmPool<B> {}

impl<B: RawPools> UsmPool<B> {
    pub fn new(base: PoolBase<B::Context, B::DeviceRef>, raw: B::RawPool) -> Arc<Self> {
        Arc::new_cyclic(|me| UsmPool { header: HandleHeader::new(B::ddi(), ObjectKind::UsmPool), base, me: me.clone(), raw })
    }

    /// The pool's handle (the caller owns no reference through it).
    pub fn handle(&self) -> ur_usm_pool_handle_t {
        handle_of(self)
    }
}

impl<B: RawPools> Drop for UsmPool<B> {
    fn drop(&mut self) {
        B::RawPool::release(self);
    }
}

// The core still reaches pools through `hal::Pool`; its answers are the
// pool's base, or the raw pool's.
impl<B: RawPools> crate::hal::Pool<B> for UsmPool<B> {
    type DeviceRef = B::DeviceRef;
    fn base(&self) -> &PoolBase<B::Context, B::DeviceRef> {
        &self.base
    }
    fn info(&self, prop: ur_usm_pool_info_t) -> UrResult<usize> {
        B::RawPool::info(self, prop)
    }
    fn set_info(&self, prop: ur_usm_pool_info_t, value: usize) -> UrResult {
        B::RawPool::set_info(self, prop, value)
    }
    fn trim_to(&self, keep: usize) {
        B::RawPool::trim_to(self, keep)
    }
    fn make_engine_pool(
        &self,
        kind: UsmKind,
        context: Arc<B::Context>,
        config: PoolConfig,
        device: Option<&B::DeviceRef>,
    ) -> UrResult<Arc<engine::Pool>> {
        B::RawPool::make_engine_pool(self, kind, context, config, device)
    }
}
