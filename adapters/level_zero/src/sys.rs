//! The two Level Zero loader functions this adapter calls, resolved at run
//! time. A missing library or symbol is `None`, never a panic.

use libloading::Library;
use std::sync::OnceLock;

pub type ZeResult = u32;
pub const ZE_RESULT_SUCCESS: ZeResult = 0;

pub struct ZeLoader {
    _lib: Library,
    pub ze_init: unsafe extern "C" fn(flags: u32) -> ZeResult,
    pub ze_driver_get: unsafe extern "C" fn(count: *mut u32, drivers: *mut *mut core::ffi::c_void) -> ZeResult,
}

/// The Level Zero loader, opened once per process.
pub fn loader() -> Option<&'static ZeLoader> {
    static LOADER: OnceLock<Option<ZeLoader>> = OnceLock::new();
    LOADER.get_or_init(open).as_ref()
}

fn open() -> Option<ZeLoader> {
    // SAFETY: opening Intel's loader runs its initialisers, which is what
    // using Level Zero means; the symbols are read with the signatures of
    // ze_api.h and kept alive with the library they come from.
    unsafe {
        let lib = Library::new("libze_loader.so.1").ok()?;
        let ze_init = *lib.get(b"zeInit\0").ok()?;
        let ze_driver_get = *lib.get(b"zeDriverGet\0").ok()?;
        Some(ZeLoader { _lib: lib, ze_init, ze_driver_get })
    }
}
