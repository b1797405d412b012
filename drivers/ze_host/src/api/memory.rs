//! Entry points of contexts and memory: creation, residency, the three
//! USM allocation kinds, frees and address queries.

use super::*;

entry! {
    fn zeContextCreate(h: ze_driver_handle_t, d: *const ze_context_desc_t, context: *mut ze_context_handle_t) {
        check_driver(h)?;
        desc(d)?;
        let context = out(context)?;
        *context = Context::create();
        Ok(())
    }

    fn zeContextCreateEx(
        h: ze_driver_handle_t,
        d: *const ze_context_desc_t,
        num_devices: u32,
        devices: *mut ze_device_handle_t,
        context: *mut ze_context_handle_t,
    ) {
        check_driver(h)?;
        desc(d)?;
        if num_devices > 0 {
            if devices.is_null() {
                return Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
            }
            // SAFETY: the caller passes `num_devices` handles at `devices`.
            let list = unsafe { core::slice::from_raw_parts(devices, num_devices as usize) };
            if !list.iter().all(|&d| is_device(d)) {
                return Err(ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
            }
        }
        *out(context)? = Context::create();
        Ok(())
    }

    fn zeContextDestroy(h: ze_context_handle_t) {
        initialized()?;
        match Context::destroy(h) {
            ZE_RESULT_SUCCESS => Ok(()),
            e => Err(e),
        }
    }

    fn zeContextGetStatus(h: ze_context_handle_t) {
        initialized()?;
        Context::with(h, |_| ())
    }

    fn zeContextSystemBarrier(h: ze_context_handle_t, device: ze_device_handle_t) {
        initialized()?;
        Context::with(h, |_| ())?;
        check_device(device)
    }

    fn zeContextMakeMemoryResident(h: ze_context_handle_t, device: ze_device_handle_t, ptr: *mut c_void, size: usize) {
        resident(h, device, ptr, size)
    }

    fn zeContextEvictMemory(h: ze_context_handle_t, device: ze_device_handle_t, ptr: *mut c_void, size: usize) {
        resident(h, device, ptr, size)
    }

    fn zeMemAllocHost(
        h: ze_context_handle_t,
        host_desc: *const ze_host_mem_alloc_desc_t,
        size: usize,
        alignment: usize,
        pptr: *mut *mut c_void,
    ) {
        check_alloc_descs(&[host_desc.cast()])?;
        allocate(h, size, alignment, ZE_MEMORY_TYPE_HOST, core::ptr::null_mut(), pptr)
    }

    fn zeMemAllocDevice(
        h: ze_context_handle_t,
        device_desc: *const ze_device_mem_alloc_desc_t,
        size: usize,
        alignment: usize,
        device: ze_device_handle_t,
        pptr: *mut *mut c_void,
    ) {
        check_alloc_descs(&[device_desc.cast()])?;
        check_device(device)?;
        allocate(h, size, alignment, ZE_MEMORY_TYPE_DEVICE, device, pptr)
    }

    fn zeMemAllocShared(
        h: ze_context_handle_t,
        device_desc: *const ze_device_mem_alloc_desc_t,
        host_desc: *const ze_host_mem_alloc_desc_t,
        size: usize,
        alignment: usize,
        device: ze_device_handle_t,
        pptr: *mut *mut c_void,
    ) {
        check_alloc_descs(&[device_desc.cast(), host_desc.cast()])?;
        // A shared allocation may belong to no device in particular.
        if !device.is_null() {
            check_device(device)?;
        }
        allocate(h, size, alignment, ZE_MEMORY_TYPE_SHARED, device, pptr)
    }

    fn zeMemFree(h: ze_context_handle_t, ptr: *mut c_void) {
        initialized()?;
        if ptr.is_null() {
            return Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        match Context::with(h, |c| c.free(ptr.cast()))? {
            ZE_RESULT_SUCCESS => Ok(()),
            e => Err(e),
        }
    }

    fn zeMemFreeExt(h: ze_context_handle_t, free_desc: *const c_void, ptr: *mut c_void) {
        desc(free_desc)?;
        // Both policies (block until unused, defer) come to the same thing
        // here: nothing on this driver holds memory past its command's end.
        match zeMemFree(h, ptr) {
            ZE_RESULT_SUCCESS => Ok(()),
            e => Err(e),
        }
    }

    fn zeMemGetAllocProperties(
        h: ze_context_handle_t,
        ptr: *const c_void,
        props: *mut ze_memory_allocation_properties_t,
        device: *mut ze_device_handle_t,
    ) {
        initialized()?;
        if ptr.is_null() {
            return Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        let found = Context::with(h, |c| c.find(ptr as usize))?;
        let p = out(props)?;
        match found {
            Some((_, _, kind, dev, id)) => {
                p.r#type = kind;
                p.id = id;
                p.pageSize = PAGE_SIZE;
                if let Some(d) = unsafe_out_opt(device) {
                    *d = dev;
                }
            }
            // Not ours: Level Zero says "unknown", not an error.
            None => {
                p.r#type = ZE_MEMORY_TYPE_UNKNOWN;
                p.id = 0;
                p.pageSize = 0;
                if let Some(d) = unsafe_out_opt(device) {
                    *d = core::ptr::null_mut();
                }
            }
        }
        Ok(())
    }

    fn zeMemGetAddressRange(h: ze_context_handle_t, ptr: *const c_void, base: *mut *mut c_void, size: *mut usize) {
        initialized()?;
        if ptr.is_null() {
            return Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        let (b, s, ..) = Context::with(h, |c| c.find(ptr as usize))?.ok_or(ZE_RESULT_ERROR_INVALID_ARGUMENT)?;
        // Either out-pointer may be null: the caller wants only the other.
        if let Some(base) = unsafe_out_opt(base) {
            *base = b as *mut c_void;
        }
        if let Some(size) = unsafe_out_opt(size) {
            *size = s;
        }
        Ok(())
    }
}

/// An optional out-pointer.
fn unsafe_out_opt<'a, T>(p: *mut T) -> Option<&'a mut T> {
    out(p).ok()
}

fn resident(h: ze_context_handle_t, device: ze_device_handle_t, ptr: *mut c_void, size: usize) -> Result {
    initialized()?;
    check_device(device)?;
    if ptr.is_null() {
        return Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    // Host memory is always resident; the range must be ours all the same.
    let found = Context::with(h, |c| c.find(ptr as usize))?;
    match found {
        Some((b, s, ..)) if (ptr as usize - b) + size <= s => Ok(()),
        _ => Err(ZE_RESULT_ERROR_INVALID_ARGUMENT),
    }
}

/// The checks every USM allocation starts with: zeInit has run, then each of
/// its descriptors is there (none is read: host memory takes no hints).
fn check_alloc_descs(descs: &[*const c_void]) -> Result {
    initialized()?;
    descs.iter().try_for_each(|&d| non_null(d))
}

fn allocate(
    h: ze_context_handle_t,
    size: usize,
    alignment: usize,
    kind: ze_memory_type_t,
    device: ze_device_handle_t,
    pptr: *mut *mut c_void,
) -> Result {
    let pptr = out(pptr)?;
    if size == 0 || size as u64 > host_memory_bytes() {
        return Err(ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
    }
    if alignment != 0 && !alignment.is_power_of_two() {
        return Err(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT);
    }
    *pptr = Context::with(h, |c| c.allocate(size, alignment, kind, device))??.cast();
    Ok(())
}
