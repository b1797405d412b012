//! Handles: refcounted Rust objects behind C pointers.
//!
//! Every object an adapter hands out is an `Arc<T>` turned into a raw pointer
//! with `Arc::into_raw`. `T` is `#[repr(C)]` and starts with a [`HandleHeader`],
//! whose first word is a pointer to the adapter's full DDI table: UR 0.12
//! loaders (ours and Intel's) read that word to dispatch a call on a handle.
//! The second word tags the object kind, so a handle of the wrong kind, or one
//! of another adapter, is refused with an error code instead of being misread.

use crate::abi::*;
use crate::UrResult;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// What kind of object a handle points at.
#[repr(u32)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ObjectKind {
    Adapter = 0x5552_0001,
    Platform,
    Device,
    Context,
    Queue,
    Event,
    UsmPool,
    Program,
    Kernel,
    Mem,
    Sampler,
    LoaderConfig,
}

/// A kind tag no live object carries: written when an object is dropped, so
/// that a stale handle that still reads as mapped memory is refused.
const DEAD: u32 = 0xdead_0000;

impl ObjectKind {
    /// The error UR names for a bad handle of this kind.
    pub fn invalid_error(self) -> ur_result_t {
        match self {
            // UR names no INVALID_ADAPTER or INVALID_USM_POOL code.
            ObjectKind::Adapter => UR_RESULT_ERROR_INVALID_ARGUMENT,
            ObjectKind::Platform => UR_RESULT_ERROR_INVALID_PLATFORM,
            ObjectKind::Device => UR_RESULT_ERROR_INVALID_DEVICE,
            ObjectKind::Context => UR_RESULT_ERROR_INVALID_CONTEXT,
            ObjectKind::Queue => UR_RESULT_ERROR_INVALID_QUEUE,
            ObjectKind::Event => UR_RESULT_ERROR_INVALID_EVENT,
            ObjectKind::UsmPool => UR_RESULT_ERROR_INVALID_ARGUMENT,
            ObjectKind::Program => UR_RESULT_ERROR_INVALID_PROGRAM,
            ObjectKind::Kernel => UR_RESULT_ERROR_INVALID_KERNEL,
            ObjectKind::Mem => UR_RESULT_ERROR_INVALID_MEM_OBJECT,
            ObjectKind::Sampler => UR_RESULT_ERROR_INVALID_SAMPLER,
            ObjectKind::LoaderConfig => UR_RESULT_ERROR_INVALID_ARGUMENT,
        }
    }
}

/// The first field of every object behind a handle.
#[repr(C)]
pub struct HandleHeader {
    ddi: *const ur_dditable_t,
    kind: AtomicU32,
}

// SAFETY: `ddi` points at an immutable `'static` table.
unsafe impl Send for HandleHeader {}
unsafe impl Sync for HandleHeader {}

const _: () = assert!(core::mem::offset_of!(HandleHeader, ddi) == 0);

impl HandleHeader {
    pub const fn new(ddi: &'static ur_dditable_t, kind: ObjectKind) -> Self {
        HandleHeader { ddi, kind: AtomicU32::new(kind as u32) }
    }

    pub fn ddi(&self) -> &'static ur_dditable_t {
        // SAFETY: set from a `&'static` in `new`.
        unsafe { &*self.ddi }
    }

    fn is(&self, kind: ObjectKind) -> bool {
        self.kind.load(Ordering::Relaxed) == kind as u32
    }
}

impl Drop for HandleHeader {
    fn drop(&mut self) {
        self.kind.store(DEAD, Ordering::Relaxed);
    }
}

/// An object that can stand behind a handle.
///
/// # Safety
/// The implementor must be `#[repr(C)]` with a [`HandleHeader`] at offset 0
/// (check with `const _: () = assert!(offset_of!(T, header) == 0)`), so that
/// a handle can be read as a header before its kind is known.
pub unsafe trait UrObject: Send + Sync + Sized + 'static {
    const KIND: ObjectKind;
    /// The opaque C type of this object's handle (`ur_queue_handle_t_`, ...).
    type Handle;
}

/// Turns a new object into a handle that owns one reference.
pub fn into_handle<T: UrObject>(obj: Arc<T>) -> *mut T::Handle {
    Arc::into_raw(obj) as *mut T::Handle
}

/// Checks a handle and borrows its object: null is `INVALID_NULL_HANDLE`, a
/// handle of another kind or adapter is the kind's `INVALID_*` error.
///
/// # Safety
/// A non-null `h` must point at readable memory at least as large as a
/// header; if it is a live object of kind `T::KIND`, it must have been made by
/// [`into_handle`] for `T` and stay alive for `'a`.
pub unsafe fn borrow<'a, T: UrObject>(
    h: *mut T::Handle,
    ddi: &'static ur_dditable_t,
) -> UrResult<&'a T> {
    if h.is_null() {
        return Err(UR_RESULT_ERROR_INVALID_NULL_HANDLE);
    }
    let header = &*(h as *const HandleHeader);
    if !std::ptr::eq(header.ddi, ddi) || !header.is(T::KIND) {
        return Err(T::KIND.invalid_error());
    }
    Ok(&*(h as *const T))
}

/// Like [`borrow`], but takes a new reference.
///
/// # Safety
/// As for [`borrow`].
pub unsafe fn clone_arc<T: UrObject>(
    h: *mut T::Handle,
    ddi: &'static ur_dditable_t,
) -> UrResult<Arc<T>> {
    borrow::<T>(h, ddi)?;
    Arc::increment_strong_count(h as *const T);
    Ok(Arc::from_raw(h as *const T))
}

/// Gives a reference to a live object as a handle owned by the caller.
pub fn new_handle_ref<T: UrObject>(obj: &Arc<T>) -> *mut T::Handle {
    into_handle(obj.clone())
}

/// `urXRetain`.
///
/// # Safety
/// As for [`borrow`].
pub unsafe fn retain<T: UrObject>(h: *mut T::Handle, ddi: &'static ur_dditable_t) -> UrResult {
    borrow::<T>(h, ddi)?;
    Arc::increment_strong_count(h as *const T);
    Ok(())
}

/// `urXRelease`: the last release drops the object.
///
/// # Safety
/// As for [`borrow`]; the caller gives up one reference.
pub unsafe fn release<T: UrObject>(h: *mut T::Handle, ddi: &'static ur_dditable_t) -> UrResult {
    borrow::<T>(h, ddi)?;
    Arc::decrement_strong_count(h as *const T);
    Ok(())
}

/// The reference count that `*_INFO_REFERENCE_COUNT` reports.
pub fn ref_count<T>(obj: &Arc<T>) -> u32 {
    Arc::strong_count(obj) as u32
}

/// The reference count of an object known only by a borrowed reference that
/// came from a handle.
///
/// # Safety
/// `obj` must live inside an `Arc` (it came from [`borrow`]).
pub unsafe fn ref_count_of<T>(obj: &T) -> u32 {
    let arc = std::mem::ManuallyDrop::new(Arc::from_raw(obj as *const T));
    Arc::strong_count(&arc) as u32
}
