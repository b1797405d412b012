//! Worker threads: the loop that takes and runs a queue's commands, and
//! the list of every worker started, so that they can be joined.

use super::{QueueShared, Task};
use crate::event::complete_command;
use std::sync::{Arc, Weak};
use ur_core::lock_order::{Mutex, MutexGuard, Rank};
use std::thread::JoinHandle;
use ur_core::*;

thread_local! {
    /// The id of the queue whose worker this thread is; 0 on other threads.
    pub(super) static WORKER_OF: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

fn worker_main(q: Arc<QueueShared>) {
    WORKER_OF.set(q.id);
    let mut st = q.lock();
    loop {
        if let Some(task) = st.take_ready(&q) {
            drop(st);
            execute(&q, task);
            st = q.lock();
            continue;
        }
        if st.closed && st.pending.is_empty() {
            break;
        }
        st.idle_workers += 1;
        st = q.work.wait(st);
        st.idle_workers -= 1;
    }
    st.workers -= 1;
}

pub(super) fn execute(q: &QueueShared, task: Task) {
    let Task { seq, command, deps, event, .. } = task;
    // An engine dependency is a command that completed (`deps_done`); it
    // cannot fail the way an event of the wait list can.
    if let Some(e) = &event {
        crate::event::mark_running(e);
    }
    // A failed dependency fails the command without running it.
    let outcome = if deps.iter().any(|d| d.raw.failed()) {
        Err(UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS)
    } else {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| command.run())).unwrap_or(Err(UR_RESULT_ERROR_UNKNOWN))
    };
    drop(deps);
    complete_command(q, seq, event, outcome);
}

/// Every worker thread started, so that the adapter can join them before
/// its library is unloaded.
struct WorkerThread {
    handle: JoinHandle<()>,
    queue: Weak<QueueShared>,
    queue_id: u64,
}

static WORKERS: Mutex<Vec<WorkerThread>> = Mutex::new(Rank::Leaf, Vec::new());

fn workers() -> MutexGuard<'static, Vec<WorkerThread>> {
    WORKERS.lock()
}

pub(super) fn spawn_worker(q: &Arc<QueueShared>) -> std::io::Result<()> {
    let shared = q.clone();
    let handle =
        std::thread::Builder::new().name(format!("ur-native-cpu-q{}", q.id)).spawn(move || worker_main(shared))?;
    let mut list = workers();
    // Reap threads that left, so the list stays as long as the live workers.
    let (done, live): (Vec<_>, Vec<_>) = std::mem::take(&mut *list).into_iter().partition(|w| w.handle.is_finished());
    *list = live;
    list.push(WorkerThread { handle, queue: Arc::downgrade(q), queue_id: q.id });
    drop(list);
    for w in done {
        let _ = w.handle.join();
    }
    Ok(())
}

/// Joins the workers of one closed queue.
pub(super) fn join_workers_of(q: &Arc<QueueShared>) {
    let mine: Vec<WorkerThread> = {
        let mut list = workers();
        let (mine, others) =
            std::mem::take(&mut *list).into_iter().partition(|w| std::ptr::eq(w.queue.as_ptr(), Arc::as_ptr(q)));
        *list = others;
        mine
    };
    for w in mine {
        let _ = w.handle.join();
    }
}

/// Joins the workers of every released queue (they finish their pending
/// commands first). Workers of queues still held are left running.
pub fn join_released_workers() {
    let all = std::mem::take(&mut *workers());
    let mut keep = Vec::new();
    for w in all {
        let released = w.queue.upgrade().is_none_or(|q| q.is_closed());
        // A worker cannot join itself (an adapter released in a callback).
        if released && w.queue_id != WORKER_OF.get() {
            let _ = w.handle.join();
        } else {
            keep.push(w);
        }
    }
    workers().extend(keep);
}
