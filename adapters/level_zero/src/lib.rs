//! `libur_adapter_level_zero.so.0`: Unified Runtime 0.12 over Level Zero.
//!
//! It opens Intel's Level Zero loader (`libze_loader.so.1`) at run time, so
//! it builds and loads anywhere; without the loader or a driver it reports
//! zero platforms. Every Level Zero driver is a UR platform and each of its
//! devices a UR device. A queue is one immediate command list; every command
//! signals a Level Zero event from the context's event pools, which is how
//! UR events, profiling and the async pool engine learn of its completion.
//! The drivers this adapter is tested on build no modules, so programs and
//! kernels are left to the core's unsupported defaults.
//!
//! Layout, the same in every adapter: `driver` (the loader's entry points
//! and thin owning wrappers), `conv` (value and error translation), and one
//! module per object: `device` (platforms and devices), `context`, `queue`
//! (command submission, USM commands, async allocation and free), `event`,
//! `memory` (blocking USM, USM pools, the engine's memory source). Each
//! holds the raw part of its core object, with that part's trait:
//! `PlatformZe`, `DeviceZe`, `ContextZe`, `QueueZe`, `Signal` (events) and
//! `ZePool`. The C surface is `ur_core`'s, written once for every adapter;
//! arguments arrive checked, and nothing here reads C memory.

#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]
// Level Zero handles are opaque pointers that only the driver reads.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

pub mod context;
pub mod conv;
pub mod device;
pub mod driver;
pub mod event;
pub mod memory;
pub mod queue;

use device::Device;
use std::sync::Arc;
use ur_core::program::{NoKernel, NoProgram};
use ur_core::UR_BACKEND_LEVEL_ZERO;

ur_core::adapter_backend! {
    /// This backend's marker type; the drivers it serves build no modules, so programs and kernels are
    /// the core's unsupported defaults.
    pub struct LevelZero: UR_BACKEND_LEVEL_ZERO, "LEVEL_ZERO";
    objects {
        RawPlatform = device::PlatformZe, RawDevice = device::DeviceZe, RawContext = context::ContextZe, RawQueue = queue::QueueZe, RawEvent = event::Signal, RawPool = memory::ZePool, DeviceRef = Arc<Device>,
        RawProgram = NoProgram, RawKernel = NoKernel, RawMem = ur_core::mem::HostStorage,
    }
}

