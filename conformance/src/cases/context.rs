//! urContextCreate, urContextRetain/Release, urContextGetInfo,
//! urContextGetNativeHandle and urContextSetExtendedDeleter.

use crate::cases::native::native_context;
use crate::harness::*;
use crate::{
    check, check_eq, expect_result, expect_success, info, info_cases, native_handle_cases,
    ref_counting, ref_null_cases, skip,
};
use core::ffi::c_void;
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicU32, Ordering};
use ur_core::abi::*;

pub const CASES: &[Case] = &[
    Case::device("urContextCreate.success", create),
    Case::device("urContextCreate.with_properties", create_with_properties),
    Case::device("urContextCreate.null_devices", create_null_devices),
    Case::device("urContextCreate.null_output", create_null_output),
    Case::device("urContextCreate.zero_devices", create_zero_devices),
    Case::device("urContextCreate.invalid_flags", create_bad_flags),
    Case::device("urContextCreate.null_device_in_list", create_null_device),
    Case::device("urContextRetain.success", retain),
    Case::loader("urContextRetain.null_handle", retain_null),
    Case::device("urContextRelease.success", release),
    Case::loader("urContextRelease.null_handle", release_null),
    Case::device("urContextGetInfo.devices", info_devices),
    Case::device("urContextGetInfo.usm_2d_support", info_2d),
    Case::device("urContextGetInfo.size_protocol", info_protocol),
    Case::loader("urContextGetInfo.null_handle", info_null),
    Case::device("urContextGetInfo.invalid_enumeration", info_bad_enum),
    Case::device("urContextGetInfo.foreign_or_wrong_handle", info_foreign),
    Case::device("urContextGetNativeHandle.success", native_handle),
    Case::loader("urContextGetNativeHandle.null_handle", native_handle_null_handle),
    Case::device("urContextGetNativeHandle.null_pointer", native_handle_null_pointer),
    Case::device("urContextSetExtendedDeleter.called_on_last_release", deleter),
    Case::device("urContextSetExtendedDeleter.second_replaces_first", deleter_replaced),
    Case::loader("urContextSetExtendedDeleter.null_handle", deleter_null_handle),
    Case::device("urContextSetExtendedDeleter.null_deleter", deleter_null),
];

unsafe fn new_context(fx: &DeviceFx) -> Result<OwnedContext, Outcome> {
    let mut context = null_mut();
    expect_success!(fx.api.urContextCreate(1, &fx.device, null(), &mut context));
    check!(!context.is_null(), "urContextCreate succeeded with a null handle");
    Ok(fx.own_context(context))
}

unsafe fn refs(fx: &DeviceFx, context: ur_context_handle_t) -> Result<u32, Outcome> {
    Ok(fx.api.context_info::<u32>(context, UR_CONTEXT_INFO_REFERENCE_COUNT)?)
}

unsafe fn create(fx: &DeviceFx) -> CaseResult {
    let context = new_context(fx)?;
    check_eq!(refs(fx, context.get())?, 1);
    check!(context.get() != fx.context, "a new context has the handle of a live one");
    expect_success!(context.release());
    Ok(())
}

unsafe fn create_with_properties(fx: &DeviceFx) -> CaseResult {
    let properties =
        ur_context_properties_t { stype: UR_STRUCTURE_TYPE_CONTEXT_PROPERTIES, pNext: null_mut(), flags: 0 };
    let mut context = null_mut();
    expect_success!(fx.api.urContextCreate(1, &fx.device, &properties, &mut context));
    expect_success!(fx.own_context(context).release());
    Ok(())
}

unsafe fn create_null_devices(fx: &DeviceFx) -> CaseResult {
    let mut context = null_mut();
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_POINTER, fx.api.urContextCreate(1, null(), null(), &mut context));
    Ok(())
}

unsafe fn create_null_output(fx: &DeviceFx) -> CaseResult {
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_POINTER, fx.api.urContextCreate(1, &fx.device, null(), null_mut()));
    Ok(())
}

unsafe fn create_zero_devices(fx: &DeviceFx) -> CaseResult {
    let mut context = null_mut();
    expect_result!(UR_RESULT_ERROR_INVALID_SIZE, fx.api.urContextCreate(0, &fx.device, null(), &mut context));
    Ok(())
}

unsafe fn create_bad_flags(fx: &DeviceFx) -> CaseResult {
    let flags = UR_CONTEXT_FLAG_TBD.0 << 1;
    let properties = ur_context_properties_t { stype: UR_STRUCTURE_TYPE_CONTEXT_PROPERTIES, pNext: null_mut(), flags };
    let mut context = null_mut();
    expect_result!(
        UR_RESULT_ERROR_INVALID_ENUMERATION,
        fx.api.urContextCreate(1, &fx.device, &properties, &mut context)
    );
    Ok(())
}

unsafe fn create_null_device(fx: &DeviceFx) -> CaseResult {
    let mut context = null_mut();
    // Null first: the loader has no handle to dispatch on.
    let devices = [null_mut(), fx.device];
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_HANDLE,
        fx.api.urContextCreate(2, devices.as_ptr(), null(), &mut context)
    );
    // Null later: the adapter must look at every element.
    let devices = [fx.device, null_mut()];
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_HANDLE,
        fx.api.urContextCreate(2, devices.as_ptr(), null(), &mut context)
    );
    Ok(())
}

unsafe fn retain(fx: &DeviceFx) -> CaseResult {
    let context = new_context(fx)?;
    ref_counting!(fx.api, urContextRetain, urContextRelease).retain_then_release(context.get(), |c| refs(fx, c))
}

unsafe fn release(fx: &DeviceFx) -> CaseResult {
    let context = new_context(fx)?;
    ref_counting!(fx.api, urContextRetain, urContextRelease).release_drops_one_then_last(context, |c| refs(fx, c))
}

ref_null_cases!(urContextRetain, urContextRelease => retain_null, release_null);

unsafe fn info_devices(fx: &DeviceFx) -> CaseResult {
    check_eq!(fx.api.context_info::<u32>(fx.context, UR_CONTEXT_INFO_NUM_DEVICES)?, 1);
    check_eq!(fx.api.context_info::<ur_device_handle_t>(fx.context, UR_CONTEXT_INFO_DEVICES)?, fx.device);
    check!(refs(fx, fx.context)? >= 1, "a live context reports no reference");
    Ok(())
}

unsafe fn info_2d(fx: &DeviceFx) -> CaseResult {
    for prop in [UR_CONTEXT_INFO_USM_MEMCPY2D_SUPPORT, UR_CONTEXT_INFO_USM_FILL2D_SUPPORT] {
        let value = fx.api.context_info::<ur_bool_t>(fx.context, prop)?;
        check!(value <= 1, "{prop:?} is {value}, not a ur_bool_t");
    }
    Ok(())
}

info_cases!(urContextGetInfo, DeviceFx, |fx| fx.context,
    props: [("NUM_DEVICES", UR_CONTEXT_INFO_NUM_DEVICES), ("DEVICES", UR_CONTEXT_INFO_DEVICES)],
    null: UR_CONTEXT_INFO_NUM_DEVICES,
    past_last: ur_context_info_t(UR_CONTEXT_INFO_USM_FILL2D_SUPPORT.0 + 1));

native_handle_cases!(urContextGetNativeHandle, DeviceFx, |fx| fx.context,
    probe: native_context(fx, fx.context));

/// Counts calls; the user data points at the counter.
unsafe extern "C" fn count_deletion(user_data: *mut c_void) {
    // SAFETY: the case passes a pointer to an `AtomicU32` that outlives the context.
    let counter = &*(user_data as *const AtomicU32);
    counter.fetch_add(1, Ordering::SeqCst);
}

unsafe fn deleter(fx: &DeviceFx) -> CaseResult {
    // Static, so a late call after a failed case still writes valid memory.
    static CALLS: AtomicU32 = AtomicU32::new(0);
    CALLS.store(0, Ordering::SeqCst);
    let context = new_context(fx)?;
    let user_data = &CALLS as *const AtomicU32 as *mut c_void;
    let code = fx.api.urContextSetExtendedDeleter(context.get(), Some(count_deletion), user_data)?;
    if code == UR_RESULT_ERROR_UNSUPPORTED_FEATURE {
        skip!("the adapter has no extended deleters (UNSUPPORTED_FEATURE, which the reference allows)");
    }
    expect_code(UR_RESULT_SUCCESS, code, "urContextSetExtendedDeleter")?;
    expect_success!(fx.api.urContextRetain(context.get()));
    expect_success!(fx.api.urContextRelease(context.get()));
    check_eq!(CALLS.load(Ordering::SeqCst), 0);
    expect_success!(context.release());
    check!(eventually(CALLBACK_LIMIT, || CALLS.load(Ordering::SeqCst) >= 1), "the deleter was never called");
    check_eq!(CALLS.load(Ordering::SeqCst), 1);
    Ok(())
}

/// `spec/context.md`: a second registration replaces the first, so only the
/// second deleter runs, once.
unsafe fn deleter_replaced(fx: &DeviceFx) -> CaseResult {
    static FIRST: AtomicU32 = AtomicU32::new(0);
    static SECOND: AtomicU32 = AtomicU32::new(0);
    FIRST.store(0, Ordering::SeqCst);
    SECOND.store(0, Ordering::SeqCst);
    let context = new_context(fx)?;
    let data = |counter: &'static AtomicU32| counter as *const AtomicU32 as *mut c_void;
    let code = fx.api.urContextSetExtendedDeleter(context.get(), Some(count_deletion), data(&FIRST))?;
    if code == UR_RESULT_ERROR_UNSUPPORTED_FEATURE {
        skip!("the adapter has no extended deleters (UNSUPPORTED_FEATURE, which the reference allows)");
    }
    expect_code(UR_RESULT_SUCCESS, code, "urContextSetExtendedDeleter")?;
    expect_success!(fx.api.urContextSetExtendedDeleter(context.get(), Some(count_deletion), data(&SECOND)));
    expect_success!(context.release());
    check!(eventually(CALLBACK_LIMIT, || SECOND.load(Ordering::SeqCst) >= 1), "the second deleter was never called");
    check_eq!(SECOND.load(Ordering::SeqCst), 1);
    check_eq!(FIRST.load(Ordering::SeqCst), 0);
    Ok(())
}

unsafe fn deleter_null_handle(fx: &LoaderFx) -> CaseResult {
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_HANDLE,
        fx.api.urContextSetExtendedDeleter(null_mut(), Some(count_deletion), null_mut())
    );
    Ok(())
}

unsafe fn deleter_null(fx: &DeviceFx) -> CaseResult {
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_POINTER,
        fx.api.urContextSetExtendedDeleter(fx.context, None, null_mut())
    );
    Ok(())
}

unsafe fn info_foreign(fx: &DeviceFx) -> CaseResult {
    let info = info!(fx.api, urContextGetInfo);
    let prop = UR_CONTEXT_INFO_NUM_DEVICES;
    info.refuses(foreign_handle(), "a handle no adapter made", prop, UR_RESULT_ERROR_INVALID_CONTEXT)?;
    info.refuses(fx.queue.cast(), "a queue", prop, UR_RESULT_ERROR_INVALID_CONTEXT)
}
