//! `urUSM{Host,Device,Shared}Alloc`, `urUSMFree`, `urUSMGetMemAllocInfo`.

use super::{arc, borrow};
use crate::core::context::Context;
use crate::core::device::Device;
use crate::core::usm::{AllocRequest, UsmKind};
use crate::core::usm_pool::UsmPool;
use std::ffi::c_void;
use std::sync::Arc;
use ur_core::boundary::{ffi_call, for_each_in_chain};
use ur_core::info::InfoOut;
use ur_core::*;

/// Reads and checks an optional `ur_usm_desc_t` (and its chain); returns
/// the alignment asked for.
unsafe fn read_desc(desc: *const ur_usm_desc_t) -> UrResult<usize> {
    if desc.is_null() {
        return Ok(0);
    }
    let d = &*desc;
    if d.hints & UR_USM_ADVICE_FLAGS_MASK != 0 {
        return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
    }
    for_each_in_chain(d.pNext, |stype, p| {
        match stype {
            UR_STRUCTURE_TYPE_USM_HOST_DESC
                if (*(p as *const ur_usm_host_desc_t)).flags & UR_USM_HOST_MEM_FLAGS_MASK != 0 =>
            {
                return Err(UR_RESULT_ERROR_INVALID_ENUMERATION)
            }
            UR_STRUCTURE_TYPE_USM_DEVICE_DESC
                if (*(p as *const ur_usm_device_desc_t)).flags & UR_USM_DEVICE_MEM_FLAGS_MASK
                    != 0 =>
            {
                return Err(UR_RESULT_ERROR_INVALID_ENUMERATION)
            }
            _ => {}
        }
        Ok(())
    })?;
    Ok(d.align as usize)
}

unsafe fn alloc(
    kind: UsmKind,
    hContext: ur_context_handle_t,
    hDevice: Option<ur_device_handle_t>,
    pUSMDesc: *const ur_usm_desc_t,
    pool: ur_usm_pool_handle_t,
    size: usize,
    ppMem: *mut *mut c_void,
) -> UrResult {
    let context = borrow::<Context>(hContext)?;
    let device: Option<Arc<Device>> = match hDevice {
        Some(h) => Some(arc::<Device>(h)?),
        None => None,
    };
    if ppMem.is_null() {
        return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    let align = read_desc(pUSMDesc)?;
    if let Some(d) = &device {
        if !context.has_device(d) {
            return Err(UR_RESULT_ERROR_INVALID_DEVICE);
        }
    }
    // The alignment rule shared by every adapter, against the limit the size
    // check uses: the device's, or for host USM the largest of the context.
    let max_alloc = match &device {
        Some(d) => d.max_alloc_size(),
        None => context.devices.iter().map(|d| d.max_alloc_size()).max().unwrap_or(0),
    };
    let ur_kind = if matches!(kind, UsmKind::Host) { UR_USM_TYPE_HOST } else { UR_USM_TYPE_DEVICE };
    ur_core::usm_align::check_usm_align(ur_kind, size, align as u64, max_alloc)?;
    let pool: Option<Arc<UsmPool>> = if pool.is_null() {
        None
    } else {
        Some(arc::<UsmPool>(pool)?)
    };
    let ptr = context.usm_alloc(AllocRequest {
        kind,
        size,
        align,
        device: device.as_ref(),
        pool: pool.as_ref(),
    })?;
    *ppMem = ptr;
    Ok(())
}

pub unsafe extern "C" fn urUSMHostAlloc(
    hContext: ur_context_handle_t,
    pUSMDesc: *const ur_usm_desc_t,
    pool: ur_usm_pool_handle_t,
    size: usize,
    ppMem: *mut *mut c_void,
) -> ur_result_t {
    ffi_call(|| alloc(UsmKind::Host, hContext, None, pUSMDesc, pool, size, ppMem))
}

pub unsafe extern "C" fn urUSMDeviceAlloc(
    hContext: ur_context_handle_t,
    hDevice: ur_device_handle_t,
    pUSMDesc: *const ur_usm_desc_t,
    pool: ur_usm_pool_handle_t,
    size: usize,
    ppMem: *mut *mut c_void,
) -> ur_result_t {
    ffi_call(|| {
        alloc(
            UsmKind::Device,
            hContext,
            Some(hDevice),
            pUSMDesc,
            pool,
            size,
            ppMem,
        )
    })
}

pub unsafe extern "C" fn urUSMSharedAlloc(
    hContext: ur_context_handle_t,
    hDevice: ur_device_handle_t,
    pUSMDesc: *const ur_usm_desc_t,
    pool: ur_usm_pool_handle_t,
    size: usize,
    ppMem: *mut *mut c_void,
) -> ur_result_t {
    ffi_call(|| {
        alloc(
            UsmKind::Shared,
            hContext,
            Some(hDevice),
            pUSMDesc,
            pool,
            size,
            ppMem,
        )
    })
}

pub unsafe extern "C" fn urUSMFree(
    hContext: ur_context_handle_t,
    pMem: *mut c_void,
) -> ur_result_t {
    ffi_call(|| {
        let context = borrow::<Context>(hContext)?;
        if pMem.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        context.usm_free(pMem)
    })
}

pub unsafe extern "C" fn urUSMGetMemAllocInfo(
    hContext: ur_context_handle_t,
    pMem: *const c_void,
    propName: ur_usm_alloc_info_t,
    propSize: usize,
    pPropValue: *mut c_void,
    pPropSizeRet: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let context = borrow::<Context>(hContext)?;
        if pMem.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        if propName.0 > UR_USM_ALLOC_INFO_POOL.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let out = InfoOut::new(propSize, pPropValue, pPropSizeRet)?;
        let found = context.usm.with(pMem as usize, |a| {
            (
                a.kind,
                a.base,
                a.size,
                a.device.as_ref().map(|d| d.handle()),
                a.pool.as_ref().map(|p| p.handle()),
            )
        });
        match (propName, found) {
            // Memory that is not ours is "unknown", as UR specifies.
            (UR_USM_ALLOC_INFO_TYPE, None) => out.value(UR_USM_TYPE_UNKNOWN),
            (_, None) => Err(UR_RESULT_ERROR_INVALID_MEM_OBJECT),
            (UR_USM_ALLOC_INFO_TYPE, Some((kind, ..))) => out.value(kind.as_ur()),
            (UR_USM_ALLOC_INFO_BASE_PTR, Some((_, base, ..))) => out.value(base as *mut c_void),
            (UR_USM_ALLOC_INFO_SIZE, Some((_, _, size, ..))) => out.value(size),
            (UR_USM_ALLOC_INFO_DEVICE, Some((_, _, _, device, _))) => {
                out.value(device.unwrap_or(std::ptr::null_mut()))
            }
            (UR_USM_ALLOC_INFO_POOL, Some((.., pool))) => {
                out.value(pool.unwrap_or(std::ptr::null_mut()))
            }
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    })
}
