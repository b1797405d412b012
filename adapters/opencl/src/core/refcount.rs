//! User-visible reference counts, apart from the `Arc` count.
//!
//! Objects live in `Arc`s that the adapter also clones internally (an event
//! holds its queue, a queue its context, a kernel its program). The count a
//! user sees through `*_INFO_REFERENCE_COUNT`, and the one `urXRelease`
//! decrements, is only the user's: the handle holds one `Arc` reference while
//! that count is above zero, and internal holders keep the memory as long as
//! they need it.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use ur_core::handle::{self, UrObject};
use ur_core::*;

pub struct UserRefs(AtomicU32);

impl UserRefs {
    /// A new object starts with the reference its creator hands out.
    pub const fn one() -> Self {
        UserRefs(AtomicU32::new(1))
    }

    pub fn get(&self) -> u32 {
        self.0.load(Ordering::Acquire)
    }

    /// One more user reference; refused once the user released the last one.
    fn retain(&self) -> bool {
        self.0.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1).map(|_| n + 1)).is_ok()
    }

    /// One user reference less: `Some(true)` when it was the last.
    fn release(&self) -> Option<bool> {
        self.0.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1)).ok().map(|before| before == 1)
    }
}

/// An object whose handle carries user references.
pub trait Counted: UrObject {
    fn refs(&self) -> &UserRefs;
}

/// `urXRetain`.
///
/// # Safety
/// As for [`handle::borrow`].
pub unsafe fn retain<T: Counted>(h: *mut T::Handle) -> UrResult {
    let obj = handle::borrow::<T>(h, &crate::DDI)?;
    if obj.refs().retain() {
        Ok(())
    } else {
        Err(T::KIND.invalid_error())
    }
}

/// `urXRelease`: the last user reference gives up the handle's `Arc`.
///
/// # Safety
/// As for [`handle::borrow`]; the handle must come from [`into_handle`].
pub unsafe fn release<T: Counted>(h: *mut T::Handle) -> UrResult {
    let obj = handle::borrow::<T>(h, &crate::DDI)?;
    match obj.refs().release() {
        Some(true) => {
            Arc::decrement_strong_count(h as *const T);
            Ok(())
        }
        Some(false) => Ok(()),
        None => Err(T::KIND.invalid_error()),
    }
}

/// A new object's handle: it holds one `Arc` reference for the user's count.
pub fn into_handle<T: Counted>(obj: Arc<T>) -> *mut T::Handle {
    handle::into_handle(obj)
}

/// The handle value of a live object, without a new reference (for info
/// queries that name an object).
pub fn handle_of<T: UrObject>(obj: &Arc<T>) -> *mut T::Handle {
    Arc::as_ptr(obj) as *mut T::Handle
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_only_user_references() {
        let r = UserRefs::one();
        assert!(r.retain());
        assert_eq!(r.get(), 2);
        assert_eq!(r.release(), Some(false));
        assert_eq!(r.release(), Some(true));
        assert_eq!(r.release(), None, "a release past zero is refused");
        assert!(!r.retain(), "a released handle cannot be revived");
    }
}
