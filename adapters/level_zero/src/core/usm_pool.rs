//! USM pools. A pool serves asynchronous allocations from engine pools
//! (`ur_core::engine`) it makes per USM kind on first use; a blocking
//! allocation with a pool is the driver's own, tagged with the pool,
//! zeroed when asked and counted in its statistics. Releasing a pool
//! leaves its live blocks valid until they are freed.

use super::context::Context;
use super::device::Device;
use super::engine::{SlabOwner, ZeMemory};
use crate::DDI;
use std::sync::{Arc, Weak};
use ur_core::engine::{self, UsmKind};
use ur_core::handle::{handle_of, ArcObject, HandleHeader, ObjectKind};
use ur_core::usm_async::{PoolApi, PoolDesc};
use ur_core::usm_pool::PoolBase;
use ur_core::*;

/// Least slab an engine pool takes from the driver, unless the pool's
/// descriptor names one.
const SLAB_SIZE: usize = 1 << 20;

#[repr(C)]
pub struct UsmPool {
    header: HandleHeader,
    pub base: PoolBase<Context, Arc<Device>>,
    /// A user's pool keeps its context alive, as its handle does.
    _owner: Option<Arc<Context>>,
    /// This pool, for the slabs of its engine pools to name their owner.
    me: Weak<UsmPool>,
}

ur_core::ur_object!(UsmPool, UsmPool, ur_usm_pool_handle_t_);

// SAFETY: pools are made only by `new` and `device_default`, in an `Arc`.
unsafe impl ArcObject for UsmPool {}

impl UsmPool {
    /// A user's pool: of `urUSMPoolCreate` when `device` is `None`, else
    /// of `urUSMPoolCreateExp`.
    pub fn new(context: Arc<Context>, device: Option<Arc<Device>>, desc: PoolDesc, api: PoolApi) -> Arc<UsmPool> {
        let pool = Arc::new_cyclic(|me| UsmPool {
            header: HandleHeader::new(&DDI, ObjectKind::UsmPool),
            base: PoolBase::user(&context, device, context.devices.iter().cloned(), desc, api),
            _owner: Some(context.clone()),
            me: me.clone(),
        });
        context.pools.add_user(&pool);
        pool
    }

    /// The default pool of `device` in `context` (made once by the context).
    pub fn device_default(context: &Arc<Context>, device: &Arc<Device>) -> Arc<UsmPool> {
        Arc::new_cyclic(|me| UsmPool {
            header: HandleHeader::new(&DDI, ObjectKind::UsmPool),
            base: PoolBase::device_default(context, device.clone()),
            _owner: None,
            me: me.clone(),
        })
    }

    pub fn handle(&self) -> ur_usm_pool_handle_t {
        handle_of(self)
    }

    /// The engine pool serving `kind` memory of `device`, made on first
    /// use. A pool of `urUSMPoolCreate` keeps each device's device memory
    /// apart; its host and shared memory serve every device of the context.
    pub fn engine_pool(&self, kind: UsmKind, device: &Arc<Device>) -> UrResult<&Arc<engine::Pool>> {
        self.base.engine_pool(kind, Some(device), |context, mut config, serving| {
            if config.min_slab_size == engine::config::DEFAULT_SLAB_SIZE {
                config.min_slab_size = SLAB_SIZE;
            }
            let device = if kind == UsmKind::Host { None } else { serving.cloned() };
            let dag = context.engine.dag().clone();
            Ok(Arc::new_cyclic(|pool| {
                let owner = SlabOwner {
                    pool: pool.clone(),
                    usm_pool: self.me.clone(),
                    kind,
                    device,
                };
                let source = ZeMemory { context: context.ze.clone(), slabs: context.slabs.clone(), owner };
                engine::Pool::new(dag, Arc::new(source), config)
            }))
        })
    }
}

impl Drop for UsmPool {
    /// Blocks still live keep their engine pool: the context holds it until
    /// they are freed.
    fn drop(&mut self) {
        if let Some(context) = self.base.context() {
            context.pools.keep_until_freed(&self.base.engine);
        }
    }
}
