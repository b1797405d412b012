//! urDevicePartition (sub-devices, and the device queries that describe
//! them) and urDeviceSelectBinary.
//!
//! Partition cases run where the device lists a partition kind in
//! `UR_DEVICE_INFO_SUPPORTED_PARTITIONS`, and skip, saying so, where it
//! lists none.

use crate::cases::common::count_then_fill;
use crate::cases::device::release_devices;
use crate::harness::*;
use crate::{check, check_eq, expect_result, expect_success, skip};
use std::ffi::CString;
use std::ptr::{null, null_mut};
use ur_core::abi::*;

pub const CASES: &[Case] = &[
    Case::device("urDevicePartition.equally", equally),
    Case::device("urDevicePartition.by_counts", by_counts),
    Case::device("urDevicePartition.same_request_same_devices", same_request),
    Case::device("urDevicePartition.sub_device_runs_usm", sub_device_usm),
    Case::device("urDevicePartition.invalid_counts", invalid_counts),
    Case::device("urDevicePartition.invalid_properties", invalid_properties),
    Case::device("urDevicePartition.null_properties", null_properties),
    Case::loader("urDevicePartition.null_handle", partition_null_handle),
    Case::device("urDeviceRelease.invalid_past_sub_device_references", release_past_references),
    Case::device("urDeviceSelectBinary.picks_the_device_target", select_binary),
    Case::device("urDeviceSelectBinary.invalid_binary_for_unknown_targets", select_unknown),
    Case::device("urDeviceSelectBinary.null_pointers", select_null_pointers),
    Case::device("urDeviceSelectBinary.invalid_size_zero_binaries", select_zero),
    Case::loader("urDeviceSelectBinary.null_handle", select_null_handle),
];

fn property(kind: ur_device_partition_t, value: u32) -> ur_device_partition_property_t {
    ur_device_partition_property_t { r#type: kind, value: ur_device_partition_value_t { count: value } }
}

fn properties(list: &[ur_device_partition_property_t]) -> ur_device_partition_properties_t {
    ur_device_partition_properties_t {
        stype: UR_STRUCTURE_TYPE_DEVICE_PARTITION_PROPERTIES,
        pNext: null_mut(),
        pProperties: list.as_ptr(),
        PropCount: list.len(),
    }
}

/// An array-valued device query; an empty answer (size 0) is an empty array.
unsafe fn device_array(fx: &DeviceFx, device: ur_device_handle_t, prop: ur_device_info_t) -> Result<Vec<u8>, Outcome> {
    let query = fx.api.fns.urDeviceGetInfo.ok_or_else(|| Outcome::Fail("no urDeviceGetInfo".into()))?;
    let mut size = 0usize;
    expect_success!(Ok::<_, Outcome>(query(device, prop, 0, null_mut(), &mut size)));
    if size == 0 {
        return Ok(Vec::new());
    }
    let mut bytes = vec![0u8; size];
    expect_success!(Ok::<_, Outcome>(query(device, prop, size, bytes.as_mut_ptr().cast(), null_mut())));
    Ok(bytes)
}

unsafe fn supported_partitions(fx: &DeviceFx) -> Result<Vec<ur_device_partition_t>, Outcome> {
    let bytes = device_array(fx, fx.device, UR_DEVICE_INFO_SUPPORTED_PARTITIONS)?;
    Ok(bytes.chunks_exact(4).map(|c| ur_device_partition_t(u32::from_ne_bytes(c.try_into().unwrap()))).collect())
}

/// Skips unless the device offers `kind`.
unsafe fn require(fx: &DeviceFx, kind: ur_device_partition_t) -> CaseResult {
    let kinds = supported_partitions(fx)?;
    if !kinds.contains(&kind) {
        skip!("the device lists no {kind:?} among its SUPPORTED_PARTITIONS ({kinds:?})");
    }
    Ok(())
}

/// Partitions with `list`; every sub-device returned carries one reference.
unsafe fn partition(fx: &DeviceFx, list: &[ur_device_partition_property_t]) -> Result<Vec<ur_device_handle_t>, Outcome> {
    let props = properties(list);
    let subs = count_then_fill("urDevicePartition", |n, subs, count| {
        fx.api.urDevicePartition(fx.device, &props, n, subs, count)
    })?;
    check!(!subs.is_empty(), "urDevicePartition counted no sub-devices");
    check!(subs.iter().all(|s| !s.is_null()), "a null sub-device handle");
    Ok(subs)
}

/// The partition properties a sub-device reports.
unsafe fn partition_type(fx: &DeviceFx, device: ur_device_handle_t) -> Result<Vec<(u32, u32)>, Outcome> {
    let bytes = device_array(fx, device, UR_DEVICE_INFO_PARTITION_TYPE)?;
    check_eq!(bytes.len() % size_of::<ur_device_partition_property_t>(), 0);
    Ok(bytes.chunks_exact(8).map(|c| (u32::from_ne_bytes(c[..4].try_into().unwrap()), u32::from_ne_bytes(c[4..].try_into().unwrap()))).collect())
}

/// What every sub-device must say of itself: its parent, its partition,
/// its compute units, and one user reference.
unsafe fn check_sub_device(fx: &DeviceFx, sub: ur_device_handle_t, made_with: &[(u32, u32)], units: u32) -> CaseResult {
    let api = fx.api;
    check!(sub != fx.device, "a sub-device has its parent's handle");
    check_eq!(api.device_info::<ur_device_handle_t>(sub, UR_DEVICE_INFO_PARENT_DEVICE)?, fx.device);
    check_eq!(api.device_info::<ur_platform_handle_t>(sub, UR_DEVICE_INFO_PLATFORM)?, fx.platform);
    check_eq!(partition_type(fx, sub)?, made_with.to_vec());
    check_eq!(api.device_info::<u32>(sub, UR_DEVICE_INFO_MAX_COMPUTE_UNITS)?, units);
    check!(api.device_info::<u32>(sub, UR_DEVICE_INFO_REFERENCE_COUNT)? >= 1, "a sub-device handed out has no reference");
    // The parent itself is a root device: no parent, no partition of its own.
    check_eq!(api.device_info::<ur_device_handle_t>(fx.device, UR_DEVICE_INFO_PARENT_DEVICE)?, null_mut());
    check_eq!(partition_type(fx, fx.device)?, Vec::<(u32, u32)>::new());
    Ok(())
}

unsafe fn equally(fx: &DeviceFx) -> CaseResult {
    require(fx, UR_DEVICE_PARTITION_EQUALLY)?;
    let units = fx.api.device_info::<u32>(fx.device, UR_DEVICE_INFO_MAX_COMPUTE_UNITS)?;
    let max = fx.api.device_info::<u32>(fx.device, UR_DEVICE_INFO_PARTITION_MAX_SUB_DEVICES)?;
    check!(max >= 1, "PARTITION_MAX_SUB_DEVICES is 0 on a partitionable device");
    let subs = partition(fx, &[property(UR_DEVICE_PARTITION_EQUALLY, 1)])?;
    check_eq!(subs.len() as u32, units.min(max));
    for &s in &subs {
        check_sub_device(fx, s, &[(UR_DEVICE_PARTITION_EQUALLY.0, 1)], 1)?;
    }
    release_devices(fx.api, &subs)
}

unsafe fn by_counts(fx: &DeviceFx) -> CaseResult {
    require(fx, UR_DEVICE_PARTITION_BY_COUNTS)?;
    let units = fx.api.device_info::<u32>(fx.device, UR_DEVICE_INFO_MAX_COMPUTE_UNITS)?;
    // Two sub-devices where there are two compute units, else one.
    let counts: Vec<u32> = if units >= 2 { vec![1, units - 1] } else { vec![1] };
    let list: Vec<_> = counts.iter().map(|&c| property(UR_DEVICE_PARTITION_BY_COUNTS, c)).collect();
    let subs = partition(fx, &list)?;
    check_eq!(subs.len(), counts.len());
    let made_with: Vec<(u32, u32)> = counts.iter().map(|&c| (UR_DEVICE_PARTITION_BY_COUNTS.0, c)).collect();
    for (&s, &c) in subs.iter().zip(&counts) {
        check_sub_device(fx, s, &made_with, c)?;
    }
    release_devices(fx.api, &subs)
}

/// The first of EQUALLY and BY_COUNTS the device supports, or a skip.
unsafe fn equally_or_by_counts(fx: &DeviceFx) -> Result<ur_device_partition_t, Outcome> {
    let kinds = supported_partitions(fx)?;
    let Some(&kind) = kinds.iter().find(|k| [UR_DEVICE_PARTITION_EQUALLY, UR_DEVICE_PARTITION_BY_COUNTS].contains(k)) else {
        skip!("the device lists neither EQUALLY nor BY_COUNTS among its SUPPORTED_PARTITIONS ({kinds:?})");
    };
    Ok(kind)
}

/// UR: repeated calls with the same inputs give the same output, in order.
unsafe fn same_request(fx: &DeviceFx) -> CaseResult {
    let kind = equally_or_by_counts(fx)?;
    let first = partition(fx, &[property(kind, 1)])?;
    let second = partition(fx, &[property(kind, 1)]);
    release_devices(fx.api, &first)?;
    let second = second?;
    check_eq!(second, first);
    release_devices(fx.api, &second)
}

/// A sub-device is a device like any other: a context, a queue and USM on
/// it, data written and read back.
unsafe fn sub_device_usm(fx: &DeviceFx) -> CaseResult {
    let kind = equally_or_by_counts(fx)?;
    let subs = partition(fx, &[property(kind, 1)])?;
    let result = (|| {
        let sub_fx = DeviceFx::new(fx.api, fx.adapter, fx.platform, fx.backend, subs[0])?;
        sub_fx.run(|sfx| {
            let kind = if sfx.supports(UsmKind::Device)? { UsmKind::Device } else { UsmKind::Shared };
            let block = sfx.alloc(kind, 4096)?;
            let data = pattern_bytes(4096, 7);
            sfx.write(sfx.queue, block.ptr, &data)?;
            let back = sfx.read(sfx.queue, block.ptr, data.len())?;
            compare("data through a sub-device's queue", &back, &data)?;
            expect_success!(block.free());
            Ok(())
        })
    })();
    release_devices(fx.api, &subs)?;
    result
}

unsafe fn invalid_counts(fx: &DeviceFx) -> CaseResult {
    require(fx, UR_DEVICE_PARTITION_BY_COUNTS)?;
    let units = fx.api.device_info::<u32>(fx.device, UR_DEVICE_INFO_MAX_COMPUTE_UNITS)?;
    let mut subs = [null_mut(); 4];
    let mut count = 0u32;
    for (what, list) in [
        ("a zero count", vec![property(UR_DEVICE_PARTITION_BY_COUNTS, 0)]),
        ("counts past the compute units", vec![property(UR_DEVICE_PARTITION_BY_COUNTS, units), property(UR_DEVICE_PARTITION_BY_COUNTS, 1)]),
    ] {
        let props = properties(&list);
        let got = fx.api.urDevicePartition(fx.device, &props, 4, subs.as_mut_ptr(), &mut count)?;
        expect_code(UR_RESULT_ERROR_INVALID_DEVICE_PARTITION_COUNT, got, &format!("urDevicePartition with {what}"))?;
    }
    check!(subs.iter().all(|s| s.is_null()), "a failed urDevicePartition wrote sub-device handles");
    Ok(())
}

unsafe fn invalid_properties(fx: &DeviceFx) -> CaseResult {
    let mut subs = [null_mut(); 4];
    let mut count = 0u32;
    let api = fx.api;
    let unknown_list = [property(ur_device_partition_t(0x1234), 1)];
    let unknown = properties(&unknown_list);
    expect_result!(UR_RESULT_ERROR_INVALID_ENUMERATION, api.urDevicePartition(fx.device, &unknown, 4, subs.as_mut_ptr(), &mut count));
    let empty_list = [];
    let empty = properties(&empty_list);
    expect_result!(UR_RESULT_ERROR_INVALID_VALUE, api.urDevicePartition(fx.device, &empty, 4, subs.as_mut_ptr(), &mut count));
    let mixed_list = [property(UR_DEVICE_PARTITION_BY_COUNTS, 1), property(UR_DEVICE_PARTITION_EQUALLY, 1)];
    let mixed = properties(&mixed_list);
    expect_result!(UR_RESULT_ERROR_INVALID_VALUE, api.urDevicePartition(fx.device, &mixed, 4, subs.as_mut_ptr(), &mut count));
    let zero_equally_list = [property(UR_DEVICE_PARTITION_EQUALLY, 0)];
    let zero_equally = properties(&zero_equally_list);
    expect_result!(UR_RESULT_ERROR_INVALID_VALUE, api.urDevicePartition(fx.device, &zero_equally, 4, subs.as_mut_ptr(), &mut count));
    // Two affinity domains at once name no single domain.
    let two_domains_list = [property(UR_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, 0x3)];
    let two_domains = properties(&two_domains_list);
    expect_result!(UR_RESULT_ERROR_INVALID_VALUE, api.urDevicePartition(fx.device, &two_domains, 4, subs.as_mut_ptr(), &mut count));
    // A kind the device does not list.
    let kinds = supported_partitions(fx)?;
    if let Some(kind) = [UR_DEVICE_PARTITION_EQUALLY, UR_DEVICE_PARTITION_BY_COUNTS].into_iter().find(|k| !kinds.contains(k)) {
        let unsupported_list = [property(kind, 1)];
        let unsupported = properties(&unsupported_list);
        expect_result!(UR_RESULT_ERROR_INVALID_VALUE, api.urDevicePartition(fx.device, &unsupported, 4, subs.as_mut_ptr(), &mut count));
    }
    check!(subs.iter().all(|s| s.is_null()), "a failed urDevicePartition wrote sub-device handles");
    Ok(())
}

unsafe fn null_properties(fx: &DeviceFx) -> CaseResult {
    let mut count = 0u32;
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_POINTER, fx.api.urDevicePartition(fx.device, null(), 0, null_mut(), &mut count));
    let mut no_list = properties(&[]); // pProperties replaced below; never read
    no_list.pProperties = null();
    no_list.PropCount = 1;
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_POINTER, fx.api.urDevicePartition(fx.device, &no_list, 0, null_mut(), &mut count));
    Ok(())
}

unsafe fn partition_null_handle(fx: &LoaderFx) -> CaseResult {
    let list = [property(UR_DEVICE_PARTITION_EQUALLY, 1)];
    let props = properties(&list);
    let mut count = 0u32;
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_HANDLE, fx.api.urDevicePartition(null_mut(), &props, 0, null_mut(), &mut count));
    Ok(())
}

/// A sub-device counts its user's references; one release too many is an
/// error and frees nothing (the device still answers).
unsafe fn release_past_references(fx: &DeviceFx) -> CaseResult {
    let kind = equally_or_by_counts(fx)?;
    let subs = partition(fx, &[property(kind, 1)])?;
    let sub = subs[0];
    let before = fx.api.device_info::<u32>(sub, UR_DEVICE_INFO_REFERENCE_COUNT)?;
    expect_success!(fx.api.urDeviceRetain(sub));
    check_eq!(fx.api.device_info::<u32>(sub, UR_DEVICE_INFO_REFERENCE_COUNT)?, before + 1);
    expect_success!(fx.api.urDeviceRelease(sub));
    release_devices(fx.api, &subs)?;
    // Every reference handed out is given back; a sub-device partitioned
    // before this case (same request) may hold others, so release until
    // refused, within a bound.
    let mut refused = false;
    for _ in 0..64 {
        if fx.api.urDeviceRelease(sub)? != UR_RESULT_SUCCESS {
            refused = true;
            break;
        }
    }
    check!(refused, "urDeviceRelease of a sub-device was never refused past its references");
    check_eq!(fx.api.device_info::<u32>(sub, UR_DEVICE_INFO_REFERENCE_COUNT)?, 0);
    check_eq!(fx.api.device_info::<ur_device_handle_t>(sub, UR_DEVICE_INFO_PARENT_DEVICE)?, fx.device);
    Ok(())
}

/// Every target the reference header names.
const TARGETS: [&str; 8] = ["spir", "spir64", "spir64_x86_64", "spir64_gen", "spir64_fpga", "nvptx64", "amdgcn", "native_cpu"];

fn binaries(targets: &[CString]) -> Vec<ur_device_binary_t> {
    targets
        .iter()
        .map(|t| ur_device_binary_t { stype: UR_STRUCTURE_TYPE_DEVICE_BINARY, pNext: null(), pDeviceTargetSpec: t.as_ptr() })
        .collect()
}

/// The target each backend runs, for a device of `device_type`, as
/// spec/device.md states it: the expected answer, not a gate.
fn expected_target(backend: ur_backend_t, device_type: ur_device_type_t) -> Option<&'static str> {
    match backend {
        UR_BACKEND_NATIVE_CPU => Some("native_cpu"),
        UR_BACKEND_CUDA => Some("nvptx64"),
        UR_BACKEND_OPENCL => Some(match device_type {
            UR_DEVICE_TYPE_CPU => "spir64_x86_64",
            UR_DEVICE_TYPE_GPU => "spir64_gen",
            UR_DEVICE_TYPE_FPGA => "spir64_fpga",
            _ => "spir64",
        }),
        _ => None,
    }
}

unsafe fn select_binary(fx: &DeviceFx) -> CaseResult {
    let device_type = fx.api.device_info::<ur_device_type_t>(fx.device, UR_DEVICE_INFO_TYPE)?;
    let Some(expected) = expected_target(fx.backend, device_type) else {
        skip!("spec/device.md names no image target for backend {}", crate::names::backend_name(fx.backend));
    };
    // The wanted target last, so that a first-listed pick is caught.
    let mut names: Vec<&str> = TARGETS.iter().copied().filter(|t| *t != expected).collect();
    names.push(expected);
    let targets: Vec<CString> = names.iter().map(|t| CString::new(*t).unwrap()).collect();
    let list = binaries(&targets);
    let mut selected = u32::MAX;
    expect_success!(fx.api.urDeviceSelectBinary(fx.device, list.as_ptr(), list.len() as u32, &mut selected));
    check!((selected as usize) < names.len(), "selected index {selected} is out of range");
    check_eq!(names[selected as usize], expected);
    Ok(())
}

/// With no image for this device, the answer is INVALID_BINARY, the code
/// SYCL's device selection takes as "none fits" (any other error aborts it).
unsafe fn select_unknown(fx: &DeviceFx) -> CaseResult {
    let device_type = fx.api.device_info::<ur_device_type_t>(fx.device, UR_DEVICE_INFO_TYPE)?;
    let own = expected_target(fx.backend, device_type);
    let foreign: Vec<CString> = ["<unknown>", "amdgcn", "nvptx64", "native_cpu"]
        .into_iter()
        .filter(|t| Some(*t) != own)
        .map(|t| CString::new(t).unwrap())
        .collect();
    let list = binaries(&foreign);
    let mut selected = u32::MAX;
    expect_result!(UR_RESULT_ERROR_INVALID_BINARY, fx.api.urDeviceSelectBinary(fx.device, list.as_ptr(), list.len() as u32, &mut selected));
    Ok(())
}

unsafe fn select_null_pointers(fx: &DeviceFx) -> CaseResult {
    let targets = [CString::new("spir64").unwrap()];
    let list = binaries(&targets);
    let mut selected = 0u32;
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_POINTER, fx.api.urDeviceSelectBinary(fx.device, null(), 1, &mut selected));
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_POINTER, fx.api.urDeviceSelectBinary(fx.device, list.as_ptr(), 1, null_mut()));
    Ok(())
}

unsafe fn select_zero(fx: &DeviceFx) -> CaseResult {
    let targets = [CString::new("spir64").unwrap()];
    let list = binaries(&targets);
    let mut selected = 0u32;
    expect_result!(UR_RESULT_ERROR_INVALID_SIZE, fx.api.urDeviceSelectBinary(fx.device, list.as_ptr(), 0, &mut selected));
    Ok(())
}

unsafe fn select_null_handle(fx: &LoaderFx) -> CaseResult {
    let targets = [CString::new("spir64").unwrap()];
    let list = binaries(&targets);
    let mut selected = 0u32;
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_HANDLE, fx.api.urDeviceSelectBinary(null_mut(), list.as_ptr(), 1, &mut selected));
    Ok(())
}
