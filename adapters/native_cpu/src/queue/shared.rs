//! The shared state's bookkeeping: recording commands on the lane,
//! queuing them in seq order, waiting for them, retiring them, and
//! choosing the next one that may start.

use super::worker::{spawn_worker, WORKER_OF};
use super::{QueueShared, Running, State, Task, KEEP_SLOTS, TRIM_AFTER_BYTES};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use ur_core::lock_order::MutexGuard;
use ur_core::*;

impl QueueShared {
    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock()
    }

    pub fn in_order(&self) -> bool {
        self.in_order
    }

    pub(super) fn close(&self) {
        let mut st = self.lock();
        st.closed = true;
        drop(st);
        self.work.notify_all();
    }

    pub(super) fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Forgets the lane once nothing on it can run any more.
    pub(super) fn retire_lane(&self) {
        self.context.engine.dag().retire_lane(&self.lane);
        self.context.raw.unregister_queue(self.id);
    }

    /// Queues a task in seq order (almost always at the back) and wakes a
    /// worker.
    pub(super) fn enqueue(&self, st: &mut State, task: Task) {
        let at = st.pending.iter().rposition(|t| t.seq < task.seq).map_or(0, |i| i + 1);
        st.pending.insert(at, task);
        if st.idle_workers > 0 {
            self.work.notify_one();
        }
    }

    /// Gives back the per-command bookkeeping a burst of commands left
    /// behind (list capacity, lane slots and their clocks), keeping room for
    /// [`KEEP_SLOTS`] commands in flight; when that was much, asks the C
    /// allocator to return free pages to the system too. Called by
    /// `urQueueFinish`, which blocks anyway; never on the enqueue path.
    pub(super) fn give_back(&self, st: &mut State) {
        let before = st.pending.capacity() * std::mem::size_of::<Task>()
            + st.running.capacity() * std::mem::size_of::<Running>();
        st.pending.shrink_to(KEEP_SLOTS);
        st.running.shrink_to(KEEP_SLOTS);
        let after = st.pending.capacity() * std::mem::size_of::<Task>()
            + st.running.capacity() * std::mem::size_of::<Running>();
        let given = before - after + self.lane.shrink(KEEP_SLOTS);
        if given >= TRIM_AFTER_BYTES {
            // SAFETY: `malloc_trim` only returns free heap pages to the
            // system; it touches no live allocation.
            #[cfg(all(target_os = "linux", target_env = "gnu"))]
            unsafe {
                libc::malloc_trim(0);
            }
        }
    }

    /// Blocks until no command numbered below `end` is pending or running.
    pub(super) fn wait_before<'a>(&'a self, mut st: MutexGuard<'a, State>, end: u64) -> MutexGuard<'a, State> {
        while st.pending.front().is_some_and(|t| t.seq < end) || st.running.iter().any(|r| r.seq < end) {
            st.finishers += 1;
            st = self.retired.wait(st);
            st.finishers -= 1;
        }
        st
    }

    /// Blocks until every command enqueued so far has finished (failures
    /// stay for `urQueueFinish` to report). Returns at once on one of the
    /// queue's own workers, whose command is running.
    pub(crate) fn wait_idle(&self) {
        if WORKER_OF.get() == self.id {
            return;
        }
        let st = self.lock();
        let end = self.lane.tail().seq + 1;
        drop(self.wait_before(st, end));
    }

    /// A dependency finished: let the workers look again.
    pub(crate) fn wake_workers(&self) {
        // Under the lock: ordered after a worker's check-then-sleep.
        let st = self.lock();
        if st.idle_workers > 0 {
            self.work.notify_all();
        }
    }

    /// Starts a worker when none is idle and the queue may have more.
    pub(super) fn ensure_worker(self: &Arc<Self>, st: &mut State) -> UrResult {
        if st.idle_workers > 0 || st.workers >= self.max_workers {
            return Ok(());
        }
        match spawn_worker(self) {
            Ok(()) => {
                st.workers += 1;
                self.has_worker.store(true, Ordering::Release);
            }
            Err(_) if st.workers == 0 => return Err(UR_RESULT_ERROR_OUT_OF_RESOURCES),
            Err(_) => {}
        }
        Ok(())
    }

    /// The queue's bookkeeping half of [`complete_command`](crate::event::complete_command).
    pub(crate) fn retire(&self, seq: u64, outcome: UrResult) {
        let mut st = self.lock();
        st.running.retain(|r| r.seq != seq);
        if let Err(code) = outcome {
            if st.unreported_failure.is_none_or(|(first, _)| seq < first) {
                st.unreported_failure = Some((seq, code));
            }
        }
        if st.finishers > 0 {
            self.retired.notify_all();
        }
        // On an out-of-order queue a barrier or an after-all command may have
        // become ready. An in-order worker looks again by itself after its
        // own command, but not after one run on the caller's thread, which
        // a command queued meanwhile (and its woken worker) waited behind.
        if st.idle_workers > 0 && (!self.in_order || !st.pending.is_empty()) {
            self.work.notify_all();
        }
    }
}

impl State {
    /// Marks command `seq`, whose wait list is done, running on the calling
    /// thread when nothing is pending or running before it; false (nothing
    /// changed) otherwise. On an in-order queue an earlier command may be
    /// recorded by the engine and not queued yet (which implies a worker):
    /// `seq` then waits for it.
    pub(super) fn start_here(&mut self, in_order: bool, seq: u64, fence: bool) -> bool {
        let idle = self.pending.is_empty() && self.running.is_empty() && (!in_order || seq == self.next_start);
        if idle {
            self.running.push(Running { seq, fence });
            self.next_start = seq + 1;
        }
        idle
    }

    /// Takes the next command that may start, and marks it running.
    pub(super) fn take_ready(&mut self, q: &Arc<QueueShared>) -> Option<Task> {
        let index = if q.in_order { self.ready_in_order(q) } else { self.ready_out_of_order(q) }?;
        let task = self.pending.remove(index)?;
        self.running.push(Running { seq: task.seq, fence: task.order.fence });
        Some(task)
    }

    fn ready_in_order(&mut self, q: &Arc<QueueShared>) -> Option<usize> {
        let head = self.pending.front()?;
        // Seq `next_start` may be recorded and not queued yet: wait for it.
        let ready = self.running.is_empty() && head.seq == self.next_start && deps_done(head, q);
        if ready {
            self.next_start = head.seq + 1;
        }
        ready.then_some(0)
    }

    fn ready_out_of_order(&self, q: &Arc<QueueShared>) -> Option<usize> {
        if self.running.iter().any(|r| r.fence) {
            return None;
        }
        for (i, task) in self.pending.iter().enumerate() {
            let earlier_unfinished = i > 0 || self.running.iter().any(|r| r.seq < task.seq);
            let ready = !(task.order.after_all && earlier_unfinished) && deps_done(task, q);
            if ready {
                return Some(i);
            }
            if task.order.fence {
                // Nothing enqueued after a barrier may overtake it.
                return None;
            }
        }
        None
    }
}

/// Whether a task's events have finished and its engine dependency has
/// completed; when that one has not, the queue is woken when it may have.
pub(super) fn deps_done(task: &Task, q: &Arc<QueueShared>) -> bool {
    task.deps.iter().all(|d| d.raw.is_done()) && task.after.is_none_or(|s| crate::context::watch_stamp(&q.context, q, s))
}
