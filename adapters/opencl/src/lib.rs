//! `libur_adapter_opencl.so.0`: Unified Runtime 0.12 over any OpenCL ICD.
//!
//! Every OpenCL platform and device becomes a UR platform and device. USM
//! goes through `cl_intel_unified_shared_memory` where the platform has it,
//! else through SVM. The ICD loader is opened on first use, so the adapter
//! loads, and reports no platform, on a machine without OpenCL.
//!
//! The C surface is `ur_core`'s, written once for every adapter; `hal.rs`
//! implements its backend traits over the objects of `device/`, `context.rs`,
//! `queue/`, `event.rs`, `memory.rs`, `program.rs` and `kernel.rs`.
//! `conv.rs` holds every enum and error translation, `driver.rs` the typed
//! reads of OpenCL's answers.
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

mod context;
mod conv;
mod device;
mod driver;
mod event;
mod hal;
mod kernel;
mod memory;
mod program;
mod queue;

pub use hal::OpenCl;

use ur_core::abi::ur_dditable_t;

/// The adapter's full dispatch table: the C surface of `ur_core::api` for
/// this backend.
pub static DDI: ur_dditable_t = ur_core::api::ddi_table::<OpenCl>();

ur_core::export_ddi_getters!(DDI);
