//! The async-alloc extension: `urEnqueueUSM{Device,Shared,Host}AllocExp`,
//! `urEnqueueUSMFreeExp` and the `urUSMPool*Exp` entry points. Arguments are
//! checked here in the order the reference header lists their errors; the
//! work is in `core/usm_exp.rs` and the engine.

use super::usm::pools_supported;
use super::{arc, obj, pending_events, release_counted};
use crate::core::context::Context;
use crate::core::device::{Device, ASYNC_USM_ALLOCATIONS_SUPPORT, USM_POOL_SUPPORT};
use crate::core::queue::Queue;
use crate::core::usm::UsmKind;
use crate::core::usm_pool::Pool;
use std::ffi::c_void;
use std::sync::Arc;
use ur_core::boundary::{ffi_call, non_null, write_out};
use ur_core::handle::into_handle;
use ur_core::usm_async::{
    check_async_alloc_properties, check_exp_prop, check_pool_prop, read_pool_desc, read_set_info_value, write_exp_info,
    PoolApi,
};
use ur_core::*;

/// The common body of the three allocation entry points.
///
/// # Safety
/// The arguments of a `urEnqueueUSM*AllocExp` call.
#[allow(clippy::too_many_arguments)]
unsafe fn alloc(
    kind: UsmKind,
    h_queue: ur_queue_handle_t,
    p_pool: ur_usm_pool_handle_t,
    size: usize,
    properties: *const ur_exp_async_usm_alloc_properties_t,
    num_events: u32,
    wait_list: *const ur_event_handle_t,
    pp_mem: *mut *mut c_void,
    ph_event: *mut ur_event_handle_t,
) -> UrResult {
    let queue = obj::<Queue>(h_queue)?;
    check_async_alloc_properties(properties)?;
    non_null(pp_mem)?;
    if num_events == 0 && wait_list.is_null() && ph_event.is_null() && p_pool.is_null() && ASYNC_USM_ALLOCATIONS_SUPPORT
    {
        if let Some(done) = queue.alloc_async_hot(kind, size) {
            pp_mem.write(done? as *mut c_void);
            return Ok(());
        }
    }
    let deps = pending_events(num_events, wait_list)?;
    if !ASYNC_USM_ALLOCATIONS_SUPPORT {
        return Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
    }
    let pool = if p_pool.is_null() { None } else { Some(obj::<Pool>(p_pool)?) };
    let (ptr, event) = queue.alloc_async(kind, pool, size, deps, !ph_event.is_null())?;
    pp_mem.write(ptr as *mut c_void);
    if let Some(e) = event {
        ph_event.write(into_handle(e));
    }
    Ok(())
}

pub unsafe extern "C" fn urEnqueueUSMDeviceAllocExp(
    hQueue: ur_queue_handle_t,
    pPool: ur_usm_pool_handle_t,
    size: usize,
    pProperties: *const ur_exp_async_usm_alloc_properties_t,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    ppMem: *mut *mut c_void,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let k = UsmKind::Device;
        alloc(k, hQueue, pPool, size, pProperties, numEventsInWaitList, phEventWaitList, ppMem, phEvent)
    })
}

pub unsafe extern "C" fn urEnqueueUSMSharedAllocExp(
    hQueue: ur_queue_handle_t,
    pPool: ur_usm_pool_handle_t,
    size: usize,
    pProperties: *const ur_exp_async_usm_alloc_properties_t,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    ppMem: *mut *mut c_void,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let k = UsmKind::Shared;
        alloc(k, hQueue, pPool, size, pProperties, numEventsInWaitList, phEventWaitList, ppMem, phEvent)
    })
}

pub unsafe extern "C" fn urEnqueueUSMHostAllocExp(
    hQueue: ur_queue_handle_t,
    pPool: ur_usm_pool_handle_t,
    size: usize,
    pProperties: *const ur_exp_async_usm_alloc_properties_t,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    ppMem: *mut *mut c_void,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let k = UsmKind::Host;
        alloc(k, hQueue, pPool, size, pProperties, numEventsInWaitList, phEventWaitList, ppMem, phEvent)
    })
}

/// A bad pointer (interior, foreign, freed already) is `INVALID_VALUE`, and
/// nothing is released.
pub unsafe extern "C" fn urEnqueueUSMFreeExp(
    hQueue: ur_queue_handle_t,
    pPool: ur_usm_pool_handle_t,
    pMem: *mut c_void,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let queue = obj::<Queue>(hQueue)?;
        non_null(pMem)?;
        let hot = numEventsInWaitList == 0 && phEventWaitList.is_null() && phEvent.is_null() && pPool.is_null();
        if hot && ASYNC_USM_ALLOCATIONS_SUPPORT && queue.free_async_hot(pMem as *mut u8) {
            return Ok(());
        }
        let deps = pending_events(numEventsInWaitList, phEventWaitList)?;
        if !ASYNC_USM_ALLOCATIONS_SUPPORT {
            return Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
        }
        let pool = if pPool.is_null() { None } else { Some(obj::<Pool>(pPool)?) };
        if let Some(e) = queue.free_async(pool, pMem as *mut u8, deps, !phEvent.is_null())? {
            phEvent.write(into_handle(e));
        }
        Ok(())
    })
}

/// The context and device of a pool call, checked together, once pools
/// are known to be served.
///
/// # Safety
/// Handles are null or point at readable memory.
unsafe fn context_and_device(
    h_context: ur_context_handle_t,
    h_device: ur_device_handle_t,
) -> UrResult<(Arc<Context>, Arc<Device>)> {
    let context = arc::<Context>(h_context)?;
    let device = arc::<Device>(h_device)?;
    Ok((context, device))
}

fn check_pools(context: &Context, device: &Device) -> UrResult {
    if !USM_POOL_SUPPORT {
        return Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
    }
    if !context.has_device(device) {
        return Err(UR_RESULT_ERROR_INVALID_DEVICE);
    }
    Ok(())
}

/// A pool of `hDevice` in `hContext`, or `INVALID_VALUE`.
///
/// # Safety
/// As for [`obj`].
unsafe fn pool_of<'a>(h_pool: ur_usm_pool_handle_t, context: &Context, device: &Device) -> UrResult<&'a Pool> {
    let pool = obj::<Pool>(h_pool)?;
    if !pool.serves(context, device) {
        return Err(UR_RESULT_ERROR_INVALID_VALUE);
    }
    Ok(pool)
}

pub unsafe extern "C" fn urUSMPoolCreateExp(
    hContext: ur_context_handle_t,
    hDevice: ur_device_handle_t,
    pPoolDesc: *mut ur_usm_pool_desc_t,
    pPool: *mut ur_usm_pool_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let (context, device) = context_and_device(hContext, hDevice)?;
        let desc = read_pool_desc(pPoolDesc)?;
        non_null(pPool)?;
        check_pools(&context, &device)?;
        write_out(pPool, into_handle(Pool::create(&context, Some(device), desc, PoolApi::Exp)))
    })
}

/// Gives up the reference `urUSMPoolCreateExp` returned. Memory that
/// pending commands may still touch goes back once they have completed.
pub unsafe extern "C" fn urUSMPoolDestroyExp(
    hContext: ur_context_handle_t,
    hDevice: ur_device_handle_t,
    hPool: ur_usm_pool_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let (context, device) = context_and_device(hContext, hDevice)?;
        pools_supported(hPool)?;
        check_pools(&context, &device)?;
        let pool = pool_of(hPool, &context, &device)?;
        if pool.is_default {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        context.forget_pool(pool);
        release_counted::<Pool>(hPool)
    })
}

pub unsafe extern "C" fn urUSMPoolGetDefaultDevicePoolExp(
    hContext: ur_context_handle_t,
    hDevice: ur_device_handle_t,
    pPool: *mut ur_usm_pool_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let (context, device) = context_and_device(hContext, hDevice)?;
        non_null(pPool)?;
        check_pools(&context, &device)?;
        write_out(pPool, context.default_pool(&device)?.handle())
    })
}

pub unsafe extern "C" fn urUSMPoolSetDevicePoolExp(
    hContext: ur_context_handle_t,
    hDevice: ur_device_handle_t,
    hPool: ur_usm_pool_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let (context, device) = context_and_device(hContext, hDevice)?;
        pools_supported(hPool)?;
        check_pools(&context, &device)?;
        pool_of(hPool, &context, &device)?;
        context.set_current_pool(&device, arc::<Pool>(hPool)?)
    })
}

pub unsafe extern "C" fn urUSMPoolGetDevicePoolExp(
    hContext: ur_context_handle_t,
    hDevice: ur_device_handle_t,
    pPool: *mut ur_usm_pool_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let (context, device) = context_and_device(hContext, hDevice)?;
        non_null(pPool)?;
        check_pools(&context, &device)?;
        write_out(pPool, context.with_current_pool(&device, |p| p.handle())?)
    })
}

pub unsafe extern "C" fn urUSMPoolTrimToExp(
    hContext: ur_context_handle_t,
    hDevice: ur_device_handle_t,
    hPool: ur_usm_pool_handle_t,
    minBytesToKeep: usize,
) -> ur_result_t {
    ffi_call(|| {
        let (context, device) = context_and_device(hContext, hDevice)?;
        pools_supported(hPool)?;
        check_pools(&context, &device)?;
        pool_of(hPool, &context, &device)?.engine.trim_to(minBytesToKeep);
        Ok(())
    })
}

pub unsafe extern "C" fn urUSMPoolGetInfoExp(
    hPool: ur_usm_pool_handle_t,
    propName: ur_usm_pool_info_t,
    pPropValue: *mut c_void,
    pPropSizeRet: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        pools_supported(hPool)?;
        let pool = obj::<Pool>(hPool)?;
        check_exp_prop(propName)?;
        write_exp_info(pPropValue, pPropSizeRet, pool.engine.info(propName)?)
    })
}

pub unsafe extern "C" fn urUSMPoolSetInfoExp(
    hPool: ur_usm_pool_handle_t,
    propName: ur_usm_pool_info_t,
    pPropValue: *mut c_void,
    propSize: usize,
) -> ur_result_t {
    ffi_call(|| {
        pools_supported(hPool)?;
        let pool = obj::<Pool>(hPool)?;
        check_pool_prop(propName)?;
        let value = read_set_info_value(pPropValue, propSize)?;
        pool.engine.set_info(propName, value)
    })
}
