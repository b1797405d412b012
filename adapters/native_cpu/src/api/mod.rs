//! The C entry points, one file per UR object. Each checks its arguments as
//! the reference header documents, turns them into Rust values and calls the
//! safe objects of `core/`.

#![allow(non_snake_case)]

pub mod adapter;
pub mod context;
pub mod device;
pub mod enqueue;
pub mod event;
pub mod platform;
pub mod queue;
pub mod usm;
pub mod usm_exp;

use crate::core::event::Event;
use crate::core::refcount::Counted;
use crate::DDI;
use std::sync::Arc;
use ur_core::boundary::wait_list_arg;
use ur_core::handle::{self, UrObject};
use ur_core::*;

/// Checks a handle of this adapter and borrows its object.
///
/// # Safety
/// As for [`handle::borrow`]: `h` is null or points at readable memory.
pub(crate) unsafe fn obj<'a, T: UrObject>(h: *mut T::Handle) -> UrResult<&'a T> {
    handle::borrow::<T>(h, &DDI)
}

/// Like [`obj`], taking a new internal reference.
///
/// # Safety
/// As for [`obj`].
pub(crate) unsafe fn arc<T: UrObject>(h: *mut T::Handle) -> UrResult<Arc<T>> {
    handle::clone_arc::<T>(h, &DDI)
}

/// `urXRetain` of an object that counts user references.
///
/// # Safety
/// As for [`obj`].
pub(crate) unsafe fn retain_counted<T: Counted>(h: *mut T::Handle) -> UrResult {
    let o = obj::<T>(h)?;
    o.user_refs().retain().map_err(|_| T::KIND.invalid_error())?;
    handle::retain::<T>(h, &DDI)
}

/// `urXRelease` of an object that counts user references. A release past
/// the user's references is refused: it would free memory that internal
/// holders still use.
///
/// # Safety
/// As for [`obj`]; the caller gives up one reference.
pub(crate) unsafe fn release_counted<T: Counted>(h: *mut T::Handle) -> UrResult {
    let o = obj::<T>(h)?;
    let last = o.user_refs().release().map_err(|_| T::KIND.invalid_error())?;
    if last {
        o.last_user_release();
    }
    handle::release::<T>(h, &DDI)
}

/// An enqueue's wait list, reduced to the events still pending: bad handles
/// are `INVALID_EVENT_WAIT_LIST`, a failed event `IN_EVENT_LIST_EXEC_STATUS`.
///
/// # Safety
/// `list` points at `count` handles when `count > 0`.
#[inline]
pub(crate) unsafe fn pending_events(count: u32, list: *const ur_event_handle_t) -> UrResult<Vec<Arc<Event>>> {
    if count == 0 && list.is_null() {
        return Ok(Vec::new());
    }
    pending_events_of(count, list)
}

unsafe fn pending_events_of(count: u32, list: *const ur_event_handle_t) -> UrResult<Vec<Arc<Event>>> {
    let handles = wait_list_arg(list, count)?;
    let mut pending = Vec::new();
    for &h in handles {
        let event = obj::<Event>(h).map_err(|_| UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST)?;
        if event.failed() {
            return Err(UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS);
        }
        if !event.is_done() {
            pending.push(arc::<Event>(h)?);
        }
    }
    Ok(pending)
}

/// Writes a new handle array `[first]` in the `(NumEntries, ph, pNum)`
/// protocol of the `urXGet` entry points: `count` handles exist.
///
/// # Safety
/// `out` is null or valid for `entries` writes; `num` null or valid.
pub(crate) unsafe fn write_handles<H>(handles: &[*mut H], entries: u32, out: *mut *mut H, num: *mut u32) {
    if !out.is_null() {
        for (i, h) in handles.iter().take(entries as usize).enumerate() {
            out.add(i).write(*h);
        }
    }
    if !num.is_null() {
        num.write(handles.len() as u32);
    }
}
