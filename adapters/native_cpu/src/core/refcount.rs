//! The reference count a user sees, kept apart from the `Arc` count.
//!
//! Objects behind handles live in `Arc`s, and the adapter holds some of them
//! internally too (a pending command holds its event, an event its queue, a
//! queue its context). Reporting the `Arc` count would make
//! `*_INFO_REFERENCE_COUNT` move while work finishes in the background, and
//! an extra `urXRelease` would free memory that a worker still uses. So each
//! such object counts its user references here; the `Arc` only decides when
//! the memory goes.

use std::sync::atomic::{AtomicU32, Ordering};
use ur_core::handle::UrObject;

/// A handle object that counts its user references in [`UserRefs`].
pub trait Counted: UrObject {
    fn user_refs(&self) -> &UserRefs;

    /// Runs when the user's last reference goes, before the `Arc` drops its
    /// share (internal holders may keep the object alive for longer).
    fn last_user_release(&self) {}
}

pub struct UserRefs(AtomicU32);

/// The user holds no reference any more: the handle is dead to them.
#[derive(Debug, PartialEq, Eq)]
pub struct Released;

impl UserRefs {
    /// A new object starts with the one reference its creator returns.
    pub const fn one() -> Self {
        UserRefs(AtomicU32::new(1))
    }

    pub fn get(&self) -> u32 {
        self.0.load(Ordering::Acquire)
    }

    /// Takes one more user reference; fails when the user holds none (the
    /// handle was released already and only internal holders keep it).
    pub fn retain(&self) -> Result<(), Released> {
        self.0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| if n == 0 { None } else { Some(n + 1) })
            .map(|_| ())
            .map_err(|_| Released)
    }

    /// Drops one user reference. `Ok(true)` when it was the last one; `Err`
    /// when there was none to drop.
    pub fn release(&self) -> Result<bool, Released> {
        self.0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            .map(|before| before == 1)
            .map_err(|_| Released)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_only_what_users_take() {
        let r = UserRefs::one();
        assert_eq!(r.get(), 1);
        r.retain().unwrap();
        assert_eq!(r.get(), 2);
        assert_eq!(r.release(), Ok(false));
        assert_eq!(r.release(), Ok(true));
        assert_eq!(r.get(), 0);
        assert!(r.release().is_err(), "a release past zero is refused");
        assert!(r.retain().is_err(), "a dead handle cannot be revived");
    }
}
