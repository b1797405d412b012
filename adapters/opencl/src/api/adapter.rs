//! `urAdapter*`: the shared adapter object of `ur_core`.

use crate::DDI;
use ur_core::adapter::{AdapterSlot, Backend};
use ur_core::*;

pub static ADAPTER: AdapterSlot = AdapterSlot::new(&DDI, UR_BACKEND_OPENCL, "OPENCL");

/// This backend's marker type.
pub struct OpenCl;

impl Backend for OpenCl {
    fn slot() -> &'static AdapterSlot {
        &ADAPTER
    }
}

/// The adapter handle platforms report.
pub fn handle() -> ur_adapter_handle_t {
    std::sync::Arc::as_ptr(&ADAPTER.get_or_create()) as ur_adapter_handle_t
}
