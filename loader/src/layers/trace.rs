//! `UR_LAYER_TRACING`: one line per call, from the entry-point list's names
//! and types and the generated printers in `abi_names`.
//!
//! What a pointer points at is read only after a successful call (an out
//! value, or an input the adapter accepted), and then through
//! `process_vm_readv`, which fails on an unmapped address instead of
//! faulting: a trace never crashes, whatever the caller passed.

use super::abi_names::flag_table;
use super::Arg;
use std::fmt::Write;
use std::sync::OnceLock;
use std::time::Duration;
use ur_core::abi::*;
use ur_core::log::{Level, Sink};

static SINK: OnceLock<Sink> = OnceLock::new();

pub fn init() {
    SINK.get_or_init(|| Sink::from_env("TRACING"));
}

/// How one ABI type prints. `ty` is the type as the entry-point list spells
/// it (flags types are plain integers in Rust, known only by that name);
/// `deref` allows reading through a pointer.
pub trait TraceArg {
    fn trace(&self, ty: &str, deref: bool, s: &mut String);
    /// The value of a pointer or handle argument.
    fn addr(&self) -> Option<usize> {
        None
    }
    /// The value of an integer argument (an array's count).
    fn integer(&self) -> Option<u64> {
        None
    }
}

/// What a pointer to this type shows beyond its address.
pub trait Pointee: Sized {
    fn show(_p: *const Self, _ty: &str, _s: &mut String) {}
}

/// Values, enums and structs: the value read through the pointer.
impl<T: TraceArg + Copy> Pointee for T {
    fn show(p: *const Self, ty: &str, s: &mut String) {
        if let Some(v) = safe_read(p) {
            s.push_str(" (");
            v.trace(ty, false, s);
            s.push(')');
        }
    }
}

impl Pointee for core::ffi::c_void {}

/// C strings, up to a length that keeps the line readable.
impl Pointee for core::ffi::c_char {
    fn show(p: *const Self, _: &str, s: &mut String) {
        let mut text = Vec::new();
        for i in 0..96 {
            match safe_read(p.wrapping_add(i) as *const u8) {
                Some(0) => break,
                Some(b) => text.push(b),
                None => return,
            }
        }
        let _ = write!(s, " {:?}", String::from_utf8_lossy(&text));
    }
}

fn pointer<T: Pointee>(p: *const T, ty: &str, deref: bool, s: &mut String) {
    if p.is_null() {
        s.push_str("nullptr");
        return;
    }
    let _ = write!(s, "{p:p}");
    if deref {
        // The pointee's type: the spelling without its first `*const`/`*mut`.
        let inner = ty.trim_start().trim_start_matches('*').trim_start();
        let inner = inner.strip_prefix("const").or_else(|| inner.strip_prefix("mut")).unwrap_or(inner);
        T::show(p, inner.trim_start(), s);
    }
}

impl<T: Pointee> TraceArg for *const T {
    fn trace(&self, ty: &str, deref: bool, s: &mut String) {
        pointer(*self, ty, deref, s)
    }
    fn addr(&self) -> Option<usize> {
        Some(*self as usize)
    }
}

impl<T: Pointee> TraceArg for *mut T {
    fn trace(&self, ty: &str, deref: bool, s: &mut String) {
        pointer(*self as *const T, ty, deref, s)
    }
    fn addr(&self) -> Option<usize> {
        Some(*self as usize)
    }
}

/// Callbacks: their address.
impl<F: Copy> TraceArg for Option<F> {
    fn trace(&self, _: &str, _: bool, s: &mut String) {
        match self {
            None => s.push_str("nullptr"),
            Some(f) if std::mem::size_of::<F>() == std::mem::size_of::<usize>() => {
                // SAFETY: only function pointers are wrapped in Option in the ABI,
                // and they are one word.
                let _ = write!(s, "{:#x}", unsafe { std::mem::transmute_copy::<F, usize>(f) });
            }
            Some(_) => s.push_str(".."),
        }
    }
}

macro_rules! integers {
    ($($t:ty),*) => {$(
        impl TraceArg for $t {
            fn trace(&self, ty: &str, _: bool, s: &mut String) {
                match flag_table(ty) {
                    Some(table) => flags(*self as u64, table, s),
                    None => { let _ = write!(s, "{}", self); }
                }
            }
            fn integer(&self) -> Option<u64> {
                Some(*self as u64)
            }
        }
    )*};
}
integers!(u8, u16, u32, u64, usize, i16, i32, i64, isize);

impl TraceArg for bool {
    fn trace(&self, _: &str, _: bool, s: &mut String) {
        s.push_str(if *self { "true" } else { "false" })
    }
}

impl TraceArg for f32 {
    fn trace(&self, _: &str, _: bool, s: &mut String) {
        let _ = write!(s, "{self}");
    }
}

impl TraceArg for f64 {
    fn trace(&self, _: &str, _: bool, s: &mut String) {
        let _ = write!(s, "{self}");
    }
}

fn flags(v: u64, table: &[(u64, &str)], s: &mut String) {
    if v == 0 {
        s.push('0');
        return;
    }
    let mut left = v;
    let mut first = true;
    for &(bit, name) in table {
        if bit != 0 && v & bit == bit && left & bit != 0 {
            if !first {
                s.push_str(" | ");
            }
            s.push_str(name);
            left &= !bit;
            first = false;
        }
    }
    if left != 0 {
        let _ = write!(s, "{}{left:#x}", if first { "" } else { " | " });
    }
}

/// An enumerator no name is known for.
pub fn unnamed(v: i64, s: &mut String) {
    let _ = write!(s, "unknown enumerator {v}");
}

/// A struct field, for the generated struct printers: never read through.
pub fn field<T: TraceArg>(s: &mut String, label: &str, v: &T, ty: &str) {
    s.push_str(label);
    s.push_str(": ");
    v.trace(ty, false, s);
}

/// `pNext`, with the type of the next structure in the chain.
pub fn next_chain(s: &mut String, sep: &str, p: *const core::ffi::c_void) {
    s.push_str(sep);
    s.push_str("pNext: ");
    if p.is_null() {
        s.push_str("nullptr");
        return;
    }
    let _ = write!(s, "{p:p}");
    if let Some(base) = safe_read(p as *const ur_base_properties_t) {
        s.push_str(" {stype: ");
        base.stype.trace("", false, s);
        s.push('}');
    }
}

/// `*p`, or `None` where `p` is null, misaligned or not readable.
pub fn safe_read<T: Copy>(p: *const T) -> Option<T> {
    let size = std::mem::size_of::<T>();
    if p.is_null() || (p as usize) % std::mem::align_of::<T>() != 0 || size == 0 {
        return None;
    }
    let mut v = std::mem::MaybeUninit::<T>::uninit();
    let local = libc::iovec { iov_base: v.as_mut_ptr() as *mut libc::c_void, iov_len: size };
    let remote = libc::iovec { iov_base: p as *mut libc::c_void, iov_len: size };
    // SAFETY: the kernel copies from our own address space into `v`, and
    // reports an unmapped source as an error rather than a fault.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    if n == size as isize {
        // SAFETY: every byte of `v` was written; the ABI types are plain data.
        Some(unsafe { v.assume_init() })
    } else {
        None
    }
}

/// The line for one call: arguments, with what successful calls wrote or
/// read through their pointers, the result and the time.
pub fn line(name: &str, args: &[Arg], r: ur_result_t, took: Duration) {
    let Some(sink) = SINK.get() else { return };
    let ok = r == UR_RESULT_SUCCESS;
    let mut s = String::with_capacity(160);
    s.push_str(name);
    s.push('(');
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        let _ = write!(s, ".{} = ", a.name);
        a.val.trace(a.ty.trim(), ok, &mut s);
    }
    s.push_str(") -> ");
    r.trace("", false, &mut s);
    let _ = write!(s, " ({} ns)", took.as_nanos());
    sink.log(Level::Info, &s);
}
