//! A context: the devices it spans and the USM allocations made in it.

use super::device::Device;
use super::refcount::{Counted, UserRefs};
use super::usm::UsmRegistry;
use crate::DDI;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};
use ur_core::handle::{HandleHeader, ObjectKind, UrObject};
use ur_core::*;

#[repr(C)]
pub struct Context {
    header: HandleHeader,
    pub refs: UserRefs,
    pub devices: Vec<Arc<Device>>,
    /// Live USM allocations; dropping the context frees those that no
    /// pending command still holds.
    pub usm: UsmRegistry,
    deleter: Mutex<Option<ExtendedDeleter>>,
}

const _: () = assert!(core::mem::offset_of!(Context, header) == 0);

impl Counted for Context {
    fn user_refs(&self) -> &UserRefs {
        &self.refs
    }
}

// SAFETY: `Context` is `#[repr(C)]` with its header at offset 0.
unsafe impl UrObject for Context {
    const KIND: ObjectKind = ObjectKind::Context;
    type Handle = ur_context_handle_t_;
}

/// `urContextSetExtendedDeleter`'s callback and its argument.
struct ExtendedDeleter {
    callback: unsafe extern "C" fn(*mut c_void),
    user_data: *mut c_void,
}

// SAFETY: the user data is opaque to us; UR lets the deleter run on any thread.
unsafe impl Send for ExtendedDeleter {}

impl Context {
    pub fn new(devices: Vec<Arc<Device>>) -> Arc<Context> {
        Arc::new(Context {
            header: HandleHeader::new(&DDI, ObjectKind::Context),
            refs: UserRefs::one(),
            devices,
            usm: UsmRegistry::default(),
            deleter: Mutex::new(None),
        })
    }

    pub fn handle(self: &Arc<Self>) -> ur_context_handle_t {
        Arc::as_ptr(self) as ur_context_handle_t
    }

    pub fn has_device(&self, device: &Device) -> bool {
        self.devices.iter().any(|d| std::ptr::eq(Arc::as_ptr(d), device))
    }

    /// Installs the callback that runs once the context is destroyed; a
    /// later call replaces an earlier one.
    pub fn set_extended_deleter(&self, callback: unsafe extern "C" fn(*mut c_void), user_data: *mut c_void) {
        *self.deleter.lock().unwrap_or_else(|e| e.into_inner()) = Some(ExtendedDeleter { callback, user_data });
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        let deleter = self.deleter.get_mut().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(d) = deleter {
            // SAFETY: the user registered this callback for this moment.
            unsafe { (d.callback)(d.user_data) };
        }
    }
}
