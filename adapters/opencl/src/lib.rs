//! `libur_adapter_opencl.so.0`: Unified Runtime 0.12 over any OpenCL ICD.
//!
//! Every OpenCL platform and device becomes a UR platform and device. USM
//! goes through `cl_intel_unified_shared_memory` where the platform has it,
//! else through SVM. The ICD loader is opened on first use, so the adapter
//! loads, and reports no platform, on a machine without OpenCL.
//!
//! The C surface is `ur_core`'s, written once for every adapter; each object
//! is the core's, generic over the backend, holding a raw part whose `Raw*`
//! trait this adapter implements beside its definition: `device/`
//! (platforms and devices), `context.rs`, `queue/`, `event.rs`, `memory.rs`
//! (USM and pools), `program.rs` and `kernel.rs`. Arguments reach those
//! functions checked; none of them reads C memory.
//! `conv.rs` holds every enum and error translation, `driver.rs` the typed
//! reads of OpenCL's answers.
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

use ur_core::*;

ur_core::adapter_backend! {
    /// This backend's marker type.
    pub struct OpenCl: UR_BACKEND_OPENCL, "OPENCL";
    objects {
        RawPlatform = device::platform::PlatformCl, RawDevice = device::DeviceCl, RawContext = context::ContextCl,
        RawQueue = queue::QueueCl, RawEvent = event::EventCl, RawPool = memory::PoolCl, DeviceRef = &'static device::Device, RawProgram = program::ProgramCl, RawKernel = kernel::KernelCl, RawMem = memory::buffer::ClBuffer,
    }
}



