//! The async allocation and free the core writes once (`crate::queue`):
//! when the backend is asked to run a command, what it waits for, and what
//! a failure gives back. The test backend's engine pools are real; its
//! commands complete as soon as they are enqueued.

use super::*;
use std::sync::atomic::Ordering::Relaxed;

/// The C form of a wait list: null when empty.
fn list(waits: &[ur_event_handle_t]) -> *const ur_event_handle_t {
    if waits.is_empty() { null() } else { waits.as_ptr() }
}

fn device_alloc(queue: ur_queue_handle_t, pool: ur_usm_pool_handle_t, size: usize, waits: &[ur_event_handle_t], event: *mut ur_event_handle_t) -> (ur_result_t, *mut c_void) {
    let mut p = null_mut();
    let code = ur!(EnqueueExp.pfnUSMDeviceAllocExp(queue, pool, size, null(), waits.len() as u32, list(waits), &mut p, event));
    (code, p)
}

fn free(queue: ur_queue_handle_t, ptr: *mut c_void, waits: &[ur_event_handle_t], event: *mut ur_event_handle_t) -> ur_result_t {
    ur!(EnqueueExp.pfnUSMFreeExp(queue, null_mut(), ptr, waits.len() as u32, list(waits), event))
}

fn command_of(e: ur_event_handle_t) -> ur_command_t {
    let mut command = UR_COMMAND_FORCE_UINT32;
    ur!(Event.pfnGetInfo(e, UR_EVENT_INFO_COMMAND_TYPE, 4, (&mut command as *mut ur_command_t).cast(), null_mut()));
    command
}

#[test]
fn an_in_order_pair_with_nothing_to_order_enqueues_nothing_and_reuses_the_block() {
    let w = World::new();
    let (code, first) = device_alloc(w.queue, null_mut(), 256, &[], null_mut());
    assert_eq!(code, UR_RESULT_SUCCESS);
    let calls = take_calls();
    assert_eq!(methods(&calls), ["context.make_default_pool", "pool.make_engine_pool"], "the default pool is made once");
    assert_eq!(free(w.queue, first, &[], null_mut()), UR_RESULT_SUCCESS);
    for _ in 0..3 {
        let (code, p) = device_alloc(w.queue, null_mut(), 256, &[], null_mut());
        assert_eq!((code, p), (UR_RESULT_SUCCESS, first), "in order, the block freed last comes back at once");
        assert_eq!(free(w.queue, p, &[], null_mut()), UR_RESULT_SUCCESS);
    }
    assert!(take_calls().is_empty(), "no command was enqueued");
}

#[test]
fn an_event_asked_for_makes_the_backend_enqueue_the_command() {
    let w = World::new();
    let mut e = null_mut();
    let mut p = null_mut();
    let code = ur!(EnqueueExp.pfnUSMSharedAllocExp(w.queue, null_mut(), 16, null(), 0, null(), &mut p, &mut e));
    assert_eq!(code, UR_RESULT_SUCCESS);
    let calls = take_calls();
    let enqueued = calls.iter().find(|c| c.method == "queue.enqueue_recorded").expect("a command");
    assert!(enqueued.args.starts_with(&format!("{UR_COMMAND_ENQUEUE_USM_SHARED_ALLOC_EXP:?}")), "{}", enqueued.args);
    assert!(enqueued.args.ends_with("waits=[] event=true"), "{}", enqueued.args);
    assert_eq!(command_of(e), UR_COMMAND_ENQUEUE_USM_SHARED_ALLOC_EXP);
    let mut freed = null_mut();
    assert_eq!(free(w.queue, p, &[e], &mut freed), UR_RESULT_SUCCESS);
    let args = only(&take_calls(), "queue.enqueue_recorded");
    assert!(args.starts_with(&format!("{UR_COMMAND_ENQUEUE_USM_FREE_EXP:?}")), "{args}");
    assert!(args.ends_with(&format!("waits={:?} event=true", [e])), "{args}");
    assert_eq!(command_of(freed), UR_COMMAND_ENQUEUE_USM_FREE_EXP);
}

#[test]
fn a_wait_the_engine_cannot_see_gives_the_allocation_a_command_of_its_own() {
    let w = World::new();
    let mut native = null_mut();
    assert_eq!(ur!(Event.pfnCreateWithNativeHandle(0x1234, w.ctx, null(), &mut native)), UR_RESULT_SUCCESS);
    take_calls();
    let (code, p) = device_alloc(w.queue, null_mut(), 64, &[native], null_mut());
    assert_eq!(code, UR_RESULT_SUCCESS);
    let calls = take_calls();
    let enqueued: Vec<_> = calls.iter().filter(|c| c.method == "queue.enqueue_recorded").collect();
    assert_eq!(enqueued.len(), 1, "{calls:?}");
    assert!(enqueued[0].args.ends_with(&format!("waits={:?} event=false", [native])), "{}", enqueued[0].args);
    assert_eq!(free(w.queue, p, &[], null_mut()), UR_RESULT_SUCCESS);
}

#[test]
fn a_failed_enqueue_gives_the_block_back_unused() {
    let w = World::new();
    let pool = w.pool(w.ctx, w.dev[0]);
    let used = || {
        let mut v = usize::MAX;
        ur!(USMExp.pfnPoolGetInfoExp(pool, UR_USM_POOL_INFO_USED_CURRENT_EXP, (&mut v as *mut usize).cast(), null_mut()));
        v
    };
    w.features(w.ctx).fail_next_recorded.store(true, Relaxed);
    let mut e = null_mut();
    let (code, _) = device_alloc(w.queue, pool, 128, &[], &mut e);
    assert_eq!(code, UR_RESULT_ERROR_OUT_OF_RESOURCES);
    assert!(e.is_null(), "no event for a failed call");
    assert_eq!(used(), 0, "the block went back to the pool");
    let (code, p) = device_alloc(w.queue, pool, 128, &[], &mut e);
    assert_eq!(code, UR_RESULT_SUCCESS);
    assert!(used() >= 128);
    assert_eq!(ur!(EnqueueExp.pfnUSMFreeExp(w.queue, pool, p, 0, null(), null_mut())), UR_RESULT_SUCCESS);
}

#[test]
fn a_zero_initialising_pool_asks_for_a_zeroing_fill_of_the_block() {
    let w = World::new();
    let desc = ur_usm_pool_desc_t { stype: UR_STRUCTURE_TYPE_USM_POOL_DESC, pNext: null(), flags: UR_USM_POOL_FLAG_ZERO_INITIALIZE_BLOCK.0 };
    let mut pool = null_mut();
    assert_eq!(ur!(USMExp.pfnPoolCreateExp(w.ctx, w.dev[0], &desc as *const _ as *mut _, &mut pool)), UR_RESULT_SUCCESS);
    take_calls();
    let (code, _) = device_alloc(w.queue, pool, 100, &[], null_mut());
    assert_eq!(code, UR_RESULT_SUCCESS);
    let calls = take_calls();
    let args = &calls.iter().find(|c| c.method == "queue.enqueue_recorded").expect("a zeroing fill").args;
    assert!(args.contains(" zero="), "{args}");
}

#[test]
fn only_the_base_of_a_live_async_block_is_freed() {
    let w = World::new();
    let (_, p) = device_alloc(w.queue, null_mut(), 32, &[], null_mut());
    assert_eq!(free(w.queue, p.wrapping_byte_add(8), &[], null_mut()), UR_RESULT_ERROR_INVALID_VALUE, "interior");
    let blocking = w.alloc(32);
    assert_eq!(free(w.queue, blocking, &[], null_mut()), UR_RESULT_ERROR_INVALID_VALUE, "not an async block");
    let mut e = null_mut();
    assert_eq!(free(w.queue, p, &[], &mut e), UR_RESULT_SUCCESS);
    assert!(!e.is_null());
    assert_eq!(free(w.queue, p, &[], null_mut()), UR_RESULT_ERROR_INVALID_VALUE, "freed already");
    // Another pool's block, named with a pool that does not hold it.
    let pool = w.pool(w.ctx, w.dev[0]);
    let (_, q) = device_alloc(w.queue, null_mut(), 32, &[], null_mut());
    assert_eq!(ur!(EnqueueExp.pfnUSMFreeExp(w.queue, pool, q, 0, null(), null_mut())), UR_RESULT_ERROR_INVALID_VALUE);
    assert_eq!(free(w.queue, q, &[], null_mut()), UR_RESULT_SUCCESS, "still live after the refusals");
}

#[test]
fn an_out_of_order_queue_waits_on_nothing_it_was_not_given() {
    let w = World::new();
    let ooo = w.queue_on(w.ctx, w.dev[0], UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0);
    let mut e = null_mut();
    let (code, p) = device_alloc(ooo, null_mut(), 64, &[], &mut e);
    assert_eq!(code, UR_RESULT_SUCCESS);
    let calls = take_calls();
    let args = &calls.iter().find(|c| c.method == "queue.enqueue_recorded").expect("a command").args;
    assert!(args.contains("deps=0 waits=[]"), "{args}");
    assert_eq!(free(ooo, p, &[e], null_mut()), UR_RESULT_SUCCESS);
    let args = only(&take_calls(), "queue.enqueue_recorded");
    assert!(args.ends_with(&format!("waits={:?} event=false", [e])), "out of order, a free with a wait list is a command: {args}");
    ur!(Queue.pfnRelease(ooo));
}
