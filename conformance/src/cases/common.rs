//! Checks that many object kinds share (info queries, reference counting),
//! written once and named per kind by the cases that use them.

use crate::harness::*;
use crate::ur::{success, InfoFn};
use crate::check_eq;
use std::fmt::Debug;
use std::ptr::null_mut;
use ur_core::abi::*;

/// The C type of every `ur*Retain` and `ur*Release`.
pub type RefFn<T> = unsafe extern "C" fn(*mut T) -> ur_result_t;

/// One `ur*GetInfo` entry point, by name, as the loader resolved it.
pub struct Info<T, P> {
    pub name: &'static str,
    pub query: Option<InfoFn<*mut T, P>>,
}

/// `info!(api, urContextGetInfo)`: that entry point as an [`Info`].
#[macro_export]
macro_rules! info {
    ($api:expr, $entry:ident) => {
        $crate::cases::common::Info { name: stringify!($entry), query: $api.fns.$entry }
    };
}

impl<T, P: Copy + Debug> Info<T, P> {
    unsafe fn call(&self, handle: *mut T, prop: P, size: usize, value: *mut std::ffi::c_void, size_ret: *mut usize) -> Result<ur_result_t, String> {
        match self.query {
            Some(query) => Ok(query(handle, prop, size, value, size_ret)),
            None => Err(format!("the loader does not export {}", self.name)),
        }
    }

    /// [`info_size_protocol`] on each property of `props` in turn.
    ///
    /// # Safety
    /// `handle` must be live.
    pub unsafe fn size_protocol(&self, handle: *mut T, props: &[(&str, P)]) -> CaseResult {
        for &(label, prop) in props {
            info_size_protocol(&format!("{}({label})", self.name), |size, value, size_ret| {
                self.call(handle, prop, size, value, size_ret)
            })?;
        }
        Ok(())
    }

    /// What the entry point answers when asked for `prop`'s size alone.
    ///
    /// # Safety
    /// `handle` must be live, or one the case means to be refused.
    pub unsafe fn size_code(&self, handle: *mut T, prop: P) -> Result<ur_result_t, String> {
        let mut size = 0usize;
        self.call(handle, prop, 0, null_mut(), &mut size)
    }

    /// What the entry point answers when asked for `prop` into `value` (its
    /// size, no pPropSizeRet).
    ///
    /// # Safety
    /// `handle` must be live, or one the case means to be refused.
    pub unsafe fn value_code<V>(&self, handle: *mut T, prop: P, value: &mut V) -> Result<ur_result_t, String> {
        self.call(handle, prop, size_of::<V>(), (value as *mut V).cast(), null_mut())
    }

    /// A null handle is `INVALID_NULL_HANDLE`, asked for `prop` into a `V`.
    ///
    /// # Safety
    /// None beyond the entry point's own.
    pub unsafe fn null_handle_into<V: Default>(&self, prop: P) -> CaseResult {
        let mut value = V::default();
        let got = self.value_code(null_mut(), prop, &mut value)?;
        expect_code(UR_RESULT_ERROR_INVALID_NULL_HANDLE, got, &format!("{}(null, {prop:?}, a value)", self.name))
    }

    /// A null handle is `INVALID_NULL_HANDLE`, asked for `prop`'s size.
    ///
    /// # Safety
    /// None beyond the entry point's own.
    pub unsafe fn null_handle(&self, prop: P) -> CaseResult {
        let got = self.size_code(null_mut(), prop)?;
        expect_code(UR_RESULT_ERROR_INVALID_NULL_HANDLE, got, &format!("{}(null, {prop:?})", self.name))
    }

    /// A handle that is not one of this kind (one no adapter made, or a live
    /// handle of another kind), asked for `prop`'s size, is `invalid` (the
    /// kind's `INVALID_<KIND>`); `what` says which handle it is.
    ///
    /// # Safety
    /// None beyond the entry point's own.
    pub unsafe fn refuses(&self, handle: *mut T, what: &str, prop: P, invalid: ur_result_t) -> CaseResult {
        let got = self.size_code(handle, prop)?;
        expect_code(invalid, got, &format!("{}({what}, {prop:?})", self.name))
    }

    /// The property after the last defined one is `INVALID_ENUMERATION`.
    ///
    /// # Safety
    /// `handle` must be live.
    pub unsafe fn past_last(&self, handle: *mut T, past_last: P) -> CaseResult {
        let got = self.size_code(handle, past_last)?;
        expect_code(UR_RESULT_ERROR_INVALID_ENUMERATION, got, &format!("{}(past the last property)", self.name))
    }
}

/// A kind's `ur*GetNativeHandle` (those taking the handle and the output
/// alone), by name, as the loader resolved it.
pub struct NativeHandle<T> {
    pub name: &'static str,
    pub get: Option<unsafe extern "C" fn(*mut T, *mut ur_native_handle_t) -> ur_result_t>,
}

/// `native_handle!(api, urContextGetNativeHandle)`: that entry point as a [`NativeHandle`].
#[macro_export]
macro_rules! native_handle {
    ($api:expr, $entry:ident) => {
        $crate::cases::common::NativeHandle { name: stringify!($entry), get: $api.fns.$entry }
    };
}

/// The three cases of a kind's `ur*GetNativeHandle` whose handle the
/// fixture holds, as the case functions `native_handle` (`probe`, one of
/// native.rs's `native_*`, answers or skips where the adapter has no native
/// handles), `native_handle_null_handle` and `native_handle_null_pointer`.
#[macro_export]
macro_rules! native_handle_cases {
    ($entry:ident, $fx_ty:ty, |$fx:ident| $handle:expr, probe: $probe:expr) => {
        unsafe fn native_handle($fx: &$fx_ty) -> $crate::harness::CaseResult {
            $probe.map(drop)
        }

        unsafe fn native_handle_null_handle($fx: &$crate::harness::LoaderFx) -> $crate::harness::CaseResult {
            $crate::native_handle!($fx.api, $entry).null_handle()
        }

        unsafe fn native_handle_null_pointer($fx: &$fx_ty) -> $crate::harness::CaseResult {
            $crate::native_handle!($fx.api, $entry).null_pointer($handle)
        }
    };
}

impl<T> NativeHandle<T> {
    unsafe fn call(&self, handle: *mut T, native: *mut ur_native_handle_t) -> Result<ur_result_t, String> {
        self.get.map(|get| get(handle, native)).ok_or_else(|| format!("the loader does not export {}", self.name))
    }

    /// A null handle is `INVALID_NULL_HANDLE`.
    ///
    /// # Safety
    /// None beyond the entry point's own.
    pub unsafe fn null_handle(&self) -> CaseResult {
        let mut native: ur_native_handle_t = 0;
        expect_code(UR_RESULT_ERROR_INVALID_NULL_HANDLE, self.call(null_mut(), &mut native)?, &format!("{}(null, ..)", self.name))
    }

    /// A null output is `INVALID_NULL_POINTER`.
    ///
    /// # Safety
    /// `handle` must be live.
    pub unsafe fn null_pointer(&self, handle: *mut T) -> CaseResult {
        expect_code(UR_RESULT_ERROR_INVALID_NULL_POINTER, self.call(handle, null_mut())?, &format!("{}(.., null)", self.name))
    }

    /// The handle's native handle is `expected`: an object made from a
    /// native handle gives that one back.
    ///
    /// # Safety
    /// `handle` must be live.
    pub unsafe fn answers(&self, handle: *mut T, expected: ur_native_handle_t) -> CaseResult {
        let mut native = 0;
        expect_code(UR_RESULT_SUCCESS, self.call(handle, &mut native)?, self.name)?;
        if native != expected {
            return Err(Outcome::Fail(format!("{} answers {native:#x}, expected {expected:#x}", self.name)));
        }
        Ok(())
    }
}

/// The three `ur*GetInfo` protocol cases of a kind whose handle the fixture
/// holds, as the case functions `info_protocol` (the size protocol on
/// `props`), `info_null` (a null handle, asked for `null`) and
/// `info_bad_enum` (the property `past_last`). Written once: every such kind
/// checks them alike.
#[macro_export]
macro_rules! info_cases {
    ($entry:ident, $fx_ty:ty, |$fx:ident| $handle:expr, props: $props:expr, null: $null:expr, past_last: $past:expr $(,)?) => {
        unsafe fn info_protocol($fx: &$fx_ty) -> $crate::harness::CaseResult {
            $crate::info!($fx.api, $entry).size_protocol($handle, &$props)
        }

        unsafe fn info_null($fx: &$crate::harness::LoaderFx) -> $crate::harness::CaseResult {
            $crate::info!($fx.api, $entry).null_handle($null)
        }

        unsafe fn info_bad_enum($fx: &$fx_ty) -> $crate::harness::CaseResult {
            $crate::info!($fx.api, $entry).past_last($handle, $past)
        }
    };
}

/// Native properties of structure type `stype` (the right one, or a wrong
/// one for the error cases) saying whether the UR object takes ownership.
#[macro_export]
macro_rules! native_props {
    ($t:ident, $stype:expr, $owned:expr) => {
        $t { stype: $stype, pNext: std::ptr::null_mut(), isNativeHandleOwned: $owned }
    };
}

/// A kind's `ur*Retain` and `ur*Release`, by name, as the loader resolved them.
pub struct RefCounting<T> {
    pub retain: (&'static str, Option<RefFn<T>>),
    pub release: (&'static str, Option<RefFn<T>>),
}

/// `ref_counting!(api, urContextRetain, urContextRelease)`.
#[macro_export]
macro_rules! ref_counting {
    ($api:expr, $retain:ident, $release:ident) => {
        $crate::cases::common::RefCounting {
            retain: (stringify!($retain), $api.fns.$retain),
            release: (stringify!($release), $api.fns.$release),
        }
    };
}

unsafe fn call_ref<T>((name, f): (&'static str, Option<RefFn<T>>), handle: *mut T) -> Result<ur_result_t, String> {
    f.map(|f| f(handle)).ok_or_else(|| format!("the loader does not export {name}"))
}

impl<T> RefCounting<T> {
    /// A retain makes the count 2 and a release makes it 1 again, on a
    /// handle the case holds once.
    ///
    /// # Safety
    /// `handle` must be live with one reference.
    pub unsafe fn retain_then_release(&self, handle: *mut T, refs: impl Fn(*mut T) -> Result<u32, Outcome>) -> CaseResult {
        success(self.retain.0, call_ref(self.retain, handle))?;
        check_refs(refs(handle)?, 2, self.retain.0)?;
        success(self.release.0, call_ref(self.release, handle))?;
        check_refs(refs(handle)?, 1, self.release.0)
    }

    /// After a retain, a release takes exactly one reference away.
    ///
    /// # Safety
    /// `handle` must be live.
    pub unsafe fn release_drops_one(&self, handle: *mut T, refs: impl Fn(*mut T) -> Result<u32, Outcome>) -> CaseResult {
        success(self.retain.0, call_ref(self.retain, handle))?;
        let before = refs(handle)?;
        success(self.release.0, call_ref(self.release, handle))?;
        check_refs(refs(handle)?, before - 1, self.release.0)
    }

    /// [`release_drops_one`](Self::release_drops_one) on a handle the case
    /// owns, whose last reference the case then releases, which must
    /// succeed.
    ///
    /// # Safety
    /// `handle` must be live.
    pub unsafe fn release_drops_one_then_last(
        &self,
        handle: Owned<T>,
        refs: impl Fn(*mut T) -> Result<u32, Outcome>,
    ) -> CaseResult {
        self.release_drops_one(handle.get(), refs)?;
        success(format!("{} (the last reference)", self.release.0), handle.release())?;
        Ok(())
    }

    /// Releases each of `handles`, which the case holds one reference of.
    ///
    /// # Safety
    /// Each handle must be live.
    pub unsafe fn release_each(&self, handles: &[*mut T]) -> CaseResult {
        for &handle in handles {
            success(self.release.0, call_ref(self.release, handle))?;
        }
        Ok(())
    }

    /// What retain or release (`which`) of `handle` answers.
    ///
    /// # Safety
    /// `handle` must be live, or one the case means to be refused.
    pub unsafe fn code(&self, which: Which, handle: *mut T) -> Result<ur_result_t, String> {
        call_ref(self.entry(which), handle)
    }

    /// The name of retain or release (`which`).
    pub fn entry_name(&self, which: Which) -> &'static str {
        self.entry(which).0
    }

    fn entry(&self, which: Which) -> (&'static str, Option<RefFn<T>>) {
        match which {
            Which::Retain => self.retain,
            Which::Release => self.release,
        }
    }

    /// Retain and release of a null handle are each `INVALID_NULL_HANDLE`
    /// (`which` picks the one a case is about).
    ///
    /// # Safety
    /// None beyond the entry points' own.
    pub unsafe fn null_handle(&self, which: Which) -> CaseResult {
        let entry = self.entry(which);
        expect_code(UR_RESULT_ERROR_INVALID_NULL_HANDLE, call_ref(entry, null_mut())?, &format!("{}(null)", entry.0))
    }
}

/// The null-handle cases of a kind's `ur*Retain` and `ur*Release`, as the
/// case functions named after the arrow.
#[macro_export]
macro_rules! ref_null_cases {
    ($retain:ident, $release:ident => $retain_null:ident, $release_null:ident) => {
        unsafe fn $retain_null(fx: &$crate::harness::LoaderFx) -> $crate::harness::CaseResult {
            $crate::ref_counting!(fx.api, $retain, $release).null_handle($crate::cases::common::Which::Retain)
        }

        unsafe fn $release_null(fx: &$crate::harness::LoaderFx) -> $crate::harness::CaseResult {
            $crate::ref_counting!(fx.api, $retain, $release).null_handle($crate::cases::common::Which::Release)
        }
    };
}

/// Which of retain and release a case calls.
#[derive(Clone, Copy)]
pub enum Which {
    Retain,
    Release,
}

fn check_refs(got: u32, expected: u32, after: &str) -> CaseResult {
    if got != expected {
        return Err(Outcome::Fail(format!("the reference count after {after} is {got}, expected {expected}")));
    }
    Ok(())
}

/// `flags`, which must be among `reserved` (a UR `*_FLAGS_MASK`: the bits
/// no flag of the type defines), so that every entry point must refuse it.
/// Used in a `const`, the check is made when the suite is built.
pub const fn reserved_flags(reserved: u32, flags: u32) -> u32 {
    assert!(flags & reserved != 0, "the flags are not among the type's reserved bits");
    flags
}

/// The handles a `ur*Get`-style entry point lists, through its two calls:
/// the count alone, then that many handles, which must come with the same
/// count. Each handle carries the reference the entry point gave.
pub fn count_then_fill<T>(
    entry: &str,
    get: impl Fn(u32, *mut *mut T, *mut u32) -> Result<ur_result_t, String>,
) -> Result<Vec<*mut T>, Outcome> {
    let mut count = 0u32;
    success(format!("{entry}(count only)"), get(0, null_mut(), &mut count))?;
    let mut handles = vec![null_mut(); count as usize];
    if count > 0 {
        let mut count_again = 0u32;
        success(format!("{entry}({count} entries)"), get(count, handles.as_mut_ptr(), &mut count_again))?;
        check_eq!(count_again, count);
    }
    Ok(handles)
}

/// A system library (libOpenCL, libcuda) that cases call directly to check
/// native handles, opened once and never closed: the statics that hold its
/// entry points live as long as the process.
pub struct SysLib {
    name: &'static str,
    lib: &'static libloading::Library,
}

impl SysLib {
    pub fn open(name: &'static str) -> Result<SysLib, String> {
        // SAFETY: the libraries opened here (vendor ICD and driver loaders)
        // only read their configuration when loaded; the adapter under test
        // has opened them too.
        let lib = unsafe { libloading::Library::new(name) }.map_err(|e| format!("cannot open {name}: {e}"))?;
        Ok(SysLib { name, lib: Box::leak(Box::new(lib)) })
    }

    /// The entry point `symbol`.
    ///
    /// # Safety
    /// `T` must be the C function type of that entry point.
    pub unsafe fn get<T: Copy>(&self, symbol: &str) -> Result<T, String> {
        let name = format!("{symbol}\0");
        self.lib.get::<T>(name.as_bytes()).map(|s| *s).map_err(|e| format!("{} lacks {symbol}: {e}", self.name))
    }
}

/// Declares a struct of a system library's entry points and its `load`,
/// which opens the library and resolves them: each entry point is written
/// once, as its field, its C symbol and its C type.
#[macro_export]
macro_rules! system_entry_points {
    ($(#[$meta:meta])* struct $name:ident from $library:literal {
        $($field:ident = $symbol:literal : $ty:ty,)*
    }) => {
        $(#[$meta])*
        struct $name {
            $($field: $ty,)*
        }

        impl $name {
            fn load() -> Result<$name, String> {
                let lib = $crate::cases::common::SysLib::open($library)?;
                Ok($name {
                    $($field: {
                        let symbol: &str = $symbol;
                        // SAFETY: the field's type is the C type of the entry point named beside it.
                        unsafe { lib.get(symbol)? }
                    },)*
                })
            }
        }
    };
}

/// Case functions that each call one shared check with arguments of their
/// own, one line a case: `Fx: case = check(arguments);` declares
/// `unsafe fn case(fx: &Fx) -> CaseResult { check(fx, arguments) }`, the
/// name `CASES` gives it.
#[macro_export]
macro_rules! cases_calling {
    ($($fx:ident: $case:ident = $check:ident($($argument:expr),*);)*) => {
        $(unsafe fn $case(fx: &$fx) -> $crate::harness::CaseResult {
            $check(fx, $($argument),*)
        })*
    };
}
