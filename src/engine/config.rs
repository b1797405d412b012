//! How a pool is set up, and reading that from `ur_usm_pool_desc_t`.

use super::backend::UsmKind;
use super::policy::ReusePolicy;
use crate::abi::*;
use crate::UrResult;

/// Slab size used when the pool's creator names none.
pub const DEFAULT_SLAB_SIZE: usize = 2 << 20;
/// Block granularity (and least alignment) used when the adapter names none.
pub const DEFAULT_GRANULE: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolConfig {
    pub kind: UsmKind,
    /// Every block's size and address is a multiple of this power of two.
    pub granule: usize,
    /// Bigger allocations get memory of their own from the backend, which
    /// goes back as soon as their free completes (`maxPoolableSize`).
    pub max_poolable_size: usize,
    /// Least size of a slab taken from the backend (`minDriverAllocSize`).
    pub min_slab_size: usize,
    /// The pool never reserves more than this (`UR_USM_POOL_INFO_MAXIMUM_SIZE_EXP`).
    pub max_size: usize,
    /// At each synchronisation point ([`Pool::collect`](super::Pool::collect),
    /// a blocking free, setting the threshold), reserved memory above this
    /// goes back to the backend, in whole slabs (or committed granules of
    /// ranges) that are free and that no pending command can touch
    /// (`UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP`). Never on completion
    /// alone. The default keeps everything.
    pub release_threshold: usize,
    /// Hand every block out zeroed (`UR_USM_POOL_FLAG_ZERO_INITIALIZE_BLOCK`).
    pub zero_init: bool,
    /// `UR_USM_POOL_FLAG_USE_NATIVE_MEMORY_POOL_EXP`: a hint for the adapter.
    pub native_pool: bool,
    /// `UR_USM_POOL_FLAG_READ_ONLY_EXP`: a hint for the adapter.
    pub read_only: bool,
    pub policy: ReusePolicy,
}

impl PoolConfig {
    pub fn new(kind: UsmKind) -> Self {
        PoolConfig {
            kind,
            granule: DEFAULT_GRANULE,
            max_poolable_size: usize::MAX,
            min_slab_size: DEFAULT_SLAB_SIZE,
            max_size: usize::MAX,
            release_threshold: usize::MAX,
            zero_init: false,
            native_pool: false,
            read_only: false,
            policy: ReusePolicy::default(),
        }
    }

    /// Reads a pool descriptor and its `pNext` chain (a
    /// `ur_usm_pool_limits_desc_t` is honoured, other links are skipped).
    ///
    /// # Safety
    /// `desc`, when not null, and every link of its chain must be valid UR
    /// descriptors.
    pub unsafe fn from_ur_desc(kind: UsmKind, desc: *const ur_usm_pool_desc_t) -> UrResult<Self> {
        let desc = desc.as_ref().ok_or(UR_RESULT_ERROR_INVALID_NULL_POINTER)?;
        if desc.flags & UR_USM_POOL_FLAGS_MASK != 0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let mut config = PoolConfig::new(kind);
        config.zero_init = desc.flags & UR_USM_POOL_FLAG_ZERO_INITIALIZE_BLOCK.0 != 0;
        config.native_pool = desc.flags & UR_USM_POOL_FLAG_USE_NATIVE_MEMORY_POOL_EXP.0 != 0;
        config.read_only = desc.flags & UR_USM_POOL_FLAG_READ_ONLY_EXP.0 != 0;
        crate::boundary::for_each_in_chain(desc.pNext, |stype, link| {
            if stype == UR_STRUCTURE_TYPE_USM_POOL_LIMITS_DESC {
                // SAFETY: the stype says which descriptor this link is.
                let limits = &*(link as *const ur_usm_pool_limits_desc_t);
                config.max_poolable_size = limits.maxPoolableSize;
                if limits.minDriverAllocSize != 0 {
                    config.min_slab_size = limits.minDriverAllocSize;
                }
            }
            Ok(())
        })?;
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_flags_and_limits() {
        let limits = ur_usm_pool_limits_desc_t {
            stype: UR_STRUCTURE_TYPE_USM_POOL_LIMITS_DESC,
            pNext: std::ptr::null(),
            maxPoolableSize: 4096,
            minDriverAllocSize: 1 << 16,
        };
        let desc = ur_usm_pool_desc_t {
            stype: UR_STRUCTURE_TYPE_USM_POOL_DESC,
            pNext: &limits as *const _ as *const _,
            flags: UR_USM_POOL_FLAG_ZERO_INITIALIZE_BLOCK.0
                | UR_USM_POOL_FLAG_USE_NATIVE_MEMORY_POOL_EXP.0,
        };
        let c = unsafe { PoolConfig::from_ur_desc(UsmKind::Device, &desc) }.unwrap();
        assert!(c.zero_init && c.native_pool && !c.read_only);
        assert_eq!((c.max_poolable_size, c.min_slab_size), (4096, 1 << 16));
    }

    #[test]
    fn rejects_unknown_flags_and_null() {
        let desc = ur_usm_pool_desc_t {
            stype: UR_STRUCTURE_TYPE_USM_POOL_DESC,
            pNext: std::ptr::null(),
            flags: 1 << 5,
        };
        assert_eq!(
            unsafe { PoolConfig::from_ur_desc(UsmKind::Host, &desc) },
            Err(UR_RESULT_ERROR_INVALID_ENUMERATION)
        );
        assert_eq!(
            unsafe { PoolConfig::from_ur_desc(UsmKind::Host, std::ptr::null()) },
            Err(UR_RESULT_ERROR_INVALID_NULL_POINTER)
        );
    }
}
