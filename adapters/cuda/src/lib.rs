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
//! written once for every adapter), `api/` (the program and kernel entry
//! points, not yet in the core), `conv` (value translation). This file fills
//! the DDI table.

#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]
// CUDA handles (streams, events, contexts, functions) are opaque pointers
// that only the driver reads; passing one never dereferences it here.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

pub mod api;
pub mod conv;
pub mod core;
pub mod driver;
mod hal;

pub use hal::Cuda;

use api::*;
use ur_core::abi::ur_dditable_t;

/// The adapter's full dispatch table: the C surface of `ur_core::api` for
/// this backend, with this adapter's program and kernel entry points. Every
/// handle this adapter makes points at it from offset 0.
pub static DDI: ur_dditable_t = {
    let mut d = ur_core::api::ddi_table::<Cuda>();

    d.EnqueueExp.pfnKernelLaunchWithArgsExp = Some(kernel::urEnqueueKernelLaunchWithArgsExp);

    d.Program.pfnCreateWithBinary = Some(program::urProgramCreateWithBinary);
    d.Program.pfnBuild = Some(program::urProgramBuild);
    d.Program.pfnRetain = Some(program::urProgramRetain);
    d.Program.pfnRelease = Some(program::urProgramRelease);
    d.Program.pfnGetInfo = Some(program::urProgramGetInfo);
    d.Program.pfnGetBuildInfo = Some(program::urProgramGetBuildInfo);
    d.Program.pfnGetGlobalVariablePointer = Some(program::urProgramGetGlobalVariablePointer);
    d.Program.pfnGetNativeHandle = Some(program::urProgramGetNativeHandle);
    d.Program.pfnCreateWithNativeHandle = Some(program::urProgramCreateWithNativeHandle);
    d.ProgramExp.pfnBuildExp = Some(program::urProgramBuildExp);

    d.Kernel.pfnCreate = Some(kernel::urKernelCreate);
    d.Kernel.pfnRetain = Some(kernel::urKernelRetain);
    d.Kernel.pfnRelease = Some(kernel::urKernelRelease);
    d.Kernel.pfnGetInfo = Some(kernel::urKernelGetInfo);
    d.Kernel.pfnGetGroupInfo = Some(kernel::urKernelGetGroupInfo);
    d.Kernel.pfnGetSubGroupInfo = Some(kernel::urKernelGetSubGroupInfo);
    d.Kernel.pfnGetNativeHandle = Some(kernel::urKernelGetNativeHandle);
    d.Kernel.pfnCreateWithNativeHandle = Some(kernel::urKernelCreateWithNativeHandle);
    d.Kernel.pfnGetSuggestedLocalWorkSize = Some(kernel::urKernelGetSuggestedLocalWorkSize);
    d.Kernel.pfnSetExecInfo = Some(kernel::urKernelSetExecInfo);

    d
};

ur_core::export_ddi_getters!(DDI);
