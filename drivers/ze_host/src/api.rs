//! The `extern "C"` entry points: each checks its handles and pointers,
//! then calls the objects of `driver.rs` and `context.rs`. No panic crosses
//! the boundary: one becomes `ZE_RESULT_ERROR_UNKNOWN`.

use crate::context::Context;
use crate::driver::{self, *};
use core::ffi::c_void;
use level_zero_sys::*;
use std::sync::atomic::{AtomicBool, Ordering};

type Result<T = ()> = std::result::Result<T, ze_result_t>;

/// Defines entry points whose bodies return `Result<()>`.
macro_rules! entry {
    ($(fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $body:block)*) => {$(
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> ze_result_t {
            let run = || -> Result { $body };
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
                Ok(Ok(())) => ZE_RESULT_SUCCESS,
                Ok(Err(e)) => e,
                Err(_) => ZE_RESULT_ERROR_UNKNOWN,
            }
        }
    )*};
}

/// A caller's out-pointer, as a reference; null is an error.
fn out<'a, T>(p: *mut T) -> Result<&'a mut T> {
    // SAFETY: Level Zero's contract is that a non-null out-pointer points to
    // writable memory of its type; null is the one case a driver can check.
    unsafe { p.as_mut() }.ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)
}

/// A caller's descriptor, as a reference; null is an error.
fn desc<'a, T>(p: *const T) -> Result<&'a T> {
    // SAFETY: as for `out`, for readable descriptors.
    unsafe { p.as_ref() }.ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)
}

static INITIALIZED: AtomicBool = AtomicBool::new(false);

fn initialized() -> Result {
    if INITIALIZED.load(Ordering::Acquire) { Ok(()) } else { Err(ZE_RESULT_ERROR_UNINITIALIZED) }
}

fn check_driver(h: ze_driver_handle_t) -> Result {
    initialized()?;
    if is_driver(h) { Ok(()) } else { Err(ZE_RESULT_ERROR_INVALID_NULL_HANDLE) }
}

fn check_device(h: ze_device_handle_t) -> Result {
    initialized()?;
    if is_device(h) { Ok(()) } else { Err(ZE_RESULT_ERROR_INVALID_NULL_HANDLE) }
}

/// Answers the count-then-fill protocol of zeDriverGet/zeDeviceGet for a
/// list of `items`.
fn fill_list<T: Copy>(count: *mut u32, out_items: *mut T, items: &[T]) -> Result {
    let count = out(count)?;
    if *count == 0 || out_items.is_null() {
        *count = items.len() as u32;
        return Ok(());
    }
    let n = (*count as usize).min(items.len());
    // SAFETY: the caller said `out_items` holds `*count` elements; n is not more.
    unsafe { core::ptr::copy_nonoverlapping(items.as_ptr(), out_items, n) };
    *count = n as u32;
    Ok(())
}

const INIT_FLAGS: ze_init_flags_t = ZE_INIT_FLAG_GPU_ONLY | ZE_INIT_FLAG_VPU_ONLY;

entry! {
    fn zeInit(flags: ze_init_flags_t) {
        if flags & !INIT_FLAGS != 0 {
            return Err(ZE_RESULT_ERROR_INVALID_ENUMERATION);
        }
        // Our device is a GPU: asked for VPUs only, this driver has nothing.
        if flags == ZE_INIT_FLAG_VPU_ONLY {
            return Err(ZE_RESULT_ERROR_UNINITIALIZED);
        }
        INITIALIZED.store(true, Ordering::Release);
        Ok(())
    }

    fn zeDriverGet(count: *mut u32, drivers: *mut ze_driver_handle_t) {
        initialized()?;
        fill_list(count, drivers, &[driver_handle()])
    }

    fn zeDriverGetApiVersion(h: ze_driver_handle_t, version: *mut ze_api_version_t) {
        check_driver(h)?;
        *out(version)? = API_VERSION;
        Ok(())
    }

    fn zeDriverGetProperties(h: ze_driver_handle_t, props: *mut ze_driver_properties_t) {
        check_driver(h)?;
        let p = out(props)?;
        p.uuid.id = DRIVER_UUID;
        p.driverVersion = DRIVER_VERSION;
        Ok(())
    }

    fn zeDriverGetIpcProperties(h: ze_driver_handle_t, props: *mut ze_driver_ipc_properties_t) {
        check_driver(h)?;
        out(props)?.flags = 0; // no IPC
        Ok(())
    }

    fn zeDriverGetExtensionProperties(h: ze_driver_handle_t, count: *mut u32, _props: *mut c_void) {
        check_driver(h)?;
        *out(count)? = 0; // no extensions
        Ok(())
    }

    fn zeDeviceGet(h: ze_driver_handle_t, count: *mut u32, devices: *mut ze_device_handle_t) {
        check_driver(h)?;
        fill_list(count, devices, &[device_handle()])
    }

    fn zeDeviceGetSubDevices(h: ze_device_handle_t, count: *mut u32, _devices: *mut ze_device_handle_t) {
        check_device(h)?;
        *out(count)? = 0;
        Ok(())
    }

    fn zeDeviceGetProperties(h: ze_device_handle_t, props: *mut ze_device_properties_t) {
        check_device(h)?;
        let p = out(props)?;
        let (cpu, mhz) = cpu_model();
        p.r#type = ZE_DEVICE_TYPE_GPU;
        p.vendorId = VENDOR_ID;
        p.deviceId = 0;
        // It shares the host's memory, as an integrated GPU does.
        p.flags = ZE_DEVICE_PROPERTY_FLAG_INTEGRATED;
        p.subdeviceId = 0;
        p.coreClockRate = mhz;
        p.maxMemAllocSize = host_memory_bytes();
        p.maxHardwareContexts = 1;
        p.maxCommandQueuePriority = 0;
        // Each host core counts as one execution unit of one lane.
        p.numThreadsPerEU = 1;
        p.physicalEUSimdWidth = 1;
        p.numEUsPerSubslice = 1;
        p.numSubslicesPerSlice = cpu_count();
        p.numSlices = 1;
        // Timestamps are nanoseconds; the 1.2 struct asks for ticks per second.
        p.timerResolution = if p.stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2 { 1_000_000_000 } else { 1 };
        p.timestampValidBits = 64;
        p.kernelTimestampValidBits = 64;
        p.uuid.id = DEVICE_UUID;
        write_name(&mut p.name, &format!("Level Zero host driver ({cpu})"));
        Ok(())
    }

    fn zeDeviceGetComputeProperties(h: ze_device_handle_t, props: *mut ze_device_compute_properties_t) {
        check_device(h)?;
        let p = out(props)?;
        // No kernels run here: the smallest limits a device may state.
        p.maxTotalGroupSize = 1;
        p.maxGroupSizeX = 1;
        p.maxGroupSizeY = 1;
        p.maxGroupSizeZ = 1;
        p.maxGroupCountX = 1;
        p.maxGroupCountY = 1;
        p.maxGroupCountZ = 1;
        p.maxSharedLocalMemory = 0;
        p.numSubGroupSizes = 1;
        p.subGroupSizes = [1, 0, 0, 0, 0, 0, 0, 0];
        Ok(())
    }

    fn zeDeviceGetCommandQueueGroupProperties(
        h: ze_device_handle_t,
        count: *mut u32,
        props: *mut ze_command_queue_group_properties_t,
    ) {
        check_device(h)?;
        let count = out(count)?;
        if *count == 0 || props.is_null() {
            *count = 1;
            return Ok(());
        }
        *count = 1;
        let p = out(props)?;
        p.flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE | ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
        p.maxMemoryFillPatternSize = MAX_FILL_PATTERN;
        p.numQueues = 1;
        Ok(())
    }

    fn zeDeviceGetMemoryProperties(h: ze_device_handle_t, count: *mut u32, props: *mut ze_device_memory_properties_t) {
        check_device(h)?;
        let count = out(count)?;
        if *count == 0 || props.is_null() {
            *count = 1;
            return Ok(());
        }
        *count = 1;
        let p = out(props)?;
        p.flags = 0;
        p.maxClockRate = 0;
        p.maxBusWidth = 0;
        p.totalSize = host_memory_bytes();
        write_name(&mut p.name, "host memory");
        Ok(())
    }

    fn zeDeviceGetMemoryAccessProperties(h: ze_device_handle_t, props: *mut ze_device_memory_access_properties_t) {
        check_device(h)?;
        let p = out(props)?;
        // All memory is host memory: every kind is reachable, atomically and
        // concurrently, from the host and the "device" alike.
        let all = ZE_MEMORY_ACCESS_CAP_FLAG_RW
            | ZE_MEMORY_ACCESS_CAP_FLAG_ATOMIC
            | ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT
            | ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT_ATOMIC;
        p.hostAllocCapabilities = all;
        p.deviceAllocCapabilities = all;
        p.sharedSingleDeviceAllocCapabilities = all;
        p.sharedCrossDeviceAllocCapabilities = 0; // one device only
        p.sharedSystemAllocCapabilities = 0; // plain malloc memory is not offered
        Ok(())
    }

    fn zeDeviceGetCacheProperties(h: ze_device_handle_t, count: *mut u32, _props: *mut c_void) {
        check_device(h)?;
        *out(count)? = 0; // no device-managed caches
        Ok(())
    }

    fn zeDeviceCanAccessPeer(h: ze_device_handle_t, peer: ze_device_handle_t, value: *mut ze_bool_t) {
        check_device(h)?;
        check_device(peer)?;
        *out(value)? = 1;
        Ok(())
    }

    fn zeDeviceGetStatus(h: ze_device_handle_t) {
        check_device(h)
    }

    fn zeDeviceGetGlobalTimestamps(h: ze_device_handle_t, host: *mut u64, device: *mut u64) {
        check_device(h)?;
        let (host, device) = (out(host)?, out(device)?);
        let now = driver::now_ns();
        *host = now;
        *device = now;
        Ok(())
    }

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
        initialized()?;
        desc(host_desc)?;
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
        initialized()?;
        desc(device_desc)?;
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
        initialized()?;
        desc(device_desc)?;
        desc(host_desc)?;
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

/// The largest fill pattern, in bytes (a power of two).
pub const MAX_FILL_PATTERN: usize = 128;

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
