//! What every adapter's USM pool objects share: [`PoolBase`], the part of
//! a pool handle that is not the backend's own (its context, the device it
//! serves, its descriptor and the engine pools behind it).

use crate::abi::*;
use crate::engine::{Pool, PoolConfig, UsmKind};
use crate::handle::{handle_of_weak, UrObject};
use crate::usm_async::{PoolApi, PoolDesc, PoolSet};
use crate::UrResult;
use std::ops::Deref;
use std::sync::{Arc, Weak};

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
    /// or `urUSMPoolCreateExp` (Exp).
    pub fn user(context: &Arc<C>, device: Option<D>, desc: PoolDesc, api: PoolApi) -> Self {
        // The threshold and maximum size do not depend on the kind.
        let config = desc.engine_config(UsmKind::Device, api);
        PoolBase {
            context: Arc::downgrade(context),
            device,
            is_default: false,
            desc,
            api,
            engine: PoolSet::from_config(&config),
        }
    }

    /// The default pool of `device` in `context`: the engine's own
    /// settings (threshold `SIZE_MAX`, no maximum size).
    pub fn device_default(context: &Arc<C>, device: D) -> Self {
        PoolBase {
            context: Arc::downgrade(context),
            device: Some(device),
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

    /// The engine pool serving `kind` memory, made on first use by `make`
    /// from the pool's context and [`engine_config`](Self::engine_config).
    #[inline]
    pub fn engine_pool(
        &self,
        kind: UsmKind,
        make: impl FnOnce(Arc<C>, PoolConfig) -> UrResult<Arc<Pool>>,
    ) -> UrResult<&Arc<Pool>> {
        if let Some(p) = self.engine.get(kind) {
            return Ok(p);
        }
        self.engine.get_or_make(kind, || {
            let context = self.context().ok_or(UR_RESULT_ERROR_INVALID_CONTEXT)?;
            make(context, self.engine_config(kind))
        })
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
        let exp = PoolBase::user(&mine, Some(&devices[0]), PoolDesc::default(), PoolApi::Exp);
        assert!(exp.serves(&mine, &devices[0]));
        assert!(!exp.serves(&mine, &devices[1]), "another device");
        assert!(!exp.serves(&other, &devices[0]), "another context");
        let classic = PoolBase::<_, &u8>::user(&mine, None, PoolDesc::default(), PoolApi::Classic);
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
        let user = PoolBase::user(&c, Some(&0u8), desc, PoolApi::Exp);
        assert!(!user.is_default && user.zero_init());
        assert_eq!(user.engine_config(UsmKind::Host).release_threshold, 0);
    }
}
