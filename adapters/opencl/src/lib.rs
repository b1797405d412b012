//! `libur_adapter_opencl.so.0`: Unified Runtime 0.12 over any OpenCL ICD.
//!
//! Every OpenCL platform and device becomes a UR platform and device. USM
//! goes through `cl_intel_unified_shared_memory` where the platform has it,
//! else through SVM. The ICD loader is opened on first use, so the adapter
//! loads, and reports no platform, on a machine without OpenCL.
//!
//! The C surface is `ur_core`'s, written once for every adapter; `hal.rs`
//! implements its backend traits over the objects of `core/`. Programs and
//! kernels keep their own entry points in `api/` for now. `conv.rs` holds
//! every enum and error translation, `cl.rs` the typed reads of OpenCL's
//! answers.
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

mod api;
mod cl;
mod conv;
mod core;
mod hal;

pub use hal::OpenCl;

use api::{kernel, program};
use ur_core::abi::ur_dditable_t;

/// The adapter's full dispatch table: the C surface of `ur_core::api` for
/// this backend, and this adapter's program and kernel entry points.
pub static DDI: ur_dditable_t = {
    let mut d = ur_core::api::ddi_table::<OpenCl>();

    d.Program.pfnCreateWithIL = Some(program::urProgramCreateWithIL);
    d.Program.pfnCreateWithBinary = Some(program::urProgramCreateWithBinary);
    d.Program.pfnBuild = Some(program::urProgramBuild);
    d.Program.pfnCompile = Some(program::urProgramCompile);
    d.Program.pfnLink = Some(program::urProgramLink);
    d.Program.pfnRetain = Some(program::urProgramRetain);
    d.Program.pfnRelease = Some(program::urProgramRelease);
    d.Program.pfnGetInfo = Some(program::urProgramGetInfo);
    d.Program.pfnGetBuildInfo = Some(program::urProgramGetBuildInfo);
    d.Program.pfnSetSpecializationConstants = Some(program::urProgramSetSpecializationConstants);
    d.Program.pfnGetNativeHandle = Some(program::urProgramGetNativeHandle);
    d.Program.pfnCreateWithNativeHandle = Some(program::urProgramCreateWithNativeHandle);
    d.ProgramExp.pfnBuildExp = Some(program::urProgramBuildExp);
    d.ProgramExp.pfnCompileExp = Some(program::urProgramCompileExp);
    d.ProgramExp.pfnLinkExp = Some(program::urProgramLinkExp);

    d.Kernel.pfnCreate = Some(kernel::urKernelCreate);
    d.Kernel.pfnRetain = Some(kernel::urKernelRetain);
    d.Kernel.pfnRelease = Some(kernel::urKernelRelease);
    d.Kernel.pfnGetInfo = Some(kernel::urKernelGetInfo);
    d.Kernel.pfnGetGroupInfo = Some(kernel::urKernelGetGroupInfo);
    d.Kernel.pfnGetSubGroupInfo = Some(kernel::urKernelGetSubGroupInfo);
    d.Kernel.pfnSetExecInfo = Some(kernel::urKernelSetExecInfo);
    d.Kernel.pfnGetNativeHandle = Some(kernel::urKernelGetNativeHandle);
    d.Kernel.pfnCreateWithNativeHandle = Some(kernel::urKernelCreateWithNativeHandle);
    d.EnqueueExp.pfnKernelLaunchWithArgsExp = Some(kernel::urEnqueueKernelLaunchWithArgsExp);

    d
};

ur_core::export_ddi_getters!(DDI);
