//! The event DAG: every lane of one context and the ordering between their
//! commands.
//!
//! Edges are not stored: each in-flight node carries a sparse vector clock
//! (see [`clock`](super::clock)), the join of its wait list's clocks and its
//! lane's context. "Is A ordered before B?" is then one lookup in B's clock,
//! O(log lanes), with no graph walk.

use super::clock::{Clock, LaneId, Seq, Stamp};
use super::graveyard::Graveyard;
use super::lane::{Lane, NodeKind, QueueOrder};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering::*};
use crate::lock_order::{Rank, RwLock, RwLockReadGuard};
use std::sync::Arc;

thread_local! {
    /// Scratch clock for the public entry points, so recording allocates nothing
    /// once it has warmed up.
    static SCRATCH: RefCell<Clock> = const { RefCell::new(Clock::new()) };
}

/// Runs `f` with a cleared scratch clock (a fresh one if the scratch is busy).
fn with_scratch<R>(f: impl FnOnce(&mut Clock) -> R) -> R {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut c) => {
            c.clear();
            f(&mut c)
        }
        Err(_) => f(&mut Clock::new()),
    })
}

/// The lanes of one context (every queue whose events may appear in another's
/// wait list must share one `Dag`).
pub struct Dag {
    lanes: RwLock<HashMap<LaneId, Arc<Lane>>>,
    next_lane: AtomicU32,
    graveyard: Arc<Graveyard>,
}

impl Default for Dag {
    fn default() -> Self {
        Dag {
            lanes: RwLock::new(Rank::DagLanes, HashMap::new()),
            next_lane: AtomicU32::new(1),
            graveyard: Arc::default(),
        }
    }
}

impl Dag {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    fn registry(&self) -> RwLockReadGuard<'_, HashMap<LaneId, Arc<Lane>>> {
        self.lanes.read()
    }

    /// Registers a queue.
    pub fn create_lane(&self, order: QueueOrder) -> Arc<Lane> {
        let id = LaneId(self.next_lane.fetch_add(1, Relaxed));
        let lane = Arc::new(Lane::new(id, order, self.graveyard.clone()));
        self.lanes
            .write()
            .insert(id, lane.clone());
        lane
    }

    /// Unregisters a queue whose commands have all finished (call it once the
    /// queue has drained). Whatever it recorded counts as complete from now on.
    pub fn retire_lane(&self, lane: &Lane) {
        lane.complete_all();
        self.lanes
            .write()
            .remove(&lane.id());
        self.graveyard.sweep();
    }

    pub fn lane(&self, id: LaneId) -> Option<Arc<Lane>> {
        self.registry().get(&id).cloned()
    }

    /// Records a command enqueued on `lane` after the commands of `wait`.
    pub fn record(&self, lane: &Lane, wait: &[Stamp]) -> Stamp {
        with_scratch(|c| self.record_into(lane, wait, &[], NodeKind::Command, c))
    }

    /// Records a command that has already run, after every stamp of `wait`
    /// had completed (on an in-order lane, after every earlier command too):
    /// complete at once, and cheap when nothing of `lane` is still in flight.
    pub fn record_completed(&self, lane: &Lane, wait: &[Stamp]) -> Stamp {
        if let Some(stamp) = lane.record_completed() {
            return stamp;
        }
        let stamp = self.record(lane, wait);
        lane.complete(stamp.seq);
        stamp
    }

    /// Records a barrier. With an empty wait list it is ordered after every
    /// earlier command of the lane; otherwise after its wait list only. Every
    /// later command of the lane is ordered after it.
    pub fn record_barrier(&self, lane: &Lane, wait: &[Stamp]) -> Stamp {
        let kind = if wait.is_empty() {
            NodeKind::BarrierOnAll
        } else {
            NodeKind::BarrierOnWaitList
        };
        with_scratch(|c| self.record_into(lane, wait, &[], kind, c))
    }

    /// Records a node ordered after `wait` and `extra`; `clock` may already
    /// hold more of its dependencies and holds the node's clock on return.
    pub(crate) fn record_into(
        &self,
        lane: &Lane,
        wait: &[Stamp],
        extra: &[Stamp],
        kind: NodeKind,
        clock: &mut Clock,
    ) -> Stamp {
        let mut same_lane = [0 as Seq; 8];
        let mut n_same = 0;
        let mut spill = Vec::new();
        for &w in wait.iter().chain(extra) {
            if w.lane == lane.id() {
                if n_same < same_lane.len() {
                    same_lane[n_same] = w.seq;
                    n_same += 1;
                } else {
                    spill.push(w.seq);
                }
            }
        }
        if wait.iter().chain(extra).any(|w| w.lane != lane.id()) {
            self.join_wait_list(lane.id(), wait.iter().chain(extra), clock);
        }
        if !spill.is_empty() {
            spill.extend_from_slice(&same_lane[..n_same]);
            return lane.record(clock, &spill, kind);
        }
        lane.record(clock, &same_lane[..n_same], kind)
    }

    /// Joins the clocks of the stamps that are not on `skip` (their own lane
    /// handles those under its lock), and prunes what has completed.
    fn join_wait_list<'a>(
        &self,
        skip: LaneId,
        wait: impl Iterator<Item = &'a Stamp>,
        clock: &mut Clock,
    ) {
        let reg = self.registry();
        for w in wait {
            if w.lane != skip {
                if let Some(l) = reg.get(&w.lane) {
                    l.join_clock_of(w.seq, clock);
                }
            }
        }
        clock.prune(|id| reg.get(&id).map_or(0, |l| l.done_upto()));
    }

    /// The clock a command enqueued now on `lane` after `wait` would get, less
    /// its own entry: everything it is ordered after.
    pub(crate) fn context_clock(&self, lane: &Lane, wait: &[Stamp], clock: &mut Clock) {
        self.join_wait_list(lane.id(), wait.iter(), clock);
        for w in wait.iter().filter(|w| w.lane == lane.id()) {
            lane.join_clock_of(w.seq, clock);
        }
        lane.join_context(clock);
    }

    /// Marks a command complete. Stamps of retired or unknown lanes are ignored.
    pub fn complete(&self, s: Stamp) {
        if let Some(l) = self.lane(s.lane) {
            l.complete(s.seq);
        }
    }

    /// Has the command completed? Stamps of retired lanes have.
    pub fn is_complete(&self, s: Stamp) -> bool {
        s.seq == 0
            || self
                .registry()
                .get(&s.lane)
                .is_none_or(|l| l.is_complete(s.seq))
    }

    /// Blocks until the command has completed.
    pub fn wait(&self, s: Stamp) {
        if let Some(l) = self.lane(s.lane) {
            l.wait(s.seq);
        }
    }

    /// Does the engine know that `earlier` is ordered before (or is) `later`?
    /// A completed `earlier` counts as ordered.
    pub fn is_ordered_before(&self, earlier: Stamp, later: Stamp) -> bool {
        if self.is_complete(earlier) {
            return true;
        }
        let Some(l) = self.lane(later.lane) else {
            return false;
        };
        with_scratch(|c| {
            l.join_clock_of(later.seq, c);
            c.covers(earlier)
        })
    }

    /// Nodes still held over all lanes.
    pub fn in_flight(&self) -> usize {
        self.registry().values().map(|l| l.in_flight()).sum()
    }

    /// Every registered lane with its last recorded seq, where that is not yet
    /// complete: the point after which memory in use by commands recorded so
    /// far is free.
    pub(crate) fn unfinished_tails(&self) -> Vec<(std::sync::Weak<Lane>, Seq)> {
        self.registry()
            .values()
            .filter(|l| l.done_upto() < l.tail().seq)
            .map(|l| (Arc::downgrade(l), l.tail().seq))
            .collect()
    }

    pub(crate) fn graveyard(&self) -> &Graveyard {
        &self.graveyard
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordering_follows_wait_lists_across_lanes() {
        let dag = Dag::new();
        let a = dag.create_lane(QueueOrder::OutOfOrder);
        let b = dag.create_lane(QueueOrder::OutOfOrder);
        let c = dag.create_lane(QueueOrder::InOrder);
        let a1 = dag.record(&a, &[]);
        let a2 = dag.record(&a, &[]);
        let b1 = dag.record(&b, &[a1]);
        let c1 = dag.record(&c, &[b1]);
        let c2 = dag.record(&c, &[]);
        assert!(dag.is_ordered_before(a1, b1));
        assert!(
            dag.is_ordered_before(a1, c2),
            "transitive, through the in-order lane"
        );
        assert!(!dag.is_ordered_before(a2, c2), "a2 is unrelated");
        assert!(!dag.is_ordered_before(c2, c1));
        assert!(dag.is_ordered_before(c1, c2));
        dag.complete(a2);
        assert!(dag.is_ordered_before(a2, c2), "complete counts as ordered");
    }

    #[test]
    fn a_command_recorded_complete_orders_what_follows_and_leaves_others_in_flight() {
        let dag = Dag::new();
        let idle = dag.create_lane(QueueOrder::InOrder);
        let ran = dag.record_completed(&idle, &[]);
        assert!(dag.is_complete(ran) && idle.in_flight() == 0, "an idle lane moves its counters only");
        let next = dag.record(&idle, &[]);
        assert_eq!(next.seq, ran.seq + 1);
        assert!(dag.is_ordered_before(ran, next));
        assert!(!dag.is_complete(next));

        // Out of order, with a command in flight: the node takes a slot,
        // complete, and the command in flight stays so.
        let busy = dag.create_lane(QueueOrder::OutOfOrder);
        let running = dag.record(&busy, &[]);
        let host_ran = dag.record_completed(&busy, &[ran]);
        assert!(dag.is_complete(host_ran));
        assert!(!dag.is_complete(running), "another command's completion is not implied");
        assert_eq!(busy.done_upto(), 0);
        dag.complete(running);
        assert_eq!((busy.done_upto(), busy.in_flight()), (2, 0));
    }

    #[test]
    fn completed_nodes_are_pruned() {
        let dag = Dag::new();
        let a = dag.create_lane(QueueOrder::InOrder);
        let b = dag.create_lane(QueueOrder::OutOfOrder);
        let mut held = None;
        for i in 0..1000 {
            let s = dag.record(&a, &[]);
            let t = dag.record(&b, &[s]);
            dag.complete(s);
            // b's commands complete out of order: every other one a step late.
            if i % 2 == 0 {
                held = Some(t);
            } else {
                dag.complete(t);
                dag.complete(held.take().unwrap());
            }
            assert!(
                dag.in_flight() <= 2,
                "the DAG holds only the work in flight"
            );
        }
        assert_eq!(dag.in_flight(), 0);
        assert_eq!(b.done_upto(), 1000);
    }

    #[test]
    fn retired_lanes_count_as_complete() {
        let dag = Dag::new();
        let a = dag.create_lane(QueueOrder::OutOfOrder);
        let s = dag.record(&a, &[]);
        assert!(!dag.is_complete(s));
        dag.retire_lane(&a);
        assert!(dag.is_complete(s) && a.is_complete(s.seq));
        assert!(dag.lane(a.id()).is_none());
    }
}
