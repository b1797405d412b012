//! `urEnqueueMemBuffer{Read,Write,Copy,Fill,Map}`, their `Rect` forms and
//! `urEnqueueMemUnmap` (`spec/memory_objects.md`), checked once. Where a
//! buffer's storage is one address every device of its context reaches,
//! each command is the USM command of that address (a rect with gaps
//! between slices, one per slice), reporting its own command type, and a
//! map hands out the address and orders a marker;
//! where it is a driver object (`RawMem::DRIVER`), each is a
//! `BufferCommand` of the backend on the root buffer.

use super::enqueue::{check_range, dispatch, enqueue_with, fill_sizes, submit};
use super::{obj, wait_list};
use crate::abi::*;
use crate::boundary::{ffi_call, non_null, write_out};
use crate::hal::{Backend, Completion, Events, UsmCommand, UsmCopy, UsmCopy2D, UsmFill};
use crate::handle;
use crate::mem::{BufferCommand, Mem, RawMem, RectSide};
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

/// Whether buffers of `B` are driver objects (`RawMem::DRIVER`): their
/// commands are `BufferCommand`s, not the USM commands of an address.
fn driver<B: Backend>() -> bool {
    <B::RawMem as RawMem<B>>::DRIVER
}

/// `INVALID_SIZE` unless `size` bytes from `offset` lie inside `mem`.
fn check_region<B: Backend>(mem: &Mem<B>, offset: usize, size: usize) -> UrResult {
    match offset.checked_add(size) {
        Some(end) if end <= mem.size => Ok(()),
        _ => Err(UR_RESULT_ERROR_INVALID_SIZE),
    }
}

/// The address of byte `offset` of `mem` (address storage only).
fn address<B: Backend>(mem: &Mem<B>, offset: usize) -> *mut c_void {
    (mem.address() + offset) as *mut c_void
}

/// `mem`'s root's raw part and where byte `offset` of `mem` lies in it.
fn root_at<B: Backend>(mem: &Mem<B>, offset: usize) -> (&B::RawMem, usize) {
    let (raw, origin) = mem.root_raw();
    (raw, origin + offset)
}

/// A command on driver buffers, reporting `command`; blocks for it when
/// asked.
///
/// # Safety
/// `out` is null or valid for a write.
unsafe fn buffer_command<B: Backend>(
    queue: &Queue<B>,
    command: ur_command_t,
    buffer: BufferCommand<'_, B>,
    waits: Events<'_, B>,
    blocking: bool,
    out: *mut ur_event_handle_t,
) -> UrResult {
    enqueue_with::<B>(queue, blocking, out, |c| B::RawQueue::buffer(queue, command, buffer, waits, c))
}

/// A copy between a buffer's region and host memory (or between two
/// regions) as a USM copy reporting `command` (address storage).
///
/// # Safety
/// `out` is null or valid for a write.
unsafe fn usm_copy<B: Backend>(
    queue: &Queue<B>,
    command: ur_command_t,
    (dst, src, size): (*mut c_void, *const c_void, usize),
    waits: Events<'_, B>,
    blocking: bool,
    out: *mut ur_event_handle_t,
) -> UrResult {
    let in_usm = check_range::<B>(queue, dst, size)? && check_range::<B>(queue, src, size)?;
    submit::<B>(queue, UsmCommand::Copy(UsmCopy { command, dst, src, size, in_usm }), waits, blocking, out)
}

#[allow(clippy::too_many_arguments)]
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
    ffi_call(|| buffer_host_copy::<B, true>(q, m, blocking, (offset, size, dst), count, list, out))
}

#[allow(clippy::too_many_arguments)]
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
    ffi_call(|| buffer_host_copy::<B, false>(q, m, blocking, (offset, size, src as *mut c_void), count, list, out))
}

/// `urEnqueueMemBufferRead` (`READ`) and `urEnqueueMemBufferWrite`: the
/// same arguments, the direction aside. A copy of 0 bytes runs nothing: it
/// is a marker (`spec/memory_objects.md`).
///
/// # Safety
/// The handles, the wait list and `out` are as the entry points take them.
unsafe fn buffer_host_copy<B: Backend, const READ: bool>(
    q: ur_queue_handle_t,
    m: ur_mem_handle_t,
    blocking: bool,
    (offset, size, host): (usize, usize, *mut c_void),
    count: u32,
    list: *const ur_event_handle_t,
    out: *mut ur_event_handle_t,
) -> UrResult {
    {
        let (queue, mem) = queue_and_buffer::<B>(q, m)?;
        non_null(host)?;
        check_region(mem, offset, size)?;
        let waits = wait_list::<B>(count, list)?;
        let command = if READ { UR_COMMAND_MEM_BUFFER_READ } else { UR_COMMAND_MEM_BUFFER_WRITE };
        if size == 0 {
            return marker::<B>(queue, command, waits, blocking, out);
        }
        if driver::<B>() {
            check_range::<B>(queue, host, size)?;
            let (mem, offset) = root_at(mem, offset);
            let buffer = if READ {
                BufferCommand::Read { mem, offset, size, dst: host }
            } else {
                BufferCommand::Write { mem, offset, size, src: host }
            };
            return buffer_command::<B>(queue, command, buffer, waits, blocking, out);
        }
        let at = address(mem, offset);
        let copy = if READ { (host, at as *const c_void, size) } else { (at, host as *const c_void, size) };
        usm_copy::<B>(queue, command, copy, waits, blocking, out)
    }
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
        check_region(src_buffer, src_offset, size)?;
        check_region(dst_buffer, dst_offset, size)?;
        let ((src_root, src_at), (dst_root, dst_at)) = (src_buffer.root(), dst_buffer.root());
        let (src_at, dst_at) = (src_at + src_offset, dst_at + dst_offset);
        if std::ptr::eq(src_root, dst_root) && src_at < dst_at + size && dst_at < src_at + size {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        let waits = wait_list::<B>(count, list)?;
        let command = UR_COMMAND_MEM_BUFFER_COPY;
        if size == 0 {
            return marker::<B>(queue, command, waits, false, out);
        }
        if driver::<B>() {
            let ((src, src_offset), (dst, dst_offset)) = (root_at(src_buffer, src_offset), root_at(dst_buffer, dst_offset));
            let buffer = BufferCommand::Copy { src, src_offset, dst, dst_offset, size };
            return buffer_command::<B>(queue, command, buffer, waits, false, out);
        }
        let copy = (address(dst_buffer, dst_offset), address(src_buffer, src_offset) as *const c_void, size);
        usm_copy::<B>(queue, command, copy, waits, false, out)
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
        check_region(mem, offset, size)?;
        let waits = wait_list::<B>(count, list)?;
        // The pattern is read here: the caller may reuse its storage at once.
        let pattern = std::slice::from_raw_parts(pattern as *const u8, pattern_size);
        let command = UR_COMMAND_MEM_BUFFER_FILL;
        if driver::<B>() {
            let (mem, offset) = root_at(mem, offset);
            return buffer_command::<B>(queue, command, BufferCommand::Fill { mem, offset, size, pattern }, waits, false, out);
        }
        let dst = address(mem, offset);
        let in_usm = check_range::<B>(queue, dst, size)?;
        submit::<B>(queue, UsmCommand::Fill(UsmFill { command, dst, pattern, size, in_usm }), waits, false, out)
    })
}

/// A map of address storage hands out the region's address at once and
/// orders a marker; a driver buffer's map is its driver's.
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
        check_region(mem, offset, size)?;
        let waits = wait_list::<B>(count, list)?;
        let command = UR_COMMAND_MEM_BUFFER_MAP;
        let ptr = if driver::<B>() {
            let mut ptr = std::ptr::null_mut();
            let (raw, at) = root_at(mem, offset);
            let map = BufferCommand::Map { mem: raw, offset: at, size, flags, out: &mut ptr };
            buffer_command::<B>(queue, command, map, waits, blocking, out)?;
            ptr
        } else {
            marker::<B>(queue, command, waits, blocking, out)?;
            address(mem, offset)
        };
        mem.record_map(ptr, offset, size);
        write_out(ret_map, ptr)
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
        let record = mem.unmap(mapped).ok_or(UR_RESULT_ERROR_INVALID_VALUE)?;
        let command = UR_COMMAND_MEM_UNMAP;
        let done = if driver::<B>() {
            let unmap = BufferCommand::Unmap { mem: mem.root_raw().0, ptr: mapped };
            buffer_command::<B>(queue, command, unmap, waits, false, out)
        } else {
            marker::<B>(queue, command, waits, false, out)
        };
        if done.is_err() {
            // Not unmapped: the map stays live.
            mem.record_map(mapped, record.offset, record.size);
        }
        done
    })
}

/// A marker reporting `command`; blocks for it when asked.
///
/// # Safety
/// `out` is null or valid for a write.
unsafe fn marker<B: Backend>(
    queue: &Queue<B>,
    command: ur_command_t,
    waits: Events<'_, B>,
    blocking: bool,
    out: *mut ur_event_handle_t,
) -> UrResult {
    enqueue_with::<B>(queue, blocking, out, |c| B::RawQueue::marker(queue, command, waits, c))
}

/// A region's extent in bytes, rows and slices: `INVALID_SIZE` when any is
/// zero or past `usize`.
fn extent(region: ur_rect_region_t) -> UrResult<[usize; 3]> {
    let dim = |v: u64| usize::try_from(v).ok().filter(|&v| v != 0).ok_or(UR_RESULT_ERROR_INVALID_SIZE);
    Ok([dim(region.width)?, dim(region.height)?, dim(region.depth)?])
}

/// A side's layout (`spec/memory_objects.md`): a row pitch below the width,
/// a slice pitch below a slice's rows or not a multiple of the row pitch,
/// or any overflow, is `INVALID_SIZE`. A zero pitch given is tight.
fn side(origin: ur_rect_offset_t, row_pitch: usize, slice_pitch: usize, region: ur_rect_region_t) -> UrResult<RectSide> {
    let [width, height, _] = extent(region)?;
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
    Ok(RectSide { offset, row_pitch: row, slice_pitch: slice })
}

/// `INVALID_SIZE` unless a buffer side's region ends inside `mem`.
fn check_buffer_side<B: Backend>(mem: &Mem<B>, side: RectSide, region: ur_rect_region_t) -> UrResult {
    let [width, height, depth] = extent(region)?;
    let last = (depth - 1).checked_mul(side.slice_pitch).zip((height - 1).checked_mul(side.row_pitch));
    let end = last.and_then(|(s, r)| side.offset.checked_add(s)?.checked_add(r)?.checked_add(width));
    match end {
        Some(end) if end <= mem.size => Ok(()),
        _ => Err(UR_RESULT_ERROR_INVALID_SIZE),
    }
}

/// A buffer side as its root's: the sub-buffer's origin added.
fn root_side<B: Backend>(mem: &Mem<B>, side: RectSide) -> (&B::RawMem, RectSide) {
    let (raw, offset) = root_at(mem, side.offset);
    (raw, RectSide { offset, ..side })
}

/// A rect copy between two addresses: one pitched 2D copy where rows are
/// evenly spaced on both sides (one slice, or slices of exactly their
/// rows), else one per slice, each after the wait list, joined by a marker
/// that reports `command` and stands for the whole command.
///
/// # Safety
/// `out` is null or valid for a write.
#[allow(clippy::too_many_arguments)]
unsafe fn usm_rect<B: Backend>(
    queue: &Queue<B>,
    command: ur_command_t,
    (dst, dst_side): (*mut c_void, RectSide),
    (src, src_side): (*const c_void, RectSide),
    region: ur_rect_region_t,
    waits: Events<'_, B>,
    blocking: bool,
    out: *mut ur_event_handle_t,
) -> UrResult {
    let [width, height, depth] = extent(region)?;
    let even = |s: RectSide| depth == 1 || s.slice_pitch == height * s.row_pitch;
    let slice = |z: usize, rows: usize| {
        let dst = (dst as *mut u8).wrapping_add(dst_side.offset + z * dst_side.slice_pitch);
        let src = (src as *const u8).wrapping_add(src_side.offset + z * src_side.slice_pitch);
        let (dst_pitch, src_pitch) = (dst_side.row_pitch, src_side.row_pitch);
        UsmCommand::Copy2D(UsmCopy2D { command, dst: dst as _, dst_pitch, src: src as _, src_pitch, width, height: rows })
    };
    if even(dst_side) && even(src_side) {
        return submit::<B>(queue, slice(0, height * depth), waits, blocking, out);
    }
    let each = Completion { want_event: true, blocking: false };
    let slices = (0..depth)
        .map(|z| dispatch::<B>(queue, slice(z, height), waits.clone(), each))
        .collect::<UrResult<Vec<_>>>()?;
    let handles: Vec<ur_event_handle_t> = slices.iter().flatten().map(|e| handle::handle_of(&**e)).collect();
    // SAFETY: the handles are of events `slices` holds until the call ends.
    let joined = Events::<B>::checked(&handles);
    enqueue_with::<B>(queue, blocking, out, |c| B::RawQueue::marker(queue, command, joined, c))
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
    host: *mut c_void,
    count: u32,
    list: *const ur_event_handle_t,
    out: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let (queue, mem) = queue_and_buffer::<B>(q, m)?;
        non_null(host)?;
        let buffer = side(buffer_origin, buffer_row_pitch, buffer_slice_pitch, region)?;
        let host_side = side(host_origin, host_row_pitch, host_slice_pitch, region)?;
        check_buffer_side(mem, buffer, region)?;
        let waits = wait_list::<B>(count, list)?;
        let command = if READ { UR_COMMAND_MEM_BUFFER_READ_RECT } else { UR_COMMAND_MEM_BUFFER_WRITE_RECT };
        if driver::<B>() {
            let (mem, buffer) = root_side(mem, buffer);
            let rect = BufferCommand::HostRect { read: READ, mem, buffer, host, host_side, region: extent(region)? };
            return buffer_command::<B>(queue, command, rect, waits, blocking, out);
        }
        let at_buffer = address(mem, 0);
        if READ {
            usm_rect::<B>(queue, command, (host, host_side), (at_buffer, buffer), region, waits, blocking, out)
        } else {
            usm_rect::<B>(queue, command, (at_buffer, buffer), (host, host_side), region, waits, blocking, out)
        }
    })
}

/// Overlap within one storage is undefined, not detected.
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
        check_buffer_side(src_buffer, src_side, region)?;
        check_buffer_side(dst_buffer, dst_side, region)?;
        let waits = wait_list::<B>(count, list)?;
        let command = UR_COMMAND_MEM_BUFFER_COPY_RECT;
        if driver::<B>() {
            let ((src, src_side), (dst, dst_side)) = (root_side(src_buffer, src_side), root_side(dst_buffer, dst_side));
            let rect = BufferCommand::CopyRect { src, src_side, dst, dst_side, region: extent(region)? };
            return buffer_command::<B>(queue, command, rect, waits, false, out);
        }
        let (dst, src) = (address(dst_buffer, 0), address(src_buffer, 0));
        usm_rect::<B>(queue, command, (dst, dst_side), (src, src_side), region, waits, false, out)
    })
}
