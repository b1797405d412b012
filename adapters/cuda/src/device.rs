//! The platform and its devices: the one CUDA platform, every GPU the
//! driver reports, found once per process; and one UR device per GPU, with
//! the properties read once at discovery. Both are the core's objects
//! ([`Platform`], [`Device`]); [`PlatformCu`] and [`DeviceCu`] keep what the
//! driver knows of them.

use crate::conv::{self, CuExt};
use crate::driver::{self, Attr, CUcontext, CUdevice, CuResult, MemPool, Stream};
use crate::event::now_ns;
use crate::{Cuda, ADAPTER};
use std::ffi::CStr;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use ur_core::adapter::Adapter;
use ur_core::device::{RawDevice, RawPlatform};
use ur_core::engine;
use ur_core::info::InfoOut;
use ur_core::log;
use ur_core::*;

/// The platform of this adapter: the core's, with [`PlatformCu`] as its
/// raw part.
pub type Platform = ur_core::device::Platform<Cuda>;

/// What the platform keeps beside the core's part: its GPUs and the
/// driver's version.
pub struct PlatformCu {
    pub devices: Vec<Arc<Device>>,
    /// `cuDriverGetVersion`: 13000 for CUDA 13.0.
    pub driver_version: i32,
}

impl PlatformCu {
    pub const NAME: &'static str = "NVIDIA CUDA BACKEND";
    pub const VENDOR: &'static str = "NVIDIA Corporation";
    pub const PROFILE: &'static str = "FULL_PROFILE";

    /// The platform, or `None` when this machine has no usable CUDA driver or
    /// no GPU. Platforms live for the whole process (UR has no release for
    /// them).
    pub fn get() -> Option<&'static Arc<Platform>> {
        static PLATFORM: OnceLock<Option<Arc<Platform>>> = OnceLock::new();
        PLATFORM.get_or_init(Self::discover).as_ref()
    }

    fn discover() -> Option<Arc<Platform>> {
        if let Err(why) = driver::load() {
            log::info(&format!("no CUDA platform: {why}"));
            return None;
        }
        let count = match driver::device_count() {
            Ok(n) => n,
            Err(e) => {
                log::info(&format!(
                    "cuDeviceGetCount failed: {}",
                    driver::error_name(e)
                ));
                return None;
            }
        };
        if count <= 0 {
            log::info("the CUDA driver reports no GPU");
            return None;
        }
        let driver_version = driver::driver_version().unwrap_or(0);
        // Cyclic: each device names its platform (weakly).
        let platform = Platform::new_cyclic(|me| {
            let devices = (0..count)
                .filter_map(|ordinal| match DeviceCu::discover(me.clone(), ordinal) {
                    Ok(d) => Some(d),
                    Err(e) => {
                        log::warning(&format!("GPU {ordinal} skipped: {}", driver::error_name(e)));
                        None
                    }
                })
                .collect();
            PlatformCu {
                devices,
                driver_version,
            }
        });
        (!platform.raw.devices.is_empty()).then_some(platform)
    }

    /// "CUDA 13.0", from the driver's version number.
    pub fn version(&self) -> String {
        format!(
            "CUDA {}.{}",
            self.driver_version / 1000,
            (self.driver_version % 1000) / 10
        )
    }
}

impl RawPlatform<Cuda> for PlatformCu {
    /// One platform when the driver reports a GPU, none otherwise.
    fn all(_adapter: &Arc<Adapter>) -> UrResult<Vec<ur_platform_handle_t>> {
        Ok(PlatformCu::get().map(|p| p.handle()).into_iter().collect())
    }

    fn info(platform: &Platform, prop: ur_platform_info_t, out: InfoOut) -> UrResult {
        match prop {
            UR_PLATFORM_INFO_NAME => out.string(PlatformCu::NAME),
            UR_PLATFORM_INFO_VENDOR_NAME => out.string(PlatformCu::VENDOR),
            UR_PLATFORM_INFO_VERSION => out.string(&platform.raw.version()),
            UR_PLATFORM_INFO_EXTENSIONS => out.string(""),
            UR_PLATFORM_INFO_PROFILE => out.string(PlatformCu::PROFILE),
            // The value only: the caller holds the adapter while it uses
            // the platform.
            UR_PLATFORM_INFO_ADAPTER => {
                out.value(ur_core::handle::handle_of(&*ADAPTER.get_or_create()))
            }
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    }

    /// The option the driver JIT takes for a frontend option: PTX is taken
    /// as it is, so optimisation levels and precision hints have no backend
    /// spelling (empty); other options are unknown (`None`).
    fn backend_option(_: &Platform, frontend: &str) -> Option<&'static CStr> {
        match frontend {
            "-O0"
            | "-O1"
            | "-O2"
            | "-O3"
            | "-ftarget-compile-fast"
            | "-foffload-fp32-prec-div"
            | "-foffload-fp32-prec-sqrt" => Some(c""),
            _ => None,
        }
    }

    // No native handle: the CUDA driver has no platform object.
}

/// What the driver says about a GPU, read once.
#[derive(Clone, Debug, Default)]
pub struct Properties {
    pub name: String,
    pub total_mem: usize,
    pub multiprocessors: u32,
    pub max_threads_per_block: u32,
    pub max_block: [u32; 3],
    pub max_grid: [u32; 3],
    pub clock_khz: u32,
    pub memory_clock_khz: u32,
    pub bus_width: u32,
    pub l2_bytes: u32,
    pub shared_per_block: u32,
    pub constant_bytes: u32,
    pub warp_size: u32,
    pub compute_capability: (u32, u32),
    pub registers_per_block: u32,
    pub managed_memory: bool,
    pub concurrent_managed: bool,
    pub pageable_access: bool,
    pub can_map_host: bool,
    pub host_native_atomics: bool,
    pub memory_pools: bool,
    pub ecc: bool,
    pub integrated: bool,
    pub cooperative_launch: bool,
    pub pci_device_id: u32,
    pub pci_address: String,
    pub uuid: [u8; 16],
}

impl Properties {
    fn read(dev: CUdevice) -> CuResult<Properties> {
        let a = |attr| driver::device_attribute(dev, attr).map(|v| v.max(0) as u32);
        let flag = |attr| driver::device_attribute(dev, attr).map(|v| v != 0);
        Ok(Properties {
            name: driver::device_name(dev)?,
            total_mem: driver::device_total_mem(dev)?,
            multiprocessors: a(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            max_threads_per_block: a(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            max_block: [
                a(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)?,
                a(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)?,
                a(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)?,
            ],
            max_grid: [
                a(Attr::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
                a(Attr::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
                a(Attr::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
            ],
            clock_khz: a(Attr::CU_DEVICE_ATTRIBUTE_CLOCK_RATE).unwrap_or(0),
            memory_clock_khz: a(Attr::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE).unwrap_or(0),
            bus_width: a(Attr::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH).unwrap_or(0),
            l2_bytes: a(Attr::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?,
            shared_per_block: a(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)?,
            constant_bytes: a(Attr::CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY)?,
            warp_size: a(Attr::CU_DEVICE_ATTRIBUTE_WARP_SIZE)?,
            compute_capability: (
                a(Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
                a(Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
            ),
            registers_per_block: a(Attr::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK)?,
            managed_memory: flag(Attr::CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY)?,
            concurrent_managed: flag(Attr::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS)?,
            pageable_access: flag(Attr::CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS)?,
            can_map_host: flag(Attr::CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY)?,
            host_native_atomics: flag(Attr::CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED)?,
            memory_pools: flag(Attr::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED)?,
            ecc: flag(Attr::CU_DEVICE_ATTRIBUTE_ECC_ENABLED)?,
            integrated: flag(Attr::CU_DEVICE_ATTRIBUTE_INTEGRATED)?,
            cooperative_launch: flag(Attr::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH)?,
            pci_device_id: a(Attr::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)?,
            pci_address: driver::device_pci_bus_id(dev)
                .unwrap_or_default()
                .to_lowercase(),
            uuid: driver::device_uuid(dev).unwrap_or_default(),
        })
    }
}

/// A retained primary context, shared by every thread.
#[derive(Clone, Copy)]
struct PrimaryContext(CUcontext);
// SAFETY: a CUDA context may be made current on any thread.
unsafe impl Send for PrimaryContext {}
unsafe impl Sync for PrimaryContext {}

/// A device of this adapter: the core's, with [`DeviceCu`] as its raw
/// part.
pub type Device = ur_core::device::Device<Cuda>;

/// What a device keeps beside the core's part: the GPU, its properties,
/// and what is made in its primary context on first use.
pub struct DeviceCu {
    platform: Weak<Platform>,
    pub ordinal: i32,
    pub cu: CUdevice,
    pub props: Properties,
    primary: OnceLock<Result<PrimaryContext, driver::CUresult>>,
    default_pool: OnceLock<Result<Arc<MemPool>, driver::CUresult>>,
    /// Streams that only wait for events and run the host function of
    /// `event/callback.rs`. Like the primary context they live as long as
    /// the process.
    callback_streams: OnceLock<Result<Vec<Mutex<Stream>>, driver::CUresult>>,
}

/// Callback streams per GPU. A callback runs no earlier than those queued
/// before it on its stream; spreading the events of different streams over
/// a few keeps a long command from holding up callbacks of other queues.
const CALLBACK_STREAMS: usize = 4;

impl DeviceCu {
    pub fn discover(platform: Weak<Platform>, ordinal: i32) -> CuResult<Arc<Device>> {
        let cu = driver::device_get(ordinal)?;
        Ok(Device::new(DeviceCu {
            platform,
            ordinal,
            cu,
            props: Properties::read(cu)?,
            primary: OnceLock::new(),
            default_pool: OnceLock::new(),
            callback_streams: OnceLock::new(),
        }))
    }

    /// Makes this GPU's primary context current on the calling thread,
    /// retaining it the first time.
    #[inline]
    pub fn activate(&self) -> UrResult<CUcontext> {
        let ctx = self.primary_context()?;
        driver::activate(ctx).cu()?;
        Ok(ctx)
    }

    /// This GPU's primary context, retained the first time; not made
    /// current.
    pub fn primary_context(&self) -> UrResult<CUcontext> {
        Ok(self
            .primary
            .get_or_init(|| driver::primary_ctx_retain(self.cu).map(PrimaryContext))
            .cu()?
            .0)
    }

    /// The device of this adapter whose `CUdevice` is `native`, the same
    /// object `urDeviceGet` hands out; `None` for one it does not know.
    pub fn find_native(native: ur_native_handle_t) -> Option<&'static Arc<Device>> {
        let cu = CUdevice::try_from(native).ok()?;
        PlatformCu::get()?.raw.devices.iter().find(|d| d.raw.cu == cu)
    }

    /// The GPU's default stream-ordered pool (the one `cudaMallocAsync` uses).
    pub fn default_mem_pool(&self) -> UrResult<Arc<MemPool>> {
        self.activate()?;
        self.default_pool
            .get_or_init(|| MemPool::device_default(self.cu).map(Arc::new))
            .clone()
            .cu()
    }

    /// The callback stream for events recorded on the stream `source` (the
    /// same one for every event of that stream, which completes them in
    /// order anyway), made on first use in this GPU's primary context,
    /// which is left current.
    pub fn callback_stream(&self, source: usize) -> UrResult<&Mutex<Stream>> {
        self.activate()?;
        let streams = self
            .callback_streams
            .get_or_init(|| {
                (0..CALLBACK_STREAMS)
                    .map(|_| Stream::new().map(Mutex::new))
                    .collect()
            })
            .as_ref()
            .map_err(|e| crate::conv::cu_error(*e))?;
        // Fibonacci hashing: stream handles are aligned heap addresses,
        // whose low bits alone would pick the same stream every time.
        let spread = (source as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
        Ok(&streams[spread as usize % CALLBACK_STREAMS])
    }

    /// The largest work-group shape (threads per block).
    pub fn max_work_group_size(&self) -> usize {
        self.props.max_threads_per_block as usize
    }

    fn usm_caps(&self) -> [ur_device_usm_access_capability_flags_t; 5] {
        const ACCESS: u32 = UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ACCESS.0;
        const ATOMIC: u32 = UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ATOMIC_ACCESS.0;
        const CONCURRENT: u32 = UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_CONCURRENT_ACCESS.0;
        const ATOMIC_CONCURRENT: u32 =
            UR_DEVICE_USM_ACCESS_CAPABILITY_FLAG_ATOMIC_CONCURRENT_ACCESS.0;
        let p = &self.props;
        let host_atomics = if p.host_native_atomics {
            ATOMIC_CONCURRENT
        } else {
            0
        };
        let host = if p.can_map_host {
            ACCESS | ATOMIC | CONCURRENT | host_atomics
        } else {
            0
        };
        let device = ACCESS | ATOMIC | CONCURRENT | ATOMIC_CONCURRENT;
        let single = match (p.managed_memory, p.concurrent_managed) {
            (false, _) => 0,
            (true, false) => ACCESS | ATOMIC,
            (true, true) => ACCESS | ATOMIC | CONCURRENT | host_atomics,
        };
        let cross = if p.managed_memory && p.concurrent_managed {
            ACCESS | CONCURRENT
        } else {
            0
        };
        let system = if p.pageable_access {
            ACCESS | CONCURRENT | host_atomics
        } else {
            0
        };
        [host, device, single, cross, system]
    }
}

impl RawDevice<Cuda> for DeviceCu {
    fn all(
        platform: &Platform,
        device_type: ur_device_type_t,
    ) -> UrResult<Vec<ur_device_handle_t>> {
        let matching: &[_] = match device_type {
            UR_DEVICE_TYPE_GPU | UR_DEVICE_TYPE_ALL => &platform.raw.devices,
            UR_DEVICE_TYPE_DEFAULT => &platform.raw.devices[..1],
            _ => &[],
        };
        Ok(matching.iter().map(|d| d.handle()).collect())
    }

    /// Answers `urDeviceGetInfo`.
    fn info(device: &Device, prop: ur_device_info_t, out: InfoOut) -> UrResult {
        let raw = &device.raw;
        let p = &raw.props;
        let [usm_host, usm_device, usm_single, usm_cross, usm_system] = raw.usm_caps();
        let queue_flags =
            UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0 | UR_QUEUE_FLAG_PROFILING_ENABLE.0;
        let fp_config = UR_DEVICE_FP_CAPABILITY_FLAG_CORRECTLY_ROUNDED_DIVIDE_SQRT.0
            | UR_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_NEAREST.0
            | UR_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_ZERO.0
            | UR_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_INF.0
            | UR_DEVICE_FP_CAPABILITY_FLAG_INF_NAN.0
            | UR_DEVICE_FP_CAPABILITY_FLAG_DENORM.0
            | UR_DEVICE_FP_CAPABILITY_FLAG_FMA.0;
        match prop {
            UR_DEVICE_INFO_TYPE => out.value(UR_DEVICE_TYPE_GPU),
            UR_DEVICE_INFO_VENDOR_ID => out.value(0x10deu32),
            UR_DEVICE_INFO_DEVICE_ID => out.value(p.pci_device_id),
            UR_DEVICE_INFO_MAX_COMPUTE_UNITS | UR_DEVICE_INFO_NUM_COMPUTE_UNITS => {
                out.value(p.multiprocessors)
            }
            UR_DEVICE_INFO_MAX_WORK_ITEM_DIMENSIONS => out.value(3u32),
            UR_DEVICE_INFO_MAX_WORK_ITEM_SIZES => out.slice(&p.max_block.map(|v| v as usize)),
            UR_DEVICE_INFO_MAX_WORK_GROUP_SIZE => out.value(p.max_threads_per_block as usize),
            UR_DEVICE_INFO_MAX_WORK_GROUPS_3D => out.slice(&p.max_grid.map(|v| v as usize)),
            UR_DEVICE_INFO_MAX_WORK_GROUPS => out.value(p.max_grid[0] as usize),
            UR_DEVICE_INFO_SINGLE_FP_CONFIG | UR_DEVICE_INFO_DOUBLE_FP_CONFIG => {
                out.value(fp_config)
            }
            UR_DEVICE_INFO_HALF_FP_CONFIG => out.value(fp_config),
            UR_DEVICE_INFO_QUEUE_PROPERTIES | UR_DEVICE_INFO_QUEUE_ON_HOST_PROPERTIES => {
                out.value(queue_flags)
            }
            UR_DEVICE_INFO_QUEUE_ON_DEVICE_PROPERTIES => out.value(0 as ur_queue_flags_t),
            UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_CHAR
            | UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_SHORT
            | UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_INT
            | UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_LONG
            | UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_LONG_LONG
            | UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_FLOAT
            | UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_DOUBLE
            | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_CHAR
            | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_SHORT
            | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_INT
            | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_LONG
            | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_LONG_LONG
            | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_FLOAT
            | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_DOUBLE => out.value(1u32),
            UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_HALF
            | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_HALF => out.value(2u32),
            UR_DEVICE_INFO_MAX_CLOCK_FREQUENCY => out.value(p.clock_khz / 1000),
            UR_DEVICE_INFO_MEMORY_CLOCK_RATE => out.value(p.memory_clock_khz / 1000),
            UR_DEVICE_INFO_MEMORY_BUS_WIDTH => out.value(p.bus_width),
            UR_DEVICE_INFO_MAX_MEMORY_BANDWIDTH => {
                // Double data rate: two transfers per clock over the bus.
                out.value(p.memory_clock_khz as u64 * 1000 * 2 * (p.bus_width as u64 / 8))
            }
            UR_DEVICE_INFO_ADDRESS_BITS => out.value(64u32),
            UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE => out.value(p.total_mem as u64),
            UR_DEVICE_INFO_GLOBAL_MEM_SIZE => out.value(p.total_mem as u64),
            UR_DEVICE_INFO_GLOBAL_MEM_FREE => {
                raw.activate()?;
                out.value(driver::mem_get_info().cu()?.0 as u64)
            }
            UR_DEVICE_INFO_GLOBAL_MEM_CACHE_TYPE => {
                out.value(UR_DEVICE_MEM_CACHE_TYPE_READ_WRITE_CACHE)
            }
            UR_DEVICE_INFO_GLOBAL_MEM_CACHELINE_SIZE => out.value(128u32),
            UR_DEVICE_INFO_GLOBAL_MEM_CACHE_SIZE => out.value(p.l2_bytes as u64),
            UR_DEVICE_INFO_MAX_CONSTANT_BUFFER_SIZE => out.value(p.constant_bytes as u64),
            UR_DEVICE_INFO_MAX_CONSTANT_ARGS => out.value(9u32),
            UR_DEVICE_INFO_LOCAL_MEM_TYPE => out.value(UR_DEVICE_LOCAL_MEM_TYPE_LOCAL),
            UR_DEVICE_INFO_LOCAL_MEM_SIZE => out.value(p.shared_per_block as u64),
            UR_DEVICE_INFO_MAX_REGISTERS_PER_WORK_GROUP => out.value(p.registers_per_block),
            UR_DEVICE_INFO_MAX_PARAMETER_SIZE => out.value(4096usize),
            UR_DEVICE_INFO_MEM_BASE_ADDR_ALIGN => out.value(4096u32),
            UR_DEVICE_INFO_ERROR_CORRECTION_SUPPORT => out.bool(p.ecc),
            UR_DEVICE_INFO_HOST_UNIFIED_MEMORY | UR_DEVICE_INFO_IS_INTEGRATED_GPU => {
                out.bool(p.integrated)
            }
            UR_DEVICE_INFO_PROFILING_TIMER_RESOLUTION => out.value(1000usize),
            UR_DEVICE_INFO_ENDIAN_LITTLE | UR_DEVICE_INFO_AVAILABLE => out.bool(true),
            // PTX and cubin are loaded as they are; there is no compiler or linker.
            UR_DEVICE_INFO_COMPILER_AVAILABLE | UR_DEVICE_INFO_LINKER_AVAILABLE => out.bool(false),
            UR_DEVICE_INFO_EXECUTION_CAPABILITIES => {
                out.value(UR_DEVICE_EXEC_CAPABILITY_FLAG_KERNEL.0)
            }
            UR_DEVICE_INFO_BUILT_IN_KERNELS => out.string(""),
            // The OpenCL names SYCL derives aspects from (fp64, fp16, 64-bit
            // atomics), matching the double/half configs and ATOMIC_64 above.
            UR_DEVICE_INFO_EXTENSIONS => {
                out.string("cl_khr_fp64 cl_khr_fp16 cl_khr_int64_base_atomics cl_khr_int64_extended_atomics")
            }
            UR_DEVICE_INFO_PLATFORM => out.value(ur_core::handle::handle_of_weak(&raw.platform)),
            UR_DEVICE_INFO_REFERENCE_COUNT => out.value(1u32),
            UR_DEVICE_INFO_NAME => out.string(&p.name),
            UR_DEVICE_INFO_VENDOR => out.string(PlatformCu::VENDOR),
            UR_DEVICE_INFO_DRIVER_VERSION | UR_DEVICE_INFO_BACKEND_RUNTIME_VERSION => {
                let v = raw.platform.upgrade().map_or(0, |p| p.raw.driver_version);
                out.string(&format!("{}.{}", v / 1000, (v % 1000) / 10))
            }
            UR_DEVICE_INFO_PROFILE => out.string("CUDA"),
            UR_DEVICE_INFO_VERSION => out.string(&format!(
                "{}.{}",
                p.compute_capability.0, p.compute_capability.1
            )),
            UR_DEVICE_INFO_PRINTF_BUFFER_SIZE => out.value(1024 * 1024usize),
            UR_DEVICE_INFO_PREFERRED_INTEROP_USER_SYNC => out.bool(true),
            UR_DEVICE_INFO_PARENT_DEVICE => out.value(std::ptr::null_mut::<ur_device_handle_t_>()),
            UR_DEVICE_INFO_SUPPORTED_PARTITIONS | UR_DEVICE_INFO_PARTITION_TYPE => out.bytes(&[]),
            UR_DEVICE_INFO_PARTITION_MAX_SUB_DEVICES => out.value(0u32),
            UR_DEVICE_INFO_PARTITION_AFFINITY_DOMAIN => {
                out.value(0 as ur_device_affinity_domain_flags_t)
            }
            UR_DEVICE_INFO_MAX_NUM_SUB_GROUPS => {
                out.value(p.max_threads_per_block / p.warp_size.max(1))
            }
            UR_DEVICE_INFO_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS => out.bool(true),
            UR_DEVICE_INFO_SUB_GROUP_SIZES_INTEL => out.slice(&[p.warp_size]),
            UR_DEVICE_INFO_USM_HOST_SUPPORT => out.value(usm_host),
            UR_DEVICE_INFO_USM_DEVICE_SUPPORT => out.value(usm_device),
            UR_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT => out.value(usm_single),
            UR_DEVICE_INFO_USM_CROSS_SHARED_SUPPORT => out.value(usm_cross),
            UR_DEVICE_INFO_USM_SYSTEM_SHARED_SUPPORT => out.value(usm_system),
            UR_DEVICE_INFO_UUID => out.slice(&p.uuid),
            UR_DEVICE_INFO_PCI_ADDRESS => out.string(&p.pci_address),
            UR_DEVICE_INFO_KERNEL_SET_SPECIALIZATION_CONSTANTS
            | UR_DEVICE_INFO_PROGRAM_SET_SPECIALIZATION_CONSTANTS
            | UR_DEVICE_INFO_MEM_CHANNEL_SUPPORT
            | UR_DEVICE_INFO_HOST_PIPE_READ_WRITE_SUPPORT
            | UR_DEVICE_INFO_VIRTUAL_MEMORY_SUPPORT
            | UR_DEVICE_INFO_ESIMD_SUPPORT
            | UR_DEVICE_INFO_GLOBAL_VARIABLE_SUPPORT
            | UR_DEVICE_INFO_USE_NATIVE_ASSERT
            | UR_DEVICE_INFO_COMMAND_BUFFER_SUPPORT_EXP
            | UR_DEVICE_INFO_COMMAND_BUFFER_EVENT_SUPPORT_EXP
            | UR_DEVICE_INFO_COMMAND_BUFFER_SUBGRAPH_SUPPORT_EXP
            | UR_DEVICE_INFO_BINDLESS_IMAGES_SUPPORT_EXP
            | UR_DEVICE_INFO_TIMESTAMP_RECORDING_SUPPORT_EXP
            | UR_DEVICE_INFO_ENQUEUE_NATIVE_COMMAND_SUPPORT_EXP
            | UR_DEVICE_INFO_LOW_POWER_EVENTS_SUPPORT_EXP
            | UR_DEVICE_INFO_GRAPH_RECORD_AND_REPLAY_SUPPORT_EXP
            | UR_DEVICE_INFO_USM_HOST_ALLOC_REGISTER_SUPPORT_EXP
            | UR_DEVICE_INFO_MULTI_DEVICE_COMPILE_SUPPORT_EXP
            | UR_DEVICE_INFO_DEVICE_WAIT_SUPPORT_EXP
            | UR_DEVICE_INFO_DYNAMIC_LINK_SUPPORT_EXP
            | UR_DEVICE_INFO_USM_CONTEXT_MEMCPY_SUPPORT_EXP
            | UR_DEVICE_INFO_ENQUEUE_HOST_TASK_SUPPORT_EXP
            | UR_DEVICE_INFO_REUSABLE_EVENTS_SUPPORT_EXP
            | UR_DEVICE_INFO_IPC_MEMORY_SUPPORT_EXP
            | UR_DEVICE_INFO_CLOCK_SUB_GROUP_SUPPORT_EXP
            | UR_DEVICE_INFO_CLOCK_WORK_GROUP_SUPPORT_EXP
            | UR_DEVICE_INFO_CLOCK_DEVICE_SUPPORT_EXP => out.bool(false),
            UR_DEVICE_INFO_ATOMIC_64 | UR_DEVICE_INFO_BFLOAT16_CONVERSIONS_NATIVE => out.bool(true),
            UR_DEVICE_INFO_ASYNC_BARRIER => out.bool(p.compute_capability.0 >= 8),
            UR_DEVICE_INFO_PER_EVENT_PROFILING_SUPPORT_EXP => out.bool(true),
            UR_DEVICE_INFO_USM_POOL_SUPPORT | UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP => {
                out.bool(p.memory_pools)
            }
            UR_DEVICE_INFO_KERNEL_LAUNCH_CAPABILITIES => {
                let coop = if p.cooperative_launch {
                    UR_KERNEL_LAUNCH_PROPERTIES_FLAG_COOPERATIVE.0
                } else {
                    0
                };
                out.value(coop)
            }
            UR_DEVICE_INFO_ATOMIC_MEMORY_ORDER_CAPABILITIES
            | UR_DEVICE_INFO_ATOMIC_FENCE_ORDER_CAPABILITIES => out.value(
                UR_MEMORY_ORDER_CAPABILITY_FLAG_RELAXED.0
                    | UR_MEMORY_ORDER_CAPABILITY_FLAG_ACQUIRE.0
                    | UR_MEMORY_ORDER_CAPABILITY_FLAG_RELEASE.0
                    | UR_MEMORY_ORDER_CAPABILITY_FLAG_ACQ_REL.0
                    | UR_MEMORY_ORDER_CAPABILITY_FLAG_SEQ_CST.0,
            ),
            UR_DEVICE_INFO_ATOMIC_MEMORY_SCOPE_CAPABILITIES
            | UR_DEVICE_INFO_ATOMIC_FENCE_SCOPE_CAPABILITIES => out.value(
                UR_MEMORY_SCOPE_CAPABILITY_FLAG_WORK_ITEM.0
                    | UR_MEMORY_SCOPE_CAPABILITY_FLAG_SUB_GROUP.0
                    | UR_MEMORY_SCOPE_CAPABILITY_FLAG_WORK_GROUP.0
                    | UR_MEMORY_SCOPE_CAPABILITY_FLAG_DEVICE.0
                    | UR_MEMORY_SCOPE_CAPABILITY_FLAG_SYSTEM.0,
            ),
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    }

    /// Largest single allocation: the whole memory, as CUDA allows.
    fn max_alloc_size(device: &Device) -> u64 {
        device.raw.props.total_mem as u64
    }

    /// Every GPU has device and host memory; shared memory is managed
    /// memory, which some do not offer.
    fn serves_usm(device: &Device, kind: engine::UsmKind) -> bool {
        kind != engine::UsmKind::Shared || device.raw.props.managed_memory
    }

    fn binary_targets(_: &Device) -> &'static [&'static [u8]] {
        &[b"nvptx64"]
    }

    /// Device times (event profiling) are placed on the host's monotonic
    /// clock, so one reading serves both.
    fn global_timestamps(_: &Device) -> UrResult<(u64, u64)> {
        let now = now_ns();
        Ok((now, now))
    }

    /// Each pair's answer is the driver's (`cuDeviceGetP2PAttribute`).
    const PEER_ACCESS: bool = true;

    /// `urUsmP2PPeerAccessGetInfoExp`: the driver's P2P attribute for
    /// kernels on this GPU reaching `peer`'s memory.
    fn peer_info(device: &Device, peer: &Device, prop: ur_exp_peer_info_t) -> UrResult<i32> {
        driver::p2p_attribute(conv::p2p_attribute(prop)?, device.raw.cu, peer.raw.cu).cu()
    }

    /// `cuCtxEnablePeerAccess`/`DisablePeerAccess` from this GPU's primary
    /// context to the peer's; a second enable, or a disable of no link, is
    /// the driver's error (`ADAPTER_SPECIFIC`, its code for
    /// `urAdapterGetLastError`).
    fn set_peer_access(device: &Device, peer: &Device, enable: bool) -> UrResult {
        let peer_context = peer.raw.primary_context()?;
        device.raw.activate()?;
        driver::set_peer_access(peer_context, enable).cu()
    }

    fn native_handle(device: &Device) -> UrResult<ur_native_handle_t> {
        Ok(device.raw.cu as ur_native_handle_t)
    }

    /// A `CUdevice` is an ordinal-like integer: 0 is a device.
    const NATIVE_NULL_IS_VALID: bool = true;

    /// The same handle `urDeviceGet` hands out; a `CUdevice` the adapter
    /// did not find is `INVALID_VALUE` (spec/device.md).
    fn from_native(native: ur_native_handle_t, _adapter: &Adapter) -> UrResult<ur_device_handle_t> {
        DeviceCu::find_native(native)
            .map(|d| d.handle())
            .ok_or(UR_RESULT_ERROR_INVALID_VALUE)
    }
}
