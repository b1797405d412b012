//! `urUSM*`: blocking allocation, free, queries, and pools.
//!
//! Pools are served only where the device reports `USM_POOL_SUPPORT`; when
//! it does not, the pool entry points check their arguments and answer
//! `UR_RESULT_ERROR_UNSUPPORTED_FEATURE`, as does a non-null `pool` argument.
//! The pool entry points of the async-alloc extension are in `usm_exp.rs`.

use super::{obj, release_counted, retain_counted};
use crate::core::context::Context;
use crate::core::device::{Device, USM_POOL_SUPPORT};
use crate::core::refcount::Counted;
use crate::core::usm::{AllocRequest, UsmKind};
use crate::core::usm_pool::Pool;
use std::ffi::c_void;
use std::sync::Arc;
use ur_core::boundary::{ffi_call, for_each_in_chain, non_null, write_out};
use ur_core::handle::{clone_arc, into_handle};
use ur_core::info::InfoOut;
use ur_core::usm_async::{check_pool_prop, read_pool_desc, PoolApi};
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
    if let (Some(pool), Some(device)) = (&pool, &device) {
        if !pool.serves(ctx, device) {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
    }
    if pool.as_ref().is_some_and(|p| !p.belongs_to(ctx)) {
        return Err(UR_RESULT_ERROR_INVALID_VALUE);
    }
    let align = desc.map_or(0, |d| d.align as usize);
    // The size check uses the smallest limit of the context's devices; the
    // alignment rule shared by every adapter uses the same one.
    let max_alloc = ctx.devices.iter().map(|d| d.max_alloc_size()).min().unwrap_or(0);
    let ur_kind = if matches!(kind, UsmKind::Host) { UR_USM_TYPE_HOST } else { UR_USM_TYPE_DEVICE };
    ur_core::usm_align::check_usm_align(ur_kind, size, align as u64, max_alloc)?;
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
/// it until they finished. A pool block (async allocations included) goes
/// back to its pool once the context's queues have finished what was
/// enqueued before the call.
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
        let addr = pMem as usize;
        if let Some(alloc) = ctx.usm.find(addr) {
            let device = alloc.device.as_ref().map_or(std::ptr::null_mut(), |d| d.handle());
            return match propName {
                UR_USM_ALLOC_INFO_TYPE => out.value(alloc.kind.to_ur()),
                UR_USM_ALLOC_INFO_BASE_PTR => out.value(alloc.base() as *mut c_void),
                UR_USM_ALLOC_INFO_SIZE => out.value(alloc.size()),
                UR_USM_ALLOC_INFO_DEVICE => out.value(device),
                UR_USM_ALLOC_INFO_POOL => out.value(std::ptr::null_mut::<ur_usm_pool_handle_t_>()),
                _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
            };
        }
        let Some(block) = ctx.pool_block(addr) else {
            // Memory this context did not allocate: UR calls its type unknown
            // and has nothing else to say about it.
            return match propName {
                UR_USM_ALLOC_INFO_TYPE => out.value(UR_USM_TYPE_UNKNOWN),
                _ => Err(UR_RESULT_ERROR_INVALID_MEM_OBJECT),
            };
        };
        // Host memory belongs to no device; a context-wide pool's other
        // kinds serve the context's (only) device.
        let device = match (block.kind, &block.pool.device) {
            (UsmKind::Host, _) => std::ptr::null_mut(),
            (_, Some(d)) => d.handle(),
            (_, None) => ctx.devices.first().map_or(std::ptr::null_mut(), |d| d.handle()),
        };
        match propName {
            UR_USM_ALLOC_INFO_TYPE => out.value(block.kind.to_ur()),
            UR_USM_ALLOC_INFO_BASE_PTR => out.value(block.base as *mut c_void),
            UR_USM_ALLOC_INFO_SIZE => out.value(block.size),
            UR_USM_ALLOC_INFO_DEVICE => out.value(device),
            UR_USM_ALLOC_INFO_POOL => out.value(block.pool.handle()),
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
        let desc = read_pool_desc(pPoolDesc)?;
        non_null(ppPool)?;
        if !USM_POOL_SUPPORT {
            return Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
        }
        write_out(ppPool, into_handle(Pool::create(&ctx, None, desc, PoolApi::Classic)))
    })
}

/// A default pool belongs to its context: the user's retain and release
/// leave it alone.
pub unsafe extern "C" fn urUSMPoolRetain(pPool: ur_usm_pool_handle_t) -> ur_result_t {
    ffi_call(|| {
        pools_supported(pPool)?;
        if obj::<Pool>(pPool)?.is_default {
            return Ok(());
        }
        retain_counted::<Pool>(pPool)
    })
}

pub unsafe extern "C" fn urUSMPoolRelease(pPool: ur_usm_pool_handle_t) -> ur_result_t {
    ffi_call(|| {
        pools_supported(pPool)?;
        if obj::<Pool>(pPool)?.is_default {
            return Ok(());
        }
        release_counted::<Pool>(pPool)
    })
}

/// With pools off no pool handle exists: a null one is still named as such.
pub(crate) fn pools_supported(pool: ur_usm_pool_handle_t) -> UrResult {
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
        check_pool_prop(propName)?;
        let out = InfoOut::new(propSize, pPropValue, pPropSizeRet)?;
        match propName {
            UR_USM_POOL_INFO_REFERENCE_COUNT => out.value(pool.user_refs().get()),
            UR_USM_POOL_INFO_CONTEXT => out.value(pool.context_handle()),
            // The size figures, as urUSMPoolGetInfoExp gives them.
            _ => out.value(pool.engine.info(propName)?),
        }
    })
}
