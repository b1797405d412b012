//! `urQueue*`.

use super::{arc, borrow};
use crate::core::context::Context;
use crate::core::device::Device;
use crate::core::queue::Queue;
use ur_core::boundary::{ffi_call, write_out};
use ur_core::handle;
use ur_core::info::InfoOut;
use ur_core::*;

pub unsafe extern "C" fn urQueueCreate(
    hContext: ur_context_handle_t,
    hDevice: ur_device_handle_t,
    pProperties: *const ur_queue_properties_t,
    phQueue: *mut ur_queue_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let context = arc::<Context>(hContext)?;
        let device = arc::<Device>(hDevice)?;
        if phQueue.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        let flags = match pProperties.as_ref() {
            None => 0,
            Some(props) => {
                ur_core::boundary::check_queue_properties_chain(props.pNext)?;
                props.flags
            }
        };
        if flags & UR_QUEUE_FLAGS_MASK != 0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let both = |a: ur_queue_flag_t, b: ur_queue_flag_t| flags & a.0 != 0 && flags & b.0 != 0;
        if both(UR_QUEUE_FLAG_PRIORITY_HIGH, UR_QUEUE_FLAG_PRIORITY_LOW)
            || both(
                UR_QUEUE_FLAG_SUBMISSION_BATCHED,
                UR_QUEUE_FLAG_SUBMISSION_IMMEDIATE,
            )
        {
            return Err(UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES);
        }
        if !context.has_device(&device) {
            return Err(UR_RESULT_ERROR_INVALID_DEVICE);
        }
        if flags & (UR_QUEUE_FLAG_ON_DEVICE.0 | UR_QUEUE_FLAG_ON_DEVICE_DEFAULT.0) != 0 {
            return Err(UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES);
        }
        *phQueue = handle::into_handle(Queue::new(context, device, flags)?);
        Ok(())
    })
}

pub unsafe extern "C" fn urQueueRetain(hQueue: ur_queue_handle_t) -> ur_result_t {
    ffi_call(|| handle::retain::<Queue>(hQueue, &crate::DDI))
}

pub unsafe extern "C" fn urQueueRelease(hQueue: ur_queue_handle_t) -> ur_result_t {
    ffi_call(|| handle::release::<Queue>(hQueue, &crate::DDI))
}

pub unsafe extern "C" fn urQueueGetInfo(
    hQueue: ur_queue_handle_t,
    propName: ur_queue_info_t,
    propSize: usize,
    pPropValue: *mut core::ffi::c_void,
    pPropSizeRet: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let queue = borrow::<Queue>(hQueue)?;
        if propName.0 > UR_QUEUE_INFO_EMPTY.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        queue.info(propName, InfoOut::new(propSize, pPropValue, pPropSizeRet)?)
    })
}

pub unsafe extern "C" fn urQueueGetNativeHandle(
    hQueue: ur_queue_handle_t,
    _pDesc: *mut ur_queue_native_desc_t,
    phNativeQueue: *mut ur_native_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let queue = borrow::<Queue>(hQueue)?;
        write_out(
            phNativeQueue,
            queue.first_stream().raw() as ur_native_handle_t,
        )
    })
}

/// A host synchronisation point: the context's pools take back what the
/// finished work freed, and give back what is above their thresholds.
pub unsafe extern "C" fn urQueueFinish(hQueue: ur_queue_handle_t) -> ur_result_t {
    ffi_call(|| {
        let queue = borrow::<Queue>(hQueue)?;
        let outcome = queue.finish();
        queue.context.engine.collect_all();
        outcome
    })
}

pub unsafe extern "C" fn urQueueFlush(hQueue: ur_queue_handle_t) -> ur_result_t {
    // CUDA submits work as it is enqueued.
    ffi_call(|| borrow::<Queue>(hQueue).map(drop))
}

pub unsafe extern "C" fn urQueueIsGraphCaptureEnabledExp(
    hQueue: ur_queue_handle_t,
    pResult: *mut bool,
) -> ur_result_t {
    // Graph capture is not offered, so no queue is ever capturing.
    ffi_call(|| {
        borrow::<Queue>(hQueue)?;
        write_out(pResult, false)
    })
}

pub unsafe extern "C" fn urQueueCreateWithNativeHandle(
    hNativeQueue: ur_native_handle_t,
    hContext: ur_context_handle_t,
    hDevice: ur_device_handle_t,
    pProperties: *const ur_queue_native_properties_t,
    phQueue: *mut ur_queue_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let context = arc::<Context>(hContext)?;
        let (ownership, chain) =
            ur_core::boundary::native_args(hNativeQueue, false, pProperties, phQueue)?;
        let device = if hDevice.is_null() {
            None
        } else {
            Some(arc::<Device>(hDevice)?)
        };
        // libsycl chains the queue's flags (`ur_queue_properties_t`).
        let flags = ur_core::boundary::chained_queue_flags(chain)?;
        let queue = Queue::from_native(
            context,
            device,
            hNativeQueue as crate::driver::CUstream,
            flags,
            ownership,
        )?;
        *phQueue = handle::into_handle(queue);
        Ok(())
    })
}
