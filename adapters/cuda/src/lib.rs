//! `libur_adapter_cuda.so.0`: the CUDA adapter.
//!
//! It reaches the CUDA driver API through cudarc, loading `libcuda.so.1` at
//! run time, so it builds and loads on machines without CUDA and there
//! reports zero platforms. With a driver, every GPU is one UR device used
//! through its primary context; queues are CUDA streams, events are CUDA
//! events, device USM comes from `cuMemAlloc` or stream-ordered memory pools,
//! and kernels are PTX or cubin loaded with `cuModuleLoadDataEx`.
//!
//! Layout, the same in every adapter: `driver` (thin `Result` functions and
//! owning wrappers over cudarc's raw bindings), `conv` (value translation),
//! and one module per object: every object is the core's (`ur_core::device`,
//! `context`, `queue`, `event`, `pool`, `program`), and each module keeps its
//! raw part with the core's `Raw*` trait beside it: `device` (the platform
//! and the devices), `context`, `queue` (command submission, the USM
//! commands, the async allocations and frees), `event` (and event
//! callbacks), `memory` (blocking USM, USM pools, the engine's memory
//! source), `program`, `kernel`. The C surface is `ur_core`'s, written once
//! for every adapter: the trait functions get their arguments checked, and
//! none of them reads C memory. This file names the backend and the DDI
//! table.

#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]
// CUDA handles (streams, events, contexts, functions) are opaque pointers
// that only the driver reads; passing one never dereferences it here.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

pub mod context;
pub mod conv;
pub mod device;
pub mod driver;
pub mod event;
pub mod kernel;
pub mod memory;
pub mod program;
pub mod queue;

use device::Device;
use std::sync::Arc;
use ur_core::UR_BACKEND_CUDA;

ur_core::adapter_backend! {
    /// This backend's marker type.
    pub struct Cuda: UR_BACKEND_CUDA, "CUDA";
    objects {
        RawPlatform = device::PlatformCu, RawDevice = device::DeviceCu, RawContext = context::ContextCu, RawQueue = queue::QueueCu, RawEvent = event::StreamEvents, RawPool = memory::pool::CudaPool, DeviceRef = Arc<Device>,
        RawProgram = program::ProgramCu, RawKernel = kernel::KernelCu, RawMem = memory::buffer::CuStorage,
    }
}



