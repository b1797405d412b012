//! `urEvent*`.

use super::*;

unsafe extern "C" fn notify(_: ur_event_handle_t, _: ur_execution_info_t, _: *mut c_void) {}

fn native_props(stype: ur_structure_type_t, owned: bool) -> ur_event_native_properties_t {
    ur_event_native_properties_t { stype, pNext: null_mut(), isNativeHandleOwned: owned }
}

/// `urEventGetProfilingInfo` of a new event of `w.queue`.
fn profiling(w: &World, prop: u32, size: usize, value: *mut c_void, ret: *mut usize) -> ur_result_t {
    let e = w.event();
    ur!(Event.pfnGetProfilingInfo(e, ur_profiling_info_t(prop), size, value, ret))
}

refusals! {
    info_null: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| with_out(|n| ur!(Event.pfnGetInfo(null_mut(), UR_EVENT_INFO_CONTEXT, 0, null_mut(), n)));
    info_a_queue: UR_RESULT_ERROR_INVALID_EVENT, |w| with_out(|n| ur!(Event.pfnGetInfo(as_handle(w.queue), UR_EVENT_INFO_CONTEXT, 0, null_mut(), n)));

    profiling_null: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| {
        with_out(|n| ur!(Event.pfnGetProfilingInfo(null_mut(), UR_PROFILING_INFO_COMMAND_START, 0, null_mut(), n)))
    };
    profiling_past_complete: UR_RESULT_ERROR_INVALID_ENUMERATION, |w| {
        with_out(|n| profiling(&w, UR_PROFILING_INFO_COMMAND_COMPLETE.0 + 1, 0, null_mut(), n))
    };
    profiling_zero_size_with_a_buffer_is_invalid_value: UR_RESULT_ERROR_INVALID_VALUE, |w| {
        let mut v = 0u64;
        profiling(&w, UR_PROFILING_INFO_COMMAND_START.0, 0, (&mut v as *mut u64).cast(), null_mut())
    };
    profiling_size_without_a_buffer: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| {
        with_out(|n| profiling(&w, UR_PROFILING_INFO_COMMAND_START.0, 8, null_mut(), n))
    };
    profiling_no_output: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| {
        profiling(&w, UR_PROFILING_INFO_COMMAND_START.0, 0, null_mut(), null_mut())
    };

    wait_no_list: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| ur!(Event.pfnWait(1, null()));
    wait_no_event: UR_RESULT_ERROR_INVALID_VALUE, |w| {
        let e = w.event();
        ur!(Event.pfnWait(0, &e))
    };
    wait_null_event: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| {
        let list = [w.event(), null_mut()];
        ur!(Event.pfnWait(2, list.as_ptr()))
    };
    wait_foreign_event: UR_RESULT_ERROR_INVALID_EVENT, |w| {
        let other = Foreign::new(ObjectKind::Event);
        let list = [w.event(), other.handle()];
        ur!(Event.pfnWait(2, list.as_ptr()))
    };

    retain_null: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| ur!(Event.pfnRetain(null_mut()));
    release_a_context: UR_RESULT_ERROR_INVALID_EVENT, |w| ur!(Event.pfnRelease(as_handle(w.ctx)));


    callback_null_event: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| {
        ur!(Event.pfnSetCallback(null_mut(), UR_EXECUTION_INFO_COMPLETE, Some(notify), null_mut()))
    };
    callback_past_queued: UR_RESULT_ERROR_INVALID_ENUMERATION, |w| {
        ur!(Event.pfnSetCallback(w.event(), ur_execution_info_t(UR_EXECUTION_INFO_QUEUED.0 + 1), Some(notify), null_mut()))
    };
    callback_none: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| {
        ur!(Event.pfnSetCallback(w.event(), UR_EXECUTION_INFO_COMPLETE, None, null_mut()))
    };
    callback_on_queued: UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION, |w| {
        ur!(Event.pfnSetCallback(w.event(), UR_EXECUTION_INFO_QUEUED, Some(notify), null_mut()))
    };
    // The test backend's events tell completion only.
    callback_on_running: UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION, |w| {
        ur!(Event.pfnSetCallback(w.event(), UR_EXECUTION_INFO_RUNNING, Some(notify), null_mut()))
    };
    callback_on_submitted: UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION, |w| {
        ur!(Event.pfnSetCallback(w.event(), UR_EXECUTION_INFO_SUBMITTED, Some(notify), null_mut()))
    };
}

#[test]
fn info_is_the_cores_but_the_status() {
    let w = World::new();
    let e = w.event();
    let size = std::mem::size_of::<usize>();
    let mut h = null_mut::<c_void>();
    refused!(UR_RESULT_SUCCESS, ur!(Event.pfnGetInfo(e, UR_EVENT_INFO_COMMAND_QUEUE, size, (&mut h as *mut *mut c_void).cast(), null_mut())));
    assert_eq!(h, w.queue.cast());
    refused!(UR_RESULT_SUCCESS, ur!(Event.pfnGetInfo(e, UR_EVENT_INFO_CONTEXT, size, (&mut h as *mut *mut c_void).cast(), null_mut())));
    assert_eq!(h, w.ctx.cast());
    let mut command = UR_COMMAND_KERNEL_LAUNCH;
    refused!(UR_RESULT_SUCCESS, ur!(Event.pfnGetInfo(e, UR_EVENT_INFO_COMMAND_TYPE, 4, (&mut command as *mut ur_command_t).cast(), null_mut())));
    assert_eq!(command, UR_COMMAND_EVENTS_WAIT);
    let mut refs = 0u32;
    refused!(UR_RESULT_SUCCESS, ur!(Event.pfnGetInfo(e, UR_EVENT_INFO_REFERENCE_COUNT, 4, (&mut refs as *mut u32).cast(), null_mut())));
    assert_eq!(refs, 1);
    event_obj(e).raw.failed.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut status = UR_EVENT_STATUS_COMPLETE;
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Event.pfnGetInfo(e, UR_EVENT_INFO_COMMAND_EXECUTION_STATUS, 4, (&mut status as *mut ur_event_status_t).cast(), null_mut())));
    assert_eq!(methods(&calls), ["event.status"]);
    assert_eq!(status, UR_EVENT_STATUS_ERROR);
}

#[test]
fn profiling_reaches_the_backend() {
    let w = World::new();
    let mut v = 0u64;
    let calls = reached!(UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE, profiling(&w, UR_PROFILING_INFO_COMMAND_END.0, 8, (&mut v as *mut u64).cast(), null_mut()));
    assert_eq!(only(&calls, "event.profiling"), format!("{UR_PROFILING_INFO_COMMAND_END:?}"));
    let q = w.queue_on(w.ctx, w.dev[0], UR_QUEUE_FLAG_PROFILING_ENABLE.0);
    let e = w.event_on(q);
    let mut size = 0;
    reached!(UR_RESULT_SUCCESS, ur!(Event.pfnGetProfilingInfo(e, UR_PROFILING_INFO_COMMAND_END, 8, (&mut v as *mut u64).cast(), &mut size)));
    assert_eq!((v, size), (30, 8));
    reached!(UR_RESULT_ERROR_INVALID_SIZE, ur!(Event.pfnGetProfilingInfo(e, UR_PROFILING_INFO_COMMAND_END, 4, (&mut v as *mut u64).cast(), null_mut())));
}

#[test]
fn wait_waits_for_all_then_syncs_each_context_once() {
    let w = World::new();
    let other = w.context(&[w.dev[1]]);
    let list = [w.event(), w.event(), w.event_on(w.queue_on(other, w.dev[1], 0))];
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Event.pfnWait(3, list.as_ptr())));
    let expected: Vec<Call> = list
        .iter()
        .map(|e| Call { method: "event.wait", args: format!("{e:?}") })
        .chain([w.ctx, other].iter().map(|c| Call { method: "context.collect_pools", args: format!("{c:?}") }))
        .collect();
    assert_eq!(calls, expected);
}

#[test]
fn wait_reports_a_failure_after_waiting_for_all() {
    let w = World::new();
    let list = [w.failed_event(), w.event()];
    let calls = reached!(UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS, ur!(Event.pfnWait(2, list.as_ptr())));
    assert_eq!(methods(&calls), ["event.wait", "event.wait", "context.collect_pools"]);
}

#[test]
fn release_past_zero_is_refused() {
    let w = World::new();
    let e = w.event();
    one_counted_reference!(Event, e, UR_RESULT_ERROR_INVALID_EVENT);
    refused!(UR_RESULT_ERROR_INVALID_EVENT, ur!(Event.pfnWait(1, &e)));
}

#[test]
fn native_handle_round_trip_decodes_ownership() {
    let w = World::new();
    let native = native_of("event.native_handle", |n| ur!(Event.pfnGetNativeHandle(w.event(), n)));
    let mut e = null_mut();
    let p = native_props(UR_STRUCTURE_TYPE_EVENT_NATIVE_PROPERTIES, true);
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Event.pfnCreateWithNativeHandle(native, w.ctx, &p, &mut e)));
    assert_eq!(only(&calls, "event.from_native"), format!("{native:#x} Owned"));
    let mut q = w.queue;
    let size = std::mem::size_of::<ur_queue_handle_t>();
    refused!(UR_RESULT_SUCCESS, ur!(Event.pfnGetInfo(e, UR_EVENT_INFO_COMMAND_QUEUE, size, (&mut q as *mut ur_queue_handle_t).cast(), null_mut())));
    assert!(q.is_null(), "a native event has no queue");
    assert_eq!(ur!(Event.pfnRelease(e)), UR_RESULT_SUCCESS);
}

#[test]
fn callback_on_completion_reaches_the_backend() {
    let w = World::new();
    let data = 0x77 as *mut c_void;
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Event.pfnSetCallback(w.event(), UR_EXECUTION_INFO_COMPLETE, Some(notify), data)));
    let expected = format!("{UR_EXECUTION_INFO_COMPLETE:?} {:#x} {data:?}", notify as *const () as usize);
    assert_eq!(only(&calls, "event.set_callback"), expected);
}
