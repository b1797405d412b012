//! urQueueCreate, urQueueRetain/Release, urQueueGetInfo, urQueueFinish,
//! urQueueFlush, urQueueGetNativeHandle and urQueueIsGraphCaptureEnabledExp.

use crate::cases::native::native_queue;
use crate::cases::common::reserved_flags;
use crate::harness::*;
use crate::{check, check_eq, expect_result, expect_success, info_cases, ref_counting, ref_null_cases, skip};
use std::ptr::{null, null_mut};
use ur_core::abi::*;

pub const CASES: &[Case] = &[
    Case::device("urQueueCreate.default_properties", create_default),
    Case::device("urQueueCreate.in_order", create_in_order),
    Case::device("urQueueCreate.out_of_order", create_out_of_order),
    Case::device("urQueueCreate.profiling", create_profiling),
    Case::loader("urQueueCreate.null_context", create_null_context),
    Case::device("urQueueCreate.null_device", create_null_device),
    Case::device("urQueueCreate.null_output", create_null_output),
    Case::device("urQueueCreate.invalid_flags", create_bad_flags),
    Case::device("urQueueCreate.conflicting_priorities", create_both_priorities),
    Case::device("urQueueCreate.conflicting_submission_modes", create_both_submission_modes),
    Case::device("urQueueCreate.device_side_queue_unsupported", create_on_device),
    Case::device("urQueueRetain.success", retain),
    Case::loader("urQueueRetain.null_handle", retain_null),
    Case::device("urQueueRelease.success", release),
    Case::loader("urQueueRelease.null_handle", release_null),
    Case::device("urQueueGetInfo.context_device_flags", info_basics),
    Case::device("urQueueGetInfo.empty", info_empty),
    Case::device("urQueueGetInfo.size_protocol", info_protocol),
    Case::loader("urQueueGetInfo.null_handle", info_null),
    Case::device("urQueueGetInfo.invalid_enumeration", info_bad_enum),
    Case::device("urQueueFinish.completes_everything", finish),
    Case::loader("urQueueFinish.null_handle", finish_null),
    Case::device("urQueueFinish.foreign_or_wrong_handle", finish_foreign),
    Case::device("urQueueFlush.success", flush),
    Case::loader("urQueueFlush.null_handle", flush_null),
    Case::device("urQueueGetNativeHandle.success", native_handle),
    Case::loader("urQueueGetNativeHandle.null_handle", native_handle_null_handle),
    Case::device("urQueueGetNativeHandle.null_pointer", native_handle_null_pointer),
    Case::device("urQueueIsGraphCaptureEnabledExp.not_capturing", graph_capture),
    Case::loader("urQueueIsGraphCaptureEnabledExp.null_handle", graph_capture_null_handle),
    Case::device("urQueueIsGraphCaptureEnabledExp.null_pointer", graph_capture_null_pointer),
];

fn properties(flags: ur_queue_flags_t) -> ur_queue_properties_t {
    ur_queue_properties_t { stype: UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, pNext: null_mut(), flags }
}

unsafe fn flags_of(fx: &DeviceFx, queue: ur_queue_handle_t) -> Result<ur_queue_flags_t, Outcome> {
    Ok(fx.api.queue_info::<ur_queue_flags_t>(queue, UR_QUEUE_INFO_FLAGS)?)
}

unsafe fn refs(fx: &DeviceFx, queue: ur_queue_handle_t) -> Result<u32, Outcome> {
    Ok(fx.api.queue_info::<u32>(queue, UR_QUEUE_INFO_REFERENCE_COUNT)?)
}

const OUT_OF_ORDER: ur_queue_flags_t = UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0;

unsafe fn create_default(fx: &DeviceFx) -> CaseResult {
    let mut queue = null_mut();
    expect_success!(fx.api.urQueueCreate(fx.context, fx.device, null(), &mut queue));
    let queue = fx.own_queue(queue);
    check!(!queue.get().is_null(), "urQueueCreate succeeded with a null handle");
    check_eq!(refs(fx, queue.get())?, 1);
    // No properties means an in-order queue.
    check_eq!(flags_of(fx, queue.get())? & OUT_OF_ORDER, 0);
    expect_success!(queue.release());
    Ok(())
}

unsafe fn create_in_order(fx: &DeviceFx) -> CaseResult {
    let queue = fx.create_queue(0)?;
    check_eq!(flags_of(fx, queue.get())? & OUT_OF_ORDER, 0);
    expect_success!(queue.release());
    Ok(())
}

unsafe fn create_out_of_order(fx: &DeviceFx) -> CaseResult {
    let queue = fx.out_of_order_queue()?;
    check_eq!(flags_of(fx, queue.get())? & OUT_OF_ORDER, OUT_OF_ORDER);
    expect_success!(queue.release());
    Ok(())
}

unsafe fn create_profiling(fx: &DeviceFx) -> CaseResult {
    let profiling = UR_QUEUE_FLAG_PROFILING_ENABLE.0;
    let supported = fx.api.device_info::<ur_queue_flags_t>(fx.device, UR_DEVICE_INFO_QUEUE_PROPERTIES)?;
    if supported & profiling == 0 {
        skip!("the device reports no profiling queues");
    }
    let queue = fx.create_queue(profiling)?;
    check_eq!(flags_of(fx, queue.get())? & profiling, profiling);
    expect_success!(queue.release());
    Ok(())
}

unsafe fn create_null_context(fx: &LoaderFx) -> CaseResult {
    let device = fx.topology.devices.first().map(|d| d.handle).ok_or("no device")?;
    let mut queue = null_mut();
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_HANDLE, fx.api.urQueueCreate(null_mut(), device, null(), &mut queue));
    Ok(())
}

unsafe fn create_null_device(fx: &DeviceFx) -> CaseResult {
    let mut queue = null_mut();
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_HANDLE,
        fx.api.urQueueCreate(fx.context, null_mut(), null(), &mut queue)
    );
    Ok(())
}

unsafe fn create_null_output(fx: &DeviceFx) -> CaseResult {
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_POINTER,
        fx.api.urQueueCreate(fx.context, fx.device, null(), null_mut())
    );
    Ok(())
}

/// `urQueueCreate` with `flags` answers `expected`.
unsafe fn create_refused(fx: &DeviceFx, flags: ur_queue_flags_t, expected: ur_result_t) -> CaseResult {
    let mut queue = null_mut();
    let got = fx.api.urQueueCreate(fx.context, fx.device, &properties(flags), &mut queue)?;
    expect_code(expected, got, &format!("urQueueCreate(flags 0x{flags:x})"))
}

unsafe fn create_bad_flags(fx: &DeviceFx) -> CaseResult {
    let flags = const { reserved_flags(UR_QUEUE_FLAGS_MASK, UR_QUEUE_FLAG_LOW_POWER_EVENTS_SUPPORT_EXP.0 << 1) };
    create_refused(fx, flags, UR_RESULT_ERROR_INVALID_ENUMERATION)
}

unsafe fn create_both_priorities(fx: &DeviceFx) -> CaseResult {
    let flags = UR_QUEUE_FLAG_PRIORITY_HIGH.0 | UR_QUEUE_FLAG_PRIORITY_LOW.0;
    create_refused(fx, flags, UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES)
}

unsafe fn create_both_submission_modes(fx: &DeviceFx) -> CaseResult {
    let flags = UR_QUEUE_FLAG_SUBMISSION_BATCHED.0 | UR_QUEUE_FLAG_SUBMISSION_IMMEDIATE.0;
    create_refused(fx, flags, UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES)
}

/// spec/queue.md: no backend here has device-side queues.
unsafe fn create_on_device(fx: &DeviceFx) -> CaseResult {
    for flags in [UR_QUEUE_FLAG_ON_DEVICE.0, UR_QUEUE_FLAG_ON_DEVICE.0 | UR_QUEUE_FLAG_ON_DEVICE_DEFAULT.0] {
        create_refused(fx, flags, UR_RESULT_ERROR_UNSUPPORTED_FEATURE)?;
    }
    Ok(())
}

unsafe fn retain(fx: &DeviceFx) -> CaseResult {
    let queue = fx.create_queue(0)?;
    ref_counting!(fx.api, urQueueRetain, urQueueRelease).retain_then_release(queue.get(), |q| refs(fx, q))
}

unsafe fn release(fx: &DeviceFx) -> CaseResult {
    let context_refs = fx.api.context_info::<u32>(fx.context, UR_CONTEXT_INFO_REFERENCE_COUNT)?;
    let queue = fx.create_queue(0)?;
    ref_counting!(fx.api, urQueueRetain, urQueueRelease).release_drops_one(queue.get(), |q| refs(fx, q))?;
    // Work still queued at the last release is finished, not dropped.
    let memory = fx.alloc(UsmKind::Device, 256)?;
    let byte = 0x5au8;
    let filled = fx.fill(queue.get(), memory.ptr, &[byte], 256, &[])?;
    expect_success!(queue.release());
    fx.wait(filled.get())?;
    check_eq!(fx.status(filled.get())?, UR_EVENT_STATUS_COMPLETE);
    drop(filled);
    let data = fx.read(fx.queue, memory.ptr, 256)?;
    compare("memory filled by a queue released before the fill was waited on", &data, &[byte; 256])?;
    drop(memory);
    check_eq!(fx.api.context_info::<u32>(fx.context, UR_CONTEXT_INFO_REFERENCE_COUNT)?, context_refs);
    Ok(())
}

ref_null_cases!(urQueueRetain, urQueueRelease => retain_null, release_null);

unsafe fn info_basics(fx: &DeviceFx) -> CaseResult {
    check_eq!(fx.api.queue_info::<ur_context_handle_t>(fx.queue, UR_QUEUE_INFO_CONTEXT)?, fx.context);
    check_eq!(fx.api.queue_info::<ur_device_handle_t>(fx.queue, UR_QUEUE_INFO_DEVICE)?, fx.device);
    check_eq!(flags_of(fx, fx.queue)? & OUT_OF_ORDER, 0);
    check!(flags_of(fx, fx.queue)? & UR_QUEUE_FLAGS_MASK == 0, "FLAGS has undefined bits");
    check!(refs(fx, fx.queue)? >= 1, "a live queue reports no reference");
    Ok(())
}

unsafe fn info_empty(fx: &DeviceFx) -> CaseResult {
    let mut empty: ur_bool_t = 0;
    let code = fx.api.urQueueGetInfo(
        fx.queue,
        UR_QUEUE_INFO_EMPTY,
        size_of::<ur_bool_t>(),
        (&mut empty as *mut ur_bool_t).cast(),
        null_mut(),
    )?;
    if code == UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION {
        skip!("the adapter cannot tell whether a queue is empty (UNSUPPORTED_ENUMERATION)");
    }
    expect_code(UR_RESULT_SUCCESS, code, "urQueueGetInfo(EMPTY)")?;
    expect_success!(fx.api.urQueueFinish(fx.queue));
    check_eq!(fx.api.queue_info::<ur_bool_t>(fx.queue, UR_QUEUE_INFO_EMPTY)?, 1);
    Ok(())
}

info_cases!(urQueueGetInfo, DeviceFx, |fx| fx.queue,
    props: [("CONTEXT", UR_QUEUE_INFO_CONTEXT), ("REFERENCE_COUNT", UR_QUEUE_INFO_REFERENCE_COUNT)],
    null: UR_QUEUE_INFO_CONTEXT,
    past_last: ur_queue_info_t(UR_QUEUE_INFO_EMPTY.0 + 1));

unsafe fn finish(fx: &DeviceFx) -> CaseResult {
    const SIZE: usize = 1 << 20;
    let memory = fx.alloc(UsmKind::Device, SIZE)?;
    let mut events = Vec::new();
    for i in 0..8u8 {
        events.push(fx.fill(fx.queue, memory.ptr, &[i], SIZE, &[])?);
    }
    expect_success!(fx.api.urQueueFinish(fx.queue));
    for event in &events {
        let status = fx.status(event.get())?;
        check!(
            status == UR_EVENT_STATUS_COMPLETE,
            "after urQueueFinish an event is {}",
            crate::names::event_status_name(status)
        );
    }
    let data = fx.read(fx.queue, memory.ptr, SIZE)?;
    compare("memory after eight fills", &data, &vec![7u8; SIZE])
}

unsafe fn finish_null(fx: &LoaderFx) -> CaseResult {
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_HANDLE, fx.api.urQueueFinish(null_mut()));
    Ok(())
}

unsafe fn flush(fx: &DeviceFx) -> CaseResult {
    let memory = fx.alloc(UsmKind::Device, 64)?;
    let event = fx.fill(fx.queue, memory.ptr, &[3], 64, &[])?;
    expect_success!(fx.api.urQueueFlush(fx.queue));
    // Flushed work completes without a finish on that queue.
    fx.wait(event.get())?;
    check_eq!(fx.status(event.get())?, UR_EVENT_STATUS_COMPLETE);
    Ok(())
}

unsafe fn flush_null(fx: &LoaderFx) -> CaseResult {
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_HANDLE, fx.api.urQueueFlush(null_mut()));
    Ok(())
}

unsafe fn native_handle(fx: &DeviceFx) -> CaseResult {
    native_queue(fx, fx.queue).map(drop)
}

unsafe fn native_handle_null_handle(fx: &LoaderFx) -> CaseResult {
    let mut native: ur_native_handle_t = 0;
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_HANDLE,
        fx.api.urQueueGetNativeHandle(null_mut(), null_mut(), &mut native)
    );
    Ok(())
}

unsafe fn native_handle_null_pointer(fx: &DeviceFx) -> CaseResult {
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_POINTER,
        fx.api.urQueueGetNativeHandle(fx.queue, null_mut(), null_mut())
    );
    Ok(())
}

unsafe fn graph_capture(fx: &DeviceFx) -> CaseResult {
    let mut capturing = true;
    expect_success!(fx.api.urQueueIsGraphCaptureEnabledExp(fx.queue, &mut capturing));
    check!(!capturing, "a new queue reports graph capture enabled");
    Ok(())
}

unsafe fn graph_capture_null_handle(fx: &LoaderFx) -> CaseResult {
    let mut capturing = false;
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_HANDLE,
        fx.api.urQueueIsGraphCaptureEnabledExp(null_mut(), &mut capturing)
    );
    Ok(())
}

unsafe fn graph_capture_null_pointer(fx: &DeviceFx) -> CaseResult {
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_POINTER, fx.api.urQueueIsGraphCaptureEnabledExp(fx.queue, null_mut()));
    Ok(())
}

unsafe fn finish_foreign(fx: &DeviceFx) -> CaseResult {
    expect_result!(UR_RESULT_ERROR_INVALID_QUEUE, fx.api.urQueueFinish(foreign_handle()));
    // A live handle of another kind is not a queue either.
    expect_result!(UR_RESULT_ERROR_INVALID_QUEUE, fx.api.urQueueFinish(fx.context.cast()));
    Ok(())
}
