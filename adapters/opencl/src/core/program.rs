//! Programs: SPIR-V or native binaries, built, compiled and linked by the
//! OpenCL runtime.

use super::context::Context;
use super::device::Device;
use crate::cl::{self, wait_list_ptr};
use crate::conv::{self, ClResultExt};
use crate::DDI;
use cl3::ext as sys;
use std::ffi::{c_void, CStr};
use std::sync::Arc;
use sys::{cl_int, cl_program};
use ur_core::handle::{HandleHeader, ObjectKind};
use ur_core::info::InfoOut;
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

#[repr(C)]
pub struct Program {
    header: HandleHeader,
    pub context: Arc<Context>,
    pub cl: ClProgram,
    /// The module, for programs made from IL.
    pub il: Option<Vec<u8>>,
}

ur_core::ur_object!(Program, Program, ur_program_handle_t_);

// SAFETY: OpenCL program objects are thread-safe, except that concurrent
// builds of one program fail cleanly with CL_INVALID_OPERATION.
unsafe impl Send for Program {}
unsafe impl Sync for Program {}

/// The SPIR-V magic number, in the module's first word.
const SPIRV_MAGIC: u32 = 0x0723_0203;

impl Program {
    fn wrap(context: Arc<Context>, cl: cl_program, il: Option<Vec<u8>>) -> Arc<Program> {
        Arc::new(Program {
            header: HandleHeader::new(&DDI, ObjectKind::Program),
            context,
            cl: ClProgram(cl),
            il,
        })
    }

    /// `urProgramCreateWithIL`: SPIR-V for the context's devices.
    pub fn with_il(context: Arc<Context>, il: &[u8]) -> UrResult<Arc<Program>> {
        if context.devices.iter().all(|d| d.il_version.is_empty()) {
            return Err(UR_RESULT_ERROR_COMPILER_NOT_AVAILABLE);
        }
        let magic = il.get(..4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
        if magic != Some(SPIRV_MAGIC) && magic != Some(SPIRV_MAGIC.swap_bytes()) {
            return Err(UR_RESULT_ERROR_INVALID_BINARY);
        }
        let program = cl3::program::create_program_with_il(context.cl.get(), il).map_err(|e| match e {
            sys::CL_INVALID_VALUE | sys::CL_INVALID_BINARY => UR_RESULT_ERROR_INVALID_BINARY,
            sys::CL_INVALID_OPERATION => UR_RESULT_ERROR_COMPILER_NOT_AVAILABLE,
            e => conv::result(e),
        })?;
        Ok(Program::wrap(context, program, Some(il.to_vec())))
    }

    /// `urProgramCreateWithNativeHandle`: a program over the user's
    /// `cl_program`, which must belong to `context`. Its devices are its
    /// `CL_PROGRAM_DEVICES` that the context has, and its state is the
    /// runtime's. A borrowed program is retained here and released with
    /// this object; an owned one takes over the caller's reference.
    pub fn from_native(
        context: Arc<Context>,
        native: cl_program,
        ownership: ur_core::boundary::NativeOwnership,
    ) -> UrResult<Arc<Program>> {
        let cl_context = cl::value::<sys::cl_context>(cl3::program::get_program_data(native, sys::CL_PROGRAM_CONTEXT)).ur()?;
        if cl_context != context.cl.get() {
            return Err(UR_RESULT_ERROR_INVALID_CONTEXT);
        }
        if ownership == ur_core::boundary::NativeOwnership::Borrowed {
            // SAFETY: the caller's live program; this reference is the one
            // `ClProgram` releases.
            unsafe { cl3::program::retain_program(native) }.ur()?;
        }
        Ok(Program::wrap(context, native, None))
    }

    /// `urProgramCreateWithBinary`: one native binary per device.
    pub fn with_binaries(
        context: Arc<Context>,
        devices: &[&'static Device],
        binaries: &[&[u8]],
    ) -> UrResult<Arc<Program>> {
        if devices.iter().any(|d| !context.has_device(d)) {
            return Err(UR_RESULT_ERROR_INVALID_DEVICE);
        }
        let ids: Vec<sys::cl_device_id> = devices.iter().map(|d| d.id).collect();
        // SAFETY: one binary per device, each a live slice.
        let program = unsafe { cl3::program::create_program_with_binary(context.cl.get(), &ids, binaries) }
            .map_err(|e| match e {
                sys::CL_INVALID_BINARY | sys::CL_INVALID_VALUE => UR_RESULT_ERROR_INVALID_NATIVE_BINARY,
                e => conv::result(e),
            })?;
        Ok(Program::wrap(context, program, None))
    }

    fn device_ids(devices: &[&'static Device]) -> Vec<sys::cl_device_id> {
        devices.iter().map(|d| d.id).collect()
    }

    /// `urProgramBuild` (all devices when `devices` is empty).
    pub fn build(&self, devices: &[&'static Device], options: &CStr) -> UrResult {
        cl3::program::build_program(self.cl.get(), &Self::device_ids(devices), options, None, std::ptr::null_mut())
            .ur()
    }

    /// `urProgramCompile`.
    pub fn compile(&self, devices: &[&'static Device], options: &CStr) -> UrResult {
        cl3::program::compile_program(
            self.cl.get(),
            &Self::device_ids(devices),
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
    pub fn link(
        context: &Arc<Context>,
        devices: &[&'static Device],
        programs: &[Arc<Program>],
        options: &CStr,
    ) -> Result<Arc<Program>, (ur_result_t, Option<Arc<Program>>)> {
        if programs.iter().any(|p| !Arc::ptr_eq(&p.context, context)) {
            return Err((UR_RESULT_ERROR_INVALID_PROGRAM, None));
        }
        let ids = Self::device_ids(devices);
        let inputs: Vec<cl_program> = programs.iter().map(|p| p.cl.get()).collect();
        let runtime = cl3::load_library().as_ref().map_err(|_| (UR_RESULT_ERROR_UNSUPPORTED_FEATURE, None))?;
        let mut err: cl_int = sys::CL_SUCCESS;
        let linked = runtime
            .clLinkProgram(
                context.cl.get(),
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
        let program = (!linked.is_null()).then(|| Program::wrap(context.clone(), linked, None));
        match (err, program) {
            (sys::CL_SUCCESS, Some(p)) => Ok(p),
            (sys::CL_SUCCESS, None) => Err((UR_RESULT_ERROR_PROGRAM_LINK_FAILURE, None)),
            (e, p) => Err((conv::result(e), p)),
        }
    }

    /// The context's devices this program is for.
    pub fn devices(&self) -> UrResult<Vec<&'static Device>> {
        let ids = cl::array::<sys::cl_device_id>(self.data(sys::CL_PROGRAM_DEVICES)).ur()?;
        Ok(ids.into_iter().filter_map(|id| self.context.device_by_id(id)).collect())
    }

    fn data(&self, param: sys::cl_program_info) -> Result<Vec<u8>, cl_int> {
        cl3::program::get_program_data(self.cl.get(), param)
    }

    /// `urProgramSetSpecializationConstants`.
    pub fn set_specialization_constant(&self, id: u32, size: usize, value: *const c_void) -> UrResult {
        // SAFETY: the caller's value holds `size` bytes.
        unsafe { cl3::program::set_program_specialization_constant(self.cl.get(), id, size, value) }.map_err(
            |e| match e {
                sys::CL_INVALID_SPEC_ID => UR_RESULT_ERROR_INVALID_SPEC_ID,
                sys::CL_INVALID_VALUE => UR_RESULT_ERROR_INVALID_VALUE,
                e => conv::result(e),
            },
        )
    }

    /// `urProgramGetInfo`.
    pub fn get_info(&self, prop: ur_program_info_t, out: InfoOut) -> UrResult {
        match prop {
            UR_PROGRAM_INFO_REFERENCE_COUNT => out.value(ur_core::handle::ref_count_of(self)),
            UR_PROGRAM_INFO_CONTEXT => out.value(ur_core::handle::handle_of(&*self.context)),
            UR_PROGRAM_INFO_NUM_DEVICES => out.value(self.devices()?.len() as u32),
            UR_PROGRAM_INFO_DEVICES => {
                out.slice(&self.devices()?.into_iter().map(Device::handle).collect::<Vec<ur_device_handle_t>>())
            }
            UR_PROGRAM_INFO_IL => out.bytes(self.il.as_deref().unwrap_or(&[])),
            UR_PROGRAM_INFO_BINARY_SIZES => out.slice(&cl::array::<usize>(self.data(sys::CL_PROGRAM_BINARY_SIZES)).ur()?),
            UR_PROGRAM_INFO_NUM_KERNELS => out.value(cl::value::<usize>(self.data(sys::CL_PROGRAM_NUM_KERNELS)).ur()?),
            UR_PROGRAM_INFO_KERNEL_NAMES => out.string(&cl::string(self.data(sys::CL_PROGRAM_KERNEL_NAMES)).ur()?),
            p if p.0 > UR_PROGRAM_INFO_KERNEL_NAMES.0 => Err(UR_RESULT_ERROR_INVALID_ENUMERATION),
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    }

    /// The program's binaries, one per device in `CL_PROGRAM_DEVICES`
    /// order (`UR_PROGRAM_INFO_BINARIES`).
    pub fn binaries(&self) -> UrResult<Vec<Vec<u8>>> {
        let sizes = cl::array::<usize>(self.data(sys::CL_PROGRAM_BINARY_SIZES)).ur()?;
        let mut binaries: Vec<Vec<u8>> = sizes.iter().map(|&n| vec![0u8; n]).collect();
        let mut buffers: Vec<*mut u8> = binaries.iter_mut().map(|b| b.as_mut_ptr()).collect();
        conv::check(cl::call!(clGetProgramInfo(
            self.cl.get(),
            sys::CL_PROGRAM_BINARIES,
            buffers.len() * std::mem::size_of::<*mut u8>(),
            buffers.as_mut_ptr() as *mut c_void,
            std::ptr::null_mut()
        )))
        .ur()?;
        Ok(binaries)
    }

    /// `urProgramGetBuildInfo`.
    pub fn get_build_info(&self, device: &Device, prop: ur_program_build_info_t, out: InfoOut) -> UrResult {
        if !self.devices()?.iter().any(|d| std::ptr::eq(*d, device)) {
            return Err(UR_RESULT_ERROR_INVALID_DEVICE);
        }
        let data = |p| cl3::program::get_program_build_data(self.cl.get(), device.id, p);
        match prop {
            UR_PROGRAM_BUILD_INFO_STATUS => {
                out.value(conv::build_status(cl::value::<cl_int>(data(sys::CL_PROGRAM_BUILD_STATUS)).ur()?))
            }
            UR_PROGRAM_BUILD_INFO_OPTIONS => out.string(&cl::string(data(sys::CL_PROGRAM_BUILD_OPTIONS)).ur()?),
            UR_PROGRAM_BUILD_INFO_LOG => out.string(&cl::string(data(sys::CL_PROGRAM_BUILD_LOG)).ur()?),
            UR_PROGRAM_BUILD_INFO_BINARY_TYPE => {
                out.value(conv::binary_type(cl::value::<sys::cl_uint>(data(sys::CL_PROGRAM_BINARY_TYPE)).ur()?))
            }
            _ => Err(UR_RESULT_ERROR_INVALID_ENUMERATION),
        }
    }
}
