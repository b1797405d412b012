//! The entry points of programs and kernels, which this adapter still
//! serves itself (the rest of the C surface is `ur_core::api`'s): each
//! checks its arguments, converts them to Rust values and calls `core`;
//! errors become `ur_result_t`s and no panic crosses (`ffi_call`).

pub mod kernel;
pub mod program;

use crate::DDI;
use std::ffi::{c_char, CStr};
use std::sync::Arc;
use ur_core::handle::{self, UrObject};
use ur_core::*;

/// A handle of this adapter, borrowed.
///
/// # Safety
/// As for [`handle::borrow`].
pub(crate) unsafe fn obj<'a, T: UrObject>(h: *mut T::Handle) -> UrResult<&'a T> {
    handle::borrow::<T>(h, &DDI)
}

/// A handle of this adapter, as a new `Arc`.
///
/// # Safety
/// As for [`handle::borrow`].
pub(crate) unsafe fn arc<T: UrObject>(h: *mut T::Handle) -> UrResult<Arc<T>> {
    handle::clone_arc::<T>(h, &DDI)
}

/// An optional C string argument; null reads as empty.
///
/// # Safety
/// `s`, when not null, must be NUL-terminated and live for `'a`.
pub(crate) unsafe fn c_str<'a>(s: *const c_char) -> &'a CStr {
    if s.is_null() {
        c""
    } else {
        CStr::from_ptr(s)
    }
}
