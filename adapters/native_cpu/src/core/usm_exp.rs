//! Stream-ordered allocation (`urEnqueueUSM*AllocExp`, `urEnqueueUSMFreeExp`):
//! the engine decides which block to hand out and whether a command is
//! needed at all; the queue runs that command (zeroing the block when the
//! pool asks) in its order, after the engine's extra dependency.
//!
//! On an in-order queue with no wait list and no event the engine usually
//! needs no command: the call costs a pool lookup and the engine's work,
//! nothing is queued and no event exists.

use super::enqueue::Command;
use super::event::Event;
use super::queue::{EngineCommand, Queue};
use super::usm::UsmKind;
use super::usm_pool::Pool;
use std::sync::Arc;
use ur_core::engine;
use ur_core::usm_async::alloc_command;
use ur_core::*;

/// Fills a new block with zeros, as its allocation command.
fn zero_block(ptr: *mut u8, size: usize) -> Command {
    let addr = ptr as usize;
    Command::Host(Box::new(move || {
        // SAFETY: the engine gave this block to the allocation being run;
        // no command ordered after it has started yet.
        unsafe { (addr as *mut u8).write_bytes(0, size) };
        Ok(())
    }))
}

impl Queue {
    /// `urEnqueueUSM{Device,Shared,Host}AllocExp` from `pool`, or from the
    /// device's current pool when none is named. `deps` is the wait list,
    /// reduced to its pending events.
    pub fn alloc_async(
        &self,
        kind: UsmKind,
        pool: Option<&Arc<Pool>>,
        size: usize,
        deps: Vec<Arc<Event>>,
        want_event: bool,
    ) -> UrResult<(*mut u8, Option<Arc<Event>>)> {
        let q = &self.shared;
        if size == 0 || size as u64 > q.device.max_alloc_size() {
            return Err(UR_RESULT_ERROR_INVALID_USM_SIZE);
        }
        let context = &q.context;
        let engine = match pool {
            Some(p) if !p.serves(context, &q.device) => return Err(UR_RESULT_ERROR_INVALID_VALUE),
            Some(p) => p.engine_pool(kind)?.clone(),
            None => context.with_current_pool(&q.device, |p| p.engine_pool(kind).cloned())??,
        };
        // A pending event of another context orders nothing in this one's
        // graph, but the allocation must still wait for it: that needs a command.
        let want_node = want_event || !deps.is_empty();
        self.submit_engine(deps, |lane, wait| {
            let a = engine.alloc(lane, wait, size, 0, want_node)?;
            let command = a.stamp.map(|stamp| EngineCommand {
                stamp,
                command_type: alloc_command(kind),
                command: if a.zero { zero_block(a.ptr.as_ptr(), a.size) } else { Command::Marker },
                after: a.deps.as_slice().first().copied(),
                want_event,
            });
            Ok((a.ptr.as_ptr(), command))
        })
    }

    /// `urEnqueueUSMFreeExp`. Only the exact base of a live block of `pool`
    /// (or, when none is named, of any pool of the context) is accepted;
    /// anything else is `INVALID_VALUE` and releases nothing.
    pub fn free_async(
        &self,
        pool: Option<&Arc<Pool>>,
        ptr: *mut u8,
        deps: Vec<Arc<Event>>,
        want_event: bool,
    ) -> UrResult<Option<Arc<Event>>> {
        let q = &self.shared;
        let context = &q.context;
        if pool.is_some_and(|p| !p.belongs_to(context)) {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        // The likeliest owner first: device memory of the device's current pool.
        let first: Option<Arc<engine::Pool>> = match pool {
            Some(p) => p.engine.get(UsmKind::Device).cloned(),
            None => context.with_current_pool(&q.device, |p| p.engine.get(UsmKind::Device).cloned())?,
        };
        let want_node = want_event || !deps.is_empty();
        let ((), event) = self.submit_engine(deps, |lane, wait| {
            let free = |e: &engine::Pool| e.free(lane, wait, ptr, want_node);
            let out = match first.as_deref().map(free) {
                Some(Ok(out)) => out,
                _ => {
                    let owner =
                        context.slabs.owner_of(ptr as usize).filter(|(p, _)| pool.is_none_or(|n| Arc::ptr_eq(p, n)));
                    let (owner, kind) = owner.ok_or(UR_RESULT_ERROR_INVALID_VALUE)?;
                    free(owner.engine.get(kind).ok_or(UR_RESULT_ERROR_INVALID_VALUE)?)?
                }
            };
            let command = out.stamp.map(|stamp| EngineCommand {
                stamp,
                command_type: UR_COMMAND_ENQUEUE_USM_FREE_EXP,
                command: Command::Marker,
                after: out.deps.as_slice().first().copied(),
                want_event,
            });
            Ok(((), command))
        })?;
        Ok(event)
    }
}
