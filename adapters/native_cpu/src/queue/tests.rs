//! Unit tests of the queue: ordering, dependencies, barriers, failures,
//! release and the bookkeeping a burst leaves.

use super::*;
use super::command::{Pattern, UsmPtr};
use std::sync::atomic::AtomicUsize;
use std::sync::{Condvar, Mutex, Weak};
use std::time::Duration;
use ur_core::handle::UrObject;

fn queue(flags: ur_queue_flags_t) -> Arc<Queue> {
    let device = crate::device::PlatformHost::new(Weak::new()).raw.devices[0].clone();
    new_queue(crate::context::new_context(vec![device.clone()]), device, flags)
}

fn host(f: impl FnOnce() -> UrResult + Send + 'static) -> Command {
    Command::Host(Box::new(f))
}

/// What a submission gave: its event, when one was asked for.
struct Submitted {
    event: Option<Arc<Event>>,
}

fn submit(q: &Arc<Queue>, command: Command, deps: Vec<Arc<Event>>, order: Order, want_event: bool) -> Submitted {
    let handles: Vec<ur_event_handle_t> = deps.iter().map(|e| e.handle()).collect();
    // SAFETY: live events of this backend, held by `deps` for the call.
    let events = unsafe { Events::<NativeCpu>::checked(&handles) };
    let c = Completion { want_event, blocking: false };
    Submitted { event: super::submit(q, UR_COMMAND_EVENTS_WAIT, command, order, events, c).unwrap() }
}

/// A command that counts its runs in `ran`.
fn count(ran: Arc<AtomicUsize>) -> Command {
    host(move || {
        ran.fetch_add(1, Ordering::SeqCst);
        Ok(())
    })
}

/// A command that blocks its worker until the returned gate opens.
fn gate() -> (Arc<(Mutex<bool>, Condvar)>, Command) {
    let g = Arc::new((Mutex::new(false), Condvar::new()));
    let g2 = g.clone();
    (
        g,
        host(move || {
            let mut open = g2.0.lock().unwrap();
            while !*open {
                open = g2.1.wait(open).unwrap();
            }
            Ok(())
        }),
    )
}

fn open(g: &(Mutex<bool>, Condvar)) {
    *g.0.lock().unwrap() = true;
    g.1.notify_all();
}

#[test]
fn in_order_commands_run_asynchronously_and_in_order() {
    let q = queue(0);
    let (g, blocker) = gate();
    submit(&q, blocker, vec![], Order::default(), false);
    let log = Arc::new(Mutex::new(Vec::new()));
    for i in 0..20 {
        let log = log.clone();
        let push = host(move || {
            log.lock().unwrap().push(i);
            Ok(())
        });
        submit(&q, push, vec![], Order::default(), false);
    }
    // The enqueues returned while the first command still blocks.
    assert!(log.lock().unwrap().is_empty());
    assert!(!<Arc<QueueShared> as RawQueue<NativeCpu>>::is_empty(&q).unwrap());
    open(&g);
    crate::queue::wait_for_all(&q).unwrap();
    assert_eq!(*log.lock().unwrap(), (0..20).collect::<Vec<_>>());
    assert!(<Arc<QueueShared> as RawQueue<NativeCpu>>::is_empty(&q).unwrap());
}

/// A burst of 100 000 commands in flight at once grows the queue's
/// bookkeeping; `urQueueFinish` gives it back, and steady work with a
/// finish every 1000 commands keeps it bounded.
#[test]
fn finish_gives_back_the_bookkeeping_of_a_burst() {
    let q = queue(0);
    let small = retained_bytes(&q);
    let (g, blocker) = gate();
    submit(&q, blocker, vec![], Order::default(), false);
    for _ in 0..100_000 {
        submit(&q, Command::Marker, vec![], Order::default(), true);
    }
    let burst = retained_bytes(&q);
    assert!(burst > 100_000 * std::mem::size_of::<Task>(), "the burst is in flight: {burst} B");
    open(&g);
    crate::queue::wait_for_all(&q).unwrap();
    let bound = 64 * 1024;
    let after = retained_bytes(&q);
    assert!(after <= bound.max(small), "kept {after} B after finish (was {burst} B in the burst)");
    for i in 0..100_000 {
        submit(&q, Command::Marker, vec![], Order::default(), i % 2 == 0);
        if i % 1000 == 999 {
            crate::queue::wait_for_all(&q).unwrap();
            let now = retained_bytes(&q);
            assert!(now <= bound.max(small), "kept {now} B after finish at command {i}");
        }
    }
    assert!(<Arc<QueueShared> as RawQueue<NativeCpu>>::is_empty(&q).unwrap());
}

#[test]
fn a_command_waits_for_an_event_of_another_queue() {
    let a = queue(0);
    let b = queue(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0);
    let (g, blocker) = gate();
    let first = submit(&a, blocker, vec![], Order::default(), true).event.unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    let r = ran.clone();
    let second = submit(&b, count(r), vec![first.clone()], Order::default(), true).event.unwrap();
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    assert_eq!(second.raw.status(), UR_EVENT_STATUS_SUBMITTED);
    open(&g);
    second.raw.wait().unwrap();
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    assert!(first.raw.is_done());
}

#[test]
fn out_of_order_commands_overtake_a_blocked_one() {
    let q = queue(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0);
    let (g, blocker) = gate();
    let blocked = submit(&q, blocker, vec![], Order::default(), true).event.unwrap();
    let later = submit(&q, Command::Marker, vec![], Order::default(), true).event.unwrap();
    later.raw.wait().unwrap();
    assert!(!blocked.raw.is_done());
    open(&g);
    crate::queue::wait_for_all(&q).unwrap();
    assert!(blocked.raw.is_done());
}

#[test]
fn a_barrier_holds_back_later_commands_on_an_out_of_order_queue() {
    let q = queue(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0);
    let (g, blocker) = gate();
    let blocked = submit(&q, blocker, vec![], Order::default(), true).event.unwrap();
    let barrier = submit(&q, Command::Marker, vec![], Order { after_all: true, fence: true }, true).event.unwrap();
    let after = submit(&q, Command::Marker, vec![], Order::default(), true).event.unwrap();
    std::thread::sleep(Duration::from_millis(20));
    assert!(!barrier.raw.is_done() && !after.raw.is_done());
    open(&g);
    after.raw.wait().unwrap();
    assert!(blocked.raw.is_done() && barrier.raw.is_done());
}

#[test]
fn a_failed_dependency_fails_its_dependents() {
    let q = queue(0);
    let bad = submit(&q, host(|| Err(UR_RESULT_ERROR_UNKNOWN)), vec![], Order::default(), true).event.unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    let r = ran.clone();
    let next = submit(&q, count(r), vec![bad.clone()], Order::default(), true).event.unwrap();
    assert_eq!(next.raw.wait(), Err(UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS));
    assert_eq!(bad.raw.status(), UR_EVENT_STATUS_ERROR);
    assert_eq!(bad.raw.outcome(), Err(UR_RESULT_ERROR_UNKNOWN));
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    // Finish reports the first failure once.
    assert_eq!(crate::queue::wait_for_all(&q), Err(UR_RESULT_ERROR_UNKNOWN));
    assert_eq!(crate::queue::wait_for_all(&q), Ok(()));
}

#[test]
fn releasing_a_queue_does_not_drop_its_pending_work() {
    let q = queue(0);
    let (g, blocker) = gate();
    submit(&q, blocker, vec![], Order::default(), false);
    let mut buf = vec![0u8; 4096];
    // SAFETY: the test waits for the command before `buf` goes.
    let dst = unsafe { UsmPtr::new(buf.as_mut_ptr(), None) };
    let fill =
        submit(&q, Command::Fill { dst, pattern: Pattern::new(&[7]), size: 4096 }, vec![], Order::default(), true)
            .event
            .unwrap();
    let shared = Arc::downgrade(&q.raw);
    close(&q);
    drop(q);
    open(&g);
    fill.raw.wait().unwrap();
    assert!(buf.iter().all(|&b| b == 7));
    drop(fill);
    join_released_workers();
    assert!(shared.upgrade().is_none(), "a released, drained queue frees its state");
}

#[test]
fn the_last_release_waits_for_the_work_and_joins_the_workers() {
    let q = queue(0);
    let (g, blocker) = gate();
    submit(&q, blocker, vec![], Order::default(), false);
    let ran = Arc::new(AtomicUsize::new(0));
    submit(&q, count(ran.clone()), vec![], Order::default(), false);
    let opener = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(20));
        open(&g);
    });
    q.last_user_release();
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    assert_eq!(Arc::strong_count(&q.raw), 1, "no worker holds the queue any more");
    opener.join().unwrap();
}

/// Many commands over three queues, each waiting on random earlier
/// events of any queue, with barriers: all finish, none starts before
/// what it waits for has finished.
#[test]
fn random_cross_queue_dependencies_all_complete_in_order() {
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let queues = [
            queue(0),
            queue(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0),
            queue(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0),
        ];
        let clock = Arc::new(AtomicUsize::new(1));
        // Per command: (start tick, end tick), written by the command.
        let ticks: Arc<Vec<(AtomicUsize, AtomicUsize)>> =
            Arc::new((0..3000).map(|_| (AtomicUsize::new(0), AtomicUsize::new(0))).collect());
        let mut events: Vec<(usize, Arc<Event>)> = Vec::new();
        let mut deps_of = Vec::new();
        let mut placed: Vec<(usize, Order)> = Vec::new();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rand = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for i in 0..3000 {
            let qi = rand(3);
            let q = &queues[qi];
            let mut deps = Vec::new();
            let mut dep_ids = Vec::new();
            for _ in 0..rand(4) {
                if !events.is_empty() {
                    let (id, e) = &events[rand(events.len())];
                    deps.push(e.clone());
                    dep_ids.push(*id);
                }
            }
            let order =
                if rand(50) == 0 { Order { after_all: deps.is_empty(), fence: true } } else { Order::default() };
            let (c, t) = (clock.clone(), ticks.clone());
            let work = host(move || {
                t[i].0.store(c.fetch_add(1, Ordering::SeqCst), Ordering::SeqCst);
                std::thread::yield_now();
                t[i].1.store(c.fetch_add(1, Ordering::SeqCst), Ordering::SeqCst);
                Ok(())
            });
            let deps_pending: Vec<_> = deps.into_iter().filter(|d| !d.raw.is_done()).collect();
            let e = submit(q, work, deps_pending, order, true).event.unwrap();
            events.push((i, e));
            deps_of.push(dep_ids);
            placed.push((qi, order));
        }
        for q in &queues {
            crate::queue::wait_for_all(&q).unwrap();
        }
        for (i, deps) in deps_of.iter().enumerate() {
            let start = ticks[i].0.load(Ordering::SeqCst);
            assert!(start > 0, "command {i} never ran");
            for &d in deps {
                assert!(
                    ticks[d].1.load(Ordering::SeqCst) < start,
                    "command {i} started before its dependency {d} ended"
                );
            }
        }
        for j in 0..placed.len() {
            for i in 0..j {
                let (qi, oi) = placed[i];
                let (qj, oj) = placed[j];
                if qi != qj {
                    continue;
                }
                let before = ticks[i].1.load(Ordering::SeqCst) < ticks[j].0.load(Ordering::SeqCst);
                assert!(qi != 0 || before, "in-order queue: {j} started before {i} ended");
                assert!(!oi.fence || before, "{j} overtook the barrier {i}");
                assert!(!oj.after_all || before, "the barrier {j} started before {i} ended");
            }
        }
        done_tx.send(()).unwrap();
    });
    done_rx.recv_timeout(Duration::from_secs(60)).expect("the commands deadlocked or a check failed");
}
