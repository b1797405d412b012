//! `urAdapterGet`: the adapters of every loaded adapter library.

use crate::registry;
use ur_core::abi::*;
use ur_core::boundary::ffi_call;

/// Exported by `dispatch` with the other entry points of the list.
pub unsafe fn urAdapterGet(
    NumEntries: u32,
    phAdapters: *mut ur_adapter_handle_t,
    pNumAdapters: *mut u32,
) -> ur_result_t {
    ffi_call(|| {
        if NumEntries == 0 && !phAdapters.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        let registry = registry::current()?;
        let mut total = 0u32;
        for (adapter, h) in registry.adapter_handles() {
            if total < NumEntries && !phAdapters.is_null() {
                // Each returned handle carries a reference of its own, as an
                // adapter's urAdapterGet gives; the caller releases it.
                let retain = adapter.table.Adapter.pfnRetain.ok_or(UR_RESULT_ERROR_UNINITIALIZED)?;
                let r = retain(h);
                if r != UR_RESULT_SUCCESS {
                    return Err(r);
                }
                *phAdapters.add(total as usize) = h;
            }
            total += 1;
        }
        if !pNumAdapters.is_null() {
            *pNumAdapters = total;
        }
        Ok(())
    })
}
