//! `urUSMPool*` and the pool entry points of the async-alloc extension.

use super::{arc, borrow};
use crate::core::context::Context;
use crate::core::device::Device;
use crate::core::usm_pool::UsmPool;
use std::ffi::c_void;
use std::sync::Arc;
use ur_core::boundary::{ffi_call, write_out};
use ur_core::handle;
use ur_core::info::InfoOut;
use ur_core::usm_async::{
    check_exp_prop, check_pool_prop, read_pool_desc, read_set_info_value, PoolApi,
};
use ur_core::*;

/// The context and device of an `Exp` pool call, checked together.
unsafe fn context_and_device(
    hContext: ur_context_handle_t,
    hDevice: ur_device_handle_t,
) -> UrResult<(Arc<Context>, Arc<Device>)> {
    let context = arc::<Context>(hContext)?;
    let device = arc::<Device>(hDevice)?;
    if !context.has_device(&device) {
        return Err(UR_RESULT_ERROR_INVALID_DEVICE);
    }
    Ok((context, device))
}

pub unsafe extern "C" fn urUSMPoolCreate(
    hContext: ur_context_handle_t,
    pPoolDesc: *mut ur_usm_pool_desc_t,
    ppPool: *mut ur_usm_pool_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let context = arc::<Context>(hContext)?;
        let desc = read_pool_desc(pPoolDesc)?;
        if ppPool.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        // A native pool belongs to one GPU.
        let [device] = context.devices.as_slice() else {
            return Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
        };
        *ppPool = handle::into_handle(UsmPool::create(&context, device, desc, PoolApi::Classic)?);
        Ok(())
    })
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
        if pPool.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        *pPool = handle::into_handle(UsmPool::create(&context, &device, desc, PoolApi::Exp)?);
        Ok(())
    })
}

/// Default pools belong to their context: the user's retain and release
/// leave them alone.
unsafe fn retain_or_release(hPool: ur_usm_pool_handle_t, release: bool) -> UrResult {
    if borrow::<UsmPool>(hPool)?.is_default {
        return Ok(());
    }
    if release {
        handle::release::<UsmPool>(hPool, &crate::DDI)
    } else {
        handle::retain::<UsmPool>(hPool, &crate::DDI)
    }
}

pub unsafe extern "C" fn urUSMPoolRetain(pPool: ur_usm_pool_handle_t) -> ur_result_t {
    ffi_call(|| retain_or_release(pPool, false))
}

pub unsafe extern "C" fn urUSMPoolRelease(pPool: ur_usm_pool_handle_t) -> ur_result_t {
    ffi_call(|| retain_or_release(pPool, true))
}

pub unsafe extern "C" fn urUSMPoolDestroyExp(
    hContext: ur_context_handle_t,
    hDevice: ur_device_handle_t,
    hPool: ur_usm_pool_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let (context, device) = context_and_device(hContext, hDevice)?;
        let pool = borrow::<UsmPool>(hPool)?;
        if pool.is_default || !pool.serves(&context, &device) {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        context.forget_pool(pool);
        handle::release::<UsmPool>(hPool, &crate::DDI)
    })
}

pub unsafe extern "C" fn urUSMPoolGetDefaultDevicePoolExp(
    hContext: ur_context_handle_t,
    hDevice: ur_device_handle_t,
    pPool: *mut ur_usm_pool_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let (context, device) = context_and_device(hContext, hDevice)?;
        if pPool.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
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
        let pool = arc::<UsmPool>(hPool)?;
        if !pool.serves(&context, &device) {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        context.set_current_pool(&device, pool)
    })
}

pub unsafe extern "C" fn urUSMPoolGetDevicePoolExp(
    hContext: ur_context_handle_t,
    hDevice: ur_device_handle_t,
    pPool: *mut ur_usm_pool_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let (context, device) = context_and_device(hContext, hDevice)?;
        if pPool.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        write_out(pPool, context.current_pool(&device)?.handle())
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
        let pool = borrow::<UsmPool>(hPool)?;
        if !pool.serves(&context, &device) {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        pool.trim_to(minBytesToKeep)
    })
}

pub unsafe extern "C" fn urUSMPoolGetInfo(
    hPool: ur_usm_pool_handle_t,
    propName: ur_usm_pool_info_t,
    propSize: usize,
    pPropValue: *mut c_void,
    pPropSizeRet: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let pool = borrow::<UsmPool>(hPool)?;
        check_pool_prop(propName)?;
        pool.info(propName, InfoOut::new(propSize, pPropValue, pPropSizeRet)?)
    })
}

pub unsafe extern "C" fn urUSMPoolGetInfoExp(
    hPool: ur_usm_pool_handle_t,
    propName: ur_usm_pool_info_t,
    pPropValue: *mut c_void,
    pPropSizeRet: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let pool = borrow::<UsmPool>(hPool)?;
        // The object queries belong to urUSMPoolGetInfo; every answer here
        // is a size_t (the call has no size argument).
        check_exp_prop(propName)?;
        let size = if pPropValue.is_null() {
            0
        } else {
            std::mem::size_of::<usize>()
        };
        pool.info(propName, InfoOut::new(size, pPropValue, pPropSizeRet)?)
    })
}

pub unsafe extern "C" fn urUSMPoolSetInfoExp(
    hPool: ur_usm_pool_handle_t,
    propName: ur_usm_pool_info_t,
    pPropValue: *mut c_void,
    propSize: usize,
) -> ur_result_t {
    ffi_call(|| {
        let pool = borrow::<UsmPool>(hPool)?;
        check_pool_prop(propName)?;
        let value = read_set_info_value(pPropValue, propSize)?;
        check_exp_prop(propName)?;
        pool.set_info(propName, value)
    })
}
