//! Scenarios 3, 4 and 8: a block handed from a free to the next
//! allocation by events (on one out-of-order queue, across two queues,
//! across two devices), with the share of allocations that reused memory.

use super::{blocking_rounds, DeviceRun, Rows, KEEP_RESERVED, SIZE};
use crate::measure::{measure_against, timed_batch, Batch, Variant};
use crate::report::{size_label, Goal, Outcome, RatioKind, Row, Unit};
use crate::session::{Event, Pool, Queue, Session};
use std::collections::HashSet;
use ur_conformance::ur::CallError;

impl DeviceRun<'_, '_> {
    // --- 3 ------------------------------------------------------------------

    /// Scenario 3: chains on an out-of-order queue ordered only by events:
    /// alloc -> fill (waits alloc) -> free (waits fill) -> the next alloc
    /// (waits the free). Reuse is read from the addresses handed out.
    pub fn chains(&self) -> Rows {
        let name = format!("event chains, {}, out-of-order", size_label(SIZE));
        let unit = Unit::NanosPer("chain");
        let queue = self.set_up(3, &name, unit, self.session.queue(true))?;
        let (pool, pool_notes) = self.own_pool();
        let session = self.session;
        // SAFETY: live queue and session; each block is freed once, after
        // the fill that used it.
        let mut baseline = |batch: Batch| unsafe {
            blocking_rounds(session, batch, SIZE, |mem| {
                let filled = queue.fill(mem, SIZE, &[], true)?;
                session.wait(&[filled.as_ref().unwrap()])
            })
        };
        let chain = Chain { alloc_q: &queue, free_q: &queue, in_order: false, pool: pool.as_ref() };
        let run = Run { scenario: 3, name, unit, label: "chains" };
        Ok(self.handover_rows(run, chain, &mut baseline, pool_notes, "blocking alloc, fill, event wait, free"))
    }

    // --- 4 ------------------------------------------------------------------

    /// Scenario 4: memory handed from queue A back to queue B by events: B
    /// allocates (waiting on A's last free) and fills; A frees after the
    /// fill, with an event for B's next allocation.
    pub fn cross_queue(&self) -> Rows {
        let name = format!("free on A -> alloc on B by event, {}", size_label(SIZE));
        let unit = Unit::NanosPer("handover");
        let (queue_a, queue_b) = self.set_up(4, &name, unit, self.session.two_queues())?;
        let (pool, pool_notes) = self.own_pool();
        let session = self.session;
        // SAFETY: live queue and session; each block is freed once, after
        // B's fill of it.
        let mut baseline = |batch: Batch| unsafe {
            blocking_rounds(session, batch, SIZE, |mem| {
                queue_b.fill(mem, SIZE, &[], false)?;
                queue_b.finish()
            })
        };
        let chain = Chain { alloc_q: &queue_b, free_q: &queue_a, in_order: true, pool: pool.as_ref() };
        let run = Run { scenario: 4, name, unit, label: "handovers" };
        Ok(self.handover_rows(run, chain, &mut baseline, pool_notes, "blocking alloc, fill on B, finish, free"))
    }

    // --- 8 ------------------------------------------------------------------

    /// Scenario 8: two devices of one context hand a block to each other
    /// through events: the device `other` allocates from its default pool
    /// (waiting on the last free) and fills; this device's queue frees after
    /// the fill, and the free's event orders the next allocation. Baseline:
    /// the same handover between two queues of `other`, in the same context
    /// and run.
    pub fn two_devices(&self, other: ur_core::abi::ur_device_handle_t) -> Rows {
        let name = format!("free on device A -> alloc on device B by event, {}", size_label(SIZE));
        let unit = Unit::NanosPer("handover");
        let pair = self.set_up(8, &name, unit, Session::open_many(self.session.api, &[self.session.device, other]))?;
        let queues = match (pair.queue(false), pair.queue_on(other, false), pair.queue_on(other, false)) {
            (Ok(a), Ok(b), Ok(b2)) => Ok((a, b, b2)),
            (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => Err(e),
        };
        let (a, b, b2) = self.set_up(8, &name, unit, queues)?;
        let mut baseline = |batch: Batch| {
            let mut addresses = Vec::with_capacity(batch.iterations);
            // SAFETY: live queues of one context; each block is freed once,
            // after the fill of it.
            timed_batch(batch, || unsafe { handover_chain(&b, &b2, true, None, batch.iterations, &mut addresses) })
        };
        let chain = Chain { alloc_q: &b, free_q: &a, in_order: true, pool: None };
        let run = Run { scenario: 8, name, unit, label: "handovers" };
        let notes = vec!["the device's default pool served (its release threshold left as it is)".into()];
        Ok(self.handover_rows(run, chain, &mut baseline, notes, "the same handover between two queues of device B"))
    }

    /// A pool of the scenario's own, keeping its slabs, so that its
    /// statistics and addresses speak for this scenario alone. Without one
    /// (the call fails) the device's current pool serves, and notes say so.
    fn own_pool(&self) -> (Option<Pool<'_>>, Vec<String>) {
        match self.session.pool() {
            Ok(pool) => {
                let notes = match pool.set_release_threshold(KEEP_RESERVED) {
                    Ok(()) => Vec::new(),
                    Err(e) => vec![format!(
                        "release threshold not raised ({e}): reuse by address may count re-reserved memory"
                    )],
                };
                (Some(pool), notes)
            }
            Err(e) => (None, vec![format!("no pool of its own ({e}): the device's current pool served")]),
        }
    }

    /// Times `chain` (counting reuse by address) against `baseline`, and
    /// reports both as a cost row and a reuse row; `pool_notes` go with the
    /// reuse rate, after the pool's high-water marks.
    fn handover_rows(
        &self,
        Run { scenario, name, unit, label }: Run,
        chain: Chain,
        baseline: Variant,
        mut pool_notes: Vec<String>,
        baseline_text: &str,
    ) -> Vec<Row> {
        let mut reuse = ReuseCounter::default();
        let mut ours = |batch: Batch| {
            let mut addresses = Vec::with_capacity(batch.iterations);
            // SAFETY: the chain's queues and pool are live for the call; each
            // block is freed once, after the fill of it.
            let Chain { alloc_q, free_q, in_order, pool } = chain;
            let sample = timed_batch(batch, || unsafe {
                handover_chain(alloc_q, free_q, in_order, pool, batch.iterations, &mut addresses)
            })?;
            reuse.record(&addresses, batch.timed);
            Ok(sample)
        };
        let measured = measure_against(&self.budget.scaled(0.25), self.progress, label, &mut ours, baseline);
        pool_notes.extend(pool_high_water(chain.pool));
        let mut cost = self.cost_row(scenario, format!("{name}: cost"), unit, &measured);
        cost.notes.push(format!("baseline: {baseline_text}"));
        let mut rate = self.row(scenario, format!("{name}: reuse"), Unit::Percent);
        rate.ratio_kind = RatioKind::None;
        rate.goal = Some(Goal::OursAtLeast(100.0));
        let ours = &measured.0;
        rate.ours = match (ours, reuse.rate()) {
            (Ok(_), Some(percent)) => Outcome::plain(percent),
            (Ok(_), None) => Outcome::Failed("no timed allocation".into()),
            (Err(e), _) => Outcome::from_error(e),
        };
        if ours.is_ok() {
            rate.notes.push(format!(
                "{} of {} timed allocations at an address handed out before (steady state, after warm-up)",
                reuse.reused, reuse.total
            ));
            rate.notes.extend(pool_notes);
        }
        vec![cost, rate]
    }
}

/// What names a scenario's rows and its progress lines.
struct Run {
    scenario: u32,
    name: String,
    unit: Unit,
    label: &'static str,
}

/// The arguments of one [`handover_chain`] but the length.
#[derive(Clone, Copy)]
struct Chain<'a, 's> {
    alloc_q: &'a Queue<'s>,
    free_q: &'a Queue<'s>,
    in_order: bool,
    pool: Option<&'a Pool<'s>>,
}

/// The pool's high-water marks as a note (or why they are unknown).
fn pool_high_water(pool: Option<&Pool>) -> Option<String> {
    let pool = pool?;
    Some(match pool.high_water() {
        Ok((reserved, used)) => format!(
            "pool high water: reserved {}, used {}",
            crate::report::format_bytes(reserved as f64),
            crate::report::format_bytes(used as f64)
        ),
        Err(e) => format!("pool high water unknown: {e}"),
    })
}

/// Counts allocations served at an address already handed out: with a pool
/// that keeps its slabs, that is memory the pool reused.
#[derive(Default)]
struct ReuseCounter {
    seen: HashSet<usize>,
    reused: usize,
    total: usize,
}

impl ReuseCounter {
    fn record(&mut self, addresses: &[usize], timed: bool) {
        for &address in addresses {
            let before = !self.seen.insert(address);
            if timed {
                self.total += 1;
                self.reused += before as usize;
            }
        }
    }

    fn rate(&self) -> Option<f64> {
        (self.total > 0).then(|| 100.0 * self.reused as f64 / self.total as f64)
    }
}

/// The loop scenarios 3 and 4 time: each allocation on `alloc_q` waits on
/// the previous free (kept on the stack: no allocation in the loop), its
/// block is filled on `alloc_q` after it, then freed on `free_q` after the
/// fill. On an out-of-order queue the allocation's event orders the fill;
/// on an in-order one the queue does.
///
/// # Safety
/// Live queues and pool; each block is freed once, after the fill.
unsafe fn handover_chain(
    alloc_q: &Queue,
    free_q: &Queue,
    in_order: bool,
    pool: Option<&Pool>,
    iterations: usize,
    addresses: &mut Vec<usize>,
) -> Result<(), CallError> {
    let mut previous_free: Option<Event> = None;
    for _ in 0..iterations {
        let one;
        let waits: &[&Event] = match &previous_free {
            Some(event) => {
                one = [event];
                &one
            }
            None => &[],
        };
        let (mem, allocated) = alloc_q.alloc_async(pool, SIZE, waits, !in_order)?;
        addresses.push(mem as usize);
        let after_alloc = allocated.as_ref().map(|e| [e]);
        let filled = alloc_q.fill(mem, SIZE, after_alloc.as_ref().map_or(&[][..], |e| &e[..]), true)?;
        previous_free = free_q.free_async(pool, mem, &[filled.as_ref().unwrap()], true)?;
    }
    drop(previous_free);
    alloc_q.finish()?;
    if !std::ptr::eq(alloc_q, free_q) {
        free_q.finish()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reuse_counts_only_timed_batches() {
        let mut counter = ReuseCounter::default();
        counter.record(&[1, 2, 1], false);
        assert_eq!(counter.rate(), None);
        counter.record(&[1, 3, 3], true);
        assert_eq!((counter.reused, counter.total), (2, 3));
    }
}
