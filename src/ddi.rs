//! DDI tables: the all-unsupported table every adapter starts from, and the
//! macro that exports an adapter's `urGet*ProcAddrTable` functions.

use crate::abi::*;

macro_rules! define_unsupported {
    ($($member:ident . $field:ident => $name:ident ( $($p:ident : $t:ty),* ) via $via:tt;)*) => {
        /// One stub per entry point, each with the exact C signature, each
        /// answering `UR_RESULT_ERROR_UNSUPPORTED_FEATURE` once its arguments
        /// pass the null checks the reference header lists for it (a caller
        /// through a loader that checks nothing still gets
        /// `INVALID_NULL_HANDLE` / `INVALID_NULL_POINTER` first).
        pub mod unsupported {
            #![allow(non_snake_case, unused_variables)]
            use crate::abi::*;
            $(
                pub unsafe extern "C" fn $name($($p: $t),*) -> ur_result_t {
                    match crate::abi::null_checks::check::$name($($p),*) {
                        UR_RESULT_SUCCESS => UR_RESULT_ERROR_UNSUPPORTED_FEATURE,
                        code => code,
                    }
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

/// Declares an adapter's backend in its root module, the same way in every
/// adapter: `static ADAPTER` (its adapter slot), the marker type with its
/// `adapter::Backend` and `hal::Backend` impls naming the backend's object
/// types, `static DDI` (the core's C surface for this backend, which every
/// handle of the adapter carries at offset 0) and the `urGet*ProcAddrTable`
/// exports.
///
/// ```ignore
/// ur_core::adapter_backend! {
///     /// This backend's marker type.
///     pub struct NativeCpu: UR_BACKEND_NATIVE_CPU, "NATIVE_CPU";
///     objects { Platform = Platform, Device = Device, /* ... */ Kernel = NoKernel }
///     on_last_release: Platform::adapter_released;
/// }
/// ```
#[macro_export]
macro_rules! adapter_backend {
    (
        $(#[$meta:meta])*
        pub struct $marker:ident: $backend:expr, $name:literal;
        objects { $($object:ident = $ty:ty),* $(,)? }
        $($(#[$release_meta:meta])* on_last_release: $release:path;)?
    ) => {
        pub static ADAPTER: $crate::adapter::AdapterSlot = $crate::adapter::AdapterSlot::new(&DDI, $backend, $name);

        $(#[$meta])*
        pub struct $marker;

        impl $crate::adapter::Backend for $marker {
            fn slot() -> &'static $crate::adapter::AdapterSlot {
                &ADAPTER
            }
            $($(#[$release_meta])*
            fn on_last_release() {
                $release()
            })?
        }

        impl $crate::hal::Backend for $marker {
            $(type $object = $ty;)*
        }

        /// The adapter's full dispatch table: the C surface of `ur_core::api`
        /// for this backend. Every handle this adapter makes points at it
        /// from offset 0, where UR 0.12 loaders look to dispatch.
        pub static DDI: $crate::abi::ur_dditable_t = $crate::api::ddi_table::<$marker>();

        $crate::export_ddi_getters!(DDI);
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
        let queue = std::ptr::NonNull::<ur_queue_handle_t_>::dangling().as_ptr();
        assert_eq!(unsafe { f(queue) }, UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
    }

    #[test]
    fn an_unsupported_stub_checks_handles_then_pointers_first() {
        let create = UNSUPPORTED_DDI.Mem.pfnBufferCreate.unwrap();
        let context = std::ptr::NonNull::<ur_context_handle_t_>::dangling().as_ptr();
        let mut buffer = std::ptr::null_mut();
        let null = std::ptr::null_mut();
        // SAFETY: the stub reads nothing through its arguments.
        unsafe {
            assert_eq!(create(null, 0, 1, std::ptr::null(), null.cast()), UR_RESULT_ERROR_INVALID_NULL_HANDLE);
            assert_eq!(create(context, 0, 1, std::ptr::null(), std::ptr::null_mut()), UR_RESULT_ERROR_INVALID_NULL_POINTER);
            assert_eq!(create(context, 0, 1, std::ptr::null(), &mut buffer), UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
        }
        let native = UNSUPPORTED_DDI.Event.pfnGetNativeHandle.unwrap();
        let event = std::ptr::NonNull::<ur_event_handle_t_>::dangling().as_ptr();
        // SAFETY: as above.
        unsafe { assert_eq!(native(event, std::ptr::null_mut()), UR_RESULT_ERROR_INVALID_NULL_POINTER) };
    }

    #[test]
    fn the_null_check_table_names_parameters_of_every_entry_point() {
        use crate::abi::null_checks::NULL_CHECKS;
        macro_rules! params {
            ($($member:ident . $field:ident => $name:ident ( $($p:ident : $t:ty),* ) via $via:tt;)*) => {
                &[$((stringify!($name), &[$(stringify!($p)),*][..])),*]
            };
        }
        let all: &[(&str, &[&str])] = crate::for_each_entry_point!(params);
        assert_eq!(all.len(), NULL_CHECKS.len());
        for ((name, params), (checked, handles, pointers)) in all.iter().zip(NULL_CHECKS) {
            assert_eq!(name, checked);
            for p in handles.iter().chain(pointers.iter()) {
                assert!(params.contains(p), "{name}: {p}");
            }
        }
    }
}
