//! The async-alloc extension (`urEnqueueUSM{Device,Shared,Host}AllocExp`,
//! `urEnqueueUSMFreeExp`, `urUSMPool*Exp`) as `spec/usm_async.md` describes
//! it, on every device that reports
//! `UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP`: data written through
//! fills and copies into async memory and read back, reuse on one queue and
//! between queues ordered by events, no reuse of a block whose free is
//! pending without waiting for it, checked frees, pool statistics, limits,
//! threshold, trimming, the default and current pools, exhaustion, zero
//! initialisation and the command types of the events.

use crate::harness::*;
use crate::ur::Api;
use crate::{cases_calling, check, check_eq, expect_result, expect_success};
use core::ffi::c_void;
use std::collections::BTreeSet;
use std::ptr::{null, null_mut};
use ur_core::abi::*;

pub const CASES: &[Case] = &[
    Case::device("urEnqueueUSMDeviceAllocExp.fill_copy_read_back", device_round_trip),
    Case::device("urEnqueueUSMDeviceAllocExp.reuse_on_an_in_order_queue", in_order_reuse),
    Case::device("urEnqueueUSMDeviceAllocExp.pending_block_needs_its_free", pending_block_waits),
    Case::device("urEnqueueUSMDeviceAllocExp.out_of_memory_past_maximum_size", device_out_of_memory),
    Case::device("urEnqueueUSMDeviceAllocExp.null_output", device_null_output),
    Case::device("urEnqueueUSMDeviceAllocExp.zero_size", device_zero_size),
    Case::device("urEnqueueUSMDeviceAllocExp.invalid_properties", device_bad_properties),
    Case::device("urEnqueueUSMDeviceAllocExp.invalid_wait_list", device_bad_wait_list),
    Case::device("urEnqueueUSMDeviceAllocExp.invalid_pool_of_another_context", device_foreign_pool),
    Case::device("urEnqueueUSMSharedAllocExp.fill_copy_read_back", shared_round_trip),
    Case::device("urEnqueueUSMSharedAllocExp.null_output", shared_null_output),
    Case::device("urEnqueueUSMHostAllocExp.fill_copy_read_back", host_round_trip),
    Case::device("urEnqueueUSMHostAllocExp.out_of_host_memory_past_maximum_size", host_out_of_memory),
    Case::device("urEnqueueUSMHostAllocExp.zero_size", host_zero_size),
    Case::device("urEnqueueUSMFreeExp.events_follow_earlier_commands_in_order", events_follow_earlier_commands),
    Case::device("urEnqueueUSMFreeExp.cross_queue_reuse_through_events", cross_queue_reuse),
    Case::device("urEnqueueUSMDeviceAllocExp.free_ordered_by_the_wait_list_before_fresh_space", ordered_free_before_fresh_space),
    Case::device("urEnqueueUSMFreeExp.hand_over_between_queues_keeps_one_address", hand_over_one_address),
    Case::device("urEnqueueUSMFreeExp.command_types_and_order", free_command_types),
    Case::device("urEnqueueUSMFreeExp.interior_pointer", free_interior),
    Case::device("urEnqueueUSMFreeExp.foreign_pointer", free_foreign),
    Case::device("urEnqueueUSMFreeExp.double_free", free_double),
    Case::device("urEnqueueUSMFreeExp.null_pointer", free_null_pointer),
    Case::device("urEnqueueUSMFreeExp.invalid_wait_list", free_bad_wait_list),
    Case::device("urUSMFree.async_block_after_pending_uses", blocking_free_of_async_block),
    Case::device("urUSMDeviceAlloc.from_a_pool_with_an_untyped_descriptor", blocking_from_pool),
    Case::device("urUSMPoolCreateExp.limits_are_maximum_size_and_threshold", pool_limits),
    Case::device("urUSMPoolCreateExp.initialised_blocks", pool_zero_init),
    Case::device("urUSMPoolCreateExp.released_with_live_blocks", pool_released_with_live_blocks),
    Case::device("urUSMPoolCreateExp.null_descriptor", pool_null_desc),
    Case::device("urUSMPoolCreateExp.null_output", pool_null_output),
    Case::device("urUSMPoolCreateExp.invalid_flags", pool_bad_flags),
    Case::device("urUSMPoolDestroyExp.current_pool_reverts_to_default", pool_destroy),
    Case::device("urUSMPoolDestroyExp.invalid_default_pool", pool_destroy_default),
    Case::device("urUSMPoolDestroyExp.null_pool", pool_destroy_null),
    Case::device("urUSMPoolGetDefaultDevicePoolExp.serves_allocations_without_a_pool", default_pool),
    Case::device("urUSMPoolGetDefaultDevicePoolExp.null_output", default_pool_null_output),
    Case::device("urUSMPoolSetDevicePoolExp.changes_the_current_pool", set_device_pool),
    Case::device("urUSMPoolSetDevicePoolExp.invalid_pool_of_another_context", set_device_pool_foreign),
    Case::device("urUSMPoolGetDevicePoolExp.default_until_set", get_device_pool),
    Case::device("urUSMPoolGetDevicePoolExp.null_output", get_device_pool_null_output),
    Case::device("urUSMPoolTrimToExp.gives_back_free_memory_only", trim),
    Case::device("urUSMPoolTrimToExp.invalid_pool_of_another_context", trim_foreign),
    Case::device("urUSMPoolGetInfoExp.statistics", pool_statistics),
    Case::device("urUSMPoolGetInfoExp.object_queries_unsupported", info_exp_object_queries),
    Case::device("urUSMPoolGetInfoExp.invalid_enumeration", info_exp_bad_enum),
    Case::device("urUSMPoolGetInfoExp.null_outputs", info_exp_null_outputs),
    Case::device("urUSMPoolSetInfoExp.threshold_applies_at_synchronisation", threshold),
    Case::device("urUSMPoolCreateExp.initial_threshold_keeps_freed_memory", initial_threshold),
    Case::device("urUSMPoolSetInfoExp.invalid_size", set_info_bad_size),
    Case::device("urUSMPoolSetInfoExp.invalid_high_water_value", set_info_bad_value),
    Case::device("urUSMPoolSetInfoExp.null_value", set_info_null_value),
    Case::device("urUSMPoolSetInfoExp.maximum_size_is_read_only", set_info_read_only),
    Case::device("urUSMPoolGetInfo.statistics_of_an_exp_pool", pool_get_info_statistics),
];

pub(crate) const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;
/// A release threshold that keeps every freed block reserved, whatever a
/// backend's slab granularity.
pub(crate) const KEEP: usize = 1 << 30;

// ---------------------------------------------------------------------------
// Helpers

/// Skips a device that does not serve async allocations.
pub(crate) unsafe fn require_async(fx: &DeviceFx) -> CaseResult {
    fx.require(UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP, "async USM allocation support")
}

/// Skips a device without async allocations or pools.
pub(crate) unsafe fn require_pools(fx: &DeviceFx) -> CaseResult {
    require_async(fx)?;
    fx.require(UR_DEVICE_INFO_USM_POOL_SUPPORT, "USM pool support")
}
fn alloc_name(kind: UsmKind) -> &'static str {
    match kind {
        UsmKind::Host => "urEnqueueUSMHostAllocExp",
        UsmKind::Device => "urEnqueueUSMDeviceAllocExp",
        UsmKind::Shared => "urEnqueueUSMSharedAllocExp",
    }
}

fn alloc_command(kind: UsmKind) -> ur_command_t {
    match kind {
        UsmKind::Host => UR_COMMAND_ENQUEUE_USM_HOST_ALLOC_EXP,
        UsmKind::Device => UR_COMMAND_ENQUEUE_USM_DEVICE_ALLOC_EXP,
        UsmKind::Shared => UR_COMMAND_ENQUEUE_USM_SHARED_ALLOC_EXP,
    }
}

/// Calls the allocation entry point of `kind` as given and returns its code.
#[allow(clippy::too_many_arguments)]
unsafe fn raw_alloc(
    api: &Api,
    kind: UsmKind,
    queue: ur_queue_handle_t,
    pool: ur_usm_pool_handle_t,
    size: usize,
    props: *const ur_exp_async_usm_alloc_properties_t,
    waits: &[ur_event_handle_t],
    out: *mut *mut c_void,
    event: *mut ur_event_handle_t,
) -> Result<ur_result_t, String> {
    let (n, w) = wait_list(waits);
    match kind {
        UsmKind::Host => api.urEnqueueUSMHostAllocExp(queue, pool, size, props, n, w, out, event),
        UsmKind::Device => api.urEnqueueUSMDeviceAllocExp(queue, pool, size, props, n, w, out, event),
        UsmKind::Shared => api.urEnqueueUSMSharedAllocExp(queue, pool, size, props, n, w, out, event),
    }
}

/// An async allocation that must succeed; with `event`, its event too.
pub(crate) unsafe fn alloc(
    fx: &DeviceFx,
    queue: ur_queue_handle_t,
    kind: UsmKind,
    pool: ur_usm_pool_handle_t,
    size: usize,
    waits: &[ur_event_handle_t],
    event: bool,
) -> Result<(*mut c_void, Option<OwnedEvent>), Outcome> {
    let mut p = null_mut();
    let mut e: ur_event_handle_t = null_mut();
    let out_event = if event { &mut e as *mut _ } else { null_mut() };
    let code = raw_alloc(fx.api, kind, queue, pool, size, null(), waits, &mut p, out_event)?;
    expect_code(UR_RESULT_SUCCESS, code, &format!("{}({size} bytes)", alloc_name(kind)))?;
    check!(!p.is_null(), "{} returned a null pointer", alloc_name(kind));
    check!(!event || !e.is_null(), "{} returned no event", alloc_name(kind));
    Ok((p, event.then(|| fx.own_event(e))))
}

/// An async free that must succeed; with `event`, its event.
pub(crate) unsafe fn free(
    fx: &DeviceFx,
    queue: ur_queue_handle_t,
    pool: ur_usm_pool_handle_t,
    p: *mut c_void,
    waits: &[ur_event_handle_t],
    event: bool,
) -> Result<Option<OwnedEvent>, Outcome> {
    let mut e: ur_event_handle_t = null_mut();
    let out_event = if event { &mut e as *mut _ } else { null_mut() };
    let (n, w) = wait_list(waits);
    expect_success!(fx.api.urEnqueueUSMFreeExp(queue, pool, p, n, w, out_event));
    check!(!event || !e.is_null(), "urEnqueueUSMFreeExp returned no event");
    Ok(event.then(|| fx.own_event(e)))
}

/// The code of an async free, with no event.
unsafe fn free_code(fx: &DeviceFx, pool: ur_usm_pool_handle_t, p: *mut c_void) -> Result<ur_result_t, Outcome> {
    Ok(fx.api.urEnqueueUSMFreeExp(fx.queue, pool, p, 0, null(), null_mut())?)
}

pub(crate) fn all_are(what: &str, bytes: &[u8], value: u8) -> CaseResult {
    match bytes.iter().position(|&b| b != value) {
        None => Ok(()),
        Some(i) => {
            Err(format!("{what}: byte {i} of {} is 0x{:02x}, expected 0x{value:02x}", bytes.len(), bytes[i]).into())
        }
    }
}

fn limits(max_size: usize, threshold: usize) -> ur_usm_pool_limits_desc_t {
    ur_usm_pool_limits_desc_t {
        stype: UR_STRUCTURE_TYPE_USM_POOL_LIMITS_DESC,
        pNext: null(),
        maxPoolableSize: max_size,
        minDriverAllocSize: threshold,
    }
}

/// A pool of the fixture's device (`urUSMPoolCreateExp`) with `flags` and,
/// when given, limits `(maximum size, initial threshold)`.
unsafe fn exp_pool(
    fx: &DeviceFx,
    flags: ur_usm_pool_flags_t,
    lim: Option<(usize, usize)>,
) -> Result<OwnedPool, Outcome> {
    let l = lim.map(|(max, threshold)| limits(max, threshold));
    let next = l.as_ref().map_or(null(), |l| (l as *const ur_usm_pool_limits_desc_t).cast());
    let mut desc = ur_usm_pool_desc_t { stype: UR_STRUCTURE_TYPE_USM_POOL_DESC, pNext: next, flags };
    let mut pool = null_mut();
    expect_success!(fx.api.urUSMPoolCreateExp(fx.context, fx.device, &mut desc, &mut pool));
    check!(!pool.is_null(), "urUSMPoolCreateExp succeeded with a null handle");
    Ok(fx.own_pool(pool))
}

/// A plain pool of the case's own (no flags, no limits), or a skip where
/// the device has no async allocations or pools.
unsafe fn plain_pool(fx: &DeviceFx) -> Result<OwnedPool, Outcome> {
    require_pools(fx)?;
    exp_pool(fx, 0, None)
}

/// A pool that keeps what it reserves across synchronisation, so that
/// reuse shows in addresses and in RESERVED.
unsafe fn keeping_pool(fx: &DeviceFx) -> Result<OwnedPool, Outcome> {
    let pool = exp_pool(fx, 0, None)?;
    set_stat(fx, pool.get(), UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP, KEEP)?;
    Ok(pool)
}

pub(crate) unsafe fn stat(fx: &DeviceFx, pool: ur_usm_pool_handle_t, prop: ur_usm_pool_info_t) -> Result<usize, Outcome> {
    let mut v = usize::MAX;
    let mut size = 0usize;
    expect_success!(fx.api.urUSMPoolGetInfoExp(pool, prop, (&mut v as *mut usize).cast(), &mut size));
    check_eq!(size, std::mem::size_of::<usize>());
    Ok(v)
}

pub(crate) unsafe fn set_stat(fx: &DeviceFx, pool: ur_usm_pool_handle_t, prop: ur_usm_pool_info_t, v: usize) -> CaseResult {
    let mut v = v;
    expect_success!(set_info(fx, pool, prop, &mut v, size_of::<usize>()));
    Ok(())
}

/// `urUSMPoolSetInfoExp` of `prop` from `size` bytes at `value`.
unsafe fn set_info(
    fx: &DeviceFx,
    pool: ur_usm_pool_handle_t,
    prop: ur_usm_pool_info_t,
    value: *mut usize,
    size: usize,
) -> Result<ur_result_t, String> {
    fx.api.urUSMPoolSetInfoExp(pool, prop, value.cast(), size)
}

unsafe fn command_type(fx: &DeviceFx, e: &OwnedEvent) -> Result<ur_command_t, Outcome> {
    Ok(fx.api.event_info::<ur_command_t>(e.get(), UR_EVENT_INFO_COMMAND_TYPE)?)
}

pub(crate) unsafe fn finish(fx: &DeviceFx, queue: ur_queue_handle_t) -> CaseResult {
    expect_success!(fx.api.urQueueFinish(queue));
    Ok(())
}

/// A second context of the fixture's device, with a pool of its own.
unsafe fn other_context_pool(fx: &DeviceFx) -> Result<(OwnedContext, OwnedPool), Outcome> {
    let mut context = null_mut();
    expect_success!(fx.api.urContextCreate(1, &fx.device, null(), &mut context));
    let context = fx.own_context(context);
    let mut desc = ur_usm_pool_desc_t { stype: UR_STRUCTURE_TYPE_USM_POOL_DESC, pNext: null(), flags: 0 };
    let mut pool = null_mut();
    expect_success!(fx.api.urUSMPoolCreateExp(context.get(), fx.device, &mut desc, &mut pool));
    Ok((context, fx.own_pool(pool)))
}

// ---------------------------------------------------------------------------
// Allocation

/// Allocates `kind` memory on each kind of queue (from the current pool and
/// from a pool of the case's own), fills it, copies it, reads both back;
/// the allocation and free events report their command types.
unsafe fn round_trip(fx: &DeviceFx, kind: UsmKind) -> CaseResult {
    require_pools(fx)?;
    fx.require_kind(kind)?;
    let own = exp_pool(fx, 0, None)?;
    on_each_queue_kind(fx, |queue, label| {
        for pool in [null_mut(), own.get()] {
            let size = 64 * KIB + 24;
            let (a, ae) = alloc(fx, queue, kind, pool, size, &[], true)?;
            let ae = ae.expect("asked for");
            check_eq!(command_type(fx, &ae)?, alloc_command(kind));
            let (b, be) = alloc(fx, queue, kind, pool, size, &[], true)?;
            let be = be.expect("asked for");
            check!(a != b, "{label}: two live async allocations share the address {a:?}");
            let filled = fx.fill(queue, a, &[0x5a], size, &[ae.get()])?;
            let copied = fx.copy(queue, b, a, size, &[filled.get(), be.get()])?;
            all_are(&format!("{label}: the filled block"), &fx.read_after(queue, a, size, &[filled.get()])?, 0x5a)?;
            all_are(&format!("{label}: the copy"), &fx.read_after(queue, b, size, &[copied.get()])?, 0x5a)?;
            // Interior pointers are fine for commands.
            let tail = (a as *mut u8).wrapping_add(size - 24).cast::<c_void>();
            let marked = fx.fill(queue, tail, &[0x11], 24, &[copied.get()])?;
            let got = fx.read_after(queue, a, size, &[marked.get()])?;
            all_are(&format!("{label}: the block before its tail"), &got[..size - 24], 0x5a)?;
            all_are(&format!("{label}: the block's tail"), &got[size - 24..], 0x11)?;
            let fa = free(fx, queue, pool, a, &[marked.get()], true)?.expect("asked for");
            check_eq!(command_type(fx, &fa)?, UR_COMMAND_ENQUEUE_USM_FREE_EXP);
            let fb = free(fx, queue, pool, b, &[copied.get()], true)?.expect("asked for");
            check_eq!(command_type(fx, &fb)?, UR_COMMAND_ENQUEUE_USM_FREE_EXP);
            fx.wait(fa.get())?;
            fx.wait(fb.get())?;
            check_eq!(fx.status(fa.get())?, UR_EVENT_STATUS_COMPLETE);
        }
        finish(fx, queue)
    })
}

cases_calling! {
    DeviceFx: device_round_trip = round_trip(UsmKind::Device);
    DeviceFx: shared_round_trip = round_trip(UsmKind::Shared);
    DeviceFx: host_round_trip = round_trip(UsmKind::Host);
}

/// On one in-order queue, with no events and no waits, a freed block comes
/// back at once (same address), data written through it is that of its
/// latest owner, and the pool reserves nothing more after the first round.
unsafe fn in_order_reuse(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    let pool = keeping_pool(fx)?;
    let size = 256 * KIB;
    let (first, _) = alloc(fx, fx.queue, UsmKind::Device, pool.get(), size, &[], false)?;
    free(fx, fx.queue, pool.get(), first, &[], false)?;
    let reserved = stat(fx, pool.get(), UR_USM_POOL_INFO_RESERVED_CURRENT_EXP)?;
    let mut same = 0;
    for round in 0..64u8 {
        let (p, _) = alloc(fx, fx.queue, UsmKind::Device, pool.get(), size, &[], false)?;
        same += usize::from(p == first);
        // Enqueued without events: the in-order queue orders every step.
        drop(fx.fill(fx.queue, p, &[round], size, &[])?);
        if round % 16 == 15 {
            all_are(&format!("round {round}"), &fx.read_after(fx.queue, p, size, &[])?, round)?;
        }
        free(fx, fx.queue, pool.get(), p, &[], false)?;
    }
    finish(fx, fx.queue)?;
    check!(same >= 60, "the block freed last on the in-order queue came back {same} times in 64 rounds");
    let after = stat(fx, pool.get(), UR_USM_POOL_INFO_RESERVED_CURRENT_EXP)?;
    check!(after <= reserved, "64 alloc/free rounds on one queue grew RESERVED from {reserved} to {after}");
    check_eq!(stat(fx, pool.get(), UR_USM_POOL_INFO_USED_CURRENT_EXP)?, 0usize);
    Ok(())
}

/// On an in-order queue an async allocation's or free's event completes
/// only after the commands before it, even where the allocation and the
/// free do nothing on the device: here a slow fill (of host memory, which
/// the test reads back) stands between them and an earlier allocation
/// whose event was already recorded, which they must not take for their
/// own.
unsafe fn events_follow_earlier_commands(fx: &DeviceFx) -> CaseResult {
    require_async(fx)?;
    let big_size = 64 * MIB;
    let big = fx.alloc(UsmKind::Host, big_size)?;
    let (first, last) = (big.ptr as *const u8, (big.ptr as *const u8).add(big_size - 1));
    for round in 1..=4u8 {
        let (early, _early_ready) = alloc(fx, fx.queue, UsmKind::Device, null_mut(), 4 * KIB, &[], true)?;
        let _slow = fx.fill(fx.queue, big.ptr, &[round], big_size, &[])?;
        let (late, late_ready) = alloc(fx, fx.queue, UsmKind::Device, null_mut(), 4 * KIB, &[], true)?;
        let freed = free(fx, fx.queue, null_mut(), early, &[], true)?;
        for (what, event) in [("allocation", late_ready), ("free", freed)] {
            fx.wait(event.expect("asked for").get())?;
            // SAFETY: host USM of `big_size` bytes; the fill has ended if
            // the event is right, and a late byte is only a wrong value.
            let seen = [first.read_volatile(), last.read_volatile()];
            let order = "completed before the fill enqueued before it";
            check!(seen == [round; 2], "round {round}: the {what}'s event {order} (bytes read {seen:?})");
        }
        free(fx, fx.queue, null_mut(), late, &[], false)?;
    }
    finish(fx, fx.queue)
}

/// A block freed on an out-of-order queue after a slow reader, and asked for
/// again by an allocation that nothing orders after that free: the new
/// owner's writes must not reach the block before the reader has read it.
/// The reader is slow because it waits for a large fill.
unsafe fn pending_block_waits(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    let queue = fx.out_of_order_queue()?;
    let q = queue.get();
    let size = 64 * KIB;
    let big_size = 64 * MIB;
    let (big, big_ready) = alloc(fx, q, UsmKind::Device, null_mut(), big_size, &[], true)?;
    let mut reused = 0;
    for round in 0..4u8 {
        // A new pool each round: its only free block is the pending one.
        let pool = keeping_pool(fx)?;
        let (a, a_ready) = alloc(fx, q, UsmKind::Device, pool.get(), size, &[], true)?;
        let tagged = fx.fill(q, a, &[0x10 + round], size, &[a_ready.expect("asked for").get()])?;
        let slow = fx.fill(q, big, &[round], big_size, &[big_ready.as_ref().expect("asked for").get()])?;
        let mut seen = vec![0u8; size];
        let reader = fx.copy(q, seen.as_mut_ptr().cast(), a, size, &[tagged.get(), slow.get()])?;
        let freed = free(fx, q, pool.get(), a, &[reader.get()], true)?.expect("asked for");
        // Not ordered after `freed`: may reuse the block only by waiting for it.
        let (b, b_ready) = alloc(fx, q, UsmKind::Device, pool.get(), size, &[], true)?;
        reused += usize::from(b == a);
        let overwrite = fx.fill(q, b, &[0xee], size, &[b_ready.expect("asked for").get()])?;
        fx.wait(overwrite.get())?;
        fx.wait(reader.get())?;
        fx.wait(freed.get())?;
        all_are(&format!("round {round}: what the reader saw of the first owner's block"), &seen, 0x10 + round)?;
        free(fx, q, pool.get(), b, &[overwrite.get()], false)?;
        finish(fx, q)?;
    }
    finish(fx, q)?;
    free(fx, q, null_mut(), big, &[], false)?;
    finish(fx, q)?;
    // The engine may also hand out fresh memory; either way the data held.
    let _ = reused;
    Ok(())
}

/// A pool with a maximum size refuses what would pass it, with the kind's
/// out-of-memory code; the pool's figures and earlier data are unchanged,
/// and the pool serves again once memory is freed.
unsafe fn out_of_memory(fx: &DeviceFx, kind: UsmKind, code: ur_result_t) -> CaseResult {
    require_pools(fx)?;
    fx.require_kind(kind)?;
    let max = 64 * MIB;
    let pool = exp_pool(fx, 0, Some((max, KEEP)))?;
    check_eq!(stat(fx, pool.get(), UR_USM_POOL_INFO_MAXIMUM_SIZE_EXP)?, max);
    let (a, ready) = alloc(fx, fx.queue, kind, pool.get(), 4 * MIB, &[], true)?;
    let filled = fx.fill(fx.queue, a, &[0x77], 4 * MIB, &[ready.expect("asked for").get()])?;
    fx.wait(filled.get())?;
    let before = (
        stat(fx, pool.get(), UR_USM_POOL_INFO_RESERVED_CURRENT_EXP)?,
        stat(fx, pool.get(), UR_USM_POOL_INFO_USED_CURRENT_EXP)?,
    );
    for size in [4 * max, max + 1] {
        let mut p = 0x1234 as *mut c_void;
        let mut e: ur_event_handle_t = null_mut();
        let got = raw_alloc(fx.api, kind, fx.queue, pool.get(), size, null(), &[], &mut p, &mut e)?;
        if got == UR_RESULT_SUCCESS {
            drop(fx.own_event(e));
            let _ = free_code(fx, pool.get(), p);
        }
        expect_code(code, got, &format!("{}({size} bytes) from a pool of at most {max}", alloc_name(kind)))?;
        check!(p == 0x1234 as *mut c_void, "a failed allocation wrote *ppMem");
        check!(e.is_null(), "a failed allocation returned an event");
    }
    let after = (
        stat(fx, pool.get(), UR_USM_POOL_INFO_RESERVED_CURRENT_EXP)?,
        stat(fx, pool.get(), UR_USM_POOL_INFO_USED_CURRENT_EXP)?,
    );
    check!(after == before, "(RESERVED, USED) went from {before:?} to {after:?} through failed allocations");
    check!(after.0 <= max, "the pool reserves {} bytes, past its maximum of {max}", after.0);
    all_are("the earlier allocation after the failures", &fx.read_after(fx.queue, a, 4 * MIB, &[])?, 0x77)?;
    // Filling the pool up, then failing, then serving again after a free.
    let mut held = Vec::new();
    loop {
        let mut p = null_mut();
        let got = raw_alloc(fx.api, kind, fx.queue, pool.get(), 8 * MIB, null(), &[], &mut p, null_mut())?;
        if got != UR_RESULT_SUCCESS {
            expect_code(code, got, "an allocation past the maximum size")?;
            break;
        }
        held.push(p);
        check!(held.len() <= max / (8 * MIB), "the pool served {} blocks of 8 MiB with a maximum of {max}", held.len());
    }
    let reserved = stat(fx, pool.get(), UR_USM_POOL_INFO_RESERVED_CURRENT_EXP)?;
    check!(reserved <= max, "the full pool reserves {reserved} bytes, past its maximum of {max}");
    check!(!held.is_empty(), "no 8 MiB block fits a pool of {max} with 4 MiB live");
    free(fx, fx.queue, pool.get(), held.pop().expect("not empty"), &[], false)?;
    let (again, _) = alloc(fx, fx.queue, kind, pool.get(), 8 * MIB, &[], false)?;
    held.push(again);
    for p in held.into_iter().chain([a]) {
        free(fx, fx.queue, pool.get(), p, &[], false)?;
    }
    finish(fx, fx.queue)?;
    check_eq!(stat(fx, pool.get(), UR_USM_POOL_INFO_USED_CURRENT_EXP)?, 0usize);
    Ok(())
}

unsafe fn device_out_of_memory(fx: &DeviceFx) -> CaseResult {
    let kind = if fx.supports(UsmKind::Device)? { UsmKind::Device } else { UsmKind::Shared };
    out_of_memory(fx, kind, UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)
}

unsafe fn host_out_of_memory(fx: &DeviceFx) -> CaseResult {
    out_of_memory(fx, UsmKind::Host, UR_RESULT_ERROR_OUT_OF_HOST_MEMORY)
}

unsafe fn null_output(fx: &DeviceFx, kind: UsmKind) -> CaseResult {
    require_async(fx)?;
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_POINTER,
        raw_alloc(fx.api, kind, fx.queue, null_mut(), 64, null(), &[], null_mut(), null_mut())
    );
    Ok(())
}

cases_calling! {
    DeviceFx: device_null_output = null_output(UsmKind::Device);
    DeviceFx: shared_null_output = null_output(UsmKind::Shared);
}

unsafe fn zero_size(fx: &DeviceFx, kind: UsmKind) -> CaseResult {
    require_async(fx)?;
    fx.require_kind(kind)?;
    let mut p = null_mut();
    let got = raw_alloc(fx.api, kind, fx.queue, null_mut(), 0, null(), &[], &mut p, null_mut())?;
    expect_code(UR_RESULT_ERROR_INVALID_USM_SIZE, got, &format!("{} of 0 bytes", alloc_name(kind)))
}

cases_calling! {
    DeviceFx: device_zero_size = zero_size(UsmKind::Device);
    DeviceFx: host_zero_size = zero_size(UsmKind::Host);
}

unsafe fn device_bad_properties(fx: &DeviceFx) -> CaseResult {
    require_async(fx)?;
    let props = ur_exp_async_usm_alloc_properties_t {
        stype: UR_STRUCTURE_TYPE_EXP_ASYNC_USM_ALLOC_PROPERTIES,
        pNext: null_mut(),
        flags: 1 << 7,
    };
    check!(props.flags & UR_EXP_ASYNC_USM_ALLOC_FLAGS_MASK != 0, "the flag must be undefined");
    let mut p = null_mut();
    let got = raw_alloc(fx.api, UsmKind::Device, fx.queue, null_mut(), 64, &props, &[], &mut p, null_mut())?;
    expect_code(UR_RESULT_ERROR_INVALID_ENUMERATION, got, "urEnqueueUSMDeviceAllocExp with an undefined flag")
}

unsafe fn device_bad_wait_list(fx: &DeviceFx) -> CaseResult {
    require_async(fx)?;
    let p = std::cell::Cell::new(null_mut());
    bad_wait_lists(fx, |n, w| {
        fx.api.urEnqueueUSMDeviceAllocExp(fx.queue, null_mut(), 64, null(), n, w, p.as_ptr(), null_mut())
    })
}

unsafe fn device_foreign_pool(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    let (_context, pool) = other_context_pool(fx)?;
    let mut p = null_mut();
    let got = raw_alloc(fx.api, UsmKind::Device, fx.queue, pool.get(), 64, null(), &[], &mut p, null_mut())?;
    expect_code(UR_RESULT_ERROR_INVALID_VALUE, got, "an allocation from a pool of another context")
}

// ---------------------------------------------------------------------------
// Free

/// A block goes back and forth between two queues: allocated on A, written
/// there, freed on B after A's last use (by event), allocated again on A
/// after B's free (by event). The allocation ordered after the free takes
/// the same block, and the pool never grows. (The block is large enough to
/// have its memory to itself: free space beside it, which a pool may prefer
/// when the free has completed, would make the address a matter of timing.)
/// The smallest out-of-order case: a = alloc, a fill of a after it, free a
/// after the fill, b = alloc after the free. The free is ordered before b,
/// so b takes a's memory, not fresh space beside it (the default pool of a
/// new context, so no other block competes).
unsafe fn ordered_free_before_fresh_space(fx: &DeviceFx) -> CaseResult {
    require_async(fx)?;
    let ooo = fx.out_of_order_queue()?;
    let q = ooo.get();
    let size = MIB;
    let (a, a_ready) = alloc(fx, q, UsmKind::Device, null_mut(), size, &[], true)?;
    let filled = fx.fill(q, a, &[0x5a], size, &[a_ready.expect("asked for").get()])?;
    let freed = free(fx, q, null_mut(), a, &[filled.get()], true)?.expect("asked for");
    let (b, b_ready) = alloc(fx, q, UsmKind::Device, null_mut(), size, &[freed.get()], true)?;
    let b_ready = b_ready.expect("asked for");
    // b is usable as usual, whatever its address.
    let written = fx.fill(q, b, &[0xa5], size, &[b_ready.get()])?;
    all_are("b after its fill", &fx.read_after(q, b, size, &[written.get()])?, 0xa5)?;
    free(fx, q, null_mut(), b, &[written.get()], false)?;
    finish(fx, q)?;
    check!(b == a, "b is at {b:?}, a was at {a:?}: the allocation ordered after a's free took other memory");
    Ok(())
}

/// Free on queue A, alloc on queue B after the free's event, and back, for
/// 24 rounds: one address throughout, as CUDA's own pools give. On two
/// in-order queues, and on two out-of-order queues where the device has them.
unsafe fn hand_over_one_address(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    let ooo_supported =
        fx.api.device_info::<ur_queue_flags_t>(fx.device, UR_DEVICE_INFO_QUEUE_PROPERTIES)? & UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0 != 0;
    let mut shapes = vec![("in-order", 0)];
    if ooo_supported {
        shapes.push(("out-of-order", UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0));
    }
    for (shape, flags) in shapes {
        let (qa, qb) = (fx.create_queue(flags)?, fx.create_queue(flags)?);
        let (a, b) = (qa.get(), qb.get());
        let pool = keeping_pool(fx)?;
        let label = |round| format!("{shape} round {round}");
        let addresses = hand_over_rounds([(fx, a), (fx, b)], UsmKind::Device, pool.get(), 24, 8, &label)?;
        finish(fx, a)?;
        finish(fx, b)?;
        check_eq!(stat(fx, pool.get(), UR_USM_POOL_INFO_USED_CURRENT_EXP)?, 0usize);
        check!(addresses.len() == 1, "{shape} queues: the block handed between them lived at {} addresses", addresses.len());
    }
    Ok(())
}

/// Hands one 64 KiB block of `kind` from `pool` between two sides (a
/// fixture and one of its queues) for `rounds` rounds: the first side
/// allocates, writes the round and frees; the second allocates after that
/// free, writes the round's complement and frees, and the first's next
/// allocation waits for that free. Every `read_every`-th round the second
/// side reads its data back (`label(round)` names it). Returns the
/// addresses the block had.
pub(crate) unsafe fn hand_over_rounds(
    [(fa, a), (fb, b)]: [(&DeviceFx, ur_queue_handle_t); 2],
    kind: UsmKind,
    pool: ur_usm_pool_handle_t,
    rounds: u8,
    read_every: u8,
    label: &dyn Fn(u8) -> String,
) -> Result<BTreeSet<usize>, Outcome> {
    let size = 64 * KIB;
    let mut addresses = BTreeSet::new();
    let mut last_free: Option<OwnedEvent> = None;
    for round in 0..rounds {
        let waits: Vec<ur_event_handle_t> = last_free.iter().map(|e| e.get()).collect();
        let (x, x_ready) = alloc(fa, a, kind, pool, size, &waits, true)?;
        let used_x = fa.fill(a, x, &[round], size, &[x_ready.expect("asked for").get()])?;
        let freed_x = free(fa, a, pool, x, &[used_x.get()], true)?.expect("asked for");
        let (y, y_ready) = alloc(fb, b, kind, pool, size, &[freed_x.get()], true)?;
        let used_y = fb.fill(b, y, &[!round], size, &[y_ready.expect("asked for").get()])?;
        if round % read_every == read_every - 1 {
            all_are(&label(round), &fb.read_after(b, y, size, &[used_y.get()])?, !round)?;
        }
        last_free = free(fb, b, pool, y, &[used_y.get()], true)?;
        addresses.insert(x as usize);
        addresses.insert(y as usize);
    }
    Ok(addresses)
}

unsafe fn cross_queue_reuse(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    let other = fx.create_queue(0)?;
    let (a, b) = (fx.queue, other.get());
    let pool = keeping_pool(fx)?;
    let size = 4 * MIB;
    let (mut p, ready) = alloc(fx, a, UsmKind::Device, pool.get(), size, &[], true)?;
    let mut ready = ready.expect("asked for");
    let mut reserved = None;
    let mut same = 0;
    for round in 0..32u8 {
        let written = fx.fill(a, p, &[round], size, &[ready.get()])?;
        if round % 8 == 0 {
            all_are(&format!("round {round}"), &fx.read_after(a, p, size, &[written.get()])?, round)?;
        }
        let freed = free(fx, b, pool.get(), p, &[written.get()], true)?.expect("asked for");
        let (q, again) = alloc(fx, a, UsmKind::Device, pool.get(), size, &[freed.get()], true)?;
        same += usize::from(q == p);
        p = q;
        ready = again.expect("asked for");
        let now = stat(fx, pool.get(), UR_USM_POOL_INFO_RESERVED_CURRENT_EXP)?;
        match reserved {
            None => reserved = Some(now),
            Some(r) => {
                check!(now <= r, "round {round}: RESERVED grew from {r} to {now} handing one block between queues")
            }
        }
    }
    check!(same >= 30, "an allocation ordered after the free took the freed block in {same} of 32 rounds");
    free(fx, a, pool.get(), p, &[ready.get()], false)?;
    finish(fx, a)?;
    finish(fx, b)?;
    check_eq!(stat(fx, pool.get(), UR_USM_POOL_INFO_USED_CURRENT_EXP)?, 0usize);
    Ok(())
}

/// On an in-order queue, async allocations and frees keep their place: a
/// command after a free sees the free complete, and the events of alloc and
/// free say what they are.
unsafe fn free_command_types(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    for kind in [UsmKind::Device, UsmKind::Shared, UsmKind::Host] {
        if !fx.supports(kind)? {
            continue;
        }
        let (p, ae) = alloc(fx, fx.queue, kind, null_mut(), 4 * KIB, &[], true)?;
        let ae = ae.expect("asked for");
        check_eq!(command_type(fx, &ae)?, alloc_command(kind));
        let fe = free(fx, fx.queue, null_mut(), p, &[], true)?.expect("asked for");
        check_eq!(command_type(fx, &fe)?, UR_COMMAND_ENQUEUE_USM_FREE_EXP);
        let mut marker = null_mut();
        expect_success!(fx.api.urEnqueueEventsWait(fx.queue, 0, null(), &mut marker));
        let marker = fx.own_event(marker);
        fx.wait(marker.get())?;
        check_eq!(fx.status(fe.get())?, UR_EVENT_STATUS_COMPLETE);
        check_eq!(fx.status(ae.get())?, UR_EVENT_STATUS_COMPLETE);
    }
    Ok(())
}

/// A refused free leaves the block whole and usable.
unsafe fn refused_free_keeps(fx: &DeviceFx, pool: ur_usm_pool_handle_t, p: *mut c_void, size: usize) -> CaseResult {
    let filled = fx.fill(fx.queue, p, &[0xa5], size, &[])?;
    all_are("the block after a refused free", &fx.read_after(fx.queue, p, size, &[filled.get()])?, 0xa5)?;
    // Another allocation must not be given any of it.
    let (other, _) = alloc(fx, fx.queue, UsmKind::Device, pool, size, &[], false)?;
    let (lo, hi) = (p as usize, p as usize + size);
    check!((other as usize) >= hi || (other as usize) + size <= lo, "a refused free let the block be handed out again");
    free(fx, fx.queue, pool, other, &[], false)?;
    Ok(())
}

/// Runs `body(pool, block, size)` on a 64 KiB block of the current pool,
/// then of a keeping pool of the case's own, and finishes the queue.
unsafe fn on_a_block_of_each_pool(
    fx: &DeviceFx,
    body: impl Fn(ur_usm_pool_handle_t, *mut c_void, usize) -> CaseResult,
) -> CaseResult {
    require_pools(fx)?;
    let own = keeping_pool(fx)?;
    for pool in [null_mut(), own.get()] {
        let size = 64 * KIB;
        let (p, _) = alloc(fx, fx.queue, UsmKind::Device, pool, size, &[], false)?;
        body(pool, p, size)?;
    }
    finish(fx, fx.queue)
}

unsafe fn free_interior(fx: &DeviceFx) -> CaseResult {
    on_a_block_of_each_pool(fx, |pool, p, size| {
        let interior = (p as *mut u8).wrapping_add(256).cast::<c_void>();
        expect_code(UR_RESULT_ERROR_INVALID_VALUE, free_code(fx, pool, interior)?, "an async free of an interior pointer")?;
        refused_free_keeps(fx, pool, p, size)?;
        free(fx, fx.queue, pool, p, &[], false)?;
        Ok(())
    })
}

unsafe fn free_foreign(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    let own = keeping_pool(fx)?;
    let other = exp_pool(fx, 0, None)?;
    let size = 64 * KIB;
    let (p, _) = alloc(fx, fx.queue, UsmKind::Device, own.get(), size, &[], false)?;
    let mut local = [0u8; 64];
    expect_code(
        UR_RESULT_ERROR_INVALID_VALUE,
        free_code(fx, null_mut(), local.as_mut_ptr().cast())?,
        "an async free of host memory no pool gave out",
    )?;
    let blocking = fx.alloc(UsmKind::Device, 4 * KIB)?;
    expect_code(
        UR_RESULT_ERROR_INVALID_VALUE,
        free_code(fx, null_mut(), blocking.ptr)?,
        "an async free of a blocking allocation",
    )?;
    expect_code(UR_RESULT_ERROR_INVALID_VALUE, free_code(fx, other.get(), p)?, "an async free naming another pool")?;
    refused_free_keeps(fx, own.get(), p, size)?;
    free(fx, fx.queue, own.get(), p, &[], false)?;
    finish(fx, fx.queue)?;
    expect_success!(blocking.free());
    Ok(())
}

unsafe fn free_double(fx: &DeviceFx) -> CaseResult {
    on_a_block_of_each_pool(fx, |pool, p, size| {
        free(fx, fx.queue, pool, p, &[], false)?;
        // Freed again before the first free could have run, then after.
        expect_code(UR_RESULT_ERROR_INVALID_VALUE, free_code(fx, pool, p)?, "a second async free, the first pending")?;
        finish(fx, fx.queue)?;
        expect_code(UR_RESULT_ERROR_INVALID_VALUE, free_code(fx, pool, p)?, "a second async free, the first complete")?;
        // The block is the pool's again, once: two allocations get two blocks.
        let (x, _) = alloc(fx, fx.queue, UsmKind::Device, pool, size, &[], false)?;
        let (y, _) = alloc(fx, fx.queue, UsmKind::Device, pool, size, &[], false)?;
        check!(x != y, "a double free handed one block to two allocations");
        free(fx, fx.queue, pool, x, &[], false)?;
        free(fx, fx.queue, pool, y, &[], false)?;
        Ok(())
    })
}

unsafe fn free_null_pointer(fx: &DeviceFx) -> CaseResult {
    require_async(fx)?;
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_POINTER,
        fx.api.urEnqueueUSMFreeExp(fx.queue, null_mut(), null_mut(), 0, null(), null_mut())
    );
    Ok(())
}

unsafe fn free_bad_wait_list(fx: &DeviceFx) -> CaseResult {
    require_async(fx)?;
    let (p, _) = alloc(fx, fx.queue, UsmKind::Device, null_mut(), 64, &[], false)?;
    bad_wait_lists(fx, |n, w| fx.api.urEnqueueUSMFreeExp(fx.queue, null_mut(), p, n, w, null_mut()))?;
    free(fx, fx.queue, null_mut(), p, &[], false)?;
    finish(fx, fx.queue)
}

/// `urUSMFree` of an async block waits for the commands enqueued before it
/// that use the block, then frees it; a second free is refused.
unsafe fn blocking_free_of_async_block(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    let size = 64 * KIB;
    let big_size = 64 * MIB;
    let (big, _) = alloc(fx, fx.queue, UsmKind::Device, null_mut(), big_size, &[], false)?;
    let (p, _) = alloc(fx, fx.queue, UsmKind::Device, null_mut(), size, &[], false)?;
    // A slow command, then one that writes the block, both pending.
    drop(fx.fill(fx.queue, big, &[1], big_size, &[])?);
    let mut source = vec![0x3cu8; size];
    let copy = fx.copy(fx.queue, p, source.as_mut_ptr().cast(), size, &[])?;
    expect_success!(fx.api.urUSMFree(fx.context, p));
    check_eq!(fx.status(copy.get())?, UR_EVENT_STATUS_COMPLETE);
    expect_result!(UR_RESULT_ERROR_INVALID_MEM_OBJECT, fx.api.urUSMFree(fx.context, p));
    expect_code(UR_RESULT_ERROR_INVALID_VALUE, free_code(fx, null_mut(), p)?, "an async free after urUSMFree")?;
    let interior = (big as *mut u8).wrapping_add(64).cast::<c_void>();
    expect_result!(UR_RESULT_ERROR_INVALID_MEM_OBJECT, fx.api.urUSMFree(fx.context, interior));
    expect_success!(fx.api.urUSMFree(fx.context, big));
    drop(source);
    finish(fx, fx.queue)
}

/// A blocking allocation from a pool, with a descriptor whose `stype` is 0
/// (as libsycl passes it): served, usable, counted by the pool, freed.
unsafe fn blocking_from_pool(fx: &DeviceFx) -> CaseResult {
    let pool = plain_pool(fx)?;
    let desc = ur_usm_desc_t { stype: ur_structure_type_t(0), pNext: null(), hints: 0, align: 0 };
    let mut p = null_mut();
    expect_success!(fx.api.urUSMDeviceAlloc(fx.context, fx.device, &desc, pool.get(), 100 * KIB, &mut p));
    check!(
        stat(fx, pool.get(), UR_USM_POOL_INFO_USED_CURRENT_EXP)? >= 100 * KIB,
        "the pool does not count its blocking allocation"
    );
    let filled = fx.fill(fx.queue, p, &[0x42], 100 * KIB, &[])?;
    all_are("a blocking allocation from a pool", &fx.read_after(fx.queue, p, 100 * KIB, &[filled.get()])?, 0x42)?;
    if let Some(owner) = super::usm::reported_pool(fx, p)? {
        check!(owner == pool.get(), "the allocation reports pool {owner:?}");
    }
    expect_success!(fx.api.urUSMFree(fx.context, p));
    check_eq!(stat(fx, pool.get(), UR_USM_POOL_INFO_USED_CURRENT_EXP)?, 0usize);
    Ok(())
}

// ---------------------------------------------------------------------------
// Pools

unsafe fn pool_limits(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    let pool = exp_pool(fx, UR_USM_POOL_FLAG_USE_NATIVE_MEMORY_POOL_EXP.0, Some((256 * MIB, 3 * MIB)))?;
    check_eq!(stat(fx, pool.get(), UR_USM_POOL_INFO_MAXIMUM_SIZE_EXP)?, 256 * MIB);
    check_eq!(stat(fx, pool.get(), UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP)?, 3 * MIB);
    let plain = exp_pool(fx, 0, None)?;
    check_eq!(stat(fx, plain.get(), UR_USM_POOL_INFO_MAXIMUM_SIZE_EXP)?, 0usize);
    check_eq!(stat(fx, plain.get(), UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP)?, 0usize);
    check_eq!(stat(fx, plain.get(), UR_USM_POOL_INFO_USED_CURRENT_EXP)?, 0usize);
    // libsycl's "unset": zeros.
    let unset = exp_pool(fx, 0, Some((0, 0)))?;
    check_eq!(stat(fx, unset.get(), UR_USM_POOL_INFO_MAXIMUM_SIZE_EXP)?, 0usize);
    check_eq!(stat(fx, unset.get(), UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP)?, 0usize);
    // The pool with limits serves allocations up to its maximum size.
    let (p, _) = alloc(fx, fx.queue, UsmKind::Device, pool.get(), 16 * MIB, &[], false)?;
    free(fx, fx.queue, pool.get(), p, &[], false)?;
    finish(fx, fx.queue)
}

/// Every block of a zero-initialising pool reads as zeros, fresh or reused
/// after its previous owner wrote it.
unsafe fn pool_zero_init(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    let pool = exp_pool(fx, UR_USM_POOL_FLAG_ZERO_INITIALIZE_BLOCK.0, Some((0, KEEP)))?;
    on_each_queue_kind(fx, |queue, label| {
        let size = 128 * KIB;
        let mut last: Option<OwnedEvent> = None;
        let mut addresses = Vec::new();
        for round in 0..4 {
            let waits: Vec<_> = last.iter().map(|e| e.get()).collect();
            let (p, ready) = alloc(fx, queue, UsmKind::Device, pool.get(), size, &waits, true)?;
            addresses.push(p);
            let ready = ready.expect("asked for");
            let got = fx.read_after(queue, p, size, &[ready.get()])?;
            all_are(&format!("{label}: round {round}, a new block"), &got, 0)?;
            let dirty = fx.fill(queue, p, &[0xff], size, &[ready.get()])?;
            last = free(fx, queue, pool.get(), p, &[dirty.get()], true)?;
        }
        if let Some(e) = last {
            fx.wait(e.get())?;
        }
        finish(fx, queue)
    })
}

/// A pool released while one of its allocations is live: the allocation
/// stays usable and can be freed; the context is still destroyed cleanly.
unsafe fn pool_released_with_live_blocks(fx: &DeviceFx) -> CaseResult {
    let pool = plain_pool(fx)?;
    let (p, _) = alloc(fx, fx.queue, UsmKind::Device, pool.get(), 64 * KIB, &[], false)?;
    let (q, _) = alloc(fx, fx.queue, UsmKind::Device, pool.get(), 64 * KIB, &[], false)?;
    let filled = fx.fill(fx.queue, p, &[0x61], 64 * KIB, &[])?;
    fx.wait(filled.get())?;
    expect_success!(pool.release());
    all_are("a block of a released pool", &fx.read_after(fx.queue, p, 64 * KIB, &[])?, 0x61)?;
    expect_success!(fx.api.urEnqueueUSMFreeExp(fx.queue, null_mut(), p, 0, null(), null_mut()));
    expect_success!(fx.api.urUSMFree(fx.context, q));
    finish(fx, fx.queue)
}

unsafe fn pool_null_desc(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    let mut pool = null_mut();
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_POINTER,
        fx.api.urUSMPoolCreateExp(fx.context, fx.device, null_mut(), &mut pool)
    );
    Ok(())
}

unsafe fn pool_null_output(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    let mut desc = ur_usm_pool_desc_t { stype: UR_STRUCTURE_TYPE_USM_POOL_DESC, pNext: null(), flags: 0 };
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_POINTER,
        fx.api.urUSMPoolCreateExp(fx.context, fx.device, &mut desc, null_mut())
    );
    Ok(())
}

unsafe fn pool_bad_flags(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    let mut desc = ur_usm_pool_desc_t { stype: UR_STRUCTURE_TYPE_USM_POOL_DESC, pNext: null(), flags: 1 << 6 };
    let mut pool = null_mut();
    let got = fx.api.urUSMPoolCreateExp(fx.context, fx.device, &mut desc, &mut pool)?;
    if got == UR_RESULT_SUCCESS {
        drop(fx.own_pool(pool));
    }
    expect_code(UR_RESULT_ERROR_INVALID_ENUMERATION, got, "urUSMPoolCreateExp with an undefined flag")
}

unsafe fn current_pool(fx: &DeviceFx) -> Result<ur_usm_pool_handle_t, Outcome> {
    let mut pool = null_mut();
    expect_success!(fx.api.urUSMPoolGetDevicePoolExp(fx.context, fx.device, &mut pool));
    Ok(pool)
}

unsafe fn default_of(fx: &DeviceFx) -> Result<ur_usm_pool_handle_t, Outcome> {
    let mut pool = null_mut();
    expect_success!(fx.api.urUSMPoolGetDefaultDevicePoolExp(fx.context, fx.device, &mut pool));
    check!(!pool.is_null(), "the default pool is a null handle");
    Ok(pool)
}

/// Destroying the current pool (with a free still pending on it) makes the
/// default pool current again.
unsafe fn pool_destroy(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    let mut desc = ur_usm_pool_desc_t { stype: UR_STRUCTURE_TYPE_USM_POOL_DESC, pNext: null(), flags: 0 };
    let mut pool = null_mut();
    expect_success!(fx.api.urUSMPoolCreateExp(fx.context, fx.device, &mut desc, &mut pool));
    expect_success!(fx.api.urUSMPoolSetDevicePoolExp(fx.context, fx.device, pool));
    check_eq!(current_pool(fx)?, pool);
    let (p, _) = alloc(fx, fx.queue, UsmKind::Device, null_mut(), 4 * MIB, &[], false)?;
    let filled = fx.fill(fx.queue, p, &[9], 4 * MIB, &[])?;
    free(fx, fx.queue, pool, p, &[filled.get()], false)?;
    expect_success!(fx.api.urUSMPoolDestroyExp(fx.context, fx.device, pool));
    check_eq!(current_pool(fx)?, default_of(fx)?);
    finish(fx, fx.queue)
}

unsafe fn pool_destroy_default(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    let default = default_of(fx)?;
    expect_result!(UR_RESULT_ERROR_INVALID_VALUE, fx.api.urUSMPoolDestroyExp(fx.context, fx.device, default));
    check_eq!(default_of(fx)?, default);
    Ok(())
}

unsafe fn pool_destroy_null(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_HANDLE, fx.api.urUSMPoolDestroyExp(fx.context, fx.device, null_mut()));
    Ok(())
}

/// The default pool is one handle, serves allocations that name no pool
/// (its USED grows by them), and answers the statistics queries.
unsafe fn default_pool(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    let pool = default_of(fx)?;
    check_eq!(default_of(fx)?, pool);
    let before = stat(fx, pool, UR_USM_POOL_INFO_USED_CURRENT_EXP)?;
    let (p, _) = alloc(fx, fx.queue, UsmKind::Device, null_mut(), 2 * MIB, &[], false)?;
    let used = stat(fx, pool, UR_USM_POOL_INFO_USED_CURRENT_EXP)?;
    check!(used >= before + 2 * MIB, "the default pool's USED went from {before} to {used} with a 2 MiB allocation");
    check!(stat(fx, pool, UR_USM_POOL_INFO_RESERVED_CURRENT_EXP)? >= used, "RESERVED below USED");
    let (q, _) = alloc(fx, fx.queue, UsmKind::Device, pool, 2 * MIB, &[], false)?;
    check!(p != q, "two live blocks of the default pool share an address");
    free(fx, fx.queue, null_mut(), p, &[], false)?;
    free(fx, fx.queue, pool, q, &[], false)?;
    finish(fx, fx.queue)?;
    check_eq!(stat(fx, pool, UR_USM_POOL_INFO_USED_CURRENT_EXP)?, before);
    // Its threshold is the adapter's choice; it must read back as set.
    let threshold = stat(fx, pool, UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP)?;
    // Retain and release leave it alone.
    expect_success!(fx.api.urUSMPoolRetain(pool));
    expect_success!(fx.api.urUSMPoolRelease(pool));
    check_eq!(stat(fx, pool, UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP)?, threshold);
    Ok(())
}

/// `query(context, device, out)`, one of the entry points that name a
/// device's pool (`entry`), with no output: INVALID_NULL_POINTER.
unsafe fn pool_query_null_output(
    fx: &DeviceFx,
    entry: &str,
    query: impl FnOnce(ur_context_handle_t, ur_device_handle_t, *mut ur_usm_pool_handle_t) -> Result<ur_result_t, String>,
) -> CaseResult {
    require_pools(fx)?;
    let got = query(fx.context, fx.device, null_mut())?;
    expect_code(UR_RESULT_ERROR_INVALID_NULL_POINTER, got, &format!("{entry}(context, device, null)"))
}

unsafe fn default_pool_null_output(fx: &DeviceFx) -> CaseResult {
    pool_query_null_output(fx, "urUSMPoolGetDefaultDevicePoolExp", |c, d, out| {
        fx.api.urUSMPoolGetDefaultDevicePoolExp(c, d, out)
    })
}

/// After `urUSMPoolSetDevicePoolExp`, allocations that name no pool come
/// from the pool set; setting the default pool again restores it.
unsafe fn set_device_pool(fx: &DeviceFx) -> CaseResult {
    let pool = plain_pool(fx)?;
    expect_success!(fx.api.urUSMPoolSetDevicePoolExp(fx.context, fx.device, pool.get()));
    let (p, _) = alloc(fx, fx.queue, UsmKind::Device, null_mut(), MIB, &[], false)?;
    check!(
        stat(fx, pool.get(), UR_USM_POOL_INFO_USED_CURRENT_EXP)? >= MIB,
        "the current pool did not serve a pool-less allocation"
    );
    free(fx, fx.queue, null_mut(), p, &[], false)?;
    finish(fx, fx.queue)?;
    check_eq!(stat(fx, pool.get(), UR_USM_POOL_INFO_USED_CURRENT_EXP)?, 0usize);
    let default = default_of(fx)?;
    expect_success!(fx.api.urUSMPoolSetDevicePoolExp(fx.context, fx.device, default));
    check_eq!(current_pool(fx)?, default);
    let (q, _) = alloc(fx, fx.queue, UsmKind::Device, null_mut(), MIB, &[], false)?;
    check_eq!(stat(fx, pool.get(), UR_USM_POOL_INFO_USED_CURRENT_EXP)?, 0usize);
    free(fx, fx.queue, null_mut(), q, &[], false)?;
    finish(fx, fx.queue)
}

unsafe fn set_device_pool_foreign(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    let (_context, pool) = other_context_pool(fx)?;
    expect_result!(UR_RESULT_ERROR_INVALID_VALUE, fx.api.urUSMPoolSetDevicePoolExp(fx.context, fx.device, pool.get()));
    check_eq!(current_pool(fx)?, default_of(fx)?);
    Ok(())
}

unsafe fn get_device_pool(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    check_eq!(current_pool(fx)?, default_of(fx)?);
    let pool = exp_pool(fx, 0, None)?;
    expect_success!(fx.api.urUSMPoolSetDevicePoolExp(fx.context, fx.device, pool.get()));
    check_eq!(current_pool(fx)?, pool.get());
    check_eq!(current_pool(fx)?, pool.get());
    let default = default_of(fx)?;
    expect_success!(fx.api.urUSMPoolSetDevicePoolExp(fx.context, fx.device, default));
    check_eq!(current_pool(fx)?, default);
    Ok(())
}

unsafe fn get_device_pool_null_output(fx: &DeviceFx) -> CaseResult {
    pool_query_null_output(fx, "urUSMPoolGetDevicePoolExp", |c, d, out| fx.api.urUSMPoolGetDevicePoolExp(c, d, out))
}

/// Trimming gives back free memory down to the bound, never memory in use.
unsafe fn trim(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    let pool = keeping_pool(fx)?;
    let size = 8 * MIB;
    let mut blocks = Vec::new();
    for _ in 0..4 {
        blocks.push(alloc(fx, fx.queue, UsmKind::Device, pool.get(), size, &[], false)?.0);
    }
    let live = blocks.pop().expect("four");
    for p in blocks {
        free(fx, fx.queue, pool.get(), p, &[], false)?;
    }
    finish(fx, fx.queue)?;
    let reserved = stat(fx, pool.get(), UR_USM_POOL_INFO_RESERVED_CURRENT_EXP)?;
    check!(reserved >= 4 * size, "RESERVED is {reserved} with four 8 MiB blocks allocated and a high threshold");
    expect_success!(fx.api.urUSMPoolTrimToExp(fx.context, fx.device, pool.get(), 0));
    let trimmed = stat(fx, pool.get(), UR_USM_POOL_INFO_RESERVED_CURRENT_EXP)?;
    check!(trimmed >= size, "trimming gave back memory in use: RESERVED {trimmed} with 8 MiB live");
    check!(trimmed < reserved, "trimming to 0 kept all {reserved} bytes, 24 MiB of them free");
    let filled = fx.fill(fx.queue, live, &[0x2e], size, &[])?;
    all_are("the live block after a trim", &fx.read_after(fx.queue, live, size, &[filled.get()])?, 0x2e)?;
    free(fx, fx.queue, pool.get(), live, &[], false)?;
    finish(fx, fx.queue)?;
    expect_success!(fx.api.urUSMPoolTrimToExp(fx.context, fx.device, pool.get(), 0));
    check_eq!(stat(fx, pool.get(), UR_USM_POOL_INFO_RESERVED_CURRENT_EXP)?, 0usize);
    Ok(())
}

unsafe fn trim_foreign(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    let (_context, pool) = other_context_pool(fx)?;
    expect_result!(UR_RESULT_ERROR_INVALID_VALUE, fx.api.urUSMPoolTrimToExp(fx.context, fx.device, pool.get(), 0));
    Ok(())
}

/// RESERVED and USED, current and high, follow allocations and frees; the
/// high-water marks reset to the current value.
unsafe fn pool_statistics(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    let pool = keeping_pool(fx)?;
    let get = |prop| stat(fx, pool.get(), prop);
    check_eq!(get(UR_USM_POOL_INFO_USED_CURRENT_EXP)?, 0usize);
    check_eq!(get(UR_USM_POOL_INFO_USED_HIGH_EXP)?, 0usize);
    let (a, _) = alloc(fx, fx.queue, UsmKind::Device, pool.get(), 3 * MIB, &[], false)?;
    let (b, _) = alloc(fx, fx.queue, UsmKind::Device, pool.get(), MIB, &[], false)?;
    let used = get(UR_USM_POOL_INFO_USED_CURRENT_EXP)?;
    check!((4 * MIB..4 * MIB + 64 * KIB).contains(&used), "USED_CURRENT is {used} with 4 MiB live");
    let reserved = get(UR_USM_POOL_INFO_RESERVED_CURRENT_EXP)?;
    check!(reserved >= used, "RESERVED_CURRENT {reserved} below USED_CURRENT {used}");
    free(fx, fx.queue, pool.get(), a, &[], false)?;
    finish(fx, fx.queue)?;
    let after = get(UR_USM_POOL_INFO_USED_CURRENT_EXP)?;
    check!(after < used && after >= MIB, "USED_CURRENT is {after} after freeing 3 of 4 MiB (was {used})");
    check_eq!(get(UR_USM_POOL_INFO_USED_HIGH_EXP)?, used);
    check!(get(UR_USM_POOL_INFO_RESERVED_HIGH_EXP)? >= reserved, "RESERVED_HIGH below an earlier RESERVED_CURRENT");
    set_stat(fx, pool.get(), UR_USM_POOL_INFO_USED_HIGH_EXP, 0)?;
    check_eq!(get(UR_USM_POOL_INFO_USED_HIGH_EXP)?, after);
    set_stat(fx, pool.get(), UR_USM_POOL_INFO_RESERVED_HIGH_EXP, 0)?;
    check_eq!(get(UR_USM_POOL_INFO_RESERVED_HIGH_EXP)?, get(UR_USM_POOL_INFO_RESERVED_CURRENT_EXP)?);
    check_eq!(get(UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP)?, KEEP);
    check_eq!(get(UR_USM_POOL_INFO_MAXIMUM_SIZE_EXP)?, 0usize);
    free(fx, fx.queue, pool.get(), b, &[], false)?;
    finish(fx, fx.queue)?;
    check_eq!(get(UR_USM_POOL_INFO_USED_CURRENT_EXP)?, 0usize);
    // Only the size is asked for.
    let mut size = 0usize;
    expect_success!(fx.api.urUSMPoolGetInfoExp(pool.get(), UR_USM_POOL_INFO_USED_CURRENT_EXP, null_mut(), &mut size));
    check_eq!(size, std::mem::size_of::<usize>());
    Ok(())
}

unsafe fn info_exp_object_queries(fx: &DeviceFx) -> CaseResult {
    let pool = plain_pool(fx)?;
    for prop in [UR_USM_POOL_INFO_REFERENCE_COUNT, UR_USM_POOL_INFO_CONTEXT] {
        let mut v = [0u8; 16];
        expect_result!(
            UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION,
            fx.api.urUSMPoolGetInfoExp(pool.get(), prop, v.as_mut_ptr().cast(), null_mut())
        );
    }
    Ok(())
}

unsafe fn info_exp_bad_enum(fx: &DeviceFx) -> CaseResult {
    let pool = plain_pool(fx)?;
    let mut v = 0usize;
    let past = ur_usm_pool_info_t(UR_USM_POOL_INFO_USED_HIGH_EXP.0 + 1);
    expect_result!(
        UR_RESULT_ERROR_INVALID_ENUMERATION,
        fx.api.urUSMPoolGetInfoExp(pool.get(), past, (&mut v as *mut usize).cast(), null_mut())
    );
    Ok(())
}

unsafe fn info_exp_null_outputs(fx: &DeviceFx) -> CaseResult {
    let pool = plain_pool(fx)?;
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_POINTER,
        fx.api.urUSMPoolGetInfoExp(pool.get(), UR_USM_POOL_INFO_USED_CURRENT_EXP, null_mut(), null_mut())
    );
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_HANDLE,
        fx.api.urUSMPoolGetInfoExp(null_mut(), UR_USM_POOL_INFO_USED_CURRENT_EXP, null_mut(), &mut 0usize)
    );
    Ok(())
}

/// Memory above the threshold goes back at host synchronisation points:
/// with threshold 0, a freed block's memory is gone after `urQueueFinish`
/// (and after `urEventWait`); raised, it stays reserved.
unsafe fn threshold(fx: &DeviceFx) -> CaseResult {
    let pool = plain_pool(fx)?;
    let get = |prop| stat(fx, pool.get(), prop);
    let size = 16 * MIB;
    let (p, _) = alloc(fx, fx.queue, UsmKind::Device, pool.get(), size, &[], false)?;
    free(fx, fx.queue, pool.get(), p, &[], false)?;
    finish(fx, fx.queue)?;
    check_eq!(get(UR_USM_POOL_INFO_RESERVED_CURRENT_EXP)?, 0usize);
    let (p, _) = alloc(fx, fx.queue, UsmKind::Device, pool.get(), size, &[], false)?;
    let freed = free(fx, fx.queue, pool.get(), p, &[], true)?.expect("asked for");
    fx.wait(freed.get())?;
    check_eq!(get(UR_USM_POOL_INFO_RESERVED_CURRENT_EXP)?, 0usize);
    set_stat(fx, pool.get(), UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP, KEEP)?;
    check_eq!(get(UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP)?, KEEP);
    let (p, _) = alloc(fx, fx.queue, UsmKind::Device, pool.get(), size, &[], false)?;
    free(fx, fx.queue, pool.get(), p, &[], false)?;
    finish(fx, fx.queue)?;
    check!(get(UR_USM_POOL_INFO_RESERVED_CURRENT_EXP)? >= size, "a freed block under the threshold was given back");
    // Lowering the threshold gives back what is free at once.
    set_stat(fx, pool.get(), UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP, 0)?;
    finish(fx, fx.queue)?;
    check_eq!(get(UR_USM_POOL_INFO_RESERVED_CURRENT_EXP)?, 0usize);
    Ok(())
}

/// A pool made with an initial threshold, as libsycl's `memory_pool` with
/// `initial_threshold` makes it (with and without the native-pool flag),
/// keeps a freed block under that threshold reserved across a finish.
unsafe fn initial_threshold(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    let threshold = 16 * MIB;
    let size = 4 * MIB;
    for flags in [0, UR_USM_POOL_FLAG_USE_NATIVE_MEMORY_POOL_EXP.0] {
        let pool = exp_pool(fx, flags, Some((0, threshold)))?;
        let get = |prop| stat(fx, pool.get(), prop);
        check_eq!(get(UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP)?, threshold);
        let (p, _) = alloc(fx, fx.queue, UsmKind::Device, pool.get(), size, &[], false)?;
        let freed = free(fx, fx.queue, pool.get(), p, &[], true)?.expect("asked for");
        fx.wait(freed.get())?;
        finish(fx, fx.queue)?;
        let reserved = get(UR_USM_POOL_INFO_RESERVED_CURRENT_EXP)?;
        check!(
            reserved >= size,
            "flags {flags:#x}: RESERVED_CURRENT is {reserved} after a {size}-byte block under a {threshold}-byte initial threshold was freed"
        );
        check_eq!(get(UR_USM_POOL_INFO_USED_CURRENT_EXP)?, 0usize);
    }
    Ok(())
}

unsafe fn set_info_bad_size(fx: &DeviceFx) -> CaseResult {
    let pool = plain_pool(fx)?;
    let mut v = 0usize;
    expect_result!(UR_RESULT_ERROR_INVALID_SIZE, set_info(fx, pool.get(), UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP, &mut v, 4));
    Ok(())
}

unsafe fn set_info_bad_value(fx: &DeviceFx) -> CaseResult {
    let pool = plain_pool(fx)?;
    let mut v = 5usize;
    for prop in [UR_USM_POOL_INFO_USED_HIGH_EXP, UR_USM_POOL_INFO_RESERVED_HIGH_EXP] {
        expect_result!(UR_RESULT_ERROR_INVALID_VALUE, set_info(fx, pool.get(), prop, &mut v, size_of::<usize>()));
    }
    Ok(())
}

unsafe fn set_info_null_value(fx: &DeviceFx) -> CaseResult {
    let pool = plain_pool(fx)?;
    let threshold = UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP;
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_POINTER, set_info(fx, pool.get(), threshold, null_mut(), size_of::<usize>()));
    Ok(())
}

unsafe fn set_info_read_only(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    let pool = exp_pool(fx, 0, Some((64 * MIB, 0)))?;
    let mut v = 128 * MIB;
    for prop in
        [UR_USM_POOL_INFO_MAXIMUM_SIZE_EXP, UR_USM_POOL_INFO_USED_CURRENT_EXP, UR_USM_POOL_INFO_RESERVED_CURRENT_EXP]
    {
        expect_result!(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION, set_info(fx, pool.get(), prop, &mut v, size_of::<usize>()));
    }
    check_eq!(stat(fx, pool.get(), UR_USM_POOL_INFO_MAXIMUM_SIZE_EXP)?, 64 * MIB);
    let past = ur_usm_pool_info_t(UR_USM_POOL_INFO_USED_HIGH_EXP.0 + 1);
    expect_result!(UR_RESULT_ERROR_INVALID_ENUMERATION, set_info(fx, pool.get(), past, &mut v, size_of::<usize>()));
    Ok(())
}

/// `urUSMPoolGetInfo` answers the Exp statistics of a pool too, with the
/// info protocol's sizes.
unsafe fn pool_get_info_statistics(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    let pool = exp_pool(fx, 0, Some((32 * MIB, MIB)))?;
    let (p, _) = alloc(fx, fx.queue, UsmKind::Device, pool.get(), MIB, &[], false)?;
    for (prop, expected) in [
        (UR_USM_POOL_INFO_MAXIMUM_SIZE_EXP, Some(32 * MIB)),
        (UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP, Some(MIB)),
        (UR_USM_POOL_INFO_USED_CURRENT_EXP, None),
    ] {
        let v = fx.api.pool_info::<usize>(pool.get(), prop)?;
        check_eq!(v, expected.unwrap_or(v));
        check_eq!(v, stat(fx, pool.get(), prop)?);
    }
    check!(
        fx.api.pool_info::<usize>(pool.get(), UR_USM_POOL_INFO_USED_CURRENT_EXP)? >= MIB,
        "USED below the live 1 MiB"
    );
    check_eq!(fx.api.pool_info::<ur_context_handle_t>(pool.get(), UR_USM_POOL_INFO_CONTEXT)?, fx.context);
    free(fx, fx.queue, pool.get(), p, &[], false)?;
    finish(fx, fx.queue)
}
