//! `urUSM*`: blocking allocation and free, pointer queries, pools.

use super::{arc, obj};
use crate::core::context::Context;
use crate::core::device::Device;
use crate::core::refcount;
use crate::core::usm::{self, AllocRequest, UsmPool};
use std::ffi::c_void;
use std::sync::Arc;
use ur_core::boundary::{ffi_call, for_each_in_chain, write_out};
use ur_core::info::InfoOut;
use ur_core::usm_async::{self, PoolApi};
use ur_core::*;

/// Reads an allocation descriptor and its chain into `req`.
unsafe fn read_desc(desc: *const ur_usm_desc_t, req: &mut AllocRequest) -> UrResult {
    if desc.is_null() {
        return Ok(());
    }
    let d = &*desc;
    if d.hints & UR_USM_ADVICE_FLAGS_MASK != 0 {
        return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
    }
    req.align = d.align;
    for_each_in_chain(d.pNext, |stype, p| {
        match stype {
            UR_STRUCTURE_TYPE_USM_HOST_DESC => {
                let flags = (*(p as *const ur_usm_host_desc_t)).flags;
                if flags & UR_USM_HOST_MEM_FLAGS_MASK != 0 {
                    return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
                }
                req.host_flags = flags;
            }
            UR_STRUCTURE_TYPE_USM_DEVICE_DESC => {
                let flags = (*(p as *const ur_usm_device_desc_t)).flags;
                if flags & UR_USM_DEVICE_MEM_FLAGS_MASK != 0 {
                    return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
                }
                req.device_flags = flags;
            }
            // A memory partition the runtimes here do not have.
            _ => {}
        }
        Ok(())
    })
}

unsafe fn alloc(
    h_context: ur_context_handle_t,
    h_device: Option<ur_device_handle_t>,
    kind: ur_usm_type_t,
    p_desc: *const ur_usm_desc_t,
    pool: ur_usm_pool_handle_t,
    size: usize,
    pp_mem: *mut *mut c_void,
) -> UrResult {
    let ctx = obj::<Context>(h_context)?;
    let device = h_device.map(|h| Device::from_handle(h)).transpose()?;
    if pp_mem.is_null() {
        return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    let pool = if pool.is_null() { None } else { Some(arc::<UsmPool>(pool)?) };
    let mut req = AllocRequest { kind, device, size, align: 0, host_flags: 0, device_flags: 0, pool };
    read_desc(p_desc, &mut req)?;
    // The alignment rule shared by every adapter, against the limit the size
    // check uses: the device's, or for host USM every device of the context.
    let max_alloc = match req.device {
        Some(d) => d.max_mem_alloc,
        None => ctx.devices.iter().map(|d| d.max_mem_alloc).min().unwrap_or(0),
    };
    ur_core::usm_align::check_usm_align(kind, size, req.align as u64, max_alloc)?;
    *pp_mem = usm::alloc(ctx, req)?;
    Ok(())
}

pub unsafe extern "C" fn urUSMHostAlloc(
    h_context: ur_context_handle_t,
    p_desc: *const ur_usm_desc_t,
    pool: ur_usm_pool_handle_t,
    size: usize,
    pp_mem: *mut *mut c_void,
) -> ur_result_t {
    ffi_call(|| alloc(h_context, None, UR_USM_TYPE_HOST, p_desc, pool, size, pp_mem))
}

pub unsafe extern "C" fn urUSMDeviceAlloc(
    h_context: ur_context_handle_t,
    h_device: ur_device_handle_t,
    p_desc: *const ur_usm_desc_t,
    pool: ur_usm_pool_handle_t,
    size: usize,
    pp_mem: *mut *mut c_void,
) -> ur_result_t {
    ffi_call(|| alloc(h_context, Some(h_device), UR_USM_TYPE_DEVICE, p_desc, pool, size, pp_mem))
}

pub unsafe extern "C" fn urUSMSharedAlloc(
    h_context: ur_context_handle_t,
    h_device: ur_device_handle_t,
    p_desc: *const ur_usm_desc_t,
    pool: ur_usm_pool_handle_t,
    size: usize,
    pp_mem: *mut *mut c_void,
) -> ur_result_t {
    ffi_call(|| alloc(h_context, Some(h_device), UR_USM_TYPE_SHARED, p_desc, pool, size, pp_mem))
}

pub unsafe extern "C" fn urUSMFree(h_context: ur_context_handle_t, p_mem: *mut c_void) -> ur_result_t {
    ffi_call(|| {
        let ctx = obj::<Context>(h_context)?;
        if p_mem.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        usm::free(ctx, p_mem)
    })
}

pub unsafe extern "C" fn urUSMGetMemAllocInfo(
    h_context: ur_context_handle_t,
    p_mem: *const c_void,
    prop: ur_usm_alloc_info_t,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let ctx = obj::<Context>(h_context)?;
        if p_mem.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        if prop.0 > UR_USM_ALLOC_INFO_POOL.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let out = InfoOut::new(size, value, size_ret)?;
        let Some(info) = usm::pointer_info(ctx, p_mem) else {
            // A pointer this context did not allocate has an unknown type
            // and nothing else to report.
            return match prop {
                UR_USM_ALLOC_INFO_TYPE => out.value(UR_USM_TYPE_UNKNOWN),
                _ => Err(UR_RESULT_ERROR_INVALID_MEM_OBJECT),
            };
        };
        match prop {
            UR_USM_ALLOC_INFO_TYPE => out.value(info.kind),
            UR_USM_ALLOC_INFO_BASE_PTR => out.value(info.base as *mut c_void),
            UR_USM_ALLOC_INFO_SIZE => out.value(info.size),
            UR_USM_ALLOC_INFO_DEVICE => out.value(info.device.map_or(std::ptr::null_mut(), |d| d.handle())),
            UR_USM_ALLOC_INFO_POOL => out.value(info.pool),
            _ => Err(UR_RESULT_ERROR_INVALID_ENUMERATION),
        }
    })
}

pub unsafe extern "C" fn urUSMPoolCreate(
    h_context: ur_context_handle_t,
    p_pool_desc: *mut ur_usm_pool_desc_t,
    pp_pool: *mut ur_usm_pool_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let ctx = arc::<Context>(h_context)?;
        if pp_pool.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        // The limits shape the engine's slabs for async allocations; a
        // blocking allocation is the runtime's own.
        let desc = usm_async::read_pool_desc(p_pool_desc)?;
        let pool: Arc<UsmPool> = UsmPool::new(ctx, None, desc, PoolApi::Classic)?;
        write_out(pp_pool, refcount::into_handle(pool))
    })
}

/// A device's default pool belongs to its context: the user's retain and
/// release leave it alone.
pub unsafe extern "C" fn urUSMPoolRetain(h: ur_usm_pool_handle_t) -> ur_result_t {
    ffi_call(|| if obj::<UsmPool>(h)?.is_default { Ok(()) } else { refcount::retain::<UsmPool>(h) })
}

pub unsafe extern "C" fn urUSMPoolRelease(h: ur_usm_pool_handle_t) -> ur_result_t {
    ffi_call(|| if obj::<UsmPool>(h)?.is_default { Ok(()) } else { refcount::release::<UsmPool>(h) })
}

pub unsafe extern "C" fn urUSMPoolGetInfo(
    h: ur_usm_pool_handle_t,
    prop: ur_usm_pool_info_t,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let pool = obj::<UsmPool>(h)?;
        usm_async::check_pool_prop(prop)?;
        let out = InfoOut::new(size, value, size_ret)?;
        match prop {
            UR_USM_POOL_INFO_REFERENCE_COUNT => out.value(pool.refs.get()),
            UR_USM_POOL_INFO_CONTEXT => out.value(pool.context_handle()),
            _ => out.value(pool.size_info(prop)?),
        }
    })
}
