//! The `extern "C"` entry points: each checks its handles and pointers,
//! then calls the objects of `driver.rs`, `context.rs`, `queue.rs`,
//! `command_list.rs`, `event.rs` and `fence.rs`. Handles are checked in the
//! order Level Zero lists its errors: handles, then pointers, then values. No panic crosses
//! the boundary: one becomes `ZE_RESULT_ERROR_UNKNOWN`.
//!
//! Layout: this file holds what the entry points share (the `entry!`
//! macro, the argument checks and handle lookups); the entry points are
//! split by object: `device.rs` (init, driver, devices), `memory.rs`
//! (contexts and memory), `commands.rs` (command queues and command lists)
//! and `sync.rs` (event pools, events and fences). They are re-exported
//! here for `tables.rs`.

use crate::command_list::{CommandList, Kind, LISTS};
use crate::context::Context;
use crate::driver::{self, *};
use crate::event::{Event, EventPool, EVENTS, POOLS, POOL_FLAGS};
use crate::fence::{Fence, FENCES};
use crate::object::Registry;
use crate::queue::{Queue, QUEUES};
use crate::worker::{Command, Op, Region, Worker};
use core::ffi::c_void;
use level_zero_sys::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

type Result<T = ()> = std::result::Result<T, ze_result_t>;

/// Defines entry points whose bodies return `Result<()>`.
macro_rules! entry {
    ($(fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $body:block)*) => {$(
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> ze_result_t {
            let run = || -> Result { $body };
            let result = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
                Ok(Ok(())) => ZE_RESULT_SUCCESS,
                Ok(Err(e)) => e,
                Err(_) => ZE_RESULT_ERROR_UNKNOWN,
            };
            trace(stringify!($name), result);
            result
        }
    )*};
}

// Declared after `entry!`, which they use.
mod commands;
mod device;
mod memory;
mod sync;

pub use commands::*;
pub use device::*;
pub use memory::*;
pub use sync::*;

/// `ZE_HOST_DRIVER_TRACE=1` prints every call of an implemented entry point
/// and its result on stderr: what a client (a UR adapter) asked of the driver
/// and what it got, without a tracing loader.
fn trace(name: &str, result: ze_result_t) {
    use std::sync::OnceLock;
    static ON: OnceLock<bool> = OnceLock::new();
    if *ON.get_or_init(|| std::env::var_os("ZE_HOST_DRIVER_TRACE").is_some_and(|v| v == "1")) {
        eprintln!("ze_host_driver: {name} -> {result:#x}");
    }
}

/// A caller's out-pointer, as a reference; null is an error.
fn out<'a, T>(p: *mut T) -> Result<&'a mut T> {
    // SAFETY: Level Zero's contract is that a non-null out-pointer points to
    // writable memory of its type; null is the one case a driver can check.
    unsafe { p.as_mut() }.ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)
}

/// A caller's descriptor, as a reference; null is an error.
fn desc<'a, T>(p: *const T) -> Result<&'a T> {
    // SAFETY: as for `out`, for readable descriptors.
    unsafe { p.as_ref() }.ok_or(ZE_RESULT_ERROR_INVALID_NULL_POINTER)
}

static INITIALIZED: AtomicBool = AtomicBool::new(false);

fn initialized() -> Result {
    if INITIALIZED.load(Ordering::Acquire) { Ok(()) } else { Err(ZE_RESULT_ERROR_UNINITIALIZED) }
}

fn check_driver(h: ze_driver_handle_t) -> Result {
    initialized()?;
    if is_driver(h) { Ok(()) } else { Err(ZE_RESULT_ERROR_INVALID_NULL_HANDLE) }
}

fn check_device(h: ze_device_handle_t) -> Result {
    initialized()?;
    if is_device(h) { Ok(()) } else { Err(ZE_RESULT_ERROR_INVALID_NULL_HANDLE) }
}

/// Answers the count-then-fill protocol of zeDriverGet/zeDeviceGet for a
/// list of `items`.
fn fill_list<T: Copy>(count: *mut u32, out_items: *mut T, items: &[T]) -> Result {
    let count = out(count)?;
    if *count == 0 || out_items.is_null() {
        *count = items.len() as u32;
        return Ok(());
    }
    let n = (*count as usize).min(items.len());
    // SAFETY: the caller said `out_items` holds `*count` elements; n is not more.
    unsafe { core::ptr::copy_nonoverlapping(items.as_ptr(), out_items, n) };
    *count = n as u32;
    Ok(())
}

/// The largest fill pattern, in bytes (a power of two).
pub const MAX_FILL_PATTERN: usize = 128;

// --- Command queues, command lists, events and fences ----------------------

/// Bits of `ze_command_queue_flags_t` accepted: the 1.4 header's
/// EXPLICIT_ONLY and, from later headers, IN_ORDER (bit 1) and
/// COPY_OFFLOAD_HINT (bit 2). Every queue runs in order, so all are honoured.
const QUEUE_FLAGS: u32 = ZE_COMMAND_QUEUE_FLAG_EXPLICIT_ONLY | (1 << 1) | (1 << 2);
/// Bits of `ze_command_list_flags_t` accepted: the 1.4 header's three and,
/// from later headers, IN_ORDER (bit 3), EXP_CLONEABLE (bit 4) and
/// COPY_OFFLOAD_HINT (bit 5).
const LIST_FLAGS: u32 = ZE_COMMAND_LIST_FLAG_RELAXED_ORDERING
    | ZE_COMMAND_LIST_FLAG_MAXIMIZE_THROUGHPUT
    | ZE_COMMAND_LIST_FLAG_EXPLICIT_ONLY
    | (1 << 3)
    | (1 << 4)
    | (1 << 5);
/// Bits of an event's signal and wait scopes.
const EVENT_SCOPES: u32 = ZE_EVENT_SCOPE_FLAG_SUBDEVICE | ZE_EVENT_SCOPE_FLAG_DEVICE | ZE_EVENT_SCOPE_FLAG_HOST;

fn context_id(h: ze_context_handle_t) -> Result<usize> {
    initialized()?;
    Context::with(h, |_| ())?;
    Ok(h as usize)
}

/// The live object behind the handle `h` in `registry` (`QUEUES`, `LISTS`,
/// `EVENTS`, `FENCES`); before zeInit every handle is refused as uninitialized.
fn live<T, H>(registry: &Registry<T>, h: *mut H) -> Result<Arc<T>> {
    initialized()?;
    registry.get(h)
}

/// What creating a queue or a command list checks first, in Level Zero's
/// order (handles, then pointers): the context (its id returned), the
/// device, the descriptor and the out-pointer for the new handle.
fn creation_args<'a, D, H>(
    ctx: ze_context_handle_t,
    device: ze_device_handle_t,
    d: *const D,
    handle: *mut H,
) -> Result<(usize, &'a D, &'a mut H)> {
    let context = context_id(ctx)?;
    check_device(device)?;
    Ok((context, desc(d)?, out(handle)?))
}

/// `Ok` when a host wait finished, `ZE_RESULT_NOT_READY` when it timed out.
fn ready(done: bool) -> Result {
    if done { Ok(()) } else { Err(ZE_RESULT_NOT_READY) }
}

/// The caller's array of `n` handles; a null array of a non-zero count is
/// `ZE_RESULT_ERROR_INVALID_SIZE`, as Level Zero names it for wait lists.
fn handles<'a, T>(n: u32, p: *mut T) -> Result<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(ZE_RESULT_ERROR_INVALID_SIZE);
    }
    // SAFETY: the caller passes `n` handles at `p`, which is not null.
    Ok(unsafe { core::slice::from_raw_parts(p, n as usize) })
}

/// A live event of the context `context`; one of another context cannot be
/// waited on or signalled here.
fn event_in(context: usize, h: ze_event_handle_t) -> Result<Arc<Event>> {
    let e = EVENTS.get(h)?;
    if e.pool.context != context {
        return Err(ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT);
    }
    Ok(e)
}

fn events_in(context: usize, hs: &[ze_event_handle_t]) -> Result<Vec<Arc<Event>>> {
    hs.iter().map(|&h| event_in(context, h)).collect()
}

/// Appends `op` to `list` with its signal event and wait list.
fn push(list: &CommandList, op: Op, signal: ze_event_handle_t, n: u32, waits: *mut ze_event_handle_t) -> Result {
    let waits = events_in(list.context, handles(n, waits)?)?;
    let signal = if signal.is_null() { None } else { Some(event_in(list.context, signal)?) };
    list.append(Command { op, waits, signal })
}

fn non_null<T>(p: *const T) -> Result {
    if p.is_null() { Err(ZE_RESULT_ERROR_INVALID_NULL_POINTER) } else { Ok(()) }
}

/// The checks Level Zero names for a queue descriptor (also the immediate
/// list's), plus the one queue group and the one queue in it.
fn check_queue_desc(d: &ze_command_queue_desc_t) -> Result {
    if d.flags & !QUEUE_FLAGS != 0
        || d.mode > ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS
        || d.priority > ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_HIGH
    {
        return Err(ZE_RESULT_ERROR_INVALID_ENUMERATION);
    }
    if d.ordinal != 0 || d.index != 0 {
        return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
    }
    Ok(())
}

/// One side of a region copy, checked: the last byte's offset must fit.
fn region(base: *const c_void, r: &ze_copy_region_t, pitch: u32, slice_pitch: u32) -> Result<Region> {
    let (pitch, slice_pitch) = (pitch as usize, slice_pitch as usize);
    let start = (r.originZ as usize)
        .checked_mul(slice_pitch)
        .and_then(|z| z.checked_add((r.originY as usize).checked_mul(pitch)?))
        .and_then(|o| o.checked_add(r.originX as usize))
        .and_then(|o| o.checked_add(base as usize))
        .ok_or(ZE_RESULT_ERROR_INVALID_SIZE)?;
    let last = (r.depth.saturating_sub(1) as usize)
        .checked_mul(slice_pitch)
        .and_then(|z| z.checked_add((r.height.saturating_sub(1) as usize).checked_mul(pitch)?))
        .and_then(|o| o.checked_add(r.width as usize))
        .and_then(|o| o.checked_add(start));
    last.ok_or(ZE_RESULT_ERROR_INVALID_SIZE)?;
    Ok(Region { start, pitch, slice_pitch })
}
