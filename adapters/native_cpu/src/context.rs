//! The context: the core's [`Context`] over a [`ContextHost`], what this
//! backend keeps beside the core's part: the host lane, the pools the user
//! released while their blocks were live, and the queues, to wait for them
//! and to wake those waiting on the engine.

use crate::device::Device;
use crate::memory::{self, Pool};
use crate::queue::QueueShared;
use crate::NativeCpu;
use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use ur_core::context::RawContext;
use ur_core::engine::{Engine, Lane, QueueOrder, Stamp};
use ur_core::handle::arc_of;
use ur_core::lock_order::{Mutex, MutexGuard, Rank};
use ur_core::*;

pub type Context = ur_core::context::Context<NativeCpu>;

pub struct ContextHost {
    /// Blocking allocations from a pool are made on this lane, which runs
    /// no commands: it stands for the host.
    pub host_lane: Arc<Lane>,
    /// Pools the user released while some of their allocations were live:
    /// kept until those are freed.
    orphan_pools: Mutex<Vec<Arc<Pool>>>,
    /// Every live queue, by id. Never upgraded under the lock: the last
    /// reference of a queue dropping there would come back for it.
    queues: Mutex<Vec<(u64, Weak<QueueShared>)>>,
    /// Queues with a command that waits for an engine stamp; woken, once,
    /// when any command of the context completes.
    stamp_watchers: Mutex<Vec<Weak<QueueShared>>>,
    has_stamp_watchers: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock()
}

pub fn new_context(devices: Vec<Arc<Device>>) -> Arc<Context> {
    let engine = Engine::new();
    let host = ContextHost {
        host_lane: engine.dag().create_lane(QueueOrder::InOrder),
        orphan_pools: Mutex::new(Rank::Leaf, Vec::new()),
        queues: Mutex::new(Rank::Leaf, Vec::new()),
        stamp_watchers: Mutex::new(Rank::Leaf, Vec::new()),
        has_stamp_watchers: AtomicBool::new(false),
    };
    Context::with_engine(devices, engine, host)
}

impl ContextHost {
    pub(crate) fn keep_until_freed(&self, pool: Arc<Pool>) {
        lock(&self.orphan_pools).push(pool);
    }

    pub(crate) fn register_queue(&self, queue: &Arc<QueueShared>) {
        let mut queues = lock(&self.queues);
        queues.retain(|(_, q)| q.strong_count() > 0);
        queues.push((queue.id, Arc::downgrade(queue)));
    }

    pub(crate) fn unregister_queue(&self, id: u64) {
        lock(&self.queues).retain(|(q, w)| *q != id && w.strong_count() > 0);
    }

    /// Blocks until every command enqueued so far on the context's queues
    /// has finished (a queue's own worker does not wait for its queue).
    pub fn wait_all_queues(&self) {
        let weak: Vec<Weak<QueueShared>> = lock(&self.queues).iter().map(|(_, q)| q.clone()).collect();
        for q in weak.iter().filter_map(Weak::upgrade) {
            q.wait_idle();
        }
    }

    /// A command completed: wakes the queues waiting for an engine stamp.
    pub(crate) fn wake_stamp_watchers(&self) {
        fence(Ordering::SeqCst);
        if !self.has_stamp_watchers.load(Ordering::SeqCst) {
            return;
        }
        let watchers = {
            let mut w = lock(&self.stamp_watchers);
            self.has_stamp_watchers.store(false, Ordering::SeqCst);
            std::mem::take(&mut *w)
        };
        for q in watchers.iter().filter_map(Weak::upgrade) {
            q.wake_workers();
        }
    }
}

/// Whether command `s` of `context` has completed. When it has not,
/// `queue` is woken at the next completion in the context, when it may
/// have. (The watcher is registered before the check, and completion is
/// published before watchers are read, so no completion falls between the
/// two.)
pub(crate) fn watch_stamp(context: &Context, queue: &Arc<QueueShared>, s: Stamp) -> bool {
    let dag = context.engine.dag();
    if dag.is_complete(s) {
        return true;
    }
    {
        let host = &context.raw;
        let mut watchers = lock(&host.stamp_watchers);
        if !watchers.iter().any(|w| std::ptr::eq(w.as_ptr(), Arc::as_ptr(queue))) {
            watchers.push(Arc::downgrade(queue));
        }
        host.has_stamp_watchers.store(true, Ordering::SeqCst);
    }
    fence(Ordering::SeqCst);
    dag.is_complete(s)
}

impl RawContext<NativeCpu> for ContextHost {
    fn create(devices: &[&Device], _flags: ur_context_flags_t) -> UrResult<Arc<Context>> {
        Ok(new_context(devices.iter().map(|d| arc_of(*d)).collect()))
    }

    /// A host synchronisation point: frees that have completed become
    /// reusable, and each pool gives back what is above its release
    /// threshold. Released pools whose last allocation was freed go.
    fn collect_pools(context: &Context) {
        context.pools.collect(|p| &p.base.engine);
        // Counted with the list let go (counting takes each pool's lock),
        // and the pools that go are dropped after it (a drop gives memory
        // back): the list is a leaf of the lock order.
        let orphans = std::mem::take(&mut *lock(&context.raw.orphan_pools));
        let (done, keep): (Vec<_>, Vec<_>) = orphans.into_iter().partition(|p| memory::live_blocks(p) == 0);
        if !keep.is_empty() {
            lock(&context.raw.orphan_pools).extend(keep);
        }
        drop(done);
    }

    /// Every queue is gone (each held the context), so no command can touch
    /// pool memory: released pools go with the context's own.
    fn release(context: &mut Context) {
        context.raw.orphan_pools.get_mut().clear();
    }
}
