//! The asynchronous allocations and frees of the async-alloc extension
//! (`urEnqueueUSM*AllocExp`, `urEnqueueUSMFreeExp`) on a queue.

use super::tracking::stamps_of;
use super::{Node, Queue};
use crate::event::Event;
use crate::memory::pool::UsmPool;
use crate::memory::{Allocation, Backing, UsmKind};
use crate::conv::CuExt;
use crate::driver::{self, Stream};
use std::ffi::c_void;
use std::sync::Arc;
use ur_core::engine;
use ur_core::usm_pool::FreeScope;
use ur_core::*;

impl Queue {
    /// `urEnqueueUSM{Device,Shared,Host}AllocExp`: device memory of a
    /// native pool comes from `cuMemAllocFromPoolAsync`; everything else
    /// from the engine.
    pub fn usm_alloc_async(
        self: &Arc<Self>,
        kind: UsmKind,
        pool: Option<&UsmPool>,
        size: usize,
        wait: &[&Event],
        want_event: bool,
    ) -> UrResult<(*mut c_void, Option<Arc<Event>>)> {
        // Borrowed, not cloned: threads on other queues share the pool and
        // would share its reference count.
        match pool {
            Some(p) => self.alloc_from(kind, p, size, wait, want_event),
            None => self.with_current_pool(|p| self.alloc_from(kind, p, size, wait, want_event))?,
        }
    }

    fn alloc_from(
        self: &Arc<Self>,
        kind: UsmKind,
        pool: &UsmPool,
        size: usize,
        wait: &[&Event],
        want_event: bool,
    ) -> UrResult<(*mut c_void, Option<Arc<Event>>)> {
        let context = &self.context;
        if kind == UsmKind::Device && pool.is_native() {
            let command = UR_COMMAND_ENQUEUE_USM_DEVICE_ALLOC_EXP;
            let alloc = |s: &Stream| pool.alloc_async(size, s.raw());
            let done = self.submit_untracked(command, wait, want_event, alloc)?;
            let p = done.value as usize;
            context.usm.insert(Allocation::new(
                p,
                p,
                size,
                kind,
                self.device_index,
                pool.arc(),
                Backing::NativePool,
            ));
            return Ok((p as *mut c_void, done.event));
        }
        let engine_pool = pool.engine_pool(kind, Some(&self.device))?;
        self.alloc_from_engine(kind, engine_pool, size, wait, want_event)
    }

    fn alloc_from_engine(
        self: &Arc<Self>,
        kind: UsmKind,
        engine_pool: &engine::Pool,
        size: usize,
        wait: &[&Event],
        want_event: bool,
    ) -> UrResult<(*mut c_void, Option<Arc<Event>>)> {
        let context = &self.context;
        context.start_tracking();
        let lane = self.lane();
        let submitting = self.begin_submit();
        let a = engine_pool.alloc(&lane, &stamps_of(wait), size, 0, want_event)?;
        let p = a.ptr.as_ptr() as usize;
        let event = match a.stamp {
            None => None,
            Some(stamp) => {
                let command = match kind {
                    UsmKind::Device => UR_COMMAND_ENQUEUE_USM_DEVICE_ALLOC_EXP,
                    UsmKind::Shared => UR_COMMAND_ENQUEUE_USM_SHARED_ALLOC_EXP,
                    UsmKind::Host => UR_COMMAND_ENQUEUE_USM_HOST_ALLOC_EXP,
                };
                let (zero, bytes) = (a.zero, a.size);
                let node = Node::Given {
                    stamp,
                    deps: a.deps.as_slice(),
                    host_only: !zero,
                };
                let run = self.submit_node(&submitting, command, wait, node, want_event, |s| {
                    if zero {
                        // SAFETY: the block is ours and `bytes` long.
                        unsafe { driver::memset_async(p as u64, 0, 1, bytes, s.raw()) }.cu()?;
                    }
                    Ok(())
                });
                match run {
                    Ok(done) => done.event,
                    Err(e) => {
                        engine_pool.give_back_unrun(&lane, p as *const u8, stamp);
                        return Err(e);
                    }
                }
            }
        };
        // An engine block has no registry entry: the context's slab map
        // finds it.
        Ok((p as *mut c_void, event))
    }

    /// `urEnqueueUSMFreeExp`: only the exact base of a live asynchronous
    /// allocation (of `pool`, when one is named) is accepted, anything else
    /// is `INVALID_VALUE` and releases nothing; the memory goes back once
    /// the work before this point of the queue is done.
    pub fn usm_free_async(
        self: &Arc<Self>,
        pool: Option<&UsmPool>,
        ptr: *mut c_void,
        wait: &[&Event],
        want_event: bool,
    ) -> UrResult<Option<Arc<Event>>> {
        let context = &self.context;
        if pool.is_some_and(|p| p.is_native()) {
            // Likely a native pool's device allocation (its other kinds are
            // the engine's): one registry lookup takes it.
            match context.usm.remove_if(ptr as usize, |a| Self::check_native_free(pool, a)) {
                Ok(a) => return self.free_native_block(a, wait, want_event),
                Err(UR_RESULT_ERROR_INVALID_MEM_OBJECT) => {}
                Err(e) => return Err(e),
            }
        }
        let lane = self.lane();
        let stamps = stamps_of(wait);
        let submitting = self.begin_submit();
        let free = |e: &engine::Pool| e.free(&lane, &stamps, ptr as *const u8, want_event);
        let scope = FreeScope::of(pool);
        let free_from =
            |p: &UsmPool| p.base.free_async_block(&context.slabs, Some(&*self.device), scope, ptr as usize, free);
        let freed = match pool {
            Some(p) => free_from(p),
            None => self.with_current_pool(free_from)?,
        };
        let out = match freed {
            // An interior, freed or foreign pointer: spec/usm_async.md.
            Some(done) => done.map_err(|_| UR_RESULT_ERROR_INVALID_VALUE)?,
            None => {
                drop(submitting);
                return self.free_native_async(pool, ptr, wait, want_event);
            }
        };
        let Some(stamp) = out.stamp else {
            // In order, nothing to wait for: the free sits at the queue's
            // tail and costs nothing.
            return Ok(None);
        };
        let node = Node::Given {
            stamp,
            deps: out.deps.as_slice(),
            host_only: true,
        };
        // The engine has taken the block back whatever happens now; a
        // failure here only loses the event.
        let command = UR_COMMAND_ENQUEUE_USM_FREE_EXP;
        Ok(self
            .submit_node(&submitting, command, wait, node, want_event, |_| Ok(()))?
            .event)
    }

    /// [`usm_free_async`](Self::usm_free_async) of memory outside the
    /// engine: a native pool's allocation, in the registry.
    fn free_native_async(
        self: &Arc<Self>,
        pool: Option<&UsmPool>,
        ptr: *mut c_void,
        wait: &[&Event],
        want_event: bool,
    ) -> UrResult<Option<Arc<Event>>> {
        let a = self
            .context
            .usm
            .remove_if(ptr as usize, |a| Self::check_native_free(pool, a))
            // An interior, freed or foreign pointer: spec/usm_async.md.
            .map_err(|_| UR_RESULT_ERROR_INVALID_VALUE)?;
        self.free_native_block(a, wait, want_event)
    }

    /// Whether an async free naming `pool` may free `a`: only memory a
    /// pool gave out, and only the named pool's.
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
        self: &Arc<Self>,
        a: Allocation,
        wait: &[&Event],
        want_event: bool,
    ) -> UrResult<Option<Arc<Event>>> {
        let command = UR_COMMAND_ENQUEUE_USM_FREE_EXP;
        let result = self
            .submit_untracked(command, wait, want_event, |s| {
                // SAFETY: the registry held this live pool allocation; work
                // that uses it is ordered before this point of the stream.
                unsafe { driver::free_async(a.raw() as u64, s.raw()) }.cu()
            })
            .map(|done| done.event);
        if result.is_err() {
            // Nothing was freed: the allocation stays valid.
            self.context.usm.insert(a);
        }
        result
    }
}
