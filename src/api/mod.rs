//! The UR C surface, written once for every adapter.
//!
//! Each entry point here is generic over a [`Backend`]: it decodes and
//! checks its C arguments as `spec/` says (null handles and pointers, enum
//! ranges and flag masks, `pNext` chains, wait lists, the fill/copy rules,
//! the info-query size protocol), turns handles into references to the
//! backend's objects, calls the backend through the traits of
//! [`crate::hal`], and writes the C outputs. [`ddi_table`] fills a DDI table
//! with them; an adapter's table starts from it.
//!
//! The checks run in the order the reference header lists a function's
//! errors, so every adapter answers a bad call with the same code.

#![allow(clippy::too_many_arguments)]

/// Defines `get_info`, the `urXGetInfo` entry point of objects `$obj`
/// behind handles `$handle`: the handle, the query's range (up to `$last`)
/// and the size protocol are checked, then `$body` answers with `$o`, `$prop`
/// and `$out` bound.
macro_rules! info_entry {
    ($obj:ty, $handle:ty, $prop_ty:ty, $last:expr, |$o:ident, $prop:ident, $out:ident| $body:block) => {
        pub(super) unsafe extern "C" fn get_info<B: Backend>(
            h: $handle,
            $prop: $prop_ty,
            size: usize,
            value: *mut core::ffi::c_void,
            size_ret: *mut usize,
        ) -> ur_result_t {
            crate::boundary::ffi_call(|| {
                let $o = super::obj::<B, $obj>(h)?;
                super::prop_in_range($prop.0, $last.0, &[])?;
                let $out = crate::info::InfoOut::new(size, value, size_ret)?;
                $body
            })
        }
    };
}

/// Defines `get_native_handle`, the `urXGetNativeHandle` entry point of
/// objects `$obj` behind handles `$handle` (`$skip` names an argument
/// before the output that no backend reads).
macro_rules! native_handle_entry {
    ($obj:ty, $handle:ty $(, $skip:ident: $skip_ty:ty)?) => {
        pub(super) unsafe extern "C" fn get_native_handle<B: Backend>(
            h: $handle,
            $($skip: $skip_ty,)?
            out: *mut ur_native_handle_t,
        ) -> ur_result_t {
            crate::boundary::ffi_call(|| {
                let object = super::obj::<B, $obj>(h)?;
                crate::boundary::non_null(out)?;
                crate::boundary::write_out(out, object.native_handle()?)
            })
        }
    };
}
/// Fills DDI slots: `Table { pfnSlot: entry_point, ... }` for each table.
macro_rules! slots {
    ($d:ident; $($table:ident { $($slot:ident: $f:expr),* $(,)? })*) => {
        $($($d.$table.$slot = Some($f);)*)*
    };
}
/// Defines `create_with_native_handle` for objects `$obj` made from a
/// native handle within a context (`$props` the properties' type, `$handle`
/// the new handle's).
macro_rules! native_in_context_entry {
    ($obj:ty, $props:ty, $handle:ty) => {
        pub(super) unsafe extern "C" fn create_with_native_handle<B: Backend>(
            native: ur_native_handle_t,
            context: ur_context_handle_t,
            properties: *const $props,
            out: *mut $handle,
        ) -> ur_result_t {
            crate::boundary::ffi_call(|| {
                let context = super::obj::<B, Context<B>>(context)?;
                let (ownership, _) = crate::boundary::native_args(native, false, properties, out)?;
                let object = <$obj>::from_native(native, context, ownership)?;
                crate::boundary::write_out(out, crate::handle::into_handle(object))
            })
        }
    };
}

/// Defines `$name`, a query of objects `$obj` about one device: the
/// object, the device, the query's range (up to `$last`), then the
/// backend's `$query`.
macro_rules! device_query_entry {
    ($name:ident, $obj:ty, $handle:ty, $prop_ty:ty, $last:expr, $query:ident) => {
        pub(super) unsafe extern "C" fn $name<B: Backend>(
            h: $handle,
            device: ur_device_handle_t,
            prop: $prop_ty,
            size: usize,
            value: *mut core::ffi::c_void,
            size_ret: *mut usize,
        ) -> ur_result_t {
            crate::boundary::ffi_call(|| {
                let object = super::obj::<B, $obj>(h)?;
                let device = super::obj::<B, crate::device::Device<B>>(device)?;
                super::prop_in_range(prop.0, $last.0, &[])?;
                object.$query(device, prop, crate::info::InfoOut::new(size, value, size_ret)?)
            })
        }
    };
}
use {device_query_entry, info_entry, native_handle_entry, native_in_context_entry};

mod context;
mod device;
mod enqueue;
mod event;
mod kernel;
mod mem;
mod mem_enqueue;
mod platform;
mod program;
mod queue;
mod usm;
mod usm_exp;
mod usm_p2p;
#[cfg(test)]
mod tests;

use crate::abi::*;
use crate::program::{Kernel, Program};
use crate::queue::object::Queue;
use crate::context::Context;
use crate::boundary::{ffi_call, wait_list_arg};
use crate::event::Event;
use crate::hal::{Backend, Events};
use crate::handle::{self, UrObject};
use crate::UrResult;
use std::sync::Arc;

/// The DDI table of backend `B`: the C surface of this module in every slot
/// it serves, the unsupported stubs elsewhere (programs and kernels only
/// where the backend has them).
pub const fn ddi_table<B: Backend>() -> ur_dditable_t {
    let mut d = crate::ddi::UNSUPPORTED_DDI;
    d.Adapter = crate::adapter::adapter_table::<B>();
    slots!(d;
        Platform { pfnGet: platform::get::<B>, pfnGetInfo: platform::get_info::<B>,
            pfnGetNativeHandle: platform::get_native_handle::<B>,
            pfnCreateWithNativeHandle: platform::create_with_native_handle::<B>,
            pfnGetApiVersion: platform::get_api_version::<B>, pfnGetBackendOption: platform::get_backend_option::<B> }
        Device { pfnGet: device::get::<B>, pfnGetInfo: device::get_info::<B>, pfnRetain: device::retain::<B>,
            pfnRelease: device::release::<B>, pfnPartition: device::partition::<B>,
            pfnSelectBinary: device::select_binary_entry::<B>, pfnGetNativeHandle: device::get_native_handle::<B>,
            pfnCreateWithNativeHandle: device::create_with_native_handle::<B>,
            pfnGetGlobalTimestamps: device::get_global_timestamps::<B> }
        Context { pfnCreate: context::create::<B>, pfnRetain: retain::<B, Context<B>>,
            pfnRelease: release::<B, Context<B>>, pfnGetInfo: context::get_info::<B>,
            pfnGetNativeHandle: context::get_native_handle::<B>,
            pfnCreateWithNativeHandle: context::create_with_native_handle::<B>,
            pfnSetExtendedDeleter: context::set_extended_deleter::<B> }
        Queue { pfnCreate: queue::create::<B>, pfnRetain: retain::<B, Queue<B>>, pfnRelease: release::<B, Queue<B>>,
            pfnGetInfo: queue::get_info::<B>, pfnGetNativeHandle: queue::get_native_handle::<B>,
            pfnCreateWithNativeHandle: queue::create_with_native_handle::<B>, pfnFinish: queue::finish::<B>,
            pfnFlush: queue::flush::<B> }
        QueueExp { pfnIsGraphCaptureEnabledExp: queue::is_graph_capture_enabled::<B> }
        Event { pfnGetInfo: event::get_info::<B>, pfnGetProfilingInfo: event::get_profiling_info::<B>,
            pfnWait: event::wait::<B>, pfnRetain: retain::<B, Event<B>>, pfnRelease: release::<B, Event<B>>,
            pfnGetNativeHandle: event::get_native_handle::<B>,
            pfnCreateWithNativeHandle: event::create_with_native_handle::<B>,
            pfnSetCallback: event::set_callback::<B> }
        Enqueue { pfnEventsWait: enqueue::events_wait::<B, false>,
            pfnEventsWaitWithBarrier: enqueue::events_wait::<B, true>,
            pfnEventsWaitWithBarrierExt: enqueue::events_wait_with_barrier_ext::<B>,
            pfnUSMFill: enqueue::usm_fill::<B>, pfnUSMMemcpy: enqueue::usm_memcpy::<B>,
            pfnUSMFill2D: enqueue::usm_fill_2d::<B>, pfnUSMMemcpy2D: enqueue::usm_memcpy_2d::<B>,
            pfnUSMPrefetch: enqueue::usm_prefetch::<B>, pfnUSMAdvise: enqueue::usm_advise::<B> }
        USM { pfnHostAlloc: usm::host_alloc::<B>, pfnDeviceAlloc: usm::device_alloc::<B>,
            pfnSharedAlloc: usm::shared_alloc::<B>, pfnFree: usm::free::<B>,
            pfnGetMemAllocInfo: usm::get_mem_alloc_info::<B>, pfnPoolCreate: usm::pool_create::<B>,
            pfnPoolRetain: usm::pool_retain::<B>, pfnPoolRelease: usm::pool_release::<B>,
            pfnPoolGetInfo: usm::pool_get_info::<B> }
        EnqueueExp { pfnUSMDeviceAllocExp: usm_exp::device_alloc::<B>,
            pfnUSMSharedAllocExp: usm_exp::shared_alloc::<B>, pfnUSMHostAllocExp: usm_exp::host_alloc::<B>,
            pfnUSMFreeExp: usm_exp::free::<B> }
        USMExp { pfnPoolCreateExp: usm_exp::pool_create::<B>, pfnPoolDestroyExp: usm_exp::pool_destroy::<B>,
            pfnPoolGetDefaultDevicePoolExp: usm_exp::get_default_device_pool::<B>,
            pfnPoolSetDevicePoolExp: usm_exp::set_device_pool::<B>,
            pfnPoolGetDevicePoolExp: usm_exp::get_device_pool::<B>, pfnPoolTrimToExp: usm_exp::trim_to::<B>,
            pfnPoolGetInfoExp: usm_exp::get_info::<B>, pfnPoolSetInfoExp: usm_exp::set_info::<B> }
        UsmP2PExp { pfnEnablePeerAccessExp: usm_p2p::set_peer_access::<B, true>,
            pfnDisablePeerAccessExp: usm_p2p::set_peer_access::<B, false>,
            pfnPeerAccessGetInfoExp: usm_p2p::peer_access_get_info::<B> }
    );
    if <B::RawProgram as crate::program::RawProgram<B>>::SUPPORTED {
        slots!(d;
            Program { pfnCreateWithIL: program::create_with_il::<B>,
                pfnCreateWithBinary: program::create_with_binary::<B>, pfnBuild: program::build::<B>,
                pfnCompile: program::compile::<B>, pfnLink: program::link::<B>, pfnRetain: retain::<B, Program<B>>,
                pfnRelease: release::<B, Program<B>>, pfnGetInfo: program::get_info::<B>,
                pfnGetBuildInfo: program::get_build_info::<B>,
                pfnSetSpecializationConstants: program::set_specialization_constants::<B>,
                pfnGetGlobalVariablePointer: program::get_global_variable_pointer::<B>,
                pfnGetNativeHandle: program::get_native_handle::<B>,
                pfnCreateWithNativeHandle: program::create_with_native_handle::<B> }
            ProgramExp { pfnBuildExp: program::build_exp::<B>, pfnCompileExp: program::compile_exp::<B>,
                pfnLinkExp: program::link_exp::<B> }
        );
    }
    slots!(d;
        Mem { pfnBufferCreate: mem::buffer_create::<B>, pfnRetain: retain::<B, crate::mem::Mem<B>>,
            pfnRelease: release::<B, crate::mem::Mem<B>>, pfnBufferPartition: mem::buffer_partition::<B>,
            pfnGetNativeHandle: mem::get_native_handle::<B>, pfnGetInfo: mem::get_info::<B>,
            pfnBufferCreateWithNativeHandle: mem::buffer_create_with_native_handle::<B> }
        Enqueue { pfnMemBufferRead: mem_enqueue::buffer_read::<B>, pfnMemBufferWrite: mem_enqueue::buffer_write::<B>,
            pfnMemBufferCopy: mem_enqueue::buffer_copy::<B>, pfnMemBufferFill: mem_enqueue::buffer_fill::<B>,
            pfnMemBufferMap: mem_enqueue::buffer_map::<B>, pfnMemUnmap: mem_enqueue::unmap::<B>,
            pfnMemBufferReadRect: mem_enqueue::buffer_host_rect::<B, true>,
            pfnMemBufferWriteRect: mem_enqueue::buffer_host_rect::<B, false>,
            pfnMemBufferCopyRect: mem_enqueue::buffer_copy_rect::<B> }
    );
    if <B::RawKernel as crate::program::RawKernel<B>>::SUPPORTED {
        slots!(d;
            Kernel { pfnCreate: kernel::create::<B>, pfnRetain: retain::<B, Kernel<B>>,
                pfnRelease: release::<B, Kernel<B>>, pfnGetInfo: kernel::get_info::<B>,
                pfnGetGroupInfo: kernel::get_group_info::<B>, pfnGetSubGroupInfo: kernel::get_sub_group_info::<B>,
                pfnSetExecInfo: kernel::set_exec_info::<B>,
                pfnGetSuggestedLocalWorkSize: kernel::get_suggested_local_work_size::<B>,
                pfnGetNativeHandle: kernel::get_native_handle::<B>,
                pfnCreateWithNativeHandle: kernel::create_with_native_handle::<B> }
            EnqueueExp { pfnKernelLaunchWithArgsExp: kernel::launch_with_args::<B> }
        );
    }
    d
}

/// `urXRetain` of an object that counts the user's references.
unsafe extern "C" fn retain<B: Backend, T: UrObject>(h: *mut T::Handle) -> ur_result_t {
    ffi_call(|| handle::retain::<T>(h, B::ddi()))
}

/// `urXRelease`: the user's last release lets the object go once internal
/// holders (an event keeping its queue) are done with it.
unsafe extern "C" fn release<B: Backend, T: UrObject>(h: *mut T::Handle) -> ur_result_t {
    ffi_call(|| handle::release::<T>(h, B::ddi()))
}

/// `urXRetain`/`urXRelease` of objects some of whose handles count nothing
/// (root devices, default pools): `f` runs only where `counts` says so.
///
/// # Safety
/// As for [`handle::borrow`].
unsafe fn counted<B: Backend, T: UrObject>(
    h: *mut T::Handle,
    counts: impl FnOnce(&T) -> bool,
    f: unsafe fn(*mut T::Handle, &'static ur_dditable_t) -> UrResult,
) -> ur_result_t {
    ffi_call(|| if counts(obj::<B, T>(h)?) { f(h, B::ddi()) } else { Ok(()) })
}

/// Checks a handle of backend `B` and borrows its object.
///
/// # Safety
/// As for [`handle::borrow`].
#[inline]
pub(crate) unsafe fn obj<'a, B: Backend, T: UrObject>(h: *mut T::Handle) -> UrResult<&'a T> {
    handle::borrow::<T>(h, B::ddi())
}

/// Like [`obj`], for an optional handle.
///
/// # Safety
/// As for [`obj`].
#[inline]
pub(crate) unsafe fn optional<'a, B: Backend, T: UrObject>(h: *mut T::Handle) -> UrResult<Option<&'a T>> {
    if h.is_null() {
        Ok(None)
    } else {
        obj::<B, T>(h).map(Some)
    }
}

/// An enqueue's wait list: a null list with a count, or a list without one,
/// or a handle that is no event of this adapter, is
/// `INVALID_EVENT_WAIT_LIST`; an event of a failed command
/// `IN_EVENT_LIST_EXEC_STATUS`.
///
/// # Safety
/// `list` points at `count` handles when `count > 0`; each is null or
/// readable.
#[inline]
pub(crate) unsafe fn wait_list<'a, B: Backend>(count: u32, list: *const ur_event_handle_t) -> UrResult<Events<'a, B>> {
    if count == 0 && list.is_null() {
        return Ok(Events::none());
    }
    let handles = wait_list_arg(list, count)?;
    for &h in handles {
        let event = obj::<B, Event<B>>(h).map_err(|_| UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST)?;
        if event.failed() {
            return Err(UR_RESULT_ERROR_IN_EVENT_LIST_EXEC_STATUS);
        }
    }
    // SAFETY: every handle was just checked.
    Ok(Events::checked(handles))
}

/// Writes handles in the `(NumEntries, ph, pNum)` protocol of the `urXGet`
/// entry points.
///
/// # Safety
/// `out` is null or valid for `entries` writes; `num` null or valid.
pub(crate) unsafe fn write_handles<H>(handles: &[*mut H], entries: u32, out: *mut *mut H, num: *mut u32) {
    if !out.is_null() {
        for (i, h) in handles.iter().take(entries as usize).enumerate() {
            out.add(i).write(*h);
        }
    }
    crate::boundary::write_optional(num, handles.len() as u32);
}

/// Hands a command's event to the caller when one was asked for.
///
/// # Safety
/// `out` is null or valid for a write.
#[inline]
pub(crate) unsafe fn deliver<T: UrObject>(out: *mut *mut T::Handle, event: Option<Arc<T>>) {
    if let (false, Some(e)) = (out.is_null(), event) {
        out.write(handle::into_handle(e));
    }
}

/// Fails with `INVALID_ENUMERATION` when `prop` is past the last value UR
/// defines for its query (`last`), or is a value between that UR leaves
/// undefined (`extra` lists defined values past `last`).
#[inline]
pub(crate) fn prop_in_range(prop: u32, last: u32, extra: &[u32]) -> UrResult {
    if prop <= last || extra.contains(&prop) {
        Ok(())
    } else {
        Err(UR_RESULT_ERROR_INVALID_ENUMERATION)
    }
}
