//! The program and kernel objects, written once for every backend: the
//! handle header and the parent link (a program's context, a kernel's
//! program) beside `raw`, what the driver keeps (a `cl_program`, a CUDA
//! module per device, a `cl_kernel`, a CUDA function per device), behind
//! [`RawProgram`] and [`RawKernel`].

use crate::abi::*;
use crate::device::Device;
use crate::queue::object::Queue;
use crate::context::Context;
use crate::boundary::NativeOwnership;
use crate::event::Event;
use crate::hal::{Backend, Events, KernelArg, NdRange};
use crate::handle::{HandleHeader, ObjectKind};
use crate::info::InfoOut;
use crate::UrResult;
use core::ffi::c_void;
use std::ffi::CStr;
use std::sync::Arc;

const UNSUPPORTED: ur_result_t = UR_RESULT_ERROR_UNSUPPORTED_FEATURE;

/// The driver's side of a program. Each function gets the whole program.
pub trait RawProgram<B: Backend>: Send + Sync + Sized + 'static {
    /// False for a backend that builds no programs ([`NoProgram`]): the
    /// core then leaves every program slot to the unsupported stubs.
    const SUPPORTED: bool = true;
    fn create_with_il(_context: &Context<B>, _il: &[u8]) -> UrResult<Arc<Program<B>>> {
        Err(UNSUPPORTED)
    }
    /// One image per device (devices checked to be in the context; images
    /// not empty).
    fn create_with_binary(context: &Context<B>, images: &[(&Device<B>, &[u8])]) -> UrResult<Arc<Program<B>>>;
    /// Whether the program holds an image for `device`.
    fn has_device(program: &Program<B>, device: &Device<B>) -> bool;
    /// Builds for `devices`, or for every device of the program when empty.
    fn build(program: &Program<B>, devices: &[&Device<B>], options: &CStr) -> UrResult;
    fn compile(_program: &Program<B>, _devices: &[&Device<B>], _options: &CStr) -> UrResult {
        Err(UNSUPPORTED)
    }
    /// A failed link may still give a program that holds the log.
    fn link(
        _context: &Context<B>,
        _devices: &[&Device<B>],
        _programs: &[&Program<B>],
        _options: &CStr,
    ) -> Result<Arc<Program<B>>, (ur_result_t, Option<Arc<Program<B>>>)> {
        Err((UNSUPPORTED, None))
    }
    /// Every query in range but the reference count, the context and the
    /// binaries (the core answers those).
    fn info(program: &Program<B>, prop: ur_program_info_t, out: InfoOut) -> UrResult;
    /// The program's binaries, one per device in `DEVICES` order.
    fn binaries(program: &Program<B>) -> UrResult<Vec<Vec<u8>>>;
    fn build_info(program: &Program<B>, device: &Device<B>, prop: ur_program_build_info_t, out: InfoOut) -> UrResult;
    fn set_specialization_constants(_program: &Program<B>, _constants: &[ur_specialization_constant_info_t]) -> UrResult {
        Err(UNSUPPORTED)
    }
    /// `(address, size)` of a device global.
    fn global_variable(_program: &Program<B>, _device: &Device<B>, _name: &CStr) -> UrResult<(*mut c_void, usize)> {
        Err(UNSUPPORTED)
    }
    fn native_handle(program: &Program<B>) -> UrResult<ur_native_handle_t>;
    fn from_native(
        _native: ur_native_handle_t,
        _context: &Context<B>,
        _ownership: NativeOwnership,
    ) -> UrResult<Arc<Program<B>>> {
        Err(UNSUPPORTED)
    }
}

/// `urKernelCreateWithNativeHandle`'s arguments, checked.
pub struct NativeKernel<'a, B: Backend> {
    pub handle: ur_native_handle_t,
    pub context: &'a Context<B>,
    /// The program named, a program of `context`.
    pub program: Option<&'a Program<B>>,
    pub ownership: NativeOwnership,
}

/// The driver's side of a kernel. Each function gets the whole kernel.
pub trait RawKernel<B: Backend>: Send + Sync + Sized + 'static {
    /// False for a backend without kernels ([`NoKernel`]).
    const SUPPORTED: bool = true;
    fn create(program: &Program<B>, name: &CStr) -> UrResult<Arc<Kernel<B>>>;
    /// Every query in range but the reference count, the context and the
    /// program (the core answers those).
    fn info(kernel: &Kernel<B>, prop: ur_kernel_info_t, out: InfoOut) -> UrResult;
    fn group_info(kernel: &Kernel<B>, device: &Device<B>, prop: ur_kernel_group_info_t, out: InfoOut) -> UrResult;
    fn sub_group_info(kernel: &Kernel<B>, device: &Device<B>, prop: ur_kernel_sub_group_info_t, out: InfoOut) -> UrResult;
    /// USM indirect access, pointer lists and cache hints. The default
    /// accepts them: with unified addressing every USM pointer is reachable.
    fn set_exec_info(_kernel: &Kernel<B>, _prop: ur_kernel_exec_info_t, _value: *const c_void, _size: usize) -> UrResult {
        Ok(())
    }
    fn suggested_local_work_size(_kernel: &Kernel<B>, _queue: &Queue<B>, _global: &[usize]) -> UrResult<Vec<usize>> {
        Err(UNSUPPORTED)
    }
    fn native_handle(kernel: &Kernel<B>) -> UrResult<ur_native_handle_t>;
    fn from_native(_native: NativeKernel<'_, B>) -> UrResult<Arc<Kernel<B>>> {
        Err(UNSUPPORTED)
    }
    /// Launches on `queue`; `cooperative` asks for a cooperative launch.
    fn launch(
        kernel: &Kernel<B>,
        queue: &Queue<B>,
        range: &NdRange<'_>,
        args: &[KernelArg<'_>],
        cooperative: bool,
        waits: Events<'_, B>,
        want_event: bool,
    ) -> UrResult<Option<Arc<Event<B>>>>;
}

/// A UR program.
#[repr(C)]
pub struct Program<B: Backend> {
    /// First: the handle protocol reads it at offset 0.
    header: HandleHeader,
    pub context: Arc<Context<B>>,
    pub raw: B::RawProgram,
}

crate::core_object!(Program, Program, ur_program_handle_t_);


impl<B: Backend> Program<B> {
    pub fn new(context: Arc<Context<B>>, raw: B::RawProgram) -> Arc<Self> {
        Arc::new(Program { header: HandleHeader::new(B::ddi(), ObjectKind::Program), context, raw })
    }

}

/// A UR kernel.
#[repr(C)]
pub struct Kernel<B: Backend> {
    /// First: the handle protocol reads it at offset 0.
    header: HandleHeader,
    pub program: Arc<Program<B>>,
    pub raw: B::RawKernel,
}

crate::core_object!(Kernel, Kernel, ur_kernel_handle_t_);


impl<B: Backend> Kernel<B> {
    pub fn new(program: Arc<Program<B>>, raw: B::RawKernel) -> Arc<Self> {
        Arc::new(Kernel { header: HandleHeader::new(B::ddi(), ObjectKind::Kernel), program, raw })
    }


    pub fn context(&self) -> &Context<B> {
        &self.program.context
    }
}

/// What the core asks of a program that only the raw part answers.
impl<B: Backend> Program<B> {
    pub fn has_device(&self, device: &Device<B>) -> bool {
        B::RawProgram::has_device(self, device)
    }
    pub fn build(&self, devices: &[&Device<B>], options: &CStr) -> UrResult {
        B::RawProgram::build(self, devices, options)
    }
    pub fn compile(&self, devices: &[&Device<B>], options: &CStr) -> UrResult {
        B::RawProgram::compile(self, devices, options)
    }
    pub fn info(&self, prop: ur_program_info_t, out: InfoOut) -> UrResult {
        B::RawProgram::info(self, prop, out)
    }
    pub fn binaries(&self) -> UrResult<Vec<Vec<u8>>> {
        B::RawProgram::binaries(self)
    }
    pub fn build_info(&self, device: &Device<B>, prop: ur_program_build_info_t, out: InfoOut) -> UrResult {
        B::RawProgram::build_info(self, device, prop, out)
    }
    pub fn set_specialization_constants(&self, constants: &[ur_specialization_constant_info_t]) -> UrResult {
        B::RawProgram::set_specialization_constants(self, constants)
    }
    pub fn global_variable(&self, device: &Device<B>, name: &CStr) -> UrResult<(*mut c_void, usize)> {
        B::RawProgram::global_variable(self, device, name)
    }
    pub fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        B::RawProgram::native_handle(self)
    }
    pub fn from_native(native: ur_native_handle_t, context: &Context<B>, ownership: NativeOwnership) -> UrResult<Arc<Self>> {
        B::RawProgram::from_native(native, context, ownership)
    }
}

/// What the core asks of a kernel that only the raw part answers.
impl<B: Backend> Kernel<B> {
    pub fn program(&self) -> &Program<B> {
        &self.program
    }
    pub fn info(&self, prop: ur_kernel_info_t, out: InfoOut) -> UrResult {
        B::RawKernel::info(self, prop, out)
    }
    pub fn group_info(&self, device: &Device<B>, prop: ur_kernel_group_info_t, out: InfoOut) -> UrResult {
        B::RawKernel::group_info(self, device, prop, out)
    }
    pub fn sub_group_info(&self, device: &Device<B>, prop: ur_kernel_sub_group_info_t, out: InfoOut) -> UrResult {
        B::RawKernel::sub_group_info(self, device, prop, out)
    }
    pub fn set_exec_info(&self, prop: ur_kernel_exec_info_t, value: *const c_void, size: usize) -> UrResult {
        B::RawKernel::set_exec_info(self, prop, value, size)
    }
    pub fn suggested_local_work_size(&self, queue: &Queue<B>, global: &[usize]) -> UrResult<Vec<usize>> {
        B::RawKernel::suggested_local_work_size(self, queue, global)
    }
    pub fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        B::RawKernel::native_handle(self)
    }
    pub fn launch(
        &self,
        queue: &Queue<B>,
        range: &NdRange<'_>,
        args: &[KernelArg<'_>],
        cooperative: bool,
        waits: Events<'_, B>,
        want_event: bool,
    ) -> UrResult<Option<Arc<Event<B>>>> {
        B::RawKernel::launch(self, queue, range, args, cooperative, waits, want_event)
    }
}

/// The program type of a backend without programs: no value exists.
pub enum NoProgram {}
/// The kernel type of a backend without kernels: no value exists.
pub enum NoKernel {}

// No program or kernel of such a backend is ever made (the core leaves
// their slots to the unsupported stubs), so every body below is
// unreachable: each matches on the uninhabited raw part.
impl<B: Backend<RawProgram = NoProgram>> RawProgram<B> for NoProgram {
    const SUPPORTED: bool = false;
    fn create_with_binary(_: &Context<B>, _: &[(&Device<B>, &[u8])]) -> UrResult<Arc<Program<B>>> {
        Err(UNSUPPORTED)
    }
    fn has_device(program: &Program<B>, _: &Device<B>) -> bool {
        match program.raw {}
    }
    fn build(program: &Program<B>, _: &[&Device<B>], _: &CStr) -> UrResult {
        match program.raw {}
    }
    fn info(program: &Program<B>, _: ur_program_info_t, _: InfoOut) -> UrResult {
        match program.raw {}
    }
    fn binaries(program: &Program<B>) -> UrResult<Vec<Vec<u8>>> {
        match program.raw {}
    }
    fn build_info(program: &Program<B>, _: &Device<B>, _: ur_program_build_info_t, _: InfoOut) -> UrResult {
        match program.raw {}
    }
    fn native_handle(program: &Program<B>) -> UrResult<ur_native_handle_t> {
        match program.raw {}
    }
}

impl<B: Backend<RawProgram = NoProgram, RawKernel = NoKernel>> RawKernel<B> for NoKernel {
    const SUPPORTED: bool = false;
    fn create(program: &Program<B>, _: &CStr) -> UrResult<Arc<Kernel<B>>> {
        match program.raw {}
    }
    fn info(kernel: &Kernel<B>, _: ur_kernel_info_t, _: InfoOut) -> UrResult {
        match kernel.raw {}
    }
    fn group_info(kernel: &Kernel<B>, _: &Device<B>, _: ur_kernel_group_info_t, _: InfoOut) -> UrResult {
        match kernel.raw {}
    }
    fn sub_group_info(kernel: &Kernel<B>, _: &Device<B>, _: ur_kernel_sub_group_info_t, _: InfoOut) -> UrResult {
        match kernel.raw {}
    }
    fn native_handle(kernel: &Kernel<B>) -> UrResult<ur_native_handle_t> {
        match kernel.raw {}
    }
    fn launch(
        kernel: &Kernel<B>,
        _: &Queue<B>,
        _: &NdRange<'_>,
        _: &[KernelArg<'_>],
        _: bool,
        _: Events<'_, B>,
        _: bool,
    ) -> UrResult<Option<Arc<Event<B>>>> {
        match kernel.raw {}
    }
}
