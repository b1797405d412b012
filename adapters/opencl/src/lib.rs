//! `libur_adapter_opencl.so.0`: Unified Runtime 0.12 over any OpenCL ICD.
//!
//! Every OpenCL platform and device becomes a UR platform and device. USM
//! goes through `cl_intel_unified_shared_memory` where the platform has it,
//! else through SVM. The ICD loader is opened on first use, so the adapter
//! loads, and reports no platform, on a machine without OpenCL.
//!
//! The C surface is `ur_core`'s, written once for every adapter; each object
//! implements its backend trait of `ur_core::hal` beside its definition:
//! `device/` (platforms and devices), `context.rs`, `queue/`, `event.rs`,
//! `memory.rs` (USM and pools), `program.rs` and `kernel.rs`. Arguments
//! reach those methods checked; none of them reads C memory. `conv.rs` holds
//! every enum and error translation, `driver.rs` the typed reads of OpenCL's
//! answers.
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

mod context;
mod conv;
mod device;
mod driver;
mod event;
mod kernel;
mod memory;
mod program;
mod queue;

use ur_core::abi::ur_dditable_t;
use ur_core::adapter::AdapterSlot;
use ur_core::hal;
use ur_core::*;

static ADAPTER: AdapterSlot = AdapterSlot::new(&DDI, UR_BACKEND_OPENCL, "OPENCL");

/// This backend's marker type.
pub struct OpenCl;

impl ur_core::adapter::Backend for OpenCl {
    fn slot() -> &'static AdapterSlot {
        &ADAPTER
    }
}

impl hal::Backend for OpenCl {
    type Platform = device::platform::Platform;
    type Device = device::Device;
    type Context = context::Context;
    type Queue = queue::Queue;
    type Event = event::Event;
    type Pool = memory::UsmPool;
    type Program = program::Program;
    type Kernel = kernel::Kernel;
}

/// The adapter's full dispatch table: the C surface of `ur_core::api` for
/// this backend.
pub static DDI: ur_dditable_t = ur_core::api::ddi_table::<OpenCl>();

ur_core::export_ddi_getters!(DDI);
