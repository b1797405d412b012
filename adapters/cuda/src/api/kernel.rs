//! `urKernel*` and `urEnqueueKernelLaunchWithArgsExp`.

use super::{arc, borrow, give_event, str_arg, wait_list};
use crate::core::device::Device;
use crate::core::kernel::{Arg, Kernel, NdRange};
use crate::core::program::Program;
use crate::core::queue::Queue;
use std::ffi::c_void;
use ur_core::boundary::{ffi_call, slice_arg, write_out};
use ur_core::handle;
use ur_core::info::InfoOut;
use ur_core::*;

pub unsafe extern "C" fn urKernelCreate(
    hProgram: ur_program_handle_t,
    pKernelName: *const core::ffi::c_char,
    phKernel: *mut ur_kernel_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let program = arc::<Program>(hProgram)?;
        let name = str_arg(pKernelName)?;
        if phKernel.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        *phKernel = handle::into_handle(Kernel::new(program, name)?);
        Ok(())
    })
}

pub unsafe extern "C" fn urKernelRetain(hKernel: ur_kernel_handle_t) -> ur_result_t {
    ffi_call(|| handle::retain::<Kernel>(hKernel, &crate::DDI))
}

pub unsafe extern "C" fn urKernelRelease(hKernel: ur_kernel_handle_t) -> ur_result_t {
    ffi_call(|| handle::release::<Kernel>(hKernel, &crate::DDI))
}

pub unsafe extern "C" fn urKernelGetInfo(
    hKernel: ur_kernel_handle_t,
    propName: ur_kernel_info_t,
    propSize: usize,
    pPropValue: *mut c_void,
    pPropSizeRet: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let kernel = borrow::<Kernel>(hKernel)?;
        if propName.0 > UR_KERNEL_INFO_SPILL_MEM_SIZE.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        kernel.info(propName, InfoOut::new(propSize, pPropValue, pPropSizeRet)?)
    })
}

pub unsafe extern "C" fn urKernelGetGroupInfo(
    hKernel: ur_kernel_handle_t,
    hDevice: ur_device_handle_t,
    propName: ur_kernel_group_info_t,
    propSize: usize,
    pPropValue: *mut c_void,
    pPropSizeRet: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let kernel = borrow::<Kernel>(hKernel)?;
        let device = borrow::<Device>(hDevice)?;
        if propName.0 > UR_KERNEL_GROUP_INFO_COMPILE_MAX_LINEAR_WORK_GROUP_SIZE.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        kernel.group_info(
            device,
            propName,
            InfoOut::new(propSize, pPropValue, pPropSizeRet)?,
        )
    })
}

pub unsafe extern "C" fn urKernelGetSubGroupInfo(
    hKernel: ur_kernel_handle_t,
    hDevice: ur_device_handle_t,
    propName: ur_kernel_sub_group_info_t,
    propSize: usize,
    pPropValue: *mut c_void,
    pPropSizeRet: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let kernel = borrow::<Kernel>(hKernel)?;
        let device = borrow::<Device>(hDevice)?;
        if propName.0 > UR_KERNEL_SUB_GROUP_INFO_SUB_GROUP_SIZE_INTEL.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        kernel.sub_group_info(
            device,
            propName,
            InfoOut::new(propSize, pPropValue, pPropSizeRet)?,
        )
    })
}

pub unsafe extern "C" fn urKernelGetNativeHandle(
    hKernel: ur_kernel_handle_t,
    phNativeKernel: *mut ur_native_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let kernel = borrow::<Kernel>(hKernel)?;
        let device = &kernel.program.images[0].device;
        write_out(
            phNativeKernel,
            kernel.native_for(device)? as ur_native_handle_t,
        )
    })
}

pub unsafe extern "C" fn urKernelGetSuggestedLocalWorkSize(
    hKernel: ur_kernel_handle_t,
    hQueue: ur_queue_handle_t,
    numWorkDim: u32,
    _pGlobalWorkOffset: *const usize,
    pGlobalWorkSize: *const usize,
    pSuggestedLocalWorkSize: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let kernel = borrow::<Kernel>(hKernel)?;
        let queue = borrow::<Queue>(hQueue)?;
        if pGlobalWorkSize.is_null() || pSuggestedLocalWorkSize.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        if !(1..=3).contains(&numWorkDim) {
            return Err(UR_RESULT_ERROR_INVALID_WORK_DIMENSION);
        }
        let n = numWorkDim as usize;
        let local = kernel.suggest_local(
            &queue.device,
            std::slice::from_raw_parts(pGlobalWorkSize, n),
        )?;
        std::ptr::copy_nonoverlapping(local.as_ptr(), pSuggestedLocalWorkSize, n);
        Ok(())
    })
}

pub unsafe extern "C" fn urKernelSetExecInfo(
    hKernel: ur_kernel_handle_t,
    propName: ur_kernel_exec_info_t,
    _propSize: usize,
    _pProperties: *const ur_kernel_exec_info_properties_t,
    pPropValue: *const c_void,
) -> ur_result_t {
    ffi_call(|| {
        borrow::<Kernel>(hKernel)?;
        if propName.0 > UR_KERNEL_EXEC_INFO_CACHE_CONFIG.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        if pPropValue.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        // Unified addressing makes every USM pointer reachable from every
        // kernel, and the cache split is the driver's choice: nothing to do.
        Ok(())
    })
}

/// The kernel's program is needed (a CUDA function does not name the UR
/// program it came from): without one, `INVALID_NULL_HANDLE`, as the spec
/// allows.
pub unsafe extern "C" fn urKernelCreateWithNativeHandle(
    hNativeKernel: ur_native_handle_t,
    hContext: ur_context_handle_t,
    hProgram: ur_program_handle_t,
    pProperties: *const ur_kernel_native_properties_t,
    phKernel: *mut ur_kernel_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let context = borrow::<crate::core::context::Context>(hContext)?;
        ur_core::boundary::native_args(hNativeKernel, false, pProperties, phKernel)?;
        let program = arc::<Program>(hProgram)?;
        if !std::ptr::eq(&*program.context, context) {
            return Err(UR_RESULT_ERROR_INVALID_CONTEXT);
        }
        let kernel = Kernel::from_native(program, hNativeKernel as crate::driver::CUfunction)?;
        *phKernel = handle::into_handle(kernel);
        Ok(())
    })
}

pub unsafe extern "C" fn urEnqueueKernelLaunchWithArgsExp(
    hQueue: ur_queue_handle_t,
    hKernel: ur_kernel_handle_t,
    workDim: u32,
    pGlobalWorkOffset: *const usize,
    pGlobalWorkSize: *const usize,
    pLocalWorkSize: *const usize,
    numArgs: u32,
    pArgs: *const ur_exp_kernel_arg_properties_t,
    launchPropList: *const ur_kernel_launch_ext_properties_t,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        // The queue as an owned reference: commands keep it in their events.
        let q = arc::<Queue>(hQueue)?;
        let kernel = borrow::<Kernel>(hKernel)?;
        if pGlobalWorkSize.is_null() || (pArgs.is_null() && numArgs > 0) {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        if !(1..=3).contains(&workDim) {
            return Err(UR_RESULT_ERROR_INVALID_WORK_DIMENSION);
        }
        let mut cooperative = false;
        if !launchPropList.is_null() {
            let props = &*launchPropList;
            if props.flags & UR_KERNEL_LAUNCH_FLAGS_MASK != 0 {
                return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
            }
            if !props.pNext.is_null() {
                return Err(UR_RESULT_ERROR_INVALID_OPERATION);
            }
            cooperative = props.flags & UR_KERNEL_LAUNCH_FLAG_COOPERATIVE.0 != 0;
        }
        let n = workDim as usize;
        let range = NdRange {
            offset: (!pGlobalWorkOffset.is_null())
                .then(|| std::slice::from_raw_parts(pGlobalWorkOffset, n)),
            global: std::slice::from_raw_parts(pGlobalWorkSize, n),
            local: (!pLocalWorkSize.is_null())
                .then(|| std::slice::from_raw_parts(pLocalWorkSize, n)),
        };
        let mut args = Vec::with_capacity(numArgs as usize);
        for a in slice_arg(pArgs, numArgs)? {
            if a.r#type.0 > UR_EXP_KERNEL_ARG_TYPE_SAMPLER.0 {
                return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
            }
            let arg = match a.r#type {
                UR_EXP_KERNEL_ARG_TYPE_VALUE => {
                    let p = a.value.value as *const u8;
                    if p.is_null() && a.size > 0 {
                        return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
                    }
                    Arg::Value(if a.size == 0 {
                        Vec::new()
                    } else {
                        std::slice::from_raw_parts(p, a.size).to_vec()
                    })
                }
                UR_EXP_KERNEL_ARG_TYPE_POINTER => Arg::Pointer(a.value.pointer as usize),
                UR_EXP_KERNEL_ARG_TYPE_LOCAL => Arg::Local(a.size),
                // No memory objects or samplers in this adapter.
                _ => return Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE),
            };
            args.push((a.index, arg));
        }
        let wait = wait_list(phEventWaitList, numEventsInWaitList)?;
        give_event(
            phEvent,
            q.launch(kernel, range, &args, cooperative, &wait, !phEvent.is_null())?,
        );
        Ok(())
    })
}
