//! `urQueue*`.

use super::{arc, obj};
use crate::conv::ClResultExt;
use crate::core::context::Context;
use crate::core::device::Device;
use crate::core::queue::Queue;
use crate::core::refcount;
use std::ffi::c_void;
use ur_core::boundary::{ffi_call, write_out};
use ur_core::info::InfoOut;
use ur_core::*;

pub unsafe extern "C" fn urQueueCreate(
    h_context: ur_context_handle_t,
    h_device: ur_device_handle_t,
    p_properties: *const ur_queue_properties_t,
    ph_queue: *mut ur_queue_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let context = arc::<Context>(h_context)?;
        let device = Device::from_handle(h_device)?;
        if ph_queue.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        let mut flags = 0;
        if !p_properties.is_null() {
            flags = (*p_properties).flags;
            if flags & UR_QUEUE_FLAGS_MASK != 0 {
                return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
            }
            let both = |a: ur_queue_flag_t, b: ur_queue_flag_t| flags & a.0 != 0 && flags & b.0 != 0;
            if both(UR_QUEUE_FLAG_PRIORITY_LOW, UR_QUEUE_FLAG_PRIORITY_HIGH)
                || both(UR_QUEUE_FLAG_SUBMISSION_BATCHED, UR_QUEUE_FLAG_SUBMISSION_IMMEDIATE)
            {
                return Err(UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES);
            }
            ur_core::boundary::check_queue_properties_chain((*p_properties).pNext)?;
        }
        *ph_queue = refcount::into_handle(Queue::new(context, device, flags)?);
        Ok(())
    })
}

pub unsafe extern "C" fn urQueueRetain(h: ur_queue_handle_t) -> ur_result_t {
    ffi_call(|| refcount::retain::<Queue>(h))
}

pub unsafe extern "C" fn urQueueRelease(h: ur_queue_handle_t) -> ur_result_t {
    ffi_call(|| refcount::release::<Queue>(h))
}

pub unsafe extern "C" fn urQueueGetInfo(
    h: ur_queue_handle_t,
    prop: ur_queue_info_t,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let q = obj::<Queue>(h)?;
        if prop.0 > UR_QUEUE_INFO_EMPTY.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let out = InfoOut::new(size, value, size_ret)?;
        match prop {
            UR_QUEUE_INFO_CONTEXT => out.value(refcount::handle_of(&q.context)),
            UR_QUEUE_INFO_DEVICE => out.value(q.device.handle()),
            UR_QUEUE_INFO_FLAGS => out.value(q.flags),
            UR_QUEUE_INFO_REFERENCE_COUNT => out.value(q.refs.get()),
            UR_QUEUE_INFO_EMPTY => out.bool(q.is_empty()),
            // DEVICE_DEFAULT and SIZE concern device-side queues, which are
            // not offered.
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    })
}

pub unsafe extern "C" fn urQueueGetNativeHandle(
    h: ur_queue_handle_t,
    _p_desc: *mut ur_queue_native_desc_t,
    ph_native: *mut ur_native_handle_t,
) -> ur_result_t {
    ffi_call(|| write_out(ph_native, obj::<Queue>(h)?.cl.get() as ur_native_handle_t))
}

pub unsafe extern "C" fn urQueueFinish(h: ur_queue_handle_t) -> ur_result_t {
    ffi_call(|| obj::<Queue>(h)?.finish())
}

pub unsafe extern "C" fn urQueueFlush(h: ur_queue_handle_t) -> ur_result_t {
    ffi_call(|| obj::<Queue>(h)?.cl.flush().ur())
}

/// Graph capture is not offered, so no queue is ever capturing.
pub unsafe extern "C" fn urQueueIsGraphCaptureEnabledExp(h: ur_queue_handle_t, p_result: *mut bool) -> ur_result_t {
    ffi_call(|| {
        obj::<Queue>(h)?;
        write_out(p_result, false)
    })
}

pub unsafe extern "C" fn urQueueCreateWithNativeHandle(
    h_native: ur_native_handle_t,
    h_context: ur_context_handle_t,
    h_device: ur_device_handle_t,
    p_properties: *const ur_queue_native_properties_t,
    ph_queue: *mut ur_queue_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let context = arc::<Context>(h_context)?;
        let (ownership, chain) = ur_core::boundary::native_args(h_native, false, p_properties, ph_queue)?;
        let device = if h_device.is_null() { None } else { Some(Device::from_handle(h_device)?) };
        // libsycl chains the queue's flags (`ur_queue_properties_t`).
        let flags = ur_core::boundary::chained_queue_flags(chain)?;
        let queue = Queue::from_native(context, device, h_native as cl3::ext::cl_command_queue, flags, ownership)?;
        *ph_queue = refcount::into_handle(queue);
        Ok(())
    })
}
