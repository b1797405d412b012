//! Every case, one file per UR object. A new file adds its `CASES` here.

use crate::harness::Case;

pub mod adapter;
pub mod bad_inputs;
pub mod chains;
pub mod common;
pub mod context;
pub mod cuda;
pub mod device;
pub mod enqueue;
pub mod event;
pub mod kernel;
pub mod loader;
pub mod mem;
pub mod mem_kernel;
pub mod mem_native;
pub mod multi_device;
pub mod native;
pub mod partition;
pub mod platform;
pub mod program;
pub mod queue;
pub mod stale;
pub mod unsupported;
pub mod usm;
pub mod usm_exp;

/// All cases, in the order they run.
pub fn all() -> Vec<&'static Case> {
    [
        loader::CASES,
        adapter::CASES,
        platform::CASES,
        device::CASES,
        partition::CASES,
        context::CASES,
        queue::CASES,
        event::CASES,
        usm::CASES,
        usm_exp::CASES,
        enqueue::CASES,
        mem::CASES,
        program::CASES,
        kernel::CASES,
        mem_kernel::CASES,
        mem_native::CASES,
        native::CASES,
        cuda::CASES,
        multi_device::CASES,
        chains::CASES,
        unsupported::CASES,
        bad_inputs::CASES,
        stale::CASES,
    ]
    .into_iter()
    .flatten()
    .collect()
}

#[cfg(test)]
mod tests {
    use super::all;
    use crate::ur::EntryPoints;
    use std::collections::HashSet;

    /// The entry points this suite must cover, success and error paths.
    const SUBSET: &[&str] = &[
        "urLoaderConfigCreate", "urLoaderConfigRetain", "urLoaderConfigRelease", "urLoaderConfigGetInfo",
        "urLoaderConfigEnableLayer", "urLoaderInit", "urLoaderTearDown",
        "urAdapterGet", "urAdapterRetain", "urAdapterRelease", "urAdapterGetInfo", "urAdapterGetLastError",
        "urAdapterSetLoggerCallback", "urAdapterSetLoggerCallbackLevel",
        "urPlatformGet", "urPlatformGetInfo", "urPlatformGetApiVersion", "urPlatformGetNativeHandle",
        "urPlatformGetBackendOption",
        "urDeviceGet", "urDeviceGetInfo", "urDeviceRetain", "urDeviceRelease", "urDeviceGetSelected",
        "urDeviceGetNativeHandle", "urDeviceGetGlobalTimestamps",
        "urContextCreate", "urContextRetain", "urContextRelease", "urContextGetInfo", "urContextGetNativeHandle",
        "urContextSetExtendedDeleter",
        "urQueueCreate", "urQueueRetain", "urQueueRelease", "urQueueGetInfo", "urQueueFinish", "urQueueFlush",
        "urQueueGetNativeHandle", "urQueueIsGraphCaptureEnabledExp",
        "urEventWait", "urEventRetain", "urEventRelease", "urEventGetInfo", "urEventGetProfilingInfo",
        "urEventSetCallback", "urEnqueueEventsWait", "urEnqueueEventsWaitWithBarrier",
        "urEnqueueEventsWaitWithBarrierExt",
        "urUSMHostAlloc", "urUSMDeviceAlloc", "urUSMSharedAlloc", "urUSMFree", "urUSMGetMemAllocInfo",
        "urUSMPoolCreate", "urUSMPoolRetain", "urUSMPoolRelease", "urUSMPoolGetInfo",
        "urEnqueueUSMFill", "urEnqueueUSMMemcpy", "urEnqueueUSMFill2D", "urEnqueueUSMMemcpy2D",
        "urEnqueueUSMPrefetch", "urEnqueueUSMAdvise",
        "urEnqueueUSMDeviceAllocExp", "urEnqueueUSMSharedAllocExp", "urEnqueueUSMHostAllocExp", "urEnqueueUSMFreeExp",
        "urUSMPoolCreateExp", "urUSMPoolDestroyExp", "urUSMPoolGetDefaultDevicePoolExp", "urUSMPoolSetDevicePoolExp",
        "urUSMPoolGetDevicePoolExp", "urUSMPoolTrimToExp", "urUSMPoolGetInfoExp", "urUSMPoolSetInfoExp",
        "urPlatformCreateWithNativeHandle", "urDeviceCreateWithNativeHandle", "urContextCreateWithNativeHandle",
        "urQueueCreateWithNativeHandle", "urEventCreateWithNativeHandle", "urProgramCreateWithNativeHandle",
        "urKernelCreateWithNativeHandle",
        "urUsmP2PEnablePeerAccessExp", "urUsmP2PDisablePeerAccessExp", "urUsmP2PPeerAccessGetInfoExp",
    ];

    /// Words in case names that mark an error path.
    const ERROR_MARKS: &[&str] = &["bad_input", "null", "invalid", "foreign", "unknown", "zero", "conflicting", "double", "interior", "queued_status", "not_available", "required_before"];

    #[test]
    fn names_are_unique_and_name_an_entry_point() {
        let mut seen = HashSet::new();
        for case in all() {
            assert!(seen.insert(case.name), "two cases are named {}", case.name);
            assert!(
                EntryPoints::NAMES.contains(&case.entry_point()),
                "case {} is not named after an entry point",
                case.name
            );
        }
    }

    #[test]
    fn every_entry_point_of_the_subset_has_success_and_error_cases() {
        let cases = all();
        for entry in SUBSET {
            let mine: Vec<_> = cases.iter().filter(|c| c.entry_point() == *entry).collect();
            let errors = mine.iter().filter(|c| ERROR_MARKS.iter().any(|m| c.name.contains(m))).count();
            let successes = mine.len() - errors;
            assert!(successes > 0, "{entry} has no success-path case");
            // urLoaderTearDown takes no argument that could be wrong.
            assert!(errors > 0 || *entry == "urLoaderTearDown", "{entry} has no error-path case");
        }
    }
}
