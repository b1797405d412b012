//! `libur_adapter_cuda.so.0`: the CUDA adapter.
//!
//! It reaches the CUDA driver API through cudarc, loading `libcuda.so.1` at
//! run time, so it builds and loads on machines without CUDA and there
//! reports zero platforms. With a driver, every GPU is one UR device used
//! through its primary context; queues are CUDA streams, events are CUDA
//! events, device USM comes from `cuMemAlloc` or stream-ordered memory pools,
//! and kernels are PTX or cubin loaded with `cuModuleLoadDataEx`.
//!
//! Layout: `driver` (thin `Result` functions and owning wrappers over
//! cudarc's raw bindings), `core/<object>.rs` (the objects), `hal` (the
//! backend traits of `ur_core::hal` over them: the C surface is `ur_core`'s,
//! written once for every adapter), `conv` (value translation). This file
//! names the DDI table.

#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]
// CUDA handles (streams, events, contexts, functions) are opaque pointers
// that only the driver reads; passing one never dereferences it here.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

pub mod context;
pub mod conv;
pub mod device;
pub mod driver;
pub mod event;
mod hal;
pub mod kernel;
pub mod memory;
pub mod program;
pub mod queue;

pub use hal::Cuda;

use ur_core::abi::ur_dditable_t;

/// The adapter's full dispatch table: the C surface of `ur_core::api` for
/// this backend. Every handle this adapter makes points at it from offset 0.
pub static DDI: ur_dditable_t = ur_core::api::ddi_table::<Cuda>();

ur_core::export_ddi_getters!(DDI);
