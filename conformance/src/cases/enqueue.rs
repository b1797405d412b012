//! The USM commands: urEnqueueUSMFill, urEnqueueUSMMemcpy,
//! urEnqueueUSMFill2D, urEnqueueUSMMemcpy2D, urEnqueueUSMPrefetch and
//! urEnqueueUSMAdvise. Every data case checks the bytes, on in-order and
//! out-of-order queues, ordered by events and wait lists.

use crate::cases::common::reserved_flags;
use crate::harness::*;
use crate::ur::Api;
use crate::names::{event_status_name, result_name};
use crate::{check, check_eq, expect_result, expect_success, skip};
use std::ffi::c_void;
use std::ptr::{null, null_mut};
use ur_core::abi::*;

pub const CASES: &[Case] = &[
    Case::device("urEnqueueUSMFill.pattern_sizes", fill_patterns),
    Case::device("urEnqueueUSMFill.every_memory_kind", fill_kinds),
    Case::device("urEnqueueUSMFill.interior_region", fill_region),
    Case::loader("urEnqueueUSMFill.null_queue", fill_null_queue),
    Case::device("urEnqueueUSMFill.null_pointers", fill_null_pointers),
    Case::device("urEnqueueUSMFill.invalid_size", fill_bad_size),
    Case::device("urEnqueueUSMFill.invalid_wait_list", fill_bad_wait_list),
    Case::device("urEnqueueUSMMemcpy.between_memory_kinds", copy_kinds),
    Case::device("urEnqueueUSMMemcpy.blocking", copy_blocking),
    Case::device("urEnqueueUSMMemcpy.event_chain", copy_chain),
    Case::device("urEnqueueUSMMemcpy.in_order_without_events", copy_in_order),
    Case::device("urEnqueueUSMMemcpy.waits_for_other_queue", copy_cross_queue),
    Case::loader("urEnqueueUSMMemcpy.null_queue", copy_null_queue),
    Case::device("urEnqueueUSMMemcpy.null_pointers", copy_null_pointers),
    Case::device("urEnqueueUSMMemcpy.invalid_size", copy_bad_size),
    Case::device("urEnqueueUSMMemcpy.invalid_wait_list", copy_bad_wait_list),
    Case::device("urEnqueueUSMFill2D.rows", fill2d),
    Case::loader("urEnqueueUSMFill2D.null_queue", fill2d_null_queue),
    Case::device("urEnqueueUSMFill2D.null_pointers", fill2d_null_pointers),
    Case::device("urEnqueueUSMFill2D.invalid_size", fill2d_bad_size),
    Case::device("urEnqueueUSMFill2D.invalid_wait_list", fill2d_bad_wait_list),
    Case::device("urEnqueueUSMMemcpy2D.rows", copy2d),
    Case::device("urEnqueueUSMMemcpy2D.blocking", copy2d_blocking),
    Case::loader("urEnqueueUSMMemcpy2D.null_queue", copy2d_null_queue),
    Case::device("urEnqueueUSMMemcpy2D.null_pointers", copy2d_null_pointers),
    Case::device("urEnqueueUSMMemcpy2D.invalid_size", copy2d_bad_size),
    Case::device("urEnqueueUSMMemcpy2D.invalid_wait_list", copy2d_bad_wait_list),
    Case::device("urEnqueueUSMPrefetch.keeps_data", prefetch),
    Case::loader("urEnqueueUSMPrefetch.null_queue", prefetch_null_queue),
    Case::device("urEnqueueUSMPrefetch.null_pointer", prefetch_null_pointer),
    Case::device("urEnqueueUSMPrefetch.invalid_flags", prefetch_bad_flags),
    Case::device("urEnqueueUSMPrefetch.invalid_size", prefetch_bad_size),
    Case::device("urEnqueueUSMPrefetch.invalid_wait_list", prefetch_bad_wait_list),
    Case::device("urEnqueueUSMAdvise.keeps_data", advise),
    Case::loader("urEnqueueUSMAdvise.null_queue", advise_null_queue),
    Case::device("urEnqueueUSMAdvise.null_pointer", advise_null_pointer),
    Case::device("urEnqueueUSMAdvise.invalid_advice", advise_bad_advice),
    Case::device("urEnqueueUSMAdvise.invalid_size", advise_bad_size),
];

/// `pattern` repeated over `size` bytes.
fn repeated(pattern: &[u8], size: usize) -> Vec<u8> {
    pattern.iter().copied().cycle().take(size).collect()
}

// --- urEnqueueUSMFill -----------------------------------------------------

unsafe fn fill_patterns(fx: &DeviceFx) -> CaseResult {
    const SIZE: usize = 1024;
    const GUARD: usize = 256;
    let memory = fx.alloc(UsmKind::Device, SIZE + GUARD)?;
    on_each_queue_kind(fx, |queue, what| {
        for pattern_size in [1usize, 2, 4, 8, 16, 32, 64, 128] {
            let pattern = pattern_bytes(pattern_size, pattern_size as u8);
            let clear = fx.fill(queue, memory.ptr, &[0xcc], SIZE + GUARD, &[])?;
            let filled = fx.fill(queue, memory.ptr, &pattern, SIZE, &[clear.get()])?;
            let data = fx.read_after(queue, memory.ptr, SIZE + GUARD, &[filled.get()])?;
            let mut expected = repeated(&pattern, SIZE);
            expected.resize(SIZE + GUARD, 0xcc);
            compare(&format!("a fill with a {pattern_size}-byte pattern on an {what}"), &data, &expected)?;
        }
        Ok(())
    })
}

unsafe fn fill_kinds(fx: &DeviceFx) -> CaseResult {
    const SIZE: usize = 3 << 20;
    for kind in fx.supported_kinds()? {
        let memory = fx.alloc(kind, SIZE)?;
        let pattern = [1u8, 2, 3, 4];
        let filled = fx.fill(fx.queue, memory.ptr, &pattern, SIZE, &[])?;
        fx.wait(filled.get())?;
        let expected = repeated(&pattern, SIZE);
        if kind != UsmKind::Device {
            compare(
                &format!("{kind:?} memory read by the host"),
                std::slice::from_raw_parts(memory.bytes(), SIZE),
                &expected,
            )?;
        }
        compare(&format!("{kind:?} memory read by a copy"), &fx.read(fx.queue, memory.ptr, SIZE)?, &expected)?;
    }
    Ok(())
}

unsafe fn fill_region(fx: &DeviceFx) -> CaseResult {
    let memory = fx.alloc(UsmKind::Device, 4096)?;
    on_each_queue_kind(fx, |queue, what| {
        let clear = fx.fill(queue, memory.ptr, &[0], 4096, &[])?;
        let part = fx.fill(queue, memory.at(1000), &[7, 8], 2000, &[clear.get()])?;
        let data = fx.read_after(queue, memory.ptr, 4096, &[part.get()])?;
        let mut expected = vec![0u8; 1000];
        expected.extend(repeated(&[7, 8], 2000));
        expected.resize(4096, 0);
        compare(&format!("a fill of bytes 1000..3000 on an {what}"), &data, &expected)
    })
}

unsafe fn fill_null_queue(fx: &LoaderFx) -> CaseResult {
    let (mut byte, pattern) = (0u8, 1u8);
    let (ptr, pattern) = ((&mut byte as *mut u8).cast(), (&pattern as *const u8).cast());
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_HANDLE,
        fx.api.urEnqueueUSMFill(null_mut(), ptr, 1, pattern, 1, 0, null(), null_mut())
    );
    Ok(())
}

unsafe fn fill_null_pointers(fx: &DeviceFx) -> CaseResult {
    let memory = fx.alloc(UsmKind::Device, 64)?;
    let pattern = 1u8;
    let pattern: *const c_void = (&pattern as *const u8).cast();
    for (ptr, pattern, which) in [(null_mut(), pattern, "pMem"), (memory.ptr, null(), "pPattern")] {
        let code = fx.api.urEnqueueUSMFill(fx.queue, ptr, 1, pattern, 64, 0, null(), null_mut())?;
        expect_code(UR_RESULT_ERROR_INVALID_NULL_POINTER, code, &format!("urEnqueueUSMFill with a null {which}"))?;
    }
    Ok(())
}

unsafe fn fill_bad_size(fx: &DeviceFx) -> CaseResult {
    let memory = fx.alloc(UsmKind::Device, 64)?;
    let zeros = [0u8; 16];
    let pattern: *const c_void = zeros.as_ptr().cast();
    let rows = [
        ((0usize, 64usize), "patternSize 0"),
        ((4, 0), "size 0"),
        ((16, 8), "patternSize > size"),
        ((4, 62), "size not a multiple of patternSize"),
        ((4, 128), "size beyond the allocation"),
    ];
    invalid_sizes("urEnqueueUSMFill", rows, |(pattern_size, size)| {
        fx.api.urEnqueueUSMFill(fx.queue, memory.ptr, pattern_size, pattern, size, 0, null(), null_mut())
    })
}

unsafe fn fill_bad_wait_list(fx: &DeviceFx) -> CaseResult {
    let memory = fx.alloc(UsmKind::Device, 64)?;
    let pattern = 1u8;
    bad_wait_lists(fx, |n, events| {
        fx.api.urEnqueueUSMFill(fx.queue, memory.ptr, 1, (&pattern as *const u8).cast(), 64, n, events, null_mut())
    })
}

// --- urEnqueueUSMMemcpy ---------------------------------------------------

unsafe fn copy_kinds(fx: &DeviceFx) -> CaseResult {
    const SIZE: usize = (1 << 20) + 3;
    let kinds = fx.supported_kinds()?;
    let source = pattern_bytes(SIZE, 0x21);
    on_each_queue_kind(fx, |queue, what| {
        for &from in &kinds {
            for &to in &kinds {
                let src = fx.alloc(from, SIZE)?;
                let dst = fx.alloc(to, SIZE)?;
                let written = fx.copy(queue, src.ptr, source.as_ptr().cast(), SIZE, &[])?;
                let copied = fx.copy(queue, dst.ptr, src.ptr, SIZE, &[written.get()])?;
                let data = fx.read_after(queue, dst.ptr, SIZE, &[copied.get()])?;
                compare(&format!("a copy from {from:?} to {to:?} memory on an {what}"), &data, &source)?;
            }
        }
        Ok(())
    })
}

unsafe fn copy_blocking(fx: &DeviceFx) -> CaseResult {
    const SIZE: usize = 8 << 20;
    let memory = fx.alloc(UsmKind::Device, SIZE)?;
    let filled = fx.fill(fx.queue, memory.ptr, &[0x3c], SIZE, &[])?;
    let mut host = vec![0u8; SIZE];
    let mut event = null_mut();
    let waits = [filled.get()];
    expect_success!(fx.api.urEnqueueUSMMemcpy(
        fx.queue,
        true,
        host.as_mut_ptr().cast(),
        memory.ptr,
        SIZE,
        1,
        waits.as_ptr(),
        &mut event
    ));
    let event = fx.own_event(event);
    // A blocking copy has finished when the call returns.
    let status = fx.status(event.get())?;
    check!(status == UR_EVENT_STATUS_COMPLETE, "a blocking copy's event is {} on return", event_status_name(status));
    compare("host memory right after a blocking copy", &host, &vec![0x3c; SIZE])?;
    check_eq!(fx.api.event_info::<ur_command_t>(event.get(), UR_EVENT_INFO_COMMAND_TYPE)?, UR_COMMAND_USM_MEMCPY);
    Ok(())
}

unsafe fn copy_chain(fx: &DeviceFx) -> CaseResult {
    const SIZE: usize = 1 << 20;
    let a = fx.alloc(UsmKind::Device, SIZE)?;
    let b = fx.alloc(UsmKind::Device, SIZE)?;
    let c = fx.alloc(UsmKind::Device, SIZE)?;
    let source = pattern_bytes(SIZE, 0x42);
    on_each_queue_kind(fx, |queue, what| {
        let clear = fx.fill(queue, c.ptr, &[0], SIZE, &[])?;
        let e1 = fx.copy(queue, a.ptr, source.as_ptr().cast(), SIZE, &[])?;
        let e2 = fx.copy(queue, b.ptr, a.ptr, SIZE, &[e1.get()])?;
        let e3 = fx.copy(queue, c.ptr, b.ptr, SIZE, &[e2.get(), clear.get()])?;
        let data = fx.read_after(queue, c.ptr, SIZE, &[e3.get()])?;
        compare(&format!("the end of a chain of copies on an {what}"), &data, &source)
    })
}

unsafe fn copy_in_order(fx: &DeviceFx) -> CaseResult {
    const SIZE: usize = 1 << 20;
    let a = fx.alloc(UsmKind::Device, SIZE)?;
    let b = fx.alloc(UsmKind::Device, SIZE)?;
    let byte = 0x66u8;
    let q = fx.queue;
    // No events at all: the in-order queue alone orders these.
    expect_success!(fx.api.urEnqueueUSMFill(q, a.ptr, 1, (&byte as *const u8).cast(), SIZE, 0, null(), null_mut()));
    expect_success!(fx.api.urEnqueueUSMMemcpy(q, false, b.ptr, a.ptr, SIZE, 0, null(), null_mut()));
    let zero = 0u8;
    expect_success!(fx.api.urEnqueueUSMFill(q, a.ptr, 1, (&zero as *const u8).cast(), SIZE, 0, null(), null_mut()));
    let data = fx.read(q, b.ptr, SIZE)?;
    compare("a copy between two fills of its source on an in-order queue", &data, &vec![byte; SIZE])
}

/// A command on one queue that waits for work of another queue: the host
/// gets control back at once (the commands run asynchronously), the
/// waiting command is never complete before the work it waits for, and the
/// data shows it ran after.
unsafe fn copy_cross_queue(fx: &DeviceFx) -> CaseResult {
    const CHUNK: usize = 32 << 20;
    const COPIES: usize = 64;
    const MARK: usize = 4096;
    let staging = if fx.supports(UsmKind::Host)? { UsmKind::Host } else { UsmKind::Device };
    let src = fx.alloc(staging, CHUNK)?;
    let dst = fx.alloc(UsmKind::Device, CHUNK)?;
    let source = pattern_bytes(CHUNK, 0x17);
    fx.write(fx.queue, src.ptr, &source)?;
    let other = fx.create_queue(0)?;

    // Plenty of work on the fixture queue (2 GiB of copies)...
    let mut last = None;
    for _ in 0..COPIES {
        last = Some(fx.copy(fx.queue, dst.ptr, src.ptr, CHUNK, &[])?);
    }
    let last = last.expect("at least one copy");
    // ...and on the other queue a fill that must wait for all of it.
    let mark = fx.fill(other.get(), dst.ptr, &[0xee], MARK, &[last.get()])?;
    let mark_status = fx.status(mark.get())?;
    let last_status = fx.status(last.get())?;

    check!(
        !(mark_status == UR_EVENT_STATUS_COMPLETE && last_status != UR_EVENT_STATUS_COMPLETE),
        "the waiting fill completed while the copy it waits for was {}",
        event_status_name(last_status)
    );
    check!(
        last_status != UR_EVENT_STATUS_COMPLETE,
        "all {COPIES} copies of {} MiB had completed by the time the enqueue calls returned: commands run synchronously",
        CHUNK >> 20
    );
    fx.wait(mark.get())?;
    check_eq!(fx.status(last.get())?, UR_EVENT_STATUS_COMPLETE);
    let data = fx.read(fx.queue, dst.ptr, 2 * MARK)?;
    let mut expected = vec![0xee; MARK];
    expected.extend_from_slice(&source[MARK..2 * MARK]);
    compare("memory marked by the waiting fill after the copies", &data, &expected)
}

unsafe fn copy_null_queue(fx: &LoaderFx) -> CaseResult {
    let (mut a, b) = (0u8, 0u8);
    let (to, from) = ((&mut a as *mut u8).cast(), (&b as *const u8).cast());
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_HANDLE,
        fx.api.urEnqueueUSMMemcpy(null_mut(), true, to, from, 1, 0, null(), null_mut())
    );
    Ok(())
}

unsafe fn copy_null_pointers(fx: &DeviceFx) -> CaseResult {
    let memory = fx.alloc(UsmKind::Device, 64)?;
    for (dst, src, which) in [(null_mut(), memory.ptr.cast_const(), "pDst"), (memory.ptr, null(), "pSrc")] {
        let code = fx.api.urEnqueueUSMMemcpy(fx.queue, true, dst, src, 64, 0, null(), null_mut())?;
        expect_code(UR_RESULT_ERROR_INVALID_NULL_POINTER, code, &format!("urEnqueueUSMMemcpy with a null {which}"))?;
    }
    Ok(())
}

unsafe fn copy_bad_size(fx: &DeviceFx) -> CaseResult {
    let small = fx.alloc(UsmKind::Device, 64)?;
    let large = fx.alloc(UsmKind::Device, 256)?;
    let rows = [
        ((large.ptr, small.ptr, 0usize), "size 0"),
        ((large.ptr, small.ptr, 128), "size beyond the source allocation"),
        ((small.ptr, large.ptr, 128), "size beyond the destination allocation"),
    ];
    invalid_sizes("urEnqueueUSMMemcpy", rows, |(dst, src, size)| {
        fx.api.urEnqueueUSMMemcpy(fx.queue, true, dst, src, size, 0, null(), null_mut())
    })
}

unsafe fn copy_bad_wait_list(fx: &DeviceFx) -> CaseResult {
    let a = fx.alloc(UsmKind::Device, 64)?;
    let b = fx.alloc(UsmKind::Device, 64)?;
    bad_wait_lists(fx, |n, events| fx.api.urEnqueueUSMMemcpy(fx.queue, false, a.ptr, b.ptr, 64, n, events, null_mut()))
}

// --- 2D commands ------------------------------------------------------------

const PITCH: usize = 64;
const WIDTH: usize = 40;
const HEIGHT: usize = 8;
/// The `(width, height)` that the 2D cases fill and copy.
const REGION: (usize, usize) = (WIDTH, HEIGHT);
/// A wait list of no events.
const NO_WAIT: (u32, *const ur_event_handle_t) = (0, null());

/// `urEnqueueUSMFill2D` of a `(width, height)` region at `(ptr, pitch)`
/// with a `(patternSize, pPattern)` pattern, after a `(count, list)` wait
/// list: the arguments grouped by what they describe.
unsafe fn fill_2d(
    api: &Api,
    queue: ur_queue_handle_t,
    (ptr, pitch): (*mut c_void, usize),
    (pattern_size, pattern): (usize, *const c_void),
    (width, height): (usize, usize),
    (n, wait): (u32, *const ur_event_handle_t),
    event: *mut ur_event_handle_t,
) -> Result<ur_result_t, String> {
    api.urEnqueueUSMFill2D(queue, ptr, pitch, pattern_size, pattern, width, height, n, wait, event)
}

/// `urEnqueueUSMMemcpy2D` of a `(width, height)` region from `(src,
/// srcPitch)` to `(dst, dstPitch)`, grouped like [`fill_2d`].
#[allow(clippy::too_many_arguments)]
unsafe fn copy_2d(
    api: &Api,
    queue: ur_queue_handle_t,
    blocking: bool,
    (dst, dst_pitch): (*mut c_void, usize),
    (src, src_pitch): (*const c_void, usize),
    (width, height): (usize, usize),
    (n, wait): (u32, *const ur_event_handle_t),
    event: *mut ur_event_handle_t,
) -> Result<ur_result_t, String> {
    api.urEnqueueUSMMemcpy2D(queue, blocking, dst, dst_pitch, src, src_pitch, width, height, n, wait, event)
}

/// Skips when the context says it has no 2D command of this kind and the
/// command says so too; fails when the two disagree.
unsafe fn skip_without_2d(fx: &DeviceFx, prop: ur_context_info_t, code: ur_result_t, call: &str) -> CaseResult {
    if code == UR_RESULT_ERROR_UNSUPPORTED_FEATURE {
        let supported = fx.api.context_info::<ur_bool_t>(fx.context, prop)?;
        if supported == 0 {
            skip!("the context reports no support for {call} (UNSUPPORTED_FEATURE)");
        }
        return Err(format!("{call} returned UNSUPPORTED_FEATURE although the context reports support").into());
    }
    Ok(())
}

/// Skips a negative 2D case when the context has no such command at all.
unsafe fn require_2d(fx: &DeviceFx, prop: ur_context_info_t, call: &str) -> CaseResult {
    if fx.api.context_info::<ur_bool_t>(fx.context, prop)? == 0 {
        skip!("the context reports no support for {call}");
    }
    Ok(())
}

unsafe fn fill2d(fx: &DeviceFx) -> CaseResult {
    let memory = fx.alloc(UsmKind::Device, PITCH * HEIGHT)?;
    // Probe support once, on a filled and waited region.
    let probe = [9u8];
    let code = fill_2d(fx.api, fx.queue, (memory.ptr, PITCH), (1, probe.as_ptr().cast()), REGION, NO_WAIT, null_mut())?;
    skip_without_2d(fx, UR_CONTEXT_INFO_USM_FILL2D_SUPPORT, code, "urEnqueueUSMFill2D")?;
    expect_code(UR_RESULT_SUCCESS, code, "urEnqueueUSMFill2D")?;
    expect_success!(fx.api.urQueueFinish(fx.queue));
    on_each_queue_kind(fx, |queue, what| {
        for pattern_size in [1usize, 2, 4, 8] {
            let pattern = pattern_bytes(pattern_size, 0x80);
            let clear = fx.fill(queue, memory.ptr, &[0xcc], PITCH * HEIGHT, &[])?;
            let (to, waits) = ((memory.ptr, PITCH), [clear.get()]);
            let mut event = null_mut();
            let pattern_arg = (pattern_size, pattern.as_ptr().cast());
            expect_success!(fill_2d(fx.api, queue, to, pattern_arg, REGION, wait_list(&waits), &mut event));
            let filled = fx.own_event(event);
            check_eq!(
                fx.api.event_info::<ur_command_t>(filled.get(), UR_EVENT_INFO_COMMAND_TYPE)?,
                UR_COMMAND_USM_FILL_2D
            );
            let data = fx.read_after(queue, memory.ptr, PITCH * HEIGHT, &[filled.get()])?;
            let mut expected = Vec::new();
            let row = repeated(&pattern, WIDTH);
            for _ in 0..HEIGHT {
                expected.extend_from_slice(&row);
                expected.resize(expected.len() + PITCH - WIDTH, 0xcc);
            }
            compare(&format!("a 2D fill with a {pattern_size}-byte pattern on an {what}"), &data, &expected)?;
        }
        Ok(())
    })
}

unsafe fn fill2d_null_queue(fx: &LoaderFx) -> CaseResult {
    let mut memory = [0u8; PITCH * HEIGHT];
    let pattern = 1u8;
    let (to, pattern) = ((memory.as_mut_ptr().cast(), PITCH), (1, (&pattern as *const u8).cast()));
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_HANDLE,
        fill_2d(fx.api, null_mut(), to, pattern, REGION, NO_WAIT, null_mut())
    );
    Ok(())
}

unsafe fn fill2d_null_pointers(fx: &DeviceFx) -> CaseResult {
    require_2d(fx, UR_CONTEXT_INFO_USM_FILL2D_SUPPORT, "urEnqueueUSMFill2D")?;
    let memory = fx.alloc(UsmKind::Device, PITCH * HEIGHT)?;
    let byte = 1u8;
    let pattern: *const c_void = (&byte as *const u8).cast();
    for (ptr, pattern, which) in [(null_mut(), pattern, "pMem"), (memory.ptr, null(), "pPattern")] {
        let code = fill_2d(fx.api, fx.queue, (ptr, PITCH), (1, pattern), REGION, NO_WAIT, null_mut())?;
        expect_code(UR_RESULT_ERROR_INVALID_NULL_POINTER, code, &format!("urEnqueueUSMFill2D with a null {which}"))?;
    }
    Ok(())
}

unsafe fn fill2d_bad_size(fx: &DeviceFx) -> CaseResult {
    require_2d(fx, UR_CONTEXT_INFO_USM_FILL2D_SUPPORT, "urEnqueueUSMFill2D")?;
    let memory = fx.alloc(UsmKind::Device, PITCH * HEIGHT)?;
    let pattern = [0u8; 512];
    // (pitch, patternSize, (width, height)).
    let rows = [
        ((0usize, 1usize, REGION), "pitch 0"),
        ((WIDTH - 1, 1, REGION), "pitch < width"),
        ((PITCH, 0, REGION), "patternSize 0"),
        ((PITCH, 512, REGION), "patternSize > width * height"),
        ((PITCH, 3, (48, HEIGHT)), "a patternSize that is not a power of two"),
        ((PITCH, 1, (0, HEIGHT)), "width 0"),
        ((PITCH, 1, (WIDTH, 0)), "height 0"),
        ((PITCH, 4, (5, 3)), "width * height not a multiple of patternSize"),
        ((PITCH, 1, (WIDTH, HEIGHT + 1)), "pitch * height beyond the allocation"),
    ];
    invalid_sizes("urEnqueueUSMFill2D", rows, |(pitch, pattern_size, region)| {
        let pattern = (pattern_size, pattern.as_ptr().cast());
        fill_2d(fx.api, fx.queue, (memory.ptr, pitch), pattern, region, NO_WAIT, null_mut())
    })
}

unsafe fn fill2d_bad_wait_list(fx: &DeviceFx) -> CaseResult {
    require_2d(fx, UR_CONTEXT_INFO_USM_FILL2D_SUPPORT, "urEnqueueUSMFill2D")?;
    let memory = fx.alloc(UsmKind::Device, PITCH * HEIGHT)?;
    let byte = 1u8;
    let pattern = (1, (&byte as *const u8).cast());
    bad_wait_lists(fx, |n, events| {
        fill_2d(fx.api, fx.queue, (memory.ptr, PITCH), pattern, REGION, (n, events), null_mut())
    })
}

const SRC_PITCH: usize = 48;

/// What a 2D copy of WIDTH x HEIGHT from a SRC_PITCH source leaves in a
/// PITCH destination prefilled with `background`.
fn copied_rows(source: &[u8], background: u8) -> Vec<u8> {
    let mut expected = vec![background; PITCH * HEIGHT];
    for row in 0..HEIGHT {
        expected[row * PITCH..row * PITCH + WIDTH].copy_from_slice(&source[row * SRC_PITCH..row * SRC_PITCH + WIDTH]);
    }
    expected
}

unsafe fn copy2d(fx: &DeviceFx) -> CaseResult {
    let src = fx.alloc(UsmKind::Device, SRC_PITCH * HEIGHT)?;
    let dst = fx.alloc(UsmKind::Device, PITCH * HEIGHT)?;
    let (to, from) = ((dst.ptr, PITCH), (src.ptr.cast_const(), SRC_PITCH));
    let code = copy_2d(fx.api, fx.queue, true, to, from, REGION, NO_WAIT, null_mut())?;
    skip_without_2d(fx, UR_CONTEXT_INFO_USM_MEMCPY2D_SUPPORT, code, "urEnqueueUSMMemcpy2D")?;
    expect_code(UR_RESULT_SUCCESS, code, "urEnqueueUSMMemcpy2D")?;
    let source = pattern_bytes(SRC_PITCH * HEIGHT, 0x31);
    on_each_queue_kind(fx, |queue, what| {
        let written = fx.copy(queue, src.ptr, source.as_ptr().cast(), source.len(), &[])?;
        let clear = fx.fill(queue, dst.ptr, &[0xcc], PITCH * HEIGHT, &[])?;
        let waits = [written.get(), clear.get()];
        let mut event = null_mut();
        expect_success!(copy_2d(fx.api, queue, false, to, from, REGION, wait_list(&waits), &mut event));
        let copied = fx.own_event(event);
        check_eq!(
            fx.api.event_info::<ur_command_t>(copied.get(), UR_EVENT_INFO_COMMAND_TYPE)?,
            UR_COMMAND_USM_MEMCPY_2D
        );
        let data = fx.read_after(queue, dst.ptr, PITCH * HEIGHT, &[copied.get()])?;
        compare(&format!("a 2D copy between device allocations on an {what}"), &data, &copied_rows(&source, 0xcc))
    })
}

unsafe fn copy2d_blocking(fx: &DeviceFx) -> CaseResult {
    let dst = fx.alloc(UsmKind::Device, PITCH * HEIGHT)?;
    let source = pattern_bytes(SRC_PITCH * HEIGHT, 0x55);
    let clear = fx.fill(fx.queue, dst.ptr, &[0xcc], PITCH * HEIGHT, &[])?;
    let waits = [clear.get()];
    let (to, from_host) = ((dst.ptr, PITCH), (source.as_ptr().cast(), SRC_PITCH));
    let code = copy_2d(fx.api, fx.queue, true, to, from_host, REGION, wait_list(&waits), null_mut())?;
    skip_without_2d(fx, UR_CONTEXT_INFO_USM_MEMCPY2D_SUPPORT, code, "urEnqueueUSMMemcpy2D")?;
    expect_code(UR_RESULT_SUCCESS, code, "urEnqueueUSMMemcpy2D(blocking, from host)")?;
    // And back to the host, blocking: the data is there on return.
    let mut back = vec![0u8; SRC_PITCH * HEIGHT];
    let (to_host, from) = ((back.as_mut_ptr().cast(), SRC_PITCH), (dst.ptr.cast_const(), PITCH));
    expect_success!(copy_2d(fx.api, fx.queue, true, to_host, from, REGION, NO_WAIT, null_mut()));
    let expected = copied_rows(&source, 0xcc);
    compare("a 2D copy to the device", &fx.read(fx.queue, dst.ptr, PITCH * HEIGHT)?, &expected)?;
    for row in 0..HEIGHT {
        compare(
            &format!("row {row} of a blocking 2D copy back to the host"),
            &back[row * SRC_PITCH..row * SRC_PITCH + WIDTH],
            &source[row * SRC_PITCH..row * SRC_PITCH + WIDTH],
        )?;
    }
    Ok(())
}

unsafe fn copy2d_null_queue(fx: &LoaderFx) -> CaseResult {
    let (mut a, b) = ([0u8; PITCH * HEIGHT], [0u8; PITCH * HEIGHT]);
    let (to, from) = ((a.as_mut_ptr().cast(), PITCH), (b.as_ptr().cast(), PITCH));
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_HANDLE,
        copy_2d(fx.api, null_mut(), true, to, from, REGION, NO_WAIT, null_mut())
    );
    Ok(())
}

unsafe fn copy2d_null_pointers(fx: &DeviceFx) -> CaseResult {
    require_2d(fx, UR_CONTEXT_INFO_USM_MEMCPY2D_SUPPORT, "urEnqueueUSMMemcpy2D")?;
    let memory = fx.alloc(UsmKind::Device, PITCH * HEIGHT)?;
    for (dst, src, which) in [(null_mut(), memory.ptr.cast_const(), "pDst"), (memory.ptr, null(), "pSrc")] {
        let code = copy_2d(fx.api, fx.queue, true, (dst, PITCH), (src, PITCH), REGION, NO_WAIT, null_mut())?;
        expect_code(UR_RESULT_ERROR_INVALID_NULL_POINTER, code, &format!("urEnqueueUSMMemcpy2D with a null {which}"))?;
    }
    Ok(())
}

unsafe fn copy2d_bad_size(fx: &DeviceFx) -> CaseResult {
    require_2d(fx, UR_CONTEXT_INFO_USM_MEMCPY2D_SUPPORT, "urEnqueueUSMMemcpy2D")?;
    let src = fx.alloc(UsmKind::Device, SRC_PITCH * HEIGHT)?;
    let dst = fx.alloc(UsmKind::Device, PITCH * HEIGHT)?;
    // (dstPitch, srcPitch, (width, height)).
    let rows = [
        ((PITCH, 0usize, (0usize, HEIGHT)), "srcPitch 0"),
        ((0, SRC_PITCH, (0, HEIGHT)), "dstPitch 0"),
        ((PITCH, SRC_PITCH, (SRC_PITCH + 1, HEIGHT)), "srcPitch < width"),
        ((SRC_PITCH, PITCH, (SRC_PITCH + 1, 2)), "dstPitch < width"),
        ((PITCH, SRC_PITCH, (WIDTH, 0)), "height 0"),
        ((PITCH, SRC_PITCH, (WIDTH, HEIGHT + 2)), "srcPitch * height beyond the source"),
        ((PITCH * 2, SRC_PITCH, REGION), "dstPitch * height beyond the destination"),
    ];
    invalid_sizes("urEnqueueUSMMemcpy2D", rows, |(dst_pitch, src_pitch, region)| {
        let (to, from) = ((dst.ptr, dst_pitch), (src.ptr.cast_const(), src_pitch));
        copy_2d(fx.api, fx.queue, true, to, from, region, NO_WAIT, null_mut())
    })
}

unsafe fn copy2d_bad_wait_list(fx: &DeviceFx) -> CaseResult {
    require_2d(fx, UR_CONTEXT_INFO_USM_MEMCPY2D_SUPPORT, "urEnqueueUSMMemcpy2D")?;
    let a = fx.alloc(UsmKind::Device, PITCH * HEIGHT)?;
    let b = fx.alloc(UsmKind::Device, PITCH * HEIGHT)?;
    let (to, from) = ((a.ptr, PITCH), (b.ptr.cast_const(), PITCH));
    bad_wait_lists(fx, |n, events| copy_2d(fx.api, fx.queue, false, to, from, REGION, (n, events), null_mut()))
}

// --- urEnqueueUSMPrefetch and urEnqueueUSMAdvise ----------------------------

/// Shared memory where the device has it (what prefetch and advice are
/// for), device memory otherwise.
unsafe fn migratable<'a>(fx: &DeviceFx<'a>, size: usize) -> Result<Usm<'a>, Outcome> {
    let kind = if fx.supports(UsmKind::Shared)? { UsmKind::Shared } else { UsmKind::Device };
    fx.alloc(kind, size)
}

unsafe fn prefetch(fx: &DeviceFx) -> CaseResult {
    const SIZE: usize = 1 << 20;
    let memory = migratable(fx, SIZE)?;
    let source = pattern_bytes(SIZE, 0x61);
    on_each_queue_kind(fx, |queue, what| {
        let written = fx.copy(queue, memory.ptr, source.as_ptr().cast(), SIZE, &[])?;
        let mut last = written;
        for flags in [UR_USM_MIGRATION_FLAG_HOST_TO_DEVICE.0, UR_USM_MIGRATION_FLAG_DEVICE_TO_HOST.0] {
            let waits = [last.get()];
            let mut event = null_mut();
            expect_success!(fx.api.urEnqueueUSMPrefetch(queue, memory.ptr, SIZE, flags, 1, waits.as_ptr(), &mut event));
            let prefetched = fx.own_event(event);
            check_eq!(
                fx.api.event_info::<ur_command_t>(prefetched.get(), UR_EVENT_INFO_COMMAND_TYPE)?,
                UR_COMMAND_USM_PREFETCH
            );
            last = prefetched;
        }
        let data = fx.read_after(queue, memory.ptr, SIZE, &[last.get()])?;
        compare(&format!("memory after prefetches on an {what}"), &data, &source)
    })
}

unsafe fn prefetch_null_queue(fx: &LoaderFx) -> CaseResult {
    let byte = 0u8;
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_HANDLE,
        fx.api.urEnqueueUSMPrefetch(null_mut(), (&byte as *const u8).cast(), 1, 0, 0, null(), null_mut())
    );
    Ok(())
}

unsafe fn prefetch_null_pointer(fx: &DeviceFx) -> CaseResult {
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_POINTER,
        fx.api.urEnqueueUSMPrefetch(fx.queue, null(), 64, 0, 0, null(), null_mut())
    );
    Ok(())
}

unsafe fn prefetch_bad_flags(fx: &DeviceFx) -> CaseResult {
    let memory = migratable(fx, 64)?;
    let flags = const { reserved_flags(UR_USM_MIGRATION_FLAGS_MASK, UR_USM_MIGRATION_FLAG_DEVICE_TO_HOST.0 << 1) };
    expect_result!(
        UR_RESULT_ERROR_INVALID_ENUMERATION,
        fx.api.urEnqueueUSMPrefetch(fx.queue, memory.ptr, 64, flags, 0, null(), null_mut())
    );
    Ok(())
}

/// The wrong sizes of a prefetch or advice on 64 bytes of memory.
const BAD_SIZES_OF_64: [(usize, &str); 2] = [(0, "size 0"), (128, "size beyond the allocation")];

unsafe fn prefetch_bad_size(fx: &DeviceFx) -> CaseResult {
    let memory = migratable(fx, 64)?;
    invalid_sizes("urEnqueueUSMPrefetch", BAD_SIZES_OF_64, |size| {
        fx.api.urEnqueueUSMPrefetch(fx.queue, memory.ptr, size, 0, 0, null(), null_mut())
    })
}

unsafe fn prefetch_bad_wait_list(fx: &DeviceFx) -> CaseResult {
    let memory = migratable(fx, 64)?;
    bad_wait_lists(fx, |n, events| fx.api.urEnqueueUSMPrefetch(fx.queue, memory.ptr, 64, 0, n, events, null_mut()))
}

unsafe fn advise(fx: &DeviceFx) -> CaseResult {
    const SIZE: usize = 1 << 20;
    let memory = migratable(fx, SIZE)?;
    let source = pattern_bytes(SIZE, 0x71);
    fx.write(fx.queue, memory.ptr, &source)?;
    let mut event = null_mut();
    expect_success!(fx.api.urEnqueueUSMAdvise(fx.queue, memory.ptr, SIZE, UR_USM_ADVICE_FLAG_DEFAULT.0, &mut event));
    let advised = fx.own_event(event);
    fx.wait(advised.get())?;
    check_eq!(fx.api.event_info::<ur_command_t>(advised.get(), UR_EVENT_INFO_COMMAND_TYPE)?, UR_COMMAND_USM_ADVISE);
    // A hint the device cannot use is ignored, or refused as adapter-specific.
    let code =
        fx.api.urEnqueueUSMAdvise(fx.queue, memory.ptr, SIZE, UR_USM_ADVICE_FLAG_SET_READ_MOSTLY.0, null_mut())?;
    check!(
        code == UR_RESULT_SUCCESS || code == UR_RESULT_ERROR_ADAPTER_SPECIFIC,
        "urEnqueueUSMAdvise(SET_READ_MOSTLY) returned {}",
        result_name(code)
    );
    compare("memory after advice", &fx.read(fx.queue, memory.ptr, SIZE)?, &source)
}

unsafe fn advise_null_queue(fx: &LoaderFx) -> CaseResult {
    let byte = 0u8;
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_HANDLE,
        fx.api.urEnqueueUSMAdvise(null_mut(), (&byte as *const u8).cast(), 1, UR_USM_ADVICE_FLAG_DEFAULT.0, null_mut())
    );
    Ok(())
}

unsafe fn advise_null_pointer(fx: &DeviceFx) -> CaseResult {
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_POINTER,
        fx.api.urEnqueueUSMAdvise(fx.queue, null(), 64, UR_USM_ADVICE_FLAG_DEFAULT.0, null_mut())
    );
    Ok(())
}

unsafe fn advise_bad_advice(fx: &DeviceFx) -> CaseResult {
    let memory = migratable(fx, 64)?;
    let advice = const { reserved_flags(UR_USM_ADVICE_FLAGS_MASK, 1 << 17) };
    expect_result!(
        UR_RESULT_ERROR_INVALID_ENUMERATION,
        fx.api.urEnqueueUSMAdvise(fx.queue, memory.ptr, 64, advice, null_mut())
    );
    Ok(())
}

unsafe fn advise_bad_size(fx: &DeviceFx) -> CaseResult {
    let memory = migratable(fx, 64)?;
    invalid_sizes("urEnqueueUSMAdvise", BAD_SIZES_OF_64, |size| {
        fx.api.urEnqueueUSMAdvise(fx.queue, memory.ptr, size, UR_USM_ADVICE_FLAG_DEFAULT.0, null_mut())
    })
}
