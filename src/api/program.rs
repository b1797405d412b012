//! `urProgram*`.

use super::obj;
use crate::abi::*;
use crate::device::Device;
use crate::context::Context;
use crate::boundary::{ffi_call, non_null, slice_arg, write_optional, write_out};
use crate::hal::Backend;
use crate::program::{Program, RawProgram};
use crate::handle;
use crate::UrResult;
use core::ffi::{c_char, c_void, CStr};

/// Optional build options; null reads as none.
///
/// # Safety
/// `s` is null or NUL-terminated.
unsafe fn options<'a>(s: *const c_char) -> &'a CStr {
    if s.is_null() {
        c""
    } else {
        CStr::from_ptr(s)
    }
}

/// The creation properties: metadata is read by no backend here, but its
/// array must be consistent with its count.
///
/// # Safety
/// `p` is null or readable.
unsafe fn check_properties(p: *const ur_program_properties_t) -> UrResult {
    let Some(p) = p.as_ref() else { return Ok(()) };
    if p.count > 0 && p.pMetadatas.is_null() {
        return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    if p.count == 0 && !p.pMetadatas.is_null() {
        return Err(UR_RESULT_ERROR_INVALID_SIZE);
    }
    Ok(())
}

/// Devices named by a program call: at least one, each of `context`.
///
/// # Safety
/// `list` points at `count` handles when `count > 0`.
unsafe fn devices_in<'a, B: Backend>(
    context: &Context<B>,
    count: u32,
    list: *const ur_device_handle_t,
) -> UrResult<Vec<&'a Device<B>>> {
    if count == 0 {
        return Err(UR_RESULT_ERROR_INVALID_SIZE);
    }
    let devices = slice_arg(list, count)?.iter().map(|&h| obj::<B, Device<B>>(h)).collect::<UrResult<Vec<_>>>()?;
    if devices.iter().any(|d| !context.has_device(d)) {
        return Err(UR_RESULT_ERROR_INVALID_DEVICE);
    }
    Ok(devices)
}

fn check_exp_flags(flags: ur_exp_program_flags_t) -> UrResult {
    if flags & UR_EXP_PROGRAM_FLAGS_MASK != 0 {
        return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
    }
    Ok(())
}

pub(super) unsafe extern "C" fn create_with_il<B: Backend>(
    context: ur_context_handle_t,
    il: *const c_void,
    length: usize,
    properties: *const ur_program_properties_t,
    out: *mut ur_program_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let context = obj::<B, Context<B>>(context)?;
        non_null(il)?;
        non_null(out)?;
        check_properties(properties)?;
        if length == 0 {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        let il = std::slice::from_raw_parts(il as *const u8, length);
        write_out(out, handle::into_handle(B::RawProgram::create_with_il(context, il)?))
    })
}

pub(super) unsafe extern "C" fn create_with_binary<B: Backend>(
    context: ur_context_handle_t,
    count: u32,
    devices: *mut ur_device_handle_t,
    lengths: *mut usize,
    binaries: *mut *const u8,
    properties: *const ur_program_properties_t,
    out: *mut ur_program_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let context = obj::<B, Context<B>>(context)?;
        non_null(devices)?;
        non_null(lengths)?;
        non_null(binaries)?;
        non_null(out)?;
        check_properties(properties)?;
        let devices = devices_in::<B>(context, count, devices)?;
        let lengths = slice_arg(lengths as *const usize, count)?;
        let pointers = slice_arg(binaries as *const *const u8, count)?;
        let mut images = Vec::with_capacity(devices.len());
        for ((&device, &len), &p) in devices.iter().zip(lengths).zip(pointers) {
            non_null(p)?;
            if len == 0 {
                return Err(UR_RESULT_ERROR_INVALID_NATIVE_BINARY);
            }
            images.push((device, std::slice::from_raw_parts(p, len)));
        }
        write_out(out, handle::into_handle(B::RawProgram::create_with_binary(context, &images)?))
    })
}

/// The program of a call that names its context too, which must match.
///
/// # Safety
/// Handles are null or readable.
unsafe fn program_in<'a, B: Backend>(
    context: ur_context_handle_t,
    program: ur_program_handle_t,
) -> UrResult<&'a Program<B>> {
    let context = obj::<B, Context<B>>(context)?;
    let program = obj::<B, Program<B>>(program)?;
    if !std::ptr::eq(&*program.context, context) {
        return Err(UR_RESULT_ERROR_INVALID_CONTEXT);
    }
    Ok(program)
}

pub(super) unsafe extern "C" fn build<B: Backend>(
    context: ur_context_handle_t,
    program: ur_program_handle_t,
    opts: *const c_char,
) -> ur_result_t {
    ffi_call(|| program_in::<B>(context, program)?.build(&[], options(opts)))
}

pub(super) unsafe extern "C" fn compile<B: Backend>(
    context: ur_context_handle_t,
    program: ur_program_handle_t,
    opts: *const c_char,
) -> ur_result_t {
    ffi_call(|| program_in::<B>(context, program)?.compile(&[], options(opts)))
}

/// The devices of a `*Exp` call, each of which the program must hold.
///
/// # Safety
/// As for [`devices_in`].
unsafe fn exp_devices<'a, B: Backend>(
    program: &Program<B>,
    count: u32,
    list: *const ur_device_handle_t,
) -> UrResult<Vec<&'a Device<B>>> {
    let devices = devices_in::<B>(&*program.context, count, list)?;
    if devices.iter().any(|d| !program.has_device(d)) {
        return Err(UR_RESULT_ERROR_INVALID_DEVICE);
    }
    Ok(devices)
}

/// `urProgramBuildExp` and `urProgramCompileExp`: the same checks, then
/// the backend's `$action` for the devices named.
macro_rules! exp_entry {
    ($name:ident, $action:ident) => {
        pub(super) unsafe extern "C" fn $name<B: Backend>(
            program: ur_program_handle_t,
            count: u32,
            devices: *mut ur_device_handle_t,
            flags: ur_exp_program_flags_t,
            opts: *const c_char,
        ) -> ur_result_t {
            ffi_call(|| {
                let program = obj::<B, Program<B>>(program)?;
                non_null(devices)?;
                check_exp_flags(flags)?;
                program.$action(&exp_devices::<B>(program, count, devices)?, options(opts))
            })
        }
    };
}

exp_entry!(build_exp, build);
exp_entry!(compile_exp, compile);

/// # Safety
/// The arguments of a link call.
unsafe fn link_common<B: Backend>(
    context: &Context<B>,
    devices: &[&Device<B>],
    count: u32,
    programs: *const ur_program_handle_t,
    opts: *const c_char,
    out: *mut ur_program_handle_t,
) -> UrResult {
    non_null(programs)?;
    non_null(out)?;
    out.write(std::ptr::null_mut());
    if count == 0 {
        return Err(UR_RESULT_ERROR_INVALID_SIZE);
    }
    let programs =
        slice_arg(programs, count)?.iter().map(|&h| obj::<B, Program<B>>(h)).collect::<UrResult<Vec<_>>>()?;
    match B::RawProgram::link(context, devices, &programs, options(opts)) {
        Ok(p) => {
            out.write(handle::into_handle(p));
            Ok(())
        }
        Err((code, log_holder)) => {
            if let Some(p) = log_holder {
                out.write(handle::into_handle(p));
            }
            Err(code)
        }
    }
}

pub(super) unsafe extern "C" fn link<B: Backend>(
    context: ur_context_handle_t,
    count: u32,
    programs: *const ur_program_handle_t,
    opts: *const c_char,
    out: *mut ur_program_handle_t,
) -> ur_result_t {
    ffi_call(|| link_common::<B>(obj::<B, Context<B>>(context)?, &[], count, programs, opts, out))
}

pub(super) unsafe extern "C" fn link_exp<B: Backend>(
    context: ur_context_handle_t,
    num_devices: u32,
    devices: *mut ur_device_handle_t,
    flags: ur_exp_program_flags_t,
    count: u32,
    programs: *const ur_program_handle_t,
    opts: *const c_char,
    out: *mut ur_program_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let context = obj::<B, Context<B>>(context)?;
        non_null(devices)?;
        check_exp_flags(flags)?;
        let devices = devices_in::<B>(context, num_devices, devices)?;
        link_common::<B>(context, &devices, count, programs, opts, out)
    })
}

super::info_entry!(Program<B>, ur_program_handle_t, ur_program_info_t, UR_PROGRAM_INFO_KERNEL_NAMES, |program, prop, out| {
    match prop {
        UR_PROGRAM_INFO_REFERENCE_COUNT => out.value(handle::ref_count_of(program)),
        UR_PROGRAM_INFO_CONTEXT => out.value(handle::handle_of(&*program.context)),
        // SAFETY: the caller sized each buffer from BINARY_SIZES.
        UR_PROGRAM_INFO_BINARIES => unsafe { out.binaries(&program.binaries()?) },
        _ => program.info(prop, out),
    }
});

super::device_query_entry!(get_build_info, Program<B>, ur_program_handle_t, ur_program_build_info_t, UR_PROGRAM_BUILD_INFO_BINARY_TYPE, build_info);

pub(super) unsafe extern "C" fn set_specialization_constants<B: Backend>(
    h: ur_program_handle_t,
    count: u32,
    constants: *const ur_specialization_constant_info_t,
) -> ur_result_t {
    ffi_call(|| {
        let program = obj::<B, Program<B>>(h)?;
        non_null(constants)?;
        if count == 0 {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        let constants = slice_arg(constants, count)?;
        if constants.iter().any(|c| c.pValue.is_null()) {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        program.set_specialization_constants(constants)
    })
}

pub(super) unsafe extern "C" fn get_global_variable_pointer<B: Backend>(
    device: ur_device_handle_t,
    h: ur_program_handle_t,
    name: *const c_char,
    size_ret: *mut usize,
    out: *mut *mut c_void,
) -> ur_result_t {
    ffi_call(|| {
        let device = obj::<B, Device<B>>(device)?;
        let program = obj::<B, Program<B>>(h)?;
        non_null(name)?;
        non_null(out)?;
        let (ptr, size) = program.global_variable(device, CStr::from_ptr(name))?;
        write_optional(size_ret, size);
        write_out(out, ptr)
    })
}

super::native_handle_entry!(Program<B>, ur_program_handle_t);

super::native_in_context_entry!(Program<B>, ur_program_native_properties_t, ur_program_handle_t);
