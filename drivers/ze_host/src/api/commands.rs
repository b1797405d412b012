//! Entry points of command queues and command lists: creation, execution,
//! and the commands appended to a list.

use super::*;

entry! {
    fn zeCommandQueueCreate(
        ctx: ze_context_handle_t,
        device: ze_device_handle_t,
        d: *const ze_command_queue_desc_t,
        queue: *mut ze_command_queue_handle_t,
    ) {
        let (context, d, queue) = creation_args(ctx, device, d, queue)?;
        check_queue_desc(d)?;
        let q = Queue { context, synchronous: d.mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS, worker: Worker::spawn()? };
        *queue = QUEUES.insert(Arc::new(q));
        Ok(())
    }

    fn zeCommandQueueDestroy(h: ze_command_queue_handle_t) {
        initialized()?;
        // Its worker finishes what it was given, then ends.
        QUEUES.remove(h).map(drop)
    }

    fn zeCommandQueueExecuteCommandLists(
        h: ze_command_queue_handle_t,
        n: u32,
        lists: *mut ze_command_list_handle_t,
        fence: ze_fence_handle_t,
    ) {
        let q = live(&QUEUES, h)?;
        non_null(lists)?;
        if n == 0 {
            return Err(ZE_RESULT_ERROR_INVALID_SIZE);
        }
        let mut run = Vec::with_capacity(n as usize);
        for &l in handles(n, lists)? {
            let l = LISTS.get(l)?;
            if l.context != q.context {
                return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
            }
            run.push(l.executable()?);
        }
        let fence = if fence.is_null() {
            None
        } else {
            let f = FENCES.get(fence)?;
            if f.queue != h as usize {
                return Err(ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT);
            }
            Some(f)
        };
        q.execute(run, fence);
        Ok(())
    }

    fn zeCommandQueueSynchronize(h: ze_command_queue_handle_t, timeout: u64) {
        ready(live(&QUEUES, h)?.worker.wait_idle(timeout))
    }

    fn zeCommandListCreate(
        ctx: ze_context_handle_t,
        device: ze_device_handle_t,
        d: *const ze_command_list_desc_t,
        list: *mut ze_command_list_handle_t,
    ) {
        let (context, d, list) = creation_args(ctx, device, d, list)?;
        if d.flags & !LIST_FLAGS != 0 {
            return Err(ZE_RESULT_ERROR_INVALID_ENUMERATION);
        }
        if d.commandQueueGroupOrdinal != 0 {
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        let l = CommandList { context, kind: Kind::Regular(Default::default()) };
        *list = LISTS.insert(Arc::new(l));
        Ok(())
    }

    fn zeCommandListCreateImmediate(
        ctx: ze_context_handle_t,
        device: ze_device_handle_t,
        d: *const ze_command_queue_desc_t,
        list: *mut ze_command_list_handle_t,
    ) {
        let (context, d, list) = creation_args(ctx, device, d, list)?;
        check_queue_desc(d)?;
        let synchronous = d.mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
        let l = CommandList { context, kind: Kind::Immediate { worker: Worker::spawn()?, synchronous } };
        *list = LISTS.insert(Arc::new(l));
        Ok(())
    }

    fn zeCommandListDestroy(h: ze_command_list_handle_t) {
        initialized()?;
        LISTS.remove(h).map(drop)
    }

    fn zeCommandListClose(h: ze_command_list_handle_t) {
        live(&LISTS, h)?.close();
        Ok(())
    }

    fn zeCommandListReset(h: ze_command_list_handle_t) {
        live(&LISTS, h)?.reset();
        Ok(())
    }

    fn zeCommandListAppendBarrier(
        h: ze_command_list_handle_t,
        signal: ze_event_handle_t,
        n: u32,
        waits: *mut ze_event_handle_t,
    ) {
        // Every list runs in order, so a barrier is its wait list and signal.
        let l = live(&LISTS, h)?;
        push(&l, Op::Nop, signal, n, waits)
    }

    fn zeCommandListAppendMemoryRangesBarrier(
        h: ze_command_list_handle_t,
        ranges: u32,
        sizes: *const usize,
        starts: *mut *const c_void,
        signal: ze_event_handle_t,
        n: u32,
        waits: *mut ze_event_handle_t,
    ) {
        let l = live(&LISTS, h)?;
        if ranges > 0 {
            non_null(sizes)?;
            non_null(starts)?;
        }
        push(&l, Op::Nop, signal, n, waits)
    }

    fn zeCommandListAppendMemoryCopy(
        h: ze_command_list_handle_t,
        dst: *mut c_void,
        src: *const c_void,
        size: usize,
        signal: ze_event_handle_t,
        n: u32,
        waits: *mut ze_event_handle_t,
    ) {
        let l = live(&LISTS, h)?;
        non_null(dst)?;
        non_null(src)?;
        push(&l, Op::Copy { dst: dst as usize, src: src as usize, size }, signal, n, waits)
    }

    fn zeCommandListAppendMemoryCopyFromContext(
        h: ze_command_list_handle_t,
        dst: *mut c_void,
        src_context: ze_context_handle_t,
        src: *const c_void,
        size: usize,
        signal: ze_event_handle_t,
        n: u32,
        waits: *mut ze_event_handle_t,
    ) {
        let l = live(&LISTS, h)?;
        context_id(src_context)?;
        non_null(dst)?;
        non_null(src)?;
        push(&l, Op::Copy { dst: dst as usize, src: src as usize, size }, signal, n, waits)
    }

    fn zeCommandListAppendMemoryFill(
        h: ze_command_list_handle_t,
        dst: *mut c_void,
        pattern: *const c_void,
        pattern_size: usize,
        size: usize,
        signal: ze_event_handle_t,
        n: u32,
        waits: *mut ze_event_handle_t,
    ) {
        let l = live(&LISTS, h)?;
        non_null(dst)?;
        non_null(pattern)?;
        if !pattern_size.is_power_of_two() || pattern_size > MAX_FILL_PATTERN {
            return Err(ZE_RESULT_ERROR_INVALID_SIZE);
        }
        // The pattern is the caller's only for the call: keep a copy.
        // SAFETY: `pattern` is not null and holds `pattern_size` bytes.
        let pattern = unsafe { core::slice::from_raw_parts(pattern.cast::<u8>(), pattern_size) }.to_vec();
        push(&l, Op::Fill { dst: dst as usize, size, pattern }, signal, n, waits)
    }

    fn zeCommandListAppendMemoryCopyRegion(
        h: ze_command_list_handle_t,
        dst: *mut c_void,
        dst_region: *const ze_copy_region_t,
        dst_pitch: u32,
        dst_slice_pitch: u32,
        src: *const c_void,
        src_region: *const ze_copy_region_t,
        src_pitch: u32,
        src_slice_pitch: u32,
        signal: ze_event_handle_t,
        n: u32,
        waits: *mut ze_event_handle_t,
    ) {
        let l = live(&LISTS, h)?;
        non_null(dst)?;
        let dr = desc(dst_region)?;
        non_null(src)?;
        let sr = desc(src_region)?;
        // The two boxes are the same box at two places.
        if (dr.width, dr.height, dr.depth) != (sr.width, sr.height, sr.depth) {
            return Err(ZE_RESULT_ERROR_INVALID_SIZE);
        }
        let op = Op::CopyRegion {
            dst: region(dst, dr, dst_pitch, dst_slice_pitch)?,
            src: region(src, sr, src_pitch, src_slice_pitch)?,
            width: dr.width as usize,
            height: dr.height as usize,
            depth: dr.depth as usize,
        };
        push(&l, op, signal, n, waits)
    }

    fn zeCommandListAppendMemoryPrefetch(h: ze_command_list_handle_t, ptr: *const c_void, _size: usize) {
        live(&LISTS, h)?;
        // Host memory is where it will be used: nothing to move.
        non_null(ptr)
    }

    fn zeCommandListAppendMemAdvise(
        h: ze_command_list_handle_t,
        device: ze_device_handle_t,
        ptr: *const c_void,
        _size: usize,
        advice: ze_memory_advice_t,
    ) {
        live(&LISTS, h)?;
        check_device(device)?;
        non_null(ptr)?;
        // Advice changes nothing on host memory, but must name an advice.
        if advice > ZE_MEMORY_ADVICE_BIAS_UNCACHED {
            return Err(ZE_RESULT_ERROR_INVALID_ENUMERATION);
        }
        Ok(())
    }

    fn zeCommandListAppendSignalEvent(h: ze_command_list_handle_t, event: ze_event_handle_t) {
        let l = live(&LISTS, h)?;
        if event.is_null() {
            return Err(ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
        }
        push(&l, Op::Nop, event, 0, core::ptr::null_mut())
    }

    fn zeCommandListAppendWaitOnEvents(h: ze_command_list_handle_t, n: u32, events: *mut ze_event_handle_t) {
        let l = live(&LISTS, h)?;
        non_null(events)?;
        push(&l, Op::Nop, core::ptr::null_mut(), n, events)
    }

    fn zeCommandListAppendEventReset(h: ze_command_list_handle_t, event: ze_event_handle_t) {
        let l = live(&LISTS, h)?;
        if event.is_null() {
            return Err(ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
        }
        let e = event_in(l.context, event)?;
        push(&l, Op::ResetEvent(e), core::ptr::null_mut(), 0, core::ptr::null_mut())
    }

    fn zeCommandListAppendQueryKernelTimestamps(
        h: ze_command_list_handle_t,
        count: u32,
        events: *mut ze_event_handle_t,
        dst: *mut c_void,
        offsets: *const usize,
        signal: ze_event_handle_t,
        n: u32,
        waits: *mut ze_event_handle_t,
    ) {
        let l = live(&LISTS, h)?;
        non_null(events)?;
        non_null(dst)?;
        let queried = events_in(l.context, handles(count, events)?)?;
        let offsets = if offsets.is_null() {
            // Without offsets the results are packed one after the other.
            (0..count as usize).map(|i| i * core::mem::size_of::<ze_kernel_timestamp_result_t>()).collect()
        } else {
            // SAFETY: the caller passes `count` offsets at `offsets`.
            unsafe { core::slice::from_raw_parts(offsets, count as usize) }.to_vec()
        };
        push(&l, Op::QueryTimestamps { events: queried, dst: dst as usize, offsets }, signal, n, waits)
    }

    fn zeCommandListAppendWriteGlobalTimestamp(
        h: ze_command_list_handle_t,
        dst: *mut u64,
        signal: ze_event_handle_t,
        n: u32,
        waits: *mut ze_event_handle_t,
    ) {
        let l = live(&LISTS, h)?;
        non_null(dst)?;
        push(&l, Op::WriteTimestamp { dst: dst as usize }, signal, n, waits)
    }
}

