//! OpenCL platforms as UR platforms.
//!
//! Platforms and their root devices are found once per process and live as
//! long as it does, like the OpenCL ids they wrap: their handles stay valid
//! across adapter releases, and retain/release on them count nothing.

use super::{kept_forever, Device, DeviceCl};
use crate::driver::{self, IntelUsm};
use crate::{OpenCl, ADAPTER};
use cl3::ext as sys;
use std::ffi::CStr;
use std::sync::{Arc, OnceLock};
use ur_core::adapter::Adapter;
use ur_core::device::RawPlatform;
use ur_core::info::InfoOut;
use ur_core::*;

/// A UR platform of this adapter.
pub type Platform = ur_core::device::Platform<OpenCl>;

/// What an OpenCL platform keeps beside the core's part: its id, what it
/// says of itself, and its root devices.
pub struct PlatformCl {
    pub id: sys::cl_platform_id,
    pub name: String,
    pub vendor: String,
    pub version: String,
    pub extensions: String,
    pub profile: String,
    /// The USM extension's entry points, where the platform has them.
    pub intel_usm: Option<IntelUsm>,
    devices: OnceLock<Vec<&'static Device>>,
}

// SAFETY: an OpenCL platform id is a process-wide, thread-safe token; the
// rest is immutable after discovery.
unsafe impl Send for PlatformCl {}
unsafe impl Sync for PlatformCl {}

static PLATFORMS: OnceLock<Vec<&'static Platform>> = OnceLock::new();

/// Every OpenCL platform of the ICD loader, found on first use. No loader,
/// or a loader with no vendors, gives none.
pub fn platforms() -> &'static [&'static Platform] {
    PLATFORMS.get_or_init(discover)
}

/// The device of this adapter whose OpenCL id is `id`: a root device, the
/// same object `urDeviceGet` hands out, or a sub-device `urDevicePartition`
/// made (`urDeviceCreateWithNativeHandle`, and the devices of native
/// contexts). Only ids are compared.
pub fn device_by_id(id: sys::cl_device_id) -> Option<&'static Device> {
    let roots = platforms().iter().flat_map(|p| p.raw.devices().iter().copied());
    if let Some(d) = roots.clone().find(|d| d.raw.id == id) {
        return Some(d);
    }
    roots.flat_map(|d| d.raw.sub_devices_made()).find(|d| d.raw.id == id)
}

fn discover() -> Vec<&'static Platform> {
    let ids = match cl3::platform::get_platform_ids() {
        Ok(ids) => ids,
        Err(e) => {
            log::info(&format!("no OpenCL platforms (clGetPlatformIDs: {e})"));
            return Vec::new();
        }
    };
    let mut found = Vec::new();
    for id in ids {
        match PlatformCl::new(id) {
            Ok(raw) => {
                let p = kept_forever(Platform::new(raw));
                let devices = DeviceCl::discover(p);
                let _ = p.raw.devices.set(devices);
                found.push(p);
            }
            Err(e) => log::warning(&format!("skipping an OpenCL platform whose info fails: {e}")),
        }
    }
    found
}

impl PlatformCl {
    fn new(id: sys::cl_platform_id) -> Result<PlatformCl, sys::cl_int> {
        let info = |param| driver::string(cl3::platform::get_platform_data(id, param));
        let extensions = info(sys::CL_PLATFORM_EXTENSIONS)?;
        let intel_usm =
            if driver::has_extension(&extensions, "cl_intel_unified_shared_memory") { IntelUsm::load(id) } else { None };
        Ok(PlatformCl {
            id,
            name: info(sys::CL_PLATFORM_NAME)?,
            vendor: info(sys::CL_PLATFORM_VENDOR)?,
            version: info(sys::CL_PLATFORM_VERSION)?,
            profile: info(sys::CL_PLATFORM_PROFILE)?,
            extensions,
            intel_usm,
            devices: OnceLock::new(),
        })
    }

    pub fn devices(&self) -> &[&'static Device] {
        self.devices.get().map(Vec::as_slice).unwrap_or(&[])
    }
}

impl RawPlatform<OpenCl> for PlatformCl {
    fn all(_adapter: &Arc<Adapter>) -> UrResult<Vec<ur_platform_handle_t>> {
        Ok(platforms().iter().map(|p| p.handle()).collect())
    }

    fn info(platform: &Platform, prop: ur_platform_info_t, out: InfoOut) -> UrResult {
        let p = &platform.raw;
        match prop {
            UR_PLATFORM_INFO_NAME => out.string(&p.name),
            UR_PLATFORM_INFO_VENDOR_NAME => out.string(&p.vendor),
            UR_PLATFORM_INFO_VERSION => out.string(&p.version),
            UR_PLATFORM_INFO_EXTENSIONS => out.string(&p.extensions),
            UR_PLATFORM_INFO_PROFILE => out.string(&p.profile),
            UR_PLATFORM_INFO_ADAPTER => out.value(ur_core::handle::handle_of(&*ADAPTER.get_or_create())),
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    }

    /// The OpenCL compiler option for a SYCL frontend option.
    fn backend_option(_: &Platform, frontend: &str) -> Option<&'static CStr> {
        Some(match frontend {
            "-O0" => c"-cl-opt-disable",
            // Optimisation is OpenCL's default.
            "-O1" | "-O2" | "-O3" => c"",
            "-ftarget-compile-fast" => c"",
            "-foffload-fp32-prec-div" | "-foffload-fp32-prec-sqrt" => c"-cl-fp32-correctly-rounded-divide-sqrt",
            _ => return None,
        })
    }

    fn native_handle(platform: &Platform) -> UrResult<ur_native_handle_t> {
        Ok(platform.raw.id as ur_native_handle_t)
    }
}
