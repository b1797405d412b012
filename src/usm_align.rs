//! The alignment rule of `urUSM{Host,Device,Shared}Alloc`, the same on every
//! adapter (spec/usm.md, "Alignment").
//!
//! `align` is 0 (the device's default) or a power of two, else
//! `INVALID_VALUE`. Any power of two is honoured, by over-allocating where
//! the backend cannot align that far itself, as long as the allocation's
//! reach fits the device: an alignment above [`NATIVE_ALIGN_LIMIT`] needs
//! `size + align <= UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE`, else the memory cannot
//! hold it and the answer is `OUT_OF_HOST_MEMORY` (host USM) or
//! `OUT_OF_DEVICE_MEMORY` (device and shared USM), before the backend is asked.

use crate::abi::*;
use crate::UrResult;

/// Alignments up to this (a page) need no reach check: every backend here
/// gives them with at most that much slack.
pub const NATIVE_ALIGN_LIMIT: u64 = 4096;

/// Applies the rule to one request. `max_alloc` is the device's
/// `UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE` (for host USM, that of the context's
/// devices: the least of them). A zero or too large `size` is left to the
/// size check that follows it (`INVALID_USM_SIZE`, in `api/usm.rs`).
pub fn check_usm_align(kind: ur_usm_type_t, size: usize, align: u64, max_alloc: u64) -> UrResult {
    if align != 0 && !align.is_power_of_two() {
        return Err(UR_RESULT_ERROR_INVALID_VALUE);
    }
    let size = size as u64;
    if size == 0 || size > max_alloc || align <= NATIVE_ALIGN_LIMIT {
        return Ok(());
    }
    if size.checked_add(align).is_none_or(|reach| reach > max_alloc) {
        return Err(if kind == UR_USM_TYPE_HOST {
            UR_RESULT_ERROR_OUT_OF_HOST_MEMORY
        } else {
            UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule() {
        let gib = 1u64 << 30;
        let d = UR_USM_TYPE_DEVICE;
        assert_eq!(check_usm_align(d, 64, 3, gib), Err(UR_RESULT_ERROR_INVALID_VALUE));
        assert_eq!(check_usm_align(d, 64, 0, gib), Ok(()));
        assert_eq!(check_usm_align(d, 64, 1 << 20, gib), Ok(()));
        assert_eq!(check_usm_align(d, 64, 2 * gib, gib), Err(UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY));
        assert_eq!(check_usm_align(UR_USM_TYPE_HOST, 64, 2 * gib, gib), Err(UR_RESULT_ERROR_OUT_OF_HOST_MEMORY));
        assert_eq!(check_usm_align(d, 64, 2 * gib, 4 * gib), Ok(()));
        // Size errors stay the size check's.
        assert_eq!(check_usm_align(d, 0, 2 * gib, gib), Ok(()));
        assert_eq!(check_usm_align(d, 2 * gib as usize, 2 * gib, gib), Ok(()));
        // Small alignments never fail on reach.
        assert_eq!(check_usm_align(d, gib as usize, 4096, gib), Ok(()));
    }
}
