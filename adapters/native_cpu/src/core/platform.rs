//! The single platform: it groups the one CPU device under the adapter.

use super::adapter::Adapter;
use super::device::Device;
use crate::DDI;
use std::sync::{Arc, Weak};
use ur_core::handle::{HandleHeader, ObjectKind, UrObject};
use ur_core::*;

#[repr(C)]
pub struct Platform {
    header: HandleHeader,
    /// Weak: the adapter owns the platform, not the other way round.
    adapter: Weak<Adapter>,
    pub devices: Vec<Arc<Device>>,
}

const _: () = assert!(core::mem::offset_of!(Platform, header) == 0);

// SAFETY: `Platform` is `#[repr(C)]` with its header at offset 0.
unsafe impl UrObject for Platform {
    const KIND: ObjectKind = ObjectKind::Platform;
    type Handle = ur_platform_handle_t_;
}

impl Platform {
    pub const NAME: &'static str = "Native CPU";
    pub const VENDOR: &'static str = "Unified Runtime in Rust (ur_core)";
    pub const PROFILE: &'static str = "FULL_PROFILE";
    pub const EXTENSIONS: &'static str = "";

    pub fn new(adapter: Weak<Adapter>) -> Arc<Platform> {
        Arc::new_cyclic(|me| Platform {
            header: HandleHeader::new(&DDI, ObjectKind::Platform),
            adapter,
            devices: vec![Device::new_root(me.clone())],
        })
    }

    /// "<UR API version> (<adapter version>)".
    pub fn version() -> String {
        let v = UR_API_VERSION_IMPLEMENTED.0;
        format!("{}.{} (native_cpu {})", v >> 16, v & 0xffff, env!("CARGO_PKG_VERSION"))
    }

    pub fn adapter_handle(&self) -> ur_adapter_handle_t {
        // The value only: the adapter outlives its platform while users hold it.
        self.adapter.as_ptr() as ur_adapter_handle_t
    }

    pub fn handle(self: &Arc<Self>) -> ur_platform_handle_t {
        Arc::as_ptr(self) as ur_platform_handle_t
    }

    /// The frontend compiler options this platform understands, mapped to
    /// its own (a host build takes them as they are).
    pub fn backend_option(frontend: &str) -> Option<&'static std::ffi::CStr> {
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
