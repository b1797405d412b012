//! Ranked locks: the lock order written in `src/engine/LOCKING.md`, checked
//! at run time in builds with the `lock-order` feature.
//!
//! Every lock on the engine's chain is made with its [`Rank`]. A thread may
//! take a lock only of a higher rank than every lock it holds (a [`Rank::Shard`]
//! may join other shards under the pool lock, as the engine does). In a
//! checked build a thread that breaks the order stops the process at once,
//! naming both locks: an inversion is reported the first time the two locks
//! nest the wrong way, whether or not another thread happens to deadlock on
//! them in that run. A lock taken again by the thread that holds it (a
//! certain deadlock, or for a read lock one as soon as a writer queues) is
//! reported the same way. `try_lock` never waits, so it is not checked; the
//! lock it takes counts as held for what the thread takes next.
//!
//! Without the feature the wrappers are the std locks plus a rank byte: the
//! guards carry nothing and the checks compile to nothing.
//!
//! Poisoning is ignored everywhere: every holder keeps its data consistent
//! before anything that can panic, so a poisoned lock is usable.

use std::ops::{Deref, DerefMut};
use std::sync::TryLockError;

/// A lock's place in the order, lowest taken first. Locks of one rank do
/// not nest, except shards under the pool lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Rank {
    /// A kernel's arguments, set on the driver's kernel and read by its
    /// launch (OpenCL `KernelCl::launch`): held across the launch's
    /// submission, so before the queue's lock.
    KernelArgs,
    /// An adapter queue's lock held while it records a command on its lane
    /// and hands it to the driver (OpenCL `Queue::order`, CUDA
    /// `Queue::submit`, Level Zero's queue state, native CPU's `QueueShared::state`):
    /// the engine comes after it.
    QueueSubmit,
    /// An adapter queue's commands still to poll (`Queue::trackers`), taken
    /// under [`Rank::QueueSubmit`]; completing them completes the lane's
    /// commands in the engine, whose locks come after.
    QueueTrackers,
    /// `usm_pool::ContextPools`' table: which pool serves a device.
    PoolTable,
    /// `ContextEngine::defaults` and `user_pools`: making and listing pools.
    EnginePools,
    /// `Pool::inner`, the pool lock.
    Pool,
    /// A lane cache shard (`cache.rs`): alone on the fast path, or several
    /// under the pool lock.
    Shard,
    /// `Dag::lanes`, the context's lane registry.
    DagLanes,
    /// `Lane::state`.
    LaneState,
    /// `SlabMap::slabs`, the slab-owner map, written by memory sources under
    /// the pool lock.
    SlabMap,
    /// Nothing ranked is taken while a leaf is held: the graveyard, the
    /// callback dispatcher's queue, `ContextPools::kept`, a context's
    /// queue list, test sources.
    Leaf,
}

impl Rank {
    /// Whether a thread holding `held` may wait for a lock of this rank.
    #[cfg_attr(not(feature = "lock-order"), allow(dead_code))]
    fn may_follow(self, held: Rank, holding_pool: bool) -> bool {
        held < self || (self == Rank::Shard && held == Rank::Shard && holding_pool)
    }
}

/// A `std::sync::Mutex` with a rank.
pub struct Mutex<T: ?Sized> {
    rank: Rank,
    lock: std::sync::Mutex<T>,
}

/// The guard of a [`Mutex`]; `held` leaves the thread's list when it drops.
pub struct MutexGuard<'a, T: ?Sized> {
    guard: std::sync::MutexGuard<'a, T>,
    held: held::Held,
}

impl<T> Mutex<T> {
    pub const fn new(rank: Rank, value: T) -> Self {
        Mutex { rank, lock: std::sync::Mutex::new(value) }
    }

    pub fn into_inner(self) -> T {
        self.lock.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}

impl<T: ?Sized> Mutex<T> {
    fn id(&self) -> usize {
        self as *const Self as *const u8 as usize
    }

    #[inline]
    pub fn lock(&self) -> MutexGuard<'_, T> {
        held::check(self.rank, self.id());
        let guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        MutexGuard { guard, held: held::Held::push(self.rank, self.id()) }
    }

    /// The lock if nobody holds it now; never waits.
    #[inline]
    pub fn try_lock(&self) -> Option<MutexGuard<'_, T>> {
        let guard = match self.lock.try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => return None,
        };
        Some(MutexGuard { guard, held: held::Held::push(self.rank, self.id()) })
    }

    pub fn get_mut(&mut self) -> &mut T {
        self.lock.get_mut().unwrap_or_else(|e| e.into_inner())
    }
}

impl<T: ?Sized> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T: ?Sized> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.guard
    }
}

/// A `std::sync::Condvar` for [`MutexGuard`]s: the lock is let go while the
/// thread waits, and taken back in order.
#[derive(Default)]
pub struct Condvar(std::sync::Condvar);

impl Condvar {
    pub const fn new() -> Self {
        Condvar(std::sync::Condvar::new())
    }

    pub fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
        let MutexGuard { guard, held } = guard;
        let (rank, id) = held.pop();
        // Re-taking the lock on wake-up waits like `lock` does.
        held::check(rank, id);
        let guard = self.0.wait(guard).unwrap_or_else(|e| e.into_inner());
        MutexGuard { guard, held: held::Held::push(rank, id) }
    }

    /// [`wait`](Self::wait), for at most `timeout`; true when it timed out.
    pub fn wait_timeout<'a, T>(
        &self,
        guard: MutexGuard<'a, T>,
        timeout: std::time::Duration,
    ) -> (MutexGuard<'a, T>, bool) {
        let MutexGuard { guard, held } = guard;
        let (rank, id) = held.pop();
        held::check(rank, id);
        let (guard, woke) = self.0.wait_timeout(guard, timeout).unwrap_or_else(|e| e.into_inner());
        (MutexGuard { guard, held: held::Held::push(rank, id) }, woke.timed_out())
    }

    pub fn notify_one(&self) {
        self.0.notify_one()
    }

    pub fn notify_all(&self) {
        self.0.notify_all()
    }
}

/// A `std::sync::RwLock` with a rank; a read lock is held like a lock.
pub struct RwLock<T: ?Sized> {
    rank: Rank,
    lock: std::sync::RwLock<T>,
}

pub struct RwLockReadGuard<'a, T: ?Sized> {
    guard: std::sync::RwLockReadGuard<'a, T>,
    _held: held::Held,
}

pub struct RwLockWriteGuard<'a, T: ?Sized> {
    guard: std::sync::RwLockWriteGuard<'a, T>,
    _held: held::Held,
}

impl<T> RwLock<T> {
    pub const fn new(rank: Rank, value: T) -> Self {
        RwLock { rank, lock: std::sync::RwLock::new(value) }
    }
}

impl<T: ?Sized> RwLock<T> {
    fn id(&self) -> usize {
        self as *const Self as *const u8 as usize
    }

    #[inline]
    pub fn read(&self) -> RwLockReadGuard<'_, T> {
        held::check(self.rank, self.id());
        let guard = self.lock.read().unwrap_or_else(|e| e.into_inner());
        RwLockReadGuard { guard, _held: held::Held::push(self.rank, self.id()) }
    }

    #[inline]
    pub fn write(&self) -> RwLockWriteGuard<'_, T> {
        held::check(self.rank, self.id());
        let guard = self.lock.write().unwrap_or_else(|e| e.into_inner());
        RwLockWriteGuard { guard, _held: held::Held::push(self.rank, self.id()) }
    }
}

impl<T: ?Sized> Deref for RwLockReadGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T: ?Sized> Deref for RwLockWriteGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T: ?Sized> DerefMut for RwLockWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.guard
    }
}

#[cfg(feature = "lock-order")]
mod held {
    //! The ranked locks each thread holds, in the order taken.
    use super::Rank;
    use std::cell::RefCell;

    thread_local! {
        static HELD: RefCell<Vec<(Rank, usize)>> = const { RefCell::new(Vec::new()) };
    }

    /// One entry of this thread's list, removed when dropped.
    pub(super) struct Held {
        rank: Rank,
        id: usize,
    }

    /// Stops the process when a thread holding its list's locks may not wait
    /// for the lock `id` of rank `rank`.
    #[inline]
    pub(super) fn check(rank: Rank, id: usize) {
        // `try_with`: a lock taken while the thread's locals are torn down
        // goes unchecked rather than failing.
        let broken = HELD
            .try_with(|held| {
                let held = held.borrow();
                let holding_pool = held.iter().any(|(r, _)| *r == Rank::Pool);
                held.iter()
                    .find(|(r, i)| *i == id || !rank.may_follow(*r, holding_pool))
                    .copied()
            })
            .ok()
            .flatten();
        if let Some((held_rank, held_id)) = broken {
            let what = if held_id == id {
                format!("lock order: a thread takes again a lock it holds ({rank:?} at {id:#x})")
            } else {
                format!(
                    "lock order: a thread holding {held_rank:?} (at {held_id:#x}) waits for {rank:?} \
                     (at {id:#x}); see src/engine/LOCKING.md"
                )
            };
            report(&what);
        }
    }

    /// A unit test expects the report as a panic; anywhere else (an adapter
    /// behind the C ABI, whose boundary turns panics into error codes) the
    /// process stops with the message and a backtrace.
    fn report(what: &str) {
        if cfg!(test) {
            panic!("{what}");
        }
        eprintln!("{what}\n{}", std::backtrace::Backtrace::force_capture());
        std::process::abort();
    }

    impl Held {
        #[inline]
        pub(super) fn push(rank: Rank, id: usize) -> Self {
            let _ = HELD.try_with(|held| held.borrow_mut().push((rank, id)));
            Held { rank, id }
        }

        /// Leaves the list now; returns what it named.
        pub(super) fn pop(self) -> (Rank, usize) {
            let named = (self.rank, self.id);
            drop(self);
            named
        }
    }

    impl Drop for Held {
        #[inline]
        fn drop(&mut self) {
            // Guards may drop out of order: remove the newest entry for this lock.
            let _ = HELD.try_with(|held| {
                let mut held = held.borrow_mut();
                if let Some(at) = held.iter().rposition(|&(_, i)| i == self.id) {
                    held.remove(at);
                }
            });
        }
    }

    #[cfg(test)]
    pub(super) fn count() -> usize {
        HELD.with(|held| held.borrow().len())
    }
}

#[cfg(not(feature = "lock-order"))]
mod held {
    //! Unchecked build: nothing is recorded.
    use super::Rank;

    pub(super) struct Held(Rank, usize);

    #[inline(always)]
    pub(super) fn check(_: Rank, _: usize) {}

    impl Held {
        #[inline(always)]
        pub(super) fn push(rank: Rank, id: usize) -> Self {
            Held(rank, id)
        }

        #[inline(always)]
        pub(super) fn pop(self) -> (Rank, usize) {
            (self.0, self.1)
        }
    }
}

#[cfg(all(test, feature = "lock-order"))]
mod tests {
    use super::*;
    use std::panic::{catch_unwind, AssertUnwindSafe};

    fn reported(f: impl FnOnce()) -> Option<String> {
        let before = held::count();
        let got = catch_unwind(AssertUnwindSafe(f)).err().map(|e| {
            e.downcast_ref::<String>().cloned().unwrap_or_default()
        });
        // Every guard unwound: nothing stays listed as held.
        assert_eq!(held::count(), before);
        got
    }

    #[test]
    fn locks_taken_in_rank_order_pass_and_leave_the_list_empty() {
        let pool = Mutex::new(Rank::Pool, 0);
        let lanes = RwLock::new(Rank::DagLanes, 0);
        let lane = Mutex::new(Rank::LaneState, 0);
        {
            let _p = pool.lock();
            let _r = lanes.read();
            let _l = lane.lock();
            assert_eq!(held::count(), 3);
        }
        assert_eq!(held::count(), 0);
    }

    #[test]
    fn an_inversion_is_reported_naming_both_locks() {
        let pool = Mutex::new(Rank::Pool, 0);
        let lane = Mutex::new(Rank::LaneState, 0);
        let msg = reported(|| {
            let _l = lane.lock();
            let _p = pool.lock();
        })
        .expect("an inversion must be reported");
        assert!(msg.contains("LaneState") && msg.contains("waits for Pool"), "{msg}");
    }

    #[test]
    fn a_read_lock_counts_as_held() {
        let slabs = RwLock::new(Rank::SlabMap, 0);
        let pool = Mutex::new(Rank::Pool, 0);
        let msg = reported(|| {
            let _r = slabs.read();
            let _p = pool.lock();
        });
        assert!(msg.is_some());
    }

    #[test]
    fn taking_a_held_lock_again_is_reported() {
        let lanes = RwLock::new(Rank::DagLanes, 0);
        let msg = reported(|| {
            let _a = lanes.read();
            let _b = lanes.read();
        })
        .expect("a recursive read must be reported");
        assert!(msg.contains("takes again"), "{msg}");
    }

    #[test]
    fn shards_nest_only_under_the_pool_lock() {
        let pool = Mutex::new(Rank::Pool, 0);
        let (a, b) = (Mutex::new(Rank::Shard, 0), Mutex::new(Rank::Shard, 0));
        {
            let _p = pool.lock();
            let _a = a.lock();
            let _b = b.lock();
        }
        assert!(reported(|| {
            let _a = a.lock();
            let _b = b.lock();
        })
        .is_some());
    }

    #[test]
    fn try_lock_is_not_checked_but_counts_as_held() {
        let pool = Mutex::new(Rank::Pool, 0);
        let shard = Mutex::new(Rank::Shard, 0);
        let other = Mutex::new(Rank::Shard, 0);
        let lane = Mutex::new(Rank::LaneState, 0);
        let _s = shard.lock();
        // The fast path's `lock_after`: the pool lock under a shard, without waiting.
        let _p = pool.try_lock().expect("free");
        // Held now: another shard may join, as under the pool lock.
        let _o = other.lock();
        drop(_s);
        let _l = lane.lock();
        assert_eq!(held::count(), 3);
    }

    #[test]
    fn a_condvar_wait_lets_the_lock_go_and_takes_it_back() {
        let lane = std::sync::Arc::new((Mutex::new(Rank::LaneState, false), Condvar::new()));
        let other = lane.clone();
        let t = std::thread::spawn(move || {
            *other.0.lock() = true;
            other.1.notify_all();
        });
        let mut g = lane.0.lock();
        while !*g {
            g = lane.1.wait(g);
        }
        assert_eq!(held::count(), 1);
        drop(g);
        assert_eq!(held::count(), 0);
        t.join().unwrap();
    }

    #[test]
    fn leaves_do_not_nest() {
        let (a, b) = (Mutex::new(Rank::Leaf, 0), Mutex::new(Rank::Leaf, 0));
        assert!(reported(|| {
            let _a = a.lock();
            let _b = b.lock();
        })
        .is_some());
    }
}
