//! The single platform: it groups the CPU device (or, when
//! `UR_NATIVE_CPU_DEVICES` asks, several of them) under the adapter and lives
//! as long as the adapter does.

use super::device::Device;
use super::host::HostFacts;
use super::queue;
use crate::DDI;
use std::sync::{Arc, Weak};
use ur_core::lock_order::{Mutex, Rank};
use ur_core::adapter::Adapter;
use ur_core::handle::{ArcObject, HandleHeader, ObjectKind};
use ur_core::*;

#[repr(C)]
pub struct Platform {
    header: HandleHeader,
    /// Weak: the adapter's references are its users' business.
    adapter: Weak<Adapter>,
    pub devices: Vec<Arc<Device>>,
}

ur_core::ur_object!(Platform, Platform, ur_platform_handle_t_);

// SAFETY: every `Platform` is made inside an `Arc` by its constructor.
unsafe impl ArcObject for Platform {}

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

impl Platform {
    pub const NAME: &'static str = "Native CPU";
    pub const VENDOR: &'static str = "Unified Runtime in Rust (ur_core)";
    pub const PROFILE: &'static str = "FULL_PROFILE";
    pub const EXTENSIONS: &'static str = "";

    pub fn new(adapter: Weak<Adapter>) -> Arc<Platform> {
        Arc::new_cyclic(|me| Platform {
            header: HandleHeader::new(&DDI, ObjectKind::Platform),
            adapter,
            devices: {
                let host = HostFacts::probe();
                (0..device_count()).map(|i| Device::new_root(me.clone(), host.clone(), i)).collect()
            },
        })
    }

    /// The platform of `adapter`, made (and the host probed) on first use:
    /// the same handle on every call while the adapter lives.
    pub fn of_adapter(adapter: &Arc<Adapter>) -> Arc<Platform> {
        let mut current = CURRENT.lock();
        match &*current {
            Some(p) if std::ptr::eq(p.adapter.as_ptr(), Arc::as_ptr(adapter)) => p.clone(),
            _ => current.insert(Platform::new(Arc::downgrade(adapter))).clone(),
        }
    }

    /// After the adapter's last release: its platform goes (contexts still
    /// holding its device keep that alive), and the workers of released
    /// queues are joined, so that no code of this library runs any more
    /// unless the application still holds queues.
    pub fn adapter_released() {
        let gone = {
            let mut current = CURRENT.lock();
            current.take_if(|p| p.adapter.strong_count() == 0)
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

    pub fn handle(self: &Arc<Self>) -> ur_platform_handle_t {
        ur_core::handle::handle_of(&**self)
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
