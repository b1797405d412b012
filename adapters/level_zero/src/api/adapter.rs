//! `urAdapter*`, served by the shared adapter object.

use crate::DDI;
use ur_core::abi::*;
use ur_core::adapter::{AdapterSlot, Backend};

pub static ADAPTER: AdapterSlot = AdapterSlot::new(&DDI, UR_BACKEND_LEVEL_ZERO, "LEVEL_ZERO");

/// This backend's marker type.
pub struct LevelZero;

impl Backend for LevelZero {
    fn slot() -> &'static AdapterSlot {
        &ADAPTER
    }
}
