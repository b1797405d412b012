//! Handles: refcounted Rust objects behind C pointers.
//!
//! Every object an adapter hands out is an `Arc<T>` turned into a raw pointer
//! with `Arc::into_raw`. `T` is `#[repr(C)]` and starts with a [`HandleHeader`],
//! whose first word is a pointer to the adapter's full DDI table: UR 0.12
//! loaders (ours and Intel's) read that word to dispatch a call on a handle.
//! The second word tags the object kind, so a handle of the wrong kind, or one
//! of another adapter, is refused with an error code instead of being misread.
//!
//! # Reference counts
//!
//! The count a user sees (`*_INFO_REFERENCE_COUNT`) and moves
//! (`urXRetain`/`urXRelease`) lives in the header, apart from the `Arc`
//! count: adapters also hold objects internally (an event its queue, a queue
//! its context), and those holders must neither show in the user's count nor
//! be freed by an extra release from C. While the user's count is above zero
//! the handle owns exactly one `Arc` reference; the release that takes the
//! count to zero gives it up. A release past zero is refused and frees
//! nothing.
//!
//! # What a handle check guarantees
//!
//! A check reads the two header words through raw pointers, never forming a
//! reference to memory it has not recognised. It refuses null, handles of
//! another adapter or kind, and objects that were dropped while their memory
//! still reads as a dropped header. It cannot recognise a handle whose memory
//! was freed and reused: no C API can, short of never freeing (see
//! `spec/loader.md`).

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
    /// The user's references: see the module comment.
    user_refs: AtomicU32,
}

// SAFETY: `ddi` points at an immutable `'static` table.
unsafe impl Send for HandleHeader {}
unsafe impl Sync for HandleHeader {}

const _: () = assert!(core::mem::offset_of!(HandleHeader, ddi) == 0);

impl HandleHeader {
    pub const fn new(ddi: &'static ur_dditable_t, kind: ObjectKind) -> Self {
        HandleHeader { ddi, kind: AtomicU32::new(kind as u32), user_refs: AtomicU32::new(0) }
    }

    /// The user's reference count.
    pub fn user_refs(&self) -> u32 {
        self.user_refs.load(Ordering::Acquire)
    }

    pub fn ddi(&self) -> &'static ur_dditable_t {
        // SAFETY: set from a `&'static` in `new`.
        unsafe { &*self.ddi }
    }

    /// One more user reference; refused once the user released the last.
    fn retain_user(&self) -> bool {
        self.user_refs.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1).map(|_| n + 1)).is_ok()
    }

    /// One user reference less: `Some(true)` when it was the last, `None`
    /// when there was none to give up.
    fn release_user(&self) -> Option<bool> {
        self.user_refs.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1)).ok().map(|n| n == 1)
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

    /// Runs when the user's last reference goes, before the handle gives up
    /// its `Arc` (a queue stops taking work, say). Internal holders may keep
    /// the object alive after it.
    fn last_user_release(&self) {}
}

/// Makes `$t` an object behind handles of kind `$kind` whose C handle type
/// is `$handle`, with an optional block of [`UrObject`] items (such as
/// `last_user_release`). The `header` field must come first: the macro
/// asserts it at compile time, which is what makes the impl sound.
#[macro_export]
macro_rules! ur_object {
    ($t:ty, $kind:ident, $handle:ident $(, { $($body:tt)* })?) => {
        const _: () = assert!(core::mem::offset_of!($t, header) == 0);
        // SAFETY: the assertion above puts the `HandleHeader` at offset 0.
        unsafe impl $crate::handle::UrObject for $t {
            const KIND: $crate::handle::ObjectKind = $crate::handle::ObjectKind::$kind;
            type Handle = $crate::abi::$handle;
            $($($body)*)?
        }
    };
}

/// An object that always lives in an `Arc` (made by `Arc::new`, never
/// leaked as a plain box), so that a borrowed one can be shared.
///
/// # Safety
/// Every value of the type that a handle or reference reaches is owned by
/// an `Arc`.
pub unsafe trait ArcObject: UrObject {}

/// A new `Arc` to an object known by reference.
pub fn arc_of<T: ArcObject>(obj: &T) -> Arc<T> {
    // SAFETY: `ArcObject` promises `obj` sits inside an `Arc`, which the
    // borrow keeps alive while the count is raised.
    unsafe {
        Arc::increment_strong_count(obj as *const T);
        Arc::from_raw(obj as *const T)
    }
}

fn header_of<T: UrObject>(obj: &T) -> &HandleHeader {
    // SAFETY: `UrObject` promises the header at offset 0 of a `#[repr(C)]` type.
    unsafe { &*(obj as *const T as *const HandleHeader) }
}

/// Hands an object to the user as a handle: one more user reference. The
/// first one keeps `obj`'s `Arc` for the handle; later ones drop it (the
/// handle already holds one).
pub fn into_handle<T: UrObject>(obj: Arc<T>) -> *mut T::Handle {
    let before = header_of(&*obj).user_refs.fetch_add(1, Ordering::AcqRel);
    if before == 0 {
        Arc::into_raw(obj) as *mut T::Handle
    } else {
        Arc::as_ptr(&obj) as *mut T::Handle
    }
}

/// The handle value of a live object, without a new reference (for info
/// queries that name an object).
pub fn handle_of<T: UrObject>(obj: &T) -> *mut T::Handle {
    obj as *const T as *mut T::Handle
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
    let header = h as *const HandleHeader;
    // Read the two words through raw pointers: until both match, `h` is
    // not known to be one of our objects.
    let table = std::ptr::addr_of!((*header).ddi).read();
    if !std::ptr::eq(table, ddi) {
        return Err(T::KIND.invalid_error());
    }
    let kind = &*std::ptr::addr_of!((*header).kind);
    if kind.load(Ordering::Relaxed) != T::KIND as u32 {
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

/// `urXRetain`: one more user reference, refused (the kind's `INVALID_*`)
/// once the user released the last one.
///
/// # Safety
/// As for [`borrow`].
pub unsafe fn retain<T: UrObject>(h: *mut T::Handle, ddi: &'static ur_dditable_t) -> UrResult {
    let obj = borrow::<T>(h, ddi)?;
    if header_of(obj).retain_user() {
        Ok(())
    } else {
        Err(T::KIND.invalid_error())
    }
}

/// `urXRelease`: the last user reference runs [`UrObject::last_user_release`]
/// and gives up the handle's `Arc`; a release past it is refused and frees
/// nothing.
///
/// # Safety
/// As for [`borrow`]; the caller gives up one reference.
pub unsafe fn release<T: UrObject>(h: *mut T::Handle, ddi: &'static ur_dditable_t) -> UrResult {
    let obj = borrow::<T>(h, ddi)?;
    match header_of(obj).release_user() {
        Some(true) => {
            obj.last_user_release();
            Arc::decrement_strong_count(h as *const T);
            Ok(())
        }
        Some(false) => Ok(()),
        None => Err(T::KIND.invalid_error()),
    }
}

/// For objects their adapter keeps for the process (devices, sub-devices
/// with their parent): the user's count moves, no `Arc` does.
pub fn count_user_ref<T: UrObject>(obj: &T) {
    header_of(obj).user_refs.fetch_add(1, Ordering::AcqRel);
}

/// `urXRelease` of an object its adapter keeps: a release past the user's
/// count is refused; nothing is freed.
///
/// # Safety
/// As for [`borrow`].
pub unsafe fn release_kept<T: UrObject>(h: *mut T::Handle, ddi: &'static ur_dditable_t) -> UrResult {
    let obj = borrow::<T>(h, ddi)?;
    header_of(obj).release_user().map(drop).ok_or(T::KIND.invalid_error())
}

/// The user's reference count of an object known by reference.
pub fn ref_count_of<T: UrObject>(obj: &T) -> u32 {
    header_of(obj).user_refs()
}
