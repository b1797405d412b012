//! The CPU device: the host's processors and memory, seen as one UR device.

use super::host::HostFacts;
use super::platform::Platform;
use crate::DDI;
use std::sync::{Arc, Weak};
use ur_core::handle::{HandleHeader, ObjectKind, UrObject};
use ur_core::*;

#[repr(C)]
pub struct Device {
    header: HandleHeader,
    platform: Weak<Platform>,
    pub host: HostFacts,
}

const _: () = assert!(core::mem::offset_of!(Device, header) == 0);

// SAFETY: `Device` is `#[repr(C)]` with its header at offset 0.
unsafe impl UrObject for Device {
    const KIND: ObjectKind = ObjectKind::Device;
    type Handle = ur_device_handle_t_;
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

impl Device {
    pub fn new_root(platform: Weak<Platform>) -> Arc<Device> {
        Arc::new(Device { header: HandleHeader::new(&DDI, ObjectKind::Device), platform, host: HostFacts::probe() })
    }

    pub fn handle(self: &Arc<Self>) -> ur_device_handle_t {
        Arc::as_ptr(self) as ur_device_handle_t
    }

    pub fn platform_handle(&self) -> ur_platform_handle_t {
        self.platform.as_ptr() as ur_platform_handle_t
    }

    /// Whether a `urDeviceGet` filter selects this device.
    pub fn matches(device_type: ur_device_type_t) -> bool {
        matches!(device_type, UR_DEVICE_TYPE_DEFAULT | UR_DEVICE_TYPE_ALL | UR_DEVICE_TYPE_CPU)
    }

    /// The largest single allocation: all of physical memory.
    pub fn max_alloc_size(&self) -> u64 {
        self.host.total_memory
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

/// The clock of profiling timestamps and `urDeviceGetGlobalTimestamps`, in
/// nanoseconds: `CLOCK_MONOTONIC`, shared by host and device.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `clock_gettime` writes the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Resolution of [`monotonic_ns`] in nanoseconds.
pub fn clock_resolution_ns() -> usize {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `clock_getres` writes the timespec we own.
    unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as usize * 1_000_000_000 + ts.tv_nsec as usize).max(1)
}
