//! urDeviceGet, urDeviceGetSelected, urDeviceGetInfo, urDeviceRetain/Release,
//! urDeviceGetNativeHandle and urDeviceGetGlobalTimestamps.

use crate::cases::common::count_then_fill;
use crate::cases::native::native_device;
use crate::harness::*;
use crate::names::{device_type_name, DEVICE_TYPES};
use crate::ur::*;
use crate::{
    cases_calling, check, check_eq, expect_result, expect_success, info, info_cases,
    native_handle_cases, ref_counting, ref_null_cases, skip,
};
use std::ptr::null_mut;
use ur_core::abi::*;

pub const CASES: &[Case] = &[
    Case::platform("urDeviceGet.count_then_fill", get_count_then_fill),
    Case::platform("urDeviceGet.fewer_entries", get_fewer_entries),
    Case::platform("urDeviceGet.by_type", get_by_type),
    Case::loader("urDeviceGet.null_handle", get_null_handle),
    Case::platform("urDeviceGet.invalid_enumeration", get_bad_type),
    Case::platform("urDeviceGet.invalid_size", get_invalid_size),
    Case::platform("urDeviceGet.null_pointer", get_null_pointer),
    Case::platform("urDeviceGetSelected.matches_get", selected),
    Case::loader("urDeviceGetSelected.null_handle", selected_null_handle),
    Case::platform("urDeviceGetSelected.invalid_enumeration", selected_bad_type),
    Case::platform("urDeviceGetSelected.invalid_value", selected_invalid_value),
    Case::device("urDeviceGetInfo.identity", info_identity),
    Case::device("urDeviceGetInfo.limits", info_limits),
    Case::device("urDeviceGetInfo.work_group_limits", info_work_groups),
    Case::device("urDeviceGetInfo.sub_groups", info_sub_groups),
    Case::device("urDeviceGetInfo.local_memory", info_local_memory),
    Case::device("urDeviceGetInfo.kernel_argument_limits", info_argument_limits),
    Case::device("urDeviceGetInfo.fp_extensions", info_fp_extensions),
    Case::device("urDeviceGetInfo.usm_capabilities", info_usm),
    Case::device("urDeviceGetInfo.pool_support", info_pools),
    Case::device("urDeviceGetInfo.size_protocol", info_protocol),
    Case::loader("urDeviceGetInfo.null_handle", info_null),
    Case::device("urDeviceGetInfo.invalid_enumeration", info_bad_enum),
    Case::device("urDeviceGetInfo.foreign_or_wrong_handle", info_foreign),
    Case::device("urDeviceRetain.root_device", retain_root),
    Case::loader("urDeviceRetain.null_handle", retain_null),
    Case::device("urDeviceRelease.root_device", release_root),
    Case::loader("urDeviceRelease.null_handle", release_null),
    Case::device("urDeviceGetNativeHandle.success", native_handle),
    Case::loader("urDeviceGetNativeHandle.null_handle", native_handle_null_handle),
    Case::device("urDeviceGetNativeHandle.null_pointer", native_handle_null_pointer),
    Case::device("urDeviceGetGlobalTimestamps.monotonic", timestamps),
    Case::device("urDeviceGetGlobalTimestamps.optional_outputs", timestamps_optional),
    Case::loader("urDeviceGetGlobalTimestamps.null_handle", timestamps_null_handle),
];

/// The types a device can have: every named type but the first two, the
/// DEFAULT and ALL selectors.
const CONCRETE_TYPES: &[ur_device_type_t] = DEVICE_TYPES.split_at(2).1;
const _: () = assert!(DEVICE_TYPES[0].0 == UR_DEVICE_TYPE_DEFAULT.0 && DEVICE_TYPES[1].0 == UR_DEVICE_TYPE_ALL.0);
const INVALID_TYPE: ur_device_type_t = ur_device_type_t(UR_DEVICE_TYPE_CUSTOM.0 + 1);

/// The devices of a platform of one type; each carries a reference the
/// caller must release.
unsafe fn devices_of(
    api: &Api,
    platform: ur_platform_handle_t,
    kind: ur_device_type_t,
) -> Result<Vec<ur_device_handle_t>, Outcome> {
    count_then_fill("urDeviceGet", |n, devices, count| api.urDeviceGet(platform, kind, n, devices, count))
}

pub(crate) unsafe fn release_devices(api: &Api, devices: &[ur_device_handle_t]) -> CaseResult {
    ref_counting!(api, urDeviceRetain, urDeviceRelease).release_each(devices)
}

unsafe fn get_count_then_fill(fx: &PlatformFx) -> CaseResult {
    let first = devices_of(fx.api, fx.platform, UR_DEVICE_TYPE_ALL)?;
    let second = devices_of(fx.api, fx.platform, UR_DEVICE_TYPE_ALL);
    let outcome = (|| -> CaseResult {
        let second = second?;
        check!(!first.is_empty(), "a platform without devices");
        for &device in &first {
            check!(!device.is_null(), "a null device among {first:?}");
        }
        // The reference promises identical handles, in the same order.
        check_eq!(second, first);
        release_devices(fx.api, &second)
    })();
    release_devices(fx.api, &first)?;
    outcome
}

unsafe fn get_fewer_entries(fx: &PlatformFx) -> CaseResult {
    let all = devices_of(fx.api, fx.platform, UR_DEVICE_TYPE_ALL)?;
    release_devices(fx.api, &all)?;
    check!(!all.is_empty(), "a platform without devices");
    let mut out = [null_mut(), 0x1 as ur_device_handle_t];
    let mut count = 0u32;
    expect_success!(fx.api.urDeviceGet(fx.platform, UR_DEVICE_TYPE_ALL, 1, out.as_mut_ptr(), &mut count));
    release_devices(fx.api, &out[..1])?;
    check_eq!(out[0], all[0]);
    check_eq!(out[1], 0x1 as ur_device_handle_t);
    check_eq!(count as usize, all.len());
    Ok(())
}

unsafe fn get_by_type(fx: &PlatformFx) -> CaseResult {
    let all = devices_of(fx.api, fx.platform, UR_DEVICE_TYPE_ALL)?;
    release_devices(fx.api, &all)?;
    let mut found = 0usize;
    for &kind in CONCRETE_TYPES {
        let devices = devices_of(fx.api, fx.platform, kind)?;
        release_devices(fx.api, &devices)?;
        for &device in &devices {
            let actual = fx.api.device_info::<ur_device_type_t>(device, UR_DEVICE_INFO_TYPE)?;
            check!(
                actual == kind,
                "urDeviceGet({}) returned a device of type {}",
                device_type_name(kind),
                device_type_name(actual)
            );
            check!(all.contains(&device), "a {} device missing from UR_DEVICE_TYPE_ALL", device_type_name(kind));
        }
        found += devices.len();
    }
    check_eq!(found, all.len());
    let defaults = devices_of(fx.api, fx.platform, UR_DEVICE_TYPE_DEFAULT)?;
    release_devices(fx.api, &defaults)?;
    check!(all.is_empty() || !defaults.is_empty(), "UR_DEVICE_TYPE_DEFAULT finds nothing among {} devices", all.len());
    Ok(())
}

/// urDeviceGet and urDeviceGetSelected take the same arguments and refuse
/// the same wrong ones (but for a list with no room: SIZE for one, VALUE for
/// the other), so their error cases share one call.
#[derive(Clone, Copy)]
enum Lister {
    Get,
    Selected,
}

/// The argument a lister's error case spoils.
#[derive(Clone, Copy)]
enum ListSpoil {
    NullPlatform,
    BadType,
    NoRoom,
    NullList,
}

/// One call of `lister` on `platform` with `spoil`'s argument wrong, which
/// must answer `expected`.
unsafe fn list_call_refused(
    api: &Api,
    platform: ur_platform_handle_t,
    lister: Lister,
    spoil: ListSpoil,
    expected: ur_result_t,
) -> CaseResult {
    let (mut count, mut device) = (0u32, null_mut());
    let count: *mut u32 = &mut count;
    let (platform, kind, n, devices, count, how) = match spoil {
        ListSpoil::NullPlatform => (null_mut(), UR_DEVICE_TYPE_ALL, 0, null_mut(), count, "a null platform"),
        ListSpoil::BadType => (platform, INVALID_TYPE, 0, null_mut(), count, "an invalid device type"),
        ListSpoil::NoRoom => (platform, UR_DEVICE_TYPE_ALL, 0, &mut device as *mut _, null_mut(), "a list of 0 entries"),
        ListSpoil::NullList => (platform, UR_DEVICE_TYPE_ALL, 1, null_mut(), count, "1 entry and no list"),
    };
    let (entry, got) = match lister {
        Lister::Get => ("urDeviceGet", api.urDeviceGet(platform, kind, n, devices, count)?),
        Lister::Selected => ("urDeviceGetSelected", api.urDeviceGetSelected(platform, kind, n, devices, count)?),
    };
    expect_code(expected, got, &format!("{entry} with {how}"))
}

/// `lister` on the fixture's platform with `spoil`'s argument wrong.
unsafe fn list_refuses(fx: &PlatformFx, lister: Lister, spoil: ListSpoil, expected: ur_result_t) -> CaseResult {
    list_call_refused(fx.api, fx.platform, lister, spoil, expected)
}

/// `lister` on a null platform: INVALID_NULL_HANDLE.
unsafe fn list_null_platform(fx: &LoaderFx, lister: Lister) -> CaseResult {
    list_call_refused(fx.api, null_mut(), lister, ListSpoil::NullPlatform, UR_RESULT_ERROR_INVALID_NULL_HANDLE)
}

cases_calling! {
    LoaderFx: get_null_handle = list_null_platform(Lister::Get);
    PlatformFx: get_bad_type = list_refuses(Lister::Get, ListSpoil::BadType, UR_RESULT_ERROR_INVALID_ENUMERATION);
    PlatformFx: get_invalid_size = list_refuses(Lister::Get, ListSpoil::NoRoom, UR_RESULT_ERROR_INVALID_SIZE);
    PlatformFx: get_null_pointer = list_refuses(Lister::Get, ListSpoil::NullList, UR_RESULT_ERROR_INVALID_NULL_POINTER);
    LoaderFx: selected_null_handle = list_null_platform(Lister::Selected);
    PlatformFx: selected_bad_type = list_refuses(Lister::Selected, ListSpoil::BadType, UR_RESULT_ERROR_INVALID_ENUMERATION);
    PlatformFx: selected_invalid_value = list_refuses(Lister::Selected, ListSpoil::NoRoom, UR_RESULT_ERROR_INVALID_VALUE);
}

unsafe fn selected(fx: &PlatformFx) -> CaseResult {
    let all = devices_of(fx.api, fx.platform, UR_DEVICE_TYPE_ALL)?;
    release_devices(fx.api, &all)?;
    let mut count = 0u32;
    expect_success!(fx.api.urDeviceGetSelected(fx.platform, UR_DEVICE_TYPE_ALL, 0, null_mut(), &mut count));
    let mut chosen = vec![null_mut(); count as usize];
    if count > 0 {
        expect_success!(fx.api.urDeviceGetSelected(
            fx.platform,
            UR_DEVICE_TYPE_ALL,
            count,
            chosen.as_mut_ptr(),
            null_mut()
        ));
    }
    release_devices(fx.api, &chosen)?;
    for device in &chosen {
        check!(all.contains(device), "urDeviceGetSelected returned a device urDeviceGet does not know");
    }
    if std::env::var_os("ONEAPI_DEVICE_SELECTOR").is_none() {
        // With no selector, every device is selected.
        check_eq!(chosen, all);
    }
    Ok(())
}

unsafe fn info_identity(fx: &DeviceFx) -> CaseResult {
    let api = fx.api;
    let kind = api.device_info::<ur_device_type_t>(fx.device, UR_DEVICE_INFO_TYPE)?;
    check!(CONCRETE_TYPES.contains(&kind), "UR_DEVICE_INFO_TYPE is {}", device_type_name(kind));
    check_eq!(api.device_info::<ur_platform_handle_t>(fx.device, UR_DEVICE_INFO_PLATFORM)?, fx.platform);
    let name = api.device_info_string(fx.device, UR_DEVICE_INFO_NAME)?;
    check!(!name.trim().is_empty(), "the device has an empty name");
    api.device_info_string(fx.device, UR_DEVICE_INFO_VENDOR)?;
    api.device_info_string(fx.device, UR_DEVICE_INFO_DRIVER_VERSION)?;
    check_eq!(api.device_info::<ur_bool_t>(fx.device, UR_DEVICE_INFO_AVAILABLE)?, 1);
    check!(
        api.device_info::<ur_device_handle_t>(fx.device, UR_DEVICE_INFO_PARENT_DEVICE)?.is_null(),
        "a root device reports a parent"
    );
    Ok(())
}

unsafe fn info_limits(fx: &DeviceFx) -> CaseResult {
    let api = fx.api;
    let units = api.device_info::<u32>(fx.device, UR_DEVICE_INFO_MAX_COMPUTE_UNITS)?;
    check!(units >= 1, "MAX_COMPUTE_UNITS is 0");
    let global = api.device_info::<u64>(fx.device, UR_DEVICE_INFO_GLOBAL_MEM_SIZE)?;
    check!(global > 0, "GLOBAL_MEM_SIZE is 0");
    let max_alloc = api.device_info::<u64>(fx.device, UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE)?;
    check!(max_alloc > 0 && max_alloc <= global, "MAX_MEM_ALLOC_SIZE {max_alloc} against GLOBAL_MEM_SIZE {global}");
    let queue_flags = api.device_info::<ur_queue_flags_t>(fx.device, UR_DEVICE_INFO_QUEUE_PROPERTIES)?;
    check!(queue_flags & UR_QUEUE_FLAGS_MASK == 0, "QUEUE_PROPERTIES 0x{queue_flags:x} has undefined bits");
    Ok(())
}

/// An array answer of `urDeviceGetInfo`, with the two-call protocol.
unsafe fn device_info_array<T: Copy>(fx: &DeviceFx, prop: ur_device_info_t) -> Result<Vec<T>, Outcome> {
    let bytes = info_bytes(fx.api.fns.urDeviceGetInfo, "urDeviceGetInfo", fx.device, prop)?;
    check!(
        bytes.len() % size_of::<T>() == 0,
        "{prop:?} answered {} bytes, not whole elements of {}",
        bytes.len(),
        size_of::<T>()
    );
    Ok(bytes.chunks_exact(size_of::<T>()).map(|c| std::ptr::read_unaligned(c.as_ptr().cast::<T>())).collect())
}

/// The ND-range limits SYCL reads for every device (`device::get_info` has
/// no fallback when one is missing).
unsafe fn info_work_groups(fx: &DeviceFx) -> CaseResult {
    let dims = fx.api.device_info::<u32>(fx.device, UR_DEVICE_INFO_MAX_WORK_ITEM_DIMENSIONS)?;
    // SYCL's ranges have three dimensions and reads that many sizes.
    check!(dims >= 3, "MAX_WORK_ITEM_DIMENSIONS is {dims}");
    let sizes = device_info_array::<usize>(fx, UR_DEVICE_INFO_MAX_WORK_ITEM_SIZES)?;
    check_eq!(sizes.len(), dims as usize);
    let group = fx.api.device_info::<usize>(fx.device, UR_DEVICE_INFO_MAX_WORK_GROUP_SIZE)?;
    check!(group >= 1, "MAX_WORK_GROUP_SIZE is 0");
    for (i, &size) in sizes.iter().enumerate() {
        check!(size >= 1, "MAX_WORK_ITEM_SIZES[{i}] is 0");
        // A group of `size` work-items along one dimension is a group.
        check!(size <= group, "MAX_WORK_ITEM_SIZES[{i}] {size} exceeds MAX_WORK_GROUP_SIZE {group}");
    }
    let groups = device_info_array::<usize>(fx, UR_DEVICE_INFO_MAX_WORK_GROUPS_3D)?;
    check_eq!(groups.len(), 3);
    check!(groups.iter().all(|&g| g >= 1), "MAX_WORK_GROUPS_3D {groups:?} has a 0");
    let total = fx.api.device_info::<usize>(fx.device, UR_DEVICE_INFO_MAX_WORK_GROUPS)?;
    check!(total >= 1, "MAX_WORK_GROUPS is 0");
    Ok(())
}

unsafe fn info_sub_groups(fx: &DeviceFx) -> CaseResult {
    let group = fx.api.device_info::<usize>(fx.device, UR_DEVICE_INFO_MAX_WORK_GROUP_SIZE)?;
    let count = fx.api.device_info::<u32>(fx.device, UR_DEVICE_INFO_MAX_NUM_SUB_GROUPS)?;
    // SYCL counts at least one sub-group per work-group, never more
    // sub-groups than work-items.
    check!(count >= 1, "MAX_NUM_SUB_GROUPS is 0");
    check!(count as usize <= group, "MAX_NUM_SUB_GROUPS {count} exceeds MAX_WORK_GROUP_SIZE {group}");
    let sizes = device_info_array::<u32>(fx, UR_DEVICE_INFO_SUB_GROUP_SIZES_INTEL)?;
    check!(!sizes.is_empty(), "SUB_GROUP_SIZES_INTEL is empty");
    for &size in &sizes {
        check!(size >= 1 && size as usize <= group, "sub-group size {size} against MAX_WORK_GROUP_SIZE {group}");
    }
    let progress = fx.api.device_info::<ur_bool_t>(fx.device, UR_DEVICE_INFO_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS)?;
    check!(progress <= 1, "SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS is {progress}, not a ur_bool_t");
    Ok(())
}

unsafe fn info_local_memory(fx: &DeviceFx) -> CaseResult {
    let kind = fx.api.device_info::<ur_device_local_mem_type_t>(fx.device, UR_DEVICE_INFO_LOCAL_MEM_TYPE)?;
    check!(
        [UR_DEVICE_LOCAL_MEM_TYPE_NONE, UR_DEVICE_LOCAL_MEM_TYPE_LOCAL, UR_DEVICE_LOCAL_MEM_TYPE_GLOBAL].contains(&kind),
        "LOCAL_MEM_TYPE {kind:?} is no ur_device_local_mem_type_t"
    );
    let size = fx.api.device_info::<u64>(fx.device, UR_DEVICE_INFO_LOCAL_MEM_SIZE)?;
    let device_type = fx.api.device_info::<ur_device_type_t>(fx.device, UR_DEVICE_INFO_TYPE)?;
    let compiles = fx.api.device_info::<ur_bool_t>(fx.device, UR_DEVICE_INFO_COMPILER_AVAILABLE)? != 0;
    if kind == UR_DEVICE_LOCAL_MEM_TYPE_NONE && size == 0 && !compiles {
        // SYCL's minimum is for kernels, which such a device never runs.
        skip!("the device reports no local memory (LOCAL_MEM_TYPE NONE, size 0) and no compiler: it runs no kernels");
    }
    if device_type != UR_DEVICE_TYPE_CUSTOM {
        // SYCL's minimum for every device that is not custom.
        check!(size >= 32 * 1024, "LOCAL_MEM_SIZE {size} is below 32 KiB");
        check!(kind != UR_DEVICE_LOCAL_MEM_TYPE_NONE, "a device that is not custom reports no local memory");
    }
    let global = fx.api.device_info::<u64>(fx.device, UR_DEVICE_INFO_GLOBAL_MEM_SIZE)?;
    check!(size <= global, "LOCAL_MEM_SIZE {size} exceeds GLOBAL_MEM_SIZE {global}");
    Ok(())
}

/// Kernel argument limits, against OpenCL's minimums for a full-profile
/// device (SYCL's deprecated descriptors read them unchanged).
unsafe fn info_argument_limits(fx: &DeviceFx) -> CaseResult {
    let params = fx.api.device_info::<usize>(fx.device, UR_DEVICE_INFO_MAX_PARAMETER_SIZE)?;
    check!(params >= 1024, "MAX_PARAMETER_SIZE {params} is below 1024 bytes");
    let constant = fx.api.device_info::<u64>(fx.device, UR_DEVICE_INFO_MAX_CONSTANT_BUFFER_SIZE)?;
    let global = fx.api.device_info::<u64>(fx.device, UR_DEVICE_INFO_GLOBAL_MEM_SIZE)?;
    check!(
        constant >= 64 * 1024 && constant <= global,
        "MAX_CONSTANT_BUFFER_SIZE {constant} against 64 KiB and GLOBAL_MEM_SIZE {global}"
    );
    let args = fx.api.device_info::<u32>(fx.device, UR_DEVICE_INFO_MAX_CONSTANT_ARGS)?;
    check!(args >= 8, "MAX_CONSTANT_ARGS {args} is below 8");
    let printf = fx.api.device_info::<usize>(fx.device, UR_DEVICE_INFO_PRINTF_BUFFER_SIZE)?;
    check!(printf >= 1024 * 1024, "PRINTF_BUFFER_SIZE {printf} is below 1 MiB");
    Ok(())
}

/// SYCL derives `aspect::fp64` and `aspect::fp16` from the OpenCL names in
/// `UR_DEVICE_INFO_EXTENSIONS`, so a device with double or half arithmetic
/// must name it there, and one that names it must describe it.
unsafe fn info_fp_extensions(fx: &DeviceFx) -> CaseResult {
    let extensions = fx.api.device_info_string(fx.device, UR_DEVICE_INFO_EXTENSIONS)?;
    let names: Vec<&str> = extensions.split_ascii_whitespace().collect();
    for (prop, name) in [(UR_DEVICE_INFO_DOUBLE_FP_CONFIG, "cl_khr_fp64"), (UR_DEVICE_INFO_HALF_FP_CONFIG, "cl_khr_fp16")] {
        let config = fx.api.device_info::<ur_device_fp_capability_flags_t>(fx.device, prop)?;
        check!(
            (config != 0) == names.contains(&name),
            "{prop:?} is 0x{config:x} but EXTENSIONS {} {name}",
            if names.contains(&name) { "names" } else { "does not name" }
        );
    }
    Ok(())
}

unsafe fn info_usm(fx: &DeviceFx) -> CaseResult {
    for prop in [
        UR_DEVICE_INFO_USM_HOST_SUPPORT,
        UR_DEVICE_INFO_USM_DEVICE_SUPPORT,
        UR_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT,
        UR_DEVICE_INFO_USM_CROSS_SHARED_SUPPORT,
        UR_DEVICE_INFO_USM_SYSTEM_SHARED_SUPPORT,
    ] {
        let caps = fx.api.device_info::<ur_device_usm_access_capability_flags_t>(fx.device, prop)?;
        check!(caps & UR_DEVICE_USM_ACCESS_CAPABILITY_FLAGS_MASK == 0, "{prop:?} 0x{caps:x} has undefined bits");
    }
    Ok(())
}

unsafe fn info_pools(fx: &DeviceFx) -> CaseResult {
    let pools = fx.api.device_info::<ur_bool_t>(fx.device, UR_DEVICE_INFO_USM_POOL_SUPPORT)?;
    check!(pools <= 1, "USM_POOL_SUPPORT is {pools}, not a ur_bool_t");
    let async_alloc = fx.api.device_info::<ur_bool_t>(fx.device, UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP)?;
    check!(async_alloc <= 1, "ASYNC_USM_ALLOCATIONS_SUPPORT_EXP is {async_alloc}, not a ur_bool_t");
    Ok(())
}

info_cases!(urDeviceGetInfo, DeviceFx, |fx| fx.device,
    props: [("NAME", UR_DEVICE_INFO_NAME), ("MAX_COMPUTE_UNITS", UR_DEVICE_INFO_MAX_COMPUTE_UNITS)],
    null: UR_DEVICE_INFO_TYPE,
    past_last: ur_device_info_t(UR_DEVICE_INFO_ENQUEUE_HOST_TASK_SUPPORT_EXP.0 + 1));

unsafe fn device_refs(fx: &DeviceFx) -> Result<u32, Outcome> {
    Ok(fx.api.device_info::<u32>(fx.device, UR_DEVICE_INFO_REFERENCE_COUNT)?)
}

unsafe fn retain_root(fx: &DeviceFx) -> CaseResult {
    let before = device_refs(fx)?;
    expect_success!(fx.api.urDeviceRetain(fx.device));
    let during = device_refs(fx);
    expect_success!(fx.api.urDeviceRelease(fx.device));
    // Root devices keep their count: retain and release do not move it.
    check_eq!(during?, before);
    Ok(())
}

unsafe fn release_root(fx: &DeviceFx) -> CaseResult {
    expect_success!(fx.api.urDeviceRetain(fx.device));
    let before = device_refs(fx)?;
    expect_success!(fx.api.urDeviceRelease(fx.device));
    check_eq!(device_refs(fx)?, before);
    // The device stays usable.
    fx.api.device_info_string(fx.device, UR_DEVICE_INFO_NAME)?;
    Ok(())
}

ref_null_cases!(urDeviceRetain, urDeviceRelease => retain_null, release_null);

native_handle_cases!(urDeviceGetNativeHandle, DeviceFx, |fx| fx.device,
    probe: native_device(fx.api, fx.device));

unsafe fn timestamps(fx: &DeviceFx) -> CaseResult {
    let (mut device_first, mut host_first) = (0u64, 0u64);
    let code = fx.api.urDeviceGetGlobalTimestamps(fx.device, &mut device_first, &mut host_first)?;
    if code == UR_RESULT_ERROR_UNSUPPORTED_FEATURE {
        skip!("the adapter cannot read device timestamps (UNSUPPORTED_FEATURE, which the reference allows)");
    }
    expect_code(UR_RESULT_SUCCESS, code, "urDeviceGetGlobalTimestamps")?;
    let (mut device_then, mut host_then) = (0u64, 0u64);
    expect_success!(fx.api.urDeviceGetGlobalTimestamps(fx.device, &mut device_then, &mut host_then));
    check!(device_then >= device_first, "device time went back: {device_first} then {device_then}");
    check!(host_then >= host_first, "host time went back: {host_first} then {host_then}");
    check!(host_first > 0, "host timestamp is 0");
    Ok(())
}

unsafe fn timestamps_optional(fx: &DeviceFx) -> CaseResult {
    let mut stamp = 0u64;
    let code = fx.api.urDeviceGetGlobalTimestamps(fx.device, null_mut(), null_mut())?;
    if code == UR_RESULT_ERROR_UNSUPPORTED_FEATURE {
        skip!("the adapter cannot read device timestamps (UNSUPPORTED_FEATURE, which the reference allows)");
    }
    expect_code(UR_RESULT_SUCCESS, code, "urDeviceGetGlobalTimestamps(no outputs)")?;
    expect_success!(fx.api.urDeviceGetGlobalTimestamps(fx.device, &mut stamp, null_mut()));
    expect_success!(fx.api.urDeviceGetGlobalTimestamps(fx.device, null_mut(), &mut stamp));
    check!(stamp > 0, "host timestamp is 0");
    Ok(())
}

unsafe fn timestamps_null_handle(fx: &LoaderFx) -> CaseResult {
    let (mut device, mut host) = (0u64, 0u64);
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_HANDLE,
        fx.api.urDeviceGetGlobalTimestamps(null_mut(), &mut device, &mut host)
    );
    Ok(())
}

unsafe fn info_foreign(fx: &DeviceFx) -> CaseResult {
    let info = info!(fx.api, urDeviceGetInfo);
    info.refuses(foreign_handle(), "a handle no adapter made", UR_DEVICE_INFO_TYPE, UR_RESULT_ERROR_INVALID_DEVICE)?;
    // A live handle of another kind is not a device either.
    info.refuses(fx.context.cast(), "a context", UR_DEVICE_INFO_TYPE, UR_RESULT_ERROR_INVALID_DEVICE)
}
