//! `urProgram*`.

use super::{arc, c_str, obj};
use crate::core::context::Context;
use crate::core::device::Device;
use crate::core::program::Program;
use std::ffi::{c_char, c_void};
use std::sync::Arc;
use ur_core::boundary::{ffi_call, slice_arg, write_out};
use ur_core::handle;
use ur_core::info::InfoOut;
use ur_core::*;

/// Checks the optional creation properties (metadata is not used by
/// OpenCL runtimes).
unsafe fn check_properties(p: *const ur_program_properties_t) -> UrResult {
    if p.is_null() {
        return Ok(());
    }
    let p = &*p;
    if p.count > 0 && p.pMetadatas.is_null() {
        return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    if p.count == 0 && !p.pMetadatas.is_null() {
        return Err(UR_RESULT_ERROR_INVALID_SIZE);
    }
    Ok(())
}

pub unsafe extern "C" fn urProgramCreateWithIL(
    h_context: ur_context_handle_t,
    p_il: *const c_void,
    length: usize,
    p_properties: *const ur_program_properties_t,
    ph_program: *mut ur_program_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let ctx = arc::<Context>(h_context)?;
        if p_il.is_null() || ph_program.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        check_properties(p_properties)?;
        if length == 0 {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        let il = std::slice::from_raw_parts(p_il as *const u8, length);
        *ph_program = handle::into_handle(Program::with_il(ctx, il)?);
        Ok(())
    })
}

pub unsafe extern "C" fn urProgramCreateWithBinary(
    h_context: ur_context_handle_t,
    num_devices: u32,
    ph_devices: *mut ur_device_handle_t,
    p_lengths: *mut usize,
    pp_binaries: *mut *const u8,
    p_properties: *const ur_program_properties_t,
    ph_program: *mut ur_program_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let ctx = arc::<Context>(h_context)?;
        if ph_devices.is_null() || p_lengths.is_null() || pp_binaries.is_null() || ph_program.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        check_properties(p_properties)?;
        if num_devices == 0 {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        let devices = slice_arg(ph_devices as *const ur_device_handle_t, num_devices)?
            .iter()
            .map(|&h| Device::from_handle(h))
            .collect::<UrResult<Vec<_>>>()?;
        let lengths = slice_arg(p_lengths as *const usize, num_devices)?;
        let pointers = slice_arg(pp_binaries as *const *const u8, num_devices)?;
        let mut binaries = Vec::with_capacity(devices.len());
        for (&p, &len) in pointers.iter().zip(lengths) {
            if p.is_null() {
                return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
            }
            if len == 0 {
                return Err(UR_RESULT_ERROR_INVALID_NATIVE_BINARY);
            }
            binaries.push(std::slice::from_raw_parts(p, len));
        }
        *ph_program = handle::into_handle(Program::with_binaries(ctx, &devices, &binaries)?);
        Ok(())
    })
}

/// The program of `h_program`, which must belong to `h_context`.
unsafe fn program_in<'a>(h_context: ur_context_handle_t, h_program: ur_program_handle_t) -> UrResult<&'a Program> {
    let ctx = obj::<Context>(h_context)?;
    let program = obj::<Program>(h_program)?;
    if !std::ptr::eq(Arc::as_ptr(&program.context), ctx) {
        return Err(UR_RESULT_ERROR_INVALID_CONTEXT);
    }
    Ok(program)
}

/// The devices of an `*Exp` call, all of which must be in the program's
/// context.
unsafe fn exp_devices(program: &Program, num: u32, ph: *mut ur_device_handle_t) -> UrResult<Vec<&'static Device>> {
    if num == 0 {
        return Err(UR_RESULT_ERROR_INVALID_SIZE);
    }
    let devices = slice_arg(ph as *const ur_device_handle_t, num)?
        .iter()
        .map(|&h| Device::from_handle(h))
        .collect::<UrResult<Vec<_>>>()?;
    if devices.iter().any(|d| !program.context.has_device(d)) {
        return Err(UR_RESULT_ERROR_INVALID_DEVICE);
    }
    Ok(devices)
}

pub unsafe extern "C" fn urProgramBuild(
    h_context: ur_context_handle_t,
    h_program: ur_program_handle_t,
    p_options: *const c_char,
) -> ur_result_t {
    ffi_call(|| program_in(h_context, h_program)?.build(&[], c_str(p_options)))
}

pub unsafe extern "C" fn urProgramCompile(
    h_context: ur_context_handle_t,
    h_program: ur_program_handle_t,
    p_options: *const c_char,
) -> ur_result_t {
    ffi_call(|| program_in(h_context, h_program)?.compile(&[], c_str(p_options)))
}

pub unsafe extern "C" fn urProgramBuildExp(
    h_program: ur_program_handle_t,
    num_devices: u32,
    ph_devices: *mut ur_device_handle_t,
    flags: ur_exp_program_flags_t,
    p_options: *const c_char,
) -> ur_result_t {
    ffi_call(|| {
        let program = obj::<Program>(h_program)?;
        if flags & UR_EXP_PROGRAM_FLAGS_MASK != 0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        program.build(&exp_devices(program, num_devices, ph_devices)?, c_str(p_options))
    })
}

pub unsafe extern "C" fn urProgramCompileExp(
    h_program: ur_program_handle_t,
    num_devices: u32,
    ph_devices: *mut ur_device_handle_t,
    flags: ur_exp_program_flags_t,
    p_options: *const c_char,
) -> ur_result_t {
    ffi_call(|| {
        let program = obj::<Program>(h_program)?;
        if flags & UR_EXP_PROGRAM_FLAGS_MASK != 0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        program.compile(&exp_devices(program, num_devices, ph_devices)?, c_str(p_options))
    })
}

unsafe fn link(
    h_context: ur_context_handle_t,
    devices: &[&'static Device],
    count: u32,
    ph_programs: *const ur_program_handle_t,
    p_options: *const c_char,
    ph_program: *mut ur_program_handle_t,
) -> UrResult {
    let ctx = arc::<Context>(h_context)?;
    if ph_programs.is_null() || ph_program.is_null() {
        return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    *ph_program = std::ptr::null_mut();
    if count == 0 {
        return Err(UR_RESULT_ERROR_INVALID_SIZE);
    }
    let programs =
        slice_arg(ph_programs, count)?.iter().map(|&h| arc::<Program>(h)).collect::<UrResult<Vec<_>>>()?;
    match Program::link(&ctx, devices, &programs, c_str(p_options)) {
        Ok(p) => {
            *ph_program = handle::into_handle(p);
            Ok(())
        }
        Err((e, failed)) => {
            // A failed link may still hand back a program with the log.
            if let Some(p) = failed {
                *ph_program = handle::into_handle(p);
            }
            Err(e)
        }
    }
}

pub unsafe extern "C" fn urProgramLink(
    h_context: ur_context_handle_t,
    count: u32,
    ph_programs: *const ur_program_handle_t,
    p_options: *const c_char,
    ph_program: *mut ur_program_handle_t,
) -> ur_result_t {
    ffi_call(|| link(h_context, &[], count, ph_programs, p_options, ph_program))
}

pub unsafe extern "C" fn urProgramLinkExp(
    h_context: ur_context_handle_t,
    num_devices: u32,
    ph_devices: *mut ur_device_handle_t,
    flags: ur_exp_program_flags_t,
    count: u32,
    ph_programs: *const ur_program_handle_t,
    p_options: *const c_char,
    ph_program: *mut ur_program_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let ctx = obj::<Context>(h_context)?;
        if flags & UR_EXP_PROGRAM_FLAGS_MASK != 0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        if num_devices == 0 {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        let devices = slice_arg(ph_devices as *const ur_device_handle_t, num_devices)?
            .iter()
            .map(|&h| Device::from_handle(h))
            .collect::<UrResult<Vec<_>>>()?;
        if devices.iter().any(|d| !ctx.has_device(d)) {
            return Err(UR_RESULT_ERROR_INVALID_DEVICE);
        }
        link(h_context, &devices, count, ph_programs, p_options, ph_program)
    })
}

pub unsafe extern "C" fn urProgramRetain(h: ur_program_handle_t) -> ur_result_t {
    ffi_call(|| handle::retain::<Program>(h, &crate::DDI))
}

pub unsafe extern "C" fn urProgramRelease(h: ur_program_handle_t) -> ur_result_t {
    ffi_call(|| handle::release::<Program>(h, &crate::DDI))
}

pub unsafe extern "C" fn urProgramGetInfo(
    h: ur_program_handle_t,
    prop: ur_program_info_t,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let program = arc::<Program>(h)?;
        if prop.0 > UR_PROGRAM_INFO_KERNEL_NAMES.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let out = InfoOut::new(size, value, size_ret)?;
        if prop == UR_PROGRAM_INFO_BINARIES {
            return program.binaries(size, value, size_ret);
        }
        program.get_info(prop, out)
    })
}

pub unsafe extern "C" fn urProgramGetBuildInfo(
    h: ur_program_handle_t,
    h_device: ur_device_handle_t,
    prop: ur_program_build_info_t,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let program = obj::<Program>(h)?;
        let device = Device::from_handle(h_device)?;
        if prop.0 > UR_PROGRAM_BUILD_INFO_BINARY_TYPE.0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        program.get_build_info(device, prop, InfoOut::new(size, value, size_ret)?)
    })
}

pub unsafe extern "C" fn urProgramSetSpecializationConstants(
    h: ur_program_handle_t,
    count: u32,
    p_constants: *const ur_specialization_constant_info_t,
) -> ur_result_t {
    ffi_call(|| {
        let program = obj::<Program>(h)?;
        if p_constants.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        if count == 0 {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        for c in slice_arg(p_constants, count)? {
            program.set_specialization_constant(c.id, c.size, c.pValue)?;
        }
        Ok(())
    })
}

pub unsafe extern "C" fn urProgramGetNativeHandle(h: ur_program_handle_t, ph_native: *mut ur_native_handle_t) -> ur_result_t {
    ffi_call(|| write_out(ph_native, obj::<Program>(h)?.cl.get() as ur_native_handle_t))
}

/// A program over the user's `cl_program`, in whatever state the user left
/// it (a program built by `clBuildProgram` makes kernels at once; one only
/// created can be built with `urProgramBuild`).
pub unsafe extern "C" fn urProgramCreateWithNativeHandle(
    h_native: ur_native_handle_t,
    h_context: ur_context_handle_t,
    p_properties: *const ur_program_native_properties_t,
    ph_program: *mut ur_program_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let ctx = arc::<Context>(h_context)?;
        let (ownership, _) = ur_core::boundary::native_args(h_native, false, p_properties, ph_program)?;
        let program = Program::from_native(ctx, h_native as cl3::ext::cl_program, ownership)?;
        *ph_program = handle::into_handle(program);
        Ok(())
    })
}
