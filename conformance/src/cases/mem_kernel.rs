//! Buffers as kernel arguments (`UR_EXP_KERNEL_ARG_TYPE_MEM_OBJ` of
//! urEnqueueKernelLaunchWithArgsExp, spec/memory_objects.md): the suite's
//! `fill_index` kernel writes through a buffer and through a sub-buffer,
//! and the data is read back with buffer commands. An adapter that builds
//! no programs, or serves no buffers, skips.

use super::kernel::{check_words, fill_index_kernel, launch, mem_arg, value_arg, words, N};
use super::mem::{base_align, buffer, read_all, sub_buffer};
use super::multi_device::{pair, pair_program};
use crate::harness::*;
use crate::{check, expect_result, expect_success};
use std::ptr::{null, null_mut};
use ur_core::abi::*;

pub const CASES: &[Case] = &[
    Case::device("urEnqueueKernelLaunchWithArgsExp.buffer_argument", buffer_argument),
    Case::device("urEnqueueKernelLaunchWithArgsExp.sub_buffer_argument", sub_buffer_argument),
    Case::device("urEnqueueKernelLaunchWithArgsExp.bad_buffer_argument", bad_buffer_argument),
    Case::device("urEnqueueKernelLaunchWithArgsExp.multi_device_buffer_written_on_the_other_device", buffer_on_two_devices),
];

/// `fill_index` into a buffer (plain, and in host memory with
/// `ALLOC_HOST_POINTER`), waited for through its event; then a blocking
/// read of the buffer after it.
unsafe fn buffer_argument(fx: &DeviceFx) -> CaseResult {
    let (_program, k) = fill_index_kernel(fx)?;
    for (flags, base) in [(UR_MEM_FLAG_READ_WRITE.0, 91u32), (UR_MEM_FLAG_ALLOC_HOST_POINTER.0, 17)] {
        let mem = buffer(fx, flags, N * 4, null_mut())?;
        let mut e = null_mut();
        let args = [mem_arg(0, mem, UR_MEM_FLAG_WRITE_ONLY.0), value_arg(1, &base)];
        expect_success!(launch(fx, fx.queue, k.get(), N, None, &args, &[], &mut e));
        let e = fx.own_event(e);
        fx.wait(e.get())?;
        let what = format!("a buffer (flags {flags:#x}) written by fill_index");
        check_words(&what, &words(&read_all(fx, mem, 0, N * 4)?), |i| base + i as u32)?;
        expect_success!(fx.api.urMemRelease(mem));
    }
    Ok(())
}

/// `fill_index` through a sub-buffer writes its region of the parent only.
unsafe fn sub_buffer_argument(fx: &DeviceFx) -> CaseResult {
    let (_program, k) = fill_index_kernel(fx)?;
    let origin = (N * 4).next_multiple_of(base_align(fx)?);
    let parent = buffer(fx, UR_MEM_FLAG_READ_WRITE.0, origin + N * 4, null_mut())?;
    let zero = 0u8;
    expect_success!(fx.api.urEnqueueMemBufferFill(fx.queue, parent, (&zero as *const u8).cast(), 1, 0, origin + N * 4, 0, null(), null_mut()));
    let (code, sub) = sub_buffer(fx, parent, origin, N * 4)?;
    expect_result!(UR_RESULT_SUCCESS, Ok::<_, Outcome>(code));
    let base = 5u32;
    let args = [mem_arg(0, sub, 0), value_arg(1, &base)];
    expect_success!(launch(fx, fx.queue, k.get(), N, None, &args, &[], null_mut()));
    let all = words(&read_all(fx, parent, 0, origin + N * 4)?);
    let (before, region) = all.split_at(origin / 4);
    check!(before.iter().all(|&w| w == 0), "fill_index through a sub-buffer wrote before its origin");
    check_words("a sub-buffer's region written by fill_index", region, |i| base + i as u32)?;
    expect_success!(fx.api.urMemRelease(sub));
    expect_success!(fx.api.urMemRelease(parent));
    Ok(())
}

/// Unknown access flags on a buffer argument; nothing runs.
unsafe fn bad_buffer_argument(fx: &DeviceFx) -> CaseResult {
    let (_program, k) = fill_index_kernel(fx)?;
    let mem = buffer(fx, UR_MEM_FLAG_READ_WRITE.0, N * 4, null_mut())?;
    let base = 1u32;
    let args = [mem_arg(0, mem, 1 << 6), value_arg(1, &base)];
    expect_result!(UR_RESULT_ERROR_INVALID_ENUMERATION, launch(fx, fx.queue, k.get(), N, None, &args, &[], null_mut()));
    expect_success!(fx.api.urMemRelease(mem));
    Ok(())
}

/// A buffer of a two-device context, written on the first device's queue,
/// then by `fill_index` on the second's, then read on the first's after
/// the kernel's event: the data follows the buffer across devices.
unsafe fn buffer_on_two_devices(fx: &DeviceFx) -> CaseResult {
    let p = pair(fx)?;
    let (a, b) = (&p.first, &*p.second);
    let (program, form) = pair_program(fx, &p)?;
    expect_success!(fx.api.urProgramBuild(a.context, program.get(), form.build_options().as_ptr()));
    let mut k = null_mut();
    expect_success!(fx.api.urKernelCreate(program.get(), c"fill_index".as_ptr(), &mut k));
    let k = Owned::new(k, fx.api.fns.urKernelRelease);
    let mem = buffer(a, UR_MEM_FLAG_READ_WRITE.0, N * 4, null_mut())?;
    let ones = vec![0xffu8; N * 4];
    expect_success!(fx.api.urEnqueueMemBufferWrite(a.queue, mem, true, 0, N * 4, ones.as_ptr().cast(), 0, null(), null_mut()));
    let base = 300u32;
    let mut e = null_mut();
    expect_success!(launch(b, b.queue, k.get(), N, None, &[mem_arg(0, mem, 0), value_arg(1, &base)], &[], &mut e));
    let e = b.own_event(e);
    let mut got = vec![0u8; N * 4];
    let waits = [e.get()];
    expect_success!(fx.api.urEnqueueMemBufferRead(a.queue, mem, true, 0, N * 4, got.as_mut_ptr().cast(), 1, waits.as_ptr(), null_mut()));
    check_words("a buffer read on one device after fill_index on the other", &words(&got), |i| base + i as u32)?;
    expect_success!(fx.api.urMemRelease(mem));
    Ok(())
}
