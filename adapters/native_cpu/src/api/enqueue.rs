//! `urEnqueue*`: event waits, barriers and USM commands. Every command runs
//! on the queue's workers after the entry point returned, unless the caller
//! asked to block.

use super::{obj, pending_events};
use crate::core::enqueue::{overlaps, region_2d_bytes, resolve, Command, Pattern, UsmPtr};
use crate::core::event::Event;
use crate::core::queue::{Order, Queue, Submission};
use std::ffi::c_void;
use std::sync::Arc;
use ur_core::boundary::{ffi_call, non_null};
use ur_core::handle::into_handle;
use ur_core::*;

/// Queues `command`, blocks for it when asked (returning its result), and
/// hands out its event when the caller wants one. A blocking command always
/// gets an event: it is how the caller waits for that one command.
///
/// # Safety
/// `ph_event` is null or valid for a write.
unsafe fn submit(
    queue: &Queue,
    command_type: ur_command_t,
    command: Command,
    deps: Vec<Arc<Event>>,
    order: Order,
    blocking: bool,
    ph_event: *mut ur_event_handle_t,
) -> UrResult {
    let want_event = blocking || !ph_event.is_null();
    let done = queue.submit(Submission { command_type, command, deps, order, want_event, blocking })?;
    let outcome = match (&done.event, blocking) {
        (Some(event), true) => {
            let outcome = event.outcome();
            // A host synchronisation point, as for urQueueFinish.
            queue.shared.context.collect_pools();
            outcome
        }
        _ => Ok(()),
    };
    // A failed blocking command returns its error and no event.
    if let (Some(event), false, Ok(())) = (done.event, ph_event.is_null(), outcome) {
        ph_event.write(into_handle(event));
    }
    outcome
}

/// A pointer a command will access for `len` bytes, checked against the
/// USM allocations of the queue's context.
///
/// # Safety
/// When `addr` is no USM allocation of the context, it is host memory the
/// caller keeps valid until the command finished, as UR requires.
unsafe fn usm_ptr(queue: &Queue, addr: *const c_void, len: usize) -> UrResult<UsmPtr> {
    let owner = resolve(&queue.shared.context, addr as *const u8, len)?;
    // SAFETY: `owner` holds a range checked to cover `len` bytes, or the
    // caller vouches for its own memory (above).
    Ok(UsmPtr::new(addr as *mut u8, owner))
}

/// Waits for the listed events, or for everything enqueued before when the
/// list is empty; `fence` also holds back everything enqueued after.
///
/// # Safety
/// As the enqueue entry points' arguments.
unsafe fn enqueue_wait(
    h_queue: ur_queue_handle_t,
    command_type: ur_command_t,
    fence: bool,
    num_events: u32,
    wait_list: *const ur_event_handle_t,
    ph_event: *mut ur_event_handle_t,
) -> UrResult {
    let queue = obj::<Queue>(h_queue)?;
    let deps = pending_events(num_events, wait_list)?;
    let order = Order { after_all: num_events == 0, fence };
    submit(queue, command_type, Command::Marker, deps, order, false, ph_event)
}

pub unsafe extern "C" fn urEnqueueEventsWait(
    hQueue: ur_queue_handle_t,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| enqueue_wait(hQueue, UR_COMMAND_EVENTS_WAIT, false, numEventsInWaitList, phEventWaitList, phEvent))
}

pub unsafe extern "C" fn urEnqueueEventsWaitWithBarrier(
    hQueue: ur_queue_handle_t,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        enqueue_wait(hQueue, UR_COMMAND_EVENTS_WAIT_WITH_BARRIER, true, numEventsInWaitList, phEventWaitList, phEvent)
    })
}

/// `*phEvent` is only an output here: the device reports no reusable events,
/// so no caller may pass one in.
pub unsafe extern "C" fn urEnqueueEventsWaitWithBarrierExt(
    hQueue: ur_queue_handle_t,
    pProperties: *const ur_exp_enqueue_ext_properties_t,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        obj::<Queue>(hQueue)?;
        if pProperties.as_ref().is_some_and(|p| p.flags & UR_EXP_ENQUEUE_EXT_FLAGS_MASK != 0) {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        // The low-power hint means nothing to host threads.
        enqueue_wait(hQueue, UR_COMMAND_EVENTS_WAIT_WITH_BARRIER, true, numEventsInWaitList, phEventWaitList, phEvent)
    })
}

pub unsafe extern "C" fn urEnqueueUSMFill(
    hQueue: ur_queue_handle_t,
    pMem: *mut c_void,
    patternSize: usize,
    pPattern: *const c_void,
    size: usize,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let queue = obj::<Queue>(hQueue)?;
        non_null(pMem)?;
        non_null(pPattern)?;
        if patternSize == 0
            || size == 0
            || patternSize > size
            || !patternSize.is_power_of_two()
            || !size.is_multiple_of(patternSize)
        {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        let dst = usm_ptr(queue, pMem, size)?;
        let deps = pending_events(numEventsInWaitList, phEventWaitList)?;
        let pattern = Pattern::new(std::slice::from_raw_parts(pPattern as *const u8, patternSize));
        let command = Command::Fill { dst, pattern, size };
        submit(queue, UR_COMMAND_USM_FILL, command, deps, Order::default(), false, phEvent)
    })
}

pub unsafe extern "C" fn urEnqueueUSMMemcpy(
    hQueue: ur_queue_handle_t,
    blocking: bool,
    pDst: *mut c_void,
    pSrc: *const c_void,
    size: usize,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let queue = obj::<Queue>(hQueue)?;
        non_null(pDst)?;
        non_null(pSrc)?;
        if size == 0 {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        let dst = usm_ptr(queue, pDst, size)?;
        let src = usm_ptr(queue, pSrc, size)?;
        if overlaps(pDst as *const u8, size, pSrc as *const u8, size) {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        let deps = pending_events(numEventsInWaitList, phEventWaitList)?;
        submit(
            queue,
            UR_COMMAND_USM_MEMCPY,
            Command::Copy { dst, src, size },
            deps,
            Order::default(),
            blocking,
            phEvent,
        )
    })
}

/// Host memory has nowhere to migrate to: the command only keeps its place
/// in the queue's order.
pub unsafe extern "C" fn urEnqueueUSMPrefetch(
    hQueue: ur_queue_handle_t,
    pMem: *const c_void,
    size: usize,
    flags: ur_usm_migration_flags_t,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let queue = obj::<Queue>(hQueue)?;
        non_null(pMem)?;
        if flags & UR_USM_MIGRATION_FLAGS_MASK != 0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        if size == 0 {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        resolve(&queue.shared.context, pMem as *const u8, size)?;
        let deps = pending_events(numEventsInWaitList, phEventWaitList)?;
        submit(queue, UR_COMMAND_USM_PREFETCH, Command::Marker, deps, Order::default(), false, phEvent)
    })
}

/// Advice is a hint that host memory ignores; the command still takes its
/// place in the queue's order.
pub unsafe extern "C" fn urEnqueueUSMAdvise(
    hQueue: ur_queue_handle_t,
    pMem: *const c_void,
    size: usize,
    advice: ur_usm_advice_flags_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let queue = obj::<Queue>(hQueue)?;
        non_null(pMem)?;
        if advice & UR_USM_ADVICE_FLAGS_MASK != 0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        if size == 0 {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        resolve(&queue.shared.context, pMem as *const u8, size)?;
        submit(queue, UR_COMMAND_USM_ADVISE, Command::Marker, Vec::new(), Order::default(), false, phEvent)
    })
}

pub unsafe extern "C" fn urEnqueueUSMFill2D(
    hQueue: ur_queue_handle_t,
    pMem: *mut c_void,
    pitch: usize,
    patternSize: usize,
    pPattern: *const c_void,
    width: usize,
    height: usize,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let queue = obj::<Queue>(hQueue)?;
        non_null(pMem)?;
        non_null(pPattern)?;
        let area = width.checked_mul(height).ok_or(UR_RESULT_ERROR_INVALID_SIZE)?;
        if pitch == 0
            || pitch < width
            || patternSize == 0
            || patternSize > area
            || !patternSize.is_power_of_two()
            || width == 0
            || height == 0
            || !area.is_multiple_of(patternSize)
            // Each row starts the pattern afresh, so a row holds whole patterns.
            || !width.is_multiple_of(patternSize)
        {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        let dst = usm_ptr(queue, pMem, region_2d_bytes(pitch, height)?)?;
        let deps = pending_events(numEventsInWaitList, phEventWaitList)?;
        let pattern = Pattern::new(std::slice::from_raw_parts(pPattern as *const u8, patternSize));
        let command = Command::Fill2D { dst, pitch, pattern, width, height };
        submit(queue, UR_COMMAND_USM_FILL_2D, command, deps, Order::default(), false, phEvent)
    })
}

pub unsafe extern "C" fn urEnqueueUSMMemcpy2D(
    hQueue: ur_queue_handle_t,
    blocking: bool,
    pDst: *mut c_void,
    dstPitch: usize,
    pSrc: *const c_void,
    srcPitch: usize,
    width: usize,
    height: usize,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let queue = obj::<Queue>(hQueue)?;
        non_null(pDst)?;
        non_null(pSrc)?;
        if srcPitch == 0 || dstPitch == 0 || srcPitch < width || dstPitch < width || height == 0 {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        let dst = usm_ptr(queue, pDst, region_2d_bytes(dstPitch, height)?)?;
        let src = usm_ptr(queue, pSrc, region_2d_bytes(srcPitch, height)?)?;
        let deps = pending_events(numEventsInWaitList, phEventWaitList)?;
        let command = Command::Copy2D { dst, dst_pitch: dstPitch, src, src_pitch: srcPitch, width, height };
        submit(queue, UR_COMMAND_USM_MEMCPY_2D, command, deps, Order::default(), blocking, phEvent)
    })
}
