//! `urKernel*` (launches are in `enqueue.rs`).

use super::{arc, obj};
use crate::core::device::Device;
use crate::core::kernel::Kernel;
use crate::core::program::Program;
use crate::core::refcount;
use std::ffi::{c_char, c_void, CStr};
use ur_core::boundary::{ffi_call, write_out};
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
        *ph_kernel = refcount::into_handle(Kernel::new(program, CStr::from_ptr(p_name))?);
        Ok(())
    })
}

pub unsafe extern "C" fn urKernelRetain(h: ur_kernel_handle_t) -> ur_result_t {
    ffi_call(|| refcount::retain::<Kernel>(h))
}

pub unsafe extern "C" fn urKernelRelease(h: ur_kernel_handle_t) -> ur_result_t {
    ffi_call(|| refcount::release::<Kernel>(h))
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
        *ph_kernel = refcount::into_handle(kernel);
        Ok(())
    })
}
