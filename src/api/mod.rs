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
    ($obj:ident, $handle:ty, $prop_ty:ty, $last:expr, |$o:ident, $prop:ident, $out:ident| $body:block) => {
        pub(super) unsafe extern "C" fn get_info<B: Backend>(
            h: $handle,
            $prop: $prop_ty,
            size: usize,
            value: *mut core::ffi::c_void,
            size_ret: *mut usize,
        ) -> ur_result_t {
            crate::boundary::ffi_call(|| {
                let $o = super::obj::<B, B::$obj>(h)?;
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
    ($obj:ident, $handle:ty $(, $skip:ident: $skip_ty:ty)?) => {
        pub(super) unsafe extern "C" fn get_native_handle<B: Backend>(
            h: $handle,
            $($skip: $skip_ty,)?
            out: *mut ur_native_handle_t,
        ) -> ur_result_t {
            crate::boundary::ffi_call(|| {
                let object = super::obj::<B, B::$obj>(h)?;
                crate::boundary::non_null(out)?;
                crate::boundary::write_out(out, object.native_handle()?)
            })
        }
    };
}
use {info_entry, native_handle_entry};

mod context;
mod device;
mod enqueue;
mod event;
mod kernel;
mod platform;
mod program;
mod queue;
mod usm;
mod usm_exp;

use crate::abi::*;
use crate::boundary::{ffi_call, wait_list_arg};
use crate::hal::{Backend, Event as _, Events};
use crate::handle::{self, UrObject};
use crate::UrResult;
use std::sync::Arc;

/// The DDI table of backend `B`: the C surface of this module in every slot
/// it serves, the unsupported stubs elsewhere (programs and kernels only
/// where the backend has them).
pub const fn ddi_table<B: Backend>() -> ur_dditable_t {
    let mut d = crate::ddi::UNSUPPORTED_DDI;
    d.Adapter = crate::adapter::adapter_table::<B>();
    d.Platform.pfnGet = Some(platform::get::<B>);
    d.Platform.pfnGetInfo = Some(platform::get_info::<B>);
    d.Platform.pfnGetNativeHandle = Some(platform::get_native_handle::<B>);
    d.Platform.pfnCreateWithNativeHandle = Some(platform::create_with_native_handle::<B>);
    d.Platform.pfnGetApiVersion = Some(platform::get_api_version::<B>);
    d.Platform.pfnGetBackendOption = Some(platform::get_backend_option::<B>);
    d.Device.pfnGet = Some(device::get::<B>);
    d.Device.pfnGetInfo = Some(device::get_info::<B>);
    d.Device.pfnRetain = Some(device::retain::<B>);
    d.Device.pfnRelease = Some(device::release::<B>);
    d.Device.pfnPartition = Some(device::partition::<B>);
    d.Device.pfnSelectBinary = Some(device::select_binary_entry::<B>);
    d.Device.pfnGetNativeHandle = Some(device::get_native_handle::<B>);
    d.Device.pfnCreateWithNativeHandle = Some(device::create_with_native_handle::<B>);
    d.Device.pfnGetGlobalTimestamps = Some(device::get_global_timestamps::<B>);
    d.Context.pfnCreate = Some(context::create::<B>);
    d.Context.pfnRetain = Some(retain::<B, B::Context>);
    d.Context.pfnRelease = Some(release::<B, B::Context>);
    d.Context.pfnGetInfo = Some(context::get_info::<B>);
    d.Context.pfnGetNativeHandle = Some(context::get_native_handle::<B>);
    d.Context.pfnCreateWithNativeHandle = Some(context::create_with_native_handle::<B>);
    d.Context.pfnSetExtendedDeleter = Some(context::set_extended_deleter::<B>);
    d.Queue.pfnCreate = Some(queue::create::<B>);
    d.Queue.pfnRetain = Some(retain::<B, B::Queue>);
    d.Queue.pfnRelease = Some(release::<B, B::Queue>);
    d.Queue.pfnGetInfo = Some(queue::get_info::<B>);
    d.Queue.pfnGetNativeHandle = Some(queue::get_native_handle::<B>);
    d.Queue.pfnCreateWithNativeHandle = Some(queue::create_with_native_handle::<B>);
    d.Queue.pfnFinish = Some(queue::finish::<B>);
    d.Queue.pfnFlush = Some(queue::flush::<B>);
    d.QueueExp.pfnIsGraphCaptureEnabledExp = Some(queue::is_graph_capture_enabled::<B>);
    d.Event.pfnGetInfo = Some(event::get_info::<B>);
    d.Event.pfnGetProfilingInfo = Some(event::get_profiling_info::<B>);
    d.Event.pfnWait = Some(event::wait::<B>);
    d.Event.pfnRetain = Some(retain::<B, B::Event>);
    d.Event.pfnRelease = Some(release::<B, B::Event>);
    d.Event.pfnGetNativeHandle = Some(event::get_native_handle::<B>);
    d.Event.pfnCreateWithNativeHandle = Some(event::create_with_native_handle::<B>);
    d.Event.pfnSetCallback = Some(event::set_callback::<B>);
    d.Enqueue.pfnEventsWait = Some(enqueue::events_wait::<B>);
    d.Enqueue.pfnEventsWaitWithBarrier = Some(enqueue::events_wait_with_barrier::<B>);
    d.Enqueue.pfnEventsWaitWithBarrierExt = Some(enqueue::events_wait_with_barrier_ext::<B>);
    d.Enqueue.pfnUSMFill = Some(enqueue::usm_fill::<B>);
    d.Enqueue.pfnUSMMemcpy = Some(enqueue::usm_memcpy::<B>);
    d.Enqueue.pfnUSMFill2D = Some(enqueue::usm_fill_2d::<B>);
    d.Enqueue.pfnUSMMemcpy2D = Some(enqueue::usm_memcpy_2d::<B>);
    d.Enqueue.pfnUSMPrefetch = Some(enqueue::usm_prefetch::<B>);
    d.Enqueue.pfnUSMAdvise = Some(enqueue::usm_advise::<B>);
    d.USM.pfnHostAlloc = Some(usm::host_alloc::<B>);
    d.USM.pfnDeviceAlloc = Some(usm::device_alloc::<B>);
    d.USM.pfnSharedAlloc = Some(usm::shared_alloc::<B>);
    d.USM.pfnFree = Some(usm::free::<B>);
    d.USM.pfnGetMemAllocInfo = Some(usm::get_mem_alloc_info::<B>);
    d.USM.pfnPoolCreate = Some(usm::pool_create::<B>);
    d.USM.pfnPoolRetain = Some(usm::pool_retain::<B>);
    d.USM.pfnPoolRelease = Some(usm::pool_release::<B>);
    d.USM.pfnPoolGetInfo = Some(usm::pool_get_info::<B>);
    d.EnqueueExp.pfnUSMDeviceAllocExp = Some(usm_exp::device_alloc::<B>);
    d.EnqueueExp.pfnUSMSharedAllocExp = Some(usm_exp::shared_alloc::<B>);
    d.EnqueueExp.pfnUSMHostAllocExp = Some(usm_exp::host_alloc::<B>);
    d.EnqueueExp.pfnUSMFreeExp = Some(usm_exp::free::<B>);
    d.USMExp.pfnPoolCreateExp = Some(usm_exp::pool_create::<B>);
    d.USMExp.pfnPoolDestroyExp = Some(usm_exp::pool_destroy::<B>);
    d.USMExp.pfnPoolGetDefaultDevicePoolExp = Some(usm_exp::get_default_device_pool::<B>);
    d.USMExp.pfnPoolSetDevicePoolExp = Some(usm_exp::set_device_pool::<B>);
    d.USMExp.pfnPoolGetDevicePoolExp = Some(usm_exp::get_device_pool::<B>);
    d.USMExp.pfnPoolTrimToExp = Some(usm_exp::trim_to::<B>);
    d.USMExp.pfnPoolGetInfoExp = Some(usm_exp::get_info::<B>);
    d.USMExp.pfnPoolSetInfoExp = Some(usm_exp::set_info::<B>);
    if <B::Program as crate::hal::Program<B>>::SUPPORTED {
        d.Program.pfnCreateWithIL = Some(program::create_with_il::<B>);
        d.Program.pfnCreateWithBinary = Some(program::create_with_binary::<B>);
        d.Program.pfnBuild = Some(program::build::<B>);
        d.Program.pfnCompile = Some(program::compile::<B>);
        d.Program.pfnLink = Some(program::link::<B>);
        d.Program.pfnRetain = Some(retain::<B, B::Program>);
        d.Program.pfnRelease = Some(release::<B, B::Program>);
        d.Program.pfnGetInfo = Some(program::get_info::<B>);
        d.Program.pfnGetBuildInfo = Some(program::get_build_info::<B>);
        d.Program.pfnSetSpecializationConstants = Some(program::set_specialization_constants::<B>);
        d.Program.pfnGetGlobalVariablePointer = Some(program::get_global_variable_pointer::<B>);
        d.Program.pfnGetNativeHandle = Some(program::get_native_handle::<B>);
        d.Program.pfnCreateWithNativeHandle = Some(program::create_with_native_handle::<B>);
        d.ProgramExp.pfnBuildExp = Some(program::build_exp::<B>);
        d.ProgramExp.pfnCompileExp = Some(program::compile_exp::<B>);
        d.ProgramExp.pfnLinkExp = Some(program::link_exp::<B>);
    }
    if <B::Kernel as crate::hal::Kernel<B>>::SUPPORTED {
        d.Kernel.pfnCreate = Some(kernel::create::<B>);
        d.Kernel.pfnRetain = Some(retain::<B, B::Kernel>);
        d.Kernel.pfnRelease = Some(release::<B, B::Kernel>);
        d.Kernel.pfnGetInfo = Some(kernel::get_info::<B>);
        d.Kernel.pfnGetGroupInfo = Some(kernel::get_group_info::<B>);
        d.Kernel.pfnGetSubGroupInfo = Some(kernel::get_sub_group_info::<B>);
        d.Kernel.pfnSetExecInfo = Some(kernel::set_exec_info::<B>);
        d.Kernel.pfnGetSuggestedLocalWorkSize = Some(kernel::get_suggested_local_work_size::<B>);
        d.Kernel.pfnGetNativeHandle = Some(kernel::get_native_handle::<B>);
        d.Kernel.pfnCreateWithNativeHandle = Some(kernel::create_with_native_handle::<B>);
        d.EnqueueExp.pfnKernelLaunchWithArgsExp = Some(kernel::launch_with_args::<B>);
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
        let event = obj::<B, B::Event>(h).map_err(|_| UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST)?;
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
