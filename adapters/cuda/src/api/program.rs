//! `urProgram*`: programs from PTX or cubin images.

use super::{arc, borrow, str_arg};
use crate::core::context::Context;
use crate::core::device::Device;
use crate::core::program::Program;
use std::ffi::c_void;
use ur_core::boundary::{ffi_call, slice_arg, write_optional, write_out};
use ur_core::handle;
use ur_core::info::InfoOut;
use ur_core::*;

pub unsafe extern "C" fn urProgramCreateWithBinary(
    hContext: ur_context_handle_t,
    numDevices: u32,
    phDevices: *mut ur_device_handle_t,
    pLengths: *mut usize,
    ppBinaries: *mut *const u8,
    pProperties: *const ur_program_properties_t,
    phProgram: *mut ur_program_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let context = arc::<Context>(hContext)?;
        if phDevices.is_null() || pLengths.is_null() || ppBinaries.is_null() || phProgram.is_null()
        {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        if !pProperties.is_null() {
            let p = &*pProperties;
            if p.count > 0 && p.pMetadatas.is_null() {
                return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
            }
            if p.count == 0 && !p.pMetadatas.is_null() {
                return Err(UR_RESULT_ERROR_INVALID_SIZE);
            }
        }
        if numDevices == 0 {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        let devices = slice_arg(phDevices as *const ur_device_handle_t, numDevices)?;
        let lengths = slice_arg(pLengths as *const usize, numDevices)?;
        let binaries = slice_arg(ppBinaries as *const *const u8, numDevices)?;
        let mut images = Vec::with_capacity(devices.len());
        for ((&d, &len), &bin) in devices.iter().zip(lengths).zip(binaries) {
            let device = arc::<Device>(d)?;
            if bin.is_null() {
                return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
            }
            if len == 0 {
                return Err(UR_RESULT_ERROR_INVALID_SIZE);
            }
            images.push((device, std::slice::from_raw_parts(bin, len).to_vec()));
        }
        *phProgram = handle::into_handle(Program::with_binaries(context, images)?);
        Ok(())
    })
}

unsafe fn options<'a>(p: *const core::ffi::c_char) -> UrResult<&'a str> {
    if p.is_null() {
        Ok("")
    } else {
        str_arg(p)
    }
}

pub unsafe extern "C" fn urProgramBuild(
    hContext: ur_context_handle_t,
    hProgram: ur_program_handle_t,
    pOptions: *const core::ffi::c_char,
) -> ur_result_t {
    ffi_call(|| {
        let context = borrow::<Context>(hContext)?;
        let program = borrow::<Program>(hProgram)?;
        if !std::ptr::eq(&*program.context, context) {
            return Err(UR_RESULT_ERROR_INVALID_CONTEXT);
        }
        program.build(options(pOptions)?)
    })
}

pub unsafe extern "C" fn urProgramBuildExp(
    hProgram: ur_program_handle_t,
    numDevices: u32,
    phDevices: *mut ur_device_handle_t,
    _flags: ur_exp_program_flags_t,
    pOptions: *const core::ffi::c_char,
) -> ur_result_t {
    ffi_call(|| {
        let program = borrow::<Program>(hProgram)?;
        for &d in slice_arg(phDevices as *const ur_device_handle_t, numDevices)? {
            let device = borrow::<Device>(d)?;
            if !program
                .images
                .iter()
                .any(|im| std::ptr::eq(&*im.device, device))
            {
                return Err(UR_RESULT_ERROR_INVALID_DEVICE);
            }
        }
        program.build(options(pOptions)?)
    })
}

pub unsafe extern "C" fn urProgramRetain(hProgram: ur_program_handle_t) -> ur_result_t {
    ffi_call(|| handle::retain::<Program>(hProgram, &crate::DDI))
}

pub unsafe extern "C" fn urProgramRelease(hProgram: ur_program_handle_t) -> ur_result_t {
    ffi_call(|| handle::release::<Program>(hProgram, &crate::DDI))
}

pub unsafe extern "C" fn urProgramGetInfo(
    hProgram: ur_program_handle_t,
    propName: ur_program_info_t,
    propSize: usize,
    pPropValue: *mut c_void,
    pPropSizeRet: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let program = borrow::<Program>(hProgram)?;
        if propName.0 > UR_PROGRAM_INFO_KERNEL_NAMES.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let out = InfoOut::new(propSize, pPropValue, pPropSizeRet)?;
        let n = program.images.len();
        let buffers = if propName == UR_PROGRAM_INFO_BINARIES && !pPropValue.is_null() {
            if propSize < n * std::mem::size_of::<*mut u8>() {
                return Err(UR_RESULT_ERROR_INVALID_SIZE);
            }
            Some(std::slice::from_raw_parts(pPropValue as *const *mut u8, n))
        } else {
            None
        };
        program.info(propName, out, buffers)
    })
}

pub unsafe extern "C" fn urProgramGetBuildInfo(
    hProgram: ur_program_handle_t,
    hDevice: ur_device_handle_t,
    propName: ur_program_build_info_t,
    propSize: usize,
    pPropValue: *mut c_void,
    pPropSizeRet: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let program = borrow::<Program>(hProgram)?;
        let device = borrow::<Device>(hDevice)?;
        if propName.0 > UR_PROGRAM_BUILD_INFO_BINARY_TYPE.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        program.build_info(
            device,
            propName,
            InfoOut::new(propSize, pPropValue, pPropSizeRet)?,
        )
    })
}

pub unsafe extern "C" fn urProgramGetGlobalVariablePointer(
    hDevice: ur_device_handle_t,
    hProgram: ur_program_handle_t,
    pGlobalVariableName: *const core::ffi::c_char,
    pGlobalVariableSizeRet: *mut usize,
    ppGlobalVariablePointerRet: *mut *mut c_void,
) -> ur_result_t {
    ffi_call(|| {
        let device = borrow::<Device>(hDevice)?;
        let program = borrow::<Program>(hProgram)?;
        if pGlobalVariableName.is_null() || ppGlobalVariablePointerRet.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        let name = std::ffi::CStr::from_ptr(pGlobalVariableName);
        let (ptr, size) = program.global_variable(device, name)?;
        write_optional(pGlobalVariableSizeRet, size);
        write_out(ppGlobalVariablePointerRet, ptr as *mut c_void)
    })
}

pub unsafe extern "C" fn urProgramGetNativeHandle(
    hProgram: ur_program_handle_t,
    phNativeProgram: *mut ur_native_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let program = borrow::<Program>(hProgram)?;
        let first = program
            .images
            .first()
            .ok_or(UR_RESULT_ERROR_INVALID_PROGRAM)?;
        let module = program.module_for(&first.device)?;
        write_out(phNativeProgram, module.raw() as ur_native_handle_t)
    })
}

pub unsafe extern "C" fn urProgramCreateWithNativeHandle(
    hNativeProgram: ur_native_handle_t,
    hContext: ur_context_handle_t,
    pProperties: *const ur_program_native_properties_t,
    phProgram: *mut ur_program_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let context = arc::<Context>(hContext)?;
        let (ownership, _) =
            ur_core::boundary::native_args(hNativeProgram, false, pProperties, phProgram)?;
        let program = Program::from_native(
            context,
            hNativeProgram as crate::driver::CUmodule,
            ownership,
        )?;
        *phProgram = handle::into_handle(program);
        Ok(())
    })
}
