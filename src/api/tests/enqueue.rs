//! `urEnqueueEventsWait*` and the USM commands of `urEnqueueUSM*` (their
//! wait lists: `wait_list.rs`).

use super::*;
use crate::hal::{Completion, UsmCommand, UsmCopy, UsmCopy2D, UsmFill, UsmFill2D, UsmHint};

/// The USM command the backend heard (`method`), passed on through the
/// core's submission path to the backend's append.
fn appended(calls: &[Call], method: &str) -> String {
    assert_eq!(methods(calls), [method, "queue.append"], "{calls:?}");
    calls[0].args.clone()
}

/// What the backend hears of a USM command.
fn heard(command: UsmCommand<'_>, waits: &[ur_event_handle_t], want_event: bool, blocking: bool) -> String {
    format!("{command:?} waits={waits:?} {:?}", Completion { want_event, blocking })
}

static PATTERN: [u8; 4] = [1, 2, 3, 4];

fn pattern() -> *const c_void {
    PATTERN.as_ptr().cast()
}

/// `urEnqueueUSMFill` into 64 bytes of USM at offset `at`.
fn fill(w: &World, at: usize, pattern_size: usize, size: usize) -> ur_result_t {
    let dst = w.alloc(64).wrapping_byte_add(at);
    ur!(Enqueue.pfnUSMFill(w.queue, dst, pattern_size, pattern(), size, 0, null(), null_mut()))
}

/// `urEnqueueUSMFill2D` into 64 bytes of USM.
fn fill_2d(w: &World, pitch: usize, pattern_size: usize, width: usize, height: usize) -> ur_result_t {
    let dst = w.alloc(64);
    ur!(Enqueue.pfnUSMFill2D(w.queue, dst, pitch, pattern_size, pattern(), width, height, 0, null(), null_mut()))
}

/// `urEnqueueUSMMemcpy2D` between two allocations of 64 bytes.
fn copy_2d(w: &World, dst_pitch: usize, src_pitch: usize, width: usize, height: usize) -> ur_result_t {
    let (dst, src) = (w.alloc(64), w.alloc(64));
    ur!(Enqueue.pfnUSMMemcpy2D(w.queue, false, dst, dst_pitch, src, src_pitch, width, height, 0, null(), null_mut()))
}

fn prefetch(w: &World, at: usize, size: usize, flags: ur_usm_migration_flags_t) -> ur_result_t {
    let p = w.alloc(64).wrapping_byte_add(at);
    ur!(Enqueue.pfnUSMPrefetch(w.queue, p, size, flags, 0, null(), null_mut()))
}

fn advise(w: &World, at: usize, size: usize, advice: ur_usm_advice_flags_t) -> ur_result_t {
    let p = w.alloc(64).wrapping_byte_add(at);
    ur!(Enqueue.pfnUSMAdvise(w.queue, p, size, advice, null_mut()))
}

const SIZE: ur_result_t = UR_RESULT_ERROR_INVALID_SIZE;
const NULL: ur_result_t = UR_RESULT_ERROR_INVALID_NULL_POINTER;

refusals! {
    events_wait_null_queue: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| ur!(Enqueue.pfnEventsWait(null_mut(), 0, null(), null_mut()));
    barrier_foreign_queue: UR_RESULT_ERROR_INVALID_QUEUE, |w| {
        ur!(Enqueue.pfnEventsWaitWithBarrier(Foreign::new(ObjectKind::Queue).handle(), 0, null(), null_mut()))
    };
    barrier_ext_null_queue: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| {
        ur!(Enqueue.pfnEventsWaitWithBarrierExt(null_mut(), null(), 0, null(), null_mut()))
    };
    barrier_ext_unknown_flag: UR_RESULT_ERROR_INVALID_ENUMERATION, |w| {
        let p = ur_exp_enqueue_ext_properties_t { stype: UR_STRUCTURE_TYPE_EXP_ENQUEUE_EXT_PROPERTIES, pNext: null_mut(), flags: 1 };
        ur!(Enqueue.pfnEventsWaitWithBarrierExt(w.queue, &p, 0, null(), null_mut()))
    };

    fill_null_queue: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| {
        ur!(Enqueue.pfnUSMFill(null_mut(), w.alloc(64), 4, pattern(), 64, 0, null(), null_mut()))
    };
    fill_a_context_for_a_queue: UR_RESULT_ERROR_INVALID_QUEUE, |w| {
        ur!(Enqueue.pfnUSMFill(as_handle(w.ctx), w.alloc(64), 4, pattern(), 64, 0, null(), null_mut()))
    };
    fill_no_destination: NULL, |w| ur!(Enqueue.pfnUSMFill(w.queue, null_mut(), 4, pattern(), 64, 0, null(), null_mut()));
    fill_no_pattern: NULL, |w| ur!(Enqueue.pfnUSMFill(w.queue, w.alloc(64), 4, null(), 64, 0, null(), null_mut()));
    fill_pattern_size_zero: SIZE, |w| fill(&w, 0, 0, 64);
    fill_size_zero: SIZE, |w| fill(&w, 0, 4, 0);
    fill_pattern_larger_than_size: SIZE, |w| fill(&w, 0, 4, 2);
    fill_pattern_size_not_a_power_of_two: SIZE, |w| fill(&w, 0, 3, 63);
    fill_size_not_a_multiple_of_the_pattern: SIZE, |w| fill(&w, 0, 4, 62);
    fill_past_the_allocation: SIZE, |w| fill(&w, 32, 4, 36);

    memcpy_null_queue: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| {
        ur!(Enqueue.pfnUSMMemcpy(null_mut(), false, w.alloc(8), w.alloc(8), 8, 0, null(), null_mut()))
    };
    memcpy_no_destination: NULL, |w| ur!(Enqueue.pfnUSMMemcpy(w.queue, false, null_mut(), w.alloc(8), 8, 0, null(), null_mut()));
    memcpy_no_source: NULL, |w| ur!(Enqueue.pfnUSMMemcpy(w.queue, false, w.alloc(8), null(), 8, 0, null(), null_mut()));
    memcpy_size_zero: SIZE, |w| ur!(Enqueue.pfnUSMMemcpy(w.queue, false, w.alloc(8), w.alloc(8), 0, 0, null(), null_mut()));
    memcpy_destination_past_its_allocation: SIZE, |w| {
        ur!(Enqueue.pfnUSMMemcpy(w.queue, false, w.alloc(8), w.alloc(16), 16, 0, null(), null_mut()))
    };
    memcpy_source_past_its_allocation: SIZE, |w| {
        ur!(Enqueue.pfnUSMMemcpy(w.queue, false, w.alloc(16), w.alloc(16).wrapping_byte_add(8), 16, 0, null(), null_mut()))
    };
    memcpy_overlapping_ranges: UR_RESULT_ERROR_INVALID_VALUE, |w| {
        let m = w.alloc(64);
        ur!(Enqueue.pfnUSMMemcpy(w.queue, false, m.wrapping_byte_add(8), m, 16, 0, null(), null_mut()))
    };

    fill_2d_null_queue: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| {
        ur!(Enqueue.pfnUSMFill2D(null_mut(), w.alloc(64), 16, 4, pattern(), 16, 4, 0, null(), null_mut()))
    };
    fill_2d_no_destination: NULL, |w| ur!(Enqueue.pfnUSMFill2D(w.queue, null_mut(), 16, 4, pattern(), 16, 4, 0, null(), null_mut()));
    fill_2d_no_pattern: NULL, |w| ur!(Enqueue.pfnUSMFill2D(w.queue, w.alloc(64), 16, 4, null(), 16, 4, 0, null(), null_mut()));
    fill_2d_pitch_zero: SIZE, |w| fill_2d(&w, 0, 4, 16, 4);
    fill_2d_pitch_below_width: SIZE, |w| fill_2d(&w, 8, 4, 16, 4);
    fill_2d_pattern_size_zero: SIZE, |w| fill_2d(&w, 16, 0, 16, 4);
    fill_2d_pattern_larger_than_the_region: SIZE, |w| fill_2d(&w, 16, 4, 2, 1);
    fill_2d_pattern_size_not_a_power_of_two: SIZE, |w| fill_2d(&w, 16, 3, 15, 4);
    fill_2d_width_zero: SIZE, |w| fill_2d(&w, 16, 4, 0, 4);
    fill_2d_height_zero: SIZE, |w| fill_2d(&w, 16, 4, 16, 0);
    fill_2d_width_not_a_multiple_of_the_pattern: SIZE, |w| fill_2d(&w, 16, 4, 14, 4);
    fill_2d_area_overflows: SIZE, |w| fill_2d(&w, usize::MAX, 4, usize::MAX / 2, 4);
    fill_2d_region_overflows: SIZE, |w| fill_2d(&w, usize::MAX, 4, 16, 2);
    fill_2d_past_the_allocation: SIZE, |w| fill_2d(&w, 32, 4, 16, 3);
    fill_2d_unsupported: UR_RESULT_ERROR_UNSUPPORTED_FEATURE, |w| {
        w.features(w.ctx).usm_2d.store(false, std::sync::atomic::Ordering::Relaxed);
        fill_2d(&w, 16, 4, 16, 4)
    };

    memcpy_2d_null_queue: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| {
        ur!(Enqueue.pfnUSMMemcpy2D(null_mut(), false, w.alloc(64), 16, w.alloc(64), 16, 16, 4, 0, null(), null_mut()))
    };
    memcpy_2d_no_destination: NULL, |w| {
        ur!(Enqueue.pfnUSMMemcpy2D(w.queue, false, null_mut(), 16, w.alloc(64), 16, 16, 4, 0, null(), null_mut()))
    };
    memcpy_2d_no_source: NULL, |w| {
        ur!(Enqueue.pfnUSMMemcpy2D(w.queue, false, w.alloc(64), 16, null(), 16, 16, 4, 0, null(), null_mut()))
    };
    memcpy_2d_source_pitch_zero: SIZE, |w| copy_2d(&w, 16, 0, 16, 4);
    memcpy_2d_destination_pitch_zero: SIZE, |w| copy_2d(&w, 0, 16, 16, 4);
    memcpy_2d_source_pitch_below_width: SIZE, |w| copy_2d(&w, 16, 8, 16, 4);
    memcpy_2d_destination_pitch_below_width: SIZE, |w| copy_2d(&w, 8, 16, 16, 4);
    memcpy_2d_width_zero: SIZE, |w| copy_2d(&w, 16, 16, 0, 4);
    memcpy_2d_height_zero: SIZE, |w| copy_2d(&w, 16, 16, 16, 0);
    memcpy_2d_destination_past_its_allocation: SIZE, |w| copy_2d(&w, 32, 16, 16, 3);
    memcpy_2d_source_past_its_allocation: SIZE, |w| copy_2d(&w, 16, 32, 16, 3);
    memcpy_2d_unsupported: UR_RESULT_ERROR_UNSUPPORTED_FEATURE, |w| {
        w.features(w.ctx).usm_2d.store(false, std::sync::atomic::Ordering::Relaxed);
        copy_2d(&w, 16, 16, 16, 4)
    };

    prefetch_null_queue: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| {
        ur!(Enqueue.pfnUSMPrefetch(null_mut(), w.alloc(64), 64, 0, 0, null(), null_mut()))
    };
    prefetch_no_pointer: NULL, |w| ur!(Enqueue.pfnUSMPrefetch(w.queue, null(), 64, 0, 0, null(), null_mut()));
    prefetch_unknown_flag: UR_RESULT_ERROR_INVALID_ENUMERATION, |w| prefetch(&w, 0, 64, 1 << 2);
    prefetch_size_zero: SIZE, |w| prefetch(&w, 0, 0, 0);
    prefetch_past_the_allocation: SIZE, |w| prefetch(&w, 8, 64, 0);

    advise_null_queue: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| ur!(Enqueue.pfnUSMAdvise(null_mut(), w.alloc(64), 64, 0, null_mut()));
    advise_no_pointer: NULL, |w| ur!(Enqueue.pfnUSMAdvise(w.queue, null(), 64, 0, null_mut()));
    advise_unknown_flag: UR_RESULT_ERROR_INVALID_ENUMERATION, |w| advise(&w, 0, 64, 1 << 17);
    advise_size_zero: SIZE, |w| advise(&w, 0, 0, 0);
    advise_past_the_allocation: SIZE, |w| advise(&w, 63, 2, 0);
}

/// The command type the event of `e` reports.
fn command_of(e: ur_event_handle_t) -> ur_command_t {
    let mut c = UR_COMMAND_FORCE_UINT32;
    refused!(UR_RESULT_SUCCESS, ur!(Event.pfnGetInfo(e, UR_EVENT_INFO_COMMAND_TYPE, 4, (&mut c as *mut ur_command_t).cast(), null_mut())));
    c
}

#[test]
fn markers_and_barriers_reach_the_backend_with_their_wait_lists() {
    let w = World::new();
    let list = [w.event()];
    let mut e = null_mut();
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Enqueue.pfnEventsWait(w.queue, 1, list.as_ptr(), &mut e)));
    assert_eq!(appended(&calls, "queue.marker"), heard(UsmCommand::Wait { barrier: false }, &list, true, false));
    assert_eq!(command_of(e), UR_COMMAND_EVENTS_WAIT);
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Enqueue.pfnEventsWaitWithBarrier(w.queue, 0, null(), null_mut())));
    assert_eq!(appended(&calls, "queue.marker"), heard(UsmCommand::Wait { barrier: true }, &[], false, false));
    let low_power = ur_exp_enqueue_ext_properties_t {
        stype: UR_STRUCTURE_TYPE_EXP_ENQUEUE_EXT_PROPERTIES,
        pNext: null_mut(),
        flags: !UR_EXP_ENQUEUE_EXT_FLAGS_MASK,
    };
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Enqueue.pfnEventsWaitWithBarrierExt(w.queue, &low_power, 1, list.as_ptr(), &mut e)));
    assert_eq!(appended(&calls, "queue.marker"), heard(UsmCommand::Wait { barrier: true }, &list, true, false));
    assert_eq!(command_of(e), UR_COMMAND_EVENTS_WAIT_WITH_BARRIER);
}

#[test]
fn fill_reaches_the_backend_with_the_pattern_and_where_the_memory_is() {
    let w = World::new();
    let dst = w.alloc(64);
    let mut e = null_mut();
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Enqueue.pfnUSMFill(w.queue, dst.wrapping_byte_add(16), 4, pattern(), 48, 0, null(), &mut e)));
    let command = UsmCommand::Fill(UsmFill { command: UR_COMMAND_USM_FILL, dst: dst.wrapping_byte_add(16), pattern: &PATTERN, size: 48, in_usm: true });
    assert_eq!(appended(&calls, "queue.fill"), heard(command, &[], true, false));
    assert_eq!(command_of(e), UR_COMMAND_USM_FILL);
    // Host memory of the caller's own is the backend's to take.
    let mut host = [0u8; 8];
    let dst = host.as_mut_ptr().cast();
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Enqueue.pfnUSMFill(w.queue, dst, 2, pattern(), 8, 0, null(), null_mut())));
    let command = UsmCommand::Fill(UsmFill { command: UR_COMMAND_USM_FILL, dst, pattern: &PATTERN[..2], size: 8, in_usm: false });
    assert_eq!(appended(&calls, "queue.fill"), heard(command, &[], false, false));
}

#[test]
fn a_blocking_memcpy_waits_for_its_event_and_syncs() {
    let w = World::new();
    let (dst, src) = (w.alloc(32), w.alloc(32));
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Enqueue.pfnUSMMemcpy(w.queue, true, dst, src, 32, 0, null(), null_mut())));
    assert_eq!(methods(&calls), ["queue.copy", "queue.append", "event.wait", "context.collect_pools"]);
    assert_eq!(calls[0].args, heard(UsmCommand::Copy(UsmCopy { command: UR_COMMAND_USM_MEMCPY, dst, src, size: 32, in_usm: true }), &[], true, true));
    let mut host = [0u8; 32];
    let mut e = null_mut();
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Enqueue.pfnUSMMemcpy(w.queue, false, host.as_mut_ptr().cast(), src, 32, 0, null(), &mut e)));
    let command = UsmCommand::Copy(UsmCopy { command: UR_COMMAND_USM_MEMCPY, dst: host.as_mut_ptr().cast(), src, size: 32, in_usm: false });
    assert_eq!(appended(&calls, "queue.copy"), heard(command, &[], true, false));
    assert_eq!(command_of(e), UR_COMMAND_USM_MEMCPY);
}

#[test]
fn a_blocking_memcpy_returns_the_failure_of_its_command() {
    let w = World::new();
    let (dst, src) = (w.alloc(8), w.alloc(8));
    w.features(w.ctx).fail_commands.store(true, std::sync::atomic::Ordering::Relaxed);
    let calls = reached!(UR_RESULT_ERROR_OUT_OF_RESOURCES, ur!(Enqueue.pfnUSMMemcpy(w.queue, true, dst, src, 8, 0, null(), null_mut())));
    assert_eq!(methods(&calls), ["queue.copy", "queue.append", "event.wait", "context.collect_pools"], "synced despite the failure");
}

#[test]
fn fill_2d_and_memcpy_2d_reach_the_backend() {
    let w = World::new();
    let (dst, src) = (w.alloc(64), w.alloc(64));
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Enqueue.pfnUSMFill2D(w.queue, dst, 16, 4, pattern(), 8, 4, 0, null(), null_mut())));
    let command = UsmCommand::Fill2D(UsmFill2D { dst, pitch: 16, pattern: &PATTERN, width: 8, height: 4 });
    assert_eq!(appended(&calls, "queue.fill_2d"), heard(command, &[], false, false));
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Enqueue.pfnUSMMemcpy2D(w.queue, true, dst, 16, src, 32, 16, 2, 0, null(), null_mut())));
    assert_eq!(methods(&calls), ["queue.copy_2d", "queue.append", "event.wait", "context.collect_pools"]);
    let command = UsmCommand::Copy2D(UsmCopy2D { command: UR_COMMAND_USM_MEMCPY_2D, dst, dst_pitch: 16, src, src_pitch: 32, width: 16, height: 2 });
    assert_eq!(calls[0].args, heard(command, &[], true, true));
}

#[test]
fn prefetch_and_advise_reach_the_backend() {
    let w = World::new();
    let p = w.alloc(64);
    let list = [w.event()];
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Enqueue.pfnUSMPrefetch(w.queue, p, 64, 1, 1, list.as_ptr(), null_mut())));
    let command = UsmCommand::Prefetch(UsmHint { ptr: p, size: 64, flags: 1 });
    assert_eq!(appended(&calls, "queue.prefetch"), heard(command, &list, false, false));
    let mut e = null_mut();
    let advice = 1 << 16;
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Enqueue.pfnUSMAdvise(w.queue, p.wrapping_byte_add(8), 56, advice, &mut e)));
    let command = UsmCommand::Advise(UsmHint { ptr: p.wrapping_byte_add(8), size: 56, flags: advice });
    assert_eq!(appended(&calls, "queue.advise"), heard(command, &[], true, false));
    assert_eq!(command_of(e), UR_COMMAND_USM_ADVISE);
}
