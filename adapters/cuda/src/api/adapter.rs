//! `urAdapter*`, served by the shared adapter object.

use crate::DDI;
use ur_core::abi::*;
use ur_core::adapter::{AdapterSlot, Backend};

pub static ADAPTER: AdapterSlot = AdapterSlot::new(&DDI, UR_BACKEND_CUDA, "CUDA");

/// This backend's marker type.
pub struct Cuda;

impl Backend for Cuda {
    fn slot() -> &'static AdapterSlot {
        &ADAPTER
    }
}
