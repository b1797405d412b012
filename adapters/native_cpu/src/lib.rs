//! `libur_adapter_native_cpu.so.0`: the embedded default adapter of a
//! Unified Runtime 0.12 compatible runtime. The device is the host CPU, USM
//! is host memory, and commands run on worker threads owned by each queue;
//! there is no driver.
//!
//! `api/` holds the C entry points, `core/` the objects behind the handles.
//! [`DDI`] is the one table that names every entry point this adapter
//! implements; every other slot answers `UR_RESULT_ERROR_UNSUPPORTED_FEATURE`.
//!
//! # How the async pool engine plugs in
//!
//! - Each context has one engine graph ([`core::context::Context::dag`]);
//!   each queue is a lane of it ([`core::queue::QueueShared::lane`]).
//! - Every command goes through [`core::queue::Queue::submit`], which records
//!   it on the lane under the queue's lock (its `seq` is its lane seq) and
//!   returns its event when one was asked for;
//!   [`core::event::Event::stamp`] names any event's command in the graph.
//!   Async allocations and frees go through
//!   [`core::queue::Queue::submit_engine`], where the engine records the
//!   command itself (or decides none is needed) under the same lock.
//! - Every command, with or without an event, completes in
//!   `core::event::complete_command`, on the worker that ran it: the engine
//!   hears of it there first.
//! - Pools ([`core::usm_pool::Pool`]) are the engine's; blocking allocations
//!   from a pool run on the context's host lane. Host synchronisation points
//!   (`urQueueFinish`, `urEventWait`, blocking commands, queue release) call
//!   [`core::context::Context::collect_pools`].

mod api;
pub mod core;

use api::*;
use ur_core::abi::ur_dditable_t;

/// The adapter's full dispatch table. Every handle this adapter makes points
/// at it from offset 0, where UR 0.12 loaders look to dispatch.
pub static DDI: ur_dditable_t = {
    let mut d = ur_core::ddi::UNSUPPORTED_DDI;

    d.Adapter = ur_core::adapter::adapter_table::<adapter::NativeCpu>();

    d.Platform.pfnGet = Some(platform::urPlatformGet);
    d.Platform.pfnGetInfo = Some(platform::urPlatformGetInfo);
    d.Platform.pfnGetNativeHandle = Some(platform::urPlatformGetNativeHandle);
    d.Platform.pfnGetApiVersion = Some(platform::urPlatformGetApiVersion);
    d.Platform.pfnGetBackendOption = Some(platform::urPlatformGetBackendOption);

    d.Device.pfnGet = Some(device::urDeviceGet);
    d.Device.pfnGetInfo = Some(device::urDeviceGetInfo);
    d.Device.pfnRetain = Some(device::urDeviceRetain);
    d.Device.pfnRelease = Some(device::urDeviceRelease);
    d.Device.pfnGetNativeHandle = Some(device::urDeviceGetNativeHandle);
    d.Device.pfnGetGlobalTimestamps = Some(device::urDeviceGetGlobalTimestamps);
    d.Device.pfnSelectBinary = Some(device::urDeviceSelectBinary);
    d.Device.pfnPartition = Some(device::urDevicePartition);

    d.Context.pfnCreate = Some(context::urContextCreate);
    d.Context.pfnRetain = Some(context::urContextRetain);
    d.Context.pfnRelease = Some(context::urContextRelease);
    d.Context.pfnGetInfo = Some(context::urContextGetInfo);
    d.Context.pfnGetNativeHandle = Some(context::urContextGetNativeHandle);
    d.Context.pfnSetExtendedDeleter = Some(context::urContextSetExtendedDeleter);

    d.Queue.pfnCreate = Some(queue::urQueueCreate);
    d.Queue.pfnRetain = Some(queue::urQueueRetain);
    d.Queue.pfnRelease = Some(queue::urQueueRelease);
    d.Queue.pfnGetInfo = Some(queue::urQueueGetInfo);
    d.Queue.pfnGetNativeHandle = Some(queue::urQueueGetNativeHandle);
    d.Queue.pfnFinish = Some(queue::urQueueFinish);
    d.Queue.pfnFlush = Some(queue::urQueueFlush);
    d.QueueExp.pfnIsGraphCaptureEnabledExp = Some(queue::urQueueIsGraphCaptureEnabledExp);

    d.Event.pfnGetInfo = Some(event::urEventGetInfo);
    d.Event.pfnGetProfilingInfo = Some(event::urEventGetProfilingInfo);
    d.Event.pfnWait = Some(event::urEventWait);
    d.Event.pfnRetain = Some(event::urEventRetain);
    d.Event.pfnRelease = Some(event::urEventRelease);
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

    d.USM.pfnHostAlloc = Some(usm::urUSMHostAlloc);
    d.USM.pfnDeviceAlloc = Some(usm::urUSMDeviceAlloc);
    d.USM.pfnSharedAlloc = Some(usm::urUSMSharedAlloc);
    d.USM.pfnFree = Some(usm::urUSMFree);
    d.USM.pfnGetMemAllocInfo = Some(usm::urUSMGetMemAllocInfo);
    d.USM.pfnPoolCreate = Some(usm::urUSMPoolCreate);
    d.USM.pfnPoolRetain = Some(usm::urUSMPoolRetain);
    d.USM.pfnPoolRelease = Some(usm::urUSMPoolRelease);
    d.USM.pfnPoolGetInfo = Some(usm::urUSMPoolGetInfo);

    d.EnqueueExp.pfnUSMDeviceAllocExp = Some(usm_exp::urEnqueueUSMDeviceAllocExp);
    d.EnqueueExp.pfnUSMSharedAllocExp = Some(usm_exp::urEnqueueUSMSharedAllocExp);
    d.EnqueueExp.pfnUSMHostAllocExp = Some(usm_exp::urEnqueueUSMHostAllocExp);
    d.EnqueueExp.pfnUSMFreeExp = Some(usm_exp::urEnqueueUSMFreeExp);
    d.USMExp.pfnPoolCreateExp = Some(usm_exp::urUSMPoolCreateExp);
    d.USMExp.pfnPoolDestroyExp = Some(usm_exp::urUSMPoolDestroyExp);
    d.USMExp.pfnPoolGetDefaultDevicePoolExp = Some(usm_exp::urUSMPoolGetDefaultDevicePoolExp);
    d.USMExp.pfnPoolSetDevicePoolExp = Some(usm_exp::urUSMPoolSetDevicePoolExp);
    d.USMExp.pfnPoolGetDevicePoolExp = Some(usm_exp::urUSMPoolGetDevicePoolExp);
    d.USMExp.pfnPoolTrimToExp = Some(usm_exp::urUSMPoolTrimToExp);
    d.USMExp.pfnPoolGetInfoExp = Some(usm_exp::urUSMPoolGetInfoExp);
    d.USMExp.pfnPoolSetInfoExp = Some(usm_exp::urUSMPoolSetInfoExp);

    d
};

ur_core::export_ddi_getters!(DDI);
