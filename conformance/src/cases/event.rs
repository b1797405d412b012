//! urEventWait, urEventRetain/Release, urEventGetInfo,
//! urEventGetProfilingInfo, urEventSetCallback, and the commands that only
//! order others: urEnqueueEventsWait, urEnqueueEventsWaitWithBarrier(Ext).

use crate::cases::common::reserved_flags;
use crate::harness::*;
use crate::names::{event_status_name, result_name};
use crate::{check, check_eq, expect_result, expect_success, info, ref_counting, ref_null_cases, skip};
use core::ffi::c_void;
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use ur_core::abi::*;

pub const CASES: &[Case] = &[
    Case::device("urEnqueueEventsWait.empty_list_waits_for_all", wait_cmd_all),
    Case::device("urEnqueueEventsWait.wait_list_across_queues", wait_cmd_list),
    Case::device("urEnqueueEventsWait.no_output_event", wait_cmd_no_event),
    Case::device("urEnqueueEventsWait.covers_commands_without_events", wait_cmd_covers),
    Case::loader("urEnqueueEventsWait.null_queue", wait_cmd_null_queue),
    Case::device("urEnqueueEventsWait.invalid_wait_list", wait_cmd_bad_list),
    Case::device("urEnqueueEventsWaitWithBarrier.empty_list_waits_for_all", barrier_all),
    Case::device("urEnqueueEventsWaitWithBarrier.orders_later_commands", barrier_orders),
    Case::device("urEnqueueEventsWaitWithBarrier.covers_commands_without_events", barrier_covers),
    Case::device("urEnqueueEventsWaitWithBarrier.wait_list_across_queues", barrier_list),
    Case::loader("urEnqueueEventsWaitWithBarrier.null_queue", barrier_null_queue),
    Case::device("urEnqueueEventsWaitWithBarrier.invalid_wait_list", barrier_bad_list),
    Case::device("urEnqueueEventsWaitWithBarrierExt.properties", barrier_ext),
    Case::device("urEnqueueEventsWaitWithBarrierExt.orders_later_commands", barrier_ext_orders),
    Case::loader("urEnqueueEventsWaitWithBarrierExt.null_queue", barrier_ext_null_queue),
    Case::device("urEnqueueEventsWaitWithBarrierExt.invalid_flags", barrier_ext_bad_flags),
    Case::device("urEnqueueEventsWaitWithBarrierExt.invalid_wait_list", barrier_ext_bad_list),
    Case::device("urEventWait.several_events", event_wait),
    Case::device("urEventWait.null_list", event_wait_null),
    Case::device("urEventWait.zero_events", event_wait_zero),
    Case::device("urEventWait.foreign_or_wrong_handle", event_wait_foreign),
    Case::device("urEventRetain.success", retain),
    Case::loader("urEventRetain.null_handle", retain_null),
    Case::device("urEventRelease.success", release),
    Case::device("urEventRelease.before_completion", release_early),
    Case::loader("urEventRelease.null_handle", release_null),
    Case::device("urEventGetInfo.properties", info),
    Case::device("urEventGetInfo.size_protocol", info_protocol),
    Case::loader("urEventGetInfo.null_handle", info_null),
    Case::device("urEventGetInfo.invalid_enumeration", info_bad_enum),
    Case::device("urEventGetProfilingInfo.timestamps_in_order", profiling),
    Case::device("urEventGetProfilingInfo.not_available_without_profiling", profiling_off),
    Case::loader("urEventGetProfilingInfo.null_handle", profiling_null),
    Case::device("urEventGetProfilingInfo.invalid_enumeration", profiling_bad_enum),
    Case::device("urEventGetProfilingInfo.invalid_value", profiling_bad_value),
    Case::device("urEventSetCallback.called_on_completion", callback),
    Case::device("urEventSetCallback.already_complete", callback_late),
    Case::device("urEventSetCallback.many_each_once", callback_many),
    Case::loader("urEventSetCallback.null_handle", callback_null_handle),
    Case::device("urEventSetCallback.null_callback", callback_null),
    Case::device("urEventSetCallback.invalid_enumeration", callback_bad_enum),
    Case::device("urEventSetCallback.queued_status", callback_queued),
    Case::device("urEventSetCallback.earlier_stage", callback_earlier_stage),
];

const BYTES: usize = 1 << 16;

/// A completed fill of 64 bytes of device memory on the fixture queue: the
/// memory, which the case keeps as long as the event, and the event.
unsafe fn done_event<'a>(fx: &DeviceFx<'a>) -> Result<(Usm<'a>, OwnedEvent), Outcome> {
    let memory = fx.alloc(UsmKind::Device, 64)?;
    let event = fx.fill(fx.queue, memory.ptr, &[1], memory.size, &[])?;
    fx.wait(event.get())?;
    Ok((memory, event))
}

/// Which synchronisation command a shared case exercises.
#[derive(Clone, Copy)]
enum Sync {
    Wait,
    Barrier,
    BarrierExt,
}

unsafe fn enqueue_sync(
    fx: &DeviceFx,
    kind: Sync,
    queue: ur_queue_handle_t,
    wait: &[ur_event_handle_t],
) -> Result<OwnedEvent, Outcome> {
    let mut event = null_mut();
    let (n, list) = wait_list(wait);
    match kind {
        Sync::Wait => expect_success!(fx.api.urEnqueueEventsWait(queue, n, list, &mut event)),
        Sync::Barrier => expect_success!(fx.api.urEnqueueEventsWaitWithBarrier(queue, n, list, &mut event)),
        Sync::BarrierExt => {
            expect_success!(fx.api.urEnqueueEventsWaitWithBarrierExt(queue, null(), n, list, &mut event))
        }
    }
    check!(!event.is_null(), "a null event");
    Ok(fx.own_event(event))
}

/// With an empty wait list, the command completes only after everything
/// enqueued before it on its queue.
unsafe fn waits_for_all(fx: &DeviceFx, kind: Sync, command: ur_command_t) -> CaseResult {
    let a = fx.alloc(UsmKind::Device, BYTES)?;
    let b = fx.alloc(UsmKind::Device, BYTES)?;
    on_each_queue_kind(fx, |queue, what| {
        let fill_a = fx.fill(queue, a.ptr, &[0xa], BYTES, &[])?;
        let fill_b = fx.fill(queue, b.ptr, &[0xb], BYTES, &[])?;
        let sync = enqueue_sync(fx, kind, queue, &[])?;
        fx.wait(sync.get())?;
        for (name, event) in [("first fill", &fill_a), ("second fill", &fill_b)] {
            let status = fx.status(event.get())?;
            check!(
                status == UR_EVENT_STATUS_COMPLETE,
                "on an {what}, the {name} is {} after the wait command",
                event_status_name(status)
            );
        }
        check_eq!(fx.api.event_info::<ur_command_t>(sync.get(), UR_EVENT_INFO_COMMAND_TYPE)?, command);
        check_eq!(fx.api.event_info::<ur_queue_handle_t>(sync.get(), UR_EVENT_INFO_COMMAND_QUEUE)?, queue);
        Ok(())
    })
}

/// A wait list naming an event of another queue holds the command until
/// that event completes; the data shows the order.
unsafe fn waits_for_list(fx: &DeviceFx, kind: Sync) -> CaseResult {
    let memory = fx.alloc(UsmKind::Device, BYTES)?;
    let other = fx.create_queue(0)?;
    let first = fx.fill(other.get(), memory.ptr, &[0x11], BYTES, &[])?;
    let sync = enqueue_sync(fx, kind, fx.queue, &[first.get()])?;
    // Enqueued after the wait command on an in-order queue: runs after `first`.
    let second = fx.fill(fx.queue, memory.ptr, &[0x22], BYTES / 2, &[])?;
    fx.wait(second.get())?;
    check_eq!(fx.status(first.get())?, UR_EVENT_STATUS_COMPLETE);
    check_eq!(fx.status(sync.get())?, UR_EVENT_STATUS_COMPLETE);
    let data = fx.read(fx.queue, memory.ptr, BYTES)?;
    let mut expected = vec![0x22u8; BYTES / 2];
    expected.resize(BYTES, 0x11);
    compare("memory filled by two queues in order", &data, &expected)
}

/// On an out-of-order queue, a barrier holds every later command until
/// everything before it completes.
unsafe fn barrier_orders_commands(fx: &DeviceFx, kind: Sync) -> CaseResult {
    let queue = fx.out_of_order_queue()?;
    const BIG: usize = 16 << 20;
    let memory = fx.alloc(UsmKind::Device, BIG)?;
    let whole = fx.fill(queue.get(), memory.ptr, &[0x33], BIG, &[])?;
    let barrier = enqueue_sync(fx, kind, queue.get(), &[])?;
    let part = fx.fill(queue.get(), memory.ptr, &[0x44], 4096, &[])?;
    fx.wait(part.get())?;
    check_eq!(fx.status(whole.get())?, UR_EVENT_STATUS_COMPLETE);
    check_eq!(fx.status(barrier.get())?, UR_EVENT_STATUS_COMPLETE);
    let data = fx.read(fx.queue, memory.ptr, 8192)?;
    let mut expected = vec![0x44u8; 4096];
    expected.resize(8192, 0x33);
    compare("memory filled before and after a barrier", &data, &expected)
}

/// With an empty wait list, the command's event stands also for the
/// commands enqueued before it without an event of their own (an adapter
/// may make events for some commands only): once it has completed, the host
/// sees what every one of them wrote, read straight from host USM. Many
/// small fills, then a large one last, which is likely still running if the
/// event stood only for an earlier command.
unsafe fn covers_commands_without_events(fx: &DeviceFx, kind: Sync) -> CaseResult {
    const COMMANDS: usize = 100;
    const LEN: usize = 4096;
    const LAST: usize = 32 << 20;
    let memory = fx.alloc(UsmKind::Host, COMMANDS * LEN)?;
    let large = fx.alloc(UsmKind::Host, LAST)?;
    on_each_queue_kind(fx, |queue, what| {
        // Other bytes on each queue, so that the first queue's leave nothing to find.
        let first = if what.starts_with("in-order") { 1 } else { 101 };
        let fill_quietly = |ptr: *mut u8, byte: u8, len: usize| -> CaseResult {
            expect_success!(fx.api.urEnqueueUSMFill(
                queue,
                ptr.cast(),
                1,
                (&byte as *const u8).cast(),
                len,
                0,
                null(),
                null_mut()
            ));
            Ok(())
        };
        for i in 0..COMMANDS {
            fill_quietly(memory.ptr.cast::<u8>().add(i * LEN), (first + i) as u8, LEN)?;
        }
        fill_quietly(large.ptr.cast(), first as u8, LAST)?;
        let sync = enqueue_sync(fx, kind, queue, &[])?;
        fx.wait(sync.get())?;
        let data = std::slice::from_raw_parts(memory.ptr.cast::<u8>(), COMMANDS * LEN);
        for i in 0..COMMANDS {
            let byte = (first + i) as u8;
            check!(
                data[i * LEN..(i + 1) * LEN].iter().all(|&b| b == byte),
                "on an {what}, small fill {i} (no event) is not visible once the wait command's event has completed"
            );
        }
        let data = std::slice::from_raw_parts(large.ptr.cast::<u8>(), LAST);
        check!(
            data.iter().all(|&b| b == first as u8),
            "on an {what}, the last fill ({LAST} bytes, no event) is not all visible once the wait command's event has completed"
        );
        Ok(())
    })
}

unsafe fn wait_cmd_covers(fx: &DeviceFx) -> CaseResult {
    covers_commands_without_events(fx, Sync::Wait)
}

unsafe fn barrier_covers(fx: &DeviceFx) -> CaseResult {
    covers_commands_without_events(fx, Sync::Barrier)
}

unsafe fn wait_cmd_all(fx: &DeviceFx) -> CaseResult {
    waits_for_all(fx, Sync::Wait, UR_COMMAND_EVENTS_WAIT)
}

unsafe fn wait_cmd_list(fx: &DeviceFx) -> CaseResult {
    waits_for_list(fx, Sync::Wait)
}

unsafe fn wait_cmd_no_event(fx: &DeviceFx) -> CaseResult {
    expect_success!(fx.api.urEnqueueEventsWait(fx.queue, 0, null(), null_mut()));
    expect_success!(fx.api.urEnqueueEventsWaitWithBarrier(fx.queue, 0, null(), null_mut()));
    expect_success!(fx.api.urEnqueueEventsWaitWithBarrierExt(fx.queue, null(), 0, null(), null_mut()));
    Ok(())
}

unsafe fn wait_cmd_null_queue(fx: &LoaderFx) -> CaseResult {
    let mut event = null_mut();
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_HANDLE, fx.api.urEnqueueEventsWait(null_mut(), 0, null(), &mut event));
    Ok(())
}

unsafe fn wait_cmd_bad_list(fx: &DeviceFx) -> CaseResult {
    bad_wait_lists(fx, |n, list| {
        let mut event = null_mut();
        fx.api.urEnqueueEventsWait(fx.queue, n, list, &mut event)
    })
}

unsafe fn barrier_all(fx: &DeviceFx) -> CaseResult {
    waits_for_all(fx, Sync::Barrier, UR_COMMAND_EVENTS_WAIT_WITH_BARRIER)
}

unsafe fn barrier_orders(fx: &DeviceFx) -> CaseResult {
    barrier_orders_commands(fx, Sync::Barrier)
}

unsafe fn barrier_list(fx: &DeviceFx) -> CaseResult {
    waits_for_list(fx, Sync::Barrier)
}

unsafe fn barrier_null_queue(fx: &LoaderFx) -> CaseResult {
    let mut event = null_mut();
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_HANDLE,
        fx.api.urEnqueueEventsWaitWithBarrier(null_mut(), 0, null(), &mut event)
    );
    Ok(())
}

unsafe fn barrier_bad_list(fx: &DeviceFx) -> CaseResult {
    bad_wait_lists(fx, |n, list| {
        let mut event = null_mut();
        fx.api.urEnqueueEventsWaitWithBarrier(fx.queue, n, list, &mut event)
    })
}

fn ext_properties(flags: ur_exp_enqueue_ext_flags_t) -> ur_exp_enqueue_ext_properties_t {
    ur_exp_enqueue_ext_properties_t { stype: UR_STRUCTURE_TYPE_EXP_ENQUEUE_EXT_PROPERTIES, pNext: null_mut(), flags }
}

unsafe fn barrier_ext(fx: &DeviceFx) -> CaseResult {
    waits_for_all(fx, Sync::BarrierExt, UR_COMMAND_EVENTS_WAIT_WITH_BARRIER)?;
    for flags in [0, UR_EXP_ENQUEUE_EXT_FLAG_LOW_POWER_EVENTS_SUPPORT.0] {
        let mut event = null_mut();
        expect_success!(fx.api.urEnqueueEventsWaitWithBarrierExt(
            fx.queue,
            &ext_properties(flags),
            0,
            null(),
            &mut event
        ));
        let event = fx.own_event(event);
        fx.wait(event.get())?;
        check_eq!(
            fx.api.event_info::<ur_command_t>(event.get(), UR_EVENT_INFO_COMMAND_TYPE)?,
            UR_COMMAND_EVENTS_WAIT_WITH_BARRIER
        );
    }
    Ok(())
}

unsafe fn barrier_ext_orders(fx: &DeviceFx) -> CaseResult {
    barrier_orders_commands(fx, Sync::BarrierExt)?;
    waits_for_list(fx, Sync::BarrierExt)
}

unsafe fn barrier_ext_null_queue(fx: &LoaderFx) -> CaseResult {
    let mut event = null_mut();
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_HANDLE,
        fx.api.urEnqueueEventsWaitWithBarrierExt(null_mut(), null(), 0, null(), &mut event)
    );
    Ok(())
}

unsafe fn barrier_ext_bad_flags(fx: &DeviceFx) -> CaseResult {
    let flags = const { reserved_flags(UR_EXP_ENQUEUE_EXT_FLAGS_MASK, 1) };
    let mut event = null_mut();
    expect_result!(
        UR_RESULT_ERROR_INVALID_ENUMERATION,
        fx.api.urEnqueueEventsWaitWithBarrierExt(fx.queue, &ext_properties(flags), 0, null(), &mut event)
    );
    Ok(())
}

unsafe fn barrier_ext_bad_list(fx: &DeviceFx) -> CaseResult {
    bad_wait_lists(fx, |n, list| {
        let mut event = null_mut();
        fx.api.urEnqueueEventsWaitWithBarrierExt(fx.queue, null(), n, list, &mut event)
    })
}

unsafe fn event_wait(fx: &DeviceFx) -> CaseResult {
    let memory = fx.alloc(UsmKind::Device, BYTES)?;
    let other = fx.create_queue(0)?;
    let a = fx.fill(fx.queue, memory.ptr, &[1], BYTES / 2, &[])?;
    let b = fx.fill(other.get(), memory.at(BYTES / 2), &[2], BYTES / 2, &[])?;
    let events = [a.get(), b.get()];
    expect_success!(fx.api.urEventWait(2, events.as_ptr()));
    for event in events {
        check_eq!(fx.status(event)?, UR_EVENT_STATUS_COMPLETE);
    }
    // Waiting again on complete events returns at once.
    expect_success!(fx.api.urEventWait(2, events.as_ptr()));
    Ok(())
}

unsafe fn event_wait_null(fx: &DeviceFx) -> CaseResult {
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_POINTER, fx.api.urEventWait(1, null()));
    Ok(())
}

unsafe fn event_wait_zero(fx: &DeviceFx) -> CaseResult {
    let (_memory, done) = done_event(fx)?;
    expect_result!(UR_RESULT_ERROR_INVALID_VALUE, fx.api.urEventWait(0, &done.get()));
    Ok(())
}

unsafe fn refs(fx: &DeviceFx, event: ur_event_handle_t) -> Result<u32, Outcome> {
    Ok(fx.api.event_info::<u32>(event, UR_EVENT_INFO_REFERENCE_COUNT)?)
}

unsafe fn retain(fx: &DeviceFx) -> CaseResult {
    let (_memory, event) = done_event(fx)?;
    check_eq!(refs(fx, event.get())?, 1);
    ref_counting!(fx.api, urEventRetain, urEventRelease).retain_then_release(event.get(), |e| refs(fx, e))
}

unsafe fn release(fx: &DeviceFx) -> CaseResult {
    let (_memory, event) = done_event(fx)?;
    ref_counting!(fx.api, urEventRetain, urEventRelease).release_drops_one_then_last(event, |e| refs(fx, e))
}

unsafe fn release_early(fx: &DeviceFx) -> CaseResult {
    // Releasing the only handle of a pending command must not cancel it.
    const BIG: usize = 8 << 20;
    let memory = fx.alloc(UsmKind::Device, BIG)?;
    let event = fx.fill(fx.queue, memory.ptr, &[0x77], BIG, &[])?;
    expect_success!(event.release());
    expect_success!(fx.api.urQueueFinish(fx.queue));
    let data = fx.read(fx.queue, memory.ptr, BIG)?;
    compare("memory filled by a command whose event was released at once", &data, &vec![0x77; BIG])
}

ref_null_cases!(urEventRetain, urEventRelease => retain_null, release_null);

unsafe fn info(fx: &DeviceFx) -> CaseResult {
    let (_memory, event) = done_event(fx)?;
    let api = fx.api;
    check_eq!(api.event_info::<ur_queue_handle_t>(event.get(), UR_EVENT_INFO_COMMAND_QUEUE)?, fx.queue);
    check_eq!(api.event_info::<ur_context_handle_t>(event.get(), UR_EVENT_INFO_CONTEXT)?, fx.context);
    check_eq!(api.event_info::<ur_command_t>(event.get(), UR_EVENT_INFO_COMMAND_TYPE)?, UR_COMMAND_USM_FILL);
    check_eq!(fx.status(event.get())?, UR_EVENT_STATUS_COMPLETE);
    check_eq!(refs(fx, event.get())?, 1);
    Ok(())
}

unsafe fn info_protocol(fx: &DeviceFx) -> CaseResult {
    let (_memory, event) = done_event(fx)?;
    let props = [("COMMAND_EXECUTION_STATUS", UR_EVENT_INFO_COMMAND_EXECUTION_STATUS), ("CONTEXT", UR_EVENT_INFO_CONTEXT)];
    info!(fx.api, urEventGetInfo).size_protocol(event.get(), &props)
}

unsafe fn info_null(fx: &LoaderFx) -> CaseResult {
    info!(fx.api, urEventGetInfo).null_handle(UR_EVENT_INFO_CONTEXT)
}

unsafe fn info_bad_enum(fx: &DeviceFx) -> CaseResult {
    let (_memory, event) = done_event(fx)?;
    info!(fx.api, urEventGetInfo).past_last(event.get(), ur_event_info_t(UR_EVENT_INFO_REFERENCE_COUNT.0 + 1))
}

unsafe fn profile(
    fx: &DeviceFx,
    event: ur_event_handle_t,
    prop: ur_profiling_info_t,
) -> Result<Result<u64, ur_result_t>, Outcome> {
    let mut value = 0u64;
    let code = info!(fx.api, urEventGetProfilingInfo).value_code(event, prop, &mut value)?;
    Ok(if code == UR_RESULT_SUCCESS { Ok(value) } else { Err(code) })
}

unsafe fn profiling(fx: &DeviceFx) -> CaseResult {
    let supported = fx.api.device_info::<ur_queue_flags_t>(fx.device, UR_DEVICE_INFO_QUEUE_PROPERTIES)?;
    if supported & UR_QUEUE_FLAG_PROFILING_ENABLE.0 == 0 {
        skip!("the device reports no profiling queues");
    }
    let queue = fx.create_queue(UR_QUEUE_FLAG_PROFILING_ENABLE.0)?;
    let memory = fx.alloc(UsmKind::Device, 1 << 20)?;
    let event = fx.fill(queue.get(), memory.ptr, &[9], 1 << 20, &[])?;
    fx.wait(event.get())?;
    // Every stage is an optional query; those answered must be in order.
    let mut answered = Vec::new();
    for (name, prop) in [
        ("QUEUED", UR_PROFILING_INFO_COMMAND_QUEUED),
        ("SUBMIT", UR_PROFILING_INFO_COMMAND_SUBMIT),
        ("START", UR_PROFILING_INFO_COMMAND_START),
        ("END", UR_PROFILING_INFO_COMMAND_END),
        ("COMPLETE", UR_PROFILING_INFO_COMMAND_COMPLETE),
    ] {
        match profile(fx, event.get(), prop)? {
            Ok(stamp) => answered.push((name, stamp)),
            Err(code) => {
                expect_code(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION, code, &format!("urEventGetProfilingInfo({name})"))?
            }
        }
    }
    if answered.is_empty() {
        skip!("the adapter answers no profiling query (all are optional)");
    }
    for pair in answered.windows(2) {
        let ((earlier, t0), (later, t1)) = (pair[0], pair[1]);
        check!(t1 >= t0, "COMMAND_{later} {t1} is before COMMAND_{earlier} {t0}");
    }
    Ok(())
}

unsafe fn profiling_off(fx: &DeviceFx) -> CaseResult {
    let (_memory, event) = done_event(fx)?;
    match profile(fx, event.get(), UR_PROFILING_INFO_COMMAND_START)? {
        Ok(_) => Err("profiling info from a queue created without UR_QUEUE_FLAG_PROFILING_ENABLE".into()),
        Err(code) => expect_code(UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE, code, "urEventGetProfilingInfo(START)"),
    }
}

unsafe fn profiling_null(fx: &LoaderFx) -> CaseResult {
    info!(fx.api, urEventGetProfilingInfo).null_handle_into::<u64>(UR_PROFILING_INFO_COMMAND_START)
}

unsafe fn profiling_bad_enum(fx: &DeviceFx) -> CaseResult {
    let (_memory, event) = done_event(fx)?;
    let past_last = ur_profiling_info_t(UR_PROFILING_INFO_COMMAND_COMPLETE.0 + 1);
    let mut value = 0u64;
    let profiling = info!(fx.api, urEventGetProfilingInfo);
    expect_result!(UR_RESULT_ERROR_INVALID_ENUMERATION, profiling.value_code(event.get(), past_last, &mut value));
    Ok(())
}

unsafe fn profiling_bad_value(fx: &DeviceFx) -> CaseResult {
    let (_memory, event) = done_event(fx)?;
    let mut value = 0u64;
    expect_result!(
        UR_RESULT_ERROR_INVALID_VALUE,
        fx.api.urEventGetProfilingInfo(
            event.get(),
            UR_PROFILING_INFO_COMMAND_START,
            0,
            (&mut value as *mut u64).cast(),
            null_mut()
        )
    );
    Ok(())
}

/// What a callback saw. Leaked per use, so a late call never writes freed
/// memory.
#[derive(Default)]
struct Notified {
    calls: AtomicU32,
    event: AtomicUsize,
    status: AtomicU32,
}

unsafe extern "C" fn notify(event: ur_event_handle_t, status: ur_execution_info_t, user_data: *mut c_void) {
    // SAFETY: the case passes a leaked `Notified`.
    let seen = &*(user_data as *const Notified);
    seen.event.store(event as usize, Ordering::SeqCst);
    seen.status.store(status.0, Ordering::SeqCst);
    seen.calls.fetch_add(1, Ordering::SeqCst);
}

/// User data for a callback that a correct adapter never calls.
fn spare_record() -> *mut c_void {
    Box::leak(Box::<Notified>::default()) as *const Notified as *mut c_void
}

/// Registers [`notify`] for `stage` of `event`, with a record of its own.
unsafe fn notify_on(
    fx: &DeviceFx,
    event: ur_event_handle_t,
    stage: ur_execution_info_t,
) -> Result<(ur_result_t, &'static Notified), Outcome> {
    let seen: &'static Notified = Box::leak(Box::default());
    let got = fx.api.urEventSetCallback(event, stage, Some(notify), seen as *const Notified as *mut c_void)?;
    Ok((got, seen))
}

/// The callback came, once, for `event` at `stage`.
unsafe fn expect_notified(seen: &Notified, event: ur_event_handle_t, stage: ur_execution_info_t) -> CaseResult {
    check!(
        eventually(CALLBACK_LIMIT, || seen.calls.load(Ordering::SeqCst) >= 1),
        "the callback on stage {} was never called",
        stage.0
    );
    check_eq!(seen.calls.load(Ordering::SeqCst), 1);
    check_eq!(seen.event.load(Ordering::SeqCst), event as usize);
    check_eq!(seen.status.load(Ordering::SeqCst), stage.0);
    Ok(())
}

unsafe fn callback(fx: &DeviceFx) -> CaseResult {
    const BIG: usize = 8 << 20;
    let memory = fx.alloc(UsmKind::Device, BIG)?;
    let event = fx.fill(fx.queue, memory.ptr, &[5], BIG, &[])?;
    let (got, seen) = notify_on(fx, event.get(), UR_EXECUTION_INFO_COMPLETE)?;
    expect_code(UR_RESULT_SUCCESS, got, "urEventSetCallback(COMPLETE)")?;
    fx.wait(event.get())?;
    expect_notified(seen, event.get(), UR_EXECUTION_INFO_COMPLETE)
}

unsafe fn callback_late(fx: &DeviceFx) -> CaseResult {
    let (_memory, event) = done_event(fx)?;
    let (got, seen) = notify_on(fx, event.get(), UR_EXECUTION_INFO_COMPLETE)?;
    expect_code(UR_RESULT_SUCCESS, got, "urEventSetCallback(COMPLETE)")?;
    expect_notified(seen, event.get(), UR_EXECUTION_INFO_COMPLETE)
}

/// One of many callbacks: what it saw, and the entry point it calls to
/// release the event when the case handed it its reference.
#[derive(Default)]
struct Tally {
    seen: Notified,
    release_with: Option<unsafe extern "C" fn(ur_event_handle_t) -> ur_result_t>,
    release_result: AtomicU32,
}

unsafe extern "C" fn tally(event: ur_event_handle_t, status: ur_execution_info_t, user_data: *mut c_void) {
    // SAFETY: the case passes a leaked `Tally`.
    let tally = &*(user_data as *const Tally);
    if let Some(release) = tally.release_with {
        tally.release_result.store(release(event).0, Ordering::SeqCst);
    }
    notify(event, status, &tally.seen as *const Notified as *mut c_void);
}

/// 200 callbacks on 100 events, half registered while their commands are
/// queued behind a large fill and half once they are complete, and one on
/// an event whose only reference the callback releases: each runs exactly
/// once, with its own user data and its own event.
unsafe fn callback_many(fx: &DeviceFx) -> CaseResult {
    const EVENTS: usize = 100;
    const SLICE: usize = 256;
    const BIG: usize = 8 << 20;
    let big = fx.alloc(UsmKind::Device, BIG)?;
    let memory = fx.alloc(UsmKind::Device, EVENTS * SLICE)?;
    let leak = || -> &'static Tally { Box::leak(Box::default()) };
    let register = |event: ur_event_handle_t, record: &'static Tally| -> CaseResult {
        expect_success!(fx.api.urEventSetCallback(
            event,
            UR_EXECUTION_INFO_COMPLETE,
            Some(tally),
            record as *const Tally as *mut c_void
        ));
        Ok(())
    };
    // Keeps the queue busy, so that the callbacks below are registered on
    // commands still in flight (on a fast device some may be done already).
    let _busy = fx.fill(fx.queue, big.ptr, &[3], BIG, &[])?;
    let mut events = Vec::with_capacity(EVENTS);
    let mut early = Vec::with_capacity(EVENTS);
    for i in 0..EVENTS {
        let slice = memory.ptr.cast::<u8>().add(i * SLICE).cast();
        let event = fx.fill(fx.queue, slice, &[i as u8], SLICE, &[])?;
        let tally = leak();
        register(event.get(), tally)?;
        events.push(event);
        early.push(tally);
    }
    // An event whose one reference goes to its callback, which releases it.
    let mut given = null_mut();
    expect_success!(fx.api.urEnqueueUSMFill(
        fx.queue,
        memory.ptr,
        1,
        (&7u8 as *const u8).cast(),
        SLICE,
        0,
        null(),
        &mut given
    ));
    check!(!given.is_null(), "urEnqueueUSMFill returned a null event");
    let releaser: &'static Tally = Box::leak(Box::new(Tally {
        release_with: fx.api.fns.urEventRelease,
        ..Tally::default()
    }));
    releaser.release_result.store(u32::MAX, Ordering::SeqCst);
    register(given, releaser)?;
    expect_success!(fx.api.urQueueFinish(fx.queue));
    let mut late = Vec::with_capacity(EVENTS);
    for event in &events {
        let tally = leak();
        register(event.get(), tally)?;
        late.push(tally);
    }
    let all: Vec<&Tally> = early.iter().chain(&late).copied().chain([releaser]).collect();
    let ran = eventually(CALLBACK_LIMIT, || all.iter().all(|t| t.seen.calls.load(Ordering::SeqCst) >= 1));
    let waiting = all.iter().filter(|t| t.seen.calls.load(Ordering::SeqCst) == 0).count();
    check!(ran, "{waiting} of {} callbacks never ran", all.len());
    for (i, event) in events.iter().enumerate() {
        for (when, tally) in [("before", early[i]), ("after", late[i])] {
            let calls = tally.seen.calls.load(Ordering::SeqCst);
            check!(calls == 1, "the callback registered {when} completion on event {i} ran {calls} times");
            let got = tally.seen.event.load(Ordering::SeqCst);
            check!(got == event.get() as usize, "the callback registered {when} completion on event {i} got another event");
            check_eq!(tally.seen.status.load(Ordering::SeqCst), UR_EXECUTION_INFO_COMPLETE.0);
        }
    }
    check_eq!(releaser.seen.calls.load(Ordering::SeqCst), 1);
    check_eq!(releaser.seen.event.load(Ordering::SeqCst), given as usize);
    check_eq!(releaser.release_result.load(Ordering::SeqCst), UR_RESULT_SUCCESS.0);
    Ok(())
}

unsafe fn callback_null_handle(fx: &LoaderFx) -> CaseResult {
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_HANDLE,
        fx.api.urEventSetCallback(null_mut(), UR_EXECUTION_INFO_COMPLETE, Some(notify), spare_record())
    );
    Ok(())
}

/// `urEventSetCallback` of `callback` for `stage` of a completed event
/// answers `expected`.
unsafe fn callback_refused(
    fx: &DeviceFx,
    stage: ur_execution_info_t,
    callback: ur_event_callback_t,
    expected: ur_result_t,
) -> CaseResult {
    let (_memory, event) = done_event(fx)?;
    let user_data = if callback.is_some() { spare_record() } else { null_mut() };
    let got = fx.api.urEventSetCallback(event.get(), stage, callback, user_data)?;
    let which = if callback.is_some() { "a callback" } else { "no callback" };
    expect_code(expected, got, &format!("urEventSetCallback(stage {}, {which})", stage.0))
}

unsafe fn callback_null(fx: &DeviceFx) -> CaseResult {
    callback_refused(fx, UR_EXECUTION_INFO_COMPLETE, None, UR_RESULT_ERROR_INVALID_NULL_POINTER)
}

unsafe fn callback_bad_enum(fx: &DeviceFx) -> CaseResult {
    let past_last = ur_execution_info_t(UR_EXECUTION_INFO_QUEUED.0 + 1);
    callback_refused(fx, past_last, Some(notify), UR_RESULT_ERROR_INVALID_ENUMERATION)
}

unsafe fn callback_queued(fx: &DeviceFx) -> CaseResult {
    callback_refused(fx, UR_EXECUTION_INFO_QUEUED, Some(notify), UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION)
}

/// A callback on submission or on running, registered once the command is
/// past both: a backend whose events tell completion only answers
/// UNSUPPORTED_ENUMERATION; any other calls it once, with that stage.
unsafe fn callback_earlier_stage(fx: &DeviceFx) -> CaseResult {
    let (_memory, event) = done_event(fx)?;
    for stage in [UR_EXECUTION_INFO_SUBMITTED, UR_EXECUTION_INFO_RUNNING] {
        let (got, seen) = notify_on(fx, event.get(), stage)?;
        if got == UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION {
            continue;
        }
        check!(got == UR_RESULT_SUCCESS, "urEventSetCallback on stage {} returned {}", stage.0, result_name(got));
        expect_notified(seen, event.get(), stage)?;
    }
    Ok(())
}

unsafe fn event_wait_foreign(fx: &DeviceFx) -> CaseResult {
    let foreign: ur_event_handle_t = foreign_handle();
    expect_result!(UR_RESULT_ERROR_INVALID_EVENT, fx.api.urEventWait(1, &foreign));
    // A live handle of another kind is not an event either.
    let queue_as_event: ur_event_handle_t = fx.queue.cast();
    expect_result!(UR_RESULT_ERROR_INVALID_EVENT, fx.api.urEventWait(1, &queue_as_event));
    Ok(())
}
