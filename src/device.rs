//! The platform and device objects, written once for every backend: the
//! handle header beside `raw`, what the driver knows of them (a
//! `cl_platform_id`, a Level Zero driver, a `CUdevice` and its primary
//! context, the host's processors), behind [`RawPlatform`] and
//! [`RawDevice`]. Every answer about a device comes from its driver, so the
//! core part is the handle; the core answers the rest itself in `api`.

use crate::abi::*;
use crate::adapter::Adapter;
use crate::engine::UsmKind;
use crate::hal::Backend;
use crate::handle::{HandleHeader, ObjectKind};
use crate::info::InfoOut;
use crate::partition::PartitionRequest;
use crate::UrResult;
use std::ffi::CStr;
use std::sync::{Arc, Weak};

const UNSUPPORTED: ur_result_t = UR_RESULT_ERROR_UNSUPPORTED_FEATURE;

/// The driver's side of a platform. Each function gets the whole platform.
pub trait RawPlatform<B: Backend>: Send + Sync + Sized + 'static {
    /// The adapter's platforms, as handles the caller does not own.
    fn all(adapter: &Arc<Adapter>) -> UrResult<Vec<ur_platform_handle_t>>;
    /// Every query but `BACKEND` (the core answers it), in range.
    fn info(platform: &Platform<B>, prop: ur_platform_info_t, out: InfoOut) -> UrResult;
    /// The compiler option of this platform for a frontend option.
    fn backend_option(platform: &Platform<B>, frontend: &str) -> Option<&'static CStr>;
    /// Also what `urPlatformCreateWithNativeHandle` compares against: a
    /// native handle names one of the adapter's platforms.
    fn native_handle(_platform: &Platform<B>) -> UrResult<ur_native_handle_t> {
        Err(UNSUPPORTED)
    }
}

/// The driver's side of a device. Each function gets the whole device.
pub trait RawDevice<B: Backend>: Send + Sync + Sized + 'static {
    /// The platform's devices of one type (`ALL`/`DEFAULT` included; the
    /// core checked the enum), as handles the caller does not own.
    fn all(platform: &Platform<B>, device_type: ur_device_type_t) -> UrResult<Vec<ur_device_handle_t>>;
    /// Every query in range.
    fn info(device: &Device<B>, prop: ur_device_info_t, out: InfoOut) -> UrResult;
    /// Root devices count no references: their retain and release do
    /// nothing. Sub-devices count the user's, and live as long as their
    /// parent: a release frees nothing. Only a backend that partitions
    /// overrides this.
    fn is_root(_device: &Device<B>) -> bool {
        true
    }
    /// The most bytes one allocation may take (`MAX_MEM_ALLOC_SIZE`).
    fn max_alloc_size(device: &Device<B>) -> u64;
    /// Whether the device serves USM of `kind` at all (its
    /// `*_MEMORY_SUPPORT` capabilities are not 0).
    fn serves_usm(_device: &Device<B>, _kind: UsmKind) -> bool {
        true
    }
    /// Binary targets this device runs, best first.
    fn binary_targets(device: &Device<B>) -> &'static [&'static [u8]];
    /// `(device, host)` nanoseconds.
    fn global_timestamps(device: &Device<B>) -> UrResult<(u64, u64)>;
    /// The sub-devices of a checked request, kept by this device. The
    /// default refuses every request, as a device with no
    /// `SUPPORTED_PARTITIONS` must.
    fn partition<'a>(_device: &'a Device<B>, request: &PartitionRequest) -> UrResult<Vec<&'a Device<B>>> {
        request.check_against(&[], 0, 0, 0).map(|()| Vec::new())
    }
    /// Whether kernels on this device may reach memory of other devices
    /// of its backend (`USM_P2P_SUPPORT_EXP`); a backend that says so
    /// answers [`RawDevice::peer_info`] per pair and overrides
    /// [`RawDevice::set_peer_access`].
    const PEER_ACCESS: bool = false;
    /// `urUsmP2PPeerAccessGetInfoExp` for `peer`, another device of this
    /// backend (the core answers a device about itself): 1 or 0. The
    /// default says no, so that a client asking before it enables (as
    /// SYCL's `ext_oneapi_can_access_peer` does) learns "no" rather than
    /// an error.
    fn peer_info(_device: &Device<B>, _peer: &Device<B>, _prop: ur_exp_peer_info_t) -> UrResult<i32> {
        Ok(0)
    }
    /// `urUsmP2PEnablePeerAccessExp`/`DisablePeerAccessExp` for `peer`,
    /// another device of this backend.
    fn set_peer_access(_device: &Device<B>, _peer: &Device<B>, _enable: bool) -> UrResult {
        Err(UNSUPPORTED)
    }
    fn native_handle(_device: &Device<B>) -> UrResult<ur_native_handle_t> {
        Err(UNSUPPORTED)
    }
    /// Whether 0 names a native device (a CUDA ordinal does).
    const NATIVE_NULL_IS_VALID: bool = false;
    /// The adapter's device for a native one (the core counts the caller's
    /// reference); `INVALID_VALUE` when the adapter has no such device.
    fn from_native(_native: ur_native_handle_t, _adapter: &Adapter) -> UrResult<ur_device_handle_t> {
        Err(UNSUPPORTED)
    }
}

/// A UR platform.
#[repr(C)]
pub struct Platform<B: Backend> {
    /// First: the handle protocol reads it at offset 0.
    header: HandleHeader,
    pub raw: B::RawPlatform,
}

/// A UR device.
#[repr(C)]
pub struct Device<B: Backend> {
    /// First: the handle protocol reads it at offset 0.
    header: HandleHeader,
    pub raw: B::RawDevice,
}

crate::core_object!(Platform, Platform, ur_platform_handle_t_);


crate::core_object!(Device, Device, ur_device_handle_t_);


impl<B: Backend> Platform<B> {
    pub fn new(raw: B::RawPlatform) -> Arc<Self> {
        Self::new_cyclic(|_| raw)
    }

    /// For a raw part whose devices name their platform (weakly).
    pub fn new_cyclic(raw: impl FnOnce(&Weak<Self>) -> B::RawPlatform) -> Arc<Self> {
        Arc::new_cyclic(|me| Platform { header: HandleHeader::new(B::ddi(), ObjectKind::Platform), raw: raw(me) })
    }

}

impl<B: Backend> Device<B> {
    pub fn new(raw: B::RawDevice) -> Arc<Self> {
        Self::new_cyclic(|_| raw)
    }

    /// For a raw part that names its device (weakly: it must not keep it).
    pub fn new_cyclic(raw: impl FnOnce(&Weak<Self>) -> B::RawDevice) -> Arc<Self> {
        Arc::new_cyclic(|me| Device { header: HandleHeader::new(B::ddi(), ObjectKind::Device), raw: raw(me) })
    }

}

impl<B: Backend> std::fmt::Debug for Device<B>
where
    B::RawDevice: std::fmt::Debug,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.raw.fmt(f)
    }
}

/// What the core asks of a platform that only the raw part answers.
impl<B: Backend> Platform<B> {
    pub fn info(&self, prop: ur_platform_info_t, out: InfoOut) -> UrResult {
        B::RawPlatform::info(self, prop, out)
    }
    pub fn backend_option(&self, frontend: &str) -> Option<&'static CStr> {
        B::RawPlatform::backend_option(self, frontend)
    }
    pub fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        B::RawPlatform::native_handle(self)
    }
}

/// What the core asks of a device that only the raw part answers.
impl<B: Backend> Device<B> {
    pub fn info(&self, prop: ur_device_info_t, out: InfoOut) -> UrResult {
        B::RawDevice::info(self, prop, out)
    }
    pub fn is_root(&self) -> bool {
        B::RawDevice::is_root(self)
    }
    /// `UR_DEVICE_INFO_MEM_BASE_ADDR_ALIGN`, in bits (8 when the backend
    /// cannot say).
    pub fn mem_base_addr_align_bits(&self) -> u32 {
        let mut bits: u32 = 0;
        // SAFETY: `bits` is 4 writable bytes for the answer.
        let out = unsafe { InfoOut::new(4, (&mut bits as *mut u32).cast(), std::ptr::null_mut()) };
        match out.and_then(|out| self.info(UR_DEVICE_INFO_MEM_BASE_ADDR_ALIGN, out)) {
            Ok(()) if bits >= 8 => bits,
            _ => 8,
        }
    }

    pub fn max_alloc_size(&self) -> u64 {
        B::RawDevice::max_alloc_size(self)
    }
    pub fn serves_usm(&self, kind: UsmKind) -> bool {
        B::RawDevice::serves_usm(self, kind)
    }
    pub fn binary_targets(&self) -> &'static [&'static [u8]] {
        B::RawDevice::binary_targets(self)
    }
    pub fn global_timestamps(&self) -> UrResult<(u64, u64)> {
        B::RawDevice::global_timestamps(self)
    }
    pub fn partition(&self, request: &PartitionRequest) -> UrResult<Vec<&Self>> {
        B::RawDevice::partition(self, request)
    }
    pub fn peer_info(&self, peer: &Self, prop: ur_exp_peer_info_t) -> UrResult<i32> {
        B::RawDevice::peer_info(self, peer, prop)
    }
    pub fn set_peer_access(&self, peer: &Self, enable: bool) -> UrResult {
        B::RawDevice::set_peer_access(self, peer, enable)
    }
    pub fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        B::RawDevice::native_handle(self)
    }
}
