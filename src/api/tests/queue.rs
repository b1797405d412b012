//! `urQueue*`.

use super::*;

fn props(flags: ur_queue_flags_t, next: *mut c_void) -> ur_queue_properties_t {
    ur_queue_properties_t { stype: UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, pNext: next, flags }
}

fn index(compute: u32) -> ur_queue_index_properties_t {
    ur_queue_index_properties_t { stype: UR_STRUCTURE_TYPE_QUEUE_INDEX_PROPERTIES, pNext: null_mut(), computeIndex: compute }
}

fn native_props(stype: ur_structure_type_t, next: *mut c_void) -> ur_queue_native_properties_t {
    ur_queue_native_properties_t { stype, pNext: next, isNativeHandleOwned: false }
}

/// `urQueueCreate` on `w.ctx` and `dev[0]` with these properties.
fn create(w: &World, p: &ur_queue_properties_t) -> ur_result_t {
    with_out(|q| ur!(Queue.pfnCreate(w.ctx, w.dev[0], p, q)))
}

fn both(a: ur_queue_flag_t, b: ur_queue_flag_t) -> ur_queue_flags_t {
    a.0 | b.0
}

refusals! {
    create_null_context: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| with_out(|q| ur!(Queue.pfnCreate(null_mut(), w.dev[0], null(), q)));
    create_null_device: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| with_out(|q| ur!(Queue.pfnCreate(w.ctx, null_mut(), null(), q)));
    create_device_for_context: UR_RESULT_ERROR_INVALID_CONTEXT, |w| with_out(|q| ur!(Queue.pfnCreate(as_handle(w.dev[0]), w.dev[0], null(), q)));
    create_unknown_flag: UR_RESULT_ERROR_INVALID_ENUMERATION, |w| create(&w, &props(1 << 12, null_mut()));
    create_no_output: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| ur!(Queue.pfnCreate(w.ctx, w.dev[0], null(), null_mut()));
    create_high_and_low_priority: UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES, |w| {
        create(&w, &props(both(UR_QUEUE_FLAG_PRIORITY_HIGH, UR_QUEUE_FLAG_PRIORITY_LOW), null_mut()))
    };
    create_batched_and_immediate: UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES, |w| {
        create(&w, &props(both(UR_QUEUE_FLAG_SUBMISSION_BATCHED, UR_QUEUE_FLAG_SUBMISSION_IMMEDIATE), null_mut()))
    };
    create_device_not_in_context: UR_RESULT_ERROR_INVALID_DEVICE, |w| with_out(|q| ur!(Queue.pfnCreate(w.ctx, w.dev[1], null(), q)));
    create_compute_index_one: UR_RESULT_ERROR_INVALID_VALUE, |w| {
        let mut i = index(1);
        create(&w, &props(0, (&mut i as *mut ur_queue_index_properties_t).cast()))
    };
    create_cyclic_chain: UR_RESULT_ERROR_INVALID_VALUE, |w| {
        let mut i = index(0);
        i.pNext = (&mut i as *mut ur_queue_index_properties_t).cast();
        create(&w, &props(0, (&mut i as *mut ur_queue_index_properties_t).cast()))
    };

    retain_null: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| ur!(Queue.pfnRetain(null_mut()));
    release_a_context: UR_RESULT_ERROR_INVALID_QUEUE, |w| ur!(Queue.pfnRelease(as_handle(w.ctx)));
    info_null: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| with_out(|n| ur!(Queue.pfnGetInfo(null_mut(), UR_QUEUE_INFO_FLAGS, 0, null_mut(), n)));


    from_native_device_not_in_context: UR_RESULT_ERROR_INVALID_DEVICE, |w| {
        with_out(|q| ur!(Queue.pfnCreateWithNativeHandle(NATIVE_OBJECT, w.ctx, w.dev[1], null(), q)))
    };
    from_native_foreign_device: UR_RESULT_ERROR_INVALID_DEVICE, |w| {
        let other = Foreign::new(ObjectKind::Device);
        with_out(|q| ur!(Queue.pfnCreateWithNativeHandle(NATIVE_OBJECT, w.ctx, other.handle(), null(), q)))
    };
    from_native_chained_unknown_flag: UR_RESULT_ERROR_INVALID_ENUMERATION, |w| {
        let mut flags = props(1 << 31, null_mut());
        let p = native_props(UR_STRUCTURE_TYPE_QUEUE_NATIVE_PROPERTIES, (&mut flags as *mut ur_queue_properties_t).cast());
        with_out(|q| ur!(Queue.pfnCreateWithNativeHandle(NATIVE_OBJECT, w.ctx, null_mut(), &p, q)))
    };

    finish_null: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| ur!(Queue.pfnFinish(null_mut()));
    finish_an_event: UR_RESULT_ERROR_INVALID_QUEUE, |w| ur!(Queue.pfnFinish(as_handle(w.event())));
    flush_null: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| ur!(Queue.pfnFlush(null_mut()));
    flush_foreign: UR_RESULT_ERROR_INVALID_QUEUE, |w| ur!(Queue.pfnFlush(Foreign::new(ObjectKind::Queue).handle()));
    graph_capture_null: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| {
        let mut b = true;
        ur!(QueueExp.pfnIsGraphCaptureEnabledExp(null_mut(), &mut b))
    };
    graph_capture_no_output: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| ur!(QueueExp.pfnIsGraphCaptureEnabledExp(w.queue, null_mut()));
}

#[test]
fn create_passes_the_flags_of_the_properties() {
    let w = World::new();
    let mut i = index(0);
    let flags = UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0 | UR_QUEUE_FLAG_PROFILING_ENABLE.0 | UR_QUEUE_FLAG_PRIORITY_HIGH.0;
    let mut q = null_mut();
    let p = props(flags, (&mut i as *mut ur_queue_index_properties_t).cast());
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Queue.pfnCreate(w.ctx, w.dev[0], &p, &mut q)));
    assert_eq!(only(&calls, "queue.create"), format!("dev0 flags={flags:#x}"));
    let mut got = 0;
    refused!(UR_RESULT_SUCCESS, ur!(Queue.pfnGetInfo(q, UR_QUEUE_INFO_FLAGS, 4, (&mut got as *mut u32).cast(), null_mut())));
    assert_eq!(got, flags);
    assert_eq!(ur!(Queue.pfnRelease(q)), UR_RESULT_SUCCESS);
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Queue.pfnCreate(w.ctx, w.dev[0], null(), &mut q)));
    assert_eq!(only(&calls, "queue.create"), "dev0 flags=0x0", "no properties: in order");
    assert_eq!(ur!(Queue.pfnRelease(q)), UR_RESULT_SUCCESS);
}

#[test]
fn info_is_the_cores_but_emptiness() {
    let w = World::new();
    let size = std::mem::size_of::<usize>();
    let mut h = null_mut::<c_void>();
    refused!(UR_RESULT_SUCCESS, ur!(Queue.pfnGetInfo(w.queue, UR_QUEUE_INFO_DEVICE, size, (&mut h as *mut *mut c_void).cast(), null_mut())));
    assert_eq!(h, w.dev[0].cast());
    let mut refs = 0u32;
    refused!(UR_RESULT_SUCCESS, ur!(Queue.pfnGetInfo(w.queue, UR_QUEUE_INFO_REFERENCE_COUNT, 4, (&mut refs as *mut u32).cast(), null_mut())));
    assert_eq!(refs, 1);
    let mut b: ur_bool_t = 0;
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Queue.pfnGetInfo(w.queue, UR_QUEUE_INFO_EMPTY, 1, (&mut b as *mut ur_bool_t).cast(), null_mut())));
    assert_eq!(methods(&calls), ["queue.is_empty"]);
    assert_eq!(b, 1);
    let mut n = 0;
    refused!(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION, ur!(Queue.pfnGetInfo(w.queue, UR_QUEUE_INFO_DEVICE_DEFAULT, 0, null_mut(), &mut n)));
    refused!(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION, ur!(Queue.pfnGetInfo(w.queue, UR_QUEUE_INFO_SIZE, 0, null_mut(), &mut n)));
}

#[test]
fn release_past_zero_is_refused() {
    let w = World::new();
    let q = w.queue_on(w.ctx, w.dev[0], 0);
    one_counted_reference!(Queue, q, UR_RESULT_ERROR_INVALID_QUEUE);
    refused!(UR_RESULT_ERROR_INVALID_QUEUE, ur!(Queue.pfnFlush(q)));
}

#[test]
fn native_handle_round_trip_reads_the_chained_flags() {
    let w = World::new();
    let native = native_of("queue.native_handle", |n| ur!(Queue.pfnGetNativeHandle(w.queue, null_mut(), n)));
    let mut flags = props(UR_QUEUE_FLAG_PROFILING_ENABLE.0, null_mut());
    let p = native_props(UR_STRUCTURE_TYPE_QUEUE_NATIVE_PROPERTIES, (&mut flags as *mut ur_queue_properties_t).cast());
    let mut q = null_mut();
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Queue.pfnCreateWithNativeHandle(native, w.ctx, null_mut(), &p, &mut q)));
    assert_eq!(only(&calls, "queue.from_native"), format!("{native:#x} None flags=0x2 Borrowed"));
    assert_eq!(ur!(Queue.pfnRelease(q)), UR_RESULT_SUCCESS);
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Queue.pfnCreateWithNativeHandle(native, w.ctx, w.dev[0], null(), &mut q)));
    assert_eq!(only(&calls, "queue.from_native"), format!("{native:#x} Some(dev0) flags=0x0 Borrowed"));
    assert_eq!(ur!(Queue.pfnRelease(q)), UR_RESULT_SUCCESS);
}

#[test]
fn finish_and_flush_reach_the_backend() {
    let w = World::new();
    // A finish is a host synchronisation point: the core collects the
    // context's pools once the backend has waited.
    let finish = reached!(UR_RESULT_SUCCESS, ur!(Queue.pfnFinish(w.queue)));
    assert_eq!(methods(&finish), ["queue.finish", "context.collect_pools"]);
    assert_eq!(methods(&reached!(UR_RESULT_SUCCESS, ur!(Queue.pfnFlush(w.queue)))), ["queue.flush"]);
}

#[test]
fn no_queue_captures_a_graph() {
    let w = World::new();
    let mut b = true;
    refused!(UR_RESULT_SUCCESS, ur!(QueueExp.pfnIsGraphCaptureEnabledExp(w.queue, &mut b)));
    assert!(!b);
}

#[test]
fn device_side_queues_are_refused_by_the_core() {
    // Every backend answers the same (OpenCL refused them, native CPU took them).
    let w = World::new();
    for flags in [UR_QUEUE_FLAG_ON_DEVICE.0, UR_QUEUE_FLAG_ON_DEVICE_DEFAULT.0] {
        refused!(UR_RESULT_ERROR_UNSUPPORTED_FEATURE, create(&w, &props(flags, null_mut())));
    }
}
