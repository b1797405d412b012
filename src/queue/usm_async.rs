//! `urEnqueueUSM{Device,Shared,Host}AllocExp` and `urEnqueueUSMFreeExp`,
//! written once for every backend (`spec/usm_async.md`).
//!
//! The engine decides which block to hand out and whether a command is
//! needed at all: on an in-order queue with nothing the engine cannot see
//! in the wait list and no event wanted it usually needs none, and the call
//! costs a pool lookup and the engine's work. When it records a node, the
//! backend runs that node's command (a marker, or a zeroing fill) behind
//! the wait list and the engine's extra dependencies, through
//! `RawQueue::enqueue_recorded`. The engine's decision and the enqueue
//! happen under the queue's order (`RawQueue::order`), so that the
//! engine's sequence numbers follow the backend's queue.
//!
//! No table entry is made per allocation: the context's slab map finds the
//! pool behind any pointer, and the pool knows its live blocks.

use super::{EngineCommand, Waits};
use crate::abi::*;
use crate::engine::UsmKind;
use crate::event::Event;
use crate::hal::{Backend, Events};
use crate::queue::object::{Queue, RawQueue};
use crate::pool::UsmPool;
use crate::usm_async::alloc_command;
use crate::usm_pool::FreeScope;
use crate::UrResult;
use core::ffi::c_void;
use std::sync::Arc;

/// Runs `f` with the pool an async call on `queue` takes from: the one it
/// names, or else its device's current pool (the default one unless
/// `urUSMPoolSetDevicePoolExp` chose another). While no device of the
/// context has a current pool set, the queue's own copy of the default pool
/// answers, so that queues on different threads meet on no lock.
#[inline]
fn with_pool<B: Backend, R>(
    queue: &Queue<B>,
    named: Option<&UsmPool<B>>,
    f: impl FnOnce(&UsmPool<B>) -> UrResult<R>,
) -> UrResult<R> {
    match named {
        Some(pool) => f(pool),
        None => {
            let (context, device) = (&*queue.context, &*queue.device);
            let make_default = || context.make_default_pool(device);
            context.pools.with_current(device, &queue.default_pool, make_default, f)?
        }
    }
}

/// The engine pool of a default pool, when the call waits for nothing and
/// wants no event: the pool it names, when that is a default pool (the
/// core checked that it serves the queue's device), or the queue's own
/// copy of its device's default pool while no current pool is set. The
/// common case, served without a pool lookup. An engine pool not made yet
/// (or never made: a driver's own pool serves that memory) is left to the
/// general path.
#[inline]
fn hot_engine_pool<'q, B: Backend>(
    queue: &'q Queue<B>,
    kind: UsmKind,
    pool: Option<&'q UsmPool<B>>,
    events: &Events<'_, B>,
    want_event: bool,
) -> Option<&'q Arc<crate::engine::Pool>> {
    if want_event || !events.is_empty() {
        return None;
    }
    let default = match pool {
        Some(named) if named.is_default() => named,
        Some(_) => return None,
        None => &**queue.context.pools.cached_default(&queue.default_pool)?,
    };
    default.base.engine.get(kind)
}

/// An async allocation of `size` bytes of `kind` memory (the core checked
/// the size, the kind and that `pool` serves the queue's device), ordered
/// after `events`. Its event when `want_event`.
#[inline]
pub fn alloc<B: Backend>(
    queue: &Queue<B>,
    kind: UsmKind,
    pool: Option<&UsmPool<B>>,
    size: usize,
    events: Events<'_, B>,
    want_event: bool,
) -> UrResult<(*mut c_void, Option<Arc<Event<B>>>)> {
    if let Some(engine_pool) = hot_engine_pool::<B>(queue, kind, pool, &events, want_event) {
        // Nothing to wait for: no wait list is made unless a command is.
        let lane = &queue.lane;
        let order = B::RawQueue::order(queue)?;
        let a = engine_pool.alloc(lane, &[], size, 0, false)?;
        if a.stamp.is_none() {
            return Ok((a.ptr.as_ptr() as *mut c_void, None));
        }
        return enqueue_alloc::<B>(queue, engine_pool, order, kind, &a, Waits::none(), false);
    }
    with_pool::<B, _>(queue, pool, |pool| {
        if let Some(done) = B::RawQueue::alloc_outside_engine(queue, pool, kind, size, events.clone(), want_event) {
            return done;
        }
        let engine_pool = pool.engine_pool(kind, Some(&*queue.device))?;
        let waits = crate::queue::submit::translate(queue, events)?;
        alloc_from::<B>(queue, engine_pool, kind, size, waits, want_event)
    })
}

/// The allocation from `engine_pool`, under the queue's order: the
/// engine's block, and the command it records, if any, enqueued.
fn alloc_from<B: Backend>(
    queue: &Queue<B>,
    engine_pool: &crate::engine::Pool,
    kind: UsmKind,
    size: usize,
    waits: Waits<<B::RawQueue as RawQueue<B>>::RawWait<'_>>,
    want_event: bool,
) -> UrResult<(*mut c_void, Option<Arc<Event<B>>>)> {
    let order = B::RawQueue::order(queue)?;
    // A wait the engine cannot see is still waited for: only a command of
    // the allocation's own can carry it.
    let want_node = want_event || waits.unstamped;
    let a = engine_pool.alloc(&queue.lane, &waits.stamps, size, 0, want_node)?;
    enqueue_alloc::<B>(queue, engine_pool, order, kind, &a, waits, want_event)
}

/// The command the engine recorded for allocation `a`, if any, enqueued
/// under the queue's order; should that fail, the block goes back as if
/// never handed out.
fn enqueue_alloc<B: Backend>(
    queue: &Queue<B>,
    engine_pool: &crate::engine::Pool,
    order: <B::RawQueue as RawQueue<B>>::Order<'_>,
    kind: UsmKind,
    a: &crate::engine::Allocation,
    waits: Waits<<B::RawQueue as RawQueue<B>>::RawWait<'_>>,
    want_event: bool,
) -> UrResult<(*mut c_void, Option<Arc<Event<B>>>)> {
    let ptr = a.ptr.as_ptr() as *mut c_void;
    let Some(stamp) = a.stamp else { return Ok((ptr, None)) };
    let command = EngineCommand {
        stamp,
        command: alloc_command(kind),
        ptr,
        zero: a.zero.then_some(a.size),
        deps: a.deps.as_slice(),
        want_event,
    };
    match B::RawQueue::enqueue_recorded(queue, order, command, waits) {
        Ok(event) => Ok((ptr, event)),
        Err(e) => {
            engine_pool.give_back_unrun(&queue.lane, ptr as *const u8, stamp);
            Err(e)
        }
    }
}

/// What an async free found at its pointer.
enum Freed<B: Backend> {
    /// An engine block, given back; the free's event, when wanted.
    Engine(Option<Arc<Event<B>>>),
    /// No engine pool of the context holds the pointer.
    NotEngine,
}

/// An async free of `ptr`, ordered after `events`. Only the exact base of
/// a live block of `pool` (or, when none is named, of any pool of the
/// context) is accepted; anything else is `INVALID_VALUE` and releases
/// nothing. The memory is reused once the engine proves the work before
/// this point done.
#[inline]
pub fn free<B: Backend>(
    queue: &Queue<B>,
    pool: Option<&UsmPool<B>>,
    ptr: *mut c_void,
    events: Events<'_, B>,
    want_event: bool,
) -> UrResult<Option<Arc<Event<B>>>> {
    let context = &*queue.context;
    if pool.is_some_and(|p| !p.belongs_to(context)) {
        return Err(UR_RESULT_ERROR_INVALID_VALUE);
    }
    if let Some(engine_pool) = hot_engine_pool::<B>(queue, UsmKind::Device, pool, &events, want_event) {
        // Device memory of the default pool is what a free most likely
        // returns; anything else takes the general way below.
        let lane = &queue.lane;
        let order = B::RawQueue::order(queue)?;
        if let Ok(out) = engine_pool.free(lane, &[], ptr as *const u8, false) {
            if out.stamp.is_none() {
                return Ok(None);
            }
            return enqueue_free::<B>(queue, order, &out, ptr, Waits::none(), false);
        }
    }
    let scope = FreeScope::of(pool);
    let freed = with_pool::<B, _>(queue, pool, |from| {
        let waits = crate::queue::submit::translate(queue, events.clone())?;
        let lane = &queue.lane;
        let order = B::RawQueue::order(queue)?;
        let want_node = want_event || waits.unstamped;
        let free = |e: &crate::engine::Pool| e.free(lane, &waits.stamps, ptr as *const u8, want_node);
        // The likeliest owner is tried first (device memory of `from`),
        // then the pool whose slab holds the pointer.
        let found = from.base.free_async_block(&context.slabs, Some(&*queue.device), scope, ptr as usize, free);
        let Some(outcome) = found else { return Ok(Freed::NotEngine) };
        // An interior, freed or foreign pointer (spec/usm_async.md).
        let out = outcome.map_err(|_| UR_RESULT_ERROR_INVALID_VALUE)?;
        enqueue_free::<B>(queue, order, &out, ptr, waits, want_event).map(Freed::Engine)
    })?;
    match freed {
        Freed::Engine(event) => Ok(event),
        Freed::NotEngine => B::RawQueue::free_outside_engine(queue, pool, ptr, events, want_event),
    }
}

/// The command the engine recorded for a free of `ptr`, if any, enqueued
/// under the queue's order. Without one (in order with nothing to wait
/// for) the free sits at the queue's tail and costs nothing. The engine has
/// the block back whatever happens: a failed enqueue only loses the event.
fn enqueue_free<B: Backend>(
    queue: &Queue<B>,
    order: <B::RawQueue as RawQueue<B>>::Order<'_>,
    out: &crate::engine::FreeOutcome,
    ptr: *mut c_void,
    waits: Waits<<B::RawQueue as RawQueue<B>>::RawWait<'_>>,
    want_event: bool,
) -> UrResult<Option<Arc<Event<B>>>> {
    let Some(stamp) = out.stamp else { return Ok(None) };
    let command = EngineCommand {
        stamp,
        command: UR_COMMAND_ENQUEUE_USM_FREE_EXP,
        ptr,
        zero: None,
        deps: out.deps.as_slice(),
        want_event,
    };
    B::RawQueue::enqueue_recorded(queue, order, command, waits)
}
