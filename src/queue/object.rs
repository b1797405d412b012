//! The queue object, written once for every backend: what any queue holds
//! (its handle header, context, device, flags, its lane in the context's
//! engine graph and its copy of the device's default pool) beside `raw`,
//! what the driver needs (a `cl_command_queue`, a Level Zero command list,
//! CUDA streams and their events, native CPU's worker set), behind
//! [`RawQueue`].

use super::{EngineCommand, Waits};
use crate::abi::*;
use crate::device::Device;
use crate::context::Context;
use crate::boundary::NativeOwnership;
use crate::engine::{Lane, Stamp, UsmKind};
use crate::event::Event;
use crate::hal::{Backend, Completion, Events, UsmCopy, UsmCopy2D, UsmFill, UsmFill2D, UsmHint};
use crate::handle::{HandleHeader, ObjectKind};
use crate::mem::BufferCommand;
use crate::pool::UsmPool;
use crate::UrResult;
use core::ffi::c_void;
use std::sync::{Arc, OnceLock, Weak};

/// `urQueueCreateWithNativeHandle`'s arguments, checked.
pub struct NativeQueue<'a, B: Backend> {
    pub handle: ur_native_handle_t,
    pub context: &'a Context<B>,
    /// The device named, a device of `context`.
    pub device: Option<&'a Device<B>>,
    /// The flags of a chained `ur_queue_properties_t`.
    pub flags: ur_queue_flags_t,
    pub ownership: NativeOwnership,
}

/// What enqueueing a command gives: its event, when one was asked for.
pub type Enqueued<B> = UrResult<Option<Arc<Event<B>>>>;

/// The driver's side of a queue. Each function gets the whole queue, so
/// that the raw part holds only what the driver needs.
pub trait RawQueue<B: Backend>: Send + Sync + Sized + 'static {
    /// A queue with checked flags (no unknown bits, no contradictory pair,
    /// device-side flags refused) on a device of the context; the backend
    /// makes its raw part and hands it to [`Queue::new`].
    fn create(context: &Context<B>, device: &Device<B>, flags: ur_queue_flags_t) -> UrResult<Arc<Queue<B>>>;
    fn from_native(_native: NativeQueue<'_, B>) -> UrResult<Arc<Queue<B>>> {
        Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
    }
    fn native_handle(_queue: &Queue<B>) -> UrResult<ur_native_handle_t> {
        Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
    }
    /// `UR_QUEUE_INFO_EMPTY`.
    fn is_empty(queue: &Queue<B>) -> UrResult<bool>;
    /// Waits for all work; a host synchronisation point for the pools.
    fn finish(queue: &Queue<B>) -> UrResult;
    /// By default nothing: a backend that submits work as it is enqueued
    /// has nothing to flush.
    fn flush(_queue: &Queue<B>) -> UrResult {
        Ok(())
    }

    // The USM commands, checked; each returns its event when
    // `completion.want_event`, and the core blocks on it when
    // `completion.blocking`.

    /// An event wait or barrier (`command`: `EVENTS_WAIT` or
    /// `EVENTS_WAIT_WITH_BARRIER`; an empty wait list means everything
    /// enqueued before), or a hint that the device ignores, which keeps
    /// only its place in the queue's order.
    fn marker(queue: &Queue<B>, command: ur_command_t, waits: Events<'_, B>, completion: Completion) -> Enqueued<B>;
    fn fill(queue: &Queue<B>, fill: UsmFill<'_>, waits: Events<'_, B>, completion: Completion) -> Enqueued<B>;
    fn copy(queue: &Queue<B>, copy: UsmCopy, waits: Events<'_, B>, completion: Completion) -> Enqueued<B>;
    /// Sent only where the context's `usm_2d_supported` says so.
    fn fill_2d(_queue: &Queue<B>, _fill: UsmFill2D<'_>, _waits: Events<'_, B>, _completion: Completion) -> Enqueued<B> {
        Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
    }
    /// Sent only where the context's `usm_2d_supported` says so.
    fn copy_2d(_queue: &Queue<B>, _copy: UsmCopy2D, _waits: Events<'_, B>, _completion: Completion) -> Enqueued<B> {
        Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
    }
    /// By default a marker: the memory is where host and device reach it.
    fn prefetch(queue: &Queue<B>, hint: UsmHint, waits: Events<'_, B>, completion: Completion) -> Enqueued<B> {
        let _ = hint;
        Self::marker(queue, UR_COMMAND_USM_PREFETCH, waits, completion)
    }
    /// By default a marker, ordered like any command of the queue (advice
    /// has no wait list).
    fn advise(queue: &Queue<B>, hint: UsmHint, completion: Completion) -> Enqueued<B> {
        let _ = hint;
        Self::marker(queue, UR_COMMAND_USM_ADVISE, Events::none(), completion)
    }
    /// A command on buffers with driver storage (`RawMem::DRIVER`),
    /// reporting `command`; sent to no other backend.
    fn buffer(
        _queue: &Queue<B>,
        _command: ur_command_t,
        _buffer: BufferCommand<'_, B>,
        _waits: Events<'_, B>,
        _completion: Completion,
    ) -> Enqueued<B> {
        Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
    }
    /// Whether async allocations are served (`ASYNC_USM_ALLOCATIONS_SUPPORT`).
    fn async_alloc_supported(queue: &Queue<B>) -> bool;

    // The submission seam of `crate::queue`: the async allocation and free
    // are written once there, over these.

    /// What the backend waits on for one event of a wait list.
    type RawWait<'a>;
    /// What the queue must wait on for `event` (the core translates a wait
    /// list event by event, `submit::translate`): `None` when there is
    /// nothing left to wait for (it completed). A backend that cannot wait
    /// on an event (one of another context) on the device may wait for it
    /// on the host here, and answer `None`.
    fn wait_raw<'a>(queue: &Queue<B>, event: &'a Event<B>) -> UrResult<Option<Self::RawWait<'a>>>;
    /// Held from the engine's decision to the command's enqueue, so that
    /// the engine's sequence numbers follow the backend's queue.
    type Order<'a>;
    /// The queue's order; `INVALID_QUEUE` for a queue that takes no more
    /// work.
    fn order(queue: &Queue<B>) -> UrResult<Self::Order<'_>>;
    /// The queue's order for a command of its own (`submit::submit`); by
    /// default the engine's.
    fn command_order(queue: &Queue<B>) -> UrResult<Self::Order<'_>> {
        Self::order(queue)
    }
    /// Whether the engine records this queue's commands now; by default
    /// always.
    fn records(_queue: &Queue<B>) -> bool {
        true
    }
    /// A command recorded as `stamp` was not enqueued: nothing will report
    /// it complete. Out of order it completes now; in order the completion
    /// of any later command of the queue implies it.
    fn abandon(queue: &Queue<B>, stamp: Stamp) {
        if !queue.lane.is_in_order() {
            queue.context.engine.dag().complete(stamp);
        }
    }
    /// Enqueues the command of an async allocation or free that the engine
    /// recorded: a zeroing fill (`command.zero`), or else a marker, after
    /// `waits` and `command.deps`, that reports `command.stamp` complete
    /// once it has run. Returns its event when `command.want_event`. A
    /// command that waits only on what the queue's order already implies
    /// may share an earlier command's completion rather than run.
    fn enqueue_recorded(
        queue: &Queue<B>,
        order: Self::Order<'_>,
        command: EngineCommand<'_>,
        waits: Waits<Self::RawWait<'_>>,
    ) -> UrResult<Option<Arc<Event<B>>>>;
    /// An async allocation that the backend serves itself rather than the
    /// engine (a driver's own pool): `None` leaves it to the engine.
    fn alloc_outside_engine(
        _queue: &Queue<B>,
        _pool: &UsmPool<B>,
        _kind: UsmKind,
        _size: usize,
        _events: Events<'_, B>,
        _want_event: bool,
    ) -> Option<UrResult<(*mut c_void, Option<Arc<Event<B>>>)>> {
        None
    }
    /// An async free of a pointer no engine pool of the context holds. By
    /// default none is the backend's own: `INVALID_VALUE`, nothing freed.
    fn free_outside_engine(
        _queue: &Queue<B>,
        _pool: Option<&UsmPool<B>>,
        _ptr: *mut c_void,
        _events: Events<'_, B>,
        _want_event: bool,
    ) -> UrResult<Option<Arc<Event<B>>>> {
        Err(UR_RESULT_ERROR_INVALID_VALUE)
    }
    /// Runs when the user's last reference goes (see
    /// `UrObject::last_user_release`); internal holders may keep the queue.
    fn last_user_release(_queue: &Queue<B>) {}
    /// Runs once as the queue goes, before its fields drop (the raw part
    /// first, then the default pool, the context and the lane).
    fn release(_queue: &mut Queue<B>) {}
}

/// A UR queue.
#[repr(C)]
pub struct Queue<B: Backend> {
    /// First: the handle protocol reads it at offset 0.
    header: HandleHeader,
    /// Before `context`: the driver's queue goes while its context lives.
    pub raw: B::RawQueue,
    /// This queue's copy of its device's default pool, taken on first use,
    /// so that async allocations on different queues meet on no shared
    /// lock or count (`ContextPools::with_current`). Before `context`, so
    /// dropped first.
    pub default_pool: OnceLock<Arc<UsmPool<B>>>,
    pub context: Arc<Context<B>>,
    pub device: B::DeviceRef,
    /// The flags the user asked for, as `UR_QUEUE_INFO_FLAGS` reports them.
    pub flags: ur_queue_flags_t,
    /// The queue in its context's engine graph; command seqs are its seqs.
    pub lane: Arc<Lane>,
}

crate::core_object!(Queue, Queue, ur_queue_handle_t_, {
    fn last_user_release(&self) {
        B::RawQueue::last_user_release(self)
    }
});

impl<B: Backend> Queue<B> {
    pub fn new(
        context: Arc<Context<B>>,
        device: B::DeviceRef,
        flags: ur_queue_flags_t,
        lane: Arc<Lane>,
        raw: B::RawQueue,
    ) -> Arc<Self> {
        Self::new_cyclic(context, device, flags, lane, |_| raw)
    }

    /// For a raw part that names its queue (weakly: it must not keep it).
    pub fn new_cyclic(
        context: Arc<Context<B>>,
        device: B::DeviceRef,
        flags: ur_queue_flags_t,
        lane: Arc<Lane>,
        raw: impl FnOnce(&Weak<Self>) -> B::RawQueue,
    ) -> Arc<Self> {
        let queue = Arc::new_cyclic(|me| Queue {
            header: HandleHeader::new(B::ddi(), ObjectKind::Queue),
            raw: raw(me),
            default_pool: OnceLock::new(),
            context,
            device,
            flags,
            lane,
        });
        queue.context.add_queue(&queue);
        queue
    }


    pub fn is_out_of_order(&self) -> bool {
        self.flags & UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0 != 0
    }

    /// `urQueueGetNativeHandle` (the generic native-handle entry point
    /// asks every object the same way).
    pub fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        B::RawQueue::native_handle(self)
    }

    pub fn is_profiling(&self) -> bool {
        self.flags & UR_QUEUE_FLAG_PROFILING_ENABLE.0 != 0
    }
}

impl<B: Backend> Drop for Queue<B> {
    fn drop(&mut self) {
        B::RawQueue::release(self);
    }
}
