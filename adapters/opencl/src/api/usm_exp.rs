//! `urEnqueueUSM*AllocExp`, `urEnqueueUSMFreeExp` and the pool `*Exp` entry
//! points, served by the async pool engine of `ur_core::engine` (see
//! `core/usm_exp.rs` and `core/engine.rs`).

use super::{arc, obj};
use crate::core::context::Context;
use crate::core::device::Device;
use crate::core::queue::Queue;
use crate::core::refcount;
use crate::core::usm::UsmPool;
use std::ffi::c_void;
use std::sync::Arc;
use ur_core::boundary::{ffi_call, wait_list_arg, write_out};
use ur_core::engine::UsmKind;
use ur_core::usm_async::{self, PoolApi};
use ur_core::*;

/// The context and device of a pool call, checked together.
unsafe fn context_and_device(
    h_context: ur_context_handle_t,
    h_device: ur_device_handle_t,
) -> UrResult<(Arc<Context>, &'static Device)> {
    let context = arc::<Context>(h_context)?;
    let device = Device::from_handle(h_device)?;
    if !context.has_device(device) {
        return Err(UR_RESULT_ERROR_INVALID_DEVICE);
    }
    Ok((context, device))
}

/// The pool a call names, which must serve `device` in `context`.
unsafe fn pool_of<'a>(
    h_pool: ur_usm_pool_handle_t,
    context: &Context,
    device: &Device,
) -> UrResult<&'a UsmPool> {
    let pool = obj::<UsmPool>(h_pool)?;
    if !pool.serves(context, device) {
        return Err(UR_RESULT_ERROR_INVALID_VALUE);
    }
    Ok(pool)
}

unsafe fn alloc_async(
    kind: UsmKind,
    h_queue: ur_queue_handle_t,
    p_pool: ur_usm_pool_handle_t,
    size: usize,
    p_properties: *const ur_exp_async_usm_alloc_properties_t,
    num_events: u32,
    ph_wait_list: *const ur_event_handle_t,
    pp_mem: *mut *mut c_void,
    ph_event: *mut ur_event_handle_t,
) -> UrResult {
    let q = arc::<Queue>(h_queue)?;
    let pool = if p_pool.is_null() { None } else { Some(arc::<UsmPool>(p_pool)?) };
    usm_async::check_async_alloc_properties(p_properties)?;
    if pp_mem.is_null() {
        return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    let waits = wait_list_arg(ph_wait_list, num_events)?;
    *pp_mem = q.usm_alloc_async(kind, pool, size, waits, ph_event)?;
    Ok(())
}

pub unsafe extern "C" fn urEnqueueUSMDeviceAllocExp(
    h_queue: ur_queue_handle_t,
    p_pool: ur_usm_pool_handle_t,
    size: usize,
    p_properties: *const ur_exp_async_usm_alloc_properties_t,
    num_events: u32,
    ph_wait_list: *const ur_event_handle_t,
    pp_mem: *mut *mut c_void,
    ph_event: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let kind = UsmKind::Device;
        alloc_async(kind, h_queue, p_pool, size, p_properties, num_events, ph_wait_list, pp_mem, ph_event)
    })
}

pub unsafe extern "C" fn urEnqueueUSMSharedAllocExp(
    h_queue: ur_queue_handle_t,
    p_pool: ur_usm_pool_handle_t,
    size: usize,
    p_properties: *const ur_exp_async_usm_alloc_properties_t,
    num_events: u32,
    ph_wait_list: *const ur_event_handle_t,
    pp_mem: *mut *mut c_void,
    ph_event: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let kind = UsmKind::Shared;
        alloc_async(kind, h_queue, p_pool, size, p_properties, num_events, ph_wait_list, pp_mem, ph_event)
    })
}

pub unsafe extern "C" fn urEnqueueUSMHostAllocExp(
    h_queue: ur_queue_handle_t,
    p_pool: ur_usm_pool_handle_t,
    size: usize,
    p_properties: *const ur_exp_async_usm_alloc_properties_t,
    num_events: u32,
    ph_wait_list: *const ur_event_handle_t,
    pp_mem: *mut *mut c_void,
    ph_event: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let kind = UsmKind::Host;
        alloc_async(kind, h_queue, p_pool, size, p_properties, num_events, ph_wait_list, pp_mem, ph_event)
    })
}

pub unsafe extern "C" fn urEnqueueUSMFreeExp(
    h_queue: ur_queue_handle_t,
    p_pool: ur_usm_pool_handle_t,
    p_mem: *mut c_void,
    num_events: u32,
    ph_wait_list: *const ur_event_handle_t,
    ph_event: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let q = arc::<Queue>(h_queue)?;
        let pool = if p_pool.is_null() { None } else { Some(obj::<UsmPool>(p_pool)?) };
        if p_mem.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        let waits = wait_list_arg(ph_wait_list, num_events)?;
        q.usm_free_async(pool, p_mem, waits, ph_event)?;
        Ok(())
    })
}

pub unsafe extern "C" fn urUSMPoolCreateExp(
    h_context: ur_context_handle_t,
    h_device: ur_device_handle_t,
    p_pool_desc: *mut ur_usm_pool_desc_t,
    p_pool: *mut ur_usm_pool_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let (context, device) = context_and_device(h_context, h_device)?;
        if p_pool.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        // libsycl's meaning of the limits (see `ur_core::usm_async`).
        let desc = usm_async::read_pool_desc(p_pool_desc)?;
        let pool = UsmPool::new(context, Some(device), desc, PoolApi::Exp)?;
        write_out(p_pool, refcount::into_handle(pool))
    })
}

pub unsafe extern "C" fn urUSMPoolDestroyExp(
    h_context: ur_context_handle_t,
    h_device: ur_device_handle_t,
    h_pool: ur_usm_pool_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let (context, device) = context_and_device(h_context, h_device)?;
        let pool = pool_of(h_pool, &context, device)?;
        if pool.is_default {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        context.forget_pool(pool);
        refcount::release::<UsmPool>(h_pool)
    })
}

pub unsafe extern "C" fn urUSMPoolGetDefaultDevicePoolExp(
    h_context: ur_context_handle_t,
    h_device: ur_device_handle_t,
    p_pool: *mut ur_usm_pool_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let (context, device) = context_and_device(h_context, h_device)?;
        if p_pool.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        write_out(p_pool, context.default_pool(device).handle())
    })
}

pub unsafe extern "C" fn urUSMPoolSetDevicePoolExp(
    h_context: ur_context_handle_t,
    h_device: ur_device_handle_t,
    h_pool: ur_usm_pool_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let (context, device) = context_and_device(h_context, h_device)?;
        pool_of(h_pool, &context, device)?;
        context.set_current_pool(device, &arc::<UsmPool>(h_pool)?);
        Ok(())
    })
}

pub unsafe extern "C" fn urUSMPoolGetDevicePoolExp(
    h_context: ur_context_handle_t,
    h_device: ur_device_handle_t,
    p_pool: *mut ur_usm_pool_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let (context, device) = context_and_device(h_context, h_device)?;
        if p_pool.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        write_out(p_pool, context.current_pool(device).handle())
    })
}

pub unsafe extern "C" fn urUSMPoolTrimToExp(
    h_context: ur_context_handle_t,
    h_device: ur_device_handle_t,
    h_pool: ur_usm_pool_handle_t,
    min_bytes_to_keep: usize,
) -> ur_result_t {
    ffi_call(|| {
        let (context, device) = context_and_device(h_context, h_device)?;
        pool_of(h_pool, &context, device)?.engine.trim_to(min_bytes_to_keep);
        Ok(())
    })
}

pub unsafe extern "C" fn urUSMPoolGetInfoExp(
    h_pool: ur_usm_pool_handle_t,
    prop: ur_usm_pool_info_t,
    p_value: *mut c_void,
    p_size_ret: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let pool = obj::<UsmPool>(h_pool)?;
        usm_async::check_exp_prop(prop)?;
        if p_value.is_null() && p_size_ret.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        usm_async::write_exp_info(p_value, p_size_ret, pool.size_info(prop)?)
    })
}

pub unsafe extern "C" fn urUSMPoolSetInfoExp(
    h_pool: ur_usm_pool_handle_t,
    prop: ur_usm_pool_info_t,
    p_value: *mut c_void,
    prop_size: usize,
) -> ur_result_t {
    ffi_call(|| {
        let pool = obj::<UsmPool>(h_pool)?;
        usm_async::check_exp_prop(prop)?;
        pool.set_info(prop, usm_async::read_set_info_value(p_value, prop_size)?)
    })
}
