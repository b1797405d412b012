//! The async-alloc extension: `urEnqueueUSM{Device,Shared,Host}AllocExp`,
//! `urEnqueueUSMFreeExp` and the `urUSMPool*Exp` entry points, served by
//! every backend through the async pool engine (see `spec/usm_async.md`).

use super::{deliver, obj, optional, wait_list};
use crate::abi::*;
use crate::device::Device;
use crate::context::Context;
use crate::boundary::{ffi_call, non_null, write_out};
use crate::engine::UsmKind;
use crate::hal::{Backend};
use crate::queue::object::{Queue, RawQueue};
use crate::pool::UsmPool;
use crate::handle;
use crate::usm_async::{
    check_async_alloc_properties, check_exp_prop, read_pool_desc, read_set_info_value,
    write_exp_info, PoolApi,
};
use crate::UrResult;
use core::ffi::c_void;

/// The common body of the three allocation entry points.
///
/// # Safety
/// The arguments of a `urEnqueueUSM*AllocExp` call.
#[inline]
unsafe fn alloc<B: Backend>(
    kind: UsmKind,
    h_queue: ur_queue_handle_t,
    h_pool: ur_usm_pool_handle_t,
    size: usize,
    properties: *const ur_exp_async_usm_alloc_properties_t,
    count: u32,
    list: *const ur_event_handle_t,
    out: *mut *mut c_void,
    event_out: *mut ur_event_handle_t,
) -> UrResult {
    let queue = obj::<B, Queue<B>>(h_queue)?;
    check_async_alloc_properties(properties)?;
    non_null(out)?;
    let device = &*queue.device;
    let size_fits = size != 0 && size as u64 <= device.max_alloc_size();
    let waits = wait_list::<B>(count, list)?;
    if !B::RawQueue::async_alloc_supported(queue) {
        return Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
    }
    let pool = optional::<B, UsmPool<B>>(h_pool)?;
    if pool.is_some_and(|p| !p.serves(&queue.context, device)) {
        return Err(UR_RESULT_ERROR_INVALID_VALUE);
    }
    if !size_fits {
        return Err(UR_RESULT_ERROR_INVALID_USM_SIZE);
    }
    if !device.serves_usm(kind) {
        return Err(UR_RESULT_ERROR_INVALID_OPERATION);
    }
    let (ptr, event) = crate::queue::usm_async::alloc::<B>(queue, kind, pool, size, waits, !event_out.is_null())?;
    out.write(ptr);
    deliver(event_out, event);
    Ok(())
}

/// The three allocation entry points differ only in the kind of memory.
macro_rules! alloc_entry {
    ($name:ident, $kind:ident) => {
        pub(super) unsafe extern "C" fn $name<B: Backend>(
            queue: ur_queue_handle_t,
            pool: ur_usm_pool_handle_t,
            size: usize,
            properties: *const ur_exp_async_usm_alloc_properties_t,
            count: u32,
            list: *const ur_event_handle_t,
            out: *mut *mut c_void,
            event: *mut ur_event_handle_t,
        ) -> ur_result_t {
            ffi_call(|| alloc::<B>(UsmKind::$kind, queue, pool, size, properties, count, list, out, event))
        }
    };
}

alloc_entry!(device_alloc, Device);
alloc_entry!(shared_alloc, Shared);
alloc_entry!(host_alloc, Host);

/// A bad pointer (interior, foreign, freed already) is `INVALID_VALUE`, and
/// nothing is released.
pub(super) unsafe extern "C" fn free<B: Backend>(
    h_queue: ur_queue_handle_t,
    h_pool: ur_usm_pool_handle_t,
    ptr: *mut c_void,
    count: u32,
    list: *const ur_event_handle_t,
    event_out: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let queue = obj::<B, Queue<B>>(h_queue)?;
        non_null(ptr)?;
        let waits = wait_list::<B>(count, list)?;
        if !B::RawQueue::async_alloc_supported(queue) {
            return Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
        }
        let pool = optional::<B, UsmPool<B>>(h_pool)?;
        let event = crate::queue::usm_async::free::<B>(queue, pool, ptr, waits, !event_out.is_null())?;
        deliver(event_out, event);
        Ok(())
    })
}

/// The context and device of a pool call, checked in the order the
/// reference lists the errors: the handles, the out pointer (where the
/// entry point has one), pool support, the device being the context's.
///
/// # Safety
/// Handles are null or point at readable memory.
unsafe fn pool_call<'a, B: Backend>(
    h_context: ur_context_handle_t,
    h_device: ur_device_handle_t,
    out: Option<*const c_void>,
) -> UrResult<(&'a Context<B>, &'a Device<B>)> {
    let context = obj::<B, Context<B>>(h_context)?;
    let device = obj::<B, Device<B>>(h_device)?;
    if let Some(out) = out {
        non_null(out)?;
    }
    if !context.pools_supported() {
        return Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
    }
    if !context.has_device(device) {
        return Err(UR_RESULT_ERROR_INVALID_DEVICE);
    }
    Ok((context, device))
}

/// The context, device and pool of a call on one pool: [`pool_call`]'s
/// checks, then the pool, which must be one of `device` in `context`, or
/// `INVALID_VALUE`.
///
/// # Safety
/// As for [`pool_call`].
unsafe fn pool_of<'a, B: Backend>(
    h_context: ur_context_handle_t,
    h_device: ur_device_handle_t,
    h_pool: ur_usm_pool_handle_t,
) -> UrResult<(&'a Context<B>, &'a Device<B>, &'a UsmPool<B>)> {
    let (context, device) = pool_call::<B>(h_context, h_device, None)?;
    let pool = obj::<B, UsmPool<B>>(h_pool)?;
    if !pool.serves(context, device) {
        return Err(UR_RESULT_ERROR_INVALID_VALUE);
    }
    Ok((context, device, pool))
}

pub(super) unsafe extern "C" fn pool_create<B: Backend>(
    h_context: ur_context_handle_t,
    h_device: ur_device_handle_t,
    desc: *mut ur_usm_pool_desc_t,
    out: *mut ur_usm_pool_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        obj::<B, Context<B>>(h_context)?;
        obj::<B, Device<B>>(h_device)?;
        let desc = read_pool_desc(desc)?;
        let (context, device) = pool_call::<B>(h_context, h_device, Some(out.cast()))?;
        write_out(out, handle::into_handle(context.pool_create(Some(device), desc, PoolApi::Exp)?))
    })
}

/// Gives up the reference `urUSMPoolCreateExp` returned. Memory that
/// pending commands may still touch goes back once they have completed.
pub(super) unsafe extern "C" fn pool_destroy<B: Backend>(
    h_context: ur_context_handle_t,
    h_device: ur_device_handle_t,
    h_pool: ur_usm_pool_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let (context, _, pool) = pool_of::<B>(h_context, h_device, h_pool)?;
        if pool.is_default() {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        context.pools.forget(pool);
        handle::release::<UsmPool<B>>(h_pool, B::ddi())
    })
}

/// The two pool getters differ only in which pool of the device they
/// answer with (`$pick`, a method of the context's pool table); the
/// default pool is the backend's to make, on first use.
macro_rules! pool_getter {
    ($name:ident, $pick:ident) => {
        pub(super) unsafe extern "C" fn $name<B: Backend>(
            h_context: ur_context_handle_t,
            h_device: ur_device_handle_t,
            out: *mut ur_usm_pool_handle_t,
        ) -> ur_result_t {
            ffi_call(|| {
                let (context, device) = pool_call::<B>(h_context, h_device, Some(out.cast()))?;
                let pool = context.pools.$pick(device, || context.make_default_pool(device))?;
                write_out(out, handle::handle_of(&*pool))
            })
        }
    };
}

pool_getter!(get_default_device_pool, default_pool);
pool_getter!(get_device_pool, current_pool);

pub(super) unsafe extern "C" fn set_device_pool<B: Backend>(
    h_context: ur_context_handle_t,
    h_device: ur_device_handle_t,
    h_pool: ur_usm_pool_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let (context, device, pool) = pool_of::<B>(h_context, h_device, h_pool)?;
        context.pools.set_current(device, &handle::arc_of(pool));
        Ok(())
    })
}

pub(super) unsafe extern "C" fn trim_to<B: Backend>(
    h_context: ur_context_handle_t,
    h_device: ur_device_handle_t,
    h_pool: ur_usm_pool_handle_t,
    keep: usize,
) -> ur_result_t {
    ffi_call(|| {
        let (_, _, pool) = pool_of::<B>(h_context, h_device, h_pool)?;
        pool.trim_to(keep);
        Ok(())
    })
}

pub(super) unsafe extern "C" fn get_info<B: Backend>(
    h_pool: ur_usm_pool_handle_t,
    prop: ur_usm_pool_info_t,
    value: *mut c_void,
    size_ret: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let pool = obj::<B, UsmPool<B>>(h_pool)?;
        check_exp_prop(prop)?;
        // Both outputs null is refused before the pool is asked.
        if value.is_null() && size_ret.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        write_exp_info(value, size_ret, pool.info(prop)?)
    })
}

pub(super) unsafe extern "C" fn set_info<B: Backend>(
    h_pool: ur_usm_pool_handle_t,
    prop: ur_usm_pool_info_t,
    value: *mut c_void,
    size: usize,
) -> ur_result_t {
    ffi_call(|| {
        let pool = obj::<B, UsmPool<B>>(h_pool)?;
        // As urUSMPoolGetInfoExp: the object queries are not the Exp pair's.
        check_exp_prop(prop)?;
        let value = read_set_info_value(value, size)?;
        pool.set_info(prop, value)
    })
}
