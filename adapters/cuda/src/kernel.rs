//! Kernels: one CUDA function per device of the program, with its parameter
//! layout, and the launch that takes every argument at once
//! (`urEnqueueKernelLaunchWithArgsExp`). A kernel is the core's [`Kernel`];
//! [`KernelCu`] keeps the name, the functions and the parameter layout.

use crate::device::Device;
use crate::event::Event;
use crate::program::Program;
use crate::queue::{submit, Queue};
use crate::conv::CuExt;
use crate::driver::{self, CUfunction, FuncAttr, LaunchDims, Module, Stream};
use crate::Cuda;
use std::ffi::{c_void, CStr, CString};
use std::sync::Arc;
use ur_core::hal::{self, Events, KernelArg};
use ur_core::handle::arc_of;
use ur_core::info::InfoOut;
use ur_core::program::{NativeKernel, RawKernel};
use ur_core::*;

/// The kernel on one device.
struct DeviceFunction {
    device: Arc<Device>,
    function: CUfunction,
    /// Keeps the function's module loaded.
    _module: Arc<Module>,
}

/// A kernel of this adapter: the core's, with [`KernelCu`] as its raw part.
pub type Kernel = ur_core::program::Kernel<Cuda>;

/// What a kernel keeps beside the core's part.
pub struct KernelCu {
    pub name: String,
    functions: Vec<DeviceFunction>,
    /// `(offset, size)` of each parameter (the same on every device).
    params: Vec<(usize, usize)>,
}

// SAFETY: CUDA function handles may be used from any thread.
unsafe impl Send for DeviceFunction {}
unsafe impl Sync for DeviceFunction {}

/// One argument as `urEnqueueKernelLaunchWithArgsExp` gives it.
pub enum Arg {
    /// Bytes copied into the parameter.
    Value(Vec<u8>),
    /// A USM pointer passed by value.
    Pointer(usize),
    /// Bytes of dynamic shared memory; the parameter gets their offset.
    Local(usize),
}

impl KernelCu {
    fn function_for(&self, device: &Device) -> UrResult<CUfunction> {
        self.functions
            .iter()
            .find(|f| std::ptr::eq(&*f.device, device))
            .map(|f| f.function)
            .ok_or(UR_RESULT_ERROR_INVALID_DEVICE)
    }

    fn attr(&self, device: &Device, attr: FuncAttr) -> UrResult<u32> {
        let f = self.function_for(device)?;
        device.raw.activate()?;
        Ok(driver::func_attribute(f, attr).cu()?.max(0) as u32)
    }

    /// The most threads one block of this kernel may have on `device`.
    pub fn max_threads(&self, device: &Device) -> UrResult<usize> {
        Ok(self.attr(device, FuncAttr::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)? as usize)
    }

    /// A work-group shape for `global` when the caller gives none: the
    /// largest divisor of the first dimension the kernel allows, 1 elsewhere.
    pub fn suggest_local(&self, device: &Device, global: &[usize]) -> UrResult<[usize; 3]> {
        let limit = self
            .max_threads(device)?
            .min(device.raw.props.max_block[0] as usize)
            .max(1);
        let g = global[0];
        let mut best = 1;
        let mut d = 1;
        while d * d <= g {
            if g.is_multiple_of(d) {
                for c in [d, g / d] {
                    if c <= limit && c > best {
                        best = c;
                    }
                }
            }
            d += 1;
        }
        Ok([best, 1, 1])
    }

    /// Lays the arguments out as the kernel's parameters: one buffer per
    /// parameter, and the dynamic shared memory that local arguments need.
    fn marshal(&self, args: &[(u32, Arg)]) -> UrResult<(Vec<Vec<u64>>, u32)> {
        let mut slots: Vec<Option<Vec<u64>>> = vec![None; self.params.len()];
        let mut shared = 0usize;
        for (index, arg) in args {
            let i = *index as usize;
            let &(_, size) = self
                .params
                .get(i)
                .ok_or(UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX)?;
            let bytes: Vec<u8> = match arg {
                Arg::Value(v) => {
                    if v.len() != size {
                        return Err(UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE);
                    }
                    v.clone()
                }
                Arg::Pointer(p) => {
                    if size != std::mem::size_of::<usize>() {
                        return Err(UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE);
                    }
                    p.to_ne_bytes().to_vec()
                }
                Arg::Local(n) => {
                    // Each local block starts at the next 16-byte boundary.
                    let offset = shared.next_multiple_of(16);
                    shared = offset + n;
                    match size {
                        8 => (offset as u64).to_ne_bytes().to_vec(),
                        4 => (offset as u32).to_ne_bytes().to_vec(),
                        _ => return Err(UR_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE),
                    }
                }
            };
            let mut words = vec![0u64; size.div_ceil(8).max(1)];
            // SAFETY: `words` has room for `size` bytes.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    bytes.as_ptr(),
                    words.as_mut_ptr().cast::<u8>(),
                    bytes.len(),
                )
            };
            slots[i] = Some(words);
        }
        let slots = slots
            .into_iter()
            .collect::<Option<Vec<_>>>()
            .ok_or(UR_RESULT_ERROR_INVALID_KERNEL_ARGS)?;
        Ok((
            slots,
            u32::try_from(shared).map_err(|_| UR_RESULT_ERROR_OUT_OF_RESOURCES)?,
        ))
    }
}

impl RawKernel<Cuda> for KernelCu {
    /// `urKernelCreate`: the program must be built.
    fn create(program: &Program, name: &CStr) -> UrResult<Arc<Kernel>> {
        let name = name.to_str().map_err(|_| UR_RESULT_ERROR_INVALID_VALUE)?;
        let program = arc_of(program);
        let c_name = CString::new(name).map_err(|_| UR_RESULT_ERROR_INVALID_KERNEL_NAME)?;
        let mut functions = Vec::new();
        for (device, module) in program.raw.modules()? {
            device.raw.activate()?;
            let function = match module.function(&c_name) {
                Ok(f) => f,
                Err(driver::CUresult::CUDA_ERROR_NOT_FOUND) => {
                    return Err(UR_RESULT_ERROR_INVALID_KERNEL_NAME)
                }
                Err(e) => return Err(e).cu(),
            };
            functions.push(DeviceFunction {
                device,
                function,
                _module: module,
            });
        }
        let first = functions
            .first()
            .ok_or(UR_RESULT_ERROR_INVALID_PROGRAM_EXECUTABLE)?;
        let params = driver::func_params(first.function).cu()?;
        let raw = KernelCu {
            name: name.to_string(),
            functions,
            params,
        };
        Ok(Kernel::new(program, raw))
    }

    /// `urKernelGetInfo`; the core answers the reference count, the
    /// context and the program before it asks here.
    fn info(kernel: &Kernel, prop: ur_kernel_info_t, out: InfoOut) -> UrResult {
        let raw = &kernel.raw;
        let first = &raw.functions[0].device;
        match prop {
            UR_KERNEL_INFO_FUNCTION_NAME => out.string(&raw.name),
            UR_KERNEL_INFO_NUM_ARGS => out.value(raw.params.len() as u32),
            UR_KERNEL_INFO_ATTRIBUTES => out.string(""),
            UR_KERNEL_INFO_NUM_REGS => {
                out.value(raw.attr(first, FuncAttr::CU_FUNC_ATTRIBUTE_NUM_REGS)?)
            }
            UR_KERNEL_INFO_SPILL_MEM_SIZE => {
                let per_device: Vec<u32> = raw
                    .functions
                    .iter()
                    .map(|f| raw.attr(&f.device, FuncAttr::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES))
                    .collect::<UrResult<_>>()?;
                out.slice(&per_device)
            }
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    }

    /// `urKernelGetGroupInfo`.
    fn group_info(
        kernel: &Kernel,
        device: &Device,
        prop: ur_kernel_group_info_t,
        out: InfoOut,
    ) -> UrResult {
        let p = &device.raw.props;
        match prop {
            UR_KERNEL_GROUP_INFO_GLOBAL_WORK_SIZE => {
                out.slice(&[0, 1, 2].map(|i| p.max_grid[i] as usize * p.max_block[i] as usize))
            }
            UR_KERNEL_GROUP_INFO_WORK_GROUP_SIZE => out.value(kernel.raw.max_threads(device)?),
            UR_KERNEL_GROUP_INFO_COMPILE_WORK_GROUP_SIZE
            | UR_KERNEL_GROUP_INFO_COMPILE_MAX_WORK_GROUP_SIZE => out.slice(&[0usize; 3]),
            UR_KERNEL_GROUP_INFO_COMPILE_MAX_LINEAR_WORK_GROUP_SIZE => out.value(0usize),
            UR_KERNEL_GROUP_INFO_LOCAL_MEM_SIZE => out
                .value(kernel.raw.attr(device, FuncAttr::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)? as usize),
            UR_KERNEL_GROUP_INFO_PREFERRED_WORK_GROUP_SIZE_MULTIPLE => {
                out.value(p.warp_size as usize)
            }
            UR_KERNEL_GROUP_INFO_PRIVATE_MEM_SIZE => {
                out.value(kernel.raw.attr(device, FuncAttr::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)? as usize)
            }
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    }

    /// `urKernelGetSubGroupInfo`: sub-groups are warps.
    fn sub_group_info(
        kernel: &Kernel,
        device: &Device,
        prop: ur_kernel_sub_group_info_t,
        out: InfoOut,
    ) -> UrResult {
        let warp = device.raw.props.warp_size;
        match prop {
            UR_KERNEL_SUB_GROUP_INFO_MAX_SUB_GROUP_SIZE => out.value(warp),
            UR_KERNEL_SUB_GROUP_INFO_MAX_NUM_SUB_GROUPS => {
                out.value(kernel.raw.max_threads(device)? as u32 / warp.max(1))
            }
            UR_KERNEL_SUB_GROUP_INFO_COMPILE_NUM_SUB_GROUPS
            | UR_KERNEL_SUB_GROUP_INFO_SUB_GROUP_SIZE_INTEL => out.value(0u32),
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    }

    fn suggested_local_work_size(kernel: &Kernel, queue: &Queue, global: &[usize]) -> UrResult<Vec<usize>> {
        Ok(kernel.raw.suggest_local(&queue.device, global)?.to_vec())
    }

    /// The CUDA function on the program's first device
    /// (`urKernelGetNativeHandle`).
    fn native_handle(kernel: &Kernel) -> UrResult<ur_native_handle_t> {
        let device = &kernel.program.raw.images.first().ok_or(UR_RESULT_ERROR_INVALID_PROGRAM)?.device;
        Ok(kernel.raw.function_for(device)? as ur_native_handle_t)
    }

    /// `urKernelCreateWithNativeHandle`: a kernel over the user's CUDA
    /// function, which must be a kernel of one of `program`'s modules
    /// (`INVALID_PROGRAM` otherwise); on the program's other devices the
    /// kernel of the same name serves. CUDA functions belong to their
    /// module and are never released, so ownership changes nothing.
    ///
    /// A CUDA function does not name the UR program it came from: without
    /// one, `INVALID_NULL_HANDLE`, as the spec allows.
    fn from_native(native: NativeKernel<'_, Cuda>) -> UrResult<Arc<Kernel>> {
        let NativeKernel { handle: native, context: _, program, ownership: _ } = native;
        let program = program.ok_or(UR_RESULT_ERROR_INVALID_NULL_HANDLE)?;
        let program = arc_of(program);
        let native = native as CUfunction;
        let modules = program.raw.modules()?;
        let home = driver::func_module(native).cu()?;
        if !modules.iter().any(|(_, m)| m.raw() == home) {
            return Err(UR_RESULT_ERROR_INVALID_PROGRAM);
        }
        let name = driver::func_name(native).cu()?;
        let c_name = CString::new(name.clone()).map_err(|_| UR_RESULT_ERROR_INVALID_KERNEL_NAME)?;
        let mut functions = Vec::with_capacity(modules.len());
        for (device, module) in modules {
            let function = if module.raw() == home {
                native
            } else {
                device.raw.activate()?;
                module.function(&c_name).cu()?
            };
            functions.push(DeviceFunction {
                device,
                function,
                _module: module,
            });
        }
        let params = driver::func_params(native).cu()?;
        Ok(Kernel::new(program, KernelCu { name, functions, params }))
    }

    fn launch(
        kernel: &Kernel,
        queue: &Queue,
        range: &hal::NdRange<'_>,
        args: &[KernelArg<'_>],
        cooperative: bool,
        waits: Events<'_, Cuda>,
        want_event: bool,
    ) -> UrResult<Option<Arc<Event>>> {
        let args: Vec<(u32, Arg)> = args
            .iter()
            .map(|a| match *a {
                KernelArg::Value { index, bytes } => (index, Arg::Value(bytes.to_vec())),
                KernelArg::Pointer { index, ptr } => (index, Arg::Pointer(ptr as usize)),
                KernelArg::Local { index, size } => (index, Arg::Local(size)),
                // Never sent: CUDA's buffers are addresses, passed as
                // `Pointer` (`RawMem::kernel_arg`'s default); a handle would
                // be one too.
                KernelArg::MemHandle { index, handle } => (index, Arg::Pointer(handle as usize)),
            })
            .collect();
        let range = NdRange { offset: range.offset, global: range.global, local: range.local };
        enqueue_launch(queue, kernel, range, &args, cooperative, waits, want_event)
    }
}

/// The shape of one launch as UR gives it.
pub struct NdRange<'a> {
    pub offset: Option<&'a [usize]>,
    pub global: &'a [usize],
    pub local: Option<&'a [usize]>,
}

/// `urEnqueueKernelLaunchWithArgsExp`: `kernel` on `queue`.
pub fn enqueue_launch(
    queue: &Queue,
    kernel: &Kernel,
    range: NdRange,
    args: &[(u32, Arg)],
    cooperative: bool,
    events: Events<'_, Cuda>,
    want_event: bool,
) -> UrResult<Option<Arc<Event>>> {
    let device = &queue.device;
    let raw = &kernel.raw;
    let function = raw.function_for(device)?;
    if range.global.contains(&0) {
        return Err(UR_RESULT_ERROR_INVALID_WORK_DIMENSION);
    }
    if range.offset.is_some_and(|o| o.iter().any(|&x| x != 0)) {
        // CUDA grids start at zero; an offset needs compiler support.
        return Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE);
    }
    let dims = range.global.len();
    let local = match range.local {
        Some(l) => {
            if l.contains(&0) {
                return Err(UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE);
            }
            let mut out = [1usize; 3];
            out[..dims].copy_from_slice(l);
            out
        }
        None => raw.suggest_local(device, range.global)?,
    };
    let mut global = [1usize; 3];
    global[..dims].copy_from_slice(range.global);
    let p = &device.raw.props;
    let mut dims_out = LaunchDims {
        grid: [1; 3],
        block: [1; 3],
        shared_bytes: 0,
    };
    for i in 0..3 {
        if !global[i].is_multiple_of(local[i]) {
            return Err(UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE);
        }
        if local[i] > p.max_block[i] as usize {
            return Err(UR_RESULT_ERROR_INVALID_WORK_ITEM_SIZE);
        }
        let groups = global[i] / local[i];
        if groups > p.max_grid[i] as usize {
            return Err(UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE);
        }
        dims_out.grid[i] = groups as u32;
        dims_out.block[i] = local[i] as u32;
    }
    if local.iter().product::<usize>() > raw.max_threads(device)? {
        return Err(UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE);
    }
    let (mut slots, shared) = raw.marshal(args)?;
    dims_out.shared_bytes = shared;
    let mut pointers: Vec<*mut c_void> =
        slots.iter_mut().map(|s| s.as_mut_ptr().cast()).collect();
    let work = |s: &Stream| {
        // SAFETY: one pointer per parameter, each to a buffer at least as
        // large as the parameter; the driver copies them.
        unsafe { driver::launch_kernel(function, &dims_out, s.raw(), &mut pointers, cooperative) }.cu()
    };
    Ok(submit(queue, UR_COMMAND_KERNEL_LAUNCH, events, want_event, work)?.event)
}
