//! `urQueue*`.

use super::{arc, obj, release_counted, retain_counted};
use crate::core::context::Context;
use crate::core::device::Device;
use crate::core::queue::Queue;
use crate::core::refcount::Counted;
use std::ffi::c_void;
use ur_core::boundary::{ffi_call, non_null, write_out};
use ur_core::handle::into_handle;
use ur_core::info::InfoOut;
use ur_core::*;

fn both(flags: u32, a: ur_queue_flag_t, b: ur_queue_flag_t) -> bool {
    flags & a.0 != 0 && flags & b.0 != 0
}

pub unsafe extern "C" fn urQueueCreate(
    hContext: ur_context_handle_t,
    hDevice: ur_device_handle_t,
    pProperties: *const ur_queue_properties_t,
    phQueue: *mut ur_queue_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let ctx = arc::<Context>(hContext)?;
        let device = arc::<Device>(hDevice)?;
        let flags = pProperties.as_ref().map_or(0, |p| p.flags);
        if flags & UR_QUEUE_FLAGS_MASK != 0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        if phQueue.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        if !ctx.has_device(&device) {
            return Err(UR_RESULT_ERROR_INVALID_DEVICE);
        }
        if both(flags, UR_QUEUE_FLAG_PRIORITY_HIGH, UR_QUEUE_FLAG_PRIORITY_LOW)
            || both(flags, UR_QUEUE_FLAG_SUBMISSION_BATCHED, UR_QUEUE_FLAG_SUBMISSION_IMMEDIATE)
        {
            return Err(UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES);
        }
        if let Some(props) = pProperties.as_ref() {
            ur_core::boundary::check_queue_properties_chain(props.pNext)?;
        }
        // Priority, submission, device-queue and event-discarding flags are
        // hints a host device honours by changing nothing.
        let queue = Queue::new(ctx, device, flags);
        log::debug(&format!("queue {} created, flags {flags:#x}", queue.shared.id));
        write_out(phQueue, into_handle(queue))
    })
}

pub unsafe extern "C" fn urQueueRetain(hQueue: ur_queue_handle_t) -> ur_result_t {
    ffi_call(|| retain_counted::<Queue>(hQueue))
}

/// The last release closes the queue: what was enqueued still runs.
pub unsafe extern "C" fn urQueueRelease(hQueue: ur_queue_handle_t) -> ur_result_t {
    ffi_call(|| release_counted::<Queue>(hQueue))
}

pub unsafe extern "C" fn urQueueGetInfo(
    hQueue: ur_queue_handle_t,
    propName: ur_queue_info_t,
    propSize: usize,
    pPropValue: *mut c_void,
    pPropSizeRet: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let queue = obj::<Queue>(hQueue)?;
        if propName.0 > UR_QUEUE_INFO_EMPTY.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let out = InfoOut::new(propSize, pPropValue, pPropSizeRet)?;
        let q = &queue.shared;
        match propName {
            UR_QUEUE_INFO_CONTEXT => out.value(q.context.handle()),
            UR_QUEUE_INFO_DEVICE => out.value(q.device.handle()),
            UR_QUEUE_INFO_FLAGS => out.value(q.flags),
            UR_QUEUE_INFO_REFERENCE_COUNT => out.value(queue.user_refs().get()),
            UR_QUEUE_INFO_EMPTY => out.bool(queue.is_empty()),
            // Device-side queues (`DEVICE_DEFAULT`, `SIZE`) do not exist here.
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    })
}

/// A host queue wraps no driver object: there is no native handle.
pub unsafe extern "C" fn urQueueGetNativeHandle(
    hQueue: ur_queue_handle_t,
    _pDesc: *mut ur_queue_native_desc_t,
    phNativeQueue: *mut ur_native_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        obj::<Queue>(hQueue)?;
        non_null(phNativeQueue)?;
        Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
    })
}

/// A host synchronisation point: the context's pools take back what the
/// finished work freed, and give back what is above their thresholds.
pub unsafe extern "C" fn urQueueFinish(hQueue: ur_queue_handle_t) -> ur_result_t {
    ffi_call(|| {
        let queue = obj::<Queue>(hQueue)?;
        let outcome = queue.finish();
        queue.shared.context.collect_pools();
        outcome
    })
}

/// Commands reach the workers as they are enqueued: nothing to flush.
pub unsafe extern "C" fn urQueueFlush(hQueue: ur_queue_handle_t) -> ur_result_t {
    ffi_call(|| obj::<Queue>(hQueue).map(drop))
}

/// This adapter never captures into graphs.
pub unsafe extern "C" fn urQueueIsGraphCaptureEnabledExp(hQueue: ur_queue_handle_t, pResult: *mut bool) -> ur_result_t {
    ffi_call(|| {
        obj::<Queue>(hQueue)?;
        write_out(pResult, false)
    })
}
