//! Released handles (`spec/loader.md`, "Stale handles"): once the user's
//! last reference is gone, every call that names the handle gets the kind's
//! `INVALID_*` code, every time, and never reads freed memory (the valgrind
//! step runs these cases too). A released queue that its events keep alive
//! takes no more work, so no command can be left waiting on it.

use super::common::{Info, RefCounting, Which};
use crate::harness::*;
use crate::{check, check_eq, expect_result, expect_success, info, ref_counting};
use std::fmt::Debug;
use std::ptr::{null, null_mut};
use ur_core::abi::*;

pub const CASES: &[Case] = &[
    Case::device("urEventRelease.released_handle_is_refused", released_event),
    Case::device("urEventRelease.refused_after_many_newer_events", released_event_after_many),
    Case::device("urQueueRelease.released_queue_takes_no_work", released_queue),
    Case::device("urContextRelease.released_handle_is_refused", released_context),
    Case::device("urUSMPoolRelease.released_handle_is_refused", released_pool),
];

/// A completed fill's event on `queue`.
unsafe fn fill_event(fx: &DeviceFx, queue: ur_queue_handle_t, memory: &Usm) -> Result<OwnedEvent, Outcome> {
    let event = fx.fill(queue, memory.ptr, &[0x5a], 64, &[])?;
    fx.wait(event.get())?;
    Ok(event)
}

/// The reference-count query, retain and release of a released `handle`
/// each answer `invalid`, the kind's code.
unsafe fn reference_calls_refused<T, P: Copy + Debug>(
    (info, refcount): (Info<T, P>, P),
    counting: RefCounting<T>,
    handle: *mut T,
    invalid: ur_result_t,
) -> CaseResult {
    let mut refs = 0u32;
    let got = info.value_code(handle, refcount, &mut refs)?;
    expect_code(invalid, got, &format!("{}({refcount:?}) of a released handle", info.name))?;
    for which in [Which::Retain, Which::Release] {
        let got = counting.code(which, handle)?;
        expect_code(invalid, got, &format!("{} of a released handle", counting.entry_name(which)))?;
    }
    Ok(())
}

/// Every call on a released event handle is `INVALID_EVENT`, repeatedly.
unsafe fn expect_refused_event(fx: &DeviceFx, event: ur_event_handle_t) -> CaseResult {
    let api = fx.api;
    for _ in 0..3 {
        let info = (info!(api, urEventGetInfo), UR_EVENT_INFO_REFERENCE_COUNT);
        let counting = ref_counting!(api, urEventRetain, urEventRelease);
        reference_calls_refused(info, counting, event, UR_RESULT_ERROR_INVALID_EVENT)?;
        expect_result!(UR_RESULT_ERROR_INVALID_EVENT, api.urEventWait(1, &event));
        // In a command's wait list a bad event is a bad list.
        expect_result!(UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST, api.urEnqueueEventsWait(fx.queue, 1, &event, null_mut()));
    }
    Ok(())
}

unsafe fn released_event(fx: &DeviceFx) -> CaseResult {
    let memory = fx.alloc(UsmKind::Device, 64)?;
    let owned = fill_event(fx, fx.queue, &memory)?;
    let event = owned.get();
    expect_success!(fx.api.urEventRetain(event));
    expect_success!(fx.api.urEventRelease(event));
    // Still one reference: still live.
    expect_success!(fx.api.urEventWait(1, &event));
    expect_success!(owned.release());
    expect_refused_event(fx, event)
}

/// Handles of released objects stay refused while a thousand newer events
/// are made and released (their memory is handed out again meanwhile).
unsafe fn released_event_after_many(fx: &DeviceFx) -> CaseResult {
    let memory = fx.alloc(UsmKind::Device, 64)?;
    let owned = fill_event(fx, fx.queue, &memory)?;
    let first = owned.get();
    expect_success!(owned.release());
    for _ in 0..1000 {
        let e = fill_event(fx, fx.queue, &memory)?;
        check!(e.get() != first, "a new event got the handle of a released one at once");
        expect_success!(e.release());
    }
    expect_refused_event(fx, first)
}

unsafe fn released_queue(fx: &DeviceFx) -> CaseResult {
    let api = fx.api;
    let owned = fx.create_queue(0)?;
    let queue = owned.get();
    let memory = fx.alloc(UsmKind::Device, 64)?;
    let event = fill_event(fx, queue, &memory)?;
    expect_success!(owned.release());
    // The event keeps the queue alive inside the adapter, but the user's
    // handle is gone.
    let byte = 1u8;
    expect_result!(
        UR_RESULT_ERROR_INVALID_QUEUE,
        api.urEnqueueUSMFill(queue, memory.ptr, 1, (&byte as *const u8).cast(), 64, 0, null(), null_mut())
    );
    let mut p = null_mut();
    expect_result!(
        UR_RESULT_ERROR_INVALID_QUEUE,
        api.urEnqueueUSMDeviceAllocExp(queue, null_mut(), 64, null(), 0, null(), &mut p, null_mut())
    );
    expect_result!(UR_RESULT_ERROR_INVALID_QUEUE, api.urQueueFinish(queue));
    expect_result!(UR_RESULT_ERROR_INVALID_QUEUE, api.urQueueRetain(queue));
    expect_result!(UR_RESULT_ERROR_INVALID_QUEUE, api.urQueueRelease(queue));
    // The event still says which queue ran it, and completes.
    check_eq!(api.event_info::<ur_queue_handle_t>(event.get(), UR_EVENT_INFO_COMMAND_QUEUE)?, queue);
    expect_success!(api.urEventWait(1, &event.get()));
    Ok(())
}

unsafe fn released_context(fx: &DeviceFx) -> CaseResult {
    let api = fx.api;
    let mut context = null_mut();
    expect_success!(api.urContextCreate(1, &fx.device, null(), &mut context));
    expect_success!(api.urContextRelease(context));
    for _ in 0..3 {
        let info = (info!(api, urContextGetInfo), UR_CONTEXT_INFO_REFERENCE_COUNT);
        let counting = ref_counting!(api, urContextRetain, urContextRelease);
        reference_calls_refused(info, counting, context, UR_RESULT_ERROR_INVALID_CONTEXT)?;
        let mut queue = null_mut();
        expect_result!(UR_RESULT_ERROR_INVALID_CONTEXT, api.urQueueCreate(context, fx.device, null(), &mut queue));
        let mut p = null_mut();
        expect_result!(UR_RESULT_ERROR_INVALID_CONTEXT, api.urUSMHostAlloc(context, null(), null_mut(), 64, &mut p));
    }
    Ok(())
}

unsafe fn released_pool(fx: &DeviceFx) -> CaseResult {
    let api = fx.api;
    let mut desc = ur_usm_pool_desc_t { stype: UR_STRUCTURE_TYPE_USM_POOL_DESC, pNext: null(), flags: 0 };
    let mut pool = null_mut();
    match api.urUSMPoolCreate(fx.context, &mut desc, &mut pool)? {
        UR_RESULT_SUCCESS => {}
        UR_RESULT_ERROR_UNSUPPORTED_FEATURE => return Err(Outcome::Skip("urUSMPoolCreate is unsupported".into())),
        other => return Err(Outcome::Fail(format!("urUSMPoolCreate returned {}", crate::names::result_name(other)))),
    }
    expect_success!(api.urUSMPoolRelease(pool));
    for _ in 0..3 {
        let info = (info!(api, urUSMPoolGetInfo), UR_USM_POOL_INFO_REFERENCE_COUNT);
        let counting = ref_counting!(api, urUSMPoolRetain, urUSMPoolRelease);
        // UR names no INVALID_USM_POOL code: a bad pool is INVALID_ARGUMENT.
        reference_calls_refused(info, counting, pool, UR_RESULT_ERROR_INVALID_ARGUMENT)?;
    }
    Ok(())
}
