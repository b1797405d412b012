//! The test backend's programs and kernels: a program takes any IL or
//! binary, a kernel any name; nothing is compiled or run.

use super::context::TContext;
use super::objects::{TDevice, TEvent, TQueue, NATIVE_OBJECT};
use super::{record, TestBackend as B};
use crate::abi::*;
use crate::boundary::NativeOwnership;
use crate::hal::{Events, KernelArg, NdRange};
use crate::handle::{arc_of, handle_of};
use crate::program::{Kernel, NativeKernel, Program, RawKernel, RawProgram};
use crate::info::InfoOut;
use crate::UrResult;
use core::ffi::c_void;
use std::ffi::{CStr, CString};
use std::sync::Arc;

/// Options that make a link fail, with a program that holds the log.
pub const FAILING_LINK: &CStr = c"-fail";

pub type TProgram = Program<B>;

/// A test program's images, one per device, and the storage of its one
/// device global, `"global"`.
pub struct TProgramRaw {
    images: Vec<(Arc<TDevice>, Vec<u8>)>,
    global: Box<[u8; 8]>,
}

fn new_program(context: &TContext, images: Vec<(Arc<TDevice>, Vec<u8>)>) -> Arc<TProgram> {
    Program::new(arc_of(context), TProgramRaw { images, global: Box::new([0; 8]) })
}

/// The same image for every device of the context.
fn for_context(context: &TContext, image: &[u8]) -> Arc<TProgram> {
    new_program(context, context.devices.iter().map(|d| (d.clone(), image.to_vec())).collect())
}

fn names(programs: &[&TProgram]) -> Vec<ur_program_handle_t> {
    programs.iter().map(|p| handle_of(*p)).collect()
}

impl RawProgram<B> for TProgramRaw {
    fn has_device(program: &TProgram, device: &TDevice) -> bool {
        program.raw.images.iter().any(|(d, _)| std::ptr::eq(&**d, device))
    }
    fn create_with_il(context: &TContext, il: &[u8]) -> UrResult<Arc<TProgram>> {
        record("program.create_with_il", format!("{il:?}"));
        Ok(for_context(context, il))
    }
    fn create_with_binary(context: &TContext, images: &[(&TDevice, &[u8])]) -> UrResult<Arc<TProgram>> {
        record("program.create_with_binary", format!("{images:?}"));
        Ok(new_program(context, images.iter().map(|(d, b)| (arc_of(*d), b.to_vec())).collect()))
    }
    fn build(_: &TProgram, devices: &[&TDevice], options: &CStr) -> UrResult {
        record("program.build", format!("{devices:?} {options:?}"));
        Ok(())
    }
    fn compile(_: &TProgram, devices: &[&TDevice], options: &CStr) -> UrResult {
        record("program.compile", format!("{devices:?} {options:?}"));
        Ok(())
    }
    fn link(
        context: &TContext,
        devices: &[&TDevice],
        programs: &[&TProgram],
        options: &CStr,
    ) -> Result<Arc<TProgram>, (ur_result_t, Option<Arc<TProgram>>)> {
        record("program.link", format!("{devices:?} {:?} {options:?}", names(programs)));
        let linked = for_context(context, b"linked");
        if options == FAILING_LINK {
            return Err((UR_RESULT_ERROR_PROGRAM_LINK_FAILURE, Some(linked)));
        }
        Ok(linked)
    }
    fn info(program: &TProgram, prop: ur_program_info_t, out: InfoOut) -> UrResult {
        record("program.info", format!("{prop:?}"));
        match prop {
            UR_PROGRAM_INFO_NUM_DEVICES => out.value(program.raw.images.len() as u32),
            UR_PROGRAM_INFO_BINARY_SIZES => out.slice(&program.raw.images.iter().map(|(_, b)| b.len()).collect::<Vec<_>>()),
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    }
    fn binaries(program: &TProgram) -> UrResult<Vec<Vec<u8>>> {
        record("program.binaries", String::new());
        Ok(program.raw.images.iter().map(|(_, b)| b.clone()).collect())
    }
    fn build_info(_: &TProgram, device: &TDevice, prop: ur_program_build_info_t, out: InfoOut) -> UrResult {
        record("program.build_info", format!("{device:?} {prop:?}"));
        match prop {
            UR_PROGRAM_BUILD_INFO_STATUS => out.value(UR_PROGRAM_BUILD_STATUS_SUCCESS),
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    }
    fn set_specialization_constants(_: &TProgram, constants: &[ur_specialization_constant_info_t]) -> UrResult {
        let ids: Vec<(u32, usize)> = constants.iter().map(|c| (c.id, c.size)).collect();
        record("program.set_specialization_constants", format!("{ids:?}"));
        Ok(())
    }
    fn global_variable(program: &TProgram, device: &TDevice, name: &CStr) -> UrResult<(*mut c_void, usize)> {
        record("program.global_variable", format!("{device:?} {name:?}"));
        if name != c"global" {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        let global = &program.raw.global;
        Ok((global.as_ptr() as *mut c_void, global.len()))
    }
    fn native_handle(_: &TProgram) -> UrResult<ur_native_handle_t> {
        record("program.native_handle", String::new());
        Ok(NATIVE_OBJECT)
    }
    fn from_native(native: ur_native_handle_t, context: &TContext, ownership: NativeOwnership) -> UrResult<Arc<TProgram>> {
        record("program.from_native", format!("{native:#x} {ownership:?}"));
        Ok(for_context(context, b"native"))
    }
}

pub type TKernel = Kernel<B>;

/// A test kernel's name.
pub struct TKernelRaw {
    name: CString,
}

fn new_kernel(program: &TProgram, name: &CStr) -> Arc<TKernel> {
    Kernel::new(arc_of(program), TKernelRaw { name: name.into() })
}

impl RawKernel<B> for TKernelRaw {
    fn create(program: &TProgram, name: &CStr) -> UrResult<Arc<TKernel>> {
        record("kernel.create", format!("{name:?}"));
        Ok(new_kernel(program, name))
    }
    fn info(kernel: &TKernel, prop: ur_kernel_info_t, out: InfoOut) -> UrResult {
        record("kernel.info", format!("{prop:?}"));
        match prop {
            UR_KERNEL_INFO_FUNCTION_NAME => out.bytes(kernel.raw.name.as_bytes_with_nul()),
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    }
    fn group_info(_: &TKernel, device: &TDevice, prop: ur_kernel_group_info_t, out: InfoOut) -> UrResult {
        record("kernel.group_info", format!("{device:?} {prop:?}"));
        out.value(64usize)
    }
    fn sub_group_info(_: &TKernel, device: &TDevice, prop: ur_kernel_sub_group_info_t, out: InfoOut) -> UrResult {
        record("kernel.sub_group_info", format!("{device:?} {prop:?}"));
        out.value(16u32)
    }
    fn set_exec_info(_: &TKernel, prop: ur_kernel_exec_info_t, value: *const c_void, size: usize) -> UrResult {
        record("kernel.set_exec_info", format!("{prop:?} {value:?} {size}"));
        Ok(())
    }
    /// Suggests 1 in each dimension.
    fn suggested_local_work_size(_: &TKernel, queue: &TQueue, global: &[usize]) -> UrResult<Vec<usize>> {
        record("kernel.suggested_local_work_size", format!("{:?} {global:?}", handle_of(queue)));
        Ok(vec![1; global.len()])
    }
    fn native_handle(_: &TKernel) -> UrResult<ur_native_handle_t> {
        record("kernel.native_handle", String::new());
        Ok(NATIVE_OBJECT)
    }
    fn from_native(native: NativeKernel<'_, B>) -> UrResult<Arc<TKernel>> {
        let NativeKernel { handle: native, context: _, program, ownership } = native;
        record("kernel.from_native", format!("{native:#x} {:?} {ownership:?}", program.map(handle_of)));
        let program = program.ok_or(UR_RESULT_ERROR_INVALID_NULL_HANDLE)?;
        Ok(new_kernel(program, c"native"))
    }
    fn launch(
        kernel: &TKernel,
        queue: &TQueue,
        range: &NdRange<'_>,
        args: &[KernelArg<'_>],
        cooperative: bool,
        waits: Events<'_, B>,
        want_event: bool,
    ) -> UrResult<Option<Arc<TEvent>>> {
        record(
            "kernel.launch",
            format!("{:?} {range:?} {args:?} cooperative={cooperative} waits={:?} event={want_event}", kernel.raw.name, waits.handles()),
        );
        Ok(super::objects::queue_event(queue, UR_COMMAND_KERNEL_LAUNCH, want_event))
    }
}
