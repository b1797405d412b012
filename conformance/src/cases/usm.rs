//! urUSMHostAlloc, urUSMDeviceAlloc, urUSMSharedAlloc, urUSMFree,
//! urUSMGetMemAllocInfo and the USM pool object.

use crate::cases::common::reserved_flags;
use crate::harness::*;
use crate::names::{result_name, usm_type_name};
use crate::{check, check_eq, expect_result, expect_success, info, ref_counting, ref_null_cases, skip};
use core::ffi::c_void;
use std::ptr::{null, null_mut};
use ur_core::abi::*;

pub const CASES: &[Case] = &[
    Case::device("urUSMHostAlloc.success", host_alloc),
    Case::device("urUSMHostAlloc.aligned", host_aligned),
    Case::device("urUSMHostAlloc.large_alignment", host_large_align),
    Case::device("urUSMHostAlloc.with_descriptors", host_descriptors),
    Case::loader("urUSMHostAlloc.null_context", host_null_context),
    Case::device("urUSMHostAlloc.null_output", host_null_output),
    Case::device("urUSMHostAlloc.invalid_hints", host_bad_hints),
    Case::device("urUSMHostAlloc.invalid_alignment", host_bad_align),
    Case::device("urUSMHostAlloc.invalid_size", host_bad_size),
    Case::device("urUSMDeviceAlloc.success", device_alloc),
    Case::device("urUSMDeviceAlloc.aligned", device_aligned),
    Case::device("urUSMDeviceAlloc.large_alignment", device_large_align),
    Case::device("urUSMDeviceAlloc.with_descriptors", device_descriptors),
    Case::loader("urUSMDeviceAlloc.null_context", device_null_context),
    Case::device("urUSMDeviceAlloc.null_device", device_null_device),
    Case::device("urUSMDeviceAlloc.null_output", device_null_output),
    Case::device("urUSMDeviceAlloc.invalid_hints", device_bad_hints),
    Case::device("urUSMDeviceAlloc.invalid_alignment", device_bad_align),
    Case::device("urUSMDeviceAlloc.invalid_size", device_bad_size),
    Case::device("urUSMSharedAlloc.success", shared_alloc),
    Case::device("urUSMSharedAlloc.aligned", shared_aligned),
    Case::device("urUSMSharedAlloc.large_alignment", shared_large_align),
    Case::device("urUSMSharedAlloc.with_descriptors", shared_descriptors),
    Case::loader("urUSMSharedAlloc.null_context", shared_null_context),
    Case::device("urUSMSharedAlloc.null_device", shared_null_device),
    Case::device("urUSMSharedAlloc.null_output", shared_null_output),
    Case::device("urUSMSharedAlloc.invalid_hints", shared_bad_hints),
    Case::device("urUSMSharedAlloc.invalid_alignment", shared_bad_align),
    Case::device("urUSMSharedAlloc.invalid_size", shared_bad_size),
    Case::device("urUSMFree.success", free),
    Case::device("urUSMFree.pending_commands", free_pending),
    Case::loader("urUSMFree.null_context", free_null_context),
    Case::device("urUSMFree.null_pointer", free_null_pointer),
    Case::device("urUSMFree.foreign_pointer", free_foreign),
    Case::device("urUSMFree.interior_pointer", free_interior),
    Case::device("urUSMFree.double_free", free_twice),
    Case::device("urUSMGetMemAllocInfo.type", info_type),
    Case::device("urUSMGetMemAllocInfo.base_and_size", info_base_size),
    Case::device("urUSMGetMemAllocInfo.device", info_device),
    Case::device("urUSMGetMemAllocInfo.unknown_pointer", info_unknown),
    Case::loader("urUSMGetMemAllocInfo.null_context", info_null_context),
    Case::device("urUSMGetMemAllocInfo.null_pointer", info_null_pointer),
    Case::device("urUSMGetMemAllocInfo.invalid_enumeration", info_bad_enum),
    Case::device("urUSMPoolCreate.allocations_from_pool", pool_create),
    Case::device("urUSMPoolCreate.with_limits", pool_limits),
    Case::loader("urUSMPoolCreate.null_context", pool_null_context),
    Case::device("urUSMPoolCreate.null_descriptor", pool_null_desc),
    Case::device("urUSMPoolCreate.null_output", pool_null_output),
    Case::device("urUSMPoolCreate.invalid_flags", pool_bad_flags),
    Case::device("urUSMPoolRetain.success", pool_retain),
    Case::loader("urUSMPoolRetain.null_handle", pool_retain_null),
    Case::device("urUSMPoolRelease.success", pool_release),
    Case::loader("urUSMPoolRelease.null_handle", pool_release_null),
    Case::device("urUSMPoolGetInfo.context_and_reference_count", pool_info),
    Case::device("urUSMPoolGetInfo.size_protocol", pool_info_protocol),
    Case::loader("urUSMPoolGetInfo.null_handle", pool_info_null),
    Case::device("urUSMPoolGetInfo.invalid_enumeration", pool_info_bad_enum),
];

/// A hint bit outside `ur_usm_advice_flag_t`.
const INVALID_HINT: ur_usm_advice_flags_t = reserved_flags(UR_USM_ADVICE_FLAGS_MASK, 1 << 17);

fn usm_desc(hints: ur_usm_advice_flags_t, align: u32, next: *const c_void) -> ur_usm_desc_t {
    ur_usm_desc_t { stype: UR_STRUCTURE_TYPE_USM_DESC, pNext: next, hints, align }
}

fn entry_name(kind: UsmKind) -> &'static str {
    match kind {
        UsmKind::Host => "urUSMHostAlloc",
        UsmKind::Device => "urUSMDeviceAlloc",
        UsmKind::Shared => "urUSMSharedAlloc",
    }
}

/// Calls the allocation entry point of `kind` with these arguments.
unsafe fn raw_alloc(
    fx: &DeviceFx,
    kind: UsmKind,
    device: ur_device_handle_t,
    desc: *const ur_usm_desc_t,
    pool: ur_usm_pool_handle_t,
    size: usize,
    out: *mut *mut c_void,
) -> Result<ur_result_t, Outcome> {
    Ok(match kind {
        UsmKind::Host => fx.api.urUSMHostAlloc(fx.context, desc, pool, size, out)?,
        UsmKind::Device => fx.api.urUSMDeviceAlloc(fx.context, device, desc, pool, size, out)?,
        UsmKind::Shared => fx.api.urUSMSharedAlloc(fx.context, device, desc, pool, size, out)?,
    })
}

/// Expects an allocation to fail with `expected`; frees what a wrong
/// success returned.
unsafe fn expect_alloc_error(
    fx: &DeviceFx,
    kind: UsmKind,
    expected: ur_result_t,
    desc: *const ur_usm_desc_t,
    size: usize,
    how: &str,
) -> CaseResult {
    let mut ptr = null_mut();
    let code = raw_alloc(fx, kind, fx.device, desc, null_mut(), size, &mut ptr)?;
    if code == UR_RESULT_SUCCESS && !ptr.is_null() {
        fx.api.urUSMFree(fx.context, ptr)?;
    }
    expect_code(expected, code, &format!("{} with {how}", entry_name(kind)))
}

/// What `urUSMGetMemAllocInfo` answers for `prop` of `ptr`, read into
/// `value` (no size returned).
unsafe fn alloc_info_into<T>(
    fx: &DeviceFx,
    ptr: *const c_void,
    prop: ur_usm_alloc_info_t,
    value: &mut T,
) -> Result<ur_result_t, String> {
    fx.api.urUSMGetMemAllocInfo(fx.context, ptr, prop, size_of::<T>(), (value as *mut T).cast(), null_mut())
}

unsafe fn usm_type(fx: &DeviceFx, ptr: *const c_void) -> Result<ur_usm_type_t, Outcome> {
    // Not a type, so that an answer that writes nothing shows.
    let mut kind = ur_usm_type_t(0xffff);
    expect_success!(alloc_info_into(fx, ptr, UR_USM_ALLOC_INFO_TYPE, &mut kind));
    Ok(kind)
}

pub(crate) unsafe fn alloc_info<T: Copy>(fx: &DeviceFx, ptr: *const c_void, prop: ur_usm_alloc_info_t) -> Result<T, Outcome> {
    let mut value = std::mem::MaybeUninit::<T>::zeroed();
    let mut size = 0usize;
    let code =
        fx.api.urUSMGetMemAllocInfo(fx.context, ptr, prop, size_of::<T>(), value.as_mut_ptr().cast(), &mut size)?;
    expect_code(UR_RESULT_SUCCESS, code, &format!("urUSMGetMemAllocInfo({prop:?})"))?;
    check_eq!(size, size_of::<T>());
    Ok(value.assume_init())
}

/// The pool `ptr` reports through `UR_USM_ALLOC_INFO_POOL`, an optional
/// query: `None` where the adapter answers UNSUPPORTED_ENUMERATION.
pub(crate) unsafe fn reported_pool(fx: &DeviceFx, ptr: *const c_void) -> Result<Option<ur_usm_pool_handle_t>, Outcome> {
    let mut owner: ur_usm_pool_handle_t = null_mut();
    let code = alloc_info_into(fx, ptr, UR_USM_ALLOC_INFO_POOL, &mut owner)?;
    if code == UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION {
        return Ok(None);
    }
    expect_code(UR_RESULT_SUCCESS, code, "urUSMGetMemAllocInfo(POOL)")?;
    Ok(Some(owner))
}

fn expected_type(kind: UsmKind) -> ur_usm_type_t {
    match kind {
        UsmKind::Host => UR_USM_TYPE_HOST,
        UsmKind::Device => UR_USM_TYPE_DEVICE,
        UsmKind::Shared => UR_USM_TYPE_SHARED,
    }
}

/// Allocates, moves data through the allocation, checks its type and frees.
unsafe fn alloc_success(fx: &DeviceFx, kind: UsmKind) -> CaseResult {
    const SIZE: usize = 4096 + 17;
    let memory = fx.alloc(kind, SIZE)?;
    let data = pattern_bytes(SIZE, 3);
    if kind != UsmKind::Device {
        // Host and shared memory are the host's to touch directly.
        std::ptr::copy_nonoverlapping(data.as_ptr(), memory.bytes(), SIZE);
        compare("host reads of host-written USM", std::slice::from_raw_parts(memory.bytes(), SIZE), &data)?;
    }
    fx.write(fx.queue, memory.ptr, &data)?;
    compare("USM written and read back by the queue", &fx.read(fx.queue, memory.ptr, SIZE)?, &data)?;
    check_eq!(usm_type(fx, memory.ptr)?, expected_type(kind));
    expect_success!(memory.free());
    Ok(())
}

unsafe fn alloc_aligned(fx: &DeviceFx, kind: UsmKind) -> CaseResult {
    fx.require_kind(kind)?;
    for align in [1u32, 8, 16, 64, 128] {
        for size in [1usize, 100, 4096] {
            let desc = usm_desc(0, align, null());
            let mut ptr = null_mut();
            let code = raw_alloc(fx, kind, fx.device, &desc, null_mut(), size, &mut ptr)?;
            expect_code(UR_RESULT_SUCCESS, code, &format!("{}(align {align}, size {size})", entry_name(kind)))?;
            let misaligned = ptr as usize % align as usize;
            expect_success!(fx.api.urUSMFree(fx.context, ptr));
            check!(misaligned == 0, "{}(align {align}) returned {ptr:?}", entry_name(kind));
        }
    }
    Ok(())
}

/// spec/usm.md, "Alignment": every power of two is honoured while
/// `size + align` fits UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE (for alignments
/// above 4 KiB), and is OUT_OF_HOST_MEMORY (host USM) or OUT_OF_DEVICE_MEMORY
/// past that, the same on every adapter; 2 GiB is the largest `align` holds.
unsafe fn alloc_large_align(fx: &DeviceFx, kind: UsmKind) -> CaseResult {
    fx.require_kind(kind)?;
    let max = fx.api.device_info::<u64>(fx.device, UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE)?;
    const SIZE: usize = 64;
    for align in [4096u32, 1 << 16, 1 << 21, 1 << 26, 1 << 31] {
        let desc = usm_desc(0, align, null());
        let mut ptr = null_mut();
        let code = raw_alloc(fx, kind, fx.device, &desc, null_mut(), SIZE, &mut ptr)?;
        let what = format!("{}(align {align}, size {SIZE}) with MAX_MEM_ALLOC_SIZE {max}", entry_name(kind));
        if align > 4096 && SIZE as u64 + align as u64 > max {
            let expected = if kind == UsmKind::Host {
                UR_RESULT_ERROR_OUT_OF_HOST_MEMORY
            } else {
                UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY
            };
            if code == UR_RESULT_SUCCESS {
                fx.api.urUSMFree(fx.context, ptr)?;
            }
            expect_code(expected, code, &what)?;
            continue;
        }
        expect_code(UR_RESULT_SUCCESS, code, &what)?;
        let misaligned = ptr as usize % align as usize;
        if kind != UsmKind::Device {
            // The whole of the allocation is the caller's, past the alignment slack.
            std::ptr::write_bytes(ptr.cast::<u8>(), 0x5a, SIZE);
        }
        expect_success!(fx.api.urUSMFree(fx.context, ptr));
        check!(misaligned == 0, "{what} returned {ptr:?}");
    }
    Ok(())
}

unsafe fn alloc_descriptors(fx: &DeviceFx, kind: UsmKind) -> CaseResult {
    fx.require_kind(kind)?;
    let host = ur_usm_host_desc_t { stype: UR_STRUCTURE_TYPE_USM_HOST_DESC, pNext: null(), flags: 0 };
    let device = ur_usm_device_desc_t {
        stype: UR_STRUCTURE_TYPE_USM_DEVICE_DESC,
        pNext: (&host as *const ur_usm_host_desc_t).cast(),
        flags: 0,
    };
    let desc = usm_desc(UR_USM_ADVICE_FLAG_DEFAULT.0, 0, (&device as *const ur_usm_device_desc_t).cast());
    let mut ptr = null_mut();
    let code = raw_alloc(fx, kind, fx.device, &desc, null_mut(), 256, &mut ptr)?;
    expect_code(UR_RESULT_SUCCESS, code, &format!("{} with a chain of descriptors", entry_name(kind)))?;
    expect_success!(fx.api.urUSMFree(fx.context, ptr));
    Ok(())
}

unsafe fn alloc_null_context(fx: &LoaderFx, kind: UsmKind) -> CaseResult {
    let device = fx.topology.devices.first().map(|d| d.handle).ok_or("no device")?;
    let mut ptr = null_mut();
    let code = match kind {
        UsmKind::Host => fx.api.urUSMHostAlloc(null_mut(), null(), null_mut(), 64, &mut ptr)?,
        UsmKind::Device => fx.api.urUSMDeviceAlloc(null_mut(), device, null(), null_mut(), 64, &mut ptr)?,
        UsmKind::Shared => fx.api.urUSMSharedAlloc(null_mut(), device, null(), null_mut(), 64, &mut ptr)?,
    };
    expect_code(UR_RESULT_ERROR_INVALID_NULL_HANDLE, code, &format!("{} with a null context", entry_name(kind)))
}

unsafe fn alloc_null_device(fx: &DeviceFx, kind: UsmKind) -> CaseResult {
    let mut ptr = null_mut();
    let code = raw_alloc(fx, kind, null_mut(), null(), null_mut(), 64, &mut ptr)?;
    if code == UR_RESULT_SUCCESS && !ptr.is_null() {
        fx.api.urUSMFree(fx.context, ptr)?;
    }
    expect_code(UR_RESULT_ERROR_INVALID_NULL_HANDLE, code, &format!("{} with a null device", entry_name(kind)))
}

unsafe fn alloc_null_output(fx: &DeviceFx, kind: UsmKind) -> CaseResult {
    let code = raw_alloc(fx, kind, fx.device, null(), null_mut(), 64, null_mut())?;
    expect_code(UR_RESULT_ERROR_INVALID_NULL_POINTER, code, &format!("{} with a null ppMem", entry_name(kind)))
}

unsafe fn alloc_bad_hints(fx: &DeviceFx, kind: UsmKind) -> CaseResult {
    let desc = usm_desc(INVALID_HINT, 0, null());
    expect_alloc_error(fx, kind, UR_RESULT_ERROR_INVALID_ENUMERATION, &desc, 64, "an undefined hint bit")
}

unsafe fn alloc_bad_align(fx: &DeviceFx, kind: UsmKind) -> CaseResult {
    fx.require_kind(kind)?;
    for align in [3u32, 24, 100] {
        let desc = usm_desc(0, align, null());
        expect_alloc_error(fx, kind, UR_RESULT_ERROR_INVALID_VALUE, &desc, 64, &format!("align {align}"))?;
    }
    Ok(())
}

unsafe fn alloc_bad_size(fx: &DeviceFx, kind: UsmKind) -> CaseResult {
    fx.require_kind(kind)?;
    expect_alloc_error(fx, kind, UR_RESULT_ERROR_INVALID_USM_SIZE, null(), 0, "size 0")?;
    let max = fx.api.device_info::<u64>(fx.device, UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE)?;
    let too_big = usize::try_from(max).unwrap_or(usize::MAX).saturating_add(1);
    expect_alloc_error(fx, kind, UR_RESULT_ERROR_INVALID_USM_SIZE, null(), too_big, "size MAX_MEM_ALLOC_SIZE + 1")
}

/// One case function per allocation kind from a function generic over it.
macro_rules! per_kind {
    ($fx:ty: $( $name:ident => $generic:ident($kind:expr); )*) => {
        $( unsafe fn $name(fx: &$fx) -> CaseResult { $generic(fx, $kind) } )*
    };
}

per_kind! { DeviceFx:
    host_alloc => alloc_success(UsmKind::Host);
    device_alloc => alloc_success(UsmKind::Device);
    shared_alloc => alloc_success(UsmKind::Shared);
    host_aligned => alloc_aligned(UsmKind::Host);
    host_large_align => alloc_large_align(UsmKind::Host);
    device_large_align => alloc_large_align(UsmKind::Device);
    shared_large_align => alloc_large_align(UsmKind::Shared);
    device_aligned => alloc_aligned(UsmKind::Device);
    shared_aligned => alloc_aligned(UsmKind::Shared);
    host_descriptors => alloc_descriptors(UsmKind::Host);
    device_descriptors => alloc_descriptors(UsmKind::Device);
    shared_descriptors => alloc_descriptors(UsmKind::Shared);
    device_null_device => alloc_null_device(UsmKind::Device);
    shared_null_device => alloc_null_device(UsmKind::Shared);
    host_null_output => alloc_null_output(UsmKind::Host);
    device_null_output => alloc_null_output(UsmKind::Device);
    shared_null_output => alloc_null_output(UsmKind::Shared);
    host_bad_hints => alloc_bad_hints(UsmKind::Host);
    device_bad_hints => alloc_bad_hints(UsmKind::Device);
    shared_bad_hints => alloc_bad_hints(UsmKind::Shared);
    host_bad_align => alloc_bad_align(UsmKind::Host);
    device_bad_align => alloc_bad_align(UsmKind::Device);
    shared_bad_align => alloc_bad_align(UsmKind::Shared);
    host_bad_size => alloc_bad_size(UsmKind::Host);
    device_bad_size => alloc_bad_size(UsmKind::Device);
    shared_bad_size => alloc_bad_size(UsmKind::Shared);
}

per_kind! { LoaderFx:
    host_null_context => alloc_null_context(UsmKind::Host);
    device_null_context => alloc_null_context(UsmKind::Device);
    shared_null_context => alloc_null_context(UsmKind::Shared);
}

/// Skips a case about USM bookkeeping on a device with no USM at all.
unsafe fn require_usm(fx: &DeviceFx) -> CaseResult {
    if fx.supported_kinds()?.is_empty() {
        skip!("the device reports no USM support of any kind");
    }
    Ok(())
}

unsafe fn free(fx: &DeviceFx) -> CaseResult {
    require_usm(fx)?;
    for kind in fx.supported_kinds()? {
        let memory = fx.alloc(kind, 1000)?;
        expect_success!(memory.free());
    }
    Ok(())
}

unsafe fn free_pending(fx: &DeviceFx) -> CaseResult {
    // urUSMFree waits for commands that may still use the memory.
    const BIG: usize = 32 << 20;
    let memory = fx.alloc(UsmKind::Device, BIG)?;
    let event = fx.fill(fx.queue, memory.ptr, &[0x5], BIG, &[])?;
    expect_success!(memory.free());
    fx.wait(event.get())?;
    check_eq!(fx.status(event.get())?, UR_EVENT_STATUS_COMPLETE);
    Ok(())
}

unsafe fn free_null_context(fx: &LoaderFx) -> CaseResult {
    let mut byte = 0u8;
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_HANDLE, fx.api.urUSMFree(null_mut(), (&mut byte as *mut u8).cast()));
    Ok(())
}

unsafe fn free_null_pointer(fx: &DeviceFx) -> CaseResult {
    require_usm(fx)?;
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_POINTER, fx.api.urUSMFree(fx.context, null_mut()));
    Ok(())
}

unsafe fn free_foreign(fx: &DeviceFx) -> CaseResult {
    require_usm(fx)?;
    let mut not_usm = vec![0u8; 64];
    expect_result!(UR_RESULT_ERROR_INVALID_MEM_OBJECT, fx.api.urUSMFree(fx.context, not_usm.as_mut_ptr().cast()));
    Ok(())
}

unsafe fn free_interior(fx: &DeviceFx) -> CaseResult {
    let memory = fx.alloc(UsmKind::Device, 4096)?;
    let data = pattern_bytes(4096, 9);
    fx.write(fx.queue, memory.ptr, &data)?;
    expect_result!(UR_RESULT_ERROR_INVALID_MEM_OBJECT, fx.api.urUSMFree(fx.context, memory.at(64)));
    // The refused free released nothing.
    compare("an allocation after a refused interior free", &fx.read(fx.queue, memory.ptr, 4096)?, &data)?;
    expect_success!(memory.free());
    Ok(())
}

unsafe fn free_twice(fx: &DeviceFx) -> CaseResult {
    let memory = fx.alloc(UsmKind::Device, 4096)?;
    let ptr = memory.ptr;
    expect_success!(memory.free());
    expect_result!(UR_RESULT_ERROR_INVALID_MEM_OBJECT, fx.api.urUSMFree(fx.context, ptr));
    Ok(())
}

unsafe fn info_type(fx: &DeviceFx) -> CaseResult {
    for kind in fx.supported_kinds()? {
        let memory = fx.alloc(kind, 512)?;
        let found = usm_type(fx, memory.at(100))?;
        check!(found == expected_type(kind), "{kind:?} memory reports type {}", usm_type_name(found));
    }
    Ok(())
}

unsafe fn info_base_size(fx: &DeviceFx) -> CaseResult {
    for kind in fx.supported_kinds()? {
        let memory = fx.alloc(kind, 1000)?;
        for offset in [0usize, 1, 999] {
            let base = alloc_info::<*mut c_void>(fx, memory.at(offset), UR_USM_ALLOC_INFO_BASE_PTR)?;
            check!(base == memory.ptr, "{kind:?} memory: BASE_PTR of base+{offset} is {base:?}, not {:?}", memory.ptr);
            let size = alloc_info::<usize>(fx, memory.at(offset), UR_USM_ALLOC_INFO_SIZE)?;
            check!(size >= 1000, "{kind:?} memory: SIZE is {size} for a 1000-byte allocation");
        }
    }
    Ok(())
}

unsafe fn info_device(fx: &DeviceFx) -> CaseResult {
    for kind in [UsmKind::Device, UsmKind::Shared] {
        if !fx.supports(kind)? {
            continue;
        }
        let memory = fx.alloc(kind, 64)?;
        let device = alloc_info::<ur_device_handle_t>(fx, memory.ptr, UR_USM_ALLOC_INFO_DEVICE)?;
        check!(device == fx.device, "{kind:?} memory reports device {device:?}, not {:?}", fx.device);
    }
    Ok(())
}

unsafe fn info_unknown(fx: &DeviceFx) -> CaseResult {
    require_usm(fx)?;
    let not_usm = [0u8; 64];
    let mut kind = ur_usm_type_t(0xffff);
    let code = alloc_info_into(fx, not_usm.as_ptr().cast(), UR_USM_ALLOC_INFO_TYPE, &mut kind)?;
    // The reference allows either answer for memory USM did not allocate.
    match code {
        UR_RESULT_SUCCESS => {
            check!(kind == UR_USM_TYPE_UNKNOWN, "a stack address reports type {}", usm_type_name(kind))
        }
        UR_RESULT_ERROR_INVALID_MEM_OBJECT => {}
        other => {
            return Err(format!("urUSMGetMemAllocInfo(TYPE) of a stack address returned {}", result_name(other)).into())
        }
    }
    Ok(())
}

unsafe fn info_null_context(fx: &LoaderFx) -> CaseResult {
    let byte = 0u8;
    let mut kind = ur_usm_type_t(0);
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_HANDLE,
        fx.api.urUSMGetMemAllocInfo(
            null_mut(),
            (&byte as *const u8).cast(),
            UR_USM_ALLOC_INFO_TYPE,
            4,
            (&mut kind as *mut ur_usm_type_t).cast(),
            null_mut()
        )
    );
    Ok(())
}

unsafe fn info_null_pointer(fx: &DeviceFx) -> CaseResult {
    require_usm(fx)?;
    let mut kind = ur_usm_type_t(0);
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_POINTER, alloc_info_into(fx, null(), UR_USM_ALLOC_INFO_TYPE, &mut kind));
    Ok(())
}

unsafe fn info_bad_enum(fx: &DeviceFx) -> CaseResult {
    let memory = fx.alloc(UsmKind::Device, 64)?;
    let past_last = ur_usm_alloc_info_t(UR_USM_ALLOC_INFO_POOL.0 + 1);
    let mut value = [0u8; 64];
    expect_result!(UR_RESULT_ERROR_INVALID_ENUMERATION, alloc_info_into(fx, memory.ptr, past_last, &mut value));
    Ok(())
}

// ---------------------------------------------------------------------------
// Pools

fn pool_desc(flags: ur_usm_pool_flags_t, next: *const c_void) -> ur_usm_pool_desc_t {
    ur_usm_pool_desc_t { stype: UR_STRUCTURE_TYPE_USM_POOL_DESC, pNext: next, flags }
}

/// A pool of the fixture context, or a skip when the device has none.
unsafe fn new_pool(fx: &DeviceFx, desc: &mut ur_usm_pool_desc_t) -> Result<OwnedPool, Outcome> {
    fx.require(UR_DEVICE_INFO_USM_POOL_SUPPORT, "USM pool support")?;
    let mut pool = null_mut();
    expect_success!(fx.api.urUSMPoolCreate(fx.context, desc, &mut pool));
    check!(!pool.is_null(), "urUSMPoolCreate succeeded with a null handle");
    Ok(fx.own_pool(pool))
}

unsafe fn pool_refs(fx: &DeviceFx, pool: ur_usm_pool_handle_t) -> Result<u32, Outcome> {
    Ok(fx.api.pool_info::<u32>(pool, UR_USM_POOL_INFO_REFERENCE_COUNT)?)
}

unsafe fn pool_create(fx: &DeviceFx) -> CaseResult {
    let pool = new_pool(fx, &mut pool_desc(0, null()))?;
    for kind in fx.supported_kinds()? {
        let mut ptrs = Vec::new();
        for size in [64usize, 4096, 1 << 20] {
            let mut ptr = null_mut();
            let code = raw_alloc(fx, kind, fx.device, null(), pool.get(), size, &mut ptr)?;
            expect_code(UR_RESULT_SUCCESS, code, &format!("{} from a pool", entry_name(kind)))?;
            ptrs.push((ptr, size));
        }
        let outcome = (|| -> CaseResult {
            for &(ptr, size) in &ptrs {
                let data = pattern_bytes(size, size as u8);
                fx.write(fx.queue, ptr, &data)?;
                compare("pool memory written and read back", &fx.read(fx.queue, ptr, size)?, &data)?;
                check_eq!(usm_type(fx, ptr)?, expected_type(kind));
                if let Some(owner) = reported_pool(fx, ptr)? {
                    check!(owner == pool.get(), "{kind:?} memory from a pool reports pool {owner:?}");
                }
            }
            Ok(())
        })();
        for (ptr, _) in ptrs {
            expect_success!(fx.api.urUSMFree(fx.context, ptr));
        }
        outcome?;
    }
    expect_success!(pool.release());
    Ok(())
}

unsafe fn pool_limits(fx: &DeviceFx) -> CaseResult {
    let limits = ur_usm_pool_limits_desc_t {
        stype: UR_STRUCTURE_TYPE_USM_POOL_LIMITS_DESC,
        pNext: null(),
        maxPoolableSize: 1 << 20,
        minDriverAllocSize: 0,
    };
    let pool = new_pool(fx, &mut pool_desc(0, (&limits as *const ur_usm_pool_limits_desc_t).cast()))?;
    // Above the poolable size, allocations still succeed.
    for size in [256usize, 4 << 20] {
        let mut ptr = null_mut();
        expect_success!(fx.api.urUSMDeviceAlloc(fx.context, fx.device, null(), pool.get(), size, &mut ptr));
        expect_success!(fx.api.urUSMFree(fx.context, ptr));
    }
    Ok(())
}

unsafe fn pool_null_context(fx: &LoaderFx) -> CaseResult {
    let mut pool = null_mut();
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_HANDLE,
        fx.api.urUSMPoolCreate(null_mut(), &mut pool_desc(0, null()), &mut pool)
    );
    Ok(())
}

unsafe fn pool_null_desc(fx: &DeviceFx) -> CaseResult {
    let mut pool = null_mut();
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_POINTER, fx.api.urUSMPoolCreate(fx.context, null_mut(), &mut pool));
    Ok(())
}

unsafe fn pool_null_output(fx: &DeviceFx) -> CaseResult {
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_POINTER,
        fx.api.urUSMPoolCreate(fx.context, &mut pool_desc(0, null()), null_mut())
    );
    Ok(())
}

unsafe fn pool_bad_flags(fx: &DeviceFx) -> CaseResult {
    let flags = const { reserved_flags(UR_USM_POOL_FLAGS_MASK, UR_USM_POOL_FLAG_READ_ONLY_EXP.0 << 1) };
    let mut pool = null_mut();
    let code = fx.api.urUSMPoolCreate(fx.context, &mut pool_desc(flags, null()), &mut pool)?;
    if code == UR_RESULT_SUCCESS {
        drop(fx.own_pool(pool));
    }
    expect_code(UR_RESULT_ERROR_INVALID_ENUMERATION, code, "urUSMPoolCreate with an undefined flag")
}

unsafe fn pool_retain(fx: &DeviceFx) -> CaseResult {
    let pool = new_pool(fx, &mut pool_desc(0, null()))?;
    check_eq!(pool_refs(fx, pool.get())?, 1);
    ref_counting!(fx.api, urUSMPoolRetain, urUSMPoolRelease).retain_then_release(pool.get(), |p| pool_refs(fx, p))
}

unsafe fn pool_release(fx: &DeviceFx) -> CaseResult {
    let pool = new_pool(fx, &mut pool_desc(0, null()))?;
    ref_counting!(fx.api, urUSMPoolRetain, urUSMPoolRelease).release_drops_one_then_last(pool, |p| pool_refs(fx, p))
}

ref_null_cases!(urUSMPoolRetain, urUSMPoolRelease => pool_retain_null, pool_release_null);

unsafe fn pool_info(fx: &DeviceFx) -> CaseResult {
    let pool = new_pool(fx, &mut pool_desc(0, null()))?;
    check_eq!(fx.api.pool_info::<ur_context_handle_t>(pool.get(), UR_USM_POOL_INFO_CONTEXT)?, fx.context);
    check_eq!(pool_refs(fx, pool.get())?, 1);
    Ok(())
}

unsafe fn pool_info_protocol(fx: &DeviceFx) -> CaseResult {
    let pool = new_pool(fx, &mut pool_desc(0, null()))?;
    info!(fx.api, urUSMPoolGetInfo).size_protocol(pool.get(), &[("CONTEXT", UR_USM_POOL_INFO_CONTEXT)])
}

unsafe fn pool_info_null(fx: &LoaderFx) -> CaseResult {
    info!(fx.api, urUSMPoolGetInfo).null_handle(UR_USM_POOL_INFO_CONTEXT)
}

unsafe fn pool_info_bad_enum(fx: &DeviceFx) -> CaseResult {
    let pool = new_pool(fx, &mut pool_desc(0, null()))?;
    info!(fx.api, urUSMPoolGetInfo).past_last(pool.get(), ur_usm_pool_info_t(UR_USM_POOL_INFO_USED_HIGH_EXP.0 + 1))
}
