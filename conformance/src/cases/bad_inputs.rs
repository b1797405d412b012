//! One table of bad inputs, fed to every adapter, each row requiring the
//! code spec/ names for it, the same from every adapter: null handles, null
//! output pointers, enumerations and flag words out of range, descriptor
//! flags with undefined bits, fill patterns and sizes the fill rules refuse,
//! zero-size allocations, inconsistent wait lists, a release past the
//! user's references, and frees of pointers that are no allocation's base.
//!
//! Each row is one case, `<entry point>.bad_input.<input>`. A row an
//! adapter still answers with another code is listed in
//! [`KNOWN_DISAGREEMENTS`] with that code: it is reported as a skip that
//! names the disagreement, not counted as a failure, until the core checks
//! every argument once for all adapters (issue 12). An entry whose adapter
//! answers the spec's code now fails, so that the list cannot go stale, and
//! so does an adapter that answers a third code.
//!
//! Rows that need a capability (a USM kind, pools, async allocation) skip,
//! naming it, where the device reports none.

use crate::harness::*;
use crate::names::{backend_name, result_name};
use crate::{info, skip};
use crate::ur::success;
use std::ffi::c_void;
use std::ptr::{null, null_mut};
use ur_core::abi::*;

/// One row: an entry point, the bad input (a short name), the code
/// spec/ names, and the call, which returns what the adapter answered.
pub struct Row {
    pub entry: &'static str,
    pub input: &'static str,
    pub expected: ur_result_t,
    pub call: unsafe fn(&DeviceFx) -> Result<ur_result_t, Outcome>,
}

/// A row an adapter currently answers with another code than spec/ names.
pub struct Disagreement {
    /// The row's case name, `<entry point>.bad_input.<input>`.
    pub case: &'static str,
    /// The adapter, by the backend name `--backend` takes.
    pub adapter: &'static str,
    /// What it answers today.
    pub got: ur_result_t,
}

/// Rows that some adapter answers differently from spec/ today. Each goes
/// once the core checks that argument for every adapter.
pub const KNOWN_DISAGREEMENTS: &[Disagreement] = &[];

/// Judges what a row's call returned on this device's adapter.
unsafe fn check_row(fx: &DeviceFx, name: &str, row: &Row) -> CaseResult {
    let got = (row.call)(fx)?;
    let adapter = backend_name(fx.backend);
    let known = KNOWN_DISAGREEMENTS.iter().find(|d| d.case == name && d.adapter == adapter);
    let (got_name, expected_name) = (result_name(got), result_name(row.expected));
    match known {
        None => expect_code(row.expected, got, name),
        Some(d) if got == d.got => {
            skip!("KNOWN_DISAGREEMENTS: {adapter} answers {got_name}, spec/ says {expected_name}")
        }
        Some(_) if got == row.expected => Err(Outcome::Fail(format!(
            "{adapter} answers {expected_name} as spec/ says: delete its entry in KNOWN_DISAGREEMENTS \
             (conformance/src/cases/bad_inputs.rs)"
        ))),
        Some(d) => Err(Outcome::Fail(format!(
            "{adapter} answers {got_name}; spec/ says {expected_name} and KNOWN_DISAGREEMENTS says it answers {}",
            result_name(d.got)
        ))),
    }
}

/// Declares the row functions, [`ROWS`] and one case per row from one list.
macro_rules! rows {
    ($( $f:ident : $entry:literal, $input:literal => $expected:ident, |$fx:ident| $body:block )*) => {
        $(
            #[allow(unused_unsafe)]
            unsafe fn $f($fx: &DeviceFx) -> Result<ur_result_t, Outcome> $body
        )*

        /// The table.
        pub const ROWS: &[Row] = &[$( Row { entry: $entry, input: $input, expected: $expected, call: $f } ),*];

        pub const CASES: &[Case] = &[$(
            Case::device(concat!($entry, ".bad_input.", $input), {
                unsafe fn case(fx: &DeviceFx) -> CaseResult {
                    let row = Row { entry: $entry, input: $input, expected: $expected, call: $f };
                    check_row(fx, concat!($entry, ".bad_input.", $input), &row)
                }
                case
            })
        ),*];
    };
}

// ---------------------------------------------------------------------------
// What rows share

/// 64 bytes of the first USM kind the device has (device, shared, host).
unsafe fn scratch<'a>(fx: &DeviceFx<'a>) -> Result<Usm<'a>, Outcome> {
    for kind in [UsmKind::Device, UsmKind::Shared, UsmKind::Host] {
        if fx.supports(kind)? {
            return fx.alloc(kind, 64);
        }
    }
    skip!("the device reports no USM of any kind")
}

/// A completed marker of the fixture's queue.
unsafe fn done_event(fx: &DeviceFx) -> Result<OwnedEvent, Outcome> {
    let mut event = null_mut();
    success("urEnqueueEventsWait", fx.api.urEnqueueEventsWait(fx.queue, 0, null(), &mut event))?;
    let event = fx.own_event(event);
    fx.wait(event.get())?;
    Ok(event)
}

unsafe fn require_pools(fx: &DeviceFx) -> CaseResult {
    fx.require(UR_DEVICE_INFO_USM_POOL_SUPPORT, "USM pool support (USM_POOL_SUPPORT is false)")
}

unsafe fn require_async(fx: &DeviceFx) -> CaseResult {
    fx.require(UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP, "async USM allocation support (ASYNC_USM_ALLOCATIONS_SUPPORT_EXP is false)")
}



/// Frees what a refused allocation returned anyway, so that a wrong
/// success leaks nothing.
unsafe fn free_stray(fx: &DeviceFx, code: ur_result_t, p: *mut c_void) -> Result<ur_result_t, Outcome> {
    if code == UR_RESULT_SUCCESS && !p.is_null() {
        let _ = fx.api.urUSMFree(fx.context, p);
    }
    Ok(code)
}

/// Releases what a refused create returned anyway.
unsafe fn release_stray<T>(
    code: ur_result_t,
    handle: *mut T,
    release: Option<unsafe extern "C" fn(*mut T) -> ur_result_t>,
) -> Result<ur_result_t, Outcome> {
    if let (UR_RESULT_SUCCESS, false, Some(release)) = (code, handle.is_null(), release) {
        release(handle);
    }
    Ok(code)
}

/// A USM allocation of `kind` and `size` with `desc` (may be null), freed if it was made;
/// a skip where the device has no USM of that kind.
unsafe fn alloc_with(
    fx: &DeviceFx,
    kind: UsmKind,
    desc: *const ur_usm_desc_t,
    size: usize,
) -> Result<ur_result_t, Outcome> {
    fx.require_kind(kind)?;
    let mut p = null_mut();
    let code = match kind {
        UsmKind::Host => fx.api.urUSMHostAlloc(fx.context, desc, null_mut(), size, &mut p)?,
        UsmKind::Device => fx.api.urUSMDeviceAlloc(fx.context, fx.device, desc, null_mut(), size, &mut p)?,
        UsmKind::Shared => fx.api.urUSMSharedAlloc(fx.context, fx.device, desc, null_mut(), size, &mut p)?,
    };
    free_stray(fx, code, p)
}

/// `urEnqueueUSMDeviceAllocExp` of `size` bytes with `props`, after a
/// null wait list of `wait_count` events, freed if it was made; a skip where
/// the device has no async device allocations.
unsafe fn async_alloc_with(
    fx: &DeviceFx,
    size: usize,
    props: *const ur_exp_async_usm_alloc_properties_t,
    wait_count: u32,
) -> Result<ur_result_t, Outcome> {
    require_async(fx)?;
    fx.require_kind(UsmKind::Device)?;
    let mut p = null_mut();
    let (queue, pool) = (fx.queue, null_mut());
    let code = fx.api.urEnqueueUSMDeviceAllocExp(queue, pool, size, props, wait_count, null(), &mut p, null_mut())?;
    if code == UR_RESULT_SUCCESS && !p.is_null() {
        fx.api.urEnqueueUSMFreeExp(fx.queue, null_mut(), p, 0, null(), null_mut())?;
    }
    Ok(code)
}

/// A queue of the fixture's context with `flags`, released if it was made.
unsafe fn queue_with(fx: &DeviceFx, flags: ur_queue_flags_t) -> Result<ur_result_t, Outcome> {
    let properties = ur_queue_properties_t { stype: UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, pNext: null_mut(), flags };
    let mut queue = null_mut();
    let code = fx.api.urQueueCreate(fx.context, fx.device, &properties, &mut queue)?;
    release_stray(code, queue, fx.api.fns.urQueueRelease)
}

/// A context of the fixture's device whose user has released it, kept
/// alive by the queue returned with it (released, it frees the context).
unsafe fn context_held_by_queue(fx: &DeviceFx) -> Result<(ur_context_handle_t, OwnedQueue), Outcome> {
    let mut context = null_mut();
    success("urContextCreate", fx.api.urContextCreate(1, &fx.device, null(), &mut context))?;
    let mut queue = null_mut();
    if let Err(e) = success("urQueueCreate", fx.api.urQueueCreate(context, fx.device, null(), &mut queue)) {
        fx.api.urContextRelease(context)?;
        return Err(e.into());
    }
    let queue = fx.own_queue(queue);
    success("urContextRelease", fx.api.urContextRelease(context))?;
    Ok((context, queue))
}

/// A pool with `flags` by `urUSMPoolCreate`, released if it was made.
unsafe fn pool_with(fx: &DeviceFx, flags: ur_usm_pool_flags_t) -> Result<ur_result_t, Outcome> {
    require_pools(fx)?;
    let mut desc = ur_usm_pool_desc_t { stype: UR_STRUCTURE_TYPE_USM_POOL_DESC, pNext: null(), flags };
    let mut pool = null_mut();
    let code = fx.api.urUSMPoolCreate(fx.context, &mut desc, &mut pool)?;
    release_stray(code, pool, fx.api.fns.urUSMPoolRelease)
}

/// `urEnqueueUSMFill` of `pattern_size` bytes over `size` bytes of a
/// 64-byte allocation.
unsafe fn fill(fx: &DeviceFx, pattern_size: usize, size: usize) -> Result<ur_result_t, Outcome> {
    let memory = scratch(fx)?;
    let pattern = [0x5au8; 16];
    let code =
        fx.api.urEnqueueUSMFill(fx.queue, memory.ptr, pattern_size, pattern.as_ptr().cast(), size, 0, null(), null_mut())?;
    // A wrong success must be done with the memory before it is freed.
    fx.api.urQueueFinish(fx.queue)?;
    Ok(code)
}

/// A blocking `urEnqueueUSMMemcpy` of `size` bytes of a 64-byte allocation
/// to the host, with a null wait list of `wait_count` events.
unsafe fn copy_to_host(fx: &DeviceFx, size: usize, wait_count: u32) -> Result<ur_result_t, Outcome> {
    let memory = scratch(fx)?;
    let mut host = [0u8; 64];
    let to_host = host.as_mut_ptr().cast();
    Ok(fx.api.urEnqueueUSMMemcpy(fx.queue, true, to_host, memory.ptr, size, wait_count, null(), null_mut())?)
}

/// The structure-type and flags of a chained USM descriptor.
fn usm_desc(next: *const c_void) -> ur_usm_desc_t {
    ur_usm_desc_t { stype: UR_STRUCTURE_TYPE_USM_DESC, pNext: next, hints: 0, align: 0 }
}

/// A device USM descriptor whose flags have a bit past the defined ones.
fn device_desc_with_undefined_bit() -> ur_usm_device_desc_t {
    ur_usm_device_desc_t {
        stype: UR_STRUCTURE_TYPE_USM_DEVICE_DESC,
        pNext: null(),
        flags: undefined_bit(UR_USM_DEVICE_MEM_FLAGS_MASK),
    }
}

/// A bit past every defined one of a flag type with this mask: its top bit.
fn undefined_bit(mask: u32) -> u32 {
    1 << (31 - mask.leading_zeros().min(31))
}

// ---------------------------------------------------------------------------
// The table

rows! {
    // -- null handles
    device_info_null: "urDeviceGetInfo", "null_device" => UR_RESULT_ERROR_INVALID_NULL_HANDLE, |fx| {
        Ok(info!(fx.api, urDeviceGetInfo).size_code(null_mut(), UR_DEVICE_INFO_TYPE)?)
    }
    context_create_null_device: "urContextCreate", "null_device_in_list" => UR_RESULT_ERROR_INVALID_NULL_HANDLE, |fx| {
        let devices = [null_mut()];
        let mut context = null_mut();
        let code = fx.api.urContextCreate(1, devices.as_ptr(), null(), &mut context)?;
        release_stray(code, context, fx.api.fns.urContextRelease)
    }
    context_info_null: "urContextGetInfo", "null_context" => UR_RESULT_ERROR_INVALID_NULL_HANDLE, |fx| {
        Ok(info!(fx.api, urContextGetInfo).size_code(null_mut(), UR_CONTEXT_INFO_NUM_DEVICES)?)
    }
    queue_create_null_context: "urQueueCreate", "null_context" => UR_RESULT_ERROR_INVALID_NULL_HANDLE, |fx| {
        let mut queue = null_mut();
        let code = fx.api.urQueueCreate(null_mut(), fx.device, null(), &mut queue)?;
        release_stray(code, queue, fx.api.fns.urQueueRelease)
    }
    queue_create_null_device: "urQueueCreate", "null_device" => UR_RESULT_ERROR_INVALID_NULL_HANDLE, |fx| {
        let mut queue = null_mut();
        let code = fx.api.urQueueCreate(fx.context, null_mut(), null(), &mut queue)?;
        release_stray(code, queue, fx.api.fns.urQueueRelease)
    }
    queue_finish_null: "urQueueFinish", "null_queue" => UR_RESULT_ERROR_INVALID_NULL_HANDLE, |fx| {
        Ok(fx.api.urQueueFinish(null_mut())?)
    }
    event_info_null: "urEventGetInfo", "null_event" => UR_RESULT_ERROR_INVALID_NULL_HANDLE, |fx| {
        Ok(info!(fx.api, urEventGetInfo).size_code(null_mut(), UR_EVENT_INFO_COMMAND_TYPE)?)
    }
    host_alloc_null_context: "urUSMHostAlloc", "null_context" => UR_RESULT_ERROR_INVALID_NULL_HANDLE, |fx| {
        let mut p = null_mut();
        let code = fx.api.urUSMHostAlloc(null_mut(), null(), null_mut(), 64, &mut p)?;
        free_stray(fx, code, p)
    }
    device_alloc_null_device: "urUSMDeviceAlloc", "null_device" => UR_RESULT_ERROR_INVALID_NULL_HANDLE, |fx| {
        let mut p = null_mut();
        let code = fx.api.urUSMDeviceAlloc(fx.context, null_mut(), null(), null_mut(), 64, &mut p)?;
        free_stray(fx, code, p)
    }
    free_null_context: "urUSMFree", "null_context" => UR_RESULT_ERROR_INVALID_NULL_HANDLE, |fx| {
        let memory = scratch(fx)?;
        Ok(fx.api.urUSMFree(null_mut(), memory.ptr)?)
    }
    fill_null_queue: "urEnqueueUSMFill", "null_queue" => UR_RESULT_ERROR_INVALID_NULL_HANDLE, |fx| {
        let memory = scratch(fx)?;
        let pattern = 0u32;
        Ok(fx.api.urEnqueueUSMFill(null_mut(), memory.ptr, 4, (&pattern as *const u32).cast(), 64, 0, null(), null_mut())?)
    }
    memcpy_null_queue: "urEnqueueUSMMemcpy", "null_queue" => UR_RESULT_ERROR_INVALID_NULL_HANDLE, |fx| {
        let memory = scratch(fx)?;
        let mut host = [0u8; 64];
        Ok(fx.api.urEnqueueUSMMemcpy(null_mut(), true, host.as_mut_ptr().cast(), memory.ptr, 64, 0, null(), null_mut())?)
    }
    pool_create_null_context: "urUSMPoolCreate", "null_context" => UR_RESULT_ERROR_INVALID_NULL_HANDLE, |fx| {
        let mut desc = ur_usm_pool_desc_t { stype: UR_STRUCTURE_TYPE_USM_POOL_DESC, pNext: null(), flags: 0 };
        let mut pool = null_mut();
        let code = fx.api.urUSMPoolCreate(null_mut(), &mut desc, &mut pool)?;
        release_stray(code, pool, fx.api.fns.urUSMPoolRelease)
    }
    async_alloc_null_queue: "urEnqueueUSMDeviceAllocExp", "null_queue" => UR_RESULT_ERROR_INVALID_NULL_HANDLE, |fx| {
        let mut p = null_mut();
        Ok(fx.api.urEnqueueUSMDeviceAllocExp(null_mut(), null_mut(), 64, null(), 0, null(), &mut p, null_mut())?)
    }

    // -- null output and input pointers
    context_create_null_out: "urContextCreate", "null_phContext" => UR_RESULT_ERROR_INVALID_NULL_POINTER, |fx| {
        Ok(fx.api.urContextCreate(1, &fx.device, null(), null_mut())?)
    }
    context_create_null_list: "urContextCreate", "null_phDevices" => UR_RESULT_ERROR_INVALID_NULL_POINTER, |fx| {
        let mut context = null_mut();
        let code = fx.api.urContextCreate(1, null(), null(), &mut context)?;
        release_stray(code, context, fx.api.fns.urContextRelease)
    }
    queue_create_null_out: "urQueueCreate", "null_phQueue" => UR_RESULT_ERROR_INVALID_NULL_POINTER, |fx| {
        Ok(fx.api.urQueueCreate(fx.context, fx.device, null(), null_mut())?)
    }
    device_info_no_outputs: "urDeviceGetInfo", "null_outputs" => UR_RESULT_ERROR_INVALID_NULL_POINTER, |fx| {
        Ok(fx.api.urDeviceGetInfo(fx.device, UR_DEVICE_INFO_TYPE, 0, null_mut(), null_mut())?)
    }
    host_alloc_null_out: "urUSMHostAlloc", "null_ppMem" => UR_RESULT_ERROR_INVALID_NULL_POINTER, |fx| {
        fx.require_kind(UsmKind::Host)?;
        Ok(fx.api.urUSMHostAlloc(fx.context, null(), null_mut(), 64, null_mut())?)
    }
    device_alloc_null_out: "urUSMDeviceAlloc", "null_ppMem" => UR_RESULT_ERROR_INVALID_NULL_POINTER, |fx| {
        fx.require_kind(UsmKind::Device)?;
        Ok(fx.api.urUSMDeviceAlloc(fx.context, fx.device, null(), null_mut(), 64, null_mut())?)
    }
    shared_alloc_null_out: "urUSMSharedAlloc", "null_ppMem" => UR_RESULT_ERROR_INVALID_NULL_POINTER, |fx| {
        fx.require_kind(UsmKind::Shared)?;
        Ok(fx.api.urUSMSharedAlloc(fx.context, fx.device, null(), null_mut(), 64, null_mut())?)
    }
    free_null_pointer: "urUSMFree", "null_pMem" => UR_RESULT_ERROR_INVALID_NULL_POINTER, |fx| {
        Ok(fx.api.urUSMFree(fx.context, null_mut())?)
    }
    alloc_info_null_pointer: "urUSMGetMemAllocInfo", "null_pMem" => UR_RESULT_ERROR_INVALID_NULL_POINTER, |fx| {
        let mut kind = UR_USM_TYPE_UNKNOWN;
        Ok(fx.api.urUSMGetMemAllocInfo(fx.context, null(), UR_USM_ALLOC_INFO_TYPE, size_of_val(&kind), (&mut kind as *mut ur_usm_type_t).cast(), null_mut())?)
    }
    fill_null_pattern: "urEnqueueUSMFill", "null_pPattern" => UR_RESULT_ERROR_INVALID_NULL_POINTER, |fx| {
        let memory = scratch(fx)?;
        Ok(fx.api.urEnqueueUSMFill(fx.queue, memory.ptr, 4, null(), 64, 0, null(), null_mut())?)
    }
    fill_null_memory: "urEnqueueUSMFill", "null_pMem" => UR_RESULT_ERROR_INVALID_NULL_POINTER, |fx| {
        let pattern = 0u32;
        Ok(fx.api.urEnqueueUSMFill(fx.queue, null_mut(), 4, (&pattern as *const u32).cast(), 64, 0, null(), null_mut())?)
    }
    memcpy_null_dst: "urEnqueueUSMMemcpy", "null_pDst" => UR_RESULT_ERROR_INVALID_NULL_POINTER, |fx| {
        let memory = scratch(fx)?;
        Ok(fx.api.urEnqueueUSMMemcpy(fx.queue, true, null_mut(), memory.ptr, 64, 0, null(), null_mut())?)
    }
    memcpy_null_src: "urEnqueueUSMMemcpy", "null_pSrc" => UR_RESULT_ERROR_INVALID_NULL_POINTER, |fx| {
        let memory = scratch(fx)?;
        Ok(fx.api.urEnqueueUSMMemcpy(fx.queue, true, memory.ptr, null(), 64, 0, null(), null_mut())?)
    }
    prefetch_null_memory: "urEnqueueUSMPrefetch", "null_pMem" => UR_RESULT_ERROR_INVALID_NULL_POINTER, |fx| {
        Ok(fx.api.urEnqueueUSMPrefetch(fx.queue, null(), 64, 0, 0, null(), null_mut())?)
    }
    advise_null_memory: "urEnqueueUSMAdvise", "null_pMem" => UR_RESULT_ERROR_INVALID_NULL_POINTER, |fx| {
        Ok(fx.api.urEnqueueUSMAdvise(fx.queue, null(), 64, 0, null_mut())?)
    }
    event_wait_null_list: "urEventWait", "null_list" => UR_RESULT_ERROR_INVALID_NULL_POINTER, |fx| {
        Ok(fx.api.urEventWait(1, null())?)
    }
    set_callback_null: "urEventSetCallback", "null_pfnNotify" => UR_RESULT_ERROR_INVALID_NULL_POINTER, |fx| {
        let event = done_event(fx)?;
        Ok(fx.api.urEventSetCallback(event.get(), UR_EXECUTION_INFO_COMPLETE, None, null_mut())?)
    }
    pool_create_null_out: "urUSMPoolCreate", "null_ppPool" => UR_RESULT_ERROR_INVALID_NULL_POINTER, |fx| {
        require_pools(fx)?;
        let mut desc = ur_usm_pool_desc_t { stype: UR_STRUCTURE_TYPE_USM_POOL_DESC, pNext: null(), flags: 0 };
        Ok(fx.api.urUSMPoolCreate(fx.context, &mut desc, null_mut())?)
    }
    pool_create_null_desc: "urUSMPoolCreate", "null_pPoolDesc" => UR_RESULT_ERROR_INVALID_NULL_POINTER, |fx| {
        require_pools(fx)?;
        let mut pool = null_mut();
        let code = fx.api.urUSMPoolCreate(fx.context, null_mut(), &mut pool)?;
        release_stray(code, pool, fx.api.fns.urUSMPoolRelease)
    }
    async_alloc_null_out: "urEnqueueUSMDeviceAllocExp", "null_ppMem" => UR_RESULT_ERROR_INVALID_NULL_POINTER, |fx| {
        require_async(fx)?;
        fx.require_kind(UsmKind::Device)?;
        Ok(fx.api.urEnqueueUSMDeviceAllocExp(fx.queue, null_mut(), 64, null(), 0, null(), null_mut(), null_mut())?)
    }
    async_free_null: "urEnqueueUSMFreeExp", "null_pMem" => UR_RESULT_ERROR_INVALID_NULL_POINTER, |fx| {
        require_async(fx)?;
        Ok(fx.api.urEnqueueUSMFreeExp(fx.queue, null_mut(), null_mut(), 0, null(), null_mut())?)
    }

    // -- enumerations past their last value
    device_info_past_last: "urDeviceGetInfo", "propName_past_last" => UR_RESULT_ERROR_INVALID_ENUMERATION, |fx| {
        let prop = ur_device_info_t(UR_DEVICE_INFO_ENQUEUE_HOST_TASK_SUPPORT_EXP.0 + 1);
        Ok(info!(fx.api, urDeviceGetInfo).size_code(fx.device, prop)?)
    }
    platform_info_past_last: "urPlatformGetInfo", "propName_past_last" => UR_RESULT_ERROR_INVALID_ENUMERATION, |fx| {
        let prop = ur_platform_info_t(UR_PLATFORM_INFO_ADAPTER.0 + 1);
        Ok(info!(fx.api, urPlatformGetInfo).size_code(fx.platform, prop)?)
    }
    context_info_past_last: "urContextGetInfo", "propName_past_last" => UR_RESULT_ERROR_INVALID_ENUMERATION, |fx| {
        let prop = ur_context_info_t(UR_CONTEXT_INFO_USM_FILL2D_SUPPORT.0 + 1);
        Ok(info!(fx.api, urContextGetInfo).size_code(fx.context, prop)?)
    }
    queue_info_past_last: "urQueueGetInfo", "propName_past_last" => UR_RESULT_ERROR_INVALID_ENUMERATION, |fx| {
        let prop = ur_queue_info_t(UR_QUEUE_INFO_EMPTY.0 + 1);
        Ok(info!(fx.api, urQueueGetInfo).size_code(fx.queue, prop)?)
    }
    event_info_past_last: "urEventGetInfo", "propName_past_last" => UR_RESULT_ERROR_INVALID_ENUMERATION, |fx| {
        let event = done_event(fx)?;
        let prop = ur_event_info_t(UR_EVENT_INFO_REFERENCE_COUNT.0 + 1);
        Ok(info!(fx.api, urEventGetInfo).size_code(event.get(), prop)?)
    }
    alloc_info_past_last: "urUSMGetMemAllocInfo", "propName_past_last" => UR_RESULT_ERROR_INVALID_ENUMERATION, |fx| {
        let memory = scratch(fx)?;
        let mut size = 0usize;
        let prop = ur_usm_alloc_info_t(UR_USM_ALLOC_INFO_POOL.0 + 1);
        Ok(fx.api.urUSMGetMemAllocInfo(fx.context, memory.ptr, prop, 0, null_mut(), &mut size)?)
    }
    set_callback_past_last: "urEventSetCallback", "execStatus_past_last" => UR_RESULT_ERROR_INVALID_ENUMERATION, |fx| {
        unsafe extern "C" fn ignore(_: ur_event_handle_t, _: ur_execution_info_t, _: *mut c_void) {}
        let event = done_event(fx)?;
        let status = ur_execution_info_t(UR_EXECUTION_INFO_QUEUED.0 + 1);
        Ok(fx.api.urEventSetCallback(event.get(), status, Some(ignore), null_mut())?)
    }
    pool_info_past_last: "urUSMPoolGetInfo", "propName_past_last" => UR_RESULT_ERROR_INVALID_ENUMERATION, |fx| {
        require_pools(fx)?;
        let mut desc = ur_usm_pool_desc_t { stype: UR_STRUCTURE_TYPE_USM_POOL_DESC, pNext: null(), flags: 0 };
        let mut pool = null_mut();
        success("urUSMPoolCreate", fx.api.urUSMPoolCreate(fx.context, &mut desc, &mut pool))?;
        let pool = fx.own_pool(pool);
        let prop = ur_usm_pool_info_t(UR_USM_POOL_INFO_USED_HIGH_EXP.0 + 1);
        Ok(info!(fx.api, urUSMPoolGetInfo).size_code(pool.get(), prop)?)
    }

    // -- flag words with undefined bits, and conflicting flags
    queue_flags_undefined: "urQueueCreate", "flags_undefined_bit" => UR_RESULT_ERROR_INVALID_ENUMERATION, |fx| {
        queue_with(fx, undefined_bit(UR_QUEUE_FLAGS_MASK))
    }
    queue_flags_priorities: "urQueueCreate", "flags_high_and_low_priority" => UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES, |fx| {
        queue_with(fx, UR_QUEUE_FLAG_PRIORITY_HIGH.0 | UR_QUEUE_FLAG_PRIORITY_LOW.0)
    }
    queue_flags_submissions: "urQueueCreate", "flags_batched_and_immediate" => UR_RESULT_ERROR_INVALID_QUEUE_PROPERTIES, |fx| {
        queue_with(fx, UR_QUEUE_FLAG_SUBMISSION_BATCHED.0 | UR_QUEUE_FLAG_SUBMISSION_IMMEDIATE.0)
    }
    context_flags_undefined: "urContextCreate", "flags_undefined_bit" => UR_RESULT_ERROR_INVALID_ENUMERATION, |fx| {
        let properties = ur_context_properties_t {
            stype: UR_STRUCTURE_TYPE_CONTEXT_PROPERTIES,
            pNext: null_mut(),
            flags: undefined_bit(UR_CONTEXT_FLAGS_MASK),
        };
        let mut context = null_mut();
        let code = fx.api.urContextCreate(1, &fx.device, &properties, &mut context)?;
        release_stray(code, context, fx.api.fns.urContextRelease)
    }
    advise_undefined: "urEnqueueUSMAdvise", "advice_undefined_bit" => UR_RESULT_ERROR_INVALID_ENUMERATION, |fx| {
        let memory = scratch(fx)?;
        Ok(fx.api.urEnqueueUSMAdvise(fx.queue, memory.ptr, 64, undefined_bit(UR_USM_ADVICE_FLAGS_MASK), null_mut())?)
    }
    prefetch_undefined: "urEnqueueUSMPrefetch", "flags_undefined_bit" => UR_RESULT_ERROR_INVALID_ENUMERATION, |fx| {
        let memory = scratch(fx)?;
        Ok(fx.api.urEnqueueUSMPrefetch(fx.queue, memory.ptr, 64, undefined_bit(UR_USM_MIGRATION_FLAGS_MASK), 0, null(), null_mut())?)
    }
    barrier_ext_undefined: "urEnqueueEventsWaitWithBarrierExt", "flags_undefined_bit" => UR_RESULT_ERROR_INVALID_ENUMERATION, |fx| {
        let properties = ur_exp_enqueue_ext_properties_t {
            stype: UR_STRUCTURE_TYPE_EXP_ENQUEUE_EXT_PROPERTIES,
            pNext: null_mut(),
            flags: undefined_bit(UR_EXP_ENQUEUE_EXT_FLAGS_MASK),
        };
        Ok(fx.api.urEnqueueEventsWaitWithBarrierExt(fx.queue, &properties, 0, null(), null_mut())?)
    }
    pool_flags_undefined: "urUSMPoolCreate", "flags_undefined_bit" => UR_RESULT_ERROR_INVALID_ENUMERATION, |fx| {
        pool_with(fx, undefined_bit(UR_USM_POOL_FLAGS_MASK))
    }
    pool_exp_flags_undefined: "urUSMPoolCreateExp", "flags_undefined_bit" => UR_RESULT_ERROR_INVALID_ENUMERATION, |fx| {
        require_pools(fx)?;
        let mut desc = ur_usm_pool_desc_t {
            stype: UR_STRUCTURE_TYPE_USM_POOL_DESC,
            pNext: null(),
            flags: undefined_bit(UR_USM_POOL_FLAGS_MASK),
        };
        let mut pool = null_mut();
        let code = fx.api.urUSMPoolCreateExp(fx.context, fx.device, &mut desc, &mut pool)?;
        release_stray(code, pool, fx.api.fns.urUSMPoolRelease)
    }
    async_alloc_flags_undefined: "urEnqueueUSMDeviceAllocExp", "flags_undefined_bit" => UR_RESULT_ERROR_INVALID_ENUMERATION, |fx| {
        let properties = ur_exp_async_usm_alloc_properties_t {
            stype: UR_STRUCTURE_TYPE_EXP_ASYNC_USM_ALLOC_PROPERTIES,
            pNext: null_mut(),
            flags: undefined_bit(UR_EXP_ASYNC_USM_ALLOC_FLAGS_MASK),
        };
        async_alloc_with(fx, 64, &properties, 0)
    }

    // -- USM descriptors: hints, chained descriptors' flags, alignment
    host_alloc_hints_undefined: "urUSMHostAlloc", "hints_undefined_bit" => UR_RESULT_ERROR_INVALID_ENUMERATION, |fx| {
        let mut desc = usm_desc(null());
        desc.hints = undefined_bit(UR_USM_ADVICE_FLAGS_MASK);
        alloc_with(fx, UsmKind::Host, &desc, 64)
    }
    host_alloc_host_desc_undefined: "urUSMHostAlloc", "host_desc_flags_undefined_bit" => UR_RESULT_ERROR_INVALID_ENUMERATION, |fx| {
        let host = ur_usm_host_desc_t {
            stype: UR_STRUCTURE_TYPE_USM_HOST_DESC,
            pNext: null(),
            flags: undefined_bit(UR_USM_HOST_MEM_FLAGS_MASK),
        };
        alloc_with(fx, UsmKind::Host, &usm_desc((&host as *const ur_usm_host_desc_t).cast()), 64)
    }
    device_alloc_device_desc_undefined: "urUSMDeviceAlloc", "device_desc_flags_undefined_bit" => UR_RESULT_ERROR_INVALID_ENUMERATION, |fx| {
        let device = device_desc_with_undefined_bit();
        alloc_with(fx, UsmKind::Device, &usm_desc((&device as *const ur_usm_device_desc_t).cast()), 64)
    }
    shared_alloc_device_desc_undefined: "urUSMSharedAlloc", "device_desc_flags_undefined_bit" => UR_RESULT_ERROR_INVALID_ENUMERATION, |fx| {
        let device = device_desc_with_undefined_bit();
        alloc_with(fx, UsmKind::Shared, &usm_desc((&device as *const ur_usm_device_desc_t).cast()), 64)
    }
    device_alloc_align_3: "urUSMDeviceAlloc", "align_not_power_of_two" => UR_RESULT_ERROR_INVALID_VALUE, |fx| {
        let mut desc = usm_desc(null());
        desc.align = 3;
        alloc_with(fx, UsmKind::Device, &desc, 64)
    }

    // -- zero-size allocations
    host_alloc_zero: "urUSMHostAlloc", "zero_size" => UR_RESULT_ERROR_INVALID_USM_SIZE, |fx| {
        alloc_with(fx, UsmKind::Host, null(), 0)
    }
    device_alloc_zero: "urUSMDeviceAlloc", "zero_size" => UR_RESULT_ERROR_INVALID_USM_SIZE, |fx| {
        alloc_with(fx, UsmKind::Device, null(), 0)
    }
    shared_alloc_zero: "urUSMSharedAlloc", "zero_size" => UR_RESULT_ERROR_INVALID_USM_SIZE, |fx| {
        alloc_with(fx, UsmKind::Shared, null(), 0)
    }
    async_alloc_zero: "urEnqueueUSMDeviceAllocExp", "zero_size" => UR_RESULT_ERROR_INVALID_USM_SIZE, |fx| {
        async_alloc_with(fx, 0, null(), 0)
    }

    // -- fill, copy, prefetch and advise sizes
    fill_pattern_3: "urEnqueueUSMFill", "patternSize_not_power_of_two" => UR_RESULT_ERROR_INVALID_SIZE, |fx| {
        fill(fx, 3, 48)
    }
    fill_pattern_0: "urEnqueueUSMFill", "patternSize_zero" => UR_RESULT_ERROR_INVALID_SIZE, |fx| {
        fill(fx, 0, 64)
    }
    fill_size_0: "urEnqueueUSMFill", "size_zero" => UR_RESULT_ERROR_INVALID_SIZE, |fx| {
        fill(fx, 4, 0)
    }
    fill_size_not_multiple: "urEnqueueUSMFill", "size_not_multiple_of_pattern" => UR_RESULT_ERROR_INVALID_SIZE, |fx| {
        fill(fx, 4, 6)
    }
    fill_pattern_larger: "urEnqueueUSMFill", "patternSize_larger_than_size" => UR_RESULT_ERROR_INVALID_SIZE, |fx| {
        fill(fx, 16, 8)
    }
    fill_past_end: "urEnqueueUSMFill", "range_past_allocation" => UR_RESULT_ERROR_INVALID_SIZE, |fx| {
        fill(fx, 4, 128)
    }
    memcpy_size_0: "urEnqueueUSMMemcpy", "size_zero" => UR_RESULT_ERROR_INVALID_SIZE, |fx| {
        copy_to_host(fx, 0, 0)
    }
    memcpy_overlap: "urEnqueueUSMMemcpy", "overlapping_ranges" => UR_RESULT_ERROR_INVALID_VALUE, |fx| {
        let memory = scratch(fx)?;
        Ok(fx.api.urEnqueueUSMMemcpy(fx.queue, true, memory.at(8), memory.ptr, 32, 0, null(), null_mut())?)
    }
    prefetch_size_0: "urEnqueueUSMPrefetch", "size_zero" => UR_RESULT_ERROR_INVALID_SIZE, |fx| {
        let memory = scratch(fx)?;
        Ok(fx.api.urEnqueueUSMPrefetch(fx.queue, memory.ptr, 0, 0, 0, null(), null_mut())?)
    }
    advise_size_0: "urEnqueueUSMAdvise", "size_zero" => UR_RESULT_ERROR_INVALID_SIZE, |fx| {
        let memory = scratch(fx)?;
        Ok(fx.api.urEnqueueUSMAdvise(fx.queue, memory.ptr, 0, 0, null_mut())?)
    }

    // -- wait lists and event lists
    marker_count_null_list: "urEnqueueEventsWait", "count_1_null_list" => UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST, |fx| {
        Ok(fx.api.urEnqueueEventsWait(fx.queue, 1, null(), null_mut())?)
    }
    marker_list_count_0: "urEnqueueEventsWait", "list_with_count_0" => UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST, |fx| {
        let event = done_event(fx)?;
        Ok(fx.api.urEnqueueEventsWait(fx.queue, 0, &event.get(), null_mut())?)
    }
    marker_null_in_list: "urEnqueueEventsWait", "null_event_in_list" => UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST, |fx| {
        let event = done_event(fx)?;
        let list = [event.get(), null_mut()];
        Ok(fx.api.urEnqueueEventsWait(fx.queue, 2, list.as_ptr(), null_mut())?)
    }
    barrier_count_null_list: "urEnqueueEventsWaitWithBarrier", "count_1_null_list" => UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST, |fx| {
        Ok(fx.api.urEnqueueEventsWaitWithBarrier(fx.queue, 1, null(), null_mut())?)
    }
    fill_count_null_list: "urEnqueueUSMFill", "count_1_null_list" => UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST, |fx| {
        let memory = scratch(fx)?;
        let pattern = 0u32;
        Ok(fx.api.urEnqueueUSMFill(fx.queue, memory.ptr, 4, (&pattern as *const u32).cast(), 64, 1, null(), null_mut())?)
    }
    memcpy_count_null_list: "urEnqueueUSMMemcpy", "count_1_null_list" => UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST, |fx| {
        copy_to_host(fx, 64, 1)
    }
    prefetch_count_null_list: "urEnqueueUSMPrefetch", "count_1_null_list" => UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST, |fx| {
        let memory = scratch(fx)?;
        Ok(fx.api.urEnqueueUSMPrefetch(fx.queue, memory.ptr, 64, 0, 1, null(), null_mut())?)
    }
    async_alloc_count_null_list: "urEnqueueUSMDeviceAllocExp", "count_1_null_list" => UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST, |fx| {
        async_alloc_with(fx, 64, null(), 1)
    }
    async_free_count_null_list: "urEnqueueUSMFreeExp", "count_1_null_list" => UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST, |fx| {
        require_async(fx)?;
        fx.require_kind(UsmKind::Device)?;
        let mut p = null_mut();
        success("urEnqueueUSMDeviceAllocExp", fx.api.urEnqueueUSMDeviceAllocExp(fx.queue, null_mut(), 64, null(), 0, null(), &mut p, null_mut()))?;
        let code = fx.api.urEnqueueUSMFreeExp(fx.queue, null_mut(), p, 1, null(), null_mut())?;
        if code != UR_RESULT_SUCCESS {
            fx.api.urEnqueueUSMFreeExp(fx.queue, null_mut(), p, 0, null(), null_mut())?;
        }
        Ok(code)
    }
    event_wait_zero: "urEventWait", "zero_events" => UR_RESULT_ERROR_INVALID_VALUE, |fx| {
        let event = done_event(fx)?;
        Ok(fx.api.urEventWait(0, &event.get())?)
    }
    context_create_zero: "urContextCreate", "zero_devices" => UR_RESULT_ERROR_INVALID_SIZE, |fx| {
        let mut context = null_mut();
        let code = fx.api.urContextCreate(0, &fx.device, null(), &mut context)?;
        release_stray(code, context, fx.api.fns.urContextRelease)
    }

    // -- a release past the user's references, and a retain after them:
    // the handle kind's INVALID_* code, nothing freed (spec/README.md). An
    // adapter's own holder keeps the object alive (a queue its context, an
    // event its queue), so these calls read a live object.
    context_release_past_count: "urContextRelease", "past_user_references" => UR_RESULT_ERROR_INVALID_CONTEXT, |fx| {
        let (context, queue) = context_held_by_queue(fx)?;
        let code = fx.api.urContextRelease(context)?;
        success("urQueueRelease", queue.release())?;
        Ok(code)
    }
    context_retain_after_zero: "urContextRetain", "after_user_references" => UR_RESULT_ERROR_INVALID_CONTEXT, |fx| {
        let (context, queue) = context_held_by_queue(fx)?;
        let code = fx.api.urContextRetain(context)?;
        if code == UR_RESULT_SUCCESS {
            fx.api.urContextRelease(context)?;
        }
        success("urQueueRelease", queue.release())?;
        Ok(code)
    }
    queue_release_past_count: "urQueueRelease", "past_user_references" => UR_RESULT_ERROR_INVALID_QUEUE, |fx| {
        let mut queue = null_mut();
        success("urQueueCreate", fx.api.urQueueCreate(fx.context, fx.device, null(), &mut queue))?;
        let mut event = null_mut();
        if let Err(e) = success("urEnqueueEventsWait", fx.api.urEnqueueEventsWait(queue, 0, null(), &mut event)) {
            fx.api.urQueueRelease(queue)?;
            return Err(e.into());
        }
        let event = fx.own_event(event);
        success("urQueueRelease", fx.api.urQueueRelease(queue))?;
        let code = fx.api.urQueueRelease(queue)?;
        // The event's hold is all that keeps the queue now.
        fx.wait(event.get())?;
        success("urEventRelease", event.release())?;
        Ok(code)
    }

    // -- frees of pointers that are no live allocation's base
    free_interior: "urUSMFree", "interior_pointer" => UR_RESULT_ERROR_INVALID_MEM_OBJECT, |fx| {
        let memory = scratch(fx)?;
        Ok(fx.api.urUSMFree(fx.context, memory.at(8))?)
    }
    free_host_stack: "urUSMFree", "foreign_host_pointer" => UR_RESULT_ERROR_INVALID_MEM_OBJECT, |fx| {
        let mut local = [0u64; 8];
        Ok(fx.api.urUSMFree(fx.context, local.as_mut_ptr().cast())?)
    }
    free_twice: "urUSMFree", "already_freed" => UR_RESULT_ERROR_INVALID_MEM_OBJECT, |fx| {
        let memory = scratch(fx)?;
        let p = memory.ptr;
        success("urUSMFree", memory.free())?;
        Ok(fx.api.urUSMFree(fx.context, p)?)
    }
    free_other_context: "urUSMFree", "pointer_of_another_context" => UR_RESULT_ERROR_INVALID_MEM_OBJECT, |fx| {
        fx.require_kind(UsmKind::Host)?;
        let mut other = null_mut();
        success("urContextCreate", fx.api.urContextCreate(1, &fx.device, null(), &mut other))?;
        let other = fx.own_context(other);
        let mut p = null_mut();
        success("urUSMHostAlloc", fx.api.urUSMHostAlloc(other.get(), null(), null_mut(), 64, &mut p))?;
        let code = fx.api.urUSMFree(fx.context, p)?;
        if code != UR_RESULT_SUCCESS {
            fx.api.urUSMFree(other.get(), p)?;
        }
        Ok(code)
    }
    alloc_info_foreign: "urUSMGetMemAllocInfo", "foreign_pointer_base" => UR_RESULT_ERROR_INVALID_MEM_OBJECT, |fx| {
        let local = [0u64; 8];
        let mut base: *mut c_void = null_mut();
        Ok(fx.api.urUSMGetMemAllocInfo(
            fx.context,
            local.as_ptr().cast(),
            UR_USM_ALLOC_INFO_BASE_PTR,
            size_of_val(&base),
            (&mut base as *mut *mut c_void).cast(),
            null_mut(),
        )?)
    }
    async_free_interior: "urEnqueueUSMFreeExp", "interior_pointer" => UR_RESULT_ERROR_INVALID_VALUE, |fx| {
        require_async(fx)?;
        fx.require_kind(UsmKind::Device)?;
        let mut p = null_mut();
        success("urEnqueueUSMDeviceAllocExp", fx.api.urEnqueueUSMDeviceAllocExp(fx.queue, null_mut(), 64, null(), 0, null(), &mut p, null_mut()))?;
        let interior = p.cast::<u8>().wrapping_add(8).cast::<c_void>();
        let code = fx.api.urEnqueueUSMFreeExp(fx.queue, null_mut(), interior, 0, null(), null_mut())?;
        fx.api.urEnqueueUSMFreeExp(fx.queue, null_mut(), p, 0, null(), null_mut())?;
        Ok(code)
    }
    async_free_blocking: "urEnqueueUSMFreeExp", "blocking_allocation" => UR_RESULT_ERROR_INVALID_VALUE, |fx| {
        require_async(fx)?;
        let memory = scratch(fx)?;
        let code = fx.api.urEnqueueUSMFreeExp(fx.queue, null_mut(), memory.ptr, 0, null(), null_mut())?;
        if code == UR_RESULT_SUCCESS {
            // Freed already: the guard must not free it again.
            fx.api.urQueueFinish(fx.queue)?;
            std::mem::forget(memory);
        }
        Ok(code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn name(row: &Row) -> String {
        format!("{}.bad_input.{}", row.entry, row.input)
    }

    #[test]
    fn every_known_disagreement_names_a_row_and_a_code_other_than_the_spec() {
        for d in KNOWN_DISAGREEMENTS {
            let row = ROWS.iter().find(|r| name(r) == d.case);
            let row = row.unwrap_or_else(|| panic!("KNOWN_DISAGREEMENTS names {}, which is no row", d.case));
            assert_ne!(row.expected, d.got, "{} on {}: the spec's code is no disagreement", d.case, d.adapter);
            assert!(
                crate::names::backend_names().contains(&d.adapter),
                "{}: {} is not a backend name",
                d.case,
                d.adapter
            );
        }
        let mut seen = HashSet::new();
        for d in KNOWN_DISAGREEMENTS {
            assert!(seen.insert((d.case, d.adapter)), "{} on {} is listed twice", d.case, d.adapter);
        }
    }

    #[test]
    fn every_row_expects_an_error_and_has_a_case() {
        assert_eq!(ROWS.len(), CASES.len());
        for (row, case) in ROWS.iter().zip(CASES) {
            assert_ne!(row.expected, UR_RESULT_SUCCESS, "{}", name(row));
            assert_eq!(name(row), case.name);
        }
    }

    #[test]
    fn undefined_bit_is_inside_the_mask() {
        assert_eq!(undefined_bit(UR_QUEUE_FLAGS_MASK), 1 << 31);
        assert_eq!(undefined_bit(0x0000_0ff0), 1 << 11);
        for mask in [UR_USM_HOST_MEM_FLAGS_MASK, UR_USM_ADVICE_FLAGS_MASK, UR_EXP_ENQUEUE_EXT_FLAGS_MASK] {
            assert_ne!(undefined_bit(mask) & mask, 0);
        }
    }
}
