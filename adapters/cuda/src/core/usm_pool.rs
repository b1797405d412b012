//! USM pools. Device memory comes from a native stream-ordered CUDA pool:
//! a new one per pool created with `urUSMPoolCreateExp`, or the GPU's default
//! pool (the one `cudaMallocAsync` uses) for a context's default device pool.
//! The pool's statistics, release threshold and trimming are the native
//! pool's own attributes.

use super::context::Context;
use super::device::Device;
use crate::conv::CuExt;
use crate::driver::{self, CUdeviceptr, CUstream, MemPool, PoolAttr};
use crate::DDI;
use std::sync::{Arc, Weak};
use ur_core::handle::{HandleHeader, ObjectKind, UrObject};
use ur_core::info::InfoOut;
use ur_core::*;

/// `ur_usm_pool_limits_desc_t`, kept for reference: a native pool sizes its
/// own driver requests.
#[derive(Clone, Copy, Debug, Default)]
pub struct PoolLimits {
    pub max_poolable_size: usize,
    pub min_driver_alloc_size: usize,
}

#[repr(C)]
pub struct UsmPool {
    header: HandleHeader,
    /// Weak: a context keeps its default pools, which must not keep it.
    context: Weak<Context>,
    pub device: Arc<Device>,
    pub flags: ur_usm_pool_flags_t,
    pub is_default: bool,
    pub limits: Option<PoolLimits>,
    native: Arc<MemPool>,
}

const _: () = assert!(core::mem::offset_of!(UsmPool, header) == 0);

// SAFETY: `#[repr(C)]` with the header first.
unsafe impl UrObject for UsmPool {
    const KIND: ObjectKind = ObjectKind::UsmPool;
    type Handle = ur_usm_pool_handle_t_;
}

impl UsmPool {
    fn check_device(device: &Device) -> UrResult {
        if device.props.memory_pools {
            Ok(())
        } else {
            Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
        }
    }

    /// The device's default pool in `context`.
    pub fn device_default(context: &Arc<Context>, device: &Arc<Device>) -> UrResult<Arc<UsmPool>> {
        Self::check_device(device)?;
        Ok(Arc::new(UsmPool {
            header: HandleHeader::new(&DDI, ObjectKind::UsmPool),
            context: Arc::downgrade(context),
            device: device.clone(),
            flags: UR_USM_POOL_FLAG_USE_NATIVE_MEMORY_POOL_EXP.0,
            is_default: true,
            limits: None,
            native: device.default_mem_pool()?,
        }))
    }

    /// A new pool of `device`'s memory.
    pub fn create(
        context: &Arc<Context>,
        device: &Arc<Device>,
        flags: ur_usm_pool_flags_t,
        limits: Option<PoolLimits>,
    ) -> UrResult<Arc<UsmPool>> {
        Self::check_device(device)?;
        device.activate()?;
        let native = Arc::new(MemPool::new(device.cu).cu()?);
        Ok(Arc::new(UsmPool {
            header: HandleHeader::new(&DDI, ObjectKind::UsmPool),
            context: Arc::downgrade(context),
            device: device.clone(),
            flags,
            is_default: false,
            limits,
            native,
        }))
    }

    pub fn handle(&self) -> ur_usm_pool_handle_t {
        self as *const Self as ur_usm_pool_handle_t
    }

    pub fn context_handle(&self) -> ur_context_handle_t {
        self.context.as_ptr() as ur_context_handle_t
    }

    pub fn context(&self) -> Option<Arc<Context>> {
        self.context.upgrade()
    }

    /// Whether allocations are served by a native CUDA pool.
    pub fn is_native(&self) -> bool {
        true
    }

    fn zero_initialize(&self) -> bool {
        self.flags & UR_USM_POOL_FLAG_ZERO_INITIALIZE_BLOCK.0 != 0
    }

    /// Stream-ordered allocation: usable by work after this point of `stream`.
    pub fn alloc_async(&self, size: usize, stream: CUstream) -> UrResult<CUdeviceptr> {
        let p = self.native.alloc_async(size, stream).cu()?;
        if self.zero_initialize() {
            // SAFETY: the block was just allocated on this stream.
            if let Err(e) = unsafe { driver::memset_async(p, 0, 1, size, stream) } {
                // SAFETY: give back the block we could not initialise.
                unsafe { driver::free_async(p, stream) }.cu()?;
                return Err(crate::conv::cu_error(e));
            }
        }
        Ok(p)
    }

    /// An allocation usable by any stream once this returns.
    pub fn alloc_blocking(&self, size: usize) -> UrResult<CUdeviceptr> {
        self.device.activate()?;
        let p = self.alloc_async(size, std::ptr::null_mut())?;
        driver::ctx_synchronize().cu()?;
        Ok(p)
    }

    fn stat(&self, attr: PoolAttr) -> UrResult<usize> {
        self.device.activate()?;
        Ok(self.native.get_u64(attr).cu()? as usize)
    }

    /// `urUSMPoolGetInfo` and `urUSMPoolGetInfoExp`.
    pub fn info(&self, prop: ur_usm_pool_info_t, out: InfoOut) -> UrResult {
        match prop {
            UR_USM_POOL_INFO_REFERENCE_COUNT => {
                // SAFETY: `self` lives in an `Arc`.
                out.value(unsafe { ur_core::handle::ref_count_of(self) })
            }
            UR_USM_POOL_INFO_CONTEXT => out.value(self.context_handle()),
            UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP => out.value(self.stat(PoolAttr::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)?),
            // A native pool has no cap of its own below the GPU's memory.
            UR_USM_POOL_INFO_MAXIMUM_SIZE_EXP => out.value(self.device.props.total_mem),
            UR_USM_POOL_INFO_RESERVED_CURRENT_EXP => {
                out.value(self.stat(PoolAttr::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?)
            }
            UR_USM_POOL_INFO_RESERVED_HIGH_EXP => out.value(self.stat(PoolAttr::CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH)?),
            UR_USM_POOL_INFO_USED_CURRENT_EXP => out.value(self.stat(PoolAttr::CU_MEMPOOL_ATTR_USED_MEM_CURRENT)?),
            UR_USM_POOL_INFO_USED_HIGH_EXP => out.value(self.stat(PoolAttr::CU_MEMPOOL_ATTR_USED_MEM_HIGH)?),
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    }

    /// `urUSMPoolSetInfoExp`: the release threshold, and resetting a
    /// high-water mark (only to zero, as CUDA allows).
    pub fn set_info(&self, prop: ur_usm_pool_info_t, value: usize) -> UrResult {
        self.device.activate()?;
        let attr = match prop {
            UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP => PoolAttr::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            UR_USM_POOL_INFO_RESERVED_HIGH_EXP | UR_USM_POOL_INFO_USED_HIGH_EXP if value != 0 => {
                return Err(UR_RESULT_ERROR_INVALID_VALUE)
            }
            UR_USM_POOL_INFO_RESERVED_HIGH_EXP => PoolAttr::CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH,
            UR_USM_POOL_INFO_USED_HIGH_EXP => PoolAttr::CU_MEMPOOL_ATTR_USED_MEM_HIGH,
            _ => return Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        };
        self.native.set_u64(attr, value as u64).cu()
    }

    /// `urUSMPoolTrimToExp`: gives unused memory back to the driver, keeping
    /// at least `keep` bytes reserved.
    pub fn trim_to(&self, keep: usize) -> UrResult {
        self.device.activate()?;
        self.native.trim_to(keep).cu()
    }
}
