//! Programs: SPIR-V or native binaries, built, compiled and linked by the
//! OpenCL runtime.

use crate::context::Context;
use crate::device::{kept, kept_all, Device};
use crate::driver::{self, wait_list_ptr};
use crate::conv::{self, ClResultExt};
use crate::OpenCl;
use cl3::ext as sys;
use std::ffi::{c_void, CStr};
use std::sync::{Arc, Mutex, RwLock};
use sys::{cl_int, cl_program};
use ur_core::boundary::NativeOwnership;
use ur_core::handle::arc_of;
use ur_core::info::InfoOut;
use ur_core::program::RawProgram;
use ur_core::*;

/// An owned `cl_program` reference. (`opencl3`'s `Program` cannot adopt a
/// program that `clLinkProgram` returns, so programs are held here.)
pub struct ClProgram(cl_program);

impl ClProgram {
    pub fn get(&self) -> cl_program {
        self.0
    }
}

impl Drop for ClProgram {
    fn drop(&mut self) {
        // SAFETY: we own one reference.
        let _ = unsafe { cl3::program::release_program(self.0) };
    }
}

/// A UR program of this adapter.
pub type Program = ur_core::program::Program<OpenCl>;

/// What an OpenCL program keeps beside the core's part: the runtime's
/// program, the ones a build swapped out, and the IL it was made from.
pub struct ProgramCl {
    /// The runtime's program. A build that compiles once for several
    /// devices of one target swaps in a program made from that compile's
    /// binary for every device (see `ProgramCl::build`).
    cl: RwLock<ClProgram>,
    /// Programs a build swapped out: a native handle taken before the build
    /// may still name them, so they live as long as this object.
    swapped_out: Mutex<Vec<ClProgram>>,
    /// The module, for programs made from IL.
    pub il: Option<Vec<u8>>,
}

// SAFETY: OpenCL program objects are thread-safe, except that concurrent
// builds of one program fail cleanly with CL_INVALID_OPERATION.
unsafe impl Send for ProgramCl {}
unsafe impl Sync for ProgramCl {}

/// `clCreateProgramWithBinary`, one binary per device. (`cl3`'s wrapper
/// hands the runtime its slices, fat pointers, where the runtime reads an
/// array of plain pointers: every binary after the first is garbage. Here
/// the array is built as OpenCL wants it.)
fn create_with_binaries(context: sys::cl_context, devices: &[sys::cl_device_id], binaries: &[&[u8]]) -> Result<cl_program, cl_int> {
    let lengths: Vec<usize> = binaries.iter().map(|b| b.len()).collect();
    let pointers: Vec<*const u8> = binaries.iter().map(|b| b.as_ptr()).collect();
    let mut status = vec![sys::CL_SUCCESS; binaries.len()];
    let mut err = sys::CL_INVALID_VALUE;
    let runtime = cl3::load_library().as_ref().map_err(|_| cl3::error_codes::DLOPEN_RUNTIME_LOAD_FAILED)?;
    // SAFETY: `devices.len()` entries in each array, every binary a live slice.
    let program = runtime
        .clCreateProgramWithBinary(
            context,
            devices.len() as sys::cl_uint,
            devices.as_ptr(),
            lengths.as_ptr(),
            pointers.as_ptr(),
            status.as_mut_ptr(),
            &mut err,
        )
        .ok_or(cl3::error_codes::DLOPEN_FUNCTION_NOT_AVAILABLE)?;
    match err {
        sys::CL_SUCCESS if !program.is_null() => Ok(program),
        sys::CL_SUCCESS => Err(sys::CL_INVALID_BINARY),
        e => Err(e),
    }
}

/// `cl_khr_spir`'s binary type of a SPIR module.
const CL_PROGRAM_BINARY_TYPE_INTERMEDIATE: sys::cl_program_binary_type = 0x40E1;

/// Whether one compile serves both devices: the same runtime (platform),
/// device name, OpenCL version and extensions, and so the same ISA and
/// compiler. (Build options are one per build call, so they match.)
pub fn same_target(a: &Device, b: &Device) -> bool {
    std::ptr::eq(a.raw.platform, b.raw.platform)
        && a.raw.name == b.raw.name
        && a.raw.version == b.raw.version
        && a.raw.extensions == b.raw.extensions
        && a.raw.il_version == b.raw.il_version
}

/// `devices` in groups of one target, in first-seen order.
fn by_target(devices: &[&'static Device]) -> Vec<Vec<&'static Device>> {
    let mut groups: Vec<Vec<&'static Device>> = Vec::new();
    for &d in devices {
        match groups.iter_mut().find(|g| same_target(g[0], d)) {
            Some(g) => g.push(d),
            None => groups.push(vec![d]),
        }
    }
    groups
}

/// The SPIR-V magic number, in the module's first word.
const SPIRV_MAGIC: u32 = 0x0723_0203;

/// The UR program over `cl`, whose reference it takes.
fn wrap(context: Arc<Context>, cl: cl_program, il: Option<Vec<u8>>) -> Arc<Program> {
    Program::new(context, ProgramCl { cl: RwLock::new(ClProgram(cl)), swapped_out: Mutex::default(), il })
}

/// `urProgramCreateWithNativeHandle`: a program over the user's
/// `cl_program`, which must belong to `context`. Its devices are its
/// `CL_PROGRAM_DEVICES` that the context has, and its state is the
/// runtime's. A borrowed program is retained here and released with
/// this object; an owned one takes over the caller's reference.
pub fn wrap_native(context: Arc<Context>, native: cl_program, ownership: NativeOwnership) -> UrResult<Arc<Program>> {
    let cl_context = driver::value::<sys::cl_context>(cl3::program::get_program_data(native, sys::CL_PROGRAM_CONTEXT)).ur()?;
    if cl_context != context.raw.cl.get() {
        return Err(UR_RESULT_ERROR_INVALID_CONTEXT);
    }
    if ownership == NativeOwnership::Borrowed {
        // SAFETY: the caller's live program; this reference is the one
        // `ClProgram` releases.
        unsafe { cl3::program::retain_program(native) }.ur()?;
    }
    Ok(wrap(context, native, None))
}

fn device_ids(devices: &[&'static Device]) -> Vec<sys::cl_device_id> {
    devices.iter().map(|d| d.raw.id).collect()
}

/// The context's devices `program` is for.
pub fn devices_of(program: &Program) -> UrResult<Vec<&'static Device>> {
    let ids = driver::array::<sys::cl_device_id>(program.raw.data(sys::CL_PROGRAM_DEVICES)).ur()?;
    Ok(ids.into_iter().filter_map(|id| crate::context::device_by_id(&program.context, id)).collect())
}

/// `ProgramCl::build` for `all` devices of the program, grouped by target
/// (the first of each group compiles).
fn build_once_per_target(program: &Program, all: &[&'static Device], groups: &[Vec<&'static Device>], options: &CStr) -> UrResult {
    let first: Vec<&'static Device> = groups.iter().map(|g| g[0]).collect();
    let raw = program.raw.get();
    cl3::program::build_program(raw, &device_ids(&first), options, None, std::ptr::null_mut()).ur()?;
    let compiled = first.len();
    match load_for_all(program, all, groups, options) {
        Ok(cl) => {
            let old = std::mem::replace(&mut *program.raw.cl.write().unwrap_or_else(|e| e.into_inner()), cl);
            program.raw.swapped_out.lock().unwrap_or_else(|e| e.into_inner()).push(old);
            ur_core::log::build_note(compiled, all.len());
            Ok(())
        }
        Err(e) => {
            ur_core::log::info(&format!("program build: no binary route ({}), compiling per device", e.0));
            let rest: Vec<&'static Device> =
                all.iter().copied().filter(|d| !first.iter().any(|f| std::ptr::eq(*f, *d))).collect();
            cl3::program::build_program(raw, &device_ids(&rest), options, None, std::ptr::null_mut()).ur()?;
            ur_core::log::build_note(compiled + rest.len(), all.len());
            Ok(())
        }
    }
}

/// A program for `all` devices made from the binaries the first device
/// of each group compiled, and built (loaded) with the same options.
fn load_for_all(program: &Program, all: &[&'static Device], groups: &[Vec<&'static Device>], options: &CStr) -> UrResult<ClProgram> {
    let compiled_for = devices_of(program)?;
    let binaries = program.raw.binaries()?;
    let binary_of = |d: &Device| {
        let first = groups.iter().find(|g| g.iter().any(|m| std::ptr::eq(*m, d)))?[0];
        let i = compiled_for.iter().position(|c| std::ptr::eq(*c, first))?;
        Some(binaries[i].as_slice()).filter(|b| !b.is_empty())
    };
    let images: Vec<&[u8]> = all.iter().map(|d| binary_of(d)).collect::<Option<_>>().ok_or(UR_RESULT_ERROR_INVALID_BINARY)?;
    let loaded = create_with_binaries(program.context.raw.cl.get(), &device_ids(all), &images)
        .map(ClProgram)
        .ur()?;
    cl3::program::build_program(loaded.get(), &device_ids(all), options, None, std::ptr::null_mut()).ur()?;
    Ok(loaded)
}

impl ProgramCl {
    /// The runtime's program as it stands.
    pub fn get(&self) -> cl_program {
        self.cl.read().unwrap_or_else(|e| e.into_inner()).get()
    }

    /// Whether building for `device` compiles: the program holds IL or
    /// source for it, or a SPIR binary, not a native binary.
    fn compiles_for(&self, device: &Device) -> bool {
        let kind = driver::value::<sys::cl_program_binary_type>(cl3::program::get_program_build_data(
            self.get(),
            device.raw.id,
            sys::CL_PROGRAM_BINARY_TYPE,
        ));
        matches!(kind, Ok(sys::CL_PROGRAM_BINARY_TYPE_NONE | CL_PROGRAM_BINARY_TYPE_INTERMEDIATE))
    }

    fn data(&self, param: sys::cl_program_info) -> Result<Vec<u8>, cl_int> {
        cl3::program::get_program_data(self.get(), param)
    }

    /// `urProgramSetSpecializationConstants`.
    pub fn set_specialization_constant(&self, id: u32, size: usize, value: *const c_void) -> UrResult {
        // SAFETY: the caller's value holds `size` bytes.
        unsafe { cl3::program::set_program_specialization_constant(self.get(), id, size, value) }.map_err(
            |e| match e {
                sys::CL_INVALID_SPEC_ID => UR_RESULT_ERROR_INVALID_SPEC_ID,
                sys::CL_INVALID_VALUE => UR_RESULT_ERROR_INVALID_VALUE,
                e => conv::result(e),
            },
        )
    }

    /// The program's binaries, one per device in `CL_PROGRAM_DEVICES`
    /// order (`UR_PROGRAM_INFO_BINARIES`).
    pub fn binaries(&self) -> UrResult<Vec<Vec<u8>>> {
        let sizes = driver::array::<usize>(self.data(sys::CL_PROGRAM_BINARY_SIZES)).ur()?;
        let mut binaries: Vec<Vec<u8>> = sizes.iter().map(|&n| vec![0u8; n]).collect();
        let mut buffers: Vec<*mut u8> = binaries.iter_mut().map(|b| b.as_mut_ptr()).collect();
        conv::check(driver::call!(clGetProgramInfo(
            self.get(),
            sys::CL_PROGRAM_BINARIES,
            buffers.len() * std::mem::size_of::<*mut u8>(),
            buffers.as_mut_ptr() as *mut c_void,
            std::ptr::null_mut()
        )))
        .ur()?;
        Ok(binaries)
    }
}

impl RawProgram<OpenCl> for ProgramCl {
    fn has_device(program: &Program, device: &Device) -> bool {
        devices_of(program).is_ok_and(|ds| ds.iter().any(|d| std::ptr::eq(*d, device)))
    }

    /// `urProgramCreateWithIL`: SPIR-V for the context's devices.
    fn create_with_il(context: &Context, il: &[u8]) -> UrResult<Arc<Program>> {
        let context = arc_of(context);
        if context.devices.iter().all(|d| d.raw.il_version.is_empty()) {
            return Err(UR_RESULT_ERROR_COMPILER_NOT_AVAILABLE);
        }
        let magic = il.get(..4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
        if magic != Some(SPIRV_MAGIC) && magic != Some(SPIRV_MAGIC.swap_bytes()) {
            return Err(UR_RESULT_ERROR_INVALID_BINARY);
        }
        let program = cl3::program::create_program_with_il(context.raw.cl.get(), il).map_err(|e| match e {
            sys::CL_INVALID_VALUE | sys::CL_INVALID_BINARY => UR_RESULT_ERROR_INVALID_BINARY,
            sys::CL_INVALID_OPERATION => UR_RESULT_ERROR_COMPILER_NOT_AVAILABLE,
            e => conv::result(e),
        })?;
        Ok(wrap(context, program, Some(il.to_vec())))
    }

    /// `urProgramCreateWithBinary`: one native binary per device.
    fn create_with_binary(context: &Context, images: &[(&Device, &[u8])]) -> UrResult<Arc<Program>> {
        let context = arc_of(context);
        let devices: Vec<&'static Device> = images.iter().map(|(d, _)| kept(d)).collect();
        let binaries: Vec<&[u8]> = images.iter().map(|(_, b)| *b).collect();
        if devices.iter().any(|d| !context.has_device(d)) {
            return Err(UR_RESULT_ERROR_INVALID_DEVICE);
        }
        let ids: Vec<sys::cl_device_id> = devices.iter().map(|d| d.raw.id).collect();
        let program = create_with_binaries(context.raw.cl.get(), &ids, &binaries)
            .map_err(|e| match e {
                sys::CL_INVALID_BINARY | sys::CL_INVALID_VALUE => UR_RESULT_ERROR_INVALID_NATIVE_BINARY,
                e => conv::result(e),
            })?;
        Ok(wrap(context, program, None))
    }

    /// `urProgramBuild` (all devices when `devices` is empty).
    ///
    /// Devices of one target (see [`same_target`]) need one compile between
    /// them: when a build from IL or SPIR covers every device of the
    /// program and some share a target, the runtime compiles for one device
    /// of each target, and the program becomes one made from those
    /// binaries for every device, which the runtime loads without
    /// compiling. (`clBuildProgram` with the whole list compiles per
    /// device: PoCL, with its kernel cache off, runs its compiler once for
    /// each.) Should the binary route fail, the other devices are compiled
    /// as usual. Every build logs its count ([`ur_core::log::build_note`]).
    fn build(program: &Program, devices: &[&Device], options: &CStr) -> UrResult {
        let devices: &[&'static Device] = &kept_all(devices);
        let all = devices_of(program)?;
        let targets: Vec<&'static Device> = if devices.is_empty() { all.clone() } else { devices.to_vec() };
        let compiles = targets.iter().all(|d| program.raw.compiles_for(d));
        let covers_all = all.iter().all(|d| targets.iter().any(|t| std::ptr::eq(*t, *d)));
        let groups = by_target(&targets);
        if compiles && covers_all && groups.len() < targets.len() {
            return build_once_per_target(program, &all, &groups, options);
        }
        let raw = program.raw.get();
        cl3::program::build_program(raw, &device_ids(devices), options, None, std::ptr::null_mut()).ur()?;
        ur_core::log::build_note(if compiles { targets.len() } else { 0 }, targets.len());
        Ok(())
    }

    /// `urProgramCompile`.
    fn compile(program: &Program, devices: &[&Device], options: &CStr) -> UrResult {
        let devices: &[&'static Device] = &kept_all(devices);
        cl3::program::compile_program(
            program.raw.get(),
            &device_ids(devices),
            options,
            &[],
            &[],
            None,
            std::ptr::null_mut(),
        )
        .ur()
    }

    /// `urProgramLink`: a new program from compiled ones. On failure the
    /// runtime may still hand back a program holding the log: it comes back
    /// in the error's second half.
    fn link(
        context: &Context,
        devices: &[&Device],
        programs: &[&Program],
        options: &CStr,
    ) -> Result<Arc<Program>, (ur_result_t, Option<Arc<Program>>)> {
        let context = &arc_of(context);
        let devices: &[&'static Device] = &kept_all(devices);
        let programs: Vec<Arc<Program>> = programs.iter().map(|p| arc_of(*p)).collect();
        if programs.iter().any(|p| !Arc::ptr_eq(&p.context, context)) {
            return Err((UR_RESULT_ERROR_INVALID_PROGRAM, None));
        }
        let ids = device_ids(devices);
        let inputs: Vec<cl_program> = programs.iter().map(|p| p.raw.get()).collect();
        let runtime = cl3::load_library().as_ref().map_err(|_| (UR_RESULT_ERROR_UNSUPPORTED_FEATURE, None))?;
        let mut err: cl_int = sys::CL_SUCCESS;
        let linked = runtime
            .clLinkProgram(
                context.raw.cl.get(),
                ids.len() as sys::cl_uint,
                wait_list_ptr(&ids),
                options.as_ptr(),
                inputs.len() as sys::cl_uint,
                inputs.as_ptr(),
                None,
                std::ptr::null_mut(),
                &mut err,
            )
            .ok_or((UR_RESULT_ERROR_UNSUPPORTED_FEATURE, None))?;
        let program = (!linked.is_null()).then(|| wrap(context.clone(), linked, None));
        match (err, program) {
            (sys::CL_SUCCESS, Some(p)) => Ok(p),
            (sys::CL_SUCCESS, None) => Err((UR_RESULT_ERROR_PROGRAM_LINK_FAILURE, None)),
            (e, p) => Err((conv::result(e), p)),
        }
    }

    /// `urProgramGetInfo`.
    fn info(program: &Program, prop: ur_program_info_t, out: InfoOut) -> UrResult {
        let raw = &program.raw;
        match prop {
            UR_PROGRAM_INFO_REFERENCE_COUNT => out.value(ur_core::handle::ref_count_of(program)),
            UR_PROGRAM_INFO_CONTEXT => out.value(ur_core::handle::handle_of(&*program.context)),
            UR_PROGRAM_INFO_NUM_DEVICES => out.value(devices_of(program)?.len() as u32),
            UR_PROGRAM_INFO_DEVICES => {
                out.slice(&devices_of(program)?.into_iter().map(Device::handle).collect::<Vec<ur_device_handle_t>>())
            }
            UR_PROGRAM_INFO_IL => out.bytes(raw.il.as_deref().unwrap_or(&[])),
            UR_PROGRAM_INFO_BINARY_SIZES => out.slice(&driver::array::<usize>(raw.data(sys::CL_PROGRAM_BINARY_SIZES)).ur()?),
            UR_PROGRAM_INFO_NUM_KERNELS => out.value(driver::value::<usize>(raw.data(sys::CL_PROGRAM_NUM_KERNELS)).ur()?),
            UR_PROGRAM_INFO_KERNEL_NAMES => out.string(&driver::string(raw.data(sys::CL_PROGRAM_KERNEL_NAMES)).ur()?),
            p if p.0 > UR_PROGRAM_INFO_KERNEL_NAMES.0 => Err(UR_RESULT_ERROR_INVALID_ENUMERATION),
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    }

    fn binaries(program: &Program) -> UrResult<Vec<Vec<u8>>> {
        program.raw.binaries()
    }

    /// `urProgramGetBuildInfo`.
    fn build_info(program: &Program, device: &Device, prop: ur_program_build_info_t, out: InfoOut) -> UrResult {
        if !devices_of(program)?.iter().any(|d| std::ptr::eq(*d, device)) {
            return Err(UR_RESULT_ERROR_INVALID_DEVICE);
        }
        let data = |p| cl3::program::get_program_build_data(program.raw.get(), device.raw.id, p);
        match prop {
            UR_PROGRAM_BUILD_INFO_STATUS => {
                out.value(conv::build_status(driver::value::<cl_int>(data(sys::CL_PROGRAM_BUILD_STATUS)).ur()?))
            }
            UR_PROGRAM_BUILD_INFO_OPTIONS => out.string(&driver::string(data(sys::CL_PROGRAM_BUILD_OPTIONS)).ur()?),
            UR_PROGRAM_BUILD_INFO_LOG => out.string(&driver::string(data(sys::CL_PROGRAM_BUILD_LOG)).ur()?),
            UR_PROGRAM_BUILD_INFO_BINARY_TYPE => {
                out.value(conv::binary_type(driver::value::<sys::cl_uint>(data(sys::CL_PROGRAM_BINARY_TYPE)).ur()?))
            }
            _ => Err(UR_RESULT_ERROR_INVALID_ENUMERATION),
        }
    }

    fn set_specialization_constants(program: &Program, constants: &[ur_specialization_constant_info_t]) -> UrResult {
        constants.iter().try_for_each(|c| program.raw.set_specialization_constant(c.id, c.size, c.pValue))
    }

    fn native_handle(program: &Program) -> UrResult<ur_native_handle_t> {
        Ok(program.raw.get() as ur_native_handle_t)
    }

    /// A program over the user's `cl_program`, in whatever state the user
    /// left it (built: kernels at once; only created: `urProgramBuild` next).
    fn from_native(native: ur_native_handle_t, context: &Context, ownership: NativeOwnership) -> UrResult<Arc<Program>> {
        wrap_native(arc_of(context), native as sys::cl_program, ownership)
    }
}
