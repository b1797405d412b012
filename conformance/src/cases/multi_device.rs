//! Contexts of several devices: a pool per device, blocks freed on a queue
//! of another device going back to their own pool, blocks handed between
//! devices through events, one compile per target, kernels running on every
//! device, and the bad input that only a second device can express.
//!
//! Each case pairs the fixture's device with the next device of its
//! platform (so both orders run), and skips, naming why, where the platform
//! has one device. Two-device platforms: PoCL with
//! `POCL_DEVICES="pthread pthread"`, native CPU with
//! `UR_NATIVE_CPU_DEVICES=2` (scripts/test.sh runs both).

use super::kernel::{check_words, launch, pointer_arg, value_arg, words, N};
use super::program::{kernel_program, spir, spirv, KernelForm, KERNEL_PTX};
use super::usm::alloc_info;
use super::usm_exp::{alloc, all_are, finish, free, hand_over_rounds, require_async, require_pools, set_stat, stat, KEEP, KIB};
use crate::harness::*;
use crate::names::result_name;
use crate::ur::Api;
use crate::{check, check_eq, expect_result, expect_success, skip};
use std::ffi::{c_char, c_void, CStr};
use std::mem::ManuallyDrop;
use std::ptr::{null, null_mut};
use std::sync::Mutex;
use ur_core::abi::*;

pub const CASES: &[Case] = &[
    Case::device("urEnqueueUSMDeviceAllocExp.multi_device_pool_per_device", pool_per_device),
    Case::device("urEnqueueUSMFreeExp.multi_device_free_returns_to_the_owning_pool", free_on_other_device),
    Case::device("urEnqueueUSMFreeExp.multi_device_hand_over_through_events", hand_over),
    Case::device("urEnqueueUSMMemcpy.multi_device_copy_between_devices_ordered_by_events", copy_between_devices),
    Case::device("urEnqueueUSMDeviceAllocExp.multi_device_context_pool_keeps_devices_apart", context_pool_per_device),
    Case::device("urEnqueueUSMFreeExp.multi_device_foreign_context_block", free_foreign_context),
    Case::device("urQueueCreate.multi_device_invalid_device_outside_context", queue_outside_context),
    Case::device("urUSMHostAlloc.multi_device_limit_is_the_smallest_device", host_alloc_limit),
    Case::device("urProgramBuild.multi_device_one_compile_per_target", one_compile_per_target),
    Case::device("urProgramBuildExp.multi_device_invalid_device_outside_context", build_outside_context),
    Case::device("urUsmP2PPeerAccessGetInfoExp.self_is_peer", peer_self_info),
    Case::device("urUsmP2PPeerAccessGetInfoExp.multi_device_agrees_with_device_support", peer_pair_info),
    Case::device("urUsmP2PPeerAccessGetInfoExp.invalid_enumeration", peer_info_bad_enum),
    Case::device("urUsmP2PPeerAccessGetInfoExp.invalid_size", peer_info_bad_size),
    Case::device("urUsmP2PPeerAccessGetInfoExp.null_value_and_size", peer_info_null_out),
    Case::loader("urUsmP2PPeerAccessGetInfoExp.null_handle", peer_info_null_handle),
    Case::device("urUsmP2PEnablePeerAccessExp.self_changes_nothing", peer_self_enable),
    Case::device("urUsmP2PEnablePeerAccessExp.multi_device_kernel_writes_peer_memory", peer_kernel),
    Case::device("urUsmP2PEnablePeerAccessExp.multi_device_kernel_writes_peer_pooled_memory", peer_kernel_pooled),
    Case::device("urUsmP2PEnablePeerAccessExp.multi_device_invalid_second_enable", peer_twice),
    Case::loader("urUsmP2PEnablePeerAccessExp.null_handle", peer_enable_null_handle),
    Case::device("urUsmP2PDisablePeerAccessExp.self_changes_nothing", peer_self_disable),
    Case::device("urUsmP2PDisablePeerAccessExp.multi_device_invalid_without_enable", peer_disable_unlinked),
    Case::loader("urUsmP2PDisablePeerAccessExp.null_handle", peer_disable_null_handle),
];

/// The other device of a pair: the next device of the fixture's platform.
unsafe fn next_device(fx: &DeviceFx) -> Result<ur_device_handle_t, Outcome> {
    let mut count = 0u32;
    expect_success!(fx.api.urDeviceGet(fx.platform, UR_DEVICE_TYPE_ALL, 0, null_mut(), &mut count));
    if count < 2 {
        skip!(
            "the platform has {count} device: multi-device cases need two (POCL_DEVICES=\"pthread pthread\", \
             UR_NATIVE_CPU_DEVICES=2)"
        );
    }
    let mut devices = vec![null_mut(); count as usize];
    expect_success!(fx.api.urDeviceGet(fx.platform, UR_DEVICE_TYPE_ALL, count, devices.as_mut_ptr(), null_mut()));
    let me = devices.iter().position(|&d| d == fx.device).ok_or("urDeviceGet does not list the fixture's device")?;
    Ok(devices[(me + 1) % devices.len()])
}

/// A context of the fixture's device and the next one, as a fixture whose
/// queue is on the first, with a view whose queue is on the second.
pub struct Pair<'a> {
    pub first: DeviceFx<'a>,
    /// Borrows `first`'s context; its queue is its own.
    pub second: ManuallyDrop<DeviceFx<'a>>,
}

impl Drop for Pair<'_> {
    fn drop(&mut self) {
        // SAFETY: `second` owns one reference of its queue only.
        unsafe {
            let _ = self.first.api.urQueueFinish(self.second.queue);
            let _ = self.first.api.urQueueRelease(self.second.queue);
        }
    }
}

pub unsafe fn pair<'a>(fx: &DeviceFx<'a>) -> Result<Pair<'a>, Outcome> {
    let other = next_device(fx)?;
    let devices = [fx.device, other];
    let mut context = null_mut();
    expect_success!(fx.api.urContextCreate(2, devices.as_ptr(), null(), &mut context));
    let (mut q0, mut q1) = (null_mut(), null_mut());
    let c0 = fx.api.urQueueCreate(context, fx.device, null(), &mut q0)?;
    let c1 = fx.api.urQueueCreate(context, other, null(), &mut q1)?;
    let view = |device, queue| DeviceFx {
        api: fx.api,
        adapter: fx.adapter,
        platform: fx.platform,
        device,
        backend: fx.backend,
        context,
        queue,
    };
    let first = view(fx.device, q0);
    if c0 != UR_RESULT_SUCCESS || c1 != UR_RESULT_SUCCESS {
        if !q1.is_null() {
            let _ = fx.api.urQueueRelease(q1);
        }
        drop(first);
        return Err(format!("urQueueCreate on a two-device context: {}, {}", result_name(c0), result_name(c1)).into());
    }
    Ok(Pair { second: ManuallyDrop::new(view(other, q1)), first })
}

unsafe fn default_pool(fx: &DeviceFx) -> Result<ur_usm_pool_handle_t, Outcome> {
    let mut pool = null_mut();
    expect_success!(fx.api.urUSMPoolGetDefaultDevicePoolExp(fx.context, fx.device, &mut pool));
    Ok(pool)
}

unsafe fn used(fx: &DeviceFx, pool: ur_usm_pool_handle_t) -> Result<usize, Outcome> {
    stat(fx, pool, UR_USM_POOL_INFO_USED_CURRENT_EXP)
}

// ---------------------------------------------------------------------------
// Pools

/// Each device of the context has a default pool of its own; an async
/// allocation on a queue of a device comes from that device's pool, and the
/// statistics count it there only.
unsafe fn pool_per_device(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    let p = pair(fx)?;
    let (a, b) = (&p.first, &*p.second);
    let (pa, pb) = (default_pool(a)?, default_pool(b)?);
    check!(pa != pb, "both devices of the context have the same default pool");
    let (ua, ub) = (used(a, pa)?, used(b, pb)?);
    let (x, _) = alloc(a, a.queue, UsmKind::Device, null_mut(), 64 * KIB, &[], false)?;
    check!(used(a, pa)? >= ua + 64 * KIB, "an allocation on the first device's queue is not in its pool's USED");
    check_eq!(used(b, pb)?, ub);
    let (y, _) = alloc(b, b.queue, UsmKind::Device, null_mut(), 128 * KIB, &[], false)?;
    check!(used(b, pb)? >= ub + 128 * KIB, "an allocation on the second device's queue is not in its pool's USED");
    check!(used(a, pa)? < ua + 192 * KIB, "the second device's allocation counted in the first device's pool");
    let filled = b.fill(b.queue, y, &[0x3c], 128 * KIB, &[])?;
    all_are("the second device's block", &b.read_after(b.queue, y, 128 * KIB, &[filled.get()])?, 0x3c)?;
    free(a, a.queue, null_mut(), x, &[], false)?;
    free(b, b.queue, null_mut(), y, &[], false)?;
    finish(a, a.queue)?;
    finish(b, b.queue)?;
    check_eq!(used(a, pa)?, ua);
    check_eq!(used(b, pb)?, ub);
    Ok(())
}

/// A block of the first device's pool, freed on a queue of the second
/// device after that queue's use of it: it goes back to the first device's
/// pool, ordered by the free's event, and an allocation on the first device
/// that waits for that event takes it again.
unsafe fn free_on_other_device(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    let p = pair(fx)?;
    let (a, b) = (&p.first, &*p.second);
    let (pa, pb) = (default_pool(a)?, default_pool(b)?);
    set_stat(a, pa, UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP, KEEP)?;
    let ub = used(b, pb)?;
    let size = 256 * KIB;
    let (x, ready) = alloc(a, a.queue, UsmKind::Device, null_mut(), size, &[], true)?;
    let written = a.fill(a.queue, x, &[0x5a], size, &[ready.expect("asked for").get()])?;
    let got = b.read_after(b.queue, x, size, &[written.get()])?;
    all_are("written on the first device, read on the second", &got, 0x5a)?;
    let freed = free(b, b.queue, null_mut(), x, &[written.get()], true)?.expect("asked for");
    check_eq!(used(b, pb)?, ub);
    let (y, again) = alloc(a, a.queue, UsmKind::Device, null_mut(), size, &[freed.get()], true)?;
    check!(y == x, "an allocation ordered after the free on the other device did not take the freed block");
    let rewritten = a.fill(a.queue, y, &[0x11], size, &[again.expect("asked for").get()])?;
    all_are("the block taken again", &a.read_after(a.queue, y, size, &[rewritten.get()])?, 0x11)?;
    free(a, a.queue, null_mut(), y, &[], false)?;
    finish(a, a.queue)?;
    finish(b, b.queue)?;
    check_eq!(used(a, pa)?, 0usize);
    set_stat(a, pa, UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP, 0)?;
    Ok(())
}

/// A pool of every device of the fixture's context (`urUSMPoolCreate`)
/// that keeps what it reserves, so that reuse shows in addresses.
unsafe fn kept_context_pool(fx: &DeviceFx) -> Result<OwnedPool, Outcome> {
    let mut desc = ur_usm_pool_desc_t { stype: UR_STRUCTURE_TYPE_USM_POOL_DESC, pNext: null(), flags: 0 };
    let mut pool = null_mut();
    expect_success!(fx.api.urUSMPoolCreate(fx.context, &mut desc, &mut pool));
    let pool = fx.own_pool(pool);
    set_stat(fx, pool.get(), UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP, KEEP)?;
    Ok(pool)
}

/// A context-wide pool (`urUSMPoolCreate`) serves both devices with shared
/// memory: one block handed between them, each allocation waiting for the
/// other device's free, keeps one address and the data each device wrote.
unsafe fn hand_over(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    fx.require_kind(UsmKind::Shared)?;
    let p = pair(fx)?;
    let (a, b) = (&p.first, &*p.second);
    let pool = kept_context_pool(a)?;
    let label = |round| format!("round {round} on the second device");
    let addresses = hand_over_rounds([(a, a.queue), (b, b.queue)], UsmKind::Shared, pool.get(), 16, 4, &label)?;
    finish(a, a.queue)?;
    finish(b, b.queue)?;
    check_eq!(used(a, pool.get())?, 0usize);
    check!(addresses.len() == 1, "the block handed between devices lived at {} addresses", addresses.len());
    Ok(())
}

/// A copy from the first device's memory into the second's, on the second
/// device's queue, ordered by events on both sides: it waits for the fill
/// on the first device, and a refill of the source on the first device
/// waits for it. The destination holds the first fill, whole.
unsafe fn copy_between_devices(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    let p = pair(fx)?;
    let (a, b) = (&p.first, &*p.second);
    let size = 4096 * KIB;
    let (x, x_ready) = alloc(a, a.queue, UsmKind::Device, null_mut(), size, &[], true)?;
    let (y, y_ready) = alloc(b, b.queue, UsmKind::Device, null_mut(), size, &[], true)?;
    let written = a.fill(a.queue, x, &[0x6b], size, &[x_ready.expect("asked for").get()])?;
    let y_ready = y_ready.expect("asked for");
    let waits = [written.get(), y_ready.get()];
    let mut copied = null_mut();
    expect_success!(fx.api.urEnqueueUSMMemcpy(b.queue, false, y, x, size, 2, waits.as_ptr(), &mut copied));
    let copied = b.own_event(copied);
    let overwritten = a.fill(a.queue, x, &[0x00], size, &[copied.get()])?;
    all_are("copied from the first device into the second's memory", &b.read_after(b.queue, y, size, &[])?, 0x6b)?;
    all_are("the source refilled after the copy", &a.read_after(a.queue, x, size, &[overwritten.get()])?, 0x00)?;
    free(a, a.queue, null_mut(), x, &[], false)?;
    free(b, b.queue, null_mut(), y, &[], false)?;
    finish(a, a.queue)?;
    finish(b, b.queue)?;
    Ok(())
}

/// A pool of every device of the context (`urUSMPoolCreate`) keeps each
/// device's device memory apart: both devices allocate from it, each block
/// reports its own device, and a block freed on the other device's queue
/// goes back to its own device's memory. Ordered after that free, the other
/// device gets a block of its own and the block's device gets it back.
unsafe fn context_pool_per_device(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    let p = pair(fx)?;
    let (a, b) = (&p.first, &*p.second);
    let pool = kept_context_pool(a)?;
    let size = 64 * KIB;
    let (x, x_ready) = alloc(a, a.queue, UsmKind::Device, pool.get(), size, &[], true)?;
    let (y, y_ready) = alloc(b, b.queue, UsmKind::Device, pool.get(), size, &[], true)?;
    check!(x != y, "both devices were given one block");
    check_eq!(alloc_info::<ur_device_handle_t>(a, x, UR_USM_ALLOC_INFO_DEVICE)?, a.device);
    check_eq!(alloc_info::<ur_device_handle_t>(b, y, UR_USM_ALLOC_INFO_DEVICE)?, b.device);
    check!(used(a, pool.get())? >= 2 * size, "the pool's USED does not count both devices' blocks");
    let x_used = a.fill(a.queue, x, &[0x1a], size, &[x_ready.expect("asked for").get()])?;
    let y_used = b.fill(b.queue, y, &[0x2b], size, &[y_ready.expect("asked for").get()])?;
    all_are("the first device's block", &a.read_after(a.queue, x, size, &[x_used.get()])?, 0x1a)?;
    all_are("the second device's block", &b.read_after(b.queue, y, size, &[y_used.get()])?, 0x2b)?;
    let freed = free(b, b.queue, pool.get(), x, &[x_used.get()], true)?.expect("asked for");
    let (z, _) = alloc(b, b.queue, UsmKind::Device, pool.get(), size, &[freed.get()], true)?;
    check!(z != x, "the first device's memory was handed to the second device");
    check_eq!(alloc_info::<ur_device_handle_t>(b, z, UR_USM_ALLOC_INFO_DEVICE)?, b.device);
    let (w, _) = alloc(a, a.queue, UsmKind::Device, pool.get(), size, &[freed.get()], true)?;
    check!(w == x, "a block freed on the other device's queue did not go back to its own device's memory");
    for (fx, q, ptr) in [(b, b.queue, y), (b, b.queue, z), (a, a.queue, w)] {
        free(fx, q, pool.get(), ptr, &[], false)?;
    }
    finish(a, a.queue)?;
    finish(b, b.queue)?;
    check_eq!(used(a, pool.get())?, 0usize);
    Ok(())
}

/// An async free, on a queue of a two-device context, of a block another
/// context's pool gave out: INVALID_VALUE, and the block stays live and
/// counted where it was.
unsafe fn free_foreign_context(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    let p = pair(fx)?;
    let b = &*p.second;
    let mine = default_pool(fx)?;
    let before = used(fx, mine)?;
    let size = 64 * KIB;
    let (x, _) = alloc(fx, fx.queue, UsmKind::Device, null_mut(), size, &[], false)?;
    let after = used(fx, mine)?;
    expect_result!(UR_RESULT_ERROR_INVALID_VALUE, b.api.urEnqueueUSMFreeExp(b.queue, null_mut(), x, 0, null(), null_mut()));
    finish(b, b.queue)?;
    check_eq!(used(fx, mine)?, after);
    let filled = fx.fill(fx.queue, x, &[0x77], size, &[])?;
    all_are("the block after a refused foreign free", &fx.read_after(fx.queue, x, size, &[filled.get()])?, 0x77)?;
    free(fx, fx.queue, null_mut(), x, &[], false)?;
    finish(fx, fx.queue)?;
    check_eq!(used(fx, mine)?, before);
    Ok(())
}

/// A queue of a device the context does not hold: INVALID_DEVICE.
unsafe fn queue_outside_context(fx: &DeviceFx) -> CaseResult {
    let other = next_device(fx)?;
    let mut q = null_mut();
    expect_result!(UR_RESULT_ERROR_INVALID_DEVICE, fx.api.urQueueCreate(fx.context, other, null(), &mut q));
    check!(q.is_null(), "a refused urQueueCreate wrote a queue");
    Ok(())
}

/// Host memory must be reachable from every device of the context, so its
/// limit is the least `MAX_MEM_ALLOC_SIZE` among them (`spec/usm.md`): one
/// byte past it is `INVALID_USM_SIZE`, and nothing is written.
unsafe fn host_alloc_limit(fx: &DeviceFx) -> CaseResult {
    let p = pair(fx)?;
    let (a, b) = (&p.first, &*p.second);
    let limit_a = a.api.device_info::<u64>(a.device, UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE)?;
    let limit_b = b.api.device_info::<u64>(b.device, UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE)?;
    let Ok(past) = usize::try_from(limit_a.min(limit_b).saturating_add(1)) else {
        skip!("the smallest MAX_MEM_ALLOC_SIZE does not fit a size_t");
    };
    let mut ptr = null_mut();
    expect_result!(UR_RESULT_ERROR_INVALID_USM_SIZE, a.api.urUSMHostAlloc(a.context, null(), null_mut(), past, &mut ptr));
    check!(ptr.is_null(), "a refused urUSMHostAlloc wrote a pointer");
    Ok(())
}

// ---------------------------------------------------------------------------
// Programs

/// The adapter's build notes (`ur_core::log::build_note`), as its logger
/// callback delivers them.
static NOTES: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

unsafe extern "C" fn keep_note(_level: ur_logger_level_t, message: *const c_char, _user_data: *mut c_void) {
    if message.is_null() {
        return;
    }
    // SAFETY: the adapter passes a null-terminated message.
    if let Some(note) = ur_core::log::parse_build_note(&CStr::from_ptr(message).to_string_lossy()) {
        NOTES.lock().unwrap_or_else(|e| e.into_inner()).push(note);
    }
}

/// The suite's kernels as an unbuilt program of the pair's context, in the
/// form the fixture's device takes (for every device of the pair).
pub unsafe fn pair_program(fx: &DeviceFx, p: &Pair) -> Result<(OwnedProgram, KernelForm), Outcome> {
    let (_probe, form) = kernel_program(fx)?;
    let ctx = p.first.context;
    let mut program = null_mut();
    let code = match form {
        KernelForm::SpirV => {
            let il = spirv()?;
            fx.api.urProgramCreateWithIL(ctx, il.as_ptr().cast(), il.len(), null(), &mut program)?
        }
        KernelForm::Spir | KernelForm::Ptx => {
            let image = if form == KernelForm::Spir { spir()? } else { KERNEL_PTX.as_bytes() };
            let mut devices = [p.first.device, p.second.device];
            let mut lengths = [image.len(); 2];
            let mut images = [image.as_ptr(); 2];
            fx.api.urProgramCreateWithBinary(
                ctx,
                2,
                devices.as_mut_ptr(),
                lengths.as_mut_ptr(),
                images.as_mut_ptr(),
                null(),
                &mut program,
            )?
        }
    };
    expect_code(UR_RESULT_SUCCESS, code, &format!("creating a {form:?} program for two devices"))?;
    Ok((Owned::new(program, fx.api.fns.urProgramRelease), form))
}

unsafe fn program_devices(fx: &DeviceFx, program: ur_program_handle_t) -> Result<Vec<ur_device_handle_t>, Outcome> {
    let mut n = 0u32;
    expect_success!(fx.api.urProgramGetInfo(
        program,
        UR_PROGRAM_INFO_NUM_DEVICES,
        size_of::<u32>(),
        (&mut n as *mut u32).cast(),
        null_mut()
    ));
    let mut devices: Vec<ur_device_handle_t> = vec![null_mut(); n as usize];
    expect_success!(fx.api.urProgramGetInfo(
        program,
        UR_PROGRAM_INFO_DEVICES,
        devices.len() * size_of::<ur_device_handle_t>(),
        devices.as_mut_ptr().cast(),
        null_mut()
    ));
    Ok(devices)
}

/// `fill_index` of `program` run on the view's queue, into USM the view
/// allocates, read back.
unsafe fn fill_index_on(v: &DeviceFx, kernel: ur_kernel_handle_t, base: u32) -> CaseResult {
    let out = v.alloc(UsmKind::Shared, N * 4).or_else(|_| v.alloc(UsmKind::Device, N * 4))?;
    expect_success!(launch(v, v.queue, kernel, N, None, &[pointer_arg(0, out.ptr), value_arg(1, &base)], &[], null_mut()));
    let got = words(&v.read(v.queue, out.ptr, N * 4)?);
    check_words("fill_index on one device of a two-device program", &got, |i| base + i as u32)
}

/// A program built for both devices of a pair: the adapter's build note
/// says how many compiles it asked of the driver, one where the devices
/// have one target (same name, so same runtime and ISA) and two otherwise;
/// the program lists both devices and a binary for each; one kernel runs on
/// both.
unsafe fn one_compile_per_target(fx: &DeviceFx) -> CaseResult {
    let p = pair(fx)?;
    let (program, form) = pair_program(fx, &p)?;
    NOTES.lock().unwrap_or_else(|e| e.into_inner()).clear();
    expect_success!(fx.api.urAdapterSetLoggerCallback(fx.adapter, Some(keep_note), null_mut(), UR_LOGGER_LEVEL_INFO));
    let built = fx.api.urProgramBuild(p.first.context, program.get(), form.build_options().as_ptr());
    expect_success!(fx.api.urAdapterSetLoggerCallbackLevel(fx.adapter, UR_LOGGER_LEVEL_QUIET));
    expect_code(UR_RESULT_SUCCESS, built?, "urProgramBuild for two devices")?;
    let notes = std::mem::take(&mut *NOTES.lock().unwrap_or_else(|e| e.into_inner()));
    if notes.is_empty() {
        skip!("the adapter logs no build notes (ur_core::log::build_note), so its compiles cannot be counted");
    }
    let names = [
        fx.api.device_info_string(p.first.device, UR_DEVICE_INFO_NAME)?,
        fx.api.device_info_string(p.second.device, UR_DEVICE_INFO_NAME)?,
    ];
    let expected = if names[0] == names[1] { 1 } else { 2 };
    check_eq!(notes, vec![(expected, 2usize)]);
    let devices = program_devices(fx, program.get())?;
    check!(
        devices.len() == 2 && devices.contains(&p.first.device) && devices.contains(&p.second.device),
        "the program lists {} devices, not the pair",
        devices.len()
    );
    let mut sizes = [0usize; 2];
    expect_success!(fx.api.urProgramGetInfo(
        program.get(),
        UR_PROGRAM_INFO_BINARY_SIZES,
        size_of_val(&sizes),
        sizes.as_mut_ptr().cast(),
        null_mut()
    ));
    check!(sizes.iter().all(|&s| s > 0), "binary sizes {sizes:?}: a device of the build has no binary");
    let mut k = null_mut();
    expect_success!(fx.api.urKernelCreate(program.get(), c"fill_index".as_ptr(), &mut k));
    let k: OwnedKernel = Owned::new(k, fx.api.fns.urKernelRelease);
    fill_index_on(&p.first, k.get(), 7)?;
    fill_index_on(&p.second, k.get(), 1000)?;
    Ok(())
}

/// urProgramBuildExp for a device outside the program's context (the
/// fixture's context holds one device): INVALID_DEVICE, as for every call
/// that names a device its context lacks.
unsafe fn build_outside_context(fx: &DeviceFx) -> CaseResult {
    let other = next_device(fx)?;
    let (program, form) = kernel_program(fx)?;
    let mut devices = [other];
    expect_result!(
        UR_RESULT_ERROR_INVALID_DEVICE,
        fx.api.urProgramBuildExp(program.get(), 1, devices.as_mut_ptr(), 0, form.build_options().as_ptr())
    );
    Ok(())
}

// ---------------------------------------------------------------------------
// Peer access (urUsmP2P*Exp)

/// One peer query's answer, which must be an `int` of 0 or 1.
unsafe fn peer_info(fx: &DeviceFx, peer: ur_device_handle_t, prop: ur_exp_peer_info_t) -> Result<i32, Outcome> {
    let (mut value, mut size) = (-1i32, 0usize);
    expect_success!(fx.api.urUsmP2PPeerAccessGetInfoExp(
        fx.device,
        peer,
        prop,
        size_of::<i32>(),
        (&mut value as *mut i32).cast(),
        &mut size
    ));
    check_eq!(size, size_of::<i32>());
    check!(value == 0 || value == 1, "peer query {} answered {value}, not 0 or 1", prop.0);
    Ok(value)
}

/// A device reaches its own memory: both queries say 1 about itself.
unsafe fn peer_self_info(fx: &DeviceFx) -> CaseResult {
    check_eq!(peer_info(fx, fx.device, UR_EXP_PEER_INFO_UR_PEER_ACCESS_SUPPORT)?, 1);
    check_eq!(peer_info(fx, fx.device, UR_EXP_PEER_INFO_UR_PEER_ATOMICS_SUPPORT)?, 1);
    Ok(())
}

/// About another device the answer is 0 or 1, and 0 wherever the device
/// reports no P2P support at all; atomics need access.
unsafe fn peer_pair_info(fx: &DeviceFx) -> CaseResult {
    let other = next_device(fx)?;
    let support: ur_bool_t = fx.api.device_info(fx.device, UR_DEVICE_INFO_USM_P2P_SUPPORT_EXP)?;
    let access = peer_info(fx, other, UR_EXP_PEER_INFO_UR_PEER_ACCESS_SUPPORT)?;
    let atomics = peer_info(fx, other, UR_EXP_PEER_INFO_UR_PEER_ATOMICS_SUPPORT)?;
    check!(support != 0 || access == 0, "USM_P2P_SUPPORT_EXP is false but a peer query says access is supported");
    check!(access == 1 || atomics == 0, "atomics over a peer link that has no access");
    Ok(())
}

/// What a peer query of `prop` about `[device, peer]` (`devices`) into an `int`
/// answers (no size returned).
unsafe fn peer_query(api: &Api, devices: [ur_device_handle_t; 2], prop: ur_exp_peer_info_t) -> Result<ur_result_t, String> {
    let mut value = 0i32;
    let [device, peer] = devices;
    api.urUsmP2PPeerAccessGetInfoExp(device, peer, prop, size_of::<i32>(), (&mut value as *mut i32).cast(), null_mut())
}

unsafe fn peer_info_bad_enum(fx: &DeviceFx) -> CaseResult {
    let past_last = ur_exp_peer_info_t(UR_EXP_PEER_INFO_UR_PEER_ATOMICS_SUPPORT.0 + 1);
    expect_result!(UR_RESULT_ERROR_INVALID_ENUMERATION, peer_query(fx.api, [fx.device; 2], past_last));
    Ok(())
}

/// A value of fewer bytes than an `int`: INVALID_SIZE, nothing written.
unsafe fn peer_info_bad_size(fx: &DeviceFx) -> CaseResult {
    let mut value = [0x5au8; 4];
    expect_result!(
        UR_RESULT_ERROR_INVALID_SIZE,
        fx.api.urUsmP2PPeerAccessGetInfoExp(
            fx.device,
            fx.device,
            UR_EXP_PEER_INFO_UR_PEER_ACCESS_SUPPORT,
            1,
            value.as_mut_ptr().cast(),
            null_mut()
        )
    );
    check_eq!(value, [0x5au8; 4]);
    Ok(())
}

unsafe fn peer_info_null_out(fx: &DeviceFx) -> CaseResult {
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_POINTER,
        fx.api.urUsmP2PPeerAccessGetInfoExp(
            fx.device,
            fx.device,
            UR_EXP_PEER_INFO_UR_PEER_ACCESS_SUPPORT,
            0,
            null_mut(),
            null_mut()
        )
    );
    Ok(())
}

unsafe fn peer_info_null_handle(fx: &LoaderFx) -> CaseResult {
    let access = UR_EXP_PEER_INFO_UR_PEER_ACCESS_SUPPORT;
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_HANDLE, peer_query(fx.api, [null_mut(); 2], access));
    Ok(())
}

/// Enabling a device's access to itself succeeds any number of times: there
/// is no link to change.
unsafe fn peer_self_enable(fx: &DeviceFx) -> CaseResult {
    for _ in 0..2 {
        expect_success!(fx.api.urUsmP2PEnablePeerAccessExp(fx.device, fx.device));
    }
    Ok(())
}

/// Disabling it too, enabled or not.
unsafe fn peer_self_disable(fx: &DeviceFx) -> CaseResult {
    for _ in 0..2 {
        expect_success!(fx.api.urUsmP2PDisablePeerAccessExp(fx.device, fx.device));
    }
    Ok(())
}

/// The pair's devices with access from the first to the second enabled, or
/// a skip naming why there is none: where the query says no, enabling must
/// fail (UNSUPPORTED_FEATURE, or the driver's refusal).
unsafe fn linked_pair<'a>(fx: &DeviceFx<'a>) -> Result<Pair<'a>, Outcome> {
    let p = pair(fx)?;
    let (a, b) = (&p.first, &*p.second);
    if peer_info(a, b.device, UR_EXP_PEER_INFO_UR_PEER_ACCESS_SUPPORT)? == 0 {
        let code = a.api.urUsmP2PEnablePeerAccessExp(a.device, b.device)?;
        check!(code != UR_RESULT_SUCCESS, "enabling peer access succeeded where the query says it is not supported");
        skip!("the devices have no peer access (the query says 0; enabling answers {})", result_name(code));
    }
    expect_success!(a.api.urUsmP2PEnablePeerAccessExp(a.device, b.device));
    Ok(p)
}

/// With access enabled, a kernel on the first device writes device memory
/// of the second (from `urUSMDeviceAlloc`), which the second device reads
/// back; then access is disabled again.
unsafe fn peer_kernel(fx: &DeviceFx) -> CaseResult {
    peer_kernel_writes(fx, false)
}

/// As [`peer_kernel`], into a block of the second device's async pool.
unsafe fn peer_kernel_pooled(fx: &DeviceFx) -> CaseResult {
    require_async(fx)?;
    peer_kernel_writes(fx, true)
}

unsafe fn peer_kernel_writes(fx: &DeviceFx, pooled: bool) -> CaseResult {
    let p = linked_pair(fx)?;
    let (a, b) = (&p.first, &*p.second);
    let result = (|| -> CaseResult {
        let (program, form) = pair_program(fx, &p)?;
        expect_success!(fx.api.urProgramBuild(a.context, program.get(), form.build_options().as_ptr()));
        let mut k = null_mut();
        expect_success!(fx.api.urKernelCreate(program.get(), c"fill_index".as_ptr(), &mut k));
        let k: OwnedKernel = Owned::new(k, fx.api.fns.urKernelRelease);
        let base = 4242u32;
        let got = if pooled {
            let (theirs, ready) = alloc(b, b.queue, UsmKind::Device, null_mut(), N * 4, &[], true)?;
            let ready = ready.expect("asked for");
            let args = [pointer_arg(0, theirs), value_arg(1, &base)];
            expect_success!(launch(a, a.queue, k.get(), N, None, &args, &[ready.get()], null_mut()));
            finish(a, a.queue)?;
            let got = b.read_after(b.queue, theirs, N * 4, &[])?;
            free(b, b.queue, null_mut(), theirs, &[], false)?;
            finish(b, b.queue)?;
            got
        } else {
            let theirs = b.alloc(UsmKind::Device, N * 4)?;
            let args = [pointer_arg(0, theirs.ptr), value_arg(1, &base)];
            expect_success!(launch(a, a.queue, k.get(), N, None, &args, &[], null_mut()));
            finish(a, a.queue)?;
            b.read(b.queue, theirs.ptr, N * 4)?
        };
        check_words("written by the first device into the second's memory", &words(&got), |i| base + i as u32)
    })();
    expect_success!(a.api.urUsmP2PDisablePeerAccessExp(a.device, b.device));
    result
}

/// A second enable of one link is refused, as CUDA refuses it
/// (ADAPTER_SPECIFIC, the reason in urAdapterGetLastError); the link stays
/// and one disable removes it.
unsafe fn peer_twice(fx: &DeviceFx) -> CaseResult {
    let p = linked_pair(fx)?;
    let (a, b) = (&p.first, &*p.second);
    let again = a.api.urUsmP2PEnablePeerAccessExp(a.device, b.device)?;
    let disabled = a.api.urUsmP2PDisablePeerAccessExp(a.device, b.device)?;
    expect_code(UR_RESULT_ERROR_ADAPTER_SPECIFIC, again, "a second urUsmP2PEnablePeerAccessExp")?;
    expect_code(UR_RESULT_SUCCESS, disabled, "urUsmP2PDisablePeerAccessExp after a refused second enable")?;
    Ok(())
}

/// Disabling a link that was never enabled (or already disabled) is
/// refused with ADAPTER_SPECIFIC and a message for urAdapterGetLastError.
unsafe fn peer_disable_unlinked(fx: &DeviceFx) -> CaseResult {
    let p = linked_pair(fx)?;
    let (a, b) = (&p.first, &*p.second);
    expect_success!(a.api.urUsmP2PDisablePeerAccessExp(a.device, b.device));
    expect_result!(UR_RESULT_ERROR_ADAPTER_SPECIFIC, a.api.urUsmP2PDisablePeerAccessExp(a.device, b.device));
    let (mut message, mut error) = (null(), 0i32);
    expect_success!(a.api.urAdapterGetLastError(a.adapter, &mut message, &mut error));
    check!(!message.is_null() && !CStr::from_ptr(message).to_bytes().is_empty(), "no message for the refused disable");
    check!(error != 0, "no native error code for the refused disable");
    Ok(())
}

unsafe fn peer_enable_null_handle(fx: &LoaderFx) -> CaseResult {
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_HANDLE, fx.api.urUsmP2PEnablePeerAccessExp(null_mut(), null_mut()));
    Ok(())
}

unsafe fn peer_disable_null_handle(fx: &LoaderFx) -> CaseResult {
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_HANDLE, fx.api.urUsmP2PDisablePeerAccessExp(null_mut(), null_mut()));
    Ok(())
}

