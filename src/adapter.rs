//! The adapter object, the same in every backend: one per adapter library,
//! refcounted, answering `urAdapter*`. Each adapter holds a
//! `static ADAPTER: AdapterSlot` (in its `lib.rs`), and the core's C surface
//! answers the seven `urAdapter*` entry points from it (`Backend::slot`).

use crate::abi::*;
use crate::boundary::write_optional;
use crate::handle::{self, HandleHeader, ObjectKind};
use crate::info::InfoOut;
use crate::{log, UrResult};
use std::ffi::CString;
use std::sync::{Arc, Mutex, Weak};

#[repr(C)]
pub struct Adapter {
    header: HandleHeader,
    pub backend: ur_backend_t,
    /// The adapter's own version, reported by `UR_ADAPTER_INFO_VERSION`.
    pub version: u32,
    last_error: Mutex<(CString, i32)>,
}
crate::ur_object!(Adapter, Adapter, ur_adapter_handle_t_);

impl Adapter {
    /// Records an adapter-specific error for `urAdapterGetLastError`; the
    /// entry point that hit it returns `UR_RESULT_ERROR_ADAPTER_SPECIFIC`.
    pub fn set_last_error(&self, message: &str, code: i32) -> ur_result_t {
        let msg = CString::new(message.replace('\0', " ")).unwrap_or_default();
        *self.last_error.lock().unwrap_or_else(|e| e.into_inner()) = (msg, code);
        UR_RESULT_ERROR_ADAPTER_SPECIFIC
    }
}

/// Where an adapter library keeps its one adapter object. The object lives
/// while a handle to it does; a `urAdapterGet` after the last release
/// makes a new one.
pub struct AdapterSlot {
    ddi: &'static ur_dditable_t,
    backend: ur_backend_t,
    log_name: &'static str,
    live: Mutex<Weak<Adapter>>,
}

impl AdapterSlot {
    pub const fn new(ddi: &'static ur_dditable_t, backend: ur_backend_t, log_name: &'static str) -> Self {
        AdapterSlot { ddi, backend, log_name, live: Mutex::new(Weak::new()) }
    }

    /// The table every handle of this adapter carries at offset 0.
    pub fn ddi(&self) -> &'static ur_dditable_t {
        self.ddi
    }

    pub fn backend(&self) -> ur_backend_t {
        self.backend
    }

    fn lock_live(&self) -> std::sync::MutexGuard<'_, Weak<Adapter>> {
        self.live.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The live adapter, made on first use.
    pub fn get_or_create(&self) -> Arc<Adapter> {
        self.live_or_new(&mut self.lock_live())
    }

    fn live_or_new(&self, live: &mut Weak<Adapter>) -> Arc<Adapter> {
        if let Some(a) = live.upgrade() {
            return a;
        }
        log::init(self.log_name);
        let a = Arc::new(Adapter {
            header: HandleHeader::new(self.ddi, ObjectKind::Adapter),
            backend: self.backend,
            version: 1,
            last_error: Mutex::new((CString::default(), 0)),
        });
        *live = Arc::downgrade(&a);
        a
    }

    /// `urAdapterGet`: an adapter library has exactly one adapter.
    ///
    /// # Safety
    /// `ph_adapters` must have room for `num_entries` handles and
    /// `p_num_adapters` must be writable, where not null.
    pub unsafe fn get(
        &self,
        num_entries: u32,
        ph_adapters: *mut ur_adapter_handle_t,
        p_num_adapters: *mut u32,
    ) -> UrResult {
        if num_entries == 0 && !ph_adapters.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        if !ph_adapters.is_null() {
            // Under the slot's lock, as releases are: a release taking the
            // last user reference marks the handle dead after counting it
            // down, and a get reviving it between the two would hand out a
            // handle that then reads as released.
            let mut live = self.lock_live();
            *ph_adapters = handle::into_handle(self.live_or_new(&mut live));
        }
        write_optional(p_num_adapters, 1);
        Ok(())
    }

    /// Checks an adapter handle of this library.
    ///
    /// # Safety
    /// As for [`handle::borrow`].
    pub unsafe fn borrow<'a>(&self, h: ur_adapter_handle_t) -> UrResult<&'a Adapter> {
        handle::borrow::<Adapter>(h, self.ddi)
    }

    /// # Safety
    /// As for [`handle::retain`].
    pub unsafe fn retain(&self, h: ur_adapter_handle_t) -> UrResult {
        handle::retain::<Adapter>(h, self.ddi)
    }

    /// Under the slot's lock (see [`get`](Self::get)).
    ///
    /// # Safety
    /// As for [`handle::release`].
    pub unsafe fn release(&self, h: ur_adapter_handle_t) -> UrResult {
        let _live = self.lock_live();
        handle::release::<Adapter>(h, self.ddi)
    }

    /// `urAdapterGetInfo`.
    ///
    /// # Safety
    /// As for [`handle::borrow`] and [`InfoOut::new`].
    pub unsafe fn get_info(
        &self,
        h: ur_adapter_handle_t,
        prop: ur_adapter_info_t,
        size: usize,
        value: *mut core::ffi::c_void,
        size_ret: *mut usize,
    ) -> UrResult {
        let adapter = self.borrow(h)?;
        if prop.0 > UR_ADAPTER_INFO_VERSION.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let out = InfoOut::new(size, value, size_ret)?;
        match prop {
            UR_ADAPTER_INFO_BACKEND => out.value(adapter.backend),
            UR_ADAPTER_INFO_REFERENCE_COUNT => out.value(handle::ref_count_of(adapter)),
            UR_ADAPTER_INFO_VERSION => out.value(adapter.version),
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    }

    /// `urAdapterGetLastError`: the message stays valid until the next
    /// error is recorded on this adapter.
    ///
    /// # Safety
    /// As for [`handle::borrow`]; the out pointers must be writable.
    pub unsafe fn get_last_error(
        &self,
        h: ur_adapter_handle_t,
        pp_message: *mut *const core::ffi::c_char,
        p_error: *mut i32,
    ) -> UrResult {
        let adapter = self.borrow(h)?;
        if pp_message.is_null() || p_error.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        let last = adapter.last_error.lock().unwrap_or_else(|e| e.into_inner());
        *pp_message = last.0.as_ptr();
        *p_error = last.1;
        Ok(())
    }

    /// `urAdapterSetLoggerCallback`.
    ///
    /// # Safety
    /// As for [`handle::borrow`].
    pub unsafe fn set_logger_callback(
        &self,
        h: ur_adapter_handle_t,
        callback: ur_logger_callback_t,
        user_data: *mut core::ffi::c_void,
        level: ur_logger_level_t,
    ) -> UrResult {
        self.borrow(h)?;
        let callback = callback.ok_or(UR_RESULT_ERROR_INVALID_NULL_POINTER)?;
        let level = logger_level(level)?;
        log::set_callback(Some(log::Callback { f: callback, user_data: user_data as usize }), level);
        Ok(())
    }

    /// `urAdapterSetLoggerCallbackLevel`.
    ///
    /// # Safety
    /// As for [`handle::borrow`].
    pub unsafe fn set_logger_callback_level(&self, h: ur_adapter_handle_t, level: ur_logger_level_t) -> UrResult {
        self.borrow(h)?;
        log::set_callback_level(logger_level(level)?);
        Ok(())
    }
}

fn logger_level(level: ur_logger_level_t) -> UrResult<log::Level> {
    Ok(match level {
        UR_LOGGER_LEVEL_DEBUG => log::Level::Debug,
        UR_LOGGER_LEVEL_INFO => log::Level::Info,
        UR_LOGGER_LEVEL_WARN => log::Level::Warning,
        UR_LOGGER_LEVEL_ERROR => log::Level::Error,
        UR_LOGGER_LEVEL_QUIET => log::Level::Quiet,
        _ => return Err(UR_RESULT_ERROR_INVALID_ENUMERATION),
    })
}

/// A backend's marker type: it names the backend's adapter slot, and what
/// the backend does when the last reference to its adapter goes.
pub trait Backend: 'static {
    fn slot() -> &'static AdapterSlot;

    /// Runs after the last `urAdapterRelease` (e.g. to join worker threads,
    /// so that a loader may unload the library).
    fn on_last_release() {}
}

/// The backend's `urAdapter*` table: every adapter answers these seven the
/// same way, through its [`AdapterSlot`].
pub const fn adapter_table<B: Backend>() -> ur_adapter_dditable_t {
    ur_adapter_dditable_t {
        pfnGet: Some(entry::get::<B>),
        pfnRelease: Some(entry::release::<B>),
        pfnRetain: Some(entry::retain::<B>),
        pfnGetLastError: Some(entry::get_last_error::<B>),
        pfnGetInfo: Some(entry::get_info::<B>),
        pfnSetLoggerCallback: Some(entry::set_logger_callback::<B>),
        pfnSetLoggerCallbackLevel: Some(entry::set_logger_callback_level::<B>),
    }
}

/// The seven entry points, generic over the backend.
mod entry {
    use super::Backend;
    use crate::abi::*;
    use crate::boundary::ffi_call;
    use crate::handle;
    use core::ffi::{c_char, c_void};

    pub unsafe extern "C" fn get<B: Backend>(n: u32, ph: *mut ur_adapter_handle_t, pn: *mut u32) -> ur_result_t {
        ffi_call(|| B::slot().get(n, ph, pn))
    }

    pub unsafe extern "C" fn retain<B: Backend>(h: ur_adapter_handle_t) -> ur_result_t {
        ffi_call(|| B::slot().retain(h))
    }

    pub unsafe extern "C" fn release<B: Backend>(h: ur_adapter_handle_t) -> ur_result_t {
        ffi_call(|| {
            let last = handle::ref_count_of(B::slot().borrow(h)?) == 1;
            B::slot().release(h)?;
            if last {
                B::on_last_release();
            }
            Ok(())
        })
    }

    pub unsafe extern "C" fn get_last_error<B: Backend>(
        h: ur_adapter_handle_t,
        message: *mut *const c_char,
        error: *mut i32,
    ) -> ur_result_t {
        ffi_call(|| B::slot().get_last_error(h, message, error))
    }

    pub unsafe extern "C" fn get_info<B: Backend>(
        h: ur_adapter_handle_t,
        prop: ur_adapter_info_t,
        size: usize,
        value: *mut c_void,
        size_ret: *mut usize,
    ) -> ur_result_t {
        ffi_call(|| B::slot().get_info(h, prop, size, value, size_ret))
    }

    pub unsafe extern "C" fn set_logger_callback<B: Backend>(
        h: ur_adapter_handle_t,
        callback: ur_logger_callback_t,
        user_data: *mut c_void,
        level: ur_logger_level_t,
    ) -> ur_result_t {
        ffi_call(|| B::slot().set_logger_callback(h, callback, user_data, level))
    }

    pub unsafe extern "C" fn set_logger_callback_level<B: Backend>(
        h: ur_adapter_handle_t,
        level: ur_logger_level_t,
    ) -> ur_result_t {
        ffi_call(|| B::slot().set_logger_callback_level(h, level))
    }
}
