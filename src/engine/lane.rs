//! One queue as the engine sees it: a counter of recorded commands, the clocks
//! of those still in flight, and how far completion has got.
//!
//! Nodes live in a ring indexed by seq. Once every command up to some seq has
//! completed, the ring drops them: the lane holds only the work in flight.

use super::clock::{Clock, LaneId, Seq, Stamp};
use super::graveyard::Graveyard;
use std::sync::atomic::{AtomicU64, Ordering::*};
use crate::lock_order::{Condvar, Mutex, MutexGuard, Rank};
use std::sync::Arc;

/// Whether consecutive commands of a queue are ordered.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum QueueOrder {
    InOrder,
    OutOfOrder,
}

#[derive(Default)]
struct Node {
    done: bool,
    /// Covers the node itself and everything ordered before it.
    clock: Clock,
}

/// Ring of nodes that keeps each slot's clock storage when it is reused.
#[derive(Default)]
struct Ring {
    slots: Vec<Node>,
    head: usize,
    len: usize,
}

impl Ring {
    fn get(&self, i: usize) -> &Node {
        &self.slots[(self.head + i) % self.slots.len()]
    }

    fn get_mut(&mut self, i: usize) -> &mut Node {
        let n = self.slots.len();
        &mut self.slots[(self.head + i) % n]
    }

    fn push(&mut self) -> &mut Node {
        if self.len == self.slots.len() {
            self.slots.rotate_left(self.head);
            self.head = 0;
            let grown = (self.slots.len() * 2).max(8);
            self.slots.resize_with(grown, Node::default);
        }
        self.len += 1;
        let node = self.get_mut(self.len - 1);
        node.done = false;
        node.clock.clear();
        node
    }

    /// Drops the slots beyond `max(len, keep)` and their clock storage.
    fn shrink(&mut self, keep: usize) -> usize {
        let want = self.len.max(keep).max(1);
        if self.slots.len() <= want {
            return 0;
        }
        let before = self.heap_bytes();
        self.slots.rotate_left(self.head);
        self.head = 0;
        self.slots.truncate(want);
        self.slots.shrink_to_fit();
        before - self.heap_bytes()
    }

    fn heap_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Node>() + self.slots.iter().map(|n| n.clock.heap_bytes()).sum::<usize>()
    }

    fn pop_front(&mut self) {
        debug_assert!(self.len > 0);
        self.head = (self.head + 1) % self.slots.len();
        self.len -= 1;
    }
}

struct LaneState {
    /// Node of seq `done_upto + 1 + i` at index `i`.
    ring: Ring,
    /// Out-of-order lanes: the clock of the last barrier, which every later
    /// command inherits.
    barrier: Clock,
    waiters: usize,
}

/// A queue registered with a [`Dag`](super::Dag). Adapters keep the
/// `Arc<Lane>` in their queue object and pass it to the engine.
pub struct Lane {
    id: LaneId,
    order: QueueOrder,
    /// Highest seq handed out (0: none yet). Written under the lock.
    last: AtomicU64,
    /// Every seq `<= done_upto` has completed. Written under the lock.
    done_upto: AtomicU64,
    /// Bumped on every completion, so pools can skip rescans.
    epoch: AtomicU64,
    state: Mutex<LaneState>,
    progress: Condvar,
    graveyard: Arc<Graveyard>,
}

/// How a new node inherits from its lane.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum NodeKind {
    Command,
    /// Ordered after its wait list only; later commands are ordered after it.
    BarrierOnWaitList,
    /// Ordered after every earlier command of the lane.
    BarrierOnAll,
}

impl Lane {
    pub(crate) fn new(id: LaneId, order: QueueOrder, graveyard: Arc<Graveyard>) -> Self {
        Lane {
            id,
            order,
            last: AtomicU64::new(0),
            done_upto: AtomicU64::new(0),
            epoch: AtomicU64::new(0),
            state: Mutex::new(Rank::LaneState, LaneState {
                ring: Ring::default(),
                barrier: Clock::new(),
                waiters: 0,
            }),
            progress: Condvar::new(),
            graveyard,
        }
    }

    fn lock(&self) -> MutexGuard<'_, LaneState> {
        // A panic elsewhere never leaves the state half-written, so a poisoned lock is usable.
        self.state.lock()
    }

    pub fn id(&self) -> LaneId {
        self.id
    }

    pub fn order(&self) -> QueueOrder {
        self.order
    }

    pub fn is_in_order(&self) -> bool {
        self.order == QueueOrder::InOrder
    }

    /// The last recorded command (`seq` 0 when none yet).
    pub fn tail(&self) -> Stamp {
        Stamp::new(self.id, self.last.load(Acquire))
    }

    /// Every command up to this seq has completed.
    pub fn done_upto(&self) -> Seq {
        self.done_upto.load(Acquire)
    }

    pub(crate) fn epoch(&self) -> u64 {
        self.epoch.load(Acquire)
    }

    /// Nodes still held (recorded and not yet pruned).
    pub fn in_flight(&self) -> usize {
        self.lock().ring.len
    }

    /// Heap bytes of the lane's node ring: it grows to the most commands
    /// ever in flight at once and keeps that size until [`shrink`](Self::shrink).
    pub fn retained_bytes(&self) -> usize {
        self.lock().ring.heap_bytes()
    }

    /// Gives back ring slots (and their clocks) beyond the commands in
    /// flight, keeping at least `keep`; returns the bytes given back. For a
    /// queue to call when a burst has drained (`urQueueFinish`), not on
    /// every command.
    pub fn shrink(&self, keep: usize) -> usize {
        self.lock().ring.shrink(keep)
    }

    pub fn is_complete(&self, seq: Seq) -> bool {
        if seq <= self.done_upto() {
            return true;
        }
        let st = self.lock();
        Self::complete_in(&st, self.done_upto(), seq)
    }

    fn complete_in(st: &LaneState, done_upto: Seq, seq: Seq) -> bool {
        if seq <= done_upto {
            return true;
        }
        let i = (seq - done_upto - 1) as usize;
        i < st.ring.len && st.ring.get(i).done
    }

    /// Calls `f` with a completion test for many seqs under one lock.
    pub(crate) fn with_completion<R>(&self, f: impl FnOnce(&dyn Fn(Seq) -> bool) -> R) -> R {
        let st = self.lock();
        let done_upto = self.done_upto();
        f(&|seq| Self::complete_in(&st, done_upto, seq))
    }

    /// Adds the clock of command `seq` (nothing when it has completed).
    pub(crate) fn join_clock_of(&self, seq: Seq, out: &mut Clock) {
        let done_upto = self.done_upto();
        if seq <= done_upto {
            return;
        }
        let st = self.lock();
        let done_upto = self.done_upto();
        if seq <= done_upto {
            return;
        }
        let i = (seq - done_upto - 1) as usize;
        if i < st.ring.len {
            out.join(&st.ring.get(i).clock);
        }
    }

    /// What a command enqueued now inherits from the lane itself: on an
    /// in-order lane everything recorded so far, on an out-of-order lane the
    /// last barrier.
    pub(crate) fn join_context(&self, out: &mut Clock) {
        let st = self.lock();
        self.join_context_locked(&st, out);
    }

    fn join_context_locked(&self, st: &LaneState, out: &mut Clock) {
        let last = self.last.load(Relaxed);
        match self.order {
            QueueOrder::InOrder => {
                if st.ring.len > 0 {
                    out.join(&st.ring.get(st.ring.len - 1).clock);
                }
                out.insert_prefix(self.id, last);
            }
            QueueOrder::OutOfOrder => out.join(&st.barrier),
        }
    }

    /// Records a new command. `deps` already holds the joined clocks of its
    /// wait list on other lanes; `same_lane` lists waits on this lane. On
    /// return `deps` is the new node's clock.
    pub(crate) fn record(&self, deps: &mut Clock, same_lane: &[Seq], kind: NodeKind) -> Stamp {
        let mut st = self.lock();
        let seq = self.last.load(Relaxed) + 1;
        let done_upto = self.done_upto.load(Relaxed);
        for &s in same_lane {
            if s > done_upto && s < seq {
                deps.join(&st.ring.get((s - done_upto - 1) as usize).clock);
            }
        }
        if kind == NodeKind::BarrierOnAll {
            for i in 0..st.ring.len {
                deps.join(&st.ring.get(i).clock);
            }
        }
        match self.order {
            // Everything recorded so far, which the new seq's prefix covers.
            QueueOrder::InOrder if st.ring.len > 0 => {
                deps.join(&st.ring.get(st.ring.len - 1).clock)
            }
            QueueOrder::InOrder => {}
            QueueOrder::OutOfOrder => deps.join(&st.barrier),
        }
        match (self.order, kind) {
            (QueueOrder::InOrder, _) | (_, NodeKind::BarrierOnAll) => {
                deps.insert_prefix(self.id, seq)
            }
            _ => deps.insert(Stamp::new(self.id, seq)),
        }
        deps.prune_lane(self.id, done_upto);
        if self.order == QueueOrder::OutOfOrder && kind != NodeKind::Command {
            st.barrier.clone_from(deps);
        }
        debug_assert_eq!(st.ring.len as u64, seq - 1 - done_upto);
        st.ring.push().clock.clone_from(deps);
        self.last.store(seq, Release);
        Stamp::new(self.id, seq)
    }

    /// Records a command that has already run, when every command of the
    /// lane before it has completed: the node is complete at birth, so it
    /// needs no clock and no slot, only the counters moved. `None` (nothing
    /// recorded) while an earlier command is still in flight.
    pub(crate) fn record_completed(&self) -> Option<Stamp> {
        let st = self.lock();
        if st.ring.len > 0 {
            return None;
        }
        let seq = self.last.load(Relaxed) + 1;
        self.last.store(seq, Release);
        self.done_upto.store(seq, Release);
        self.epoch.fetch_add(1, Release);
        if st.waiters > 0 {
            self.progress.notify_all();
        }
        drop(st);
        self.graveyard.sweep();
        Some(Stamp::new(self.id, seq))
    }

    /// Marks a command complete. On an in-order lane that completes every
    /// earlier command too. Unknown or repeated seqs are ignored.
    pub fn complete(&self, seq: Seq) {
        let advanced = {
            let mut st = self.lock();
            let done_upto = self.done_upto.load(Relaxed);
            let last = self.last.load(Relaxed);
            if seq <= done_upto || seq > last {
                return;
            }
            let i = (seq - done_upto - 1) as usize;
            match self.order {
                QueueOrder::InOrder => (0..=i).for_each(|j| st.ring.get_mut(j).done = true),
                QueueOrder::OutOfOrder => st.ring.get_mut(i).done = true,
            }
            let mut upto = done_upto;
            while st.ring.len > 0 && st.ring.get(0).done {
                st.ring.pop_front();
                upto += 1;
            }
            self.done_upto.store(upto, Release);
            self.epoch.fetch_add(1, Release);
            if upto > done_upto && st.barrier.prefix(self.id) <= upto {
                st.barrier
                    .prune(|lane| if lane == self.id { upto } else { 0 });
            }
            if st.waiters > 0 {
                self.progress.notify_all();
            }
            upto > done_upto
        };
        if advanced {
            self.graveyard.sweep();
        }
    }

    /// Marks everything recorded so far complete (the queue has drained).
    pub(crate) fn complete_all(&self) {
        let last = self.last.load(Acquire);
        match self.order {
            QueueOrder::InOrder => self.complete(last),
            QueueOrder::OutOfOrder => (self.done_upto() + 1..=last).for_each(|s| self.complete(s)),
        }
    }

    /// Blocks until command `seq` has completed.
    pub fn wait(&self, seq: Seq) {
        let mut st = self.lock();
        st.waiters += 1;
        while !Self::complete_in(&st, self.done_upto(), seq) && seq <= self.last.load(Relaxed) {
            st = self.progress.wait(st);
        }
        st.waiters -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lane(order: QueueOrder) -> Lane {
        Lane::new(LaneId(1), order, Arc::new(Graveyard::default()))
    }

    /// Records a node of `kind` on `l` after the same-lane seqs `wait`, into
    /// the clock `c` cleared first: `c` then covers the node and exactly what
    /// it depends on.
    fn record(l: &Lane, c: &mut Clock, wait: &[Seq], kind: NodeKind) -> Stamp {
        c.clear();
        l.record(c, wait, kind)
    }

    /// A lane of `order` with two commands recorded, `a` then `b`, and the
    /// clock of `b`.
    fn two_commands(order: QueueOrder) -> (Lane, Clock, Stamp, Stamp) {
        let l = lane(order);
        let mut c = Clock::new();
        let a = record(&l, &mut c, &[], NodeKind::Command);
        let b = record(&l, &mut c, &[], NodeKind::Command);
        (l, c, a, b)
    }

    #[test]
    fn in_order_nodes_cover_their_predecessors_and_are_pruned() {
        let (l, c, a, b) = two_commands(QueueOrder::InOrder);
        assert!(c.covers(a) && c.covers(b));
        assert_eq!(l.in_flight(), 2);
        l.complete(b.seq);
        assert!(l.is_complete(a.seq), "in order: b done implies a done");
        assert_eq!(l.in_flight(), 0);
        assert_eq!(l.done_upto(), 2);
    }

    #[test]
    fn a_drained_burst_gives_its_ring_back_and_the_lane_still_works() {
        for order in [QueueOrder::InOrder, QueueOrder::OutOfOrder] {
            let l = lane(order);
            let mut c = Clock::new();
            let small = l.retained_bytes();
            let mut last = Stamp::new(LaneId(1), 0);
            for _ in 0..10_000 {
                last = record(&l, &mut c, &[], NodeKind::Command);
            }
            // Half in flight: shrinking keeps what the commands in flight use.
            (1..=5_000).for_each(|s| l.complete(s));
            let burst = l.retained_bytes();
            assert!(burst > 10_000 * std::mem::size_of::<Node>());
            l.shrink(8);
            assert_eq!(l.in_flight(), 5_000);
            assert!(!l.is_complete(5_001) && l.is_complete(5_000));
            (5_001..=last.seq).for_each(|s| l.complete(s));
            assert!(l.is_complete(last.seq));
            assert!(l.shrink(8) > 0);
            let kept = l.retained_bytes();
            assert!(kept <= small.max(8 * (std::mem::size_of::<Node>() + 128)), "{order:?}: kept {kept} B of {burst} B");
            let next = record(&l, &mut c, &[], NodeKind::Command);
            assert_eq!(next.seq, last.seq + 1);
            assert!(c.covers(next) && !l.is_complete(next.seq));
            l.complete(next.seq);
            assert_eq!(l.in_flight(), 0);
        }
    }

    #[test]
    fn out_of_order_nodes_are_independent() {
        let (l, c, a, b) = two_commands(QueueOrder::OutOfOrder);
        assert!(c.covers(b) && !c.covers(a));
        l.complete(b.seq);
        assert!(l.is_complete(b.seq) && !l.is_complete(a.seq));
        assert_eq!(l.in_flight(), 2, "b waits behind a in the ring");
        l.complete(a.seq);
        assert_eq!(l.in_flight(), 0);
    }

    #[test]
    fn out_of_order_barrier_orders_later_commands() {
        let l = lane(QueueOrder::OutOfOrder);
        let mut c = Clock::new();
        let a = record(&l, &mut c, &[], NodeKind::Command);
        let bar = record(&l, &mut c, &[], NodeKind::BarrierOnAll);
        let d = record(&l, &mut c, &[], NodeKind::Command);
        assert!(c.covers(a) && c.covers(bar) && c.covers(d));
        // A barrier on a wait list orders only what it waits on.
        let e = record(&l, &mut c, &[], NodeKind::Command);
        let bar2 = record(&l, &mut c, &[e.seq], NodeKind::BarrierOnWaitList);
        let f = record(&l, &mut c, &[], NodeKind::Command);
        assert!(c.covers(e) && c.covers(bar2) && c.covers(bar) && !c.covers(d));
        let _ = f;
    }

    #[test]
    fn wait_returns_once_complete() {
        let l = Arc::new(lane(QueueOrder::InOrder));
        let mut c = Clock::new();
        let a = record(&l, &mut c, &[], NodeKind::Command);
        let l2 = l.clone();
        let t = std::thread::spawn(move || l2.complete(a.seq));
        l.wait(a.seq);
        assert!(l.is_complete(a.seq));
        t.join().unwrap();
    }
}
