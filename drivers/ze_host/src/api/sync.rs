//! Entry points of event pools, events and fences.

use super::*;

entry! {
    fn zeEventPoolCreate(
        ctx: ze_context_handle_t,
        d: *const ze_event_pool_desc_t,
        num_devices: u32,
        devices: *mut ze_device_handle_t,
        pool: *mut ze_event_pool_handle_t,
    ) {
        let context = context_id(ctx)?;
        let d = desc(d)?;
        let pool = out(pool)?;
        if d.flags & !POOL_FLAGS != 0 {
            return Err(ZE_RESULT_ERROR_INVALID_ENUMERATION);
        }
        if d.count == 0 {
            return Err(ZE_RESULT_ERROR_INVALID_SIZE);
        }
        for &dev in handles(num_devices, devices)? {
            check_device(dev)?;
        }
        *pool = POOLS.insert(Arc::new(EventPool::new(context, d.flags, d.count)));
        Ok(())
    }

    fn zeEventPoolDestroy(h: ze_event_pool_handle_t) {
        initialized()?;
        // Events still alive keep the pool's memory; its handle dies now.
        POOLS.remove(h).map(drop)
    }

    fn zeEventCreate(h: ze_event_pool_handle_t, d: *const ze_event_desc_t, event: *mut ze_event_handle_t) {
        initialized()?;
        let pool = POOLS.get(h)?;
        let d = desc(d)?;
        let event = out(event)?;
        if d.signal & !EVENT_SCOPES != 0 || d.wait & !EVENT_SCOPES != 0 {
            return Err(ZE_RESULT_ERROR_INVALID_ENUMERATION);
        }
        *event = EVENTS.insert(Event::create(pool, d.index)?);
        Ok(())
    }

    fn zeEventDestroy(h: ze_event_handle_t) {
        initialized()?;
        EVENTS.remove(h)?.release_slot();
        Ok(())
    }

    fn zeEventHostSignal(h: ze_event_handle_t) {
        let e = live(&EVENTS, h)?;
        let now = driver::now_ns();
        e.signal(now, now);
        Ok(())
    }

    fn zeEventHostSynchronize(h: ze_event_handle_t, timeout: u64) {
        ready(live(&EVENTS, h)?.wait(timeout))
    }

    fn zeEventQueryStatus(h: ze_event_handle_t) {
        ready(live(&EVENTS, h)?.is_signaled())
    }

    fn zeEventHostReset(h: ze_event_handle_t) {
        live(&EVENTS, h)?.reset();
        Ok(())
    }

    fn zeEventQueryKernelTimestamp(h: ze_event_handle_t, dst: *mut ze_kernel_timestamp_result_t) {
        let e = live(&EVENTS, h)?;
        let dst = out(dst)?;
        if !e.pool.timestamps {
            // Only events of a timestamp pool record them.
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        let (start, end) = e.timestamps().ok_or(ZE_RESULT_NOT_READY)?;
        let data = ze_kernel_timestamp_data_t { kernelStart: start, kernelEnd: end };
        *dst = ze_kernel_timestamp_result_t { global: data, context: data };
        Ok(())
    }

    fn zeEventQueryTimestampsExp(
        h: ze_event_handle_t,
        device: ze_device_handle_t,
        count: *mut u32,
        results: *mut ze_kernel_timestamp_result_t,
    ) {
        let e = live(&EVENTS, h)?;
        check_device(device)?;
        let count = out(count)?;
        if !e.pool.timestamps {
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        // One device with no sub-devices: one result.
        if *count == 0 || results.is_null() {
            *count = 1;
            return Ok(());
        }
        let (start, end) = e.timestamps().ok_or(ZE_RESULT_NOT_READY)?;
        let data = ze_kernel_timestamp_data_t { kernelStart: start, kernelEnd: end };
        *out(results)? = ze_kernel_timestamp_result_t { global: data, context: data };
        *count = 1;
        Ok(())
    }

    fn zeFenceCreate(q: ze_command_queue_handle_t, d: *const ze_fence_desc_t, fence: *mut ze_fence_handle_t) {
        live(&QUEUES, q)?;
        let d = desc(d)?;
        let fence = out(fence)?;
        if d.flags & !ZE_FENCE_FLAG_SIGNALED != 0 {
            return Err(ZE_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let f = Fence::new(q as usize, d.flags & ZE_FENCE_FLAG_SIGNALED != 0);
        *fence = FENCES.insert(Arc::new(f));
        Ok(())
    }

    fn zeFenceDestroy(h: ze_fence_handle_t) {
        initialized()?;
        FENCES.remove(h).map(drop)
    }

    fn zeFenceHostSynchronize(h: ze_fence_handle_t, timeout: u64) {
        ready(live(&FENCES, h)?.wait(timeout))
    }

    fn zeFenceQueryStatus(h: ze_fence_handle_t) {
        ready(live(&FENCES, h)?.is_signaled())
    }

    fn zeFenceReset(h: ze_fence_handle_t) {
        live(&FENCES, h)?.reset();
        Ok(())
    }
}
