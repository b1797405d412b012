//! urProgram*: programs of the suite's kernels, built, compiled and linked,
//! queried, and rebuilt from their own binaries.
//!
//! The kernels come in the forms a device may take: SPIR-V compiled at run
//! time from the OpenCL C of `conformance/kernels/` with clang and
//! llvm-spirv, a SPIR 1.2 binary from the same source, and hand-written PTX
//! of the same kernels. Which one a device takes is probed, never read from
//! its backend: `urDeviceSelectBinary` picks among the images the suite
//! carries (`spir64`, `nvptx64`), and creating the program says whether the
//! adapter serves that form (UNSUPPORTED_FEATURE otherwise). A device that
//! selects none of them, or whose adapter refuses the form it selected,
//! skips the program cases with that reason. A SPIR-V device without an IL
//! compiler must answer COMPILER_NOT_AVAILABLE; the build cases then use the
//! SPIR binary where the device takes one (`cl_khr_spir`).

use crate::harness::*;
use crate::names::result_name;
use crate::ur::{info_bytes, info_string, info_value};
use crate::{check, check_eq, expect_result, expect_success, info, skip};
use std::ffi::c_void;
use std::process::Command;
use std::ptr::{null, null_mut};
use std::sync::OnceLock;
use ur_core::abi::*;

pub const CASES: &[Case] = &[
    Case::device("urProgramCreateWithIL.spirv", create_with_il),
    Case::device("urProgramCreateWithIL.invalid_binary", create_with_il_invalid),
    Case::device("urProgramCreateWithIL.null_pointers", create_with_il_null),
    Case::device("urProgramCreateWithIL.zero_length", create_with_il_zero),
    Case::device("urProgramBuild.and_query", build_and_query),
    Case::device("urProgramBuild.null_program", build_null),
    Case::device("urProgramCompile.then_link", compile_then_link),
    Case::device("urProgramLink.zero_count", link_zero_count),
    Case::device("urProgramCreateWithBinary.from_own_binaries", create_with_binary),
    Case::device("urProgramCreateWithBinary.invalid_binary", create_with_binary_invalid),
    Case::device("urProgramRetain.reference_count", retain_release),
    Case::device("urProgramGetInfo.invalid_enumeration", info_bad_enum),
];

/// The OpenCL C source of every kernel the cases run.
pub const KERNEL_SOURCE: &str = include_str!("../../kernels/usm_kernels.cl");
/// Kernels defined in [`KERNEL_SOURCE`].
pub const KERNEL_NAMES: [&str; 2] = ["fill_index", "scale_add"];


/// A tool from `var`, else the first of `names` found on PATH.
fn tool(var: &str, names: &[&str]) -> Result<String, String> {
    if let Ok(t) = std::env::var(var) {
        return Ok(t);
    }
    for name in names {
        if Command::new(name).arg("--version").output().is_ok_and(|o| o.status.success()) {
            return Ok(name.to_string());
        }
    }
    Err(format!(
        "none of {} is installed (scripts/install_opencl.sh installs them; {var} names another)",
        names.join(", ")
    ))
}

fn run(command: &mut Command) -> Result<(), String> {
    let out = command.output().map_err(|e| format!("{command:?}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("{command:?} failed: {}", String::from_utf8_lossy(&out.stderr).trim()))
    }
}

/// Compiles [`KERNEL_SOURCE`] once per process: LLVM bitcode for the
/// `spir64` target (a SPIR binary), and SPIR-V translated from it.
fn compiled() -> &'static Result<(Vec<u8>, Vec<u8>), String> {
    static COMPILED: OnceLock<Result<(Vec<u8>, Vec<u8>), String>> = OnceLock::new();
    COMPILED.get_or_init(|| {
        let clang = tool("UR_CONFORMANCE_CLANG", &["clang-14", "clang"])?;
        let llvm_spirv = tool("UR_CONFORMANCE_LLVM_SPIRV", &["llvm-spirv-14", "llvm-spirv"])?;
        let dir = std::env::temp_dir().join(format!("ur_conformance_kernels_{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let (cl, bc, spv) = (dir.join("kernels.cl"), dir.join("kernels.bc"), dir.join("kernels.spv"));
        std::fs::write(&cl, KERNEL_SOURCE).map_err(|e| format!("{}: {e}", cl.display()))?;
        let result = (|| {
            run(Command::new(&clang)
                .args(["-c", "-target", "spir64", "-cl-std=CL1.2", "-Xclang", "-finclude-default-header"])
                .args(["-O0", "-emit-llvm", "-o"])
                .arg(&bc)
                .arg(&cl))?;
            run(Command::new(&llvm_spirv).arg(&bc).arg("-o").arg(&spv))?;
            let read = |p: &std::path::Path| std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()));
            Ok((read(&bc)?, read(&spv)?))
        })();
        let _ = std::fs::remove_dir_all(&dir);
        result
    })
}

/// The kernels as SPIR-V. Failing to compile them fails the case: the tools
/// are part of the test setup.
pub fn spirv() -> Result<&'static [u8], Outcome> {
    compiled().as_ref().map(|(_, spv)| spv.as_slice()).map_err(|e| Outcome::Fail(e.clone()))
}

/// The kernels as a SPIR 1.2 binary (LLVM bitcode for `spir64`).
pub fn spir() -> Result<&'static [u8], Outcome> {
    compiled().as_ref().map(|(bc, _)| bc.as_slice()).map_err(|e| Outcome::Fail(e.clone()))
}

/// The suite's kernels in PTX, for devices that select `nvptx64` images.
pub const KERNEL_PTX: &str = include_str!("../../kernels/usm_kernels.ptx");

/// The images the suite carries, by `pDeviceTargetSpec`: `spir64` stands for
/// SPIR-V (and the SPIR binary of the same source), `nvptx64` for PTX.
pub const IMAGE_TARGETS: [&str; 2] = ["spir64", "nvptx64"];

/// Which of `targets` the device picks with `urDeviceSelectBinary`, or
/// `None` where it answers INVALID_BINARY (no image fits it).
pub unsafe fn selected_target(fx: &DeviceFx, targets: &[&'static str]) -> Result<Option<&'static str>, Outcome> {
    let names: Vec<std::ffi::CString> = targets.iter().map(|t| std::ffi::CString::new(*t).unwrap()).collect();
    let binaries: Vec<ur_device_binary_t> = names
        .iter()
        .map(|t| ur_device_binary_t { stype: UR_STRUCTURE_TYPE_DEVICE_BINARY, pNext: null(), pDeviceTargetSpec: t.as_ptr() })
        .collect();
    let mut selected = u32::MAX;
    match fx.api.urDeviceSelectBinary(fx.device, binaries.as_ptr(), binaries.len() as u32, &mut selected)? {
        UR_RESULT_SUCCESS => {
            check!((selected as usize) < targets.len(), "urDeviceSelectBinary selected {selected} of {}", targets.len());
            Ok(Some(targets[selected as usize]))
        }
        UR_RESULT_ERROR_INVALID_BINARY => Ok(None),
        code => Err(format!("urDeviceSelectBinary({targets:?}) returned {}", result_name(code)).into()),
    }
}

/// Whether the device runs SPIR images (it selects `spir64`), which is
/// where urProgramCreateWithIL of SPIR-V is served.
pub unsafe fn runs_spir(fx: &DeviceFx) -> Result<bool, Outcome> {
    Ok(selected_target(fx, &["spir64"])?.is_some())
}

/// Skips a case that feeds SPIR-V to a device that runs no SPIR images.
pub unsafe fn require_spir(fx: &DeviceFx) -> CaseResult {
    if !runs_spir(fx)? {
        skip!("the device selects no spir64 image (urDeviceSelectBinary), so it takes no SPIR-V");
    }
    Ok(())
}

/// Whether the device compiles IL, from `UR_DEVICE_INFO_IL_VERSION`.
pub unsafe fn takes_il(fx: &DeviceFx) -> Result<bool, Outcome> {
    Ok(!fx.api.device_info_string(fx.device, UR_DEVICE_INFO_IL_VERSION)?.is_empty())
}

/// The form of the suite's kernels a device takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelForm {
    /// SPIR-V through urProgramCreateWithIL.
    SpirV,
    /// SPIR 1.2 bitcode through urProgramCreateWithBinary, built with
    /// `-x spir` (an OpenCL device with `cl_khr_spir` and no IL compiler).
    Spir,
    /// PTX through urProgramCreateWithBinary.
    Ptx,
}

impl KernelForm {
    /// The options its build needs.
    pub fn build_options(self) -> &'static std::ffi::CStr {
        match self {
            KernelForm::Spir => c"-x spir -spir-std=1.2",
            KernelForm::SpirV | KernelForm::Ptx => c"",
        }
    }
}

pub fn own_program(fx: &DeviceFx, program: ur_program_handle_t) -> OwnedProgram {
    Owned::new(program, fx.api.fns.urProgramRelease)
}

unsafe fn program_from_binary(fx: &DeviceFx, image: &[u8]) -> Result<(ur_result_t, ur_program_handle_t), Outcome> {
    let (mut device, mut length, mut binary) = (fx.device, image.len(), image.as_ptr());
    let mut program = null_mut();
    let code = fx.api.urProgramCreateWithBinary(fx.context, 1, &mut device, &mut length, &mut binary, null(), &mut program)?;
    Ok((code, program))
}

/// The suite's kernels as an unbuilt program in the form the device takes,
/// probed: the image `urDeviceSelectBinary` picks, then the program made
/// from it. Skips, naming why, where the device selects no image of the
/// suite's or its adapter answers UNSUPPORTED_FEATURE for the form.
pub unsafe fn kernel_program(fx: &DeviceFx) -> Result<(OwnedProgram, KernelForm), Outcome> {
    let Some(target) = selected_target(fx, &IMAGE_TARGETS)? else {
        skip!("the device selects none of the suite's kernel images {IMAGE_TARGETS:?} (urDeviceSelectBinary answers INVALID_BINARY)");
    };
    let (form, code, program, call) = if target == "nvptx64" {
        let (code, program) = program_from_binary(fx, KERNEL_PTX.as_bytes())?;
        (KernelForm::Ptx, code, program, "urProgramCreateWithBinary(PTX)")
    } else if takes_il(fx)? {
        let il = spirv()?;
        let mut program = null_mut();
        let code = fx.api.urProgramCreateWithIL(fx.context, il.as_ptr().cast(), il.len(), null(), &mut program)?;
        (KernelForm::SpirV, code, program, "urProgramCreateWithIL(SPIR-V)")
    } else {
        let extensions = fx.api.device_info_string(fx.device, UR_DEVICE_INFO_EXTENSIONS)?;
        if !extensions.split_whitespace().any(|e| e == "cl_khr_spir") {
            skip!("the device selects spir64 images but takes neither IL (its IL_VERSION is empty) nor SPIR binaries (no cl_khr_spir)");
        }
        let (code, program) = program_from_binary(fx, spir()?)?;
        (KernelForm::Spir, code, program, "urProgramCreateWithBinary(SPIR)")
    };
    match code {
        UR_RESULT_SUCCESS => {
            check!(!program.is_null(), "{call} succeeded with a null program");
            Ok((own_program(fx, program), form))
        }
        UR_RESULT_ERROR_UNSUPPORTED_FEATURE => {
            skip!("the device selects {target} images, but {call} answers UNSUPPORTED_FEATURE")
        }
        code => Err(format!("{call} returned {}", result_name(code)).into()),
    }
}

/// The kernels, built.
pub unsafe fn built_program(fx: &DeviceFx) -> Result<OwnedProgram, Outcome> {
    Ok(built_program_form(fx)?.0)
}

/// The kernels, built, and the form they were made from.
pub unsafe fn built_program_form(fx: &DeviceFx) -> Result<(OwnedProgram, KernelForm), Outcome> {
    let (program, form) = kernel_program(fx)?;
    let code = fx.api.urProgramBuild(fx.context, program.get(), form.build_options().as_ptr())?;
    if code != UR_RESULT_SUCCESS {
        let log = build_info_string(fx, program.get(), UR_PROGRAM_BUILD_INFO_LOG).unwrap_or_default();
        return Err(format!("urProgramBuild returned {}; log: {log}", result_name(code)).into());
    }
    Ok((program, form))
}

unsafe fn program_info<T: Copy>(fx: &DeviceFx, program: ur_program_handle_t, prop: ur_program_info_t) -> Result<T, Outcome> {
    Ok(info_value(fx.api.fns.urProgramGetInfo, "urProgramGetInfo", program, prop)?)
}

unsafe fn build_info<T: Copy>(fx: &DeviceFx, program: ur_program_handle_t, prop: ur_program_build_info_t) -> Result<T, Outcome> {
    let mut value = std::mem::MaybeUninit::<T>::zeroed();
    expect_success!(fx.api.urProgramGetBuildInfo(
        program,
        fx.device,
        prop,
        size_of::<T>(),
        value.as_mut_ptr().cast(),
        null_mut()
    ));
    Ok(value.assume_init())
}

unsafe fn build_info_string(fx: &DeviceFx, program: ur_program_handle_t, prop: ur_program_build_info_t) -> Result<String, Outcome> {
    let mut size = 0usize;
    expect_success!(fx.api.urProgramGetBuildInfo(program, fx.device, prop, 0, null_mut(), &mut size));
    let mut bytes = vec![0u8; size];
    expect_success!(fx.api.urProgramGetBuildInfo(program, fx.device, prop, size, bytes.as_mut_ptr().cast(), null_mut()));
    check!(bytes.last() == Some(&0), "build info {prop:?} is not null-terminated");
    Ok(String::from_utf8_lossy(&bytes[..size - 1]).into_owned())
}

/// The five-word header of an empty SPIR-V 1.0 module: enough for a
/// device without SPIR-V, which must refuse any module.
const EMPTY_MODULE: [u32; 5] = [0x0723_0203, 0x0001_0000, 0, 1, 0];

/// The suite's SPIR-V where the device runs SPIR images; elsewhere an empty
/// module, so that no compiler is needed to check the refusal.
unsafe fn module_for(fx: &DeviceFx) -> Result<&'static [u8], Outcome> {
    if runs_spir(fx)? {
        spirv()
    } else {
        Ok(std::slice::from_raw_parts(EMPTY_MODULE.as_ptr().cast::<u8>(), size_of_val(&EMPTY_MODULE)))
    }
}

/// What urProgramCreateWithIL must answer, from what the device says of
/// itself: UNSUPPORTED_FEATURE where it selects no SPIR image,
/// COMPILER_NOT_AVAILABLE where it does but reports no IL version, else
/// `compiled`.
unsafe fn il_expectation(fx: &DeviceFx, compiled: ur_result_t) -> Result<ur_result_t, Outcome> {
    Ok(if !runs_spir(fx)? {
        UR_RESULT_ERROR_UNSUPPORTED_FEATURE
    } else if takes_il(fx)? {
        compiled
    } else {
        UR_RESULT_ERROR_COMPILER_NOT_AVAILABLE
    })
}

unsafe fn create_with_il(fx: &DeviceFx) -> CaseResult {
    let il = module_for(fx)?;
    let mut program = null_mut();
    let code = fx.api.urProgramCreateWithIL(fx.context, il.as_ptr().cast(), il.len(), null(), &mut program)?;
    let expected = il_expectation(fx, UR_RESULT_SUCCESS)?;
    if code == UR_RESULT_SUCCESS {
        check!(!program.is_null(), "urProgramCreateWithIL succeeded with a null program");
        let program = own_program(fx, program);
        check_eq!(program.release()?, UR_RESULT_SUCCESS);
    }
    expect_code(expected, code, "urProgramCreateWithIL(SPIR-V of usm_kernels.cl)")
}

unsafe fn create_with_il_invalid(fx: &DeviceFx) -> CaseResult {
    let not_spirv = b"this is not a SPIR-V module, only some text of the right length.";
    let mut program = null_mut();
    let code = fx.api.urProgramCreateWithIL(fx.context, not_spirv.as_ptr().cast(), not_spirv.len(), null(), &mut program)?;
    if code == UR_RESULT_SUCCESS {
        let _ = own_program(fx, program);
    }
    let expected = il_expectation(fx, UR_RESULT_ERROR_INVALID_BINARY)?;
    expect_code(expected, code, "urProgramCreateWithIL(text)")
}

/// Runs on every device: an adapter without SPIR-V still checks pointers
/// before it answers UNSUPPORTED_FEATURE (spec/README.md).
unsafe fn create_with_il_null(fx: &DeviceFx) -> CaseResult {
    let il = module_for(fx)?;
    let mut program = null_mut();
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_POINTER,
        fx.api.urProgramCreateWithIL(fx.context, null(), il.len(), null(), &mut program)
    );
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_POINTER,
        fx.api.urProgramCreateWithIL(fx.context, il.as_ptr().cast(), il.len(), null(), null_mut())
    );
    Ok(())
}

unsafe fn create_with_il_zero(fx: &DeviceFx) -> CaseResult {
    require_spir(fx)?;
    let il = spirv()?;
    let mut program = null_mut();
    expect_result!(
        UR_RESULT_ERROR_INVALID_SIZE,
        fx.api.urProgramCreateWithIL(fx.context, il.as_ptr().cast(), 0, null(), &mut program)
    );
    Ok(())
}

unsafe fn build_and_query(fx: &DeviceFx) -> CaseResult {
    let (program, form) = built_program_form(fx)?;
    let p = program.get();
    check_eq!(build_info::<ur_program_build_status_t>(fx, p, UR_PROGRAM_BUILD_INFO_STATUS)?, UR_PROGRAM_BUILD_STATUS_SUCCESS);
    check_eq!(
        build_info::<ur_program_binary_type_t>(fx, p, UR_PROGRAM_BUILD_INFO_BINARY_TYPE)?,
        UR_PROGRAM_BINARY_TYPE_EXECUTABLE
    );
    build_info_string(fx, p, UR_PROGRAM_BUILD_INFO_LOG)?;
    check_eq!(program_info::<u32>(fx, p, UR_PROGRAM_INFO_NUM_DEVICES)?, 1);
    check_eq!(program_info::<ur_device_handle_t>(fx, p, UR_PROGRAM_INFO_DEVICES)?, fx.device);
    check_eq!(program_info::<ur_context_handle_t>(fx, p, UR_PROGRAM_INFO_CONTEXT)?, fx.context);
    check_eq!(program_info::<u32>(fx, p, UR_PROGRAM_INFO_REFERENCE_COUNT)?, 1);
    check_eq!(program_info::<usize>(fx, p, UR_PROGRAM_INFO_NUM_KERNELS)?, KERNEL_NAMES.len());
    let names = info_string(fx.api.fns.urProgramGetInfo, "urProgramGetInfo", p, UR_PROGRAM_INFO_KERNEL_NAMES)?;
    for k in KERNEL_NAMES {
        check!(names.split(';').any(|n| n == k), "KERNEL_NAMES {names:?} lacks {k}");
    }
    if form == KernelForm::SpirV {
        let il = info_bytes(fx.api.fns.urProgramGetInfo, "urProgramGetInfo", p, UR_PROGRAM_INFO_IL)?;
        check!(il == spirv()?, "UR_PROGRAM_INFO_IL is not the module the program was made from");
    }
    Ok(())
}

unsafe fn build_null(fx: &DeviceFx) -> CaseResult {
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_HANDLE, fx.api.urProgramBuild(fx.context, null_mut(), null()));
    Ok(())
}

unsafe fn compile_then_link(fx: &DeviceFx) -> CaseResult {
    let (program, form) = kernel_program(fx)?;
    if form == KernelForm::Spir {
        // OpenCL compiles only source or IL; a SPIR binary is built whole.
        skip!("the device's program is a SPIR binary, which OpenCL builds but does not compile separately");
    }
    match fx.api.urProgramCompile(fx.context, program.get(), form.build_options().as_ptr())? {
        UR_RESULT_SUCCESS => {}
        UR_RESULT_ERROR_UNSUPPORTED_FEATURE => {
            skip!("urProgramCompile of a {form:?} program answers UNSUPPORTED_FEATURE: the adapter builds programs whole")
        }
        code => return Err(format!("urProgramCompile returned {}", result_name(code)).into()),
    }
    check_eq!(
        build_info::<ur_program_binary_type_t>(fx, program.get(), UR_PROGRAM_BUILD_INFO_BINARY_TYPE)?,
        UR_PROGRAM_BINARY_TYPE_COMPILED_OBJECT
    );
    let mut linked = null_mut();
    let inputs = [program.get()];
    let code = fx.api.urProgramLink(fx.context, 1, inputs.as_ptr(), null(), &mut linked)?;
    let linked = (!linked.is_null()).then(|| own_program(fx, linked));
    expect_code(UR_RESULT_SUCCESS, code, "urProgramLink(one compiled program)")?;
    let linked = linked.ok_or("urProgramLink succeeded with a null program")?;
    check_eq!(
        build_info::<ur_program_binary_type_t>(fx, linked.get(), UR_PROGRAM_BUILD_INFO_BINARY_TYPE)?,
        UR_PROGRAM_BINARY_TYPE_EXECUTABLE
    );
    let mut kernel = null_mut();
    expect_success!(fx.api.urKernelCreate(linked.get(), c"fill_index".as_ptr(), &mut kernel));
    expect_success!(fx.api.urKernelRelease(kernel));
    Ok(())
}

unsafe fn link_zero_count(fx: &DeviceFx) -> CaseResult {
    let (program, _) = kernel_program(fx)?;
    let inputs = [program.get()];
    let mut linked = null_mut();
    let code = fx.api.urProgramLink(fx.context, 0, inputs.as_ptr(), null(), &mut linked)?;
    if code == UR_RESULT_ERROR_UNSUPPORTED_FEATURE {
        skip!("urProgramLink answers UNSUPPORTED_FEATURE: the adapter does not link programs");
    }
    expect_code(UR_RESULT_ERROR_INVALID_SIZE, code, "urProgramLink(0 programs)")?;
    check!(linked.is_null(), "a failed link returned a program");
    Ok(())
}

/// A built program's own binary, as `urProgramGetInfo` hands it out.
unsafe fn own_binary(fx: &DeviceFx, program: ur_program_handle_t) -> Result<Vec<u8>, Outcome> {
    let size = program_info::<usize>(fx, program, UR_PROGRAM_INFO_BINARY_SIZES)?;
    check!(size > 0, "UR_PROGRAM_INFO_BINARY_SIZES of a built program is 0");
    let mut binary = vec![0u8; size];
    let mut pointers = [binary.as_mut_ptr()];
    expect_success!(fx.api.urProgramGetInfo(
        program,
        UR_PROGRAM_INFO_BINARIES,
        size_of_val(&pointers),
        pointers.as_mut_ptr().cast::<c_void>(),
        null_mut()
    ));
    Ok(binary)
}

unsafe fn create_with_binary(fx: &DeviceFx) -> CaseResult {
    let built = built_program(fx)?;
    let binary = own_binary(fx, built.get())?;
    let (mut device, mut length, mut pointer) = (fx.device, binary.len(), binary.as_ptr());
    let mut program = null_mut();
    expect_success!(fx.api.urProgramCreateWithBinary(fx.context, 1, &mut device, &mut length, &mut pointer, null(), &mut program));
    let program = own_program(fx, program);
    expect_success!(fx.api.urProgramBuild(fx.context, program.get(), null()));
    // The rebuilt program runs: fill_index writes base + i.
    crate::cases::kernel::run_fill_index(fx, program.get(), 1000)
}

unsafe fn create_with_binary_invalid(fx: &DeviceFx) -> CaseResult {
    // Only where the device takes one of the suite's images: elsewhere
    // urProgramCreateWithBinary may answer UNSUPPORTED_FEATURE for any input.
    kernel_program(fx)?;
    let garbage = [0xa5u8; 64];
    let (mut device, mut length, mut pointer) = (fx.device, garbage.len(), garbage.as_ptr());
    let mut program = null_mut();
    let code = fx.api.urProgramCreateWithBinary(fx.context, 1, &mut device, &mut length, &mut pointer, null(), &mut program)?;
    if code == UR_RESULT_SUCCESS {
        // Validation may wait for the build, which must then fail.
        let program = own_program(fx, program);
        let build = fx.api.urProgramBuild(fx.context, program.get(), null())?;
        check!(build != UR_RESULT_SUCCESS, "64 bytes of 0xa5 built as a program");
        return Ok(());
    }
    expect_code(UR_RESULT_ERROR_INVALID_NATIVE_BINARY, code, "urProgramCreateWithBinary(garbage)")
}

unsafe fn retain_release(fx: &DeviceFx) -> CaseResult {
    let (program, _) = kernel_program(fx)?;
    let p = program.get();
    expect_success!(fx.api.urProgramRetain(p));
    check_eq!(program_info::<u32>(fx, p, UR_PROGRAM_INFO_REFERENCE_COUNT)?, 2);
    expect_success!(fx.api.urProgramRelease(p));
    check_eq!(program_info::<u32>(fx, p, UR_PROGRAM_INFO_REFERENCE_COUNT)?, 1);
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_HANDLE, fx.api.urProgramRetain(null_mut()));
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_HANDLE, fx.api.urProgramRelease(null_mut()));
    Ok(())
}

unsafe fn info_bad_enum(fx: &DeviceFx) -> CaseResult {
    let (program, _) = kernel_program(fx)?;
    info!(fx.api, urProgramGetInfo).past_last(program.get(), ur_program_info_t(UR_PROGRAM_INFO_KERNEL_NAMES.0 + 1))
}
