//! The DDI tables and the `zeGet*ProcAddrTable` functions the loader looks
//! up. Every table starts from the generated all-unsupported table, so no
//! entry is ever null; the entry points of `api/` replace their slots.

use crate::api::*;
use level_zero_sys::*;

const GLOBAL: ze_global_dditable_t = ze_global_dditable_t { pfnInit: Some(zeInit) };

const DRIVER: ze_driver_dditable_t = {
    let mut t = ZE_DRIVER_DDITABLE_UNSUPPORTED;
    t.pfnGet = Some(zeDriverGet);
    t.pfnGetApiVersion = Some(zeDriverGetApiVersion);
    t.pfnGetProperties = Some(zeDriverGetProperties);
    t.pfnGetIpcProperties = Some(zeDriverGetIpcProperties);
    t.pfnGetExtensionProperties = Some(zeDriverGetExtensionProperties);
    t
};

const DEVICE: ze_device_dditable_t = {
    let mut t = ZE_DEVICE_DDITABLE_UNSUPPORTED;
    t.pfnGet = Some(zeDeviceGet);
    t.pfnGetSubDevices = Some(zeDeviceGetSubDevices);
    t.pfnGetProperties = Some(zeDeviceGetProperties);
    t.pfnGetComputeProperties = Some(zeDeviceGetComputeProperties);
    t.pfnGetCommandQueueGroupProperties = Some(zeDeviceGetCommandQueueGroupProperties);
    t.pfnGetMemoryProperties = Some(zeDeviceGetMemoryProperties);
    t.pfnGetMemoryAccessProperties = Some(zeDeviceGetMemoryAccessProperties);
    t.pfnGetCacheProperties = Some(zeDeviceGetCacheProperties);
    t.pfnCanAccessPeer = Some(zeDeviceCanAccessPeer);
    t.pfnGetStatus = Some(zeDeviceGetStatus);
    t.pfnGetGlobalTimestamps = Some(zeDeviceGetGlobalTimestamps);
    t
};

const CONTEXT: ze_context_dditable_t = {
    let mut t = ZE_CONTEXT_DDITABLE_UNSUPPORTED;
    t.pfnCreate = Some(zeContextCreate);
    t.pfnCreateEx = Some(zeContextCreateEx);
    t.pfnDestroy = Some(zeContextDestroy);
    t.pfnGetStatus = Some(zeContextGetStatus);
    t.pfnSystemBarrier = Some(zeContextSystemBarrier);
    t.pfnMakeMemoryResident = Some(zeContextMakeMemoryResident);
    t.pfnEvictMemory = Some(zeContextEvictMemory);
    t
};

const COMMAND_QUEUE: ze_command_queue_dditable_t = ze_command_queue_dditable_t {
    pfnCreate: Some(zeCommandQueueCreate),
    pfnDestroy: Some(zeCommandQueueDestroy),
    pfnExecuteCommandLists: Some(zeCommandQueueExecuteCommandLists),
    pfnSynchronize: Some(zeCommandQueueSynchronize),
};

const COMMAND_LIST: ze_command_list_dditable_t = {
    let mut t = ZE_COMMAND_LIST_DDITABLE_UNSUPPORTED;
    t.pfnCreate = Some(zeCommandListCreate);
    t.pfnCreateImmediate = Some(zeCommandListCreateImmediate);
    t.pfnDestroy = Some(zeCommandListDestroy);
    t.pfnClose = Some(zeCommandListClose);
    t.pfnReset = Some(zeCommandListReset);
    t.pfnAppendWriteGlobalTimestamp = Some(zeCommandListAppendWriteGlobalTimestamp);
    t.pfnAppendBarrier = Some(zeCommandListAppendBarrier);
    t.pfnAppendMemoryRangesBarrier = Some(zeCommandListAppendMemoryRangesBarrier);
    t.pfnAppendMemoryCopy = Some(zeCommandListAppendMemoryCopy);
    t.pfnAppendMemoryFill = Some(zeCommandListAppendMemoryFill);
    t.pfnAppendMemoryCopyRegion = Some(zeCommandListAppendMemoryCopyRegion);
    t.pfnAppendMemoryCopyFromContext = Some(zeCommandListAppendMemoryCopyFromContext);
    t.pfnAppendMemoryPrefetch = Some(zeCommandListAppendMemoryPrefetch);
    t.pfnAppendMemAdvise = Some(zeCommandListAppendMemAdvise);
    t.pfnAppendSignalEvent = Some(zeCommandListAppendSignalEvent);
    t.pfnAppendWaitOnEvents = Some(zeCommandListAppendWaitOnEvents);
    t.pfnAppendEventReset = Some(zeCommandListAppendEventReset);
    t.pfnAppendQueryKernelTimestamps = Some(zeCommandListAppendQueryKernelTimestamps);
    t
};

const FENCE: ze_fence_dditable_t = ze_fence_dditable_t {
    pfnCreate: Some(zeFenceCreate),
    pfnDestroy: Some(zeFenceDestroy),
    pfnHostSynchronize: Some(zeFenceHostSynchronize),
    pfnQueryStatus: Some(zeFenceQueryStatus),
    pfnReset: Some(zeFenceReset),
};

const EVENT_POOL: ze_event_pool_dditable_t = {
    // IPC stays unsupported: events live in this process only.
    let mut t = ZE_EVENT_POOL_DDITABLE_UNSUPPORTED;
    t.pfnCreate = Some(zeEventPoolCreate);
    t.pfnDestroy = Some(zeEventPoolDestroy);
    t
};

const EVENT: ze_event_dditable_t = ze_event_dditable_t {
    pfnCreate: Some(zeEventCreate),
    pfnDestroy: Some(zeEventDestroy),
    pfnHostSignal: Some(zeEventHostSignal),
    pfnHostSynchronize: Some(zeEventHostSynchronize),
    pfnQueryStatus: Some(zeEventQueryStatus),
    pfnHostReset: Some(zeEventHostReset),
    pfnQueryKernelTimestamp: Some(zeEventQueryKernelTimestamp),
};

const EVENT_EXP: ze_event_exp_dditable_t = ze_event_exp_dditable_t { pfnQueryTimestampsExp: Some(zeEventQueryTimestampsExp) };

const MEM: ze_mem_dditable_t = {
    let mut t = ZE_MEM_DDITABLE_UNSUPPORTED;
    t.pfnAllocHost = Some(zeMemAllocHost);
    t.pfnAllocDevice = Some(zeMemAllocDevice);
    t.pfnAllocShared = Some(zeMemAllocShared);
    t.pfnFree = Some(zeMemFree);
    t.pfnFreeExt = Some(zeMemFreeExt);
    t.pfnGetAllocProperties = Some(zeMemGetAllocProperties);
    t.pfnGetAddressRange = Some(zeMemGetAddressRange);
    t
};

/// One exported getter per table: checks the version and the pointer, then
/// copies the table out.
macro_rules! getters {
    ($($name:ident: $ty:ty = $table:expr;)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name(version: ze_api_version_t, table: *mut $ty) -> ze_result_t {
            // Tables are compatible across minor versions, never across majors.
            if version >> 16 != API_MAJOR {
                return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
            }
            if table.is_null() {
                return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
            }
            // SAFETY: the loader passes a table of this type to fill.
            unsafe { table.write($table) };
            ZE_RESULT_SUCCESS
        }
    )*};
}

const API_MAJOR: u32 = crate::driver::API_VERSION >> 16;

getters! {
    zeGetGlobalProcAddrTable: ze_global_dditable_t = GLOBAL;
    zeGetDriverProcAddrTable: ze_driver_dditable_t = DRIVER;
    zeGetDeviceProcAddrTable: ze_device_dditable_t = DEVICE;
    zeGetDeviceExpProcAddrTable: ze_device_exp_dditable_t = ZE_DEVICE_EXP_DDITABLE_UNSUPPORTED;
    zeGetContextProcAddrTable: ze_context_dditable_t = CONTEXT;
    zeGetCommandQueueProcAddrTable: ze_command_queue_dditable_t = COMMAND_QUEUE;
    zeGetCommandListProcAddrTable: ze_command_list_dditable_t = COMMAND_LIST;
    zeGetImageProcAddrTable: ze_image_dditable_t = ZE_IMAGE_DDITABLE_UNSUPPORTED;
    zeGetImageExpProcAddrTable: ze_image_exp_dditable_t = ZE_IMAGE_EXP_DDITABLE_UNSUPPORTED;
    zeGetFenceProcAddrTable: ze_fence_dditable_t = FENCE;
    zeGetEventPoolProcAddrTable: ze_event_pool_dditable_t = EVENT_POOL;
    zeGetEventProcAddrTable: ze_event_dditable_t = EVENT;
    zeGetEventExpProcAddrTable: ze_event_exp_dditable_t = EVENT_EXP;
    zeGetModuleProcAddrTable: ze_module_dditable_t = ZE_MODULE_DDITABLE_UNSUPPORTED;
    zeGetModuleBuildLogProcAddrTable: ze_module_build_log_dditable_t = ZE_MODULE_BUILD_LOG_DDITABLE_UNSUPPORTED;
    zeGetKernelProcAddrTable: ze_kernel_dditable_t = ZE_KERNEL_DDITABLE_UNSUPPORTED;
    zeGetKernelExpProcAddrTable: ze_kernel_exp_dditable_t = ZE_KERNEL_EXP_DDITABLE_UNSUPPORTED;
    zeGetSamplerProcAddrTable: ze_sampler_dditable_t = ZE_SAMPLER_DDITABLE_UNSUPPORTED;
    zeGetPhysicalMemProcAddrTable: ze_physical_mem_dditable_t = ZE_PHYSICAL_MEM_DDITABLE_UNSUPPORTED;
    zeGetMemProcAddrTable: ze_mem_dditable_t = MEM;
    zeGetVirtualMemProcAddrTable: ze_virtual_mem_dditable_t = ZE_VIRTUAL_MEM_DDITABLE_UNSUPPORTED;
    zeGetFabricVertexExpProcAddrTable: ze_fabric_vertex_exp_dditable_t = ZE_FABRIC_VERTEX_EXP_DDITABLE_UNSUPPORTED;
    zeGetFabricEdgeExpProcAddrTable: ze_fabric_edge_exp_dditable_t = ZE_FABRIC_EDGE_EXP_DDITABLE_UNSUPPORTED;
}

// Tools (zet) and sysman (zes): the loader gives up on a driver without
// these tables, so they are exported with every entry unsupported.
level_zero_sys::tools_tables!(getters);
