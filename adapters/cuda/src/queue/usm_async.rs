//! The async-alloc extension's allocations and frees that CUDA serves
//! itself: device memory of a native pool (`cuMemAllocFromPoolAsync`,
//! `cuMemFreeAsync`), outside the engine. Everything else is the core's
//! (`ur_core::queue::usm_async`), through `RawQueue::enqueue_recorded`.

use super::{submit_untracked, Queue};
use crate::event::Event;
use crate::memory::pool::UsmPool;
use crate::memory::{self, Allocation, Backing, UsmKind};
use crate::conv::CuExt;
use crate::driver::{self, Stream};
use std::ffi::c_void;
use std::sync::Arc;
use ur_core::*;

/// An async allocation of device memory from a native pool: `None` for
/// anything else (the engine serves it).
pub fn alloc_native(
    queue: &Queue,
    kind: UsmKind,
    pool: &UsmPool,
    size: usize,
    wait: &[&Event],
    want_event: bool,
) -> Option<UrResult<(*mut c_void, Option<Arc<Event>>)>> {
    if kind != UsmKind::Device || !pool.raw.is_native() {
        return None;
    }
    let command = UR_COMMAND_ENQUEUE_USM_DEVICE_ALLOC_EXP;
    let alloc = |s: &Stream| memory::pool::alloc_async(pool, size, s.raw());
    Some(submit_untracked(queue, command, wait, want_event, alloc).map(|done| {
        let p = done.value as usize;
        let allocation = Allocation::new(p, p, size, kind, queue.raw.device_index, memory::pool::arc(pool), Backing::NativePool);
        queue.context.usm.insert(allocation);
        (p as *mut c_void, done.event)
    }))
}

/// An async free of memory outside the engine: a native pool's
/// allocation, in the registry.
pub fn free_native_async(
    queue: &Queue,
    pool: Option<&UsmPool>,
    ptr: *mut c_void,
    wait: &[&Event],
    want_event: bool,
) -> UrResult<Option<Arc<Event>>> {
    let a = queue
        .context
        .usm
        .remove_if(ptr as usize, |a| check_native_free(pool, a))
        // An interior, freed or foreign pointer: spec/usm_async.md.
        .map_err(|_| UR_RESULT_ERROR_INVALID_VALUE)?;
    free_native_block(queue, a, wait, want_event)
}

/// Whether an async free naming `pool` may free `a`: only memory a pool
/// gave out, and only the named pool's.
fn check_native_free(pool: Option<&UsmPool>, a: &Allocation) -> UrResult {
    if !a.backing.is_pool() {
        return Err(UR_RESULT_ERROR_INVALID_VALUE);
    }
    match (pool, &a.pool) {
        (Some(p), Some(owner)) if !std::ptr::eq(p, &**owner) => Err(UR_RESULT_ERROR_INVALID_VALUE),
        _ => Ok(()),
    }
}

/// Returns `a`, taken from the registry, to its native pool in stream
/// order; should that fail it goes back to the registry, still valid.
fn free_native_block(
    queue: &Queue,
    a: Allocation,
    wait: &[&Event],
    want_event: bool,
) -> UrResult<Option<Arc<Event>>> {
    let command = UR_COMMAND_ENQUEUE_USM_FREE_EXP;
    let result = submit_untracked(queue, command, wait, want_event, |s| {
        // SAFETY: the registry held this live pool allocation; work that
        // uses it is ordered before this point of the stream.
        unsafe { driver::free_async(a.raw() as u64, s.raw()) }.cu()
    })
    .map(|done| done.event);
    if result.is_err() {
        // Nothing was freed: the allocation stays valid.
        queue.context.usm.insert(a);
    }
    result
}
