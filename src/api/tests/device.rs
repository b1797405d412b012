//! `urDevice*` and `urUsmP2P*Exp`.

use super::*;

fn partition_props(props: &[ur_device_partition_property_t]) -> ur_device_partition_properties_t {
    ur_device_partition_properties_t { stype: UR_STRUCTURE_TYPE_DEVICE_PARTITION_PROPERTIES, pNext: null_mut(), pProperties: props.as_ptr(), PropCount: props.len() }
}

fn prop(r#type: ur_device_partition_t, value: u32) -> ur_device_partition_property_t {
    ur_device_partition_property_t { r#type, value: ur_device_partition_value_t { count: value } }
}

/// `urDevicePartition` of `dev[0]` with these properties, counting only.
fn partition(w: &World, props: &[ur_device_partition_property_t]) -> ur_result_t {
    let p = partition_props(props);
    with_out(|n| ur!(Device.pfnPartition(w.dev[0], &p, 0, null_mut(), n)))
}

fn binary(target: &std::ffi::CStr) -> ur_device_binary_t {
    ur_device_binary_t { stype: UR_STRUCTURE_TYPE_DEVICE_BINARY, pNext: null(), pDeviceTargetSpec: target.as_ptr() }
}

refusals! {
    device_get_null_platform: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| {
        with_out(|n| ur!(Device.pfnGet(null_mut(), UR_DEVICE_TYPE_ALL, 0, null_mut(), n)))
    };
    device_get_type_past_custom: UR_RESULT_ERROR_INVALID_ENUMERATION, |w| {
        with_out(|n| ur!(Device.pfnGet(w.platform, ur_device_type_t(UR_DEVICE_TYPE_CUSTOM.0 + 1), 0, null_mut(), n)))
    };
    device_get_entries_zero_with_array: UR_RESULT_ERROR_INVALID_SIZE, |w| {
        with_out(|d| ur!(Device.pfnGet(w.platform, UR_DEVICE_TYPE_ALL, 0, d, null_mut())))
    };
    device_get_entries_without_array: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| {
        with_out(|n| ur!(Device.pfnGet(w.platform, UR_DEVICE_TYPE_ALL, 1, null_mut(), n)))
    };
    device_get_no_output: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| {
        ur!(Device.pfnGet(w.platform, UR_DEVICE_TYPE_ALL, 0, null_mut(), null_mut()))
    };

    device_info_null: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| {
        with_out(|n| ur!(Device.pfnGetInfo(null_mut(), UR_DEVICE_INFO_NAME, 0, null_mut(), n)))
    };
    device_info_of_a_platform: UR_RESULT_ERROR_INVALID_DEVICE, |w| {
        with_out(|n| ur!(Device.pfnGetInfo(as_handle(w.platform), UR_DEVICE_INFO_NAME, 0, null_mut(), n)))
    };
    device_retain_null: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| ur!(Device.pfnRetain(null_mut()));
    device_release_foreign: UR_RESULT_ERROR_INVALID_DEVICE, |w| {
        ur!(Device.pfnRelease(Foreign::new(ObjectKind::Device).handle()))
    };

    partition_null_device: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| {
        let halves = [prop(UR_DEVICE_PARTITION_EQUALLY, 2)];
        let p = partition_props(&halves);
        with_out(|n| ur!(Device.pfnPartition(null_mut(), &p, 0, null_mut(), n)))
    };
    partition_no_properties: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| with_out(|n| ur!(Device.pfnPartition(w.dev[0], null(), 0, null_mut(), n)));
    partition_no_property_array: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| {
        let mut p = partition_props(&[]);
        p.pProperties = null();
        p.PropCount = 1;
        with_out(|n| ur!(Device.pfnPartition(w.dev[0], &p, 0, null_mut(), n)))
    };
    partition_no_property: UR_RESULT_ERROR_INVALID_VALUE, |w| partition(&w, &[]);
    partition_more_properties_than_a_u32_counts: UR_RESULT_ERROR_INVALID_VALUE, |w| {
        let one = [prop(UR_DEVICE_PARTITION_EQUALLY, 2)];
        let mut p = partition_props(&one);
        p.PropCount = u32::MAX as usize + 1;
        with_out(|n| ur!(Device.pfnPartition(w.dev[0], &p, 0, null_mut(), n)))
    };
    partition_unknown_type: UR_RESULT_ERROR_INVALID_ENUMERATION, |w| {
        partition(&w, &[prop(ur_device_partition_t(UR_DEVICE_PARTITION_BY_CSLICE.0 + 1), 2)])
    };
    partition_mixed_types: UR_RESULT_ERROR_INVALID_VALUE, |w| {
        partition(&w, &[prop(UR_DEVICE_PARTITION_BY_COUNTS, 1), prop(UR_DEVICE_PARTITION_EQUALLY, 1)])
    };
    partition_two_equally: UR_RESULT_ERROR_INVALID_VALUE, |w| {
        partition(&w, &[prop(UR_DEVICE_PARTITION_EQUALLY, 2), prop(UR_DEVICE_PARTITION_EQUALLY, 2)])
    };
    partition_equally_zero: UR_RESULT_ERROR_INVALID_VALUE, |w| partition(&w, &[prop(UR_DEVICE_PARTITION_EQUALLY, 0)]);
    partition_a_count_of_zero: UR_RESULT_ERROR_INVALID_DEVICE_PARTITION_COUNT, |w| {
        partition(&w, &[prop(UR_DEVICE_PARTITION_BY_COUNTS, 1), prop(UR_DEVICE_PARTITION_BY_COUNTS, 0)])
    };
    partition_two_affinity_domains: UR_RESULT_ERROR_INVALID_VALUE, |w| {
        partition(&w, &[prop(UR_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, 0b11)])
    };
    partition_unknown_affinity_domain: UR_RESULT_ERROR_INVALID_VALUE, |w| {
        partition(&w, &[prop(UR_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, 1 << 31)])
    };
    partition_by_cslice: UR_RESULT_ERROR_UNSUPPORTED_FEATURE, |w| partition(&w, &[prop(UR_DEVICE_PARTITION_BY_CSLICE, 1)]);
    partition_entries_zero_with_array: UR_RESULT_ERROR_INVALID_SIZE, |w| {
        let halves = [prop(UR_DEVICE_PARTITION_EQUALLY, 2)];
        let p = partition_props(&halves);
        with_out(|d| ur!(Device.pfnPartition(w.dev[0], &p, 0, d, null_mut())))
    };

    select_binary_null_device: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| {
        let b = [binary(c"test_ir")];
        with_out(|i| ur!(Device.pfnSelectBinary(null_mut(), b.as_ptr(), 1, i)))
    };
    select_binary_no_binaries: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| with_out(|i| ur!(Device.pfnSelectBinary(w.dev[0], null(), 1, i)));
    select_binary_no_output: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| {
        let b = [binary(c"test_ir")];
        ur!(Device.pfnSelectBinary(w.dev[0], b.as_ptr(), 1, null_mut()))
    };
    select_binary_count_zero: UR_RESULT_ERROR_INVALID_SIZE, |w| {
        let b = [binary(c"test_ir")];
        with_out(|i| ur!(Device.pfnSelectBinary(w.dev[0], b.as_ptr(), 0, i)))
    };
    select_binary_none_fits: UR_RESULT_ERROR_INVALID_BINARY, |w| {
        let b = [binary(c"spir64"), binary(c"nvptx64")];
        with_out(|i| ur!(Device.pfnSelectBinary(w.dev[0], b.as_ptr(), 2, i)))
    };

    global_timestamps_null: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| {
        ur!(Device.pfnGetGlobalTimestamps(null_mut(), null_mut(), null_mut()))
    };

    peer_enable_null_command: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| ur!(UsmP2PExp.pfnEnablePeerAccessExp(null_mut(), w.dev[1]));
    peer_enable_null_peer: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| ur!(UsmP2PExp.pfnEnablePeerAccessExp(w.dev[0], null_mut()));
    peer_enable_a_context: UR_RESULT_ERROR_INVALID_DEVICE, |w| ur!(UsmP2PExp.pfnEnablePeerAccessExp(w.dev[0], as_handle(w.ctx)));
    peer_disable_null_command: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| ur!(UsmP2PExp.pfnDisablePeerAccessExp(null_mut(), w.dev[1]));
    peer_disable_foreign_peer: UR_RESULT_ERROR_INVALID_DEVICE, |w| {
        ur!(UsmP2PExp.pfnDisablePeerAccessExp(w.dev[0], Foreign::new(ObjectKind::Device).handle()))
    };
    peer_info_null_peer: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| {
        with_out(|n| ur!(UsmP2PExp.pfnPeerAccessGetInfoExp(w.dev[0], null_mut(), UR_EXP_PEER_INFO_UR_PEER_ACCESS_SUPPORT, 0, null_mut(), n)))
    };
}

#[test]
fn device_get_filters_by_type_in_the_backend_and_writes_what_fits() {
    let w = World::new();
    let mut n = 0;
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Device.pfnGet(w.platform, UR_DEVICE_TYPE_GPU, 0, null_mut(), &mut n)));
    assert_eq!(only(&calls, "device.all"), format!("{UR_DEVICE_TYPE_GPU:?}"));
    assert_eq!(n, 0);
    let mut d = [null_mut(); 1];
    reached!(UR_RESULT_SUCCESS, ur!(Device.pfnGet(w.platform, UR_DEVICE_TYPE_DEFAULT, 1, d.as_mut_ptr(), &mut n)));
    assert_eq!((d[0], n), (w.dev[0], 2), "one written, both counted");
}

#[test]
fn device_info_p2p_support_is_the_cores() {
    let w = World::new();
    let mut b: ur_bool_t = 0;
    let size = std::mem::size_of::<ur_bool_t>();
    refused!(UR_RESULT_SUCCESS, ur!(Device.pfnGetInfo(w.dev[0], UR_DEVICE_INFO_USM_P2P_SUPPORT_EXP, size, (&mut b as *mut ur_bool_t).cast(), null_mut())));
    assert_eq!(b, 1);
    let mut t = UR_DEVICE_TYPE_ALL;
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Device.pfnGetInfo(w.dev[1], UR_DEVICE_INFO_TYPE, 4, (&mut t as *mut ur_device_type_t).cast(), null_mut())));
    assert_eq!(only(&calls, "device.info"), format!("dev1 {UR_DEVICE_INFO_TYPE:?}"));
    assert_eq!(t, UR_DEVICE_TYPE_CPU);
}

#[test]
fn root_devices_count_no_references() {
    let w = World::new();
    for _ in 0..3 {
        refused!(UR_RESULT_SUCCESS, ur!(Device.pfnRelease(w.dev[0])));
    }
    refused!(UR_RESULT_SUCCESS, ur!(Device.pfnRetain(w.dev[0])));
}

#[test]
fn partition_reaches_the_backend_decoded_and_hands_out_counted_sub_devices() {
    let w = World::new();
    let halves = [prop(UR_DEVICE_PARTITION_EQUALLY, 2)];
        let p = partition_props(&halves);
    let (mut subs, mut n) = ([null_mut(); 3], 0);
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Device.pfnPartition(w.dev[0], &p, 3, subs.as_mut_ptr(), &mut n)));
    assert_eq!(only(&calls, "device.partition"), "dev0 Equally(2)");
    assert_eq!(n, 2);
    assert!(!subs[0].is_null() && !subs[1].is_null() && subs[2].is_null());
    // Each handle written is one reference of the sub-device.
    one_counted_reference!(Device, subs[0], UR_RESULT_ERROR_INVALID_DEVICE);
    // Released, the sub-device still answers (it lives with its parent).
    let mut size = 0;
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Device.pfnGetInfo(subs[0], UR_DEVICE_INFO_NAME, 0, null_mut(), &mut size)));
    assert_eq!(only(&calls, "device.info"), format!("dev0.0 {UR_DEVICE_INFO_NAME:?}"));
    // What the device does not list is the backend's to refuse.
    let calls = reached!(UR_RESULT_ERROR_INVALID_VALUE, partition(&w, &[prop(UR_DEVICE_PARTITION_BY_COUNTS, 1)]));
    assert_eq!(only(&calls, "device.partition"), "dev0 ByCounts([1])");
}

#[test]
fn select_binary_prefers_the_devices_first_target() {
    let w = World::new();
    let b = [binary(c"spir64"), binary(c"test_ir"), binary(c"test_native"), binary(c"test_native")];
    let mut i = 99;
    refused!(UR_RESULT_SUCCESS, ur!(Device.pfnSelectBinary(w.dev[0], b.as_ptr(), 4, &mut i)));
    assert_eq!(i, 2);
    refused!(UR_RESULT_SUCCESS, ur!(Device.pfnSelectBinary(w.dev[0], b.as_ptr(), 2, &mut i)));
    assert_eq!(i, 1);
}

#[test]
fn device_native_handle_round_trip() {
    let w = World::new();
    let mut native = 0;
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Device.pfnGetNativeHandle(w.dev[1], &mut native)));
    assert_eq!(only(&calls, "device.native_handle"), "dev1");
    assert_eq!(native, NATIVE_DEVICE + 1);
    let mut d = null_mut();
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Device.pfnCreateWithNativeHandle(native, w.adapter, null(), &mut d)));
    assert_eq!(only(&calls, "device.from_native"), format!("{native:#x}"));
    assert_eq!(d, w.dev[1]);
    reached!(UR_RESULT_ERROR_INVALID_VALUE, ur!(Device.pfnCreateWithNativeHandle(native + 1, w.adapter, null(), &mut d)));
}

#[test]
fn global_timestamps_fill_the_outputs_given() {
    let w = World::new();
    let (mut device, mut host) = (0u64, 0u64);
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Device.pfnGetGlobalTimestamps(w.dev[0], &mut device, &mut host)));
    assert_eq!(only(&calls, "device.global_timestamps"), "dev0");
    assert_eq!((device, host), (111, 222));
    reached!(UR_RESULT_SUCCESS, ur!(Device.pfnGetGlobalTimestamps(w.dev[0], null_mut(), &mut host)));
}

#[test]
fn peer_access_of_a_device_to_itself_is_the_cores() {
    let w = World::new();
    refused!(UR_RESULT_SUCCESS, ur!(UsmP2PExp.pfnEnablePeerAccessExp(w.dev[0], w.dev[0])));
    refused!(UR_RESULT_SUCCESS, ur!(UsmP2PExp.pfnDisablePeerAccessExp(w.dev[1], w.dev[1])));
    let mut v = 0i32;
    let prop = UR_EXP_PEER_INFO_UR_PEER_ATOMICS_SUPPORT;
    refused!(UR_RESULT_SUCCESS, ur!(UsmP2PExp.pfnPeerAccessGetInfoExp(w.dev[0], w.dev[0], prop, 4, (&mut v as *mut i32).cast(), null_mut())));
    assert_eq!(v, 1);
}

#[test]
fn peer_access_between_two_devices_is_the_backends() {
    let w = World::new();
    let calls = reached!(UR_RESULT_SUCCESS, ur!(UsmP2PExp.pfnEnablePeerAccessExp(w.dev[0], w.dev[1])));
    assert_eq!(only(&calls, "device.set_peer_access"), "dev0 dev1 true");
    let calls = reached!(UR_RESULT_SUCCESS, ur!(UsmP2PExp.pfnDisablePeerAccessExp(w.dev[1], w.dev[0])));
    assert_eq!(only(&calls, "device.set_peer_access"), "dev1 dev0 false");
    let mut v = 0i32;
    let prop = UR_EXP_PEER_INFO_UR_PEER_ACCESS_SUPPORT;
    let calls = reached!(UR_RESULT_SUCCESS, ur!(UsmP2PExp.pfnPeerAccessGetInfoExp(w.dev[0], w.dev[1], prop, 4, (&mut v as *mut i32).cast(), null_mut())));
    assert_eq!(only(&calls, "device.peer_info"), format!("dev0 dev1 {prop:?}"));
    assert_eq!(v, 7);
}
