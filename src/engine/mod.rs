//! The async pool engine: an event DAG and memory pools that let an
//! asynchronous allocation reuse memory released by an asynchronous free as
//! soon as the event order proves that no pending command can still touch it.
//!
//! It knows no backend. An adapter feeds it commands (as they are enqueued
//! and as they complete) and raw memory (through [`MemorySource`]).
//!
//! # How an adapter drives it
//!
//! **Per context** make one [`Engine`] (or a bare [`Dag`] plus [`Pool`]s).
//! Every queue whose events may appear in another's wait list must share the
//! same `Dag`.
//!
//! **Per queue** call [`Dag::create_lane`] with [`QueueOrder`] and keep the
//! `Arc<Lane>` in the queue. When the queue has drained and goes away, call
//! [`Dag::retire_lane`].
//!
//! **Per command** (kernel, copy, fill, wait, ...) call [`Dag::record`]
//! (or [`Dag::record_barrier`]) with the lane and the wait list as
//! [`Stamp`]s, and keep the returned `Stamp` in the command's event. Every
//! command that may touch memory must be recorded, with or without an event.
//! When it completes, call [`Dag::complete`] (or [`Lane::complete`]); on an
//! in-order lane completing a command completes every earlier one too.
//! Backends whose commands complete through their own events keep a
//! [`Tracker`] per queue over a [`Completion`] (`completion.rs`), polled as
//! commands are submitted and settled at host synchronisation points.
//! [`wait_for_stamp`] is the one host wait for a stamp, on every backend
//! ([`wait_reported`] where completion reaches the engine by itself).
//!
//! **Async allocation** (`urEnqueueUSM*AllocExp`): [`Pool::alloc`] with the
//! lane, the wait list, size, alignment and whether an event is wanted. It
//! returns an [`Allocation`]: the pointer, extra dependencies `deps` the
//! allocation command must also wait for, whether to zero the block, and
//! `stamp`: when `Some`, the adapter enqueues the allocation as a command
//! after the wait list and `deps` (zeroing first when asked) and reports the
//! stamp complete; when `None` there is nothing to run (in-order queue, no
//! wait list, no event, no dependency).
//!
//! Reuse order: on an in-order queue, first one of exactly the right size
//! among the few blocks it freed last (parked in its lane cache; no wait
//! needed, completed or not); then 1. a block whose free has completed;
//! 2. one freed earlier on the same in-order queue, or whose free the wait
//! list (or a barrier) orders before the allocation; 3. by policy
//! ([`ReusePolicy`]), a pending block, its free returned in `deps`; 4. slab
//! space never handed out, then a new slab, up to the pool's maximum size.
//! Before a new slab, every parked block that step 1 or 2 may take has gone
//! back to the pool, merged with its free neighbours.
//!
//! **Granules.** Where the source has virtual memory
//! ([`MemorySource::virtual_memory`]) a pool reserves address ranges
//! instead of slabs and commits them in the backend's granule as blocks go
//! into use (`vm.rs`); RESERVED counts the committed bytes. A committed
//! granule that no live, pending or parked block touches is idle: idle
//! granules are decommitted at the release threshold (synchronisation
//! points) and by [`Pool::trim_to`], and when committing would lift
//! RESERVED above its high-water mark, idle granules are decommitted first
//! (the biggest free blocks' first), so the mark rises only when none is
//! idle. A failed commit fails the allocation with out-of-memory and
//! changes nothing else.
//!
//! **Async free** (`urEnqueueUSMFreeExp`): [`Pool::free`] (or
//! [`Engine::free`], which finds the owning pool when none is named). Only
//! the exact base of a live allocation is accepted, else
//! `UR_RESULT_ERROR_INVALID_VALUE` and nothing changes. The returned
//! [`FreeOutcome`] has an optional stamp to run and complete like an
//! allocation's, and `deps` to wait for. On an in-order queue with no wait
//! list and no event, the free creates nothing: its position is the queue's
//! current tail.
//!
//! **Blocking free** (`urUSMFree` of a pool block): [`Pool::free_blocking`]
//! with a closure that waits for the stamp it is given (through
//! [`wait_for_stamp`]).
//!
//! **Pool queries**: [`Pool::info`] / [`Pool::set_info`] answer the size
//! properties of `urUSMPoolGetInfoExp` / `urUSMPoolSetInfoExp`;
//! [`Pool::stats`], [`Pool::trim_to`] (`urUSMPoolTrimToExp`),
//! [`Pool::collect`] (call it at host synchronisation points: it is where
//! memory above the release threshold goes back, never on completion
//! alone). Read a user pool's settings with [`PoolConfig::from_ur_desc`].
//! [`Pool::live_block_containing`] finds the allocation behind any address;
//! [`RangeMap`] is the adapters' map from address ranges (allocations,
//! slabs) to their owners; [`ShardedRangeMap`] the same split into shards
//! by address, for a registry that threads write on every allocation.
//!
//! **Destruction**: dropping a [`Pool`] gives back what no recorded command
//! can touch; the rest goes back when every lane has completed what it had
//! recorded at that moment.
//!
//! # Threads
//!
//! A pool has one lock, and a lane cache per in-order queue behind a lock
//! of its own (`cache.rs`): an allocation on an in-order queue with no wait
//! list and no event that finds, among the few blocks the queue freed last,
//! one of exactly its size, and a free (same conditions) of a block handed
//! out on that queue, take only the cache's lock. Queues driven from
//! different threads thus share no lock in steady state. Parked blocks count
//! as reserved, not used; the pool's counters stay exact (each cache may
//! use up to an allowance that the pool keeps within the used high-water
//! mark, and the mark moves only under every lock).
//!
//! # Ordering
//!
//! Each in-flight command has a sparse vector clock ([`clock`]): per lane, a
//! prefix of seqs plus a window of single seqs (out-of-order lanes order only
//! through wait lists and barriers). "Is the free F ordered before C?" is one
//! lookup in C's clock. Completed commands leave the DAG; completion counts
//! as ordering. Losing information only ever makes the engine more careful.

mod addr_map;
mod allocator;
pub mod backend;
mod cache;
pub mod clock;
pub mod completion;
pub mod config;
pub mod context;
pub mod dag;
mod graveyard;
pub mod lane;
mod pending;
pub mod policy;
pub mod pool;
mod range_shards;
mod splitmix;
pub mod stats;
mod vm;

#[cfg(test)]
mod testkit;
#[cfg(test)]
mod tests;

pub use backend::{HostMemory, MemorySource, OutOfMemory, UsmKind, VirtualMemory};
pub use addr_map::{RangeMap, SlabMap, SlabOfPool};
pub use clock::{Clock, LaneId, Seq, Stamp};
pub use completion::{wait_for_stamp, wait_reported, Completion, Cover, Progress, Tracker};
pub use config::PoolConfig;
pub use context::{DeviceKey, Engine};
pub use dag::Dag;
pub use lane::{Lane, QueueOrder};
pub use policy::ReusePolicy;
pub use splitmix::SplitMix64;
pub use pool::{Allocation, Deps, FreeOutcome, Pool};
pub use range_shards::ShardedRangeMap;
pub use stats::PoolStats;
