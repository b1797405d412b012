//! `urKernel*` and `urEnqueueKernelLaunchWithArgsExp` (its wait list:
//! `wait_list.rs`).

use super::*;
use crate::hal::{KernelArg, NdRange};

fn arg(r#type: ur_exp_kernel_arg_type_t, index: u32, size: usize, value: *const c_void) -> ur_exp_kernel_arg_properties_t {
    ur_exp_kernel_arg_properties_t {
        stype: UR_STRUCTURE_TYPE_EXP_KERNEL_ARG_PROPERTIES,
        pNext: null_mut(),
        r#type,
        index,
        size,
        value: ur_exp_kernel_arg_value_t { value },
    }
}

fn launch_props(stype: ur_structure_type_t, flags: ur_kernel_launch_flags_t) -> ur_kernel_launch_ext_properties_t {
    ur_kernel_launch_ext_properties_t { stype, pNext: null_mut(), flags }
}

/// A `MEM_OBJ` argument passing `mem` with `flags`.
fn mem_arg(index: u32, mem: ur_mem_handle_t, flags: ur_mem_flags_t) -> ur_exp_kernel_arg_properties_t {
    let mut a = arg(UR_EXP_KERNEL_ARG_TYPE_MEM_OBJ, index, 8, null());
    a.value = ur_exp_kernel_arg_value_t { memObjTuple: ur_exp_kernel_arg_mem_obj_tuple_t { hMem: mem, flags } };
    a
}

/// A 64-byte buffer of `ctx` (kept for the test's process).
fn buffer(ctx: ur_context_handle_t) -> ur_mem_handle_t {
    let mut mem = null_mut();
    assert_eq!(ur!(Mem.pfnBufferCreate(ctx, UR_MEM_FLAG_READ_WRITE.0, 64, null(), &mut mem)), UR_RESULT_SUCCESS);
    mem
}

/// A launch of a kernel of `w.ctx` on `w.queue`.
struct Launch<'a> {
    kernel: ur_kernel_handle_t,
    dim: u32,
    offset: *const usize,
    global: *const usize,
    local: *const usize,
    args: &'a [ur_exp_kernel_arg_properties_t],
    props: *const ur_kernel_launch_ext_properties_t,
}

static GLOBAL: [usize; 3] = [8, 4, 2];

impl<'a> Launch<'a> {
    fn new(w: &World) -> Self {
        Launch { kernel: w.kernel(), dim: 2, offset: null(), global: GLOBAL.as_ptr(), local: null(), args: &[], props: null() }
    }

    fn run(&self, w: &World, event: *mut ur_event_handle_t) -> ur_result_t {
        let n = self.args.len() as u32;
        let args = if self.args.is_empty() { null() } else { self.args.as_ptr() };
        let (k, d, o, g, l, p) = (self.kernel, self.dim, self.offset, self.global, self.local, self.props);
        ur!(EnqueueExp.pfnKernelLaunchWithArgsExp(w.queue, k, d, o, g, l, n, args, p, 0, null(), event))
    }
}

fn launch<'a>(w: &World, f: impl FnOnce(&mut Launch<'a>)) -> ur_result_t {
    let mut l = Launch::new(w);
    f(&mut l);
    l.run(w, null_mut())
}

static WORD: u32 = 42;

fn word() -> *const c_void {
    (&WORD as *const u32).cast()
}

const NULL: ur_result_t = UR_RESULT_ERROR_INVALID_NULL_POINTER;
const NULL_HANDLE: ur_result_t = UR_RESULT_ERROR_INVALID_NULL_HANDLE;
const DIMENSION: ur_result_t = UR_RESULT_ERROR_INVALID_WORK_DIMENSION;

refusals! {
    create_null_program: NULL_HANDLE, |w| with_out(|k| ur!(Kernel.pfnCreate(null_mut(), c"k".as_ptr(), k)));
    create_no_name: NULL, |w| with_out(|k| ur!(Kernel.pfnCreate(w.program(), null(), k)));
    create_no_output: NULL, |w| ur!(Kernel.pfnCreate(w.program(), c"k".as_ptr(), null_mut()));
    retain_null: NULL_HANDLE, |w| ur!(Kernel.pfnRetain(null_mut()));
    release_a_program: UR_RESULT_ERROR_INVALID_KERNEL, |w| ur!(Kernel.pfnRelease(as_handle(w.program())));
    info_null: NULL_HANDLE, |w| with_out(|n| ur!(Kernel.pfnGetInfo(null_mut(), UR_KERNEL_INFO_FUNCTION_NAME, 0, null_mut(), n)));
    group_info_null_device: NULL_HANDLE, |w| {
        with_out(|n| ur!(Kernel.pfnGetGroupInfo(w.kernel(), null_mut(), UR_KERNEL_GROUP_INFO_WORK_GROUP_SIZE, 0, null_mut(), n)))
    };
    group_info_a_queue_for_a_device: UR_RESULT_ERROR_INVALID_DEVICE, |w| {
        with_out(|n| ur!(Kernel.pfnGetGroupInfo(w.kernel(), as_handle(w.queue), UR_KERNEL_GROUP_INFO_WORK_GROUP_SIZE, 0, null_mut(), n)))
    };
    sub_group_info_null_kernel: NULL_HANDLE, |w| {
        with_out(|n| ur!(Kernel.pfnGetSubGroupInfo(null_mut(), w.dev[0], UR_KERNEL_SUB_GROUP_INFO_MAX_SUB_GROUP_SIZE, 0, null_mut(), n)))
    };

    exec_info_null_kernel: NULL_HANDLE, |w| {
        ur!(Kernel.pfnSetExecInfo(null_mut(), UR_KERNEL_EXEC_INFO_USM_INDIRECT_ACCESS, 4, null(), word()))
    };
    exec_info_no_value: NULL, |w| ur!(Kernel.pfnSetExecInfo(w.kernel(), UR_KERNEL_EXEC_INFO_USM_INDIRECT_ACCESS, 4, null(), null()));
    exec_info_past_cache_config: UR_RESULT_ERROR_INVALID_ENUMERATION, |w| {
        let prop = ur_kernel_exec_info_t(UR_KERNEL_EXEC_INFO_CACHE_CONFIG.0 + 1);
        ur!(Kernel.pfnSetExecInfo(w.kernel(), prop, 4, null(), word()))
    };

    suggested_null_kernel: NULL_HANDLE, |w| {
        let mut out = [0usize; 3];
        ur!(Kernel.pfnGetSuggestedLocalWorkSize(null_mut(), w.queue, 1, null(), GLOBAL.as_ptr(), out.as_mut_ptr()))
    };
    suggested_null_queue: NULL_HANDLE, |w| {
        let mut out = [0usize; 3];
        ur!(Kernel.pfnGetSuggestedLocalWorkSize(w.kernel(), null_mut(), 1, null(), GLOBAL.as_ptr(), out.as_mut_ptr()))
    };
    suggested_no_global: NULL, |w| {
        let mut out = [0usize; 3];
        ur!(Kernel.pfnGetSuggestedLocalWorkSize(w.kernel(), w.queue, 1, null(), null(), out.as_mut_ptr()))
    };
    suggested_no_output: NULL, |w| {
        ur!(Kernel.pfnGetSuggestedLocalWorkSize(w.kernel(), w.queue, 1, null(), GLOBAL.as_ptr(), null_mut()))
    };
    suggested_dimension_zero: DIMENSION, |w| {
        let mut out = [0usize; 3];
        ur!(Kernel.pfnGetSuggestedLocalWorkSize(w.kernel(), w.queue, 0, null(), GLOBAL.as_ptr(), out.as_mut_ptr()))
    };
    suggested_dimension_four: DIMENSION, |w| {
        let mut out = [0usize; 4];
        let global = [1usize; 4];
        ur!(Kernel.pfnGetSuggestedLocalWorkSize(w.kernel(), w.queue, 4, null(), global.as_ptr(), out.as_mut_ptr()))
    };

    from_native_program_of_another_context: UR_RESULT_ERROR_INVALID_CONTEXT, |w| {
        with_out(|k| ur!(Kernel.pfnCreateWithNativeHandle(NATIVE_OBJECT, w.ctx, w.program_in(w.context2()), null(), k)))
    };
    from_native_foreign_program: UR_RESULT_ERROR_INVALID_PROGRAM, |w| {
        let other = Foreign::new(ObjectKind::Program);
        with_out(|k| ur!(Kernel.pfnCreateWithNativeHandle(NATIVE_OBJECT, w.ctx, other.handle(), null(), k)))
    };

    launch_null_queue: NULL_HANDLE, |w| {
        ur!(EnqueueExp.pfnKernelLaunchWithArgsExp(null_mut(), w.kernel(), 1, null(), GLOBAL.as_ptr(), null(), 0, null(), null(), 0, null(), null_mut()))
    };
    launch_null_kernel: NULL_HANDLE, |w| launch(&w, |l| l.kernel = null_mut());
    launch_foreign_kernel: UR_RESULT_ERROR_INVALID_KERNEL, |w| {
        let other = Foreign::new(ObjectKind::Kernel);
        launch(&w, |l| l.kernel = other.handle())
    };
    launch_no_global: NULL, |w| launch(&w, |l| l.global = null());
    launch_args_without_array: NULL, |w| {
        ur!(EnqueueExp.pfnKernelLaunchWithArgsExp(w.queue, w.kernel(), 1, null(), GLOBAL.as_ptr(), null(), 2, null(), null(), 0, null(), null_mut()))
    };
    launch_arg_type_past_sampler: UR_RESULT_ERROR_INVALID_ENUMERATION, |w| {
        let args = [arg(UR_EXP_KERNEL_ARG_TYPE_VALUE, 0, 4, word()), arg(ur_exp_kernel_arg_type_t(5), 1, 4, word())];
        launch(&w, |l| l.args = &args)
    };
    launch_properties_of_another_type: UR_RESULT_ERROR_INVALID_OPERATION, |w| {
        let p = launch_props(UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, 0);
        launch(&w, |l| l.props = &p)
    };
    launch_unknown_launch_flag: UR_RESULT_ERROR_INVALID_ENUMERATION, |w| {
        let p = launch_props(UR_STRUCTURE_TYPE_KERNEL_LAUNCH_EXT_PROPERTIES, 1 << 2);
        launch(&w, |l| l.props = &p)
    };
    launch_dimension_zero: DIMENSION, |w| launch(&w, |l| l.dim = 0);
    launch_dimension_four: DIMENSION, |w| {
        let global = [1usize; 4];
        launch(&w, |l| { l.dim = 4; l.global = global.as_ptr() })
    };
    launch_an_empty_range_with_a_zero_local_size: UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE, |w| {
        let (global, local) = ([8usize, 0], [1usize, 0]);
        launch(&w, |l| { l.global = global.as_ptr(); l.local = local.as_ptr() })
    };
    launch_an_empty_range_with_a_bad_arg: UR_RESULT_ERROR_INVALID_ENUMERATION, |w| {
        let global = [8usize, 0];
        let args = [arg(ur_exp_kernel_arg_type_t(99), 0, 4, word())];
        launch(&w, |l| { l.global = global.as_ptr(); l.args = &args })
    };
    launch_buffer_arg_of_another_context: UR_RESULT_ERROR_INVALID_MEM_OBJECT, |w| {
        let args = [mem_arg(0, buffer(w.context2()), 0)];
        launch(&w, |l| l.args = &args)
    };
    launch_buffer_arg_with_unknown_flags: UR_RESULT_ERROR_INVALID_ENUMERATION, |w| {
        let args = [mem_arg(0, buffer(w.ctx), 1 << 6)];
        launch(&w, |l| l.args = &args)
    };
    launch_a_zero_local_size: UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE, |w| {
        let local = [1usize, 0];
        launch(&w, |l| l.local = local.as_ptr())
    };
    launch_kernel_of_another_context: UR_RESULT_ERROR_INVALID_KERNEL, |w| {
        let k = w.kernel_of(w.program_in(w.context2()));
        launch(&w, |l| l.kernel = k)
    };
    launch_value_arg_without_value: NULL, |w| {
        let args = [arg(UR_EXP_KERNEL_ARG_TYPE_VALUE, 0, 4, null())];
        launch(&w, |l| l.args = &args)
    };
    launch_memory_object_arg: UR_RESULT_ERROR_INVALID_MEM_OBJECT, |w| {
        let args = [arg(UR_EXP_KERNEL_ARG_TYPE_MEM_OBJ, 0, 8, word())];
        launch(&w, |l| l.args = &args)
    };
    launch_sampler_arg: UR_RESULT_ERROR_INVALID_SAMPLER, |w| {
        let args = [arg(UR_EXP_KERNEL_ARG_TYPE_SAMPLER, 0, 8, word())];
        launch(&w, |l| l.args = &args)
    };
}

#[test]
fn create_passes_the_name_and_info_is_the_cores_but_the_name() {
    let w = World::new();
    let p = w.program();
    let mut k = null_mut();
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Kernel.pfnCreate(p, c"saxpy".as_ptr(), &mut k)));
    assert_eq!(only(&calls, "kernel.create"), r#""saxpy""#);
    let size = std::mem::size_of::<usize>();
    let mut h = null_mut::<c_void>();
    refused!(UR_RESULT_SUCCESS, ur!(Kernel.pfnGetInfo(k, UR_KERNEL_INFO_PROGRAM, size, (&mut h as *mut *mut c_void).cast(), null_mut())));
    assert_eq!(h, p.cast());
    refused!(UR_RESULT_SUCCESS, ur!(Kernel.pfnGetInfo(k, UR_KERNEL_INFO_CONTEXT, size, (&mut h as *mut *mut c_void).cast(), null_mut())));
    assert_eq!(h, w.ctx.cast());
    let mut name = [0u8; 6];
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Kernel.pfnGetInfo(k, UR_KERNEL_INFO_FUNCTION_NAME, 6, name.as_mut_ptr().cast(), null_mut())));
    assert_eq!(only(&calls, "kernel.info"), format!("{UR_KERNEL_INFO_FUNCTION_NAME:?}"));
    assert_eq!(&name, b"saxpy\0");
    one_counted_reference!(Kernel, k, UR_RESULT_ERROR_INVALID_KERNEL);
}

#[test]
fn group_queries_and_exec_info_reach_the_backend() {
    let w = World::new();
    let k = w.kernel();
    let mut v = 0usize;
    let prop = UR_KERNEL_GROUP_INFO_WORK_GROUP_SIZE;
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Kernel.pfnGetGroupInfo(k, w.dev[0], prop, 8, (&mut v as *mut usize).cast(), null_mut())));
    assert_eq!(only(&calls, "kernel.group_info"), format!("dev0 {prop:?}"));
    assert_eq!(v, 64);
    let prop = UR_KERNEL_SUB_GROUP_INFO_MAX_SUB_GROUP_SIZE;
    let mut n = 0u32;
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Kernel.pfnGetSubGroupInfo(k, w.dev[1], prop, 4, (&mut n as *mut u32).cast(), null_mut())));
    assert_eq!(only(&calls, "kernel.sub_group_info"), format!("dev1 {prop:?}"));
    let prop = UR_KERNEL_EXEC_INFO_USM_PTRS;
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Kernel.pfnSetExecInfo(k, prop, 4, null(), word())));
    assert_eq!(only(&calls, "kernel.set_exec_info"), format!("{prop:?} {:?} 4", word()));
}

#[test]
fn suggested_local_work_size_writes_one_per_dimension() {
    let w = World::new();
    let mut out = [0usize; 3];
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Kernel.pfnGetSuggestedLocalWorkSize(w.kernel(), w.queue, 2, null(), GLOBAL.as_ptr(), out.as_mut_ptr())));
    assert_eq!(only(&calls, "kernel.suggested_local_work_size"), format!("{:?} [8, 4]", w.queue));
    assert_eq!(out, [1, 1, 0]);
}

#[test]
fn native_handle_round_trip_names_the_program() {
    let w = World::new();
    let native = native_of("kernel.native_handle", |n| ur!(Kernel.pfnGetNativeHandle(w.kernel(), n)));
    let p = w.program();
    let mut k = null_mut();
    let calls = reached!(UR_RESULT_SUCCESS, ur!(Kernel.pfnCreateWithNativeHandle(native, w.ctx, p, null(), &mut k)));
    assert_eq!(only(&calls, "kernel.from_native"), format!("{native:#x} Some({p:?}) Borrowed"));
    let calls = reached!(NULL_HANDLE, ur!(Kernel.pfnCreateWithNativeHandle(native, w.ctx, null_mut(), null(), &mut k)));
    assert_eq!(only(&calls, "kernel.from_native"), format!("{native:#x} None Borrowed"));
}

#[test]
fn a_launch_reaches_the_backend_decoded() {
    let w = World::new();
    let local = [2usize, 2];
    let offset = [1usize, 0];
    let args = [
        arg(UR_EXP_KERNEL_ARG_TYPE_VALUE, 0, 4, word()),
        arg(UR_EXP_KERNEL_ARG_TYPE_POINTER, 1, 8, word()),
        arg(UR_EXP_KERNEL_ARG_TYPE_LOCAL, 2, 64, null()),
        arg(UR_EXP_KERNEL_ARG_TYPE_VALUE, 3, 0, null()),
    ];
    let props = launch_props(UR_STRUCTURE_TYPE_KERNEL_LAUNCH_EXT_PROPERTIES, UR_KERNEL_LAUNCH_FLAG_COOPERATIVE.0);
    let mut l = Launch::new(&w);
    (l.offset, l.local, l.args, l.props) = (offset.as_ptr(), local.as_ptr(), &args, &props);
    let mut e = null_mut();
    let calls = reached!(UR_RESULT_SUCCESS, l.run(&w, &mut e));
    let range = NdRange { offset: Some(&offset), global: &GLOBAL[..2], local: Some(&local) };
    let decoded = [
        KernelArg::Value { index: 0, bytes: &WORD.to_ne_bytes() },
        KernelArg::Pointer { index: 1, ptr: word() },
        KernelArg::Local { index: 2, size: 64 },
        KernelArg::Value { index: 3, bytes: &[] },
    ];
    assert_eq!(only(&calls, "kernel.launch"), format!(r#""k" {range:?} {decoded:?} cooperative=true waits=[] event=true"#));
    assert!(!e.is_null());
    let calls = reached!(UR_RESULT_SUCCESS, launch(&w, |l| l.dim = 1));
    let range = NdRange { offset: None, global: &GLOBAL[..1], local: None };
    assert_eq!(only(&calls, "kernel.launch"), format!(r#""k" {range:?} [] cooperative=false waits=[] event=false"#));
}

#[test]
fn an_empty_range_runs_nothing_and_is_a_marker() {
    let w = World::new();
    let global = [8usize, 0];
    let mut e = null_mut();
    let mut l = Launch::new(&w);
    l.global = global.as_ptr();
    let calls = reached!(UR_RESULT_SUCCESS, l.run(&w, &mut e));
    let heard: Vec<&str> = calls.iter().map(|c| c.method).collect();
    assert_eq!(heard, ["queue.marker", "queue.append"], "{calls:?}");
    assert!(calls[0].args.contains("want_event: true"), "{calls:?}");
    assert!(!e.is_null());
}

#[test]
fn a_buffer_arg_is_its_address_and_a_null_one_a_null_pointer() {
    let w = World::new();
    let mem = buffer(w.ctx);
    let mut native: ur_native_handle_t = 0;
    assert_eq!(ur!(Mem.pfnGetNativeHandle(mem, null_mut(), &mut native)), UR_RESULT_SUCCESS);
    let args = [mem_arg(0, mem, UR_MEM_FLAG_READ_ONLY.0), mem_arg(1, null_mut(), 0)];
    take_calls();
    let calls = reached!(UR_RESULT_SUCCESS, launch(&w, |l| l.args = &args));
    let decoded = [KernelArg::Pointer { index: 0, ptr: native as *const c_void }, KernelArg::Pointer { index: 1, ptr: null() }];
    let range = NdRange { offset: None, global: &GLOBAL[..2], local: None };
    assert_eq!(only(&calls, "kernel.launch"), format!(r#""k" {range:?} {decoded:?} cooperative=false waits=[] event=false"#));
}
