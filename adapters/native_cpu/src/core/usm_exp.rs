//! Stream-ordered allocation (`urEnqueueUSM*AllocExp`, `urEnqueueUSMFreeExp`):
//! the engine decides which block to hand out and whether a command is
//! needed at all; the queue runs that command (zeroing the block when the
//! pool asks) in its order, after the engine's extra dependency.
//!
//! On an in-order queue with no wait list and no event the engine usually
//! needs no command: the call costs a pool lookup and the engine's work,
//! nothing is queued and no event exists.

use super::event::Event;
use super::queue::{EngineCommand, Queue};
use super::usm::UsmKind;
use super::usm_pool::Pool;
use std::sync::Arc;
use ur_core::engine;
use ur_core::usm_async::alloc_command;
use ur_core::*;

impl Queue {
    /// `urEnqueueUSM{Device,Shared,Host}AllocExp` from `pool`, or from the
    /// device's current pool when none is named. `deps` is the wait list,
    /// reduced to its pending events.
    pub fn alloc_async(
        &self,
        kind: UsmKind,
        pool: Option<&Pool>,
        size: usize,
        deps: Vec<Arc<Event>>,
        want_event: bool,
    ) -> UrResult<(*mut u8, Option<Arc<Event>>)> {
        let q = &self.shared;
        if size == 0 || size as u64 > q.device.max_alloc_size() {
            return Err(UR_RESULT_ERROR_INVALID_USM_SIZE);
        }
        // The hot path: in order, nothing to wait for, no event, the
        // default pool. Usually the engine needs no command at all.
        if deps.is_empty() && !want_event && pool.is_none() && self.engine_fast_path() {
            if let Some(engine) = q.context.current_default_pool(&q.device).and_then(|p| p.engine.get(kind)) {
                let a = engine.alloc(&q.lane, &[], size, 0, false)?;
                let event = match a.stamp {
                    None => None,
                    Some(stamp) => self.enqueue_recorded(EngineCommand {
                        stamp,
                        command_type: alloc_command(kind),
                        zero: a.zero.then_some((a.ptr.as_ptr() as usize, a.size)),
                        after: a.deps.as_slice().first().copied(),
                        want_event,
                    }),
                };
                return Ok((a.ptr.as_ptr(), event));
            }
        }
        // A pending event of another context orders nothing in this one's
        // graph, but the allocation must still wait for it: that needs a command.
        let want_node = want_event || !deps.is_empty();
        let run = |engine: &engine::Pool| {
            self.submit_engine(deps, |lane, wait| {
                let a = engine.alloc(lane, wait, size, 0, want_node)?;
                let command = a.stamp.map(|stamp| EngineCommand {
                    stamp,
                    command_type: alloc_command(kind),
                    zero: a.zero.then_some((a.ptr.as_ptr() as usize, a.size)),
                    after: a.deps.as_slice().first().copied(),
                    want_event,
                });
                Ok((a.ptr.as_ptr(), command))
            })
        };
        let context = &q.context;
        match pool {
            Some(p) if !p.serves(context, &q.device) => Err(UR_RESULT_ERROR_INVALID_VALUE),
            Some(p) => run(p.engine_pool(kind)?),
            None => context.with_current_pool(&q.device, |p| run(p.engine_pool(kind)?))?,
        }
    }

    /// `urEnqueueUSMFreeExp`. Only the exact base of a live block of `pool`
    /// (or, when none is named, of any pool of the context) is accepted;
    /// anything else is `INVALID_VALUE` and releases nothing.
    pub fn free_async(
        &self,
        pool: Option<&Pool>,
        ptr: *mut u8,
        deps: Vec<Arc<Event>>,
        want_event: bool,
    ) -> UrResult<Option<Arc<Event>>> {
        let q = &self.shared;
        let context = &q.context;
        // The hot path, as for allocations: device memory of the default pool.
        if deps.is_empty() && !want_event && pool.is_none() && self.engine_fast_path() {
            let engine = context.current_default_pool(&q.device).and_then(|p| p.engine.get(UsmKind::Device));
            if let Some(Ok(out)) = engine.map(|e| e.free(&q.lane, &[], ptr, false)) {
                return Ok(out.stamp.and_then(|stamp| {
                    self.enqueue_recorded(EngineCommand {
                        stamp,
                        command_type: UR_COMMAND_ENQUEUE_USM_FREE_EXP,
                        zero: None,
                        after: out.deps.as_slice().first().copied(),
                        want_event,
                    })
                }));
            }
        }
        if pool.is_some_and(|p| !p.belongs_to(context)) {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        let want_node = want_event || !deps.is_empty();
        // The likeliest owner is tried first (device memory of the named
        // pool, or of the device's current pool), then the slab's owner.
        let run = |first: Option<&engine::Pool>| {
            self.submit_engine(deps, |lane, wait| {
                let free = |e: &engine::Pool| e.free(lane, wait, ptr, want_node);
                let out = match first.map(free) {
                    Some(Ok(out)) => out,
                    _ => {
                        let owner = context.slabs.owner_of(ptr as usize);
                        let owner = owner.filter(|(p, _)| pool.is_none_or(|n| std::ptr::eq(&**p, n)));
                        let (owner, kind) = owner.ok_or(UR_RESULT_ERROR_INVALID_VALUE)?;
                        free(owner.engine.get(kind).ok_or(UR_RESULT_ERROR_INVALID_VALUE)?)?
                    }
                };
                let command = out.stamp.map(|stamp| EngineCommand {
                    stamp,
                    command_type: UR_COMMAND_ENQUEUE_USM_FREE_EXP,
                    zero: None,
                    after: out.deps.as_slice().first().copied(),
                    want_event,
                });
                Ok(((), command))
            })
        };
        let ((), event) = match pool {
            Some(p) => run(p.engine.get(UsmKind::Device).map(|e| &**e))?,
            None => context.with_current_pool(&q.device, |p| run(p.engine.get(UsmKind::Device).map(|e| &**e)))??,
        };
        Ok(event)
    }
}
