//! Queues, and `Queue::submit`: the one place every command passes, where
//! its wait list is translated and its event made.

use super::context::Context;
use super::device::Device;
use super::event::Event;
use super::refcount::{self, Counted, UserRefs};
use crate::conv::{self, ClResultExt};
use crate::DDI;
use cl3::ext as sys;
use opencl3::command_queue::CommandQueue;
use std::sync::Arc;
use sys::{cl_event, cl_int};
use ur_core::handle::{HandleHeader, ObjectKind, UrObject};
use ur_core::*;

#[repr(C)]
pub struct Queue {
    header: HandleHeader,
    pub refs: UserRefs,
    pub cl: CommandQueue,
    pub context: Arc<Context>,
    pub device: &'static Device,
    /// The flags the user asked for, as `UR_QUEUE_INFO_FLAGS` reports them.
    pub flags: ur_queue_flags_t,
    /// Whether the OpenCL queue runs out of order (the device may not
    /// offer it, and an in-order queue satisfies every out-of-order one).
    pub out_of_order: bool,
}

const _: () = assert!(core::mem::offset_of!(Queue, header) == 0);

// SAFETY: `Queue` is `#[repr(C)]` with its header at offset 0.
unsafe impl UrObject for Queue {
    const KIND: ObjectKind = ObjectKind::Queue;
    type Handle = ur_queue_handle_t_;
}

impl Counted for Queue {
    fn refs(&self) -> &UserRefs {
        &self.refs
    }
}

impl Queue {
    pub fn new(context: Arc<Context>, device: &'static Device, flags: ur_queue_flags_t) -> UrResult<Arc<Queue>> {
        if !context.has_device(device) {
            return Err(UR_RESULT_ERROR_INVALID_DEVICE);
        }
        if flags & (UR_QUEUE_FLAG_ON_DEVICE.0 | UR_QUEUE_FLAG_ON_DEVICE_DEFAULT.0) != 0 {
            // Device-side queues serve device enqueue, which UR does not use.
            return Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
        }
        let mut properties = conv::queue_flags_to_cl(flags);
        let device_properties = device.queue_properties()?;
        let out_of_order = properties & sys::CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE != 0
            && device_properties & UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0 != 0
            && device.out_of_order_queues;
        if !out_of_order {
            properties &= !sys::CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
        }
        // SAFETY: the device belongs to the context (checked above).
        let cl = unsafe { CommandQueue::create_with_properties(&context.cl, device.id, properties, 0) }.ur()?;
        let queue = Arc::new(Queue {
            header: HandleHeader::new(&DDI, ObjectKind::Queue),
            refs: UserRefs::one(),
            cl,
            context,
            device,
            flags,
            out_of_order,
        });
        queue.context.add_queue(&queue);
        Ok(queue)
    }

    pub fn profiling(&self) -> bool {
        self.flags & UR_QUEUE_FLAG_PROFILING_ENABLE.0 != 0
    }

    /// Enqueues one command.
    ///
    /// `enqueue` receives the OpenCL wait list and the event out-pointer
    /// (null when the caller wants no event, so that OpenCL makes none).
    /// Events of other contexts, which OpenCL cannot wait for on this queue,
    /// are waited for on the host first. When the caller asked for an
    /// event, the new UR event wraps the command's `cl_event`.
    ///
    /// The async pool engine attaches its node for the command here: the
    /// wait list and the completion event of every command pass this point.
    ///
    /// # Safety
    /// `wait_list` must hold live event handles (checked for kind and
    /// adapter); `ph_event`, when not null, must be writable.
    pub unsafe fn submit(
        self: &Arc<Self>,
        command: ur_command_t,
        wait_list: &[ur_event_handle_t],
        ph_event: *mut ur_event_handle_t,
        enqueue: impl FnOnce(&[cl_event], *mut cl_event) -> Result<(), cl_int>,
    ) -> UrResult<Option<Arc<Event>>> {
        let waits = self.translate_wait_list(wait_list)?;
        let mut event: cl_event = std::ptr::null_mut();
        let event_out = if ph_event.is_null() { std::ptr::null_mut() } else { &mut event as *mut cl_event };
        enqueue(&waits, event_out).ur()?;
        if ph_event.is_null() {
            return Ok(None);
        }
        let event = Event::new(event, Some(self.clone()), self.context.clone(), command);
        *ph_event = refcount::into_handle(event.clone());
        Ok(Some(event))
    }

    /// The `cl_event`s of a UR wait list that this queue can wait for.
    ///
    /// # Safety
    /// As for [`Queue::submit`].
    pub unsafe fn translate_wait_list(&self, wait_list: &[ur_event_handle_t]) -> UrResult<Vec<cl_event>> {
        let mut waits = Vec::with_capacity(wait_list.len());
        for &h in wait_list {
            let e = Event::from_handle(h).map_err(|_| UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST)?;
            if e.context.cl.get() == self.context.cl.get() {
                // OpenCL guarantees progress across queues only once the
                // other queue is flushed.
                if let Some(q) = e.queue.as_ref().filter(|q| !std::ptr::eq(Arc::as_ptr(q), self)) {
                    q.cl.flush().ur()?;
                }
                waits.push(e.cl.get());
            } else {
                e.wait()?;
            }
        }
        Ok(waits)
    }
}
