//! `urUSM*`: blocking allocation and free, pointer queries, and the pools
//! of `urUSMPoolCreate`.

use super::{obj, optional};
use crate::abi::*;
use crate::device::Device;
use crate::context::Context;
use crate::boundary::{ffi_call, for_each_in_chain, non_null, write_out};
use crate::engine::UsmKind;
use crate::hal::{AllocRequest, Backend};
use crate::pool::UsmPool;
use crate::handle;
use crate::info::InfoOut;
use crate::usm_align::check_usm_align;
use crate::usm_async::{check_pool_prop, read_pool_desc, PoolApi};
use crate::UrResult;
use core::ffi::c_void;

/// The common body of the three allocation entry points, checked in the
/// order the reference header lists their errors.
///
/// # Safety
/// The arguments of a `urUSM*Alloc` call.
unsafe fn alloc<B: Backend>(
    kind: UsmKind,
    h_context: ur_context_handle_t,
    h_device: Option<ur_device_handle_t>,
    desc: *const ur_usm_desc_t,
    h_pool: ur_usm_pool_handle_t,
    size: usize,
    out: *mut *mut c_void,
) -> UrResult {
    let context = obj::<B, Context<B>>(h_context)?;
    let device = h_device.map(|h| obj::<B, Device<B>>(h)).transpose()?;
    let desc = desc.as_ref();
    let hints = desc.map_or(0, |d| d.hints);
    if hints & UR_USM_ADVICE_FLAGS_MASK != 0 {
        return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
    }
    non_null(out)?;
    if device.is_some_and(|d| !context.has_device(d)) {
        return Err(UR_RESULT_ERROR_INVALID_DEVICE);
    }
    let pool = optional::<B, UsmPool<B>>(h_pool)?;
    if let Some(pool) = pool {
        if !context.pools_supported() {
            return Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
        }
        let fits = match device {
            Some(d) => pool.serves(context, d),
            None => pool.belongs_to(context),
        };
        if !fits {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
    }
    let (mut host_flags, mut device_flags) = (0, 0);
    if let Some(d) = desc {
        for_each_in_chain(d.pNext, |stype, link| {
            // SAFETY (casts): the stype names the descriptor.
            match stype {
                UR_STRUCTURE_TYPE_USM_HOST_DESC => host_flags = (*(link as *const ur_usm_host_desc_t)).flags,
                UR_STRUCTURE_TYPE_USM_DEVICE_DESC => device_flags = (*(link as *const ur_usm_device_desc_t)).flags,
                // Placement hints (a memory location) no backend here has.
                _ => {}
            }
            Ok(())
        })?;
    }
    if host_flags & UR_USM_HOST_MEM_FLAGS_MASK != 0 || device_flags & UR_USM_DEVICE_MEM_FLAGS_MASK != 0 {
        return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
    }
    let align = desc.map_or(0, |d| d.align);
    // The alignment and size rule every adapter shares, against the
    // device's limit, or for host memory the least of the context's.
    let max_alloc = device.map_or_else(|| context.max_alloc_size(), |d| d.max_alloc_size());
    let ur_kind = match kind {
        UsmKind::Host => UR_USM_TYPE_HOST,
        UsmKind::Device => UR_USM_TYPE_DEVICE,
        UsmKind::Shared => UR_USM_TYPE_SHARED,
    };
    check_usm_align(ur_kind, size, align as u64, max_alloc)?;
    if size == 0 || size as u64 > max_alloc {
        return Err(UR_RESULT_ERROR_INVALID_USM_SIZE);
    }
    // Host memory needs one device of the context that reaches it.
    let served = match device {
        Some(d) => d.serves_usm(kind),
        None => context.devices().any(|d| d.serves_usm(kind)),
    };
    if !served {
        return Err(UR_RESULT_ERROR_INVALID_OPERATION);
    }
    let request = AllocRequest { kind, size, align: align as usize, device, pool, hints, host_flags, device_flags };
    write_out(out, context.usm_alloc(request)?)
}

pub(super) unsafe extern "C" fn host_alloc<B: Backend>(
    context: ur_context_handle_t,
    desc: *const ur_usm_desc_t,
    pool: ur_usm_pool_handle_t,
    size: usize,
    out: *mut *mut c_void,
) -> ur_result_t {
    ffi_call(|| alloc::<B>(UsmKind::Host, context, None, desc, pool, size, out))
}

/// Device and shared allocation differ only in the kind of memory.
macro_rules! device_alloc_entry {
    ($name:ident, $kind:ident) => {
        pub(super) unsafe extern "C" fn $name<B: Backend>(
            context: ur_context_handle_t,
            device: ur_device_handle_t,
            desc: *const ur_usm_desc_t,
            pool: ur_usm_pool_handle_t,
            size: usize,
            out: *mut *mut c_void,
        ) -> ur_result_t {
            ffi_call(|| alloc::<B>(UsmKind::$kind, context, Some(device), desc, pool, size, out))
        }
    };
}

device_alloc_entry!(device_alloc, Device);
device_alloc_entry!(shared_alloc, Shared);

/// Commands still pending on the memory keep it until they finished.
pub(super) unsafe extern "C" fn free<B: Backend>(context: ur_context_handle_t, ptr: *mut c_void) -> ur_result_t {
    ffi_call(|| {
        let context = obj::<B, Context<B>>(context)?;
        non_null(ptr)?;
        context.usm_free(ptr)
    })
}

pub(super) unsafe extern "C" fn get_mem_alloc_info<B: Backend>(
    context: ur_context_handle_t,
    ptr: *const c_void,
    prop: ur_usm_alloc_info_t,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let context = obj::<B, Context<B>>(context)?;
        non_null(ptr)?;
        super::prop_in_range(prop.0, UR_USM_ALLOC_INFO_POOL.0, &[])?;
        let out = InfoOut::new(size, value, size_ret)?;
        let Some(info) = context.usm_alloc_info(ptr) else {
            // Memory this context did not allocate: UR calls its type
            // unknown and has nothing else to say about it.
            return match prop {
                UR_USM_ALLOC_INFO_TYPE => out.value(UR_USM_TYPE_UNKNOWN),
                _ => Err(UR_RESULT_ERROR_INVALID_MEM_OBJECT),
            };
        };
        match prop {
            UR_USM_ALLOC_INFO_TYPE => out.value(info.kind),
            UR_USM_ALLOC_INFO_BASE_PTR => out.value(info.base),
            UR_USM_ALLOC_INFO_SIZE => out.value(info.size),
            UR_USM_ALLOC_INFO_DEVICE => out.value(info.device),
            _ => out.value(info.pool),
        }
    })
}

pub(super) unsafe extern "C" fn pool_create<B: Backend>(
    context: ur_context_handle_t,
    desc: *mut ur_usm_pool_desc_t,
    out: *mut ur_usm_pool_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let context = obj::<B, Context<B>>(context)?;
        let desc = read_pool_desc(desc)?;
        non_null(out)?;
        if !context.pools_supported() {
            return Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
        }
        write_out(out, handle::into_handle(context.pool_create(None, desc, PoolApi::Classic)?))
    })
}

/// A default pool belongs to its context: the user's retain and release
/// leave it alone.
pub(super) unsafe extern "C" fn pool_retain<B: Backend>(h: ur_usm_pool_handle_t) -> ur_result_t {
    super::counted::<B, UsmPool<B>>(h, |p| !p.is_default(), handle::retain::<UsmPool<B>>)
}

pub(super) unsafe extern "C" fn pool_release<B: Backend>(h: ur_usm_pool_handle_t) -> ur_result_t {
    super::counted::<B, UsmPool<B>>(h, |p| !p.is_default(), handle::release::<UsmPool<B>>)
}

pub(super) unsafe extern "C" fn pool_get_info<B: Backend>(
    h: ur_usm_pool_handle_t,
    prop: ur_usm_pool_info_t,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let pool = obj::<B, UsmPool<B>>(h)?;
        check_pool_prop(prop)?;
        let out = InfoOut::new(size, value, size_ret)?;
        match prop {
            UR_USM_POOL_INFO_REFERENCE_COUNT => out.value(handle::ref_count_of(pool)),
            UR_USM_POOL_INFO_CONTEXT => out.value(pool.context_handle()),
            // The size figures, as urUSMPoolGetInfoExp gives them.
            _ => out.value(pool.info(prop)?),
        }
    })
}
