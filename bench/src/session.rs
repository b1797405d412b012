//! One device opened through the loader: its context, queues, pools and
//! events as guards that release on drop, and thin wrappers of the UR calls
//! the scenarios time.
//!
//! Every wrapper is an `unsafe fn` for one shared reason: it passes raw
//! handles and USM pointers to C. The contract, stated once: handles come
//! from this session and are live, and a USM pointer passed in was returned
//! by this session's allocation calls and not freed yet (frees that the
//! scenario expects to fail are not made).

use std::ffi::c_void;
use std::ptr::{null, null_mut};
use ur_conformance::ur::{success, Api, CallError};
use ur_core::abi::*;

/// A device, its context, and the entry points.
pub struct Session<'a> {
    pub api: &'a Api,
    pub device: ur_device_handle_t,
    pub context: ur_context_handle_t,
}

impl<'a> Session<'a> {
    /// Makes a context for `device` alone.
    pub fn open(api: &'a Api, device: ur_device_handle_t) -> Result<Session<'a>, CallError> {
        let mut context = null_mut();
        // SAFETY: one live device handle from the loader; the out pointer is local.
        success("urContextCreate", unsafe { api.urContextCreate(1, &device, null(), &mut context) })?;
        Ok(Session { api, device, context })
    }

    /// Makes one context for several devices (`device` is the first).
    pub fn open_many(api: &'a Api, devices: &[ur_device_handle_t]) -> Result<Session<'a>, CallError> {
        let mut context = null_mut();
        // SAFETY: live device handles from the loader; the out pointer is local.
        success("urContextCreate", unsafe {
            api.urContextCreate(devices.len() as u32, devices.as_ptr(), null(), &mut context)
        })?;
        Ok(Session { api, device: devices[0], context })
    }

    /// An in-order queue, or an out-of-order one.
    pub fn queue(&self, out_of_order: bool) -> Result<Queue<'_>, CallError> {
        self.queue_on(self.device, out_of_order)
    }

    /// Two in-order queues of the device (A and B); the first error when
    /// either cannot be made.
    pub fn two_queues(&self) -> Result<(Queue<'_>, Queue<'_>), CallError> {
        match (self.queue(false), self.queue(false)) {
            (Ok(a), Ok(b)) => Ok((a, b)),
            (Err(e), _) | (_, Err(e)) => Err(e),
        }
    }

    /// A queue of another device of the context.
    pub fn queue_on(&self, device: ur_device_handle_t, out_of_order: bool) -> Result<Queue<'_>, CallError> {
        let properties = ur_queue_properties_t {
            stype: UR_STRUCTURE_TYPE_QUEUE_PROPERTIES,
            pNext: null_mut(),
            flags: if out_of_order { UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0 } else { 0 },
        };
        let mut handle = null_mut();
        // SAFETY: live context and device; the properties and out pointer are local.
        success("urQueueCreate", unsafe {
            self.api.urQueueCreate(self.context, device, &properties, &mut handle)
        })?;
        Ok(Queue { session: self, handle })
    }

    /// A new async pool of this device (`urUSMPoolCreateExp`), destroyed on drop.
    pub fn pool(&self) -> Result<Pool<'_>, CallError> {
        let mut desc = ur_usm_pool_desc_t { stype: UR_STRUCTURE_TYPE_USM_POOL_DESC, pNext: null(), flags: 0 };
        let mut handle = null_mut();
        // SAFETY: live context and device; the descriptor and out pointer are local.
        success("urUSMPoolCreateExp", unsafe {
            self.api.urUSMPoolCreateExp(self.context, self.device, &mut desc, &mut handle)
        })?;
        Ok(Pool { session: self, handle })
    }

    /// `urUSMDeviceAlloc` with no descriptor and no pool.
    pub fn alloc_blocking(&self, size: usize) -> Result<*mut c_void, CallError> {
        let mut mem = null_mut();
        // SAFETY: live context and device; the out pointer is local.
        success("urUSMDeviceAlloc", unsafe {
            self.api.urUSMDeviceAlloc(self.context, self.device, null(), null_mut(), size, &mut mem)
        })?;
        Ok(mem)
    }

    /// `urUSMFree`.
    ///
    /// # Safety
    /// See the module docs: `mem` is a live allocation of this context.
    pub unsafe fn free_blocking(&self, mem: *mut c_void) -> Result<(), CallError> {
        success("urUSMFree", self.api.urUSMFree(self.context, mem))
    }

    /// Waits for the events (`urEventWait`).
    pub fn wait(&self, events: &[&Event]) -> Result<(), CallError> {
        let handles: Vec<_> = events.iter().map(|e| e.handle).collect();
        // SAFETY: every handle is held by a live `Event` guard.
        success("urEventWait", unsafe { self.api.urEventWait(handles.len() as u32, handles.as_ptr()) })
    }

    /// Whether the device says it serves `urEnqueueUSM*AllocExp`
    /// (`UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP`).
    pub fn async_alloc_claimed(&self) -> Result<bool, CallError> {
        // SAFETY: live device; `ur_bool_t` is the documented answer type.
        let value: ur_bool_t =
            unsafe { self.api.device_info(self.device, UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP) }?;
        Ok(value != 0)
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        // SAFETY: the session owns one reference of its context; queues and
        // pools borrow the session, so they are gone already.
        let _ = unsafe { self.api.urContextRelease(self.context) };
    }
}

/// An event returned by an enqueue; released on drop.
pub struct Event<'a> {
    api: &'a Api,
    pub handle: ur_event_handle_t,
}

impl Drop for Event<'_> {
    fn drop(&mut self) {
        // SAFETY: the guard owns one reference of the event.
        let _ = unsafe { self.api.urEventRelease(self.handle) };
    }
}

/// The out-parameter for an enqueue's event: null when none is wanted.
fn event_slot(slot: &mut ur_event_handle_t, wanted: bool) -> *mut ur_event_handle_t {
    if wanted {
        slot
    } else {
        null_mut()
    }
}

/// A pool's handle; null for the device's current pool.
fn pool_handle(pool: Option<&Pool>) -> ur_usm_pool_handle_t {
    pool.map_or(null_mut(), |p| p.handle)
}

/// Most events a scenario waits on in one command.
const MAX_WAITS: usize = 4;

/// A wait list on the stack: timed loops must not allocate for it.
struct WaitList {
    count: u32,
    handles: [ur_event_handle_t; MAX_WAITS],
}

fn wait_list(waits: &[&Event]) -> WaitList {
    assert!(waits.len() <= MAX_WAITS, "a scenario waits on at most {MAX_WAITS} events");
    let mut list = WaitList { count: waits.len() as u32, handles: [null_mut(); MAX_WAITS] };
    for (slot, event) in list.handles.iter_mut().zip(waits) {
        *slot = event.handle;
    }
    list
}

impl WaitList {
    /// A null pointer for an empty list, as `numEventsInWaitList == 0` requires.
    fn ptr(&self) -> *const ur_event_handle_t {
        if self.count == 0 {
            null()
        } else {
            self.handles.as_ptr()
        }
    }
}

/// A queue; finished and released on drop.
pub struct Queue<'s> {
    session: &'s Session<'s>,
    pub handle: ur_queue_handle_t,
}

impl<'s> Queue<'s> {
    fn api(&self) -> &'s Api {
        self.session.api
    }

    /// One enqueue through `call`, which gets the wait list (its count and
    /// pointer, from the stack) and the event out-pointer (null unless
    /// `want_event`); returns the event.
    ///
    /// # Safety
    /// See the module docs.
    unsafe fn enqueue(
        &self,
        name: &str,
        waits: &[&Event],
        want_event: bool,
        call: impl FnOnce(u32, *const ur_event_handle_t, *mut ur_event_handle_t) -> Result<ur_result_t, String>,
    ) -> Result<Option<Event<'s>>, CallError> {
        let waits = wait_list(waits);
        let mut event = null_mut();
        success(name, call(waits.count, waits.ptr(), event_slot(&mut event, want_event)))?;
        Ok(want_event.then(|| Event { api: self.session.api, handle: event }))
    }

    pub fn finish(&self) -> Result<(), CallError> {
        // SAFETY: live queue.
        success("urQueueFinish", unsafe { self.api().urQueueFinish(self.handle) })
    }

    /// `urEnqueueUSMDeviceAllocExp` from `pool` (null: the device's current
    /// pool); returns the address and, when `want_event`, the event.
    ///
    /// # Safety
    /// See the module docs.
    pub unsafe fn alloc_async(
        &self,
        pool: Option<&Pool>,
        size: usize,
        waits: &[&Event],
        want_event: bool,
    ) -> Result<(*mut c_void, Option<Event<'s>>), CallError> {
        let mut mem = null_mut();
        let event = self.enqueue("urEnqueueUSMDeviceAllocExp", waits, want_event, |count, list, event| {
            self.api().urEnqueueUSMDeviceAllocExp(
                self.handle,
                pool_handle(pool),
                size,
                null(),
                count,
                list,
                &mut mem,
                event,
            )
        })?;
        Ok((mem, event))
    }

    /// The hot path of scenario 1: no pool, no wait list, no event, nothing
    /// allocated on the heap.
    ///
    /// # Safety
    /// See the module docs.
    #[inline]
    pub unsafe fn alloc_async_plain(&self, size: usize) -> Result<*mut c_void, CallError> {
        let mut mem = null_mut();
        success(
            "urEnqueueUSMDeviceAllocExp",
            self.api().urEnqueueUSMDeviceAllocExp(
                self.handle,
                null_mut(),
                size,
                null(),
                0,
                null(),
                &mut mem,
                null_mut(),
            ),
        )?;
        Ok(mem)
    }

    /// The hot path of scenario 1's free.
    ///
    /// # Safety
    /// See the module docs.
    #[inline]
    pub unsafe fn free_async_plain(&self, mem: *mut c_void) -> Result<(), CallError> {
        success(
            "urEnqueueUSMFreeExp",
            self.api().urEnqueueUSMFreeExp(self.handle, null_mut(), mem, 0, null(), null_mut()),
        )
    }

    /// `urEnqueueUSMFreeExp` back to `pool` (null: found from the pointer).
    ///
    /// # Safety
    /// See the module docs.
    pub unsafe fn free_async(
        &self,
        pool: Option<&Pool>,
        mem: *mut c_void,
        waits: &[&Event],
        want_event: bool,
    ) -> Result<Option<Event<'s>>, CallError> {
        self.enqueue("urEnqueueUSMFreeExp", waits, want_event, |count, list, event| {
            self.api().urEnqueueUSMFreeExp(self.handle, pool_handle(pool), mem, count, list, event)
        })
    }

    /// `urEnqueueUSMFill` of `size` bytes with a one-byte pattern.
    ///
    /// # Safety
    /// See the module docs.
    pub unsafe fn fill(
        &self,
        mem: *mut c_void,
        size: usize,
        waits: &[&Event],
        want_event: bool,
    ) -> Result<Option<Event<'s>>, CallError> {
        let pattern = 0xa5u8;
        self.enqueue("urEnqueueUSMFill", waits, want_event, |count, list, event| {
            self.api().urEnqueueUSMFill(self.handle, mem, 1, (&pattern as *const u8).cast(), size, count, list, event)
        })
    }

    /// A non-blocking `urEnqueueUSMMemcpy`.
    ///
    /// # Safety
    /// See the module docs.
    pub unsafe fn copy(&self, dst: *mut c_void, src: *const c_void, size: usize) -> Result<(), CallError> {
        success(
            "urEnqueueUSMMemcpy",
            self.api().urEnqueueUSMMemcpy(self.handle, false, dst, src, size, 0, null(), null_mut()),
        )
    }
}

impl Drop for Queue<'_> {
    fn drop(&mut self) {
        // SAFETY: the guard owns one reference of the queue. Finishing first
        // keeps teardown well defined even after a failed scenario.
        unsafe {
            let _ = self.api().urQueueFinish(self.handle);
            let _ = self.api().urQueueRelease(self.handle);
        }
    }
}

/// An async pool made by `urUSMPoolCreateExp`; destroyed on drop.
pub struct Pool<'s> {
    session: &'s Session<'s>,
    pub handle: ur_usm_pool_handle_t,
}

impl Pool<'_> {
    /// One `size_t` statistic (`urUSMPoolGetInfoExp`).
    pub fn stat(&self, prop: ur_usm_pool_info_t) -> Result<usize, CallError> {
        let mut value = 0usize;
        // SAFETY: live pool; the answer is one `size_t`, written into a local.
        success(format!("urUSMPoolGetInfoExp({prop:?})"), unsafe {
            self.session.api.urUSMPoolGetInfoExp(self.handle, prop, (&mut value as *mut usize).cast(), null_mut())
        })?;
        Ok(value)
    }

    /// Sets the release threshold: the free bytes the pool keeps reserved
    /// across host synchronisation.
    pub fn set_release_threshold(&self, bytes: usize) -> Result<(), CallError> {
        let mut value = bytes;
        // SAFETY: live pool; the value is one `size_t` in a local.
        success("urUSMPoolSetInfoExp(RELEASE_THRESHOLD)", unsafe {
            self.session.api.urUSMPoolSetInfoExp(
                self.handle,
                UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP,
                (&mut value as *mut usize).cast(),
                size_of::<usize>(),
            )
        })
    }

    /// Reserved and used high-water marks, in bytes.
    pub fn high_water(&self) -> Result<(usize, usize), CallError> {
        Ok((self.stat(UR_USM_POOL_INFO_RESERVED_HIGH_EXP)?, self.stat(UR_USM_POOL_INFO_USED_HIGH_EXP)?))
    }
}

impl Drop for Pool<'_> {
    fn drop(&mut self) {
        let s = self.session;
        // SAFETY: the guard owns the pool; the queues using it were finished
        // by the scenario (and the spec defers any slab still in use).
        let _ = unsafe { s.api.urUSMPoolDestroyExp(s.context, s.device, self.handle) };
    }
}
