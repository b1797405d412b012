//! Platforms and devices: the core's objects ([`Platform`], [`Device`])
//! over [`PlatformZe`] and [`DeviceZe`], with their `impl RawPlatform` and
//! `impl RawDevice`.
//!
//! Platforms: one per Level Zero driver, found once per process. Without
//! the loader, or when `zeInit` finds no driver, there are none, and the
//! reason is logged once.
//!
//! Devices: one per Level Zero device of a driver, with what the driver
//! says about it read once at discovery.

use crate::conv::{self, ZeExt};
use crate::driver::{self, check};
use crate::{ze, LevelZero, ADAPTER};
use level_zero_sys::*;
use std::ffi::CStr;
use std::sync::{Arc, OnceLock, Weak};
use ur_core::adapter::Adapter;
use ur_core::device::{RawDevice, RawPlatform};
use ur_core::engine::UsmKind;
use ur_core::handle::handle_of;
use ur_core::info::InfoOut;
use ur_core::*;

/// A platform of this adapter: the core's, with [`PlatformZe`] as its raw
/// part.
pub type Platform = ur_core::device::Platform<LevelZero>;

/// What a platform keeps beside the core's part: its driver, the driver's
/// versions and its devices.
pub struct PlatformZe {
    pub ze: ze_driver_handle_t,
    pub api_version: ze_api_version_t,
    pub driver_version: u32,
    pub devices: Vec<Arc<Device>>,
}

// SAFETY: a driver handle is an opaque token, valid for the process.
unsafe impl Send for PlatformZe {}
unsafe impl Sync for PlatformZe {}

/// Every platform of the process, found on first use. Platforms live for
/// the whole process (UR has no release for them).
pub fn platforms() -> &'static [Arc<Platform>] {
    static ALL: OnceLock<Vec<Arc<Platform>>> = OnceLock::new();
    ALL.get_or_init(|| match discover() {
        Ok(platforms) => platforms,
        Err(why) => {
            log::info(&format!("no Level Zero platforms: {why}"));
            Vec::new()
        }
    })
}

impl PlatformZe {
    pub const NAME: &'static str = "Intel(R) Level-Zero";
    pub const PROFILE: &'static str = "FULL_PROFILE";

    /// `"<major>.<minor>"` of the driver's Level Zero API.
    pub fn version(&self) -> String {
        format!("{}.{}", self.api_version >> 16, self.api_version & 0xffff)
    }

    /// The platform's device with Level Zero handle `ze`.
    pub fn device_by_ze(&self, ze: ze_device_handle_t) -> Option<&Arc<Device>> {
        self.devices.iter().find(|d| d.raw.ze == ze)
    }
}

/// Opens the loader, initialises Level Zero and lists drivers and devices.
fn discover() -> Result<Vec<Arc<Platform>>, String> {
    if driver::table().is_none() {
        return Err("libze_loader.so.1 could not be opened".into());
    }
    // SAFETY: zeInit takes flags only; 0 asks for every kind of device.
    check(unsafe { ze!(zeInit(0)) }).map_err(|e| format!("zeInit failed (0x{e:x})"))?;
    // SAFETY: the (count, handles) protocol with buffers `list` sizes.
    let drivers = driver::list(std::ptr::null_mut(), |n, out| unsafe { ze!(zeDriverGet(n, out)) })
        .map_err(|e| format!("zeDriverGet failed (0x{e:x})"))?;
    if drivers.is_empty() {
        return Err("the loader found no driver".into());
    }
    let mut platforms = Vec::new();
    for ze in drivers {
        match platform(ze) {
            Ok(p) => platforms.push(p),
            Err(e) => log::warning(&format!("Level Zero driver {ze:p} left out: {e:?}")),
        }
    }
    Ok(platforms)
}

fn platform(ze: ze_driver_handle_t) -> UrResult<Arc<Platform>> {
    let mut api_version: ze_api_version_t = 0;
    // SAFETY: a driver the loader listed; an out pointer we own.
    check(unsafe { ze!(zeDriverGetApiVersion(ze, &mut api_version)) }).ur()?;
    let mut props: ze_driver_properties_t = unsafe { std::mem::zeroed() };
    props.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES;
    // SAFETY: as above.
    check(unsafe { ze!(zeDriverGetProperties(ze, &mut props)) }).ur()?;
    // SAFETY: the (count, handles) protocol with buffers `list` sizes.
    let raw_devices = driver::list(std::ptr::null_mut(), |n, out| unsafe { ze!(zeDeviceGet(ze, n, out)) }).ur()?;
    let facts = raw_devices.into_iter().map(Facts::probe).collect::<UrResult<Vec<_>>>()?;
    // Cyclic: each device names its platform (weakly).
    Ok(Platform::new_cyclic(|me| PlatformZe {
        ze,
        api_version,
        driver_version: props.driverVersion,
        devices: facts
            .into_iter()
            .map(|facts| Device::new(DeviceZe { ze: facts.ze, facts, platform: me.clone() }))
            .collect(),
    }))
}

impl RawPlatform<LevelZero> for PlatformZe {
    fn all(_adapter: &Arc<Adapter>) -> UrResult<Vec<ur_platform_handle_t>> {
        Ok(platforms().iter().map(|p| p.handle()).collect())
    }

    fn info(platform: &Platform, prop: ur_platform_info_t, out: InfoOut) -> UrResult {
        match prop {
            UR_PLATFORM_INFO_NAME => out.string(PlatformZe::NAME),
            UR_PLATFORM_INFO_VENDOR_NAME => out.string("Intel(R) Corporation"),
            UR_PLATFORM_INFO_VERSION => out.string(&platform.raw.version()),
            UR_PLATFORM_INFO_EXTENSIONS => out.string(""),
            UR_PLATFORM_INFO_PROFILE => out.string(PlatformZe::PROFILE),
            // The value only: the caller holds the adapter while it uses
            // the platform.
            UR_PLATFORM_INFO_ADAPTER => out.value(handle_of(&*ADAPTER.get_or_create())),
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    }

    /// The frontend compiler options this platform understands; Level Zero
    /// spells them as OpenCL does.
    fn backend_option(_: &Platform, frontend: &str) -> Option<&'static CStr> {
        Some(match frontend {
            "-O0" => c"-ze-opt-disable",
            "-O1" | "-O2" => c"-ze-opt-level=2",
            "-O3" => c"-ze-opt-level=2",
            "-g" => c"-g",
            "-ftarget-compile-fast" => c"-igc_opts 'PartitionUnit=1,SubroutineThreshold=50000'",
            "-foffload-fp32-prec-div" | "-foffload-fp32-prec-sqrt" => c"-ze-fp32-correctly-rounded-divide-sqrt",
            _ => return None,
        })
    }

    fn native_handle(platform: &Platform) -> UrResult<ur_native_handle_t> {
        Ok(platform.raw.ze as ur_native_handle_t)
    }
}

/// What Level Zero says about a device, read once.
pub struct Facts {
    pub ze: ze_device_handle_t,
    pub props: ze_device_properties_t,
    pub compute: ze_device_compute_properties_t,
    pub memory_total: u64,
    pub access: ze_device_memory_access_properties_t,
    /// The command queue group commands are appended to (compute first).
    pub ordinal: u32,
    pub max_fill_pattern: usize,
}

impl Facts {
    pub fn probe(ze: ze_device_handle_t) -> UrResult<Facts> {
        // SAFETY (every call below): a device the driver listed, out structs
        // we own with their stype set, and the (count, items) protocol with
        // buffers `driver::list` sizes.
        let mut props: ze_device_properties_t = unsafe { std::mem::zeroed() };
        props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
        check(unsafe { ze!(zeDeviceGetProperties(ze, &mut props)) }).ur()?;
        let mut compute: ze_device_compute_properties_t = unsafe { std::mem::zeroed() };
        compute.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES;
        check(unsafe { ze!(zeDeviceGetComputeProperties(ze, &mut compute)) }).ur()?;
        let mut access: ze_device_memory_access_properties_t = unsafe { std::mem::zeroed() };
        access.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_ACCESS_PROPERTIES;
        check(unsafe { ze!(zeDeviceGetMemoryAccessProperties(ze, &mut access)) }).ur()?;
        let mut memory: ze_device_memory_properties_t = unsafe { std::mem::zeroed() };
        memory.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES;
        let memories = driver::list(memory, |n, out| unsafe { ze!(zeDeviceGetMemoryProperties(ze, n, out)) }).ur()?;
        let mut group: ze_command_queue_group_properties_t = unsafe { std::mem::zeroed() };
        group.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
        let groups =
            driver::list(group, |n, out| unsafe { ze!(zeDeviceGetCommandQueueGroupProperties(ze, n, out)) }).ur()?;
        let ordinal = groups
            .iter()
            .position(|g| g.flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE != 0)
            .or_else(|| groups.iter().position(|g| g.flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY != 0))
            .ok_or(UR_RESULT_ERROR_DEVICE_NOT_FOUND)?;
        Ok(Facts {
            ze,
            props,
            compute,
            memory_total: memories.iter().map(|m| m.totalSize).sum(),
            access,
            ordinal: ordinal as u32,
            max_fill_pattern: groups[ordinal].maxMemoryFillPatternSize,
        })
    }
}

/// A device of this adapter: the core's, with [`DeviceZe`] as its raw part.
pub type Device = ur_core::device::Device<LevelZero>;

/// What a device keeps beside the core's part: its Level Zero handle, what
/// the driver said of it, and its platform.
pub struct DeviceZe {
    pub ze: ze_device_handle_t,
    pub facts: Facts,
    /// Weak: the platform holds its devices.
    pub platform: Weak<Platform>,
}

// SAFETY: a device handle is an opaque token, valid for the process; the
// facts are plain data read once (their `pNext` pointers are null).
unsafe impl Send for DeviceZe {}
unsafe impl Sync for DeviceZe {}

/// Alignment of a USM allocation that asks for none.
pub const DEFAULT_USM_ALIGNMENT: usize = 64;

impl DeviceZe {
    pub fn device_type(&self) -> ur_device_type_t {
        conv::device_type(self.facts.props.r#type)
    }

    /// Nanoseconds per device timer tick.
    pub fn ns_per_tick(&self) -> f64 {
        self.facts.props.timerResolution.max(1) as f64
    }

    /// Device ticks as nanoseconds, within the timer's valid bits.
    pub fn ticks_to_ns(&self, ticks: u64) -> u64 {
        let bits = self.facts.props.timestampValidBits.clamp(1, 64);
        let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
        ((ticks & mask) as f64 * self.ns_per_tick()) as u64
    }

    /// The device's clock now, in nanoseconds.
    pub fn now_ns(&self) -> UrResult<u64> {
        let (_, device) = driver::global_timestamps(self.ze).ur()?;
        Ok(self.ticks_to_ns(device))
    }

    pub fn usm_supported(&self, kind: ur_usm_type_t) -> bool {
        let a = &self.facts.access;
        let caps = match kind {
            UR_USM_TYPE_HOST => a.hostAllocCapabilities,
            UR_USM_TYPE_DEVICE => a.deviceAllocCapabilities,
            _ => a.sharedSingleDeviceAllocCapabilities,
        };
        caps != 0
    }

    fn name(&self) -> String {
        let name = &self.facts.props.name;
        let bytes: Vec<u8> = name.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

impl RawDevice<LevelZero> for DeviceZe {
    fn all(platform: &Platform, device_type: ur_device_type_t) -> UrResult<Vec<ur_device_handle_t>> {
        let matching = |d: &&Arc<Device>| match device_type {
            UR_DEVICE_TYPE_ALL | UR_DEVICE_TYPE_DEFAULT => true,
            t => d.raw.device_type() == t,
        };
        let mut found: Vec<ur_device_handle_t> = platform.raw.devices.iter().filter(matching).map(|d| d.handle()).collect();
        if device_type == UR_DEVICE_TYPE_DEFAULT {
            found.truncate(1);
        }
        Ok(found)
    }

    /// `urDeviceGetInfo`: every query in range.
    fn info(device: &Device, prop: ur_device_info_t, out: InfoOut) -> UrResult {
        let raw = &device.raw;
        let p = &raw.facts.props;
        let c = &raw.facts.compute;
        let a = &raw.facts.access;
        let eus = p.numSlices * p.numSubslicesPerSlice * p.numEUsPerSubslice;
        match prop {
            UR_DEVICE_INFO_TYPE => out.value(raw.device_type()),
            UR_DEVICE_INFO_VENDOR_ID => out.value(p.vendorId),
            UR_DEVICE_INFO_DEVICE_ID => out.value(p.deviceId),
            UR_DEVICE_INFO_MAX_COMPUTE_UNITS | UR_DEVICE_INFO_NUM_COMPUTE_UNITS => out.value(eus.max(1)),
            UR_DEVICE_INFO_GPU_EU_COUNT => out.value(eus.max(1)),
            UR_DEVICE_INFO_GPU_EU_SIMD_WIDTH => out.value(p.physicalEUSimdWidth),
            UR_DEVICE_INFO_GPU_EU_SLICES => out.value(p.numSlices),
            UR_DEVICE_INFO_GPU_SUBSLICES_PER_SLICE => out.value(p.numSubslicesPerSlice),
            UR_DEVICE_INFO_GPU_EU_COUNT_PER_SUBSLICE => out.value(p.numEUsPerSubslice),
            UR_DEVICE_INFO_GPU_HW_THREADS_PER_EU => out.value(p.numThreadsPerEU),
            UR_DEVICE_INFO_MAX_CLOCK_FREQUENCY => out.value(p.coreClockRate),
            UR_DEVICE_INFO_ADDRESS_BITS => out.value(64u32),
            UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE => out.value(Self::max_alloc_size(device)),
            UR_DEVICE_INFO_GLOBAL_MEM_SIZE => out.value(raw.facts.memory_total),
            UR_DEVICE_INFO_QUEUE_PROPERTIES | UR_DEVICE_INFO_QUEUE_ON_HOST_PROPERTIES => out.value(
                UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0 | UR_QUEUE_FLAG_PROFILING_ENABLE.0,
            ),
            UR_DEVICE_INFO_QUEUE_ON_DEVICE_PROPERTIES => out.value(0u32),
            UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_CHAR
            | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_CHAR
            | UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_SHORT
            | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_SHORT
            | UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_HALF
            | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_HALF
            | UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_INT
            | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_INT
            | UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_FLOAT
            | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_FLOAT
            | UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_LONG
            | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_LONG
            | UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_LONG_LONG
            | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_LONG_LONG
            | UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_DOUBLE
            | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_DOUBLE => out.value(1u32),
            UR_DEVICE_INFO_MEM_BASE_ADDR_ALIGN => out.value((DEFAULT_USM_ALIGNMENT * 8) as u32),
            UR_DEVICE_INFO_GLOBAL_MEM_CACHE_TYPE => out.value(UR_DEVICE_MEM_CACHE_TYPE_READ_WRITE_CACHE),
            UR_DEVICE_INFO_ERROR_CORRECTION_SUPPORT => out.bool(p.flags & ZE_DEVICE_PROPERTY_FLAG_ECC != 0),
            UR_DEVICE_INFO_HOST_UNIFIED_MEMORY | UR_DEVICE_INFO_IS_INTEGRATED_GPU => {
                out.bool(p.flags & ZE_DEVICE_PROPERTY_FLAG_INTEGRATED != 0)
            }
            UR_DEVICE_INFO_PROFILING_TIMER_RESOLUTION => out.value(raw.ns_per_tick().ceil() as usize),
            UR_DEVICE_INFO_ENDIAN_LITTLE => out.bool(true),
            UR_DEVICE_INFO_AVAILABLE => out.bool(true),
            // The drivers this adapter serves build no modules.
            UR_DEVICE_INFO_COMPILER_AVAILABLE | UR_DEVICE_INFO_LINKER_AVAILABLE => out.bool(false),
            UR_DEVICE_INFO_EXECUTION_CAPABILITIES => out.value(0u32),
            UR_DEVICE_INFO_BUILT_IN_KERNELS => out.string(""),
            UR_DEVICE_INFO_PLATFORM => {
                out.value(raw.platform.upgrade().map_or(std::ptr::null_mut(), |p| p.handle()))
            }
            UR_DEVICE_INFO_REFERENCE_COUNT => out.value(1u32),
            UR_DEVICE_INFO_NAME => out.string(&raw.name()),
            UR_DEVICE_INFO_VENDOR => out.string("Intel(R) Corporation"),
            UR_DEVICE_INFO_DRIVER_VERSION => {
                let v = raw.platform.upgrade().map_or(0, |p| p.raw.driver_version);
                out.string(&format!("{}.{}.{}", v >> 24, (v >> 16) & 0xff, v & 0xffff))
            }
            UR_DEVICE_INFO_BACKEND_RUNTIME_VERSION | UR_DEVICE_INFO_VERSION => {
                out.string(&raw.platform.upgrade().map_or_else(String::new, |p| p.raw.version()))
            }
            UR_DEVICE_INFO_PROFILE => out.string(PlatformZe::PROFILE),
            UR_DEVICE_INFO_EXTENSIONS => out.string(""),
            UR_DEVICE_INFO_PARENT_DEVICE => out.value(std::ptr::null_mut::<ur_device_handle_t_>()),
            UR_DEVICE_INFO_SUPPORTED_PARTITIONS => out.slice::<ur_device_partition_t>(&[]),
            UR_DEVICE_INFO_PARTITION_TYPE => out.slice::<ur_device_partition_property_t>(&[]),
            UR_DEVICE_INFO_PARTITION_MAX_SUB_DEVICES | UR_DEVICE_INFO_PARTITION_AFFINITY_DOMAIN => {
                out.value(0u32)
            }
            UR_DEVICE_INFO_USM_HOST_SUPPORT => out.value(conv::usm_access(a.hostAllocCapabilities)),
            UR_DEVICE_INFO_USM_DEVICE_SUPPORT => out.value(conv::usm_access(a.deviceAllocCapabilities)),
            UR_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT => {
                out.value(conv::usm_access(a.sharedSingleDeviceAllocCapabilities))
            }
            UR_DEVICE_INFO_USM_CROSS_SHARED_SUPPORT => {
                out.value(conv::usm_access(a.sharedCrossDeviceAllocCapabilities))
            }
            UR_DEVICE_INFO_USM_SYSTEM_SHARED_SUPPORT => out.value(conv::usm_access(a.sharedSystemAllocCapabilities)),
            UR_DEVICE_INFO_UUID => out.slice(&p.uuid.id),
            UR_DEVICE_INFO_COMPONENT_DEVICES => out.slice::<ur_device_handle_t>(&[]),
            UR_DEVICE_INFO_COMPOSITE_DEVICE => out.value(std::ptr::null_mut::<ur_device_handle_t_>()),
            UR_DEVICE_INFO_KERNEL_LAUNCH_CAPABILITIES
            | UR_DEVICE_INFO_COMMAND_BUFFER_UPDATE_CAPABILITIES_EXP
            | UR_DEVICE_INFO_2D_BLOCK_ARRAY_CAPABILITIES_EXP => out.value(0u32),
            UR_DEVICE_INFO_MAX_WORK_ITEM_DIMENSIONS => out.value(3u32),
            UR_DEVICE_INFO_MAX_WORK_ITEM_SIZES => {
                out.slice(&[c.maxGroupSizeX as usize, c.maxGroupSizeY as usize, c.maxGroupSizeZ as usize])
            }
            UR_DEVICE_INFO_MAX_WORK_GROUP_SIZE => out.value(c.maxTotalGroupSize as usize),
            UR_DEVICE_INFO_MAX_WORK_GROUPS_3D => {
                out.slice(&[c.maxGroupCountX as usize, c.maxGroupCountY as usize, c.maxGroupCountZ as usize])
            }
            UR_DEVICE_INFO_SUB_GROUP_SIZES_INTEL => {
                let n = (c.numSubGroupSizes as usize).min(c.subGroupSizes.len());
                out.slice(&c.subGroupSizes[..n])
            }
            UR_DEVICE_INFO_MAX_NUM_SUB_GROUPS => {
                let smallest = c.subGroupSizes[..(c.numSubGroupSizes as usize).min(8)].iter().copied().min();
                out.value(c.maxTotalGroupSize / smallest.unwrap_or(1).max(1))
            }
            UR_DEVICE_INFO_MAX_WORK_GROUPS => out.value(
                (c.maxGroupCountX as usize)
                    .saturating_mul(c.maxGroupCountY as usize)
                    .saturating_mul(c.maxGroupCountZ as usize),
            ),
            UR_DEVICE_INFO_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS => out.bool(false),
            // This adapter builds no modules, so no floating-point
            // configuration of device code is known: none is claimed (and
            // EXTENSIONS names no cl_khr_fp64 or cl_khr_fp16).
            UR_DEVICE_INFO_SINGLE_FP_CONFIG | UR_DEVICE_INFO_DOUBLE_FP_CONFIG | UR_DEVICE_INFO_HALF_FP_CONFIG => {
                out.value(0u32)
            }
            // No kernel runs: these are the least limits a full-profile
            // device states (OpenCL's), which a launch would be held to.
            UR_DEVICE_INFO_MAX_PARAMETER_SIZE => out.value(1024usize),
            UR_DEVICE_INFO_MAX_CONSTANT_ARGS => out.value(8u32),
            UR_DEVICE_INFO_MAX_CONSTANT_BUFFER_SIZE => out.value(Self::max_alloc_size(device)),
            UR_DEVICE_INFO_PRINTF_BUFFER_SIZE => out.value(1usize << 20),
            // The device takes no IL through this adapter.
            UR_DEVICE_INFO_IL_VERSION => out.string(""),
            // A device with no shared local memory says it has none.
            UR_DEVICE_INFO_LOCAL_MEM_TYPE if c.maxSharedLocalMemory == 0 => out.value(UR_DEVICE_LOCAL_MEM_TYPE_NONE),
            UR_DEVICE_INFO_LOCAL_MEM_TYPE => out.value(UR_DEVICE_LOCAL_MEM_TYPE_LOCAL),
            UR_DEVICE_INFO_LOCAL_MEM_SIZE => out.value(c.maxSharedLocalMemory as u64),
            UR_DEVICE_INFO_USM_POOL_SUPPORT | UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP => out.bool(true),
            p if ur_core::info::is_unserved_feature(p) => out.bool(false),
            // The core answers the other features of device code (this
            // adapter builds none).
            UR_DEVICE_INFO_ATOMIC_64 | UR_DEVICE_INFO_BFLOAT16 | UR_DEVICE_INFO_BFLOAT16_CONVERSIONS_NATIVE => {
                out.bool(false)
            }
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    }

    fn max_alloc_size(device: &Device) -> u64 {
        device.raw.facts.props.maxMemAllocSize
    }

    fn serves_usm(device: &Device, kind: UsmKind) -> bool {
        device.raw.usm_supported(kind.to_ur())
    }

    /// This adapter builds no modules, so it runs no image of any target.
    fn binary_targets(_: &Device) -> &'static [&'static [u8]] {
        &[]
    }

    fn global_timestamps(device: &Device) -> UrResult<(u64, u64)> {
        let (host, ticks) = crate::driver::global_timestamps(device.raw.ze).map_err(crate::conv::result)?;
        Ok((device.raw.ticks_to_ns(ticks), host))
    }

    fn native_handle(device: &Device) -> UrResult<ur_native_handle_t> {
        Ok(device.raw.ze as ur_native_handle_t)
    }

    fn from_native(native: ur_native_handle_t, _adapter: &Adapter) -> UrResult<ur_device_handle_t> {
        platforms()
            .iter()
            .find_map(|p| p.raw.device_by_ze(native as level_zero_sys::ze_device_handle_t))
            .map(|d| d.handle())
            .ok_or(UR_RESULT_ERROR_INVALID_VALUE)
    }
}
