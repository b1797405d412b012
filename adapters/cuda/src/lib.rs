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
//! cudarc's raw bindings), `core/<object>.rs` (the objects), `api/<object>.rs`
//! (the C entry points), `conv` (value translation). This file fills the DDI
//! table.

#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]
// CUDA handles (streams, events, contexts, functions) are opaque pointers
// that only the driver reads; passing one never dereferences it here.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

pub mod api;
pub mod conv;
pub mod core;
pub mod driver;

use api::*;
use ur_core::abi::ur_dditable_t;

pub static DDI: ur_dditable_t = {
    let mut d = ur_core::ddi::UNSUPPORTED_DDI;

    d.Adapter = ur_core::adapter::adapter_table::<adapter::Cuda>();

    d.Platform.pfnGet = Some(platform::urPlatformGet);
    d.Platform.pfnGetInfo = Some(platform::urPlatformGetInfo);
    d.Platform.pfnGetApiVersion = Some(platform::urPlatformGetApiVersion);
    d.Platform.pfnGetBackendOption = Some(platform::urPlatformGetBackendOption);
    d.Platform.pfnGetNativeHandle = Some(platform::urPlatformGetNativeHandle);

    d.Device.pfnGet = Some(device::urDeviceGet);
    d.Device.pfnGetInfo = Some(device::urDeviceGetInfo);
    d.Device.pfnRetain = Some(device::urDeviceRetain);
    d.Device.pfnRelease = Some(device::urDeviceRelease);
    d.Device.pfnSelectBinary = Some(device::urDeviceSelectBinary);
    d.Device.pfnPartition = Some(device::urDevicePartition);
    d.Device.pfnGetNativeHandle = Some(device::urDeviceGetNativeHandle);
    d.Device.pfnCreateWithNativeHandle = Some(device::urDeviceCreateWithNativeHandle);
    d.Device.pfnGetGlobalTimestamps = Some(device::urDeviceGetGlobalTimestamps);

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

    d.USM.pfnHostAlloc = Some(usm::urUSMHostAlloc);
    d.USM.pfnDeviceAlloc = Some(usm::urUSMDeviceAlloc);
    d.USM.pfnSharedAlloc = Some(usm::urUSMSharedAlloc);
    d.USM.pfnFree = Some(usm::urUSMFree);
    d.USM.pfnGetMemAllocInfo = Some(usm::urUSMGetMemAllocInfo);
    d.USM.pfnPoolCreate = Some(usm_pool::urUSMPoolCreate);
    d.USM.pfnPoolRetain = Some(usm_pool::urUSMPoolRetain);
    d.USM.pfnPoolRelease = Some(usm_pool::urUSMPoolRelease);
    d.USM.pfnPoolGetInfo = Some(usm_pool::urUSMPoolGetInfo);

    d.USMExp.pfnPoolCreateExp = Some(usm_pool::urUSMPoolCreateExp);
    d.USMExp.pfnPoolDestroyExp = Some(usm_pool::urUSMPoolDestroyExp);
    d.USMExp.pfnPoolGetDefaultDevicePoolExp = Some(usm_pool::urUSMPoolGetDefaultDevicePoolExp);
    d.USMExp.pfnPoolGetInfoExp = Some(usm_pool::urUSMPoolGetInfoExp);
    d.USMExp.pfnPoolSetInfoExp = Some(usm_pool::urUSMPoolSetInfoExp);
    d.USMExp.pfnPoolSetDevicePoolExp = Some(usm_pool::urUSMPoolSetDevicePoolExp);
    d.USMExp.pfnPoolGetDevicePoolExp = Some(usm_pool::urUSMPoolGetDevicePoolExp);
    d.USMExp.pfnPoolTrimToExp = Some(usm_pool::urUSMPoolTrimToExp);

    d.Enqueue.pfnEventsWait = Some(enqueue::urEnqueueEventsWait);
    d.Enqueue.pfnEventsWaitWithBarrier = Some(enqueue::urEnqueueEventsWaitWithBarrier);
    d.Enqueue.pfnEventsWaitWithBarrierExt = Some(enqueue::urEnqueueEventsWaitWithBarrierExt);
    d.Enqueue.pfnUSMFill = Some(enqueue::urEnqueueUSMFill);
    d.Enqueue.pfnUSMMemcpy = Some(enqueue::urEnqueueUSMMemcpy);
    d.Enqueue.pfnUSMPrefetch = Some(enqueue::urEnqueueUSMPrefetch);
    d.Enqueue.pfnUSMAdvise = Some(enqueue::urEnqueueUSMAdvise);

    d.EnqueueExp.pfnKernelLaunchWithArgsExp = Some(enqueue::urEnqueueKernelLaunchWithArgsExp);
    d.EnqueueExp.pfnUSMDeviceAllocExp = Some(enqueue::urEnqueueUSMDeviceAllocExp);
    d.EnqueueExp.pfnUSMSharedAllocExp = Some(enqueue::urEnqueueUSMSharedAllocExp);
    d.EnqueueExp.pfnUSMHostAllocExp = Some(enqueue::urEnqueueUSMHostAllocExp);
    d.EnqueueExp.pfnUSMFreeExp = Some(enqueue::urEnqueueUSMFreeExp);

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
