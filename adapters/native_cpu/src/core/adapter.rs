//! The one adapter object of the process: the root that owns the platform and
//! its device, counts the references `urAdapterGet` hands out, and tears the
//! adapter down (joining finished workers) when the last one is released.

use super::platform::Platform;
use super::queue;
use crate::DDI;
use std::ffi::{c_char, c_void, CString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use ur_core::handle::{HandleHeader, ObjectKind, UrObject};
use ur_core::*;

#[repr(C)]
pub struct Adapter {
    header: HandleHeader,
    /// References held by users; changed only under `INSTANCE`'s lock, so
    /// that a release to zero and a new `urAdapterGet` cannot interleave.
    user_refs: Mutex<u32>,
    pub platform: Arc<Platform>,
    logger: Mutex<LoggerSink>,
}

const _: () = assert!(core::mem::offset_of!(Adapter, header) == 0);

// SAFETY: `Adapter` is `#[repr(C)]` with its header at offset 0.
unsafe impl UrObject for Adapter {
    const KIND: ObjectKind = ObjectKind::Adapter;
    type Handle = ur_adapter_handle_t_;
}

/// Where `urAdapterSetLoggerCallback` sends messages.
struct LoggerSink {
    callback: ur_logger_callback_t,
    user_data: usize,
    level: ur_logger_level_t,
}

static INSTANCE: Mutex<Option<Arc<Adapter>>> = Mutex::new(None);
/// Set once any logger callback was installed: keeps logging free otherwise.
static CALLBACK_INSTALLED: AtomicBool = AtomicBool::new(false);

fn lock_instance() -> std::sync::MutexGuard<'static, Option<Arc<Adapter>>> {
    INSTANCE.lock().unwrap_or_else(|e| e.into_inner())
}

impl Adapter {
    fn new() -> Arc<Adapter> {
        Arc::new_cyclic(|me| Adapter {
            header: HandleHeader::new(&DDI, ObjectKind::Adapter),
            user_refs: Mutex::new(0),
            platform: Platform::new(me.clone()),
            logger: Mutex::new(LoggerSink { callback: None, user_data: 0, level: UR_LOGGER_LEVEL_QUIET }),
        })
    }

    /// The adapter, created on first use, without taking a reference.
    pub fn instance() -> Arc<Adapter> {
        lock_instance().get_or_insert_with(Adapter::new).clone()
    }

    /// The adapter with one more user reference (`urAdapterGet`).
    pub fn acquire() -> Arc<Adapter> {
        let mut slot = lock_instance();
        let adapter = slot.get_or_insert_with(Adapter::new).clone();
        *adapter.user_refs.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        adapter
    }

    pub fn ref_count(&self) -> u32 {
        *self.user_refs.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn retain(&self) -> UrResult {
        let _slot = lock_instance();
        let mut refs = self.user_refs.lock().unwrap_or_else(|e| e.into_inner());
        if *refs == 0 {
            return Err(UR_RESULT_ERROR_INVALID_ARGUMENT);
        }
        *refs += 1;
        Ok(())
    }

    /// Drops a user reference; the last one tears the adapter down. Handles
    /// of its platform and device stay valid as long as contexts use them.
    pub fn release(&self) -> UrResult {
        let mut slot = lock_instance();
        let last = {
            let mut refs = self.user_refs.lock().unwrap_or_else(|e| e.into_inner());
            if *refs == 0 {
                return Err(UR_RESULT_ERROR_INVALID_ARGUMENT);
            }
            *refs -= 1;
            *refs == 0
        };
        if !last {
            return Ok(());
        }
        let this = slot.take_if(|a| std::ptr::eq(Arc::as_ptr(a), self));
        drop(slot);
        // Workers of released queues run no code of ours after this, so a
        // loader may unload the library once the adapter is released.
        queue::join_released_workers();
        drop(this);
        Ok(())
    }

    pub fn set_logger(&self, callback: ur_logger_callback_t, user_data: *mut c_void, level: ur_logger_level_t) {
        let mut sink = self.logger.lock().unwrap_or_else(|e| e.into_inner());
        *sink = LoggerSink { callback, user_data: user_data as usize, level };
        CALLBACK_INSTALLED.store(true, Ordering::Release);
    }

    pub fn set_logger_level(&self, level: ur_logger_level_t) {
        self.logger.lock().unwrap_or_else(|e| e.into_inner()).level = level;
    }

    fn forward(&self, level: ur_logger_level_t, msg: &str) {
        let sink = self.logger.lock().unwrap_or_else(|e| e.into_inner());
        let Some(callback) = sink.callback else { return };
        if sink.level == UR_LOGGER_LEVEL_QUIET || level.0 < sink.level.0 {
            return;
        }
        let Ok(text) = CString::new(msg) else { return };
        // SAFETY: the user installed this callback for exactly this call shape;
        // the message outlives the call.
        unsafe { callback(level, text.as_ptr() as *const c_char, sink.user_data as *mut c_void) };
    }
}

/// Logs through `UR_LOG_NATIVE_CPU` and any installed logger callback.
pub fn log(level: ur_logger_level_t, msg: &str) {
    let core_level = match level {
        UR_LOGGER_LEVEL_DEBUG => log::Level::Debug,
        UR_LOGGER_LEVEL_INFO => log::Level::Info,
        UR_LOGGER_LEVEL_WARN => log::Level::Warning,
        _ => log::Level::Error,
    };
    log::log(core_level, msg);
    if CALLBACK_INSTALLED.load(Ordering::Acquire) {
        let adapter = lock_instance().clone();
        if let Some(a) = adapter {
            a.forward(level, msg);
        }
    }
}
