//! `libur_adapter_opencl.so.0`: Unified Runtime 0.12 over any OpenCL ICD.
//!
//! Every OpenCL platform and device becomes a UR platform and device. USM
//! goes through `cl_intel_unified_shared_memory` where the platform has it,
//! else through SVM. The ICD loader is opened on first use, so the adapter
//! loads, and reports no platform, on a machine without OpenCL.
//!
//! `api/` is the C boundary, `core/` the objects, `conv.rs` every enum and
//! error translation, `cl.rs` the typed reads of OpenCL's answers.
#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]

mod api;
mod cl;
mod conv;
mod core;

use api::*;
use ur_core::abi::ur_dditable_t;

/// Every entry point this adapter serves; the rest answer
/// `UR_RESULT_ERROR_UNSUPPORTED_FEATURE`.
pub static DDI: ur_dditable_t = {
    let mut d = ur_core::ddi::UNSUPPORTED_DDI;

    d.Adapter = ur_core::adapter::adapter_table::<adapter::OpenCl>();

    d.Platform.pfnGet = Some(platform::urPlatformGet);
    d.Platform.pfnGetInfo = Some(platform::urPlatformGetInfo);
    d.Platform.pfnGetApiVersion = Some(platform::urPlatformGetApiVersion);
    d.Platform.pfnGetNativeHandle = Some(platform::urPlatformGetNativeHandle);
    d.Platform.pfnCreateWithNativeHandle = Some(platform::urPlatformCreateWithNativeHandle);
    d.Platform.pfnGetBackendOption = Some(platform::urPlatformGetBackendOption);

    d.Device.pfnGet = Some(device::urDeviceGet);
    d.Device.pfnGetInfo = Some(device::urDeviceGetInfo);
    d.Device.pfnRetain = Some(device::urDeviceRetain);
    d.Device.pfnRelease = Some(device::urDeviceRelease);
    d.Device.pfnGetNativeHandle = Some(device::urDeviceGetNativeHandle);
    d.Device.pfnCreateWithNativeHandle = Some(device::urDeviceCreateWithNativeHandle);
    d.Device.pfnGetGlobalTimestamps = Some(device::urDeviceGetGlobalTimestamps);
    d.Device.pfnSelectBinary = Some(device::urDeviceSelectBinary);
    d.Device.pfnPartition = Some(device::urDevicePartition);

    d.Context.pfnCreate = Some(context::urContextCreate);
    d.Context.pfnRetain = Some(context::urContextRetain);
    d.Context.pfnRelease = Some(context::urContextRelease);
    d.Context.pfnGetInfo = Some(context::urContextGetInfo);
    d.Context.pfnGetNativeHandle = Some(context::urContextGetNativeHandle);
    d.Context.pfnCreateWithNativeHandle = Some(context::urContextCreateWithNativeHandle);
    d.Context.pfnSetExtendedDeleter = Some(context::urContextSetExtendedDeleter);

    d.Queue.pfnCreate = Some(queue::urQueueCreate);
    d.Queue.pfnRetain = Some(queue::urQueueRetain);
    d.Queue.pfnRelease = Some(queue::urQueueRelease);
    d.Queue.pfnGetInfo = Some(queue::urQueueGetInfo);
    d.Queue.pfnGetNativeHandle = Some(queue::urQueueGetNativeHandle);
    d.Queue.pfnCreateWithNativeHandle = Some(queue::urQueueCreateWithNativeHandle);
    d.Queue.pfnFinish = Some(queue::urQueueFinish);
    d.Queue.pfnFlush = Some(queue::urQueueFlush);
    d.QueueExp.pfnIsGraphCaptureEnabledExp = Some(queue::urQueueIsGraphCaptureEnabledExp);

    d.Event.pfnGetInfo = Some(event::urEventGetInfo);
    d.Event.pfnGetProfilingInfo = Some(event::urEventGetProfilingInfo);
    d.Event.pfnWait = Some(event::urEventWait);
    d.Event.pfnRetain = Some(event::urEventRetain);
    d.Event.pfnRelease = Some(event::urEventRelease);
    d.Event.pfnGetNativeHandle = Some(event::urEventGetNativeHandle);
    d.Event.pfnCreateWithNativeHandle = Some(event::urEventCreateWithNativeHandle);
    d.Event.pfnSetCallback = Some(event::urEventSetCallback);

    d.Enqueue.pfnEventsWait = Some(enqueue::urEnqueueEventsWait);
    d.Enqueue.pfnEventsWaitWithBarrier = Some(enqueue::urEnqueueEventsWaitWithBarrier);
    d.Enqueue.pfnEventsWaitWithBarrierExt = Some(enqueue::urEnqueueEventsWaitWithBarrierExt);
    d.Enqueue.pfnUSMFill = Some(enqueue::urEnqueueUSMFill);
    d.Enqueue.pfnUSMMemcpy = Some(enqueue::urEnqueueUSMMemcpy);
    d.Enqueue.pfnUSMPrefetch = Some(enqueue::urEnqueueUSMPrefetch);
    d.Enqueue.pfnUSMAdvise = Some(enqueue::urEnqueueUSMAdvise);
    d.Enqueue.pfnUSMFill2D = Some(enqueue::urEnqueueUSMFill2D);
    d.Enqueue.pfnUSMMemcpy2D = Some(enqueue::urEnqueueUSMMemcpy2D);
    d.EnqueueExp.pfnKernelLaunchWithArgsExp = Some(enqueue::urEnqueueKernelLaunchWithArgsExp);
    d.EnqueueExp.pfnUSMDeviceAllocExp = Some(usm_exp::urEnqueueUSMDeviceAllocExp);
    d.EnqueueExp.pfnUSMSharedAllocExp = Some(usm_exp::urEnqueueUSMSharedAllocExp);
    d.EnqueueExp.pfnUSMHostAllocExp = Some(usm_exp::urEnqueueUSMHostAllocExp);
    d.EnqueueExp.pfnUSMFreeExp = Some(usm_exp::urEnqueueUSMFreeExp);

    d.USM.pfnHostAlloc = Some(usm::urUSMHostAlloc);
    d.USM.pfnDeviceAlloc = Some(usm::urUSMDeviceAlloc);
    d.USM.pfnSharedAlloc = Some(usm::urUSMSharedAlloc);
    d.USM.pfnFree = Some(usm::urUSMFree);
    d.USM.pfnGetMemAllocInfo = Some(usm::urUSMGetMemAllocInfo);
    d.USM.pfnPoolCreate = Some(usm::urUSMPoolCreate);
    d.USM.pfnPoolRetain = Some(usm::urUSMPoolRetain);
    d.USM.pfnPoolRelease = Some(usm::urUSMPoolRelease);
    d.USM.pfnPoolGetInfo = Some(usm::urUSMPoolGetInfo);
    d.USMExp.pfnPoolCreateExp = Some(usm_exp::urUSMPoolCreateExp);
    d.USMExp.pfnPoolDestroyExp = Some(usm_exp::urUSMPoolDestroyExp);
    d.USMExp.pfnPoolGetDefaultDevicePoolExp = Some(usm_exp::urUSMPoolGetDefaultDevicePoolExp);
    d.USMExp.pfnPoolSetDevicePoolExp = Some(usm_exp::urUSMPoolSetDevicePoolExp);
    d.USMExp.pfnPoolGetDevicePoolExp = Some(usm_exp::urUSMPoolGetDevicePoolExp);
    d.USMExp.pfnPoolTrimToExp = Some(usm_exp::urUSMPoolTrimToExp);
    d.USMExp.pfnPoolGetInfoExp = Some(usm_exp::urUSMPoolGetInfoExp);
    d.USMExp.pfnPoolSetInfoExp = Some(usm_exp::urUSMPoolSetInfoExp);

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

    d
};

ur_core::export_ddi_getters!(DDI);
