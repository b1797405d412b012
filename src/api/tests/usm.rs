//! `urUSM*`: blocking allocation and free, pointer queries, and the pools
//! of `urUSMPoolCreate`.

use super::*;
use std::sync::atomic::Ordering::Relaxed;

fn desc(hints: ur_usm_advice_flags_t, align: u32, next: *const c_void) -> ur_usm_desc_t {
    ur_usm_desc_t { stype: UR_STRUCTURE_TYPE_USM_DESC, pNext: next, hints, align }
}

fn host_desc(flags: ur_usm_host_mem_flags_t) -> ur_usm_host_desc_t {
    ur_usm_host_desc_t { stype: UR_STRUCTURE_TYPE_USM_HOST_DESC, pNext: null(), flags }
}

fn device_desc(flags: ur_usm_device_mem_flags_t) -> ur_usm_device_desc_t {
    ur_usm_device_desc_t { stype: UR_STRUCTURE_TYPE_USM_DEVICE_DESC, pNext: null(), flags }
}

fn pool_desc(flags: ur_usm_pool_flags_t, next: *const c_void) -> ur_usm_pool_desc_t {
    ur_usm_pool_desc_t { stype: UR_STRUCTURE_TYPE_USM_POOL_DESC, pNext: next, flags }
}

/// `urUSMHostAlloc` in `w.ctx`.
fn host(w: &World, d: *const ur_usm_desc_t, pool: ur_usm_pool_handle_t, size: usize) -> ur_result_t {
    with_out(|p| ur!(USM.pfnHostAlloc(w.ctx, d, pool, size, p)))
}

/// `urUSMDeviceAlloc` in `ctx` on `dev`.
fn device(ctx: ur_context_handle_t, dev: ur_device_handle_t, d: *const ur_usm_desc_t, pool: ur_usm_pool_handle_t, size: usize) -> ur_result_t {
    with_out(|p| ur!(USM.pfnDeviceAlloc(ctx, dev, d, pool, size, p)))
}

/// A pool of `urUSMPoolCreate` in `ctx`.
fn classic_pool(ctx: ur_context_handle_t) -> ur_usm_pool_handle_t {
    let d = pool_desc(0, null());
    let mut h = null_mut();
    assert_eq!(ur!(USM.pfnPoolCreate(ctx, &d as *const _ as *mut _, &mut h)), UR_RESULT_SUCCESS);
    take_calls();
    h
}

fn pool_refs(pool: ur_usm_pool_handle_t) -> u32 {
    let mut n = 0u32;
    refused!(UR_RESULT_SUCCESS, ur!(USM.pfnPoolGetInfo(pool, UR_USM_POOL_INFO_REFERENCE_COUNT, 4, (&mut n as *mut u32).cast(), null_mut())));
    n
}

const ENUMERATION: ur_result_t = UR_RESULT_ERROR_INVALID_ENUMERATION;

refusals! {
    host_alloc_null_context: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| with_out(|p| ur!(USM.pfnHostAlloc(null_mut(), null(), null_mut(), 64, p)));
    host_alloc_a_queue_for_a_context: UR_RESULT_ERROR_INVALID_CONTEXT, |w| {
        with_out(|p| ur!(USM.pfnHostAlloc(as_handle(w.queue), null(), null_mut(), 64, p)))
    };
    device_alloc_null_device: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| device(w.ctx, null_mut(), null(), null_mut(), 64);
    shared_alloc_foreign_device: UR_RESULT_ERROR_INVALID_DEVICE, |w| {
        with_out(|p| ur!(USM.pfnSharedAlloc(w.ctx, Foreign::new(ObjectKind::Device).handle(), null(), null_mut(), 64, p)))
    };
    host_alloc_unknown_hint: ENUMERATION, |w| host(&w, &desc(1 << 17, 0, null()), null_mut(), 64);
    host_alloc_no_output: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| ur!(USM.pfnHostAlloc(w.ctx, null(), null_mut(), 64, null_mut()));
    device_alloc_no_output: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| {
        ur!(USM.pfnDeviceAlloc(w.ctx, w.dev[0], null(), null_mut(), 64, null_mut()))
    };
    device_alloc_device_not_in_context: UR_RESULT_ERROR_INVALID_DEVICE, |w| device(w.ctx, w.dev[1], null(), null_mut(), 64);
    shared_alloc_device_not_in_context: UR_RESULT_ERROR_INVALID_DEVICE, |w| {
        with_out(|p| ur!(USM.pfnSharedAlloc(w.ctx, w.dev[1], null(), null_mut(), 64, p)))
    };
    host_alloc_foreign_pool: UR_RESULT_ERROR_INVALID_ARGUMENT, |w| {
        host(&w, null(), Foreign::new(ObjectKind::UsmPool).handle(), 64)
    };
    host_alloc_pool_without_pool_support: UR_RESULT_ERROR_UNSUPPORTED_FEATURE, |w| {
        let pool = classic_pool(w.ctx);
        w.features(w.ctx).pools.store(false, Relaxed);
        host(&w, null(), pool, 64)
    };
    host_alloc_pool_of_another_context: UR_RESULT_ERROR_INVALID_VALUE, |w| {
        let pool = classic_pool(w.context2());
        host(&w, null(), pool, 64)
    };
    device_alloc_pool_of_another_device: UR_RESULT_ERROR_INVALID_VALUE, |w| {
        let ctx = w.context2();
        let pool = w.pool(ctx, w.dev[1]);
        device(ctx, w.dev[0], null(), pool, 64)
    };
    host_alloc_unknown_host_flag: ENUMERATION, |w| {
        let h = host_desc(1 << 1);
        host(&w, &desc(0, 0, (&h as *const ur_usm_host_desc_t).cast()), null_mut(), 64)
    };
    device_alloc_unknown_device_flag: ENUMERATION, |w| {
        let d = device_desc(1 << 3);
        device(w.ctx, w.dev[0], &desc(0, 0, (&d as *const ur_usm_device_desc_t).cast()), null_mut(), 64)
    };
    host_alloc_cyclic_chain: UR_RESULT_ERROR_INVALID_VALUE, |w| {
        let mut h = host_desc(0);
        h.pNext = (&h as *const ur_usm_host_desc_t).cast();
        host(&w, &desc(0, 0, (&h as *const ur_usm_host_desc_t).cast()), null_mut(), 64)
    };
    host_alloc_alignment_not_a_power_of_two: UR_RESULT_ERROR_INVALID_VALUE, |w| host(&w, &desc(0, 24, null()), null_mut(), 64);
    host_alloc_alignment_past_reach: UR_RESULT_ERROR_OUT_OF_HOST_MEMORY, |w| {
        host(&w, &desc(0, MAX_ALLOC as u32, null()), null_mut(), 64)
    };
    device_alloc_alignment_past_reach: UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, |w| {
        device(w.ctx, w.dev[0], &desc(0, MAX_ALLOC as u32, null()), null_mut(), 64)
    };

    free_null_context: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| ur!(USM.pfnFree(null_mut(), w.alloc(8)));
    free_null_pointer: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| ur!(USM.pfnFree(w.ctx, null_mut()));

    alloc_info_null_context: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| {
        with_out(|n| ur!(USM.pfnGetMemAllocInfo(null_mut(), w.alloc(8), UR_USM_ALLOC_INFO_TYPE, 0, null_mut(), n)))
    };
    alloc_info_null_pointer: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| {
        with_out(|n| ur!(USM.pfnGetMemAllocInfo(w.ctx, null(), UR_USM_ALLOC_INFO_TYPE, 0, null_mut(), n)))
    };

    pool_create_null_context: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| {
        let d = pool_desc(0, null());
        with_out(|h| ur!(USM.pfnPoolCreate(null_mut(), &d as *const _ as *mut _, h)))
    };
    pool_create_no_descriptor: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| with_out(|h| ur!(USM.pfnPoolCreate(w.ctx, null_mut(), h)));
    pool_create_unknown_flag: ENUMERATION, |w| {
        let d = pool_desc(1 << 3, null());
        with_out(|h| ur!(USM.pfnPoolCreate(w.ctx, &d as *const _ as *mut _, h)))
    };
    pool_create_cyclic_chain: UR_RESULT_ERROR_INVALID_VALUE, |w| {
        let mut d = pool_desc(0, null());
        d.pNext = (&d as *const ur_usm_pool_desc_t).cast();
        with_out(|h| ur!(USM.pfnPoolCreate(w.ctx, &d as *const _ as *mut _, h)))
    };
    pool_create_no_output: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| {
        let d = pool_desc(0, null());
        ur!(USM.pfnPoolCreate(w.ctx, &d as *const _ as *mut _, null_mut()))
    };
    pool_create_without_pool_support: UR_RESULT_ERROR_UNSUPPORTED_FEATURE, |w| {
        w.features(w.ctx).pools.store(false, Relaxed);
        let d = pool_desc(0, null());
        with_out(|h| ur!(USM.pfnPoolCreate(w.ctx, &d as *const _ as *mut _, h)))
    };

    pool_retain_null: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| ur!(USM.pfnPoolRetain(null_mut()));
    pool_release_foreign: UR_RESULT_ERROR_INVALID_ARGUMENT, |w| ur!(USM.pfnPoolRelease(Foreign::new(ObjectKind::UsmPool).handle()));
    pool_release_a_context: UR_RESULT_ERROR_INVALID_ARGUMENT, |w| ur!(USM.pfnPoolRelease(as_handle(w.ctx)));
    pool_info_null: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| {
        with_out(|n| ur!(USM.pfnPoolGetInfo(null_mut(), UR_USM_POOL_INFO_CONTEXT, 0, null_mut(), n)))
    };
    pool_info_between_the_ranges: ENUMERATION, |w| {
        with_out(|n| ur!(USM.pfnPoolGetInfo(classic_pool(w.ctx), ur_usm_pool_info_t(UR_USM_POOL_INFO_CONTEXT.0 + 1), 0, null_mut(), n)))
    };
}

#[test]
fn allocations_reach_the_backend_decoded() {
    let w = World::new();
    let hd = host_desc(1);
    let hints = 1 << 16;
    let mut p = null_mut();
    let d = desc(hints, 64, (&hd as *const ur_usm_host_desc_t).cast());
    let calls = reached!(UR_RESULT_SUCCESS, ur!(USM.pfnHostAlloc(w.ctx, &d, null_mut(), 100, &mut p)));
    let expected = format!("Host size=100 align=64 device=None pool=None hints={hints:#x} host_flags=0x1 device_flags=0x0");
    assert_eq!(only(&calls, "context.usm_alloc"), expected);
    assert_eq!(p as usize % 64, 0);
    let pool = classic_pool(w.ctx);
    let dd = device_desc(4);
    let d = desc(0, 0, (&dd as *const ur_usm_device_desc_t).cast());
    let calls = reached!(UR_RESULT_SUCCESS, ur!(USM.pfnSharedAlloc(w.ctx, w.dev[0], &d, pool, 8, &mut p)));
    let expected = format!("Shared size=8 align=0 device=Some(dev0) pool=Some({pool:?}) hints=0x0 host_flags=0x0 device_flags=0x4");
    assert_eq!(only(&calls, "context.usm_alloc"), expected);
    let calls = reached!(UR_RESULT_SUCCESS, device(w.ctx, w.dev[0], null(), null_mut(), 8));
    assert_eq!(only(&calls, "context.usm_alloc"), "Device size=8 align=0 device=Some(dev0) pool=None hints=0x0 host_flags=0x0 device_flags=0x0");
    // A 4 KiB alignment needs no reach check.
    reached!(UR_RESULT_SUCCESS, host(&w, &desc(0, 4096, null()), null_mut(), MAX_ALLOC as usize));
}

#[test]
fn allocations_of_zero_bytes_are_refused_by_the_core() {
    let w = World::new();
    refused!(UR_RESULT_ERROR_INVALID_USM_SIZE, host(&w, null(), null_mut(), 0));
    refused!(UR_RESULT_ERROR_INVALID_USM_SIZE, device(w.ctx, w.dev[0], null(), null_mut(), 0));
}

#[test]
fn allocations_past_the_device_limit_are_refused_by_the_core() {
    let w = World::new();
    refused!(UR_RESULT_ERROR_INVALID_USM_SIZE, device(w.ctx, w.dev[0], null(), null_mut(), MAX_ALLOC as usize + 1));
}

#[test]
fn free_is_the_backends_to_check() {
    let w = World::new();
    let p = w.alloc(16);
    let calls = reached!(UR_RESULT_ERROR_INVALID_MEM_OBJECT, ur!(USM.pfnFree(w.ctx, p.wrapping_byte_add(8))));
    assert_eq!(only(&calls, "context.usm_free"), format!("{:?}", p.wrapping_byte_add(8)));
    let mut local = 0u64;
    let foreign = (&mut local as *mut u64).cast();
    reached!(UR_RESULT_ERROR_INVALID_MEM_OBJECT, ur!(USM.pfnFree(w.ctx, foreign)));
    let other = w.context2();
    reached!(UR_RESULT_ERROR_INVALID_MEM_OBJECT, ur!(USM.pfnFree(other, p)));
    let calls = reached!(UR_RESULT_SUCCESS, ur!(USM.pfnFree(w.ctx, p)));
    assert_eq!(only(&calls, "context.usm_free"), format!("{p:?}"));
    reached!(UR_RESULT_ERROR_INVALID_MEM_OBJECT, ur!(USM.pfnFree(w.ctx, p)));
}

fn alloc_info<T: Copy>(w: &World, p: *const c_void, prop: ur_usm_alloc_info_t, init: T) -> (ur_result_t, T) {
    let mut v = init;
    let size = std::mem::size_of::<T>();
    let code = ur!(USM.pfnGetMemAllocInfo(w.ctx, p, prop, size, (&mut v as *mut T).cast(), null_mut()));
    (code, v)
}

#[test]
fn alloc_info_of_an_interior_pointer_describes_its_allocation() {
    let w = World::new();
    let pool = classic_pool(w.ctx);
    let mut p = null_mut();
    ur!(USM.pfnDeviceAlloc(w.ctx, w.dev[0], null(), pool, 32, &mut p));
    take_calls();
    let inside = p.wrapping_byte_add(31);
    assert_eq!(alloc_info(&w, inside, UR_USM_ALLOC_INFO_TYPE, UR_USM_TYPE_UNKNOWN), (UR_RESULT_SUCCESS, UR_USM_TYPE_DEVICE));
    assert_eq!(alloc_info(&w, inside, UR_USM_ALLOC_INFO_BASE_PTR, null_mut()), (UR_RESULT_SUCCESS, p));
    assert_eq!(alloc_info(&w, inside, UR_USM_ALLOC_INFO_SIZE, 0usize), (UR_RESULT_SUCCESS, 32));
    assert_eq!(alloc_info(&w, inside, UR_USM_ALLOC_INFO_DEVICE, null_mut()), (UR_RESULT_SUCCESS, w.dev[0]));
    assert_eq!(alloc_info(&w, inside, UR_USM_ALLOC_INFO_POOL, null_mut()), (UR_RESULT_SUCCESS, pool));
    let calls = take_calls();
    assert_eq!(methods(&calls), ["context.usm_alloc_info"; 5]);
    assert_eq!(calls[0].args, format!("{inside:?}"));
}

#[test]
fn alloc_info_of_a_foreign_pointer_knows_only_its_type() {
    let w = World::new();
    let end = w.alloc(32).wrapping_byte_add(32);
    take_calls();
    assert_eq!(alloc_info(&w, end, UR_USM_ALLOC_INFO_TYPE, UR_USM_TYPE_HOST), (UR_RESULT_SUCCESS, UR_USM_TYPE_UNKNOWN));
    assert_eq!(alloc_info(&w, end, UR_USM_ALLOC_INFO_SIZE, 0usize).0, UR_RESULT_ERROR_INVALID_MEM_OBJECT);
    assert_eq!(alloc_info(&w, end, UR_USM_ALLOC_INFO_DEVICE, null_mut::<c_void>()).0, UR_RESULT_ERROR_INVALID_MEM_OBJECT);
    assert_eq!(methods(&take_calls()), ["context.usm_alloc_info"; 3]);
}

#[test]
fn pool_create_reads_the_descriptor_chain() {
    let w = World::new();
    let limits = ur_usm_pool_limits_desc_t { stype: UR_STRUCTURE_TYPE_USM_POOL_LIMITS_DESC, pNext: null(), maxPoolableSize: 4096, minDriverAllocSize: 1024 };
    let flags = UR_USM_POOL_FLAG_ZERO_INITIALIZE_BLOCK.0;
    let d = pool_desc(flags, (&limits as *const ur_usm_pool_limits_desc_t).cast());
    let mut h = null_mut();
    let calls = reached!(UR_RESULT_SUCCESS, ur!(USM.pfnPoolCreate(w.ctx, &d as *const _ as *mut _, &mut h)));
    assert_eq!(only(&calls, "context.pool_create"), "None PoolDesc { flags: 1, limits: Some((4096, 1024)) } Classic");
    let mut ctx = null_mut::<c_void>();
    let size = std::mem::size_of::<usize>();
    refused!(UR_RESULT_SUCCESS, ur!(USM.pfnPoolGetInfo(h, UR_USM_POOL_INFO_CONTEXT, size, (&mut ctx as *mut *mut c_void).cast(), null_mut())));
    assert_eq!(ctx, w.ctx.cast());
    let mut threshold = 7usize;
    let calls = reached!(UR_RESULT_SUCCESS, ur!(USM.pfnPoolGetInfo(h, UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP, size, (&mut threshold as *mut usize).cast(), null_mut())));
    assert_eq!(only(&calls, "pool.info"), format!("{UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP:?}"));
    assert_eq!(threshold, 0);
}

#[test]
fn a_user_pool_counts_references_and_a_default_pool_none() {
    let w = World::new();
    let pool = classic_pool(w.ctx);
    refused!(UR_RESULT_SUCCESS, ur!(USM.pfnPoolRetain(pool)));
    assert_eq!(pool_refs(pool), 2);
    refused!(UR_RESULT_SUCCESS, ur!(USM.pfnPoolRelease(pool)));
    refused!(UR_RESULT_SUCCESS, ur!(USM.pfnPoolRelease(pool)));
    refused!(UR_RESULT_ERROR_INVALID_ARGUMENT, ur!(USM.pfnPoolRelease(pool)));
    refused!(UR_RESULT_ERROR_INVALID_ARGUMENT, ur!(USM.pfnPoolRetain(pool)));
    let mut default = null_mut();
    ur!(USMExp.pfnPoolGetDefaultDevicePoolExp(w.ctx, w.dev[0], &mut default));
    take_calls();
    for _ in 0..3 {
        refused!(UR_RESULT_SUCCESS, ur!(USM.pfnPoolRelease(default)));
    }
    refused!(UR_RESULT_SUCCESS, ur!(USM.pfnPoolRetain(default)));
    assert_eq!(pool_refs(default), 0);
}
