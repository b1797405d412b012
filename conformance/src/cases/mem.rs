//! Buffers: urMemBufferCreate, urMemBufferPartition, urMemGetInfo,
//! urMemRetain/Release, urMemGetNativeHandle, and the buffer commands
//! urEnqueueMemBuffer{Read,Write,Copy,Fill,Map} and urEnqueueMemUnmap
//! (spec/memory_objects.md). Each case first makes a buffer; an adapter that
//! serves none (UNSUPPORTED_FEATURE, which `unsupported.rs` checks) skips.

use crate::harness::*;
use crate::{check, check_eq, expect_result, expect_success, skip};
use core::ffi::c_void;
use std::ptr::{null, null_mut};
use ur_core::abi::*;

pub const CASES: &[Case] = &[
    Case::device("urMemBufferCreate.success_and_info", create_and_info),
    Case::device("urMemBufferCreate.bad_inputs", create_bad_inputs),
    Case::device("urMemBufferCreate.alloc_copy_host_pointer", alloc_copy),
    Case::device("urMemBufferCreate.use_host_pointer", use_host),
    Case::device("urEnqueueMemBufferWrite.read_back", write_read),
    Case::device("urEnqueueMemBufferRead.past_the_end", read_past_end),
    Case::device("urEnqueueMemBufferFill.pattern", fill),
    Case::device("urEnqueueMemBufferCopy.between_buffers", copy),
    Case::device("urEnqueueMemBufferMap.write_then_read", map),
    Case::device("urEnqueueMemUnmap.never_mapped", unmap_never_mapped),
    Case::device("urMemBufferPartition.sub_buffer_sees_its_region", partition),
    Case::device("urMemBufferPartition.bad_regions", partition_bad),
    Case::device("urMemRelease.with_commands_pending", release_pending),
    Case::device("urEnqueueMemBufferWriteRect.read_back_2d_and_3d", rect_round_trip),
    Case::device("urEnqueueMemBufferCopyRect.between_buffers", rect_copy),
    Case::device("urEnqueueMemBufferReadRect.bad_regions", rect_bad),
];

const SIZE: usize = 4096;

/// A buffer of `size` bytes with `flags` and host data `host`; a skip when
/// the adapter serves no buffers.
pub unsafe fn buffer(fx: &DeviceFx, flags: u32, size: usize, host: *mut c_void) -> Result<ur_mem_handle_t, Outcome> {
    let props = ur_buffer_properties_t { stype: UR_STRUCTURE_TYPE_BUFFER_PROPERTIES, pNext: null_mut(), pHost: host };
    let p = if host.is_null() { null() } else { &props as *const _ };
    let mut mem = null_mut();
    let code = fx.api.urMemBufferCreate(fx.context, flags, size, p, &mut mem)?;
    if code == UR_RESULT_ERROR_UNSUPPORTED_FEATURE {
        skip!("the adapter serves no buffers (urMemBufferCreate answers UNSUPPORTED_FEATURE)");
    }
    expect_result!(UR_RESULT_SUCCESS, Ok::<_, Outcome>(code));
    check!(!mem.is_null(), "urMemBufferCreate succeeded with a null handle");
    Ok(mem)
}

pub unsafe fn read_all(fx: &DeviceFx, mem: ur_mem_handle_t, offset: usize, len: usize) -> Result<Vec<u8>, Outcome> {
    let mut out = vec![0u8; len];
    expect_success!(fx.api.urEnqueueMemBufferRead(fx.queue, mem, true, offset, len, out.as_mut_ptr().cast(), 0, null(), null_mut()));
    Ok(out)
}

unsafe fn write_all(fx: &DeviceFx, mem: ur_mem_handle_t, offset: usize, data: &[u8]) -> CaseResult {
    expect_success!(fx.api.urEnqueueMemBufferWrite(fx.queue, mem, true, offset, data.len(), data.as_ptr().cast(), 0, null(), null_mut()));
    Ok(())
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

unsafe fn mem_info<T: Default>(fx: &DeviceFx, mem: ur_mem_handle_t, prop: ur_mem_info_t) -> Result<T, Outcome> {
    let mut v = T::default();
    expect_success!(fx.api.urMemGetInfo(mem, prop, std::mem::size_of::<T>(), (&mut v as *mut T).cast(), null_mut()));
    Ok(v)
}

unsafe fn create_and_info(fx: &DeviceFx) -> CaseResult {
    let mem = buffer(fx, UR_MEM_FLAG_READ_WRITE.0, SIZE, null_mut())?;
    check_eq!(mem_info::<usize>(fx, mem, UR_MEM_INFO_SIZE)?, SIZE);
    check_eq!(mem_info::<usize>(fx, mem, UR_MEM_INFO_CONTEXT)?, fx.context as usize);
    check_eq!(mem_info::<u32>(fx, mem, UR_MEM_INFO_REFERENCE_COUNT)?, 1);
    expect_success!(fx.api.urMemRetain(mem));
    check_eq!(mem_info::<u32>(fx, mem, UR_MEM_INFO_REFERENCE_COUNT)?, 2);
    expect_success!(fx.api.urMemRelease(mem));
    let mut native: ur_native_handle_t = 0;
    expect_success!(fx.api.urMemGetNativeHandle(mem, fx.device, &mut native));
    let mut v = 0usize;
    expect_result!(
        UR_RESULT_ERROR_INVALID_ENUMERATION,
        fx.api.urMemGetInfo(mem, ur_mem_info_t(3), 8, (&mut v as *mut usize).cast(), null_mut())
    );
    expect_success!(fx.api.urMemRelease(mem));
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_HANDLE, fx.api.urMemRelease(null_mut()));
    Ok(())
}

unsafe fn create_bad_inputs(fx: &DeviceFx) -> CaseResult {
    let probe = buffer(fx, 0, 64, null_mut())?;
    expect_success!(fx.api.urMemRelease(probe));
    let mut mem = null_mut();
    let rw = UR_MEM_FLAG_READ_WRITE.0;
    expect_result!(UR_RESULT_ERROR_INVALID_BUFFER_SIZE, fx.api.urMemBufferCreate(fx.context, rw, 0, null(), &mut mem));
    expect_result!(UR_RESULT_ERROR_INVALID_ENUMERATION, fx.api.urMemBufferCreate(fx.context, 1 << 6, 64, null(), &mut mem));
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_POINTER, fx.api.urMemBufferCreate(fx.context, rw, 64, null(), null_mut()));
    let use_host = UR_MEM_FLAG_USE_HOST_POINTER.0;
    expect_result!(UR_RESULT_ERROR_INVALID_HOST_PTR, fx.api.urMemBufferCreate(fx.context, use_host, 64, null(), &mut mem));
    let two_modes = UR_MEM_FLAG_READ_ONLY.0 | UR_MEM_FLAG_WRITE_ONLY.0;
    expect_result!(UR_RESULT_ERROR_INVALID_VALUE, fx.api.urMemBufferCreate(fx.context, two_modes, 64, null(), &mut mem));
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_HANDLE, fx.api.urMemBufferCreate(null_mut(), rw, 64, null(), &mut mem));
    Ok(())
}

unsafe fn alloc_copy(fx: &DeviceFx) -> CaseResult {
    let mut host = pattern(SIZE, 7);
    let mem = buffer(fx, UR_MEM_FLAG_ALLOC_COPY_HOST_POINTER.0, SIZE, host.as_mut_ptr().cast())?;
    let expected = host.clone();
    host.fill(0);
    check!(read_all(fx, mem, 0, SIZE)? == expected, "the buffer does not hold the data it was made from");
    expect_success!(fx.api.urMemRelease(mem));
    Ok(())
}

unsafe fn use_host(fx: &DeviceFx) -> CaseResult {
    let mut host = vec![0u8; SIZE];
    let mem = buffer(fx, UR_MEM_FLAG_USE_HOST_POINTER.0, SIZE, host.as_mut_ptr().cast())?;
    let data = pattern(SIZE, 3);
    write_all(fx, mem, 0, &data)?;
    expect_success!(fx.api.urMemRelease(mem));
    check!(host == data, "after the last release the host memory does not hold the buffer's data");
    Ok(())
}

unsafe fn write_read(fx: &DeviceFx) -> CaseResult {
    let mem = buffer(fx, 0, SIZE, null_mut())?;
    let data = pattern(SIZE, 11);
    write_all(fx, mem, 0, &data)?;
    check!(read_all(fx, mem, 0, SIZE)? == data, "read back differs from what was written");
    check!(read_all(fx, mem, 100, 50)? == data[100..150], "a read at an offset differs");
    expect_success!(fx.api.urMemRelease(mem));
    Ok(())
}

unsafe fn read_past_end(fx: &DeviceFx) -> CaseResult {
    let mem = buffer(fx, 0, SIZE, null_mut())?;
    let mut out = vec![0u8; 16];
    expect_result!(
        UR_RESULT_ERROR_INVALID_SIZE,
        fx.api.urEnqueueMemBufferRead(fx.queue, mem, true, SIZE - 8, 16, out.as_mut_ptr().cast(), 0, null(), null_mut())
    );
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_POINTER,
        fx.api.urEnqueueMemBufferRead(fx.queue, mem, true, 0, 16, null_mut(), 0, null(), null_mut())
    );
    expect_success!(fx.api.urMemRelease(mem));
    Ok(())
}

unsafe fn fill(fx: &DeviceFx) -> CaseResult {
    let mem = buffer(fx, 0, SIZE, null_mut())?;
    write_all(fx, mem, 0, &vec![0u8; SIZE])?;
    let word = [1u8, 2, 3, 4];
    let mut event = null_mut();
    expect_success!(fx.api.urEnqueueMemBufferFill(fx.queue, mem, word.as_ptr().cast(), 4, 64, 128, 0, null(), &mut event));
    expect_success!(fx.api.urEventWait(1, &event));
    let mut command = UR_COMMAND_FORCE_UINT32;
    expect_success!(fx.api.urEventGetInfo(event, UR_EVENT_INFO_COMMAND_TYPE, 4, (&mut command as *mut ur_command_t).cast(), null_mut()));
    check_eq!(command, UR_COMMAND_MEM_BUFFER_FILL);
    expect_success!(fx.api.urEventRelease(event));
    let got = read_all(fx, mem, 0, SIZE)?;
    check!(got[..64].iter().all(|&b| b == 0), "the fill wrote before its offset");
    check!(got[64..192].chunks(4).all(|c| c == word), "the fill's region does not repeat the pattern");
    check!(got[192..].iter().all(|&b| b == 0), "the fill wrote past its region");
    expect_result!(
        UR_RESULT_ERROR_INVALID_SIZE,
        fx.api.urEnqueueMemBufferFill(fx.queue, mem, word.as_ptr().cast(), 3, 0, 12, 0, null(), null_mut())
    );
    expect_success!(fx.api.urMemRelease(mem));
    Ok(())
}

unsafe fn copy(fx: &DeviceFx) -> CaseResult {
    let (a, b) = (buffer(fx, 0, SIZE, null_mut())?, buffer(fx, 0, SIZE, null_mut())?);
    let data = pattern(SIZE, 5);
    write_all(fx, a, 0, &data)?;
    write_all(fx, b, 0, &vec![0u8; SIZE])?;
    let mut event = null_mut();
    expect_success!(fx.api.urEnqueueMemBufferCopy(fx.queue, a, b, 256, 512, 1024, 0, null(), &mut event));
    let mut out = vec![0u8; 1024];
    // Ordered after the copy by its event alone.
    expect_success!(fx.api.urEnqueueMemBufferRead(fx.queue, b, true, 512, 1024, out.as_mut_ptr().cast(), 1, &event, null_mut()));
    check!(out == data[256..1280], "the copy's destination differs from its source");
    expect_success!(fx.api.urEventRelease(event));
    expect_result!(
        UR_RESULT_ERROR_INVALID_VALUE,
        fx.api.urEnqueueMemBufferCopy(fx.queue, a, a, 0, 8, 64, 0, null(), null_mut())
    );
    expect_success!(fx.api.urMemRelease(a));
    expect_success!(fx.api.urMemRelease(b));
    Ok(())
}

unsafe fn map(fx: &DeviceFx) -> CaseResult {
    let mem = buffer(fx, 0, SIZE, null_mut())?;
    write_all(fx, mem, 0, &vec![0u8; SIZE])?;
    let mut ptr: *mut c_void = null_mut();
    let flags = UR_MAP_FLAG_WRITE.0;
    expect_success!(fx.api.urEnqueueMemBufferMap(fx.queue, mem, true, flags, 1024, 256, 0, null(), null_mut(), &mut ptr));
    check!(!ptr.is_null(), "the map returned a null pointer");
    let data = pattern(256, 9);
    std::ptr::copy_nonoverlapping(data.as_ptr(), ptr.cast::<u8>(), 256);
    expect_success!(fx.api.urEnqueueMemUnmap(fx.queue, mem, ptr, 0, null(), null_mut()));
    check!(read_all(fx, mem, 1024, 256)? == data, "what was written through the map is not in the buffer");
    let mut again = null_mut();
    let bad = UR_MAP_FLAG_WRITE_INVALIDATE_REGION.0 | UR_MAP_FLAG_READ.0;
    expect_result!(
        UR_RESULT_ERROR_INVALID_VALUE,
        fx.api.urEnqueueMemBufferMap(fx.queue, mem, true, bad, 0, 16, 0, null(), null_mut(), &mut again)
    );
    expect_success!(fx.api.urMemRelease(mem));
    Ok(())
}

unsafe fn unmap_never_mapped(fx: &DeviceFx) -> CaseResult {
    let mem = buffer(fx, 0, SIZE, null_mut())?;
    let mut local = 0u64;
    expect_result!(
        UR_RESULT_ERROR_INVALID_VALUE,
        fx.api.urEnqueueMemUnmap(fx.queue, mem, (&mut local as *mut u64).cast(), 0, null(), null_mut())
    );
    expect_success!(fx.api.urMemRelease(mem));
    Ok(())
}

pub unsafe fn sub_buffer(fx: &DeviceFx, parent: ur_mem_handle_t, origin: usize, size: usize) -> Result<(ur_result_t, ur_mem_handle_t), Outcome> {
    let region = ur_buffer_region_t { stype: UR_STRUCTURE_TYPE_BUFFER_REGION, pNext: null(), origin, size };
    let mut sub = null_mut();
    let code = fx.api.urMemBufferPartition(parent, UR_MEM_FLAG_READ_WRITE.0, UR_BUFFER_CREATE_TYPE_REGION, &region, &mut sub)?;
    Ok((code, sub))
}

/// The device's base-address alignment, in bytes.
pub unsafe fn base_align(fx: &DeviceFx) -> Result<usize, Outcome> {
    let bits: u32 = fx.api.device_info(fx.device, UR_DEVICE_INFO_MEM_BASE_ADDR_ALIGN)?;
    Ok((bits as usize / 8).max(1))
}

unsafe fn partition(fx: &DeviceFx) -> CaseResult {
    let parent = buffer(fx, 0, SIZE, null_mut())?;
    let data = pattern(SIZE, 13);
    write_all(fx, parent, 0, &data)?;
    let origin = base_align(fx)?;
    let (code, sub) = sub_buffer(fx, parent, origin, 512)?;
    expect_result!(UR_RESULT_SUCCESS, Ok::<_, Outcome>(code));
    check_eq!(mem_info::<usize>(fx, sub, UR_MEM_INFO_SIZE)?, 512);
    check!(read_all(fx, sub, 0, 512)? == data[origin..origin + 512], "the sub-buffer does not read its parent's region");
    write_all(fx, sub, 0, &vec![0xee; 16])?;
    check!(read_all(fx, parent, origin, 16)? == vec![0xee; 16], "a write through the sub-buffer is not in the parent");
    // The parent outlives its user's last reference while a sub-buffer holds it.
    expect_success!(fx.api.urMemRelease(parent));
    check!(read_all(fx, sub, 0, 16)? == vec![0xee; 16], "the sub-buffer lost its data with the parent's release");
    expect_success!(fx.api.urMemRelease(sub));
    Ok(())
}

unsafe fn partition_bad(fx: &DeviceFx) -> CaseResult {
    let parent = buffer(fx, 0, SIZE, null_mut())?;
    let (code, _) = sub_buffer(fx, parent, 0, SIZE + 1)?;
    expect_result!(UR_RESULT_ERROR_INVALID_BUFFER_SIZE, Ok::<_, Outcome>(code));
    let (code, _) = sub_buffer(fx, parent, 0, 0)?;
    expect_result!(UR_RESULT_ERROR_INVALID_BUFFER_SIZE, Ok::<_, Outcome>(code));
    if base_align(fx)? > 1 {
        let (code, _) = sub_buffer(fx, parent, 1, 16)?;
        expect_result!(UR_RESULT_ERROR_MISALIGNED_SUB_BUFFER_OFFSET, Ok::<_, Outcome>(code));
    }
    let (code, sub) = sub_buffer(fx, parent, 0, 64)?;
    expect_result!(UR_RESULT_SUCCESS, Ok::<_, Outcome>(code));
    let (code, _) = sub_buffer(fx, sub, 0, 16)?;
    expect_result!(UR_RESULT_ERROR_INVALID_MEM_OBJECT, Ok::<_, Outcome>(code));
    expect_success!(fx.api.urMemRelease(sub));
    expect_success!(fx.api.urMemRelease(parent));
    Ok(())
}

/// A buffer released while a write to it is pending stays until the write
/// has run (no crash, the write completes).
unsafe fn release_pending(fx: &DeviceFx) -> CaseResult {
    let mem = buffer(fx, 0, 1 << 20, null_mut())?;
    let data = pattern(1 << 20, 1);
    let mut event = null_mut();
    expect_success!(fx.api.urEnqueueMemBufferWrite(fx.queue, mem, false, 0, data.len(), data.as_ptr().cast(), 0, null(), &mut event));
    expect_success!(fx.api.urMemRelease(mem));
    expect_success!(fx.api.urEventWait(1, &event));
    expect_success!(fx.api.urEventRelease(event));
    Ok(())
}

fn offset(x: u64, y: u64, z: u64) -> ur_rect_offset_t {
    ur_rect_offset_t { x, y, z }
}

fn extent(width: u64, height: u64, depth: u64) -> ur_rect_region_t {
    ur_rect_region_t { width, height, depth }
}

/// A region of host rows written into a buffer at an origin, then read
/// back the same way and as a whole, against a host reference; once as one
/// 2D slice and once as 3 tight slices.
unsafe fn rect_round_trip(fx: &DeviceFx) -> CaseResult {
    let mem = buffer(fx, 0, SIZE, null_mut())?;
    // The last layout has two spare rows between slices on both sides.
    for (region, slices, gap) in [(extent(24, 10, 1), 1usize, 0usize), (extent(16, 4, 3), 3, 0), (extent(16, 4, 3), 3, 2)] {
        write_all(fx, mem, 0, &vec![0u8; SIZE])?;
        let (w, h) = (region.width as usize, region.height as usize);
        let host = pattern(64 * 64, slices as u8);
        // Buffer rows of 64 bytes, slices tight; host rows of 40 bytes.
        let (brow, hrow) = (64usize, 40usize);
        let (bslice, hslice) = (brow * (h + gap), hrow * (h + gap));
        let (bo, ho) = (offset(5, 2, 0), offset(3, 1, 0));
        expect_success!(fx.api.urEnqueueMemBufferWriteRect(
            fx.queue, mem, true, bo, ho, region, brow, bslice, hrow, hslice, host.as_ptr() as *mut c_void, 0, null(), null_mut()
        ));
        let mut reference = vec![0u8; SIZE];
        for z in 0..slices {
            for y in 0..h {
                let b = 5 + (2 + y) * brow + z * bslice;
                let s = 3 + (1 + y) * hrow + z * hslice;
                reference[b..b + w].copy_from_slice(&host[s..s + w]);
            }
        }
        check!(read_all(fx, mem, 0, SIZE)? == reference, "the rect write did not land where its pitches say ({slices} slices)");
        let mut back = vec![0u8; host.len()];
        expect_success!(fx.api.urEnqueueMemBufferReadRect(
            fx.queue, mem, true, bo, ho, region, brow, bslice, hrow, hslice, back.as_mut_ptr().cast(), 0, null(), null_mut()
        ));
        for z in 0..slices {
            for y in 0..h {
                let s = 3 + (1 + y) * hrow + z * hslice;
                check!(back[s..s + w] == host[s..s + w], "the rect read does not give back row {y} of slice {z}");
            }
        }
    }
    expect_success!(fx.api.urMemRelease(mem));
    Ok(())
}

unsafe fn rect_copy(fx: &DeviceFx) -> CaseResult {
    let (a, b) = (buffer(fx, 0, SIZE, null_mut())?, buffer(fx, 0, SIZE, null_mut())?);
    let data = pattern(SIZE, 21);
    write_all(fx, a, 0, &data)?;
    write_all(fx, b, 0, &vec![0u8; SIZE])?;
    // 8 rows of 16 bytes: from rows of 32 at (4, 1) to rows of 64 at (0, 3).
    let region = extent(16, 8, 1);
    expect_success!(fx.api.urEnqueueMemBufferCopyRect(
        fx.queue, a, b, offset(4, 1, 0), offset(0, 3, 0), region, 32, 0, 64, 0, 0, null(), null_mut()
    ));
    let got = read_all(fx, b, 0, SIZE)?;
    for y in 0..8 {
        let (s, d) = (4 + (1 + y) * 32, (3 + y) * 64);
        check!(got[d..d + 16] == data[s..s + 16], "row {y} of the rect copy");
    }
    expect_success!(fx.api.urMemRelease(a));
    expect_success!(fx.api.urMemRelease(b));
    Ok(())
}

unsafe fn rect_bad(fx: &DeviceFx) -> CaseResult {
    let mem = buffer(fx, 0, SIZE, null_mut())?;
    let mut host = vec![0u8; SIZE];
    let dst = host.as_mut_ptr().cast::<c_void>();
    let read = |origin: ur_rect_offset_t, region: ur_rect_region_t, row: usize, slice: usize| {
        fx.api.urEnqueueMemBufferReadRect(
            fx.queue, mem, true, origin, offset(0, 0, 0), region, row, slice, 0, 0, dst, 0, null(), null_mut(),
        )
    };
    expect_result!(UR_RESULT_ERROR_INVALID_SIZE, read(offset(0, 0, 0), extent(0, 1, 1), 0, 0));
    expect_result!(UR_RESULT_ERROR_INVALID_SIZE, read(offset(0, 0, 0), extent(16, 1, 1), 8, 0));
    expect_result!(UR_RESULT_ERROR_INVALID_SIZE, read(offset(0, 0, 0), extent(16, 4, 2), 16, 40));
    expect_result!(UR_RESULT_ERROR_INVALID_SIZE, read(offset(0, 63, 0), extent(64, 2, 1), 64, 0));
    expect_success!(fx.api.urMemRelease(mem));
    Ok(())
}
