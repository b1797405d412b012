//! Kernels, and their launch with arguments set at launch time.

use crate::device::{Device, UsmPath};
use crate::driver::{self, call, wait_list_ptr};
use crate::event::Event;
use crate::memory;
use crate::program::{self, Program};
use crate::queue::Queue;
use crate::conv::{self, check, ClResultExt};
use crate::OpenCl;
use cl3::ext as sys;
use std::ffi::{c_void, CStr};
use std::sync::Arc;
use ur_core::lock_order::{Mutex, Rank};
use sys::{cl_int, cl_kernel};
use ur_core::boundary::NativeOwnership;
use ur_core::hal::{Events, KernelArg, NdRange};
use ur_core::handle::{self, arc_of};
use ur_core::info::InfoOut;
use ur_core::program::{NativeKernel, RawKernel};
use ur_core::*;

/// A UR kernel of this adapter.
pub type Kernel = ur_core::program::Kernel<OpenCl>;

/// What an OpenCL kernel keeps beside the core's part: the runtime's
/// kernel, its name and argument count, and the lock of its launches.
pub struct KernelCl {
    pub cl: opencl3::kernel::Kernel,
    pub name: String,
    pub num_args: u32,
    /// Arguments live in the `cl_kernel` until the next launch sets them:
    /// setting them and enqueueing is one step under this lock.
    pub launch: Mutex<()>,
}

// SAFETY: OpenCL kernel objects are thread-safe except for argument
// setting, which `launch` serializes.
unsafe impl Sync for KernelCl {}

/// One kernel argument of a launch.
pub enum Arg {
    /// `size` bytes at `value`, copied by OpenCL when set.
    Value { index: u32, size: usize, value: *const c_void },
    /// A USM pointer.
    Pointer { index: u32, ptr: *const c_void },
    /// `size` bytes of work-group local memory.
    Local { index: u32, size: usize },
    /// A buffer's `cl_mem` (null: a null buffer).
    Mem { index: u32, mem: sys::cl_mem },
}

/// The UR kernel over `cl`, whose reference it takes.
fn wrap(program: Arc<Program>, cl: opencl3::kernel::Kernel, name: String) -> UrResult<Arc<Kernel>> {
    let raw = cl.get();
    let num_args = driver::value::<sys::cl_uint>(cl3::kernel::get_kernel_data(raw, sys::CL_KERNEL_NUM_ARGS)).ur()?;
    if crate::context::usm_path(&program.context) == UsmPath::Intel {
        // SYCL kernels may reach USM through pointers stored in memory,
        // not only through arguments.
        let yes: sys::cl_bool = sys::CL_TRUE;
        for param in [
            sys::CL_KERNEL_EXEC_INFO_INDIRECT_HOST_ACCESS_INTEL,
            sys::CL_KERNEL_EXEC_INFO_INDIRECT_DEVICE_ACCESS_INTEL,
            sys::CL_KERNEL_EXEC_INFO_INDIRECT_SHARED_ACCESS_INTEL,
        ] {
            let _ = check(call!(clSetKernelExecInfo(
                raw,
                param,
                std::mem::size_of::<sys::cl_bool>(),
                &yes as *const _ as *const c_void
            )));
        }
    }
    Ok(Kernel::new(program, KernelCl { cl, name, num_args, launch: Mutex::new(Rank::KernelArgs, ()) }))
}

/// Sets one argument of `kernel` (a USM pointer the way its context's
/// USM takes it).
fn set_arg(kernel: &Kernel, arg: &Arg) -> Result<(), cl_int> {
    let raw = kernel.raw.get();
    match *arg {
        Arg::Value { index, size, value } => check(call!(clSetKernelArg(raw, index, size, value))),
        Arg::Local { index, size } => check(call!(clSetKernelArg(raw, index, size, std::ptr::null()))),
        Arg::Pointer { index, ptr } => memory::set_kernel_arg_pointer(&kernel.program.context, raw, index, ptr),
        // OpenCL reads the `cl_mem` from where the argument points.
        Arg::Mem { index, ref mem } => {
            check(call!(clSetKernelArg(raw, index, std::mem::size_of::<sys::cl_mem>(), mem as *const sys::cl_mem as *const c_void)))
        }
    }
}

/// `INVALID_DEVICE` unless `kernel`'s program is for `device`.
fn check_device(kernel: &Kernel, device: &Device) -> UrResult {
    if program::devices_of(&kernel.program)?.iter().any(|d| std::ptr::eq(*d, device)) {
        Ok(())
    } else {
        Err(UR_RESULT_ERROR_INVALID_DEVICE)
    }
}

impl KernelCl {
    /// The runtime's kernel.
    fn get(&self) -> cl_kernel {
        self.cl.get()
    }

    fn sub_group_query(&self, device: &Device, param: sys::cl_uint, input: &[usize]) -> UrResult<u32> {
        let mut value: usize = 0;
        conv::check(call!(clGetKernelSubGroupInfo(
            self.get(),
            device.raw.id,
            param,
            std::mem::size_of_val(input),
            if input.is_empty() { std::ptr::null() } else { input.as_ptr() as *const c_void },
            std::mem::size_of::<usize>(),
            &mut value as *mut usize as *mut c_void,
            std::ptr::null_mut()
        )))
        .ur()?;
        Ok(u32::try_from(value).unwrap_or(u32::MAX))
    }
}

impl RawKernel<OpenCl> for KernelCl {
    fn create(program: &Program, name: &CStr) -> UrResult<Arc<Kernel>> {
        let program = arc_of(program);
        let raw = cl3::kernel::create_kernel(program.raw.get(), name).map_err(|e| match e {
            sys::CL_INVALID_KERNEL_NAME | sys::CL_INVALID_KERNEL_DEFINITION => UR_RESULT_ERROR_INVALID_KERNEL_NAME,
            e => conv::result(e),
        })?;
        wrap(program, opencl3::kernel::Kernel::new(raw), name.to_string_lossy().into_owned())
    }

    /// `urKernelGetInfo`.
    fn info(kernel: &Kernel, prop: ur_kernel_info_t, out: InfoOut) -> UrResult {
        match prop {
            UR_KERNEL_INFO_FUNCTION_NAME => out.string(&kernel.raw.name),
            UR_KERNEL_INFO_NUM_ARGS => out.value(kernel.raw.num_args),
            UR_KERNEL_INFO_REFERENCE_COUNT => out.value(handle::ref_count_of(kernel)),
            UR_KERNEL_INFO_CONTEXT => out.value(handle::handle_of(&*kernel.program.context)),
            UR_KERNEL_INFO_PROGRAM => out.value(handle::handle_of(&*kernel.program)),
            UR_KERNEL_INFO_ATTRIBUTES => {
                out.string(&driver::string(cl3::kernel::get_kernel_data(kernel.raw.get(), sys::CL_KERNEL_ATTRIBUTES)).ur()?)
            }
            UR_KERNEL_INFO_NUM_REGS | UR_KERNEL_INFO_SPILL_MEM_SIZE => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
            _ => Err(UR_RESULT_ERROR_INVALID_ENUMERATION),
        }
    }

    /// `urKernelGetGroupInfo`.
    fn group_info(kernel: &Kernel, device: &Device, prop: ur_kernel_group_info_t, out: InfoOut) -> UrResult {
        check_device(kernel, device)?;
        let data = |p| cl3::kernel::get_kernel_work_group_data(kernel.raw.get(), device.raw.id, p);
        match prop {
            UR_KERNEL_GROUP_INFO_WORK_GROUP_SIZE => {
                out.value(driver::value::<usize>(data(sys::CL_KERNEL_WORK_GROUP_SIZE)).ur()?)
            }
            UR_KERNEL_GROUP_INFO_COMPILE_WORK_GROUP_SIZE => {
                out.value(driver::value::<[usize; 3]>(data(sys::CL_KERNEL_COMPILE_WORK_GROUP_SIZE)).ur()?)
            }
            UR_KERNEL_GROUP_INFO_LOCAL_MEM_SIZE => out.value(conv::to_usize(
                driver::value::<sys::cl_ulong>(data(sys::CL_KERNEL_LOCAL_MEM_SIZE)).ur()?,
            )),
            UR_KERNEL_GROUP_INFO_PREFERRED_WORK_GROUP_SIZE_MULTIPLE => {
                out.value(driver::value::<usize>(data(sys::CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE)).ur()?)
            }
            UR_KERNEL_GROUP_INFO_PRIVATE_MEM_SIZE => out.value(conv::to_usize(
                driver::value::<sys::cl_ulong>(data(sys::CL_KERNEL_PRIVATE_MEM_SIZE)).ur()?,
            )),
            // OpenCL answers GLOBAL_WORK_SIZE only for built-in kernels and
            // custom devices, and has no compile-time maximum.
            UR_KERNEL_GROUP_INFO_GLOBAL_WORK_SIZE
            | UR_KERNEL_GROUP_INFO_COMPILE_MAX_WORK_GROUP_SIZE
            | UR_KERNEL_GROUP_INFO_COMPILE_MAX_LINEAR_WORK_GROUP_SIZE => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
            _ => Err(UR_RESULT_ERROR_INVALID_ENUMERATION),
        }
    }

    /// `urKernelGetSubGroupInfo`. Devices without sub-groups (no OpenCL
    /// 2.1 query) run every work-item as its own sub-group of one.
    fn sub_group_info(kernel: &Kernel, device: &Device, prop: ur_kernel_sub_group_info_t, out: InfoOut) -> UrResult {
        check_device(kernel, device)?;
        let raw = &kernel.raw;
        let has_sub_groups = device.raw.version >= (2, 1) && (device.raw.version.0 < 3 || device_has_sub_groups(device));
        let max_wg = driver::value::<usize>(cl3::kernel::get_kernel_work_group_data(
            raw.get(),
            device.raw.id,
            sys::CL_KERNEL_WORK_GROUP_SIZE,
        ))
        .ur()?;
        let value = match prop {
            UR_KERNEL_SUB_GROUP_INFO_MAX_SUB_GROUP_SIZE if has_sub_groups => {
                raw.sub_group_query(device, sys::CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, &[max_wg, 1, 1])?
            }
            UR_KERNEL_SUB_GROUP_INFO_MAX_SUB_GROUP_SIZE => 1,
            UR_KERNEL_SUB_GROUP_INFO_MAX_NUM_SUB_GROUPS if has_sub_groups => {
                raw.sub_group_query(device, sys::CL_KERNEL_MAX_NUM_SUB_GROUPS, &[])?
            }
            UR_KERNEL_SUB_GROUP_INFO_MAX_NUM_SUB_GROUPS => u32::try_from(max_wg).unwrap_or(u32::MAX),
            UR_KERNEL_SUB_GROUP_INFO_COMPILE_NUM_SUB_GROUPS if has_sub_groups => {
                raw.sub_group_query(device, sys::CL_KERNEL_COMPILE_NUM_SUB_GROUPS, &[])?
            }
            UR_KERNEL_SUB_GROUP_INFO_COMPILE_NUM_SUB_GROUPS => 0,
            UR_KERNEL_SUB_GROUP_INFO_SUB_GROUP_SIZE_INTEL => {
                if device.raw.has_extension("cl_intel_required_subgroup_size") {
                    raw.sub_group_query(device, sys::CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL, &[])?
                } else {
                    0
                }
            }
            _ => return Err(UR_RESULT_ERROR_INVALID_ENUMERATION),
        };
        out.value(value)
    }

    /// `urKernelSetExecInfo`.
    fn set_exec_info(kernel: &Kernel, prop: ur_kernel_exec_info_t, value: *const c_void, size: usize) -> UrResult {
        match prop {
            // Indirect access is switched on for every kernel at creation
            // (Intel path); fine-grained SVM needs nothing.
            UR_KERNEL_EXEC_INFO_USM_INDIRECT_ACCESS | UR_KERNEL_EXEC_INFO_CACHE_CONFIG => Ok(()),
            UR_KERNEL_EXEC_INFO_USM_PTRS => {
                let param = if crate::context::usm_path(&kernel.program.context) == UsmPath::Intel {
                    sys::CL_KERNEL_EXEC_INFO_USM_PTRS_INTEL
                } else {
                    sys::CL_KERNEL_EXEC_INFO_SVM_PTRS
                };
                let _serialized = kernel.raw.launch.lock();
                check(call!(clSetKernelExecInfo(kernel.raw.get(), param, size, value))).ur()
            }
            _ => Err(UR_RESULT_ERROR_INVALID_ENUMERATION),
        }
    }

    fn native_handle(kernel: &Kernel) -> UrResult<ur_native_handle_t> {
        Ok(kernel.raw.get() as ur_native_handle_t)
    }

    /// `urKernelCreateWithNativeHandle`: a kernel over the user's
    /// `cl_kernel`, which must belong to `context` and, when `program` is
    /// given, to its `cl_program`; without one, the kernel's own program is
    /// wrapped (borrowed). A borrowed kernel is retained here and released
    /// with this object; an owned one takes over the caller's reference.
    fn from_native(native: NativeKernel<'_, OpenCl>) -> UrResult<Arc<Kernel>> {
        let NativeKernel { handle: native, context, program, ownership } = native;
        let context = &arc_of(context);
        let program = program.map(arc_of);
        let native = native as cl_kernel;
        let data = |p| cl3::kernel::get_kernel_data(native, p);
        if driver::value::<sys::cl_context>(data(sys::CL_KERNEL_CONTEXT)).ur()? != context.raw.cl.get() {
            return Err(UR_RESULT_ERROR_INVALID_CONTEXT);
        }
        let cl_program = driver::value::<sys::cl_program>(data(sys::CL_KERNEL_PROGRAM)).ur()?;
        let program = match program {
            Some(p) if p.raw.get() != cl_program || !Arc::ptr_eq(&p.context, context) => {
                return Err(UR_RESULT_ERROR_INVALID_PROGRAM)
            }
            Some(p) => p,
            None => program::wrap_native(context.clone(), cl_program, NativeOwnership::Borrowed)?,
        };
        let name = driver::string(data(sys::CL_KERNEL_FUNCTION_NAME)).ur()?;
        if ownership == NativeOwnership::Borrowed {
            // SAFETY: the caller's live kernel; this reference is the one
            // the wrapper releases.
            unsafe { cl3::kernel::retain_kernel(native) }.ur()?;
        }
        wrap(program, opencl3::kernel::Kernel::new(native), name)
    }

    /// `urEnqueueKernelLaunchWithArgsExp`: the command's event when
    /// `want_event`. OpenCL has no cooperative launch.
    fn launch(
        kernel: &Kernel,
        queue: &Queue,
        range: &NdRange<'_>,
        args: &[KernelArg<'_>],
        cooperative: bool,
        waits: Events<'_, OpenCl>,
        want_event: bool,
    ) -> UrResult<Option<Arc<Event>>> {
        if cooperative {
            return Err(UR_RESULT_ERROR_INVALID_OPERATION);
        }
        // Argument values must be readable for their sizes: each value
        // argument's bytes were read from the caller's arguments and live
        // for this call.
        let args: Vec<Arg> = args
            .iter()
            .map(|a| match *a {
                KernelArg::Value { index, bytes } => {
                    Arg::Value { index, size: bytes.len(), value: bytes.as_ptr() as *const c_void }
                }
                KernelArg::Pointer { index, ptr } => Arg::Pointer { index, ptr },
                KernelArg::Local { index, size } => Arg::Local { index, size },
                KernelArg::MemHandle { index, handle } => Arg::Mem { index, mem: handle as sys::cl_mem },
            })
            .collect();
        if !Arc::ptr_eq(&queue.context, &kernel.program.context) {
            return Err(UR_RESULT_ERROR_INVALID_KERNEL);
        }
        let _serialized = kernel.raw.launch.lock();
        for arg in &args {
            set_arg(kernel, arg).map_err(|e| match e {
                sys::CL_INVALID_ARG_INDEX => UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX,
                sys::CL_INVALID_ARG_SIZE => UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE,
                sys::CL_INVALID_ARG_VALUE => UR_RESULT_ERROR_INVALID_KERNEL_ARGS,
                e => conv::result(e),
            })?;
        }
        let dims = range.global.len() as sys::cl_uint;
        let opt = |s: Option<&[usize]>| s.map_or(std::ptr::null(), |s| s.as_ptr());
        crate::queue::submit(queue, UR_COMMAND_KERNEL_LAUNCH, false, waits, want_event, |waits, event| {
            check(call!(clEnqueueNDRangeKernel(
                queue.raw.cl.get(),
                kernel.raw.get(),
                dims,
                opt(range.offset),
                range.global.as_ptr(),
                opt(range.local),
                waits.len() as sys::cl_uint,
                wait_list_ptr(waits),
                event
            )))
        })
    }
}

/// OpenCL 3.0 makes sub-groups optional: `CL_DEVICE_MAX_NUM_SUB_GROUPS` is
/// 0 where they are absent.
fn device_has_sub_groups(device: &Device) -> bool {
    driver::value::<sys::cl_uint>(cl3::device::get_device_data(device.raw.id, sys::CL_DEVICE_MAX_NUM_SUB_GROUPS))
        .is_ok_and(|n| n > 0)
}
