//! OpenCL devices as UR devices: what they can do, and `urDeviceGetInfo`
//! answered from the device itself.

use crate::driver;
use platform::Platform;
use crate::conv::{self, ClResultExt};
use crate::OpenCl;
use cl3::ext as sys;
use sys::{cl_bool, cl_device_id, cl_int, cl_uint, cl_ulong};
use std::sync::{Arc, Mutex};
use ur_core::adapter::Adapter;
use ur_core::device::RawDevice;
use ur_core::engine::UsmKind;
use ur_core::info::InfoOut;
use ur_core::partition::PartitionRequest;
use ur_core::*;

pub mod platform;

/// How USM allocations of a device's platform reach the runtime.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum UsmPath {
    /// `cl_intel_unified_shared_memory`.
    Intel,
    /// OpenCL 2.0 shared virtual memory.
    Svm,
    /// Neither: the device offers no USM.
    None,
}

/// A UR device of this adapter.
pub type Device = ur_core::device::Device<OpenCl>;

/// What an OpenCL device keeps beside the core's part: its id and
/// platform, what it can do, and its sub-devices.
pub struct DeviceCl {
    pub id: cl_device_id,
    pub platform: &'static Platform,
    pub device_type: sys::cl_device_type,
    pub name: String,
    pub extensions: String,
    /// Empty where the device takes no intermediate language.
    pub il_version: String,
    /// The OpenCL version, `(major, minor)`.
    pub version: (u32, u32),
    pub svm: sys::cl_device_svm_capabilities,
    pub usm_path: UsmPath,
    pub usm_host: ur_device_usm_access_capability_flags_t,
    pub usm_device: ur_device_usm_access_capability_flags_t,
    pub usm_single_shared: ur_device_usm_access_capability_flags_t,
    pub usm_cross_shared: ur_device_usm_access_capability_flags_t,
    pub usm_system: ur_device_usm_access_capability_flags_t,
    pub max_mem_alloc: u64,
    pub max_work_group_size: usize,
    /// Whether out-of-order OpenCL queues are used when asked for. Intel's
    /// CPU runtime (2026.2) hangs now and then in `clWaitForEvents` on an
    /// out-of-order queue with a barrier, in plain OpenCL C as well; an
    /// in-order queue serves every out-of-order one correctly, so there the
    /// adapter uses those.
    pub out_of_order_queues: bool,
    /// Whether the host thread may touch this device's USM directly: a CPU
    /// device whose memory is the host's (`CL_DEVICE_HOST_UNIFIED_MEMORY`)
    /// and whose USM the host addresses without mapping (Intel's USM, or
    /// fine-grained SVM). Small fills and copies then run on the calling
    /// thread once nothing queued before them is left (`queue/usm_commands.rs`).
    pub host_runs_usm: bool,
    /// A profiling queue for reading the device clock where OpenCL 2.1's
    /// timer query is missing; made on first use.
    clock: std::sync::OnceLock<Option<DeviceClock>>,
    /// The device this one was partitioned from, and the request that made
    /// it; `None` for a root device.
    pub parent: Option<(&'static Device, PartitionRequest)>,
    /// Sub-devices made from this device, per request. UR asks that the
    /// same request give the same devices in the same order, so they are
    /// made once and kept as long as the device, which is what keeps the
    /// `&'static Device` every other object holds sound.
    sub_devices: Mutex<Vec<(PartitionRequest, Vec<&'static Device>)>>,
}

/// A context and profiling queue of one device, whose marker timestamps
/// read the device clock.
struct DeviceClock {
    _context: opencl3::context::Context,
    queue: opencl3::command_queue::CommandQueue,
}

// SAFETY: OpenCL device ids are thread-safe tokens; the rest is immutable.
unsafe impl Send for DeviceCl {}
unsafe impl Sync for DeviceCl {}

/// `object` for the rest of the process. Platforms and devices are never
/// freed: their handles stay valid across adapter releases, and the other
/// objects hold them as `&'static`. The core's handles want every platform
/// and device inside an `Arc` (`ArcObject`), so each is made in one and
/// that `Arc`'s count is given up here, never to be given back.
pub(crate) fn kept_forever<T>(object: Arc<T>) -> &'static T {
    // SAFETY: `into_raw` keeps the strong count `object` held; nothing calls
    // `from_raw` on the pointer, so the count never falls to zero and the
    // object is never freed.
    unsafe { &*Arc::into_raw(object) }
}

/// `device` for as long as the process: root devices and sub-devices alike
/// are never freed (sub-devices are kept by their parent, see
/// `DeviceCl::sub_devices`).
pub fn kept(device: &Device) -> &'static Device {
    // SAFETY: every device of this adapter is made by `kept_forever`
    // (`DeviceCl::discover`, `partition`) and never dropped.
    unsafe { &*(device as *const Device) }
}

/// "OpenCL 3.0 anything" -> (3, 0).
fn parse_version(s: &str) -> (u32, u32) {
    let numbers = s.strip_prefix("OpenCL ").unwrap_or(s).split_whitespace().next().unwrap_or("");
    let mut parts = numbers.split('.').map(|p| p.parse().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

impl DeviceCl {
    /// The root devices of `platform`; a device whose basic info fails is
    /// left out (and logged) rather than half-described.
    pub(super) fn discover(platform: &'static Platform) -> Vec<&'static Device> {
        let ids = match cl3::device::get_device_ids(platform.raw.id, sys::CL_DEVICE_TYPE_ALL) {
            Ok(ids) => ids,
            Err(e) => {
                log::warning(&format!("{}: clGetDeviceIDs failed: {e}", platform.raw.name));
                return Vec::new();
            }
        };
        ids.into_iter()
            .filter_map(|id| match DeviceCl::new(id, platform, None) {
                Ok(d) => {
                    log::info(&format!(
                        "{}: {} (USM through {:?}; small USM commands on the host: {})",
                        platform.raw.name, d.name, d.usm_path, d.host_runs_usm
                    ));
                    Some(kept_forever(Device::new(d)))
                }
                Err(e) => {
                    log::warning(&format!("{}: skipping a device whose info fails: {e}", platform.raw.name));
                    None
                }
            })
            .collect()
    }

    fn new(id: cl_device_id, platform: &'static Platform, parent: Option<(&'static Device, PartitionRequest)>) -> Result<DeviceCl, cl_int> {
        let data = |p| cl3::device::get_device_data(id, p);
        let extensions = driver::string(data(sys::CL_DEVICE_EXTENSIONS))?;
        let version = parse_version(&driver::string(data(sys::CL_DEVICE_VERSION))?);
        // Before OpenCL 2.0 there is no SVM; some runtimes fail the query.
        let svm = if version.0 >= 2 { driver::value(data(sys::CL_DEVICE_SVM_CAPABILITIES)).unwrap_or(0) } else { 0 };
        let il_version = if version >= (2, 1) || driver::has_extension(&extensions, "cl_khr_il_program") {
            driver::string(data(sys::CL_DEVICE_IL_VERSION)).unwrap_or_default()
        } else {
            String::new()
        };
        let intel = platform.raw.intel_usm.is_some() && driver::has_extension(&extensions, "cl_intel_unified_shared_memory");
        let mut device = DeviceCl {
            id,
            platform,
            device_type: driver::value(data(sys::CL_DEVICE_TYPE))?,
            name: driver::string(data(sys::CL_DEVICE_NAME))?,
            extensions,
            il_version,
            version,
            svm,
            usm_path: UsmPath::None,
            usm_host: 0,
            usm_device: 0,
            usm_single_shared: 0,
            usm_cross_shared: 0,
            usm_system: 0,
            max_mem_alloc: driver::value(data(sys::CL_DEVICE_MAX_MEM_ALLOC_SIZE))?,
            max_work_group_size: driver::value(data(sys::CL_DEVICE_MAX_WORK_GROUP_SIZE))?,
            clock: std::sync::OnceLock::new(),
            out_of_order_queues: true,
            host_runs_usm: false,
            parent,
            sub_devices: Mutex::new(Vec::new()),
        };
        let device_type = device.device_type;
        device.out_of_order_queues =
            !(platform.raw.name == "Intel(R) OpenCL" && device_type & sys::CL_DEVICE_TYPE_CPU != 0);
        if intel {
            let caps = |p| driver::value::<sys::cl_bitfield>(data(p)).map(conv::usm_capabilities).unwrap_or(0);
            device.usm_path = UsmPath::Intel;
            device.usm_host = caps(sys::CL_DEVICE_HOST_MEM_CAPABILITIES_INTEL);
            device.usm_device = caps(sys::CL_DEVICE_DEVICE_MEM_CAPABILITIES_INTEL);
            device.usm_single_shared = caps(sys::CL_DEVICE_SINGLE_DEVICE_SHARED_MEM_CAPABILITIES_INTEL);
            device.usm_cross_shared = caps(sys::CL_DEVICE_CROSS_DEVICE_SHARED_MEM_CAPABILITIES_INTEL);
            device.usm_system = caps(sys::CL_DEVICE_SHARED_SYSTEM_MEM_CAPABILITIES_INTEL);
        } else if svm != 0 {
            let caps = conv::svm_usm_capabilities(svm);
            device.usm_path = UsmPath::Svm;
            device.usm_host = caps.host;
            device.usm_device = caps.device;
            device.usm_single_shared = caps.shared;
            device.usm_system = caps.system;
        }
        let host_unified = driver::value::<sys::cl_bool>(data(sys::CL_DEVICE_HOST_UNIFIED_MEMORY)).unwrap_or(0) != 0;
        let host_addressed = device.usm_path == UsmPath::Intel
            || (device.usm_path == UsmPath::Svm && svm & sys::CL_DEVICE_SVM_FINE_GRAIN_BUFFER != 0);
        device.host_runs_usm = device_type & sys::CL_DEVICE_TYPE_CPU != 0 && host_unified && host_addressed;
        Ok(device)
    }

    /// The partition kinds the device offers that UR names (OpenCL's and
    /// UR's values are the same numbers; runtimes may list extension kinds
    /// too, such as Intel's partition by names, which UR cannot ask for).
    fn supported_partitions(&self) -> Vec<ur_device_partition_t> {
        let kinds = driver::array::<sys::cl_device_partition_property>(self.data(sys::CL_DEVICE_PARTITION_PROPERTIES))
            .unwrap_or_default();
        kinds
            .into_iter()
            .map(|k| ur_device_partition_t(k as u32))
            .filter(|k| {
                [UR_DEVICE_PARTITION_EQUALLY, UR_DEVICE_PARTITION_BY_COUNTS, UR_DEVICE_PARTITION_BY_AFFINITY_DOMAIN].contains(k)
            })
            .collect()
    }

    fn affinity_domains(&self) -> ur_device_affinity_domain_flags_t {
        driver::value::<sys::cl_device_affinity_domain>(self.data(sys::CL_DEVICE_PARTITION_AFFINITY_DOMAIN))
            .map(|d| d as u32 & !UR_DEVICE_AFFINITY_DOMAIN_FLAGS_MASK)
            .unwrap_or(0)
    }

    /// Every sub-device partitioned from this device so far, and theirs.
    pub fn sub_devices_made(&self) -> Vec<&'static Device> {
        let made: Vec<&'static Device> = self
            .sub_devices
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .flat_map(|(_, devices)| devices.iter().copied())
            .collect();
        made.iter().flat_map(|d| std::iter::once(*d).chain(d.raw.sub_devices_made())).collect()
    }

    pub fn has_extension(&self, ext: &str) -> bool {
        driver::has_extension(&self.extensions, ext)
    }

    /// Whether `urDeviceGet` with this filter lists the device.
    pub fn matches(&self, filter: sys::cl_device_type) -> bool {
        match filter {
            sys::CL_DEVICE_TYPE_ALL => true,
            // The platform's first device stands for its default one (its
            // raw part is this one exactly when it is this device).
            sys::CL_DEVICE_TYPE_DEFAULT => {
                self.device_type & sys::CL_DEVICE_TYPE_DEFAULT != 0
                    || self.platform.raw.devices().first().is_some_and(|d| std::ptr::eq(&d.raw, self))
            }
            f => self.device_type & f != 0,
        }
    }

    fn data(&self, param: cl_uint) -> Result<Vec<u8>, cl_int> {
        cl3::device::get_device_data(self.id, param)
    }
    fn u32(&self, param: cl_uint) -> UrResult<u32> {
        driver::value::<cl_uint>(self.data(param)).ur()
    }
    fn u64(&self, param: cl_uint) -> UrResult<u64> {
        driver::value::<cl_ulong>(self.data(param)).ur()
    }
    fn usize(&self, param: cl_uint) -> UrResult<usize> {
        driver::value::<usize>(self.data(param)).ur()
    }
    fn flag(&self, param: cl_uint) -> UrResult<bool> {
        driver::value::<cl_bool>(self.data(param)).map(|b| b != 0).ur()
    }
    fn string(&self, param: cl_uint) -> UrResult<String> {
        driver::string(self.data(param)).ur()
    }

    /// Queue properties of host queues, as UR flags.
    pub fn queue_properties(&self) -> UrResult<ur_queue_flags_t> {
        Ok(conv::queue_properties_to_ur(self.u64(sys::CL_DEVICE_QUEUE_ON_HOST_PROPERTIES)?))
    }

    /// SYCL counts at least one sub-group per work-group; OpenCL answers 0
    /// (or, before 2.1, nothing) for a device without sub-groups of its own,
    /// whose work-items then each form a sub-group of one.
    fn max_num_sub_groups(&self) -> u32 {
        let n = if self.version >= (2, 1) { self.u32(sys::CL_DEVICE_MAX_NUM_SUB_GROUPS).unwrap_or(0) } else { 0 };
        n.max(1)
    }

    /// The sub-group sizes kernels may ask for: the runtime's list where it
    /// has `cl_intel_required_subgroup_size`, otherwise sub-groups of one
    /// work-item (see [`Self::max_num_sub_groups`]).
    fn sub_group_sizes(&self) -> UrResult<Vec<u32>> {
        if !self.has_extension("cl_intel_required_subgroup_size") {
            return Ok(vec![1]);
        }
        let sizes = driver::array::<usize>(self.data(sys::CL_DEVICE_SUB_GROUP_SIZES_INTEL)).ur()?;
        Ok(sizes.iter().map(|&s| s as u32).collect())
    }

    /// `cl_khr_kernel_clock` scopes the device can sample; none without it.
    fn kernel_clock_capabilities(&self) -> sys::cl_bitfield {
        if !self.has_extension("cl_khr_kernel_clock") {
            return 0;
        }
        driver::value::<sys::cl_bitfield>(self.data(sys::CL_DEVICE_KERNEL_CLOCK_CAPABILITIES_KHR)).unwrap_or(0)
    }

    fn atomic_capabilities(&self, param: cl_uint) -> sys::cl_bitfield {
        if self.version.0 >= 3 {
            if let Ok(c) = driver::value::<sys::cl_bitfield>(self.data(param)) {
                return c;
            }
        }
        // What every OpenCL 1.2/2.x device guarantees.
        sys::CL_DEVICE_ATOMIC_ORDER_RELAXED | sys::CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP
    }

    fn make_clock(&self) -> Option<DeviceClock> {
        let properties = [sys::CL_CONTEXT_PLATFORM as sys::cl_context_properties, self.platform.raw.id as isize, 0];
        let context =
            opencl3::context::Context::from_devices(&[self.id], &properties, None, std::ptr::null_mut()).ok()?;
        // SAFETY: the device belongs to the context just made.
        let queue = unsafe {
            opencl3::command_queue::CommandQueue::create_with_properties(&context, self.id, sys::CL_QUEUE_PROFILING_ENABLE, 0)
        }
        .ok()?;
        Some(DeviceClock { _context: context, queue })
    }
}

/// The `&'static` devices behind `devices` (see [`kept`]).
pub(crate) fn kept_all(devices: &[&Device]) -> Vec<&'static Device> {
    devices.iter().map(|d| kept(d)).collect()
}

impl RawDevice<OpenCl> for DeviceCl {
    fn all(platform: &Platform, device_type: ur_device_type_t) -> UrResult<Vec<ur_device_handle_t>> {
        // A UR type OpenCL cannot name matches no device.
        let Some(filter) = conv::device_type_filter(device_type)? else { return Ok(Vec::new()) };
        Ok(platform.raw.devices().iter().filter(|d| d.raw.matches(filter)).map(|d| d.handle()).collect())
    }

    /// `urDeviceGetInfo`, for a query the core checked to be in range.
    fn info(device: &Device, prop: ur_device_info_t, out: InfoOut) -> UrResult {
        let d = &device.raw;
        use sys::*;
        let unsupported = Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION);
        match prop {
            UR_DEVICE_INFO_TYPE => out.value(conv::device_type(d.device_type)),
            UR_DEVICE_INFO_VENDOR_ID => out.value(d.u32(CL_DEVICE_VENDOR_ID)?),
            UR_DEVICE_INFO_DEVICE_ID => match d.u32(CL_DEVICE_ID_INTEL) {
                Ok(id) if d.has_extension("cl_intel_device_attribute_query") => out.value(id),
                _ => unsupported,
            },
            UR_DEVICE_INFO_MAX_COMPUTE_UNITS | UR_DEVICE_INFO_NUM_COMPUTE_UNITS => {
                out.value(d.u32(CL_DEVICE_MAX_COMPUTE_UNITS)?)
            }
            UR_DEVICE_INFO_MAX_WORK_ITEM_DIMENSIONS => out.value(d.u32(CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS)?),
            UR_DEVICE_INFO_MAX_WORK_ITEM_SIZES => {
                out.slice(&driver::array::<usize>(d.data(CL_DEVICE_MAX_WORK_ITEM_SIZES)).ur()?)
            }
            UR_DEVICE_INFO_MAX_WORK_GROUP_SIZE => out.value(d.max_work_group_size),
            UR_DEVICE_INFO_SINGLE_FP_CONFIG => out.value(conv::fp_config(d.u64(CL_DEVICE_SINGLE_FP_CONFIG)?)),
            UR_DEVICE_INFO_HALF_FP_CONFIG => {
                let c = if d.has_extension("cl_khr_fp16") { d.u64(CL_DEVICE_HALF_FP_CONFIG).unwrap_or(0) } else { 0 };
                out.value(conv::fp_config(c))
            }
            UR_DEVICE_INFO_DOUBLE_FP_CONFIG => out.value(conv::fp_config(d.u64(CL_DEVICE_DOUBLE_FP_CONFIG).unwrap_or(0))),
            UR_DEVICE_INFO_QUEUE_PROPERTIES | UR_DEVICE_INFO_QUEUE_ON_HOST_PROPERTIES => {
                out.value(d.queue_properties()?)
            }
            UR_DEVICE_INFO_QUEUE_ON_DEVICE_PROPERTIES => {
                let p = if d.version.0 >= 2 { d.u64(CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES).unwrap_or(0) } else { 0 };
                out.value(conv::queue_properties_to_ur(p))
            }
            UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_CHAR => out.value(d.u32(CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR)?),
            UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_SHORT => out.value(d.u32(CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT)?),
            UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_INT => out.value(d.u32(CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT)?),
            UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_LONG | UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_LONG_LONG => {
                out.value(d.u32(CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG)?)
            }
            UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_FLOAT => out.value(d.u32(CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT)?),
            UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_DOUBLE => out.value(d.u32(CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE)?),
            UR_DEVICE_INFO_PREFERRED_VECTOR_WIDTH_HALF => out.value(d.u32(CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF)?),
            UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_CHAR => out.value(d.u32(CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR)?),
            UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_SHORT => out.value(d.u32(CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT)?),
            UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_INT => out.value(d.u32(CL_DEVICE_NATIVE_VECTOR_WIDTH_INT)?),
            UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_LONG | UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_LONG_LONG => {
                out.value(d.u32(CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG)?)
            }
            UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_FLOAT => out.value(d.u32(CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT)?),
            UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_DOUBLE => out.value(d.u32(CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE)?),
            UR_DEVICE_INFO_NATIVE_VECTOR_WIDTH_HALF => out.value(d.u32(CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF)?),
            UR_DEVICE_INFO_MAX_CLOCK_FREQUENCY => out.value(d.u32(CL_DEVICE_MAX_CLOCK_FREQUENCY)?),
            UR_DEVICE_INFO_ADDRESS_BITS => out.value(d.u32(CL_DEVICE_ADDRESS_BITS)?),
            UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE => out.value(d.max_mem_alloc),
            UR_DEVICE_INFO_MAX_PARAMETER_SIZE => out.value(d.usize(CL_DEVICE_MAX_PARAMETER_SIZE)?),
            UR_DEVICE_INFO_MEM_BASE_ADDR_ALIGN => out.value(d.u32(CL_DEVICE_MEM_BASE_ADDR_ALIGN)?),
            UR_DEVICE_INFO_GLOBAL_MEM_CACHE_TYPE => {
                out.value(conv::mem_cache_type(d.u32(CL_DEVICE_GLOBAL_MEM_CACHE_TYPE)?))
            }
            UR_DEVICE_INFO_GLOBAL_MEM_CACHELINE_SIZE => out.value(d.u32(CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE)?),
            UR_DEVICE_INFO_GLOBAL_MEM_CACHE_SIZE => out.value(d.u64(CL_DEVICE_GLOBAL_MEM_CACHE_SIZE)?),
            UR_DEVICE_INFO_GLOBAL_MEM_SIZE => out.value(d.u64(CL_DEVICE_GLOBAL_MEM_SIZE)?),
            UR_DEVICE_INFO_MAX_CONSTANT_BUFFER_SIZE => out.value(d.u64(CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE)?),
            UR_DEVICE_INFO_MAX_CONSTANT_ARGS => out.value(d.u32(CL_DEVICE_MAX_CONSTANT_ARGS)?),
            UR_DEVICE_INFO_LOCAL_MEM_TYPE => out.value(conv::local_mem_type(d.u32(CL_DEVICE_LOCAL_MEM_TYPE)?)),
            UR_DEVICE_INFO_LOCAL_MEM_SIZE => out.value(d.u64(CL_DEVICE_LOCAL_MEM_SIZE)?),
            UR_DEVICE_INFO_ERROR_CORRECTION_SUPPORT => out.bool(d.flag(CL_DEVICE_ERROR_CORRECTION_SUPPORT)?),
            UR_DEVICE_INFO_HOST_UNIFIED_MEMORY => out.bool(d.flag(CL_DEVICE_HOST_UNIFIED_MEMORY)?),
            UR_DEVICE_INFO_PROFILING_TIMER_RESOLUTION => out.value(d.usize(CL_DEVICE_PROFILING_TIMER_RESOLUTION)?),
            UR_DEVICE_INFO_ENDIAN_LITTLE => out.bool(d.flag(CL_DEVICE_ENDIAN_LITTLE)?),
            UR_DEVICE_INFO_AVAILABLE => out.bool(d.flag(CL_DEVICE_AVAILABLE)?),
            UR_DEVICE_INFO_COMPILER_AVAILABLE => out.bool(d.flag(CL_DEVICE_COMPILER_AVAILABLE)?),
            UR_DEVICE_INFO_LINKER_AVAILABLE => out.bool(d.flag(CL_DEVICE_LINKER_AVAILABLE)?),
            UR_DEVICE_INFO_EXECUTION_CAPABILITIES => {
                out.value(conv::exec_capabilities(d.u64(CL_DEVICE_EXECUTION_CAPABILITIES)?))
            }
            UR_DEVICE_INFO_BUILT_IN_KERNELS => out.string(&d.string(CL_DEVICE_BUILT_IN_KERNELS)?),
            UR_DEVICE_INFO_PLATFORM => out.value(d.platform.handle()),
            // Root devices are never freed; their count stays at one.
            UR_DEVICE_INFO_REFERENCE_COUNT => {
                out.value(if d.parent.is_some() { ur_core::handle::ref_count_of(device) } else { 1 })
            }
            UR_DEVICE_INFO_IL_VERSION => out.string(&d.il_version),
            UR_DEVICE_INFO_NAME => out.string(&d.name),
            UR_DEVICE_INFO_VENDOR => out.string(&d.string(CL_DEVICE_VENDOR)?),
            UR_DEVICE_INFO_DRIVER_VERSION => out.string(&d.string(CL_DRIVER_VERSION)?),
            UR_DEVICE_INFO_PROFILE => out.string(&d.string(CL_DEVICE_PROFILE)?),
            UR_DEVICE_INFO_VERSION => out.string(&d.string(CL_DEVICE_VERSION)?),
            UR_DEVICE_INFO_BACKEND_RUNTIME_VERSION => out.string(&format!("{}.{}", d.version.0, d.version.1)),
            UR_DEVICE_INFO_EXTENSIONS => out.string(&d.extensions),
            UR_DEVICE_INFO_PRINTF_BUFFER_SIZE => out.value(d.usize(CL_DEVICE_PRINTF_BUFFER_SIZE)?),
            UR_DEVICE_INFO_PREFERRED_INTEROP_USER_SYNC => out.bool(d.flag(CL_DEVICE_PREFERRED_INTEROP_USER_SYNC)?),
            UR_DEVICE_INFO_PARENT_DEVICE => {
                out.value(d.parent.as_ref().map_or(std::ptr::null_mut(), |(p, _)| p.handle()))
            }
            UR_DEVICE_INFO_SUPPORTED_PARTITIONS => out.slice(&d.supported_partitions()),
            // The properties given to urDevicePartition; none for a root.
            UR_DEVICE_INFO_PARTITION_TYPE => match &d.parent {
                Some((_, request)) => out.slice(&request.properties()),
                None => out.bytes(&[]),
            },
            UR_DEVICE_INFO_PARTITION_MAX_SUB_DEVICES => {
                out.value(d.u32(CL_DEVICE_PARTITION_MAX_SUB_DEVICES).unwrap_or(0))
            }
            UR_DEVICE_INFO_PARTITION_AFFINITY_DOMAIN => out.value(d.affinity_domains()),
            UR_DEVICE_INFO_MAX_NUM_SUB_GROUPS => out.value(d.max_num_sub_groups()),
            UR_DEVICE_INFO_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS => out.bool(
                d.version >= (2, 1) && d.flag(CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS).unwrap_or(false),
            ),
            UR_DEVICE_INFO_SUB_GROUP_SIZES_INTEL => out.slice(&d.sub_group_sizes()?),
            UR_DEVICE_INFO_USM_HOST_SUPPORT => out.value(d.usm_host),
            UR_DEVICE_INFO_USM_DEVICE_SUPPORT => out.value(d.usm_device),
            UR_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT => out.value(d.usm_single_shared),
            UR_DEVICE_INFO_USM_CROSS_SHARED_SUPPORT => out.value(d.usm_cross_shared),
            UR_DEVICE_INFO_USM_SYSTEM_SHARED_SUPPORT => out.value(d.usm_system),
            UR_DEVICE_INFO_UUID => {
                if !d.has_extension("cl_khr_device_uuid") {
                    return unsupported;
                }
                out.bytes(&driver::value::<[u8; 16]>(d.data(CL_DEVICE_UUID_KHR)).ur()?)
            }
            UR_DEVICE_INFO_ATOMIC_64 => out.bool(d.has_extension("cl_khr_int64_base_atomics")),
            UR_DEVICE_INFO_ATOMIC_MEMORY_ORDER_CAPABILITIES => {
                out.value(conv::atomic_order_capabilities(d.atomic_capabilities(CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES)))
            }
            UR_DEVICE_INFO_ATOMIC_MEMORY_SCOPE_CAPABILITIES => {
                out.value(conv::atomic_scope_capabilities(d.atomic_capabilities(CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES)))
            }
            UR_DEVICE_INFO_ATOMIC_FENCE_ORDER_CAPABILITIES => {
                out.value(conv::atomic_order_capabilities(d.atomic_capabilities(CL_DEVICE_ATOMIC_FENCE_CAPABILITIES)))
            }
            UR_DEVICE_INFO_ATOMIC_FENCE_SCOPE_CAPABILITIES => {
                out.value(conv::atomic_scope_capabilities(d.atomic_capabilities(CL_DEVICE_ATOMIC_FENCE_CAPABILITIES)))
            }
            UR_DEVICE_INFO_BFLOAT16 => out.bool(d.has_extension("cl_intel_bfloat16_conversions")),
            UR_DEVICE_INFO_BFLOAT16_CONVERSIONS_NATIVE => out.bool(d.has_extension("cl_intel_bfloat16_conversions")),
            UR_DEVICE_INFO_KERNEL_SET_SPECIALIZATION_CONSTANTS => out.bool(false),
            UR_DEVICE_INFO_PROGRAM_SET_SPECIALIZATION_CONSTANTS => {
                out.bool(d.version >= (2, 2) && !d.il_version.is_empty())
            }
            // OpenCL puts no limit on the number of work-groups beyond the
            // index range of the ND-range, whose sizes are `size_t`.
            UR_DEVICE_INFO_MAX_WORK_GROUPS_3D => out.slice(&[usize::MAX; 3]),
            UR_DEVICE_INFO_MAX_WORK_GROUPS => out.value(usize::MAX),
            // cl_intel_device_attribute_query: the runtime's own description
            // of its hardware.
            UR_DEVICE_INFO_IP_VERSION
            | UR_DEVICE_INFO_GPU_EU_SLICES
            | UR_DEVICE_INFO_GPU_SUBSLICES_PER_SLICE
            | UR_DEVICE_INFO_GPU_EU_COUNT_PER_SUBSLICE
            | UR_DEVICE_INFO_GPU_HW_THREADS_PER_EU => {
                let param = match prop {
                    UR_DEVICE_INFO_IP_VERSION => CL_DEVICE_IP_VERSION_INTEL,
                    UR_DEVICE_INFO_GPU_EU_SLICES => CL_DEVICE_NUM_SLICES_INTEL,
                    UR_DEVICE_INFO_GPU_SUBSLICES_PER_SLICE => CL_DEVICE_NUM_SUB_SLICES_PER_SLICE_INTEL,
                    UR_DEVICE_INFO_GPU_EU_COUNT_PER_SUBSLICE => CL_DEVICE_NUM_EUS_PER_SUB_SLICE_INTEL,
                    _ => CL_DEVICE_NUM_THREADS_PER_EU_INTEL,
                };
                match d.u32(param) {
                    Ok(v) if d.has_extension("cl_intel_device_attribute_query") => out.value(v),
                    _ => unsupported,
                }
            }
            // cl_khr_device_uuid also carries the Windows LUID and node mask;
            // the LUID only where the runtime says it is valid.
            UR_DEVICE_INFO_NODE_MASK if d.has_extension("cl_khr_device_uuid") => {
                out.value(d.u32(CL_DEVICE_NODE_MASK_KHR)?)
            }
            UR_DEVICE_INFO_LUID
                if d.has_extension("cl_khr_device_uuid") && d.flag(CL_DEVICE_LUID_VALID_KHR).unwrap_or(false) =>
            {
                out.bytes(&driver::value::<[u8; 8]>(d.data(CL_DEVICE_LUID_KHR)).ur()?)
            }
            UR_DEVICE_INFO_CLOCK_SUB_GROUP_SUPPORT_EXP
            | UR_DEVICE_INFO_CLOCK_WORK_GROUP_SUPPORT_EXP
            | UR_DEVICE_INFO_CLOCK_DEVICE_SUPPORT_EXP => {
                out.bool(conv::kernel_clock_scope(prop) & d.kernel_clock_capabilities() != 0)
            }
            UR_DEVICE_INFO_2D_BLOCK_ARRAY_CAPABILITIES_EXP => {
                out.value(0 as ur_exp_device_2d_block_array_capability_flags_t)
            }
            // Features no adapter of this project serves (ur_core::info).
            p if ur_core::info::is_unserved_feature(p) => out.bool(false),
            // Pools are offered wherever USM is: the async pool engine
            // sub-allocates for urEnqueueUSM*AllocExp, and blocking
            // allocations carry their pool.
            UR_DEVICE_INFO_USM_POOL_SUPPORT | UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP => {
                out.bool(d.usm_path != UsmPath::None)
            }
            UR_DEVICE_INFO_USE_NATIVE_ASSERT => out.bool(d.has_extension("cl_intel_devicelib_assert")),
            UR_DEVICE_INFO_KERNEL_LAUNCH_CAPABILITIES => out.value(0 as ur_kernel_launch_properties_flags_t),
            UR_DEVICE_INFO_COMMAND_BUFFER_UPDATE_CAPABILITIES_EXP => {
                out.value(0 as ur_device_command_buffer_update_capability_flags_t)
            }
            UR_DEVICE_INFO_IS_INTEGRATED_GPU => out.bool(
                d.device_type & CL_DEVICE_TYPE_GPU != 0 && d.flag(CL_DEVICE_HOST_UNIFIED_MEMORY).unwrap_or(false),
            ),
            _ => unsupported,
        }
    }

    fn is_root(device: &Device) -> bool {
        device.raw.parent.is_none()
    }

    fn max_alloc_size(device: &Device) -> u64 {
        device.raw.max_mem_alloc
    }

    fn serves_usm(device: &Device, kind: UsmKind) -> bool {
        let d = &device.raw;
        let caps = match kind {
            UsmKind::Host => d.usm_host,
            UsmKind::Device => d.usm_device,
            UsmKind::Shared => d.usm_single_shared | d.usm_cross_shared,
        };
        caps != 0
    }

    /// An image compiled ahead of time for the device's kind beats generic
    /// SPIR-V.
    fn binary_targets(device: &Device) -> &'static [&'static [u8]] {
        match conv::device_type(device.raw.device_type) {
            UR_DEVICE_TYPE_CPU => &[b"spir64_x86_64", b"spir64"],
            UR_DEVICE_TYPE_GPU => &[b"spir64_gen", b"spir64"],
            UR_DEVICE_TYPE_FPGA => &[b"spir64_fpga", b"spir64"],
            _ => &[b"spir64"],
        }
    }

    /// `urDeviceGetGlobalTimestamps`: the device and host clocks read
    /// together, in nanoseconds. Without OpenCL 2.1's timer query, the
    /// device clock is read as the profiling end time of a marker, and the
    /// host clock (`CLOCK_MONOTONIC`) right after it.
    fn global_timestamps(device: &Device) -> UrResult<(u64, u64)> {
        let d = &device.raw;
        if d.version >= (2, 1) {
            if let Ok([device, host]) = cl3::device::get_device_and_host_timer(d.id) {
                return Ok((device, host));
            }
        }
        let clock = d.clock.get_or_init(|| d.make_clock()).as_ref().ok_or(UR_RESULT_ERROR_UNSUPPORTED_FEATURE)?;
        // SAFETY: a live queue and an empty wait list.
        let marker =
            unsafe { cl3::command_queue::enqueue_marker_with_wait_list(clock.queue.get(), 0, std::ptr::null()) }.ur()?;
        let marker = opencl3::event::Event::new(marker);
        marker.wait().ur()?;
        let host = monotonic_ns();
        let device = marker.profiling_command_end().ur()?;
        Ok((device, host))
    }

    /// `urDevicePartition`: the sub-devices of `request`, made by
    /// `clCreateSubDevices` on the first call and the same ones after.
    fn partition<'a>(device: &'a Device, request: &PartitionRequest) -> UrResult<Vec<&'a Device>> {
        let d = &device.raw;
        request.check_against(
            &d.supported_partitions(),
            d.u32(sys::CL_DEVICE_MAX_COMPUTE_UNITS)?,
            d.u32(sys::CL_DEVICE_PARTITION_MAX_SUB_DEVICES)?,
            d.affinity_domains(),
        )?;
        let mut made = d.sub_devices.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, devices)) = made.iter().find(|(r, _)| r == request) {
            return Ok(devices.clone());
        }
        let properties: Vec<sys::cl_device_partition_property> = match request {
            PartitionRequest::Equally(n) => vec![sys::CL_DEVICE_PARTITION_EQUALLY as isize, *n as isize, 0],
            PartitionRequest::ByCounts(counts) => std::iter::once(sys::CL_DEVICE_PARTITION_BY_COUNTS as isize)
                .chain(counts.iter().map(|&c| c as isize))
                .chain([sys::CL_DEVICE_PARTITION_BY_COUNTS_LIST_END as isize, 0])
                .collect(),
            PartitionRequest::ByAffinityDomain(d) => {
                vec![sys::CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN as isize, *d as isize, 0]
            }
        };
        let ids = cl3::device::create_sub_devices(d.id, &properties).map_err(conv::partition_result)?;
        let mut devices = Vec::with_capacity(ids.len());
        for id in &ids {
            match DeviceCl::new(*id, d.platform, Some((kept(device), request.clone()))) {
                Ok(raw) => devices.push(raw),
                Err(e) => {
                    // Nothing half-made is kept: every id of this call goes back.
                    for id in &ids {
                        // SAFETY: each id came from clCreateSubDevices above
                        // and is released once.
                        let _ = unsafe { cl3::device::release_device(*id) };
                    }
                    return Err(conv::result(e));
                }
            }
        }
        let devices: Vec<&'static Device> = devices.into_iter().map(|raw| kept_forever(Device::new(raw))).collect();
        log::info(&format!("{}: partitioned into {} sub-devices ({request:?})", d.name, devices.len()));
        made.push((request.clone(), devices.clone()));
        Ok(devices)
    }

    fn native_handle(device: &Device) -> UrResult<ur_native_handle_t> {
        Ok(device.raw.id as ur_native_handle_t)
    }

    /// The handle `urDeviceGet` hands out, or a sub-device `urDevicePartition`
    /// made: the adapter's devices hold their OpenCL ids as long as they
    /// live, so ownership changes nothing.
    fn from_native(native: ur_native_handle_t, _adapter: &Adapter) -> UrResult<ur_device_handle_t> {
        let device = platform::device_by_id(native as sys::cl_device_id).ok_or(UR_RESULT_ERROR_INVALID_VALUE)?;
        Ok(device.handle())
    }
}

/// The host clock of `urDeviceGetGlobalTimestamps`, in nanoseconds.
fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `clock_gettime` writes the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::parse_version;

    #[test]
    fn versions() {
        assert_eq!(parse_version("OpenCL 3.0 PoCL HSTR: pthread"), (3, 0));
        assert_eq!(parse_version("OpenCL 2.1 (Build 0)"), (2, 1));
        assert_eq!(parse_version("garbage"), (0, 0));
    }
}
