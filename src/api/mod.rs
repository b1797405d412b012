//! The UR C surface, written once for every adapter.
//!
//! Each entry point here is generic over a [`Backend`]: it decodes and
//! checks its C arguments as `spec/` says (null handles and pointers, enum
//! ranges and flag masks, `pNext` chains, wait lists, the fill/copy rules,
//! the info-query size protocol), turns handles into references to the
//! backend's objects, calls the backend through the traits of
//! [`crate::hal`], and writes the C outputs. [`ddi_table`] fills a DDI table
//! with them; an adapter's table starts from it.
//!
//! The checks run in the order the reference header lists a function's
//! errors, so every adapter answers a bad call with the same code.

#![allow(clippy::too_many_arguments)]

mod context;
mod device;
mod enqueue;
mod event;
mod kernel;
mod platform;
mod program;
mod queue;
mod usm;
mod usm_exp;

use crate::abi::*;
use crate::boundary::wait_list_arg;
use crate::hal::{Backend, Event as _, Events};
use crate::handle::{self, UrObject};
use crate::UrResult;
use std::sync::Arc;

/// The DDI table of backend `B`: the C surface of this module in every slot
/// it serves, the unsupported stubs elsewhere (programs and kernels only
/// where the backend has them).
pub const fn ddi_table<B: Backend>() -> ur_dditable_t {
    let mut d = crate::ddi::UNSUPPORTED_DDI;
    d.Adapter = crate::adapter::adapter_table::<B>();
    platform::fill::<B>(&mut d);
    device::fill::<B>(&mut d);
    context::fill::<B>(&mut d);
    queue::fill::<B>(&mut d);
    event::fill::<B>(&mut d);
    enqueue::fill::<B>(&mut d);
    usm::fill::<B>(&mut d);
    usm_exp::fill::<B>(&mut d);
    program::fill::<B>(&mut d);
    kernel::fill::<B>(&mut d);
    d
}

/// Checks a handle of backend `B` and borrows its object.
///
/// # Safety
/// As for [`handle::borrow`].
#[inline]
pub(crate) unsafe fn obj<'a, B: Backend, T: UrObject>(h: *mut T::Handle) -> UrResult<&'a T> {
    handle::borrow::<T>(h, B::ddi())
}

/// Like [`obj`], for an optional handle.
///
/// # Safety
/// As for [`obj`].
#[inline]
pub(crate) unsafe fn optional<'a, B: Backend, T: UrObject>(h: *mut T::Handle) -> UrResult<Option<&'a T>> {
    if h.is_null() {
        Ok(None)
    } else {
        obj::<B, T>(h).map(Some)
    }
}

/// An enqueue's wait list: a null list with a count, or a list without one,
/// or a handle that is no event of this adapter, is
/// `INVALID_EVENT_WAIT_LIST`; an event of a failed command
/// `IN_EVENT_LIST_EXEC_STATUS`.
///
/// # Safety
/// `list` points at `count` handles when `count > 0`; each is null or
/// readable.
#[inline]
pub(crate) unsafe fn wait_list<'a, B: Backend>(count: u32, list: *const ur_event_handle_t) -> UrResult<Events<'a, B>> {
    if count == 0 && list.is_null() {
        return Ok(Events::none());
    }
    let handles = wait_list_arg(list, count)?;
    for &h in handles {
        let event = obj::<B, B::Event>(h).map_err(|_| UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST)?;
        if event.failed() {
            return Err(UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS);
        }
    }
    // SAFETY: every handle was just checked.
    Ok(Events::checked(handles))
}

/// Writes handles in the `(NumEntries, ph, pNum)` protocol of the `urXGet`
/// entry points.
///
/// # Safety
/// `out` is null or valid for `entries` writes; `num` null or valid.
pub(crate) unsafe fn write_handles<H>(handles: &[*mut H], entries: u32, out: *mut *mut H, num: *mut u32) {
    if !out.is_null() {
        for (i, h) in handles.iter().take(entries as usize).enumerate() {
            out.add(i).write(*h);
        }
    }
    crate::boundary::write_optional(num, handles.len() as u32);
}

/// Hands a command's event to the caller when one was asked for.
///
/// # Safety
/// `out` is null or valid for a write.
#[inline]
pub(crate) unsafe fn deliver<T: UrObject>(out: *mut *mut T::Handle, event: Option<Arc<T>>) {
    if let (false, Some(e)) = (out.is_null(), event) {
        out.write(handle::into_handle(e));
    }
}

/// Fails with `INVALID_ENUMERATION` when `prop` is past the last value UR
/// defines for its query (`last`), or is a value between that UR leaves
/// undefined (`extra` lists defined values past `last`).
#[inline]
pub(crate) fn prop_in_range(prop: u32, last: u32, extra: &[u32]) -> UrResult {
    if prop <= last || extra.contains(&prop) {
        Ok(())
    } else {
        Err(UR_RESULT_ERROR_INVALID_ENUMERATION)
    }
}
