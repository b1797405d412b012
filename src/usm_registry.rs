//! [`UsmRegistry`]: the USM allocations of one context that no engine pool
//! sub-allocates (blocking `urUSM*Alloc` from the driver, a native pool's
//! blocks), by address. With the context's [`SlabMap`] of engine slabs it
//! answers which live allocation holds an address, the question behind
//! every enqueue's range check, `urUSMGetMemAllocInfo` and `urUSMFree`.
//!
//! Sharded by address ([`ShardedRangeMap`]): an allocation and its free
//! take the lock of the shard of its base, which threads allocating
//! elsewhere do not share. The shard locks are leaves.

use crate::abi::*;
use crate::engine::{ShardedRangeMap, SlabMap, SlabOfPool};
use crate::UrResult;

/// What a registry holds: a record that knows the span it covers.
pub trait Registered {
    /// `(base, size)`: the address the user got and the bytes from there.
    fn span(&self) -> (usize, usize);
}

impl<T: Registered> Registered for std::sync::Arc<T> {
    fn span(&self) -> (usize, usize) {
        (**self).span()
    }
}

pub struct UsmRegistry<A> {
    live: ShardedRangeMap<A>,
}

impl<A> Default for UsmRegistry<A> {
    fn default() -> Self {
        UsmRegistry { live: ShardedRangeMap::new() }
    }
}

impl<A: Registered> UsmRegistry<A> {
    pub fn insert(&self, a: A) {
        let (base, size) = a.span();
        self.live.insert(base, size, a);
    }

    /// Runs `f` on the allocation that holds `addr` (its base or any byte
    /// inside).
    pub fn with<R>(&self, addr: usize, f: impl FnOnce(&A) -> R) -> Option<R> {
        self.live.with(addr, |_, a| f(a))
    }

    /// A clone of the allocation that holds `addr` (a record behind an
    /// `Arc`, to use after the shard's lock is let go).
    pub fn find(&self, addr: usize) -> Option<A>
    where
        A: Clone,
    {
        self.with(addr, A::clone)
    }

    /// `(base, size)` of the allocation that holds `addr`.
    pub fn span_of(&self, addr: usize) -> Option<(usize, usize)> {
        self.live.with(addr, |r, _| (r.start, r.end - r.start))
    }

    /// `(base, size)` of the live allocation that holds `addr`: a registered
    /// one, else a block an engine pool gave out from a slab of `slabs`.
    /// Checked on every enqueue: nothing is cloned and no reference count
    /// written on the registered path.
    pub fn live_span<O: SlabOfPool>(&self, slabs: &SlabMap<O>, addr: usize) -> Option<(usize, usize)> {
        self.span_of(addr).or_else(|| slabs.live_block_containing(addr))
    }

    /// Takes the allocation whose base is exactly `base`; anything else (an
    /// interior pointer, a pointer freed already, a foreign one) is
    /// `INVALID_MEM_OBJECT` and changes nothing.
    pub fn remove(&self, base: usize) -> UrResult<A> {
        self.live.remove(base).ok_or(UR_RESULT_ERROR_INVALID_MEM_OBJECT)
    }

    /// Like [`remove`](Self::remove), but only when `check`, run under the
    /// shard's lock, accepts the allocation; its error leaves it in.
    pub fn remove_if(&self, base: usize, check: impl FnOnce(&A) -> UrResult) -> UrResult<A> {
        self.live.remove_if(base, check).unwrap_or(Err(UR_RESULT_ERROR_INVALID_MEM_OBJECT))
    }

    /// How many allocations are live.
    pub fn len(&self) -> usize {
        self.live.len()
    }

    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }

    /// Every allocation, emptying the registry (its context is going away).
    pub fn take_all(&self) -> Vec<A> {
        self.live.take_all()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Block(usize, usize);

    impl Registered for Block {
        fn span(&self) -> (usize, usize) {
            (self.0, self.1)
        }
    }

    #[test]
    fn lookups_find_the_allocation_holding_an_address() {
        let r = UsmRegistry::default();
        r.insert(Block(0x1000, 0x100));
        r.insert(Block(0x2000, 0x10));
        assert_eq!(r.with(0x1080, |a| a.0), Some(0x1000));
        assert_eq!(r.span_of(0x10ff), Some((0x1000, 0x100)));
        assert_eq!(r.span_of(0x1100), None, "one past the end is outside");
        assert_eq!(r.with(0x2000, |a| a.0), Some(0x2000));
        assert_eq!(r.span_of(0xfff), None);
    }

    #[test]
    fn only_the_exact_base_is_removed_and_only_once() {
        let r = UsmRegistry::default();
        r.insert(Block(0x1000, 0x100));
        assert_eq!(r.remove(0x1008).err(), Some(UR_RESULT_ERROR_INVALID_MEM_OBJECT));
        assert_eq!(r.len(), 1);
        assert!(r.remove(0x1000).is_ok());
        assert_eq!(r.remove(0x1000).err(), Some(UR_RESULT_ERROR_INVALID_MEM_OBJECT));
        assert!(r.is_empty());
    }

    #[test]
    fn a_refused_check_keeps_the_allocation() {
        let r = UsmRegistry::default();
        r.insert(Block(0x1000, 0x100));
        assert_eq!(r.remove_if(0x1000, |_| Err(UR_RESULT_ERROR_INVALID_VALUE)).err(), Some(UR_RESULT_ERROR_INVALID_VALUE));
        assert_eq!(r.len(), 1);
        assert_eq!(r.take_all().len(), 1);
        assert!(r.is_empty());
    }
}
