//! Cases first written for CUDA: hand-written PTX kernels that read and
//! write memory from the async-alloc extension, pool statistics and
//! trimming (with and without the native-pool flag), reuse across queues,
//! program build errors, and CUDA native objects. Each runs where the
//! device has what it needs, probed, never read from the backend's name:
//! PTX where the device selects an `nvptx64` image; pools where it reports
//! async allocation and pool support; CUDA streams, events and contexts
//! where the native device and context handles are a CUDA device and its
//! primary context, as the CUDA driver itself reports them. Elsewhere they
//! skip, naming what is missing.

use crate::harness::*;
use crate::{check, check_eq, expect_result, expect_success, native_handle, native_props, skip, system_entry_points};
use core::ffi::c_void;
use std::ptr::{null, null_mut};
use ur_core::abi::*;

pub const CASES: &[Case] = &[
    Case::device(
        "urEnqueueKernelLaunchWithArgsExp.cuda_fills_async_device_memory",
        fills_async_memory,
    ),
    Case::device(
        "urEnqueueKernelLaunchWithArgsExp.cuda_chain_across_queues",
        chain_across_queues,
    ),
    Case::device(
        "urEnqueueKernelLaunchWithArgsExp.cuda_shared_and_host_async_memory",
        shared_and_host,
    ),
    Case::device("urEnqueueKernelLaunchWithArgsExp.cuda_argument_errors", argument_errors),
    Case::device(
        "urEnqueueUSMFreeExp.same_queue_reuse_keeps_pool_small",
        same_queue_reuse,
    ),
    Case::device(
        "urEnqueueUSMFreeExp.cross_queue_handover_keeps_pool_small",
        cross_queue_reuse,
    ),
    Case::device("urEnqueueUSMFreeExp.checked_frees_keep_allocation_whole", checked_frees),
    Case::device(
        "urUSMPoolCreateExp.native_pool_flag_stats_threshold_trim",
        native_pool_stats,
    ),
    Case::device("urProgramBuild.cuda_bad_ptx_fails_with_log", bad_ptx),
    Case::device("urKernelCreate.cuda_unknown_name", unknown_kernel),
    Case::device("urEventGetProfilingInfo.cuda_kernel_times", kernel_profiling),
    Case::device(
        "urProgramCreateWithNativeHandle.cuda_module_round_trip_and_launch",
        native_module,
    ),
    Case::device(
        "urKernelCreateWithNativeHandle.cuda_function_round_trip_and_launch",
        native_function,
    ),
    Case::device("urKernelCreateWithNativeHandle.cuda_null_program", native_function_null_program),
    Case::device(
        "urKernelCreateWithNativeHandle.cuda_foreign_program",
        native_function_foreign_program,
    ),
    Case::device(
        "urQueueCreateWithNativeHandle.cuda_streams_borrowed_and_owned",
        native_streams,
    ),
    Case::device(
        "urEventCreateWithNativeHandle.cuda_events_borrowed_and_owned",
        native_events,
    ),
    Case::device(
        "urContextCreateWithNativeHandle.cuda_owned_primary_context",
        native_owned_context,
    ),
];

/// `fill_u32(out, value, n)`: out[i] = value; `add_u32(dst, src, add, n)`:
/// dst[i] = src[i] + add. One thread per element.
const PTX: &str = include_str!("../../kernels/cuda_kernels.ptx");

const ELEMENTS: usize = 1 << 16;
const BYTES: usize = ELEMENTS * 4;
const MIB: usize = 1 << 20;


/// Skips unless the device serves stream-ordered allocation and pools, as
/// its info queries say.
unsafe fn require_async_pools(fx: &DeviceFx) -> CaseResult {
    fx.require(UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP, "async USM allocation support (ASYNC_USM_ALLOCATIONS_SUPPORT_EXP is false)")?;
    fx.require(UR_DEVICE_INFO_USM_POOL_SUPPORT, "USM pool support (USM_POOL_SUPPORT is false)")
}

/// A program of PTX `source`, and what building it returned. Skips where
/// the device selects no `nvptx64` image, or its adapter answers
/// UNSUPPORTED_FEATURE for a PTX binary.
unsafe fn program(fx: &DeviceFx, source: &str) -> Result<(OwnedProgram, ur_result_t), Outcome> {
    if super::program::selected_target(fx, &["nvptx64"])?.is_none() {
        skip!("the device selects no nvptx64 image (urDeviceSelectBinary answers INVALID_BINARY): it runs no PTX");
    }
    let mut device = fx.device;
    let mut length = source.len();
    let mut binary = source.as_ptr();
    let mut program = null_mut();
    let code =
        fx.api.urProgramCreateWithBinary(fx.context, 1, &mut device, &mut length, &mut binary, null(), &mut program)?;
    if code == UR_RESULT_ERROR_UNSUPPORTED_FEATURE {
        skip!("the device selects nvptx64 images, but urProgramCreateWithBinary(PTX) answers UNSUPPORTED_FEATURE");
    }
    expect_code(UR_RESULT_SUCCESS, code, "urProgramCreateWithBinary(PTX)")?;
    let program = Owned::new(program, fx.api.fns.urProgramRelease);
    let built = fx.api.urProgramBuild(fx.context, program.get(), null())?;
    Ok((program, built))
}

unsafe fn kernels(fx: &DeviceFx) -> Result<(OwnedProgram, OwnedKernel, OwnedKernel), Outcome> {
    let (program, built) = program(fx, PTX)?;
    check_eq!(built, UR_RESULT_SUCCESS);
    let mut fill = null_mut();
    expect_success!(fx.api.urKernelCreate(program.get(), c"fill_u32".as_ptr(), &mut fill));
    let fill = Owned::new(fill, fx.api.fns.urKernelRelease);
    let mut add = null_mut();
    expect_success!(fx.api.urKernelCreate(program.get(), c"add_u32".as_ptr(), &mut add));
    Ok((program, fill, Owned::new(add, fx.api.fns.urKernelRelease)))
}

fn pointer_arg(index: u32, p: *const c_void) -> ur_exp_kernel_arg_properties_t {
    ur_exp_kernel_arg_properties_t {
        stype: UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES,
        pNext: null_mut(),
        r#type: UR_EXP_KERNEL_ARG_TYPE_POINTER,
        index,
        size: std::mem::size_of::<*const c_void>(),
        value: ur_exp_kernel_arg_value_t { pointer: p },
    }
}

fn u32_arg(index: u32, v: &u32) -> ur_exp_kernel_arg_properties_t {
    ur_exp_kernel_arg_properties_t {
        stype: UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES,
        pNext: null_mut(),
        r#type: UR_EXP_KERNEL_ARG_TYPE_VALUE,
        index,
        size: 4,
        value: ur_exp_kernel_arg_value_t {
            value: (v as *const u32).cast(),
        },
    }
}

/// `ELEMENTS` as the kernels' `n`, at an address that outlives every launch.
static N: u32 = ELEMENTS as u32;

/// The arguments of `fill_u32(out, *value, ELEMENTS)`.
fn fill_args(out: *const c_void, value: &u32) -> [ur_exp_kernel_arg_properties_t; 3] {
    [pointer_arg(0, out), u32_arg(1, value), u32_arg(2, &N)]
}

/// `urEnqueueKernelLaunchWithArgsExp` over `global` in groups of `local`
/// (`dims` as given, so that a case can pass a wrong one), writing the
/// event to `event` (null for none).
#[allow(clippy::too_many_arguments)]
unsafe fn launch_raw(
    fx: &DeviceFx,
    queue: ur_queue_handle_t,
    kernel: ur_kernel_handle_t,
    (dims, global, local): (u32, &[usize], &[usize]),
    args: &[ur_exp_kernel_arg_properties_t],
    wait: &[ur_event_handle_t],
    event: *mut ur_event_handle_t,
) -> Result<ur_result_t, Outcome> {
    let (n, events) = wait_list(wait);
    Ok(fx.api.urEnqueueKernelLaunchWithArgsExp(
        queue,
        kernel,
        dims,
        null(),
        global.as_ptr(),
        local.as_ptr(),
        args.len() as u32,
        args.as_ptr(),
        null(),
        n,
        events,
        event,
    )?)
}

/// `ELEMENTS` work-items in groups of 256.
const WHOLE: (u32, &[usize], &[usize]) = (1, &[ELEMENTS], &[256]);

/// Launches `kernel` over `ELEMENTS` work-items in groups of 256, which
/// must succeed, and returns its event.
unsafe fn launch_event(
    fx: &DeviceFx,
    queue: ur_queue_handle_t,
    kernel: ur_kernel_handle_t,
    args: &[ur_exp_kernel_arg_properties_t],
    wait: &[ur_event_handle_t],
) -> Result<OwnedEvent, Outcome> {
    let mut event = null_mut();
    expect_success!(launch_raw(fx, queue, kernel, WHOLE, args, wait, &mut event));
    Ok(fx.own_event(event))
}

/// The C type the three async USM allocation entry points share.
type AllocPfn = unsafe extern "C" fn(
    ur_queue_handle_t,
    ur_usm_pool_handle_t,
    usize,
    *const ur_exp_async_usm_alloc_properties_t,
    u32,
    *const ur_event_handle_t,
    *mut *mut c_void,
    *mut ur_event_handle_t,
) -> ur_result_t;

/// One of them by name, as the loader resolved it.
type AllocFn = (&'static str, Option<AllocPfn>);

/// An async allocation and its event.
unsafe fn alloc_with(
    fx: &DeviceFx,
    alloc: AllocFn,
    queue: ur_queue_handle_t,
    pool: ur_usm_pool_handle_t,
    size: usize,
    wait: &[ur_event_handle_t],
) -> Result<(*mut c_void, OwnedEvent), Outcome> {
    let mut p = null_mut();
    let mut e = null_mut();
    let Some(entry) = alloc.1 else {
        return Err(format!("the loader does not export {}", alloc.0).into());
    };
    let (n, events) = wait_list(wait);
    let r = entry(queue, pool, size, null(), n, events, &mut p, &mut e);
    check_eq!(r, UR_RESULT_SUCCESS);
    check!(
        !p.is_null() && !e.is_null(),
        "the allocation returned a null pointer or event"
    );
    Ok((p, fx.own_event(e)))
}

unsafe fn alloc_device(
    fx: &DeviceFx,
    queue: ur_queue_handle_t,
    pool: ur_usm_pool_handle_t,
    size: usize,
    wait: &[ur_event_handle_t],
) -> Result<(*mut c_void, OwnedEvent), Outcome> {
    alloc_with(fx, ("urEnqueueUSMDeviceAllocExp", fx.api.fns.urEnqueueUSMDeviceAllocExp), queue, pool, size, wait)
}

unsafe fn free_async(
    fx: &DeviceFx,
    queue: ur_queue_handle_t,
    pool: ur_usm_pool_handle_t,
    p: *mut c_void,
    wait: &[ur_event_handle_t],
) -> Result<OwnedEvent, Outcome> {
    let mut e = null_mut();
    let (n, events) = wait_list(wait);
    expect_success!(fx.api.urEnqueueUSMFreeExp(queue, pool, p, n, events, &mut e));
    Ok(fx.own_event(e))
}

unsafe fn read_u32s(fx: &DeviceFx, queue: ur_queue_handle_t, p: *const c_void) -> Result<Vec<u32>, Outcome> {
    let bytes = fx.read(queue, p, BYTES)?;
    Ok(bytes
        .chunks_exact(4)
        .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

fn expect_all(what: &str, got: &[u32], value: u32) -> CaseResult {
    match got.iter().position(|&v| v != value) {
        None => Ok(()),
        Some(i) => Err(format!("{what}: element {i} is 0x{:08x}, expected 0x{value:08x}", got[i]).into()),
    }
}

/// A pool of the fixture's device from `urUSMPoolCreateExp` with `flags`.
unsafe fn exp_pool(fx: &DeviceFx, flags: ur_usm_pool_flags_t) -> Result<OwnedPool, Outcome> {
    let mut desc = ur_usm_pool_desc_t { stype: UR_STRUCTURE_TYPE_USM_POOL_DESC, pNext: null(), flags };
    let mut pool = null_mut();
    expect_success!(fx.api.urUSMPoolCreateExp(fx.context, fx.device, &mut desc, &mut pool));
    Ok(fx.own_pool(pool))
}

/// A pool over CUDA's own memory pool (the native-pool flag).
unsafe fn native_pool(fx: &DeviceFx) -> Result<OwnedPool, Outcome> {
    exp_pool(fx, UR_USM_POOL_FLAG_USE_NATIVE_MEMORY_POOL_EXP.0)
}

/// A pool the core's engine serves (no flags).
unsafe fn engine_pool(fx: &DeviceFx) -> Result<OwnedPool, Outcome> {
    exp_pool(fx, 0)
}

unsafe fn pool_stat(fx: &DeviceFx, pool: ur_usm_pool_handle_t, what: ur_usm_pool_info_t) -> Result<usize, Outcome> {
    let mut v = 0usize;
    expect_success!(fx
        .api
        .urUSMPoolGetInfoExp(pool, what, (&mut v as *mut usize).cast(), null_mut()));
    Ok(v)
}

// ---------------------------------------------------------------------------

unsafe fn fills_async_memory(fx: &DeviceFx) -> CaseResult {
    require_async_pools(fx)?;
    let (_program, fill, _add) = kernels(fx)?;
    for (label, pool) in [
        ("default pool", None),
        ("native pool", Some(native_pool(fx)?)),
        ("engine pool", Some(engine_pool(fx)?)),
    ] {
        let pool_handle = pool.as_ref().map_or(null_mut(), |p| p.get());
        let (p, allocated) = alloc_device(fx, fx.queue, pool_handle, BYTES, &[])?;
        let value = 0xC0DE_0001u32;
        let filled = launch_event(fx, fx.queue, fill.get(), &fill_args(p, &value), &[allocated.get()])?;
        let got = read_u32s(fx, fx.queue, p)?;
        expect_all(label, &got, value)?;
        let freed = free_async(fx, fx.queue, pool_handle, p, &[filled.get()])?;
        fx.wait(freed.get())?;
    }
    Ok(())
}

unsafe fn chain_across_queues(fx: &DeviceFx) -> CaseResult {
    require_async_pools(fx)?;
    let (_program, fill, add) = kernels(fx)?;
    let second = fx.create_queue(0)?;
    let q2 = second.get();
    for pool in [None, Some(engine_pool(fx)?)] {
        let ph = pool.as_ref().map_or(null_mut(), |p| p.get());
        let (a, a_ready) = alloc_device(fx, fx.queue, ph, BYTES, &[])?;
        let seven = 7u32;
        let filled = launch_event(fx, fx.queue, fill.get(), &fill_args(a, &seven), &[a_ready.get()])?;
        let (b, b_ready) = alloc_device(fx, q2, ph, BYTES, &[filled.get()])?;
        let five = 5u32;
        let add_args = [pointer_arg(0, b), pointer_arg(1, a), u32_arg(2, &five), u32_arg(3, &N)];
        let added = launch_event(fx, q2, add.get(), &add_args, &[b_ready.get()])?;
        // The producer queue frees what the consumer read, once it has.
        let a_freed = free_async(fx, fx.queue, ph, a, &[added.get()])?;
        let got = read_u32s(fx, q2, b)?;
        expect_all("b = a + 5 on the second queue", &got, 12)?;
        let b_freed = free_async(fx, q2, ph, b, &[])?;
        fx.wait(a_freed.get())?;
        fx.wait(b_freed.get())?;
    }
    expect_success!(fx.api.urQueueFinish(q2));
    Ok(())
}

unsafe fn shared_and_host(fx: &DeviceFx) -> CaseResult {
    require_async_pools(fx)?;
    let (_program, fill, _add) = kernels(fx)?;
    for (label, alloc) in [
        ("shared", ("urEnqueueUSMSharedAllocExp", fx.api.fns.urEnqueueUSMSharedAllocExp)),
        ("host", ("urEnqueueUSMHostAllocExp", fx.api.fns.urEnqueueUSMHostAllocExp)),
    ] {
        let (p, ready) = alloc_with(fx, alloc, fx.queue, null_mut(), BYTES, &[])?;
        let value = 0x5A5A_0000u32 + label.len() as u32;
        let done = launch_event(fx, fx.queue, fill.get(), &fill_args(p, &value), &[ready.get()])?;
        fx.wait(done.get())?;
        // Shared and host memory are readable by the host directly.
        let got = std::slice::from_raw_parts(p as *const u32, ELEMENTS);
        expect_all(label, got, value)?;
        let freed = free_async(fx, fx.queue, null_mut(), p, &[])?;
        fx.wait(freed.get())?;
    }
    Ok(())
}

unsafe fn argument_errors(fx: &DeviceFx) -> CaseResult {
    let (_program, fill, _add) = kernels(fx)?;
    let memory = fx.alloc(UsmKind::Device, BYTES)?;
    let value = 1u32;
    let good = fill_args(memory.ptr, &value);
    let [out, value_arg, n_arg] = good;
    let mut wide = n_arg;
    wide.size = 8;
    let past_last = u32_arg(3, &N);
    for (args, expected, how) in [
        (&[out, value_arg][..], UR_RESULT_ERROR_INVALID_KERNEL_ARGS, "the last argument missing"),
        (&[out, value_arg, wide], UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE, "a 4-byte parameter given 8 bytes"),
        (&[out, value_arg, n_arg, past_last], UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX, "one argument too many"),
    ] {
        let mut event = null_mut();
        let got = launch_raw(fx, fx.queue, fill.get(), WHOLE, args, &[], &mut event)?;
        if !event.is_null() {
            drop(fx.own_event(event));
        }
        expect_code(expected, got, &format!("urEnqueueKernelLaunchWithArgsExp(fill_u32) with {how}"))?;
    }
    // A global size the work-group size does not divide, then a fourth
    // dimension.
    let global = [ELEMENTS + 1];
    let local = [256usize];
    for (dims, expected) in [(1, UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE), (4, UR_RESULT_ERROR_INVALID_WORK_DIMENSION)] {
        expect_result!(
            expected,
            launch_raw(fx, fx.queue, fill.get(), (dims, &global, &local), &good, &[], null_mut())
        );
    }
    Ok(())
}

/// One 1 MiB allocation and free on `queue` (waiting on `wait`); returns
/// the free's event.
unsafe fn cycle(
    fx: &DeviceFx,
    queue: ur_queue_handle_t,
    pool: ur_usm_pool_handle_t,
    wait: &[ur_event_handle_t],
) -> Result<OwnedEvent, Outcome> {
    let mut p = null_mut();
    let (n, events) = wait_list(wait);
    expect_success!(fx.api.urEnqueueUSMDeviceAllocExp(queue, pool, MIB, null(), n, events, &mut p, null_mut()));
    free_async(fx, queue, pool, p, &[])
}

/// Allocates and frees `MIB` on one queue many times: the pool reserves no
/// more than it did for the first cycle (CUDA reserves in large chunks, so
/// the first cycle sets the mark).
unsafe fn same_queue_reuse(fx: &DeviceFx) -> CaseResult {
    require_async_pools(fx)?;
    for (label, pool) in [("native", native_pool(fx)?), ("engine", engine_pool(fx)?)] {
        cycle(fx, fx.queue, pool.get(), &[])?;
        expect_success!(fx.api.urQueueFinish(fx.queue));
        let first = pool_stat(fx, pool.get(), UR_USM_POOL_INFO_RESERVED_HIGH_EXP)?;
        check!(first >= MIB, "{label} pool reserved {first} bytes for a 1 MiB block");
        for _ in 0..200 {
            cycle(fx, fx.queue, pool.get(), &[])?;
        }
        expect_success!(fx.api.urQueueFinish(fx.queue));
        let high = pool_stat(fx, pool.get(), UR_USM_POOL_INFO_RESERVED_HIGH_EXP)?;
        check!(
            high <= first,
            "{label} pool grew from {first} to {high} bytes over 200 reuses of one 1 MiB block"
        );
        check_eq!(pool_stat(fx, pool.get(), UR_USM_POOL_INFO_USED_CURRENT_EXP)?, 0usize);
    }
    Ok(())
}

/// Hands a block back and forth between two queues through the frees'
/// events: the allocation that waits on a free reuses it, so the pool
/// reserves no more than for the first hand-over.
unsafe fn cross_queue_reuse(fx: &DeviceFx) -> CaseResult {
    require_async_pools(fx)?;
    let second = fx.create_queue(0)?;
    for (label, pool) in [("native", native_pool(fx)?), ("engine", engine_pool(fx)?)] {
        let handed = cycle(fx, fx.queue, pool.get(), &[])?;
        let mut handed = cycle(fx, second.get(), pool.get(), &[handed.get()])?;
        expect_success!(fx.api.urQueueFinish(second.get()));
        let first = pool_stat(fx, pool.get(), UR_USM_POOL_INFO_RESERVED_HIGH_EXP)?;
        for i in 0..200 {
            let q = if i % 2 == 0 { fx.queue } else { second.get() };
            handed = cycle(fx, q, pool.get(), &[handed.get()])?;
        }
        expect_success!(fx.api.urQueueFinish(fx.queue));
        expect_success!(fx.api.urQueueFinish(second.get()));
        let high = pool_stat(fx, pool.get(), UR_USM_POOL_INFO_RESERVED_HIGH_EXP)?;
        check!(
            high <= first,
            "{label} pool grew from {first} to {high} bytes handing one 1 MiB block between queues 200 times"
        );
    }
    Ok(())
}

unsafe fn checked_frees(fx: &DeviceFx) -> CaseResult {
    require_async_pools(fx)?;
    for pool in [None, Some(engine_pool(fx)?)] {
        let ph = pool.as_ref().map_or(null_mut(), |p| p.get());
        let (p, ready) = alloc_device(fx, fx.queue, ph, 4096, &[])?;
        fx.wait(ready.get())?;
        let interior = (p as *mut u8).wrapping_add(64).cast::<c_void>();
        expect_result!(
            UR_RESULT_ERROR_INVALID_VALUE,
            fx.api
                .urEnqueueUSMFreeExp(fx.queue, ph, interior, 0, null(), null_mut())
        );
        // The allocation is still whole: fill and read it.
        let byte = 0xA5u8;
        expect_success!(fx.api.urEnqueueUSMFill(
            fx.queue,
            p,
            1,
            (&byte as *const u8).cast(),
            4096,
            0,
            null(),
            null_mut()
        ));
        let got = fx.read(fx.queue, p, 4096)?;
        check!(
            got.iter().all(|&b| b == byte),
            "the allocation changed after a refused free"
        );
        let blocking = fx.alloc(UsmKind::Device, 64)?;
        expect_result!(
            UR_RESULT_ERROR_INVALID_VALUE,
            fx.api
                .urEnqueueUSMFreeExp(fx.queue, ph, blocking.ptr, 0, null(), null_mut())
        );
        expect_success!(fx.api.urEnqueueUSMFreeExp(fx.queue, ph, p, 0, null(), null_mut()));
        expect_result!(
            UR_RESULT_ERROR_INVALID_VALUE,
            fx.api.urEnqueueUSMFreeExp(fx.queue, ph, p, 0, null(), null_mut())
        );
        expect_success!(fx.api.urQueueFinish(fx.queue));
    }
    Ok(())
}

unsafe fn native_pool_stats(fx: &DeviceFx) -> CaseResult {
    require_async_pools(fx)?;
    let pool = native_pool(fx)?;
    let size = 8 * MIB;
    let (p, ready) = alloc_device(fx, fx.queue, pool.get(), size, &[])?;
    fx.wait(ready.get())?;
    let used = pool_stat(fx, pool.get(), UR_USM_POOL_INFO_USED_CURRENT_EXP)?;
    let reserved = pool_stat(fx, pool.get(), UR_USM_POOL_INFO_RESERVED_CURRENT_EXP)?;
    check!(used >= size, "USED_CURRENT is {used} with {size} bytes live");
    check!(
        reserved >= used,
        "RESERVED_CURRENT {reserved} is below USED_CURRENT {used}"
    );
    check!(
        pool_stat(fx, pool.get(), UR_USM_POOL_INFO_USED_HIGH_EXP)? >= used,
        "USED_HIGH below USED_CURRENT"
    );
    let freed = free_async(fx, fx.queue, pool.get(), p, &[])?;
    fx.wait(freed.get())?;
    expect_success!(fx.api.urQueueFinish(fx.queue));
    check_eq!(pool_stat(fx, pool.get(), UR_USM_POOL_INFO_USED_CURRENT_EXP)?, 0usize);
    let threshold = 64 * MIB;
    expect_success!(fx.api.urUSMPoolSetInfoExp(
        pool.get(),
        UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP,
        (&threshold as *const usize).cast_mut().cast(),
        std::mem::size_of::<usize>()
    ));
    check_eq!(
        pool_stat(fx, pool.get(), UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP)?,
        threshold
    );
    expect_success!(fx.api.urUSMPoolTrimToExp(fx.context, fx.device, pool.get(), 0));
    check_eq!(
        pool_stat(fx, pool.get(), UR_USM_POOL_INFO_RESERVED_CURRENT_EXP)?,
        0usize
    );
    Ok(())
}

unsafe fn bad_ptx(fx: &DeviceFx) -> CaseResult {
    let (program, built) = program(
        fx,
        ".version 7.0\n.target sm_50\n.address_size 64\n.visible .entry broken( { not ptx }\n",
    )?;
    check_eq!(built, UR_RESULT_ERROR_PROGRAM_BUILD_FAILURE);
    let mut size = 0usize;
    expect_success!(fx.api.urProgramGetBuildInfo(
        program.get(),
        fx.device,
        UR_PROGRAM_BUILD_INFO_LOG,
        0,
        null_mut(),
        &mut size
    ));
    check!(size > 1, "the build log of a failed build is empty");
    let mut status = UR_PROGRAM_BUILD_STATUS_NONE;
    expect_success!(fx.api.urProgramGetBuildInfo(
        program.get(),
        fx.device,
        UR_PROGRAM_BUILD_INFO_STATUS,
        std::mem::size_of_val(&status),
        (&mut status as *mut ur_program_build_status_t).cast(),
        null_mut()
    ));
    check_eq!(status, UR_PROGRAM_BUILD_STATUS_ERROR);
    Ok(())
}

unsafe fn unknown_kernel(fx: &DeviceFx) -> CaseResult {
    let (program, built) = program(fx, PTX)?;
    check_eq!(built, UR_RESULT_SUCCESS);
    let mut kernel = null_mut();
    expect_result!(
        UR_RESULT_ERROR_INVALID_KERNEL_NAME,
        fx.api
            .urKernelCreate(program.get(), c"no_such_kernel".as_ptr(), &mut kernel)
    );
    Ok(())
}

unsafe fn kernel_profiling(fx: &DeviceFx) -> CaseResult {
    let (_program, fill, _add) = kernels(fx)?;
    let queue = fx.create_queue(UR_QUEUE_FLAG_PROFILING_ENABLE.0)?;
    let memory = fx.alloc(UsmKind::Device, BYTES)?;
    let value = 3u32;
    let event = launch_event(fx, queue.get(), fill.get(), &fill_args(memory.ptr, &value), &[])?;
    fx.wait(event.get())?;
    let time = |prop| -> Result<u64, Outcome> {
        let mut t = 0u64;
        expect_success!(fx
            .api
            .urEventGetProfilingInfo(event.get(), prop, 8, (&mut t as *mut u64).cast(), null_mut()));
        Ok(t)
    };
    let (queued, start, end) = (
        time(UR_PROFILING_INFO_COMMAND_QUEUED)?,
        time(UR_PROFILING_INFO_COMMAND_START)?,
        time(UR_PROFILING_INFO_COMMAND_END)?,
    );
    check!(
        queued <= start && start <= end,
        "times out of order: queued {queued}, start {start}, end {end}"
    );
    check!(
        end - start < 10_000_000_000,
        "a 64 Ki-element fill took {} ns",
        end - start
    );
    Ok(())
}

// ---------------------------------------------------------------------------
// Native handles: CUDA modules, functions, streams, events and primary
// contexts. Streams and events of the case's own come from the driver
// (`libcuda.so.1`, the library the adapter uses), so that a borrowed one
// can be checked to outlive its UR object.

type CuResultCode = i32;
type CuPtr = *mut c_void;

/// Skips where the adapter has no native handle of this kind (its
/// GetNativeHandle answered UNSUPPORTED_FEATURE); fails on any other error.
fn native_or_skip(what: &str, code: ur_result_t) -> CaseResult {
    match code {
        UR_RESULT_SUCCESS => Ok(()),
        UR_RESULT_ERROR_UNSUPPORTED_FEATURE => {
            skip!("the adapter has no native {what} handle (GetNativeHandle answers UNSUPPORTED_FEATURE)")
        }
        code => Err(format!("the {what}'s GetNativeHandle returned {}", crate::names::result_name(code)).into()),
    }
}

system_entry_points! {
    /// The driver entry points the native-handle cases call.
    struct CudaDriver from "libcuda.so.1" {
        init = "cuInit": unsafe extern "C" fn(u32) -> CuResultCode,
        device_get_count = "cuDeviceGetCount": unsafe extern "C" fn(*mut i32) -> CuResultCode,
        device_primary_ctx_release = "cuDevicePrimaryCtxRelease_v2": unsafe extern "C" fn(i32) -> CuResultCode,
        ctx_set_current = "cuCtxSetCurrent": unsafe extern "C" fn(CuPtr) -> CuResultCode,
        device_primary_ctx_retain = "cuDevicePrimaryCtxRetain": unsafe extern "C" fn(*mut CuPtr, i32) -> CuResultCode,
        stream_create = "cuStreamCreate": unsafe extern "C" fn(*mut CuPtr, u32) -> CuResultCode,
        stream_synchronize = "cuStreamSynchronize": unsafe extern "C" fn(CuPtr) -> CuResultCode,
        stream_destroy = "cuStreamDestroy_v2": unsafe extern "C" fn(CuPtr) -> CuResultCode,
        event_create = "cuEventCreate": unsafe extern "C" fn(*mut CuPtr, u32) -> CuResultCode,
        event_record = "cuEventRecord": unsafe extern "C" fn(CuPtr, CuPtr) -> CuResultCode,
        event_query = "cuEventQuery": unsafe extern "C" fn(CuPtr) -> CuResultCode,
        event_destroy = "cuEventDestroy_v2": unsafe extern "C" fn(CuPtr) -> CuResultCode,
    }
}

/// The driver, with the device's primary context (the fixture context's
/// native handle) current on this thread. Probed first, comparing values
/// only (no handle of another backend ever reaches the driver): the native
/// device handle must be an ordinal the driver counts, and the native
/// context that device's primary context. Skips, naming why, otherwise.
unsafe fn cuda_driver(fx: &DeviceFx) -> Result<&'static CudaDriver, Outcome> {
    let (mut device, mut ctx) = (0, 0);
    native_or_skip("device", fx.api.urDeviceGetNativeHandle(fx.device, &mut device)?)?;
    native_or_skip("context", fx.api.urContextGetNativeHandle(fx.context, &mut ctx)?)?;
    static DRIVER: std::sync::OnceLock<Result<CudaDriver, String>> = std::sync::OnceLock::new();
    let Ok(cu) = DRIVER.get_or_init(CudaDriver::load) else {
        skip!("no CUDA driver (libcuda.so.1) here to tell whether the native handles are CUDA objects");
    };
    let mut count = 0;
    if (cu.init)(0) != 0 || (cu.device_get_count)(&mut count) != 0 || device >= count.max(0) as ur_native_handle_t {
        skip!("the native device handle {device:#x} is not one of the CUDA driver's {count} device ordinals");
    }
    let mut primary: CuPtr = null_mut();
    check_eq!((cu.device_primary_ctx_retain)(&mut primary, device as i32), 0);
    check_eq!((cu.device_primary_ctx_release)(device as i32), 0);
    if primary as ur_native_handle_t != ctx {
        skip!("the native context handle is not the primary context of CUDA device {device}");
    }
    check_eq!((cu.ctx_set_current)(ctx as CuPtr), 0);
    Ok(cu)
}

/// Fills device memory with `value` through `kernel` on `queue` and checks
/// it, reading back through the fixture's queue.
unsafe fn fill_and_check(
    fx: &DeviceFx,
    queue: ur_queue_handle_t,
    kernel: ur_kernel_handle_t,
    value: u32,
    what: &str,
) -> CaseResult {
    let out = fx.alloc(UsmKind::Device, BYTES)?;
    let filled = launch_event(fx, queue, kernel, &fill_args(out.ptr, &value), &[])?;
    fx.wait(filled.get())?;
    let got = read_u32s(fx, fx.queue, out.ptr)?;
    expect_all(what, &got, value)
}

unsafe fn native_module(fx: &DeviceFx) -> CaseResult {
    let (original, fill, _add) = kernels(fx)?;
    let mut module = 0;
    native_or_skip("program", fx.api.urProgramGetNativeHandle(original.get(), &mut module)?)?;
    check!(module != 0, "the built program's native module is null");
    let properties = native_props!(ur_program_native_properties_t, UR_STRUCTURE_TYPE_PROGRAM_NATIVE_PROPERTIES, false);
    let mut program = null_mut();
    expect_success!(fx.api.urProgramCreateWithNativeHandle(module, fx.context, &properties, &mut program));
    let program: OwnedProgram = Owned::new(program, fx.api.fns.urProgramRelease);
    native_handle!(fx.api, urProgramGetNativeHandle).answers(program.get(), module)?;
    let mut kernel = null_mut();
    expect_success!(fx.api.urKernelCreate(program.get(), c"fill_u32".as_ptr(), &mut kernel));
    let kernel: OwnedKernel = Owned::new(kernel, fx.api.fns.urKernelRelease);
    fill_and_check(fx, fx.queue, kernel.get(), 0x0D0E_0001, "fill_u32 from a program over a native module")?;
    drop(kernel);
    expect_success!(program.release());
    // Borrowed: the module is still loaded for the program it came from.
    fill_and_check(fx, fx.queue, fill.get(), 0x0D0E_0002, "fill_u32 of the module's own program")
}

/// The CUDA function of `kernel`, or a skip where kernels have no native
/// handle.
unsafe fn function_of(fx: &DeviceFx, kernel: ur_kernel_handle_t) -> Result<ur_native_handle_t, Outcome> {
    let mut function = 0;
    native_or_skip("kernel", fx.api.urKernelGetNativeHandle(kernel, &mut function)?)?;
    Ok(function)
}

/// A kernel over the CUDA function of `fill` with `program`, which is not
/// the function's own, answers `expected`.
unsafe fn function_with_wrong_program(
    fx: &DeviceFx,
    fill: &OwnedKernel,
    program: ur_program_handle_t,
    expected: ur_result_t,
) -> CaseResult {
    let function = function_of(fx, fill.get())?;
    let mut kernel = null_mut();
    expect_result!(expected, fx.api.urKernelCreateWithNativeHandle(function, fx.context, program, null(), &mut kernel));
    Ok(())
}

unsafe fn native_function(fx: &DeviceFx) -> CaseResult {
    let (program, fill, _add) = kernels(fx)?;
    let function = function_of(fx, fill.get())?;
    let mut kernel = null_mut();
    expect_success!(fx.api.urKernelCreateWithNativeHandle(function, fx.context, program.get(), null(), &mut kernel));
    let kernel: OwnedKernel = Owned::new(kernel, fx.api.fns.urKernelRelease);
    native_handle!(fx.api, urKernelGetNativeHandle).answers(kernel.get(), function)?;
    let mut size = 0usize;
    expect_success!(fx.api.urKernelGetInfo(kernel.get(), UR_KERNEL_INFO_FUNCTION_NAME, 0, null_mut(), &mut size));
    let mut name = vec![0u8; size];
    expect_success!(fx.api.urKernelGetInfo(
        kernel.get(),
        UR_KERNEL_INFO_FUNCTION_NAME,
        size,
        name.as_mut_ptr().cast(),
        null_mut()
    ));
    check_eq!(name.as_slice(), b"fill_u32\0".as_slice());
    fill_and_check(fx, fx.queue, kernel.get(), 0x0F0F_0001, "fill_u32 through a kernel from a native function")
}

unsafe fn native_function_null_program(fx: &DeviceFx) -> CaseResult {
    let (_program, fill, _add) = kernels(fx)?;
    function_with_wrong_program(fx, &fill, null_mut(), UR_RESULT_ERROR_INVALID_NULL_HANDLE)
}

unsafe fn native_function_foreign_program(fx: &DeviceFx) -> CaseResult {
    let (_program, fill, _add) = kernels(fx)?;
    let (other, built) = program(fx, PTX)?;
    check_eq!(built, UR_RESULT_SUCCESS);
    function_with_wrong_program(fx, &fill, other.get(), UR_RESULT_ERROR_INVALID_PROGRAM)
}

/// Once the UR object over a borrowed (not owned) native object is
/// released, the native object is still the case's: it answers `use_it`,
/// and the case destroys it.
fn still_the_cases(
    owned: bool,
    use_it: impl FnOnce() -> CuResultCode,
    destroy: impl FnOnce() -> CuResultCode,
) -> CaseResult {
    if !owned {
        check_eq!(use_it(), 0);
        check_eq!(destroy(), 0);
    }
    Ok(())
}

unsafe fn native_streams(fx: &DeviceFx) -> CaseResult {
    let cu = cuda_driver(fx)?;
    let (_program, fill, _add) = kernels(fx)?;
    for owned in [false, true] {
        let mut stream: CuPtr = null_mut();
        check_eq!((cu.stream_create)(&mut stream, 1), 0);
        let properties = native_props!(ur_queue_native_properties_t, UR_STRUCTURE_TYPE_QUEUE_NATIVE_PROPERTIES, owned);
        let mut queue = null_mut();
        expect_success!(fx.api.urQueueCreateWithNativeHandle(
            stream as ur_native_handle_t,
            fx.context,
            null_mut(),
            &properties,
            &mut queue
        ));
        let queue = fx.own_queue(queue);
        check_eq!(fx.api.queue_info::<ur_device_handle_t>(queue.get(), UR_QUEUE_INFO_DEVICE)?, fx.device);
        let mut native = 0;
        expect_success!(fx.api.urQueueGetNativeHandle(queue.get(), null_mut(), &mut native));
        check_eq!(native, stream as ur_native_handle_t);
        fill_and_check(fx, queue.get(), fill.get(), 0x5757_0000 + owned as u32, "fill_u32 on a queue over a native stream")?;
        expect_success!(fx.api.urQueueFinish(queue.get()));
        expect_success!(queue.release());
        still_the_cases(owned, || (cu.stream_synchronize)(stream), || (cu.stream_destroy)(stream))?;
    }
    Ok(())
}

unsafe fn native_events(fx: &DeviceFx) -> CaseResult {
    let cu = cuda_driver(fx)?;
    let mut stream = 0;
    expect_success!(fx.api.urQueueGetNativeHandle(fx.queue, null_mut(), &mut stream));
    for owned in [false, true] {
        let mut event: CuPtr = null_mut();
        // CU_EVENT_DISABLE_TIMING
        check_eq!((cu.event_create)(&mut event, 2), 0);
        check_eq!((cu.event_record)(event, stream as CuPtr), 0);
        let properties = native_props!(ur_event_native_properties_t, UR_STRUCTURE_TYPE_EVENT_NATIVE_PROPERTIES, owned);
        let mut e = null_mut();
        expect_success!(fx.api.urEventCreateWithNativeHandle(event as ur_native_handle_t, fx.context, &properties, &mut e));
        let e = fx.own_event(e);
        native_handle!(fx.api, urEventGetNativeHandle).answers(e.get(), event as ur_native_handle_t)?;
        // In a wait list, then waited for.
        let mut after = null_mut();
        expect_success!(fx.api.urEnqueueEventsWait(fx.queue, 1, &e.get(), &mut after));
        let after = fx.own_event(after);
        fx.wait(e.get())?;
        check_eq!(fx.status(e.get())?, UR_EVENT_STATUS_COMPLETE);
        fx.wait(after.get())?;
        expect_success!(e.release());
        still_the_cases(owned, || (cu.event_query)(event), || (cu.event_destroy)(event))?;
    }
    Ok(())
}

unsafe fn native_owned_context(fx: &DeviceFx) -> CaseResult {
    let cu = cuda_driver(fx)?;
    let (_program, fill, _add) = kernels(fx)?;
    let mut device = 0;
    expect_success!(fx.api.urDeviceGetNativeHandle(fx.device, &mut device));
    // A reference of the primary context of the case's own, handed over.
    let mut primary: CuPtr = null_mut();
    check_eq!((cu.device_primary_ctx_retain)(&mut primary, device as i32), 0);
    let properties = native_props!(ur_context_native_properties_t, UR_STRUCTURE_TYPE_CONTEXT_NATIVE_PROPERTIES, true);
    let mut context = null_mut();
    expect_success!(fx.api.urContextCreateWithNativeHandle(
        primary as ur_native_handle_t,
        fx.adapter,
        1,
        &fx.device,
        &properties,
        &mut context
    ));
    let context = fx.own_context(context);
    native_handle!(fx.api, urContextGetNativeHandle).answers(context.get(), primary as ur_native_handle_t)?;
    expect_success!(context.release());
    // The adapter's own reference keeps the primary context alive.
    fill_and_check(fx, fx.queue, fill.get(), 0xC7C7_0001, "fill_u32 after an owned primary context went back")
}
