//! `urKernel*` and `urEnqueueKernelLaunchWithArgsExp`.

use super::{arc, obj};
use crate::core::device::Device;
use crate::core::event::Event;
use crate::core::kernel::{Arg, Kernel, NdRange};
use crate::core::program::Program;
use crate::core::queue::Queue;
use std::ffi::{c_char, c_void, CStr};
use ur_core::boundary::{ffi_call, for_each_in_chain, slice_arg, wait_list_arg, write_out};
use ur_core::handle;
use ur_core::info::InfoOut;
use ur_core::*;

pub unsafe extern "C" fn urKernelCreate(
    h_program: ur_program_handle_t,
    p_name: *const c_char,
    ph_kernel: *mut ur_kernel_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let program = arc::<Program>(h_program)?;
        if p_name.is_null() || ph_kernel.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        *ph_kernel = handle::into_handle(Kernel::new(program, CStr::from_ptr(p_name))?);
        Ok(())
    })
}

pub unsafe extern "C" fn urKernelRetain(h: ur_kernel_handle_t) -> ur_result_t {
    ffi_call(|| handle::retain::<Kernel>(h, &crate::DDI))
}

pub unsafe extern "C" fn urKernelRelease(h: ur_kernel_handle_t) -> ur_result_t {
    ffi_call(|| handle::release::<Kernel>(h, &crate::DDI))
}

pub unsafe extern "C" fn urKernelGetInfo(
    h: ur_kernel_handle_t,
    prop: ur_kernel_info_t,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let k = obj::<Kernel>(h)?;
        if prop.0 > UR_KERNEL_INFO_SPILL_MEM_SIZE.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        k.get_info(prop, InfoOut::new(size, value, size_ret)?)
    })
}

pub unsafe extern "C" fn urKernelGetGroupInfo(
    h: ur_kernel_handle_t,
    h_device: ur_device_handle_t,
    prop: ur_kernel_group_info_t,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let k = obj::<Kernel>(h)?;
        let d = Device::from_handle(h_device)?;
        if prop.0 > UR_KERNEL_GROUP_INFO_COMPILE_MAX_LINEAR_WORK_GROUP_SIZE.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        k.get_group_info(d, prop, InfoOut::new(size, value, size_ret)?)
    })
}

pub unsafe extern "C" fn urKernelGetSubGroupInfo(
    h: ur_kernel_handle_t,
    h_device: ur_device_handle_t,
    prop: ur_kernel_sub_group_info_t,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let k = obj::<Kernel>(h)?;
        let d = Device::from_handle(h_device)?;
        if prop.0 > UR_KERNEL_SUB_GROUP_INFO_SUB_GROUP_SIZE_INTEL.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        k.get_sub_group_info(d, prop, InfoOut::new(size, value, size_ret)?)
    })
}

pub unsafe extern "C" fn urKernelSetExecInfo(
    h: ur_kernel_handle_t,
    prop: ur_kernel_exec_info_t,
    size: usize,
    _p_properties: *const ur_kernel_exec_info_properties_t,
    p_value: *const c_void,
) -> ur_result_t {
    ffi_call(|| {
        let k = obj::<Kernel>(h)?;
        if p_value.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        if prop.0 > UR_KERNEL_EXEC_INFO_CACHE_CONFIG.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        k.set_exec_info(prop, p_value, size)
    })
}

pub unsafe extern "C" fn urKernelGetNativeHandle(h: ur_kernel_handle_t, ph_native: *mut ur_native_handle_t) -> ur_result_t {
    ffi_call(|| write_out(ph_native, obj::<Kernel>(h)?.cl.get() as ur_native_handle_t))
}

/// A kernel over the user's `cl_kernel`. Without a program handle, the
/// kernel's own `cl_program` is wrapped (borrowed) as its program.
pub unsafe extern "C" fn urKernelCreateWithNativeHandle(
    h_native: ur_native_handle_t,
    h_context: ur_context_handle_t,
    h_program: ur_program_handle_t,
    p_properties: *const ur_kernel_native_properties_t,
    ph_kernel: *mut ur_kernel_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let context = arc::<crate::core::context::Context>(h_context)?;
        let (ownership, _) = ur_core::boundary::native_args(h_native, false, p_properties, ph_kernel)?;
        let program = if h_program.is_null() { None } else { Some(arc::<Program>(h_program)?) };
        let kernel = Kernel::from_native(&context, program, h_native as cl3::ext::cl_kernel, ownership)?;
        *ph_kernel = handle::into_handle(kernel);
        Ok(())
    })
}

/// Reads the launch property list: flags must be known; cooperative
/// launches and cluster or work-group properties are not offered.
unsafe fn check_launch_properties(list: *const ur_kernel_launch_ext_properties_t) -> UrResult {
    for_each_in_chain(list as *const c_void, |stype, p| {
        if stype != UR_STRUCTURE_TYPE_KERNEL_LAUNCH_EXT_PROPERTIES {
            return Err(UR_RESULT_ERROR_INVALID_OPERATION);
        }
        let flags = (*(p as *const ur_kernel_launch_ext_properties_t)).flags;
        if flags & UR_KERNEL_LAUNCH_FLAGS_MASK != 0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        if flags & UR_KERNEL_LAUNCH_FLAG_COOPERATIVE.0 != 0 {
            return Err(UR_RESULT_ERROR_INVALID_OPERATION);
        }
        Ok(())
    })
}

pub unsafe extern "C" fn urEnqueueKernelLaunchWithArgsExp(
    h_queue: ur_queue_handle_t,
    h_kernel: ur_kernel_handle_t,
    work_dim: u32,
    p_global_work_offset: *const usize,
    p_global_work_size: *const usize,
    p_local_work_size: *const usize,
    num_args: u32,
    p_args: *const ur_exp_kernel_arg_properties_t,
    launch_prop_list: *const ur_kernel_launch_ext_properties_t,
    num_events: u32,
    ph_wait_list: *const ur_event_handle_t,
    ph_event: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let q = obj::<Queue>(h_queue)?;
        let k = obj::<Kernel>(h_kernel)?;
        if p_global_work_size.is_null() || (p_args.is_null() && num_args > 0) {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        let raw_args = slice_arg(p_args, num_args)?;
        if raw_args.iter().any(|a| a.r#type.0 > UR_EXP_KERNEL_ARG_TYPE_SAMPLER.0) {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        check_launch_properties(launch_prop_list)?;
        if !(1..=3).contains(&work_dim) {
            return Err(UR_RESULT_ERROR_INVALID_WORK_DIMENSION);
        }
        let global = slice_arg(p_global_work_size, work_dim)?;
        if global.contains(&0) {
            return Err(UR_RESULT_ERROR_INVALID_WORK_DIMENSION);
        }
        let local = if p_local_work_size.is_null() { None } else { Some(slice_arg(p_local_work_size, work_dim)?) };
        if local.is_some_and(|l| l.contains(&0)) {
            return Err(UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE);
        }
        let offset = if p_global_work_offset.is_null() { None } else { Some(slice_arg(p_global_work_offset, work_dim)?) };
        let waits = wait_list_arg(ph_wait_list, num_events)?
            .iter()
            .map(|&h| obj::<Event>(h).map_err(|_| UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST))
            .collect::<UrResult<Vec<&Event>>>()?;
        let args = raw_args
            .iter()
            .map(|a| match a.r#type {
                UR_EXP_KERNEL_ARG_TYPE_VALUE => {
                    if a.value.value.is_null() {
                        return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
                    }
                    Ok(Arg::Value { index: a.index, size: a.size, value: a.value.value })
                }
                UR_EXP_KERNEL_ARG_TYPE_POINTER => Ok(Arg::Pointer { index: a.index, ptr: a.value.pointer }),
                UR_EXP_KERNEL_ARG_TYPE_LOCAL => Ok(Arg::Local { index: a.index, size: a.size }),
                // This adapter makes no memory objects or samplers, so no
                // handle of either can be one of its own.
                UR_EXP_KERNEL_ARG_TYPE_MEM_OBJ => Err(UR_RESULT_ERROR_INVALID_MEM_OBJECT),
                _ => Err(UR_RESULT_ERROR_INVALID_SAMPLER),
            })
            .collect::<UrResult<Vec<Arg>>>()?;
        let range = NdRange { offset, global, local };
        let event = k.launch(q, &range, &args, &waits, !ph_event.is_null())?;
        if let Some(e) = event {
            *ph_event = handle::into_handle(e);
        }
        Ok(())
    })
}
