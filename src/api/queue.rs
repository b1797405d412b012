//! `urQueue*`.

use super::{obj, optional};
use crate::abi::*;
use crate::device::Device;
use crate::context::Context;
use crate::boundary::{chained_queue_flags, check_queue_properties_chain, ffi_call, native_args, non_null, write_out};
use crate::hal::Backend;
use crate::queue::object::{NativeQueue, Queue, RawQueue};
use crate::handle;

fn both(flags: ur_queue_flags_t, a: ur_queue_flag_t, b: ur_queue_flag_t) -> bool {
    flags & a.0 != 0 && flags & b.0 != 0
}

pub(super) unsafe extern "C" fn create<B: Backend>(
    context: ur_context_handle_t,
    device: ur_device_handle_t,
    properties: *const ur_queue_properties_t,
    out: *mut ur_queue_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let context = obj::<B, Context<B>>(context)?;
        let device = obj::<B, Device<B>>(device)?;
        let flags = properties.as_ref().map_or(0, |p| p.flags);
        if flags & UR_QUEUE_FLAGS_MASK != 0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        non_null(out)?;
        if both(flags, UR_QUEUE_FLAG_PRIORITY_HIGH, UR_QUEUE_FLAG_PRIORITY_LOW)
            || both(flags, UR_QUEUE_FLAG_SUBMISSION_BATCHED, UR_QUEUE_FLAG_SUBMISSION_IMMEDIATE)
        {
            return Err(UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES);
        }
        if !context.has_device(device) {
            return Err(UR_RESULT_ERROR_INVALID_DEVICE);
        }
        if let Some(p) = properties.as_ref() {
            check_queue_properties_chain(p.pNext)?;
        }
        if flags & (UR_QUEUE_FLAG_ON_DEVICE.0 | UR_QUEUE_FLAG_ON_DEVICE_DEFAULT.0) != 0 {
            // Device-side queues serve device-side enqueue, which no backend
            // here offers (spec/queue.md).
            return Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
        }
        write_out(out, handle::into_handle(B::RawQueue::create(context, device, flags)?))
    })
}

super::info_entry!(Queue<B>, ur_queue_handle_t, ur_queue_info_t, UR_QUEUE_INFO_EMPTY, |queue, prop, out| {
    match prop {
        UR_QUEUE_INFO_CONTEXT => out.value(handle::handle_of(&*queue.context)),
        UR_QUEUE_INFO_DEVICE => out.value(handle::handle_of(&*queue.device)),
        UR_QUEUE_INFO_FLAGS => out.value(queue.flags),
        UR_QUEUE_INFO_REFERENCE_COUNT => out.value(handle::ref_count_of(queue)),
        UR_QUEUE_INFO_EMPTY => out.bool(B::RawQueue::is_empty(queue)?),
        // Device-side queues (`DEVICE_DEFAULT`, `SIZE`) exist nowhere here.
        _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
    }
});

super::native_handle_entry!(Queue<B>, ur_queue_handle_t, _desc: *mut ur_queue_native_desc_t);

pub(super) unsafe extern "C" fn create_with_native_handle<B: Backend>(
    native: ur_native_handle_t,
    context: ur_context_handle_t,
    device: ur_device_handle_t,
    properties: *const ur_queue_native_properties_t,
    out: *mut ur_queue_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let context = obj::<B, Context<B>>(context)?;
        let (ownership, chain) = native_args(native, false, properties, out)?;
        let device = optional::<B, Device<B>>(device)?;
        if device.is_some_and(|d| !context.has_device(d)) {
            return Err(UR_RESULT_ERROR_INVALID_DEVICE);
        }
        // libsycl chains the queue's flags (`ur_queue_properties_t`).
        let flags = chained_queue_flags(chain)?;
        let queue = B::RawQueue::from_native(NativeQueue { handle: native, context, device, flags, ownership })?;
        write_out(out, handle::into_handle(queue))
    })
}

/// A host synchronisation point: once the queue's work is done, the
/// context's pools take back what it freed (on every backend, so here).
pub(super) unsafe extern "C" fn finish<B: Backend>(h: ur_queue_handle_t) -> ur_result_t {
    ffi_call(|| {
        let queue = obj::<B, Queue<B>>(h)?;
        let outcome = B::RawQueue::finish(queue);
        queue.context.collect_pools();
        outcome
    })
}

pub(super) unsafe extern "C" fn flush<B: Backend>(h: ur_queue_handle_t) -> ur_result_t {
    ffi_call(|| B::RawQueue::flush(obj::<B, Queue<B>>(h)?))
}

/// No adapter here captures into graphs, so no queue is ever capturing.
pub(super) unsafe extern "C" fn is_graph_capture_enabled<B: Backend>(h: ur_queue_handle_t, out: *mut bool) -> ur_result_t {
    ffi_call(|| {
        obj::<B, Queue<B>>(h)?;
        write_out(out, false)
    })
}
