//! USM commands, markers and barriers as OpenCL commands, each through
//! `queue::submit`; on a CPU device, small fills and copies with nothing
//! left to wait for run on the calling thread (`run_on_host`). The command
//! itself is enqueued by `impl RawQueue`, in `mod.rs`.

use super::{cl_idle, completed_cl, cover_after, settle, Queue};
use crate::driver::{call, wait_list_ptr};
use crate::event::{self, Event};
use crate::conv::check;
use cl3::ext as sys;
use std::ffi::c_void;
use std::sync::Arc;
use sys::{cl_event, cl_int};
use ur_core::engine::Stamp;
use ur_core::*;

/// The largest fill or copy that runs on the calling thread by default (a
/// 64 KiB memset takes a few microseconds, about what the runtime takes to
/// enqueue any command).
const HOST_RUN_MAX: usize = 64 * 1024;

/// The largest fill or copy that runs on the calling thread:
/// `UR_OPENCL_HOST_RUN_MAX` bytes when set (0 sends every command to the
/// runtime, to compare), else [`HOST_RUN_MAX`].
fn host_run_max() -> usize {
    static MAX: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *MAX.get_or_init(|| {
        std::env::var("UR_OPENCL_HOST_RUN_MAX").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(HOST_RUN_MAX)
    })
}

/// Writes `pattern` over the `size` bytes at `dst`.
///
/// # Safety
/// `dst..dst + size` is memory the host may write, that nothing else reads
/// or writes meanwhile.
pub(super) unsafe fn fill_on_host(dst: *mut c_void, pattern: &[u8], size: usize) {
    let out = std::slice::from_raw_parts_mut(dst as *mut u8, size);
    match pattern {
        [byte] => out.fill(*byte),
        _ => out.chunks_mut(pattern.len()).for_each(|c| c.copy_from_slice(&pattern[..c.len()])),
    }
}

/// A marker (or barrier) behind `waits` on `queue`.
pub(super) fn marker(queue: sys::cl_command_queue, barrier: bool, waits: &[cl_event], event: *mut cl_event) -> Result<(), cl_int> {
    let n = waits.len() as sys::cl_uint;
    if barrier {
        check(call!(clEnqueueBarrierWithWaitList(queue, n, wait_list_ptr(waits), event)))
    } else {
        check(call!(clEnqueueMarkerWithWaitList(queue, n, wait_list_ptr(waits), event)))
    }
}

/// Runs `row` for every row, each behind `waits`, then joins the rows in
/// one marker whose event stands for the whole command. When `blocking`,
/// waits for that marker.
pub(super) fn rows(
    queue: sys::cl_command_queue,
    height: usize,
    blocking: bool,
    waits: &[cl_event],
    event: *mut cl_event,
    mut row: impl FnMut(usize, &[cl_event], *mut cl_event) -> Result<(), cl_int>,
) -> Result<(), cl_int> {
    let mut row_events: Vec<opencl3::event::Event> = Vec::with_capacity(height);
    for r in 0..height {
        let mut e: cl_event = std::ptr::null_mut();
        let status = row(r, waits, &mut e);
        if !e.is_null() {
            row_events.push(opencl3::event::Event::new(e));
        }
        status?;
    }
    let joined: Vec<cl_event> = row_events.iter().map(|e| e.get()).collect();
    let mut own: cl_event = std::ptr::null_mut();
    let out = if event.is_null() && blocking { &mut own as *mut cl_event } else { event };
    marker(queue, false, &joined, out)?;
    let own = (!own.is_null()).then(|| opencl3::event::Event::new(own));
    if blocking {
        // SAFETY: `out` was just written by a successful enqueue.
        cl3::event::wait_for_events(&[unsafe { *out }])?;
    }
    drop(own);
    Ok(())
}

/// The address `offset` bytes past `ptr` (a row of a pitched region the
/// core checked to lie inside its allocation).
pub(super) fn at(ptr: *const c_void, offset: usize) -> *mut c_void {
    (ptr as *const u8).wrapping_add(offset) as *mut c_void
}

/// Runs a small fill or copy (`run`, over the memory `touched`) on the
/// calling thread, on a device whose USM the host addresses
/// (`DeviceCl::host_runs_usm`), when nothing it must follow can still be
/// running: every event it waits for has completed, and so has every
/// command the OpenCL queue was given (the user has not had the native
/// queue). Intel's CPU runtime takes 10 to 15 µs to enqueue and run a
/// 1 KiB fill behind libsycl; the memset itself takes tens of
/// nanoseconds. Asked for an event, the command becomes a node of the
/// engine's graph, complete at birth, and its event the queue's
/// completed user event; else the engine never hears of it.
/// Only inside this context's live USM allocations (`in_usm`, which
/// the core found; other pointers are the runtime's to accept or
/// refuse), not on profiling queues (the event's timestamps would be no
/// command's), not past `host_run_max()` bytes. `None` when it does not
/// apply: the caller enqueues the command.
pub(super) fn run_on_host(
    queue: &Queue,
    command: ur_command_t,
    waits: &[&Event],
    want_event: bool,
    (in_usm, size): (bool, usize),
    run: impl FnOnce(),
) -> Option<UrResult<Option<Arc<Event>>>> {
    if !in_usm || !queue.device.raw.host_runs_usm || queue.is_profiling() || size > host_run_max() {
        return None;
    }
    let ctx = &*queue.context;
    let dag = ctx.engine.dag();
    let done = |e: &&Event| {
        let same_context = std::ptr::eq(Arc::as_ptr(&e.context), ctx);
        e.stamp.is_some_and(|s| same_context && dag.is_complete(s))
            || e.raw.cl_status().is_ok_and(|s| s == sys::CL_COMPLETE)
    };
    if !waits.iter().all(done) {
        return None;
    }
    let _order = queue.raw.order_lock();
    if !cl_idle(queue) {
        return None;
    }
    if want_event {
        completed_cl(queue)?;
    }
    run();
    if !want_event {
        // Done before anything could wait for it, and nothing can name
        // it: the engine need not know of it.
        return Some(Ok(None));
    }
    let stamps: Vec<Stamp> = waits.iter().filter(|e| std::ptr::eq(Arc::as_ptr(&e.context), ctx)).filter_map(|e| e.stamp).collect();
    let stamp = dag.record_completed(&queue.lane, &stamps);
    Some(Ok(event::completed(queue, command, stamp)))
}

/// A wait or barrier on an in-order queue whose wait list names only
/// this queue's commands waits for nothing that the queue's order does
/// not already give: it is complete once the previous command is, so it
/// enqueues nothing and that command's event (held by the trackers)
/// serves as its own. libsycl enqueues two such waits with events per
/// in-order async allocation, and a marker costs the runtime a command
/// and an event. `None` when it does not apply, or when no event of
/// the previous command is held (the caller enqueues a marker); not on
/// profiling queues, where the event's timestamps would be another
/// command's.
pub(super) fn wait_in_order(
    queue: &Queue,
    command: ur_command_t,
    barrier: bool,
    waits: &[&Event],
    want_event: bool,
) -> Option<Option<Arc<Event>>> {
    let own = |e: &&Event| e.queue.as_ref().is_some_and(|q| std::ptr::eq(Arc::as_ptr(q), queue));
    if !queue.lane.is_in_order() || queue.is_profiling() || !waits.iter().all(own) {
        return None;
    }
    let stamps: Vec<Stamp> = waits.iter().filter_map(|e| e.stamp_in(&queue.context)).collect();
    let _order = queue.raw.order_lock();
    let tail = queue.lane.tail().seq;
    let cover = match want_event {
        true => Some(cover_after(queue, tail)?),
        false => None,
    };
    let dag = queue.context.engine.dag();
    let stamp = ur_core::queue::record_new(dag, &queue.lane, barrier, waits.is_empty(), &stamps);
    // Without an event the node needs none: a later command's covers it.
    Some(cover.and_then(|c| settle(queue, command, stamp, c, true)))
}
