//! The one CUDA platform: every GPU the driver reports, found once per process.

use super::device::Device;
use crate::driver;
use crate::DDI;
use std::sync::{Arc, OnceLock};
use ur_core::handle::{HandleHeader, ObjectKind};
use ur_core::log;
use ur_core::*;

#[repr(C)]
pub struct Platform {
    header: HandleHeader,
    pub devices: Vec<Arc<Device>>,
    /// `cuDriverGetVersion`: 13000 for CUDA 13.0.
    pub driver_version: i32,
}

ur_core::ur_object!(Platform, Platform, ur_platform_handle_t_);

impl Platform {
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
        let platform = Arc::new_cyclic(|me| {
            let devices = (0..count)
                .filter_map(|ordinal| match Device::discover(me.clone(), ordinal) {
                    Ok(d) => Some(d),
                    Err(e) => {
                        log::warning(&format!("GPU {ordinal} skipped: {}", driver::error_name(e)));
                        None
                    }
                })
                .collect();
            Platform {
                header: HandleHeader::new(&DDI, ObjectKind::Platform),
                devices,
                driver_version,
            }
        });
        (!platform.devices.is_empty()).then_some(platform)
    }

    pub fn handle(&self) -> ur_platform_handle_t {
        ur_core::handle::handle_of(self)
    }

    /// The option the driver JIT takes for a frontend option: PTX is taken
    /// as it is, so optimisation levels and precision hints have no backend
    /// spelling (empty); other options are unknown (`None`).
    pub fn backend_option(frontend: &str) -> Option<&'static std::ffi::CStr> {
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

    /// "CUDA 13.0", from the driver's version number.
    pub fn version(&self) -> String {
        format!(
            "CUDA {}.{}",
            self.driver_version / 1000,
            (self.driver_version % 1000) / 10
        )
    }
}
