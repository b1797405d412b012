//! `urKernel*` and `urEnqueueKernelLaunchWithArgsExp`.

use super::{deliver, obj, optional, wait_list};
use crate::abi::*;
use crate::program::{Kernel, NativeKernel, Program, RawKernel};
use crate::context::Context;
use crate::boundary::{ffi_call, for_each_in_chain, native_args, non_null, slice_arg, write_out};
use crate::hal::{Backend, Completion, KernelArg, NdRange};
use crate::mem::{Mem, RawMem};
use crate::queue::object::{Queue, RawQueue};
use crate::handle;
use crate::UrResult;
use core::ffi::{c_char, c_void, CStr};

pub(super) unsafe extern "C" fn create<B: Backend>(
    program: ur_program_handle_t,
    name: *const c_char,
    out: *mut ur_kernel_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let program = obj::<B, Program<B>>(program)?;
        non_null(name)?;
        non_null(out)?;
        write_out(out, handle::into_handle(B::RawKernel::create(program, CStr::from_ptr(name))?))
    })
}

super::info_entry!(Kernel<B>, ur_kernel_handle_t, ur_kernel_info_t, UR_KERNEL_INFO_SPILL_MEM_SIZE, |kernel, prop, out| {
    match prop {
        UR_KERNEL_INFO_REFERENCE_COUNT => out.value(handle::ref_count_of(kernel)),
        UR_KERNEL_INFO_CONTEXT => out.value(handle::handle_of(kernel.context())),
        UR_KERNEL_INFO_PROGRAM => out.value(handle::handle_of(&*kernel.program)),
        _ => kernel.info(prop, out),
    }
});

super::device_query_entry!(get_group_info, Kernel<B>, ur_kernel_handle_t, ur_kernel_group_info_t, UR_KERNEL_GROUP_INFO_COMPILE_MAX_LINEAR_WORK_GROUP_SIZE, group_info);
super::device_query_entry!(get_sub_group_info, Kernel<B>, ur_kernel_handle_t, ur_kernel_sub_group_info_t, UR_KERNEL_SUB_GROUP_INFO_SUB_GROUP_SIZE_INTEL, sub_group_info);

pub(super) unsafe extern "C" fn set_exec_info<B: Backend>(
    h: ur_kernel_handle_t,
    prop: ur_kernel_exec_info_t,
    size: usize,
    _properties: *const ur_kernel_exec_info_properties_t,
    value: *const c_void,
) -> ur_result_t {
    ffi_call(|| {
        let kernel = obj::<B, Kernel<B>>(h)?;
        non_null(value)?;
        super::prop_in_range(prop.0, UR_KERNEL_EXEC_INFO_CACHE_CONFIG.0, &[])?;
        kernel.set_exec_info(prop, value, size)
    })
}

pub(super) unsafe extern "C" fn get_suggested_local_work_size<B: Backend>(
    h: ur_kernel_handle_t,
    queue: ur_queue_handle_t,
    work_dim: u32,
    _offset: *const usize,
    global: *const usize,
    out: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let kernel = obj::<B, Kernel<B>>(h)?;
        let queue = obj::<B, Queue<B>>(queue)?;
        non_null(global)?;
        non_null(out)?;
        if !(1..=3).contains(&work_dim) {
            return Err(UR_RESULT_ERROR_INVALID_WORK_DIMENSION);
        }
        let local = kernel.suggested_local_work_size(queue, slice_arg(global, work_dim)?)?;
        std::ptr::copy_nonoverlapping(local.as_ptr(), out, (work_dim as usize).min(local.len()));
        Ok(())
    })
}

super::native_handle_entry!(Kernel<B>, ur_kernel_handle_t);

pub(super) unsafe extern "C" fn create_with_native_handle<B: Backend>(
    native: ur_native_handle_t,
    context: ur_context_handle_t,
    program: ur_program_handle_t,
    properties: *const ur_kernel_native_properties_t,
    out: *mut ur_kernel_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let context = obj::<B, Context<B>>(context)?;
        let (ownership, _) = native_args(native, false, properties, out)?;
        let program = optional::<B, Program<B>>(program)?;
        if program.is_some_and(|p| !std::ptr::eq(&*p.context, context)) {
            return Err(UR_RESULT_ERROR_INVALID_CONTEXT);
        }
        write_out(out, handle::into_handle(B::RawKernel::from_native(NativeKernel { handle: native, context, program, ownership })?))
    })
}

/// Reads the launch properties chain: each link must be a
/// `ur_kernel_launch_ext_properties_t` with known flags. Returns whether a
/// cooperative launch was asked for.
///
/// # Safety
/// `list` is null or a valid UR descriptor chain.
unsafe fn launch_properties(list: *const ur_kernel_launch_ext_properties_t) -> UrResult<bool> {
    let mut cooperative = false;
    for_each_in_chain(list as *const c_void, |stype, p| {
        if stype != UR_STRUCTURE_TYPE_KERNEL_LAUNCH_EXT_PROPERTIES {
            return Err(UR_RESULT_ERROR_INVALID_OPERATION);
        }
        // SAFETY: the stype names the structure.
        let flags = (*(p as *const ur_kernel_launch_ext_properties_t)).flags;
        if flags & UR_KERNEL_LAUNCH_FLAGS_MASK != 0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        cooperative |= flags & UR_KERNEL_LAUNCH_FLAG_COOPERATIVE.0 != 0;
        Ok(())
    })?;
    Ok(cooperative)
}

/// # Safety
/// `a` comes from the caller's argument array; a memory object's handle is
/// null or readable.
unsafe fn kernel_arg<'a, B: Backend>(a: &ur_exp_kernel_arg_properties_t, context: &Context<B>) -> UrResult<KernelArg<'a>> {
    Ok(match a.r#type {
        UR_EXP_KERNEL_ARG_TYPE_VALUE => {
            let p = a.value.value as *const u8;
            if p.is_null() && a.size > 0 {
                return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
            }
            let bytes = if a.size == 0 { &[][..] } else { std::slice::from_raw_parts(p, a.size) };
            KernelArg::Value { index: a.index, bytes }
        }
        UR_EXP_KERNEL_ARG_TYPE_POINTER => KernelArg::Pointer { index: a.index, ptr: a.value.pointer },
        UR_EXP_KERNEL_ARG_TYPE_LOCAL => KernelArg::Local { index: a.index, size: a.size },
        UR_EXP_KERNEL_ARG_TYPE_MEM_OBJ => mem_obj_arg::<B>(a.index, a.value.memObjTuple, context)?,
        UR_EXP_KERNEL_ARG_TYPE_SAMPLER => return Err(UR_RESULT_ERROR_INVALID_SAMPLER),
        _ => return Err(UR_RESULT_ERROR_INVALID_ENUMERATION),
    })
}

/// A buffer argument (`spec/memory_objects.md`): null passes a null
/// buffer; otherwise a live buffer of the queue's context, as its backend
/// passes it. Only the access bits of `flags` mean anything.
///
/// # Safety
/// The handle is null or readable.
unsafe fn mem_obj_arg<'a, B: Backend>(
    index: u32,
    tuple: ur_exp_kernel_arg_mem_obj_tuple_t,
    context: &Context<B>,
) -> UrResult<KernelArg<'a>> {
    if tuple.flags & UR_MEM_FLAGS_MASK != 0 {
        return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
    }
    if tuple.hMem.is_null() {
        return Ok(KernelArg::Pointer { index, ptr: std::ptr::null() });
    }
    let mem = obj::<B, Mem<B>>(tuple.hMem).map_err(|_| UR_RESULT_ERROR_INVALID_MEM_OBJECT)?;
    if !std::ptr::eq(&*mem.context, context) {
        return Err(UR_RESULT_ERROR_INVALID_MEM_OBJECT);
    }
    Ok(B::RawMem::kernel_arg(mem, index))
}

pub(super) unsafe extern "C" fn launch_with_args<B: Backend>(
    queue: ur_queue_handle_t,
    kernel: ur_kernel_handle_t,
    work_dim: u32,
    offset: *const usize,
    global: *const usize,
    local: *const usize,
    num_args: u32,
    args: *const ur_exp_kernel_arg_properties_t,
    properties: *const ur_kernel_launch_ext_properties_t,
    count: u32,
    list: *const ur_event_handle_t,
    event_out: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let queue = obj::<B, Queue<B>>(queue)?;
        let kernel = obj::<B, Kernel<B>>(kernel)?;
        non_null(global)?;
        let raw_args = slice_arg(args, num_args)?;
        if raw_args.iter().any(|a| a.r#type.0 > UR_EXP_KERNEL_ARG_TYPE_SAMPLER.0) {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let cooperative = launch_properties(properties)?;
        if !(1..=3).contains(&work_dim) {
            return Err(UR_RESULT_ERROR_INVALID_WORK_DIMENSION);
        }
        let global = slice_arg(global, work_dim)?;
        let local = if local.is_null() { None } else { Some(slice_arg(local, work_dim)?) };
        if local.is_some_and(|l| l.contains(&0)) {
            return Err(UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE);
        }
        let offset = if offset.is_null() { None } else { Some(slice_arg(offset, work_dim)?) };
        if !std::ptr::eq(kernel.context(), &*queue.context) {
            return Err(UR_RESULT_ERROR_INVALID_KERNEL);
        }
        let waits = wait_list::<B>(count, list)?;
        let args = raw_args.iter().map(|a| kernel_arg::<B>(a, &queue.context)).collect::<UrResult<Vec<_>>>()?;
        if global.contains(&0) {
            // An empty range runs nothing: a marker in the kernel's place
            // (`spec/memory_objects.md`, as libsycl and Intel's adapters
            // expect).
            let completion = Completion { want_event: !event_out.is_null(), blocking: false };
            let event = B::RawQueue::marker(queue, UR_COMMAND_KERNEL_LAUNCH, waits, completion)?;
            deliver(event_out, event);
            return Ok(());
        }
        let range = NdRange { offset, global, local };
        let event = kernel.launch(queue, &range, &args, cooperative, waits, !event_out.is_null())?;
        deliver(event_out, event);
        Ok(())
    })
}
