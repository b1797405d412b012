//! `urMemBufferCreate`, `urMemBufferPartition`, `urMemGetInfo` and
//! `urMemGetNativeHandle` (`spec/memory_objects.md`), checked in the order
//! the spec lists; retain and release are the generic ones.

use super::{obj, optional};
use crate::abi::*;
use crate::boundary::{ffi_call, native_args, non_null, write_out};
use crate::context::Context;
use crate::device::Device;
use crate::hal::Backend;
use crate::handle::{self, arc_of};
use crate::mem::{Mem, RawMem, ACCESS_FLAGS};
use crate::UrResult;

const USE_HOST: ur_mem_flags_t = UR_MEM_FLAG_USE_HOST_POINTER.0;
const ALLOC_COPY: ur_mem_flags_t = UR_MEM_FLAG_ALLOC_COPY_HOST_POINTER.0;
const HOST_FLAGS: ur_mem_flags_t = USE_HOST | UR_MEM_FLAG_ALLOC_HOST_POINTER.0 | ALLOC_COPY;

/// At most one access mode.
fn one_access_mode(flags: ur_mem_flags_t) -> UrResult {
    if (flags & ACCESS_FLAGS).count_ones() > 1 {
        return Err(UR_RESULT_ERROR_INVALID_VALUE);
    }
    Ok(())
}

pub(super) unsafe extern "C" fn buffer_create<B: Backend>(
    h: ur_context_handle_t,
    flags: ur_mem_flags_t,
    size: usize,
    properties: *const ur_buffer_properties_t,
    out: *mut ur_mem_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let context = obj::<B, Context<B>>(h)?;
        if flags & UR_MEM_FLAGS_MASK != 0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        non_null(out)?;
        if size == 0 {
            return Err(UR_RESULT_ERROR_INVALID_BUFFER_SIZE);
        }
        let host = properties.as_ref().map(|p| p.pHost).filter(|p| !p.is_null());
        let wants_host = flags & (USE_HOST | ALLOC_COPY) != 0;
        if wants_host != host.is_some() {
            return Err(UR_RESULT_ERROR_INVALID_HOST_PTR);
        }
        one_access_mode(flags)?;
        if flags & USE_HOST != 0 && flags & (HOST_FLAGS & !USE_HOST) != 0 {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        if size as u64 > context.max_alloc_size() {
            return Err(UR_RESULT_ERROR_INVALID_BUFFER_SIZE);
        }
        let mem = Mem::create(arc_of(context), flags, size, host)?;
        write_out(out, handle::into_handle(mem))
    })
}

pub(super) unsafe extern "C" fn buffer_partition<B: Backend>(
    h: ur_mem_handle_t,
    flags: ur_mem_flags_t,
    create_type: ur_buffer_create_type_t,
    region: *const ur_buffer_region_t,
    out: *mut ur_mem_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let parent = obj::<B, Mem<B>>(h)?;
        if flags & UR_MEM_FLAGS_MASK != 0 || create_type.0 > UR_BUFFER_CREATE_TYPE_REGION.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let region = *non_null(region)?;
        non_null(out)?;
        if parent.is_sub_buffer() {
            return Err(UR_RESULT_ERROR_INVALID_MEM_OBJECT);
        }
        one_access_mode(flags)?;
        let widens = flags & ACCESS_FLAGS != 0 && flags & ACCESS_FLAGS != parent.flags & ACCESS_FLAGS
            && parent.flags & UR_MEM_FLAG_READ_WRITE.0 == 0;
        if flags & HOST_FLAGS != 0 || widens {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        let end = region.origin.checked_add(region.size);
        if region.size == 0 || end.is_none_or(|end| end > parent.size) {
            return Err(UR_RESULT_ERROR_INVALID_BUFFER_SIZE);
        }
        let align = base_align_bytes(&parent.context);
        if region.origin % align != 0 {
            return Err(UR_RESULT_ERROR_MISALIGNED_SUB_BUFFER_OFFSET);
        }
        let sub = Mem::partition(arc_of(parent), flags, region.origin, region.size)?;
        write_out(out, handle::into_handle(sub))
    })
}

/// The largest `MEM_BASE_ADDR_ALIGN` of the context's devices, in bytes
/// (the query answers bits): a sub-buffer's origin must keep that.
fn base_align_bytes<B: Backend>(context: &Context<B>) -> usize {
    let bits = context.devices().map(|d| d.mem_base_addr_align_bits()).max().unwrap_or(8);
    (bits as usize / 8).max(1)
}

super::info_entry!(Mem<B>, ur_mem_handle_t, ur_mem_info_t, UR_MEM_INFO_REFERENCE_COUNT, |mem, prop, out| {
    match prop {
        UR_MEM_INFO_SIZE => out.value(mem.size),
        UR_MEM_INFO_CONTEXT => out.value(handle::handle_of(&*mem.context)),
        UR_MEM_INFO_REFERENCE_COUNT => out.value(handle::ref_count_of(mem)),
        _ => Err(UR_RESULT_ERROR_INVALID_ENUMERATION),
    }
});

/// The buffer's driver object, or its address where every device of its
/// context reaches that (`RawMem::native_handle`): a device, when named,
/// must be one of them; in a context of several, one must be named.
pub(super) unsafe extern "C" fn get_native_handle<B: Backend>(
    h: ur_mem_handle_t,
    device: ur_device_handle_t,
    out: *mut ur_native_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let mem = obj::<B, Mem<B>>(h)?;
        match optional::<B, Device<B>>(device)? {
            Some(d) if !mem.context.has_device(d) => return Err(UR_RESULT_ERROR_INVALID_DEVICE),
            None if mem.context.devices().len() > 1 => return Err(UR_RESULT_ERROR_INVALID_NULL_HANDLE),
            _ => {}
        }
        write_out(out, B::RawMem::native_handle(mem))
    })
}

pub(super) unsafe extern "C" fn buffer_create_with_native_handle<B: Backend>(
    native: ur_native_handle_t,
    h: ur_context_handle_t,
    properties: *const ur_mem_native_properties_t,
    out: *mut ur_mem_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let context = obj::<B, Context<B>>(h)?;
        let (ownership, _) = native_args(native, false, properties, out)?;
        write_out(out, handle::into_handle(Mem::from_native(arc_of(context), native, ownership)?))
    })
}
