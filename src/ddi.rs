//! DDI tables: the all-unsupported table every adapter starts from, and the
//! macro that exports an adapter's `urGet*ProcAddrTable` functions.

use crate::abi::*;

macro_rules! define_unsupported {
    ($($member:ident . $field:ident => $name:ident ( $($p:ident : $t:ty),* ) via $via:tt;)*) => {
        /// One stub per entry point, each with the exact C signature, each
        /// answering `UR_RESULT_ERROR_UNSUPPORTED_FEATURE`.
        pub mod unsupported {
            #![allow(non_snake_case, unused_variables)]
            use crate::abi::*;
            $(
                pub unsafe extern "C" fn $name($($p: $t),*) -> ur_result_t {
                    UR_RESULT_ERROR_UNSUPPORTED_FEATURE
                }
            )*
        }

        /// A DDI table with every slot filled by its unsupported stub: no
        /// caller ever jumps through a null slot.
        pub const UNSUPPORTED_DDI: ur_dditable_t = {
            // SAFETY: every field is an `Option<fn>`; all-zero is `None`, and
            // every slot is set below.
            let mut d: ur_dditable_t = unsafe { core::mem::zeroed() };
            $( d.$member.$field = Some(unsupported::$name); )*
            d
        };
    };
}
crate::for_each_entry_point!(define_unsupported);

/// Whether an adapter serves a caller that asks for API `version`.
pub fn version_supported(version: ur_api_version_t) -> bool {
    version.0 >> 16 == UR_API_VERSION_IMPLEMENTED.0 >> 16
}

/// Exports every `urGet*ProcAddrTable` of an adapter from one static table.
///
/// Use in the adapter's root module: `ur_core::export_ddi_getters!(DDI);`
/// where `DDI: ur_dditable_t` is a `static` in scope.
#[macro_export]
macro_rules! export_ddi_getters {
    ($ddi:ident) => {
        use $crate::__ur_define_ddi_getters;
        $crate::for_each_ddi_table!(__ur_define_ddi_getters, $ddi);
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __ur_define_ddi_getters {
    ($ddi:ident $($getter:ident ($table:ident) => $member:ident;)*) => {
        $(
            /// Fills the caller's table with this adapter's entry points.
            ///
            /// # Safety
            /// `table`, when not null, must be valid for a write.
            #[no_mangle]
            pub unsafe extern "C" fn $getter(
                version: $crate::abi::ur_api_version_t,
                table: *mut $crate::abi::$table,
            ) -> $crate::abi::ur_result_t {
                if table.is_null() {
                    return $crate::abi::UR_RESULT_ERROR_INVALID_NULL_POINTER;
                }
                if !$crate::ddi::version_supported(version) {
                    return $crate::abi::UR_RESULT_ERROR_UNSUPPORTED_VERSION;
                }
                table.write($ddi.$member);
                $crate::abi::UR_RESULT_SUCCESS
            }
        )*
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_slot_of_the_unsupported_table_is_filled() {
        let words = std::mem::size_of::<ur_dditable_t>() / std::mem::size_of::<usize>();
        // SAFETY: the table is plain function pointers, read as words.
        let raw: &[usize] =
            unsafe { std::slice::from_raw_parts(&UNSUPPORTED_DDI as *const _ as *const usize, words) };
        assert!(raw.iter().all(|&w| w != 0), "a DDI slot is null");
    }

    #[test]
    fn an_unsupported_stub_says_so() {
        let f = UNSUPPORTED_DDI.Queue.pfnFinish.unwrap();
        assert_eq!(unsafe { f(std::ptr::null_mut()) }, UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
    }
}
