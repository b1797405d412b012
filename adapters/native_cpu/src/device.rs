//! The platform and the CPU device: the core's objects over
//! [`PlatformHost`] and [`DeviceHost`].
//!
//! The single platform: it groups the CPU device (or, when
//! `UR_NATIVE_CPU_DEVICES` asks, several of them) under the adapter and lives
//! as long as the adapter does.
//!
//! The CPU device: the host's processors and memory, seen as one UR device.

use crate::conv::{fp_config, ALL_MEMORY_ORDERS, ALL_MEMORY_SCOPES, FULL_USM_ACCESS};
use crate::driver::{self, clock_resolution_ns, HostFacts};
use crate::queue;
use crate::NativeCpu;
use std::ffi::CStr;
use std::sync::{Arc, Weak};
use ur_core::adapter::Adapter;
use ur_core::device::{RawDevice, RawPlatform};
use ur_core::info::InfoOut;
use ur_core::lock_order::{Mutex, Rank};
use ur_core::*;

// -- the platform -------------------------------------------------------------

pub type Platform = ur_core::device::Platform<NativeCpu>;

/// The platform's part beside the core's: its adapter and devices.
pub struct PlatformHost {
    /// Weak: the adapter's references are its users' business.
    adapter: Weak<Adapter>,
    pub devices: Vec<Arc<Device>>,
}

/// How many devices the platform shows: `UR_NATIVE_CPU_DEVICES=N` (1 to
/// 16) splits the host into N identical devices, so that multi-device
/// contexts can be exercised without hardware; unset or invalid, one. Each
/// device has its own queues, pools and statistics; all share the host's
/// processors and memory.
pub fn device_count() -> usize {
    std::env::var("UR_NATIVE_CPU_DEVICES").ok().and_then(|v| v.trim().parse().ok()).filter(|n| (1..=16).contains(n)).unwrap_or(1)
}

/// The platform of the live adapter object.
static CURRENT: Mutex<Option<Arc<Platform>>> = Mutex::new(Rank::Leaf, None);

impl PlatformHost {
    pub const NAME: &'static str = "Native CPU";
    pub const VENDOR: &'static str = "Unified Runtime in Rust (ur_core)";
    pub const PROFILE: &'static str = "FULL_PROFILE";
    pub const EXTENSIONS: &'static str = "";

    pub fn new(adapter: Weak<Adapter>) -> Arc<Platform> {
        Platform::new_cyclic(|me| PlatformHost {
            adapter,
            devices: {
                let host = HostFacts::probe();
                (0..device_count()).map(|i| DeviceHost::new_root(me.clone(), host.clone(), i)).collect()
            },
        })
    }

    /// The platform of `adapter`, made (and the host probed) on first use:
    /// the same handle on every call while the adapter lives.
    pub fn of_adapter(adapter: &Arc<Adapter>) -> Arc<Platform> {
        let mut current = CURRENT.lock();
        match &*current {
            Some(p) if std::ptr::eq(p.raw.adapter.as_ptr(), Arc::as_ptr(adapter)) => p.clone(),
            _ => current.insert(PlatformHost::new(Arc::downgrade(adapter))).clone(),
        }
    }

    /// After the adapter's last release: its platform goes (contexts still
    /// holding its device keep that alive), and the workers of released
    /// queues are joined, so that no code of this library runs any more
    /// unless the application still holds queues.
    pub fn adapter_released() {
        let gone = {
            let mut current = CURRENT.lock();
            current.take_if(|p| p.raw.adapter.strong_count() == 0)
        };
        drop(gone);
        queue::join_released_workers();
    }

    /// `"<UR API version> (native_cpu <crate version>)"`.
    pub fn version() -> String {
        let v = UR_API_VERSION_IMPLEMENTED.0;
        format!("{}.{} (native_cpu {})", v >> 16, v & 0xffff, env!("CARGO_PKG_VERSION"))
    }

    pub fn adapter_handle(&self) -> ur_adapter_handle_t {
        // The value only: the adapter outlives its platform while users hold it.
        ur_core::handle::handle_of_weak(&self.adapter)
    }

}

impl RawPlatform<NativeCpu> for PlatformHost {
    fn all(adapter: &Arc<Adapter>) -> UrResult<Vec<ur_platform_handle_t>> {
        Ok(vec![PlatformHost::of_adapter(adapter).handle()])
    }

    fn info(platform: &Platform, prop: ur_platform_info_t, out: InfoOut) -> UrResult {
        match prop {
            UR_PLATFORM_INFO_NAME => out.string(PlatformHost::NAME),
            UR_PLATFORM_INFO_VENDOR_NAME => out.string(PlatformHost::VENDOR),
            UR_PLATFORM_INFO_VERSION => out.string(&PlatformHost::version()),
            UR_PLATFORM_INFO_EXTENSIONS => out.string(PlatformHost::EXTENSIONS),
            UR_PLATFORM_INFO_PROFILE => out.string(PlatformHost::PROFILE),
            UR_PLATFORM_INFO_ADAPTER => out.value(platform.raw.adapter_handle()),
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    }

    /// The frontend compiler options this platform understands, mapped to
    /// its own (a host build takes them as they are).
    fn backend_option(_: &Platform, frontend: &str) -> Option<&'static CStr> {
        Some(match frontend {
            "-O0" => c"-O0",
            "-O1" => c"-O1",
            "-O2" => c"-O2",
            "-O3" => c"-O3",
            "-g" => c"-g",
            // Precision and fast-compile hints change nothing on the host.
            "-ftarget-compile-fast" | "-foffload-fp32-prec-div" | "-foffload-fp32-prec-sqrt" => c"",
            _ => return None,
        })
    }
}

// -- the device ---------------------------------------------------------------

pub type Device = ur_core::device::Device<NativeCpu>;

/// The device's part beside the core's: the host it stands for.
pub struct DeviceHost {
    platform: Weak<Platform>,
    pub host: HostFacts,
    /// Position on the platform (0 unless `UR_NATIVE_CPU_DEVICES` asks for
    /// more than one device).
    pub index: usize,
    /// The peers this device has enabled access to (`urUsmP2P*`). All
    /// devices read the same host memory, so the link only records the
    /// user's request.
    pub peers: ur_core::peer::PeerLinks,
}


/// Whether the device serves USM pools through the `pool` argument and the
/// `urUSMPool*` entry points, as `UR_DEVICE_INFO_USM_POOL_SUPPORT` reports:
/// the async pool engine backs them.
pub const USM_POOL_SUPPORT: bool = true;
/// `UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP`: `urEnqueueUSM*AllocExp`
/// and `urEnqueueUSMFreeExp` are served by the async pool engine.
pub const ASYNC_USM_ALLOCATIONS_SUPPORT: bool = true;

/// Alignment of a USM allocation that asks for none: the largest OpenCL C
/// type (`long16`, `double16`).
pub const DEFAULT_USM_ALIGNMENT: usize = 128;

/// The kernel execution model this device describes, and the limits it
/// reports (`urDeviceGetInfo`). The adapter launches no kernels yet
/// (`urEnqueueKernelLaunch` is not offered), so nothing can exceed them; they
/// are the limits a launch would be held to.
///
/// A work-group runs on one worker thread, its work-items one after the
/// other, and its local memory is an arena of ordinary host memory. Nothing
/// in hardware bounds a group; the sizes are those Intel's CPU OpenCL
/// runtime reports on the same x86 hosts, so that work-group heuristics of
/// SYCL clients choose the same shapes on either CPU device.
pub mod kernel_limits {
    /// Index dimensions of an ND-range, as in SYCL.
    pub const WORK_ITEM_DIMENSIONS: u32 = 3;
    /// Work-items of one group, in total and in each dimension.
    pub const WORK_GROUP_SIZE: usize = 8192;
    /// Sub-groups are single work-items: the work-items of a group run one
    /// after the other, so no two of them ever run in lockstep. The only
    /// size is 1, and a group holds as many sub-groups as work-items; none
    /// makes progress while another of its group runs.
    pub const SUB_GROUP_SIZES: [u32; 1] = [1];
    pub const NUM_SUB_GROUPS: u32 = WORK_GROUP_SIZE as u32;
    /// Bytes of the local-memory arena of one work-group (SYCL asks at
    /// least 32 KiB of a device that is not custom).
    pub const LOCAL_MEM_SIZE: u64 = 256 * 1024;
    /// Bytes of kernel arguments: one 4 KiB page of argument block.
    pub const PARAMETER_SIZE: usize = 4096;
    /// `__constant` arguments: any argument may be one (they are plain
    /// pointers into host memory).
    pub const CONSTANT_ARGS: u32 = (PARAMETER_SIZE / std::mem::size_of::<usize>()) as u32;
    /// Bytes of `printf` output a kernel may produce before it is seen: the
    /// output goes to the host's stdout directly, so this is a lower bound,
    /// the 1 MiB OpenCL's full profile asks for.
    pub const PRINTF_BUFFER_SIZE: usize = 1 << 20;
    /// Work-groups of a launch, in total and per dimension: only the
    /// `size_t` range of the ND-range bounds them.
    pub const WORK_GROUPS: usize = usize::MAX;
}

impl DeviceHost {
    pub fn new_root(platform: Weak<Platform>, mut host: HostFacts, index: usize) -> Arc<Device> {
        // Devices of one host tell apart by UUID: the machine's, with the
        // index folded into its last byte.
        if let Some(u) = host.uuid.as_mut() {
            u[15] ^= index as u8;
        }
        Device::new(DeviceHost { platform, host, index, peers: Default::default() })
    }

    pub fn platform_handle(&self) -> ur_platform_handle_t {
        ur_core::handle::handle_of_weak(&self.platform)
    }

    /// Whether a `urDeviceGet` filter selects this device.
    pub fn matches(device_type: ur_device_type_t) -> bool {
        matches!(device_type, UR_DEVICE_TYPE_DEFAULT | UR_DEVICE_TYPE_ALL | UR_DEVICE_TYPE_CPU)
    }

    /// The OpenCL extension names of what the device's arithmetic offers,
    /// space-separated: SYCL derives `aspect::fp64`, `aspect::fp16` and the
    /// 64-bit atomics from these names, so they must agree with the FP
    /// configurations and `UR_DEVICE_INFO_ATOMIC_64` this device reports.
    pub fn extensions(&self) -> String {
        let mut names = vec!["cl_khr_fp64", "cl_khr_int64_base_atomics", "cl_khr_int64_extended_atomics"];
        if self.host.has_fp16 {
            names.push("cl_khr_fp16");
        }
        names.join(" ")
    }

    /// Preferred (and native) vector width, in elements of `elem_bytes`.
    pub fn vector_width(&self, elem_bytes: u32) -> u32 {
        (self.host.simd_bytes / elem_bytes).max(1)
    }
}

const QUEUE_FLAGS: u32 = UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0 | UR_QUEUE_FLAG_PROFILING_ENABLE.0;

impl RawDevice<NativeCpu> for DeviceHost {
    fn all(platform: &Platform, device_type: ur_device_type_t) -> UrResult<Vec<ur_device_handle_t>> {
        let all = DeviceHost::matches(device_type);
        Ok(platform.raw.devices.iter().filter(|_| all).map(|d| d.handle()).collect())
    }

    /// `urDeviceGetInfo`: every query in range.
    fn info(device: &Device, prop: ur_device_info_t, out: InfoOut) -> UrResult {
        let raw = &device.raw;
        let h = &raw.host;
        let vector_width = |bytes: u32| raw.vector_width(bytes);
        match prop {
            UR_DEVICE_INFO_TYPE => out.value(UR_DEVICE_TYPE_CPU),
            UR_DEVICE_INFO_VENDOR_ID => out.value(h.vendor_id),
            UR_DEVICE_INFO_MAX_COMPUTE_UNITS | UR_DEVICE_INFO_NUM_COMPUTE_UNITS => out.value(h.compute_units),
            UR_DEVICE_INFO_SINGLE_FP_CONFIG => out.value(fp_config(device, true)),
            UR_DEVICE_INFO_DOUBLE_FP_CONFIG => out.value(fp_config(device, true)),
            UR_DEVICE_INFO_HALF_FP_CONFIG => out.value(if h.has_fp16 { fp_config(device, false) } else { 0 }),
            UR_DEVICE_INFO_QUEUE_PROPERTIES | UR_DEVICE_INFO_QUEUE_ON_HOST_PROPERTIES => out.value(QUEUE_FLAGS),
            UR_DEVICE_INFO_QUEUE_ON_DEVICE_PROPERTIES => out.value(0u32),
            UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_CHAR | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_CHAR => {
                out.value(vector_width(1))
            }
            UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_SHORT
            | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_SHORT
            | UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_HALF
            | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_HALF => out.value(vector_width(2)),
            UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_INT
            | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_INT
            | UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_FLOAT
            | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_FLOAT => out.value(vector_width(4)),
            UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_LONG
            | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_LONG
            | UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_LONG_LONG
            | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_LONG_LONG
            | UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_DOUBLE
            | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_DOUBLE => out.value(vector_width(8)),
            UR_DEVICE_INFO_MAX_CLOCK_FREQUENCY if h.max_clock_mhz > 0 => out.value(h.max_clock_mhz),
            UR_DEVICE_INFO_ADDRESS_BITS => out.value(usize::BITS),
            UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE => out.value(h.total_memory),
            UR_DEVICE_INFO_GLOBAL_MEM_SIZE => out.value(h.total_memory),
            UR_DEVICE_INFO_GLOBAL_MEM_FREE => match driver::available_memory() {
                Some(bytes) => out.value(bytes),
                None => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
            },
            // In bits, as OpenCL counts it: the default USM alignment.
            UR_DEVICE_INFO_MEM_BASE_ADDR_ALIGN => out.value((DEFAULT_USM_ALIGNMENT * 8) as u32),
            UR_DEVICE_INFO_GLOBAL_MEM_CACHE_TYPE => out.value(UR_DEVICE_MEM_CACHE_TYPE_READ_WRITE_CACHE),
            UR_DEVICE_INFO_GLOBAL_MEM_CACHELINE_SIZE => out.value(h.cache_line),
            UR_DEVICE_INFO_GLOBAL_MEM_CACHE_SIZE if h.cache_size > 0 => out.value(h.cache_size),
            UR_DEVICE_INFO_ERROR_CORRECTION_SUPPORT => out.bool(false),
            UR_DEVICE_INFO_HOST_UNIFIED_MEMORY => out.bool(true),
            UR_DEVICE_INFO_PROFILING_TIMER_RESOLUTION => out.value(clock_resolution_ns()),
            UR_DEVICE_INFO_ENDIAN_LITTLE => out.bool(cfg!(target_endian = "little")),
            UR_DEVICE_INFO_AVAILABLE => out.bool(true),
            // This adapter builds no programs and runs no kernels.
            UR_DEVICE_INFO_COMPILER_AVAILABLE | UR_DEVICE_INFO_LINKER_AVAILABLE => out.bool(false),
            UR_DEVICE_INFO_EXECUTION_CAPABILITIES => out.value(0u32),
            UR_DEVICE_INFO_BUILT_IN_KERNELS => out.string(""),
            UR_DEVICE_INFO_PLATFORM => out.value(raw.platform_handle()),
            // Root devices are not reference counted.
            UR_DEVICE_INFO_REFERENCE_COUNT => out.value(1u32),
            UR_DEVICE_INFO_NAME => out.string(&h.cpu_name),
            UR_DEVICE_INFO_VENDOR => out.string(&h.vendor_name),
            UR_DEVICE_INFO_DRIVER_VERSION | UR_DEVICE_INFO_BACKEND_RUNTIME_VERSION => out.string(env!("CARGO_PKG_VERSION")),
            UR_DEVICE_INFO_PROFILE => out.string(PlatformHost::PROFILE),
            UR_DEVICE_INFO_VERSION => {
                let v = UR_API_VERSION_IMPLEMENTED.0;
                out.string(&format!("{}.{}", v >> 16, v & 0xffff))
            }
            UR_DEVICE_INFO_EXTENSIONS => out.string(&raw.extensions()),
            // Not partitionable: no parent, no partitions.
            UR_DEVICE_INFO_PARENT_DEVICE => out.value(std::ptr::null_mut::<ur_device_handle_t_>()),
            UR_DEVICE_INFO_SUPPORTED_PARTITIONS => out.slice::<ur_device_partition_t>(&[]),
            UR_DEVICE_INFO_PARTITION_TYPE => out.slice::<ur_device_partition_property_t>(&[]),
            UR_DEVICE_INFO_PARTITION_MAX_SUB_DEVICES | UR_DEVICE_INFO_PARTITION_AFFINITY_DOMAIN => out.value(0u32),
            UR_DEVICE_INFO_USM_HOST_SUPPORT
            | UR_DEVICE_INFO_USM_DEVICE_SUPPORT
            | UR_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT
            | UR_DEVICE_INFO_USM_CROSS_SHARED_SUPPORT
            | UR_DEVICE_INFO_USM_SYSTEM_SHARED_SUPPORT => out.value(FULL_USM_ACCESS),
            UR_DEVICE_INFO_UUID => match h.uuid {
                Some(uuid) => out.slice(&uuid),
                None => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
            },
            UR_DEVICE_INFO_ATOMIC_64 => out.bool(true),
            UR_DEVICE_INFO_ATOMIC_MEMORY_ORDER_CAPABILITIES | UR_DEVICE_INFO_ATOMIC_FENCE_ORDER_CAPABILITIES => {
                out.value(ALL_MEMORY_ORDERS)
            }
            UR_DEVICE_INFO_ATOMIC_MEMORY_SCOPE_CAPABILITIES | UR_DEVICE_INFO_ATOMIC_FENCE_SCOPE_CAPABILITIES => {
                out.value(ALL_MEMORY_SCOPES)
            }
            UR_DEVICE_INFO_BFLOAT16 | UR_DEVICE_INFO_BFLOAT16_CONVERSIONS_NATIVE => out.bool(h.has_bf16),
            UR_DEVICE_INFO_COMPONENT_DEVICES => out.slice::<ur_device_handle_t>(&[]),
            UR_DEVICE_INFO_COMPOSITE_DEVICE => out.value(std::ptr::null_mut::<ur_device_handle_t_>()),
            UR_DEVICE_INFO_KERNEL_LAUNCH_CAPABILITIES
            | UR_DEVICE_INFO_COMMAND_BUFFER_UPDATE_CAPABILITIES_EXP
            | UR_DEVICE_INFO_2D_BLOCK_ARRAY_CAPABILITIES_EXP => out.value(0u32),
            // Kernel limits: see `kernel_limits`.
            UR_DEVICE_INFO_MAX_WORK_ITEM_DIMENSIONS => out.value(kernel_limits::WORK_ITEM_DIMENSIONS),
            UR_DEVICE_INFO_MAX_WORK_ITEM_SIZES => {
                out.slice(&[kernel_limits::WORK_GROUP_SIZE; kernel_limits::WORK_ITEM_DIMENSIONS as usize])
            }
            UR_DEVICE_INFO_MAX_WORK_GROUP_SIZE => out.value(kernel_limits::WORK_GROUP_SIZE),
            UR_DEVICE_INFO_MAX_NUM_SUB_GROUPS => out.value(kernel_limits::NUM_SUB_GROUPS),
            UR_DEVICE_INFO_SUB_GROUP_SIZES_INTEL => out.slice(&kernel_limits::SUB_GROUP_SIZES),
            UR_DEVICE_INFO_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS => out.bool(false),
            UR_DEVICE_INFO_MAX_WORK_GROUPS_3D => {
                out.slice(&[kernel_limits::WORK_GROUPS; kernel_limits::WORK_ITEM_DIMENSIONS as usize])
            }
            UR_DEVICE_INFO_MAX_WORK_GROUPS => out.value(kernel_limits::WORK_GROUPS),
            // Local memory is host memory, like everything else.
            UR_DEVICE_INFO_LOCAL_MEM_TYPE => out.value(UR_DEVICE_LOCAL_MEM_TYPE_GLOBAL),
            UR_DEVICE_INFO_LOCAL_MEM_SIZE => out.value(kernel_limits::LOCAL_MEM_SIZE),
            UR_DEVICE_INFO_MAX_PARAMETER_SIZE => out.value(kernel_limits::PARAMETER_SIZE),
            UR_DEVICE_INFO_MAX_CONSTANT_ARGS => out.value(kernel_limits::CONSTANT_ARGS),
            // Constant memory is host memory too: any allocation can hold it.
            UR_DEVICE_INFO_MAX_CONSTANT_BUFFER_SIZE => out.value(h.total_memory),
            UR_DEVICE_INFO_PRINTF_BUFFER_SIZE => out.value(kernel_limits::PRINTF_BUFFER_SIZE),
            UR_DEVICE_INFO_USM_POOL_SUPPORT => out.bool(USM_POOL_SUPPORT),
            UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP => out.bool(ASYNC_USM_ALLOCATIONS_SUPPORT),
            // Features no adapter of this project serves (ur_core::info).
            p if ur_core::info::is_unserved_feature(p) => out.bool(false),
            // The core answers the features of device code (this adapter builds
            // none).
            UR_DEVICE_INFO_IS_INTEGRATED_GPU => out.bool(false),
            // GPU facts, PCI and power data, device ids, IL (this adapter takes
            // no device code), registers: nothing true to answer.
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    }

    /// The largest single allocation: all of physical memory.
    fn max_alloc_size(device: &Device) -> u64 {
        device.raw.host.total_memory
    }

    /// Only images built for native CPU fit: this adapter runs no SPIR-V or
    /// other device code.
    fn binary_targets(_: &Device) -> &'static [&'static [u8]] {
        &[b"native_cpu"]
    }

    /// Device and host share one clock, the one of profiling timestamps.
    fn global_timestamps(_: &Device) -> UrResult<(u64, u64)> {
        let now = driver::monotonic_ns();
        Ok((now, now))
    }

    /// Every device is the same host: each reaches the others' memory,
    /// atomics included, whether or not access was enabled.
    const PEER_ACCESS: bool = true;

    fn peer_info(_: &Device, _peer: &Device, _prop: ur_exp_peer_info_t) -> UrResult<i32> {
        Ok(1)
    }

    fn set_peer_access(device: &Device, peer: &Device, enable: bool) -> UrResult {
        device.raw.peers.set(&crate::ADAPTER.get_or_create(), device, peer, enable)
    }
}
