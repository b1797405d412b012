//! The C boundary: turn inner `UrResult`s into `ur_result_t` and keep panics
//! from unwinding into C, and read C arguments into Rust values.

use crate::abi::*;
use crate::UrResult;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs an inner function for an `extern "C"` entry point. A panic becomes
/// `UR_RESULT_ERROR_UNKNOWN`; unwinding across C is undefined behaviour.
#[inline]
pub fn ffi_call(f: impl FnOnce() -> UrResult) -> ur_result_t {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => UR_RESULT_SUCCESS,
        Ok(Err(e)) => e,
        Err(_) => {
            crate::log::error("panic caught at the C boundary");
            UR_RESULT_ERROR_UNKNOWN
        }
    }
}

/// Fails with `INVALID_NULL_POINTER` when `p` is null.
#[inline]
pub fn non_null<T>(p: *const T) -> UrResult<*const T> {
    if p.is_null() {
        Err(UR_RESULT_ERROR_INVALID_NULL_POINTER)
    } else {
        Ok(p)
    }
}

/// Writes `v` through an out pointer that the caller must provide.
///
/// # Safety
/// `p`, when not null, must be valid for a write of `T`.
#[inline]
pub unsafe fn write_out<T>(p: *mut T, v: T) -> UrResult {
    if p.is_null() {
        return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    p.write(v);
    Ok(())
}

/// Writes `v` through an optional out pointer; a null pointer is skipped.
///
/// # Safety
/// `p`, when not null, must be valid for a write of `T`.
#[inline]
pub unsafe fn write_optional<T>(p: *mut T, v: T) {
    if !p.is_null() {
        p.write(v);
    }
}

/// A C array argument `(count, pointer)` as a slice. A zero count gives an
/// empty slice whatever the pointer; a non-zero count with a null pointer is
/// `INVALID_NULL_POINTER`.
///
/// # Safety
/// When `count > 0`, `p` must point at `count` initialised values that stay
/// valid for `'a`.
#[inline]
pub unsafe fn slice_arg<'a, T>(p: *const T, count: u32) -> UrResult<&'a [T]> {
    if count == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    Ok(std::slice::from_raw_parts(p, count as usize))
}

/// An event wait list argument, checked as UR specifies: a null list with a
/// non-zero count, or a list with a zero count, is `INVALID_EVENT_WAIT_LIST`.
///
/// # Safety
/// As for [`slice_arg`].
#[inline]
pub unsafe fn wait_list_arg<'a>(
    list: *const ur_event_handle_t,
    count: u32,
) -> UrResult<&'a [ur_event_handle_t]> {
    if list.is_null() != (count == 0) {
        return Err(UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST);
    }
    let events = slice_arg(list, count)?;
    if events.iter().any(|e| e.is_null()) {
        return Err(UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST);
    }
    Ok(events)
}

/// Walks a `pNext` chain of UR descriptors, yielding each `(stype, pointer)`.
///
/// # Safety
/// Every link of the chain must be a valid UR descriptor (they all start with
/// `stype` and `pNext`).
pub unsafe fn for_each_in_chain(
    mut next: *const core::ffi::c_void,
    mut f: impl FnMut(ur_structure_type_t, *const core::ffi::c_void) -> UrResult,
) -> UrResult {
    #[repr(C)]
    struct Link {
        stype: ur_structure_type_t,
        p_next: *const core::ffi::c_void,
    }
    while !next.is_null() {
        let link = &*(next as *const Link);
        f(link.stype, next)?;
        next = link.p_next;
    }
    Ok(())
}
