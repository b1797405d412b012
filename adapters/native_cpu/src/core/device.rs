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
