//! Contexts: an OpenCL context over devices of one platform, and the table
//! of the USM allocations made in it.

use super::device::{Device, UsmPath};
use super::platform::Platform;
use super::queue::Queue;
use super::refcount::{Counted, UserRefs};
use super::usm::Allocation;
use crate::conv::ClResultExt;
use crate::DDI;
use cl3::ext as sys;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use ur_core::handle::{HandleHeader, ObjectKind, UrObject};
use ur_core::*;

#[repr(C)]
pub struct Context {
    header: HandleHeader,
    pub refs: UserRefs,
    pub cl: opencl3::context::Context,
    pub platform: &'static Platform,
    pub devices: Vec<&'static Device>,
    /// Live USM allocations by base address, so that any pointer into one
    /// finds it.
    allocations: Mutex<BTreeMap<usize, Allocation>>,
    /// Queues made on this context: `urUSMFree` of SVM memory waits for them.
    queues: Mutex<Vec<Weak<Queue>>>,
    /// An in-order queue per device for the adapter's own commands (zeroing
    /// pool memory), made on first use.
    /// Keyed by the device's address.
    internal_queues: Mutex<Vec<(usize, Arc<opencl3::command_queue::CommandQueue>)>>,
    extended_deleter: Mutex<Option<(ur_context_extended_deleter_t, usize)>>,
}

const _: () = assert!(core::mem::offset_of!(Context, header) == 0);

// SAFETY: `Context` is `#[repr(C)]` with its header at offset 0.
unsafe impl UrObject for Context {
    const KIND: ObjectKind = ObjectKind::Context;
    type Handle = ur_context_handle_t_;
}

impl Counted for Context {
    fn refs(&self) -> &UserRefs {
        &self.refs
    }
}

impl Context {
    /// A context over `devices`, which must all belong to one platform.
    pub fn new(devices: Vec<&'static Device>) -> UrResult<Arc<Context>> {
        let platform = devices.first().ok_or(UR_RESULT_ERROR_INVALID_SIZE)?.platform;
        if devices.iter().any(|d| !std::ptr::eq(d.platform, platform)) {
            // One OpenCL context cannot span platforms.
            return Err(UR_RESULT_ERROR_INVALID_DEVICE);
        }
        let ids: Vec<sys::cl_device_id> = devices.iter().map(|d| d.id).collect();
        let properties = [sys::CL_CONTEXT_PLATFORM as sys::cl_context_properties, platform.id as isize, 0];
        let cl = opencl3::context::Context::from_devices(&ids, &properties, None, std::ptr::null_mut()).ur()?;
        Ok(Arc::new(Context {
            header: HandleHeader::new(&DDI, ObjectKind::Context),
            refs: UserRefs::one(),
            cl,
            platform,
            devices,
            allocations: Mutex::new(BTreeMap::new()),
            queues: Mutex::new(Vec::new()),
            internal_queues: Mutex::new(Vec::new()),
            extended_deleter: Mutex::new(None),
        }))
    }

    pub fn has_device(&self, device: &Device) -> bool {
        self.devices.iter().any(|d| std::ptr::eq(*d, device))
    }

    /// The device of this context with OpenCL id `id`.
    pub fn device_by_id(&self, id: sys::cl_device_id) -> Option<&'static Device> {
        self.devices.iter().copied().find(|d| d.id == id)
    }

    /// How USM reaches the runtime in this context: the platform's devices
    /// share one path.
    pub fn usm_path(&self) -> UsmPath {
        self.devices[0].usm_path
    }

    pub(crate) fn allocations(&self) -> MutexGuard<'_, BTreeMap<usize, Allocation>> {
        self.allocations.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The allocation holding `ptr`, with the offset of `ptr` in it.
    pub fn find_allocation(&self, ptr: usize) -> Option<(Allocation, usize)> {
        let table = self.allocations();
        let (_, a) = table.range(..=ptr).next_back()?;
        (ptr < a.base + a.size).then(|| (a.clone(), ptr - a.base))
    }

    pub(crate) fn add_queue(&self, q: &Arc<Queue>) {
        let mut queues = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        queues.retain(|w| w.strong_count() > 0);
        queues.push(Arc::downgrade(q));
    }

    /// Waits for every command of every live queue of this context.
    pub(crate) fn finish_all_queues(&self) -> UrResult {
        let queues: Vec<Arc<Queue>> =
            self.queues.lock().unwrap_or_else(|e| e.into_inner()).iter().filter_map(Weak::upgrade).collect();
        for q in queues {
            q.cl.finish().ur()?;
        }
        Ok(())
    }

    /// The adapter's own in-order queue on `device`.
    pub(crate) fn internal_queue(&self, device: &Device) -> UrResult<Arc<opencl3::command_queue::CommandQueue>> {
        let mut queues = self.internal_queues.lock().unwrap_or_else(|e| e.into_inner());
        let key = device as *const Device as usize;
        if let Some((_, q)) = queues.iter().find(|(k, _)| *k == key) {
            return Ok(q.clone());
        }
        // SAFETY: `device` belongs to this context (callers check).
        let q = unsafe { opencl3::command_queue::CommandQueue::create_with_properties(&self.cl, device.id, 0, 0) }
            .ur()?;
        let q = Arc::new(q);
        queues.push((key, q.clone()));
        Ok(q)
    }

    pub fn set_extended_deleter(&self, f: ur_context_extended_deleter_t, user_data: *mut core::ffi::c_void) {
        *self.extended_deleter.lock().unwrap_or_else(|e| e.into_inner()) = Some((f, user_data as usize));
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // Every queue holds its context, so none is left: what the user did
        // not free can go back now without waiting.
        let leftovers = std::mem::take(&mut *self.allocations());
        for a in leftovers.into_values() {
            super::usm::release_backing(self, &a);
        }
        if let Some((Some(f), user_data)) = self.extended_deleter.get_mut().unwrap_or_else(|e| e.into_inner()).take()
        {
            // SAFETY: the user registered this deleter for this context's
            // destruction, with this user data.
            unsafe { f(user_data as *mut core::ffi::c_void) };
        }
    }
}
