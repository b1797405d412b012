//! The entry points of programs and kernels, not yet in `ur_core::api`:
//! each checks its arguments and calls into `core`.

pub mod kernel;
pub mod program;

use crate::core::event::Event;
use crate::DDI;
use std::sync::Arc;
use ur_core::handle::{self, UrObject};
use ur_core::*;

/// Checks a handle of this adapter and borrows its object.
///
/// # Safety
/// As for [`handle::borrow`].
#[inline]
pub unsafe fn borrow<'a, T: UrObject>(h: *mut T::Handle) -> UrResult<&'a T> {
    handle::borrow::<T>(h, &DDI)
}

/// Like [`borrow`], taking a new reference.
///
/// # Safety
/// As for [`handle::clone_arc`].
#[inline]
pub unsafe fn arc<T: UrObject>(h: *mut T::Handle) -> UrResult<Arc<T>> {
    handle::clone_arc::<T>(h, &DDI)
}

/// A wait list as events of this adapter: a malformed list, or one holding
/// a handle that is not an event of ours, is `INVALID_EVENT_WAIT_LIST`.
///
/// # Safety
/// As for [`ur_core::boundary::wait_list_arg`]; every handle must be readable.
#[inline]
pub unsafe fn wait_list<'a>(
    list: *const ur_event_handle_t,
    count: u32,
) -> UrResult<Vec<&'a Event>> {
    ur_core::boundary::wait_list_arg(list, count)?
        .iter()
        .map(|&h| borrow::<Event>(h).map_err(|_| UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST))
        .collect()
}

/// Hands an event to the caller through an optional out pointer.
///
/// # Safety
/// `out`, when not null, must be writable.
#[inline]
pub unsafe fn give_event(out: *mut ur_event_handle_t, event: Option<Arc<Event>>) {
    if let Some(e) = event {
        if !out.is_null() {
            *out = handle::into_handle(e);
        }
    }
}

/// A NUL-terminated C string argument as UTF-8.
///
/// # Safety
/// `p`, when not null, must point at a NUL-terminated string.
pub unsafe fn str_arg<'a>(p: *const core::ffi::c_char) -> UrResult<&'a str> {
    if p.is_null() {
        return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    std::ffi::CStr::from_ptr(p)
        .to_str()
        .map_err(|_| UR_RESULT_ERROR_INVALID_VALUE)
}
