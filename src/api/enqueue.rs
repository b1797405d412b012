//! `urEnqueueEventsWait*` and the USM commands of `urEnqueueUSM*`.

use super::{deliver, obj, wait_list};
use crate::abi::*;
use crate::boundary::{ffi_call, non_null};
use crate::hal::{region_bytes, Backend, Completion, Events, UsmCommand, UsmCopy, UsmCopy2D, UsmFill, UsmFill2D, UsmHint};
use crate::queue::object::{Enqueued, Queue, RawQueue};
use crate::UrResult;
use core::ffi::c_void;

/// Enqueues a checked command; blocks for it when asked (returning its
/// failure, and no event), and hands out its event when one was asked for.
///
/// # Safety
/// `out` is null or valid for a write.
pub(super) unsafe fn submit<B: Backend>(
    queue: &Queue<B>,
    command: UsmCommand<'_>,
    waits: Events<'_, B>,
    blocking: bool,
    out: *mut ur_event_handle_t,
) -> UrResult {
    enqueue_with::<B>(queue, blocking, out, |completion| dispatch::<B>(queue, command, waits, completion))
}

/// [`submit`] of whatever `enqueue` hands the backend: a blocking call
/// waits for the event and is a host synchronisation point for the pools.
///
/// # Safety
/// `out` is null or valid for a write.
pub(super) unsafe fn enqueue_with<B: Backend>(
    queue: &Queue<B>,
    blocking: bool,
    out: *mut ur_event_handle_t,
    enqueue: impl FnOnce(Completion) -> Enqueued<B>,
) -> UrResult {
    let completion = Completion { want_event: blocking || !out.is_null(), blocking };
    let event = enqueue(completion)?;
    if blocking {
        if let Some(e) = &event {
            let outcome = e.wait();
            queue.context.collect_pools();
            outcome?;
        }
    }
    deliver(out, event);
    Ok(())
}

/// The backend's method for `command`.
pub(super) fn dispatch<B: Backend>(queue: &Queue<B>, command: UsmCommand<'_>, waits: Events<'_, B>, c: Completion) -> Enqueued<B> {
    type R<B> = <B as Backend>::RawQueue;
    match command {
        UsmCommand::Wait { .. } => R::<B>::marker(queue, command.command_type(), waits, c),
        UsmCommand::Fill(fill) => R::<B>::fill(queue, fill, waits, c),
        UsmCommand::Copy(copy) => R::<B>::copy(queue, copy, waits, c),
        UsmCommand::Fill2D(fill) => R::<B>::fill_2d(queue, fill, waits, c),
        UsmCommand::Copy2D(copy) => R::<B>::copy_2d(queue, copy, waits, c),
        UsmCommand::Prefetch(hint) => R::<B>::prefetch(queue, hint, waits, c),
        // Advice has no wait list.
        UsmCommand::Advise(hint) => R::<B>::advise(queue, hint, c),
    }
}

/// When `ptr` lies in a live USM allocation of the context, `len` bytes from
/// it must stay inside: else `INVALID_SIZE`. Other pointers are the
/// backend's to accept or refuse (a CPU device takes host memory).
pub(super) fn check_range<B: Backend>(queue: &Queue<B>, ptr: *const c_void, len: usize) -> UrResult<bool> {
    match queue.context.usm_range(ptr) {
        Some((base, size)) if len > size - (ptr as usize - base) => Err(UR_RESULT_ERROR_INVALID_SIZE),
        found => Ok(found.is_some()),
    }
}

/// The fills and copies start alike: the queue, then the destination, then
/// the pattern or source.
///
/// # Safety
/// `h` is null or readable.
unsafe fn queue_and_pointers<'a, B: Backend>(
    h: ur_queue_handle_t,
    dst: *const c_void,
    src: *const c_void,
) -> UrResult<&'a Queue<B>> {
    let queue = obj::<B, Queue<B>>(h)?;
    non_null(dst)?;
    non_null(src)?;
    Ok(queue)
}

/// The 2D commands end their checks alike: each region (`(ptr, pitch)` of
/// `height` rows of `width` bytes) inside its allocation, then the
/// context's support for 2D commands.
fn check_2d<B: Backend>(queue: &Queue<B>, regions: &[(*const c_void, usize)], width: usize, height: usize) -> UrResult {
    for &(ptr, pitch) in regions {
        check_range::<B>(queue, ptr, region_bytes(pitch, width, height)?)?;
    }
    if !queue.context.usm_2d_supported() {
        return Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
    }
    Ok(())
}

/// A fill's sizes: a power-of-two pattern no larger than the fill, which
/// is whole patterns; else `INVALID_SIZE`.
pub(super) fn fill_sizes(pattern_size: usize, size: usize) -> UrResult {
    let whole = pattern_size != 0 && size.is_multiple_of(pattern_size);
    if size == 0 || pattern_size > size || !pattern_size.is_power_of_two() || !whole {
        return Err(UR_RESULT_ERROR_INVALID_SIZE);
    }
    Ok(())
}

pub(super) fn overlaps(a: *const c_void, a_len: usize, b: *const c_void, b_len: usize) -> bool {
    let (a, b) = (a as usize, b as usize);
    a < b.saturating_add(b_len) && b < a.saturating_add(a_len)
}

/// # Safety
/// The arguments of an enqueue entry point.
unsafe fn events_wait_common<B: Backend>(
    h: ur_queue_handle_t,
    barrier: bool,
    count: u32,
    list: *const ur_event_handle_t,
    out: *mut ur_event_handle_t,
) -> UrResult {
    let queue = obj::<B, Queue<B>>(h)?;
    let waits = wait_list::<B>(count, list)?;
    submit::<B>(queue, UsmCommand::Wait { barrier }, waits, false, out)
}

/// `urEnqueueEventsWait`, and `urEnqueueEventsWaitWithBarrier` as
/// `BARRIER`.
pub(super) unsafe extern "C" fn events_wait<B: Backend, const BARRIER: bool>(
    h: ur_queue_handle_t,
    count: u32,
    list: *const ur_event_handle_t,
    out: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| events_wait_common::<B>(h, BARRIER, count, list, out))
}

/// The low-power hint changes nothing anywhere here.
pub(super) unsafe extern "C" fn events_wait_with_barrier_ext<B: Backend>(
    h: ur_queue_handle_t,
    properties: *const ur_exp_enqueue_ext_properties_t,
    count: u32,
    list: *const ur_event_handle_t,
    out: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        obj::<B, Queue<B>>(h)?;
        if properties.as_ref().is_some_and(|p| p.flags & UR_EXP_ENQUEUE_EXT_FLAGS_MASK != 0) {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        events_wait_common::<B>(h, true, count, list, out)
    })
}

pub(super) unsafe extern "C" fn usm_fill<B: Backend>(
    h: ur_queue_handle_t,
    dst: *mut c_void,
    pattern_size: usize,
    pattern: *const c_void,
    size: usize,
    count: u32,
    list: *const ur_event_handle_t,
    out: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let queue = queue_and_pointers::<B>(h, dst, pattern)?;
        fill_sizes(pattern_size, size)?;
        let in_usm = check_range::<B>(queue, dst, size)?;
        let waits = wait_list::<B>(count, list)?;
        // The pattern is read here: the caller may reuse its storage at once.
        let pattern = std::slice::from_raw_parts(pattern as *const u8, pattern_size);
        submit::<B>(queue, UsmCommand::Fill(UsmFill { command: UR_COMMAND_USM_FILL, dst, pattern, size, in_usm }), waits, false, out)
    })
}

pub(super) unsafe extern "C" fn usm_memcpy<B: Backend>(
    h: ur_queue_handle_t,
    blocking: bool,
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    count: u32,
    list: *const ur_event_handle_t,
    out: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let queue = queue_and_pointers::<B>(h, dst, src)?;
        if size == 0 {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        let dst_in_usm = check_range::<B>(queue, dst, size)?;
        let src_in_usm = check_range::<B>(queue, src, size)?;
        if overlaps(dst, size, src, size) {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        let waits = wait_list::<B>(count, list)?;
        let in_usm = dst_in_usm && src_in_usm;
        submit::<B>(queue, UsmCommand::Copy(UsmCopy { command: UR_COMMAND_USM_MEMCPY, dst, src, size, in_usm }), waits, blocking, out)
    })
}

pub(super) unsafe extern "C" fn usm_fill_2d<B: Backend>(
    h: ur_queue_handle_t,
    dst: *mut c_void,
    pitch: usize,
    pattern_size: usize,
    pattern: *const c_void,
    width: usize,
    height: usize,
    count: u32,
    list: *const ur_event_handle_t,
    out: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let queue = queue_and_pointers::<B>(h, dst, pattern)?;
        let area = width.checked_mul(height).ok_or(UR_RESULT_ERROR_INVALID_SIZE)?;
        if pitch == 0
            || pitch < width
            || pattern_size == 0
            || pattern_size > area
            || !pattern_size.is_power_of_two()
            || width == 0
            || height == 0
            // Each row starts the pattern afresh, so a row holds whole patterns.
            || !width.is_multiple_of(pattern_size)
        {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        check_2d::<B>(queue, &[(dst, pitch)], width, height)?;
        let waits = wait_list::<B>(count, list)?;
        let pattern = std::slice::from_raw_parts(pattern as *const u8, pattern_size);
        let command = UsmCommand::Fill2D(UsmFill2D { dst, pitch, pattern, width, height });
        submit::<B>(queue, command, waits, false, out)
    })
}

pub(super) unsafe extern "C" fn usm_memcpy_2d<B: Backend>(
    h: ur_queue_handle_t,
    blocking: bool,
    dst: *mut c_void,
    dst_pitch: usize,
    src: *const c_void,
    src_pitch: usize,
    width: usize,
    height: usize,
    count: u32,
    list: *const ur_event_handle_t,
    out: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let queue = queue_and_pointers::<B>(h, dst, src)?;
        if src_pitch == 0 || dst_pitch == 0 || src_pitch < width || dst_pitch < width || width == 0 || height == 0 {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        check_2d::<B>(queue, &[(dst, dst_pitch), (src, src_pitch)], width, height)?;
        let waits = wait_list::<B>(count, list)?;
        let command = UsmCommand::Copy2D(UsmCopy2D { command: UR_COMMAND_USM_MEMCPY_2D, dst, dst_pitch, src, src_pitch, width, height });
        submit::<B>(queue, command, waits, blocking, out)
    })
}

/// The memory hints, prefetch and advice, share their checks: a pointer,
/// flags within `mask`, and a range inside its allocation.
///
/// # Safety
/// `h` is null or readable.
unsafe fn hint_target<'a, B: Backend>(
    h: ur_queue_handle_t,
    ptr: *const c_void,
    size: usize,
    flags: u32,
    mask: u32,
) -> UrResult<&'a Queue<B>> {
    let queue = obj::<B, Queue<B>>(h)?;
    non_null(ptr)?;
    if flags & mask != 0 {
        return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
    }
    if size == 0 {
        return Err(UR_RESULT_ERROR_INVALID_SIZE);
    }
    check_range::<B>(queue, ptr, size)?;
    Ok(queue)
}

pub(super) unsafe extern "C" fn usm_prefetch<B: Backend>(
    h: ur_queue_handle_t,
    ptr: *const c_void,
    size: usize,
    flags: ur_usm_migration_flags_t,
    count: u32,
    list: *const ur_event_handle_t,
    out: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let queue = hint_target::<B>(h, ptr, size, flags, UR_USM_MIGRATION_FLAGS_MASK)?;
        let waits = wait_list::<B>(count, list)?;
        submit::<B>(queue, UsmCommand::Prefetch(UsmHint { ptr, size, flags }), waits, false, out)
    })
}

/// Advice has no wait list; it is ordered like any command of the queue.
pub(super) unsafe extern "C" fn usm_advise<B: Backend>(
    h: ur_queue_handle_t,
    ptr: *const c_void,
    size: usize,
    advice: ur_usm_advice_flags_t,
    out: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let queue = hint_target::<B>(h, ptr, size, advice, UR_USM_ADVICE_FLAGS_MASK)?;
        submit::<B>(queue, UsmCommand::Advise(UsmHint { ptr, size, flags: advice }), Events::none(), false, out)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_is_detected_only_when_bytes_are_shared() {
        let base = 0x1000 as *const c_void;
        assert!(overlaps(base, 16, base.wrapping_byte_add(15), 16));
        assert!(!overlaps(base, 16, base.wrapping_byte_add(16), 16));
        assert!(overlaps(base, 16, base, 1));
    }

    #[test]
    fn a_region_ends_with_its_last_row() {
        assert_eq!(region_bytes(8, 4, 3), Ok(20));
        assert_eq!(region_bytes(usize::MAX, 1, 3), Err(UR_RESULT_ERROR_INVALID_SIZE));
    }
}
