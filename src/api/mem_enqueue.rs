//! `urEnqueueMemBuffer{Read,Write,Copy,Fill,Map}`, their `Rect` forms and
//! `urEnqueueMemUnmap` (`spec/memory_objects.md`). A buffer's storage is one address every
//! device of its context reaches, so each command is the USM command of
//! that address, reporting its own command type; a map hands out the
//! address and orders a marker.

use super::enqueue::{check_range, enqueue_with, fill_sizes, overlaps, submit};
use super::{obj, wait_list};
use crate::abi::*;
use crate::boundary::{ffi_call, non_null, write_out};
use crate::hal::{Backend, UsmCommand, UsmCopy, UsmCopy2D, UsmFill};
use crate::mem::Mem;
use crate::queue::object::{Queue, RawQueue};
use crate::UrResult;
use core::ffi::c_void;

/// The queue and a buffer of its context (another context's, or a dead
/// one, is `INVALID_MEM_OBJECT`).
///
/// # Safety
/// The handles are null or readable.
unsafe fn queue_and_buffer<'a, B: Backend>(q: ur_queue_handle_t, m: ur_mem_handle_t) -> UrResult<(&'a Queue<B>, &'a Mem<B>)> {
    let queue = obj::<B, Queue<B>>(q)?;
    let mem = obj::<B, Mem<B>>(m)?;
    if !std::ptr::eq(&*mem.context, &*queue.context) {
        return Err(UR_RESULT_ERROR_INVALID_MEM_OBJECT);
    }
    Ok((queue, mem))
}

/// The address of `size` bytes from `offset` of `mem`: `INVALID_SIZE` past
/// its end.
fn region<B: Backend>(mem: &Mem<B>, offset: usize, size: usize) -> UrResult<*mut c_void> {
    match offset.checked_add(size) {
        Some(end) if end <= mem.size => Ok((mem.address() + offset) as *mut c_void),
        _ => Err(UR_RESULT_ERROR_INVALID_SIZE),
    }
}

/// A copy between a buffer's region and host memory (or between two
/// regions), as a USM copy reporting `command`. A copy of 0 bytes runs
/// nothing: it is a marker (`spec/memory_objects.md`).
///
/// # Safety
/// `out` is null or valid for a write; the wait list was checked.
#[allow(clippy::too_many_arguments)]
unsafe fn copy<B: Backend>(
    queue: &Queue<B>,
    command: ur_command_t,
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    count: u32,
    list: *const ur_event_handle_t,
    blocking: bool,
    out: *mut ur_event_handle_t,
) -> UrResult {
    let waits = wait_list::<B>(count, list)?;
    if size == 0 {
        return marker::<B>(queue, command, waits, blocking, out);
    }
    let in_usm = check_range::<B>(queue, dst, size)? && check_range::<B>(queue, src, size)?;
    submit::<B>(queue, UsmCommand::Copy(UsmCopy { command, dst, src, size, in_usm }), waits, blocking, out)
}

pub(super) unsafe extern "C" fn buffer_read<B: Backend>(
    q: ur_queue_handle_t,
    m: ur_mem_handle_t,
    blocking: bool,
    offset: usize,
    size: usize,
    dst: *mut c_void,
    count: u32,
    list: *const ur_event_handle_t,
    out: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let (queue, mem) = queue_and_buffer::<B>(q, m)?;
        non_null(dst)?;
        let src = region(mem, offset, size)?;
        copy::<B>(queue, UR_COMMAND_MEM_BUFFER_READ, dst, src, size, count, list, blocking, out)
    })
}

pub(super) unsafe extern "C" fn buffer_write<B: Backend>(
    q: ur_queue_handle_t,
    m: ur_mem_handle_t,
    blocking: bool,
    offset: usize,
    size: usize,
    src: *const c_void,
    count: u32,
    list: *const ur_event_handle_t,
    out: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let (queue, mem) = queue_and_buffer::<B>(q, m)?;
        non_null(src)?;
        let dst = region(mem, offset, size)?;
        copy::<B>(queue, UR_COMMAND_MEM_BUFFER_WRITE, dst, src, size, count, list, blocking, out)
    })
}

/// Overlapping ranges of one storage (one buffer, or sub-buffers of one
/// root) are `INVALID_VALUE`, as for `urEnqueueUSMMemcpy`.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe extern "C" fn buffer_copy<B: Backend>(
    q: ur_queue_handle_t,
    src_mem: ur_mem_handle_t,
    dst_mem: ur_mem_handle_t,
    src_offset: usize,
    dst_offset: usize,
    size: usize,
    count: u32,
    list: *const ur_event_handle_t,
    out: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let (queue, src_buffer) = queue_and_buffer::<B>(q, src_mem)?;
        let (_, dst_buffer) = queue_and_buffer::<B>(q, dst_mem)?;
        let src = region(src_buffer, src_offset, size)?;
        let dst = region(dst_buffer, dst_offset, size)?;
        if overlaps(dst, size, src, size) {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        copy::<B>(queue, UR_COMMAND_MEM_BUFFER_COPY, dst, src, size, count, list, false, out)
    })
}

#[allow(clippy::too_many_arguments)]
pub(super) unsafe extern "C" fn buffer_fill<B: Backend>(
    q: ur_queue_handle_t,
    m: ur_mem_handle_t,
    pattern: *const c_void,
    pattern_size: usize,
    offset: usize,
    size: usize,
    count: u32,
    list: *const ur_event_handle_t,
    out: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let (queue, mem) = queue_and_buffer::<B>(q, m)?;
        non_null(pattern)?;
        fill_sizes(pattern_size, size)?;
        if !offset.is_multiple_of(pattern_size) {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        let dst = region(mem, offset, size)?;
        let waits = wait_list::<B>(count, list)?;
        // The pattern is read here: the caller may reuse its storage at once.
        let pattern = std::slice::from_raw_parts(pattern as *const u8, pattern_size);
        let in_usm = check_range::<B>(queue, dst, size)?;
        let fill = UsmFill { command: UR_COMMAND_MEM_BUFFER_FILL, dst, pattern, size, in_usm };
        submit::<B>(queue, UsmCommand::Fill(fill), waits, false, out)
    })
}

/// The map's pointer is the region's address, handed out at once; the map
/// is a marker, complete once what it waits for is.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe extern "C" fn buffer_map<B: Backend>(
    q: ur_queue_handle_t,
    m: ur_mem_handle_t,
    blocking: bool,
    flags: ur_map_flags_t,
    offset: usize,
    size: usize,
    count: u32,
    list: *const ur_event_handle_t,
    out: *mut ur_event_handle_t,
    ret_map: *mut *mut c_void,
) -> ur_result_t {
    ffi_call(|| {
        let (queue, mem) = queue_and_buffer::<B>(q, m)?;
        if flags & UR_MAP_FLAGS_MASK != 0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        non_null(ret_map)?;
        let invalidate = flags & UR_MAP_FLAG_WRITE_INVALIDATE_REGION.0 != 0;
        if invalidate && flags & (UR_MAP_FLAG_READ.0 | UR_MAP_FLAG_WRITE.0) != 0 {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        if size == 0 {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        region(mem, offset, size)?;
        let waits = wait_list::<B>(count, list)?;
        marker::<B>(queue, UR_COMMAND_MEM_BUFFER_MAP, waits, blocking, out)?;
        write_out(ret_map, mem.map(offset, size))
    })
}

pub(super) unsafe extern "C" fn unmap<B: Backend>(
    q: ur_queue_handle_t,
    m: ur_mem_handle_t,
    mapped: *mut c_void,
    count: u32,
    list: *const ur_event_handle_t,
    out: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let (queue, mem) = queue_and_buffer::<B>(q, m)?;
        non_null(mapped)?;
        let waits = wait_list::<B>(count, list)?;
        mem.unmap(mapped).ok_or(UR_RESULT_ERROR_INVALID_VALUE)?;
        marker::<B>(queue, UR_COMMAND_MEM_UNMAP, waits, false, out)
    })
}

/// A marker reporting `command`; blocks for it when asked.
///
/// # Safety
/// `out` is null or valid for a write.
unsafe fn marker<B: Backend>(
    queue: &Queue<B>,
    command: ur_command_t,
    waits: crate::hal::Events<'_, B>,
    blocking: bool,
    out: *mut ur_event_handle_t,
) -> UrResult {
    enqueue_with::<B>(queue, blocking, out, |c| B::RawQueue::marker(queue, command, waits, c))
}

/// One side of a rect command: where its byte `(0, 0, 0)` lies from the
/// side's base, and its pitches (a zero pitch given is tight).
#[derive(Clone, Copy)]
struct Side {
    offset: usize,
    row: usize,
    slice: usize,
}

/// A region's extent in bytes, rows and slices: `INVALID_SIZE` when any is
/// zero or past `usize`.
fn extent(region: ur_rect_region_t) -> UrResult<(usize, usize, usize)> {
    let dim = |v: u64| usize::try_from(v).ok().filter(|&v| v != 0).ok_or(UR_RESULT_ERROR_INVALID_SIZE);
    Ok((dim(region.width)?, dim(region.height)?, dim(region.depth)?))
}

/// A side's layout (`spec/memory_objects.md`): a row pitch below the width,
/// a slice pitch below a slice's rows or not a multiple of the row pitch,
/// or any overflow, is `INVALID_SIZE`.
fn side(origin: ur_rect_offset_t, row_pitch: usize, slice_pitch: usize, region: ur_rect_region_t) -> UrResult<Side> {
    let (width, height, _) = extent(region)?;
    let row = if row_pitch == 0 { width } else { row_pitch };
    let rows = height.checked_mul(row).ok_or(UR_RESULT_ERROR_INVALID_SIZE)?;
    let slice = if slice_pitch == 0 { rows } else { slice_pitch };
    if row < width || slice < rows || !slice.is_multiple_of(row) {
        return Err(UR_RESULT_ERROR_INVALID_SIZE);
    }
    let at = |v: u64, pitch: usize| usize::try_from(v).ok().and_then(|v| v.checked_mul(pitch));
    let offset = [at(origin.x, 1), at(origin.y, row), at(origin.z, slice)]
        .into_iter()
        .try_fold(0usize, |sum, part| sum.checked_add(part?))
        .ok_or(UR_RESULT_ERROR_INVALID_SIZE)?;
    Ok(Side { offset, row, slice })
}

/// The bytes from a side's base to the end of its region.
fn side_end(side: Side, region: ur_rect_region_t) -> UrResult<usize> {
    let (width, height, depth) = extent(region)?;
    let last = (depth - 1).checked_mul(side.slice).zip((height - 1).checked_mul(side.row));
    last.and_then(|(s, r)| side.offset.checked_add(s)?.checked_add(r)?.checked_add(width))
        .ok_or(UR_RESULT_ERROR_INVALID_SIZE)
}

/// The address of a buffer side's region, checked to end inside `mem`.
fn buffer_side<B: Backend>(mem: &Mem<B>, side: Side, region: ur_rect_region_t) -> UrResult<*mut c_void> {
    if side_end(side, region)? > mem.size {
        return Err(UR_RESULT_ERROR_INVALID_SIZE);
    }
    Ok((mem.address() + side.offset) as *mut c_void)
}

/// A rect copy between two sides as one pitched 2D copy: its rows must be
/// evenly spaced on both sides (one slice, or slices of exactly their
/// rows); other layouts are not served yet (`UNSUPPORTED_FEATURE`).
///
/// # Safety
/// `out` is null or valid for a write.
#[allow(clippy::too_many_arguments)]
unsafe fn rect<B: Backend>(
    queue: &Queue<B>,
    command: ur_command_t,
    (dst, dst_side): (*mut c_void, Side),
    (src, src_side): (*const c_void, Side),
    region: ur_rect_region_t,
    count: u32,
    list: *const ur_event_handle_t,
    blocking: bool,
    out: *mut ur_event_handle_t,
) -> UrResult {
    let (width, height, depth) = extent(region)?;
    let even = |s: Side| depth == 1 || s.slice == height * s.row;
    if !even(dst_side) || !even(src_side) {
        return Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
    }
    let waits = wait_list::<B>(count, list)?;
    let (dst_pitch, src_pitch) = (dst_side.row, src_side.row);
    let copy = UsmCopy2D { command, dst, dst_pitch, src, src_pitch, width, height: height * depth };
    submit::<B>(queue, UsmCommand::Copy2D(copy), waits, blocking, out)
}

/// `urEnqueueMemBufferReadRect` (`READ`) and `urEnqueueMemBufferWriteRect`:
/// the same arguments, the copy's direction aside.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe extern "C" fn buffer_host_rect<B: Backend, const READ: bool>(
    q: ur_queue_handle_t,
    m: ur_mem_handle_t,
    blocking: bool,
    buffer_origin: ur_rect_offset_t,
    host_origin: ur_rect_offset_t,
    region: ur_rect_region_t,
    buffer_row_pitch: usize,
    buffer_slice_pitch: usize,
    host_row_pitch: usize,
    host_slice_pitch: usize,
    host_ptr: *mut c_void,
    count: u32,
    list: *const ur_event_handle_t,
    out: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let (queue, mem) = queue_and_buffer::<B>(q, m)?;
        non_null(host_ptr)?;
        let buffer = side(buffer_origin, buffer_row_pitch, buffer_slice_pitch, region)?;
        let host = side(host_origin, host_row_pitch, host_slice_pitch, region)?;
        let at_buffer = buffer_side(mem, buffer, region)?;
        let at_host = (host_ptr as *mut u8).wrapping_add(host.offset) as *mut c_void;
        if READ {
            let command = UR_COMMAND_MEM_BUFFER_READ_RECT;
            rect::<B>(queue, command, (at_host, host), (at_buffer, buffer), region, count, list, blocking, out)
        } else {
            let command = UR_COMMAND_MEM_BUFFER_WRITE_RECT;
            rect::<B>(queue, command, (at_buffer, buffer), (at_host, host), region, count, list, blocking, out)
        }
    })
}

#[allow(clippy::too_many_arguments)]
pub(super) unsafe extern "C" fn buffer_copy_rect<B: Backend>(
    q: ur_queue_handle_t,
    src_mem: ur_mem_handle_t,
    dst_mem: ur_mem_handle_t,
    src_origin: ur_rect_offset_t,
    dst_origin: ur_rect_offset_t,
    region: ur_rect_region_t,
    src_row_pitch: usize,
    src_slice_pitch: usize,
    dst_row_pitch: usize,
    dst_slice_pitch: usize,
    count: u32,
    list: *const ur_event_handle_t,
    out: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let (queue, src_buffer) = queue_and_buffer::<B>(q, src_mem)?;
        let (_, dst_buffer) = queue_and_buffer::<B>(q, dst_mem)?;
        let src_side = side(src_origin, src_row_pitch, src_slice_pitch, region)?;
        let dst_side = side(dst_origin, dst_row_pitch, dst_slice_pitch, region)?;
        let src = buffer_side(src_buffer, src_side, region)?;
        let dst = buffer_side(dst_buffer, dst_side, region)?;
        rect::<B>(queue, UR_COMMAND_MEM_BUFFER_COPY_RECT, (dst, dst_side), (src, src_side), region, count, list, false, out)
    })
}
