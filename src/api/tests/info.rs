//! The info protocol, `(propName, propSize, pPropValue, pPropSizeRet)`, for
//! every query entry point that follows it: a query past the last one UR
//! defines, the three size and pointer errors (all refused before the
//! backend), and a good size-then-value exchange with a short buffer.
//! `urEventGetProfilingInfo` and `urUSMPoolGetInfoExp` have protocols of
//! their own (`event.rs`, `usm_exp.rs`).

use super::*;

/// `name: good PROP, past PROP, |w, prop, size, value, ret| call;` makes a
/// module of tests for one entry point; `call` sets up what it needs with
/// the `World` helpers, which leave the backend's log empty.
macro_rules! info_protocol {
    ($($name:ident: good $good:expr, past $past:expr, |$w:ident, $p:ident, $s:ident, $v:ident, $r:ident| $call:expr;)*) => {$(
        mod $name {
            use super::*;

            fn call($w: &World, $p: u32, $s: usize, $v: *mut c_void, $r: *mut usize) -> ur_result_t {
                $call
            }

            #[test]
            fn a_query_past_the_last_is_invalid_enumeration() {
                let w = World::new();
                let mut ret = 0usize;
                refused!(UR_RESULT_ERROR_INVALID_ENUMERATION, call(&w, $past.0 + 1, 0, null_mut(), &mut ret));
            }

            #[test]
            fn a_zero_size_with_a_buffer_is_invalid_size() {
                let w = World::new();
                let mut buf = [0u8; 64];
                refused!(UR_RESULT_ERROR_INVALID_SIZE, call(&w, $good.0, 0, buf.as_mut_ptr().cast(), null_mut()));
            }

            #[test]
            fn a_size_without_a_buffer_is_invalid_null_pointer() {
                let w = World::new();
                let mut ret = 0usize;
                refused!(UR_RESULT_ERROR_INVALID_NULL_POINTER, call(&w, $good.0, 64, null_mut(), &mut ret));
            }

            #[test]
            fn no_output_at_all_is_invalid_null_pointer() {
                let w = World::new();
                refused!(UR_RESULT_ERROR_INVALID_NULL_POINTER, call(&w, $good.0, 0, null_mut(), null_mut()));
            }

            #[test]
            fn the_size_then_the_value_and_a_short_buffer() {
                let w = World::new();
                let mut size = 0usize;
                assert_eq!(call(&w, $good.0, 0, null_mut(), &mut size), UR_RESULT_SUCCESS);
                assert!(size > 1, "{size}");
                let mut buf = vec![0u8; size];
                let mut again = 0usize;
                assert_eq!(call(&w, $good.0, size, buf.as_mut_ptr().cast(), &mut again), UR_RESULT_SUCCESS);
                assert_eq!(again, size);
                let mut short = 0usize;
                let code = call(&w, $good.0, size - 1, buf.as_mut_ptr().cast(), &mut short);
                assert_eq!(code, UR_RESULT_ERROR_INVALID_SIZE);
                assert_eq!(short, size, "the full size is reported with the error");
            }
        }
    )*};
}

info_protocol! {
    adapter: good UR_ADAPTER_INFO_BACKEND, past UR_ADAPTER_INFO_VERSION,
        |w, p, s, v, r| ur!(Adapter.pfnGetInfo(w.adapter, ur_adapter_info_t(p), s, v, r));
    platform: good UR_PLATFORM_INFO_NAME, past UR_PLATFORM_INFO_ADAPTER,
        |w, p, s, v, r| ur!(Platform.pfnGetInfo(w.platform, ur_platform_info_t(p), s, v, r));
    device: good UR_DEVICE_INFO_NAME, past UR_DEVICE_INFO_ENQUEUE_HOST_TASK_SUPPORT_EXP,
        |w, p, s, v, r| ur!(Device.pfnGetInfo(w.dev[0], ur_device_info_t(p), s, v, r));
    context: good UR_CONTEXT_INFO_DEVICES, past UR_CONTEXT_INFO_USM_FILL2D_SUPPORT,
        |w, p, s, v, r| ur!(Context.pfnGetInfo(w.ctx, ur_context_info_t(p), s, v, r));
    queue: good UR_QUEUE_INFO_FLAGS, past UR_QUEUE_INFO_EMPTY,
        |w, p, s, v, r| ur!(Queue.pfnGetInfo(w.queue, ur_queue_info_t(p), s, v, r));
    event: good UR_EVENT_INFO_COMMAND_TYPE, past UR_EVENT_INFO_REFERENCE_COUNT,
        |w, p, s, v, r| { let e = w.event(); ur!(Event.pfnGetInfo(e, ur_event_info_t(p), s, v, r)) };
    program: good UR_PROGRAM_INFO_BINARY_SIZES, past UR_PROGRAM_INFO_KERNEL_NAMES,
        |w, p, s, v, r| { let pr = w.program(); ur!(Program.pfnGetInfo(pr, ur_program_info_t(p), s, v, r)) };
    program_build: good UR_PROGRAM_BUILD_INFO_STATUS, past UR_PROGRAM_BUILD_INFO_BINARY_TYPE,
        |w, p, s, v, r| {
            let pr = w.program();
            ur!(Program.pfnGetBuildInfo(pr, w.dev[0], ur_program_build_info_t(p), s, v, r))
        };
    kernel: good UR_KERNEL_INFO_FUNCTION_NAME, past UR_KERNEL_INFO_SPILL_MEM_SIZE,
        |w, p, s, v, r| { let k = w.kernel(); ur!(Kernel.pfnGetInfo(k, ur_kernel_info_t(p), s, v, r)) };
    kernel_group: good UR_KERNEL_GROUP_INFO_WORK_GROUP_SIZE, past UR_KERNEL_GROUP_INFO_COMPILE_MAX_LINEAR_WORK_GROUP_SIZE,
        |w, p, s, v, r| { let k = w.kernel(); ur!(Kernel.pfnGetGroupInfo(k, w.dev[0], ur_kernel_group_info_t(p), s, v, r)) };
    kernel_sub_group: good UR_KERNEL_SUB_GROUP_INFO_MAX_SUB_GROUP_SIZE, past UR_KERNEL_SUB_GROUP_INFO_SUB_GROUP_SIZE_INTEL,
        |w, p, s, v, r| {
            let k = w.kernel();
            ur!(Kernel.pfnGetSubGroupInfo(k, w.dev[0], ur_kernel_sub_group_info_t(p), s, v, r))
        };
    usm_alloc: good UR_USM_ALLOC_INFO_SIZE, past UR_USM_ALLOC_INFO_POOL,
        |w, p, s, v, r| { let m = w.alloc(64); ur!(USM.pfnGetMemAllocInfo(w.ctx, m, ur_usm_alloc_info_t(p), s, v, r)) };
    usm_pool: good UR_USM_POOL_INFO_RESERVED_CURRENT_EXP, past UR_USM_POOL_INFO_USED_HIGH_EXP,
        |w, p, s, v, r| { let pool = w.pool(w.ctx, w.dev[0]); ur!(USM.pfnPoolGetInfo(pool, ur_usm_pool_info_t(p), s, v, r)) };
    peer_access: good UR_EXP_PEER_INFO_UR_PEER_ACCESS_SUPPORT, past UR_EXP_PEER_INFO_UR_PEER_ATOMICS_SUPPORT,
        |w, p, s, v, r| ur!(UsmP2PExp.pfnPeerAccessGetInfoExp(w.dev[0], w.dev[1], ur_exp_peer_info_t(p), s, v, r));
}
