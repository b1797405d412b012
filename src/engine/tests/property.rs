//! Random command graphs with random completion orders.
//!
//! A simulated adapter drives the engine like a correct user program would
//! (every use of a block ordered after its allocation and before its free)
//! and runs commands in a random order that respects every real dependency:
//! wait lists, in-order queues, barriers and the dependencies the engine adds.
//! Two checks:
//! - when a block is handed out, every incomplete command of an earlier owner
//!   of any of its bytes must be an ancestor of the new allocation;
//! - each allocation fills its block with its owner's tag when it runs, and
//!   each use checks the tag when it runs.

use crate::abi::*;
use crate::engine::testkit::Rng;
use crate::engine::*;
use std::collections::HashMap;
use std::sync::Arc;

type CmdId = usize;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Action {
    /// Writes the owner's tag over the block.
    Alloc {
        owner: usize,
    },
    /// Checks the owner's tag, or writes it when `init` (the first use of an
    /// allocation that had no command of its own).
    Use {
        owner: usize,
        init: bool,
    },
    Free,
    Other,
}

struct Cmd {
    lane: usize,
    stamp: Option<Stamp>,
    deps: Vec<CmdId>,
    action: Action,
    done: bool,
}

struct Owner {
    addr: usize,
    size: usize,
    tag: u32,
    /// Commands that touch the memory (allocation and uses).
    touches: Vec<CmdId>,
    /// What a use must be ordered after: the allocation, a barrier after it,
    /// or the use that wrote the tag.
    after: CmdId,
    initialized: bool,
    uses: Vec<CmdId>,
    live: bool,
    freed_by: Option<CmdId>,
}

struct Sim {
    rng: Rng,
    dag: Arc<Dag>,
    pool: Arc<Pool>,
    mem: Arc<HostMemory>,
    /// Bytes of live owners, and their high-water mark since the last reset.
    used: usize,
    used_high: usize,
    lanes: Vec<Arc<Lane>>,
    cmds: Vec<Cmd>,
    by_stamp: HashMap<Stamp, CmdId>,
    lane_last: Vec<Option<CmdId>>,
    lane_barrier: Vec<Option<CmdId>>,
    lane_cmds: Vec<Vec<CmdId>>,
    owners: Vec<Owner>,
    not_done: Vec<CmdId>,
    next_tag: u32,
    reused_with_dep: usize,
    /// Owners freed before this index may have had their memory given back
    /// (a collection, trim or blocking free since): placement is not checked
    /// against them.
    reusable_from: usize,
    /// Allocations checked against a fitting block ordered before them.
    placement_checks: usize,
    /// The most bytes committed in ranges of virtual memory at once.
    committed_high: std::cell::Cell<usize>,
}

impl Sim {
    fn new(seed: u64, config: PoolConfig, in_order: usize, out_of_order: usize) -> Self {
        Self::with_memory(seed, config, in_order, out_of_order, HostMemory::new())
    }

    /// A simulation on `mem`: host memory with virtual memory, say.
    fn with_memory(seed: u64, config: PoolConfig, in_order: usize, out_of_order: usize, mem: HostMemory) -> Self {
        let dag = Dag::new();
        let mem = Arc::new(mem);
        let pool = Arc::new(Pool::new(dag.clone(), mem.clone(), config));
        let mut lanes = Vec::new();
        for i in 0..in_order + out_of_order {
            lanes.push(dag.create_lane(if i < in_order {
                QueueOrder::InOrder
            } else {
                QueueOrder::OutOfOrder
            }));
        }
        let n = lanes.len();
        Sim {
            rng: Rng::new(seed),
            dag,
            pool,
            mem,
            used: 0,
            used_high: 0,
            lanes,
            cmds: Vec::new(),
            by_stamp: HashMap::new(),
            lane_last: vec![None; n],
            lane_barrier: vec![None; n],
            lane_cmds: vec![Vec::new(); n],
            owners: Vec::new(),
            not_done: Vec::new(),
            next_tag: 1,
            reused_with_dep: 0,
            reusable_from: 0,
            placement_checks: 0,
            committed_high: Default::default(),
        }
    }

    /// Adds a command with the dependencies its queue gives it.
    fn add_cmd(
        &mut self,
        lane: usize,
        stamp: Option<Stamp>,
        mut deps: Vec<CmdId>,
        action: Action,
    ) -> CmdId {
        let id = self.cmds.len();
        if self.lanes[lane].is_in_order() {
            deps.extend(self.lane_last[lane]);
        } else {
            deps.extend(self.lane_barrier[lane]);
        }
        self.cmds.push(Cmd {
            lane,
            stamp,
            deps,
            action,
            done: false,
        });
        if let Some(s) = stamp {
            self.by_stamp.insert(s, id);
        }
        self.lane_last[lane] = Some(id);
        self.lane_cmds[lane].push(id);
        self.not_done.push(id);
        id
    }

    fn stamps_to_cmds(&self, stamps: &[Stamp]) -> Vec<CmdId> {
        stamps.iter().map(|s| self.by_stamp[s]).collect()
    }

    /// Up to `n` random stamped commands, most of them recent.
    fn random_wait_list(&mut self, n: u64) -> Vec<Stamp> {
        let count = self.rng.below(n + 1);
        let mut out = Vec::new();
        for _ in 0..count {
            if self.cmds.is_empty() {
                break;
            }
            let span = self.cmds.len().min(40) as u64;
            let id = self.cmds.len() - 1 - self.rng.below(span) as usize;
            if let Some(s) = self.cmds[id].stamp {
                if !out.contains(&s) {
                    out.push(s);
                }
            }
        }
        out
    }

    fn is_ancestor(&self, anc: CmdId, of: &[CmdId]) -> bool {
        let mut stack: Vec<CmdId> = of.to_vec();
        let mut seen = std::collections::HashSet::new();
        while let Some(c) = stack.pop() {
            if c == anc {
                return true;
            }
            if self.cmds[c].done || !seen.insert(c) {
                continue;
            }
            stack.extend(&self.cmds[c].deps);
        }
        false
    }

    fn alloc(&mut self) {
        let lane = self.rng.below(self.lanes.len() as u64) as usize;
        let wait = self.random_wait_list(2);
        let size = match self.rng.below(10) {
            0 => 1 + self.rng.below(48 * 1024) as usize,
            1..=3 => 1 + self.rng.below(64) as usize,
            _ => 1 + self.rng.below(4096) as usize,
        };
        let want_event = self.rng.chance(2);
        let l = self.lanes[lane].clone();
        let reserved_before = self.mem.taken();
        let a = match self.pool.alloc(&l, &wait, size, 0, want_event) {
            Ok(a) => a,
            Err(e) => {
                assert!(e == UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, "{e:?}");
                return;
            }
        };
        if want_event {
            assert!(a.stamp.is_some());
        }
        if !a.deps.is_empty() {
            self.reused_with_dep += 1;
        }
        self.count_used(a.size as isize);
        let (addr, end) = (a.ptr.as_ptr() as usize, a.ptr.as_ptr() as usize + a.size);
        let owner = self.owners.len();
        let mut deps = self.stamps_to_cmds(&wait);
        deps.extend(self.stamps_to_cmds(a.deps.as_slice()));
        // An allocation with no node runs nothing: its first use writes the tag.
        let initialized = a.stamp.is_some();
        let action = if initialized {
            Action::Alloc { owner }
        } else {
            Action::Other
        };
        let id = self.add_cmd(lane, a.stamp, deps, action);

        // No earlier owner's pending command may touch these bytes unless it is
        // ordered before the new allocation.
        for (n, o) in self.owners.iter().enumerate() {
            if o.addr < end && addr < o.addr + o.size {
                assert!(!o.live, "block handed to two live owners ({n} and {owner})");
                for &t in &o.touches {
                    if !self.cmds[t].done {
                        assert!(
                            self.is_ancestor(t, &self.cmds[id].deps),
                            "block of owner {n} handed out while its command {t} may still run\n{}",
                            self.explain(&[t, id], o.freed_by)
                        );
                    }
                }
            }
        }

        if self.mem.taken() < reserved_before {
            self.reusable_from = self.owners.len(); // growth gave idle slabs back first
        }
        self.check_placement(owner, addr, a.size, id);

        let mut after = id;
        if a.stamp.is_none() && !l.is_in_order() {
            // Nothing orders later commands after it but a barrier on its queue.
            after = self.barrier_all(lane);
        }
        let tag = self.next_tag;
        self.next_tag += 1;
        let touches = if initialized { vec![id] } else { vec![] };
        self.owners.push(Owner {
            addr,
            size: a.size,
            tag,
            touches,
            after,
            uses: Vec::new(),
            live: true,
            freed_by: None,
            initialized,
        });
    }

    /// Placement order: an allocation in space no earlier owner ever had
    /// (fresh) is wrong while a freed block that fits is ordered before it:
    /// its free and every use completed (and collected or named), or its
    /// free is an ancestor of the allocation. Checked where the engine
    /// promises it: it follows event dependencies, the block is pooled, and
    /// its bounded search of pending frees sees every one.
    fn check_placement(&mut self, owner: usize, addr: usize, size: usize, id: CmdId) {
        let config = self.pool.config();
        if !config.policy.follow_event_dependencies
            || size > config.max_poolable_size
            || self.pool.pending_blocks() > 32
        {
            return;
        }
        let end = addr + size;
        let fresh = self.owners[..owner].iter().all(|o| o.addr >= end || addr >= o.addr + o.size);
        let deps = self.cmds[id].deps.clone();
        let ordered = |sim: &Sim, c: CmdId| {
            if sim.cmds[c].done {
                config.policy.allow_opportunistic || deps.contains(&c)
            } else {
                sim.is_ancestor(c, &deps)
            }
        };
        self.placement_checks += 1;
        for (n, o) in self.owners.iter().enumerate().take(owner).skip(self.reusable_from) {
            let Some(freed_by) = o.freed_by else { continue };
            let untouched_since = self.owners[n + 1..owner]
                .iter()
                .all(|p| p.addr >= o.addr + o.size || o.addr >= p.addr + p.size);
            if o.size >= size
                && o.size <= config.max_poolable_size
                && untouched_since
                && ordered(self, freed_by)
                && o.touches.iter().all(|&t| self.cmds[t].done || self.is_ancestor(t, &deps))
            {
                assert!(
                    !fresh,
                    "allocation {owner} ({size} bytes) took fresh space although the block of owner {n} \
                     ({} bytes) was freed by a command ordered before it\n{}",
                    o.size,
                    self.explain(&[id], Some(freed_by))
                );
            }
        }
    }

    fn barrier_all(&mut self, lane: usize) -> CmdId {
        let l = self.lanes[lane].clone();
        let s = self.dag.record_barrier(&l, &[]);
        let deps: Vec<CmdId> = self.lane_cmds[lane]
            .iter()
            .copied()
            .filter(|&c| !self.cmds[c].done)
            .collect();
        let id = self.add_cmd(lane, Some(s), deps, Action::Other);
        if !l.is_in_order() {
            self.lane_barrier[lane] = Some(id);
        }
        id
    }

    fn barrier_on(&mut self, lane: usize) {
        let wait = self.random_wait_list(2);
        if wait.is_empty() {
            self.barrier_all(lane);
            return;
        }
        let l = self.lanes[lane].clone();
        let s = self.dag.record_barrier(&l, &wait);
        let deps = self.stamps_to_cmds(&wait);
        let id = self.add_cmd(lane, Some(s), deps, Action::Other);
        if !l.is_in_order() {
            self.lane_barrier[lane] = Some(id);
        }
    }

    fn other(&mut self) {
        let lane = self.rng.below(self.lanes.len() as u64) as usize;
        let wait = self.random_wait_list(3);
        let l = self.lanes[lane].clone();
        let s = self.dag.record(&l, &wait);
        let deps = self.stamps_to_cmds(&wait);
        self.add_cmd(lane, Some(s), deps, Action::Other);
    }

    fn live_owner(&mut self) -> Option<usize> {
        let live: Vec<usize> = (0..self.owners.len())
            .filter(|&o| self.owners[o].live)
            .collect();
        self.rng.pick(&live).copied()
    }

    /// A lane where a command may follow `after` (any lane if it has a stamp).
    fn lane_after(&mut self, after: CmdId) -> (usize, Vec<Stamp>) {
        match self.cmds[after].stamp {
            Some(s) => (self.rng.below(self.lanes.len() as u64) as usize, vec![s]),
            None => (self.cmds[after].lane, vec![]),
        }
    }

    fn use_block(&mut self) {
        let Some(o) = self.live_owner() else { return };
        let (lane, mut wait) = self.lane_after(self.owners[o].after);
        for s in self.random_wait_list(1) {
            if !wait.contains(&s) {
                wait.push(s);
            }
        }
        let l = self.lanes[lane].clone();
        let s = self.dag.record(&l, &wait);
        let deps = self.stamps_to_cmds(&wait);
        let init = !self.owners[o].initialized;
        let id = self.add_cmd(lane, Some(s), deps, Action::Use { owner: o, init });
        self.owners[o].touches.push(id);
        self.owners[o].uses.push(id);
        if init {
            self.owners[o].initialized = true;
            self.owners[o].after = id;
        }
    }

    fn free(&mut self) {
        let Some(o) = self.live_owner() else { return };
        let (lane, after) = self.lane_after(self.owners[o].after);
        let in_order = self.lanes[lane].is_in_order();
        let mut wait = Vec::new();
        for &u in &self.owners[o].uses {
            // On an in-order queue earlier uses there are ordered anyway.
            let implied = in_order && self.cmds[u].lane == lane;
            if !(implied && self.rng.chance(2)) {
                wait.push(self.cmds[u].stamp.unwrap());
            }
        }
        // Every use follows the allocation, so with a use ordered before the
        // free the allocation need not be named.
        if self.owners[o].uses.is_empty() || self.rng.chance(2) {
            wait.extend(
                after
                    .into_iter()
                    .filter(|s| !wait.contains(s))
                    .collect::<Vec<_>>(),
            );
        }
        let want_event = self.rng.chance(3);
        let l = self.lanes[lane].clone();
        let ptr = self.owners[o].addr as *const u8;
        // A pointer inside the block is refused.
        let inner = (self.owners[o].addr + 64.min(self.owners[o].size - 1).max(1)) as *const u8;
        assert_eq!(
            self.pool.free(&l, &wait, inner, false).unwrap_err(),
            UR_RESULT_ERROR_INVALID_VALUE
        );
        let f = self.pool.free(&l, &wait, ptr, want_event).unwrap();
        if want_event || !in_order {
            assert!(f.stamp.is_some());
        }
        let mut deps = self.stamps_to_cmds(&wait);
        deps.extend(self.stamps_to_cmds(f.deps.as_slice()));
        let fc = self.add_cmd(lane, f.stamp, deps, Action::Free);
        self.owners[o].live = false;
        self.owners[o].freed_by = Some(fc);
        self.count_used(-(self.owners[o].size as isize));
        assert_eq!(
            self.pool.free(&l, &[], ptr, false).unwrap_err(),
            UR_RESULT_ERROR_INVALID_VALUE
        );
    }

    fn free_blocking(&mut self) {
        let Some(o) = self.live_owner() else { return };
        // The user first waits for its own uses of the block.
        let touches = self.owners[o].touches.clone();
        for t in touches {
            self.run_until(t);
        }
        let after = self.owners[o].after;
        self.run_until(after);
        self.owners[o].live = false;
        self.reusable_from = self.owners.len();
        let pool = self.pool.clone();
        pool.free_blocking(self.owners[o].addr as *const u8, |s| {
            let c = self.by_stamp[&s];
            self.run_until(c);
        })
        .unwrap();
        self.count_used(-(self.owners[o].size as isize));
    }

    /// Follows the used bytes, and checks the pool's counters against them
    /// and its reserved bytes against the memory it holds.
    fn count_used(&mut self, delta: isize) {
        self.used = self.used.checked_add_signed(delta).unwrap();
        self.used_high = self.used_high.max(self.used);
        self.check_stats();
    }

    fn check_stats(&self) {
        let committed = self.pool.check_ranges();
        self.committed_high.set(self.committed_high.get().max(committed));
        let s = self.pool.stats();
        assert_eq!(
            (s.used_current, s.used_high),
            (self.used, self.used_high),
            "used bytes (current, high)"
        );
        assert_eq!(s.reserved_current, self.mem.taken(), "reserved bytes");
        assert!(s.reserved_high >= s.reserved_current);
    }

    fn reset_used_high(&mut self) {
        self.pool
            .set_info(UR_USM_POOL_INFO_USED_HIGH_EXP, 0)
            .unwrap();
        self.used_high = self.used;
        self.check_stats();
    }

    fn explain(&self, cmds: &[CmdId], free: Option<CmdId>) -> String {
        let mut out = String::new();
        for &c in cmds.iter().chain(free.as_slice()) {
            let x = &self.cmds[c];
            out += &format!(
                "cmd {c}: lane {} ({}) {:?} stamp {:?} deps {:?} done {}\n",
                x.lane,
                if self.lanes[x.lane].is_in_order() {
                    "in-order"
                } else {
                    "out-of-order"
                },
                x.action,
                x.stamp,
                x.deps,
                x.done
            );
        }
        out
    }

    fn runnable(&self, c: CmdId) -> bool {
        !self.cmds[c].done && self.cmds[c].deps.iter().all(|&d| self.cmds[d].done)
    }

    fn run(&mut self, c: CmdId) {
        debug_assert!(self.runnable(c));
        match self.cmds[c].action {
            Action::Alloc { owner } => {
                let o = &self.owners[owner];
                let words =
                    unsafe { std::slice::from_raw_parts_mut(o.addr as *mut u32, o.size / 4) };
                words.fill(o.tag);
            }
            Action::Use { owner, init: true } => {
                let o = &self.owners[owner];
                let words =
                    unsafe { std::slice::from_raw_parts_mut(o.addr as *mut u32, o.size / 4) };
                words.fill(o.tag);
            }
            Action::Use { owner, init: false } => {
                let o = &self.owners[owner];
                let words = unsafe { std::slice::from_raw_parts(o.addr as *const u32, o.size / 4) };
                let bad = words.iter().position(|&w| w != o.tag);
                assert!(
                    bad.is_none(),
                    "use {c} of owner {owner} found a foreign tag {:?}",
                    bad.map(|i| words[i])
                );
            }
            Action::Free | Action::Other => {}
        }
        self.cmds[c].done = true;
        if let Some(s) = self.cmds[c].stamp {
            self.dag.complete(s);
        }
        self.not_done.retain(|&x| x != c);
    }

    /// Runs one random runnable command.
    fn step(&mut self) -> bool {
        let ready: Vec<CmdId> = self
            .not_done
            .iter()
            .copied()
            .filter(|&c| self.runnable(c))
            .collect();
        match self.rng.pick(&ready) {
            Some(&c) => {
                self.run(c);
                true
            }
            None => false,
        }
    }

    /// Runs random runnable commands until `c` is done.
    fn run_until(&mut self, c: CmdId) {
        while !self.cmds[c].done {
            assert!(self.step(), "deadlock waiting for {c}");
        }
    }

    fn drain(&mut self) {
        while self.step() {}
        assert!(self.not_done.is_empty(), "commands left that can never run");
    }

    fn play(&mut self, steps: usize) {
        for _ in 0..steps {
            match self.rng.below(100) {
                0..=27 => self.alloc(),
                28..=49 => self.use_block(),
                50..=65 => self.free(),
                66..=67 => self.free_blocking(),
                68..=71 => {
                    let lane = self.rng.below(self.lanes.len() as u64) as usize;
                    self.barrier_on(lane);
                }
                72..=76 => self.other(),
                77 => {
                    self.pool.collect();
                    self.reusable_from = self.owners.len();
                }
                78 => {
                    self.pool.trim_to(self.rng.below(256 * 1024) as usize);
                    self.reusable_from = self.owners.len();
                }
                79 => self.reset_used_high(),
                _ => {
                    for _ in 0..1 + self.rng.below(3) {
                        self.step();
                    }
                }
            }
            if self.not_done.len() > 300 {
                for _ in 0..50 {
                    self.step();
                }
            }
        }
        // Wind down: free everything, run everything, and the pool must be empty.
        for o in 0..self.owners.len() {
            if self.owners[o].live {
                self.run_until(self.owners[o].after);
                let lane = self.cmds[self.owners[o].after].lane;
                let l = self.lanes[lane].clone();
                let uses: Vec<Stamp> = self.owners[o]
                    .uses
                    .iter()
                    .map(|&u| self.cmds[u].stamp.unwrap())
                    .collect();
                let f = self
                    .pool
                    .free(&l, &uses, self.owners[o].addr as *const u8, false)
                    .unwrap();
                let mut deps = self.stamps_to_cmds(&uses);
                deps.extend(self.stamps_to_cmds(f.deps.as_slice()));
                self.add_cmd(lane, f.stamp, deps, Action::Free);
                self.owners[o].live = false;
                self.count_used(-(self.owners[o].size as isize));
            }
        }
        self.drain();
        self.pool.collect();
        let s = self.pool.stats();
        assert_eq!(s.used_current, 0);
        assert_eq!(self.pool.pending_blocks(), 0);
        assert_eq!(self.dag.in_flight(), 0, "completed nodes are pruned");
        self.pool.trim_to(0);
        assert_eq!(self.pool.stats().reserved_current, 0);
    }
}

fn policies() -> Vec<ReusePolicy> {
    let mut out = Vec::new();
    for bits in 0..8 {
        out.push(ReusePolicy {
            follow_event_dependencies: bits & 1 != 0,
            allow_opportunistic: bits & 2 != 0,
            allow_internal_dependencies: bits & 4 != 0,
        });
    }
    out
}

fn config(policy: ReusePolicy, variant: u64) -> PoolConfig {
    let mut c = PoolConfig::new(UsmKind::Device);
    c.policy = policy;
    c.min_slab_size = 64 * 1024;
    match variant % 3 {
        0 => {}
        1 => c.max_size = 320 * 1024, // tight: reuse paths and clean failures
        _ => {
            c.max_poolable_size = 16 * 1024;
            c.release_threshold = 128 * 1024;
        }
    }
    c
}

#[test]
fn random_graphs_never_hand_out_memory_in_use() {
    let mut with_dep = 0;
    let mut checks = 0;
    for (p, policy) in policies().into_iter().enumerate() {
        for seed in 0..6u64 {
            let s = seed * 8 + p as u64;
            let mut sim = Sim::new(s, config(policy, seed), 1 + (seed % 2) as usize, 2);
            sim.play(1500);
            with_dep += sim.reused_with_dep;
            checks += sim.placement_checks;
        }
    }
    assert!(with_dep > 0, "internal dependencies were exercised");
    assert!(checks > 1000, "placement was checked ({checks} allocations)");
}

#[test]
fn random_graphs_on_out_of_order_queues_only() {
    for seed in 100..112u64 {
        let mut sim = Sim::new(seed, config(ReusePolicy::default(), seed), 0, 3);
        sim.play(2000);
    }
}

#[test]
fn random_graphs_on_in_order_queues_only() {
    for seed in 200..212u64 {
        let mut sim = Sim::new(seed, config(ReusePolicy::default(), seed), 3, 0);
        sim.play(2000);
    }
}

/// The same random graphs on a pool that commits granules of a reserved
/// range: data stays intact (a use of a granule given back would fault or
/// read zeros), reserved bytes are exactly the committed ones, and commits
/// refused by the backend (a budget below the maximum size) fail cleanly.
#[test]
fn random_graphs_on_virtual_memory() {
    let mut checks = 0;
    for (p, policy) in policies().into_iter().enumerate() {
        for seed in 0..4u64 {
            let s = 1000 + seed * 8 + p as u64;
            let budget = if seed == 3 { 192 * 1024 } else { usize::MAX };
            let mem = HostMemory::with_virtual_memory(4096 << (seed % 3), budget);
            let mut sim = Sim::with_memory(s, config(policy, seed), 1 + (seed % 2) as usize, 2, mem);
            sim.play(1500);
            checks += sim.placement_checks;
            assert!(sim.committed_high.get() > 0, "granules of a range were committed");
        }
    }
    assert!(checks > 500, "placement was checked ({checks} allocations)");
}
