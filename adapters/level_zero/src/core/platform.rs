//! Platforms: one per Level Zero driver, found once per process. Without
//! the loader, or when `zeInit` finds no driver, there are none, and the
//! reason is logged once.

use super::device::{Device, Facts};
use crate::conv::ZeExt;
use crate::driver::{self, check};
use crate::ze;
use crate::DDI;
use level_zero_sys::*;
use std::sync::{Arc, OnceLock};
use ur_core::handle::{handle_of, ArcObject, HandleHeader, ObjectKind};
use ur_core::*;

#[repr(C)]
pub struct Platform {
    header: HandleHeader,
    pub ze: ze_driver_handle_t,
    pub api_version: ze_api_version_t,
    pub driver_version: u32,
    pub devices: Vec<Arc<Device>>,
}

ur_core::ur_object!(Platform, Platform, ur_platform_handle_t_);

// SAFETY: platforms are made only by `Arc::new_cyclic` in `discover`.
unsafe impl ArcObject for Platform {}
// SAFETY: a driver handle is an opaque token, valid for the process.
unsafe impl Send for Platform {}
unsafe impl Sync for Platform {}

impl Platform {
    pub const NAME: &'static str = "Intel(R) Level-Zero";
    pub const PROFILE: &'static str = "FULL_PROFILE";

    /// Every platform of the process, found on first use.
    pub fn all() -> &'static [Arc<Platform>] {
        static ALL: OnceLock<Vec<Arc<Platform>>> = OnceLock::new();
        ALL.get_or_init(|| match discover() {
            Ok(platforms) => platforms,
            Err(why) => {
                log::info(&format!("no Level Zero platforms: {why}"));
                Vec::new()
            }
        })
    }

    pub fn handle(&self) -> ur_platform_handle_t {
        handle_of(self)
    }

    /// `"<major>.<minor>"` of the driver's Level Zero API.
    pub fn version(&self) -> String {
        format!("{}.{}", self.api_version >> 16, self.api_version & 0xffff)
    }

    /// The frontend compiler options this platform understands; Level Zero
    /// spells them as OpenCL does.
    pub fn backend_option(frontend: &str) -> Option<&'static std::ffi::CStr> {
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

    /// The platform's device with Level Zero handle `ze`.
    pub fn device_by_ze(&self, ze: ze_device_handle_t) -> Option<&Arc<Device>> {
        self.devices.iter().find(|d| d.ze == ze)
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
    Ok(Arc::new_cyclic(|me| Platform {
        header: HandleHeader::new(&DDI, ObjectKind::Platform),
        ze,
        api_version,
        driver_version: props.driverVersion,
        devices: facts.into_iter().map(|f| Device::new(f, me.clone())).collect(),
    }))
}
