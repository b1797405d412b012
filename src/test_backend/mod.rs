//! A backend for unit tests of [`crate::api`], in the spirit of wgpu-hal's
//! `noop` backend: no driver, objects in memory, and a log of every call
//! the core makes into it.
//!
//! Tests call the real `extern "C"` entry points through this backend's DDI
//! table ([`TestBackend::ddi`]), as C would, then read [`take_calls`] to see
//! whether the core reached the backend, and with which decoded arguments.
//! The log is per thread: each test runs on a thread of its own, and the
//! backend runs every call on the caller's thread (it starts none), so
//! tests running side by side never see each other's calls.
//!
//! The platform has two root devices. What a backend may
//! lack (2D USM commands, pools, async allocations) is switched per context
//! ([`objects::TContext::settings`]), and an event can be marked failed
//! ([`objects::TSignal::failed`]). Commands do not run: an enqueue records
//! its command and, when asked, returns a complete event.

pub mod context;
pub mod memory;
pub mod objects;
pub mod program;

use crate::abi::*;
use crate::adapter::AdapterSlot;
use std::cell::RefCell;

pub use context::TContext;
pub use objects::{TDevice, TEvent};

/// The table every handle of this backend carries at offset 0.
pub static DDI: ur_dditable_t = crate::api::ddi_table::<TestBackend>();

static SLOT: AdapterSlot = AdapterSlot::new(&DDI, UR_BACKEND_UNKNOWN, "TEST");

/// The marker type of the test backend.
pub struct TestBackend;

impl crate::adapter::Backend for TestBackend {
    fn slot() -> &'static AdapterSlot {
        &SLOT
    }
}

impl crate::hal::Backend for TestBackend {
    type RawPlatform = objects::TPlatformRaw;
    type RawDevice = objects::TDeviceRaw;
    type RawContext = context::TContextRaw;
    type RawQueue = objects::TQueueRaw;
    type RawEvent = objects::TSignal;
    type RawPool = objects::TPoolRaw;
    type DeviceRef = std::sync::Arc<TDevice>;
    type RawProgram = program::TProgramRaw;
    type RawKernel = program::TKernelRaw;
    type RawMem = crate::mem::HostStorage;
}

/// One call the core made into the backend: the method (`"queue.create"`)
/// and a summary of its decoded arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    pub method: &'static str,
    pub args: String,
}

thread_local! {
    static LOG: RefCell<Vec<Call>> = const { RefCell::new(Vec::new()) };
}

/// Records a call on this thread's log (nothing while the thread ends).
pub fn record(method: &'static str, args: String) {
    let _ = LOG.try_with(|log| log.borrow_mut().push(Call { method, args }));
}

/// This thread's calls since the last take, oldest first; the log is left
/// empty.
pub fn take_calls() -> Vec<Call> {
    LOG.with(|log| std::mem::take(&mut *log.borrow_mut()))
}
