//! The wait-list rules, for every entry point that takes a wait list: an
//! inconsistent list, or one holding something other than a live event of
//! this adapter, is `INVALID_EVENT_WAIT_LIST`; a failed event
//! `IN_EVENT_LIST_EXEC_STATUS`; all refused before the backend. An event
//! of another context of the adapter is accepted and handed on.

use super::*;

/// `name: |w, count, list| call;` makes a module of tests for one entry
/// point; `call` passes good arguments but the wait list.
macro_rules! wait_list_rules {
    ($($name:ident: |$w:ident, $n:ident, $l:ident| $call:expr;)*) => {$(
        mod $name {
            use super::*;

            fn call($w: &World, $n: u32, $l: *const ur_event_handle_t) -> ur_result_t {
                $call
            }

            const BAD: ur_result_t = UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST;

            #[test]
            fn a_count_without_a_list() {
                let w = World::new();
                refused!(BAD, call(&w, 1, null()));
            }

            #[test]
            fn a_list_without_a_count() {
                let w = World::new();
                let e = w.event();
                refused!(BAD, call(&w, 0, &e));
            }

            #[test]
            fn a_null_event_in_the_list() {
                let w = World::new();
                let list = [w.event(), null_mut()];
                refused!(BAD, call(&w, 2, list.as_ptr()));
            }

            #[test]
            fn a_queue_in_the_list() {
                let w = World::new();
                let list = [w.event(), as_handle(w.queue)];
                refused!(BAD, call(&w, 2, list.as_ptr()));
            }

            #[test]
            fn an_event_of_another_adapter() {
                let w = World::new();
                let other = Foreign::new(ObjectKind::Event);
                refused!(BAD, call(&w, 1, &other.handle()));
            }

            #[test]
            fn a_released_event() {
                let w = World::new();
                let e = w.event();
                assert_eq!(ur!(Event.pfnRelease(e)), UR_RESULT_SUCCESS);
                refused!(BAD, call(&w, 1, &e));
            }

            #[test]
            fn a_failed_event_is_in_event_list_exec_status() {
                let w = World::new();
                let list = [w.event(), w.failed_event()];
                refused!(UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS, call(&w, 2, list.as_ptr()));
            }

            #[test]
            fn events_of_this_and_another_context_reach_the_backend() {
                let w = World::new();
                let other = w.context(&[w.dev[1]]);
                let list = [w.event(), w.event_on(w.queue_on(other, w.dev[1], 0))];
                let calls = reached!(UR_RESULT_SUCCESS, call(&w, 2, list.as_ptr()));
                let waits = format!("waits={:?}", list);
                assert!(calls.iter().any(|c| c.args.contains(&waits)), "{waits} not in {calls:?}");
            }
        }
    )*};
}

wait_list_rules! {
    events_wait: |w, n, l| ur!(Enqueue.pfnEventsWait(w.queue, n, l, null_mut()));
    barrier: |w, n, l| ur!(Enqueue.pfnEventsWaitWithBarrier(w.queue, n, l, null_mut()));
    barrier_ext: |w, n, l| ur!(Enqueue.pfnEventsWaitWithBarrierExt(w.queue, null(), n, l, null_mut()));
    usm_fill: |w, n, l| {
        let dst = w.alloc(64);
        ur!(Enqueue.pfnUSMFill(w.queue, dst, 4, [1u8; 4].as_ptr().cast(), 64, n, l, null_mut()))
    };
    usm_memcpy: |w, n, l| {
        let (dst, src) = (w.alloc(64), w.alloc(64));
        ur!(Enqueue.pfnUSMMemcpy(w.queue, false, dst, src, 64, n, l, null_mut()))
    };
    usm_fill_2d: |w, n, l| {
        let dst = w.alloc(64);
        ur!(Enqueue.pfnUSMFill2D(w.queue, dst, 16, 4, [1u8; 4].as_ptr().cast(), 16, 4, n, l, null_mut()))
    };
    usm_memcpy_2d: |w, n, l| {
        let (dst, src) = (w.alloc(64), w.alloc(64));
        ur!(Enqueue.pfnUSMMemcpy2D(w.queue, false, dst, 16, src, 16, 16, 4, n, l, null_mut()))
    };
    usm_prefetch: |w, n, l| {
        let p = w.alloc(64);
        ur!(Enqueue.pfnUSMPrefetch(w.queue, p, 64, 0, n, l, null_mut()))
    };
    device_alloc_exp: |w, n, l| with_out(|p| ur!(EnqueueExp.pfnUSMDeviceAllocExp(w.queue, null_mut(), 64, null(), n, l, p, null_mut())));
    shared_alloc_exp: |w, n, l| with_out(|p| ur!(EnqueueExp.pfnUSMSharedAllocExp(w.queue, null_mut(), 64, null(), n, l, p, null_mut())));
    host_alloc_exp: |w, n, l| with_out(|p| ur!(EnqueueExp.pfnUSMHostAllocExp(w.queue, null_mut(), 64, null(), n, l, p, null_mut())));
    free_exp: |w, n, l| {
        let p = w.async_alloc(w.queue, 64);
        ur!(EnqueueExp.pfnUSMFreeExp(w.queue, null_mut(), p, n, l, null_mut()))
    };
    kernel_launch: |w, n, l| {
        let k = w.kernel();
        let global = [8usize];
        ur!(EnqueueExp.pfnKernelLaunchWithArgsExp(w.queue, k, 1, null(), global.as_ptr(), null(), 0, null(), null(), n, l, null_mut()))
    };
}
