//! `urAdapter*`: the shared adapter object of `ur_core` answers them; this
//! backend adds only what lives beside it (its platform, its workers).

use crate::core::platform::Platform;
use crate::DDI;
use ur_core::adapter::{AdapterSlot, Backend};
use ur_core::*;

pub static ADAPTER: AdapterSlot = AdapterSlot::new(&DDI, UR_BACKEND_NATIVE_CPU, "NATIVE_CPU");

/// This backend's marker type.
pub struct NativeCpu;

impl Backend for NativeCpu {
    fn slot() -> &'static AdapterSlot {
        &ADAPTER
    }

    /// The last release also lets the platform go and joins the workers of
    /// released queues, so that a loader may unload the library afterwards.
    fn on_last_release() {
        Platform::adapter_released();
    }
}
