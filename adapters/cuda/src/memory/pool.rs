//! USM pools. Device memory of a pool created with
//! `UR_USM_POOL_FLAG_USE_NATIVE_MEMORY_POOL_EXP` comes from a new native
//! stream-ordered CUDA pool (`cuMemPoolCreate`); other pools and the default
//! pools use the shared async engine or CUDA's pools as
//! [`ENGINE_FOR_DEVICE_POOLS`] says. Shared and host memory always come from
//! the engine, which has no CUDA counterpart for them. The engine pools of
//! a handle are a [`PoolSet`], as on the other adapters; a pool's statistics
//! add its native pool's attributes to the set's figures.
//!
//! A pool's descriptor is read by `ur_core::usm_async`: for a pool made by
//! `urUSMPoolCreateExp` its limits are a maximum size and an initial release
//! threshold (as libsycl passes them), for `urUSMPoolCreate` UR's pooled
//! size and slab size. Pools the user makes start at threshold 0.

use super::source::{CudaMemory, SlabOwner};
use super::UsmKind;
use crate::context::Context;
use crate::device::Device;
use crate::conv::CuExt;
use crate::driver::{self, CUdeviceptr, CUstream, MemPool, PoolAttr};
use crate::Cuda;
use std::sync::{Arc, Weak};
use ur_core::engine;
use ur_core::pool::RawPool;
use ur_core::usm_async::{PoolApi, PoolDesc};
use ur_core::usm_pool::PoolBase;
use ur_core::*;

/// A USM pool of this adapter: the core's, with [`CudaPool`] as its raw
/// part.
pub type UsmPool = ur_core::pool::UsmPool<Cuda>;

/// What a pool keeps beside the core's part (whose engine pools serve host
/// and shared memory, and device memory unless that is native).
pub struct CudaPool {
    /// The GPU whose memory the pool holds; for a pool of every GPU of its
    /// context (`urUSMPoolCreate`), whose device memory the base keeps by
    /// GPU, the first GPU, which serves its shared and host memory.
    device: Arc<Device>,
    /// The native pool serving device allocations, when they are native.
    native: Option<Arc<MemPool>>,
}

/// Pools made without `UR_USM_POOL_FLAG_USE_NATIVE_MEMORY_POOL_EXP`, and
/// the default pools, serve device memory from the engine when this is set,
/// else from CUDA's pools (the default pool then being the GPU's own). The
/// benchmark in `bench/` measures both.
const ENGINE_FOR_DEVICE_POOLS: bool = true;

/// The memory a native CUDA pool reserves at a time for small allocations:
/// a 1 MiB `cuMemAllocFromPoolAsync` on a new pool reserves 32 MiB (H100,
/// CUDA 13), and the pool gives back only whole chunks. A release threshold
/// below one chunk would give back every freed block at the next
/// synchronisation, so CUDA is told the threshold rounded up to whole
/// chunks; the pool reports the threshold it was given.
const NATIVE_POOL_CHUNK: u64 = 32 << 20;

/// The threshold a native pool is given for a requested `threshold`.
fn native_threshold(threshold: usize) -> u64 {
    match threshold as u64 {
        0 => 0,
        t => t.checked_next_multiple_of(NATIVE_POOL_CHUNK).unwrap_or(u64::MAX),
    }
}

/// Pools need a GPU with CUDA memory pools.
fn check_device(device: &Device) -> UrResult {
    if device.raw.props.memory_pools {
        Ok(())
    } else {
        Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
    }
}

/// The device's default pool in `context`.
pub fn device_default(context: &Arc<Context>, device: &Arc<Device>) -> UrResult<Arc<UsmPool>> {
    check_device(device)?;
    let native = if ENGINE_FOR_DEVICE_POOLS {
        None
    } else {
        Some(device.raw.default_mem_pool()?)
    };
    Ok(UsmPool::new(
        // The engine's default pools' own threshold (`SIZE_MAX`) and no
        // maximum size: taking them leaves them as they are.
        PoolBase::device_default(context, device.clone()),
        CudaPool { device: device.clone(), native },
    ))
}

/// A new pool of `device`'s memory, or, with none, of every GPU of
/// `context`. Only a pool of one GPU may be native.
pub fn create(
    context: &Arc<Context>,
    one_device: Option<&Arc<Device>>,
    desc: PoolDesc,
    api: PoolApi,
) -> UrResult<Arc<UsmPool>> {
    let device = match (one_device, context.devices.as_slice()) {
        (Some(d), _) | (None, [d]) => d,
        (None, [first, ..]) if desc.flags & UR_USM_POOL_FLAG_USE_NATIVE_MEMORY_POOL_EXP.0 == 0 => first,
        _ => return Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE),
    };
    for d in one_device.map_or(context.devices.as_slice(), std::slice::from_ref) {
        check_device(d)?;
    }
    device.raw.activate()?;
    let config = desc.engine_config(engine::UsmKind::Device, api);
    let wants_native =
        desc.flags & UR_USM_POOL_FLAG_USE_NATIVE_MEMORY_POOL_EXP.0 != 0 || !ENGINE_FOR_DEVICE_POOLS;
    let native = if wants_native {
        let pool = MemPool::new(device.raw.cu).cu()?;
        pool.set_u64(
            PoolAttr::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            native_threshold(config.release_threshold),
        )
        .cu()?;
        Some(Arc::new(pool))
    } else {
        None
    };
    Ok(UsmPool::new(
        PoolBase::user(context, one_device.cloned(), context.devices.iter().cloned(), desc, api),
        CudaPool { device: device.clone(), native },
    ))
}

/// A new reference to `pool`.
pub fn arc(pool: &UsmPool) -> Option<Arc<UsmPool>> {
    pool.me.upgrade()
}

/// Stream-ordered allocation: usable by work after this point of `stream`.
/// A native pool with a maximum size refuses what would take its
/// memory in use past it.
pub fn alloc_async(pool: &UsmPool, size: usize, stream: CUstream) -> UrResult<CUdeviceptr> {
    let native = pool.raw.native()?;
    let max_size = pool.base.engine.maximum_size();
    if max_size != 0 {
        let used = native
            .get_u64(PoolAttr::CU_MEMPOOL_ATTR_USED_MEM_CURRENT)
            .cu()? as usize;
        if used.saturating_add(size) > max_size {
            return Err(UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY);
        }
    }
    let p = native.alloc_async(size, stream).cu()?;
    if pool.base.zero_init() {
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
pub fn alloc_blocking(pool: &UsmPool, size: usize) -> UrResult<CUdeviceptr> {
    pool.raw.device.raw.activate()?;
    let p = alloc_async(pool, size, std::ptr::null_mut())?;
    driver::ctx_synchronize().cu()?;
    Ok(p)
}

/// `urUSMPoolTrimToExp`: gives unused memory back to the driver. The
/// native pool keeps at least `keep` bytes reserved, and so do the engine
/// pools together.
fn try_trim_to(pool: &UsmPool, keep: usize) -> UrResult {
    pool.raw.device.raw.activate()?;
    if let Some(native) = &pool.raw.native {
        native.trim_to(keep).cu()?;
    }
    pool.base.engine.trim_to(keep);
    Ok(())
}

impl CudaPool {
    /// Whether device allocations are served by a native CUDA pool.
    pub fn is_native(&self) -> bool {
        self.native.is_some()
    }

    fn native(&self) -> UrResult<&MemPool> {
        self.native
            .as_deref()
            .ok_or(UR_RESULT_ERROR_INVALID_OPERATION)
    }

    /// A native pool's attribute, 0 without a native pool.
    fn native_attr(&self, attr: PoolAttr) -> UrResult<usize> {
        match &self.native {
            Some(native) => {
                self.device.raw.activate()?;
                Ok(native.get_u64(attr).cu()? as usize)
            }
            None => Ok(0),
        }
    }
}

/// Statistics, settings and trimming add the native pool to the engine's.
impl RawPool<Cuda> for CudaPool {
    /// Device, host or managed memory of the pool's GPU (or of `serving`,
    /// for device memory of a pool of every device). A default pool's
    /// engine pools are the context engine's, named by device.
    fn make_engine_pool(
        pool: &UsmPool,
        kind: engine::UsmKind,
        context: Arc<Context>,
        config: engine::PoolConfig,
        serving: Option<&Arc<Device>>,
    ) -> UrResult<Arc<engine::Pool>> {
        let cuda = kind;
        let gpu = serving.unwrap_or(&pool.raw.device).clone();
        let source = |engine_pool: &Weak<engine::Pool>| -> Arc<dyn engine::MemorySource> {
            let owner = SlabOwner {
                pool: engine_pool.clone(),
                usm_pool: pool.me.clone(),
                kind: cuda,
                device: if cuda == UsmKind::Host { None } else { serving.cloned() },
            };
            Arc::new(CudaMemory::new(gpu.clone(), &context.devices, cuda, context.slabs.clone(), owner))
        };
        if pool.base.is_default {
            let key = crate::context::device_index(&context, &pool.raw.device)?;
            return Ok(context.engine.default_pool_named(key, kind, |p| (source(p), config)));
        }
        Ok(context.engine.create_pool_named(|p| (source(p), config)))
    }

    /// The size figures of `urUSMPoolGetInfo` and `urUSMPoolGetInfoExp`
    /// (the core answers the reference count and the context): the engine
    /// pools' figures from the set, plus the native pool's attributes.
    fn info(pool: &UsmPool, prop: ur_usm_pool_info_t) -> UrResult<usize> {
        let attr = match prop {
            // A default pool backed by the GPU's own pool reports that
            // pool's threshold (the set follows the engine's defaults).
            UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP if pool.base.is_default && pool.raw.native.is_some() => {
                return pool.raw.native_attr(PoolAttr::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)
            }
            UR_USM_POOL_INFO_RESERVED_CURRENT_EXP => PoolAttr::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT,
            UR_USM_POOL_INFO_RESERVED_HIGH_EXP => PoolAttr::CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH,
            UR_USM_POOL_INFO_USED_CURRENT_EXP => PoolAttr::CU_MEMPOOL_ATTR_USED_MEM_CURRENT,
            UR_USM_POOL_INFO_USED_HIGH_EXP => PoolAttr::CU_MEMPOOL_ATTR_USED_MEM_HIGH,
            _ => return pool.base.engine.info(prop),
        };
        let native = pool.raw.native_attr(attr)?;
        Ok(native.saturating_add(pool.base.engine.info(prop)?))
    }

    /// `urUSMPoolSetInfoExp`: the release threshold, and resetting a
    /// high-water mark (only to zero, as CUDA allows), on the native pool
    /// and then the engine pools.
    fn set_info(pool: &UsmPool, prop: ur_usm_pool_info_t, value: usize) -> UrResult {
        pool.raw.device.raw.activate()?;
        let attr = match prop {
            UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP => PoolAttr::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            UR_USM_POOL_INFO_RESERVED_HIGH_EXP | UR_USM_POOL_INFO_USED_HIGH_EXP if value != 0 => {
                return Err(UR_RESULT_ERROR_INVALID_VALUE)
            }
            UR_USM_POOL_INFO_RESERVED_HIGH_EXP => PoolAttr::CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH,
            UR_USM_POOL_INFO_USED_HIGH_EXP => PoolAttr::CU_MEMPOOL_ATTR_USED_MEM_HIGH,
            _ => return Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        };
        if let Some(native) = &pool.raw.native {
            let native_value = match prop {
                UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP => native_threshold(value),
                _ => value as u64,
            };
            native.set_u64(attr, native_value).cu()?;
        }
        pool.base.engine.set_info(prop, value)
    }

    /// Trimming is a hint: a driver failure only leaves more memory kept.
    fn trim_to(pool: &UsmPool, keep: usize) {
        if let Err(e) = try_trim_to(pool, keep) {
            log::warning(&format!("trimming a USM pool failed: {e:?}"));
        }
    }

    /// Blocks still live keep their engine pool: the context holds it until
    /// they are freed (they have no registry entry to hold it).
    fn release(pool: &mut UsmPool) {
        if let Some(context) = pool.base.context() {
            pool.base.engine
                .made()
                .filter(|p| p.live_blocks() > 0)
                .for_each(|p| context.raw.keep_pool(p.clone()));
        }
    }
}
