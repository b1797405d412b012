//! `urAdapter*` (the core's adapter table) and `urPlatform*`.

use super::*;

fn native_props(stype: ur_structure_type_t) -> ur_platform_native_properties_t {
    ur_platform_native_properties_t { stype, pNext: null_mut(), isNativeHandleOwned: true }
}

refusals! {
    adapter_get_entries_zero_with_array: UR_RESULT_ERROR_INVALID_SIZE, |w| with_out(|a| ur!(Adapter.pfnGet(0, a, null_mut())));
    adapter_retain_null: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| ur!(Adapter.pfnRetain(null_mut()));
    adapter_release_foreign: UR_RESULT_ERROR_INVALID_ARGUMENT, |w| {
        ur!(Adapter.pfnRelease(Foreign::new(ObjectKind::Adapter).handle()))
    };
    adapter_get_last_error_null_message: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| {
        with_out(|code| ur!(Adapter.pfnGetLastError(w.adapter, null_mut(), code)))
    };
    adapter_set_logger_callback_null: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| {
        ur!(Adapter.pfnSetLoggerCallback(w.adapter, None, null_mut(), UR_LOGGER_LEVEL_ERROR))
    };
    adapter_set_logger_callback_level_past_quiet: UR_RESULT_ERROR_INVALID_ENUMERATION, |w| {
        ur!(Adapter.pfnSetLoggerCallbackLevel(w.adapter, ur_logger_level_t(UR_LOGGER_LEVEL_QUIET.0 + 1)))
    };

    platform_get_null_adapter: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| with_out(|n| ur!(Platform.pfnGet(null_mut(), 0, null_mut(), n)));
    platform_get_foreign_adapter: UR_RESULT_ERROR_INVALID_ARGUMENT, |w| {
        with_out(|n| ur!(Platform.pfnGet(Foreign::new(ObjectKind::Adapter).handle(), 0, null_mut(), n)))
    };
    platform_get_entries_zero_with_array: UR_RESULT_ERROR_INVALID_SIZE, |w| with_out(|p| ur!(Platform.pfnGet(w.adapter, 0, p, null_mut())));
    platform_get_no_output: UR_RESULT_ERROR_INVALID_VALUE, |w| ur!(Platform.pfnGet(w.adapter, 1, null_mut(), null_mut()));

    platform_info_null: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| {
        with_out(|n| ur!(Platform.pfnGetInfo(null_mut(), UR_PLATFORM_INFO_NAME, 0, null_mut(), n)))
    };
    platform_info_a_device: UR_RESULT_ERROR_INVALID_PLATFORM, |w| {
        with_out(|n| ur!(Platform.pfnGetInfo(as_handle(w.dev[0]), UR_PLATFORM_INFO_NAME, 0, null_mut(), n)))
    };



    platform_api_version_null: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| {
        let mut v = ur_api_version_t(0);
        ur!(Platform.pfnGetApiVersion(null_mut(), &mut v))
    };
    platform_api_version_no_output: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| {
        ur!(Platform.pfnGetApiVersion(w.platform, null_mut()))
    };

    platform_backend_option_null: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| {
        with_out(|o| ur!(Platform.pfnGetBackendOption(null_mut(), c"-O2".as_ptr(), o)))
    };
    platform_backend_option_no_frontend: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| {
        with_out(|o| ur!(Platform.pfnGetBackendOption(w.platform, null(), o)))
    };
    platform_backend_option_no_output: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| {
        ur!(Platform.pfnGetBackendOption(w.platform, c"-O2".as_ptr(), null_mut()))
    };
    platform_backend_option_not_utf8: UR_RESULT_ERROR_INVALID_VALUE, |w| {
        with_out(|o| ur!(Platform.pfnGetBackendOption(w.platform, c"-O\xff".as_ptr(), o)))
    };
}

#[test]
fn platform_get_counts_then_fills_from_the_backend() {
    let w = World::new();
    let mut n = 0;
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Platform.pfnGet(w.adapter, 0, null_mut(), &mut n)));
    assert_eq!(methods(&calls), ["platform.all"]);
    assert_eq!(n, 1);
    let mut p = [null_mut(); 2];
    reached!(UR_RESULT_SUCCESS, ur!(Platform.pfnGet(w.adapter, 2, p.as_mut_ptr(), null_mut())));
    assert_eq!(p, [w.platform, null_mut()], "one written, the rest untouched");
}

#[test]
fn platform_info_backend_is_the_cores_and_name_the_backends() {
    let w = World::new();
    let mut backend = ur_backend_t(77);
    let size = std::mem::size_of::<ur_backend_t>();
    refused!(UR_RESULT_SUCCESS, ur!(Platform.pfnGetInfo(w.platform, UR_PLATFORM_INFO_BACKEND, size, (&mut backend as *mut ur_backend_t).cast(), null_mut())));
    assert_eq!(backend, UR_BACKEND_UNKNOWN);
    let mut n = 0;
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Platform.pfnGetInfo(w.platform, UR_PLATFORM_INFO_NAME, 0, null_mut(), &mut n)));
    assert_eq!(only(&calls, "platform.info"), format!("{UR_PLATFORM_INFO_NAME:?}"));
    assert_eq!(n, "Test platform".len() + 1);
    let calls = reached!(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION, ur!(Platform.pfnGetInfo(w.platform, UR_PLATFORM_INFO_PROFILE, 0, null_mut(), &mut n)));
    assert_eq!(only(&calls, "platform.info"), format!("{UR_PLATFORM_INFO_PROFILE:?}"));
}

#[test]
fn platform_native_handle_round_trip() {
    let w = World::new();
    let native = native_of("platform.native_handle", |n| ur!(Platform.pfnGetNativeHandle(w.platform, n)));
    assert_eq!(native, NATIVE_PLATFORM);
    let mut p = null_mut();
    let props = native_props(UR_STRUCTURE_TYPE_PLATFORM_NATIVE_PROPERTIES);
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Platform.pfnCreateWithNativeHandle(native, w.adapter, &props, &mut p)));
    // The core finds the platform among the adapter's by its native handle.
    assert_eq!(methods(&calls), ["platform.all", "platform.native_handle"]);
    assert_eq!(p, w.platform);
    reached!(UR_RESULT_ERROR_INVALID_VALUE, ur!(Platform.pfnCreateWithNativeHandle(native + 1, w.adapter, null(), &mut p)));
}

#[test]
fn platform_api_version_is_the_cores() {
    let w = World::new();
    let mut v = ur_api_version_t(0);
    refused!(UR_RESULT_SUCCESS, ur!(Platform.pfnGetApiVersion(w.platform, &mut v)));
    assert_eq!(v, UR_API_VERSION_IMPLEMENTED);
}

#[test]
fn platform_backend_option_is_translated_by_the_backend() {
    let w = World::new();
    let mut o: *const c_char = null();
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Platform.pfnGetBackendOption(w.platform, c"-O2".as_ptr(), &mut o)));
    assert_eq!(only(&calls, "platform.backend_option"), "-O2");
    // SAFETY: the backend answered a static NUL-terminated string.
    assert_eq!(unsafe { std::ffi::CStr::from_ptr(o) }, c"-opt2");
    let calls = reached!(UR_RESULT_ERROR_INVALID_VALUE, ur!(Platform.pfnGetBackendOption(w.platform, c"-Ofast".as_ptr(), &mut o)));
    assert_eq!(only(&calls, "platform.backend_option"), "-Ofast");
}

#[test]
fn adapter_get_info_answers_from_the_core() {
    let w = World::new();
    let mut version = 0u32;
    refused!(UR_RESULT_SUCCESS, ur!(Adapter.pfnGetInfo(w.adapter, UR_ADAPTER_INFO_VERSION, 4, (&mut version as *mut u32).cast(), null_mut())));
    assert_eq!(version, 1);
}

/// A get that revives the adapter races a release that takes its last user
/// reference: the handle a get hands out must stay live for its holder.
#[test]
fn adapter_handles_from_racing_gets_and_releases_stay_live() {
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..5000 {
                    let mut adapter = null_mut();
                    assert_eq!(ur!(Adapter.pfnGet(1, &mut adapter, null_mut())), UR_RESULT_SUCCESS);
                    let mut platform = null_mut();
                    assert_eq!(ur!(Platform.pfnGet(adapter, 1, &mut platform, null_mut())), UR_RESULT_SUCCESS);
                    assert_eq!(ur!(Adapter.pfnRelease(adapter)), UR_RESULT_SUCCESS);
                }
                take_calls();
            });
        }
    });
}
