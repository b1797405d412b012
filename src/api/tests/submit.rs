//! The core's submission path (`crate::queue::submit`), on the test
//! backend: which waits reach the backend's append, how new commands and
//! barriers enter the engine's graph, and what a failed append leaves.

use super::*;
use crate::engine::Stamp;
use std::sync::atomic::Ordering::Relaxed;

/// The engine's node of the command of event `e`.
fn stamp_of(e: ur_event_handle_t) -> Stamp {
    event_obj(e).stamp.expect("a command of the core's submission path has a node")
}

/// `urEnqueueEventsWait` on `queue` after `list`; its event.
fn wait_on(queue: ur_queue_handle_t, list: &[ur_event_handle_t]) -> (Vec<Call>, ur_event_handle_t) {
    let mut e = null_mut();
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Enqueue.pfnEventsWait(queue, list.len() as u32, list.as_ptr(), &mut e)));
    (calls, e)
}

/// The waits the backend's append got, as the test backend records them.
fn appended_waits(calls: &[Call]) -> String {
    let append = calls.iter().find(|c| c.method == "queue.append").expect("the command reached the append");
    append.args.split_once(' ').expect("seq and waits").1.to_string()
}

#[test]
fn every_pending_event_reaches_the_append_own_earlier_commands_too() {
    // An in-order queue runs its own earlier commands first anyway, but a
    // backend whose waits carry failure must still see them.
    let w = World::new();
    let other = w.queue_on(w.ctx, w.dev[0], 0);
    let (own, theirs) = (w.event(), w.event_on(other));
    let (calls, _) = wait_on(w.queue, &[own, theirs]);
    assert_eq!(appended_waits(&calls), format!("waits={:?}", [own, theirs]));
    refused!(UR_RESULT_SUCCESS, ur!(Queue.pfnRelease(other)));
}

#[test]
fn an_out_of_order_queue_is_asked_to_wait_for_every_event() {
    let w = World::new();
    let ooo = w.queue_on(w.ctx, w.dev[0], UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0);
    let own = w.event_on(ooo);
    let (calls, _) = wait_on(ooo, &[own]);
    assert_eq!(appended_waits(&calls), format!("waits={:?}", [own]));
    refused!(UR_RESULT_SUCCESS, ur!(Queue.pfnRelease(ooo)));
}

#[test]
fn a_barrier_orders_later_commands_after_earlier_ones_and_a_plain_wait_does_not() {
    let w = World::new();
    w.features(w.ctx).hold_commands.store(true, Relaxed);
    let ooo = w.queue_on(w.ctx, w.dev[0], UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0);
    let dag = event_obj(w.event_on(ooo)).context.engine.dag().clone();
    let before = stamp_of(w.event_on(ooo));
    let after_wait = stamp_of(w.event_on(ooo));
    assert!(!dag.is_ordered_before(before, after_wait), "an empty wait orders nothing after it");
    let mut barrier = null_mut();
    reached!(UR_RESULT_SUCCESS, ur!(Enqueue.pfnEventsWaitWithBarrier(ooo, 0, null(), &mut barrier)));
    let after_barrier = stamp_of(w.event_on(ooo));
    assert!(dag.is_ordered_before(before, after_barrier));
    assert!(dag.is_ordered_before(stamp_of(barrier), after_barrier));
    refused!(UR_RESULT_SUCCESS, ur!(Queue.pfnRelease(ooo)));
}

#[test]
fn a_command_waits_in_the_graph_for_the_commands_of_its_wait_list() {
    let w = World::new();
    w.features(w.ctx).hold_commands.store(true, Relaxed);
    let other = w.queue_on(w.ctx, w.dev[0], UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0);
    let (waited, unrelated) = (w.event_on(other), w.event_on(other));
    let (_, e) = wait_on(w.queue, &[waited]);
    let dag = event_obj(e).context.engine.dag().clone();
    assert!(dag.is_ordered_before(stamp_of(waited), stamp_of(e)));
    assert!(!dag.is_ordered_before(stamp_of(unrelated), stamp_of(e)));
    refused!(UR_RESULT_SUCCESS, ur!(Queue.pfnRelease(other)));
}

#[test]
fn a_failed_append_out_of_order_leaves_its_node_complete_and_no_event() {
    let w = World::new();
    w.features(w.ctx).hold_commands.store(true, Relaxed);
    let ooo = w.queue_on(w.ctx, w.dev[0], UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0);
    let earlier = stamp_of(w.event_on(ooo));
    w.features(w.ctx).fail_next_append.store(true, Relaxed);
    let mut e = null_mut();
    let calls = reached!(UR_RESULT_ERROR_OUT_OF_RESOURCES, ur!(Enqueue.pfnEventsWait(ooo, 0, null(), &mut e)));
    assert_eq!(methods(&calls), ["queue.marker", "queue.append"]);
    assert!(e.is_null(), "no event for a command that was not enqueued");
    let later = stamp_of(w.event_on(ooo));
    let dag = event_obj(w.event_on(ooo)).context.engine.dag().clone();
    let failed = Stamp::new(later.lane, later.seq - 1);
    assert!(dag.is_complete(failed), "nothing else would ever complete it");
    assert!(!dag.is_complete(earlier), "only the failed node");
    refused!(UR_RESULT_SUCCESS, ur!(Queue.pfnRelease(ooo)));
}
