//! urKernel* and urEnqueueKernelLaunchWithArgsExp: kernels of
//! `conformance/kernels/` (built by `program.rs` in the form the device
//! takes) write and
//! read USM of every kind the device offers, and the results are checked
//! word by word. The last cases run those kernels on memory of
//! `urEnqueueUSM*AllocExp` while other blocks are freed and reused around
//! it, on devices that report async allocation support.

use super::program::built_program;
use super::usm_exp::{alloc, free};
use crate::harness::*;
use crate::ur::{info_string, info_value};
use crate::{check, check_eq, expect_result, expect_success};
use std::ffi::c_void;
use std::ptr::{null, null_mut};
use ur_core::abi::*;

pub const CASES: &[Case] = &[
    Case::device("urKernelCreate.and_query", create_and_query),
    Case::device("urKernelCreate.invalid_name", create_invalid_name),
    Case::device("urKernelCreate.null_pointers", create_null),
    Case::device("urKernelRetain.reference_count", retain_release),
    Case::device("urKernelGetGroupInfo.work_group_size", group_info),
    Case::device("urKernelGetGroupInfo.invalid_enumeration", group_info_bad_enum),
    Case::device("urKernelGetSubGroupInfo.max_sub_group_size", sub_group_info),
    Case::device("urEnqueueKernelLaunchWithArgsExp.writes_usm", launch_writes),
    Case::device("urEnqueueKernelLaunchWithArgsExp.local_memory_and_reads", launch_local),
    Case::device("urEnqueueKernelLaunchWithArgsExp.event_orders_kernels", launch_chain),
    Case::device("urEnqueueUSMFill.small_fill_after_a_kernel_lands_after_it", fill_after_kernel),
    Case::device("urEnqueueUSMFreeExp.block_reused_after_a_kernel_waits_for_it", reuse_after_kernel),
    Case::device("urEnqueueKernelLaunchWithArgsExp.invalid_work_dimension", launch_bad_dims),
    Case::device("urEnqueueKernelLaunchWithArgsExp.invalid_arguments", launch_bad_args),
    Case::device("urEnqueueKernelLaunchWithArgsExp.empty_range_runs_nothing", launch_empty_range),
    Case::device("urEnqueueKernelLaunchWithArgsExp.null_global_size", launch_null_global),
    Case::device("urEnqueueUSMDeviceAllocExp.kernel_data_intact_while_blocks_reused_around_it", async_reuse_around),
    Case::device("urEnqueueUSMFreeExp.kernel_hands_blocks_between_queues", async_handover),
];


unsafe fn kernel(fx: &DeviceFx, program: ur_program_handle_t, name: &std::ffi::CStr) -> Result<OwnedKernel, Outcome> {
    let mut k = null_mut();
    expect_success!(fx.api.urKernelCreate(program, name.as_ptr(), &mut k));
    Ok(Owned::new(k, fx.api.fns.urKernelRelease))
}

/// `fill_index` of the suite's built program, and the program.
pub unsafe fn fill_index_kernel(fx: &DeviceFx) -> Result<(OwnedProgram, OwnedKernel), Outcome> {
    let program = built_program(fx)?;
    let k = kernel(fx, program.get(), c"fill_index")?;
    Ok((program, k))
}

fn arg(
    kind: ur_exp_kernel_arg_type_t,
    index: u32,
    size: usize,
    value: ur_exp_kernel_arg_value_t,
) -> ur_exp_kernel_arg_properties_t {
    ur_exp_kernel_arg_properties_t {
        stype: UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES,
        pNext: null_mut(),
        r#type: kind,
        index,
        size,
        value,
    }
}

pub fn value_arg<T>(index: u32, v: &T) -> ur_exp_kernel_arg_properties_t {
    arg(
        UR_EXP_KERNEL_ARG_TYPE_VALUE,
        index,
        size_of::<T>(),
        ur_exp_kernel_arg_value_t { value: (v as *const T).cast() },
    )
}

pub fn pointer_arg(index: u32, p: *const c_void) -> ur_exp_kernel_arg_properties_t {
    arg(UR_EXP_KERNEL_ARG_TYPE_POINTER, index, size_of::<*const c_void>(), ur_exp_kernel_arg_value_t { pointer: p })
}

/// A buffer argument with access `flags`.
pub fn mem_arg(index: u32, mem: ur_mem_handle_t, flags: ur_mem_flags_t) -> ur_exp_kernel_arg_properties_t {
    let tuple = ur_exp_kernel_arg_mem_obj_tuple_t { hMem: mem, flags };
    arg(UR_EXP_KERNEL_ARG_TYPE_MEM_OBJ, index, size_of::<ur_mem_handle_t>(), ur_exp_kernel_arg_value_t { memObjTuple: tuple })
}

fn local_arg(index: u32, size: usize) -> ur_exp_kernel_arg_properties_t {
    arg(UR_EXP_KERNEL_ARG_TYPE_LOCAL, index, size, ur_exp_kernel_arg_value_t { value: null() })
}

/// A 1-D launch.
///
/// # Safety
/// The fixture, queue and kernel must be live, and the arguments must fit
/// the kernel.
#[allow(clippy::too_many_arguments)]
pub unsafe fn launch(
    fx: &DeviceFx,
    queue: ur_queue_handle_t,
    k: ur_kernel_handle_t,
    global: usize,
    local: Option<usize>,
    args: &[ur_exp_kernel_arg_properties_t],
    waits: &[ur_event_handle_t],
    event: *mut ur_event_handle_t,
) -> Result<ur_result_t, String> {
    let local = local.map(|l| [l]);
    let (n, waits) = wait_list(waits);
    fx.api.urEnqueueKernelLaunchWithArgsExp(
        queue,
        k,
        1,
        null(),
        [global].as_ptr(),
        local.as_ref().map_or(null(), |l| l.as_ptr()),
        args.len() as u32,
        if args.is_empty() { null() } else { args.as_ptr() },
        null(),
        n,
        waits,
        event,
    )
}

/// A launch on the fixture queue with `dims` dimensions of `global` and the
/// `(count, list)` arguments, no offset, local size, wait list or event: the
/// arguments the error cases make wrong, as they give them.
unsafe fn launch_raw(
    fx: &DeviceFx,
    k: ur_kernel_handle_t,
    dims: u32,
    global: *const usize,
    (n_args, args): (u32, *const ur_exp_kernel_arg_properties_t),
) -> Result<ur_result_t, String> {
    fx.api.urEnqueueKernelLaunchWithArgsExp(
        fx.queue,
        k,
        dims,
        null(),
        global,
        null(),
        n_args,
        args,
        null(),
        0,
        null(),
        null_mut(),
    )
}

pub fn words(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks_exact(4).map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn as_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_ne_bytes()).collect()
}

/// Checks `got[i] == expected(i)` for every word.
pub fn check_words(what: &str, got: &[u32], expected: impl Fn(usize) -> u32) -> CaseResult {
    if let Some(i) = (0..got.len()).find(|&i| got[i] != expected(i)) {
        return Err(format!("{what}: word {i} is {}, expected {} ({} words)", got[i], expected(i), got.len()).into());
    }
    Ok(())
}

pub const N: usize = 1024;

/// Runs `fill_index` of `program` into device (else shared, else host) USM
/// with base `base`, reads it back and checks every word. Shared with
/// `urProgramCreateWithBinary.from_own_binaries`.
pub unsafe fn run_fill_index(fx: &DeviceFx, program: ur_program_handle_t, base: u32) -> CaseResult {
    let k = kernel(fx, program, c"fill_index")?;
    let kind = [UsmKind::Device, UsmKind::Shared, UsmKind::Host]
        .into_iter()
        .find(|&kind| fx.supports(kind).unwrap_or(false))
        .ok_or("the device supports no USM")?;
    let out = fx.alloc(kind, N * 4)?;
    let args = [pointer_arg(0, out.ptr), value_arg(1, &base)];
    expect_success!(launch(fx, fx.queue, k.get(), N, None, &args, &[], null_mut()));
    let got = words(&fx.read(fx.queue, out.ptr, N * 4)?);
    check_words(&format!("fill_index into {kind:?} USM"), &got, |i| base + i as u32)
}

unsafe fn create_and_query(fx: &DeviceFx) -> CaseResult {
    let program = built_program(fx)?;
    let k = kernel(fx, program.get(), c"scale_add")?;
    let name = info_string(fx.api.fns.urKernelGetInfo, "urKernelGetInfo", k.get(), UR_KERNEL_INFO_FUNCTION_NAME)?;
    check_eq!(name.as_str(), "scale_add");
    let info = |prop| info_value::<u32, _, _>(fx.api.fns.urKernelGetInfo, "urKernelGetInfo", k.get(), prop);
    check_eq!(info(UR_KERNEL_INFO_NUM_ARGS)?, 4);
    check_eq!(info(UR_KERNEL_INFO_REFERENCE_COUNT)?, 1);
    let context: ur_context_handle_t =
        info_value(fx.api.fns.urKernelGetInfo, "urKernelGetInfo", k.get(), UR_KERNEL_INFO_CONTEXT)?;
    check_eq!(context, fx.context);
    let owner: ur_program_handle_t =
        info_value(fx.api.fns.urKernelGetInfo, "urKernelGetInfo", k.get(), UR_KERNEL_INFO_PROGRAM)?;
    check_eq!(owner, program.get());
    Ok(())
}

unsafe fn create_invalid_name(fx: &DeviceFx) -> CaseResult {
    let program = built_program(fx)?;
    let mut k = null_mut();
    expect_result!(
        UR_RESULT_ERROR_INVALID_KERNEL_NAME,
        fx.api.urKernelCreate(program.get(), c"no_such_kernel".as_ptr(), &mut k)
    );
    Ok(())
}

unsafe fn create_null(fx: &DeviceFx) -> CaseResult {
    let program = built_program(fx)?;
    let mut k = null_mut();
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_POINTER, fx.api.urKernelCreate(program.get(), null(), &mut k));
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_POINTER,
        fx.api.urKernelCreate(program.get(), c"fill_index".as_ptr(), null_mut())
    );
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_HANDLE,
        fx.api.urKernelCreate(null_mut(), c"fill_index".as_ptr(), &mut k)
    );
    Ok(())
}

unsafe fn retain_release(fx: &DeviceFx) -> CaseResult {
    let (_program, k) = fill_index_kernel(fx)?;
    let count = || {
        info_value::<u32, _, _>(fx.api.fns.urKernelGetInfo, "urKernelGetInfo", k.get(), UR_KERNEL_INFO_REFERENCE_COUNT)
    };
    expect_success!(fx.api.urKernelRetain(k.get()));
    check_eq!(count()?, 2);
    expect_success!(fx.api.urKernelRelease(k.get()));
    check_eq!(count()?, 1);
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_HANDLE, fx.api.urKernelRetain(null_mut()));
    Ok(())
}

/// What `urKernelGetGroupInfo` answers for `prop` of the fixture's device,
/// written into `value`.
unsafe fn group_info_into<T>(
    fx: &DeviceFx,
    k: ur_kernel_handle_t,
    prop: ur_kernel_group_info_t,
    value: &mut T,
) -> Result<ur_result_t, String> {
    fx.api.urKernelGetGroupInfo(k, fx.device, prop, size_of::<T>(), (value as *mut T).cast(), null_mut())
}

unsafe fn group_info(fx: &DeviceFx) -> CaseResult {
    let (_program, k) = fill_index_kernel(fx)?;
    let mut wg = 0usize;
    expect_success!(group_info_into(fx, k.get(), UR_KERNEL_GROUP_INFO_WORK_GROUP_SIZE, &mut wg));
    let max = fx.api.device_info::<usize>(fx.device, UR_DEVICE_INFO_MAX_WORK_GROUP_SIZE)?;
    check!(wg >= 1 && wg <= max, "kernel work-group size {wg} outside 1..={max}");
    // Not zeros, so that an answer that writes nothing shows.
    let mut compile = [7usize; 3];
    expect_success!(group_info_into(fx, k.get(), UR_KERNEL_GROUP_INFO_COMPILE_WORK_GROUP_SIZE, &mut compile));
    check_eq!(compile, [0usize; 3]);
    Ok(())
}

unsafe fn group_info_bad_enum(fx: &DeviceFx) -> CaseResult {
    let (_program, k) = fill_index_kernel(fx)?;
    let mut size = 0usize;
    let past_last = ur_kernel_group_info_t(UR_KERNEL_GROUP_INFO_COMPILE_MAX_LINEAR_WORK_GROUP_SIZE.0 + 1);
    expect_result!(
        UR_RESULT_ERROR_INVALID_ENUMERATION,
        fx.api.urKernelGetGroupInfo(k.get(), fx.device, past_last, 0, null_mut(), &mut size)
    );
    Ok(())
}

unsafe fn sub_group_info(fx: &DeviceFx) -> CaseResult {
    let (_program, k) = fill_index_kernel(fx)?;
    let mut value = 0u32;
    expect_success!(fx.api.urKernelGetSubGroupInfo(
        k.get(),
        fx.device,
        UR_KERNEL_SUB_GROUP_INFO_MAX_SUB_GROUP_SIZE,
        size_of::<u32>(),
        (&mut value as *mut u32).cast(),
        null_mut()
    ));
    check!(value >= 1, "max sub-group size is {value}");
    Ok(())
}

unsafe fn launch_writes(fx: &DeviceFx) -> CaseResult {
    let (_program, k) = fill_index_kernel(fx)?;
    let mut ran = 0;
    for kind in [UsmKind::Device, UsmKind::Shared, UsmKind::Host] {
        if !fx.supports(kind)? {
            continue;
        }
        ran += 1;
        let out = fx.alloc(kind, N * 4)?;
        let base = 40u32 + ran;
        let event = launch_event(fx, fx.queue, k.get(), None, &[pointer_arg(0, out.ptr), value_arg(1, &base)], &[])?;
        fx.wait(event.get())?;
        let got = if kind == UsmKind::Device {
            words(&fx.read(fx.queue, out.ptr, N * 4)?)
        } else {
            // Host and shared memory are read by the host directly.
            std::slice::from_raw_parts(out.ptr as *const u32, N).to_vec()
        };
        check_words(&format!("fill_index into {kind:?} USM"), &got, |i| base + i as u32)?;
    }
    check!(ran > 0, "the device supports no USM");
    Ok(())
}

unsafe fn launch_local(fx: &DeviceFx) -> CaseResult {
    let program = built_program(fx)?;
    let k = kernel(fx, program.get(), c"scale_add")?;
    let kind = if fx.supports(UsmKind::Device)? { UsmKind::Device } else { UsmKind::Shared };
    let input = fx.alloc(kind, N * 4)?;
    let output = fx.alloc(kind, N * 4)?;
    let data: Vec<u32> = (0..N as u32).map(|i| i * 7 + 3).collect();
    fx.write(fx.queue, input.ptr, &as_bytes(&data))?;
    const LOCAL: usize = 64;
    let factor = 3u32;
    let args = [pointer_arg(0, input.ptr), pointer_arg(1, output.ptr), value_arg(2, &factor), local_arg(3, LOCAL * 4)];
    expect_success!(launch(fx, fx.queue, k.get(), N, Some(LOCAL), &args, &[], null_mut()));
    let got = words(&fx.read(fx.queue, output.ptr, N * 4)?);
    // Each work-group reverses its slice through local memory.
    check_words("scale_add", &got, |i| {
        let mirrored = i - i % LOCAL + (LOCAL - 1 - i % LOCAL);
        data[mirrored] * factor + 1
    })
}

unsafe fn launch_chain(fx: &DeviceFx) -> CaseResult {
    let program = built_program(fx)?;
    let fill = kernel(fx, program.get(), c"fill_index")?;
    let scale = kernel(fx, program.get(), c"scale_add")?;
    let kind = if fx.supports(UsmKind::Device)? { UsmKind::Device } else { UsmKind::Shared };
    let a = fx.alloc(kind, N * 4)?;
    let b = fx.alloc(kind, N * 4)?;
    on_each_queue_kind(fx, |queue, label| {
        let base = 5u32;
        let first = launch_event(fx, queue, fill.get(), None, &[pointer_arg(0, a.ptr), value_arg(1, &base)], &[])?;
        let factor = 2u32;
        let args = [pointer_arg(0, a.ptr), pointer_arg(1, b.ptr), value_arg(2, &factor), local_arg(3, 4)];
        let second = launch_event(fx, queue, scale.get(), Some(1), &args, &[first.get()])?;
        let out = fx.read_after(queue, b.ptr, N * 4, &[second.get()])?;
        check_words(&format!("fill_index then scale_add on the {label}"), &words(&out), |i| {
            (base + i as u32) * factor + 1
        })
    })
}

/// A small fill or copy queued behind a long kernel that writes the same
/// memory must land after it: on the in-order queue by the queue's order
/// alone, on the out-of-order queue by its wait list. (An adapter that runs
/// small USM commands on the host, as ours does on CPU devices, must not
/// run them while the kernel is still going.)
unsafe fn fill_after_kernel(fx: &DeviceFx) -> CaseResult {
    let (_program, k) = fill_index_kernel(fx)?;
    let kind = if fx.supports(UsmKind::Device)? { UsmKind::Device } else { UsmKind::Shared };
    // Long enough that the kernel is still running when the fill comes.
    const WORDS: usize = 1 << 22;
    const SMALL: usize = 256;
    let out = fx.alloc(kind, WORDS * 4)?;
    let source = fx.alloc(kind, SMALL * 4)?;
    let sevens = 7u32.to_ne_bytes();
    expect_success!(fx.api.urEnqueueUSMFill(fx.queue, source.ptr, 4, sevens.as_ptr().cast(), SMALL * 4, 0, null(), null_mut()));
    expect_success!(fx.api.urQueueFinish(fx.queue));
    on_each_queue_kind(fx, |queue, label| {
        let base = 11u32;
        let mut ran = null_mut();
        expect_success!(launch(fx, queue, k.get(), WORDS, None, &[pointer_arg(0, out.ptr), value_arg(1, &base)], &[], &mut ran));
        let ran = fx.own_event(ran);
        // In order: no wait list, the queue orders it. Out of order: the kernel's event.
        let in_order = label.starts_with("in-order");
        let ran_list = [ran.get()];
        let waits: &[ur_event_handle_t] = if in_order { &[] } else { &ran_list };
        let filled = fx.fill(queue, out.ptr, &0u32.to_ne_bytes(), SMALL * 4, waits)?;
        let tail = (out.ptr as *mut u32).add(WORDS - SMALL) as *mut c_void;
        let filled_list = [filled.get()];
        let (n, copy_waits) = wait_list(if in_order { &[] } else { &filled_list });
        // No event: the queue's own finish below is what waits for it.
        let size = SMALL * 4;
        expect_success!(fx.api.urEnqueueUSMMemcpy(queue, false, tail, source.ptr, size, n, copy_waits, null_mut()));
        expect_success!(fx.api.urQueueFinish(queue));
        let head = words(&fx.read(queue, out.ptr, SMALL * 4)?);
        check_words(&format!("a fill behind fill_index on the {label}"), &head, |_| 0)?;
        let end = words(&fx.read(queue, tail, SMALL * 4)?);
        check_words(&format!("a copy behind fill_index on the {label}"), &end, |_| 7)?;
        let middle = words(&fx.read(queue, (out.ptr as *mut u32).add(SMALL) as *mut c_void, 4)?);
        check_words(&format!("fill_index past the fill on the {label}"), &middle, |_| base + SMALL as u32)
    })
}

/// An async block that a long kernel writes, freed after the kernel's
/// event and taken again by an allocation ordered after the free: a small
/// fill of the block taken again lands after the kernel, on both queue
/// kinds. (An adapter that completes the free or the allocation at once,
/// or runs the fill on the host, must see that the kernel still runs.)
unsafe fn reuse_after_kernel(fx: &DeviceFx) -> CaseResult {
    use super::usm_exp::require_async;
    require_async(fx)?;
    let (_program, k) = fill_index_kernel(fx)?;
    let kind = if fx.supports(UsmKind::Device)? { UsmKind::Device } else { UsmKind::Shared };
    // Long enough that the kernel is still running when the fill comes.
    const WORDS: usize = 1 << 22;
    const SMALL: usize = 256;
    on_each_queue_kind(fx, |queue, label| {
        let base = 11u32;
        let (x, x_ready) = alloc(fx, queue, kind, null_mut(), WORDS * 4, &[], true)?;
        let x_ready = x_ready.expect("asked for");
        let mut ran = null_mut();
        let args = [pointer_arg(0, x), value_arg(1, &base)];
        expect_success!(launch(fx, queue, k.get(), WORDS, None, &args, &[x_ready.get()], &mut ran));
        let ran = fx.own_event(ran);
        let freed = free(fx, queue, null_mut(), x, &[ran.get()], true)?.expect("asked for");
        let (y, y_ready) = alloc(fx, queue, kind, null_mut(), WORDS * 4, &[freed.get()], true)?;
        let y_ready = y_ready.expect("asked for");
        // Read later events first: a command reads as complete only once
        // the kernel it follows does.
        let done = |e: ur_event_handle_t| fx.status(e).map(|s| s == UR_EVENT_STATUS_COMPLETE);
        let (allocated_done, freed_done, ran_done) = (done(y_ready.get())?, done(freed.get())?, done(ran.get())?);
        let filled = fx.fill(queue, y, &[0], SMALL * 4, &[y_ready.get()])?;
        let head = words(&fx.read_after(queue, y, SMALL * 4, &[filled.get()])?);
        let result = (|| {
            check!(
                ran_done || !(allocated_done || freed_done),
                "on the {label}, the free (complete: {freed_done}) or the allocation after it (complete: \
                 {allocated_done}) read as complete while the kernel before them ran"
            );
            check_words(&format!("a fill of the block taken again behind fill_index on the {label}"), &head, |_| 0)?;
            if y != x {
                // Another block: nothing of the kernel's is in it to check.
                return Ok(());
            }
            let middle = words(&fx.read_after(queue, (y as *mut u32).add(SMALL) as *mut c_void, 4, &[])?);
            check_words(&format!("fill_index past the fill on the {label}"), &middle, |_| base + SMALL as u32)
        })();
        free(fx, queue, null_mut(), y, &[], false)?;
        expect_success!(fx.api.urQueueFinish(queue));
        result
    })
}

unsafe fn launch_bad_dims(fx: &DeviceFx) -> CaseResult {
    let (_program, k) = fill_index_kernel(fx)?;
    let out = fx.alloc(UsmKind::Device, N * 4).or_else(|_| fx.alloc(UsmKind::Shared, N * 4))?;
    let base = 1u32;
    let args = [pointer_arg(0, out.ptr), value_arg(1, &base)];
    let global = [N, 1, 1, 1];
    for dims in [0u32, 4] {
        expect_result!(
            UR_RESULT_ERROR_INVALID_WORK_DIMENSION,
            launch_raw(fx, k.get(), dims, global.as_ptr(), (2, args.as_ptr()))
        );
    }
    for global in [N, 0] {
        expect_result!(
            UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE,
            launch(fx, fx.queue, k.get(), global, Some(0), &args, &[], null_mut())
        );
    }
    Ok(())
}

/// A global size of 0 (libsycl's empty ranges) succeeds and runs nothing:
/// a marker in the kernel's place that waits for its list
/// (`spec/memory_objects.md`).
unsafe fn launch_empty_range(fx: &DeviceFx) -> CaseResult {
    let (_program, k) = fill_index_kernel(fx)?;
    let kind = if fx.supports(UsmKind::Device)? { UsmKind::Device } else { UsmKind::Shared };
    let out = fx.alloc(kind, N * 4)?;
    let filled = fx.fill(fx.queue, out.ptr, &[0xab], N * 4, &[])?;
    let base = 7u32;
    let mut e = null_mut();
    let args = [pointer_arg(0, out.ptr), value_arg(1, &base)];
    expect_success!(launch(fx, fx.queue, k.get(), 0, None, &args, &[filled.get()], &mut e));
    let e = fx.own_event(e);
    fx.wait(e.get())?;
    check!(fx.status(filled.get())? == UR_EVENT_STATUS_COMPLETE, "the empty launch completed before what it waits for");
    let command: ur_command_t = fx.api.event_info(e.get(), UR_EVENT_INFO_COMMAND_TYPE)?;
    check!(command == UR_COMMAND_KERNEL_LAUNCH, "the empty launch's event reports {command:?}");
    check_words("memory after an empty launch", &words(&fx.read(fx.queue, out.ptr, N * 4)?), |_| 0xabab_abab)
}

unsafe fn launch_bad_args(fx: &DeviceFx) -> CaseResult {
    let (_program, k) = fill_index_kernel(fx)?;
    let out = fx.alloc(UsmKind::Device, N * 4).or_else(|_| fx.alloc(UsmKind::Shared, N * 4))?;
    let base = 1u32;
    let mut bad_type = pointer_arg(0, out.ptr);
    bad_type.r#type = ur_exp_kernel_arg_type_t(UR_EXP_KERNEL_ARG_TYPE_SAMPLER.0 + 1);
    expect_result!(
        UR_RESULT_ERROR_INVALID_ENUMERATION,
        launch(fx, fx.queue, k.get(), N, None, &[bad_type, value_arg(1, &base)], &[], null_mut())
    );
    expect_result!(
        UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX,
        launch(fx, fx.queue, k.get(), N, None, &[pointer_arg(0, out.ptr), value_arg(7, &base)], &[], null_mut())
    );
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_POINTER, launch_raw(fx, k.get(), 1, [N].as_ptr(), (2, null())));
    Ok(())
}

unsafe fn launch_null_global(fx: &DeviceFx) -> CaseResult {
    let (_program, k) = fill_index_kernel(fx)?;
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_POINTER, launch_raw(fx, k.get(), 1, null(), (0, null())));
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_HANDLE, launch_raw(fx, null_mut(), 1, [N].as_ptr(), (0, null())));
    Ok(())
}

// ---------------------------------------------------------------------------
// Kernels on asynchronously allocated memory

/// Reuse rounds of the async cases.
const ROUNDS: usize = 8;

/// Skips a device that does not report async allocation support; the device
/// USM kind the cases use (device, else shared).
unsafe fn require_async(fx: &DeviceFx) -> Result<UsmKind, Outcome> {
    fx.require(UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP, "async USM allocation support")?;
    Ok(if fx.supports(UsmKind::Device)? { UsmKind::Device } else { UsmKind::Shared })
}

/// A pool of the case's own (`urUSMPoolCreateExp`), so that which block is
/// reused depends on this case's frees alone.
unsafe fn own_pool(fx: &DeviceFx) -> Result<OwnedPool, Outcome> {
    let mut desc = ur_usm_pool_desc_t { stype: UR_STRUCTURE_TYPE_USM_POOL_DESC, pNext: null(), flags: 0 };
    let mut pool = null_mut();
    expect_success!(fx.api.urUSMPoolCreateExp(fx.context, fx.device, &mut desc, &mut pool));
    Ok(fx.own_pool(pool))
}

/// Reads `N` words at `p` with a blocking copy after `waits`.
unsafe fn read_words(
    fx: &DeviceFx,
    queue: ur_queue_handle_t,
    p: *const c_void,
    waits: &[ur_event_handle_t],
) -> Result<Vec<u32>, Outcome> {
    Ok(words(&fx.read_after(queue, p, N * 4, waits)?))
}

/// A launch whose event is kept.
unsafe fn launch_event(
    fx: &DeviceFx,
    queue: ur_queue_handle_t,
    k: ur_kernel_handle_t,
    local: Option<usize>,
    args: &[ur_exp_kernel_arg_properties_t],
    waits: &[ur_event_handle_t],
) -> Result<OwnedEvent, Outcome> {
    let mut e = null_mut();
    expect_success!(launch(fx, queue, k, N, local, args, waits, &mut e));
    Ok(fx.own_event(e))
}

/// Whether `[a, a + len)` and `[b, b + len)` overlap.
fn overlaps(a: *const c_void, b: *const c_void, len: usize) -> bool {
    let (a, b) = (a as usize, b as usize);
    a < b + len && b < a + len
}

/// `scale_add(in, out, 3)` with work-groups of 64, as `launch_local` checks it.
fn scaled(input: impl Fn(usize) -> u32) -> impl Fn(usize) -> u32 {
    const LOCAL: usize = 64;
    move |i| input(i - i % LOCAL + (LOCAL - 1 - i % LOCAL)) * 3 + 1
}

/// A long-lived block A is written by one kernel and read by another at the
/// end, while round after round a scratch block is allocated, written by a
/// kernel and freed around it. Freed blocks are reused (an address comes
/// back; the pool's used high water stays at the three blocks live at once),
/// no scratch block overlaps A, and A's data, a scratch block's data and the
/// reader's result are intact. In-order: no events at all (allocations and
/// frees that need no command); out-of-order: every step ordered by events.
unsafe fn async_reuse_around(fx: &DeviceFx) -> CaseResult {
    let kind = require_async(fx)?;
    let program = built_program(fx)?;
    let fill = kernel(fx, program.get(), c"fill_index")?;
    let scale = kernel(fx, program.get(), c"scale_add")?;
    on_each_queue_kind(fx, |queue, label| {
        let in_order = queue == fx.queue;
        let use_events = !in_order;
        let pool = own_pool(fx)?;
        let base = 7u32;
        let (a, a_alloc) = alloc(fx, queue, kind, pool.get(), N * 4, &[], use_events)?;
        let a_waits: Vec<_> = a_alloc.iter().map(|e| e.get()).collect();
        let a_written = launch_event(fx, queue, fill.get(), None, &[pointer_arg(0, a), value_arg(1, &base)], &a_waits)?;
        let mut seen: Vec<usize> = Vec::new();
        let mut reused = 0;
        let mut last_free: Option<OwnedEvent> = None;
        for round in 0..ROUNDS {
            let waits: Vec<_> = last_free.iter().map(|e| e.get()).collect();
            let (s, s_alloc) = alloc(fx, queue, kind, pool.get(), N * 4, &waits, use_events)?;
            check!(!overlaps(s, a, N * 4), "{label}: round {round}: scratch block {s:?} overlaps the live block {a:?}");
            if seen.contains(&(s as usize)) {
                reused += 1;
            }
            seen.push(s as usize);
            let stamp = 1000 * (round as u32 + 1);
            let s_waits: Vec<_> = s_alloc.iter().map(|e| e.get()).collect();
            let s_written =
                launch_event(fx, queue, fill.get(), None, &[pointer_arg(0, s), value_arg(1, &stamp)], &s_waits)?;
            if round == ROUNDS / 2 {
                // A scratch block's own data, read while A is still live.
                let got = read_words(fx, queue, s, &[s_written.get()])?;
                check_words(&format!("{label}: scratch block of round {round}"), &got, |i| stamp + i as u32)?;
            }
            let free_waits = if use_events { vec![s_written.get()] } else { Vec::new() };
            last_free = free(fx, queue, pool.get(), s, &free_waits, use_events)?;
        }
        // Which free space the pool hands out is its choice; that freed
        // blocks come back is the point.
        check!(reused > 0, "{label}: no scratch allocation reused a block freed before it (addresses {seen:x?})");
        let waits: Vec<_> = last_free.iter().map(|e| e.get()).collect();
        let (out, out_alloc) = alloc(fx, queue, kind, pool.get(), N * 4, &waits, use_events)?;
        check!(!overlaps(out, a, N * 4), "{label}: the output block overlaps the live block");
        let mut read_waits = vec![a_written.get()];
        read_waits.extend(out_alloc.iter().map(|e| e.get()));
        let factor = 3u32;
        let args = [pointer_arg(0, a), pointer_arg(1, out), value_arg(2, &factor), local_arg(3, 64 * 4)];
        let done = launch_event(fx, queue, scale.get(), Some(64), &args, &read_waits)?;
        let got = read_words(fx, queue, out, &[done.get()])?;
        check_words(&format!("{label}: scale_add of the live block"), &got, scaled(|i| base + i as u32))?;
        let got = read_words(fx, queue, a, &[done.get()])?;
        check_words(&format!("{label}: the live block after {ROUNDS} reuse rounds around it"), &got, |i| {
            base + i as u32
        })?;
        let after_read = if use_events { vec![done.get()] } else { Vec::new() };
        free(fx, queue, pool.get(), out, &after_read, false)?;
        free(fx, queue, pool.get(), a, &after_read, false)?;
        expect_success!(fx.api.urQueueFinish(queue));
        let mut used_high = 0usize;
        expect_success!(fx.api.urUSMPoolGetInfoExp(
            pool.get(),
            UR_USM_POOL_INFO_USED_HIGH_EXP,
            (&mut used_high as *mut usize).cast(),
            null_mut()
        ));
        // A, one scratch block and the output were live at once at most
        // (a block may be rounded up by a few bytes).
        check!(
            (2 * N * 4..4 * N * 4).contains(&used_high),
            "{label}: the pool's used high water is {used_high} bytes for at most three live blocks of {}",
            N * 4
        );
        Ok(())
    })
}

/// Blocks handed between queues by events: queue 1 allocates a block (after
/// the previous round's free) and a kernel writes it; a kernel on queue 2
/// reads it into a result buffer and queue 2 frees it. Every allocation
/// after the first reuses the block, the events carry their command types,
/// and every round's result is right.
unsafe fn async_handover(fx: &DeviceFx) -> CaseResult {
    let kind = require_async(fx)?;
    let program = built_program(fx)?;
    let fill = kernel(fx, program.get(), c"fill_index")?;
    let scale = kernel(fx, program.get(), c"scale_add")?;
    let other = fx.create_queue(0)?;
    let pool = own_pool(fx)?;
    let results = (0..ROUNDS).map(|_| fx.alloc(kind, N * 4)).collect::<Result<Vec<_>, _>>()?;
    let mut addresses = Vec::new();
    let mut last_free: Option<OwnedEvent> = None;
    let mut reads = Vec::new();
    for (round, result) in results.iter().enumerate() {
        let waits: Vec<_> = last_free.iter().map(|e| e.get()).collect();
        let (block, allocated) = alloc(fx, fx.queue, kind, pool.get(), N * 4, &waits, true)?;
        let allocated = allocated.expect("asked for");
        let command = fx.api.event_info::<ur_command_t>(allocated.get(), UR_EVENT_INFO_COMMAND_TYPE)?;
        let expected = if kind == UsmKind::Device {
            UR_COMMAND_ENQUEUE_USM_DEVICE_ALLOC_EXP
        } else {
            UR_COMMAND_ENQUEUE_USM_SHARED_ALLOC_EXP
        };
        check_eq!(command, expected);
        addresses.push(block as usize);
        let base = 100 * round as u32;
        let written = launch_event(
            fx,
            fx.queue,
            fill.get(),
            None,
            &[pointer_arg(0, block), value_arg(1, &base)],
            &[allocated.get()],
        )?;
        let factor = 3u32;
        let args = [pointer_arg(0, block), pointer_arg(1, result.ptr), value_arg(2, &factor), local_arg(3, 64 * 4)];
        let read = launch_event(fx, other.get(), scale.get(), Some(64), &args, &[written.get()])?;
        let freed = free(fx, other.get(), pool.get(), block, &[read.get()], true)?.expect("asked for");
        let command = fx.api.event_info::<ur_command_t>(freed.get(), UR_EVENT_INFO_COMMAND_TYPE)?;
        check_eq!(command, UR_COMMAND_ENQUEUE_USM_FREE_EXP);
        reads.push(read);
        last_free = Some(freed);
    }
    let last = last_free.expect("ROUNDS > 0");
    fx.wait(last.get())?;
    for (round, result) in results.iter().enumerate() {
        let got = read_words(fx, fx.queue, result.ptr, &[reads[round].get()])?;
        let base = 100 * round as u32;
        check_words(
            &format!("round {round}: queue 2's kernel read of queue 1's block"),
            &got,
            scaled(|i| base + i as u32),
        )?;
    }
    check!(
        addresses.iter().all(|&a| a == addresses[0]),
        "each allocation waiting on the previous free's event should reuse its block: {addresses:x?}"
    );
    expect_success!(fx.api.urQueueFinish(other.get()));
    Ok(())
}
