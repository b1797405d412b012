//! urKernel* and urEnqueueKernelLaunchWithArgsExp: kernels of
//! `conformance/kernels/usm_kernels.cl` (built by `program.rs`) write and
//! read USM of every kind the device offers, and the results are checked
//! word by word.

use super::program::{built_program, require_programs, OwnedProgram};
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
    Case::device("urEnqueueKernelLaunchWithArgsExp.invalid_work_dimension", launch_bad_dims),
    Case::device("urEnqueueKernelLaunchWithArgsExp.invalid_arguments", launch_bad_args),
    Case::device("urEnqueueKernelLaunchWithArgsExp.null_global_size", launch_null_global),
];

type OwnedKernel = Owned<ur_kernel_handle_t_>;

unsafe fn kernel(fx: &DeviceFx, program: &OwnedProgram, name: &std::ffi::CStr) -> Result<OwnedKernel, Outcome> {
    let mut k = null_mut();
    expect_success!(fx.api.urKernelCreate(program.get(), name.as_ptr(), &mut k));
    Ok(Owned::new(k, fx.api.fns.urKernelRelease))
}

fn arg(kind: ur_exp_kernel_arg_type_t, index: u32, size: usize, value: ur_exp_kernel_arg_value_t) -> ur_exp_kernel_arg_properties_t {
    ur_exp_kernel_arg_properties_t {
        stype: UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES,
        pNext: null_mut(),
        r#type: kind,
        index,
        size,
        value,
    }
}

fn value_arg<T>(index: u32, v: &T) -> ur_exp_kernel_arg_properties_t {
    arg(UR_EXP_KERNEL_ARG_TYPE_VALUE, index, size_of::<T>(), ur_exp_kernel_arg_value_t { value: (v as *const T).cast() })
}

fn pointer_arg(index: u32, p: *const c_void) -> ur_exp_kernel_arg_properties_t {
    arg(UR_EXP_KERNEL_ARG_TYPE_POINTER, index, size_of::<*const c_void>(), ur_exp_kernel_arg_value_t { pointer: p })
}

fn local_arg(index: u32, size: usize) -> ur_exp_kernel_arg_properties_t {
    arg(UR_EXP_KERNEL_ARG_TYPE_LOCAL, index, size, ur_exp_kernel_arg_value_t { value: null() })
}

/// A 1-D launch.
#[allow(clippy::too_many_arguments)]
unsafe fn launch(
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
        waits.len() as u32,
        if waits.is_empty() { null() } else { waits.as_ptr() },
        event,
    )
}

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks_exact(4).map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn as_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_ne_bytes()).collect()
}

/// Checks `got[i] == expected(i)` for every word.
fn check_words(what: &str, got: &[u32], expected: impl Fn(usize) -> u32) -> CaseResult {
    if let Some(i) = (0..got.len()).find(|&i| got[i] != expected(i)) {
        return Err(format!("{what}: word {i} is {}, expected {} ({} words)", got[i], expected(i), got.len()).into());
    }
    Ok(())
}

const N: usize = 1024;

/// Runs `fill_index` of `program` into device (else shared, else host) USM
/// with base `base`, reads it back and checks every word. Shared with
/// `urProgramCreateWithBinary.from_own_binaries`.
pub unsafe fn run_fill_index(fx: &DeviceFx, program: ur_program_handle_t, base: u32) -> CaseResult {
    let mut k = null_mut();
    expect_success!(fx.api.urKernelCreate(program, c"fill_index".as_ptr(), &mut k));
    let k: OwnedKernel = Owned::new(k, fx.api.fns.urKernelRelease);
    let kind = [UsmKind::Device, UsmKind::Shared, UsmKind::Host]
        .into_iter()
        .find(|&kind| fx.supports(kind).unwrap_or(false))
        .ok_or("the device supports no USM")?;
    let out = fx.alloc(kind, N * 4)?;
    expect_success!(launch(fx, fx.queue, k.get(), N, None, &[pointer_arg(0, out.ptr), value_arg(1, &base)], &[], null_mut()));
    let got = words(&fx.read(fx.queue, out.ptr, N * 4)?);
    check_words(&format!("fill_index into {kind:?} USM"), &got, |i| base + i as u32)
}

unsafe fn create_and_query(fx: &DeviceFx) -> CaseResult {
    let program = built_program(fx)?;
    let k = kernel(fx, &program, c"scale_add")?;
    let name = info_string(fx.api.fns.urKernelGetInfo, "urKernelGetInfo", k.get(), UR_KERNEL_INFO_FUNCTION_NAME)?;
    check_eq!(name.as_str(), "scale_add");
    let info = |prop| info_value::<u32, _, _>(fx.api.fns.urKernelGetInfo, "urKernelGetInfo", k.get(), prop);
    check_eq!(info(UR_KERNEL_INFO_NUM_ARGS)?, 4);
    check_eq!(info(UR_KERNEL_INFO_REFERENCE_COUNT)?, 1);
    let context: ur_context_handle_t = info_value(fx.api.fns.urKernelGetInfo, "urKernelGetInfo", k.get(), UR_KERNEL_INFO_CONTEXT)?;
    check_eq!(context, fx.context);
    let owner: ur_program_handle_t = info_value(fx.api.fns.urKernelGetInfo, "urKernelGetInfo", k.get(), UR_KERNEL_INFO_PROGRAM)?;
    check_eq!(owner, program.get());
    Ok(())
}

unsafe fn create_invalid_name(fx: &DeviceFx) -> CaseResult {
    let program = built_program(fx)?;
    let mut k = null_mut();
    expect_result!(UR_RESULT_ERROR_INVALID_KERNEL_NAME, fx.api.urKernelCreate(program.get(), c"no_such_kernel".as_ptr(), &mut k));
    Ok(())
}

unsafe fn create_null(fx: &DeviceFx) -> CaseResult {
    let program = built_program(fx)?;
    let mut k = null_mut();
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_POINTER, fx.api.urKernelCreate(program.get(), null(), &mut k));
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_POINTER, fx.api.urKernelCreate(program.get(), c"fill_index".as_ptr(), null_mut()));
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_HANDLE, fx.api.urKernelCreate(null_mut(), c"fill_index".as_ptr(), &mut k));
    Ok(())
}

unsafe fn retain_release(fx: &DeviceFx) -> CaseResult {
    let program = built_program(fx)?;
    let k = kernel(fx, &program, c"fill_index")?;
    let count = || info_value::<u32, _, _>(fx.api.fns.urKernelGetInfo, "urKernelGetInfo", k.get(), UR_KERNEL_INFO_REFERENCE_COUNT);
    expect_success!(fx.api.urKernelRetain(k.get()));
    check_eq!(count()?, 2);
    expect_success!(fx.api.urKernelRelease(k.get()));
    check_eq!(count()?, 1);
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_HANDLE, fx.api.urKernelRetain(null_mut()));
    Ok(())
}

unsafe fn group_info(fx: &DeviceFx) -> CaseResult {
    let program = built_program(fx)?;
    let k = kernel(fx, &program, c"fill_index")?;
    let mut wg = 0usize;
    expect_success!(fx.api.urKernelGetGroupInfo(
        k.get(),
        fx.device,
        UR_KERNEL_GROUP_INFO_WORK_GROUP_SIZE,
        size_of::<usize>(),
        (&mut wg as *mut usize).cast(),
        null_mut()
    ));
    let max = fx.api.device_info::<usize>(fx.device, UR_DEVICE_INFO_MAX_WORK_GROUP_SIZE)?;
    check!(wg >= 1 && wg <= max, "kernel work-group size {wg} outside 1..={max}");
    let mut compile = [7usize; 3];
    expect_success!(fx.api.urKernelGetGroupInfo(
        k.get(),
        fx.device,
        UR_KERNEL_GROUP_INFO_COMPILE_WORK_GROUP_SIZE,
        size_of_val(&compile),
        compile.as_mut_ptr().cast(),
        null_mut()
    ));
    check_eq!(compile, [0usize; 3]);
    Ok(())
}

unsafe fn group_info_bad_enum(fx: &DeviceFx) -> CaseResult {
    let program = built_program(fx)?;
    let k = kernel(fx, &program, c"fill_index")?;
    let mut size = 0usize;
    expect_result!(
        UR_RESULT_ERROR_INVALID_ENUMERATION,
        fx.api.urKernelGetGroupInfo(
            k.get(),
            fx.device,
            ur_kernel_group_info_t(UR_KERNEL_GROUP_INFO_COMPILE_MAX_LINEAR_WORK_GROUP_SIZE.0 + 1),
            0,
            null_mut(),
            &mut size
        )
    );
    Ok(())
}

unsafe fn sub_group_info(fx: &DeviceFx) -> CaseResult {
    let program = built_program(fx)?;
    let k = kernel(fx, &program, c"fill_index")?;
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
    let program = built_program(fx)?;
    let k = kernel(fx, &program, c"fill_index")?;
    let mut ran = 0;
    for kind in [UsmKind::Device, UsmKind::Shared, UsmKind::Host] {
        if !fx.supports(kind)? {
            continue;
        }
        ran += 1;
        let out = fx.alloc(kind, N * 4)?;
        let base = 40u32 + ran;
        let mut event = null_mut();
        expect_success!(launch(fx, fx.queue, k.get(), N, None, &[pointer_arg(0, out.ptr), value_arg(1, &base)], &[], &mut event));
        let event = fx.own_event(event);
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
    let k = kernel(fx, &program, c"scale_add")?;
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
    let fill = kernel(fx, &program, c"fill_index")?;
    let scale = kernel(fx, &program, c"scale_add")?;
    let kind = if fx.supports(UsmKind::Device)? { UsmKind::Device } else { UsmKind::Shared };
    let a = fx.alloc(kind, N * 4)?;
    let b = fx.alloc(kind, N * 4)?;
    on_each_queue_kind(fx, |queue, label| {
        let base = 5u32;
        let mut first = null_mut();
        expect_success!(launch(fx, queue, fill.get(), N, None, &[pointer_arg(0, a.ptr), value_arg(1, &base)], &[], &mut first));
        let first = fx.own_event(first);
        let factor = 2u32;
        let args = [pointer_arg(0, a.ptr), pointer_arg(1, b.ptr), value_arg(2, &factor), local_arg(3, 4)];
        let mut second = null_mut();
        expect_success!(launch(fx, queue, scale.get(), N, Some(1), &args, &[first.get()], &mut second));
        let second = fx.own_event(second);
        let mut out = vec![0u8; N * 4];
        let waits = [second.get()];
        expect_success!(fx.api.urEnqueueUSMMemcpy(queue, true, out.as_mut_ptr().cast(), b.ptr, N * 4, 1, waits.as_ptr(), null_mut()));
        check_words(&format!("fill_index then scale_add on the {label}"), &words(&out), |i| (base + i as u32) * factor + 1)
    })
}

unsafe fn launch_bad_dims(fx: &DeviceFx) -> CaseResult {
    let program = built_program(fx)?;
    let k = kernel(fx, &program, c"fill_index")?;
    let out = fx.alloc(UsmKind::Device, N * 4).or_else(|_| fx.alloc(UsmKind::Shared, N * 4))?;
    let base = 1u32;
    let args = [pointer_arg(0, out.ptr), value_arg(1, &base)];
    let global = [N, 1, 1, 1];
    for dims in [0u32, 4] {
        expect_result!(
            UR_RESULT_ERROR_INVALID_WORK_DIMENSION,
            fx.api.urEnqueueKernelLaunchWithArgsExp(fx.queue, k.get(), dims, null(), global.as_ptr(), null(), 2, args.as_ptr(), null(), 0, null(), null_mut())
        );
    }
    expect_result!(UR_RESULT_ERROR_INVALID_WORK_DIMENSION, launch(fx, fx.queue, k.get(), 0, None, &args, &[], null_mut()));
    expect_result!(UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE, launch(fx, fx.queue, k.get(), N, Some(0), &args, &[], null_mut()));
    Ok(())
}

unsafe fn launch_bad_args(fx: &DeviceFx) -> CaseResult {
    let program = built_program(fx)?;
    let k = kernel(fx, &program, c"fill_index")?;
    let out = fx.alloc(UsmKind::Device, N * 4).or_else(|_| fx.alloc(UsmKind::Shared, N * 4))?;
    let base = 1u32;
    let mut bad_type = pointer_arg(0, out.ptr);
    bad_type.r#type = ur_exp_kernel_arg_type_t(UR_EXP_KERNEL_ARG_TYPE_SAMPLER.0 + 1);
    expect_result!(UR_RESULT_ERROR_INVALID_ENUMERATION, launch(fx, fx.queue, k.get(), N, None, &[bad_type, value_arg(1, &base)], &[], null_mut()));
    expect_result!(
        UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX,
        launch(fx, fx.queue, k.get(), N, None, &[pointer_arg(0, out.ptr), value_arg(7, &base)], &[], null_mut())
    );
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_POINTER,
        fx.api.urEnqueueKernelLaunchWithArgsExp(fx.queue, k.get(), 1, null(), [N].as_ptr(), null(), 2, null(), null(), 0, null(), null_mut())
    );
    Ok(())
}

unsafe fn launch_null_global(fx: &DeviceFx) -> CaseResult {
    require_programs(fx)?;
    let program = built_program(fx)?;
    let k = kernel(fx, &program, c"fill_index")?;
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_POINTER,
        fx.api.urEnqueueKernelLaunchWithArgsExp(fx.queue, k.get(), 1, null(), null(), null(), 0, null(), null(), 0, null(), null_mut())
    );
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_HANDLE,
        fx.api.urEnqueueKernelLaunchWithArgsExp(fx.queue, null_mut(), 1, null(), [N].as_ptr(), null(), 0, null(), null(), 0, null(), null_mut())
    );
    Ok(())
}
