//! The `(propSize, pPropValue, pPropSizeRet)` protocol shared by every
//! `ur*GetInfo` entry point.

use crate::abi::*;
use crate::UrResult;
use core::ffi::c_void;

/// Where an info query writes its answer.
pub struct InfoOut {
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
}

impl InfoOut {
    /// Checks the three output arguments as UR specifies.
    ///
    /// # Safety
    /// `value` must be valid for `size` bytes of writes and `size_ret` for one
    /// `usize`, where not null.
    pub unsafe fn new(size: usize, value: *mut c_void, size_ret: *mut usize) -> UrResult<Self> {
        if size == 0 && !value.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        if size != 0 && value.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        if value.is_null() && size_ret.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        Ok(InfoOut { size, value, size_ret })
    }

    /// Writes raw bytes: reports their length, and copies them when a buffer
    /// was given (one too small is `INVALID_SIZE`).
    pub fn bytes(self, bytes: &[u8]) -> UrResult {
        // SAFETY: pointers checked in `new`, lengths checked here.
        unsafe {
            if !self.size_ret.is_null() {
                *self.size_ret = bytes.len();
            }
            if !self.value.is_null() {
                if self.size < bytes.len() {
                    return Err(UR_RESULT_ERROR_INVALID_SIZE);
                }
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.value as *mut u8, bytes.len());
            }
        }
        Ok(())
    }

    /// Writes one plain value (an integer, a handle, a flag word).
    pub fn value<T: Copy>(self, v: T) -> UrResult {
        self.slice(std::slice::from_ref(&v))
    }

    /// Writes an array of plain values.
    pub fn slice<T: Copy>(self, v: &[T]) -> UrResult {
        // SAFETY: T is Copy plain data; we only read its bytes.
        let bytes = unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) };
        self.bytes(bytes)
    }

    /// Writes a NUL-terminated string.
    pub fn string(self, s: &str) -> UrResult {
        let mut b = Vec::with_capacity(s.len() + 1);
        b.extend_from_slice(s.as_bytes());
        b.push(0);
        self.bytes(&b)
    }

    /// Writes a `ur_bool_t`.
    pub fn bool(self, b: bool) -> UrResult {
        self.value::<ur_bool_t>(b as ur_bool_t)
    }
}
