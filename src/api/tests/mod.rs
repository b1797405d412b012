//! Unit tests of the argument checks of `src/api`, through the test backend
//! (`crate::test_backend`).
//!
//! Every test calls the real `extern "C"` entry points through the test
//! backend's DDI table, as C would: raw pointers, null handles, bad enums.
//! A refused call is checked twice: its code, and that the backend heard
//! nothing (`refused!`). A good call is checked to reach the backend with
//! the arguments decoded (`reached!`).
//!
//! The harness: [`World`] (an adapter, its platform and two devices, a
//! context over the first device and a queue on it), the macros `ur!`
//! (call an entry point), `refused!`, `reached!`, and `refusals!`, which
//! makes one `#[test]` per refused call; `with_out` for an output a test
//! does not read. Checks several entry points share are written once, as a
//! macro making a module of tests per entry point (`info.rs`,
//! `wait_list.rs`, `native.rs`, the pool calls of `usm_exp.rs`).

pub(super) use crate::abi::*;
pub(super) use crate::handle::ObjectKind;
pub(super) use crate::test_backend::objects::{MAX_ALLOC, NATIVE_DEVICE, NATIVE_OBJECT, NATIVE_PLATFORM};
pub(super) use crate::test_backend::{take_calls, Call, TContext, TEvent, TestBackend};
pub(super) use core::ffi::{c_char, c_void};
pub(super) use std::ptr::{null, null_mut};

/// Calls entry point `Table.pfnSlot` of the test backend's DDI table.
macro_rules! ur {
    ($table:ident . $slot:ident ( $($arg:expr),* $(,)? )) => {{
        let f = crate::test_backend::DDI.$table.$slot.expect(stringify!($table.$slot));
        // SAFETY: the tests pass null, pointers to live locals of the types
        // and sizes the entry point reads and writes, handles this backend
        // made, or deliberately bad handles of cell-sized readable memory
        // (which the core refuses without following).
        unsafe { f($($arg),*) }
    }};
}

/// The call returns `$code`: what the backend heard of it alone.
macro_rules! answers {
    ($code:expr, $call:expr) => {{
        take_calls();
        let result = $call;
        assert_eq!(result, $code, "{}", stringify!($call));
        take_calls()
    }};
}

/// The call returns `$code` and the backend heard nothing of it.
macro_rules! refused {
    ($code:expr, $call:expr) => {{
        let calls = answers!($code, $call);
        assert!(calls.is_empty(), "refused with {:?}, yet the backend heard {calls:?}", $code);
    }};
}

/// The call returns `$code` after reaching the backend: its calls.
macro_rules! reached {
    ($code:expr, $call:expr) => {{
        let calls = answers!($code, $call);
        assert!(!calls.is_empty(), "{} never reached the backend", stringify!($call));
        calls
    }};
}

/// `$h`, an object of `$table` the user holds one reference of: a retain
/// and two releases are the core's alone, and a third release is
/// `$invalid`.
macro_rules! one_counted_reference {
    ($table:ident, $h:expr, $invalid:expr) => {{
        let h = $h;
        refused!(UR_RESULT_SUCCESS, ur!($table.pfnRetain(h)));
        refused!(UR_RESULT_SUCCESS, ur!($table.pfnRelease(h)));
        refused!(UR_RESULT_SUCCESS, ur!($table.pfnRelease(h)));
        refused!($invalid, ur!($table.pfnRelease(h)));
    }};
}

/// One `#[test]` per refused call: `name: CODE, |w| call;`, where `w` is a
/// fresh [`World`].
macro_rules! refusals {
    ($($name:ident: $code:expr, |$w:ident| $call:expr;)*) => {$(
        #[test]
        fn $name() {
            let $w = World::new();
            let _ = &$w;
            refused!($code, $call);
        }
    )*};
}

mod context;
mod device;
mod enqueue;
mod event;
mod info;
mod kernel;
mod mem;
mod native;
mod platform;
mod program;
mod queue;
mod submit;
mod usm;
mod usm_exp;
mod usm_async_path;
mod wait_list;

/// The one method the backend heard, with its arguments.
pub(super) fn only(calls: &[Call], method: &str) -> String {
    let heard: Vec<&str> = calls.iter().map(|c| c.method).collect();
    assert_eq!(heard, [method], "{calls:?}");
    calls[0].args.clone()
}

/// Calls `f` with a place for the one output it writes, which the test
/// does not read: zeroed, a null handle or pointer, a zero count or size.
pub(super) fn with_out<T>(f: impl FnOnce(*mut T) -> ur_result_t) -> ur_result_t {
    let mut out = std::mem::MaybeUninit::<T>::zeroed();
    f(out.as_mut_ptr())
}

/// The native handle `get` writes, which the backend gave (`method`, alone).
pub(super) fn native_of(method: &str, get: impl FnOnce(*mut ur_native_handle_t) -> ur_result_t) -> ur_native_handle_t {
    let mut native = 0;
    let calls = reached!(UR_RESULT_SUCCESS, get(&mut native));
    assert_eq!(methods(&calls), [method]);
    native
}

/// The methods the backend heard, in order.
pub(super) fn methods(calls: &[Call]) -> Vec<&'static str> {
    calls.iter().map(|c| c.method).collect()
}

/// Objects of one test. Each helper makes its object through the entry
/// points, checks that it succeeded, and leaves the backend's log empty.
/// Helpers' objects are not released; `ctx` and `queue` are, on drop, so a
/// test never releases those two itself (a stale handle's cell may serve
/// another test's object later).
pub(super) struct World {
    pub adapter: ur_adapter_handle_t,
    pub platform: ur_platform_handle_t,
    pub dev: [ur_device_handle_t; 2],
    /// A context over `dev[0]`.
    pub ctx: ur_context_handle_t,
    /// An in-order queue of `ctx` on `dev[0]`.
    pub queue: ur_queue_handle_t,
}

/// Runs a helper's calls and forgets them.
fn quiet<T>(f: impl FnOnce() -> T) -> T {
    let r = f();
    take_calls();
    r
}

fn ok(result: ur_result_t, what: &str) {
    assert_eq!(result, UR_RESULT_SUCCESS, "{what}");
}

impl World {
    pub fn new() -> World {
        quiet(|| {
            let mut adapter = null_mut();
            ok(ur!(Adapter.pfnGet(1, &mut adapter, null_mut())), "urAdapterGet");
            let mut platform = null_mut();
            ok(ur!(Platform.pfnGet(adapter, 1, &mut platform, null_mut())), "urPlatformGet");
            let mut dev = [null_mut(); 2];
            ok(ur!(Device.pfnGet(platform, UR_DEVICE_TYPE_ALL, 2, dev.as_mut_ptr(), null_mut())), "urDeviceGet");
            let mut w = World { adapter, platform, dev, ctx: null_mut(), queue: null_mut() };
            w.ctx = w.context(&[dev[0]]);
            w.queue = w.queue_on(w.ctx, dev[0], 0);
            w
        })
    }

    pub fn context(&self, devices: &[ur_device_handle_t]) -> ur_context_handle_t {
        let mut h = null_mut();
        quiet(|| ok(ur!(Context.pfnCreate(devices.len() as u32, devices.as_ptr(), null(), &mut h)), "urContextCreate"));
        h
    }

    /// A context over both devices.
    pub fn context2(&self) -> ur_context_handle_t {
        self.context(&self.dev)
    }

    pub fn queue_on(&self, ctx: ur_context_handle_t, dev: ur_device_handle_t, flags: ur_queue_flags_t) -> ur_queue_handle_t {
        let props = ur_queue_properties_t { stype: UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, pNext: null_mut(), flags };
        let mut h = null_mut();
        quiet(|| ok(ur!(Queue.pfnCreate(ctx, dev, &props, &mut h)), "urQueueCreate"));
        h
    }

    /// The event of a marker on `queue`.
    pub fn event_on(&self, queue: ur_queue_handle_t) -> ur_event_handle_t {
        let mut h = null_mut();
        quiet(|| ok(ur!(Enqueue.pfnEventsWait(queue, 0, null(), &mut h)), "urEnqueueEventsWait"));
        h
    }

    pub fn event(&self) -> ur_event_handle_t {
        self.event_on(self.queue)
    }

    /// An event whose command ended in error.
    pub fn failed_event(&self) -> ur_event_handle_t {
        let h = self.event();
        event_obj(h).raw.failed.store(true, std::sync::atomic::Ordering::Relaxed);
        h
    }

    /// `size` bytes of host USM in `ctx`.
    pub fn alloc_in(&self, ctx: ur_context_handle_t, size: usize) -> *mut c_void {
        let mut p = null_mut();
        quiet(|| ok(ur!(USM.pfnHostAlloc(ctx, null(), null_mut(), size, &mut p)), "urUSMHostAlloc"));
        p
    }

    pub fn alloc(&self, size: usize) -> *mut c_void {
        self.alloc_in(self.ctx, size)
    }

    /// An async device allocation on `queue`, freeable with `urEnqueueUSMFreeExp`.
    pub fn async_alloc(&self, queue: ur_queue_handle_t, size: usize) -> *mut c_void {
        let mut p = null_mut();
        quiet(|| ok(ur!(EnqueueExp.pfnUSMDeviceAllocExp(queue, null_mut(), size, null(), 0, null(), &mut p, null_mut())), "alloc"));
        p
    }

    /// A pool of `urUSMPoolCreateExp` for `dev` in `ctx`.
    pub fn pool(&self, ctx: ur_context_handle_t, dev: ur_device_handle_t) -> ur_usm_pool_handle_t {
        let desc = ur_usm_pool_desc_t { stype: UR_STRUCTURE_TYPE_USM_POOL_DESC, pNext: null(), flags: 0 };
        let mut h = null_mut();
        quiet(|| ok(ur!(USMExp.pfnPoolCreateExp(ctx, dev, &desc as *const _ as *mut _, &mut h)), "urUSMPoolCreateExp"));
        h
    }

    /// A program of `ctx` made from IL, for each of its devices.
    pub fn program_in(&self, ctx: ur_context_handle_t) -> ur_program_handle_t {
        let il = b"il";
        let mut h = null_mut();
        quiet(|| ok(ur!(Program.pfnCreateWithIL(ctx, il.as_ptr().cast(), il.len(), null(), &mut h)), "urProgramCreateWithIL"));
        h
    }

    pub fn program(&self) -> ur_program_handle_t {
        self.program_in(self.ctx)
    }

    pub fn kernel_of(&self, program: ur_program_handle_t) -> ur_kernel_handle_t {
        let mut h = null_mut();
        quiet(|| ok(ur!(Kernel.pfnCreate(program, c"k".as_ptr(), &mut h)), "urKernelCreate"));
        h
    }

    pub fn kernel(&self) -> ur_kernel_handle_t {
        self.kernel_of(self.program())
    }

    /// The backend features of context `ctx`.
    pub fn features(&self, ctx: ur_context_handle_t) -> &crate::test_backend::objects::Settings {
        // SAFETY: `ctx` is a live context of this backend: the test holds
        // its handle while it uses the reference.
        let context = unsafe { crate::api::obj::<TestBackend, TContext>(ctx) }.expect("a live context");
        &context.raw.settings
    }
}

/// The object of a live event handle.
pub(super) fn event_obj<'a>(h: ur_event_handle_t) -> &'a TEvent {
    // SAFETY: `h` is a live event of this backend, which the test holds.
    unsafe { crate::api::obj::<TestBackend, TEvent>(h) }.expect("a live event")
}

impl Drop for World {
    fn drop(&mut self) {
        // Leave no references behind; a test that released them already
        // gets the handle's INVALID_* code back, which is fine here.
        ur!(Queue.pfnRelease(self.queue));
        ur!(Context.pfnRelease(self.ctx));
        ur!(Adapter.pfnRelease(self.adapter));
        let _ = crate::test_backend::take_calls();
    }
}

/// A handle of another adapter: cell-sized memory whose first word (the
/// DDI table) is not this backend's, as a loader would pass it by mistake.
pub(super) struct Foreign(Box<[usize; 4]>);

static OTHER_DDI: ur_dditable_t = crate::ddi::UNSUPPORTED_DDI;

impl Foreign {
    pub fn new(kind: ObjectKind) -> Foreign {
        Foreign(Box::new([&OTHER_DDI as *const ur_dditable_t as usize, kind as usize, 0, 0]))
    }

    pub fn handle<H>(&self) -> *mut H {
        self.0.as_ptr() as *mut H
    }
}

/// A handle of this adapter, of another kind: e.g. a queue where a context
/// is wanted.
pub(super) fn as_handle<H, T>(h: *mut T) -> *mut H {
    h.cast()
}

#[test]
fn the_world_is_made_of_calls_the_backend_heard() {
    take_calls();
    let w = World::new();
    assert!(take_calls().is_empty(), "helpers leave the log empty");
    let mut ctx = null_mut();
    let devices = [w.dev[1]];
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Context.pfnCreate(1, devices.as_ptr(), null(), &mut ctx)));
    assert_eq!(only(&calls, "context.create"), "[dev1] flags=0x0");
    assert_eq!(ur!(Context.pfnRelease(ctx)), UR_RESULT_SUCCESS);
}

#[test]
fn logs_are_per_thread() {
    let _w = World::new();
    std::thread::spawn(|| {
        let _other = World::new();
        ur!(Queue.pfnFlush(_other.queue));
    })
    .join()
    .unwrap();
    assert!(take_calls().is_empty(), "another thread's calls are its own");
}
