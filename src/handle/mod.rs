//! Handles: refcounted Rust objects behind C pointers.
//!
//! Every object an adapter hands out lives in an `Arc<T>`; `T` is
//! `#[repr(C)]` and starts with a [`HandleHeader`]. The C handle is not the
//! object's address but that of its [`HandleCell`] (`cells.rs`), made the
//! first time the object is named: the cell's first word is a pointer to
//! the adapter's full DDI table (UR 0.12 loaders, ours and Intel's, read
//! it to dispatch a call), the second tags the object's kind, the third
//! points at the object.
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
//! A check reads the cell's words, which stay our memory for the life of
//! the process, so no handle we ever made leads to a read of freed memory.
//! The release that gives up the user's last reference marks the cell dead
//! (internal holders may keep the object a while: a released queue stays
//! alive until its events go, but takes no more work), and so does the
//! object's drop. A dead cell is refused with the kind's `INVALID_*` code
//! until it is handed out again, after [`cells::QUARANTINE`] newer handles
//! died (`spec/loader.md`).

mod cells;

pub use cells::HandleCell;
use cells::DEAD;
use crate::abi::*;
use crate::UrResult;
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
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
    kind: ObjectKind,
    /// The user's references: see the module comment.
    user_refs: AtomicU32,
    /// The handle's cell, made when the object is first named.
    cell: AtomicPtr<HandleCell>,
}

// SAFETY: `ddi` points at an immutable `'static` table.
unsafe impl Send for HandleHeader {}
unsafe impl Sync for HandleHeader {}

impl HandleHeader {
    pub const fn new(ddi: &'static ur_dditable_t, kind: ObjectKind) -> Self {
        HandleHeader { ddi, kind, user_refs: AtomicU32::new(0), cell: AtomicPtr::new(std::ptr::null_mut()) }
    }

    /// The user's reference count.
    pub fn user_refs(&self) -> u32 {
        self.user_refs.load(Ordering::Acquire)
    }

    pub fn ddi(&self) -> &'static ur_dditable_t {
        // SAFETY: set from a `&'static` in `new`.
        unsafe { &*self.ddi }
    }

    /// This object's cell, made on first use. The header sits at offset 0
    /// of its object (`UrObject`), so its address is the object's.
    fn cell(&self) -> &'static HandleCell {
        let p = self.cell.load(Ordering::Acquire);
        if !p.is_null() {
            // SAFETY: cells are never freed (`cells.rs`).
            return unsafe { &*p };
        }
        let object = self as *const Self as *const ();
        let new = cells::take(self.ddi, self.kind as u32, object);
        let new_ptr = new as *const HandleCell as *mut HandleCell;
        match self.cell.compare_exchange(std::ptr::null_mut(), new_ptr, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => new,
            Err(theirs) => {
                cells::unused(new);
                // SAFETY: as above.
                unsafe { &*theirs }
            }
        }
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
        let p = *self.cell.get_mut();
        if !p.is_null() {
            // SAFETY: cells are never freed (`cells.rs`).
            cells::retire(unsafe { &*p });
        }
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

/// The handle protocol of a core object `$t<B>` (`crate::context`,
/// `crate::queue::object`, ...): `UrObject`, sound because the type is
/// `#[repr(C)]` with its `HandleHeader` first; `ArcObject`, sound because
/// its constructors make it only inside an `Arc`; and its `handle()`.
#[macro_export]
#[doc(hidden)]
macro_rules! core_object {
    ($t:ident, $kind:ident, $handle:ident $(, { $($body:tt)* })?) => {
        // SAFETY: `#[repr(C)]` with the `HandleHeader` first.
        unsafe impl<B: $crate::hal::Backend> $crate::handle::UrObject for $t<B> {
            const KIND: $crate::handle::ObjectKind = $crate::handle::ObjectKind::$kind;
            type Handle = $crate::abi::$handle;
            $($($body)*)?
        }
        // SAFETY: made only by its constructors, inside an `Arc`.
        unsafe impl<B: $crate::hal::Backend> $crate::handle::ArcObject for $t<B> {}
        impl<B: $crate::hal::Backend> $t<B> {
            /// The object's handle (the caller owns no reference through it).
            pub fn handle(&self) -> *mut $crate::abi::$handle {
                $crate::handle::handle_of(self)
            }
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
    unsafe { arc_in(obj) }
}

/// An object's `Arc`, borrowed for as long as the object is: what
/// [`arc_of`] gives, without writing the reference count, which every
/// thread using the object shares. Clones of it count as usual.
pub struct ArcRef<'a, T> {
    arc: std::mem::ManuallyDrop<Arc<T>>,
    _borrow: std::marker::PhantomData<&'a T>,
}

impl<T> std::ops::Deref for ArcRef<'_, T> {
    type Target = Arc<T>;

    #[inline]
    fn deref(&self) -> &Arc<T> {
        &self.arc
    }
}

/// The `Arc` holding `obj`, borrowed (see [`ArcRef`]).
#[inline]
pub fn arc_ref<T: ArcObject>(obj: &T) -> ArcRef<'_, T> {
    // SAFETY: `ArcObject` promises `obj` sits inside an `Arc`, so the
    // pointer is one `Arc::into_raw` would give. The borrow keeps that
    // `Arc` alive while the `ArcRef` lives, and `ManuallyDrop` never gives
    // back the count this one did not take.
    let arc = unsafe { Arc::from_raw(obj as *const T) };
    ArcRef { arc: std::mem::ManuallyDrop::new(arc), _borrow: std::marker::PhantomData }
}

fn header_of<T: UrObject>(obj: &T) -> &HandleHeader {
    // SAFETY: `UrObject` promises the header at offset 0 of a `#[repr(C)]` type.
    unsafe { &*(obj as *const T as *const HandleHeader) }
}

/// Hands an object to the user as a handle: one more user reference. The
/// first one keeps `obj`'s `Arc` for the handle (and makes a handle that
/// was released live again); later ones drop it (the handle already holds
/// one).
pub fn into_handle<T: UrObject>(obj: Arc<T>) -> *mut T::Handle {
    let header = header_of(&*obj);
    let cell = header.cell();
    let before = header.user_refs.fetch_add(1, Ordering::AcqRel);
    if before == 0 {
        cell.kind.store(T::KIND as u32, Ordering::Release);
        let _ = Arc::into_raw(obj);
    }
    cell as *const HandleCell as *mut T::Handle
}

/// The handle value of a live object, without a new reference (for info
/// queries that name an object).
pub fn handle_of<T: UrObject>(obj: &T) -> *mut T::Handle {
    header_of(obj).cell() as *const HandleCell as *mut T::Handle
}

/// The object of a handle [`borrow`] accepted earlier in the same call.
///
/// # Safety
/// `h` was accepted by [`borrow`] for `T`, and the object stays alive for
/// `'a`.
pub unsafe fn object_of<'a, T: UrObject>(h: *mut T::Handle) -> &'a T {
    &*((*(h as *const HandleCell)).object.load(Ordering::Acquire) as *const T)
}

/// Checks a handle and borrows its object: null is `INVALID_NULL_HANDLE`, a
/// handle of another kind or adapter, or a released one, is the kind's
/// `INVALID_*` error.
///
/// # Safety
/// A non-null `h` must point at readable memory at least as large as a
/// cell (every handle this crate ever made does, for good); if it is live
/// and of kind `T::KIND`, its object must stay alive for `'a`.
pub unsafe fn borrow<'a, T: UrObject>(
    h: *mut T::Handle,
    ddi: &'static ur_dditable_t,
) -> UrResult<&'a T> {
    if h.is_null() {
        return Err(UR_RESULT_ERROR_INVALID_NULL_HANDLE);
    }
    let cell = h as *const HandleCell;
    // Read the words through raw pointers: until the table and the kind
    // match, `h` is not known to be one of our cells.
    let table = (*std::ptr::addr_of!((*cell).ddi)).load(Ordering::Relaxed);
    if !std::ptr::eq(table, ddi) {
        return Err(T::KIND.invalid_error());
    }
    let cell = &*cell;
    if cell.kind.load(Ordering::Acquire) != T::KIND as u32 {
        return Err(T::KIND.invalid_error());
    }
    let object = cell.object.load(Ordering::Acquire);
    if object.is_null() {
        return Err(T::KIND.invalid_error());
    }
    Ok(&*(object as *const T))
}

/// Like [`borrow`], but takes a new reference.
///
/// # Safety
/// As for [`borrow`].
pub unsafe fn clone_arc<T: UrObject>(
    h: *mut T::Handle,
    ddi: &'static ur_dditable_t,
) -> UrResult<Arc<T>> {
    // A live handle owns one `Arc` of its object.
    Ok(arc_in(borrow::<T>(h, ddi)?))
}

/// A new `Arc` to an object known to sit inside one.
///
/// # Safety
/// `obj` is owned by an `Arc` that outlives the borrow.
unsafe fn arc_in<T>(obj: &T) -> Arc<T> {
    Arc::increment_strong_count(obj as *const T);
    Arc::from_raw(obj as *const T)
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
    let header = header_of(obj);
    match header.release_user() {
        Some(true) => {
            // Refused from now on, though internal holders may keep the
            // object alive a while.
            header.cell().kind.store(DEAD, Ordering::Release);
            obj.last_user_release();
            Arc::decrement_strong_count(obj as *const T);
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

/// The handle value of an object known by a weak reference, without a new
/// reference; null once the object is gone.
pub fn handle_of_weak<T: UrObject>(obj: &std::sync::Weak<T>) -> *mut T::Handle {
    obj.upgrade().map_or(std::ptr::null_mut(), |o| handle_of(&*o))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    static DDI: ur_dditable_t = crate::ddi::UNSUPPORTED_DDI;

    #[repr(C)]
    struct Thing {
        header: HandleHeader,
        value: u64,
    }
    crate::ur_object!(Thing, Event, ur_event_handle_t_);

    fn thing(value: u64) -> Arc<Thing> {
        Arc::new(Thing { header: HandleHeader::new(&DDI, ObjectKind::Event), value })
    }

    #[test]
    fn a_released_handle_is_refused_until_its_cell_is_handed_out_again() {
        let h = into_handle(thing(7));
        assert_eq!(unsafe { borrow::<Thing>(h, &DDI) }.unwrap().value, 7);
        unsafe { release::<Thing>(h, &DDI) }.unwrap();
        for _ in 0..3 {
            assert_eq!(unsafe { borrow::<Thing>(h, &DDI) }.err(), Some(UR_RESULT_ERROR_INVALID_EVENT));
            assert_eq!(unsafe { retain::<Thing>(h, &DDI) }, Err(UR_RESULT_ERROR_INVALID_EVENT));
            assert_eq!(unsafe { release::<Thing>(h, &DDI) }, Err(UR_RESULT_ERROR_INVALID_EVENT));
        }
        // Fewer than QUARANTINE newer handles die: `h` stays refused, and no
        // new object gets its cell. (Other tests of this binary may retire
        // cells meanwhile; they only make the cell older.)
        for i in 0..cells::QUARANTINE / 2 {
            let n = into_handle(thing(i as u64));
            assert_ne!(n, h);
            unsafe { release::<Thing>(n, &DDI) }.unwrap();
            assert!(unsafe { borrow::<Thing>(h, &DDI) }.is_err());
        }
    }

    // SAFETY (test): every `Thing` of these tests lives in an `Arc`.
    unsafe impl ArcObject for Thing {}

    #[test]
    fn a_borrowed_arc_counts_nothing_and_its_clones_count() {
        let obj = thing(3);
        let r = arc_ref(&*obj);
        assert!(Arc::ptr_eq(&r, &obj));
        assert_eq!(Arc::strong_count(&obj), 1);
        let c = Arc::clone(&r);
        assert_eq!(Arc::strong_count(&obj), 2);
        drop(r);
        drop(c);
        assert_eq!(Arc::strong_count(&obj), 1);
        assert_eq!(arc_ref(&*obj).value, 3);
        assert_eq!(Arc::strong_count(&obj), 1);
    }

    #[test]
    fn a_handle_kept_alive_inside_is_refused_after_the_users_release_and_lives_again_when_handed_out() {
        let obj = thing(1);
        let h = into_handle(obj.clone());
        unsafe { release::<Thing>(h, &DDI) }.unwrap();
        assert!(unsafe { borrow::<Thing>(h, &DDI) }.is_err(), "released, though still alive inside");
        assert_eq!(handle_of(&*obj), h, "the object keeps its handle value");
        assert_eq!(into_handle(obj.clone()), h);
        assert_eq!(unsafe { borrow::<Thing>(h, &DDI) }.unwrap().value, 1);
        unsafe { release::<Thing>(h, &DDI) }.unwrap();
        drop(obj);
        assert!(unsafe { borrow::<Thing>(h, &DDI) }.is_err());
    }

    /// What a handle costs: make, check and release one, against making
    /// and dropping the same object without a handle, in the same run.
    /// Prints; run with `-- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn handle_cost() {
        const N: u64 = 2_000_000;
        let per = |t: Instant| t.elapsed().as_nanos() as f64 / N as f64;
        for _ in 0..3 {
            let t = Instant::now();
            for i in 0..N {
                let h = into_handle(thing(i));
                std::hint::black_box(unsafe { borrow::<Thing>(h, &DDI) }.unwrap().value);
                unsafe { release::<Thing>(h, &DDI) }.unwrap();
            }
            let with = per(t);
            let t = Instant::now();
            for i in 0..N {
                let o = thing(i);
                std::hint::black_box(o.value);
                drop(o);
            }
            println!("handle made, checked, released: {with:.1} ns; object alone: {:.1} ns", per(t));
        }
    }
}
