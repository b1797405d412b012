//! `urContext*`.

use super::*;
use std::sync::atomic::Ordering::Relaxed;

fn native_props(stype: ur_structure_type_t, owned: bool) -> ur_context_native_properties_t {
    ur_context_native_properties_t { stype, pNext: null_mut(), isNativeHandleOwned: owned }
}

fn props(flags: ur_context_flags_t) -> ur_context_properties_t {
    ur_context_properties_t { stype: UR_STRUCTURE_TYPE_CONTEXT_PROPERTIES, pNext: null_mut(), flags }
}

unsafe extern "C" fn deleter(_: *mut c_void) {}

refusals! {
    create_no_device_list: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| with_out(|c| ur!(Context.pfnCreate(1, null(), null(), c)));
    create_no_output: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| ur!(Context.pfnCreate(1, w.dev.as_ptr(), null(), null_mut()));
    create_unknown_flag: UR_RESULT_ERROR_INVALID_ENUMERATION, |w| {
        let p = props(1 << 1);
        with_out(|c| ur!(Context.pfnCreate(1, w.dev.as_ptr(), &p, c)))
    };
    create_no_device: UR_RESULT_ERROR_INVALID_SIZE, |w| with_out(|c| ur!(Context.pfnCreate(0, w.dev.as_ptr(), null(), c)));
    create_null_device_in_list: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| {
        let list = [w.dev[0], null_mut()];
        with_out(|c| ur!(Context.pfnCreate(2, list.as_ptr(), null(), c)))
    };
    create_device_of_another_adapter: UR_RESULT_ERROR_INVALID_DEVICE, |w| {
        let other = Foreign::new(ObjectKind::Device);
        let list = [w.dev[0], other.handle()];
        with_out(|c| ur!(Context.pfnCreate(2, list.as_ptr(), null(), c)))
    };
    create_a_queue_for_a_device: UR_RESULT_ERROR_INVALID_DEVICE, |w| {
        let list = [as_handle(w.queue)];
        with_out(|c| ur!(Context.pfnCreate(1, list.as_ptr(), null(), c)))
    };

    retain_null: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| ur!(Context.pfnRetain(null_mut()));
    release_null: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| ur!(Context.pfnRelease(null_mut()));
    release_a_queue: UR_RESULT_ERROR_INVALID_CONTEXT, |w| ur!(Context.pfnRelease(as_handle(w.queue)));
    info_foreign: UR_RESULT_ERROR_INVALID_CONTEXT, |w| {
        with_out(|n| ur!(Context.pfnGetInfo(Foreign::new(ObjectKind::Context).handle(), UR_CONTEXT_INFO_NUM_DEVICES, 0, null_mut(), n)))
    };


    from_native_devices_without_list: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| {
        with_out(|c| ur!(Context.pfnCreateWithNativeHandle(NATIVE_OBJECT, w.adapter, 1, null(), null(), c)))
    };
    from_native_device_of_another_adapter: UR_RESULT_ERROR_INVALID_DEVICE, |w| {
        let list = [Foreign::new(ObjectKind::Device).handle()];
        with_out(|c| ur!(Context.pfnCreateWithNativeHandle(NATIVE_OBJECT, w.adapter, 1, list.as_ptr(), null(), c)))
    };

    extended_deleter_null_context: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| {
        ur!(Context.pfnSetExtendedDeleter(null_mut(), Some(deleter), null_mut()))
    };
    extended_deleter_none: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| ur!(Context.pfnSetExtendedDeleter(w.ctx, None, null_mut()));
}

#[test]
fn create_names_each_device_once_and_passes_the_flags() {
    let w = World::new();
    let list = [w.dev[1], w.dev[0], w.dev[1]];
    let p = props(0);
    let mut c = null_mut();
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Context.pfnCreate(3, list.as_ptr(), &p, &mut c)));
    assert_eq!(only(&calls, "context.create"), "[dev1, dev0] flags=0x0");
    let mut n = 0u32;
    refused!(UR_RESULT_SUCCESS, ur!(Context.pfnGetInfo(c, UR_CONTEXT_INFO_NUM_DEVICES, 4, (&mut n as *mut u32).cast(), null_mut())));
    assert_eq!(n, 2);
    let mut devices: [ur_device_handle_t; 2] = [null_mut(); 2];
    refused!(UR_RESULT_SUCCESS, ur!(Context.pfnGetInfo(c, UR_CONTEXT_INFO_DEVICES, 16, devices.as_mut_ptr().cast(), null_mut())));
    assert_eq!(devices, [w.dev[1], w.dev[0]]);
    assert_eq!(ur!(Context.pfnRelease(c)), UR_RESULT_SUCCESS);
}

/// The context's reference count.
fn refs(c: ur_context_handle_t) -> u32 {
    let mut n = 0u32;
    refused!(UR_RESULT_SUCCESS, ur!(Context.pfnGetInfo(c, UR_CONTEXT_INFO_REFERENCE_COUNT, 4, (&mut n as *mut u32).cast(), null_mut())));
    n
}

#[test]
fn retain_and_release_count_the_users_references_and_refuse_past_zero() {
    let w = World::new();
    let c = w.context(&[w.dev[0]]);
    assert_eq!(refs(c), 1);
    refused!(UR_RESULT_SUCCESS, ur!(Context.pfnRetain(c)));
    assert_eq!(refs(c), 2);
    refused!(UR_RESULT_SUCCESS, ur!(Context.pfnRelease(c)));
    assert_eq!(refs(c), 1);
    refused!(UR_RESULT_SUCCESS, ur!(Context.pfnRelease(c)));
    refused!(UR_RESULT_ERROR_INVALID_CONTEXT, ur!(Context.pfnRelease(c)));
    refused!(UR_RESULT_ERROR_INVALID_CONTEXT, ur!(Context.pfnRetain(c)));
    let mut n = 0;
    refused!(UR_RESULT_ERROR_INVALID_CONTEXT, ur!(Context.pfnGetInfo(c, UR_CONTEXT_INFO_NUM_DEVICES, 0, null_mut(), &mut n)));
}

#[test]
fn a_queue_keeps_its_context_alive_past_the_users_release() {
    let w = World::new();
    let c = w.context(&[w.dev[0]]);
    let q = w.queue_on(c, w.dev[0], 0);
    refused!(UR_RESULT_SUCCESS, ur!(Context.pfnRelease(c)));
    let mut got = null_mut::<ur_context_handle_t_>();
    let size = std::mem::size_of::<ur_context_handle_t>();
    refused!(UR_RESULT_SUCCESS, ur!(Queue.pfnGetInfo(q, UR_QUEUE_INFO_CONTEXT, size, (&mut got as *mut ur_context_handle_t).cast(), null_mut())));
    assert_eq!(got, c, "the queue still names its context");
    assert_eq!(ur!(Queue.pfnRelease(q)), UR_RESULT_SUCCESS);
}

#[test]
fn info_2d_support_follows_the_backend() {
    let w = World::new();
    let mut b: ur_bool_t = 9;
    let query = |prop, b: &mut ur_bool_t| ur!(Context.pfnGetInfo(w.ctx, prop, 1, (b as *mut ur_bool_t).cast(), null_mut()));
    refused!(UR_RESULT_SUCCESS, query(UR_CONTEXT_INFO_USM_FILL2D_SUPPORT, &mut b));
    assert_eq!(b, 1);
    w.features(w.ctx).usm_2d.store(false, std::sync::atomic::Ordering::Relaxed);
    refused!(UR_RESULT_SUCCESS, query(UR_CONTEXT_INFO_USM_MEMCPY2D_SUPPORT, &mut b));
    assert_eq!(b, 0);
}

#[test]
fn native_handle_round_trip_decodes_ownership() {
    let w = World::new();
    let native = native_of("context.native_handle", |n| ur!(Context.pfnGetNativeHandle(w.ctx, n)));
    assert_eq!(native, NATIVE_OBJECT);
    let mut c = null_mut();
    let owned = native_props(UR_STRUCTURE_TYPE_CONTEXT_NATIVE_PROPERTIES, true);
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Context.pfnCreateWithNativeHandle(native, w.adapter, 2, w.dev.as_ptr(), &owned, &mut c)));
    assert_eq!(only(&calls, "context.from_native"), format!("{native:#x} [dev0, dev1] Owned"));
    assert_eq!(ur!(Context.pfnRelease(c)), UR_RESULT_SUCCESS);
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Context.pfnCreateWithNativeHandle(native, w.adapter, 0, null(), null(), &mut c)));
    assert_eq!(only(&calls, "context.from_native"), format!("{native:#x} [] Borrowed"));
    assert_eq!(ur!(Context.pfnRelease(c)), UR_RESULT_SUCCESS);
}

/// Counts calls; the user data points at an `AtomicU32` of the test.
unsafe extern "C" fn count_deletion(user_data: *mut c_void) {
    // SAFETY: the tests pass a pointer to an `AtomicU32` that outlives the context.
    unsafe { &*(user_data as *const std::sync::atomic::AtomicU32) }.fetch_add(1, Relaxed);
}

#[test]
fn the_extended_deleter_runs_once_at_the_last_release_and_a_second_replaces_the_first() {
    use std::sync::atomic::AtomicU32;
    let w = World::new();
    let (first, second) = (AtomicU32::new(0), AtomicU32::new(0));
    let data = |c: &AtomicU32| c as *const AtomicU32 as *mut c_void;
    let mut c = null_mut();
    assert_eq!(ur!(Context.pfnCreate(1, w.dev.as_ptr(), null(), &mut c)), UR_RESULT_SUCCESS);
    assert_eq!(ur!(Context.pfnSetExtendedDeleter(c, Some(count_deletion), data(&first))), UR_RESULT_SUCCESS);
    assert_eq!(ur!(Context.pfnSetExtendedDeleter(c, Some(count_deletion), data(&second))), UR_RESULT_SUCCESS);
    assert_eq!(ur!(Context.pfnRetain(c)), UR_RESULT_SUCCESS);
    assert_eq!(ur!(Context.pfnRelease(c)), UR_RESULT_SUCCESS);
    assert_eq!(second.load(Relaxed), 0, "not before the last release");
    assert_eq!(ur!(Context.pfnRelease(c)), UR_RESULT_SUCCESS);
    assert_eq!((first.load(Relaxed), second.load(Relaxed)), (0, 1));
}

#[test]
fn a_host_allocation_fits_every_device_of_its_context() {
    let w = World::new();
    let mut both = null_mut();
    assert_eq!(ur!(Context.pfnCreate(2, w.dev.as_ptr(), null(), &mut both)), UR_RESULT_SUCCESS);
    let mut p = null_mut();
    // dev1 takes twice dev0's limit; host memory takes the least of them.
    refused!(UR_RESULT_ERROR_INVALID_USM_SIZE, ur!(USM.pfnHostAlloc(both, null(), null_mut(), MAX_ALLOC as usize + 1, &mut p)));
    let calls = reached!(UR_RESULT_SUCCESS, ur!(USM.pfnDeviceAlloc(both, w.dev[1], null(), null_mut(), MAX_ALLOC as usize + 1, &mut p)));
    assert_eq!(methods(&calls), ["context.usm_alloc"]);
    assert_eq!(ur!(USM.pfnFree(both, p)), UR_RESULT_SUCCESS);
    let mut alone = null_mut();
    assert_eq!(ur!(Context.pfnCreate(1, &w.dev[1], null(), &mut alone)), UR_RESULT_SUCCESS);
    let calls = reached!(UR_RESULT_SUCCESS, ur!(USM.pfnHostAlloc(alone, null(), null_mut(), MAX_ALLOC as usize + 1, &mut p)));
    assert_eq!(methods(&calls), ["context.usm_alloc"]);
    assert_eq!(ur!(USM.pfnFree(alone, p)), UR_RESULT_SUCCESS);
    for c in [both, alone] {
        assert_eq!(ur!(Context.pfnRelease(c)), UR_RESULT_SUCCESS);
    }
}
