//! Word of completion for backends that report it through their own events
//! (OpenCL `cl_event`, CUDA `CUevent`, Level Zero `ze_event`), and the one
//! way the host waits for a command of the graph.
//!
//! A queue keeps a [`Tracker`]: the completions of some of its commands,
//! oldest first. It is polled as commands are submitted (in steps, so that
//! polling stays cheap) and settled at host synchronisation points, always
//! on a user thread: the engine's releases never run on a runtime's
//! callback thread.
//!
//! On an in-order lane a completion covers every earlier command, so only
//! every [`TRACK_EVERY`]-th one need be kept (plus, where the backend hands
//! out an event per command anyway, the newest); on an out-of-order lane
//! each command needs its own.

use super::clock::{Seq, Stamp};
use super::dag::Dag;
use super::lane::Lane;
use std::collections::VecDeque;
use std::sync::Arc;

/// An in-order lane keeps the completion of every this-many-th command, so
/// that the engine hears of completion in steps.
pub const TRACK_EVERY: u32 = 32;

/// Completions a tracker holds before it first looks which have finished.
pub const POLL_AT: usize = 8;

/// Where a backend's command stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    Pending,
    Complete,
    /// Ended in error: it will not run any further, so it counts as finished.
    Failed,
}

impl Progress {
    pub fn is_finished(self) -> bool {
        self != Progress::Pending
    }
}

/// A backend's handle on the completion of a command (an event).
pub trait Completion {
    /// Where the command stands, without blocking.
    fn poll(&self) -> Progress;
    /// Blocks until the command has finished (completed or failed).
    fn wait(&self);
}

impl<C: Completion + ?Sized> Completion for Arc<C> {
    fn poll(&self) -> Progress {
        (**self).poll()
    }

    fn wait(&self) {
        (**self).wait()
    }
}

/// For backends with nothing to wait on (their completion reaches the
/// engine by other means): see [`Cover::Reported`].
impl Completion for std::convert::Infallible {
    fn poll(&self) -> Progress {
        match *self {}
    }

    fn wait(&self) {
        match *self {}
    }
}

/// The completions of one lane's commands, oldest first, and the lane they
/// are reported to.
pub struct Tracker<C> {
    lane: Arc<Lane>,
    pending: VecDeque<(Seq, C)>,
    /// Whether the newest may stay when the next comes (see [`Tracker::offer`]).
    back_kept: bool,
    /// Commands counted since one was kept (in order).
    since_kept: u32,
    /// Length at which [`poll_if_due`](Tracker::poll_if_due) polls.
    poll_at: usize,
}

impl<C: Completion> Tracker<C> {
    pub fn new(lane: Arc<Lane>) -> Self {
        Tracker { lane, pending: VecDeque::new(), back_kept: true, since_kept: 0, poll_at: POLL_AT }
    }

    pub fn lane(&self) -> &Arc<Lane> {
        &self.lane
    }

    /// Completions held.
    pub fn len(&self) -> usize {
        self.pending.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// Counts a command just recorded on the lane, for backends that make a
    /// completion only when asked: whether this one needs its own (always
    /// out of order; in order, every [`TRACK_EVERY`]-th).
    pub fn wants_completion(&mut self) -> bool {
        self.since_kept += 1;
        !self.lane.is_in_order() || self.since_kept >= TRACK_EVERY
    }

    /// Keeps `c`, the completion of command `seq` (later than any held), to
    /// report it.
    pub fn push(&mut self, seq: Seq, c: C) {
        debug_assert!(self.pending.back().is_none_or(|(s, _)| *s < seq));
        self.since_kept = 0;
        self.back_kept = true;
        self.pending.push_back((seq, c));
    }

    /// For backends that hand out a completion for every command: offers
    /// that of command `seq`, just submitted. In order, it is kept when it
    /// is a [`TRACK_EVERY`]-th, else held only until the next (which covers
    /// it), so that the newest command's completion is always at hand.
    /// Polls when enough have piled up; dropped or settled completions go
    /// to `settled`.
    pub fn offer(&mut self, seq: Seq, c: C, mut settled: impl FnMut(C)) {
        debug_assert!(self.pending.back().is_none_or(|(s, _)| *s < seq));
        if self.lane.is_in_order() {
            if !self.back_kept {
                if let Some((_, covered)) = self.pending.pop_back() {
                    settled(covered);
                }
            }
            self.back_kept = self.wants_completion();
            if self.back_kept {
                self.since_kept = 0;
            }
        }
        self.pending.push_back((seq, c));
        self.poll_if_due(settled);
    }

    /// Whether enough completions have piled up since the last poll to be
    /// worth another (a query may cost a driver call).
    pub fn due(&self) -> bool {
        self.pending.len() >= self.poll_at
    }

    /// Polls when [`due`](Self::due).
    pub fn poll_if_due(&mut self, settled: impl FnMut(C)) {
        if self.due() {
            self.poll(settled);
        }
    }

    /// Reports the commands whose completions have finished; those go to
    /// `settled`.
    pub fn poll(&mut self, mut settled: impl FnMut(C)) {
        if self.lane.is_in_order() {
            // The newest finished means all have: one query in the common case.
            let done = if self.pending.back().is_some_and(|(_, c)| c.poll().is_finished()) {
                self.pending.len()
            } else {
                self.pending.iter().take_while(|(_, c)| c.poll().is_finished()).count()
            };
            if done > 0 {
                self.lane.complete(self.pending[done - 1].0);
                self.pending.drain(..done).for_each(|(_, c)| settled(c));
            }
        } else {
            for _ in 0..self.pending.len() {
                let (seq, c) = self.pending.pop_front().expect("counted");
                if c.poll().is_finished() {
                    self.lane.complete(seq);
                    settled(c);
                } else {
                    self.pending.push_back((seq, c));
                }
            }
        }
        // Out-of-order commands finish in any order, so unfinished ones may
        // stay: the next poll comes once the list has doubled, so that
        // polling costs stay linear in the commands submitted.
        self.poll_at = (2 * self.pending.len()).max(POLL_AT);
    }

    /// Waits on the host for every completion held, then reports them.
    pub fn wait_all(&mut self, settled: impl FnMut(C)) {
        self.pending.iter().for_each(|(_, c)| c.wait());
        self.poll(settled);
    }

    /// Whether every command with a completion held has finished, looking
    /// (without waiting) at them.
    pub fn all_finished(&mut self, settled: impl FnMut(C)) -> bool {
        self.poll(settled);
        self.pending.is_empty()
    }

    /// Every command up to `last` has completed (the host synchronised with
    /// the backend after reading the lane's tail); their completions are dropped.
    pub fn complete_upto(&mut self, last: Seq) {
        self.pending.retain(|(seq, _)| *seq > last);
        if self.lane.is_in_order() {
            self.lane.complete(last);
        } else {
            (self.lane.done_upto() + 1..=last).for_each(|s| self.lane.complete(s));
        }
    }

    /// In order: the completion of the newest command held, which covers
    /// every command before it. `None` out of order.
    pub fn newest(&self) -> Option<&C> {
        self.lane.is_in_order().then(|| self.pending.back().map(|(_, c)| c)).flatten()
    }

    /// What covers command `seq` of this lane: [`Cover::Done`] when the
    /// engine knows it has completed, else [`Cover::By`] a completion whose
    /// end implies its own; `None` when no such completion is held (the
    /// backend must then make one, or synchronise).
    pub fn cover(&self, seq: Seq) -> Option<Cover<&C>> {
        if self.lane.is_complete(seq) {
            return Some(Cover::Done);
        }
        let found = if self.lane.is_in_order() {
            self.pending.iter().find(|(s, _)| *s >= seq)
        } else {
            self.pending.iter().find(|(s, _)| *s == seq)
        };
        found.map(|(_, c)| Cover::By(c))
    }
}

/// What the host can wait on for one command of the graph.
pub enum Cover<C> {
    /// It has completed: the engine knows, or the backend does (the host
    /// has just synchronised with it).
    Done,
    /// A completion whose end implies the command's.
    By(C),
    /// Nothing to wait on here: the backend reports the command's completion
    /// to the engine itself (its own threads, or a host synchronisation
    /// under way on another thread).
    Reported,
}

/// Blocks until command `stamp` has completed and makes sure the engine
/// knows: the one host wait for a stamp, for every backend (a blocking free
/// of pool memory, a blocking allocation of a block whose free is pending).
/// `cover` is asked only while the engine does not know it complete.
pub fn wait_for_stamp<C: Completion>(dag: &Dag, stamp: Stamp, cover: impl FnOnce(Stamp) -> Cover<C>) {
    if dag.is_complete(stamp) {
        return;
    }
    match cover(stamp) {
        Cover::Done => dag.complete(stamp),
        Cover::By(c) => {
            // A failed command is finished too: it will touch nothing more.
            c.wait();
            dag.complete(stamp);
        }
        Cover::Reported => dag.wait(stamp),
    }
}

/// [`wait_for_stamp`] for backends whose completion reaches the engine by
/// its own means (the native CPU adapter's worker threads).
pub fn wait_reported(dag: &Dag, stamp: Stamp) {
    wait_for_stamp::<std::convert::Infallible>(dag, stamp, |_| Cover::Reported);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::lane::QueueOrder;
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    use std::sync::{Condvar, Mutex};
    use std::time::Duration;

    /// Host work finishing on another thread, as a backend's event: its
    /// state is set by whoever runs the work, and every query is counted.
    #[derive(Default)]
    struct Signal {
        state: Mutex<Option<Progress>>,
        changed: Condvar,
        polls: AtomicUsize,
    }

    impl Signal {
        fn new() -> Arc<Signal> {
            Arc::default()
        }

        fn finish(&self, how: Progress) {
            *self.state.lock().unwrap() = Some(how);
            self.changed.notify_all();
        }
    }

    impl Completion for Signal {
        fn poll(&self) -> Progress {
            self.polls.fetch_add(1, Relaxed);
            self.state.lock().unwrap().unwrap_or(Progress::Pending)
        }

        fn wait(&self) {
            let mut s = self.state.lock().unwrap();
            while s.is_none() {
                s = self.changed.wait(s).unwrap();
            }
        }
    }

    fn setup(order: QueueOrder) -> (Arc<Dag>, Tracker<Arc<Signal>>) {
        let dag = Dag::new();
        let lane = dag.create_lane(order);
        (dag, Tracker::new(lane))
    }

    #[test]
    fn in_order_offers_keep_every_nth_and_the_newest() {
        let (dag, mut t) = setup(QueueOrder::InOrder);
        let signals: Vec<_> = (0..100).map(|_| Signal::new()).collect();
        let mut dropped = 0;
        for s in &signals {
            let seq = dag.record(t.lane(), &[]).seq;
            t.offer(seq, s.clone(), |_| dropped += 1);
        }
        // Kept: seqs 32, 64, 96 and the newest, 100.
        assert_eq!(t.len(), 4);
        assert_eq!(dropped, 96);
        assert!(Arc::ptr_eq(t.newest().unwrap(), &signals[99]));
        // Command 40 is covered by the completion of command 64.
        assert!(matches!(t.cover(40), Some(Cover::By(c)) if Arc::ptr_eq(c, &signals[63])));
        // In order, so the first 64 finish together: up to 64 completes, no more.
        signals[..64].iter().for_each(|s| s.finish(Progress::Complete));
        t.poll(drop);
        assert!(t.lane().is_complete(64) && !t.lane().is_complete(65));
        assert!(matches!(t.cover(40), Some(Cover::Done)));
        // A failed command finishes too; the newest settles everything.
        signals[99].finish(Progress::Failed);
        assert!(t.all_finished(drop));
        assert!(t.lane().is_complete(100));
    }

    #[test]
    fn on_demand_completions_come_every_nth_command_in_order() {
        let (dag, mut t) = setup(QueueOrder::InOrder);
        let mut asked = Vec::new();
        for _ in 0..70 {
            let seq = dag.record(t.lane(), &[]).seq;
            if t.wants_completion() {
                asked.push(seq);
                t.push(seq, Signal::new());
            }
        }
        assert_eq!(asked, [32, 64]);
        // No completion covers 65..=70 yet: the backend must make one.
        assert!(t.cover(66).is_none());
        t.push(70, Signal::new());
        assert!(matches!(t.cover(66), Some(Cover::By(_))));
        // A push restarts the count.
        let next: Vec<bool> = (0..TRACK_EVERY).map(|_| t.wants_completion()).collect();
        assert_eq!(next.iter().position(|&w| w), Some(TRACK_EVERY as usize - 1));
    }

    #[test]
    fn out_of_order_completions_report_each_command_and_polls_stay_linear() {
        let (dag, mut t) = setup(QueueOrder::OutOfOrder);
        let signals: Vec<_> = (0..1000).map(|_| Signal::new()).collect();
        // The first command never finishes here; every other one does at once.
        for (i, s) in signals.iter().enumerate() {
            let seq = dag.record(t.lane(), &[]).seq;
            assert!(t.wants_completion());
            if i > 0 {
                s.finish(Progress::Complete);
            }
            t.push(seq, s.clone());
            t.poll_if_due(drop);
        }
        let polls: usize = signals.iter().map(|s| s.polls.load(Relaxed)).sum();
        assert!(polls < 4 * signals.len(), "{polls} queries for {} commands", signals.len());
        t.poll(drop);
        assert_eq!(t.len(), 1);
        assert!(!t.lane().is_complete(1) && t.lane().is_complete(2) && t.lane().is_complete(1000));
        assert!(t.newest().is_none(), "out of order, no completion covers others");
        assert!(matches!(t.cover(1), Some(Cover::By(_))));
        // The host synchronised after reading the tail: all done, held ones dropped.
        t.complete_upto(1000);
        assert!(t.is_empty() && t.lane().is_complete(1));
    }

    #[test]
    fn a_stamp_wait_blocks_until_its_completion_and_tells_the_engine() {
        let (dag, mut t) = setup(QueueOrder::InOrder);
        let stamp = dag.record(t.lane(), &[]);
        let signal = Signal::new();
        t.push(stamp.seq, signal.clone());
        let worker = {
            let signal = signal.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                signal.finish(Progress::Complete);
            })
        };
        wait_for_stamp(&dag, stamp, |s| match t.cover(s.seq) {
            Some(Cover::By(c)) => Cover::By(c.clone()),
            _ => Cover::Done,
        });
        assert!(signal.poll().is_finished(), "returned before the work finished");
        assert!(dag.is_complete(stamp));
        worker.join().unwrap();
        // Complete stamps are not asked about again.
        wait_for_stamp::<Arc<Signal>>(&dag, stamp, |_| unreachable!());
    }

    #[test]
    fn a_stamp_wait_reported_through_the_engine_blocks_until_reported() {
        let dag = Dag::new();
        let lane = dag.create_lane(QueueOrder::InOrder);
        let stamp = dag.record(&lane, &[]);
        let reporter = {
            let lane = lane.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                lane.complete(stamp.seq);
            })
        };
        wait_reported(&dag, stamp);
        assert!(dag.is_complete(stamp));
        reporter.join().unwrap();
        // Done: the backend knows (it synchronised); the engine is told.
        let next = dag.record(&lane, &[]);
        wait_for_stamp::<Arc<Signal>>(&dag, next, |_| Cover::Done);
        assert!(dag.is_complete(next));
    }
}
