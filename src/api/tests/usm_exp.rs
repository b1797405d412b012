//! The async-alloc extension: `urEnqueueUSM*AllocExp`, `urEnqueueUSMFreeExp`
//! and `urUSMPool*Exp` (their wait lists: `wait_list.rs`).

use super::*;
use std::sync::atomic::Ordering::Relaxed;

fn props(flags: ur_exp_async_usm_alloc_flags_t) -> ur_exp_async_usm_alloc_properties_t {
    ur_exp_async_usm_alloc_properties_t { stype: UR_STRUCTURE_TYPE_EXP_ASYNC_USM_ALLOC_PROPERTIES, pNext: null_mut(), flags }
}

/// `urEnqueueUSMDeviceAllocExp` of 64 bytes on `queue`.
fn alloc(queue: ur_queue_handle_t, pool: ur_usm_pool_handle_t, event: *mut ur_event_handle_t) -> ur_result_t {
    with_out(|p| ur!(EnqueueExp.pfnUSMDeviceAllocExp(queue, pool, 64, null(), 0, null(), p, event)))
}

fn pool_desc(flags: ur_usm_pool_flags_t, next: *const c_void) -> ur_usm_pool_desc_t {
    ur_usm_pool_desc_t { stype: UR_STRUCTURE_TYPE_USM_POOL_DESC, pNext: next, flags }
}

fn pool_create(ctx: ur_context_handle_t, dev: ur_device_handle_t, d: *const ur_usm_pool_desc_t) -> ur_result_t {
    with_out(|h| ur!(USMExp.pfnPoolCreateExp(ctx, dev, d as *mut _, h)))
}

fn default_pool(w: &World) -> ur_usm_pool_handle_t {
    let mut h = null_mut();
    assert_eq!(ur!(USMExp.pfnPoolGetDefaultDevicePoolExp(w.ctx, w.dev[0], &mut h)), UR_RESULT_SUCCESS);
    take_calls();
    h
}

fn no_pools(w: &World) {
    w.features(w.ctx).pools.store(false, Relaxed);
}

fn get_info(pool: ur_usm_pool_handle_t, prop: ur_usm_pool_info_t) -> (ur_result_t, usize) {
    let mut v = usize::MAX;
    let code = ur!(USMExp.pfnPoolGetInfoExp(pool, prop, (&mut v as *mut usize).cast(), null_mut()));
    (code, v)
}

fn set_info(pool: ur_usm_pool_handle_t, prop: ur_usm_pool_info_t, value: usize) -> ur_result_t {
    let mut v = value;
    ur!(USMExp.pfnPoolSetInfoExp(pool, prop, (&mut v as *mut usize).cast(), std::mem::size_of::<usize>()))
}

const NULL_HANDLE: ur_result_t = UR_RESULT_ERROR_INVALID_NULL_HANDLE;
const UNSUPPORTED: ur_result_t = UR_RESULT_ERROR_UNSUPPORTED_FEATURE;

refusals! {
    device_alloc_null_queue: NULL_HANDLE, |w| alloc(null_mut(), null_mut(), null_mut());
    shared_alloc_a_context_for_a_queue: UR_RESULT_ERROR_INVALID_QUEUE, |w| {
        with_out(|p| ur!(EnqueueExp.pfnUSMSharedAllocExp(as_handle(w.ctx), null_mut(), 64, null(), 0, null(), p, null_mut())))
    };
    host_alloc_unknown_flag: UR_RESULT_ERROR_INVALID_ENUMERATION, |w| {
        with_out(|p| ur!(EnqueueExp.pfnUSMHostAllocExp(w.queue, null_mut(), 64, &props(1 << 1), 0, null(), p, null_mut())))
    };
    device_alloc_no_output: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| {
        ur!(EnqueueExp.pfnUSMDeviceAllocExp(w.queue, null_mut(), 64, null(), 0, null(), null_mut(), null_mut()))
    };
    device_alloc_without_async_support: UNSUPPORTED, |w| {
        w.features(w.ctx).async_alloc.store(false, Relaxed);
        with_out(|e| alloc(w.queue, null_mut(), e))
    };
    device_alloc_foreign_pool: UR_RESULT_ERROR_INVALID_ARGUMENT, |w| {
        alloc(w.queue, Foreign::new(ObjectKind::UsmPool).handle(), null_mut())
    };
    device_alloc_pool_of_another_context: UR_RESULT_ERROR_INVALID_VALUE, |w| {
        let pool = w.pool(w.context2(), w.dev[0]);
        alloc(w.queue, pool, null_mut())
    };
    device_alloc_pool_of_another_device: UR_RESULT_ERROR_INVALID_VALUE, |w| {
        let ctx = w.context2();
        let q = w.queue_on(ctx, w.dev[0], 0);
        alloc(q, w.pool(ctx, w.dev[1]), null_mut())
    };

    free_null_queue: NULL_HANDLE, |w| {
        ur!(EnqueueExp.pfnUSMFreeExp(null_mut(), null_mut(), w.async_alloc(w.queue, 8), 0, null(), null_mut()))
    };
    free_null_pointer: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| {
        ur!(EnqueueExp.pfnUSMFreeExp(w.queue, null_mut(), null_mut(), 0, null(), null_mut()))
    };
    free_without_async_support: UNSUPPORTED, |w| {
        let p = w.async_alloc(w.queue, 8);
        w.features(w.ctx).async_alloc.store(false, Relaxed);
        with_out(|e| ur!(EnqueueExp.pfnUSMFreeExp(w.queue, null_mut(), p, 0, null(), e)))
    };
    free_foreign_pool: UR_RESULT_ERROR_INVALID_ARGUMENT, |w| {
        let p = w.async_alloc(w.queue, 8);
        ur!(EnqueueExp.pfnUSMFreeExp(w.queue, Foreign::new(ObjectKind::UsmPool).handle(), p, 0, null(), null_mut()))
    };

    pool_create_null_context: NULL_HANDLE, |w| pool_create(null_mut(), w.dev[0], &pool_desc(0, null()));
    pool_create_null_device: NULL_HANDLE, |w| pool_create(w.ctx, null_mut(), &pool_desc(0, null()));
    pool_create_no_descriptor: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| pool_create(w.ctx, w.dev[0], null());
    pool_create_unknown_flag: UR_RESULT_ERROR_INVALID_ENUMERATION, |w| pool_create(w.ctx, w.dev[0], &pool_desc(1 << 3, null()));
    pool_create_no_output: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| {
        ur!(USMExp.pfnPoolCreateExp(w.ctx, w.dev[0], &pool_desc(0, null()) as *const _ as *mut _, null_mut()))
    };
    pool_create_without_pool_support: UNSUPPORTED, |w| {
        no_pools(&w);
        pool_create(w.ctx, w.dev[0], &pool_desc(0, null()))
    };
    pool_create_device_not_in_context: UR_RESULT_ERROR_INVALID_DEVICE, |w| pool_create(w.ctx, w.dev[1], &pool_desc(0, null()));

    pool_destroy_the_default_pool: UR_RESULT_ERROR_INVALID_VALUE, |w| {
        ur!(USMExp.pfnPoolDestroyExp(w.ctx, w.dev[0], default_pool(&w)))
    };

    get_info_null_pool: NULL_HANDLE, |w| get_info(null_mut(), UR_USM_POOL_INFO_USED_CURRENT_EXP).0;
    get_info_past_the_last: UR_RESULT_ERROR_INVALID_ENUMERATION, |w| {
        get_info(w.pool(w.ctx, w.dev[0]), ur_usm_pool_info_t(UR_USM_POOL_INFO_USED_HIGH_EXP.0 + 1)).0
    };
    get_info_reference_count: UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION, |w| {
        get_info(w.pool(w.ctx, w.dev[0]), UR_USM_POOL_INFO_REFERENCE_COUNT).0
    };
    get_info_context: UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION, |w| get_info(w.pool(w.ctx, w.dev[0]), UR_USM_POOL_INFO_CONTEXT).0;

    set_info_null_pool: NULL_HANDLE, |w| set_info(null_mut(), UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP, 1);
    set_info_past_the_last: UR_RESULT_ERROR_INVALID_ENUMERATION, |w| {
        set_info(w.pool(w.ctx, w.dev[0]), ur_usm_pool_info_t(UR_USM_POOL_INFO_USED_HIGH_EXP.0 + 1), 1)
    };
    set_info_no_value: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| {
        ur!(USMExp.pfnPoolSetInfoExp(w.pool(w.ctx, w.dev[0]), UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP, null_mut(), 8))
    };
    set_info_size_not_a_size_t: UR_RESULT_ERROR_INVALID_SIZE, |w| {
        let mut v = 1u32;
        ur!(USMExp.pfnPoolSetInfoExp(w.pool(w.ctx, w.dev[0]), UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP, (&mut v as *mut u32).cast(), 4))
    };
}

/// `name: |ctx, dev, pool| call;` makes a module of tests for one entry
/// point on a pool of a device: the refusals of the context, device and
/// pool checks they share (`pool_of` in `src/api/usm_exp.rs`).
macro_rules! pool_rules {
    ($($name:ident: |$c:ident, $d:ident, $p:ident| $call:expr;)*) => {$(
        mod $name {
            use super::*;

            fn call($c: ur_context_handle_t, $d: ur_device_handle_t, $p: ur_usm_pool_handle_t) -> ur_result_t {
                $call
            }

            refusals! {
                null_context: NULL_HANDLE, |w| call(null_mut(), w.dev[0], w.pool(w.ctx, w.dev[0]));
                null_device: NULL_HANDLE, |w| call(w.ctx, null_mut(), w.pool(w.ctx, w.dev[0]));
                null_pool: NULL_HANDLE, |w| call(w.ctx, w.dev[0], null_mut());
                foreign_pool: UR_RESULT_ERROR_INVALID_ARGUMENT, |w| call(w.ctx, w.dev[0], Foreign::new(ObjectKind::UsmPool).handle());
                without_pool_support: UNSUPPORTED, |w| {
                    let pool = w.pool(w.ctx, w.dev[0]);
                    no_pools(&w);
                    call(w.ctx, w.dev[0], pool)
                };
                device_not_in_context: UR_RESULT_ERROR_INVALID_DEVICE, |w| call(w.ctx, w.dev[1], w.pool(w.ctx, w.dev[0]));
                pool_of_another_device: UR_RESULT_ERROR_INVALID_VALUE, |w| {
                    let ctx = w.context2();
                    call(ctx, w.dev[0], w.pool(ctx, w.dev[1]))
                };
                pool_of_another_context: UR_RESULT_ERROR_INVALID_VALUE, |w| call(w.ctx, w.dev[0], w.pool(w.context2(), w.dev[0]));
            }
        }
    )*};
}

pool_rules! {
    pool_destroy: |c, d, p| ur!(USMExp.pfnPoolDestroyExp(c, d, p));
    set_pool: |c, d, p| ur!(USMExp.pfnPoolSetDevicePoolExp(c, d, p));
    trim: |c, d, p| ur!(USMExp.pfnPoolTrimToExp(c, d, p, 0));
}

/// `name: |ctx, dev, out| call;` makes a module of tests for one getter of
/// a device's pool: the refusals of the context and device checks
/// (`pool_call` in `src/api/usm_exp.rs`) and of a null output.
macro_rules! pool_getter_rules {
    ($($name:ident: |$c:ident, $d:ident, $o:ident| $call:expr;)*) => {$(
        mod $name {
            use super::*;

            fn call($c: ur_context_handle_t, $d: ur_device_handle_t, $o: *mut ur_usm_pool_handle_t) -> ur_result_t {
                $call
            }

            refusals! {
                null_context: NULL_HANDLE, |w| with_out(|h| call(null_mut(), w.dev[0], h));
                null_device: NULL_HANDLE, |w| with_out(|h| call(w.ctx, null_mut(), h));
                no_output: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| call(w.ctx, w.dev[0], null_mut());
                without_pool_support: UNSUPPORTED, |w| {
                    no_pools(&w);
                    with_out(|h| call(w.ctx, w.dev[0], h))
                };
                device_not_in_context: UR_RESULT_ERROR_INVALID_DEVICE, |w| with_out(|h| call(w.ctx, w.dev[1], h));
            }
        }
    )*};
}

pool_getter_rules! {
    get_default_pool: |c, d, out| ur!(USMExp.pfnPoolGetDefaultDevicePoolExp(c, d, out));
    get_pool: |c, d, out| ur!(USMExp.pfnPoolGetDevicePoolExp(c, d, out));
}

#[test]
fn an_alloc_of_zero_bytes_is_refused_by_the_core() {
    let w = World::new();
    let (mut p, mut e) = (null_mut(), null_mut());
    refused!(UR_RESULT_ERROR_INVALID_USM_SIZE, ur!(EnqueueExp.pfnUSMDeviceAllocExp(w.queue, null_mut(), 0, null(), 0, null(), &mut p, &mut e)));
}

#[test]
fn pool_create_exp_is_for_one_device() {
    let w = World::new();
    let limits = ur_usm_pool_limits_desc_t { stype: UR_STRUCTURE_TYPE_USM_POOL_LIMITS_DESC, pNext: null(), maxPoolableSize: 0, minDriverAllocSize: 512 };
    let d = pool_desc(UR_USM_POOL_FLAG_USE_NATIVE_MEMORY_POOL_EXP.0, (&limits as *const ur_usm_pool_limits_desc_t).cast());
    let calls = reached!(UR_RESULT_SUCCESS, pool_create(w.ctx, w.dev[0], &d));
    assert_eq!(only(&calls, "context.pool_create"), "Some(dev0) PoolDesc { flags: 2, limits: Some((0, 512)) } Exp");
}

#[test]
fn destroy_forgets_the_pool_and_gives_up_its_reference() {
    let w = World::new();
    let pool = w.pool(w.ctx, w.dev[0]);
    let mut current = null_mut();
    ur!(USMExp.pfnPoolSetDevicePoolExp(w.ctx, w.dev[0], pool));
    take_calls();
    assert_eq!(ur!(USMExp.pfnPoolDestroyExp(w.ctx, w.dev[0], pool)), UR_RESULT_SUCCESS);
    assert!(take_calls().is_empty(), "the core's pool table forgets the pool; the backend has nothing to do");
    refused!(UR_RESULT_ERROR_INVALID_ARGUMENT, ur!(USMExp.pfnPoolDestroyExp(w.ctx, w.dev[0], pool)));
    // The destroyed pool is nobody's current pool: the default serves again.
    let calls = reached!(UR_RESULT_SUCCESS, ur!(USMExp.pfnPoolGetDevicePoolExp(w.ctx, w.dev[0], &mut current)));
    assert_eq!(only(&calls, "context.make_default_pool"), "dev0");
    assert_ne!(current, pool);
}

#[test]
fn the_current_pool_is_the_default_until_set() {
    let w = World::new();
    let (mut default, mut again, mut current) = (null_mut(), null_mut(), null_mut());
    // The backend makes the default pool once; the core's table keeps it.
    let calls = reached!(UR_RESULT_SUCCESS, ur!(USMExp.pfnPoolGetDefaultDevicePoolExp(w.ctx, w.dev[0], &mut default)));
    assert_eq!(only(&calls, "context.make_default_pool"), "dev0");
    assert_eq!(ur!(USMExp.pfnPoolGetDefaultDevicePoolExp(w.ctx, w.dev[0], &mut again)), UR_RESULT_SUCCESS);
    assert_eq!(default, again);
    assert_eq!(ur!(USMExp.pfnPoolGetDevicePoolExp(w.ctx, w.dev[0], &mut current)), UR_RESULT_SUCCESS);
    assert!(take_calls().is_empty(), "answered from the core's table");
    assert_eq!(current, default);
    let pool = w.pool(w.ctx, w.dev[0]);
    assert_eq!(ur!(USMExp.pfnPoolSetDevicePoolExp(w.ctx, w.dev[0], pool)), UR_RESULT_SUCCESS);
    assert_eq!(ur!(USMExp.pfnPoolGetDevicePoolExp(w.ctx, w.dev[0], &mut current)), UR_RESULT_SUCCESS);
    assert_eq!(current, pool);
    // Naming the default takes the choice back.
    assert_eq!(ur!(USMExp.pfnPoolSetDevicePoolExp(w.ctx, w.dev[0], default)), UR_RESULT_SUCCESS);
    assert_eq!(ur!(USMExp.pfnPoolGetDevicePoolExp(w.ctx, w.dev[0], &mut current)), UR_RESULT_SUCCESS);
    assert_eq!(current, default);
}

#[test]
fn trim_reaches_the_pool() {
    let w = World::new();
    let pool = w.pool(w.ctx, w.dev[0]);
    let calls = reached!(UR_RESULT_SUCCESS, ur!(USMExp.pfnPoolTrimToExp(w.ctx, w.dev[0], pool, 4096)));
    assert_eq!(only(&calls, "pool.trim_to"), "4096");
}

#[test]
fn pool_info_exp_is_a_size_t_and_set_info_reaches_the_pool() {
    let w = World::new();
    let pool = w.pool(w.ctx, w.dev[0]);
    let mut size = 0;
    let calls = reached!(UR_RESULT_SUCCESS, ur!(USMExp.pfnPoolGetInfoExp(pool, UR_USM_POOL_INFO_MAXIMUM_SIZE_EXP, null_mut(), &mut size)));
    assert_eq!(only(&calls, "pool.info"), format!("{UR_USM_POOL_INFO_MAXIMUM_SIZE_EXP:?}"));
    assert_eq!(size, std::mem::size_of::<usize>());
    let threshold = UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP;
    let calls = reached!(UR_RESULT_SUCCESS, set_info(pool, threshold, 100));
    assert_eq!(only(&calls, "pool.set_info"), format!("{threshold:?} 100"));
    assert_eq!(get_info(pool, threshold), (UR_RESULT_SUCCESS, 100));
    // What only the pool can refuse reaches it.
    reached!(UR_RESULT_ERROR_INVALID_VALUE, set_info(pool, UR_USM_POOL_INFO_USED_HIGH_EXP, 1));
    reached!(UR_RESULT_SUCCESS, set_info(pool, UR_USM_POOL_INFO_USED_HIGH_EXP, 0));
    reached!(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION, set_info(pool, UR_USM_POOL_INFO_USED_CURRENT_EXP, 0));
}

#[test]
fn set_info_of_an_object_query_is_refused_by_the_core() {
    // As urUSMPoolGetInfoExp refuses them.
    let w = World::new();
    let pool = w.pool(w.ctx, w.dev[0]);
    for prop in [UR_USM_POOL_INFO_REFERENCE_COUNT, UR_USM_POOL_INFO_CONTEXT] {
        refused!(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION, set_info(pool, prop, 0));
    }
}

#[test]
fn get_info_with_no_output_is_refused_before_the_pool() {
    let w = World::new();
    let pool = w.pool(w.ctx, w.dev[0]);
    let prop = UR_USM_POOL_INFO_USED_CURRENT_EXP;
    refused!(UR_RESULT_ERROR_INVALID_NULL_POINTER, ur!(USMExp.pfnPoolGetInfoExp(pool, prop, null_mut(), null_mut())));
}

#[test]
fn get_info_with_no_output_is_invalid_null_pointer() {
    // What the core answers today, pool asked or not.
    let w = World::new();
    let pool = w.pool(w.ctx, w.dev[0]);
    let code = ur!(USMExp.pfnPoolGetInfoExp(pool, UR_USM_POOL_INFO_USED_CURRENT_EXP, null_mut(), null_mut()));
    assert_eq!(code, UR_RESULT_ERROR_INVALID_NULL_POINTER);
}
