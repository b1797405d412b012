//! `urUSM*`: blocking allocation, free, queries, and pools.
//!
//! Pools are served only where the device reports `USM_POOL_SUPPORT`; until
//! then the pool entry points check their arguments and answer
//! `UR_RESULT_ERROR_UNSUPPORTED_FEATURE`, as does a non-null `pool` argument.

use super::{obj, release_counted, retain_counted};
use crate::core::context::Context;
use crate::core::device::{Device, USM_POOL_SUPPORT};
use crate::core::refcount::Counted;
use crate::core::usm::{AllocRequest, Pool, PoolLimits, UsmKind};
use std::ffi::c_void;
use std::sync::Arc;
use ur_core::boundary::{ffi_call, for_each_in_chain, non_null, write_out};
use ur_core::handle::{clone_arc, into_handle};
use ur_core::info::InfoOut;
use ur_core::*;

/// Reads the common part of the three allocation entry points, in the order
/// the reference header lists their errors.
///
/// # Safety
/// `desc` is null or a valid `ur_usm_desc_t` chain; `pool` null or a handle.
unsafe fn alloc(
    ctx: &Context,
    kind: UsmKind,
    device: Option<Arc<Device>>,
    desc: *const ur_usm_desc_t,
    pool: ur_usm_pool_handle_t,
    size: usize,
    out: *mut *mut c_void,
) -> UrResult {
    let desc = desc.as_ref();
    if desc.is_some_and(|d| d.hints & UR_USM_ADVICE_FLAGS_MASK != 0) {
        return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
    }
    non_null(out)?;
    if let Some(device) = &device {
        if !ctx.has_device(device) {
            return Err(UR_RESULT_ERROR_INVALID_DEVICE);
        }
    }
    let pool = if pool.is_null() {
        None
    } else if !USM_POOL_SUPPORT {
        return Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
    } else {
        Some(clone_arc::<Pool>(pool, &crate::DDI)?)
    };
    if pool.as_ref().is_some_and(|p| !std::ptr::eq(Arc::as_ptr(&p.context), ctx)) {
        return Err(UR_RESULT_ERROR_INVALID_VALUE);
    }
    let align = desc.map_or(0, |d| d.align as usize);
    if align != 0 && !align.is_power_of_two() {
        return Err(UR_RESULT_ERROR_INVALID_VALUE);
    }
    if let Some(d) = desc {
        // Host and device flags, and a memory location, are placement hints:
        // all host memory is one place. Walk the chain to honour its shape.
        for_each_in_chain(d.pNext, |_, _| Ok(()))?;
    }
    let ptr = ctx.usm_alloc(AllocRequest { kind, size, align, device: device.as_ref(), pool: pool.as_ref() })?;
    write_out(out, ptr as *mut c_void)
}

pub unsafe extern "C" fn urUSMHostAlloc(
    hContext: ur_context_handle_t,
    pUSMDesc: *const ur_usm_desc_t,
    pool: ur_usm_pool_handle_t,
    size: usize,
    ppMem: *mut *mut c_void,
) -> ur_result_t {
    ffi_call(|| {
        let ctx = obj::<Context>(hContext)?;
        alloc(ctx, UsmKind::Host, None, pUSMDesc, pool, size, ppMem)
    })
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
        let ctx = obj::<Context>(hContext)?;
        let device = super::arc::<Device>(hDevice)?;
        alloc(ctx, UsmKind::Device, Some(device), pUSMDesc, pool, size, ppMem)
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
        let ctx = obj::<Context>(hContext)?;
        let device = super::arc::<Device>(hDevice)?;
        alloc(ctx, UsmKind::Shared, Some(device), pUSMDesc, pool, size, ppMem)
    })
}

/// Frees at once for the caller; commands still pending on the memory keep
/// it until they finished.
pub unsafe extern "C" fn urUSMFree(hContext: ur_context_handle_t, pMem: *mut c_void) -> ur_result_t {
    ffi_call(|| {
        let ctx = obj::<Context>(hContext)?;
        non_null(pMem)?;
        ctx.usm_free(pMem as *mut u8)
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
        let ctx = obj::<Context>(hContext)?;
        non_null(pMem)?;
        if propName.0 > UR_USM_ALLOC_INFO_POOL.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let out = InfoOut::new(propSize, pPropValue, pPropSizeRet)?;
        let Some(alloc) = ctx.usm.find(pMem as usize) else {
            // Memory this context did not allocate: UR calls its type unknown
            // and has nothing else to say about it.
            return match propName {
                UR_USM_ALLOC_INFO_TYPE => out.value(UR_USM_TYPE_UNKNOWN),
                _ => Err(UR_RESULT_ERROR_INVALID_MEM_OBJECT),
            };
        };
        match propName {
            UR_USM_ALLOC_INFO_TYPE => out.value(alloc.kind.as_ur()),
            UR_USM_ALLOC_INFO_BASE_PTR => out.value(alloc.base() as *mut c_void),
            UR_USM_ALLOC_INFO_SIZE => out.value(alloc.size()),
            UR_USM_ALLOC_INFO_DEVICE => out.value(alloc.device.as_ref().map_or(std::ptr::null_mut(), |d| d.handle())),
            UR_USM_ALLOC_INFO_POOL => out.value(alloc.pool_handle()),
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    })
}

pub unsafe extern "C" fn urUSMPoolCreate(
    hContext: ur_context_handle_t,
    pPoolDesc: *mut ur_usm_pool_desc_t,
    ppPool: *mut ur_usm_pool_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let ctx = super::arc::<Context>(hContext)?;
        non_null(pPoolDesc)?;
        non_null(ppPool)?;
        let desc = &*pPoolDesc;
        if desc.flags & UR_USM_POOL_FLAGS_MASK != 0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let mut limits = None;
        for_each_in_chain(desc.pNext, |stype, link| {
            if stype == UR_STRUCTURE_TYPE_USM_POOL_LIMITS_DESC {
                let l = &*(link as *const ur_usm_pool_limits_desc_t);
                limits = Some(PoolLimits {
                    max_poolable_size: l.maxPoolableSize,
                    min_driver_alloc_size: l.minDriverAllocSize,
                });
            }
            Ok(())
        })?;
        if !USM_POOL_SUPPORT {
            return Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
        }
        write_out(ppPool, into_handle(Pool::new(ctx, desc.flags, limits)))
    })
}

pub unsafe extern "C" fn urUSMPoolRetain(pPool: ur_usm_pool_handle_t) -> ur_result_t {
    ffi_call(|| {
        pools_supported(pPool)?;
        retain_counted::<Pool>(pPool)
    })
}

pub unsafe extern "C" fn urUSMPoolRelease(pPool: ur_usm_pool_handle_t) -> ur_result_t {
    ffi_call(|| {
        pools_supported(pPool)?;
        release_counted::<Pool>(pPool)
    })
}

/// With pools off no pool handle exists: a null one is still named as such.
fn pools_supported(pool: ur_usm_pool_handle_t) -> UrResult {
    if pool.is_null() {
        Err(UR_RESULT_ERROR_INVALID_NULL_HANDLE)
    } else if !USM_POOL_SUPPORT {
        Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
    } else {
        Ok(())
    }
}

pub unsafe extern "C" fn urUSMPoolGetInfo(
    hPool: ur_usm_pool_handle_t,
    propName: ur_usm_pool_info_t,
    propSize: usize,
    pPropValue: *mut c_void,
    pPropSizeRet: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        pools_supported(hPool)?;
        let pool = obj::<Pool>(hPool)?;
        if propName.0 > UR_USM_POOL_INFO_USED_HIGH_EXP.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let out = InfoOut::new(propSize, pPropValue, pPropSizeRet)?;
        match propName {
            UR_USM_POOL_INFO_REFERENCE_COUNT => out.value(pool.user_refs().get()),
            UR_USM_POOL_INFO_CONTEXT => out.value(pool.context.handle()),
            // Threshold, size and usage figures come with the async pool engine.
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    })
}
