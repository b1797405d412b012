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

/// The most links a `pNext` chain may have. UR's chains are a few
/// extension structures long; a longer one is a cycle or garbage.
/// Not part of the C ABI.
///
/// cbindgen:ignore
pub const MAX_CHAIN_LINKS: usize = 32;

/// Walks a `pNext` chain of UR descriptors, yielding each `(stype, pointer)`.
/// A chain longer than [`MAX_CHAIN_LINKS`] (a cycle among them) is
/// `INVALID_VALUE`, found before `f` sees any link, so nothing is half done.
///
/// # Safety
/// Every link of the chain must be a valid UR descriptor (they all start with
/// `stype` and `pNext`).
pub unsafe fn for_each_in_chain(
    first: *const core::ffi::c_void,
    mut f: impl FnMut(ur_structure_type_t, *const core::ffi::c_void) -> UrResult,
) -> UrResult {
    #[repr(C)]
    struct Link {
        stype: ur_structure_type_t,
        p_next: *const core::ffi::c_void,
    }
    let next_of = |p: *const core::ffi::c_void| (*(p as *const Link)).p_next;
    let mut next = first;
    for _ in 0..MAX_CHAIN_LINKS {
        if next.is_null() {
            break;
        }
        next = next_of(next);
    }
    if !next.is_null() {
        return Err(UR_RESULT_ERROR_INVALID_VALUE);
    }
    next = first;
    while !next.is_null() {
        let link = &*(next as *const Link);
        f(link.stype, next)?;
        next = link.p_next;
    }
    Ok(())
}

/// The `pNext` chain of `urQueueCreate`'s properties, checked once for
/// every adapter: bounded (see [`for_each_in_chain`]), and a queue index
/// other than 0 is `INVALID_VALUE` (every device here reports one compute
/// queue index, `UR_DEVICE_INFO_MAX_COMPUTE_QUEUE_INDICES` = 1). Other
/// extension structures are hints, ignored.
///
/// # Safety
/// As for [`for_each_in_chain`].
pub unsafe fn check_queue_properties_chain(p_next: *const core::ffi::c_void) -> UrResult {
    for_each_in_chain(p_next, |stype, link| {
        if stype == UR_STRUCTURE_TYPE_QUEUE_INDEX_PROPERTIES
            && (*(link as *const ur_queue_index_properties_t)).computeIndex != 0
        {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        Ok(())
    })
}

/// The queue flags a `ur_queue_properties_t` in a native-properties chain
/// carries (libsycl chains them to `urQueueCreateWithNativeHandle`), 0 when
/// there is none; undefined bits are `INVALID_ENUMERATION`.
///
/// # Safety
/// As for [`for_each_in_chain`].
pub unsafe fn chained_queue_flags(chain: *const core::ffi::c_void) -> UrResult<ur_queue_flags_t> {
    let mut flags = 0;
    for_each_in_chain(chain, |stype, p| {
        if stype == UR_STRUCTURE_TYPE_QUEUE_PROPERTIES {
            // SAFETY: the structure type names this link's type.
            flags = (*(p as *const ur_queue_properties_t)).flags;
        }
        Ok(())
    })?;
    if flags & UR_QUEUE_FLAGS_MASK != 0 {
        return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
    }
    Ok(flags)
}

/// `urDeviceSelectBinary`, written once: checks the arguments, then picks
/// the first image whose target is earliest in `preferred` (best first).
/// No image for any preferred target is `INVALID_BINARY`, the code SYCL
/// runtimes take as "this device runs none of these images".
///
/// # Safety
/// `binaries` is null or points at `count` descriptors whose target
/// strings are null or NUL-terminated; `selected` is null or writable.
pub unsafe fn select_binary(
    binaries: *const ur_device_binary_t,
    count: u32,
    selected: *mut u32,
    preferred: &[&[u8]],
) -> UrResult {
    if binaries.is_null() || selected.is_null() {
        return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    if count == 0 {
        return Err(UR_RESULT_ERROR_INVALID_SIZE);
    }
    let binaries = slice_arg(binaries, count)?;
    let target = |b: &ur_device_binary_t| {
        if b.pDeviceTargetSpec.is_null() {
            &[][..]
        } else {
            core::ffi::CStr::from_ptr(b.pDeviceTargetSpec).to_bytes()
        }
    };
    for wanted in preferred {
        if let Some(i) = binaries.iter().position(|b| target(b) == *wanted) {
            selected.write(i as u32);
            return Ok(());
        }
    }
    Err(UR_RESULT_ERROR_INVALID_BINARY)
}

/// Who releases the native object behind a UR object that a
/// `ur*CreateWithNativeHandle` made (`isNativeHandleOwned`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum NativeOwnership {
    /// The caller handed over its reference: the UR object releases the
    /// native object when it goes.
    Owned,
    /// The caller keeps its object: after the UR object goes, the native
    /// object is exactly as alive as before it came.
    Borrowed,
}

/// The `ur_*_native_properties_t` structures: one layout (`stype`, `pNext`,
/// `isNativeHandleOwned`), each with its own structure type.
pub trait NativeProperties {
    const STYPE: ur_structure_type_t;
    fn stype(&self) -> ur_structure_type_t;
    fn next(&self) -> *const core::ffi::c_void;
    fn owned(&self) -> bool;
}

macro_rules! native_properties {
    ($($t:ident => $stype:ident;)*) => {$(
        impl NativeProperties for $t {
            const STYPE: ur_structure_type_t = $stype;
            fn stype(&self) -> ur_structure_type_t {
                self.stype
            }
            fn next(&self) -> *const core::ffi::c_void {
                self.pNext
            }
            fn owned(&self) -> bool {
                self.isNativeHandleOwned
            }
        }
    )*};
}

native_properties! {
    ur_platform_native_properties_t => UR_STRUCTURE_TYPE_PLATFORM_NATIVE_PROPERTIES;
    ur_device_native_properties_t => UR_STRUCTURE_TYPE_DEVICE_NATIVE_PROPERTIES;
    ur_context_native_properties_t => UR_STRUCTURE_TYPE_CONTEXT_NATIVE_PROPERTIES;
    ur_queue_native_properties_t => UR_STRUCTURE_TYPE_QUEUE_NATIVE_PROPERTIES;
    ur_event_native_properties_t => UR_STRUCTURE_TYPE_EVENT_NATIVE_PROPERTIES;
    ur_program_native_properties_t => UR_STRUCTURE_TYPE_PROGRAM_NATIVE_PROPERTIES;
    ur_kernel_native_properties_t => UR_STRUCTURE_TYPE_KERNEL_NATIVE_PROPERTIES;
    ur_mem_native_properties_t => UR_STRUCTURE_TYPE_MEM_NATIVE_PROPERTIES;
    ur_sampler_native_properties_t => UR_STRUCTURE_TYPE_SAMPLER_NATIVE_PROPERTIES;
}

/// The arguments every `ur*CreateWithNativeHandle` shares, checked: the
/// native handle (null is `INVALID_NULL_HANDLE`, unless `null_is_valid`:
/// a CUDA device's native handle is its ordinal-like `CUdevice`, and 0 is
/// one), the optional properties (a structure of another type is
/// `INVALID_VALUE`; none means the caller keeps ownership) and the out
/// pointer (`INVALID_NULL_POINTER`). The caller checks its owning adapter or
/// context handle first, as the spec lists that error first.
///
/// Returns the ownership and the properties' `pNext` chain (null when
/// there are no properties).
///
/// # Safety
/// `properties`, when not null, must point at a readable `P`.
pub unsafe fn native_args<P: NativeProperties, Out>(
    native: ur_native_handle_t,
    null_is_valid: bool,
    properties: *const P,
    out: *mut Out,
) -> UrResult<(NativeOwnership, *const core::ffi::c_void)> {
    if native == 0 && !null_is_valid {
        return Err(UR_RESULT_ERROR_INVALID_NULL_HANDLE);
    }
    if out.is_null() {
        return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    let Some(p) = properties.as_ref() else {
        return Ok((NativeOwnership::Borrowed, core::ptr::null()));
    };
    if p.stype() != P::STYPE {
        return Err(UR_RESULT_ERROR_INVALID_VALUE);
    }
    let ownership = if p.owned() { NativeOwnership::Owned } else { NativeOwnership::Borrowed };
    Ok((ownership, p.next()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[repr(C)]
    struct Link {
        stype: ur_structure_type_t,
        p_next: *const core::ffi::c_void,
    }

    fn chain(n: usize) -> Vec<Link> {
        (0..n).map(|_| Link { stype: UR_STRUCTURE_TYPE_USM_POOL_LIMITS_DESC, p_next: core::ptr::null() }).collect()
    }

    fn link(links: &mut [Link]) {
        for i in 0..links.len() - 1 {
            links[i].p_next = &links[i + 1] as *const Link as *const _;
        }
    }

    #[test]
    fn chains_are_bounded_and_cycles_refused() {
        let mut seen = 0;
        let mut ok = chain(MAX_CHAIN_LINKS);
        link(&mut ok);
        // SAFETY: every link is a live local with a null or valid p_next.
        unsafe {
            assert_eq!(for_each_in_chain(ok.as_ptr().cast(), |_, _| { seen += 1; Ok(()) }), Ok(()));
            assert_eq!(seen, MAX_CHAIN_LINKS);
            let mut long = chain(MAX_CHAIN_LINKS + 1);
            link(&mut long);
            assert_eq!(for_each_in_chain(long.as_ptr().cast(), |_, _| unreachable!()), Err(UR_RESULT_ERROR_INVALID_VALUE));
            // A link pointing back into its own chain.
            let mut cycle = chain(3);
            link(&mut cycle);
            cycle[2].p_next = &cycle[1] as *const Link as *const _;
            assert_eq!(for_each_in_chain(cycle.as_ptr().cast(), |_, _| unreachable!()), Err(UR_RESULT_ERROR_INVALID_VALUE));
            let mut itself = chain(1);
            itself[0].p_next = &itself[0] as *const Link as *const _;
            assert_eq!(for_each_in_chain(itself.as_ptr().cast(), |_, _| unreachable!()), Err(UR_RESULT_ERROR_INVALID_VALUE));
        }
    }

    fn props(stype: ur_structure_type_t, owned: bool) -> ur_queue_native_properties_t {
        ur_queue_native_properties_t { stype, pNext: core::ptr::null_mut(), isNativeHandleOwned: owned }
    }

    #[test]
    fn native_arguments_are_checked_in_the_spec_order() {
        let mut out: usize = 0;
        let none: *const ur_queue_native_properties_t = core::ptr::null();
        // SAFETY: every pointer is null or points at a live local.
        unsafe {
            assert_eq!(native_args(0, false, none, &mut out).err(), Some(UR_RESULT_ERROR_INVALID_NULL_HANDLE));
            assert!(native_args(0, true, none, &mut out).is_ok(), "0 is a valid CUdevice");
            assert_eq!(
                native_args(1, false, none, core::ptr::null_mut::<usize>()).err(),
                Some(UR_RESULT_ERROR_INVALID_NULL_POINTER)
            );
            assert_eq!(native_args(1, false, none, &mut out).unwrap().0, NativeOwnership::Borrowed);
            let owned = props(UR_STRUCTURE_TYPE_QUEUE_NATIVE_PROPERTIES, true);
            assert_eq!(native_args(1, false, &owned, &mut out).unwrap().0, NativeOwnership::Owned);
            let wrong = props(UR_STRUCTURE_TYPE_EVENT_NATIVE_PROPERTIES, true);
            assert_eq!(native_args(1, false, &wrong, &mut out).err(), Some(UR_RESULT_ERROR_INVALID_VALUE));
        }
    }
}
