//! The `extern "C"` entry points: each checks its handles and pointers,
//! then calls the objects of `driver.rs`, `context.rs`, `queue.rs`,
//! `command_list.rs`, `event.rs` and `fence.rs`. Handles are checked in the
//! order Level Zero lists its errors: handles, then pointers, then values. No panic crosses
//! the boundary: one becomes `ZE_RESULT_ERROR_UNKNOWN`.

use crate::command_list::{CommandList, Kind, LISTS};
use crate::context::Context;
use crate::driver::{self, *};
use crate::event::{Event, EventPool, EVENTS, POOLS, POOL_FLAGS};
use crate::fence::{Fence, FENCES};
use crate::queue::{Queue, QUEUES};
use crate::worker::{Command, Op, Region, Worker};
use core::ffi::c_void;
use level_zero_sys::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

type Result<T = ()> = std::result::Result<T, ze_result_t>;

/// Defines entry points whose bodies return `Result<()>`.
macro_rules! entry {
    ($(fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $body:block)*) => {$(
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> ze_result_t {
            let run = || -> Result { $body };
            let result = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
                Ok(Ok(())) => ZE_RESULT_SUCCESS,
                Ok(Err(e)) => e,
                Err(_) => ZE_RESULT_ERROR_UNKNOWN,
            };
            trace(stringify!($name), result);
            result
        }
    )*};
}

/// `ZE_HOST_DRIVER_TRACE=1` prints every call of an implemented entry point
/// and its result on stderr: what a client (a UR adapter) asked of the driver
/// and what it got, without a tracing loader.
fn trace(name: &str, result: ze_result_t) {
    use std::sync::OnceLock;
    static ON: OnceLock<bool> = OnceLock::new();
    if *ON.get_or_init(|| std::env::var_os("ZE_HOST_DRIVER_TRACE").is_some_and(|v| v == "1")) {
        eprintln!("ze_host_driver: {name} -> {result:#x}");
    }
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

// --- Command queues, command lists, events and fences ----------------------

/// Bits of `ze_command_queue_flags_t` accepted: the 1.4 header's
/// EXPLICIT_ONLY and, from later headers, IN_ORDER (bit 1) and
/// COPY_OFFLOAD_HINT (bit 2). Every queue runs in order, so all are honoured.
const QUEUE_FLAGS: u32 = ZE_COMMAND_QUEUE_FLAG_EXPLICIT_ONLY | (1 << 1) | (1 << 2);
/// Bits of `ze_command_list_flags_t` accepted: the 1.4 header's three and,
/// from later headers, IN_ORDER (bit 3), EXP_CLONEABLE (bit 4) and
/// COPY_OFFLOAD_HINT (bit 5).
const LIST_FLAGS: u32 = ZE_COMMAND_LIST_FLAG_RELAXED_ORDERING
    | ZE_COMMAND_LIST_FLAG_MAXIMIZE_THROUGHPUT
    | ZE_COMMAND_LIST_FLAG_EXPLICIT_ONLY
    | (1 << 3)
    | (1 << 4)
    | (1 << 5);
/// Bits of an event's signal and wait scopes.
const EVENT_SCOPES: u32 = ZE_EVENT_SCOPE_FLAG_SUBDEVICE | ZE_EVENT_SCOPE_FLAG_DEVICE | ZE_EVENT_SCOPE_FLAG_HOST;

fn context_id(h: ze_context_handle_t) -> Result<usize> {
    initialized()?;
    Context::with(h, |_| ())?;
    Ok(h as usize)
}

fn queue_of(h: ze_command_queue_handle_t) -> Result<Arc<Queue>> {
    initialized()?;
    QUEUES.get(h)
}

fn list_of(h: ze_command_list_handle_t) -> Result<Arc<CommandList>> {
    initialized()?;
    LISTS.get(h)
}

fn event_of(h: ze_event_handle_t) -> Result<Arc<Event>> {
    initialized()?;
    EVENTS.get(h)
}

fn fence_of(h: ze_fence_handle_t) -> Result<Arc<Fence>> {
    initialized()?;
    FENCES.get(h)
}

/// `Ok` when a host wait finished, `ZE_RESULT_NOT_READY` when it timed out.
fn ready(done: bool) -> Result {
    if done { Ok(()) } else { Err(ZE_RESULT_NOT_READY) }
}

/// The caller's array of `n` handles; a null array of a non-zero count is
/// `ZE_RESULT_ERROR_INVALID_SIZE`, as Level Zero names it for wait lists.
fn handles<'a, T>(n: u32, p: *mut T) -> Result<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(ZE_RESULT_ERROR_INVALID_SIZE);
    }
    // SAFETY: the caller passes `n` handles at `p`, which is not null.
    Ok(unsafe { core::slice::from_raw_parts(p, n as usize) })
}

/// A live event of the context `context`; one of another context cannot be
/// waited on or signalled here.
fn event_in(context: usize, h: ze_event_handle_t) -> Result<Arc<Event>> {
    let e = EVENTS.get(h)?;
    if e.pool.context != context {
        return Err(ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT);
    }
    Ok(e)
}

fn events_in(context: usize, hs: &[ze_event_handle_t]) -> Result<Vec<Arc<Event>>> {
    hs.iter().map(|&h| event_in(context, h)).collect()
}

/// Appends `op` to `list` with its signal event and wait list.
fn push(list: &CommandList, op: Op, signal: ze_event_handle_t, n: u32, waits: *mut ze_event_handle_t) -> Result {
    let waits = events_in(list.context, handles(n, waits)?)?;
    let signal = if signal.is_null() { None } else { Some(event_in(list.context, signal)?) };
    list.append(Command { op, waits, signal })
}

fn non_null<T>(p: *const T) -> Result {
    if p.is_null() { Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER) } else { Ok(()) }
}

/// The checks Level Zero names for a queue descriptor (also the immediate
/// list's), plus the one queue group and the one queue in it.
fn check_queue_desc(d: &ze_command_queue_desc_t) -> Result {
    if d.flags & !QUEUE_FLAGS != 0
        || d.mode > ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS
        || d.priority > ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_HIGH
    {
        return Err(ZE_RESULT_ERROR_INVALID_ENUMERATION);
    }
    if d.ordinal != 0 || d.index != 0 {
        return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
    }
    Ok(())
}

/// One side of a region copy, checked: the last byte's offset must fit.
fn region(base: *const c_void, r: &ze_copy_region_t, pitch: u32, slice_pitch: u32) -> Result<Region> {
    let (pitch, slice_pitch) = (pitch as usize, slice_pitch as usize);
    let start = (r.originZ as usize)
        .checked_mul(slice_pitch)
        .and_then(|z| z.checked_add((r.originY as usize).checked_mul(pitch)?))
        .and_then(|o| o.checked_add(r.originX as usize))
        .and_then(|o| o.checked_add(base as usize))
        .ok_or(ZE_RESULT_ERROR_INVALID_SIZE)?;
    let last = (r.depth.saturating_sub(1) as usize)
        .checked_mul(slice_pitch)
        .and_then(|z| z.checked_add((r.height.saturating_sub(1) as usize).checked_mul(pitch)?))
        .and_then(|o| o.checked_add(r.width as usize))
        .and_then(|o| o.checked_add(start));
    last.ok_or(ZE_RESULT_ERROR_INVALID_SIZE)?;
    Ok(Region { start, pitch, slice_pitch })
}

entry! {
    fn zeCommandQueueCreate(
        ctx: ze_context_handle_t,
        device: ze_device_handle_t,
        d: *const ze_command_queue_desc_t,
        queue: *mut ze_command_queue_handle_t,
    ) {
        let context = context_id(ctx)?;
        check_device(device)?;
        let d = desc(d)?;
        let queue = out(queue)?;
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
        let q = queue_of(h)?;
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
        ready(queue_of(h)?.worker.wait_idle(timeout))
    }

    fn zeCommandListCreate(
        ctx: ze_context_handle_t,
        device: ze_device_handle_t,
        d: *const ze_command_list_desc_t,
        list: *mut ze_command_list_handle_t,
    ) {
        let context = context_id(ctx)?;
        check_device(device)?;
        let d = desc(d)?;
        let list = out(list)?;
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
        let context = context_id(ctx)?;
        check_device(device)?;
        let d = desc(d)?;
        let list = out(list)?;
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
        list_of(h)?.close();
        Ok(())
    }

    fn zeCommandListReset(h: ze_command_list_handle_t) {
        list_of(h)?.reset();
        Ok(())
    }

    fn zeCommandListAppendBarrier(
        h: ze_command_list_handle_t,
        signal: ze_event_handle_t,
        n: u32,
        waits: *mut ze_event_handle_t,
    ) {
        // Every list runs in order, so a barrier is its wait list and signal.
        let l = list_of(h)?;
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
        let l = list_of(h)?;
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
        let l = list_of(h)?;
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
        let l = list_of(h)?;
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
        let l = list_of(h)?;
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
        let l = list_of(h)?;
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
        list_of(h)?;
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
        list_of(h)?;
        check_device(device)?;
        non_null(ptr)?;
        // Advice changes nothing on host memory, but must name an advice.
        if advice > ZE_MEMORY_ADVICE_BIAS_UNCACHED {
            return Err(ZE_RESULT_ERROR_INVALID_ENUMERATION);
        }
        Ok(())
    }

    fn zeCommandListAppendSignalEvent(h: ze_command_list_handle_t, event: ze_event_handle_t) {
        let l = list_of(h)?;
        if event.is_null() {
            return Err(ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
        }
        push(&l, Op::Nop, event, 0, core::ptr::null_mut())
    }

    fn zeCommandListAppendWaitOnEvents(h: ze_command_list_handle_t, n: u32, events: *mut ze_event_handle_t) {
        let l = list_of(h)?;
        non_null(events)?;
        push(&l, Op::Nop, core::ptr::null_mut(), n, events)
    }

    fn zeCommandListAppendEventReset(h: ze_command_list_handle_t, event: ze_event_handle_t) {
        let l = list_of(h)?;
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
        let l = list_of(h)?;
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
        let l = list_of(h)?;
        non_null(dst)?;
        push(&l, Op::WriteTimestamp { dst: dst as usize }, signal, n, waits)
    }

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
        let e = event_of(h)?;
        let now = driver::now_ns();
        e.signal(now, now);
        Ok(())
    }

    fn zeEventHostSynchronize(h: ze_event_handle_t, timeout: u64) {
        ready(event_of(h)?.wait(timeout))
    }

    fn zeEventQueryStatus(h: ze_event_handle_t) {
        ready(event_of(h)?.is_signaled())
    }

    fn zeEventHostReset(h: ze_event_handle_t) {
        event_of(h)?.reset();
        Ok(())
    }

    fn zeEventQueryKernelTimestamp(h: ze_event_handle_t, dst: *mut ze_kernel_timestamp_result_t) {
        let e = event_of(h)?;
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
        let e = event_of(h)?;
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
        queue_of(q)?;
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
        ready(fence_of(h)?.wait(timeout))
    }

    fn zeFenceQueryStatus(h: ze_fence_handle_t) {
        ready(fence_of(h)?.is_signaled())
    }

    fn zeFenceReset(h: ze_fence_handle_t) {
        fence_of(h)?.reset();
        Ok(())
    }
}
