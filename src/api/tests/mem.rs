//! `urMem*` and `urEnqueueMem*` on the test backend (whose buffers live in
//! host USM of the context, as native CPU's): the checks of
//! `spec/memory_objects.md`, and what the backend hears of a buffer command.

use super::*;

const RW: ur_mem_flags_t = UR_MEM_FLAG_READ_WRITE.0;

fn props(host: *mut c_void) -> ur_buffer_properties_t {
    ur_buffer_properties_t { stype: UR_STRUCTURE_TYPE_BUFFER_PROPERTIES, pNext: null_mut(), pHost: host }
}

/// A buffer of `size` bytes of context `ctx`.
fn buffer_in(ctx: ur_context_handle_t, size: usize) -> ur_mem_handle_t {
    let mut mem = null_mut();
    assert_eq!(ur!(Mem.pfnBufferCreate(ctx, RW, size, null(), &mut mem)), UR_RESULT_SUCCESS);
    take_calls();
    mem
}

fn region(origin: usize, size: usize) -> ur_buffer_region_t {
    ur_buffer_region_t { stype: UR_STRUCTURE_TYPE_BUFFER_REGION, pNext: null(), origin, size }
}

refusals! {
    create_null_context: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| with_out(|m| ur!(Mem.pfnBufferCreate(null_mut(), RW, 8, null(), m)));
    create_unknown_flag: UR_RESULT_ERROR_INVALID_ENUMERATION, |w| with_out(|m| ur!(Mem.pfnBufferCreate(w.ctx, 1 << 6, 8, null(), m)));
    create_no_output: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| ur!(Mem.pfnBufferCreate(w.ctx, RW, 8, null(), null_mut()));
    create_size_zero: UR_RESULT_ERROR_INVALID_BUFFER_SIZE, |w| with_out(|m| ur!(Mem.pfnBufferCreate(w.ctx, RW, 0, null(), m)));
    create_use_host_without_host: UR_RESULT_ERROR_INVALID_HOST_PTR, |w| {
        with_out(|m| ur!(Mem.pfnBufferCreate(w.ctx, UR_MEM_FLAG_USE_HOST_POINTER.0, 8, null(), m)))
    };
    create_host_without_a_host_flag: UR_RESULT_ERROR_INVALID_HOST_PTR, |w| {
        let mut host = [0u8; 8];
        let p = props(host.as_mut_ptr().cast());
        with_out(|m| ur!(Mem.pfnBufferCreate(w.ctx, RW, 8, &p, m)))
    };
    create_two_access_modes: UR_RESULT_ERROR_INVALID_VALUE, |w| {
        with_out(|m| ur!(Mem.pfnBufferCreate(w.ctx, UR_MEM_FLAG_READ_ONLY.0 | UR_MEM_FLAG_WRITE_ONLY.0, 8, null(), m)))
    };
    create_use_host_with_alloc_copy: UR_RESULT_ERROR_INVALID_VALUE, |w| {
        let mut host = [0u8; 8];
        let p = props(host.as_mut_ptr().cast());
        let flags = UR_MEM_FLAG_USE_HOST_POINTER.0 | UR_MEM_FLAG_ALLOC_COPY_HOST_POINTER.0;
        with_out(|m| ur!(Mem.pfnBufferCreate(w.ctx, flags, 8, &p, m)))
    };
    create_past_the_devices_limit: UR_RESULT_ERROR_INVALID_BUFFER_SIZE, |w| {
        with_out(|m| ur!(Mem.pfnBufferCreate(w.ctx, RW, MAX_ALLOC as usize + 1, null(), m)))
    };
    retain_null: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| ur!(Mem.pfnRetain(null_mut()));
    info_null: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| with_out(|v: *mut usize| ur!(Mem.pfnGetInfo(null_mut(), UR_MEM_INFO_SIZE, 8, v.cast(), null_mut())));
}

#[test]
fn a_buffer_counts_references_and_answers_its_info() {
    let w = World::new();
    let mem = buffer_in(w.ctx, 100);
    let mut size = 0usize;
    refused!(UR_RESULT_SUCCESS, ur!(Mem.pfnGetInfo(mem, UR_MEM_INFO_SIZE, 8, (&mut size as *mut usize).cast(), null_mut())));
    assert_eq!(size, 100);
    let mut ctx: ur_context_handle_t = null_mut();
    refused!(UR_RESULT_SUCCESS, ur!(Mem.pfnGetInfo(mem, UR_MEM_INFO_CONTEXT, 8, (&mut ctx as *mut ur_context_handle_t).cast(), null_mut())));
    assert_eq!(ctx, w.ctx);
    refused!(
        UR_RESULT_ERROR_INVALID_ENUMERATION,
        ur!(Mem.pfnGetInfo(mem, ur_mem_info_t(3), 8, (&mut size as *mut usize).cast(), null_mut()))
    );
    refused!(UR_RESULT_SUCCESS, ur!(Mem.pfnRetain(mem)));
    refused!(UR_RESULT_SUCCESS, ur!(Mem.pfnRelease(mem)));
    // The last release gives the storage back.
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Mem.pfnRelease(mem)));
    assert_eq!(methods(&calls), ["context.usm_free"]);
    refused!(UR_RESULT_ERROR_INVALID_MEM_OBJECT, ur!(Mem.pfnRelease(mem)));
}

#[test]
fn a_sub_buffer_must_lie_in_its_parent_and_has_no_sub_buffers() {
    let w = World::new();
    let parent = buffer_in(w.ctx, 256);
    let mut sub = null_mut();
    let past = region(200, 57);
    refused!(UR_RESULT_ERROR_INVALID_BUFFER_SIZE, ur!(Mem.pfnBufferPartition(parent, RW, UR_BUFFER_CREATE_TYPE_REGION, &past, &mut sub)));
    let empty = region(0, 0);
    refused!(UR_RESULT_ERROR_INVALID_BUFFER_SIZE, ur!(Mem.pfnBufferPartition(parent, RW, UR_BUFFER_CREATE_TYPE_REGION, &empty, &mut sub)));
    let ok = region(64, 64);
    refused!(
        UR_RESULT_ERROR_INVALID_ENUMERATION,
        ur!(Mem.pfnBufferPartition(parent, RW, ur_buffer_create_type_t(1), &ok, &mut sub))
    );
    let host_flag = UR_MEM_FLAG_USE_HOST_POINTER.0;
    refused!(UR_RESULT_ERROR_INVALID_VALUE, ur!(Mem.pfnBufferPartition(parent, host_flag, UR_BUFFER_CREATE_TYPE_REGION, &ok, &mut sub)));
    // The origin's alignment is the devices' base-address alignment.
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Mem.pfnBufferPartition(parent, 0, UR_BUFFER_CREATE_TYPE_REGION, &ok, &mut sub)));
    assert_eq!(methods(&calls), ["device.info"]);
    let mut subsub = null_mut();
    refused!(UR_RESULT_ERROR_INVALID_MEM_OBJECT, ur!(Mem.pfnBufferPartition(sub, RW, UR_BUFFER_CREATE_TYPE_REGION, &ok, &mut subsub)));
    // The sub-buffer holds its parent past the user's last release.
    refused!(UR_RESULT_SUCCESS, ur!(Mem.pfnRelease(parent)));
    let mut size = 0usize;
    refused!(UR_RESULT_SUCCESS, ur!(Mem.pfnGetInfo(sub, UR_MEM_INFO_SIZE, 8, (&mut size as *mut usize).cast(), null_mut())));
    assert_eq!(size, 64);
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Mem.pfnRelease(sub)));
    assert_eq!(methods(&calls), ["context.usm_free"], "the root's storage goes with the last sub-buffer");
}

#[test]
fn a_buffer_read_is_a_copy_from_its_storage_that_reports_a_buffer_read() {
    let w = World::new();
    let mem = buffer_in(w.ctx, 64);
    let mut out = [0u8; 16];
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Enqueue.pfnMemBufferRead(w.queue, mem, false, 8, 16, out.as_mut_ptr().cast(), 0, null(), null_mut())));
    assert_eq!(calls[0].method, "queue.copy");
    assert!(calls[0].args.contains(&format!("command: {UR_COMMAND_MEM_BUFFER_READ:?}")), "{}", calls[0].args);
    refused!(
        UR_RESULT_ERROR_INVALID_SIZE,
        ur!(Enqueue.pfnMemBufferRead(w.queue, mem, false, 56, 16, out.as_mut_ptr().cast(), 0, null(), null_mut()))
    );
    reached!(UR_RESULT_SUCCESS, ur!(Mem.pfnRelease(mem)));
}

#[test]
fn a_buffer_of_another_context_is_refused_by_the_queue() {
    let w = World::new();
    let other = w.context(&[w.dev[1]]);
    let mem = buffer_in(other, 64);
    let mut out = [0u8; 8];
    refused!(
        UR_RESULT_ERROR_INVALID_MEM_OBJECT,
        ur!(Enqueue.pfnMemBufferRead(w.queue, mem, true, 0, 8, out.as_mut_ptr().cast(), 0, null(), null_mut()))
    );
    reached!(UR_RESULT_SUCCESS, ur!(Mem.pfnRelease(mem)));
    answers!(UR_RESULT_SUCCESS, ur!(Context.pfnRelease(other)));
}

#[test]
fn a_map_hands_out_the_storage_and_only_a_live_map_unmaps() {
    let w = World::new();
    let mem = buffer_in(w.ctx, 64);
    let mut native: ur_native_handle_t = 0;
    refused!(UR_RESULT_SUCCESS, ur!(Mem.pfnGetNativeHandle(mem, w.dev[0], &mut native)));
    let mut ptr = null_mut();
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Enqueue.pfnMemBufferMap(w.queue, mem, false, 0, 16, 8, 0, null(), null_mut(), &mut ptr)));
    assert_eq!(methods(&calls), ["queue.marker", "queue.append"]);
    assert_eq!(ptr as usize, native as usize + 16);
    let mut local = 0u8;
    refused!(
        UR_RESULT_ERROR_INVALID_VALUE,
        ur!(Enqueue.pfnMemUnmap(w.queue, mem, (&mut local as *mut u8).cast(), 0, null(), null_mut()))
    );
    reached!(UR_RESULT_SUCCESS, ur!(Enqueue.pfnMemUnmap(w.queue, mem, ptr, 0, null(), null_mut())));
    refused!(UR_RESULT_ERROR_INVALID_VALUE, ur!(Enqueue.pfnMemUnmap(w.queue, mem, ptr, 0, null(), null_mut())));
    reached!(UR_RESULT_SUCCESS, ur!(Mem.pfnRelease(mem)));
}

fn rect_read(w: &World, mem: ur_mem_handle_t, origin: ur_rect_offset_t, region: ur_rect_region_t, row: usize, slice: usize) -> ur_result_t {
    let mut host = [0u8; 512];
    let zero = ur_rect_offset_t { x: 0, y: 0, z: 0 };
    ur!(Enqueue.pfnMemBufferReadRect(w.queue, mem, false, origin, zero, region, row, slice, 0, 0, host.as_mut_ptr().cast(), 0, null(), null_mut()))
}

#[test]
fn a_rect_read_is_pitched_copies_and_its_regions_are_checked() {
    let w = World::new();
    let mem = buffer_in(w.ctx, 256);
    let at = |x, y, z| ur_rect_offset_t { x, y, z };
    let size = |width, height, depth| ur_rect_region_t { width, height, depth };
    let calls = reached!(UR_RESULT_SUCCESS, rect_read(&w, mem, at(4, 1, 0), size(8, 3, 2), 16, 48));
    assert_eq!(calls[0].method, "queue.copy_2d");
    assert!(calls[0].args.contains("dst_pitch: 8") && calls[0].args.contains("src_pitch: 16") && calls[0].args.contains("height: 6"), "{}", calls[0].args);
    refused!(UR_RESULT_ERROR_INVALID_SIZE, rect_read(&w, mem, at(0, 0, 0), size(0, 1, 1), 0, 0));
    refused!(UR_RESULT_ERROR_INVALID_SIZE, rect_read(&w, mem, at(0, 0, 0), size(16, 1, 1), 8, 0));
    refused!(UR_RESULT_ERROR_INVALID_SIZE, rect_read(&w, mem, at(0, 0, 0), size(8, 2, 2), 8, 20));
    refused!(UR_RESULT_ERROR_INVALID_SIZE, rect_read(&w, mem, at(0, 15, 0), size(16, 2, 1), 16, 0));
    // Slices with a gap after their rows: one pitched copy per slice, the
    // second from its slice's start, joined by a marker.
    let calls = reached!(UR_RESULT_SUCCESS, rect_read(&w, mem, at(0, 0, 0), size(8, 2, 2), 16, 64));
    let heard: Vec<&str> = calls.iter().map(|c| c.method).filter(|m| *m != "queue.append").collect();
    assert_eq!(heard, ["queue.copy_2d", "queue.copy_2d", "queue.marker"], "{calls:?}");
    assert!(calls.iter().filter(|c| c.method == "queue.copy_2d").all(|c| c.args.contains("height: 2")), "{calls:?}");
    reached!(UR_RESULT_SUCCESS, ur!(Mem.pfnRelease(mem)));
}
