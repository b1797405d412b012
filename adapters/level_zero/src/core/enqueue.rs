//! Commands: USM fills and copies, waits, barriers and markers as appends
//! to a queue's immediate command list, each through `Queue::submit`; and
//! stream-ordered USM (`urEnqueueUSM*AllocExp`, `urEnqueueUSMFreeExp`)
//! through the shared async pool engine.
//!
//! A marker (an event wait, a prefetch or advice hint, an async allocation
//! or free that the engine gave a node) is a barrier with a wait list:
//! Level Zero's only command that signals after other events and does
//! nothing else. It also holds back later commands, which only ever waits
//! more than UR asks.

use super::context::Context;
use super::device::Device;
use super::event::Event;
use super::queue::{Node, Queue, Waits};
use super::usm_pool::UsmPool;
use crate::conv::ZeExt;
use crate::driver::{check, ImmediateList};
use crate::ze;
use level_zero_sys::*;
use std::ffi::c_void;
use std::sync::Arc;
use ur_core::engine::UsmKind;
use ur_core::hal::UsmCommand;
use ur_core::usm_async::alloc_command;
use ur_core::usm_pool::FreeScope;
use ur_core::*;

fn wait_ptr(waits: &mut [ze_event_handle_t]) -> *mut ze_event_handle_t {
    if waits.is_empty() {
        std::ptr::null_mut()
    } else {
        waits.as_mut_ptr()
    }
}

/// A barrier after `waits` (after every earlier command when empty) that
/// signals `signal`.
fn barrier(list: ze_command_list_handle_t, signal: ze_event_handle_t, waits: &mut [ze_event_handle_t]) -> Result<(), ze_result_t> {
    // SAFETY: a live list; live events of its context.
    check(unsafe { ze!(zeCommandListAppendBarrier(list, signal, waits.len() as u32, wait_ptr(waits))) })
}

fn fill(
    list: ze_command_list_handle_t,
    dst: *mut c_void,
    pattern: &[u8],
    size: usize,
    signal: ze_event_handle_t,
    waits: &mut [ze_event_handle_t],
) -> Result<(), ze_result_t> {
    // SAFETY: a live list; memory the core checked to lie in a live
    // allocation; the pattern is kept alive until the command completes.
    check(unsafe {
        ze!(zeCommandListAppendMemoryFill(
            list,
            dst,
            pattern.as_ptr() as *const c_void,
            pattern.len(),
            size,
            signal,
            waits.len() as u32,
            wait_ptr(waits)
        ))
    })
}

fn copy(
    list: ze_command_list_handle_t,
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    signal: ze_event_handle_t,
    waits: &mut [ze_event_handle_t],
) -> Result<(), ze_result_t> {
    // SAFETY: a live list; regions the core checked.
    check(unsafe { ze!(zeCommandListAppendMemoryCopy(list, dst, src, size, signal, waits.len() as u32, wait_ptr(waits))) })
}

/// The address `offset` bytes past `ptr`.
fn at(ptr: *const c_void, offset: usize) -> *mut c_void {
    (ptr as *const u8).wrapping_add(offset) as *mut c_void
}

/// A pattern the device cannot fill with, as the bytes of a copy.
fn repeated(pattern: &[u8], size: usize) -> Box<[u8]> {
    pattern.iter().copied().cycle().take(size).collect()
}

impl Queue {
    /// A checked USM command, a wait or a barrier.
    pub fn enqueue_usm<'a>(
        self: &Arc<Self>,
        command: UsmCommand<'_>,
        waits: impl IntoIterator<Item = &'a Event>,
        want_event: bool,
    ) -> UrResult<Option<Arc<Event>>> {
        let kind = command.command_type();
        let waits = self.translate(waits)?;
        let max_pattern = self.device.facts.max_fill_pattern;
        match command {
            UsmCommand::Wait { barrier: is_barrier } => {
                let node = if is_barrier { Node::Barrier } else { Node::Command };
                self.submit(kind, node, waits, want_event, None, |l, s, w| barrier(l, s, w))
            }
            UsmCommand::Prefetch { .. } | UsmCommand::Advise { .. } => {
                // Hints: the memory is where host and device reach it.
                self.submit(kind, Node::Command, waits, want_event, None, |l, s, w| barrier(l, s, w))
            }
            UsmCommand::Fill { dst, pattern, size, .. } if pattern.len() <= max_pattern => {
                let kept: Box<[u8]> = pattern.into();
                let p = kept.as_ptr();
                let n = kept.len();
                self.submit(kind, Node::Command, waits, want_event, Some(kept), |l, s, w| {
                    // SAFETY: `p` points at the kept copy of the pattern.
                    fill(l, dst, unsafe { std::slice::from_raw_parts(p, n) }, size, s, w)
                })
            }
            UsmCommand::Fill { dst, pattern, size, .. } => {
                let bytes = repeated(pattern, size);
                let src = bytes.as_ptr() as *const c_void;
                self.submit(kind, Node::Command, waits, want_event, Some(bytes), |l, s, w| copy(l, dst, src, size, s, w))
            }
            UsmCommand::Copy { dst, src, size, .. } => {
                self.submit(kind, Node::Command, waits, want_event, None, |l, s, w| copy(l, dst, src, size, s, w))
            }
            UsmCommand::Fill2D { dst, pitch, pattern, width, height } => {
                // One row pattern, copied to every row.
                let row = repeated(pattern, width);
                let src = row.as_ptr() as *const c_void;
                self.submit(kind, Node::Command, waits, want_event, Some(row), |l, s, w| {
                    rows(l, height, s, w, |r, w| copy(l, at(dst, r * pitch), src, width, std::ptr::null_mut(), w))
                })
            }
            UsmCommand::Copy2D { dst, dst_pitch, src, src_pitch, width, height } => {
                self.submit(kind, Node::Command, waits, want_event, None, |l, s, w| {
                    rows(l, height, s, w, |r, w| {
                        copy(l, at(dst, r * dst_pitch), at(src, r * src_pitch), width, std::ptr::null_mut(), w)
                    })
                })
            }
        }
    }
}

/// Appends `row` for every row, each after `waits`, then a barrier that
/// signals `signal` once all have run.
fn rows(
    list: ze_command_list_handle_t,
    height: usize,
    signal: ze_event_handle_t,
    waits: &mut [ze_event_handle_t],
    mut row: impl FnMut(usize, &mut [ze_event_handle_t]) -> Result<(), ze_result_t>,
) -> Result<(), ze_result_t> {
    for r in 0..height {
        row(r, waits)?;
    }
    barrier(list, signal, &mut [])
}

/// Zeroes `size` bytes at `ptr` (of `device`'s memory, or host memory) and
/// waits: a new allocation of a zero-initialising pool.
pub fn zero_fill(ctx: &Context, device: &Arc<Device>, ptr: *mut c_void, size: usize) -> UrResult {
    let list = ImmediateList::create(&ctx.ze, device.ze, device.facts.ordinal).ur()?;
    let done = ctx.event_cache(false).take()?;
    fill(list.0, ptr, &[0u8], size, done.raw, &mut []).ur()?;
    done.wait()
}

impl Queue {
    /// `urEnqueueUSM{Device,Shared,Host}AllocExp`: a block of `pool` (the
    /// device's current pool when `None`) for commands ordered after this
    /// one, and its event when `want_event`.
    pub fn alloc_async<'a>(
        self: &Arc<Self>,
        kind: UsmKind,
        pool: Option<&UsmPool>,
        size: usize,
        waits: impl IntoIterator<Item = &'a Event>,
        want_event: bool,
    ) -> UrResult<(*mut c_void, Option<Arc<Event>>)> {
        let waits = self.translate(waits)?;
        match pool {
            Some(p) => self.alloc_from(p, kind, size, waits, want_event),
            None => self.with_current_pool(|p| self.alloc_from(p, kind, size, waits, want_event))?,
        }
    }

    fn alloc_from(
        self: &Arc<Self>,
        pool: &UsmPool,
        kind: UsmKind,
        size: usize,
        waits: Waits,
        want_event: bool,
    ) -> UrResult<(*mut c_void, Option<Arc<Event>>)> {
        let engine_pool = pool.engine_pool(kind, &self.device)?;
        let order = self.order();
        let a = engine_pool.alloc(&self.lane, &waits.stamps, size, 0, want_event)?;
        let ptr = a.ptr.as_ptr() as *mut c_void;
        let Some(stamp) = a.stamp else { return Ok((ptr, None)) };
        let command = alloc_command(kind);
        if !a.zero && self.needs_nothing_run(&waits, a.deps.as_slice()) {
            if let Some(event) = self.share_newest(&order, command, stamp, want_event) {
                return Ok((ptr, event));
            }
        }
        let node = Node::Given { stamp, deps: a.deps.as_slice() };
        let zero = a.zero.then_some(a.size);
        let submitted = self.submit_locked(order, command, node, waits, want_event, None, |l, s, w| match zero {
            Some(bytes) => fill(l, ptr, &[0u8], bytes, s, w),
            None => barrier(l, s, w),
        });
        match submitted {
            Ok(event) => Ok((ptr, event)),
            Err(e) => {
                engine_pool.give_back_unrun(&self.lane, ptr as *const u8, stamp);
                Err(e)
            }
        }
    }

    /// In order, with a wait list and engine dependencies that name only
    /// this queue's earlier commands: its newest command covers them all.
    fn needs_nothing_run(&self, waits: &Waits, deps: &[ur_core::engine::Stamp]) -> bool {
        self.is_in_order() && waits.only_lane(&self.lane) && deps.iter().all(|d| d.lane == self.lane.id())
    }

    /// `urEnqueueUSMFreeExp`: only the exact base of a live asynchronous
    /// allocation (of `pool`, when one is named) is accepted, else
    /// `INVALID_VALUE` and nothing changes.
    pub fn free_async<'a>(
        self: &Arc<Self>,
        pool: Option<&UsmPool>,
        ptr: *mut c_void,
        waits: impl IntoIterator<Item = &'a Event>,
        want_event: bool,
    ) -> UrResult<Option<Arc<Event>>> {
        let waits = self.translate(waits)?;
        let order = self.order();
        // Memory no engine pool of this context holds, or another pool's
        // than the one named, is not this free's.
        let slabs = &self.context.slabs;
        let free = |e: &ur_core::engine::Pool| {
            e.free(&self.lane, &waits.stamps, ptr as *const u8, want_event)
        };
        let scope = FreeScope::of(pool);
        let free_from = |p: &UsmPool| p.base.free_async_block(slabs, Some(&self.device), scope, ptr as usize, free);
        let out = match pool {
            Some(p) => free_from(p),
            None => self.with_current_pool(free_from)?,
        }
        .ok_or(UR_RESULT_ERROR_INVALID_VALUE)??;
        let Some(stamp) = out.stamp else { return Ok(None) };
        let command = UR_COMMAND_ENQUEUE_USM_FREE_EXP;
        if self.needs_nothing_run(&waits, out.deps.as_slice()) {
            if let Some(event) = self.share_newest(&order, command, stamp, want_event) {
                return Ok(event);
            }
        }
        let node = Node::Given { stamp, deps: out.deps.as_slice() };
        self.submit_locked(order, command, node, waits, want_event, None, |l, s, w| barrier(l, s, w))
    }
}
